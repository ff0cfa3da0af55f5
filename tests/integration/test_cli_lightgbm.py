"""The command line as a LightGBM user meets it (issue 21, first part): --help on
every command, DATA.weight beside the data read as LightGBM reads it, and a
--label that is honoured or refused by name, never ignored."""
import os
import re
import shutil

import pytest

from conftest import ROOT, samebits

EX = ROOT.parent / "shared" / "data" / "lightgbm-examples"
COMMANDS = ["version", "doctor", "verify", "check-fixture", "fixture", "card", "train", "predict", "digest",
            "conformance"]


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c != "version"])
def test_every_command_has_help(cmd):
    for flag in ("--help", "-h"):
        r = samebits(cmd, flag)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("usage: samebits\n") and ("  " + cmd) in r.stdout, r.stdout
    r = samebits("help", cmd)
    assert r.returncode == 0 and ("  " + cmd) in r.stdout


def test_help_of_an_unknown_command_is_an_error():
    r = samebits("nope", "--help")
    assert r.returncode == 2 and "unknown command 'nope'" in r.stderr


@pytest.fixture
def binary_copy(tmp_path):
    if not (EX / "binary_classification_binary.train").exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    d = tmp_path / "binary.train"
    shutil.copy(EX / "binary_classification_binary.train", d)
    return d


def test_weight_file_beside_the_data_is_read(binary_copy, tmp_path):
    base = ["train", "--model", "gbdt", "--objective", "binary", "n_estimators=3", "eval_period=0"]
    plain = samebits(*base, "--data", str(binary_copy), "--out", str(tmp_path / "a.sbm"))
    given = samebits(*base, "--data", str(binary_copy), "--weight",
                     str(EX / "binary_classification_binary.train.weight"), "--out", str(tmp_path / "b.sbm"))
    shutil.copy(EX / "binary_classification_binary.train.weight", str(binary_copy) + ".weight")
    beside = samebits(*base, "--data", str(binary_copy), "--out", str(tmp_path / "c.sbm"))
    assert "row weights from" in beside.stderr and "row weights from" not in plain.stderr
    assert digest_of(beside) == digest_of(given) != digest_of(plain)


def test_a_bad_weight_file_beside_the_data_is_refused(binary_copy, tmp_path):
    (tmp_path / "binary.train.weight").write_text("1\n2\n")
    r = samebits("train", "--model", "gbdt", "--data", str(binary_copy), "--objective", "binary", "n_estimators=2")
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr, r.stderr


def test_headerless_label_column_is_honoured(binary_copy, tmp_path):
    base = ["train", "--model", "gbdt", "--data", str(binary_copy), "--format", "tsv-noheader",
            "n_estimators=2", "eval_period=0"]
    first = samebits(*base, "--objective", "binary")
    zero = samebits(*base, "--objective", "binary", "--label", "0")
    third = samebits(*base, "--label", "3")
    assert first.returncode == zero.returncode == third.returncode == 0, third.stderr
    assert digest_of(first) == digest_of(zero) != digest_of(third)


@pytest.mark.parametrize("fmt,label,why", [
    ("tsv-noheader", "label", "a headerless file's label is a 0-based column index, not 'label'"),
    ("tsv-noheader", "-1", "a headerless file's label is a 0-based column index, not '-1'"),
    ("libsvm", "0", "a libsvm file's label is the first token of each line; label '0' does not apply"),
])
def test_a_label_that_cannot_apply_is_refused(binary_copy, fmt, label, why):
    data = binary_copy if fmt == "tsv-noheader" else EX / "lambdarank_rank.train"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--format", fmt, "--label", label)
    assert r.returncode == 2 and "SB_ERR_INVALID_ARGUMENT" in r.stderr and why in r.stderr, r.stderr


# ---- comma lists: several metrics, several ranking positions (issue 21) ----

def log_lines(r):
    return [l for l in r.stderr.splitlines() if l.startswith("[")]


def test_several_metrics_are_all_reported_and_the_model_follows_the_first(tmp_path):
    data = EX / "binary_classification_binary.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    base = ["train", "--model", "gbdt", "--data", str(data), "--valid", str(EX / "binary_classification_binary.test"),
            "--objective", "binary", "n_estimators=3", "eval_period=1"]
    both = samebits(*base, "metric=auc,binary_logloss")
    assert both.returncode == 0, both.stderr
    assert len(log_lines(both)) == 6
    assert [l.split()[2] for l in log_lines(both)[:2]] == ["auc:", "logloss:"], both.stderr
    # the extra metric is reported, never trained on: the same model as the first metric alone
    alone = samebits(*base, "metric=auc")
    assert len(log_lines(alone)) == 3 and digest_of(alone) == digest_of(both)


def test_l1_is_lightgbms_name_for_mae():
    data = EX / "regression_regression.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    base = ["train", "--model", "gbdt", "--data", str(data), "n_estimators=2", "eval_period=1"]
    l1 = samebits(*base, "metric=l1,l2_root")
    mae = samebits(*base, "metric=mae,rmse")
    assert l1.returncode == 0, l1.stderr
    assert log_lines(l1) == log_lines(mae) and "train mae:" in l1.stderr and "train rmse:" in l1.stderr
    # l2 is LightGBM's mean squared error: the square of rmse (float32: within a few ulps)
    sq = samebits(*base, "metric=l2,rmse")
    assert sq.returncode == 0, sq.stderr
    vals = {}
    for line in sq.stderr.splitlines():
        if line.startswith("[2] train "):
            name, v = line[len("[2] train "):].split(": ")
            vals[name] = float(v)
    assert set(vals) == {"l2", "rmse"} and abs(vals["l2"] - vals["rmse"] ** 2) <= 1e-5 * vals["l2"]
    assert samebits(*base, "metric=mse").stderr.count("train l2:") == 2
    bad = samebits(*base, "metric=l1,fair")
    assert bad.returncode == 2 and "metric 'fair' is not supported" in bad.stderr


def test_eval_at_lists_positions_and_never_overrides_a_named_k():
    data = EX / "lambdarank_rank.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    base = ["train", "--model", "gbdt", "--data", str(data), "--objective", "lambdarank", "n_estimators=2",
            "eval_period=1"]
    r = samebits(*base, "metric=ndcg", "eval_at=1,3,5")
    assert r.returncode == 0, r.stderr
    assert [l.split()[2] for l in log_lines(r)[:3]] == ["ndcg@1:", "ndcg@3:", "ndcg@5:"], r.stderr
    # the first position decides the model, as metric=ndcg@1 alone
    assert digest_of(r) == digest_of(samebits(*base, "metric=ndcg@1"))
    for order in (("metric=ndcg@5", "eval_at=3"), ("eval_at=3", "metric=ndcg@5")):
        bad = samebits(*base, *order)
        assert bad.returncode == 2 and "eval_at=3 is taken by no metric" in bad.stderr, bad.stderr
    same = samebits(*base, "metric=ndcg@5", "eval_at=5")
    assert same.returncode == 0 and digest_of(same) == digest_of(samebits(*base, "metric=ndcg@5"))


def test_a_list_value_stays_whole_and_a_bare_word_after_a_space_is_still_refused():
    data = EX / "regression_regression.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    r = samebits("train", "--model", "gbdt", "--data", str(data), "n_estimators=2", "metric=l1,l2,eval_period=0")
    assert r.returncode == 0 and not log_lines(r), r.stderr
    r = samebits("train", "--model", "gbdt", "--data", str(data), "n_estimators=2,5")
    assert r.returncode == 2 and "n_estimators='2,5'" in r.stderr, r.stderr


# ---- LightGBM's config form: samebits config=FILE [key=value ...] (issue 21) ----

import subprocess

from conftest import build_dir


def in_dir(cwd, *args):
    """The CLI run from cwd, as LightGBM's examples are run from their folder."""
    return subprocess.run([str(build_dir("x86_64") / "samebits")] + list(args), capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.fixture
def examples(tmp_path):
    if not (EX / "binary_classification.train.conf").exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    d = tmp_path / "ex"
    shutil.copytree(EX, d)
    for f in d.iterdir():
        f.chmod(0o644)
    return d


BINARY_AS_TRAIN = ["train", "--model", "gbdt", "--data", "binary_classification_binary.train", "--valid",
                   "binary_classification_binary.test", "--objective", "binary", "metric=binary_logloss,auc",
                   "eval_period=1", "n_estimators=10", "learning_rate=0.1", "num_leaves=20", "colsample=0.8",
                   "subsample=0.8", "bagging_freq=5", "min_samples_leaf=50", "min_child_weight=5", "max_bin=255"]


def test_lightgbms_binary_example_trains_from_its_folder(examples):
    r = in_dir(examples, "config=binary_classification.train.conf")
    assert r.returncode == 0, r.stderr
    assert (examples / "LightGBM_model.txt").exists()
    # every key of the file taken with LightGBM's meaning: the model of the same train command
    same = in_dir(examples, *BINARY_AS_TRAIN, "--out", "same.sbm")
    assert digest_of(r) == digest_of(same)
    assert "tree_learner=serial (binary_classification.train.conf line" in r.stderr and "no effect here" in r.stderr
    assert "row weights from binary_classification_binary.train.weight" in r.stderr
    assert "[10] valid logloss:" in r.stderr and "[10] valid auc:" in r.stderr
    assert "[1] valid logloss:" in r.stderr  # metric_freq = 1, LightGBM's default too
    # is_training_metric = true: the training rows' metrics first, as LightGBM logs them
    lines = log_lines(r)
    assert lines[:4] == [l for l in lines[:4] if l.startswith("[1] ")] and \
        [l.split()[1:3] for l in lines[:4]] == [["train", "logloss:"], ["train", "auc:"], ["valid", "logloss:"],
                                                ["valid", "auc:"]], lines[:4]
    off = in_dir(examples, "config=binary_classification.train.conf", "is_training_metric=false", "model_out=off.sbm")
    assert off.returncode == 0 and " train " not in "\n".join(log_lines(off)) and digest_of(off) == digest_of(r)
    d = in_dir(examples, "digest", "LightGBM_model.txt")
    assert d.stdout.strip() == digest_of(r)


def test_lightgbms_predict_config_writes_the_result_file(examples):
    assert in_dir(examples, "config=binary_classification.train.conf").returncode == 0
    (examples / "predict.conf").write_text("task = predict\ndata = binary_classification_binary.test\n"
                                           "input_model= LightGBM_model.txt\n")
    r = in_dir(examples, "config=predict.conf")
    assert r.returncode == 0, r.stderr
    got = (examples / "LightGBM_predict_result.txt").read_text().splitlines()
    assert len(got) == 500 and all(0.0 < float(v) < 1.0 for v in got)
    p = in_dir(examples, "predict", "--model", "LightGBM_model.txt", "--data", "binary_classification_binary.test",
               "--out", "proba.txt", "--proba")
    assert p.returncode == 0 and (examples / "proba.txt").read_text().splitlines() == got
    raw = in_dir(examples, "config=predict.conf", "predict_raw_score=true", "output_result=raw.txt")
    assert raw.returncode == 0 and (examples / "raw.txt").read_text().splitlines() != got


def test_the_command_line_wins_over_the_file_across_aliases(examples):
    r = in_dir(examples, "config=binary_classification.train.conf", "num_iterations=3", "model_out=three.sbm")
    assert r.returncode == 0, r.stderr
    assert "num_trees=10 (binary_classification.train.conf line" in r.stderr
    assert "overridden by the command line's num_iterations=3" in r.stderr
    assert "samebits: 3 trees" in r.stderr and (examples / "three.sbm").exists()
    quiet = in_dir(examples, "config=binary_classification.train.conf", "num_iterations=3", "metric_freq=0",
                   "model_out=quiet.sbm", "output_result=x.txt")
    assert quiet.returncode == 0 and not log_lines(quiet) and digest_of(quiet) == digest_of(r)
    assert "output_result=x.txt (the command line) is a prediction key: training does not use it" in quiet.stderr
    assert not (examples / "LightGBM_model.txt").exists()


@pytest.mark.parametrize("extra,why", [
    (["path_smooth=0.5"], "parameter path_smooth=0.5 (the command line) is not supported here"),
    (["is_unbalance=true", "scale_pos_weight=2"], "is_unbalance=true and scale_pos_weight=2: give one of them"),
    (["objective=regression", "scale_pos_weight=2"], "scale_pos_weight is only for objective=binary"),
    (["categorical_feature=1,x"], "categorical_feature 'x': a feature index in 0..27"),
    (["valid=binary_classification_binary.test,,a.test"], "an empty file name in the list"),
    (["valid=binary_classification_binary.test,a.test"], "a.test"),
    (["num_trees=3", "num_iterations=4"], "parameter num_iterations is given twice"),
    (["task=convert_model"], "task=convert_model is not supported"),
    (["boosting=goss"], "parameter boosting='goss' is not supported: gbdt or dart"),
    (["num_machines=2"], "num_machines=2 (the command line) is not supported here"),
    (["objective=regression_l1"], "objective 'regression_l1' is not supported"),
    (["metric=binary_logloss,auc_mu"], "metric 'auc_mu' is not supported"),
    (["--threads", "2"], "'--threads': LightGBM's form takes key=value pairs only"),
    (["input_model=old.txt"], "sb_model_load: cannot open 'old.txt'"),
])
def test_a_key_that_cannot_apply_is_refused_by_name_and_nothing_is_written(examples, extra, why):
    r = in_dir(examples, "config=binary_classification.train.conf", *extra)
    assert r.returncode == 2 and why in r.stderr, r.stderr
    assert not (examples / "LightGBM_model.txt").exists()


def test_an_unknown_key_in_the_file_is_named_with_its_line(examples):
    (examples / "bad.conf").write_text("task = train\n# a comment\ndata = binary_classification_binary.train\n"
                                       "objective = binary\nnum_tres = 3\n")
    r = in_dir(examples, "config=bad.conf")
    assert r.returncode == 2 and "unknown parameter 'num_tres' (bad.conf line 5)" in r.stderr, r.stderr
    (examples / "twice.conf").write_text("data = binary_classification_binary.train\nnum_trees = 3\n"
                                         "num_boost_round = 4\n")
    r = in_dir(examples, "config=twice.conf")
    assert r.returncode == 2 and "'num_trees' (twice.conf line 2) and 'num_boost_round' (twice.conf line 3)" in r.stderr
    r = in_dir(examples, "config=missing.conf")
    assert r.returncode == 2 and "cannot open config file 'missing.conf'" in r.stderr


def test_bagging_fraction_without_bagging_freq_bags_nothing_as_in_lightgbm(examples):
    base = ["data=regression_regression.train", "num_trees=4", "metric_freq=0"]
    plain = in_dir(examples, *base, "output_model=a.sbm")
    frac = in_dir(examples, *base, "bagging_fraction=0.5", "output_model=b.sbm")
    freq = in_dir(examples, *base, "bagging_fraction=0.5", "bagging_freq=1", "output_model=c.sbm")
    assert plain.returncode == frac.returncode == freq.returncode == 0, frac.stderr
    assert "bagging_fraction=0.5 has no effect without bagging_freq > 0" in frac.stderr
    assert digest_of(plain) == digest_of(frac) != digest_of(freq)


def test_bagging_freq_keeps_a_bag_and_leaves_other_models_as_they_were():
    data = EX / "regression_regression.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    base = ["train", "--model", "gbdt", "--data", str(data), "n_estimators=6", "subsample=0.8", "eval_period=0"]
    one = digest_of(samebits(*base))
    assert digest_of(samebits(*base, "bagging_freq=1")) == one
    five = digest_of(samebits(*base, "bagging_freq=5"))
    assert five != one and digest_of(samebits(*base, "bagging_freq=5", "--threads", "2")) == five
    # without bagging the key changes nothing, the model's bytes included
    assert digest_of(samebits(*base[:-2], "eval_period=0", "bagging_freq=5")) == digest_of(samebits(*base[:-2],
                                                                                                      "eval_period=0"))


def test_lightgbms_lambdarank_example_reports_every_position(examples):
    r = in_dir(examples, "config=lambdarank.train.conf", "num_trees=3")
    assert r.returncode == 0, r.stderr
    assert "query groups from lambdarank_rank.train.query" in r.stderr
    assert "[3] valid ndcg@1:" in r.stderr and "[3] valid ndcg@3:" in r.stderr and "[3] valid ndcg@5:" in r.stderr


def test_lightgbms_multiclass_example_is_refused_by_the_key_it_lacks(examples):
    r = in_dir(examples, "config=multiclass_classification.train.conf")
    assert r.returncode == 2 and "unknown parameter 'auc_mu_weights'" in r.stderr, r.stderr
    conf = (examples / "multiclass_classification.train.conf").read_text().splitlines()
    (examples / "mc.conf").write_text("\n".join(l for l in conf if not l.startswith("auc_mu_weights")) + "\n")
    r = in_dir(examples, "config=mc.conf")
    assert r.returncode == 2 and "metric 'auc_mu' is not supported" in r.stderr, r.stderr
    r = in_dir(examples, "config=mc.conf", "metric=multi_logloss,multi_error", "num_trees=4", "output_model=mc.sbm")
    assert r.returncode == 0 and "[4] valid mlogloss:" in r.stderr and "[4] valid merror:" in r.stderr, r.stderr
    p = in_dir(examples, "task=predict", "data=multiclass_classification_multiclass.test", "input_model=mc.sbm",
               "output_result=mc.txt")
    assert p.returncode == 0, p.stderr
    rows = [l.split("\t") for l in (examples / "mc.txt").read_text().splitlines()]
    assert len(rows) == 500 and all(len(r) == 5 for r in rows)
    assert all(abs(sum(float(v) for v in r) - 1.0) < 1e-5 for r in rows)


def test_a_headed_file_takes_its_label_by_name(examples):
    rows = (examples / "regression_regression.train").read_text().splitlines()[:400]
    head = "\t".join(["y"] + ["f%d" % i for i in range(len(rows[0].split("\t")) - 1)])
    (examples / "h.tsv").write_text("\n".join([head.replace("\t", ",")] + [r.replace("\t", ",") for r in rows]) + "\n")
    base = ["data=h.tsv", "num_trees=2", "metric_freq=0", "min_data_in_leaf=5"]
    ok = in_dir(examples, *base, "header=true", "label_column=name:y", "output_model=h.sbm")
    assert ok.returncode == 0, ok.stderr
    for extra, why in ((["header=true"], "header=true: give the label as label_column=name:COLUMN"),
                       (["label_column=name:y"], "names a column, but the data has no header"),
                       (["header=maybe"], "header='maybe' must be true or false")):
        r = in_dir(examples, *base, *extra)
        assert r.returncode == 2 and why in r.stderr, r.stderr


# ---- forests from the command line (issue 21) ----

import sys


def python_digest(code):
    """The model digest a snippet of the Python package prints (the C API's fit)."""
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'python'); import numpy as np, samebits\n"
                        "d = np.loadtxt(%r, dtype=np.float32)\nX, y = d[:, 1:], d[:, 0]\n" %
                        str(EX / "regression_regression.train") + code], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("model,args,code", [
    ("random_forest", ["objective=regression", "n_estimators=3"],
     "print(samebits.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y).model_digest_)"),
    ("extra_trees", ["objective=regression", "n_estimators=4", "max_depth=6"],
     "print(samebits.ExtraTreesRegressor(n_estimators=4, max_depth=6, random_state=0).fit(X, y).model_digest_)"),
    ("isolation_forest", ["n_estimators=5"],
     "print(samebits.IsolationForest(n_estimators=5, random_state=0).fit(X).model_digest_)"),
])
def test_forests_train_from_the_cli_as_the_library_fits_them(model, args, code, tmp_path):
    if not (EX / "regression_regression.train").exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    out = tmp_path / "m.sbm"
    r = samebits("train", "--model", model, "--data", str(EX / "regression_regression.train"), *args,
                 "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert digest_of(r) == python_digest(code)
    assert digest_of(samebits("train", "--model", model, "--data", str(EX / "regression_regression.train"), *args,
                              "--threads", "2")) == digest_of(r)
    p = samebits("predict", "--model", str(out), "--data", str(EX / "regression_regression.test"), "--out", "-")
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 500, p.stderr


def test_a_classification_forest_reads_the_weights_beside_its_data(binary_copy, tmp_path):
    base = ["train", "--model", "random_forest", "--data", str(binary_copy), "n_estimators=3"]
    plain = samebits(*base, "--out", str(tmp_path / "rf.sbm"))
    assert plain.returncode == 0, plain.stderr
    p = samebits("predict", "--model", str(tmp_path / "rf.sbm"), "--data", str(EX / "binary_classification_binary.test"),
                 "--out", "-", "--proba")
    assert p.returncode == 0 and all(len(l.split(",")) == 2 for l in p.stdout.splitlines())
    shutil.copy(EX / "binary_classification_binary.train.weight", str(binary_copy) + ".weight")
    weighted = samebits(*base)
    assert "row weights from" in weighted.stderr and digest_of(weighted) != digest_of(plain)
    # the isolation forest reads them too: they set each tree's draw of its rows
    iso = samebits("train", "--model", "isolation_forest", "--data", str(binary_copy), "n_estimators=3")
    assert iso.returncode == 0 and "row weights from" in iso.stderr, iso.stderr
    os.remove(str(binary_copy) + ".weight")
    iso_plain = samebits("train", "--model", "isolation_forest", "--data", str(binary_copy), "n_estimators=3")
    assert iso_plain.returncode == 0 and "row weights" not in iso_plain.stderr
    assert digest_of(iso) != digest_of(iso_plain)
    named = samebits("train", "--model", "isolation_forest", "--data", str(binary_copy), "n_estimators=3",
                     "--weight", str(EX / "binary_classification_binary.train.weight"))
    assert named.returncode == 0 and digest_of(named) == digest_of(iso), named.stderr


@pytest.mark.parametrize("args,why", [
    (["--model", "random_forest", "--valid", "x.csv"], "--model random_forest takes none of them"),
    (["--model", "extra_trees", "model=random_forest"], "--model extra_trees takes no model="),
    (["--model", "isolation_forest", "objective=regression"], "takes no objective="),
    (["--model", "random_forest", "objective=ranking"], "forest objective 'ranking'"),
])
def test_forest_arguments_that_cannot_apply_are_refused(binary_copy, args, why):
    r = samebits("train", "--data", str(binary_copy), *args)
    assert r.returncode == 2 and why in r.stderr, r.stderr


# ---- compressed input: gzip read, the others refused by name, no raw bytes in a message (issue 21) ----

import bz2
import gzip
import lzma


def _text_data():
    return (EX / "regression_regression.test").read_bytes() if (EX / "regression_regression.test").exists() \
        else b"1\t2\t3\n0\t1\t2\n1\t3\t1\n0\t2\t2\n"


@pytest.mark.parametrize("kind,pack", [("bzip2", bz2.compress), ("xz", lzma.compress)])
def test_compressed_data_is_refused_by_name(tmp_path, kind, pack):
    text = _text_data()
    data = tmp_path / "d.train.gz"
    data.write_bytes(pack(text))
    for args in (["train", "--model", "gbdt", "--data", str(data)],
                 ["train", "--model", "gbdt", "--data", str(data), "--format", "tsv-noheader"]):
        r = samebits(*args)
        assert r.returncode == 2, r.stderr
        assert f"{data}: {kind}-compressed data: samebits reads the plain text" in r.stderr, r.stderr
        assert r.stderr.isprintable() or all(c.isprintable() or c == "\n" for c in r.stderr)
    plain = tmp_path / "d.train"
    plain.write_bytes(text)
    (tmp_path / "d.train.weight").write_bytes(pack(b"1\n" * text.count(b"\n")))
    r = samebits("train", "--model", "gbdt", "--data", str(plain), "n_estimators=2")
    assert r.returncode == 2 and f"d.train.weight: {kind}-compressed data" in r.stderr, r.stderr


def _digest(r):
    assert r.returncode == 0, r.stderr
    return [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "digest" in ln]


def test_gzip_data_is_read_as_the_plain_text(tmp_path):
    text = _text_data()
    plain, packed, two = tmp_path / "p.train", tmp_path / "g.train", tmp_path / "two.train"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    half = text.index(b"\n", len(text) // 2) + 1  # two gzip members, split at a line
    two.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    (tmp_path / "g.train.weight").write_bytes(gzip.compress(b"1\n" * text.count(b"\n")))
    (tmp_path / "p.train.weight").write_bytes(b"1\n" * text.count(b"\n"))
    base = ["train", "--model", "gbdt", "--format", "tsv-noheader", "n_estimators=3"]
    want = _digest(samebits(*base, "--data", str(plain)))
    assert want and _digest(samebits(*base, "--data", str(packed))) == want
    (tmp_path / "two.train.weight").write_bytes(b"1\n" * text.count(b"\n"))
    assert _digest(samebits(*base, "--data", str(two))) == want
    # a truncated member, bytes that are not deflate data, a non-member tail: named, printable, exit 2
    for name, blob, why in (("cut", gzip.compress(text)[: len(gzip.compress(text)) // 2], "ends inside a member"),
                            ("bad", gzip.compress(text)[:12] + bytes(range(256)) * 8, "corrupt gzip data"),
                            ("tail", gzip.compress(text) + b"junk after it", "not another gzip member")):
        f = tmp_path / (name + ".train")
        f.write_bytes(blob)
        r = samebits(*base, "--data", str(f))
        assert r.returncode == 2 and why in r.stderr, r.stderr
        assert all(c.isprintable() or c == "\n" for c in r.stderr)
    # a gzip of xz data is refused as xz
    f = tmp_path / "xz.train"
    f.write_bytes(gzip.compress(lzma.compress(text)))
    r = samebits(*base, "--data", str(f))
    assert r.returncode == 2 and "xz-compressed data" in r.stderr, r.stderr


def test_a_text_line_that_begins_like_bzip2_is_still_text(tmp_path):
    f = tmp_path / "bzh.csv"
    f.write_text("BZh9,y\n1,0\n2,1\n3,0\n4,1\n")
    r = samebits("train", "--model", "gbdt", "--data", str(f), "--label", "y", "n_estimators=1", "min_samples_leaf=1")
    assert r.returncode == 0, r.stderr


def test_the_config_form_has_help_and_bad_parameters_are_refused_before_the_data_is_read(tmp_path):
    for args in (["config=train.conf", "--help"], ["task=train", "-h"], ["help", "config=FILE"]):
        r = samebits(*args)
        assert r.returncode == 0 and "  config=FILE [key=value ...]" in r.stdout, r.stdout + r.stderr
    # the parameters are checked first: the missing file is never reached
    r = samebits("train", "--model", "gbdt", "--data", str(tmp_path / "absent.csv"), "num_trees=abc")
    assert r.returncode == 2 and "num_trees='abc'" in r.stderr and "absent.csv" not in r.stderr, r.stderr
    r = in_dir(tmp_path, "data=absent.csv", "metric=ndcg@5", "eval_at=3", "objective=lambdarank")
    assert r.returncode == 2 and "eval_at=3 is taken by no metric" in r.stderr, r.stderr
    assert not (tmp_path / "LightGBM_model.txt").exists()


def test_early_stopping_with_several_metrics_watches_every_one_by_default(examples):
    """LightGBM's first_metric_only: false by default (every metric watched, the
    library's first_metric_only=false), true leaves the first metric alone to
    decide (the library's default): both run, each as its log says."""
    base = ["config=binary_classification.train.conf", "num_trees=40", "early_stopping_round=2", "learning_rate=0.9",
            "metric=binary_logloss,binary_error"]
    every = in_dir(examples, *base, "model_out=es.sbm")
    assert every.returncode == 0, every.stderr
    first = in_dir(examples, *base, "first_metric_only=true", "model_out=es1.sbm")
    assert first.returncode == 0, first.stderr
    bad = in_dir(examples, *base, "first_metric_only=maybe", "model_out=es2.sbm")
    assert bad.returncode == 2 and "must be true or false" in bad.stderr
    for r in (every, first):
        assert "early stopping: best iteration" in r.stderr or "[40]" in r.stderr, r.stderr


def test_lightgbm_features_at_their_off_defaults_are_accepted_and_change_nothing(examples):
    base = ["config=binary_classification.train.conf", "num_trees=3", "metric_freq=0"]
    plain = in_dir(examples, *base, "model_out=a.sbm")
    off = in_dir(examples, *base, "lambda_l1=0.0", "scale_pos_weight=1",
                 "is_unbalance=false", "max_delta_step=0", "extra_trees=false", "linear_tree=false", "path_smooth=0",
                 "model_out=b.sbm")
    assert off.returncode == 0, off.stderr
    assert digest_of(off) == digest_of(plain)


@pytest.mark.parametrize("objective,extra", [("huber", ["alpha=0.5"]), ("quantile", ["alpha=0.3"]),
                                             ("poisson", ["poisson_max_delta_step=0.5"]), ("tweedie",
                                             ["tweedie_variance_power=1.2"])])
def test_lightgbm_regression_objectives_and_lambda_l1(examples, objective, extra):
    """objective=, alpha=, tweedie_variance_power=, poisson_max_delta_step= and
    lambda_l1= pass through the LightGBM form: the objective's own metric is
    logged, lambda_l1 > 0 changes the model and lambda_l1=0 does not."""
    base = ["config=regression.train.conf", "num_trees=4", "metric=" + objective, "objective=" + objective] + extra
    plain = in_dir(examples, *base, "model_out=a.sbm")
    zero = in_dir(examples, *base, "lambda_l1=0", "model_out=b.sbm")
    l1 = in_dir(examples, *base, "lambda_l1=2.5", "model_out=c.sbm")
    for r in (plain, zero, l1):
        assert r.returncode == 0, r.stderr
    assert "valid %s:" % objective in plain.stderr, plain.stderr
    assert digest_of(zero) == digest_of(plain) and digest_of(l1) != digest_of(plain)


def test_a_headerless_prediction_file_without_its_label_column(tmp_path):
    """LightGBM's predictor reads a headerless file with exactly the model's
    features as features only, and one with a column more as label first:
    both give the same predictions."""
    train = tmp_path / "t.tsv"
    rows = [(i % 3, i * 0.5, (i * 7) % 11, (i * 3) % 5) for i in range(60)]
    train.write_text("".join("%d\t%g\t%d\t%d\n" % r for r in rows))
    model = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(train), "--format", "tsv-noheader", "n_estimators=3",
                 "min_samples_leaf=2", "--out", str(model))
    assert r.returncode == 0, r.stderr
    feats = tmp_path / "f.tsv"
    feats.write_text("".join("%g\t%d\t%d\n" % r[1:] for r in rows))
    outs = []
    for data in (train, feats):
        out = tmp_path / (data.stem + ".out")
        r = samebits("predict", "--model", str(model), "--data", str(data), "--format", "tsv-noheader", "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(out.read_text())
    assert outs[0] == outs[1] and outs[0].count("\n") == 60
    narrow = tmp_path / "n.tsv"
    narrow.write_text("".join("%g\t%d\n" % r[1:3] for r in rows))
    r = samebits("predict", "--model", str(model), "--data", str(narrow), "--format", "tsv-noheader", "--out",
                 str(tmp_path / "n.out"))
    assert r.returncode == 2 and "feature-count mismatch" in r.stderr, r.stderr


def _headerless(tmp_path):
    """A headerless file: label, then features f0..f3 where f1 holds weights and f3 a junk id."""
    rows = []
    for i in range(120):
        rows.append((i % 2, (i * 7) % 13 * 0.5, 1 + (i % 3), (i * 5) % 11, 1000 + i))
    f = tmp_path / "w.tsv"
    f.write_text("".join("%d\t%g\t%d\t%d\t%d\n" % r for r in rows))
    return f, rows


def test_weight_and_ignore_columns_as_lightgbm_names_them(tmp_path):
    """weight_column=1 (the label not counted) is the second feature as row weights,
    ignore_column=3 drops the fourth: the same model as the features alone with a
    .weight file beside them."""
    f, rows = _headerless(tmp_path)
    base = ["objective=binary", "num_trees=3", "min_data_in_leaf=2", "metric_freq=0"]
    cols = in_dir(tmp_path, "task=train", "data=w.tsv", "weight_column=1", "ignore_column=3", "model_out=a.sbm", *base)
    assert cols.returncode == 0, cols.stderr
    plain = tmp_path / "p.tsv"
    plain.write_text("".join("%d\t%g\t%d\n" % (r[0], r[1], r[3]) for r in rows))
    (tmp_path / "p.tsv.weight").write_text("".join("%d\n" % r[2] for r in rows))
    ref = in_dir(tmp_path, "task=train", "data=p.tsv", "model_out=b.sbm", *base)
    assert ref.returncode == 0, ref.stderr
    # the same trees (the feature names differ: f0, f2 where the columns were left out, f0, f1 here)
    outs = []
    for m in ("a.sbm", "b.sbm"):
        r = in_dir(tmp_path, "task=predict", "data=p.tsv", "input_model=" + m, "output_result=" + m + ".out",
                   "predict_raw_score=true")
        assert r.returncode == 0, r.stderr
        outs.append((tmp_path / (m + ".out")).read_text())
    assert outs[0] == outs[1] and len(set(outs[0].split())) > 2
    # by name on the samebits command line: the same, and the index form there too
    hdr = tmp_path / "h.csv"
    hdr.write_text("y,a,w,b,id\n" + "".join("%d,%g,%d,%d,%d\n" % r for r in rows))
    byname = samebits("train", "--model", "gbdt", "--data", str(hdr), "--label", "y", "--weight-column", "w",
                      "--ignore-column", "id", "objective=binary", "n_estimators=3", "min_samples_leaf=2")
    byindex = samebits("train", "--model", "gbdt", "--data", str(hdr), "--label", "y", "--weight-column", "#1",
                       "--ignore-column", "#3", "objective=binary", "n_estimators=3", "min_samples_leaf=2")
    assert digest_of(byname) == digest_of(byindex)


@pytest.mark.parametrize("args, why", [
    (["weight_column=9"], "feature 9: the data has 4 feature columns"),
    (["weight_column=0,1"], "one index"),
    (["ignore_column=x"], "0-based column indices"),
    (["weight_column=name:w"], "no weight column \"w\""),
    (["categorical_feature=0", "weight_column=1"], "feature 0 (f0), row 1: 3.5 is not a category code"),
    (["categorical_feature=name:nope"], "categorical_feature names 'nope'"),
])
def test_column_keys_refuse_by_name(tmp_path, args, why):
    _headerless(tmp_path)
    r = in_dir(tmp_path, "task=train", "data=w.tsv", "objective=binary", "num_trees=1", "model_out=x.sbm", *args)
    assert r.returncode == 2 and why in r.stderr, r.stderr
    assert not (tmp_path / "x.sbm").exists()


def test_continued_training_from_a_config_equals_the_whole_fit(examples):
    """LightGBM's input_model with task=train continues the model: 4 then 6
    iterations give the 10-iteration model's bytes (bagging and column draws
    keyed by the iteration); --init-model on samebits' own command line too."""
    base = ["config=binary_classification.train.conf", "metric_freq=0", "bagging_fraction=0.8", "bagging_freq=1",
            "feature_fraction=0.7"]
    full = in_dir(examples, *base, "num_trees=10", "model_out=full.sbm")
    half = in_dir(examples, *base, "num_trees=4", "model_out=half.sbm")
    cont = in_dir(examples, *base, "num_trees=6", "input_model=half.sbm", "model_out=cont.sbm")
    for r in (full, half, cont):
        assert r.returncode == 0, r.stderr
    assert (examples / "full.sbm").read_bytes() == (examples / "cont.sbm").read_bytes()
    assert (examples / "half.sbm").read_bytes() != (examples / "full.sbm").read_bytes()
    bad = in_dir(examples, *base, "num_trees=2", "input_model=nothere.sbm", "model_out=x.sbm")
    assert bad.returncode == 2 and "nothere.sbm" in bad.stderr and not (examples / "x.sbm").exists()


# ---- issue 21: several validation sets and class weights ----------------------------


def test_several_validation_files_as_lightgbm_lists_them(examples):
    """valid=a,b: every file is a validation set, logged by its name (valid_0,
    valid_1), and the model is the one of a single set (validation data never
    changes the trees)."""
    base = ["config=binary_classification.train.conf", "num_trees=4", "is_training_metric=false"]
    two = in_dir(examples, *base, "valid=binary_classification_binary.test,binary_classification_binary.train",
                 "model_out=two.sbm")
    one = in_dir(examples, *base, "model_out=one.sbm")
    assert two.returncode == 0 and one.returncode == 0, two.stderr + one.stderr
    assert digest_of(two) == digest_of(one)
    lines = log_lines(two)
    assert "[4] valid_0 logloss:" in two.stderr and "[4] valid_1 auc:" in two.stderr, two.stderr
    assert [l.split()[1] for l in lines[:4]] == ["valid_0", "valid_0", "valid_1", "valid_1"], lines
    # a single set keeps the log it always had
    assert "[4] valid logloss:" in one.stderr and "valid_0" not in one.stderr


def test_several_valid_flags_and_early_stopping_on_any_set(tmp_path):
    data = EX / "regression_regression.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    rows = data.read_text().splitlines()
    flipped = tmp_path / "flipped.tsv"  # the labels negated: its l2 worsens from the first trees
    flipped.write_text("".join("%s\t%s\n" % (-float(r.split("\t", 1)[0]) + 0.0, r.split("\t", 1)[1]) for r in rows))
    base = ["train", "--model", "gbdt", "--data", str(data), "--format", "tsv-noheader", "n_estimators=40",
            "eval_period=1", "early_stopping_rounds=3", "learning_rate=0.3"]
    r = samebits(*base, "--valid", str(EX / "regression_regression.test"), "--valid", str(flipped))
    assert r.returncode == 0, r.stderr
    assert "early stopping: best iteration" in r.stderr and "valid_1's rmse" in r.stderr, r.stderr
    alone = samebits(*base, "--valid", str(EX / "regression_regression.test"))
    assert alone.returncode == 0, alone.stderr
    last = max(int(l[1:l.index("]")]) for l in log_lines(r))
    assert last < max(int(l[1:l.index("]")]) for l in log_lines(alone))  # the second set stopped it


def test_a_validation_file_with_other_columns_is_refused_by_name(tmp_path):
    data = EX / "regression_regression.train"
    if not data.exists():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    short = tmp_path / "short.tsv"
    short.write_text("".join("\t".join(r.split("\t")[:5]) + "\n" for r in data.read_text().splitlines()[:50]))
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--format", "tsv-noheader", "n_estimators=2",
                 "--valid", str(EX / "regression_regression.test"), "--valid", str(short), "--out",
                 str(tmp_path / "m.sbm"))
    assert r.returncode == 2 and "validation set 'valid_1' has 4 features, training data 28" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()


def test_scale_pos_weight_and_is_unbalance_are_real(examples):
    base = ["config=binary_classification.train.conf", "num_trees=3", "metric_freq=0"]
    plain = in_dir(examples, *base, "model_out=a.sbm")
    spw = in_dir(examples, *base, "scale_pos_weight=3", "model_out=b.sbm")
    unb = in_dir(examples, *base, "is_unbalance=true", "model_out=c.sbm")
    assert plain.returncode == spw.returncode == unb.returncode == 0, spw.stderr + unb.stderr
    assert len({digest_of(plain), digest_of(spw), digest_of(unb)}) == 3
    # the model's parameter text names them (only when set)
    assert b"scale_pos_weight=3" in (examples / "b.sbm").read_bytes()
    assert b"is_unbalance=true" in (examples / "c.sbm").read_bytes()
    assert b"scale_pos_weight" not in (examples / "a.sbm").read_bytes()


def test_categorical_feature_as_lightgbm_numbers_it(tmp_path):
    """categorical_feature=3 (the label not counted) beside weight_column=1 and
    ignore_column=2: the fourth column is categorical though two columns before
    it leave the features, the same model as naming it, and a model whose dump
    shows category sets on it."""
    rows = []
    for i in range(400):
        c = (i * 7) % 9
        rows.append((int(c in (1, 4, 7)) ^ int(i % 13 == 0), (i * 3) % 17 * 0.25, 1 + i % 3, 1000 + i, c))
    (tmp_path / "c.tsv").write_text("".join("%d\t%g\t%d\t%d\t%d\n" % r for r in rows))
    base = ["task=train", "data=c.tsv", "objective=binary", "num_trees=3", "min_data_in_leaf=5",
            "min_data_per_group=5", "metric_freq=0", "weight_column=1", "ignore_column=2"]
    a = in_dir(tmp_path, *base, "categorical_feature=3", "model_out=a.sbm")
    b = in_dir(tmp_path, *base, "categorical_feature=name:f3", "model_out=b.sbm")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert digest_of(a) == digest_of(b)
    d = samebits("dump", str(tmp_path / "a.sbm"), "--format", "text")
    assert d.returncode == 0 and "f3 (feature 1) in {" in d.stdout, d.stdout[:2000]


def test_histogram_layout_keys_change_speed_only(binary_copy, tmp_path):
    """force_row_wise / force_col_wise (LightGBM's names) pick the CPU histograms'
    layout: the model is the same bytes either way and without them; both at once,
    or either with a device, is refused by name before any training."""
    base = ["train", "--model", "gbdt", "--objective", "binary", "n_estimators=4", "eval_period=0",
            "--data", str(binary_copy)]
    runs = {}
    for name, extra in (("auto", []), ("rows", ["force_row_wise=true"]), ("cols", ["force_col_wise=true"])):
        out = tmp_path / (name + ".sbm")
        r = samebits(*base, *extra, "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert "no effect" not in r.stderr, r.stderr
        runs[name] = out.read_bytes()
    assert runs["auto"] == runs["rows"] == runs["cols"]
    both = samebits(*base, "force_row_wise=true", "force_col_wise=true", "--out", str(tmp_path / "x.sbm"))
    assert both.returncode != 0 and "force_row_wise=true and force_col_wise=true" in both.stderr
    dev = samebits(*base, "force_row_wise=true", "device=cpu-batched", "--out", str(tmp_path / "y.sbm"))
    assert dev.returncode != 0 and "force_row_wise=true chooses the CPU histograms' layout" in dev.stderr
    assert not (tmp_path / "x.sbm").exists() and not (tmp_path / "y.sbm").exists()
