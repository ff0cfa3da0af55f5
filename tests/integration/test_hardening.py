"""Robustness (docs/robustness.md): the unit tests and fixtures under
AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer (build-asan/),
the sanitizers shown to catch planted bugs, the fuzz targets (build-fuzz/) on
their corpora and for a bounded time, allocation failures through the CLI,
and a SIGKILLed `samebits train`.

`make test` builds build-asan/ and build-fuzz/ (`make sanitize`) before pytest
starts; a missing binary is a failure, never a skip."""
import os
import random
import re
import signal
import subprocess
import time

import pytest

from conftest import FIXTURES, ROOT, samebits

ASAN = ROOT / "build-asan"
FUZZ = ROOT / "build-fuzz"
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
FUZZ_TARGETS = ("csv", "libsvm", "model", "card", "records", "predict")
# Seconds of fuzzing per target in `make test` (SB_FUZZ_SECONDS); `make fuzz`
# runs longer (FUZZ_SECONDS, 60 by default).
FUZZ_SECONDS = int(os.environ.get("SB_FUZZ_SECONDS", "20"))

SAN_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}
# Any of these in a sanitized run's output is a failure even if it exited 0.
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
           "UndefinedBehaviorSanitizer")


def _exe(path):
    if not path.exists():
        pytest.fail(f"{path} is missing: run 'make sanitize' (make test builds it)")
    return str(path)


def _run(args, env=None, timeout=600, cwd=ROOT):
    full = dict(os.environ)
    full.pop("SAMEBITS_NUM_THREADS", None)
    full.pop("SAMEBITS_NUMERIC_MODE", None)
    full.update(SAN_ENV)
    if env:
        full.update(env)
    return subprocess.run(args, capture_output=True, text=True, env=full, timeout=timeout, cwd=cwd)


def _clean(r):
    out = r.stdout + r.stderr
    return not any(s in out for s in REPORTS)


# ---- the sanitizer build --------------------------------------------------------

@pytest.mark.parametrize("bug", ["heap-overflow", "use-after-free", "leak", "shift",
                                 "signed-overflow", "float-cast"])
def test_sanitizers_catch_planted_bug(bug):
    """The build's flags are live: each planted bug is reported and fails the run."""
    exe = _exe(ASAN / "sb_canary")
    assert _run([exe, "none"]).returncode == 0
    r = _run([exe, bug])
    assert r.returncode != 0 and not _clean(r), (bug, r.returncode, r.stderr[-2000:])


def test_unit_tests_under_sanitizers():
    """Every C unit test, including the allocation-failure sweeps (whose leaks
    LeakSanitizer would report at exit)."""
    r = _run([_exe(ASAN / "sb_unit")])
    assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert _clean(r), r.stderr[-4000:]


def test_fixtures_under_sanitizers():
    """The pinned fixtures under the sanitizers, at 1 and 3 threads: clean, and
    still the reference cards' bits (the sanitized build keeps the profile flags)."""
    n = len(FIXTURES)
    for threads in ("1", "3"):
        r = _run([_exe(ASAN / "samebits"), "verify", "--threads", threads])
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        assert f"{n} fixtures: {n} identical, 0 not identical" in r.stdout
        assert _clean(r), r.stderr[-4000:]
    # the tree-device path (the batched grower and the GPU's kernel bodies on the host)
    r = _run([_exe(ASAN / "samebits"), "verify", "--family", "gbdt", "--threads", "3", "device=cpu-batched"])
    assert r.returncode == 0 and "verify: PASS" in r.stdout, r.stdout + r.stderr[-3000:]
    assert _clean(r), r.stderr[-4000:]
    # the forest-device path (the level-wise grower and the GPU's kernel bodies on the host)
    r = _run([_exe(ASAN / "samebits"), "verify", "--threads", "3", "--family", "forest", "device=cpu-batched"])
    assert r.returncode == 0 and "verify: PASS" in r.stdout, r.stdout + r.stderr[-3000:]
    assert _clean(r), r.stderr[-4000:]


def _write_csv(path, n, seed, ncols=4):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(ncols)) + ",y\n")
        for _ in range(n):
            xs = [rnd.uniform(-2, 2) for _ in range(ncols)]
            miss = rnd.random() < 0.05
            y = 1 if xs[0] * xs[1] + 0.3 * xs[2] > 0 else 0
            f.write(",".join("NA" if miss and j == 1 else f"{v:.6g}" for j, v in enumerate(xs))
                    + f",{y}\n")


def test_cli_train_predict_under_sanitizers(tmp_path):
    data = tmp_path / "d.csv"
    _write_csv(data, 500, 1)
    model, pred = tmp_path / "m.sbm", tmp_path / "p.csv"
    exe = _exe(ASAN / "samebits")
    r = _run([exe, "train", "--model", "gbdt", "--data", str(data), "--label", "y",
              "--objective", "binary", "--out", str(model), "--threads", "2",
              "n_estimators=5", "subsample=0.8"])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "predict", "--model", str(model), "--data", str(data), "--out", str(pred),
              "--proba"])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert len(pred.read_text().splitlines()) == 500
    # The sanitized library gives the same model bytes as the plain build.
    plain = tmp_path / "plain.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--objective",
                 "binary", "--out", str(plain), "--threads", "1", "n_estimators=5", "subsample=0.8")
    assert r.returncode == 0, r.stderr
    assert plain.read_bytes() == model.read_bytes()


def test_cli_gp_train_predict_under_sanitizers(tmp_path):
    """Gaussian process regression's own CSV reader, fit, save, load and
    predict (cli/gp_cli.c) under the sanitizers, a refusal's path too; the
    same model bytes as the plain build."""
    data = tmp_path / "d.csv"
    rnd = random.Random(3)
    data.write_text("a,b,y\n" + "".join("%r,%r,%r\n" % (x, z, x * x - z)
                                        for x, z in ((rnd.uniform(-2, 2), rnd.uniform(-2, 2)) for _ in range(40))))
    model, pred = tmp_path / "m.sbm", tmp_path / "p.csv"
    exe = _exe(ASAN / "samebits")
    args = ["train", "--model", "gp", "--data", str(data), "--kernel", "ConstantKernel(1.0) * RBF([1.0, 1.0]) + "
            "WhiteKernel(0.1)", "n_restarts_optimizer=1", "--threads", "2"]
    r = _run([exe] + args + ["--out", str(model)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "predict", "--model", str(model), "--data", str(data), "--out", str(pred), "--std"])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert len(pred.read_text().splitlines()) == 40
    r = _run([exe, "train", "--model", "gp", "--data", str(data), "--kernel", "RBF(0)", "--out", str(tmp_path / "x")])
    assert r.returncode == 2 and _clean(r) and "length_scale=0" in r.stderr, r.stderr[-4000:]
    plain = tmp_path / "plain.sbm"
    r = samebits(*(args + ["--out", str(plain)]))
    assert r.returncode == 0, r.stderr
    assert plain.read_bytes() == model.read_bytes()


def test_cli_mlp_train_predict_under_sanitizers(tmp_path):
    """The mlp's fit, save, load and predict through the CLI (cli/mlp_cli.c)
    under the sanitizers, a refusal's path too; the same model bytes as the
    plain build."""
    data = tmp_path / "d.csv"
    rnd = random.Random(5)
    rows = ((rnd.uniform(-2, 2), rnd.uniform(-2, 2)) for _ in range(60))
    data.write_text("a,b,cls\n" + "".join("%r,%r,%d\n" % (x, z, int(x + z > 0) + int(x - z > 1)) for x, z in rows))
    model, pred = tmp_path / "m.sbm", tmp_path / "p.csv"
    exe = _exe(ASAN / "samebits")
    args = ["train", "--model", "mlp", "--data", str(data), "task=classifier", "hidden_layer_sizes=8,4",
            "max_iter=5", "early_stopping=true", "--threads", "2"]
    r = _run([exe] + args + ["--out", str(model)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "predict", "--model", str(model), "--data", str(data), "--out", str(pred), "--proba"])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert len(pred.read_text().splitlines()) == 60
    r = _run([exe, "train", "--model", "mlp", "--data", str(data), "task=classifier", "solver=lbfgs", "--out",
              str(tmp_path / "x")])
    assert r.returncode == 2 and _clean(r) and "solver='lbfgs' is not built" in r.stderr, r.stderr[-4000:]
    plain = tmp_path / "plain.sbm"
    r = samebits(*(args + ["--out", str(plain)]))
    assert r.returncode == 0, r.stderr
    assert plain.read_bytes() == model.read_bytes()


def test_cli_umap_train_transform_under_sanitizers(tmp_path):
    """UMAP's fit into a model, its file, transform from the loaded file
    (cli: train --model umap, transform, predict) under the sanitizers, the
    refusals' paths too; the same model bytes and embedding as the plain
    build."""
    data = tmp_path / "d.csv"
    rnd = random.Random(5)
    data.write_text("a,b,c\n" + "".join("%r,%r,%r\n" % (rnd.uniform(-1, 1) + 4 * (i % 2), rnd.uniform(-1, 1),
                                                      rnd.uniform(-1, 1)) for i in range(40)))
    model, emb = tmp_path / "m.sbm", tmp_path / "e.csv"
    exe = _exe(ASAN / "samebits")
    args = ["train", "--model", "umap", "--data", str(data), "n_neighbors=6", "n_epochs=20", "--threads", "2"]
    r = _run([exe] + args + ["--out", str(model)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "transform", "--model", str(model), "--data", str(data), "--out", str(emb), "--threads", "3"])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert len(emb.read_text().splitlines()) == 40
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n1,nan,2\n")
    r = _run([exe, "transform", "--model", str(model), "--data", str(bad), "--out", str(tmp_path / "x")])
    assert r.returncode == 2 and _clean(r) and "missing (NaN)" in r.stderr, r.stderr[-4000:]
    r = _run([exe, "train", "--model", "umap", "--data", str(data), "n_neighbors=1", "--out", str(tmp_path / "x")])
    assert r.returncode == 2 and _clean(r) and "n_neighbors" in r.stderr, r.stderr[-4000:]
    r = _run([exe, "predict", "--model", str(model), "--data", str(data), "--out", str(tmp_path / "x"), "--proba"])
    assert r.returncode == 2 and _clean(r) and "UMAP model transforms" in r.stderr, r.stderr[-4000:]
    plain, pemb = tmp_path / "plain.sbm", tmp_path / "pe.csv"
    r = samebits(*(args + ["--out", str(plain)]))
    assert r.returncode == 0, r.stderr
    assert plain.read_bytes() == model.read_bytes()
    r = samebits("transform", "--model", str(plain), "--data", str(data), "--out", str(pemb))
    assert r.returncode == 0 and pemb.read_text() == emb.read_text(), r.stderr


def test_cli_lm_train_generate_under_sanitizers(tmp_path):
    """The byte lm's train, checkpoint, resume and generate through the CLI
    (cli/lm_cli.c) under the sanitizers, a refusal's path too; the same
    checkpoint bytes as the plain build."""
    data = tmp_path / "c.txt"
    rnd = random.Random(7)
    words = ["same", "bits", "every", "machine", "exact", "sum", "order"]
    data.write_text(" ".join(rnd.choice(words) for _ in range(600)))
    model, half, resumed = tmp_path / "m.sbm", tmp_path / "h.sbm", tmp_path / "r.sbm"
    exe = _exe(ASAN / "samebits")
    args = ["train", "--model", "lm", "--data", str(data), "n_layer=1", "d_model=8", "n_head=2", "context=8",
            "batch_size=2", "eval_batches=1", "dropout=0.1", "--eval-every", "2", "--threads", "2"]
    r = _run([exe] + args + ["--steps", "4", "--out", str(model)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe] + args + ["--steps", "2", "--out", str(half)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "train", "--model", "lm", "--data", str(data), "--init", str(half), "--steps", "2",
              "--eval-every", "2", "--out", str(resumed)])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert resumed.read_bytes() == model.read_bytes()
    r = _run([exe, "generate", "--model-file", str(model), "--prompt", "same ", "--count", "8", "--out",
              str(tmp_path / "g.bin")])
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    r = _run([exe, "train", "--model", "lm", "--data", str(data), "n_head=3", "--out", str(tmp_path / "x")])
    assert r.returncode == 2 and _clean(r) and "n_head" in r.stderr, r.stderr[-4000:]
    plain = tmp_path / "plain.sbm"
    r = samebits(*(args + ["--steps", "4", "--out", str(plain)]))
    assert r.returncode == 0, r.stderr
    assert plain.read_bytes() == model.read_bytes()


def test_reader_alloc_failures_by_environment():
    """SAMEBITS_FAIL_ALLOC=N across process starts (docs/io.md): every reader
    allocation failure is clean, under the sanitizers."""
    exe = _exe(ASAN / "sb_unit")
    for n in range(1, 121):
        r = _run([exe, "test_io_alloc_failures"], env={"SAMEBITS_FAIL_ALLOC": str(n)})
        assert r.returncode == 0 and _clean(r), (n, r.stdout[-2000:] + r.stderr[-3000:])


# ---- allocation failures through the CLI -----------------------------------------

def _sweep_cli(args, outputs, work):
    """Fail allocation 1, 2, ... of the sanitized CLI run `args`: each run is a
    named SB_ERR_OUT_OF_MEMORY (exit 2) leaving every file of `outputs` with
    its earlier bytes and no other file in `work`; or, for a failure the
    library tolerates by design (a shrinking realloc), exactly the clean run's
    outputs. Ends after 25 clean runs in a row (past the last allocation).
    Returns the number of failed runs."""
    olds = {p: b"earlier bytes of " + p.name.encode() + b"\n" for p in outputs}
    names = sorted(p.name for p in outputs)
    r = _run(args)
    assert r.returncode == 0 and _clean(r), r.stderr[-3000:]
    refs = {p: p.read_bytes() for p in outputs}
    failures = streak = 0
    for n in range(1, 3000):
        for p, b in olds.items():
            p.write_bytes(b)
        r = _run(args, env={"SAMEBITS_FAIL_ALLOC": str(n)})
        assert _clean(r), (n, r.stderr[-4000:])
        assert sorted(p.name for p in work.iterdir()) == names, n
        got = {p: p.read_bytes() for p in outputs}
        if r.returncode == 0:
            assert got == refs, n
            streak += 1
            if streak == 25:
                return failures
            continue
        streak = 0
        assert r.returncode == 2 and "SB_ERR_OUT_OF_MEMORY" in r.stderr, (n, r.stderr[-2000:])
        assert got == olds, (n, r.stderr[-2000:])
        failures += 1
    raise AssertionError("the sweep never passed the last allocation")


def test_cli_train_alloc_failure_leaves_output_untouched(tmp_path):
    """`samebits train --out M --card C` with the Nth allocation failing."""
    data = tmp_path / "d.csv"
    _write_csv(data, 200, 2)
    work = tmp_path / "out"
    work.mkdir()
    model, card = work / "m.sbm", work / "c.card"
    args = [_exe(ASAN / "samebits"), "train", "--model", "gbdt", "--data", str(data), "--label",
            "y", "--objective", "binary", "--out", str(model), "--card", str(card), "--threads",
            "1", "n_estimators=2", "num_leaves=4"]
    assert _sweep_cli(args, [model, card], work) >= 80


def test_cli_predict_alloc_failure_leaves_output_untouched(tmp_path):
    """`samebits predict --out P` with the Nth allocation failing."""
    data = tmp_path / "d.csv"
    _write_csv(data, 200, 2)
    model = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--objective",
                 "binary", "--out", str(model), "n_estimators=3")
    assert r.returncode == 0, r.stderr
    work = tmp_path / "out"
    work.mkdir()
    pred = work / "p.csv"
    args = [_exe(ASAN / "samebits"), "predict", "--model", str(model), "--data", str(data),
            "--out", str(pred), "--proba"]
    assert _sweep_cli(args, [pred], work) >= 20


# ---- SIGKILL -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    """Enough rows that training takes seconds."""
    path = tmp_path_factory.mktemp("kill") / "big.csv"
    _write_csv(path, 100000, 3, ncols=8)
    return path


def _train_args(data, out, trees):
    exe = ROOT / "build" / "samebits"
    if not exe.exists():
        pytest.fail(f"{exe} is missing")
    return [str(exe), "train", "--model", "gbdt", "--data", str(data), "--label", "y",
            "--objective", "binary", "--out", str(out), "--threads", "1",
            f"n_estimators={trees}", "eval_period=1"]


@pytest.mark.parametrize("existing", [False, True])
def test_sigkill_mid_training_leaves_no_partial_model(tmp_path, big_csv, existing):
    """SIGKILL once training is under way: no file at --out, or the earlier
    file unchanged."""
    out = tmp_path / "m.sbm"
    if existing:
        out.write_bytes(b"an earlier model\n")
    p = subprocess.Popen(_train_args(big_csv, out, 2000), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ROOT)
    seen = []
    deadline = time.time() + 120
    while time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith("[3]"):  # three trees done: mid-run
            break
    assert p.poll() is None, "training ended before it could be killed: " + "".join(seen)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    p.stdout.close()
    p.stderr.close()
    assert p.returncode == -signal.SIGKILL
    if existing:
        assert out.read_bytes() == b"an earlier model\n"
    else:
        assert not out.exists()
    # Nothing but the earlier file (and at most the killed save's own temporary).
    assert all(q.name == "m.sbm" or q.name.startswith("m.sbm.tmp.") for q in tmp_path.iterdir())


def test_sigkill_at_any_moment_leaves_old_or_complete_model(tmp_path):
    """SIGKILL at delays spread over a short run, the save included: the output
    is the earlier file or the complete model, never a part."""
    data = tmp_path / "d.csv"
    _write_csv(data, 60000, 4)
    ref = tmp_path / "ref.sbm"
    t0 = time.time()
    r = subprocess.run(_train_args(data, ref, 20), capture_output=True, text=True, cwd=ROOT)
    span = time.time() - t0
    assert r.returncode == 0, r.stderr
    full = ref.read_bytes()
    out = tmp_path / "m.sbm"
    old = b"an earlier model\n"
    outcomes = set()
    rnd = random.Random(5)
    for i in range(12):
        out.write_bytes(old)
        p = subprocess.Popen(_train_args(data, out, 20), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=ROOT)
        time.sleep(span * 1.1 * (i / 11) * rnd.uniform(0.9, 1.1))  # the first at once
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        got = out.read_bytes()
        assert got in (old, full), (i, len(got))
        outcomes.add("old" if got == old else "complete")
        for q in tmp_path.glob("m.sbm.tmp.*"):
            q.unlink()
    assert "old" in outcomes, outcomes  # the earliest kills land before the save


def _pair_state(model, card, old_model, old_card, new_model, new_card):
    """What the two paths hold, by name; a part of either is an AssertionError."""
    m = model.read_bytes() if model.exists() else None
    c = card.read_bytes() if card.exists() else None
    mname = {old_model: "old", new_model: "new", None: "none"}.get(m)
    cname = {old_card: "old", new_card: "new", None: "none"}.get(c)
    assert mname and cname, ("a partial file", None if m is None else len(m), None if c is None else len(c))
    return mname, cname


@pytest.mark.parametrize("pause_ms", [0, 150])
def test_sigkill_with_card_never_leaves_a_mismatched_pair(tmp_path, pause_ms):
    """train --out M --card C killed at 35 moments spread over a run, the save
    included (pause_ms: SAMEBITS_TEST_SAVE_PAUSE_MS widens each step of the
    save so that kills land in every one): the pair on disk is the old pair,
    the old model and no card, the new model and no card, or the new pair;
    never a card beside a model it does not describe, never a part; the only
    leftovers are M.tmp.PID and C.tmp.PID (no nested names)."""
    data = tmp_path / "d.csv"
    _write_csv(data, 20000, 4)
    model, card = tmp_path / "m.sbm", tmp_path / "c.card"
    env = dict(os.environ, SAMEBITS_TEST_SAVE_PAUSE_MS=str(pause_ms))
    env.pop("SAMEBITS_NUM_THREADS", None)
    args = _train_args(data, model, 8) + ["--card", str(card)]
    t0 = time.time()
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
    span = time.time() - t0
    assert r.returncode == 0, r.stderr
    new_model, new_card = model.read_bytes(), card.read_bytes()
    old_model, old_card = b"an earlier model\n", b"an earlier card\n"
    seen = set()
    rnd = random.Random(17)
    for i in range(35):
        model.write_bytes(old_model)
        card.write_bytes(old_card)
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
        time.sleep(span * 1.1 * (i / 34) * rnd.uniform(0.95, 1.05))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        state = _pair_state(model, card, old_model, old_card, new_model, new_card)
        assert state in {("old", "old"), ("old", "none"), ("new", "none"), ("new", "new")}, (i, state)
        seen.add(state)
        for q in tmp_path.iterdir():
            if q.name in ("d.csv", "m.sbm", "c.card"):
                continue
            assert re.fullmatch(r"(m\.sbm|c\.card)\.tmp\.\d+", q.name), q.name
            q.unlink()
    assert ("old", "old") in seen, seen  # the earliest kills land before the save
    if pause_ms:  # the widened save shows the in-between states too
        assert len(seen) >= 3, seen


# ---- fuzz targets -----------------------------------------------------------------

@pytest.mark.parametrize("target", FUZZ_TARGETS)
def test_fuzz_corpus_replay(target):
    """Every committed input (seeds and every crash ever found) runs clean."""
    exe = _exe(FUZZ / f"fuzz_{target}")
    files = sorted(str(p) for p in (CORPUS / target).iterdir() if p.is_file())
    assert len(files) >= 3, files
    r = _run([exe, "-runs=0"] + files)
    assert r.returncode == 0 and _clean(r), r.stderr[-4000:]
    assert f"Executed {files[-1]}" in r.stderr


@pytest.mark.parametrize("target", FUZZ_TARGETS)
def test_fuzz_bounded(target, tmp_path):
    """libFuzzer from the corpus for SB_FUZZ_SECONDS; new inputs go to a
    temporary directory. One allocation above 64 MiB is a failure too: inputs
    are a few KiB, and nothing is sized by a count the bytes do not back. A crash fails with the input's path: add that input
    to tests/fuzz/corpus/<target>/ with the fix."""
    exe = _exe(FUZZ / f"fuzz_{target}")
    new = tmp_path / "new"
    new.mkdir()
    crash_dir = ROOT / "build-fuzz" / "crashes"
    crash_dir.mkdir(exist_ok=True)
    r = _run([exe, f"-max_total_time={FUZZ_SECONDS}", "-timeout=10", "-rss_limit_mb=2048", "-malloc_limit_mb=64",
              "-print_final_stats=1", f"-artifact_prefix={crash_dir}/{target}-",
              str(new), str(CORPUS / target)], env={"TMPDIR": str(tmp_path)},
             timeout=FUZZ_SECONDS + 120)
    assert r.returncode == 0, f"fuzz_{target} found a failure (input in {crash_dir}):\n" + r.stderr[-5000:]
    assert "Done" in r.stderr and _clean(r)
    runs = [l for l in r.stderr.splitlines() if l.startswith("stat::number_of_executed_units")]
    assert runs and int(runs[0].split(":")[-1]) > 1000, runs
