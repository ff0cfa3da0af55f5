"""Gradient boosting on the OpenCL tree device (device=opencl) on PoCL.

`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL platform
is a FAILURE here, never a skip. Every gbdt fixture must be identical to its
reference card through the OpenCL kernels; the separating arms
(SAMEBITS_OPENCL_ARM, docs/opencl.md) must make verify fail, or are recorded
as inert where they change no bit on PoCL."""
import os
import re

import pytest

from conftest import FIXTURES, ROOT, samebits

NGBDT = len([f for f in FIXTURES if f.startswith("gbdt-")])

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
    assert "opencl: built" in r.stdout
    line = next((l for l in r.stdout.splitlines() if l.startswith("opencl devices: ")), "")
    assert re.match(r"opencl devices: 0:0 Portable Computing Language / .*: usable \[selected\]", line), (
        "no usable PoCL device (make test installs pocl-opencl-icd): " + line)


def test_every_gbdt_fixture_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert f"{NGBDT} fixtures: {NGBDT} identical" in r.stdout, r.stdout


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
    PoCL but one: the gradient boosting path has a multiply feeding an add only
    in the Tweedie gradient (kernels/gbdt.h, sb_k_grad_tweedie), which PoCL
    fuses under FP_CONTRACT ON, so gbdt-objectives (its tweedie run) parts at
    tree0.hess_q; -cl-mad-enable stays inert. This pins that documented claim;
    the contraction arm that also separates is profile-core's
    (tests/integration/test_opencl.py)."""
    r = verify(env={"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM" in r.stderr
    if arm == "contract":
        differ = [l for l in r.stdout.splitlines() if "DIFFERS" in l]
        assert r.returncode == 1 and f"{NGBDT} fixtures: {NGBDT - 1} identical" in r.stdout, r.stdout
        assert len(differ) == 1 and "gbdt-objectives" in differ[0] and "tree0.hess_q" in differ[0], differ
        return
    assert r.returncode == 0 and f"{NGBDT} fixtures: {NGBDT} identical" in r.stdout, (
        f"arm {arm} now changes bits: update docs/opencl.md and move it to SEPARATING\n" + r.stdout)


# The kernels' tie rules (DESIGN.md rule 7) broken on the device as the CPU
# arms of those names break them: arm -> (fixture, the stage where it parts).
TIE_ARMS = {
    "ties": ("gbdt-regression", "tree0.splits"),
    "forest-ties": ("forest-rf-classes", "forest.train_raw"),
    "topk-ties": ("linalg-reduce", "reduce.d1.argmin_cols"),
    "nan-side": ("gbdt-missing-shift", "tree0.splits"),
    "kmeans-ties": ("kmeans-fit", "kmeans."),
}


@pytest.mark.parametrize("arm", list(TIE_ARMS))
def test_tie_rule_arms_are_caught_on_the_device(arm):
    """The tie rules live in the kernel bodies (kernels/tree.h, forest.h,
    linalg_reduce.h) that OpenCL compiles: each arm must part its fixture on
    PoCL at the stage that uses the rule, where the real build is identical
    (test_every_gbdt_fixture_identical_on_opencl and the forest and linalg
    OpenCL suites are the control). tools/device-h200.sh runs the same arms on
    NVIDIA's OpenCL and as CUDA variants."""
    fixture, stage = TIE_ARMS[arm]
    r = verify(fixture, env={"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  " + fixture + " "))
    assert "DIFFERS" in line and stage in line, line
    control = verify(fixture)
    assert control.returncode == 0 and "verify: PASS" in control.stdout, control.stdout


def test_agglomerative_order_arm_is_caught_on_the_device():
    """Agglomerative clustering's distance matrix is the device's on a GPU
    (ka_dist, the integer binary64 of kernels/f64.h): summing each pair's
    features in reverse order (the agglo-order arm, a reordered reduction)
    must part agglomerative-fit at its tree on PoCL, where the real build is
    identical to the CPU's card."""
    r = verify("agglomerative-fit", env={"SAMEBITS_OPENCL_ARM": "agglo-order"})
    assert "SEPARATING ARM 'agglo-order'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  agglomerative-fit "))
    assert "DIFFERS" in line and "agglomerative." in line, line
    control = verify("agglomerative-fit")
    assert control.returncode == 0 and "verify: PASS" in control.stdout, control.stdout


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
    assert f"{NGBDT - 1} refused" in r.stdout and "verify: FAIL" in r.stdout  # gbdt-refusals refuses before any device
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


def test_predictions_on_opencl_equal_cpu():
    """sb_model_predict_on(..., "opencl"): every kind, byte for byte the CPU's."""
    np = pytest.importorskip("numpy")
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sbp
    os.environ.setdefault("POCL_CACHE_DIR", ENV["POCL_CACHE_DIR"])
    g = np.random.Generator(np.random.Philox(key=3))
    X = g.standard_normal((1500, 6)).astype(np.float32)
    X[g.random(X.shape) < 0.05] = np.nan
    Xn = np.nan_to_num(X)
    ys = {"regression": (Xn[:, 0] * 2 + Xn[:, 1] ** 2).astype(np.float32),
          "binary": (Xn[:, 0] + Xn[:, 2] > 0).astype(np.float32),
          "multiclass": (np.abs(Xn[:, 1] * 2).astype(np.int64) % 4).astype(np.float32)}
    for task, y in ys.items():
        cls = sbp.GradientBoostingRegressor if task == "regression" else sbp.GradientBoostingClassifier
        a = cls(n_estimators=5, num_leaves=15).fit(X, y)
        b = cls(n_estimators=5, num_leaves=15, device="opencl").fit(X, y)
        assert a.model_bytes() == b.model_bytes(), task
        assert np.asarray(a.predict(X)).tobytes() == np.asarray(b.predict(X)).tobytes(), task
        if task != "regression":
            assert np.asarray(a.predict_proba(X)).tobytes() == np.asarray(b.predict_proba(X)).tobytes(), task


def test_cli_predict_on_opencl_equals_cpu(tmp_path):
    data = tmp_path / "d.csv"
    rows = ["a,b,y"] + [f"{i % 7 - 3},{(i * 37) % 11},{i % 3}" for i in range(600)]
    data.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--objective", "multiclass",
                 "--out", str(model), "n_estimators=4", env=ENV)
    assert r.returncode == 0, r.stderr
    for flag in ("--raw", "--proba", None):
        outs = []
        for dev in ("cpu", "opencl"):
            p = tmp_path / f"p-{dev}.txt"
            args = ["predict", "--model", str(model), "--data", str(data), "--out", str(p), f"device={dev}"]
            r = samebits(*(args + ([flag] if flag else [])), env=ENV)
            assert r.returncode == 0, r.stderr
            outs.append(p.read_bytes())
        assert outs[0] == outs[1], flag
    r = samebits("predict", "--model", str(model), "--data", str(data), "--out", str(tmp_path / "x.txt"),
                 "device=opencl", env=dict(ENV, SAMEBITS_OPENCL_DEVICE="9:9"))
    assert r.returncode == 2 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr
