"""Forests on devices through the CLI: the cpu-batched forest device (the GPU's
level-wise growers and kernel bodies run on the host) passes every forest
fixture (random forests, Extra Trees, the weighted forests and the isolation
forest: the whole --family) at several thread counts and level chunk sizes; the float-hist arm
(float sums in the device's histograms) and the forest-keys arm (the device
keys nodes by the order it makes them) make it fail; CUDA is refused by name
where it is not built, and the CUDA build (compiled by nvcc in
`make cuda-check`) refuses or matches, never differs."""
import subprocess

import pytest

from conftest import FIXTURES, ROOT, run_bin, samebits

FOREST = [f for f in FIXTURES if f.startswith("forest-")]
N = len(FOREST)
REGRESSION = ["forest-et-regression", "forest-et-weighted"]  # the fixtures with sums of y


def test_the_fixtures_are_there():
    assert FOREST == ["forest-rf-classes", "forest-rf-entropy", "forest-et-regression", "forest-isolation",
                      "forest-rf-weighted", "forest-et-weighted", "forest-isolation-weighted", "forest-warm-start"]


@pytest.mark.parametrize("threads", [1, 3])
def test_cpu_batched_passes_every_forest_fixture(threads):
    r = samebits("verify", "--threads", str(threads), "--family", "forest", "device=cpu-batched")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{N} fixtures: {N} identical" in r.stdout and "verify: PASS" in r.stdout
    assert "device cpu-batched" in r.stdout.splitlines()[0]
    for f in FOREST:
        assert f"  {f} identical" in r.stdout, r.stdout


@pytest.mark.parametrize("threads", [1, 3])
def test_level_chunks_change_no_bit(threads):
    # The device growers' host work runs over fixed chunks of a level's nodes
    # (8,192 by default: one chunk on these fixtures); chunks of 3 make every
    # level's compactions cross many chunk offsets. (Shown to fail when a
    # chunk's offset is wrong: chunk 1 writing over chunk 0's entries.)
    r = samebits("verify", "--threads", str(threads), "--family", "forest", "device=cpu-batched",
                 env={"SAMEBITS_FOREST_LEVEL_CHUNK": "3"})
    assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout, r.stdout + r.stderr


def test_float_hist_arm_separates_the_forest_device():
    r = run_bin("x86_64", "samebits", ["verify", *FOREST, "device=cpu-batched"], sabotage="float-hist")
    assert r.returncode == 1, r.stdout + r.stderr
    for f in REGRESSION:
        assert f"{f} DIFFERS" in r.stdout, r.stdout


def test_forest_keys_arm_separates_only_the_device_path():
    # the CPU growers key nodes by path in this build too: they still pass
    r = run_bin("x86_64", "samebits", ["verify", *FOREST], sabotage="forest-keys")
    assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout, r.stdout
    # the device growers key them by creation order: every fixture differs,
    # the weighted and isolation forests included
    r = run_bin("x86_64", "samebits", ["verify", *FOREST, "device=cpu-batched"], sabotage="forest-keys")
    assert r.returncode == 1, r.stdout + r.stderr
    for f in FOREST:
        assert f"{f} DIFFERS" in r.stdout, r.stdout


def test_cuda_refused_by_name_in_a_cpu_build():
    r = samebits("verify", *FOREST, "device=cuda")
    assert r.returncode == 1
    assert f"{N} refused" in r.stdout and "verify: FAIL" in r.stdout
    assert "no CUDA backend" in r.stdout
    assert [l for l in r.stdout.splitlines() if l.startswith("  forest-") and "identical (" in l] == []


def test_cuda_build_compiled_and_never_differs():
    exe = ROOT / "build-cuda" / "samebits"
    if not exe.exists():
        pytest.fail("build-cuda/samebits is missing: `make cuda-check` builds it with nvcc (make CUDA=1)")
    r = subprocess.run([str(exe), "verify", "--family", "forest", "device=cuda"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    # No GPU here: every fixture is refused by name. With a GPU: every fixture identical.
    assert "DIFFERS" not in r.stdout and "ERROR" not in r.stdout, r.stdout
    if "REFUSED" in r.stdout:
        assert r.returncode == 1 and "no usable GPU" in r.stdout
        assert f"{N} refused" in r.stdout, r.stdout
    else:
        assert r.returncode == 0 and f"{N} fixtures: {N} identical" in r.stdout
