"""Support vector machines on the OpenCL device (device=opencl) on PoCL: the
SMO's kernel rows, the cross-validation's held-out sums and the decision
values run on the device (kv_row, kv_rows, kv_dec: src/kernels/svm.h's
sequence in IEEE doubles, the host's) and give the CPU's bytes. `make test`
installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform is a
FAILURE here, never a skip.

- the svm-fit fixture identical to its reference card on PoCL (every stage:
  each pair's iterations and dual variables, the intercepts, the
  cross-validated decision values, probA/probB, the model bytes, decision
  values, predictions, probabilities);
- per operation: sb_unit test_svm_devices_give_the_cpu_bits (ten cases,
  decision values in chunks too; the opencl line is required here);
- the arms that reach the device's values part svm-fit at the first pair's
  dual variables: svm-kernel-f32 (the kernel's sum in float32) and vendor-exp
  (OpenCL's built-in exp for rbf); contract parts it at the first decision
  values (the decision sum's products fused into its additions);
  mad-enable is recorded inert on PoCL (so that a change shows here)."""
import os
import re

import pytest

from conftest import ROOT, run_bin, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def verify(env=None):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", "svm-fit", "device=opencl", env=e)


def test_svm_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert re.search(r"^  svm-fit +identical", r.stdout, re.M), r.stdout


def test_device_values_per_operation_on_opencl():
    e = dict(ENV, SAMEBITS_OPENCL_ARM="", SAMEBITS_PARITY_REQUIRE="opencl")
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = run_bin("x86_64", "sb_unit", ["test_svm_devices_give_the_cpu_bits"], env=e)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "svm on opencl: 10 of 10 cases identical to the cpu" in out, out[-3000:]


@pytest.mark.parametrize("arm,stage", [("svm-kernel-f32", "svm.pair0.alpha"), ("vendor-exp", "svm.pair0.alpha"),
                                       ("contract", "blobs3-rbf.decision")])
def test_arms_reaching_the_values_are_caught(arm, stage):
    r = verify({"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  svm-fit "))
    assert "DIFFERS" in line and stage in line, line
    if arm == "svm-kernel-f32":  # and the per-operation comparison sees it too
        e = dict(ENV, SAMEBITS_OPENCL_ARM=arm)
        u = run_bin("x86_64", "sb_unit", ["test_svm_devices_give_the_cpu_bits"], env=e)
        assert u.returncode != 0 and "differs" in u.stdout, u.stdout[-2000:]


def test_mad_enable_is_inert_on_pocl():
    r = verify({"SAMEBITS_OPENCL_ARM": "mad-enable"})
    assert "SEPARATING ARM 'mad-enable'" in r.stderr
    assert r.returncode == 0 and "verify: PASS" in r.stdout, (
        "mad-enable now changes svm-fit's bits on PoCL: update docs/svm.md and make this a separating arm\n" +
        r.stdout)
