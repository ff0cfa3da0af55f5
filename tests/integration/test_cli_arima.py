"""ARIMA from the command line (docs/timeseries.md, "ARIMA", "Command line"):
train --model arima writes the batch's model file, forecast reads it (its
family from the file) or fits a long-format CSV first, with the interval
columns; the same bits as Python; hostile files refused by name."""
import math
import struct
import sys

import pytest

from conftest import LEGS, ROOT, samebits
from ts_cli_common import (arima_long_csv, assert_leg_model_bytes, assert_refused, model_files_at_threads,
                           train_then_forecast)


_long_csv = arima_long_csv

def test_train_then_forecast_equals_one_shot_forecast(tmp_path):
    data = tmp_path / "s.csv"
    _long_csv(data)
    la, lb = train_then_forecast(tmp_path, data, "arima", ["order=1:0:1", "trend=c"], ["--h", "5", "--alpha", "0.1"],
                                 ["model=arima"])
    assert la[0] == "series,step,forecast,lower,upper" and lb[0] == "unique_id,step,forecast,lower,upper"
    assert [x.split(",")[1:] for x in la[1:]] == [x.split(",")[1:] for x in lb[1:]]
    assert [x.split(",")[0] for x in lb[1::5]] == ["s2", "s1", "s0"]
    for x in la[1:]:
        m, lo, hi = map(float, x.split(",")[2:])
        assert lo < m < hi


def test_cli_forecasts_are_pythons_bits(tmp_path):
    pytest.importorskip("numpy")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import samebits as sbpy
    data = tmp_path / "s.csv"
    rows = _long_csv(data, shuffle=False)
    r = samebits("forecast", "--data", str(data), "--h", "4", "model=arima", "order=0:1:1")
    assert r.returncode == 0, r.stderr
    cli = [[float(v) for v in x.split(",")[2:]] for x in r.stdout.splitlines()[1:]]
    series = [[y for (i, _, y) in rows if i == "s%d" % k] for k in range(3)]
    m = sbpy.ARIMA(order=(0, 1, 1)).fit(series)
    py = []
    for res in m.results_:
        f, ci = res.forecast(4, return_conf_int=True)
        py += [[f[j], ci[j, 0], ci[j, 1]] for j in range(4)]
    assert [struct.pack("<3d", *v) for v in cli] == [struct.pack("<3d", *v) for v in py]


def test_missing_values_inside_a_series_are_pythons_bits(tmp_path):
    """Empty fields inside a series are missing values: the CLI's one-shot
    forecast fits them as Python does (the filter predicts across them)."""
    np = pytest.importorskip("numpy")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import samebits as sbpy
    data = tmp_path / "s.csv"
    rows = _long_csv(data, shuffle=False)
    holes = {("s0", 10), ("s0", 11), ("s1", 30), ("s2", 5)}
    text, series = "unique_id,ds,y\n", {}
    for k in range(3):
        for t, (i, ds, y) in enumerate(r for r in rows if r[0] == "s%d" % k):
            gone = (i, t) in holes
            text += "%s,%s,%s\n" % (i, ds, "" if gone else repr(y))
            series.setdefault(i, []).append(math.nan if gone else y)
    data.write_text(text)
    r = samebits("forecast", "--data", str(data), "--h", "3", "model=arima", "order=1:1:1")
    assert r.returncode == 0, r.stderr
    cli = [[float(v) for v in x.split(",")[2:]] for x in r.stdout.splitlines()[1:]]
    m = sbpy.ARIMA(order=(1, 1, 1)).fit([np.array(series["s%d" % k]) for k in range(3)])
    py = []
    for res in m.results_:
        f, ci = res.forecast(3, return_conf_int=True)
        py += [[f[j], ci[j, 0], ci[j, 1]] for j in range(3)]
    assert [struct.pack("<3d", *v) for v in cli] == [struct.pack("<3d", *v) for v in py]


def test_thread_counts_write_one_model(tmp_path):
    data = tmp_path / "s.csv"
    _long_csv(data)
    files = model_files_at_threads(tmp_path, data, "arima", ["order=1:1:1", "seasonal_order=0:1:1:7"])
    assert len(files) == 1


@pytest.mark.parametrize("text,args,words", [
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,\na,4,5\n", ["order=1:0:0", "trend=c"], "observed differenced values"),
    ("unique_id,ds,y\na,1,\na,2,\na,3,\n", [], "every value is missing"),
    ("unique_id,ds,y\na,1,3\n", [], "needs at least"),
    ("unique_id,ds,y\na,1,3\na,2,3\na,3,3\na,4,3\na,5,3\n", ["trend=c"], "constant"),
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,5\na,4,6\n", ["order=0:0:1", "trend=n", "params=1.5:1"], "not invertible"),
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,5\na,4,6\n", ["order=1:1:0", "trend=c"], "trend='c' with differencing"),
])
def test_hostile_files_are_refused_by_name(tmp_path, text, args, words):
    assert_refused(tmp_path, text, ["model=arima", *(args or ["order=1:0:0"])], words)


def test_usage_errors(tmp_path):
    data = tmp_path / "s.csv"
    _long_csv(data)
    r = samebits("forecast", "--data", str(data), "--h", "2", "--alpha", "1.5", "model=arima")
    assert r.returncode == 2 and "--alpha" in r.stderr
    r = samebits("train", "--model", "arima", "--data", str(data))
    assert r.returncode == 2 and "--out are required" in r.stderr


@pytest.mark.parametrize("leg", list(LEGS))
def test_model_file_bytes_are_one_on_every_leg(leg, tmp_path):
    """The batch's model file from x86-64, aarch64 and s390x (big-endian; under
    qemu-user), at 3 threads: the same bytes as the native one-thread file."""
    data = tmp_path / "s.csv"
    _long_csv(data)
    assert_leg_model_bytes(leg, tmp_path, data, "arima", ["order=1:1:1", "seasonal_order=0:1:1:7"])
