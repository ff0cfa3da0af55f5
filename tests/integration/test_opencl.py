"""The OpenCL leg of profile-core on PoCL (docs/opencl.md).

build/opencl/profile_core_cl (built by `sh tools/opencl-check.sh --build-only`)
runs every stage of profile-core on an OpenCL device from the same headers as
the CPU; its card must equal the reference card, and each separating arm
(extra build options that break the profile) must give a card that differs.

`make test` installs PoCL, so a missing OpenCL platform or a missing build is a
FAILURE here, never a skip. -cl-mad-enable is not an arm on PoCL: its clang
ignores the option on x86 and the FP_CONTRACT pragma alone decides contraction,
so the `contract` arm flips that pragma instead (docs/opencl.md)."""
import json
import os
import subprocess

import pytest

from conftest import ROOT, reference_card, samebits

EXE = ROOT / "build" / "opencl" / "profile_core_cl"

# arm name -> extra build options; each card must differ from the reference.
ARMS = {
    "fast-relaxed-math": "-cl-fast-relaxed-math",
    "contract": "-DSB_SABOTAGE_CONTRACT",
}


def _run(args, timeout=120):
    """Run the OpenCL leg's program with a PoCL cache under build/."""
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: run 'sh tools/opencl-check.sh --build-only' "
                    "(make test does)")
    env = dict(os.environ)
    env.setdefault("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))
    return subprocess.run([str(EXE)] + list(args), capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)


def _require_platform():
    """Fail (not skip) with a clear message unless an OpenCL device is present."""
    r = _run(["--list"])
    if r.returncode == 5:
        pytest.fail("no OpenCL platform or device: install Debian's pocl-opencl-icd "
                    "(make test installs it); profile_core_cl said: " + r.stderr.strip())
    assert r.returncode == 0 and r.stdout.strip(), r.stdout + r.stderr


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The committed reference card, or, while there is none, a CPU card."""
    ref = reference_card("profile-core")
    if ref.exists():
        return ref
    cpu = tmp_path_factory.mktemp("opencl") / "cpu-reference.card"
    r = samebits("fixture", "run", "profile-core", "--threads", "1", "--out", str(cpu))
    assert r.returncode == 0, r.stderr
    return cpu


def _card(tmp_path, name, extra=""):
    card = tmp_path / f"profile-core-opencl-{name}.card"
    args = ["--out", str(card)]
    if extra:
        args += ["--build-options-extra", extra]
    r = _run(args)
    assert r.returncode == 0, f"profile_core_cl exit {r.returncode}:\n{r.stderr}"
    return card


def test_opencl_platform_present():
    _require_platform()


def test_opencl_leg_matches_reference(reference, tmp_path):
    _require_platform()
    card = _card(tmp_path, "leg")
    d = samebits("card", "diff", str(reference), str(card))
    assert d.returncode == 0 and d.stdout.strip() == "identical", d.stdout + d.stderr
    header = json.loads(card.read_text().splitlines()[0])
    assert header["meta.fixture"] == "profile-core"
    assert header["meta.arch"].startswith("opencl:"), header
    assert "-cl-fp32-correctly-rounded-divide-sqrt" in header["meta.opencl.build_options"]
    assert "meta.opencl.arm" not in header


@pytest.mark.parametrize("arm", list(ARMS))
def test_opencl_arm_differs(arm, reference, tmp_path):
    _require_platform()
    card = _card(tmp_path, arm, ARMS[arm])
    d = samebits("card", "diff", str(reference), str(card))
    assert d.returncode in (0, 1), d.stderr
    assert d.returncode == 1, (
        f"arm {arm} ({ARMS[arm]}) produced the reference card: it changed no bit, "
        "so it separates nothing (docs/opencl.md, 'Arms')")
    header = json.loads(card.read_text().splitlines()[0])
    assert header["meta.opencl.arm"] == ARMS[arm]
    print(arm, ":", d.stdout.splitlines()[0])


def test_opencl_bad_device_index_is_named():
    _require_platform()
    r = _run(["--device", "999", "--out", os.devnull])
    assert r.returncode == 5, r.stderr
    assert "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr


def test_opencl_build_failure_prints_log(tmp_path):
    _require_platform()
    r = _run(["--out", str(tmp_path / "x.card"), "--build-options-extra", "-DSB_REDUCE_BLOCK=128"])
    assert r.returncode == 3, r.stderr
    assert "build log" in r.stderr and "SB_REDUCE_BLOCK is fixed by the numeric profile" in r.stderr
    assert not (tmp_path / "x.card").exists()
