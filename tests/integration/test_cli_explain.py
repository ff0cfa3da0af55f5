"""The CLI's explanations (docs/explain.md): `predict --leaf|--contrib`,
LightGBM's `predict_leaf_index` and `predict_contrib`, `dump` and
`importance`. Every check compares with an independent reading: the leaves'
values from the dump re-add to the raw margins' bits, the contributions add
up to the raw margins, the importances are recounted from the dump."""
import json
import random
import struct

import pytest

from conftest import samebits


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _csv(path, n=300, seed=3):
    rnd = random.Random(seed)
    lines = ["a,b,c,d,y"]
    for _ in range(n):
        a, b, c, d = (round(rnd.random() * 10, 3) for _ in range(4))
        t = a * 0.7 - b * 0.4 + (2 if c > 5 else 0)
        lines.append(f"{a},{'' if rnd.random() < 0.05 else b},{c},{d},{0 if t < 0 else 1 if t < 3 else 2}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _train(tmp_path, model, *args):
    data = _csv(tmp_path / "d.csv")
    out = tmp_path / f"{model}.sbm"
    r = samebits("train", "--model", model, "--data", str(data), "--label", "y", "--out", str(out), "--threads", "1",
                 *args)
    assert r.returncode == 0, r.stderr
    return data, out


def _values(path):
    return [[float(v) for v in ln.split(",")] for ln in path.read_text().splitlines()]


CASES = [("gbdt", ["objective=multiclass", "n_estimators=4", "num_leaves=6", "eval_period=0"]),
         ("gbdt", ["objective=regression", "n_estimators=5", "num_leaves=8", "eval_period=0"]),
         ("random_forest", ["objective=classification", "n_estimators=4", "max_depth=5"]),
         ("isolation_forest", ["n_estimators=6", "max_samples=64"])]


@pytest.mark.parametrize("model,args", CASES)
def test_leaf_and_contrib_agree_with_the_margins(tmp_path, model, args):
    data, m = _train(tmp_path, model, *args)
    outs = {}
    for flag in ("--leaf", "--contrib", "--raw"):
        for th in ("1", "2", "7"):
            p = tmp_path / f"p{flag}{th}.csv"
            r = samebits("predict", "--model", str(m), "--data", str(data), "--out", str(p), flag, "--threads", th)
            assert r.returncode == 0, r.stderr
            outs.setdefault(flag, p.read_bytes())
            assert p.read_bytes() == outs[flag], (flag, th)  # the same bytes at 1, 2 and 7 threads
        p = tmp_path / f"p{flag}cl.csv"
        r = samebits("predict", "--model", str(m), "--data", str(data), "--out", str(p), flag, "device=opencl")
        if r.returncode == 0:
            assert p.read_bytes() == outs[flag], flag  # PoCL: the host's bytes
        else:
            assert "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr
    d = tmp_path / "dump.json"
    r = samebits("dump", str(m), "--out", str(d))
    assert r.returncode == 0, r.stderr
    dump = json.loads(d.read_text())
    K, F, trees = dump["num_class"], dump["num_features"], dump["trees"]
    leaves = [[int(v) for v in row] for row in _values(tmp_path / "p--leaf1.csv")]
    raw = [[f32(v) for v in row] for row in _values(tmp_path / "p--raw1.csv")]
    contrib = _values(tmp_path / "p--contrib1.csv")
    for i, row in enumerate(leaves):
        assert len(row) == len(trees)
        margins = [f32(b) for b in dump["base_score"]]
        for t, li in enumerate(row):
            value = [n["leaf_value"] for n in trees[t]["nodes"] if n.get("leaf_index") == li]
            assert len(value) == 1
            margins[t % K] = f32(margins[t % K] + f32(value[0]))
        assert margins == raw[i]  # the leaves' values, re-added in tree order: the margins' bits
        assert len(contrib[i]) == K * (F + 1)
        scale = sum(max(abs(n["leaf_value"]) for n in tr["nodes"] if "leaf_value" in n) for tr in trees) + 1
        for k in range(K):
            s = sum(contrib[i][k * (F + 1):(k + 1) * (F + 1)])
            assert abs(s - raw[i][k]) <= scale * 2 ** -18, (i, k, s, raw[i][k])


def test_lightgbm_keys_and_dump_text_and_importance(tmp_path):
    data, m = _train(tmp_path, "gbdt", "objective=multiclass", "n_estimators=3", "num_leaves=5", "eval_period=0")
    tsv = tmp_path / "d.tsv"
    rows = [ln.split(",") for ln in data.read_text().splitlines()[1:]]
    tsv.write_text("".join("\t".join([r[4]] + r[:4]) + "\n" for r in rows))
    for key, flag in (("predict_leaf_index", "--leaf"), ("predict_contrib", "--contrib")):
        out = tmp_path / f"{key}.txt"
        r = samebits(f"task=predict", f"data={tsv}", f"input_model={m}", f"{key}=true", f"output_result={out}")
        assert r.returncode == 0, r.stderr
        p = tmp_path / f"{key}.csv"
        assert samebits("predict", "--model", str(m), "--data", str(data), "--out", str(p), flag).returncode == 0
        assert out.read_text().replace("\t", ",") == p.read_text()
    bad = tmp_path / "bad.txt"
    r = samebits("task=predict", f"data={tsv}", f"input_model={m}", "predict_leaf_index=true", "predict_contrib=true",
                 f"output_result={bad}")
    assert r.returncode == 2 and "set one" in r.stderr and not bad.exists()
    r = samebits("task=predict", f"data={tsv}", f"input_model={m}", "predict_contrib=maybe", f"output_result={bad}")
    assert r.returncode == 2 and "predict_contrib='maybe'" in r.stderr and not bad.exists()
    # text dump: one line a node, the same numbers as the JSON
    dump = json.loads(samebits("dump", str(m)).stdout)
    text = samebits("dump", str(m), "--format", "text").stdout
    nodes = [ln for ln in text.splitlines() if ln.startswith("  node ")]
    assert len(nodes) == sum(len(t["nodes"]) for t in dump["trees"])
    assert "split 0: a (feature 0)" in text or "split 0: " in text
    # importance recounted from the dump: splits per feature, gains summed in float32 in tree and node order
    splits, gains = [0] * 4, [0.0] * 4
    for t in dump["trees"]:
        for n in t["nodes"]:
            if "split_feature" in n:
                splits[n["split_feature"]] += 1
                gains[n["split_feature"]] = f32(gains[n["split_feature"]] + f32(n["split_gain"]))
    for typ, want in (("split", splits), ("gain", gains), (None, splits)):
        args = ["importance", str(m)] + (["--type", typ] if typ else [])
        r = samebits(*args)
        assert r.returncode == 0, r.stderr
        lines = [ln.split(",") for ln in r.stdout.splitlines()]
        assert [ln[0] for ln in lines] == ["a", "b", "c", "d"]
        assert [f32(float(ln[1])) for ln in lines] == [f32(w) for w in want], typ


def test_bad_input_is_named_and_writes_nothing(tmp_path):
    data, m = _train(tmp_path, "gbdt", "objective=regression", "n_estimators=2", "eval_period=0")
    out = tmp_path / "o.txt"
    for args, words in ((["dump", str(m), "--format", "xml", "--out", str(out)], "json or text"),
                        (["dump", str(tmp_path / "none.sbm"), "--out", str(out)], "SB_ERR_IO"),
                        (["dump", str(data), "--out", str(out)], "not a samebits model"),
                        (["importance", str(m), "--type", "cover", "--out", str(out)], "split or gain"),
                        (["importance", "--out", str(out)], "which model"),
                        (["predict", "--model", str(m), "--data", str(data), "--out", str(out), "--leaf", "--contrib"],
                         "give one")):
        r = samebits(*args)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
        assert not out.exists(), args
    # a model that is not a tree model: refused by name
    km = tmp_path / "km.sbm"
    data = tmp_path / "clean.csv"
    data.write_text("a,b,y\n" + "".join(f"{i % 7},{i % 5},0\n" for i in range(40)))
    r = samebits("train", "--model", "kmeans", "--data", str(data), "--label", "y", "n_clusters=2", "--out", str(km))
    assert r.returncode == 0, r.stderr
    for args in (["dump", str(km), "--out", str(out)],
                 ["predict", "--model", str(km), "--data", str(data), "--out", str(out), "--contrib"],
                 ["predict", "--model", str(km), "--data", str(data), "--out", str(out), "--leaf"]):
        r = samebits(*args)
        assert r.returncode == 2 and "tree families" in r.stderr, r.stderr
        assert not out.exists()
    for cmd in ("dump", "importance", "predict"):
        r = samebits(cmd, "--help")
        assert r.returncode == 0 and cmd in r.stdout
    assert "--contrib" in samebits("predict", "--help").stdout


def test_opencl_contraction_arm_parts_the_contributions():
    """SAMEBITS_OPENCL_ARM=contract (FP_CONTRACT ON) fuses TreeSHAP's leaf share
    into phi on PoCL: explain-trees parts at explain.gbdt.contrib, the model, its
    margins and leaves identical; -cl-mad-enable, a control, moves no bit."""
    r = samebits("verify", "explain-trees", "device=opencl", env={"SAMEBITS_OPENCL_ARM": "contract"})
    if "SB_ERR_BACKEND_UNAVAILABLE" in r.stdout + r.stderr:
        pytest.skip("no OpenCL device")
    assert r.returncode == 1 and "differ at stage 3: explain.gbdt.contrib" in r.stdout, r.stdout + r.stderr
    r = samebits("verify", "explain-trees", "device=opencl", env={"SAMEBITS_OPENCL_ARM": "mad-enable"})
    assert r.returncode == 0 and "verify: PASS" in r.stdout, r.stdout + r.stderr
