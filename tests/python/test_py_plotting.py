"""samebits.plotting (issue 20): plot_importance, plot_metric and plot_tree
render to PNG with matplotlib's Agg backend, with what they claim to draw
(bars in importance order, one curve a dataset, a box a node)."""
import io

import pytest

import samebits

np = pytest.importorskip("numpy")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RNG = np.random.default_rng(9)
X = RNG.normal(size=(800, 4)).astype(np.float32)
Y = 2 * X[:, 0] + X[:, 2] + 0.1 * RNG.normal(size=800)


def _png(ax):
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    plt.close(ax.figure)
    data = buf.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    return data


def test_plot_importance_orders_the_bars():
    m = samebits.GradientBoostingRegressor(n_estimators=20, num_leaves=4, importance_type="gain").fit(X, Y)
    ax = samebits.plotting.plot_importance(m, max_num_features=3)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    imp = m.feature_importances_.tolist()
    top3 = [i for i in sorted(range(4), key=lambda i: (imp[i], "Column_%d" % i)) if imp[i] != 0][-3:]
    assert labels == ["Column_%d" % i for i in top3] and len(labels) >= 2  # zero importances left out
    _png(ax)
    ax = samebits.plotting.plot_importance(m, importance_type="split")
    _png(ax)


def test_plot_metric_draws_the_log():
    m = samebits.GradientBoostingRegressor(n_estimators=12).fit(X, Y, eval_set=[(X[:200], Y[:200])])
    ax = samebits.plotting.plot_metric(m)
    (line,) = ax.get_lines()
    assert list(line.get_ydata()) == m.evals_result_["valid_0"]["rmse"] and ax.get_ylabel() == "rmse"
    _png(ax)
    with pytest.raises(samebits.InvalidArgumentError, match="no metric log"):
        samebits.plotting.plot_metric(samebits.GradientBoostingRegressor(n_estimators=3).fit(X, Y))
    with pytest.raises(samebits.InvalidArgumentError, match="not in the log"):
        samebits.plotting.plot_metric(m, metric="auc")


def test_plot_tree_draws_every_node():
    m = samebits.GradientBoostingRegressor(n_estimators=2, num_leaves=5).fit(X, Y)
    ax = samebits.plotting.plot_tree(m, tree_index=1)
    nodes = m.dump_model()["trees"][1]["nodes"]
    assert len(ax.texts) == len(nodes)
    assert sum(t.get_text().startswith("leaf ") for t in ax.texts) == sum("leaf_value" in n for n in nodes)
    _png(ax)
    with pytest.raises(samebits.InvalidArgumentError, match="tree_index"):
        samebits.plotting.plot_tree(m, tree_index=5)


def test_unfitted_is_refused_by_name():
    with pytest.raises(samebits.InvalidArgumentError, match="not a fitted"):
        samebits.plotting.plot_importance(samebits.GradientBoostingRegressor())
