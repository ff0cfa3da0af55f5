"""Plots of fitted tree models, in LightGBM's manner (issue 20):
plot_importance, plot_metric and plot_tree. matplotlib is an optional
dependency: it is imported when a plot is drawn, and its absence is an
ImportError naming it. Each function returns the matplotlib Axes it drew on.
"""
from .errors import InvalidArgumentError

__all__ = ["plot_importance", "plot_metric", "plot_tree"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # optional dependency
        raise ImportError("samebits.plotting needs matplotlib (pip install matplotlib)") from e
    return plt


def _axes(ax, figsize, dpi):
    if ax is not None:
        return ax
    plt = _pyplot()
    _, ax = plt.subplots(1, 1, figsize=figsize, dpi=dpi)
    return ax


def _fitted(model, what):
    if getattr(model, "_model", None) is None:
        raise InvalidArgumentError("%s: %r is not a fitted samebits tree estimator" % (what, model))
    return model


def plot_importance(model, ax=None, height=0.2, xlim=None, ylim=None, title="Feature importance",
                    xlabel="Feature importance", ylabel="Features", importance_type="auto", max_num_features=None,
                    ignore_zero=True, figsize=None, dpi=None, grid=True, precision=3):
    """A horizontal bar per feature, largest on top: the model's importances of
    importance_type ("split", "gain", or "auto": the estimator's own
    feature_importances_), the value printed at each bar's end."""
    _fitted(model, "plot_importance")
    if importance_type == "auto":
        values = list(model.feature_importances_.tolist())
    else:
        values = list(model._typed_importances(model._model, importance_type, normalize=False).tolist())
    names = getattr(model, "feature_names_in_", None)
    names = [str(n) for n in names] if names is not None else ["Column_%d" % i for i in range(len(values))]
    pairs = sorted(zip(names, values), key=lambda t: (t[1], t[0]))
    if ignore_zero:
        pairs = [p for p in pairs if p[1] != 0]
    if max_num_features is not None and max_num_features > 0:
        pairs = pairs[-max_num_features:]
    if not pairs:
        raise InvalidArgumentError("plot_importance: every importance is zero (nothing to draw)")
    ax = _axes(ax, figsize, dpi)
    labels, vals = zip(*pairs)
    ylocs = list(range(len(vals)))
    ax.barh(ylocs, vals, align="center", height=height)
    for x, y in zip(vals, ylocs):
        ax.text(x + 1 if importance_type == "split" else x, y,
                ("%d" % x) if float(x).is_integer() else ("%.*f" % (precision, x)), va="center")
    ax.set_yticks(ylocs)
    ax.set_yticklabels(labels)
    ax.set_xlim(xlim if xlim is not None else (0, max(vals) * 1.1))
    ax.set_ylim(ylim if ylim is not None else (-1, len(vals)))
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(grid)
    return ax


def plot_metric(booster, metric=None, dataset_names=None, ax=None, xlim=None, ylim=None, title="Metric during training",
                xlabel="Iterations", ylabel="@metric@", figsize=None, dpi=None, grid=True):
    """The learning curve of one metric: booster is a fitted gradient boosting
    estimator (its evals_result_) or such a dict ({"valid_0": {metric: [...]}});
    metric None takes the first."""
    results = booster if isinstance(booster, dict) else getattr(_fitted(booster, "plot_metric"), "evals_result_", None)
    if not results:
        raise InvalidArgumentError("plot_metric: no metric log (fit with eval_set, or pass evals_result_)")
    names = list(results) if dataset_names is None else list(dataset_names)
    first = results[names[0]]
    if metric is None:
        metric = next(iter(first))
    if any(metric not in results[n] for n in names):
        raise InvalidArgumentError("plot_metric: metric %r is not in the log (it has %s)" % (metric, sorted(first)))
    ax = _axes(ax, figsize, dpi)
    top = 0
    for n in names:
        ys = results[n][metric]
        ax.plot(range(1, len(ys) + 1), ys, label=n)
        top = max(top, len(ys))
    ax.legend(loc="best")
    ax.set_xlim(xlim if xlim is not None else (1, max(top, 2)))
    if ylim is not None:
        ax.set_ylim(ylim)
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel.replace("@metric@", metric))
    ax.grid(grid)
    return ax


def plot_tree(model, tree_index=0, ax=None, figsize=None, dpi=None, precision=3, show_info=("split_gain",)):
    """One tree of the model's dump (dump_model): each split as "feature <=
    threshold" with show_info's fields (split_gain, count), each leaf with its
    value, laid out by depth (no graphviz needed)."""
    d = _fitted(model, "plot_tree").dump_model("json")
    trees = d["trees"]
    if not 0 <= tree_index < len(trees):
        raise InvalidArgumentError("plot_tree: tree_index=%r, the model has %d trees" % (tree_index, len(trees)))
    nodes = {n["node"]: n for n in trees[tree_index]["nodes"]}
    names = d.get("feature_names") or []
    pos, depth = {}, {}
    order = []  # leaves left to right give x; a split sits over its children's middle

    def walk(k, dep):
        depth[k] = dep
        n = nodes[k]
        if "leaf_value" in n:
            pos[k] = float(len(order))
            order.append(k)
            return
        walk(n["left"], dep + 1)
        walk(n["right"], dep + 1)
        pos[k] = (pos[n["left"]] + pos[n["right"]]) / 2.0

    walk(0, 0)
    ax = _axes(ax, figsize, dpi)
    for k, n in nodes.items():
        x, y = pos[k], -depth[k]
        if "leaf_value" in n:
            label = "leaf %d: %.*g" % (n["leaf_index"], precision, n["leaf_value"])
        else:
            f = n["split_feature"]
            label = "%s %s %.*g" % (names[f] if f < len(names) else "f%d" % f, n["decision_type"], precision,
                                    n["threshold"])
            for field in show_info or ():
                if field in n:
                    label += "\n%s: %.*g" % (field, precision, n[field])
            for child in (n["left"], n["right"]):
                ax.plot([x, pos[child]], [y, -depth[child]], color="0.5", zorder=1)
        ax.text(x, y, label, ha="center", va="center", fontsize=8, zorder=2,
                bbox=dict(boxstyle="round", fc="white", ec="0.3"))
    ax.set_axis_off()
    ax.set_xlim(-1, max(len(order), 1))
    ax.set_ylim(-max(depth.values()) - 1, 1)
    return ax
