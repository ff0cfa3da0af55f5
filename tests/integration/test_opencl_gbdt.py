"""Gradient boosting on the OpenCL tree device (device=opencl) on PoCL.

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip. Every gbdt fixture must be identical to its
reference card through the OpenCL kernels; the separating arms
(SAMEBITS_OPENCL_ARM, docs/opencl.md) must make verify fail, or are recorded
as inert where they change no bit on PoCL."""
import os
import re

import pytest

from conftest import ROOT, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def verify(*names, env=None):
    """`samebits verify device=opencl` on the named fixtures, or every gbdt one."""
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", *(names or ("--family", "gbdt")), "device=opencl", env=e)


def test_doctor_lists_the_pocl_device():
    r = samebits("doctor", env=ENV)
    assert "backends: cpu, cpu-batched, opencl" in r.stdout, r.stdout
    line = next((l for l in r.stdout.splitlines() if l.startswith("opencl: ")), "")
    assert re.match(r"opencl: 0:0 Portable Computing Language / .*: usable \[selected\]", line), (
        "no usable PoCL device (make test installs pocl-opencl-icd): " + line)


def test_every_gbdt_fixture_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert "8 fixtures: 8 identical" in r.stdout, r.stdout


# arm -> the fixture and stage where PoCL shows it (measured; docs/opencl.md)
SEPARATING = {
    "float-atomic": ("gbdt-regression", "tree0.root_hist"),
    "fast-relaxed-math": ("gbdt-regression", None),
}


@pytest.mark.parametrize("arm", list(SEPARATING))
def test_arm_makes_verify_fail(arm):
    r = verify(env={"SAMEBITS_OPENCL_ARM": arm})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verify: FAIL" in r.stdout and "DIFFERS" in r.stdout, r.stdout
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    fixture, stage = SEPARATING[arm]
    line = next(l for l in r.stdout.splitlines() if l.startswith("  " + fixture + " "))
    assert "DIFFERS" in line, line
    if stage:
        assert stage in line, line
    print(arm, [l.strip() for l in r.stdout.splitlines() if "DIFFERS" in l])


@pytest.mark.parametrize("arm", ["contract", "mad-enable"])
def test_inert_arms_on_pocl_are_recorded_as_inert(arm):
    """FP_CONTRACT ON and -cl-mad-enable change no bit of the gbdt fixtures on
    PoCL: no expression of the gradient boosting path has a multiply feeding an
    add (as with CUDA's -fmad, docs/gbdt-gpu.md). This pins that documented
    claim; the contraction arm that does separate is profile-core's
    (tests/integration/test_opencl.py)."""
    r = verify(env={"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM" in r.stderr
    assert r.returncode == 0 and "8 fixtures: 8 identical" in r.stdout, (
        f"arm {arm} now changes bits: update docs/opencl.md and move it to SEPARATING\n" + r.stdout)


def test_unknown_arm_is_an_error_not_a_run():
    r = verify("gbdt-binary", env={"SAMEBITS_OPENCL_ARM": "nonsense"})
    assert r.returncode == 1 and "gbdt-binary     ERROR SB_ERR_INVALID_ARGUMENT" in r.stdout, r.stdout
    assert "verify: FAIL" in r.stdout


def test_absent_device_is_refused_by_name():
    r = verify(env={"SAMEBITS_OPENCL_DEVICE": "7:3"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "REFUSED" in r.stdout and "SB_ERR_BACKEND_UNAVAILABLE" in r.stdout
    # every fixture that trains is refused; gbdt-refusals trains nothing (its
    # stages are the refusals of bad parameters), so it stays identical
    assert "7 refused" in r.stdout and "verify: FAIL" in r.stdout
    assert [l.split()[0] for l in r.stdout.splitlines() if l.startswith("  gbdt-") and "identical (" in l] == [
        "gbdt-refusals"]
    assert "names no device" in r.stdout


def test_no_platform_is_refused_by_name(tmp_path):
    # ocl-icd reads the ICDs from OCL_ICD_VENDORS: an empty folder is a machine without OpenCL
    r = verify("gbdt-binary", env={"OCL_ICD_VENDORS": str(tmp_path)})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "REFUSED" in r.stdout and "no OpenCL platform" in r.stdout, r.stdout


def test_train_cli_model_equals_cpu(tmp_path):
    import random
    rnd = random.Random(5)
    rows = ["a,b,c,y"]
    for _ in range(2000):
        a, b = rnd.uniform(-3, 3), rnd.choice(["", "1", "2", "3.5"])
        c = rnd.gauss(0, 1)
        rows.append(f"{a:.4f},{b},{c:.4f},{a * 2 + (float(b) if b else 0) + c * c:.4f}")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    digests = []
    for dev in ("cpu", "opencl"):
        for growth in ("leafwise", "depthwise"):
            out = tmp_path / f"{dev}-{growth}.sbm"
            r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(out),
                         f"device={dev}", f"growth={growth}", "n_estimators=8", "max_depth=5", env=ENV)
            assert r.returncode == 0, r.stdout + r.stderr
            digests.append(out.read_bytes())
    assert digests[0] == digests[2] and digests[1] == digests[3]
