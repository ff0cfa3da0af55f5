"""Exponential smoothing on the OpenCL device (device=opencl) on PoCL: the
time-series program (kernels/entry/ts_entry.h, float64, one work-item a
series running kernels/ets.h's fit, the host's own function) must give the
ets-fit fixture's reference card, and the separating arm ets-sse-order (the
SSE added in pairs, rule 4) must part it on the device too: as the OpenCL arm
(SAMEBITS_OPENCL_ARM=ets-sse-order, the kernels alone broken) and in the CPU
arm's build (make SABOTAGE=ets-sse-order, whose library builds its device
program with the same arm).

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip."""
import os

import pytest

from conftest import ROOT, run_bin, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache")),
       "SAMEBITS_OPENCL_ARM": ""}


def verify(env=None, sabotage=None):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return run_bin("x86_64", "samebits", ["verify", "ets-fit", "device=opencl"], sabotage=sabotage, env=e)


def test_ets_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout, r.stdout
    line = next(l for l in r.stdout.splitlines() if l.startswith("  ets-fit "))
    assert "identical" in line, line


def test_opencl_arm_ets_sse_order_parts_ets_fit():
    r = verify(env={"SAMEBITS_OPENCL_ARM": "ets-sse-order"})
    assert "SEPARATING ARM 'ets-sse-order'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  ets-fit "))
    assert "DIFFERS" in line and "ses.sse" in line, line


@pytest.mark.parametrize("threads", ["1", "2"])
def test_cpu_arm_build_parts_ets_fit_on_opencl_too(threads):
    """The CPU arm's build (make SABOTAGE=ets-sse-order) carries the arm into
    its device program: on PoCL it parts ets-fit where the real build is
    identical (test_ets_fit_identical_on_opencl is the control)."""
    e = dict(ENV)
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = run_bin("x86_64", "samebits", ["verify", "ets-fit", "device=opencl", "--threads", threads],
                sabotage="ets-sse-order", env=e)
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  ets-fit "))
    assert "DIFFERS" in line and "ses.sse" in line, line


def test_cpu_only_wording_is_gone():
    """ets-fit runs on every device now: a device this build lacks is refused
    by the device layer's words (the one wording every family prints)."""
    r = samebits("verify", "ets-fit", "device=cuda")
    if "this build has no CUDA backend" not in r.stdout + r.stderr:
        pytest.skip("a CUDA build: device=cuda runs")
    assert "cpu only" not in r.stdout + r.stderr


def test_absent_device_and_platform_are_refused_by_name(tmp_path):
    r = verify(env={"SAMEBITS_OPENCL_DEVICE": "7:3"})
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout and "names no device" in r.stdout, \
        r.stdout
    # ocl-icd reads the ICDs from OCL_ICD_VENDORS: an empty folder is a machine without OpenCL
    r = verify(env={"OCL_ICD_VENDORS": str(tmp_path)})
    assert r.returncode == 1 and "REFUSED" in r.stdout and "no OpenCL platform" in r.stdout, r.stdout


def test_launch_size_knob_is_a_schedule_input_and_refused_by_name():
    """SAMEBITS_OPENCL_TS_CHUNK caps the series a device launch takes (a
    schedule input, for measuring a launch's size against its caches): ets-fit
    and arima-fit stay identical with one series a launch, and a value that is
    not a positive integer is refused by name."""
    e = dict(ENV)
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    e["SAMEBITS_OPENCL_TS_CHUNK"] = "1"
    r = run_bin("x86_64", "samebits", ["verify", "ets-fit", "arima-fit", "device=opencl"], env=e)
    assert r.returncode == 0 and "verify: PASS" in r.stdout, r.stdout + r.stderr
    e["SAMEBITS_OPENCL_TS_CHUNK"] = "0"
    r = run_bin("x86_64", "samebits", ["verify", "ets-fit", "device=opencl"], env=e)
    assert r.returncode == 1 and "SAMEBITS_OPENCL_TS_CHUNK='0': not a positive integer" in r.stdout, r.stdout
