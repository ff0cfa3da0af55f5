"""The linear family from the command line (issue 24): train and predict for
each kind, PCA's transform, the same digest at every thread count and on
cpu-batched, a reported non-convergence, and refusals by name."""
import csv
import re

import pytest

from conftest import ROOT, samebits

HOUSING = ROOT.parent / "shared" / "data" / "california-housing.csv"


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    if not HOUSING.exists():
        pytest.skip("no ../shared/data/california-housing.csv")
    out = tmp_path_factory.mktemp("lin") / "h.csv"
    with open(HOUSING, newline="") as f, open(out, "w", newline="") as g:
        r = csv.reader(f)
        head = next(r)
        keep = [i for i, h in enumerate(head) if h != "ocean_proximity"]
        w = csv.writer(g)
        w.writerow([head[i] for i in keep])
        for row in r:
            if all(row[i] != "" for i in keep):
                w.writerow([row[i] for i in keep])
    return out


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


@pytest.mark.parametrize("kind,extra", [("linear", []), ("ridge", ["alpha=2"]), ("lasso", ["alpha=100"]),
                                        ("elasticnet", ["alpha=1", "l1_ratio=0.3"])])
def test_regressors_train_predict_and_keep_their_bits(kind, extra, housing, tmp_path):
    digests = set()
    for t in ("1", "2", "7"):
        r = samebits("train", "--model", kind, "--data", str(housing), "--label", "median_house_value", *extra,
                     "--threads", t, "--out", str(tmp_path / f"{kind}-{t}.sbm"))
        assert r.returncode == 0, r.stderr
        digests.add(digest_of(r))
    r = samebits("train", "--model", kind, "--data", str(housing), "--label", "median_house_value", *extra,
                 "device=cpu-batched", "--out", str(tmp_path / "b.sbm"))
    assert r.returncode == 0, r.stderr
    digests.add(digest_of(r))
    assert len(digests) == 1, digests
    r = samebits("predict", "--model", str(tmp_path / f"{kind}-1.sbm"), "--data", str(housing), "--out", "-")
    assert r.returncode == 0, r.stderr
    vals = [float(v) for v in r.stdout.split()]
    assert len(vals) == 20433 and 100000 < sum(vals) / len(vals) < 300000


def test_pca_predict_writes_the_projection(housing, tmp_path):
    r = samebits("train", "--model", "pca", "--data", str(housing), "--label", "median_house_value",
                 "n_components=3", "--out", str(tmp_path / "p.sbm"))
    assert r.returncode == 0, r.stderr
    r = samebits("predict", "--model", str(tmp_path / "p.sbm"), "--data", str(housing), "--out", "-")
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert len(rows) == 20433 and all(len(x.split(",")) == 3 for x in rows[:10])


def test_non_convergence_is_reported(housing, tmp_path):
    r = samebits("train", "--model", "lasso", "--data", str(housing), "--label", "median_house_value",
                 "alpha=100", "max_iter=2", "--out", str(tmp_path / "l.sbm"))
    assert r.returncode == 0, r.stderr
    assert "did not converge in 2 iterations" in r.stderr, r.stderr


@pytest.mark.parametrize("args,words", [
    (["--model", "ridge", "bogus=1"], "unknown parameter 'bogus' for ridge"),
    (["--model", "logistic", "penalty=l1"], "penalty='l1' is not built"),
    (["--model", "lasso", "selection=random"], "selection='random' is not built"),
    (["--model", "pca", "svd_solver=lobpcg"], "svd_solver='lobpcg' is not built"),
    (["--model", "pca", "svd_solver=arpack", "n_components=0.5"], "svd_solver='arpack' needs a whole n_components"),
    (["--model", "pca", "svd_solver=randomized"], "the randomized solver needs a whole n_components"),
    (["--model", "ridge", "objective=binary"], "takes no model= or objective="),
    (["--model", "tsne"], "--model gbdt, random_forest, extra_trees, isolation_forest, kmeans, dbscan, agglomerative, spectral, knn, kde, umap, svc, svr, ets, arima, gp, mlp, lm, or a linear model (linear, ridge"),
    (["--model", "umap"], "--model umap takes no --label (supervised UMAP"),
    (["--model", "dbscan", "eps=0"], "parameter eps='0' must be a number in (0"),
    (["--model", "agglomerative", "linkage=median"], "linkage='median': ward, complete, average or single"),
    (["--model", "kmeans", "n_clusters=0"], "n_clusters"),
    (["--model", "kmeans", "init=kmeans"], "init='kmeans': k-means++, random, or given centers"),
])
def test_refusals_are_named(args, words, housing):
    r = samebits("train", "--data", str(housing), "--label", "median_house_value", *args)
    assert r.returncode != 0 and words in r.stderr, r.stderr


def test_missing_values_are_refused_by_name(tmp_path):
    p = tmp_path / "nan.csv"
    p.write_text("a,b,y\n1,2,3\n4,,5\n6,7,8\n")
    r = samebits("train", "--model", "ridge", "--data", str(p), "--label", "y")
    assert r.returncode != 0 and "row 1, feature 1 is missing (NaN)" in r.stderr, r.stderr
