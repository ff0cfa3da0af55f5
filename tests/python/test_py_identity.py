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


def test_numeric_modes_are_recorded(tmp_path):
    X, y = make_data(200, "regression")
    digests = {}
    for mode in ("identical", "deterministic", "fast"):
        m = samebits.GradientBoostingRegressor(n_estimators=5, numeric_mode=mode).fit(X, y)
        assert m.numeric_mode_used() == mode
        digests[mode] = m.model_digest_
    assert len(set(digests.values())) == 3  # the mode asked for is part of the model
    samebits.set_numeric_mode("fast")
    assert samebits.get_numeric_mode() == "fast"
    assert samebits.GradientBoostingRegressor(n_estimators=5).fit(X, y).numeric_mode_used() == "fast"
    assert samebits.GradientBoostingRegressor(n_estimators=5, numeric_mode="identical").fit(X, y) \
        .model_digest_ == digests["identical"]
    digest, _ = cli_train(tmp_path, X, y, "regression", {"n_estimators": "5", "numeric_mode": "deterministic"})
    assert digest == digests["deterministic"]
