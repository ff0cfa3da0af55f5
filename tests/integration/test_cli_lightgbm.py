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
