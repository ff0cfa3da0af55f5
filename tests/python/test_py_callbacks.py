"""LightGBM's introspection and callbacks on gradient boosting (issue 20):
evals_result_, best_iteration_ and best_score_ from the library's metric log,
samebits.early_stopping, log_evaluation and record_evaluation mapped onto the
library's own early stopping and log, and every other callback refused by
name before training."""
import math

import pytest

import samebits

np = pytest.importorskip("numpy")

RNG = np.random.default_rng(5)
X = RNG.normal(size=(1500, 5)).astype(np.float32)
Y = X[:, 0] + 0.2 * X[:, 1] + 0.1 * RNG.normal(size=1500)
XV = RNG.normal(size=(400, 5)).astype(np.float32)
YV = XV[:, 0] + 0.2 * XV[:, 1] + 0.1 * RNG.normal(size=400)


def test_evals_result_is_the_validation_metric_of_every_iteration():
    m = samebits.GradientBoostingRegressor(n_estimators=30).fit(X, Y, eval_set=[(XV, YV)])
    log = m.evals_result_["valid_0"]["rmse"]
    assert len(log) == 30 and m.best_iteration_ == 0
    # the last entry is the RMSE of the final model on the validation rows (float32 sums: a tolerance)
    p = np.asarray(m.predict(XV), dtype=np.float64)
    assert math.isclose(log[-1], math.sqrt(np.mean((p - YV.astype(np.float32).astype(np.float64)) ** 2)), rel_tol=1e-5)
    assert m.best_score_ == {"valid_0": {"rmse": log[-1]}}
    assert log[0] > log[-1]  # it learns


def test_early_stopping_callback_is_the_parameter():
    rec = {}
    a = samebits.GradientBoostingRegressor(n_estimators=200, learning_rate=0.3).fit(
        X, Y, eval_set=[(XV, YV)], callbacks=[samebits.early_stopping(3, verbose=False), samebits.record_evaluation(rec)])
    b = samebits.GradientBoostingRegressor(n_estimators=200, learning_rate=0.3, early_stopping_rounds=3).fit(
        X, Y, eval_set=[(XV, YV)])
    assert a.model_digest_ == b.model_digest_
    log = a.evals_result_["valid_0"]["rmse"]
    assert 0 < a.best_iteration_ < len(log) <= 200
    assert len(log) == a.best_iteration_ + 3  # stopped three iterations past the best
    assert min(range(len(log)), key=lambda i: (log[i], i)) + 1 == a.best_iteration_
    assert a.n_estimators_ == a.best_iteration_
    assert a.best_score_["valid_0"]["rmse"] == log[a.best_iteration_ - 1]
    assert rec == a.evals_result_ and rec is not a.evals_result_


def test_the_log_is_the_same_at_any_thread_count():
    logs = []
    for t in (1, 2):
        samebits.set_num_threads(t)
        try:
            m = samebits.GradientBoostingClassifier(n_estimators=15, eval_metric="logloss,auc").fit(
                X, Y > 0, eval_set=[(XV, YV > 0)])
        finally:
            samebits.set_num_threads(0)
        logs.append(m.evals_result_)
    assert logs[0] == logs[1] and list(logs[0]["valid_0"]) == ["logloss", "auc"]


def test_log_evaluation_logs_on_stderr(capfd):
    samebits.GradientBoostingRegressor(n_estimators=6).fit(X, Y, eval_set=[(XV, YV)],
                                                           callbacks=[samebits.log_evaluation(3)])
    err = capfd.readouterr().err
    assert "[3] valid rmse" in err and "[6] valid rmse" in err and "[2] valid" not in err


def test_without_validation_rows_nothing_is_logged():
    m = samebits.GradientBoostingRegressor(n_estimators=5).fit(X, Y)
    assert m.evals_result_ == {} and m.best_score_ == {} and m.best_iteration_ == 0
    with pytest.raises(AttributeError):
        samebits.GradientBoostingRegressor().evals_result_  # noqa: B018 (unfitted)


@pytest.mark.parametrize("bad, words", [
    ([lambda env: None], "runs no Python between iterations"),
    ("early", "must be a list"),
    ([samebits.early_stopping(3, first_metric_only=False)], "first metric only"),
])
def test_other_callbacks_are_refused_by_name(bad, words):
    est = samebits.GradientBoostingClassifier(n_estimators=5, eval_metric="logloss,auc")
    with pytest.raises(samebits.InvalidArgumentError, match=words):
        est.fit(X, Y > 0, eval_set=[(XV, YV > 0)], callbacks=bad)
    assert not hasattr(est, "evals_result_")


def test_callback_arguments_are_checked():
    with pytest.raises(samebits.InvalidArgumentError, match="min_delta"):
        samebits.early_stopping(3, min_delta=0.1)
    with pytest.raises(samebits.InvalidArgumentError, match="positive integer"):
        samebits.early_stopping(0)
    with pytest.raises(samebits.InvalidArgumentError, match="period"):
        samebits.log_evaluation(-1)
    with pytest.raises(samebits.InvalidArgumentError, match="dict"):
        samebits.record_evaluation([])
