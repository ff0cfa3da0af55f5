"""samebits: machine learning that trains bitwise-identically on every machine.

A thin layer over the C library (libsamebits.so, through ctypes): nothing
numeric is implemented here. NumPy and scikit-learn are optional; importing
samebits imports neither. See docs/python.md.
"""
from ._version import __version__
from .errors import (BackendUnavailableError, IdentityRefusedError, InternalError, InvalidArgumentError,
                     InvalidInputError, InvalidInputTypeError, LibraryNotFoundError, LimitError, MismatchError, ModeUnsupportedError,
                     NotFittedError, NotFoundError, OutOfMemoryError, SameBitsError, SameBitsIOError,
                     VersionMismatchError)
from ._lib import check as _check, lib as _lib
from ._array import Array, IndexArray
from ._model import Card
from .gbdt import (GradientBoosting, GradientBoostingClassifier, GradientBoostingRanker, GradientBoostingRegressor,
                   load_model)
from .parquet import read_parquet
from . import linalg
from . import callback
from . import plotting
from .callback import early_stopping, log_evaluation, record_evaluation
from .forest import (ExtraTreesClassifier, ExtraTreesRegressor, IsolationForest, RandomForestClassifier,
                     RandomForestRegressor)
from .linear import PCA, ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge, TruncatedSVD
from .cluster import DBSCAN, AgglomerativeClustering, KMeans, SpectralClustering
from .neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from .density import KernelDensity
from .svm import SVC, SVR
from .manifold import UMAP
from .timeseries import AutoETS, ExponentialSmoothing, auto_ets_forecast, ets_forecast
from .arima import ARIMA, arima_forecast, auto_arima
from . import gaussian_process
from .gaussian_process import GaussianProcessRegressor
from . import neural_network
from .neural_network import MLPClassifier, MLPRegressor
from . import language_model
from .language_model import ByteLM

import ctypes as _ctypes

__all__ = [
    "RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor", "IsolationForest",
    "LinearRegression", "Ridge", "Lasso", "ElasticNet", "LogisticRegression", "PCA", "TruncatedSVD", "KMeans",
    "NearestNeighbors", "KNeighborsClassifier", "KNeighborsRegressor", "KernelDensity", "SVC", "SVR", "DBSCAN", "AgglomerativeClustering", "SpectralClustering",
    "ExponentialSmoothing", "ets_forecast", "AutoETS", "auto_ets_forecast", "ARIMA", "arima_forecast", "auto_arima", "UMAP", "GaussianProcessRegressor", "gaussian_process",
    "MLPClassifier", "MLPRegressor", "neural_network", "ByteLM", "language_model",
    "__version__", "Array", "IndexArray", "Card", "GradientBoosting", "GradientBoostingClassifier",
    "GradientBoostingRegressor", "GradientBoostingRanker", "load_model", "read_parquet", "linalg", "set_numeric_mode", "get_numeric_mode", "backend",
    "set_num_threads", "get_num_threads", "version", "profile_version", "build_info", "library_path",
    "SameBitsError", "InvalidArgumentError", "InvalidInputError", "InvalidInputTypeError", "OutOfMemoryError", "SameBitsIOError",
    "ModeUnsupportedError", "IdentityRefusedError", "BackendUnavailableError", "LimitError",
    "MismatchError", "NotFoundError", "InternalError", "LibraryNotFoundError", "VersionMismatchError",
    "NotFittedError", "callback", "plotting", "early_stopping", "log_evaluation", "record_evaluation",
]

# The three mode names (a model file stores the index); only "identical" is built,
# and the C library refuses the other two (ModeUnsupportedError).
_MODES = ("identical", "deterministic", "fast")


def version():
    """The C library's version (equal to __version__: a different one is refused at import)."""
    return _lib.sb_version().decode()


def profile_version():
    """The numeric profile the library implements, e.g. 'sb-identical-v9'."""
    return _lib.sb_profile_version().decode()


def library_path():
    """The path of the loaded libsamebits.so."""
    return _lib.path


def build_info():
    """Build facts of the loaded library as a dict (compiler, flags, contraction probe...)."""
    from ._lib import text_call
    out = {}
    for line in text_call(_lib.sb_build_info).splitlines():
        k, _, v = line.partition(": ")
        out[k] = v
    return out


def set_numeric_mode(mode):
    """Set the process-wide default numeric mode. Only 'identical' (the default)
    is built: 'deterministic' and 'fast' raise ModeUnsupportedError
    (docs/numeric-profile.md), and so does an estimator's numeric_mode= with
    either of them."""
    if not isinstance(mode, str):
        raise InvalidArgumentError("numeric mode must be a string, got %r" % (mode,))
    _check(_lib.sb_set_numeric_mode(mode.encode()))


def get_numeric_mode():
    """The process-wide default numeric mode (initialised by the C library from
    SAMEBITS_NUMERIC_MODE; an invalid value there raises InvalidArgumentError
    here, and 'deterministic' or 'fast' there ModeUnsupportedError)."""
    m = _ctypes.c_int(0)
    _check(_lib.sb_get_numeric_mode(_ctypes.byref(m)))
    return _MODES[m.value]


def set_num_threads(n):
    """Worker threads for CPU work (0: back to SAMEBITS_NUM_THREADS or all cores).
    Results never depend on it. An estimator's n_jobs sets the count for its fit or
    prediction and restores this setting afterwards."""
    from ._base import _THREADS
    n = int(n)
    _check(_lib.sb_set_num_threads(n))
    _THREADS["setting"] = n


def get_num_threads():
    n = _ctypes.c_int32(0)
    _check(_lib.sb_get_num_threads(_ctypes.byref(n)))
    return n.value


def backend():
    """The device estimators run on unless given device=: 'cpu'. The backends the
    loaded library was built with are build_info()['backends']."""
    return "cpu"


# SAMEBITS_NUMERIC_MODE is read now, at import, by the C library's first mode call.
# An invalid value is not raised here (importing must not fail for it); every fit
# and get_numeric_mode() then raises InvalidArgumentError naming the variable (or
# ModeUnsupportedError for 'deterministic' and 'fast', which are not built).
try:
    get_numeric_mode()
except SameBitsError:
    pass
