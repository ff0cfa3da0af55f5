"""Categorical features in gradient boosting from Python (issue 20): a
DataFrame's string and category columns (categorical_feature='auto') or the
columns named, their strings mapped to codes by the order of their UTF-8
bytes and kept in the model; unseen names and missing values going right;
the same bits at every thread count and on every device; the tables restored
by load_model and pickle; refusals by name."""
import pickle

import pytest

import samebits
from gbdt_devices import devices, digests_by_threads, trees

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

NAMES = ["apple", "Banana", "cherry", "date", "\u00e9clair", "fig", "grape", "\u0125at", "kiwi"]
EFFECT = {"apple": 1.0, "Banana": -1.0, "cherry": 2.0, "date": 0.0, "\u00e9clair": -2.0, "fig": 1.5,
          "grape": -0.5, "\u0125at": 0.5, "kiwi": -1.5}


def frame(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    fruit = np.array(NAMES, dtype=object)[rng.integers(0, len(NAMES), n)]
    fruit[rng.random(n) < 0.05] = None
    df = pd.DataFrame({"fruit": fruit, "x": rng.normal(size=n).astype(np.float32),
                       "kind": pd.Categorical(rng.choice(["b", "a", "c"], n), categories=["c", "b", "a"]),
                       "code": rng.integers(0, 6, n).astype(np.float32)})
    y = np.array([EFFECT.get(f, 0.0) if f is not None else 0.0 for f in fruit]) + df.x.to_numpy() + \
        (df.kind == "b").to_numpy() * 1.0 + (df.code.to_numpy() % 2) * 0.5 + rng.normal(scale=0.2, size=n)
    return df, y.astype(np.float32)


def test_names_map_by_their_utf8_bytes_and_live_in_the_model(tmp_path):
    df, y = frame()
    m = samebits.GradientBoostingRegressor(n_estimators=20, min_samples_leaf=5).fit(df, y)
    assert m._cat_tables[0] == sorted(NAMES, key=lambda s: s.encode("utf-8"))
    assert m._cat_tables[0][0] == "Banana" and m._cat_tables[0][-2:] == ["\u00e9clair", "\u0125at"]
    assert m._cat_tables[2] == ["a", "b", "c"]  # the category dtype's categories, by bytes, not their order
    assert 3 not in m._cat_tables  # a numeric column keeps its codes: no table
    assert any(n.get("decision_type") == "==" for t in trees(m) for n in t["nodes"])
    # unseen names and missing values take the missing side: the same predictions
    te = df.iloc[:50].copy()
    unseen, missing = te.copy(), te.copy()
    unseen["fruit"] = "mango"
    missing["fruit"] = None
    assert m.predict(unseen).tobytes() == m.predict(missing).tobytes()
    # the file and a pickle keep the tables: the same strings, the same bits
    path = str(tmp_path / "m.sbm")
    m.save_model(path)
    back = samebits.load_model(path)
    assert type(back) is samebits.GradientBoostingRegressor and back._cat_tables == m._cat_tables
    assert back.predict(df).tobytes() == m.predict(df).tobytes()
    again = pickle.loads(pickle.dumps(m))
    assert again.predict(df).tobytes() == m.predict(df).tobytes() and again.model_digest_ == m.model_digest_
    # the categorical model beats the same columns as codes of no order
    codes = df.copy()
    codes["fruit"] = [m._cat_tables[0].index(f) if isinstance(f, str) else np.nan for f in df.fruit]
    codes["kind"] = df.kind.cat.codes.astype(np.float32)
    plain = samebits.GradientBoostingRegressor(n_estimators=20, min_samples_leaf=5).fit(
        codes, y, categorical_feature=[])
    err = lambda p: float(np.mean((np.asarray(p) - y) ** 2))  # noqa: E731
    assert err(m.predict(df)) < err(plain.predict(codes))


def test_columns_by_name_or_position_and_their_refusals():
    df, y = frame(1500)
    a = samebits.GradientBoostingRegressor(n_estimators=5).fit(df, y, categorical_feature=["fruit", "kind", "code"])
    b = samebits.GradientBoostingRegressor(n_estimators=5).fit(df, y, categorical_feature=[0, 2, 3])
    assert a.model_digest_ == b.model_digest_
    auto = samebits.GradientBoostingRegressor(n_estimators=5).fit(df, y)  # fruit and kind only
    assert auto.model_digest_ != a.model_digest_
    with pytest.raises(samebits.InvalidArgumentError, match="categorical_feature names 'nope'"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(df, y, categorical_feature=["nope"])
    with pytest.raises(samebits.InvalidArgumentError, match="position 9"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(df, y, categorical_feature=[9])
    with pytest.raises(samebits.InvalidInputError, match=r"categorical feature 1 \(x\).*not a category code"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(df, y, categorical_feature=["x", "fruit", "kind"])
    with pytest.raises(samebits.InvalidInputError, match="'kind' is a pandas category column: a categorical feature"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(df, y, categorical_feature=["fruit"])
    with pytest.raises(TypeError, match="categorical_feature"):  # a forest's fit has no such argument
        samebits.RandomForestRegressor(n_estimators=2).fit(df[["x", "code"]], y, categorical_feature=[1])
    # a numpy array: codes by position (strings in an object array too)
    arr = df[["code", "x"]].to_numpy()
    c = samebits.GradientBoostingRegressor(n_estimators=5).fit(arr, y, categorical_feature=[0])
    d = samebits.GradientBoostingRegressor(n_estimators=5).fit(df[["code", "x"]], y, categorical_feature=["code"])
    assert c.predict(arr).tobytes() == d.predict(df[["code", "x"]]).tobytes()
    obj = df[["fruit", "x"]].to_numpy(dtype=object)
    e = samebits.GradientBoostingRegressor(n_estimators=5).fit(obj, y, categorical_feature=[0])
    f = samebits.GradientBoostingRegressor(n_estimators=5).fit(df[["fruit", "x"]], y)
    assert e._cat_tables == f._cat_tables and e.predict(obj).tobytes() == f.predict(df[["fruit", "x"]]).tobytes()


def test_a_classifier_with_eval_set_and_explanations():
    df, y = frame(2000, seed=3)
    yc = (y > np.median(y)).astype(int)
    va, yv = frame(600, seed=4)
    va.loc[va.index[:30], "fruit"] = "never seen"
    m = samebits.GradientBoostingClassifier(n_estimators=30, early_stopping_rounds=3, learning_rate=0.3).fit(
        df, yc, eval_set=[(va, (yv > np.median(y)).astype(int))])
    assert m.best_iteration_ >= 1 and m.evals_result_["valid_0"]
    raw = np.asarray(m.predict(va, raw_score=True), dtype=np.float64).reshape(-1)
    contrib = np.asarray(m.predict(va, pred_contrib=True), dtype=np.float64)
    assert np.max(np.abs(contrib.sum(axis=1) - raw)) < 1e-4
    leaves = np.asarray(m.predict(va, pred_leaf=True))
    assert leaves.shape == (len(va), m.n_estimators_)


CHILD = '''
import numpy as np, pandas as pd, samebits
rng = np.random.default_rng(7)
n = 3000
df = pd.DataFrame({"f": rng.choice(["a", "b", "c", "d", "e", "f", "g"], n), "x": rng.normal(size=n),
                   "k": pd.Categorical(rng.choice(["u", "v"], n))})
y = (df.f.isin(["a", "d", "g"]) * 1.0 + df.x + (df.k == "u") * 0.5).to_numpy()
print(samebits.GradientBoostingRegressor(n_estimators=8, min_samples_leaf=5, subsample=0.8,
                                         device="%s").fit(df, y).model_digest_)
'''


@pytest.mark.parametrize("device", devices())
def test_the_same_bits_at_every_thread_count_and_device(device):
    """One digest at 1, 2 and 5 threads, on the CPU and on every device here
    (cpu-batched, PoCL's OpenCL; the GPU run names cuda too)."""
    got = digests_by_threads(CHILD % device)
    assert len(got) == 1, got
    ref = digests_by_threads(CHILD % "cpu", threads=("1",))
    assert got == ref, (device, got, ref)


@pytest.mark.parametrize("device", devices())
def test_categorical_features_under_per_node_rules(device):
    """Category splits beside a monotone feature, interaction sets and
    per-node column sampling: every prediction sweep of the constrained
    feature is monotone, a categorical feature carries no constraint of its
    own (one is refused by name), and each device grows the CPU's model."""
    df, y = frame(2500, seed=5)
    kw = dict(n_estimators=12, min_samples_leaf=10, monotone_constraints=[0, 1, 0, 0],
              interaction_constraints=[[0, 1], [2, 3]], colsample_bynode=0.75, random_state=3)
    ref = samebits.GradientBoostingRegressor(**kw).fit(df, y)
    m = samebits.GradientBoostingRegressor(device=device, **kw).fit(df, y)
    assert m.model_digest_ == ref.model_digest_, device
    grid = np.linspace(-3, 3, 25, dtype=np.float32)
    for i in range(0, 200, 20):
        rows = pd.concat([df.iloc[[i]]] * len(grid), ignore_index=True)
        rows["x"] = grid
        p = np.asarray(m.predict(rows))
        assert np.all(np.diff(p) >= 0), (i, p)
    with pytest.raises(samebits.InvalidArgumentError, match="categorical and has a monotone constraint"):
        samebits.GradientBoostingRegressor(n_estimators=2, monotone_constraints=[1, 0, 0, 0]).fit(df, y)
