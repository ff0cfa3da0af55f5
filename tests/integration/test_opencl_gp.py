"""Gaussian process regression on the OpenCL device (device=opencl) on PoCL:
the float64 program (kernels/entry/gp_entry.h: the kernel matrix, the
Cholesky factor, L^-1, -K^-1, W and the gradient's row terms on the device in
gp_linalg.c's element order; the optimizer, the solves and the sums on the
host) must give the gp-fit fixture's reference card, every stage of it (each
optimizer start, the trace, theta, L, alpha_, the likelihood, predictions,
sample_y, the gradient at a shifted theta, the model digests, the refusals).
The device's Cholesky is its own code, so it has its own separating arm:
SAMEBITS_OPENCL_ARM=gp-dev-order (the diagonal block's and the panel's
products summed first, then subtracted once) must part it; so must
contraction (SAMEBITS_OPENCL_ARM=contract: its multiply-subtracts fused).

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip."""
import os

import pytest

from conftest import ROOT, run_bin, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache")),
       "SAMEBITS_OPENCL_ARM": ""}


def verify(env=None, threads="2"):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return run_bin("x86_64", "samebits", ["verify", "gp-fit", "device=opencl", "--threads", threads], env=e)


def line_of(r):
    return next(l for l in r.stdout.splitlines() if l.startswith("  gp-fit "))


@pytest.mark.parametrize("threads,gemm", [("1", "tile"), ("3", "tile"), ("2", "element")])
def test_gp_fit_identical_on_opencl(threads, gemm):
    """Both forms of the device's product update (16 x 16 tiles through local
    memory, PoCL's work-groups being 256; one work-item an element, forced by
    SAMEBITS_GP_GEMM=element) give the card."""
    r = verify(env={"SAMEBITS_GP_GEMM": gemm}, threads=threads)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout, r.stdout
    assert "identical" in line_of(r), line_of(r)


@pytest.mark.parametrize("arm,gemm", [("gp-dev-order", "tile"), ("gp-dev-order", "element"), ("contract", "tile")])
def test_opencl_arms_part_gp_fit(arm, gemm):
    r = verify(env={"SAMEBITS_OPENCL_ARM": arm, "SAMEBITS_GP_GEMM": gemm})
    assert "SEPARATING ARM '%s'" % arm in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = line_of(r)
    # the first fitted stage: the first optimizer start's end
    assert "DIFFERS" in line and "rbf.start0" in line, line


def test_family_gp_and_cpu_batched_refused():
    r = samebits("verify", "--family", "gp", "device=cpu-batched")
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout, r.stdout
    assert "runs on the cpu, cuda or opencl" in r.stdout, r.stdout


def test_cpu_only_wording_is_gone():
    """gp-fit runs on every device now: a device this build lacks is refused by
    the device layer's words (the one wording every family prints)."""
    r = samebits("verify", "gp-fit", "device=cuda")
    if "this build has no CUDA backend" not in r.stdout + r.stderr:
        pytest.skip("a CUDA build: device=cuda runs")
    assert "cpu only" not in r.stdout + r.stderr


def test_absent_device_is_refused_by_name():
    r = verify(env={"SAMEBITS_OPENCL_DEVICE": "7:3"})
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout and "names no device" in r.stdout, \
        r.stdout
