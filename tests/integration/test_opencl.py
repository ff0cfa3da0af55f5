"""The OpenCL leg of profile-core on PoCL (docs/opencl.md).

`samebits fixture run profile-core device=opencl` runs every stage of
profile-core on an OpenCL device through the device layer: the entry kernels of
src/kernels/entry/core_entry.h (the source CUDA compiles too) over the same
headers as the CPU; its card must equal the reference card, and each separating
arm (SAMEBITS_OPENCL_ARM: the program built broken on purpose) must give a card
that differs.

`make test` installs PoCL, so a missing OpenCL platform is a FAILURE here, never
a skip. -cl-mad-enable is not an arm on PoCL: its clang ignores the option on
x86 and the FP_CONTRACT pragma alone decides contraction, so the `contract` arm
flips that pragma instead (docs/opencl.md)."""
import json
import os

import pytest

from conftest import ROOT, reference_card, samebits

# arm name -> the stage it must first change (a different first stage would
# mean the arm reached a rule it was not written for)
ARMS = {
    "fast-relaxed-math": None,
    "contract": "math.input",
    "vendor-exp": "math.exp",
}


def _env(arm=None):
    env = dict(os.environ)
    env.setdefault("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))
    env.pop("SAMEBITS_OPENCL_ARM", None)
    if arm:
        env["SAMEBITS_OPENCL_ARM"] = arm
    return env


def _card(tmp_path, name, arm=None):
    card = tmp_path / f"profile-core-opencl-{name}.card"
    r = samebits("fixture", "run", "profile-core", "device=opencl", "--out", str(card), env=_env(arm))
    if "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr:
        pytest.fail("no usable OpenCL device: install Debian's pocl-opencl-icd (make test installs it): " + r.stderr)
    assert r.returncode == 0, f"fixture run exit {r.returncode}:\n{r.stderr}"
    return card


def test_opencl_leg_matches_reference(tmp_path):
    card = _card(tmp_path, "leg")
    d = samebits("card", "diff", str(reference_card("profile-core")), str(card))
    assert d.returncode == 0 and d.stdout.strip() == "identical", d.stdout + d.stderr
    header = json.loads(card.read_text().splitlines()[0])
    assert header["meta.fixture"] == "profile-core"
    assert header["meta.device"].startswith("opencl:"), header


@pytest.mark.parametrize("arm", list(ARMS))
def test_opencl_arm_differs(arm, tmp_path):
    card = _card(tmp_path, arm, arm)
    d = samebits("card", "diff", str(reference_card("profile-core")), str(card))
    assert d.returncode == 1, (
        f"arm {arm} produced the reference card: it changed no bit, so it separates nothing "
        "(docs/opencl.md, 'Arms')\n" + d.stdout + d.stderr)
    if ARMS[arm]:
        assert f": {ARMS[arm]} (" in d.stdout.splitlines()[0], d.stdout
    print(arm, ":", d.stdout.splitlines()[0])


def test_opencl_unknown_arm_is_refused_by_name(tmp_path):
    r = samebits("fixture", "run", "profile-core", "device=opencl", "--out", str(tmp_path / "x.card"),
                 env=_env("no-such-arm"))
    assert r.returncode == 2 and "SB_ERR_INVALID_ARGUMENT" in r.stderr and "vendor-exp" in r.stderr, r.stderr
    assert not (tmp_path / "x.card").exists()


def test_opencl_bad_device_is_named(tmp_path):
    env = _env()
    env["SAMEBITS_OPENCL_DEVICE"] = "999"
    r = samebits("fixture", "run", "profile-core", "device=opencl", "--out", str(tmp_path / "x.card"), env=env)
    assert r.returncode == 2 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr
    assert not (tmp_path / "x.card").exists()


def test_profile_core_device_names_go_through_the_one_parser(tmp_path):
    r = samebits("fixture", "run", "profile-core", "device=tpu", "--out", str(tmp_path / "x.card"))
    assert r.returncode == 2 and "SB_ERR_INVALID_ARGUMENT" in r.stderr and "unknown device 'tpu'" in r.stderr, r.stderr
    r = samebits("fixture", "run", "profile-core", "device=cpu-batched", "--out", str(tmp_path / "y.card"))
    assert r.returncode == 2 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr
