"""Backend parity per operation (issue 16): `sb_unit device_ops`
(tests/unit/test_device_ops.c) runs every tree device, forest device and
prediction operation on the reference (cpu-batched; prediction: the host
path) and in lockstep on every other backend present, comparing the bytes of
each result. Here it runs on PoCL on both histogram paths (local memory and
the global fallback, with the device checking its partition's stability
itself), and the separating arms show that it catches what it must: the
float-atomic arm (rule 4) breaks the tree histograms and the forest's
squared-error sums on both paths, the contract arm (rule 2) a forest split
score, fast-relaxed-math the quantized gradients.

On the H200 the same case, from `make CUDA=1`, covers cuda and NVIDIA
OpenCL: SAMEBITS_PARITY_REQUIRE=cuda,opencl build-cuda/sb_unit device_ops.

`make test` installs PoCL (tools/ensure-deps.sh): an absent OpenCL device is
a failure here (SAMEBITS_PARITY_REQUIRE=opencl), not a skip."""
import os
import re

import pytest

from conftest import ROOT, run_bin

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}
KNOBS = ("SAMEBITS_OPENCL_ARM", "SAMEBITS_OPENCL_HIST", "SAMEBITS_OPENCL_TIMING", "SAMEBITS_OPENCL_CHECK_PARTITION",
         "SAMEBITS_OPENCL_FOREST_CHUNK", "SAMEBITS_PARITY_ONLY", "SAMEBITS_PARITY_REQUIRE")

TREE = ("reg-small", "binary-subset", "multiclass-k3", "multiclass-k30", "wide-300f")
FOREST = ("gini-boot", "entropy-extra-40f", "squared-boot", "squared-small", "weighted-squared-extra",
          "weighted-gini", "balanced-subsample", "isolation")
PREDICT = ("regression-raw", "binary-proba", "multiclass-k5-proba", "multiclass-k30-value", "forest-k3-proba",
           "isolation-value", "categorical-raw", "categorical-k4-proba")
TREE_OPS = ("add_tree", "gradients", "quantize", "set_gradients", "hist", "reserve", "best", "partition", "subtract")
FOREST_OPS = ("begin", "sums", "split", "split.lsum", "partition")
LINE = re.compile(r"^  (\S+)\s+(\S+)\s+(\S+)\s*: (identical|DIFFERS)", re.M)


def parity(**env):
    """(return code, {(op, config, backend): 'identical' | 'DIFFERS'}, output) of one run."""
    e = {k: "" for k in KNOBS}  # empty is unset for every knob
    e.update(ENV, SAMEBITS_PARITY_REQUIRE="opencl")
    e.update(env)
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = run_bin("x86_64", "sb_unit", ["device_ops"], env=e)
    out = r.stdout + r.stderr
    return r.returncode, {(m[0], m[1], m[2]): m[3] for m in LINE.findall(r.stdout)}, out


def expect_coverage(res, out):
    """Every operation of every configuration was compared on opencl."""
    for cfg in TREE:
        for op in TREE_OPS:
            assert (op, cfg, "opencl") in res, (op, cfg, out[-3000:])
    for cfg in FOREST:
        ops = ("iso_begin", "iso_split", "partition", "partition.sides") if cfg == "isolation" else FOREST_OPS
        for op in ops:
            assert (op, cfg, "opencl") in res, (op, cfg, out[-3000:])
    for cfg in PREDICT:
        assert ("predict", cfg, "opencl") in res, (cfg, out[-3000:])
    assert "skipped" not in out.split("device_ops summary:")[1].split("opencl")[1].splitlines()[0], out[-2000:]


@pytest.mark.parametrize("path", ["local", "global"])
def test_every_operation_is_identical_on_opencl(path):
    rc, res, out = parity(SAMEBITS_OPENCL_HIST=path, SAMEBITS_OPENCL_CHECK_PARTITION="1",
                          SAMEBITS_OPENCL_TIMING="1")
    assert rc == 0, out[-6000:]
    expect_coverage(res, out)
    assert all(v == "identical" for v in res.values()), out[-6000:]
    assert re.search(r"opencl\s+\d+ op configs identical, 0 differ", out), out[-2000:]
    # the device checked every partition's stability itself
    assert "partition check: " in out and "not the stable partition" not in out, out[-3000:]
    if path == "local":
        # the wide configuration spread its histograms over several feature
        # groups and its partitions over several tiles
        groups = [int(g) for g in re.findall(r"histograms in local memory \(\d+-bit atomics\), (\d+) feature group", out)]
        parts = [int(p) for p in re.findall(r"partition up to (\d+) work-groups a call", out)]
        assert groups and max(groups) >= 2 and max(parts) >= 10, out[-3000:]
    else:
        assert "histograms by global atomics (SAMEBITS_OPENCL_HIST=global)" in out, out[-3000:]


@pytest.mark.parametrize("path", ["local", "global"])
def test_float_atomic_arm_fails_the_histograms(path):
    rc, res, out = parity(SAMEBITS_OPENCL_ARM="float-atomic", SAMEBITS_OPENCL_HIST=path,
                          SAMEBITS_PARITY_ONLY="tree/,forest/squared,forest/weighted-squared")
    assert "SEPARATING ARM 'float-atomic'" in out
    assert rc != 0, out[-4000:]
    # the first difference of every tree configuration is in its histograms
    for cfg in TREE:
        assert res.get(("hist", cfg, "opencl")) == "DIFFERS", (cfg, out[-4000:])
        assert not re.search(rf"^  hist\s+{cfg}\s+opencl : DIFFERS.*\[after", out, re.M), out[-4000:]
        for op in ("gradients", "quantize", "add_tree"):  # no histogram in them: untouched
            assert res.get((op, cfg, "opencl")) == "identical", (op, cfg, out[-4000:])
    # the forest's squared-error sums are float sums under the arm
    for cfg in ("squared-boot", "squared-small", "weighted-squared-extra"):
        assert res.get(("sums", cfg, "opencl")) == "DIFFERS", (cfg, out[-4000:])


@pytest.mark.parametrize("arm, op, configs", [
    ("contract", "split", ("entropy-extra-40f", "weighted-gini", "balanced-subsample")),
    ("fast-relaxed-math", "quantize", ("multiclass-k30", "wide-300f")),
])
def test_float_arms_fail_an_operation(arm, op, configs):
    rc, res, out = parity(SAMEBITS_OPENCL_ARM=arm)
    assert f"SEPARATING ARM '{arm}'" in out
    assert rc != 0, out[-4000:]
    for cfg in configs:
        assert res.get((op, cfg, "opencl")) == "DIFFERS", (arm, op, cfg, out[-4000:])


def test_a_missing_backend_is_skipped_never_passed():
    rc, res, out = parity(SAMEBITS_OPENCL_DEVICE="99:99", SAMEBITS_PARITY_REQUIRE="",
                          SAMEBITS_PARITY_ONLY="tree/reg-small")
    summary = out.split("device_ops summary:")[1]
    assert re.search(r"opencl\s+skipped \(", summary), out[-2000:]
    assert not any(k[2] == "opencl" for k in res), out[-2000:]
    assert rc == 0, out[-2000:]
    rc, _, out = parity(SAMEBITS_OPENCL_DEVICE="99:99", SAMEBITS_PARITY_ONLY="tree/reg-small")
    assert rc != 0 and "REQUIRED" in out, out[-2000:]
