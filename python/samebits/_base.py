"""scikit-learn conventions without importing scikit-learn.

get_params/set_params introspect __init__ (as sklearn.base.BaseEstimator does);
__sklearn_tags__ imports scikit-learn lazily, only when scikit-learn itself asks
(so it is already imported); _estimator_type serves older scikit-learn versions.
"""
import inspect
import math

from .errors import InvalidArgumentError, InvalidInputError, not_fitted


class Estimator:
    """Base of the samebits estimators: the constructor stores parameters only."""

    _estimator_kind = None  # "classifier" | "regressor"

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep=True):
        """The constructor's parameters as a dict (deep is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters; an unknown name is InvalidArgumentError (a ValueError)."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise InvalidArgumentError("invalid parameter %r for estimator %s; valid parameters: %s"
                                           % (key, type(self).__name__, ", ".join(valid)))
            setattr(self, key, value)
        return self

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name in self._param_names():
            default = sig.parameters[name].default
            value = getattr(self, name, None)
            if value is not default and value != default:
                parts.append("%s=%r" % (name, value))
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))

    # ---- scikit-learn tags -------------------------------------------------
    @property
    def _estimator_type(self):
        return self._estimator_kind

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags
        kind = self._estimator_kind
        return Tags(estimator_type=kind, target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags() if kind == "classifier" else None,
                    regressor_tags=RegressorTags() if kind == "regressor" else None,
                    input_tags=InputTags(allow_nan=True))

    def __sklearn_is_fitted__(self):
        return getattr(self, "_model", None) is not None

    def _check_fitted(self):
        if getattr(self, "_model", None) is None:
            raise not_fitted("this %s is not fitted yet; call fit first" % type(self).__name__)


def r2_score(y_true, y_pred, weights=None):
    """R^2 of predictions, sums by math.fsum (correctly rounded, order-free)."""
    n = len(y_true)
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    sw = math.fsum(w)
    if sw == 0:
        raise InvalidInputError("score: the sample weights sum to 0")
    mean = math.fsum(wi * float(t) for wi, t in zip(w, y_true)) / sw
    ss_res = math.fsum(wi * (float(t) - float(p)) ** 2 for wi, t, p in zip(w, y_true, y_pred))
    ss_tot = math.fsum(wi * (float(t) - mean) ** 2 for wi, t in zip(w, y_true))
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return 1.0 - ss_res / ss_tot


def accuracy(y_true, y_pred, weights=None):
    n = len(y_true)
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    sw = math.fsum(w)
    if sw == 0:
        raise InvalidInputError("score: the sample weights sum to 0")
    return math.fsum(wi for wi, t, p in zip(w, y_true, y_pred) if t == p) / sw
