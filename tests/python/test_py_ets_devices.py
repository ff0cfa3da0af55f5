"""Exponential smoothing on every GPU backend built (device="opencl" on PoCL
here, "cuda" on the GPU host) gives the CPU's bits: one work-item a series
runs kernels/ets.h's fit, the function the host's tasks run. Every model the
family has, series of other lengths in one batch (several work-groups), and a
series' bytes the same alone and at another place of a shuffled batch on the
device too (docs/timeseries.md, "Devices")."""
import os

import pytest

import samebits
from samebits.timeseries import _Batch, _spec_pairs

np = pytest.importorskip("numpy")

os.environ.setdefault("POCL_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build", "opencl",
                                                     "pocl-cache"))

MODELS = [  # (trend, damped_trend, seasonal)
    (None, False, None), ("add", False, None), ("add", True, None),
    (None, False, "add"), ("add", False, "add"), ("add", True, "add"),
    (None, False, "mul"), ("add", False, "mul"), ("add", True, "mul"),
]


def _series(n, m=12, seed=0, mul=False):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    season = 10.0 * np.sin(2 * np.pi * t / m)
    level = 200.0 + 0.3 * t + np.cumsum(rng.normal(0, 0.5, n))
    return level * (1 + season / 50.0) + rng.normal(0, 1, n) if mul else level + season + rng.normal(0, 1, n)


def _required(device):
    """SAMEBITS_PARITY_REQUIRE=cuda,opencl (the GPU host's run): no skip."""
    return device in os.environ.get("SAMEBITS_PARITY_REQUIRE", "").split(",")


def _skip(device, e):
    if _required(device):
        raise e
    pytest.skip("no %s here: %s" % (device, e))


def _batch(pairs, ys, device):
    try:
        return _Batch(pairs + [("device", device)], ys)
    except samebits.BackendUnavailableError as e:
        _skip(device, e)


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("trend,damped,seasonal", MODELS)
def test_device_gives_the_cpu_bits(device, trend, damped, seasonal):
    """Every series' digest (parameters, states, criteria, fitted values) and
    forecasts equal the CPU's, on a batch of 7 series of lengths 48..300."""
    ys = [_series(n, seed=s, mul=seasonal == "mul") for s, n in enumerate((48, 300, 97, 131, 60, 205, 72))]
    ys[4] = np.full(60, 17.5)  # a constant series: the stated rule, on the device too
    pairs = _spec_pairs(trend, damped, seasonal, 12 if seasonal else None, [])
    cpu = _Batch(pairs, ys)
    dev = _batch(pairs, ys, device)
    for i in range(len(ys)):
        assert dev.digest(i) == cpu.digest(i), (device, i)
        assert dev.forecast(i, 30) == cpu.forecast(i, 30)


@pytest.mark.parametrize("device", ["opencl", "cuda"])
def test_device_batch_position_independence(device):
    """A series alone on the device has the bytes of the same series inside a
    shuffled batch of 300 (two work-groups and more) on the device, and the
    CPU's; given parameters too."""
    rng = np.random.default_rng(5)
    ys = [_series(int(n), seed=int(s), mul=True) for s, n in enumerate(rng.integers(30, 160, 300))]
    pairs = _spec_pairs("add", True, "mul", 12, [("smoothing_level", 0.4)])
    alone = _batch(pairs, [ys[7]], device)
    order = rng.permutation(len(ys))
    shuffled = _batch(pairs, [ys[i] for i in order], device)
    at = int(np.where(order == 7)[0][0])
    ref = _Batch(pairs, [ys[7]]).digest(0)
    assert alone.digest(0) == ref
    assert shuffled.digest(at) == ref
    assert shuffled.forecast(at, 20) == alone.forecast(0, 20)


@pytest.mark.parametrize("device", ["opencl", "cuda"])
def test_estimator_device_equals_cpu(device):
    """samebits.ExponentialSmoothing(device=...) gives the CPU's model bytes."""
    y = _series(150, m=7, mul=True)
    kw = dict(trend="add", damped_trend=True, seasonal="mul", seasonal_periods=7)
    ref = samebits.ExponentialSmoothing(**kw).fit(y)
    try:
        m = samebits.ExponentialSmoothing(device=device, **kw).fit(y)
    except samebits.BackendUnavailableError as e:
        _skip(device, e)
    assert m.get_params()["device"] == device
    assert m.model_digest_ == ref.model_digest_ and m.series_digest_ == ref.series_digest_
    assert list(m.forecast(14)) == list(ref.forecast(14))


def test_unknown_device_is_refused_by_name():
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device 'tpu'"):
        samebits.ExponentialSmoothing(device="tpu").fit(_series(40))
