"""Identity: a model trained from Python and one trained by the CLI on the same
data and parameters are the same bytes; thread counts change nothing."""
import pytest

import samebits
from conftest import cli_train, make_data

CASES = [
    ("regression", samebits.GradientBoostingRegressor, {}, {"n_estimators": "20", "num_leaves": "8"}),
    ("binary", samebits.GradientBoostingClassifier, {}, {"n_estimators": "20", "learning_rate": "0.3",
                                                         "subsample": "0.8", "random_state": "7"}),
    ("multiclass", samebits.GradientBoostingClassifier, {}, {"n_estimators": "10", "max_depth": "4",
                                                             "growth": "depthwise", "colsample_bytree": "0.75"}),
]


def _py_params(params):
    out = {}
    for k, v in params.items():
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


@pytest.mark.parametrize("objective,cls,_,params", CASES, ids=[c[0] for c in CASES])
def test_python_model_equals_cli_model(tmp_path, objective, cls, _, params):
    X, y = make_data(500, objective, seed=11)
    digest, cli_bytes = cli_train(tmp_path, X, y, objective, params)
    m = cls(**_py_params(params)).fit(X, y)
    assert m.model_digest_ == digest
    assert m.model_bytes() == cli_bytes
    path = tmp_path / "py.sbm"
    m.save_model(str(path))
    assert path.read_bytes() == cli_bytes


def test_dataframe_names_equal_csv_header(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_data(300, "regression", seed=5)
    names = ["height", "width", "depth", "mass"]
    digest, _ = cli_train(tmp_path, X, y, "regression", {"n_estimators": "8"}, names=names)
    m = samebits.GradientBoostingRegressor(n_estimators=8).fit(pd.DataFrame(X, columns=names), y)
    assert m.model_digest_ == digest


@pytest.mark.parametrize("objective", ["regression", "binary", "multiclass"])
def test_thread_count_does_not_change_the_model(objective):
    X, y = make_data(800, objective, seed=3)
    cls = samebits.GradientBoostingRegressor if objective == "regression" else samebits.GradientBoostingClassifier
    out = {}
    for n in (1, 2, 3):
        samebits.set_num_threads(n)
        assert samebits.get_num_threads() == n
        m = cls(n_estimators=12, subsample=0.7, colsample_bytree=0.8, random_state=3).fit(X, y)
        pred = m.predict_proba(X) if objective != "regression" else m.predict(X)
        out[n] = (m.model_bytes(), pred.tobytes())
    assert out[1] == out[2] == out[3]


def test_numeric_modes_only_identical_is_built(tmp_path):
    """fast and deterministic trained the identical model under another label;
    they are refused by name now, on every family, by estimator parameter and
    by the process default, and identical (the default) is unchanged."""
    X, y = make_data(200, "regression")
    ident = samebits.GradientBoostingRegressor(n_estimators=5, numeric_mode="identical").fit(X, y)
    default = samebits.GradientBoostingRegressor(n_estimators=5).fit(X, y)
    assert ident.numeric_mode_used() == default.numeric_mode_used() == "identical"
    assert ident.model_digest_ == default.model_digest_
    Xc, yc = make_data(200, "binary")
    estimators = [samebits.GradientBoostingRegressor(n_estimators=2), samebits.GradientBoostingClassifier(n_estimators=2),
                  samebits.RandomForestRegressor(n_estimators=2), samebits.RandomForestClassifier(n_estimators=2),
                  samebits.ExtraTreesRegressor(n_estimators=2), samebits.ExtraTreesClassifier(n_estimators=2),
                  samebits.IsolationForest(n_estimators=2)]
    for est in estimators:
        for mode in ("fast", "deterministic"):
            est.set_params(numeric_mode=mode)
            with pytest.raises(samebits.ModeUnsupportedError) as e:
                est.fit(Xc, yc)
            assert f"numeric_mode={mode} is not built: only identical is" in str(e.value), type(est).__name__
        est.set_params(numeric_mode="identical")
        est.fit(Xc, yc)
    for mode in ("fast", "deterministic"):
        with pytest.raises(samebits.ModeUnsupportedError) as e:
            samebits.set_numeric_mode(mode)
        assert f"numeric_mode={mode} is not built" in str(e.value)
        assert samebits.get_numeric_mode() == "identical"  # a refusal changes nothing
    digest, _ = cli_train(tmp_path, X, y, "regression", {"n_estimators": "5", "numeric_mode": "identical"})
    assert digest == ident.model_digest_