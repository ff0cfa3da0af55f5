"""Devices through the CLI: the cpu-batched device (the GPU's batched grower and
kernel bodies run on the host) passes every gbdt fixture at several thread
counts; the float-hist arm makes it fail and names the stage; CUDA is refused
by name where it is not built, and the CUDA build (compiled by nvcc in
`make cuda-check`) refuses or matches, never differs."""
import pytest

from conftest import FIXTURES, ROOT, run_bin, samebits

NGBDT = len([f for f in FIXTURES if f.startswith("gbdt-")])  # the ranking fixtures included


@pytest.mark.parametrize("threads", [1, 3])
def test_cpu_batched_passes_every_gbdt_fixture(threads):
    r = samebits("verify", "--family", "gbdt", "--threads", str(threads), "device=cpu-batched")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify: PASS" in r.stdout
    assert f"{NGBDT} fixtures: {NGBDT} identical" in r.stdout


def test_float_hist_arm_separates_the_device_path():
    r = run_bin("x86_64", "samebits", ["verify", "--family", "gbdt", "device=cpu-batched"], sabotage="float-hist")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "DIFFERS" in r.stdout and "root_hist" in r.stdout


def test_cuda_refused_by_name_in_a_cpu_build():
    r = samebits("verify", "--family", "gbdt", "device=cuda")
    assert r.returncode == 1
    assert "REFUSED" in r.stdout and "SB_ERR_BACKEND_UNAVAILABLE" in r.stdout
    # a refusal is never a pass: every fixture refused, none identical
    assert f"{NGBDT} refused" in r.stdout and "verify: FAIL" in r.stdout
    assert [l for l in r.stdout.splitlines() if l.startswith("  gbdt-") and "identical (" in l] == []
    r = samebits("fixture", "run", "gbdt-binary", "device=cuda")
    assert r.returncode == 2 and "no CUDA backend" in r.stderr


def test_cuda_build_compiled_and_never_differs():
    exe = ROOT / "build-cuda" / "samebits"
    if not exe.exists():
        pytest.fail("build-cuda/samebits is missing: `make cuda-check` builds it with nvcc (make CUDA=1)")
    import subprocess
    doc = subprocess.run([str(exe), "doctor"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert "backends: cpu, cpu-batched, cuda" in doc.stdout
    assert "cuda: " in doc.stdout and "-fmad=false" in doc.stdout
    r = subprocess.run([str(exe), "verify", "--family", "gbdt", "device=cuda"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    # No GPU here: every fixture is refused by name. With a GPU: every fixture identical.
    assert "DIFFERS" not in r.stdout and "ERROR" not in r.stdout, r.stdout
    if "REFUSED" in r.stdout:
        assert r.returncode == 1 and "no usable GPU" in r.stdout
    else:
        assert r.returncode == 0 and "verify: PASS" in r.stdout


def test_cuda_build_serves_every_generation_nvcc_13_supports():
    """The profile build carries machine code for compute capability 7.5 (the
    oldest nvcc 13 targets) and each major generation after it, plus PTX for
    newer GPUs, all under the profile's flags; the arms (run on the H200 only)
    are built for sm_90. The built library says which in `doctor`."""
    import subprocess
    flags = subprocess.run(["sh", "tools/cuda-compile-check.sh", "--print-flags", "profile"], cwd=ROOT,
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}).stdout
    for cc in ("75", "80", "90", "100", "110", "120"):
        assert f"arch=compute_{cc},code=sm_{cc}" in flags, (cc, flags)
    assert "code=compute_120" in flags  # PTX: loaded by newer drivers, compiled with .rn roundings
    assert "-fmad=false" in flags and "-arch=" not in flags
    arm = subprocess.run(["sh", "tools/cuda-compile-check.sh", "--print-flags", "fmad"], cwd=ROOT,
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}).stdout
    assert "-arch=sm_90" in arm and "gencode" not in arm and "-fmad=true" in arm
    exe = ROOT / "build-cuda" / "samebits"
    if exe.exists():
        doc = subprocess.run([str(exe), "doctor"], capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert "code=sm_75" in doc.stdout and "code=compute_120" in doc.stdout, doc.stdout
    # An older GPU is refused by name at open, not at the first launch.
    src = (ROOT / "src" / "backends" / "cuda" / "dev_cuda.cu").read_text()
    assert "p.major * 10 + p.minor < 75" in src and "SB_ERR_BACKEND_UNAVAILABLE" in src
