"""Thin wrappers of the C handles: datasets, cards and models."""
import ctypes
import os
import sys
from ctypes import byref, c_int32, c_int64, c_size_t, c_uint8, c_void_p

from . import _array
from ._lib import Handle, check, lib, text_call

PREDICT_RAW, PREDICT_PROBA, PREDICT_VALUE, PREDICT_TRANSFORM = 0, 1, 2, 3
PREDICT_LEAF, PREDICT_CONTRIB = 4, 5  # the tree families' explanations (docs/explain.md)
FAMILY_GBDT = 0
FAMILY_LINEAR = 5
FAMILY_KNN = 6
MODES = ("identical", "deterministic", "fast")
OBJECTIVES = ("regression", "binary", "multiclass", "lambdarank", "rank_pairwise", "huber", "quantile", "poisson",
              "gamma", "tweedie")


def prediction_dataset(est, X):
    """The dataset of X for a fitted estimator's prediction: X's feature names,
    when it has them, must be those seen in fit, and its width the fitted one
    (each refused by name); the names are then dropped (the model matches by
    position)."""
    from .errors import InvalidInputError
    est._check_fitted()
    tables = getattr(est, "_cat_tables", None)
    if tables:  # strings of categorical features to the codes the model was trained on
        X, _, _ = _array.encode_categorical(X, None, tables, "X")
    m = _array.matrix(X, "X")
    fitted = getattr(est, "feature_names_in_", None)
    if m.names is not None and fitted is not None and list(m.names) != list(fitted):
        raise InvalidInputError("X's feature names %r differ from those seen in fit %r"
                                % (list(m.names), list(fitted)))
    if m.ncols != est.n_features_in_:
        raise InvalidInputError("feature-count mismatch: X has %d features, but %s is expecting %d features "
                                "as input" % (m.ncols, type(est).__name__, est.n_features_in_))
    m.names = None
    return dataset(m)


def class_probabilities(model, d, k, device):
    """A classifier's probabilities, shape (n, k): the model's own for k > 2; for
    k = 2 its P(1) as column 1 and 1 - P(1) as column 0 (exact in double, then
    rounded once to float32, as C's 1.0f - p). A samebits.Array."""
    if k > 2:
        return model.predict(d, PREDICT_PROBA, k, device=device)
    p1 = model.predict(d, PREDICT_PROBA, 1, device=device)
    out = _array.empty((len(p1), 2))
    flat = memoryview(out).cast("B").cast("f")
    for i, p in enumerate(p1.tolist()):
        flat[2 * i] = 1.0 - p
        flat[2 * i + 1] = p
    return out


def dataset(m, label=None, weight=None, group=None, view=False, targets=None, init_score=None):
    """An sb_dataset from a Matrix (and optional (ptr, n) label and weight, and
    a sequence of query sizes for ranking). targets: a Matrix of several
    targets a row instead of label (sb_dataset_set_targets). view: the dataset
    reads m's buffer in place (sb_dataset_view_matrix); the handle then keeps m
    alive, and the caller must not change m's buffer while the handle lives."""
    d = c_void_p()
    check((lib.sb_dataset_view_matrix if view else lib.sb_dataset_from_matrix)(m.ptr, m.nrows, m.ncols, byref(d)))
    h = Handle(d, lib.sb_dataset_free)
    if view:
        h.keep = m
    if m.names is not None:
        names = (ctypes.c_char_p * len(m.names))(*[n.encode("utf-8") for n in m.names])
        check(lib.sb_dataset_set_feature_names(d, names, len(m.names)))
    if label is not None:
        check(lib.sb_dataset_set_label(d, label[0], label[1]))
    if targets is not None:
        check(lib.sb_dataset_set_targets(d, targets.ptr, targets.nrows, targets.ncols))
    if weight is not None:
        check(lib.sb_dataset_set_weight(d, weight[0], weight[1]))
    if init_score is not None:  # (pointer, count): gradient boosting's starting margins
        check(lib.sb_dataset_set_init_score(d, init_score[0], init_score[1]))
    if group is not None:
        sizes = [int(v) for v in _array.values(group, "group")]
        arr = (c_int64 * max(len(sizes), 1))(*sizes)
        check(lib.sb_dataset_set_group(d, arr, len(sizes)))
    return h


class Card:
    """An identity card (JSON lines of stage digests; docs/cards.md)."""

    def __init__(self, handle=None):
        if handle is None:
            p = c_void_p()
            check(lib.sb_card_create(byref(p)))
            handle = Handle(p, lib.sb_card_free)
        self._h = handle

    @classmethod
    def parse(cls, text):
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        p = c_void_p()
        check(lib.sb_card_parse(data, len(data), byref(p)))
        return cls(Handle(p, lib.sb_card_free))

    @classmethod
    def load(cls, path):
        p = c_void_p()
        check(lib.sb_card_load(os.fsencode(path), byref(p)))
        return cls(Handle(p, lib.sb_card_free))

    @classmethod
    def fixture(cls, name):
        """Run the pinned fixture name on this machine and return its card."""
        card = cls()
        check(lib.sb_fixture_run(name.encode(), card._h.ptr))
        return card

    @classmethod
    def reference(cls, name):
        """The reference card of the pinned fixture name, as shipped in the library."""
        p = c_void_p()
        check(lib.sb_fixture_reference(name.encode(), byref(p)))
        return cls(Handle(p, lib.sb_card_free))

    def set_meta(self, key, value):
        check(lib.sb_card_set_meta(self._h.ptr, key.encode(), str(value).encode()))

    def stage_count(self):
        n = c_int64(0)
        check(lib.sb_card_stage_count(self._h.ptr, byref(n)))
        return n.value

    def text(self):
        return text_call(lib.sb_card_text, self._h.ptr)

    def save(self, path):
        check(lib.sb_card_save(self._h.ptr, os.fsencode(path)))

    def compare(self, other):
        """(identical, diff) where diff is a dict describing the first difference."""
        d = _LibDiff()
        st = lib.sb_card_compare(self._h.ptr, other._h.ptr, byref(d))
        if st not in (0, 9):
            check(st)
        return st == 0, {"stage_index": d.stage_index, "stage_a": d.stage_a.decode(), "stage_b": d.stage_b.decode(),
                         "digest_a": d.digest_a.decode(), "digest_b": d.digest_b.decode(),
                         "reason": d.reason.decode()}

    def __str__(self):
        return self.text()


from ._lib import CardDiff as _LibDiff  # noqa: E402


# sb_label_kind (include/samebits.h)
LABELS_NONE, LABELS_INT64, LABELS_FLOAT64, LABELS_STRING, LABELS_BOOL = 0, 1, 2, 3, 4
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def class_labels_kind(classes):
    """(sb_label_kind, values as Python scalars) for a classifier's classes_
    (a NumPy array or a list): LABELS_NONE when they are the int64 (or Python
    int) values 0..K-1, which a model without labels means, or when they are of
    no kind the model file holds."""
    np = sys.modules.get("numpy")
    dtype = getattr(classes, "dtype", None)
    values = classes.tolist() if hasattr(classes, "tolist") else list(classes)
    if dtype is not None and np is not None and dtype.kind not in "O":
        kind = {"b": LABELS_BOOL, "i": LABELS_INT64, "u": LABELS_INT64, "f": LABELS_FLOAT64,
                "U": LABELS_STRING}.get(dtype.kind, LABELS_NONE)
        if kind == LABELS_INT64 and dtype == np.int64 and values == list(range(len(values))):
            return LABELS_NONE, None
    else:  # Python objects: one kind for all
        kinds = set()
        for v in values:
            kinds.add(LABELS_BOOL if isinstance(v, (bool,) + ((np.bool_,) if np is not None else ()))
                      else LABELS_INT64 if isinstance(v, int) or (np is not None and isinstance(v, np.integer))
                      else LABELS_FLOAT64 if isinstance(v, float) or (np is not None and isinstance(v, np.floating))
                      else LABELS_STRING if isinstance(v, str) else LABELS_NONE)
        kind = kinds.pop() if len(kinds) == 1 else LABELS_NONE
        if kind == LABELS_INT64 and dtype is None and [int(v) for v in values] == list(range(len(values))):
            return LABELS_NONE, None
    if kind == LABELS_INT64:
        values = [int(v) for v in values]
        if any(v < _INT64_MIN or v > _INT64_MAX for v in values):
            return LABELS_NONE, None
    elif kind == LABELS_FLOAT64:
        values = [float(v) for v in values]
    elif kind == LABELS_BOOL:
        values = [bool(v) for v in values]
    elif kind == LABELS_STRING:
        try:  # the file holds UTF-8 without NUL, each within the name limit
            if any("\0" in v or len(v.encode("utf-8")) > 65536 for v in values):
                return LABELS_NONE, None
        except UnicodeEncodeError:  # a lone surrogate
            return LABELS_NONE, None
    return kind, values


class Model:
    """An sb_model handle."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def _fit(cls, fn, pairs, train, *middle, card=None):
        """A model trained by the C entry fn(params, train, *middle, card, &out)."""
        from ._lib import params
        p = params(pairs)
        out = c_void_p()
        check(fn(p.ptr, train.ptr, *middle, card._h.ptr if card is not None else None, byref(out)))
        return cls(Handle(out, lib.sb_model_free))

    @classmethod
    def fit_gbdt(cls, pairs, train, valid=None, card=None, init=None, names=None):
        """Gradient boosting; from init's trees (a Model) when given: continued training.
        valid: None, one dataset handle, or a list of them (sb_gbdt_fit_multi; names:
        None or one str a set; a handle that is train itself is the training set)."""
        if isinstance(valid, list):
            ptrs = (c_void_p * max(len(valid), 1))(*[v.ptr for v in valid])
            cnames = None
            if names is not None:
                cnames = (ctypes.c_char_p * max(len(names), 1))(*[n.encode("utf-8") for n in names])
            return cls._fit(lib.sb_gbdt_fit_multi, pairs, train, ptrs, len(valid), cnames,
                            init._h.ptr if init is not None else None, card=card)
        if init is not None:
            return cls._fit(lib.sb_gbdt_fit_continue, pairs, train, valid.ptr if valid is not None else None,
                            init._h.ptr, card=card)
        return cls._fit(lib.sb_gbdt_fit, pairs, train, valid.ptr if valid is not None else None, card=card)

    @classmethod
    def fit_forest(cls, pairs, train, card=None, init=None):
        """A random forest or Extra Trees; keeping init's trees (a Model) when given: warm start."""
        if init is not None:
            return cls._fit(lib.sb_forest_fit_continue, pairs, train, init._h.ptr, card=card)
        return cls._fit(lib.sb_forest_fit, pairs, train, card=card)

    @classmethod
    def fit_isolation(cls, pairs, train, card=None, init=None):
        """An isolation forest; keeping init's trees (a Model) when given: warm start."""
        if init is not None:
            return cls._fit(lib.sb_isolation_forest_fit_continue, pairs, train, init._h.ptr, card=card)
        return cls._fit(lib.sb_isolation_forest_fit, pairs, train, card=card)

    @classmethod
    def fit_linear(cls, pairs, train, card=None):
        return cls._fit(lib.sb_linear_fit, pairs, train, card=card)

    @classmethod
    def from_bytes(cls, data):
        data = bytes(data)
        buf = (c_uint8 * max(len(data), 1)).from_buffer_copy(data if data else b"\0")
        out = c_void_p()
        check(lib.sb_model_from_bytes(buf, len(data), byref(out)))
        return cls(Handle(out, lib.sb_model_free))

    @classmethod
    def load(cls, path):
        out = c_void_p()
        check(lib.sb_model_load(os.fsencode(path), byref(out)))
        return cls(Handle(out, lib.sb_model_free))

    def save(self, path):
        check(lib.sb_model_save(self._h.ptr, os.fsencode(path)))

    def to_bytes(self):
        need = c_size_t(0)
        check(lib.sb_model_to_bytes(self._h.ptr, None, 0, byref(need)))
        buf = (c_uint8 * need.value)()
        check(lib.sb_model_to_bytes(self._h.ptr, buf, need.value, byref(need)))
        return bytes(buf)

    def digest(self):
        hexbuf = (ctypes.c_char * 65)()
        check(lib.sb_model_digest(self._h.ptr, hexbuf))
        return hexbuf.value.decode()

    def info(self):
        from ._lib import ModelInfo
        i = ModelInfo()
        check(lib.sb_model_get_info(self._h.ptr, byref(i)))
        out = {"family": i.family, "num_features": i.num_features, "num_class": i.num_class,
               "ntrees": i.ntrees, "numeric_mode": MODES[i.numeric_mode] if 0 <= i.numeric_mode < 3
               else str(i.numeric_mode), "objective": i.objective.decode(), "profile": self.profile()}
        if i.family == FAMILY_LINEAR:
            out["linear_kind"] = self.get_int("kind")  # which linear estimator (docs/linear.md)
        if i.family == FAMILY_KNN:
            out["knn_task"] = self.get_int("task")  # neighbors, classification or regression (docs/neighbors.md)
        if i.family == 13:
            out["svm_kind"] = self.get_int("kind")  # SVC (0) or SVR (1) (docs/svm.md)
        return out

    def get_array(self, name):
        """A linear model's float32 attribute array by name (sb_model_get_array), flat."""
        need = c_size_t(0)
        check(lib.sb_model_get_array(self._h.ptr, name.encode(), None, 0, byref(need)))
        out = _array.empty((need.value,))
        if need.value:
            check(lib.sb_model_get_array(self._h.ptr, name.encode(), _array.pointer(out), need.value, byref(need)))
        return out

    def get_int(self, name):
        """A linear model's integer attribute by name (sb_model_get_int)."""
        v = c_int64(0)
        check(lib.sb_model_get_int(self._h.ptr, name.encode(), byref(v)))
        return v.value

    def set_class_labels(self, classes):
        """Store a classifier's classes_ in the model (sb_model_set_class_labels),
        so that its file restores them: integers (int64), floats (float64),
        strings or booleans, by class_labels_kind. Labels that are the integers
        0..K-1 (int64, or Python ints) are what a model without labels means,
        and are not stored: such a model's bytes are those of before labels
        existed (and the CLI's). Labels of no stored kind (bytes, mixed types,
        integers beyond int64) are not stored either: classes_ then loads as
        0..K-1. Returns whether labels were stored."""
        kind, values = class_labels_kind(classes)
        if kind == LABELS_NONE:
            return False
        n = len(values)
        if kind == LABELS_STRING:
            enc = [v.encode("utf-8") for v in values]
            arr = (ctypes.c_char_p * n)(*enc)
        elif kind == LABELS_INT64:
            arr = (c_int64 * n)(*values)
        elif kind == LABELS_FLOAT64:
            arr = (ctypes.c_double * n)(*values)
        else:
            arr = (c_uint8 * n)(*[1 if v else 0 for v in values])
        check(lib.sb_model_set_class_labels(self._h.ptr, kind, n, ctypes.cast(arr, c_void_p)))
        return True

    def set_category_names(self, tables):
        """Store each categorical feature's category names ({feature: [names]},
        sorted by their UTF-8 bytes; sb_model_set_category_names), so that the
        model's file maps strings to the codes it was trained on."""
        for j in sorted(tables):
            names = [t.encode("utf-8") for t in tables[j]]
            arr = (ctypes.c_char_p * max(len(names), 1))(*names)
            check(lib.sb_model_set_category_names(self._h.ptr, int(j), arr, len(names)))

    def category_names(self, nfeatures):
        """{feature: [names]} of the features the model stores category names for."""
        out = {}
        for j in range(nfeatures):
            n = c_int32(0)
            check(lib.sb_model_get_category_count(self._h.ptr, j, byref(n)))
            if n.value:
                names = []
                for i in range(n.value):
                    p = ctypes.c_char_p()
                    check(lib.sb_model_get_category_name(self._h.ptr, j, i, byref(p)))
                    names.append(p.value.decode("utf-8"))
                out[j] = names
        return out

    def class_labels(self):
        """The classes_ the model's file stores (sb_model_get_class_labels), as a
        NumPy array of the stored kind's dtype (int64, float64, str, bool) when
        NumPy is loaded, else a list; None when it stores none."""
        kind, n = c_int32(0), c_size_t(0)
        check(lib.sb_model_get_class_labels(self._h.ptr, byref(kind), byref(n)))
        k, n = kind.value, n.value
        if k == LABELS_NONE:
            return None
        if k == LABELS_STRING:
            out = []
            for i in range(n):
                p = ctypes.c_char_p()
                check(lib.sb_model_get_class_label_string(self._h.ptr, i, byref(p)))
                out.append(p.value.decode("utf-8"))
        else:
            ctype = {LABELS_INT64: c_int64, LABELS_FLOAT64: ctypes.c_double, LABELS_BOOL: c_uint8}[k]
            arr = (ctype * n)()
            check(lib.sb_model_get_class_label_values(self._h.ptr, ctypes.cast(arr, c_void_p), n, byref(c_size_t())))
            out = [bool(v) for v in arr] if k == LABELS_BOOL else list(arr)
        np = sys.modules.get("numpy")
        if np is None:
            return out
        dtype = {LABELS_INT64: np.int64, LABELS_FLOAT64: np.float64, LABELS_BOOL: np.bool_}.get(k)
        return np.asarray(out, dtype=dtype) if dtype is not None else np.asarray(out)

    def evals(self):
        """A gradient boosting fit's validation metric log, or None (no
        validation rows, or a loaded model): ({set name: {metric name: [value
        per iteration]}}, best_iteration), the sets in the fit's order and the
        metrics in the C library's (the first decides early stopping),
        best_iteration 1-based or 0 when early stopping did not run."""
        v = c_int64(0)
        if lib.sb_model_get_int(self._h.ptr, b"eval_metrics", byref(v)) != 0:
            return None
        nm = v.value
        check(lib.sb_model_get_int(self._h.ptr, b"eval_sets", byref(v)))
        ns = v.value
        check(lib.sb_model_get_int(self._h.ptr, b"eval_iterations", byref(v)))
        niter = v.value
        check(lib.sb_model_get_int(self._h.ptr, b"best_iteration", byref(v)))
        best = v.value
        values = self.get_array("eval_history").tolist() if niter * nm * ns else []
        metrics = []
        for k in range(nm):
            p = ctypes.c_char_p()
            check(lib.sb_model_get_eval_name(self._h.ptr, k, byref(p)))
            metrics.append(p.value.decode())
        out = {}
        for s in range(ns):
            p = ctypes.c_char_p()
            check(lib.sb_model_get_eval_set_name(self._h.ptr, s, byref(p)))
            out[p.value.decode()] = {name: [float(values[(i * ns + s) * nm + k]) for i in range(niter)]
                                     for k, name in enumerate(metrics)}
        return out, best

    def profile(self):
        p = ctypes.c_char_p()
        check(lib.sb_model_get_profile(self._h.ptr, byref(p)))
        return p.value.decode()

    def predict(self, data, kind, ncols, device=None):
        """Predictions of kind for the sb_dataset handle data, as an Array (n,) or (n, ncols);
        device "cuda" computes them on the GPU (the same bits)."""
        need = c_size_t(0)
        check(lib.sb_model_predict(self._h.ptr, data.ptr, kind, None, 0, byref(need)))
        nrows = c_int64(0)
        check(lib.sb_dataset_shape(data.ptr, byref(nrows), None))
        shape = (nrows.value,) if ncols == 1 else (nrows.value, ncols)
        if need.value != nrows.value * ncols:
            shape = (need.value,)
        out = _array.empty(shape)
        if device in (None, "cpu"):
            check(lib.sb_model_predict(self._h.ptr, data.ptr, kind, _array.pointer(out), need.value, byref(need)))
        else:
            check(lib.sb_model_predict_on(self._h.ptr, data.ptr, kind, device.encode(), _array.pointer(out),
                                          need.value, byref(need)))
        return out

    def neighbors(self, data, k=None, radius=None, sort=False, device=None):
        """A knn model's neighbors of the rows of the sb_dataset handle data (None:
        the training rows, each without itself): the k nearest (k None or 0: the
        model's n_neighbors; sb_model_kneighbors), or, radius given (< 0: the
        model's), every training row within it (sb_model_radius_neighbors, in
        index order or by (distance, index) when sort). Returns (offsets, indices,
        distances): ctypes arrays of int64 (nrows + 1), int64 and float32, row i's
        neighbors at [offsets[i], offsets[i + 1])."""
        out = c_void_p()
        dev = device.encode() if device not in (None, "cpu") else None
        q = data.ptr if data is not None else None
        if radius is None:
            check(lib.sb_model_kneighbors(self._h.ptr, q, int(k or 0), dev, byref(out)))
        else:
            check(lib.sb_model_radius_neighbors(self._h.ptr, q, float(radius), 1 if sort else 0, dev, byref(out)))
        h = Handle(out, lib.sb_neighbors_free)
        nrows, total = c_int64(0), c_int64(0)
        check(lib.sb_neighbors_shape(h.ptr, byref(nrows), byref(total)))
        offsets = (c_int64 * (nrows.value + 1))()
        indices = (c_int64 * max(total.value, 1))()
        dist = (ctypes.c_float * max(total.value, 1))()
        check(lib.sb_neighbors_copy(h.ptr, offsets, indices, dist))
        return offsets, indices, dist

    def predict_leaf(self, data, device=None):
        """pred_leaf (sb_model_predict_leaf): an int32 Array (n, ntrees), each row's
        leaf in every tree, LightGBM's leaf numbers; the same on every device."""
        need = c_size_t(0)
        dev = device.encode() if device not in (None, "cpu") else None
        check(lib.sb_model_predict_leaf(self._h.ptr, data.ptr, dev, None, 0, byref(need)))
        nrows = c_int64(0)
        check(lib.sb_dataset_shape(data.ptr, byref(nrows), None))
        ntrees = need.value // nrows.value if nrows.value else self.info()["ntrees"]
        out = _array.empty_index((nrows.value, ntrees))
        check(lib.sb_model_predict_leaf(self._h.ptr, data.ptr, dev, _array.index_pointer(out), need.value,
                                        byref(need)))
        return out

    def dump(self, fmt="json"):
        """The trees as text (sb_model_dump): fmt "json" or "text"."""
        need = c_size_t(0)
        check(lib.sb_model_dump(self._h.ptr, fmt.encode(), None, 0, byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        check(lib.sb_model_dump(self._h.ptr, fmt.encode(), buf, need.value, byref(need)))
        return buf.value.decode("utf-8")

    def feature_importance(self, kind):
        need = c_size_t(0)
        check(lib.sb_model_feature_importance(self._h.ptr, kind, None, 0, byref(need)))
        out = _array.empty((need.value,))
        check(lib.sb_model_feature_importance(self._h.ptr, kind, _array.pointer(out), need.value, byref(need)))
        return out


def fixture_names():
    return [lib.sb_fixture_name(i).decode() for i in range(lib.sb_fixture_count())]


def num_threads():
    n = c_int32(0)
    check(lib.sb_get_num_threads(byref(n)))
    return n.value


def feature_names_in_file(path_or_bytes):
    """The feature names a model file stores, or None when it stores none or only the
    generated names f0..f{n-1} (which count as none, docs/model-format.md). Reads the
    header of format version 1 or 2 (the C library has already validated the file)."""
    return _file_header(path_or_bytes)[1]


def params_in_file(path_or_bytes):
    """The parameter text a model file's header stores (key=value lines, as the
    C fit wrote them) as a dict of str; the C library has validated the file."""
    out = {}
    for line in _file_header(path_or_bytes)[0].splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def _file_header(path_or_bytes):
    """(parameter text, feature names or None) of a model file's header."""
    import io
    import struct
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        f = io.BytesIO(bytes(path_or_bytes))
    else:
        f = open(os.fspath(path_or_bytes), "rb")
    with f:
        def take(n):
            b = f.read(n)
            if len(b) != n:
                raise ValueError("truncated model header")
            return b

        def u32():
            return struct.unpack("<I", take(4))[0]

        def i32():
            return struct.unpack("<i", take(4))[0]

        def text():
            return take(u32()).decode("utf-8")

        take(8)
        version = u32()
        take(8)
        text()  # profile
        i32()  # family
        if version == 1:
            i32()  # objective
            num_class = i32()
            num_features = i32()
            i32()  # numeric mode
            take(4 * num_class)  # base scores
        else:
            i32()  # numeric mode
            num_features = i32()
        params = text()
        if take(1) != b"\x01":
            return params, None
        names = [text() for _ in range(num_features)]
    if names == ["f%d" % i for i in range(num_features)]:
        return params, None
    return params, names
