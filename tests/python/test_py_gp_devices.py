"""Gaussian process regression on every GPU backend built (device="opencl" on
PoCL here, "cuda" and NVIDIA's OpenCL on the GPU host) gives the CPU's bits:
the kernel matrix, the Cholesky factor, L^-1, -K^-1, W and the gradient's row
terms of every likelihood evaluation run on the device in the host's element
order, so every optimizer step, restart, the fitted model (its digest),
predict (mean, std, cov), sample_y and log_marginal_likelihood (with its
gradient) are the CPU's (docs/gaussian-process.md, "Devices"). The sizes
cross the device's 64-column panels and leave a partial last panel."""
import os

import pytest

import samebits
from samebits.gaussian_process import GaussianProcessRegressor
from samebits.gaussian_process.kernels import RBF, ConstantKernel, Matern, RationalQuadratic, WhiteKernel

np = pytest.importorskip("numpy")

os.environ.setdefault("POCL_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build", "opencl",
                                                     "pocl-cache"))


def _required(device):
    """SAMEBITS_PARITY_REQUIRE=cuda,opencl (the GPU host's run): no skip."""
    return device in os.environ.get("SAMEBITS_PARITY_REQUIRE", "").split(",")


def _data(n, d, t=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, d))
    y = np.sin(X[:, 0]) + 0.3 * X[:, -1] ** 2 + rng.normal(0, 0.1, n)
    if t > 1:
        y = np.stack([y * (k + 1) + k for k in range(t)], axis=1)
    return X, y


def _fit(device, kernel, X, y, **kw):
    m = GaussianProcessRegressor(kernel, device=device, **kw)
    try:
        return m.fit(X, y)
    except samebits.BackendUnavailableError as e:
        if _required(device) or device == "cpu":
            raise
        pytest.skip("no %s here: %s" % (device, e))


CASES = [
    ("aniso-restarts", lambda: ConstantKernel(1.0) * RBF([1.0, 1.0, 1.0]) + WhiteKernel(0.1),
     dict(n_restarts_optimizer=1, random_state=3, normalize_y=True), 150, 3, 1),
    ("matern-sum-2targets", lambda: ConstantKernel(1.0) * Matern(1.0, nu=1.5) + Matern(2.0, nu=2.5) * Matern(0.7, nu=0.5),
     dict(alpha=1e-4), 97, 2, 2),
    ("rq", lambda: RationalQuadratic(1.0, 1.0) + WhiteKernel(0.05), dict(normalize_y=True), 70, 1, 1),
]


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("name,kernel,kw,n,d,t", CASES, ids=[c[0] for c in CASES])
def test_device_gives_the_cpu_bits(device, name, kernel, kw, n, d, t):
    X, y = _data(n, d, t, seed=len(name))
    Q = _data(11, d, 1, seed=99)[0]
    cpu = _fit("cpu", kernel(), X, y, **kw)
    dev = _fit(device, kernel(), X, y, **kw)
    assert dev.model_digest_ == cpu.model_digest_
    assert dev.n_iter_ == cpu.n_iter_ and dev.kernel_spec_ == cpu.kernel_spec_
    assert dev.log_marginal_likelihood_value_ == cpu.log_marginal_likelihood_value_
    assert dev.L_.tobytes() == cpu.L_.tobytes() and dev.alpha_.tobytes() == cpu.alpha_.tobytes()
    for a, b in zip(dev.predict(Q, return_std=True), cpu.predict(Q, return_std=True)):
        assert a.tobytes() == b.tobytes()
    for a, b in zip(dev.predict(Q, return_cov=True), cpu.predict(Q, return_cov=True)):
        assert a.tobytes() == b.tobytes()
    assert dev.sample_y(Q, 3, random_state=5).tobytes() == cpu.sample_y(Q, 3, random_state=5).tobytes()
    theta = np.log(cpu._arr("params")) + 0.2  # every hyperparameter of these cases is free
    lc, gc = cpu.log_marginal_likelihood(theta, eval_gradient=True)
    ld, gd = dev.log_marginal_likelihood(theta, eval_gradient=True)
    assert ld == lc and np.asarray(gd).tobytes() == np.asarray(gc).tobytes()


@pytest.mark.parametrize("device", ["opencl", "cuda"])
def test_not_positive_definite_refused_alike(device):
    """Duplicate rows without noise or alpha: the device's pivot check names
    the same column as the host's."""
    X, y = _data(40, 2)
    X = np.vstack([X, X])
    y = np.concatenate([y, y])
    msgs = []
    for dv in ("cpu", device):
        with pytest.raises(samebits.InvalidInputError) as e:
            _fit(dv, RBF(1.5, "fixed"), X, y, optimizer=None, alpha=0.0)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "not positive definite" in msgs[0]


def test_bad_device_refused_by_name():
    X, y = _data(20, 2)
    with pytest.raises(samebits.InvalidArgumentError, match="tpu"):
        GaussianProcessRegressor(RBF(1.0), device="tpu").fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="no batched host path"):
        GaussianProcessRegressor(RBF(1.0), device="cpu-batched").fit(X, y)
