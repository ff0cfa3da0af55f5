"""Random forests, Extra Trees, weighted forests and the isolation forest on
the OpenCL forest device (device=opencl) on PoCL.

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip. Every forest fixture (the six of `--family
forest`: unweighted, weighted with balanced_subsample, isolation) must be
identical to its reference card through the OpenCL kernels (fdev_kernels.cl),
at 1 and 3 threads, with histograms in local memory or by global atomics and
with nodes in chunks of any size; the float-atomic arm (squared-error sums
added as floats, in arrival order) must make both regression fixtures differ,
weighted or not. The model bytes against device=cpu on many configurations
are tests/python/test_py_forest_devices.py's (opencl is one of its devices
where the library has it)."""
import os

import pytest

from conftest import FIXTURES, ROOT, samebits

TREES = [f for f in FIXTURES if f.startswith("forest-")]
N = len(TREES)

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def verify(*args, env=None):
    """`samebits verify ARGS device=opencl` with a PoCL cache under build/."""
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", *args, "device=opencl", env=e)


def test_the_fixtures_are_there():
    assert TREES == ["forest-rf-classes", "forest-rf-entropy", "forest-et-regression", "forest-isolation",
                     "forest-rf-weighted", "forest-et-weighted", "forest-isolation-weighted", "forest-warm-start"]


@pytest.mark.parametrize("threads", [1, 3])
def test_every_forest_fixture_identical_on_opencl(threads):
    r = verify("--threads", str(threads), *TREES)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout.splitlines()[0] and "verify: PASS" in r.stdout
    assert f"{N} fixtures: {N} identical" in r.stdout, r.stdout


def test_the_family_is_all_six_and_nothing_of_it_is_refused():
    # tools/device-h200.sh verifies `--family forest` on the NVIDIA driver's
    # OpenCL. Weighted and isolation forests were refused by name until the
    # device had their kernels; what remains refused is a missing platform or
    # device (test_no_platform_or_device_is_refused_by_name).
    r = verify("--family", "forest")
    assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout, r.stdout + r.stderr
    assert "REFUSED" not in r.stdout and "0 refused" in r.stdout, r.stdout


@pytest.mark.parametrize("hist", ["global", "local"])
def test_histogram_path_and_chunks_change_no_bit(hist):
    # SAMEBITS_OPENCL_HIST=global: every histogram by 64-bit global atomics;
    # SAMEBITS_OPENCL_FOREST_CHUNK=2: at most 2 nodes a launch
    r = verify(*TREES, env={"SAMEBITS_OPENCL_HIST": hist, "SAMEBITS_OPENCL_FOREST_CHUNK": "2"})
    assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("bad", ["0", "-3", "two", "2x", "99999999999999999999"])
def test_a_bad_chunk_is_refused_by_name(bad):
    # SAMEBITS_<BACKEND>_FOREST_CHUNK is a count (device.c's sb_device_env_count):
    # anything but a positive integer is refused when the device opens, never
    # silently the default
    r = verify("forest-rf-classes", env={"SAMEBITS_OPENCL_FOREST_CHUNK": bad})
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"SAMEBITS_OPENCL_FOREST_CHUNK='{bad}': not a positive integer (nodes a launch)" in r.stdout + r.stderr, \
        r.stdout + r.stderr


@pytest.mark.parametrize("hist", ["global", "local"])
def test_float_atomic_arm_makes_the_regression_fixture_differ(hist):
    r = verify(*TREES, env={"SAMEBITS_OPENCL_ARM": "float-atomic", "SAMEBITS_OPENCL_HIST": hist})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "SEPARATING ARM 'float-atomic'" in r.stderr
    lines = {l.split()[0]: l for l in r.stdout.splitlines() if l.startswith("  forest-")}
    # both regression fixtures: the unweighted and the weighted sums of y
    assert "DIFFERS" in lines["forest-et-regression"] and "DIFFERS" in lines["forest-et-weighted"], r.stdout
    # the arm touches the squared-error sums only: the class counts stay
    # exact, and the isolation forest has no sums
    for f in ("forest-rf-classes", "forest-rf-entropy", "forest-rf-weighted", "forest-isolation"):
        assert "identical" in lines[f], r.stdout


# arm -> the fixtures it makes differ on PoCL (measured; docs/forest.md)
ARMS = {
    # FP_CONTRACT ON: PoCL fuses acc + c * c (gini) and acc + c * log(c) (entropy)
    "contract": ["forest-rf-classes", "forest-rf-entropy", "forest-rf-weighted"],
    # -cl-fast-relaxed-math: the entropy's log; balanced_subsample's class
    # weights (a division) on the device
    "fast-relaxed-math": ["forest-rf-entropy", "forest-rf-weighted"],
}


# arm -> the first stage where its fixtures part: contraction reaches the split
# scores in the kernels, never the host's binning (docs/verification.md)
FIRST_STAGE = {"contract": "forest.model_bytes"}


@pytest.mark.parametrize("arm", list(ARMS))
def test_other_arms_make_their_fixtures_differ(arm):
    r = verify(*TREES, env={"SAMEBITS_OPENCL_ARM": arm})
    assert r.returncode == 1 and f"SEPARATING ARM '{arm}'" in r.stderr, r.stdout + r.stderr
    for f in ARMS[arm]:
        assert f"{f} DIFFERS" in r.stdout, r.stdout
        if arm in FIRST_STAGE:
            line = next(l for l in r.stdout.splitlines() if l.startswith(f"  {f} "))
            assert f": {FIRST_STAGE[arm]} (" in line, line


def test_mad_enable_is_inert_on_pocl():
    """-cl-mad-enable changes no bit on PoCL, whose clang ignores it on x86
    (docs/opencl.md): recorded, so that a PoCL that starts honouring it shows."""
    r = verify(*TREES, env={"SAMEBITS_OPENCL_ARM": "mad-enable"})
    assert "SEPARATING ARM 'mad-enable'" in r.stderr
    assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout, (
        "mad-enable now changes bits: update docs/forest.md and move it to ARMS\n" + r.stdout)


def test_no_platform_or_device_is_refused_by_name():
    # no ICD at all (an empty vendors folder), and a device that is not there;
    # the isolation forest opens the same device and is refused alike
    empty = ROOT / "build" / "opencl" / "no-vendors"
    os.makedirs(empty, exist_ok=True)
    r = verify(TREES[0], "forest-isolation", env={"OCL_ICD_VENDORS": str(empty)})
    assert r.returncode == 1 and "2 refused" in r.stdout, r.stdout
    for f in (TREES[0], "forest-isolation"):
        assert f"{f} REFUSED SB_ERR_BACKEND_UNAVAILABLE: device 'opencl': no OpenCL platform" in r.stdout, r.stdout
    r = verify(TREES[0], env={"SAMEBITS_OPENCL_DEVICE": "7:7"})
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout and "names no device" in r.stdout, (
        r.stdout)
    r = verify(TREES[0], env={"SAMEBITS_OPENCL_HIST": "bogus"})
    assert r.returncode == 1 and "ERROR SB_ERR_INVALID_ARGUMENT" in r.stdout, r.stdout
