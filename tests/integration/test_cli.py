"""The command-line interface: commands, exit codes and named errors."""
import os
import random
import shutil
import stat
import subprocess
import threading

import pytest

from conftest import FIXTURES, ROOT, build_dir, reference_card, samebits


def test_version_and_help():
    r = samebits("version")
    assert r.returncode == 0 and "sb-identical-v9" in r.stdout
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
    for key in ("version:", "profile: sb-identical-v9", "cflags:", "-ffp-contract=off",
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
    # known names that are not built: refused by name, not run as identical
    for mode in ("fast", "deterministic"):
        r = samebits("doctor", env={"SAMEBITS_NUMERIC_MODE": mode})
        assert r.returncode == 2 and "numeric mode:" not in r.stdout
        assert "SB_ERR_MODE_UNSUPPORTED" in r.stderr
        assert f"SAMEBITS_NUMERIC_MODE={mode} is not built: only identical is" in r.stderr
    r = samebits("doctor", env={"SAMEBITS_NUMERIC_MODE": "identical"})
    assert "numeric mode: identical" in r.stdout


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


# ---- issue 17: threads, keys given twice, output paths, conformance validate -------

BAD_THREADS = ("0", "-1", "abc", "100000")


def _csv(path, n=300, seed=1, header="a,b,c,y"):
    rnd = random.Random(seed)
    lines = [header]
    for _ in range(n):
        a, b, c = rnd.random(), rnd.random(), rnd.random()
        lines.append(f"{a!r},{b!r},{c!r},{int(a + b > 1)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _model(tmp_path, trees=3):
    data = _csv(tmp_path / "d.csv")
    model = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--objective", "binary",
                 "--out", str(model), "--threads", "1", f"n_estimators={trees}", "eval_period=0")
    assert r.returncode == 0, r.stderr
    return data, model


def _one_error(r, *words):
    """Exit 2 and exactly one error line, which names every word: never an
    empty or a second message."""
    errs = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert r.returncode == 2 and len(errs) == 1, r.stderr
    for w in words:
        assert w in errs[0], (w, r.stderr)
    assert not errs[0].rstrip().endswith(":"), r.stderr
    return errs[0]


@pytest.mark.parametrize("value", BAD_THREADS)
def test_invalid_thread_counts_are_refused_by_every_command(tmp_path, value):
    """SAMEBITS_NUM_THREADS and --threads go through one rule (the one doctor
    applies): train, predict, verify and fixture run refuse by name before any
    work; before issue 17 training ran silently on one thread."""
    data, model = _model(tmp_path)
    out = tmp_path / "new.sbm"
    pred = tmp_path / "p.csv"
    card = tmp_path / "f.card"
    commands = {
        "train": ["train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(out),
                  "n_estimators=2"],
        "predict": ["predict", "--model", str(model), "--data", str(data), "--out", str(pred)],
        "verify": ["verify", "profile-core"],
        "fixture run": ["fixture", "run", "profile-core", "--out", str(card)],
        "doctor": ["doctor"],
    }
    for name, args in commands.items():
        r = samebits(*args, env={"SAMEBITS_NUM_THREADS": value})
        _one_error(r, "SB_ERR_INVALID_ARGUMENT", f"SAMEBITS_NUM_THREADS='{value}'")
        r = samebits(*args, "--threads", value)
        _one_error(r, "SB_ERR_INVALID_ARGUMENT", f"--threads='{value}'")
        assert not out.exists() and not pred.exists() and not card.exists(), name
    # an explicit count replaces an invalid variable, as for doctor
    r = samebits("fixture", "run", "profile-core", "--threads", "2", env={"SAMEBITS_NUM_THREADS": value})
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args,words", [
    (["n_estimators=2", "n_estimators=3"], ["'n_estimators' is given twice", "'2' and '3'"]),
    (["n_estimators=2,n_estimators=3"], ["'n_estimators' is given twice"]),
    (["--objective", "binary", "objective=regression"], ["'objective' is given twice"]),
    (["objective=regression", "--objective", "binary"], ["'objective' is given twice"]),
    (["n_estimators=2", "num_trees=3"], ["'n_estimators' and 'num_trees'", "aliases"]),
    (["--objective", "binary", "loss=binary"], ["'objective' and 'loss'", "aliases"]),
    (["eval_period=1", "verbose_eval=2"], ["'eval_period' and 'verbose_eval'"]),
])
def test_a_key_given_twice_is_refused_by_name(tmp_path, args, words):
    data = _csv(tmp_path / "d.csv")
    out = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(out),
                 "--threads", "1", *args)
    _one_error(r, "SB_ERR_INVALID_ARGUMENT", *words)
    assert not out.exists()


def test_log_period_alone_is_not_a_duplicate_of_the_cli_default(tmp_path):
    """The CLI's default eval_period=10 steps aside for any name of the key."""
    data = _csv(tmp_path / "d.csv")
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--threads", "1",
                 "n_estimators=2", "log_period=1")
    assert r.returncode == 0 and "[1]" in r.stderr, r.stderr


def _predict(model, data, out):
    return samebits("predict", "--model", str(model), "--data", str(data), "--out", str(out), "--threads", "1")


def test_predict_out_paths_that_are_not_regular_files(tmp_path):
    """--out -: standard output; a character device is written, never
    replaced; /dev/full is one named error; a FIFO is written where it is."""
    data, model = _model(tmp_path)
    ref = tmp_path / "ref.csv"
    assert _predict(model, data, ref).returncode == 0
    want = ref.read_text()
    r = _predict(model, data, "-")
    assert r.returncode == 0 and r.stdout == want, r.stderr
    r = _predict(model, data, "/dev/stdout")  # a symlink to /proc/self/fd/1, a pipe here
    assert r.returncode == 0 and r.stdout == want, r.stderr
    assert os.path.islink("/dev/stdout")
    r = _predict(model, data, "/dev/null")
    assert r.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    r = _predict(model, data, "/dev/full")
    _one_error(r, "SB_ERR_IO", "cannot write '/dev/full'", "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    r = _predict(model, data, fifo)
    reader.join(timeout=60)
    assert r.returncode == 0 and got == [want], r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "fifo", "m.sbm", "ref.csv"]


def test_out_symlinks_read_only_files_and_folders(tmp_path):
    """A symlink is never replaced: its regular target is (by a rename in the
    target's folder); a dangling link, a read-only file (even for root: no write
    bit) and a folder are refused by name and left as they were."""
    data, model = _model(tmp_path)
    ref = tmp_path / "ref.csv"
    assert _predict(model, data, ref).returncode == 0
    want = ref.read_text()
    other = tmp_path / "elsewhere"
    other.mkdir()
    target = other / "t.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    r = _predict(model, data, link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == want and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in other.iterdir()) == ["t.csv"]  # no temporary left
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere.csv")
    _one_error(_predict(model, data, dangling), "SB_ERR_IO", "symbolic link", "not replaced")
    assert dangling.is_symlink() and not (tmp_path / "nowhere.csv").exists()
    ro = tmp_path / "ro.csv"
    ro.write_text("keep\n")
    ro.chmod(0o444)
    _one_error(_predict(model, data, ro), "SB_ERR_IO", "read-only")
    assert ro.read_text() == "keep\n"
    _one_error(_predict(model, data, other), "SB_ERR_IO", "directory")
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--threads", "1",
                 "n_estimators=2", "--out", str(ro))
    _one_error(r, "SB_ERR_IO", "read-only")
    assert ro.read_text() == "keep\n"


def test_every_writing_command_takes_dash_and_devices(tmp_path):
    """train --out/--card, fixture run --out and fixture inputs --out: '-' is
    standard output, /dev/null is written (not replaced), /dev/full is one
    named error."""
    data = _csv(tmp_path / "d.csv")
    train = ["train", "--model", "gbdt", "--data", str(data), "--label", "y", "--threads", "1",
             "n_estimators=2", "eval_period=0"]
    r = samebits(*train, "--out", str(tmp_path / "m.sbm"))
    model = (tmp_path / "m.sbm").read_bytes()
    r = subprocess.run([str(build_dir("x86_64") / "samebits"), *train, "--out", "-"], capture_output=True)
    assert r.returncode == 0 and r.stdout == model, r.stderr  # the digest line goes to stderr then
    assert b"model digest:" in r.stderr
    r = samebits(*train, "--out", "/dev/null", "--card", "-")
    assert r.returncode == 0 and r.stdout.startswith('{"samebits_card":1'), r.stderr
    _one_error(samebits(*train, "--out", "/dev/full"), "SB_ERR_IO", "'/dev/full'", "No space left")
    _one_error(samebits(*train, "--card", "/dev/full"), "SB_ERR_IO", "'/dev/full'", "No space left")
    r = samebits("fixture", "run", "profile-core", "--out", "-")
    assert r.returncode == 0 and r.stdout.startswith('{"samebits_card":1'), r.stderr
    assert len(r.stdout.splitlines()) == len(reference_card("profile-core").read_text().splitlines())
    _one_error(samebits("fixture", "run", "profile-core", "--out", "/dev/full"), "SB_ERR_IO", "No space left")
    r = samebits("fixture", "inputs", "profile-core", "--out", "-")
    assert r.returncode == 0 and '"meta.kind":"inputs"' in r.stdout.splitlines()[0], r.stdout + r.stderr
    _one_error(samebits("fixture", "inputs", "profile-core", "--out", "/dev/full"), "SB_ERR_IO", "No space left")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_train_card_temporary_names_are_not_nested(tmp_path):
    """The pair's temporaries are M.tmp.PID and C.tmp.PID: a failure while
    saving leaves neither, and never 'C.tmp.PID.tmp.PID'."""
    data = _csv(tmp_path / "d.csv")
    ro = tmp_path / "c.card"
    ro.write_text("old card\n")
    (tmp_path / "m.sbm").write_bytes(b"old model\n")
    ro.chmod(0o444)
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--threads", "1",
                 "n_estimators=2", "--out", str(tmp_path / "m.sbm"), "--card", str(ro))
    _one_error(r, "SB_ERR_IO", "read-only")
    assert (tmp_path / "m.sbm").read_bytes() == b"old model\n" and ro.read_text() == "old card\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.card", "d.csv", "m.sbm"]


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("conf") / "bundle"
    r = samebits("conformance", "export", str(d), "profile-core", "gbdt-binary")
    assert r.returncode == 0, r.stdout + r.stderr
    return d


@pytest.mark.parametrize("plant", ["link-passwd", "link-inside", "fifo", "link-dev-zero", "folder-link",
                                   "device-node", "manifest-link"])
def test_validate_never_follows_links_or_reads_non_files(small_bundle, tmp_path, plant):
    """A symbolic link anywhere below the bundle is damage (whatever it points
    to); a FIFO does not block; /dev/zero is not read; each is named."""
    d = tmp_path / "b"
    shutil.copytree(small_bundle, d, symlinks=True)
    p = d / "gbdt-binary" / "params.txt"
    keep = p.read_bytes()
    p.unlink()
    if plant == "link-passwd":
        p.symlink_to("/etc/passwd")
    elif plant == "link-inside":  # even a link to the very same bytes inside the bundle
        (d / "gbdt-binary" / "params.copy").write_bytes(keep)
        p.symlink_to("params.copy")
    elif plant == "fifo":
        os.mkfifo(p)
    elif plant == "link-dev-zero":
        p.symlink_to("/dev/zero")
    elif plant == "folder-link":
        p.write_bytes(keep)
        (d / "gbdt-binary").rename(d / "real")
        (d / "gbdt-binary").symlink_to("real")
    elif plant == "device-node":
        os.mknod(p, 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    elif plant == "manifest-link":
        p.write_bytes(keep)
        (d / "MANIFEST.jsonl").rename(d / "M")
        (d / "MANIFEST.jsonl").symlink_to("M")
    exe = build_dir("x86_64") / "samebits"
    r = subprocess.run([str(exe), "conformance", "validate", str(d)], capture_output=True, text=True, timeout=60)
    if plant == "manifest-link":
        _one_error(r, "SB_ERR_IO", "MANIFEST.jsonl", "symbolic link")
        return
    assert r.returncode == 1 and "bundle: DAMAGED" in r.stdout, r.stdout + r.stderr
    why = {"fifo": "not a regular file", "device-node": "not a regular file",
           "folder-link": "a folder on its path is a symbolic link"}.get(plant, "a symbolic link")
    assert f"DAMAGED: {why}" in r.stdout and "gbdt-binary/params.txt" in r.stdout, r.stdout


def test_validate_candidates_are_regular_files(small_bundle, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    exe = build_dir("x86_64") / "samebits"
    for role in ("--predictions", "--model"):
        for path in ("/dev/zero", str(fifo)):
            r = subprocess.run([str(exe), "conformance", "validate", str(small_bundle), "--fixture", "gbdt-binary",
                                role, path], capture_output=True, text=True, timeout=60)
            assert r.returncode == 2 and "ERROR SB_ERR_IO: cannot read" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(exe), "conformance", "validate", str(small_bundle), "--fixture", "gbdt-binary",
                        "--card", str(fifo)], capture_output=True, text=True, timeout=60)
    _one_error(r, "SB_ERR_IO", "candidate card")
