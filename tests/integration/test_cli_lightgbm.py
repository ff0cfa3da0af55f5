"""The command line as a LightGBM user meets it (issue 21, first part): --help on
every command, DATA.weight beside the data read as LightGBM reads it, and a
--label that is honoured or refused by name, never ignored."""
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
    l1 = samebits(*base, "metric=l1,l2")
    mae = samebits(*base, "metric=mae,rmse")
    assert l1.returncode == 0, l1.stderr
    assert log_lines(l1) == log_lines(mae) and "train mae:" in l1.stderr and "train rmse:" in l1.stderr
    bad = samebits(*base, "metric=l1,huber")
    assert bad.returncode == 2 and "metric 'huber' is not supported" in bad.stderr


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
