"""Random forests and Extra Trees (docs/forest.md): scikit-learn's estimators'
names and defaults, identical bits on every machine and thread count.

Splits are searched on binned features (max_bin, as HistGradientBoosting does),
so thresholds are bin edges rather than midpoints between training values.
"""
import numbers
import sys
import warnings
from ctypes import byref, c_size_t

from ._lib import check, lib
from ._model import Model, dataset
from ._base import with_n_jobs
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import GradientBoosting, _text
from . import _array


class _Forest(GradientBoosting):
    _model_name = "random_forest"
    _family = 1

    def __init__(self, n_estimators=100, criterion=None, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=None, max_samples=None, oob_score=False, random_state=None, verbose=0, warm_start=False,
                 ccp_alpha=0.0, monotonic_cst=None, max_bin=255, bin_sample_rows=None, numeric_mode=None,
                 device="cpu", inference_engine="sequential", record_stages=False, n_jobs=None, distributed=None):
        self.n_jobs = n_jobs
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.verbose = verbose
        self.warm_start = warm_start
        self.ccp_alpha = ccp_alpha
        self.monotonic_cst = monotonic_cst
        self.inference_engine = inference_engine
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.oob_score = oob_score
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.random_state = random_state
        self.max_bin = max_bin
        self.bin_sample_rows = bin_sample_rows
        self.numeric_mode = numeric_mode
        self.device = device
        self.record_stages = record_stages
        self.distributed = distributed  # "mpi": over the ranks of an MPI job (docs/distributed.md); a run setting

    # scikit-learn's impurity importances (normalized total gain) stay the forests'
    # default; importance_type is a class attribute here, not a parameter
    importance_type = "gain"

    @property
    def feature_importances_(self):
        """scikit-learn's impurity-based importances: each feature's total gain
        (weighted impurity decrease) normalized to sum 1, or with importance_type
        "split" its share of the splits. Unfitted: AttributeError."""
        if getattr(self, "_model", None) is None:
            raise AttributeError("feature_importances_: %s is not fitted" % type(self).__name__)
        return self._typed_importances(self._model, self.importance_type, normalize=True)

    def _c_params(self, n_classes=None):
        pairs = [("model", self._model_name),
                 ("objective", "classification" if self._is_classifier() else "regression")]
        for name, kind in (("n_estimators", int), ("max_depth", int), ("min_samples_split", int),
                           ("min_samples_leaf", int), ("random_state", int), ("max_bin", int),
                           ("bin_sample_rows", int)):
            v = getattr(self, name)
            if v is not None:
                pairs.append((name if name != "random_state" else "seed", _text(name, v, kind)))
        if self.criterion is not None:
            pairs.append(("criterion", str(self.criterion)))
        if self.min_weight_fraction_leaf:
            pairs.append(("min_weight_fraction_leaf",
                          _text("min_weight_fraction_leaf", self.min_weight_fraction_leaf, float)))
        cw = getattr(self, "class_weight", None)
        if cw is not None:
            pairs.append(("class_weight", self._class_weight_text(cw)))
        mf = self._max_features_text()
        if mf is not None:
            pairs.append(("max_features", mf))
        if self.bootstrap is not None:
            pairs.append(("bootstrap", "1" if self.bootstrap else "0"))
        if self.max_samples is not None:
            if isinstance(self.max_samples, int) and not isinstance(self.max_samples, bool):
                raise InvalidArgumentError("max_samples as a row count is not supported; give a fraction in (0, 1]")
            pairs.append(("max_samples", _text("max_samples", self.max_samples, float)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", str(self.numeric_mode)))
        if self.device is not None:
            pairs.append(("device", str(self.device)))
        if self.distributed is not None:  # checked by the C library ("mpi" or "none"), before any work
            pairs.append(("distributed", _text("distributed", self.distributed, str)))
        return pairs

    def _max_features_text(self):
        """max_features as scikit-learn (1.3 and later) takes it, as the C key's text:
        "sqrt", "log2", an int in [1, n_features], a float in (0, 1] (1.0: every
        feature) or None (every feature). "auto" was deprecated in scikit-learn 1.1
        and removed in 1.3 (sqrt for classifiers, every feature for regressors); it
        is refused with what to use instead. The text is what the C library stores
        in the model's parameters, so the same value gives the CLI's model bytes."""
        mf = self.max_features
        if mf is None:
            return "all"
        if isinstance(mf, str):
            if mf in ("sqrt", "log2"):
                return mf
            if mf == "auto":
                use = "'sqrt'" if self._is_classifier() else "1.0 or None"
                raise InvalidArgumentError(
                    "max_features='auto' was deprecated in scikit-learn 1.1 and removed in 1.3; for a %s it "
                    "meant max_features=%s: use that" % (type(self).__name__, use))
            raise InvalidArgumentError("max_features=%r must be 'sqrt', 'log2', an int in [1, n_features], a "
                                       "float in (0.0, 1.0] or None" % (mf,))
        if isinstance(mf, bool) or not isinstance(mf, numbers.Real):
            raise InvalidArgumentError("max_features=%r must be 'sqrt', 'log2', an int in [1, n_features], a "
                                       "float in (0.0, 1.0] or None" % (mf,))
        if isinstance(mf, numbers.Integral):
            if int(mf) < 1:
                raise InvalidArgumentError("max_features=%r: an int must be in [1, n_features]" % (mf,))
            return str(int(mf))
        mf = float(mf)
        if not 0.0 < mf <= 1.0:
            raise InvalidArgumentError("max_features=%r: a float must be in (0.0, 1.0]" % (mf,))
        if mf == 1.0:
            return "all"
        return repr(mf) if "." in repr(mf) else repr(mf) + ".0"

    def _class_weight_text(self, cw):
        """class_weight as the C key's text: "balanced", "balanced_subsample", or
        "k:w;k:w" over class indices (labels mapped through the sorted classes, as
        scikit-learn's compute_class_weight: a class left out weighs 1; a key that
        is not a class is an error unless every class is listed)."""
        if isinstance(cw, str):
            if cw not in ("balanced", "balanced_subsample"):
                raise InvalidArgumentError("class_weight=%r: 'balanced', 'balanced_subsample', a dict "
                                           "{label: weight} or None" % (cw,))
            return cw
        if not isinstance(cw, dict):
            raise InvalidArgumentError("class_weight=%r: 'balanced', 'balanced_subsample', a dict {label: weight} "
                                       "or None (one output only: a list of dicts is not supported)" % (cw,))
        classes = self._pending_classes
        parts, missing = [], []
        for i, c in enumerate(classes):
            key = c.item() if hasattr(c, "item") else c
            if key in cw:
                parts.append("%d:%s" % (i, _text("class_weight[%r]" % (key,), cw[key], float)))
            else:
                missing.append(key)
        if missing and len(classes) - len(missing) != len(cw):
            raise InvalidArgumentError("The classes, %r, are not in class_weight" % (missing,))
        return ";".join(parts) if parts else "none"

    def _fit_model(self, pairs, train, valid, card):
        if valid is not None:
            raise InvalidArgumentError("forests take no eval_set")
        return Model.fit_forest(pairs, train, card, init=self._warm_init())

    def _warm_init(self):
        """warm_start=True on a fitted forest: its model, whose trees the fit keeps
        (sb_forest_fit_continue: the n_estimators-tree forest's bytes); else None."""
        if not self.warm_start or getattr(self, "_model", None) is None:
            return None
        return self._model

    def _warm_unchanged(self):
        """scikit-learn's warm start checks before a fit: fewer estimators than
        fitted is a ValueError; as many warns (UserWarning) and fits nothing
        (True: the caller returns the estimator as it is)."""
        if not self.warm_start or getattr(self, "_model", None) is None:
            return False
        have = self.n_estimators_
        if not isinstance(self.n_estimators, numbers.Integral) or isinstance(self.n_estimators, bool):
            return False  # the C library names the bad value
        if self.n_estimators < have:
            raise InvalidArgumentError("n_estimators=%d must be larger or equal to len(estimators_)=%d when "
                                       "warm_start==True" % (self.n_estimators, have))
        if self.n_estimators == have:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit new trees.", UserWarning)
            return True
        return False

    @with_n_jobs
    def _predict_proba(self, X):
        d = self._predict_data(X)
        return self._model.predict(d, 1, self.n_classes_, device=self._predict_device())

    def _predict_device(self):
        """inference_engine="parallel": predictions on the GPU (device=cuda), the same bits
        as "sequential" (the host)."""
        eng = getattr(self, "inference_engine", "sequential")
        if eng not in ("sequential", "parallel"):
            raise InvalidArgumentError("inference_engine=%r: 'sequential' (host) or 'parallel' (GPU)" % (eng,))
        return "cuda" if eng == "parallel" else None

    @with_n_jobs
    def fit(self, X, y, sample_weight=None):
        """Train on X (n, d) and y (n,); sample_weight (n,), finite and >= 0, is
        rounded to float32 and then to the forest's fixed point (docs/forest.md).
        With oob_score=True also sets oob_score_ (accuracy or R^2 of the
        out-of-bag predictions, unweighted as scikit-learn's) and
        oob_decision_function_ / oob_prediction_."""
        self._check_unbuilt_params()
        if self._warm_unchanged():
            return self
        mf = self.max_features
        if isinstance(mf, numbers.Integral) and not isinstance(mf, bool) and X is not None:
            width = _width(X)
            if width is not None and int(mf) > width:
                raise InvalidArgumentError("max_features=%d must be in [1, n_features]; X has %d features"
                                           % (mf, width))
        if self.oob_score and self.bootstrap is False:
            raise InvalidArgumentError("oob_score=True needs bootstrap=True")
        if self.oob_score and self._model_name == "extra_trees" and not self.bootstrap:
            raise InvalidArgumentError("oob_score=True needs bootstrap=True (Extra Trees draw no bootstrap by default)")
        if getattr(self, "class_weight", None) is not None and not isinstance(self.class_weight, str) \
                and y is not None:
            self._pending_classes = self._encode_labels(y)[0]
        try:
            super().fit(X, y, sample_weight=sample_weight)
        finally:
            self.__dict__.pop("_pending_classes", None)
        if self.oob_score:
            self._set_oob(X, y)
        return self

    def _check_unbuilt_params(self):
        """scikit-learn's forest parameters that samebits does not build: each
        scikit-learn default is accepted (it switches the feature off there too),
        any other value is refused by name; verbose is accepted with a warning
        that it has no effect."""
        name = type(self).__name__
        for param, default, why in (
                ("max_leaf_nodes", None, "a leaf budget (best-first growth) is not built"),
                ("min_impurity_decrease", 0.0, "a minimum impurity decrease is not built"),
                ("ccp_alpha", 0.0, "minimal cost-complexity pruning is not built"),
                ("monotonic_cst", None, "monotonic constraints are not built")):
            v = getattr(self, param)
            if not (v is None if default is None else (not isinstance(v, bool) and v == default)):
                raise InvalidArgumentError("%s(%s=%r) is not supported: %s; only %s=%r" % (name, param, v, why, param,
                                                                                         default))
        _note_verbose(self)

    def _holds(self, info):
        return info["family"] == self._family and \
            (info["objective"] == "classification") == self._is_classifier()

    def _set_fitted(self, model, classes, names):
        super()._set_fitted(model, classes, names)
        if not isinstance(self, IsolationForest):
            self.n_outputs_ = 1  # one target (scikit-learn's attribute; several outputs are not built)

    # The forest parameters a model file stores: constructor name -> (C key,
    # type, the text the constructor's None stands for, or None). criterion,
    # bootstrap, max_features and class_weight are read by _params_from_file.
    _FILE_KEYS = {
        "n_estimators": ("n_estimators", int, None),
        "max_depth": ("max_depth", int, "-1"),
        "min_samples_split": ("min_samples_split", int, None),
        "min_samples_leaf": ("min_samples_leaf", int, None),
        "min_weight_fraction_leaf": ("min_weight_fraction_leaf", float, None),
        "max_samples": ("max_samples", float, "0"),
        "random_state": ("seed", int, "0"),
        "max_bin": ("max_bin", int, None),
        "bin_sample_rows": ("bin_sample_rows", int, "200000"),
        "numeric_mode": ("numeric_mode", str, "identical"),
    }

    def _params_from_file(self, stored, model):
        """{constructor parameter: value} from the forest file's parameter text,
        as GradientBoosting._params_from_file: a stored text that the
        constructor's None (or default) gives restores that default. criterion:
        None for the default (gini / squared_error); bootstrap: None for the
        forest's own default (random forest on, Extra Trees off); max_features:
        'sqrt', 'log2', an int, a float, or 'all' as the class's every-feature
        value (1.0 where that is the default, else None); class_weight:
        'balanced', 'balanced_subsample' or {label: weight} through classes_."""
        from .gbdt import _file_value
        out = {}
        defaults = self._param_defaults()
        for name, (key, kind, none_text) in self._FILE_KEYS.items():
            if key not in stored or name not in defaults:
                continue
            text = stored[key]
            if defaults[name] is None and none_text is not None and text == none_text:
                out[name] = None
            else:
                out[name] = _file_value(text, kind) if kind is not str else text
        if "min_weight_fraction_leaf" in defaults and "min_weight_fraction_leaf" not in stored:
            out["min_weight_fraction_leaf"] = 0.0  # written only when set
        if "criterion" in stored and "criterion" in defaults:
            default_criterion = "gini" if self._is_classifier() else "squared_error"
            out["criterion"] = None if stored["criterion"] == default_criterion else stored["criterion"]
        if "bootstrap" in stored and "bootstrap" in defaults:
            own = "1" if self._model_name == "random_forest" else "0"
            out["bootstrap"] = None if stored["bootstrap"] == own else stored["bootstrap"] == "1"
        if "max_features" in stored and "max_features" in defaults:
            mf = stored["max_features"]
            if mf in ("sqrt", "log2"):
                out["max_features"] = mf
            elif mf == "all":
                out["max_features"] = 1.0 if defaults["max_features"] == 1.0 else None
            elif "." in mf or "e" in mf:
                out["max_features"] = _file_value(mf, float)
            else:
                out["max_features"] = int(mf)
        if "class_weight" in defaults:
            out["class_weight"] = self._class_weight_from_file(stored.get("class_weight"), model)
        return out

    @staticmethod
    def _class_weight_from_file(text, model):
        """class_weight from its stored text: None (absent), 'balanced',
        'balanced_subsample', or 'k:w;k:w' by class index mapped to
        {classes_[k]: w} through the labels the file stores (0..K-1 without)."""
        if text is None or text in ("balanced", "balanced_subsample"):
            return text
        from .gbdt import _file_value
        labels = model.class_labels()
        out = {}
        for part in text.split(";"):
            k, sep, w = part.partition(":")
            if not sep:
                continue
            key = labels[int(k)] if labels is not None else int(k)
            out[key.item() if hasattr(key, "item") else key] = _file_value(w, float)
        return out

    @property
    def decision_function(self):
        """Forest classifiers have no decision_function (as scikit-learn's): use
        predict_proba; predict_raw gives the C library's raw output."""
        raise AttributeError("%s has no decision_function (as scikit-learn's forests); use predict_proba"
                             % type(self).__name__)

    @with_n_jobs
    def _set_oob(self, X, y):
        np = sys.modules.get("numpy")
        if np is None:
            raise InvalidArgumentError("oob_score=True needs NumPy")
        d = dataset(_array.matrix(X, "X"))
        need = c_size_t(0)
        check(lib.sb_forest_oob_predict(self._model._h.ptr, d.ptr, None, 0, byref(need)))
        out = _array.empty((need.value,))
        check(lib.sb_forest_oob_predict(self._model._h.ptr, d.ptr, _array.pointer(out), need.value, byref(need)))
        pred = np.asarray(out, dtype=np.float64)
        if self._is_classifier():
            pred = pred.reshape(-1, self.n_classes_)
            self.oob_decision_function_ = pred
            ok = ~np.isnan(pred[:, 0])
            truth = np.searchsorted(np.asarray(self.classes_), np.asarray(y)[ok])
            self.oob_score_ = float(np.mean(np.argmax(pred[ok], axis=1) == truth))
        else:
            self.oob_prediction_ = pred
            ok = ~np.isnan(pred)
            yt = np.asarray(y, dtype=np.float64)[ok]
            self.oob_score_ = float(1.0 - np.sum((yt - pred[ok]) ** 2) / np.sum((yt - yt.mean()) ** 2))


class _ForestClassifier(_Forest):
    """A forest classifier: the forest's parameters and class_weight (None,
    "balanced", "balanced_subsample" or a dict {label: weight})."""
    _estimator_kind = "classifier"

    def __init__(self, n_estimators=100, criterion=None, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=None, max_samples=None, oob_score=False, random_state=None, verbose=0, warm_start=False,
                 class_weight=None, ccp_alpha=0.0, monotonic_cst=None, max_bin=255, bin_sample_rows=None,
                 numeric_mode=None, device="cpu", inference_engine="sequential", record_stages=False, n_jobs=None,
                 distributed=None):
        super().__init__(n_estimators=n_estimators, criterion=criterion, max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                         max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
                         bootstrap=bootstrap, max_samples=max_samples, oob_score=oob_score,
                         random_state=random_state, verbose=verbose, warm_start=warm_start, ccp_alpha=ccp_alpha,
                         monotonic_cst=monotonic_cst, max_bin=max_bin, bin_sample_rows=bin_sample_rows,
                         numeric_mode=numeric_mode, device=device, inference_engine=inference_engine,
                         record_stages=record_stages, n_jobs=n_jobs, distributed=distributed)
        self.class_weight = class_weight

    def _is_classifier(self):
        return True


class RandomForestClassifier(_ForestClassifier):
    """Breiman's random forest for classification (gini or entropy).

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the
    same parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md, "Forests"). Any other value is InvalidArgumentError, before
    training."""
    _model_name = "random_forest"


class _ForestRegressor(_Forest):
    """The regression forests' shared part (squared error)."""
    _estimator_kind = "regressor"

    def _is_classifier(self):
        return False


class RandomForestRegressor(_ForestRegressor):
    """Breiman's random forest for regression (squared error).

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the
    same parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md, "Forests"). Any other value is InvalidArgumentError, before
    training."""
    _model_name = "random_forest"


class ExtraTreesClassifier(_ForestClassifier):
    """Extremely randomized trees for classification (no bootstrap by default).

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the
    same parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md, "Forests"). Any other value is InvalidArgumentError, before
    training."""
    _model_name = "extra_trees"
    _family = 2


class ExtraTreesRegressor(_ForestRegressor):
    """Extremely randomized trees for regression (no bootstrap by default).

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the
    same parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md, "Forests"). Any other value is InvalidArgumentError, before
    training."""
    _model_name = "extra_trees"
    _family = 2


class IsolationForest(_Forest):
    """Isolation forest (Liu, Ting and Zhou 2008) for anomaly detection.

    score_samples(X) is minus the anomaly score 2^(-E[h(x)] / c(max_samples)),
    as scikit-learn defines it; decision_function is score_samples - offset_,
    offset_ = -0.5 for contamination="auto", else the contamination quantile of
    the training rows' score_samples (linear interpolation between the sorted
    scores, in double precision: the same value on every machine); predict is
    -1 for anomalies (decision_function < 0), 1 for inliers.

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the
    same parameters and the same full X; each tree's subsample is drawn by global row and every rank gets the
    single process's model bytes (docs/distributed.md, "Isolation forests"). Any other value is
    InvalidArgumentError, before training."""

    _estimator_kind = "outlier_detector"
    _family = 3

    def __init__(self, n_estimators=100, max_samples="auto", contamination="auto", max_features=1.0, bootstrap=False,
                 n_jobs=None, random_state=None, verbose=0, warm_start=False, max_bin=255, bin_sample_rows=None,
                 numeric_mode=None, device="cpu", inference_engine="sequential", distributed=None):
        self.n_jobs = n_jobs
        self.inference_engine = inference_engine
        self.n_estimators = n_estimators
        self.contamination = contamination
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.max_bin = max_bin
        self.bin_sample_rows = bin_sample_rows
        self.numeric_mode = numeric_mode
        self.device = device
        self.distributed = distributed  # "mpi": over the ranks of an MPI job (docs/distributed.md); a run setting
        self.record_stages = False

    def _is_classifier(self):
        return False

    def _c_params(self, n_classes=None):
        pairs = []
        for name, key in (("n_estimators", "n_estimators"), ("max_samples", "max_samples"),
                          ("random_state", "seed"), ("max_bin", "max_bin"), ("bin_sample_rows", "bin_sample_rows")):
            v = getattr(self, name)
            if name == "max_samples":
                v = self._pending_psi
            if v is None:
                continue
            pairs.append((key, _text(name, v, int)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", str(self.numeric_mode)))
        if self.device is not None:
            pairs.append(("device", str(self.device)))
        if self.distributed is not None:
            pairs.append(("distributed", _text("distributed", self.distributed, str)))
        return pairs

    def _rows_per_tree(self, n):
        """max_samples as scikit-learn takes it, as the row count given to the C
        library: "auto" is min(256, n), an int k is min(k, n) (with scikit-learn's
        warning when k > n), a float f in (0, 1] is int(f * n). The C library
        clamps the count to n itself and stores the count it used, so "auto" and
        256 are passed as 256: the model bytes of before "auto" existed."""
        v = self.max_samples
        if isinstance(v, str):
            if v == "auto":
                return 256
            raise InvalidArgumentError("The 'max_samples' parameter of IsolationForest must be 'auto', an int in "
                                       "the range [2, inf) or a float in the range (0.0, 1.0]. Got %r instead." % (v,))
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidArgumentError("The 'max_samples' parameter of IsolationForest must be 'auto', an int in "
                                       "the range [2, inf) or a float in the range (0.0, 1.0]. Got %r instead." % (v,))
        if isinstance(v, numbers.Integral):
            if int(v) > n:
                warnings.warn("max_samples (%d) is greater than the total number of samples (%d). max_samples will "
                              "be set to n_samples for estimation." % (int(v), n), UserWarning, stacklevel=4)
            return int(v)  # below 2: refused by the C library, naming max_samples
        f = float(v)
        if not 0.0 < f <= 1.0:
            raise InvalidArgumentError("The 'max_samples' parameter of IsolationForest must be 'auto', an int in "
                                       "the range [2, inf) or a float in the range (0.0, 1.0]. Got %r instead." % (v,))
        k = int(f * n)
        if k < 2:
            raise InvalidArgumentError("max_samples=%r of %d rows is %d row%s a tree; an isolation tree needs at "
                                       "least 2" % (v, n, k, "" if k == 1 else "s"))
        return k

    def _check_unbuilt_params(self):
        """scikit-learn's parameters that samebits' isolation forest does not build:
        their scikit-learn defaults are accepted (they mean what they mean there),
        any other value is refused by name; verbose is accepted with a warning."""
        mf = self.max_features
        if not (isinstance(mf, float) and mf == 1.0):  # an int k means k features in scikit-learn (1: one)
            raise InvalidArgumentError("IsolationForest(max_features=%r) is not supported: samebits' isolation "
                                       "trees draw each split's feature among all features (max_features=1.0)"
                                       % (mf,))
        if self.bootstrap is not False:
            raise InvalidArgumentError("IsolationForest(bootstrap=%r) is not supported: each tree's rows are drawn "
                                       "without replacement (bootstrap=False)" % (self.bootstrap,))
        _note_verbose(self)

    def _fit_model(self, pairs, train, valid, card):
        return Model.fit_isolation(pairs, train, card, init=self._warm_init())

    def _holds(self, info):
        return info["family"] == self._family

    # What an isolation forest's file stores of its parameters: max_samples is
    # stored as the row count the fit drew (max_samples_), which "auto" and an
    # int give alike, so the parameter keeps its value.
    _FILE_KEYS = {k: v for k, v in _Forest._FILE_KEYS.items() if k != "max_samples"}

    def _load_fitted(self, model, source):
        """A loaded isolation forest: offset_ is -0.5 when contamination is 'auto'
        (the file does not hold the training rows a contamination quantile needs)."""
        from ._model import params_in_file
        super()._load_fitted(model, source)
        psi = params_in_file(source).get("max_samples")
        if psi is not None:
            self.max_samples_ = int(psi)  # the rows each tree drew (the C fit stores the count it used)
        if self.contamination == "auto":
            self.offset_ = -0.5

    @with_n_jobs
    def fit(self, X, y=None, sample_weight=None):
        """Train on X (n, d); y is ignored. sample_weight (n,), finite and >= 0,
        rounded to float32: each tree draws its max_samples rows without
        replacement, each draw taking a row not yet drawn with probability
        proportional to its weight (rows of weight zero never; docs/forest.md,
        "Isolation forest sample weights"); equal weights are the unweighted
        forest, bit for bit.
        Sets offset_ and max_samples_ (at most the rows of positive weight)."""
        self._check_unbuilt_params()
        if self._warm_unchanged():
            return self
        c = self.contamination
        if not (c == "auto" or (isinstance(c, (int, float)) and not isinstance(c, bool) and 0.0 < c <= 0.5)):
            raise InvalidArgumentError("contamination must be 'auto' or a number in (0, 0.5], not %r" % (c,))
        m = _array.matrix(X, "X")
        if m.nrows < 2:
            raise InvalidInputError("IsolationForest needs at least 2 rows; got n_samples = %d" % m.nrows)
        drawable = m.nrows if sample_weight is None else _isolation_weight(sample_weight, m.nrows)
        psi = self._pending_psi = self._rows_per_tree(m.nrows)
        try:
            # labels are not used; the weights act in each tree's draw (the C fit's)
            super(_Forest, self).fit(X, [0.0] * m.nrows, sample_weight=sample_weight)
        finally:
            del self._pending_psi
        self.max_samples_ = min(psi, drawable)
        self.offset_ = -0.5 if c == "auto" else _quantile(self.score_samples(X), float(c))
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """fit(X), then predict(X): -1 for the anomalies among the training rows, 1 for the others."""
        return self.fit(X, y, sample_weight=sample_weight).predict(X)

    @property
    def score(self):
        """An outlier detector has no score (as scikit-learn's IsolationForest):
        score_samples and decision_function give the per-row scores."""
        raise AttributeError("IsolationForest has no score (as scikit-learn's); use score_samples or "
                             "decision_function")

    @with_n_jobs
    def score_samples(self, X):
        """Minus the anomaly score of each row (lower is more anomalous): float32
        values, as a float64 numpy.ndarray (scikit-learn's dtype; widening is exact)
        when NumPy is loaded, else a samebits.Array."""
        return _float64(self._score32(X))

    def _score32(self, X):
        d = self._predict_data(X)
        return _map(self._model.predict(d, 2, 1, device=self._predict_device()), lambda v: -v)

    def decision_function(self, X):
        """score_samples - offset_, each rounded to float32: negative for anomalies
        (a float64 numpy.ndarray of those float32 values when NumPy is loaded)."""
        return _float64(self._decision32(X))

    @with_n_jobs
    def _decision32(self, X):
        off = getattr(self, "offset_", None)
        if off is None:
            if self.contamination != "auto":
                raise InvalidArgumentError("contamination=%r needs offset_, which fit computes from its rows; a model "
                                           "loaded from a file has only contamination='auto'" % (self.contamination,))
            off = -0.5
        return _map(self._score32(X), lambda v: v - off)

    def predict(self, X, raw_score=False, pred_leaf=False, pred_contrib=False):
        """-1 for anomalies (decision_function < 0), 1 for inliers, as integers (as
        scikit-learn's): an int64 numpy.ndarray when NumPy is loaded, else a list of ints.
        raw_score, pred_leaf, pred_contrib: as the boosting estimators' predict (the raw
        score is E[h(x)] / c(max_samples); docs/explain.md)."""
        if raw_score or pred_leaf or pred_contrib:
            return self._predict_explained(X, raw_score, pred_leaf, pred_contrib)
        d = self._decision32(X)
        np = sys.modules.get("numpy")
        if np is not None:
            return np.where(np.asarray(d) < 0, -1, 1).astype(np.int64)
        return [-1 if v < 0 else 1 for v in d.tolist()]


def _isolation_weight(sample_weight, n):
    """Check an isolation forest's sample_weight: n finite values >= 0, at least
    two of them positive (a tree draws only rows of positive weight, and
    isolating needs two); the count of positive weights, the most rows a tree
    can draw. Anything else is refused by name before any work (the C fit
    refuses the same)."""
    w = _array.row_weights(sample_weight, n)
    positive = 0
    for i in range(w[2]):
        v = float(w[0][i])
        if not (v >= 0.0 and v != float("inf")):
            raise InvalidInputError("sample_weight[%d] is %r: weights must be finite and >= 0" % (i, v))
        positive += v > 0.0
    if positive == 0:
        raise InvalidInputError("sample_weight is all zero: nothing to learn from")
    if positive < 2:
        raise InvalidInputError("IsolationForest needs at least 2 rows of positive sample_weight; got 1")
    return positive


def _note_verbose(est):
    if est.verbose not in (0, False):
        warnings.warn("%s: parameter verbose=%r has no effect in samebits (nothing is logged)"
                      % (type(est).__name__, est.verbose), UserWarning, stacklevel=4)


def _float64(a):
    """A float32 Array as a float64 numpy.ndarray (exact) when NumPy is loaded, else a."""
    np = sys.modules.get("numpy")
    return np.asarray(a).astype(np.float64) if np is not None else a


def _width(X):
    """X's column count without converting it (None when it is not cheap to tell)."""
    shape = getattr(X, "shape", None)
    try:
        if shape is not None and len(shape) == 2:
            return int(shape[1])
        if isinstance(X, (list, tuple)) and X and hasattr(X[0], "__len__"):
            return len(X[0])
    except TypeError:
        pass
    return None


def _quantile(a, q):
    """The q quantile (0 <= q <= 1) of the values of a: sorted, then linear
    interpolation between the two nearest at position (n - 1) q, each step one
    IEEE double operation (numpy's 'linear' percentile up to its last bit)."""
    np = sys.modules.get("numpy")
    v = np.sort(np.asarray(a, dtype=np.float64)).tolist() if np is not None else sorted(a.tolist())
    h = (len(v) - 1) * q
    i = int(h)
    t = h - i
    lo, hi = v[i], v[min(i + 1, len(v) - 1)]
    return lo + (hi - lo) * t


def _map(a, fn):
    """A new float32 Array of fn applied to each value of a (each result rounded to float32)."""
    out = _array.empty((len(a),))
    flat = memoryview(out).cast("B").cast("f")
    for i, v in enumerate(a.tolist()):
        flat[i] = fn(v)
    return out
