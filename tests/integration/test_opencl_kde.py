"""Kernel density on the OpenCL device (device=opencl) on PoCL: the kernel
sums run on the device (kd_sums, src/kernels/kde.h: the host's double
operations in the integer binary64 of src/kernels/f64.h) and give the CPU's
bytes. `make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL
platform is a FAILURE here, never a skip.

- the kde-fit fixture identical to its reference card on PoCL;
- per operation: sb_unit test_kde_device_sums_agree compares kd_sums' sums
  and log densities with the host's, every kernel, weighted and not (the
  opencl line is required here);
- the arms that reach the device's sums part kde-fit at its first kernel
  sums: kde-order (the rows in reversed order) and vendor-exp (the OpenCL
  built-in exp); the contraction arms are inert by construction (the body has
  no float arithmetic to fuse: integers and sb_expf's integer core), recorded
  as inert so that a change that gives them something to fuse shows here;
- predict --device opencl writes the CPU's log densities."""
import os
import re

import pytest

from conftest import ROOT, run_bin, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def verify(env=None):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", "kde-fit", "device=opencl", env=e)


def test_kde_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert re.search(r"^  kde-fit +identical", r.stdout, re.M), r.stdout


def test_device_sums_per_operation_on_opencl():
    e = dict(ENV, SAMEBITS_OPENCL_ARM="")
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = run_bin("x86_64", "sb_unit", ["test_kde_device_sums_agree", "test_kde_kernel_body_gives_the_host_sums"], env=e)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "test_kde_device_sums_agree: opencl: 24 runs, 0 differ" in out, out[-3000:]
    assert "DIFFERS" not in out


@pytest.mark.parametrize("arm", ["kde-order", "vendor-exp"])
def test_arms_reaching_the_sums_are_caught(arm):
    r = verify({"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  kde-fit "))
    assert "DIFFERS" in line and "blobs.gaussian.kernel_sums" in line, line
    # and the per-operation comparison sees it too
    e = dict(ENV, SAMEBITS_OPENCL_ARM=arm)
    u = run_bin("x86_64", "sb_unit", ["test_kde_device_sums_agree"], env=e)
    assert u.returncode != 0 and "DIFFERS" in u.stdout, u.stdout[-2000:]


@pytest.mark.parametrize("arm", ["contract", "mad-enable"])
def test_contraction_arms_are_inert_on_the_sums(arm):
    r = verify({"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 0 and "verify: PASS" in r.stdout, (
        "arm %s now changes kde-fit's bits on PoCL: the body gained float arithmetic; update docs/density.md and "
        "make this a separating arm\n" % arm + r.stdout)


def test_predict_on_opencl_writes_the_cpu_log_densities(tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(8)
    X = rng.normal(size=(200, 6)).astype(np.float32)
    Q = (rng.normal(size=(50, 6)) * 1.3).astype(np.float32)
    np.savetxt(tmp_path / "train.csv", X, delimiter=",", fmt="%.9g")
    np.savetxt(tmp_path / "q.csv", Q, delimiter=",", fmt="%.9g")
    m = tmp_path / "m.sbm"
    r = samebits("train", "--model", "kde", "--data", str(tmp_path / "train.csv"), "--out", str(m), "kernel=cosine",
                 "bandwidth=1.5")
    assert r.returncode == 0, r.stderr
    outs = []
    for dev in ("cpu", "opencl"):
        p = tmp_path / ("p-%s.txt" % dev)
        e = dict(ENV)
        r = samebits("predict", "--model", str(m), "--data", str(tmp_path / "q.csv"), "--out", str(p), "device=" + dev,
                     env=e)
        assert r.returncode == 0, r.stderr
        outs.append(p.read_bytes())
    assert outs[0] == outs[1] and len(outs[0]) > 0
