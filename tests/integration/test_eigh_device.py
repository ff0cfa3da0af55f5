"""The linear family's wide eigensolver on a device (src/models/linear/lin_eigh.c's
device road: the Householder reduction, Q and the QL rotations as kernels of
src/kernels/linear.h): `sb_unit test_lin_eigh_device_roads_agree` compares the
device road with the host's sb_lin_eigh byte for byte on cpu-batched (the
kernel bodies on the host) and on PoCL's OpenCL; the contract arm (rule 2:
every kernel has multiply-add sites) parts it, mad-enable is inert on PoCL
(its clang ignores the option, docs/opencl.md); the linear-fit fixture (its
pca-wide case of 264 features takes the Householder road) is identical on
PoCL to the reference card.

On the GPU machine: SAMEBITS_PARITY_REQUIRE=cuda,opencl SAMEBITS_EIGH_BIG=1
build-cuda/sb_unit test_lin_eigh_device_roads_agree.

`make test` installs PoCL (tools/ensure-deps.sh): an absent OpenCL device is a
failure here (SAMEBITS_PARITY_REQUIRE=opencl), not a skip."""
import os
import re

from conftest import ROOT, reference_card, run_bin, samebits

TEST = "test_lin_eigh_device_roads_agree"


def _env(**extra):
    env = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache")),
           "SAMEBITS_OPENCL_ARM": "", "SAMEBITS_EIGH_BIG": "", "SAMEBITS_PARITY_REQUIRE": "cpu-batched,opencl"}
    env.update(extra)
    os.makedirs(env["POCL_CACHE_DIR"], exist_ok=True)
    return env


def _unit(**extra):
    r = run_bin("x86_64", "sb_unit", [TEST], env=_env(**extra))
    return r.returncode, r.stdout + r.stderr


def test_device_road_is_the_host_bits_on_cpu_batched_and_opencl():
    rc, out = _unit()
    assert rc == 0, out[-4000:]
    for dev in ("cpu-batched", "opencl"):
        assert re.search(rf"eigh device road {dev}\s*: 12 matrices identical to the host's", out), out[-4000:]
    assert "DIFFERS" not in out, out[-4000:]


def test_contract_arm_parts_the_device_road():
    rc, out = _unit(SAMEBITS_OPENCL_ARM="contract")
    assert "SEPARATING ARM 'contract'" in out, out[-2000:]
    assert rc != 0, out[-4000:]
    # from the smallest matrix on (n = 3: one reflector, Q, a few rotations)
    assert re.search(r"eigh device road opencl\s+n=3 kind=0: DIFFERS", out), out[-4000:]
    # the host's bodies (cpu-batched) are untouched by an OpenCL build option
    assert re.search(r"eigh device road cpu-batched: 12 matrices identical", out), out[-4000:]


def test_mad_enable_is_inert_on_pocl():
    rc, out = _unit(SAMEBITS_OPENCL_ARM="mad-enable")
    assert "SEPARATING ARM 'mad-enable'" in out, out[-2000:]
    assert rc == 0 and re.search(r"eigh device road opencl\s*: 12 matrices identical", out), out[-4000:]


def test_a_missing_backend_is_skipped_never_passed():
    rc, out = _unit(SAMEBITS_OPENCL_DEVICE="99:99", SAMEBITS_PARITY_REQUIRE="")
    assert rc == 0 and re.search(r"eigh device road opencl\s*: skipped \(", out), out[-2000:]
    rc, out = _unit(SAMEBITS_OPENCL_DEVICE="99:99")
    assert rc != 0 and "REQUIRED" in out, out[-2000:]


def test_linear_fit_fixture_is_identical_on_opencl(tmp_path):
    card = tmp_path / "linear-fit-opencl.card"
    env = _env(SAMEBITS_LINEAR_TIMING="1", SAMEBITS_EIGH_ROAD="device")
    r = samebits("fixture", "run", "linear-fit", "device=opencl", "--out", str(card), env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    # its wide PCA case took the device road (off by default: SAMEBITS_EIGH_ROAD=device asks for it)
    assert "eigh: Householder reduction (device)" in r.stderr and "eigh: Q (device)" in r.stderr, r.stderr[-3000:]
    d = samebits("card", "diff", str(reference_card("linear-fit")), str(card))
    assert d.returncode == 0 and d.stdout.strip() == "identical", d.stdout + d.stderr
