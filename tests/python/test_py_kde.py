"""samebits.KernelDensity (docs/density.md): log densities against
scikit-learn's KernelDensity and against the exact sum computed here in
float64, every kernel; the same bits at every thread count; save/load and
pickle; sample() a pure function of random_state; refusals by name."""
import math
import pickle
import warnings

import pytest

np = pytest.importorskip("numpy")
import samebits  # noqa: E402
from samebits.errors import InvalidArgumentError, InvalidInputError  # noqa: E402

KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")


def _data(n=300, q=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    Q = (rng.normal(size=(q, d)) * 1.5).astype(np.float32)
    Q[0] = X[3]  # a training row itself
    Q[1] = X[3]  # a duplicate query
    return X, Q


def _log_norm(kernel, d, h):
    """The log of the kernel's integral over R^d at bandwidth h, by its closed
    form (Gamma functions; the cosine kernel's radial integral numerically)."""
    logv = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1)  # the unit ball's volume
    if kernel == "gaussian":
        c = 0.5 * d * math.log(2 * math.pi)
    elif kernel == "tophat":
        c = logv
    elif kernel == "epanechnikov":
        c = logv + math.log(2.0 / (d + 2))
    elif kernel == "exponential":
        c = logv + math.lgamma(d + 1)
    elif kernel == "linear":
        c = logv - math.log(d + 1)
    else:
        r = (np.arange(200000) + 0.5) / 200000
        c = logv + math.log(d) + math.log(np.mean(np.cos(0.5 * np.pi * r) * r ** (d - 1)))
    return c + d * math.log(h)


def _exact(X, Q, kernel, h, w=None):
    """The log density in float64 from the definition (log-sum-exp for the
    kernels without compact support)."""
    X64, Q64 = X.astype(np.float64), Q.astype(np.float64)
    w = np.ones(len(X)) if w is None else np.asarray(w, dtype=np.float64)
    D = ((Q64[:, None, :] - X64[None, :, :]) ** 2).sum(-1)
    r = np.sqrt(D)
    with np.errstate(divide="ignore"):
        if kernel in ("gaussian", "exponential"):
            t = D / (2 * h * h) if kernel == "gaussian" else r / h
            t = np.where(w[None, :] > 0, t, np.inf)
            tmin = t.min(1, keepdims=True)
            logs = np.log((w[None, :] * np.exp(-(t - tmin))).sum(1)) - tmin[:, 0]
        else:
            inside = r < h
            k = {"tophat": np.ones_like(r), "epanechnikov": 1 - D / (h * h), "linear": 1 - r / h,
                 "cosine": np.cos(0.5 * np.pi * np.minimum(r / h, 1))}[kernel]
            logs = np.log((w[None, :] * np.where(inside, k, 0.0)).sum(1))
    return logs - math.log(w.sum()) - _log_norm(kernel, X.shape[1], h)


# ---- against scikit-learn and the exact sum -------------------------------------------------

@pytest.mark.parametrize("kernel", KERNELS)
def test_score_samples_match_scikit_learn_and_the_exact_sum(kernel):
    from sklearn.neighbors import KernelDensity as SK
    for d, bw in ((1, 0.5), (3, "scott"), (5, "silverman"), (3, 2.0), (2, 0.8)):
        X, Q = _data(d=d, seed=d)
        ours = samebits.KernelDensity(kernel=kernel, bandwidth=bw).fit(X)
        a = ours.score_samples(Q)
        assert a.dtype == np.float64 and a.shape == (len(Q),)
        ref = _exact(X, Q, kernel, ours.bandwidth_)
        fin = np.isfinite(ref)
        assert (np.isfinite(a) == fin).all()
        np.testing.assert_allclose(a[fin], ref[fin], rtol=1e-6, atol=1e-5)
        if kernel == "cosine" and d % 2 == 0:
            continue  # scikit-learn's cosine normalization is wrong in even dimensions (docs/density.md)
        theirs = SK(kernel=kernel, bandwidth=bw).fit(X.astype(np.float64))
        assert ours.bandwidth_ == pytest.approx(theirs.bandwidth_, rel=1e-6)
        s = theirs.score_samples(Q.astype(np.float64))
        # scikit-learn's tree answers a query outside every compact support with
        # the log of a rounding residue (below -30) or -inf; ours is exactly -inf
        both = np.isfinite(a) & np.isfinite(s)
        assert (np.isfinite(a) <= np.isfinite(s)).all()
        assert (s[~np.isfinite(a)] < -30).all()
        # the target: the log-likelihood within 1e-5 relative; each row
        # too, except rows of a compact kernel that only graze a support's edge,
        # where scikit-learn's 1 - (sqrt(D))^2 / h^2 loses digits (ours agrees
        # with the exact sum above there)
        assert a[both].sum() == pytest.approx(s[both].sum(), rel=1e-5)
        core = both & (a > np.median(a[both]) - 5.0)
        np.testing.assert_allclose(a[core], s[core], rtol=1e-5)
        assert ours.score(Q) == pytest.approx(float(np.sum(a.astype(np.float64))), rel=1e-12, abs=0) or \
            math.isinf(ours.score(Q))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sample_weight_matches_scikit_learn():
    from sklearn.neighbors import KernelDensity as SK
    X, Q = _data(d=3, seed=4)
    w = np.random.default_rng(5).uniform(0.0, 3.0, size=len(X)).astype(np.float32)
    w[:20] = 0.0
    for kernel in ("gaussian", "epanechnikov"):
        a = samebits.KernelDensity(kernel=kernel, bandwidth=0.9).fit(X, sample_weight=w).score_samples(Q)
        s = SK(kernel=kernel, bandwidth=0.9).fit(X.astype(np.float64), sample_weight=w.astype(np.float64)
                                                 ).score_samples(Q.astype(np.float64))
        both = np.isfinite(a) & np.isfinite(s)
        np.testing.assert_allclose(a[both], s[both], rtol=1e-5)
        np.testing.assert_allclose(a, _exact(X, Q, kernel, 0.9, w), rtol=1e-6, atol=1e-5)


def test_the_cosine_kernel_integrates_to_one_in_two_dimensions():
    """scikit-learn's cosine kernel in 2-D integrates to about 0.36 (and gives
    NaN in 4-D); ours is normalized."""
    g = np.linspace(-1.0, 1.0, 401)
    mesh = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2).astype(np.float32)
    m = samebits.KernelDensity(kernel="cosine").fit(np.zeros((1, 2), np.float32))
    assert np.exp(m.score_samples(mesh)).sum() * (g[1] - g[0]) ** 2 == pytest.approx(1.0, abs=2e-3)
    assert np.isfinite(samebits.KernelDensity(kernel="cosine").fit(np.zeros((3, 4), np.float32))
                       .score_samples(np.zeros((1, 4), np.float32))).all()


def test_hostile_queries():
    X, _ = _data(n=50, d=2, seed=7)
    far = np.array([[1e4, -1e4]], np.float32)
    g = samebits.KernelDensity(bandwidth=0.5).fit(X)
    v = g.score_samples(far)[0]
    assert np.isfinite(v) and v == pytest.approx(_exact(X, far, "gaussian", 0.5)[0], rel=1e-7)
    for kernel in ("tophat", "epanechnikov", "linear", "cosine"):
        assert samebits.KernelDensity(kernel=kernel, bandwidth=0.5).fit(X).score_samples(far)[0] == -np.inf
        assert samebits.KernelDensity(kernel=kernel, bandwidth=0.5).fit(X).score(far) == -np.inf
    one = samebits.KernelDensity(kernel="epanechnikov", bandwidth=1.0).fit(X[:1])
    assert one.score_samples(X[:1])[0] == pytest.approx(-_log_norm("epanechnikov", 2, 1.0), rel=1e-6)


# ---- identity ------------------------------------------------------------------------------

def test_same_bits_at_every_thread_count(monkeypatch):
    X, Q = _data(n=700, q=333, d=6, seed=8)
    w = np.random.default_rng(9).uniform(0.1, 2.0, size=len(X)).astype(np.float32)
    for kernel in KERNELS:
        results = set()
        for t in ("1", "2", "3"):
            monkeypatch.setenv("SAMEBITS_NUM_THREADS", t)
            samebits.set_num_threads(0)
            assert samebits.get_num_threads() == int(t)
            m = samebits.KernelDensity(kernel=kernel, bandwidth="silverman").fit(X, sample_weight=w)
            results.add((m.model_digest_, m.score_samples(Q).tobytes(), m.score(Q)))
        for n_jobs in (1, 2, 3):
            m = samebits.KernelDensity(kernel=kernel, bandwidth="silverman", n_jobs=n_jobs).fit(X, sample_weight=w)
            results.add((m.model_digest_, m.score_samples(Q).tobytes(), m.score(Q)))
        assert len(results) == 1, kernel


def test_save_load_and_pickle(tmp_path):
    X, Q = _data(d=3, seed=12)
    m = samebits.KernelDensity(kernel="exponential", bandwidth="scott").fit(X)
    path = tmp_path / "kde.sbm"
    m.save_model(str(path))
    back = samebits.KernelDensity().load_model(str(path))
    assert back.kernel == "exponential" and back.bandwidth == "scott" and back.bandwidth_ == m.bandwidth_
    assert back.model_digest_ == m.model_digest_
    assert back.score_samples(Q).tobytes() == m.score_samples(Q).tobytes()
    p = pickle.loads(pickle.dumps(m))
    assert p.score_samples(Q).tobytes() == m.score_samples(Q).tobytes()
    assert type(samebits.load_model(str(path))).__name__ == "KernelDensity"


# ---- sample -------------------------------------------------------------------------------

def test_sample_is_a_function_of_random_state():
    X, _ = _data(n=400, d=3, seed=13)
    for kernel in ("gaussian", "tophat"):
        m = samebits.KernelDensity(kernel=kernel, bandwidth=0.3).fit(X)
        a = m.sample(500, random_state=1)
        assert a.shape == (500, 3)
        assert a.tobytes() == m.sample(500, random_state=1).tobytes()
        assert a.tobytes() != m.sample(500, random_state=2).tobytes()
        assert m.sample(7).tobytes() == m.sample(7, random_state=0).tobytes()
        # every draw lies near a training row: within the bandwidth for tophat
        D = np.sqrt(((a[:, None, :].astype(np.float64) - X[None].astype(np.float64)) ** 2).sum(-1)).min(1)
        if kernel == "tophat":
            assert (D <= 0.3 * (1 + 1e-6)).all()
        else:
            assert np.median(D) < 0.6
    # the gaussian draws have the bandwidth's scale around a single row
    one = samebits.KernelDensity(bandwidth=2.0).fit(np.zeros((1, 2), np.float32)).sample(20000, random_state=3)
    assert abs(one.mean()) < 0.05 and one.std() == pytest.approx(2.0, rel=0.02)
    # tophat: uniform in the ball (a fraction 2^-d of the draws within half the radius)
    ball = samebits.KernelDensity(kernel="tophat", bandwidth=1.0).fit(np.zeros((1, 2), np.float32))
    r = np.sqrt((ball.sample(20000, random_state=4).astype(np.float64) ** 2).sum(1))
    assert (r < 0.5).mean() == pytest.approx(0.25, abs=0.015)


def test_weighted_sample_never_draws_a_row_of_weight_zero():
    X = np.array([[0.0], [100.0], [200.0]], np.float32)
    m = samebits.KernelDensity(kernel="tophat", bandwidth=1.0).fit(X, sample_weight=[0.0, 1.0, 3.0])
    s = m.sample(4000, random_state=5)[:, 0]
    assert not (np.abs(s) < 50).any()
    assert (s > 150).mean() == pytest.approx(0.75, abs=0.03)


# ---- refusals -----------------------------------------------------------------------------

def test_refusals_by_name():
    X, Q = _data(n=30, d=2)
    for bw in (0, -1.0, float("nan"), float("inf"), "auto"):
        with pytest.raises(InvalidArgumentError, match="bandwidth"):
            samebits.KernelDensity(bandwidth=bw).fit(X)
    with pytest.raises(InvalidArgumentError, match="kernel='box'"):
        samebits.KernelDensity(kernel="box").fit(X)
    with pytest.raises(InvalidArgumentError, match="metric='manhattan'"):
        samebits.KernelDensity(metric="manhattan").fit(X)
    for key in ("atol", "rtol"):
        with pytest.raises(InvalidArgumentError, match=key + "=0.1"):
            samebits.KernelDensity(**{key: 0.1}).fit(X)
    with pytest.raises(InvalidArgumentError, match="metric_params"):
        samebits.KernelDensity(metric_params={"p": 3}).fit(X)
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(InvalidInputError, match="row 4, feature 1: missing"):
        samebits.KernelDensity().fit(bad)
    m = samebits.KernelDensity().fit(X)
    with pytest.raises(InvalidInputError, match="row 4, feature 1: missing"):
        m.score_samples(bad)
    with pytest.raises((InvalidInputError, InvalidArgumentError)):
        samebits.KernelDensity().fit(np.zeros((0, 2), np.float32))
    with pytest.raises(InvalidInputError, match="sum to zero"):
        samebits.KernelDensity().fit(X, sample_weight=np.zeros(len(X)))
    with pytest.raises((InvalidInputError, InvalidArgumentError), match="-1"):
        samebits.KernelDensity().fit(X, sample_weight=-np.ones(len(X)))
    for kernel in ("epanechnikov", "exponential", "linear", "cosine"):
        with pytest.raises(InvalidArgumentError, match="kernel='%s' is not supported" % kernel):
            samebits.KernelDensity(kernel=kernel).fit(X).sample(3)
    with pytest.raises(InvalidArgumentError, match="unknown device|tpu"):
        samebits.KernelDensity(device="tpu").fit(X)
    for mode in ("fast", "deterministic"):
        with pytest.raises(samebits.ModeUnsupportedError, match="numeric_mode=%s is not built" % mode):
            samebits.KernelDensity(numeric_mode=mode).fit(X)
    assert samebits.KernelDensity(numeric_mode="identical").fit(X).numeric_mode_used() == "identical"


def test_engine_only_options_warn_and_change_nothing():
    X, Q = _data(n=100, d=2)
    base = samebits.KernelDensity().fit(X).score_samples(Q)
    for kw in ({"algorithm": "kd_tree"}, {"algorithm": "ball_tree"}, {"leaf_size": 10}, {"breadth_first": False}):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            m = samebits.KernelDensity(**kw).fit(X)
        assert any("no effect" in str(w.message) for w in got), kw
        assert m.score_samples(Q).tobytes() == base.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samebits.KernelDensity().fit(X)  # the defaults: no warning


def test_sklearn_conventions():
    from sklearn.base import clone
    k = samebits.KernelDensity(kernel="tophat", bandwidth=0.4)
    assert clone(k).get_params() == k.get_params()
    assert set(k.get_params()) >= {"bandwidth", "kernel", "metric", "atol", "rtol", "breadth_first", "leaf_size",
                                   "metric_params", "algorithm"}
    with pytest.raises(Exception):
        k.score_samples(np.zeros((2, 2), np.float32))


def test_check_estimator():
    """scikit-learn's check_estimator on the default constructor: every check passes."""
    from sk_checks import assert_failed_checks
    assert_failed_checks(samebits.KernelDensity(), set())


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_score_on_a_gpu_is_the_cpu_bits(device, kernel):
    """score_samples and score with device="opencl"|"cuda": the kernel sums on
    the GPU (kernels/kde.h, the host's double operations in integer
    binary64), the same bits as device="cpu", weighted and not, with a query
    on a training row, a duplicate query, a query far from every row (finite
    under gaussian and exponential, -inf under the compact kernels) and a
    feature count that is not a multiple of the four lanes. sample() stays on
    the host: the same draws. PoCL's OpenCL in CI; a backend that is not here
    is a skip."""
    X, Q = _data(n=257, q=70, d=5, seed=3)
    Q[2] = 1000.0
    w = np.random.default_rng(4).integers(0, 5, size=len(X)).astype(np.float32)
    for weight in (None, w):
        ref = samebits.KernelDensity(kernel=kernel, bandwidth=0.7).fit(X, sample_weight=weight)
        try:
            est = samebits.KernelDensity(kernel=kernel, bandwidth=0.7, device=device).fit(X, sample_weight=weight)
            got = est.score_samples(Q)
        except samebits.BackendUnavailableError as e:
            pytest.skip("no %s here: %s" % (device, e))
        want = ref.score_samples(Q)
        assert got.tobytes() == want.tobytes()
        assert np.isfinite(want[2]) == (kernel in ("gaussian", "exponential"))
        a, b = est.score(Q), ref.score(Q)
        assert np.float64(a).tobytes() == np.float64(b).tobytes() or (math.isinf(a) and a == b)
        assert est.model_digest_ == ref.model_digest_
        if kernel in ("gaussian", "tophat"):
            assert est.sample(9, random_state=5).tobytes() == ref.sample(9, random_state=5).tobytes()
