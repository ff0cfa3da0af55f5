"""The linear family on every GPU backend built gives the CPU's model bytes
(the same digest), on data large enough to reach the device's own roads: the
Gram matrix's K ranges (kl_direct_sum), the centering on the device (weighted
too), the prepared operand on the host, logistic regression's products, and the wide
eigensolver's kernels (PCA above 256 features)."""
import pytest

import samebits

np = pytest.importorskip("numpy")


def data(n=30000, p=20, seed=3):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, p)) * np.linspace(0.5, 4.0, p)).astype(np.float32)
    X[:, 3] += 100.0  # an offset the centering removes
    beta = rng.standard_normal(p).astype(np.float32)
    y = (X @ beta + rng.standard_normal(n)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, n).astype(np.float32)
    return X, y, w


CASES = [
    ("ridge", lambda: samebits.Ridge(alpha=2.0), "y", False),
    ("ridge 120 features", lambda: samebits.Ridge(alpha=2.0), "y150", False),  # a Gram of 2 x 2 tiles
    ("linear weighted", lambda: samebits.LinearRegression(), "y", True),
    ("pca", lambda: samebits.PCA(n_components=5), None, False),
    # above 256 features: the eigensolver's device road (Householder, Q, the QL rotations as kernels)
    ("pca 300 features", lambda: samebits.PCA(), "p300", False),
    ("logistic", lambda: samebits.LogisticRegression(max_iter=30), "b", False),
    ("logistic 3 classes", lambda: samebits.LogisticRegression(max_iter=20), "c", False),
    ("ridge 3 targets weighted", lambda: samebits.Ridge(alpha=2.0), "y3", True),  # the centering's target columns
]


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("name,make,target,weighted", CASES, ids=[c[0] for c in CASES])
def test_devices_give_the_cpu_model(device, name, make, target, weighted):
    X, y, w = data(n=8000, p=120) if target == "y150" else data(n=3000, p=300) if target == "p300" else data()
    t = {"y": y, "y150": y, "y3": np.stack([y, 2 * y - 1, -y], axis=1), "b": (y > np.median(y)).astype(np.float32),
         "c": np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(np.float32), None: None, "p300": None}[target]
    kw = {"sample_weight": w} if weighted else {}
    ref = make().fit(X, t, **kw) if t is not None else make().fit(X)
    est = make()
    est.set_params(device=device)
    try:
        est = est.fit(X, t, **kw) if t is not None else est.fit(X)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    assert est.model_digest_ == ref.model_digest_
