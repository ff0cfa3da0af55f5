"""Learning to rank (docs/ranking.md): GradientBoostingRanker, the device path
and the LETOR readers. The ranking fixtures' cards (gbdt-lambdarank,
gbdt-rank-pairwise) are compared across legs and thread counts by
tests/integration/test_legs.py; the arm is `make SABOTAGE=rank-ties`
(tests/integration/test_arms.py)."""
import os
import subprocess

import pytest

np = pytest.importorskip("numpy")
import samebits  # noqa: E402
from conftest import CLI  # noqa: E402

LETOR = "/work/shared/data/lightgbm-examples/lambdarank_rank"


def data(nq, seed):
    g = np.random.Generator(np.random.Philox(key=seed))
    sizes = g.integers(1, 30, nq)
    sizes[::5] = 1                                   # queries of one document
    n = int(sizes.sum())
    X = g.standard_normal((n, 6)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1])                      # heavy ties
    X[:, 2] = X[:, 0]                                # a duplicate column
    X[g.random((n, 6)) < 0.05] = np.nan
    s = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + 0.5 * g.standard_normal(n)
    y = np.clip(np.floor(s + 1.5), 0, 4).astype(np.float32)
    return X, y, sizes


CONFIGS = [
    ("lambdarank", dict(num_leaves=15)),
    ("lambdarank-trunc-bagging", dict(num_leaves=31, lambdarank_truncation_level=5, subsample=0.7,
                                      colsample_bytree=0.6, random_state=3)),
    ("lambdarank-nonorm-depthwise", dict(growth="depthwise", max_depth=4, lambdarank_norm=False, sigmoid=2.0)),
    ("pairwise", dict(loss="rank_pairwise", num_leaves=15, reg_lambda=1.0)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_cpu_batched_ranking_models_equal_cpu(name, kw):
    """device=cpu-batched (the GPU's grower and layouts on the host, gradients
    uploaded with set_gradients) gives the CPU's model bytes."""
    X, y, sizes = data(120, 5)
    common = dict(n_estimators=6, learning_rate=0.3, max_bin=63, min_samples_leaf=5, **kw)
    a = samebits.GradientBoostingRanker(**common).fit(X, y, group=sizes)
    b = samebits.GradientBoostingRanker(device="cpu-batched", **common).fit(X, y, group=sizes)
    assert a.model_bytes() == b.model_bytes(), name
    c = samebits.GradientBoostingRanker(**common).fit(X, y, group=sizes)
    assert c.digest() == a.digest()


def test_ranker_learns_and_round_trips(tmp_path):
    X, y, sizes = data(200, 7)
    r = samebits.GradientBoostingRanker(n_estimators=30, num_leaves=15, min_samples_leaf=5,
                                        eval_metric="ndcg@5").fit(X, y, group=sizes, eval_set=(X, y),
                                                                  eval_group=sizes)
    assert r.objective_ == "lambdarank"
    p = r.predict(X)
    # within each query the scores order documents better than chance
    s0, agree, total = 0, 0, 0
    for n in sizes:
        ys, ps = y[s0:s0 + n], p[s0:s0 + n]
        for i in range(n):
            for j in range(n):
                if ys[i] > ys[j]:
                    total += 1
                    agree += ps[i] > ps[j]
        s0 += n
    assert agree / total > 0.75
    path = str(tmp_path / "rank.sbm")
    r.save_model(path)
    back = samebits.load_model(path)
    assert isinstance(back, samebits.GradientBoostingRanker)
    assert np.array_equal(np.asarray(back.predict(X)), np.asarray(p))
    with pytest.raises(samebits.errors.InvalidInputError):
        samebits.GradientBoostingRegressor().load_model(path)


def test_ranker_refusals():
    X, y, sizes = data(20, 1)
    with pytest.raises(samebits.errors.InvalidInputError, match="group"):
        samebits.GradientBoostingRanker(n_estimators=2).fit(X, y)
    with pytest.raises(samebits.errors.InvalidInputError, match="add up"):
        samebits.GradientBoostingRanker(n_estimators=2).fit(X, y, group=list(sizes[:-1]))
    with pytest.raises(samebits.errors.InvalidInputError, match="relevance labels"):
        samebits.GradientBoostingRanker(n_estimators=2).fit(X, y + 0.5, group=sizes)
    with pytest.raises(samebits.errors.InvalidArgumentError, match="does not fit"):
        samebits.GradientBoostingRanker(n_estimators=2, eval_metric="rmse").fit(X, y, group=sizes)


@pytest.mark.skipif(not os.path.exists(LETOR + ".train"), reason="LightGBM's ranking sample is not here")
def test_cli_letor_with_query_files(tmp_path):
    """LightGBM's format: label first, libsvm features, sizes in a .query file
    beside the data; the format is detected, no --label needed."""
    out = tmp_path / "m.sbm"
    r = subprocess.run([str(CLI), "train", "--model", "gbdt", "--data", LETOR + ".train", "--valid", LETOR + ".test",
                        "--objective", "lambdarank", "n_estimators=20", "min_samples_leaf=50", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "query groups from " + LETOR + ".train.query" in r.stderr
    assert "[20] valid ndcg@10: 0." in r.stderr
    digest = r.stdout
    # the same groups given as qid: in an svmlight file give the same model
    sizes = [int(v) for v in open(LETOR + ".train.query").read().split()]
    lines = open(LETOR + ".train").read().splitlines()
    svm = tmp_path / "train.svm"
    with open(svm, "w") as f:
        k = 0
        for q, n in enumerate(sizes):
            for _ in range(n):
                label, rest = lines[k].split(" ", 1)
                f.write("%s qid:%d %s # doc %d\n" % (label, q + 7, rest, k))
                k += 1
    r2 = subprocess.run([str(CLI), "train", "--model", "gbdt", "--data", str(svm), "--objective", "lambdarank",
                         "n_estimators=20", "min_samples_leaf=50"], capture_output=True, text=True)
    assert r2.returncode == 0, r2.stderr
    r3 = subprocess.run([str(CLI), "train", "--model", "gbdt", "--data", LETOR + ".train", "--objective",
                         "lambdarank", "n_estimators=20", "min_samples_leaf=50"], capture_output=True, text=True)
    assert r2.stdout == r3.stdout == digest
    p = tmp_path / "p.csv"
    r4 = subprocess.run([str(CLI), "predict", "--model", str(out), "--data", LETOR + ".test", "--out", str(p)],
                        capture_output=True, text=True)
    assert r4.returncode == 0, r4.stderr
    assert len(p.read_text().split()) >= 768


def test_cli_group_column(tmp_path):
    X, y, sizes = data(30, 2)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    csv = tmp_path / "t.csv"
    with open(csv, "w") as f:
        f.write("rel,query,f0,f1,f2,f3,f4,f5\n")
        for i in range(len(y)):
            f.write("%g,%d,%s\n" % (y[i], qid[i], ",".join("" if np.isnan(v) else repr(float(v)) for v in X[i])))
    r = subprocess.run([str(CLI), "train", "--model", "gbdt", "--data", str(csv), "--label", "rel", "--group",
                        "query", "--objective", "lambdarank", "n_estimators=5", "min_samples_leaf=5", "eval_period=0"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a = samebits.GradientBoostingRanker(n_estimators=5, min_samples_leaf=5).fit(X, y, group=sizes)
    assert r.stdout.strip() == "model digest: " + a.digest()


def test_query_rows_must_be_contiguous(tmp_path):
    svm = tmp_path / "q.svm"
    svm.write_text("1 qid:1 0:1\n0 qid:1 0:2\n2 qid:2 0:3\n1 qid:1 0:4 # qid 1 again\n")
    r = subprocess.run([str(CLI), "train", "--model", "gbdt", "--data", str(svm), "--objective", "lambdarank",
                        "n_estimators=1"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "SB_ERR_INVALID_INPUT" in r.stderr and "query 1 are not contiguous" in r.stderr, r.stderr


def test_read_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    t = pa.table({"a": [1.5, None, 3.0], "when": pa.array([0, 60, 86400], type=pa.timestamp("s")),
                  "y": [1, 0, 2]})
    pq.write_table(t, tmp_path / "t.parquet")
    X, y, names = samebits.read_parquet(str(tmp_path / "t.parquet"), label="y")
    assert names == ["a", "when"] and X.dtype == np.float32 and y.tolist() == [1.0, 0.0, 2.0]
    assert np.isnan(X[1, 0]) and X[:, 1].tolist() == [0.0, 60.0, 86400.0]
    with pytest.raises(samebits.errors.InvalidInputError, match="no label column"):
        samebits.read_parquet(str(tmp_path / "t.parquet"), label="z")


@pytest.mark.skipif(not os.path.exists(LETOR + ".train"), reason="LightGBM's ranking sample is not here")
def test_lambdarank_gradients_are_lightgbms():
    """Two stumps at learning rate 1 on the LETOR sample: the same splits and
    leaf values as LightGBM's lambdarank (its gradients and hessians, truncation
    and normalization are LightGBM's definition), to float32 rounding."""
    lgb = pytest.importorskip("lightgbm")
    rows = [l.split() for l in open(LETOR + ".train").read().splitlines()]
    X = np.zeros((len(rows), 301), dtype=np.float32)
    y = np.array([float(r[0]) for r in rows], dtype=np.float32)
    for i, r in enumerate(rows):
        for tok in r[1:]:
            k, v = tok.split(":")
            X[i, int(k)] = float(v)
    q = [int(v) for v in open(LETOR + ".train.query").read().split()]
    r = samebits.GradientBoostingRanker(n_estimators=2, num_leaves=2, min_samples_leaf=50,
                                        learning_rate=1.0).fit(X, y, group=q)
    b = lgb.train(dict(objective="lambdarank", num_leaves=2, min_data_in_leaf=50, learning_rate=1.0, verbose=-1,
                       min_data_in_bin=1, max_bin=255, num_threads=1), lgb.Dataset(X, y, group=q), 2)
    ours = np.asarray(r.predict(X), dtype=np.float64)
    theirs = b.predict(X)
    assert np.max(np.abs(ours - theirs)) < 2e-5, np.max(np.abs(ours - theirs))
