"""The tree-device path (src/backends/tdev.h, src/models/trees/grow_dev.c) against
the CPU grower: device=cpu-batched runs the batched grower and the kernel bodies
the GPU runs, in the GPU's data layouts, on the host; its models must be the
CPU's byte for byte on every configuration. The separating arm is the
float-hist build, where the device's histograms sum gradients in float (see
tests/integration/test_devices.py). device=opencl runs the OpenCL tree device
on PoCL (make test installs it; its arms are in tests/integration/test_opencl_gbdt.py). CUDA itself needs a GPU: tools/device-h200.sh
runs the same comparison there and records it under evidence/cuda/."""
import pytest

np = pytest.importorskip("numpy")
import samebits  # noqa: E402


def data(n, nf, seed):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, nf)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)            # heavy ties
    X[:, 2] = X[:, 0]                          # an exact duplicate column
    X[:, 3] = 5.0                              # constant
    X[g.random((n, nf)) < 0.04] = np.nan       # missing values
    w = (g.random(n) * 2).astype(np.float32)
    return X, w


CONFIGS = [
    ("leafwise", dict(num_leaves=31)),
    ("leafwise-depth", dict(num_leaves=63, max_depth=5)),
    ("depthwise", dict(growth="depthwise", max_depth=6)),
    ("depthwise-leaf-limit", dict(growth="depthwise", max_depth=7, num_leaves=20)),
    ("bagging-colsample", dict(num_leaves=15, subsample=0.7, colsample_bytree=0.5, random_state=9)),
    ("regularized", dict(num_leaves=15, reg_lambda=2.0, min_samples_leaf=50, min_split_gain=0.5)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[c[0] for c in CONFIGS])
@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("device", ["cpu-batched", "opencl"])
def test_device_models_equal_cpu(name, kw, task, device):
    X, w = data(3000, 8, 11)
    Xn = np.nan_to_num(X)
    if task == "regression":
        y = (Xn[:, 0] * 3 + Xn[:, 1] ** 2).astype(np.float32)
        cls = samebits.GradientBoostingRegressor
    elif task == "binary":
        y = (Xn[:, 0] + 0.5 * Xn[:, 4] > 0).astype(np.float32)
        cls = samebits.GradientBoostingClassifier
    else:
        y = (np.abs(Xn[:, 1]) % 4).astype(np.float32)
        cls = samebits.GradientBoostingClassifier
    common = dict(n_estimators=6, learning_rate=0.3, max_bin=63, **kw)
    a = cls(**common).fit(X, y, sample_weight=w)
    b = cls(device=device, **common).fit(X, y, sample_weight=w)
    assert a.model_bytes() == b.model_bytes(), (name, task, device)
    assert a.digest() == b.digest()


def test_cuda_refused_by_name_without_a_gpu_build():
    X, _ = data(200, 4, 3)
    y = np.nan_to_num(X[:, 0])
    info = samebits.build_info()
    if "backends: cpu, cpu-batched, cuda" in info:
        pytest.skip("this library was built with CUDA (make CUDA=1): the refusal below is for a CPU build")
    with pytest.raises(samebits.BackendUnavailableError, match="no CUDA backend"):
        samebits.GradientBoostingRegressor(n_estimators=2, device="cuda").fit(X, y)
    m = samebits.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    m.set_params(device="cuda")
    with pytest.raises(samebits.BackendUnavailableError):
        m.predict(X)
