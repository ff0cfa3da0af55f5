"""Loading libsamebits.so and declaring the C API for ctypes.

Where the library is looked for, in order:
  1. the file named by the environment variable SAMEBITS_LIB;
  2. libsamebits.so inside this package (what `pip install .` puts there);
  3. build/libsamebits.so of the source tree this package sits in (python/samebits/
     -> ../../build), which `make` builds: running from a checkout needs no install.
A library whose sb_version() differs from the package's __version__ is refused
(VersionMismatchError).
"""
import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t, c_uint8, c_void_p

from . import errors
from ._version import __version__

LIB_NAME = "libsamebits.so"
_HERE = os.path.dirname(os.path.abspath(__file__))


def candidate_paths():
    env = os.environ.get("SAMEBITS_LIB")
    if env:
        return [env]
    return [os.path.join(_HERE, LIB_NAME),
            os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", LIB_NAME)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("family", c_int32), ("num_features", c_int32), ("num_class", c_int32),
                ("ntrees", c_int32), ("numeric_mode", c_int32), ("objective", ctypes.c_char * 32)]


class CardDiff(ctypes.Structure):
    _fields_ = [("identical", c_int32), ("stage_index", c_int64), ("stage_a", ctypes.c_char * 64),
                ("stage_b", ctypes.c_char * 64), ("digest_a", ctypes.c_char * 65),
                ("digest_b", ctypes.c_char * 65), ("reason", ctypes.c_char * 96)]


_P = POINTER
_PROTOS = {
    # name: (restype, argtypes); restype c_int means an sb_status
    "sb_status_name": (c_char_p, [c_int]),
    "sb_last_error": (c_char_p, []),
    "sb_version": (c_char_p, []),
    "sb_profile_version": (c_char_p, []),
    "sb_build_info": (c_int, [c_char_p, c_size_t, _P(c_size_t)]),
    "sb_numeric_mode_parse": (c_int, [c_char_p, _P(c_int)]),
    "sb_numeric_mode_name": (c_char_p, [c_int]),
    "sb_set_numeric_mode": (c_int, [c_char_p]),
    "sb_get_numeric_mode": (c_int, [_P(c_int)]),
    "sb_params_create": (c_int, [_P(c_void_p)]),
    "sb_params_free": (None, [c_void_p]),
    "sb_params_set": (c_int, [c_void_p, c_char_p, c_char_p]),
    "sb_set_num_threads": (c_int, [c_int32]),
    "sb_get_num_threads": (c_int, [_P(c_int32)]),
    "sb_card_create": (c_int, [_P(c_void_p)]),
    "sb_card_free": (None, [c_void_p]),
    "sb_card_set_meta": (c_int, [c_void_p, c_char_p, c_char_p]),
    "sb_card_record": (c_int, [c_void_p, c_char_p, c_int, c_void_p, ctypes.c_uint64]),
    "sb_card_stage_count": (c_int, [c_void_p, _P(c_int64)]),
    "sb_card_text": (c_int, [c_void_p, c_char_p, c_size_t, _P(c_size_t)]),
    "sb_card_save": (c_int, [c_void_p, c_char_p]),
    "sb_card_parse": (c_int, [c_char_p, c_size_t, _P(c_void_p)]),
    "sb_card_load": (c_int, [c_char_p, _P(c_void_p)]),
    "sb_card_compare": (c_int, [c_void_p, c_void_p, _P(CardDiff)]),
    "sb_fixture_count": (c_int32, []),
    "sb_fixture_name": (c_char_p, [c_int32]),
    "sb_fixture_run": (c_int, [c_char_p, c_void_p]),
    "sb_fixture_reference": (c_int, [c_char_p, _P(c_void_p)]),
    "sb_fixture_family": (c_char_p, [c_char_p]),
    "sb_fixture_inputs": (c_int, [c_char_p, c_void_p, c_void_p]),
    "sb_fixture_input_reference": (c_int, [c_char_p, _P(c_void_p)]),
    "sb_fixture_run_with": (c_int, [c_char_p, c_char_p, c_void_p]),
    "sb_dataset_from_matrix": (c_int, [_P(c_float), c_int64, c_int32, _P(c_void_p)]),
    "sb_dataset_view_matrix": (c_int, [_P(c_float), c_int64, c_int32, _P(c_void_p)]),
    "sb_dataset_set_label": (c_int, [c_void_p, _P(c_float), c_int64]),
    "sb_dataset_set_targets": (c_int, [c_void_p, _P(c_float), c_int64, c_int32]),
    "sb_dataset_set_weight": (c_int, [c_void_p, _P(c_float), c_int64]),
    "sb_dataset_set_init_score": (c_int, [c_void_p, _P(c_float), c_int64]),
    "sb_dataset_set_feature_names": (c_int, [c_void_p, _P(c_char_p), c_int32]),
    "sb_dataset_set_group": (c_int, [c_void_p, _P(c_int64), c_int64]),
    "sb_dataset_shape": (c_int, [c_void_p, _P(c_int64), _P(c_int32)]),
    "sb_dataset_free": (None, [c_void_p]),
    "sb_gbdt_fit": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_gbdt_fit_continue": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_gbdt_fit_multi": (c_int, [c_void_p, c_void_p, _P(c_void_p), c_int32, _P(c_char_p), c_void_p, c_void_p,
                                  _P(c_void_p)]),
    "sb_model_predict": (c_int, [c_void_p, c_void_p, c_int, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_forest_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_isolation_forest_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_forest_fit_continue": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_isolation_forest_fit_continue": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    # ---- the linear family (src/models/linear/, docs/linear.md) ----
    "sb_linear_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    # ---- the k-means family (src/models/cluster/, docs/cluster.md) ----
    "sb_kmeans_fit": (c_int, [c_void_p, c_void_p, _P(c_float), c_void_p, _P(c_void_p)]),
    "sb_model_get_array": (c_int, [c_void_p, c_char_p, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_get_int": (c_int, [c_void_p, c_char_p, _P(c_int64)]),
    "sb_model_get_eval_name": (c_int, [c_void_p, c_int32, _P(c_char_p)]),
    "sb_model_get_eval_set_name": (c_int, [c_void_p, c_int32, _P(c_char_p)]),
    # ---- the nearest-neighbors family (src/models/neighbors/, docs/neighbors.md) ----
    "sb_knn_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_dbscan_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_agglomerative_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_spectral_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_model_get_indices": (c_int, [c_void_p, c_char_p, _P(c_int64), c_size_t, _P(c_size_t)]),
    # ---- kernel density (src/models/neighbors/kde.c, docs/density.md) ----
    "sb_kde_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    # ---- support vector machines (src/models/svm/svm.c, docs/svm.md) ----
    "sb_svm_fit": (c_int, [c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_svm_get_f64": (c_int, [c_void_p, c_char_p, _P(ctypes.c_double), c_size_t, _P(c_size_t)]),
    "sb_svm_decision_function": (c_int, [c_void_p, c_void_p, _P(ctypes.c_double), c_size_t, _P(c_size_t)]),
    "sb_svm_predict_proba": (c_int, [c_void_p, c_void_p, ctypes.c_int32, _P(ctypes.c_double), c_size_t,
                                     _P(c_size_t)]),
    "sb_svm_decision_function_on": (c_int, [c_void_p, c_void_p, c_char_p, _P(ctypes.c_double), c_size_t,
                                            _P(c_size_t)]),
    "sb_svm_predict_proba_on": (c_int, [c_void_p, c_void_p, c_char_p, ctypes.c_int32, _P(ctypes.c_double),
                                        c_size_t, _P(c_size_t)]),
    # ---- UMAP (src/models/manifold/umap.c, docs/umap.md) ----
    "sb_umap_fit_transform": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_size_t, _P(c_size_t)]),
    "sb_umap_transform": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_size_t, _P(c_size_t)]),
    "sb_umap_fit": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, _P(c_void_p)]),
    "sb_model_score_samples": (c_int, [c_void_p, c_void_p, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_score": (c_int, [c_void_p, c_void_p, _P(ctypes.c_double)]),
    "sb_model_score_samples_on": (c_int, [c_void_p, c_void_p, c_char_p, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_score_on": (c_int, [c_void_p, c_void_p, c_char_p, _P(ctypes.c_double)]),
    "sb_model_sample": (c_int, [c_void_p, c_int64, ctypes.c_uint64, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_kneighbors": (c_int, [c_void_p, c_void_p, c_int32, c_char_p, _P(c_void_p)]),
    "sb_model_radius_neighbors": (c_int, [c_void_p, c_void_p, ctypes.c_double, c_int32, c_char_p, _P(c_void_p)]),
    "sb_neighbors_shape": (c_int, [c_void_p, _P(c_int64), _P(c_int64)]),
    "sb_neighbors_copy": (c_int, [c_void_p, _P(c_int64), _P(c_int64), _P(c_float)]),
    "sb_neighbors_free": (None, [c_void_p]),
    "sb_forest_oob_predict": (c_int, [c_void_p, c_void_p, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_predict_on": (c_int, [c_void_p, c_void_p, c_int, c_char_p, _P(c_float), c_size_t, _P(c_size_t)]),
    "sb_model_get_info": (c_int, [c_void_p, _P(ModelInfo)]),
    "sb_model_feature_importance": (c_int, [c_void_p, c_int32, _P(c_float), c_size_t, _P(c_size_t)]),
    # ---- explanations (src/models/explain.c, docs/explain.md) ----
    "sb_model_predict_leaf": (c_int, [c_void_p, c_void_p, c_char_p, _P(c_int32), c_size_t, _P(c_size_t)]),
    "sb_model_dump": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t, _P(c_size_t)]),
    "sb_model_to_bytes": (c_int, [c_void_p, _P(c_uint8), c_size_t, _P(c_size_t)]),
    "sb_model_from_bytes": (c_int, [_P(c_uint8), c_size_t, _P(c_void_p)]),
    "sb_model_save": (c_int, [c_void_p, c_char_p]),
    "sb_model_load": (c_int, [c_char_p, _P(c_void_p)]),
    "sb_model_digest": (c_int, [c_void_p, ctypes.c_char * 65]),
    "sb_model_get_profile": (c_int, [c_void_p, _P(c_char_p)]),
    "sb_model_set_class_labels": (c_int, [c_void_p, c_int32, c_size_t, c_void_p]),
    "sb_model_get_class_labels": (c_int, [c_void_p, _P(c_int32), _P(c_size_t)]),
    "sb_model_get_class_label_values": (c_int, [c_void_p, c_void_p, c_size_t, _P(c_size_t)]),
    "sb_model_get_class_label_string": (c_int, [c_void_p, c_size_t, _P(c_char_p)]),
    "sb_model_set_category_names": (c_int, [c_void_p, c_int32, _P(c_char_p), c_int32]),
    "sb_model_get_category_count": (c_int, [c_void_p, c_int32, _P(c_int32)]),
    "sb_model_get_category_name": (c_int, [c_void_p, c_int32, c_int32, _P(c_char_p)]),
    "sb_model_free": (None, [c_void_p]),
    "sb_gemm": (c_int, [c_char_p, c_int32, c_int32, c_int64, c_int64, c_int64, _P(c_float), c_int64, _P(c_float),
                        c_int64, _P(c_float), c_int64]),
    "sb_linalg_row_sums": (c_int, [c_char_p, c_int64, c_int64, _P(c_float), c_int64, _P(c_float)]),
    "sb_linalg_col_sums": (c_int, [c_char_p, c_int64, c_int64, _P(c_float), c_int64, _P(c_float)]),
    "sb_linalg_row_sq_norms": (c_int, [c_char_p, c_int64, c_int64, _P(c_float), c_int64, _P(c_float)]),
    "sb_linalg_col_sq_norms": (c_int, [c_char_p, c_int64, c_int64, _P(c_float), c_int64, _P(c_float)]),
    "sb_linalg_sqdist": (c_int, [c_char_p, c_int64, c_int64, c_int64, _P(c_float), c_int64, _P(c_float), c_int64,
                                 _P(c_float), c_int64]),
    "sb_linalg_argmin": (c_int, [c_char_p, c_int32, c_int64, c_int64, _P(c_float), c_int64, _P(c_int32)]),
    "sb_linalg_argmax": (c_int, [c_char_p, c_int32, c_int64, c_int64, _P(c_float), c_int64, _P(c_int32)]),
    "sb_linalg_topk": (c_int, [c_char_p, c_int32, c_int64, c_int64, _P(c_float), c_int64, c_int64, _P(c_float),
                               _P(c_int32)]),
    # ---- factorizations, solves, eigenvalues, projections (src/linalg/solve.c) ----
    "sb_linalg_cholesky": (c_int, [c_char_p, c_int64, _P(c_float), c_int64, _P(c_float), c_int64]),
    "sb_linalg_solve_triangular": (c_int, [c_char_p, c_int32, c_int64, c_int64, _P(c_float), c_int64, _P(c_float),
                                           c_int64, _P(c_float), c_int64]),
    "sb_linalg_eigh": (c_int, [c_char_p, c_int64, _P(c_float), c_int64, _P(c_float), _P(c_float), c_int64,
                               _P(c_int32), _P(c_int64)]),
    "sb_linalg_random_matrix": (c_int, [c_char_p, c_int32, ctypes.c_uint64, c_int64, c_int64, _P(c_float),
                                        c_int64]),
    "sb_linalg_projection": (c_int, [c_char_p, c_int32, ctypes.c_uint64, c_int64, c_int64, c_int64, _P(c_float),
                                     c_int64, _P(c_float), c_int64]),
    # ---- end of factorizations, solves, eigenvalues, projections ----
}


def _load():
    tried = []
    for path in candidate_paths():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(os.path.abspath(path))
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        for name, (res, args) in _PROTOS.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        version = lib.sb_version().decode()
        if version != __version__:
            raise errors.VersionMismatchError(
                "%s is version %s but the samebits package is %s; rebuild the library (make) or set "
                "SAMEBITS_LIB to a matching one" % (path, version, __version__))
        lib.path = os.path.abspath(path)
        return lib
    raise errors.LibraryNotFoundError(
        "cannot load %s; tried: %s. Build it with `make` in the source tree, install the package "
        "with `pip install .`, or set SAMEBITS_LIB" % (LIB_NAME, "; ".join(tried)))


lib = _load()


def check(status):
    """Raise the named exception for a non-OK status, with the C message."""
    if status != 0:
        msg = lib.sb_last_error()
        raise errors.error_for(status, msg.decode("utf-8", "replace") if msg else "")


def text_call(fn, *args):
    """Call an sb_* function that fills a text buffer (cap, *needed) and return the str."""
    needed = c_size_t(0)
    check(fn(*args, None, 0, byref(needed)))
    buf = ctypes.create_string_buffer(needed.value)
    check(fn(*args, buf, needed.value, byref(needed)))
    return buf.value.decode("utf-8", "replace")


class Handle:
    """Owns one C handle and frees it with the library's own free function."""

    __slots__ = ("ptr", "_free", "keep")

    def __init__(self, ptr, free):
        self.ptr = ptr
        self._free = free
        self.keep = None  # what the C object reads in place (a dataset view's matrix)

    def __del__(self):
        if self.ptr:
            self._free(self.ptr)
            self.ptr = None


def params(pairs):
    """An sb_params handle holding pairs (key, str value) in order."""
    p = c_void_p()
    check(lib.sb_params_create(byref(p)))
    h = Handle(p, lib.sb_params_free)
    for k, v in pairs:
        check(lib.sb_params_set(p, k.encode(), v.encode()))
    return h
