"""tools/device-h200.sh's arm bookkeeping, without a GPU: its arm_record
function (extracted from the script, run by bash on canned `samebits verify`
output) must count an arm caught only when at least one fixture parted from
its reference card (a refusal or an error is no catch), and write one arms.tsv
line per fixture with the first differing stage; the support matrix must show
one row per arm, caught when any of its fixtures parted."""
import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "tools" / "device-h200.sh"

VERIFY_PARTED = """samebits verify: profile sb-identical-v9, arch x86_64, device cuda, threads 16
  profile-core    DIFFERS: differ at stage 4: math.input (digest)
  a: 00
  b: 11
  logit-train     REFUSED SB_ERR_BACKEND_UNAVAILABLE: fixture 'logit-train' runs on the cpu only
  gbdt-regression identical (57 stages)
  forest-rf-entropy DIFFERS: differ at stage 3: forest.model_bytes (digest)
4 fixtures: 1 identical, 3 not identical (2 differ, 1 refused, 0 errors)
verify: FAIL
"""

VERIFY_NOT_PARTED = """samebits verify: profile sb-identical-v9, arch x86_64, device opencl, threads 16
  logit-train     REFUSED SB_ERR_BACKEND_UNAVAILABLE: fixture 'logit-train' runs on the cpu only
  gbdt-regression ERROR SB_ERR_INTERNAL: opencl: building the kernels failed
  gbdt-binary     identical (67 stages)
3 fixtures: 1 identical, 2 not identical (0 differ, 1 refused, 1 errors)
verify: FAIL
"""


def _arm_record(tmp_path, leg, arm, text):
    """Runs the script's arm_record on text; (summary.txt, arms.tsv, FAIL)."""
    src = SCRIPT.read_text()
    m = re.search(r"^printf 'leg.*?^}\n", src, re.M | re.S)
    assert m, "tools/device-h200.sh has no arm_record block"
    (tmp_path / "verify.txt").write_text(text)
    prog = ("set -u\nEV=$1; FAIL=0\nsummary() { echo \"$*\" >>\"$EV/summary.txt\"; }\n" + m.group(0)
            + f"arm_record {leg} {arm} \"$EV/verify.txt\"\necho \"FAIL=$FAIL\"\n")
    r = subprocess.run(["bash", "-c", prog, "arm", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return (tmp_path / "summary.txt").read_text(), (tmp_path / "arms.tsv").read_text(), r.stdout.strip()


def test_the_script_parses():
    r = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_an_arm_is_caught_when_a_fixture_parts(tmp_path):
    summary, tsv, fail = _arm_record(tmp_path, "cuda", "fmad", VERIFY_PARTED)
    assert summary.startswith("cuda arm fmad: caught: 2 fixtures part (profile-core at math.input, "
                              "forest-rf-entropy at forest.model_bytes); 1 identical, 1 refused, 0 errors"), summary
    assert fail == "FAIL=0"
    rows = [ln.split("\t") for ln in tsv.splitlines()]
    assert rows[0] == ["leg", "arm", "fixture", "verdict", "stage"]
    assert ["cuda", "fmad", "forest-rf-entropy", "parted", "forest.model_bytes"] in rows
    assert ["cuda", "fmad", "logit-train", "refused", "-"] in rows
    assert ["cuda", "fmad", "gbdt-regression", "identical", "-"] in rows
    assert len(rows) == 5  # the digest lines are no fixtures


def test_refusals_and_errors_are_no_catch(tmp_path):
    summary, tsv, fail = _arm_record(tmp_path, "opencl", "mad-enable", VERIFY_NOT_PARTED)
    assert summary.startswith("opencl arm mad-enable: NOT CAUGHT: no fixture parts; 1 identical, 1 refused, 1 errors")
    assert fail == "FAIL=1"
    assert "opencl\tmad-enable\tgbdt-regression\terror\t-" in tsv


def test_the_matrix_has_one_row_per_arm_caught_by_any_fixture():
    sys.path.insert(0, str(ROOT / "tools"))
    import support_matrix
    arms = [{"arm": "cuda fmad", "caught": False, "fixture": "gbdt-regression", "stage": None},
            {"arm": "cuda fmad", "caught": True, "fixture": "forest-rf-entropy", "stage": "forest.model_bytes"},
            {"arm": "opencl mad-enable", "caught": False, "fixture": "gbdt-regression", "stage": None}]
    rows = support_matrix.arm_rows(arms)
    assert [n for n, _ in rows] == ["cuda fmad", "opencl mad-enable"]
    assert [len(e) for _, e in rows] == [2, 1]
    assert support_matrix.arm_cells(rows[0][1]) == ("yes", "forest-rf-entropy: forest.model_bytes")
    assert support_matrix.arm_cells(rows[1][1]) == ("**no**", "-")
    assert support_matrix.arm_cells([{"arm": "x", "caught": None}]) == ("not run", "-")


def _control(tmp_path, text):
    """Runs the script's control loop (OCL_CONTROLS) with `verify` replaced by
    canned output; (summary.txt, FAIL)."""
    src = SCRIPT.read_text()
    m = re.search(r"^for a in \$OCL_CONTROLS; do\n.*?^done\n", src, re.M | re.S)
    assert m, "tools/device-h200.sh has no OCL_CONTROLS loop"
    (tmp_path / "canned.txt").write_text(text)
    prog = ("set -u\nEV=$1; FAIL=0; FAMARG=''; OCL_CONTROLS=mad-enable\n"
            "summary() { echo \"$*\" >>\"$EV/summary.txt\"; }\nS() { cat \"$EV/canned.txt\"; }\nS=S\n"
            "timeout() { shift; \"$@\"; }\n" + m.group(0) + "echo \"FAIL=$FAIL\"\n")
    r = subprocess.run(["bash", "-c", prog, "ctl", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return (tmp_path / "summary.txt").read_text(), r.stdout.strip()


def test_mad_enable_is_a_control_that_must_change_no_bit(tmp_path):
    """-cl-mad-enable is not a separating arm (the FP_CONTRACT OFF pragma
    decides contraction; the pragma turned ON is the `contract` arm): it runs
    as a control, which holds only when no fixture parts, and fails the run
    when one does."""
    src = SCRIPT.read_text()
    arms = re.search(r'^OCL_ARMS_ALL="([^"]*)"', src, re.M).group(1).split()
    assert "mad-enable" not in arms and "contract" in arms
    assert re.search(r'^OCL_CONTROLS="mad-enable"', src, re.M)
    held = VERIFY_NOT_PARTED.replace("ERROR SB_ERR_INTERNAL: opencl: building the kernels failed", "identical (9 stages)")
    summary, fail = _control(tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path, held)
    assert summary.startswith("opencl control mad-enable: holds: 2 fixtures identical, 1 refused"), summary
    assert fail == "FAIL=0"
    (tmp_path / "b").mkdir()
    summary, fail = _control(tmp_path / "b", VERIFY_PARTED)
    assert summary.startswith("opencl control mad-enable: BROKEN: 2 fixtures differ or fail"), summary
    assert fail == "FAIL=1"
    (tmp_path / "c").mkdir()
    summary, fail = _control(tmp_path / "c", VERIFY_NOT_PARTED)  # an error is no pass either
    assert "BROKEN" in summary and fail == "FAIL=1"
