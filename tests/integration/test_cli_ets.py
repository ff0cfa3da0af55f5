"""Exponential smoothing from the command line (docs/timeseries.md, "Command
line"): train --model ets writes the batch's model file, forecast reads it or
fits a long-format CSV first; the same bits as Python; hostile files refused
by name."""
import struct
import sys

import pytest

from conftest import LEGS, ROOT, samebits
from ts_cli_common import (assert_leg_model_bytes, assert_refused, model_files_at_threads, stamp,
                           train_then_forecast, write_long_csv)


def _long_csv(path, shuffle=True):
    rows = []
    for k, (base, slope) in enumerate(((100.0, 0.5), (40.0, -0.1), (70.0, 0.0))):
        for t in range(60 + 7 * k):
            season = (0.0, 3.0, 5.0, -2.0, -4.0, 1.0, -3.0)[t % 7]
            noise = ((t * 7919 + k * 104729) % 97) / 16.0
            rows.append(("s%d" % k, stamp(t), base + slope * t + season + noise))
    return write_long_csv(path, rows, shuffle)


def test_train_then_forecast_equals_one_shot_forecast(tmp_path):
    data = tmp_path / "s.csv"
    _long_csv(data)
    la, lb = train_then_forecast(tmp_path, data, "ets", ["trend=add", "seasonal=add", "seasonal_periods=7"],
                                 ["--h", "5"], [])
    assert la[0] == "series,step,forecast" and lb[0] == "unique_id,step,forecast"
    assert [x.split(",")[1:] for x in la[1:]] == [x.split(",")[1:] for x in lb[1:]]
    # series in the order their ids first appear (the file is reversed: s2 first)
    assert [x.split(",")[0] for x in lb[1::5]] == ["s2", "s1", "s0"]


def test_cli_forecasts_are_pythons_bits(tmp_path):
    pd = pytest.importorskip("pandas")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import samebits as sbpy
    data = tmp_path / "s.csv"
    _long_csv(data)
    r = samebits("forecast", "--data", str(data), "--h", "4", "trend=add", "damped_trend=true")
    assert r.returncode == 0, r.stderr
    cli = [float(x.split(",")[2]) for x in r.stdout.splitlines()[1:]]
    py = sbpy.ets_forecast(pd.read_csv(data), 4, trend="add", damped_trend=True)["ExponentialSmoothing"].tolist()
    assert [struct.pack("<d", v) for v in cli] == [struct.pack("<d", v) for v in py]


def test_thread_counts_write_one_model(tmp_path):
    data = tmp_path / "s.csv"
    _long_csv(data)
    digests = model_files_at_threads(tmp_path, data, "ets", ["seasonal=mul", "seasonal_periods=7"])
    assert len(digests) == 1


@pytest.mark.parametrize("text,args,words", [
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,\na,4,5\n", [], "value 2 is NaN"),
    ("unique_id,ds,y\na,1,3\na,1,4\na,3,5\n", [], "has the stamp '1' twice"),
    ("id,ds,y\na,1,3\n", [], "no column 'unique_id'"),
    ("unique_id,ds,y\na,1,three\n", [], "is not a number"),
    ('unique_id,ds,y\n"a",1,3\n', [], "quoted field"),
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,5\nb,1,1\n", [], "(unique_id 'b')"),
    ("unique_id,ds,y\na,1,3\na,2,4\na,3,5\na,4,6\n", ["seasonal_periods=2"], "would do nothing"),
])
def test_hostile_files_are_refused_by_name(tmp_path, text, args, words):
    assert_refused(tmp_path, text, args, words)


def test_usage_errors():
    assert "--h H is required" in samebits("forecast", "--model", "x.sbm").stderr
    r = samebits("forecast", "--h", "3")
    assert r.returncode == 2 and "--model MODEL" in r.stderr
    r = samebits("forecast", "--h", "0", "--model", "x")
    assert r.returncode == 2 and "1..1000000" in r.stderr


@pytest.mark.parametrize("leg", list(LEGS))
def test_model_file_bytes_are_one_on_every_leg(leg, tmp_path):
    """The batch's model file from x86-64, aarch64 and s390x (big-endian; under
    qemu-user), at 3 threads: the same bytes as the native one-thread file."""
    data = tmp_path / "s.csv"
    _long_csv(data)
    assert_leg_model_bytes(leg, tmp_path, data, "ets", ["trend=add", "damped_trend=true", "seasonal=mul",
                                                         "seasonal_periods=7"])


def test_device_opencl_writes_the_cpu_model(tmp_path):
    """`train --model ets ... device=opencl` (PoCL here) writes the model file
    of the host's fit, byte for byte; a device this build lacks is refused in
    the device layer's words, as every family's."""
    import os
    data = tmp_path / "s.csv"
    _long_csv(data)
    env = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}
    os.makedirs(env["POCL_CACHE_DIR"], exist_ok=True)
    params = ["trend=add", "damped_trend=true", "seasonal=mul", "seasonal_periods=7"]
    out = {}
    for dev in ("cpu", "opencl"):
        out[dev] = tmp_path / ("%s.sbm" % dev)
        r = samebits("train", "--model", "ets", "--data", str(data), "--out", str(out[dev]), *params,
                     "device=" + dev, env=env)
        assert r.returncode == 0, r.stderr
    assert out["cpu"].read_bytes() == out["opencl"].read_bytes()
    r = samebits("train", "--model", "ets", "--data", str(data), "--out", str(tmp_path / "x.sbm"), "device=tpu")
    assert r.returncode != 0 and "unknown device 'tpu'" in r.stderr, r.stderr
