"""The data and model readers through the CLI, as an adversarial user finds
them (issue 17): a model without feature names, prediction columns mapped by
name, query and weight files read as records, and refusals that arrive when
the data is read rather than after training (docs/io.md, docs/robustness.md).
Each case reproduces what the code of 2026-11-30 got wrong."""
import hashlib
import struct
import time

import pytest

from conftest import run_bin, samebits


def _rows(n, seed=1):
    """n rows of three features a, b, c and a label y (exact decimals)."""
    out = []
    for i in range(n):
        a, b, c = (i * 7 + seed) % 11, (i * 5 + 3 * seed) % 13, (i * 3) % 7
        out.append((a, b, c, 3 * a - b + (c * c) / 4))
    return out


def _write(path, header, rows, order):
    cols = header.split(",")
    with open(path, "w") as f:
        f.write(",".join(cols[k] for k in order) + "\n")
        for r in rows:
            f.write(",".join(repr(r[k]) for k in order) + "\n")
    return path


@pytest.fixture
def model_abc(tmp_path):
    data = _write(tmp_path / "train.csv", "a,b,c,y", _rows(200), (0, 1, 2, 3))
    model = tmp_path / "m.sbm"
    r = samebits("train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(model),
                 "n_estimators=8", "max_depth=3")
    assert r.returncode == 0, r.stderr
    return model


def _predict(model, data, out):
    return samebits("predict", "--model", str(model), "--data", str(data), "--out", str(out))


def _strip_names(src, dst):
    """dst: the version-2 model file src with has_feature_names 0 and no names
    (valid by docs/model-format.md), its length and digest recomputed."""
    b = src.read_bytes()
    assert b[:8] == b"SBMODEL\0" and struct.unpack_from("<I", b, 8)[0] == 2
    p = 20
    p += 4 + struct.unpack_from("<I", b, p)[0]          # profile
    p += 4                                                 # family
    p += 4                                                 # numeric_mode
    nf = struct.unpack_from("<i", b, p)[0]
    p += 4
    p += 4 + struct.unpack_from("<I", b, p)[0]          # params
    assert b[p] == 1
    q = p + 1
    for _ in range(nf):
        q += 4 + struct.unpack_from("<I", b, q)[0]
    body = bytearray(b[:p] + b"\0" + b[q:-32])
    struct.pack_into("<Q", body, 12, len(body) + 32)
    dst.write_bytes(bytes(body) + hashlib.sha256(body).digest())
    return dst


def test_model_without_feature_names_predicts_by_position_and_refuses_other_widths(tmp_path, model_abc):
    """has_feature_names = 0 used to SIGSEGV in predict when the data's width
    differed (feature_names[f] read through NULL)."""
    nameless = _strip_names(model_abc, tmp_path / "nameless.sbm")
    r = samebits("digest", str(nameless))
    assert r.returncode == 0, r.stderr
    rows = _rows(50, seed=2)
    same = _write(tmp_path / "abc.csv", "a,b,c,y", rows, (0, 1, 2))
    renamed = _write(tmp_path / "pqr.csv", "p,q,r,y", rows, (0, 1, 2))
    for data, name in ((same, "1.csv"), (renamed, "2.csv")):
        r = _predict(nameless, data, tmp_path / name)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "1.csv").read_text() == (tmp_path / "2.csv").read_text()
    r = _predict(model_abc, same, tmp_path / "named.csv")
    assert r.returncode == 0 and (tmp_path / "named.csv").read_text() == (tmp_path / "1.csv").read_text()
    for order in ((0, 1, 2, 3), (0, 1)):
        data = _write(tmp_path / "w.csv", "a,b,c,y", rows, order)
        r = _predict(nameless, data, tmp_path / "w.out")
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "SB_ERR_INVALID_INPUT" in r.stderr and "feature-count mismatch" in r.stderr
        assert f"has {len(order)} columns, the model 3 features (and no feature names" in r.stderr
        assert not (tmp_path / "w.out").exists()


def test_prediction_maps_columns_by_name(tmp_path, model_abc):
    """A model trained on a,b,c predicted silently on a file headed c,b,a
    (most predictions wrong): with names on both sides, columns go by name."""
    rows = _rows(200, seed=3)
    want = tmp_path / "abc.out"
    assert _predict(model_abc, _write(tmp_path / "abc.csv", "a,b,c,y", rows, (0, 1, 2)), want).returncode == 0
    for k, order in enumerate(((2, 1, 0), (1, 2, 0), (3, 2, 0, 1))):  # reordered; with the label
        got = tmp_path / f"o{k}.out"
        r = _predict(model_abc, _write(tmp_path / f"o{k}.csv", "a,b,c,y", rows, order), got)
        assert r.returncode == 0, r.stderr
        assert got.read_text() == want.read_text(), order
    # A feature of the model the header lacks: refused by its name.
    bad = tmp_path / "cxa.csv"
    bad.write_text("c,x,a\n1,2,3\n")
    r = _predict(model_abc, bad, tmp_path / "bad.out")
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr
    assert "feature 1 'b' is not among the 3 columns" in r.stderr
    assert not (tmp_path / "bad.out").exists()


def _ranking_data(tmp_path, n=200):
    lines = ["a,b,y"] + [f"{i % 7},{(i * 3) % 5},{i % 3}" for i in range(n)]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    return tmp_path / "r.csv"


def _train_digest(*args):
    # A bounded run: the old reader never returned on /dev/zero.
    r = run_bin("x86_64", "samebits", ["train", "--model", "gbdt", "--label", "y", "n_estimators=3", *args],
                timeout=30)
    return r, (r.stdout.split("model digest: ")[-1].strip() if r.returncode == 0 else None)


def test_query_file_long_line_is_one_query(tmp_path):
    """A 128-byte line was read as two queries (19 lines gave 20 queries)."""
    data = _ranking_data(tmp_path)
    plain = tmp_path / "plain.query"
    plain.write_text("10\n" * 17 + "11\n19\n")
    padded = tmp_path / "padded.query"
    padded.write_text("10\n" * 17 + "11\n" + "0" * 126 + "19\n")
    r1, d1 = _train_digest("--data", str(data), "--query", str(plain), "objective=lambdarank")
    r2, d2 = _train_digest("--data", str(data), "--query", str(padded), "objective=lambdarank")
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    assert d1 == d2


def test_weight_file_long_line_is_one_weight(tmp_path):
    """199 lines, one of 257 bytes, were read as 200 weights and accepted."""
    data = _ranking_data(tmp_path)
    w = tmp_path / "w.weight"
    w.write_text("1\n" * 198 + "0" * 255 + "1\n")
    r, _ = _train_digest("--data", str(data), "--weight", str(w))
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr
    assert "has 199 weights for 200 data rows" in r.stderr
    w.write_text("1\n" * 199 + "0" * 255 + "1\n")
    r, d = _train_digest("--data", str(data), "--weight", str(w))
    ones = tmp_path / "ones.weight"
    ones.write_text("1\n" * 200)
    r1, d1 = _train_digest("--data", str(data), "--weight", str(ones))
    assert r.returncode == 0 and r1.returncode == 0 and d == d1, r.stderr + r1.stderr
    for text, needle in (("1\n" * 199 + "-1\n", "line 200: weight -1"), ("1\n" * 201, "line 201: more weights"),
                         ("1\n1\x002\n", "NUL byte")):
        w.write_text(text)
        r, _ = _train_digest("--data", str(data), "--weight", str(w))
        assert r.returncode == 2 and needle in r.stderr, r.stderr


@pytest.mark.parametrize("option", ["--query", "--weight"])
def test_dev_zero_as_query_or_weight_file_returns_at_once(tmp_path, option):
    """`--query /dev/zero` never returned (fgets on NUL lines, forever)."""
    data = _ranking_data(tmp_path)
    t0 = time.monotonic()
    r, _ = _train_digest("--data", str(data), option, "/dev/zero", "objective=lambdarank")
    assert time.monotonic() - t0 < 10
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr and "/dev/zero: line 1: a NUL byte" in r.stderr


def _csv_bytes(path, header: bytes, n=300):
    path.write_bytes(header + b"\n" + b"".join(b"%d,%d\n" % (i % 7, i % 3) for i in range(n)))
    return path


@pytest.mark.parametrize("case", ["long-name", "latin1-name", "label-only", "idx-overflow"])
def test_refused_when_read_not_after_training(tmp_path, case):
    """These were refused only after the whole training run, by sb_model_digest.
    With 100,000 rounds asked, the refusal must still come at once, naming the
    real cause."""
    if case == "long-name":
        data, status, needle = _csv_bytes(tmp_path / "d.csv", b"a" * (10 << 20) + b",y"), "SB_ERR_LIMIT", \
            "line 1, column 1: the name of feature 0 is 10485760 bytes, more than the limit of 65536"
    elif case == "latin1-name":
        data, status, needle = _csv_bytes(tmp_path / "d.csv", b"h\xf6he,y"), "SB_ERR_INVALID_INPUT", \
            "line 1, column 1: the name of feature 0 is not valid UTF-8"
    elif case == "label-only":
        data = tmp_path / "d.csv"
        data.write_text("y\n" + "1\n2\n" * 100)
        status, needle = "SB_ERR_INVALID_INPUT", "no feature column: the only column is the label (\"y\")"
    else:
        data = tmp_path / "t10k-images-idx3-ubyte"
        data.write_bytes(b"\0\0\x08\x03" + b"\xff" * 12)
        status, needle = "SB_ERR_LIMIT", "images of 4294967295 x 4294967295 pixels are outside the limits"
    t0 = time.monotonic()
    label = [] if case == "idx-overflow" else ["--label", "y"]  # an idx file takes no --label
    r = run_bin("x86_64", "samebits", ["train", "--model", "gbdt", "--data", str(data)] + label +
                ["n_estimators=100000", "--out", str(tmp_path / "m.sbm")], timeout=60)
    assert time.monotonic() - t0 < 10
    assert r.returncode == 2 and status in r.stderr and needle in r.stderr, r.stderr[-2000:]
    assert "sb_model_digest" not in r.stderr and "training on" not in r.stderr
    assert not (tmp_path / "m.sbm").exists()
