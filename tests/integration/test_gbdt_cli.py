"""Gradient boosting through the CLI: train, predict, digest, and the named
errors and atomic writes the CLI promises. Data are made by the tests."""
import math
import random

import pytest

from conftest import samebits


def _write_csv(path, rows, header=("a", "b", "c", "y")):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join("" if v is None else repr(v) for v in r) + "\n")


def _data(n, kind, seed):
    rnd = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rnd.uniform(-2, 2), rnd.uniform(-1, 1)
        c = None if rnd.random() < 0.1 else rnd.randint(0, 4)
        s = a * a - b + (0.5 if c is None else 0.2 * c)
        if kind == "regression":
            y = s + rnd.gauss(0, 0.1)
        elif kind == "binary":
            y = 1 if s + rnd.gauss(0, 0.3) > 1.0 else 0
        else:
            y = 0 if s < 0.5 else 1 if s < 1.5 else 2
        rows.append((a, b, c, y))
    return rows


@pytest.fixture
def files(tmp_path):
    out = {}
    for kind in ("regression", "binary", "multiclass"):
        tr, te = tmp_path / f"{kind}-train.csv", tmp_path / f"{kind}-test.csv"
        _write_csv(tr, _data(2000, kind, 1))
        _write_csv(te, _data(300, kind, 2))
        out[kind] = (tr, te)
    return out


def _train(tr, kind, out, *extra, threads=2):
    return samebits("train", "--model", "gbdt", "--data", str(tr), "--label", "y", "--objective", kind,
                    "--out", str(out), "--threads", str(threads), "n_estimators=15", "eval_period=0", *extra)


def _digest_line(r):
    return [line for line in r.stdout.splitlines() if line.startswith("model digest:")][0].split()[-1]


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_train_predict_digest(kind, files, tmp_path):
    tr, te = files[kind]
    model = tmp_path / "m.sbm"
    r = _train(tr, kind, model)
    assert r.returncode == 0, r.stderr
    digest = _digest_line(r)
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == digest
    preds = tmp_path / "p.csv"
    args = ["--proba"] if kind != "regression" else []
    p = samebits("predict", "--model", str(model), "--data", str(te), "--out", str(preds), *args)
    assert p.returncode == 0, p.stderr
    lines = preds.read_text().splitlines()
    assert len(lines) == 300
    if kind == "regression":
        truth = [r[3] for r in _data(300, kind, 2)]
        rmse = math.sqrt(sum((float(a) - b) ** 2 for a, b in zip(lines, truth)) / 300)
        assert rmse < 0.6, rmse
    elif kind == "binary":
        assert all(0.0 <= float(v) <= 1.0 for v in lines)
    else:
        assert all(abs(sum(map(float, line.split(","))) - 1.0) < 1e-5 for line in lines)


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_same_model_bytes_on_1_2_7_threads(kind, files, tmp_path):
    tr, _ = files[kind]
    digests = set()
    for t in (1, 2, 7):
        r = _train(tr, kind, tmp_path / f"m{t}.sbm", "subsample=0.8", "colsample=0.67", threads=t)
        assert r.returncode == 0, r.stderr
        digests.add(_digest_line(r))
        assert (tmp_path / f"m{t}.sbm").read_bytes() == (tmp_path / "m1.sbm").read_bytes()
    assert len(digests) == 1


def test_unknown_and_bad_parameters_are_named(files, tmp_path):
    tr, _ = files["regression"]
    r = _train(tr, "regression", tmp_path / "m.sbm", "max_leaf=7")
    assert r.returncode == 2 and "unknown parameter 'max_leaf'" in r.stderr
    r = _train(tr, "regression", tmp_path / "m.sbm", "learning_rate=-1")
    assert r.returncode == 2 and "learning_rate" in r.stderr
    r = _train(tr, "regression", tmp_path / "m.sbm", "numeric_mode=quick")
    assert r.returncode == 2 and "identical, deterministic, fast" in r.stderr
    r = _train(tr, "regression", tmp_path / "m.sbm", "device=cuda")
    assert r.returncode == 2 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr
    assert not (tmp_path / "m.sbm").exists()


@pytest.mark.parametrize("mode", ["fast", "deterministic"])
def test_unbuilt_numeric_modes_are_refused_by_name(files, tmp_path, mode):
    """Only identical is built: a mode that only relabelled the identical model
    is refused by name before the data is read, by parameter or environment."""
    tr, _ = files["regression"]
    for kind in ("regression", "binary", "multiclass"):
        tr, _ = files[kind]
        r = _train(tr, kind, tmp_path / "m.sbm", f"numeric_mode={mode}")
        assert r.returncode == 2 and "SB_ERR_MODE_UNSUPPORTED" in r.stderr, r.stderr
        assert f"numeric_mode={mode} is not built: only identical is; see docs/numeric-profile.md" in r.stderr
        assert "training on" not in r.stderr  # refused before reading the data
        assert not (tmp_path / "m.sbm").exists()
    # the refusal is known before the data: a missing data file is not even opened
    r = samebits("train", "--model", "gbdt", "--data", str(tmp_path / "absent.csv"), f"numeric_mode={mode}")
    assert r.returncode == 2 and "SB_ERR_MODE_UNSUPPORTED" in r.stderr
    r = samebits("train", "--model", "gbdt", "--data", str(tr), "--label", "y", "--objective", "multiclass",
                 "--out", str(tmp_path / "m.sbm"), env={"SAMEBITS_NUMERIC_MODE": mode})
    assert r.returncode == 2 and f"SAMEBITS_NUMERIC_MODE={mode} is not built" in r.stderr
    assert not (tmp_path / "m.sbm").exists()


def test_identical_mode_is_the_default_and_accepted(files, tmp_path):
    tr, _ = files["regression"]
    r0 = _train(tr, "regression", tmp_path / "a.sbm")
    r1 = _train(tr, "regression", tmp_path / "b.sbm", "numeric_mode=identical")
    assert r0.returncode == 0 and r1.returncode == 0, r1.stderr
    assert (tmp_path / "a.sbm").read_bytes() == (tmp_path / "b.sbm").read_bytes()


def test_malformed_input_names_file_line_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,y\n1,2,3\n4,x5,6\n")
    r = samebits("train", "--model", "gbdt", "--data", str(bad), "--label", "y", "--out", str(tmp_path / "m.sbm"))
    assert r.returncode == 2
    assert "bad.csv" in r.stderr and "line 3" in r.stderr and "column 2" in r.stderr, r.stderr
    r = samebits("train", "--model", "gbdt", "--data", str(bad), "--label", "target")
    assert r.returncode == 2 and "target" in r.stderr
    nan_label = tmp_path / "nanlabel.csv"
    nan_label.write_text("a,y\n1,2\n2,nan\n")
    r = samebits("train", "--model", "gbdt", "--data", str(nan_label), "--label", "y")
    assert r.returncode == 2 and "line 3" in r.stderr, r.stderr
    r = samebits("train", "--model", "gbdt", "--data", str(tmp_path / "nope.csv"), "--label", "y")
    assert r.returncode == 2 and "SB_ERR_IO" in r.stderr
    r = samebits("train", "--data", str(bad), "--label", "y")
    assert r.returncode == 2 and "--model gbdt" in r.stderr


def test_binary_labels_must_be_0_or_1(tmp_path):
    f = tmp_path / "b.csv"
    f.write_text("a,y\n1,0\n2,2\n")
    r = samebits("train", "--model", "gbdt", "--data", str(f), "--label", "y", "--objective", "binary")
    assert r.returncode == 2 and "0 or 1" in r.stderr


def test_predict_feature_mismatch_and_corrupt_model(files, tmp_path):
    tr, te = files["regression"]
    model = tmp_path / "m.sbm"
    assert _train(tr, "regression", model).returncode == 0
    narrow = tmp_path / "narrow.csv"
    narrow.write_text("a,b\n1,2\n")
    out = tmp_path / "p.csv"
    r = samebits("predict", "--model", str(model), "--data", str(narrow), "--out", str(out))
    assert r.returncode == 2 and "feature 2 'c' is not among" in r.stderr
    assert not out.exists()
    blob = bytearray(model.read_bytes())
    blob[len(blob) // 2] ^= 0x10
    bad = tmp_path / "bad.sbm"
    bad.write_bytes(bytes(blob))
    r = samebits("predict", "--model", str(bad), "--data", str(te), "--out", str(out))
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr
    assert not out.exists()
    r = samebits("digest", str(tmp_path / "narrow.csv"))
    assert r.returncode == 2 and "not a samebits model" in r.stderr


def test_failed_training_leaves_existing_model_untouched(files, tmp_path):
    tr, _ = files["regression"]
    model = tmp_path / "m.sbm"
    assert _train(tr, "regression", model).returncode == 0
    before = model.read_bytes()
    r = _train(tr, "regression", model, "bogus=1")
    assert r.returncode == 2
    assert model.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("m.sbm")) == ["m.sbm"]


def test_early_stopping_keeps_the_best_iteration(files, tmp_path):
    tr, te = files["binary"]
    r = samebits("train", "--model", "gbdt", "--data", str(tr), "--valid", str(te), "--label", "y",
                 "--objective", "binary", "n_estimators=300", "learning_rate=0.5", "early_stopping_rounds=5",
                 "eval_period=1", "--out", str(tmp_path / "m.sbm"))
    assert r.returncode == 0, r.stderr
    assert "early stopping: best iteration" in r.stderr
    assert "[300]" not in r.stderr


def _overflow_csv(path, label):
    rows = [(random.Random(i).uniform(-1, 1), float(i % 3), i % 5, label(i)) for i in range(200)]
    _write_csv(path, rows)


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_float32_overflow_is_refused_by_name(tmp_path, device):
    """Finite labels near +-3e38 and weights near 1e30 overflow float32 in the
    gradients, their sums or the label mean: refused by name (SB_ERR_LIMIT),
    never trained into a model (before the fix the fit returned SB_OK with a
    different model per machine, and only the digest refused it)."""
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    _overflow_csv(data, lambda i: 3e38 if i % 2 else -3e38)
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(model),
                 "n_estimators=5", "eval_period=0", f"device={device}")
    if "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr:
        pytest.skip("no OpenCL device here")
    # Labels of +-3e38 give finite gradients whose sums pass 2^63: refused
    # before quantizing (before the fix, a split gain that is not finite).
    assert r.returncode == 2 and "SB_ERR_LIMIT" in r.stderr, r.stderr
    assert "the gradients' sum over 200 rows can reach" in r.stderr, r.stderr
    assert "sb_model_digest" not in r.stderr and not model.exists()
    _overflow_csv(data, lambda i: 3e38)
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(model),
                 "n_estimators=5", "eval_period=0", f"device={device}")
    assert r.returncode == 2 and "the base score (the weighted mean of the labels) is not finite" in r.stderr
    _overflow_csv(data, lambda i: 1e9 * (i % 2))
    weights = tmp_path / "w.txt"
    weights.write_text("".join("1e30\n" for _ in range(200)))
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--weight", str(weights),
                 "--out", str(model), "n_estimators=5", "eval_period=0", "base_score=0", f"device={device}")
    assert r.returncode == 2 and "SB_ERR_LIMIT" in r.stderr, r.stderr
    assert "iteration 0, class 0: a gradient is not finite" in r.stderr and not model.exists()


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_classification_weights_near_1e30_are_refused_not_stumps(tmp_path, device):
    """Binary labels with weights of 1e30: every gradient and hessian is
    finite, but the sums over 200 rows pass 2^63 and their squares in the
    split gain overflow, so every gain would be NaN and every tree a stump
    (trained silently before). Refused by name instead, on every device;
    weights of 1e15 (sums far below 2^63) still train."""
    data, model, weights = tmp_path / "d.csv", tmp_path / "m.sbm", tmp_path / "w.txt"
    _overflow_csv(data, lambda i: float(i % 3 == 0))
    weights.write_text("".join("1e30\n" for _ in range(200)))
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--weight", str(weights),
                 "--objective", "binary", "--out", str(model), "n_estimators=5", "eval_period=0", f"device={device}")
    if "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr:
        pytest.skip("no OpenCL device here")
    assert r.returncode == 2 and "SB_ERR_LIMIT" in r.stderr, r.stderr
    assert "the gradients' sum over 200 rows can reach" in r.stderr and "past 2^63" in r.stderr, r.stderr
    assert not model.exists()
    weights.write_text("".join("1e15\n" for _ in range(200)))
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--weight", str(weights),
                 "--objective", "binary", "--out", str(model), "n_estimators=5", "eval_period=0", f"device={device}")
    assert r.returncode == 0 and model.exists(), r.stderr


def test_a_model_whose_raw_scores_can_overflow_is_refused(tmp_path):
    """A valid model file whose leaves (3e38 in tree 0, 2e38 in tree 1, split
    on different features) can sum past FLT_MAX: prediction refuses it by name
    before any row (docs/model-format.md, "Raw scores that could overflow").
    Before the fix it answered 1e38, inf and -inf for these rows (and NaN where
    softmax meets such margins, whose bits differ between machines)."""
    from conftest import ROOT
    model = ROOT / "tests/fuzz/corpus/model/score-overflow-v2.sbm"
    data, out = tmp_path / "d.csv", tmp_path / "p.txt"
    data.write_text("a,b\n0.1,0.2\n0.1,0.9\n0.9,0.1\n")
    r = samebits("digest", str(model))
    assert r.returncode == 0, r.stderr  # a valid file
    for kind in ("--raw", None):
        r = samebits("predict", "--model", str(model), "--data", str(data), "--out", str(out), *([kind] if kind else []))
        assert r.returncode == 2 and "SB_ERR_LIMIT" in r.stderr and "can overflow float32" in r.stderr, r.stderr
        assert not out.exists()


def test_a_progress_line_only_when_asked_or_on_a_terminal(tmp_path):
    """progress=true draws [done/total] rate and time left on standard error (the
    CLI sets it when standard error is a terminal; in a pipe, as here, there is
    none); a run parameter: the model's bytes are the same either way."""
    data = tmp_path / "d.csv"
    data.write_text("y,a,b\n" + "".join("%d,%d,%d\n" % (i % 3, i, (i * 7) % 5) for i in range(300)))
    runs = {}
    for extra in ([], ["progress=true"]):
        out = tmp_path / ("m%d.sbm" % len(extra))
        r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "n_estimators=7",
                     "eval_period=0", "--out", str(out), *extra)
        assert r.returncode == 0, r.stderr
        runs[len(extra)] = (r.stderr, out.read_bytes())
    assert "[7/7]" not in runs[0][0] and "[7/7]" in runs[1][0] and "iterations/s" in runs[1][0]
    assert runs[0][1] == runs[1][1]


def _digest(r):
    import re
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


def test_run_parameters_are_not_the_models(files, tmp_path):
    """Issue 21: what only a run uses (the metrics it logs, how often, the
    device) is not written into the model, so fits that differ in it alone
    are one model with one digest; with early stopping the metric chose the
    tree count and is part of the model. Fails while every given key is stored."""
    tr, te = files["binary"]
    base = ["train", "--model", "gbdt", "--data", str(tr), "--valid", str(te), "--label", "y", "--objective",
            "binary", "n_estimators=6"]
    a = samebits(*base, "metric=auc", "--out", str(tmp_path / "a.sbm"))
    b = samebits(*base, "metric=binary_logloss,auc", "eval_period=2", "device=cpu-batched",
                 "--out", str(tmp_path / "b.sbm"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert _digest(a) == _digest(b)
    assert (tmp_path / "a.sbm").read_bytes() == (tmp_path / "b.sbm").read_bytes()
    assert b"metric=" not in (tmp_path / "a.sbm").read_bytes()
    # early stopping: the metric decided the model, and the file says which
    c = samebits(*base, "metric=auc", "early_stopping_rounds=2", "--out", str(tmp_path / "c.sbm"))
    d = samebits(*base, "metric=binary_logloss", "early_stopping_rounds=2", "--out", str(tmp_path / "d.sbm"))
    assert c.returncode == 0 and d.returncode == 0, c.stderr + d.stderr
    assert b"metric=auc\n" in (tmp_path / "c.sbm").read_bytes()
    assert b"metric=logloss\n" in (tmp_path / "d.sbm").read_bytes()
    assert _digest(c) != _digest(d)
