"""Initial scores (LightGBM's init_score and DATA.init, issue 21): gradient
boosting starts each row at its score, the model holds the trees only, and
every device gives the same bytes."""
import os

import numpy as np
import pytest

import samebits
from gbdt_devices import devices as _devices, trees as _trees

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = (np.sin(3 * X[:, 0]) + X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)).astype(np.float32)
    return X, y


def test_init_score_is_where_continued_training_starts():
    """A first model's raw predictions as initial scores grow the trees that
    continuing the first model grows, tree for tree (no draws: subsample and
    colsample 1), and the model's base is 0. Fails if the scores were ignored
    or added to a base."""
    X, y = _data()
    first = samebits.GradientBoostingRegressor(n_estimators=6).fit(X, y)
    raw = first.predict(X, raw_score=True)
    more = samebits.GradientBoostingRegressor(n_estimators=5).fit(X, y, init_model=first)
    scored = samebits.GradientBoostingRegressor(n_estimators=5).fit(X, y, init_score=raw)
    assert _trees(scored) == [dict(t, tree_index=t["tree_index"] - 6) for t in _trees(more)[6:]]
    # the same numbers added in another order (the scores last): equal to float rounding
    assert np.allclose(scored.predict(X) + raw, more.predict(X), rtol=0, atol=1e-5)
    plain = samebits.GradientBoostingRegressor(n_estimators=5).fit(X, y)
    assert _trees(plain) != _trees(scored)


def test_init_score_is_identical_on_every_device_multiclass_too():
    X, y = _data()
    s = (0.7 * X[:, 0]).astype(np.float32)
    digests = {samebits.GradientBoostingRegressor(n_estimators=10, device=d, subsample=0.8).fit(
        X, y, init_score=s).model_digest_ for d in _devices()}
    assert len(digests) == 1, digests
    yc = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    S = np.stack([X[:, 0], -X[:, 0], X[:, 1]], axis=1).astype(np.float32) * 0.3
    digests = {samebits.GradientBoostingClassifier(n_estimators=4, device=d).fit(X, yc, init_score=S).model_digest_
               for d in _devices()}
    assert len(digests) == 1, digests


@pytest.mark.parametrize("bad, msg", [
    (np.zeros(10, np.float32), "initial scores for 2000 data rows"),
    (np.full(2000, np.nan, np.float32), "scores must be finite"),
    (np.zeros((2000, 2), np.float32), "initial scores are 2 a row; the model needs 1"),
])
def test_bad_init_scores_are_named(bad, msg):
    X, y = _data()
    with pytest.raises(Exception, match=msg):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(X, y, init_score=bad)


def test_init_score_with_base_score_or_init_model_is_refused():
    X, y = _data()
    s = np.zeros(2000, np.float32)
    with pytest.raises(Exception, match="replace base_score"):
        samebits.GradientBoostingRegressor(n_estimators=2, base_score=0.5).fit(X, y, init_score=s)
    first = samebits.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(Exception, match="two starts for one fit"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(X, y, init_model=first, init_score=s)
    with pytest.raises(TypeError):  # a forest's fit has no init_score (scikit-learn's TypeError)
        samebits.RandomForestRegressor(n_estimators=2).fit(X, y, init_score=s)


def test_data_init_beside_the_data_is_read_by_the_cli(tmp_path):
    exe = os.path.join(ROOT, "build", "samebits")
    if not os.path.exists(exe):
        pytest.skip("no CLI build")
    import subprocess
    X, y = _data()
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([y, X]), delimiter=",", fmt="%.6f")
    base = [exe, "task=train", "data=" + str(data), "label_column=0", "header=false", "num_trees=4"]
    plain = subprocess.run(base + ["output_model=" + str(tmp_path / "a.sbm")], capture_output=True, text=True)
    np.savetxt(str(data) + ".init", 0.5 * X[:, 0], fmt="%.6f")
    scored = subprocess.run(base + ["output_model=" + str(tmp_path / "b.sbm")], capture_output=True, text=True)
    assert plain.returncode == 0 and scored.returncode == 0, plain.stderr + scored.stderr
    assert "initial scores from" in scored.stderr and "initial scores from" not in plain.stderr
    assert (tmp_path / "a.sbm").read_bytes() != (tmp_path / "b.sbm").read_bytes()
    (tmp_path / "d.csv.init").write_text("1\n2\n")
    bad = subprocess.run(base + ["output_model=" + str(tmp_path / "c.sbm")], capture_output=True, text=True)
    assert bad.returncode != 0 and "2 initial scores for 2000 data rows" in bad.stderr, bad.stderr
    assert not (tmp_path / "c.sbm").exists()
