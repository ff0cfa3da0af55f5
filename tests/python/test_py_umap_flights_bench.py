"""The featurisation of bench/umap_flights_bench.py (issue 29's UMAP quality
on the flights data): the calendar columns, the label's threshold, the
standardising and the sample rule, on rows made here (the 3,000,000-row
Parquet file is not needed)."""
import importlib.util
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("umap_flights_bench", ROOT / "bench" / "umap_flights_bench.py")
fb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fb)


def _dates(*texts):
    return np.array(texts, dtype="datetime64[m]")


def test_calendar_columns():
    # 2001-01-01 was a Monday (day of the week 0), the year's day 0, minute 0;
    # 2001-01-07 23:59 a Sunday (6), day 6, minute 1439; 2001-07-01 12:00 a
    # Sunday, day 181, minute 720. A weekday origin off by one day, or a
    # 1-based day of the year, moves these values.
    raw = fb.flights_raw(_dates("2001-01-01T00:00", "2001-01-07T23:59", "2001-07-01T12:00"), [100, 1000, 2704])
    want = []
    for dist, minute, yday, wday in ((100, 0, 0, 0), (1000, 1439, 6, 6), (2704, 720, 181, 6)):
        row = [math.log(dist)]
        for v, p in ((minute, 1440), (yday, 365), (wday, 7)):
            row += [math.sin(2 * math.pi * v / p), math.cos(2 * math.pi * v / p)]
        want.append(row)
    np.testing.assert_allclose(raw, np.array(want), rtol=0, atol=1e-12)
    assert raw.shape[1] == len(fb.FEATURES)


def test_cyclic_midnight_is_near():
    # 23:59 and 00:01 of the same day sit 2 minutes apart on the circle, not 1438
    raw = fb.flights_raw(_dates("2001-03-05T23:59", "2001-03-05T00:01"), [500, 500])
    assert np.hypot(*(raw[0, 1:3] - raw[1, 1:3])) < 2 * math.pi * 3 / 1440


def test_label_and_standardising():
    d = _dates(*["2001-02-%02dT%02d:%02d" % (1 + i % 28, i % 24, (7 * i) % 60) for i in range(40)])
    delay = np.array([14, 15, -5, 16] * 10)
    dist = np.arange(40) * 37 + 80
    x, y = fb.flights_features(d, delay, dist)
    assert list(y[:4]) == [0, 1, 0, 1]  # late from 15 minutes on (BTS), 14 on time
    assert x.dtype == np.float32 and x.shape == (40, 7)
    np.testing.assert_allclose(x.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(x.std(axis=0), 1, atol=1e-5)
    # a constant column becomes 0, never NaN nor +-1: seven Sunday rows of one
    # distance, whose float64 means of log(91) and sin(2 pi 6 / 7) are not the
    # value itself (x - mean is 1 ulp, and so is the standard deviation)
    x1, _ = fb.flights_features(_dates(*["2001-02-04T%02d:00" % h for h in range(7)]), np.zeros(7), np.full(7, 91))
    assert np.all(x1[:, [0, 5, 6]] == 0) and np.all(np.isfinite(x1))


def test_sample_rule():
    a = fb.flights_sample(1000, 100)
    b = fb.flights_sample(1000, 300)
    assert np.array_equal(a, b[:100])  # a smaller run's rows are a larger run's first rows
    assert np.array_equal(a, fb.flights_sample(1000, 100))  # the same rows every time
    warm = fb.flights_sample(1000, 50, skip=100)
    assert not set(warm) & set(a)  # the warm-up rows are not the timed fits'
    assert len(set(b)) == 300 and not np.array_equal(np.sort(a), a)  # no repeats, kept in the drawn order
    assert not np.array_equal(a, fb.flights_sample(1000, 100, seed=2002))
