"""The command-line interface: commands, exit codes and named errors."""
import os

from conftest import FIXTURES, ROOT, reference_card, samebits


def test_version_and_help():
    r = samebits("version")
    assert r.returncode == 0 and "sb-identical-v1" in r.stdout
    r = samebits("help")
    assert r.returncode == 0 and "card diff" in r.stdout


def test_no_command_and_unknown_command():
    r = samebits()
    assert r.returncode == 2 and "usage" in r.stderr
    r = samebits("frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr


def test_doctor_reports_build_facts():
    r = samebits("doctor", "--threads", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    for key in ("version:", "profile: sb-identical-v1", "cflags:", "-ffp-contract=off",
                "contraction: off", "denormals: kept", "backends: cpu", "threads: 3",
                "numeric mode: identical", "sabotage: none"):
        assert key in r.stdout, key


def test_bad_thread_arguments_are_named_errors():
    r = samebits("doctor", "--threads", "0")
    assert r.returncode == 2 and "--threads" in r.stderr
    r = samebits("doctor", "--threads", "many")
    assert r.returncode == 2 and "'many'" in r.stderr
    r = samebits("doctor", env={"SAMEBITS_NUM_THREADS": "lots"})
    assert r.returncode == 2
    assert "SB_ERR_INVALID_ARGUMENT" in r.stderr and "SAMEBITS_NUM_THREADS" in r.stderr


def test_bad_numeric_mode_names_the_valid_ones():
    r = samebits("doctor", env={"SAMEBITS_NUMERIC_MODE": "quick"})
    assert r.returncode == 2
    assert "identical, deterministic, fast" in r.stderr
    r = samebits("doctor", env={"SAMEBITS_NUMERIC_MODE": "fast"})
    assert "numeric mode: fast" in r.stdout


def test_fixture_run_to_stdout_and_unknown_fixture():
    r = samebits("fixture", "run", "logit-train", "--threads", "2")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith('{"samebits_card":1')
    assert all('"sha256"' in line for line in lines[1:]) and len(lines) > 5
    r = samebits("fixture", "run", "nope")
    assert r.returncode == 2 and "SB_ERR_NOT_FOUND" in r.stderr and "profile-core" in r.stderr
    r = samebits("fixture", "run")
    assert r.returncode == 2
    r = samebits("fixture", "explode")
    assert r.returncode == 2


def test_card_diff_identical_and_parted(tmp_path):
    ref = reference_card("logit-train")
    assert samebits("card", "diff", str(ref), str(ref)).stdout.strip() == "identical"
    # Change one digest in the middle: diff names that stage and both digests.
    lines = ref.read_text().splitlines()
    k = 4
    old = lines[k].split('"sha256":"')[1][:64]
    new = ("0" if old[0] != "0" else "1") + old[1:]
    lines[k] = lines[k].replace(old, new)
    other = tmp_path / "other.card"
    other.write_text("\n".join(lines) + "\n")
    r = samebits("card", "diff", str(ref), str(other))
    assert r.returncode == 1
    tag = lines[k].split('"stage":"')[1].split('"')[0]
    assert f"differ at stage {k - 1}: {tag} (digest)" in r.stdout
    assert old in r.stdout and new in r.stdout


def test_card_diff_bad_inputs(tmp_path):
    ref = reference_card("logit-train")
    r = samebits("card", "diff", str(ref), str(tmp_path / "missing.card"))
    assert r.returncode == 2 and "SB_ERR_IO" in r.stderr
    junk = tmp_path / "junk.card"
    junk.write_bytes(b"\x00\xffnot a card\n")
    r = samebits("card", "diff", str(ref), str(junk))
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr
    r = samebits("card", "diff", str(ref))
    assert r.returncode == 2
    r = samebits("card", "show", str(ref))
    assert r.returncode == 2


def test_fixture_run_leaves_no_partial_file_on_error(tmp_path):
    out = tmp_path / "nodir" / "x.card"
    r = samebits("fixture", "run", "logit-train", "--out", str(out))
    assert r.returncode == 2 and "SB_ERR_IO" in r.stderr
    assert not out.parent.exists()
    # An existing card is replaced whole or not at all.
    good = tmp_path / "good.card"
    assert samebits("fixture", "run", "logit-train", "--out", str(good)).returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["good.card"]


def test_out_of_memory_is_a_named_error_at_every_allocation():
    """Fail the 1st, 2nd, 3rd... allocation of a fixture run in turn: each is a
    named SB_ERR_OUT_OF_MEMORY, never a crash or a card, until n passes the
    last allocation and the run succeeds."""
    failures = 0
    for n in range(1, 200):
        r = samebits("fixture", "run", "logit-train", "--threads", "1",
                     env={"SAMEBITS_FAIL_ALLOC": str(n)})
        if r.returncode == 0:
            break
        assert r.returncode == 2, (n, r.stderr)
        assert "SB_ERR_OUT_OF_MEMORY" in r.stderr, (n, r.stderr)
        assert r.stdout == "", (n, "a partial card was printed")
        failures += 1
    else:
        raise AssertionError("the run never succeeded")
    assert failures >= 10, failures


def test_verify_runs_every_fixture_against_its_reference():
    r = samebits("verify", "--threads", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(FIXTURES)  # the ranking fixtures included
    assert f"{n} fixtures: {n} identical, 0 not identical" in r.stdout and "verify: PASS" in r.stdout
    r = samebits("verify", "gbdt-binary", "nope")
    assert r.returncode == 1
    assert "nope            ERROR SB_ERR_NOT_FOUND" in r.stdout and "1 not identical" in r.stdout
    r = samebits("verify", "--bogus")
    assert r.returncode == 2
