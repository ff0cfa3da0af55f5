"""ARIMA on the OpenCL device (device=opencl) on PoCL: the time-series
program's ke_arima_fit (one work-item a series running kernels/arima.h, the
device's own spelling of the host's fit in its order of operations) must give
the arima-fit fixture's reference card, and the separating arm
arima-device-order (the device filter's covariance update added in another
order, rule 4; SAMEBITS_OPENCL_ARM, the kernels alone broken) must part it
on the device while the same run's host stays identical. The CLI's model
file and Python's digests from device=opencl are the host's bytes.

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, run_bin, samebits
from ts_cli_common import arima_long_csv as _long_csv

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache")),
       "SAMEBITS_OPENCL_ARM": ""}


def verify(env=None, device="opencl", threads="1"):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return run_bin("x86_64", "samebits", ["verify", "arima-fit", "device=" + device, "--threads", threads], env=e)


def _line(r):
    return next(l for l in r.stdout.splitlines() if l.startswith("  arima-fit "))


def test_arima_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout, r.stdout
    assert "identical" in _line(r)


def test_opencl_arm_arima_device_order_parts_arima_fit():
    """The arm breaks only the device's code (kernels/arima.h): the device
    run parts from the card, the host's run in the same environment stays
    identical (the control: the arm reaches no host bit)."""
    r = verify(env={"SAMEBITS_OPENCL_ARM": "arima-device-order"})
    assert "SEPARATING ARM 'arima-device-order'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    assert "DIFFERS" in _line(r), _line(r)
    c = verify(env={"SAMEBITS_OPENCL_ARM": "arima-device-order"}, device="cpu", threads="2")
    assert c.returncode == 0 and "identical" in _line(c), c.stdout + c.stderr


def test_absent_device_is_refused_by_name():
    r = verify(env={"SAMEBITS_OPENCL_DEVICE": "7:3"})
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout and "names no device" in r.stdout, \
        r.stdout


def test_cli_device_opencl_writes_the_cpu_model(tmp_path):
    """`train --model arima ... device=opencl` writes the host's model file
    byte for byte; device=tpu is refused in the device layer's words."""
    data = tmp_path / "s.csv"
    _long_csv(data)
    os.makedirs(ENV["POCL_CACHE_DIR"], exist_ok=True)
    out = {}
    for dev in ("cpu", "opencl"):
        out[dev] = tmp_path / ("%s.sbm" % dev)
        r = samebits("train", "--model", "arima", "--data", str(data), "--out", str(out[dev]), "order=1:0:1",
                     "trend=c", "device=" + dev, env={"POCL_CACHE_DIR": ENV["POCL_CACHE_DIR"]})
        assert r.returncode == 0, r.stderr
    assert out["cpu"].read_bytes() == out["opencl"].read_bytes()
    r = samebits("train", "--model", "arima", "--data", str(data), "--out", str(tmp_path / "x.sbm"), "order=1:0:1",
                 "device=tpu")
    assert r.returncode != 0 and "unknown device 'tpu'" in r.stderr, r.stderr


def test_python_device_opencl_gives_the_cpu_digests():
    """samebits.ARIMA(..., device='opencl') fits a batch with the host's
    digest for every series and the same model bytes."""
    code = r'''
import math, samebits
ys = []
for k in range(5):
    v, s = 0.0, []
    for t in range(80 + 13 * k):
        e = ((t * 7919 + k * 104729) % 97) / 16.0 - 3.0
        v = 0.6 * v + e
        s.append(50.0 + 10 * k + v if t % 17 != 5 or k != 2 else float("nan"))
    ys.append(s)
out = {}
for dev in ("cpu", "opencl"):
    m = samebits.ARIMA(order=(1, 0, 1), trend="c", device=dev).fit(ys)
    out[dev] = ([r.digest for r in m.results_], m.model_digest_)
assert out["cpu"] == out["opencl"], out
m = samebits.ARIMA(order=(0, 1, 1), device="opencl").fit(ys[0])
assert m.series_digest_ == samebits.ARIMA(order=(0, 1, 1)).fit(ys[0]).series_digest_
print("ok")
'''
    env = dict(os.environ)
    env.update({"SAMEBITS_LIB": str(ROOT / "build" / "libsamebits.so"), "PYTHONPATH": str(ROOT / "python"),
                "POCL_CACHE_DIR": ENV["POCL_CACHE_DIR"], "SAMEBITS_OPENCL_ARM": ""})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
