"""Gaussian process regression (docs/gaussian-process.md): scikit-learn's
GaussianProcessRegressor names and semantics, float64 throughout, identical bits
on every machine.

Nothing numeric is computed here: the C library fits, predicts, samples and
evaluates the log marginal likelihood. NumPy is required for this estimator's
arrays (it returns numpy.ndarray, float64).
"""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint64, c_void_p

from .._base import Estimator, r2_score
from .._lib import Handle, check, lib, params as _params, text_call
from ..errors import InvalidArgumentError, InvalidInputError, not_fitted
from . import kernels
from .kernels import RBF, ConstantKernel, _as_kernel

_P = POINTER
for _name, (_res, _args) in {
        "sb_gp_fit": (c_int, [c_char_p, c_void_p, _P(c_double), c_int64, c_int64, _P(c_double), c_int64, c_void_p,
                              _P(c_void_p)]),
        "sb_gp_predict": (c_int, [c_void_p, _P(c_double), c_int64, c_int64, _P(c_double), _P(c_double), _P(c_double)]),
        "sb_gp_sample_y": (c_int, [c_void_p, _P(c_double), c_int64, c_int64, c_int64, c_uint64, _P(c_double)]),
        "sb_gp_log_marginal_likelihood": (c_int, [c_void_p, _P(c_double), c_int64, _P(c_double), _P(c_double)]),
        "sb_gp_get_array": (c_int, [c_void_p, c_char_p, _P(c_double), c_size_t, _P(c_size_t)]),
        "sb_gp_get_int": (c_int, [c_void_p, c_char_p, _P(c_int64)]),
        "sb_gp_kernel_spec": (c_int, [c_void_p, c_char_p, c_size_t, _P(c_size_t)]),
        "sb_gp_to_bytes": (c_int, [c_void_p, c_void_p, c_size_t, _P(c_size_t)]),
        "sb_gp_from_bytes": (c_int, [c_char_p, c_size_t, _P(c_void_p)]),
        "sb_gp_save": (c_int, [c_void_p, c_char_p]),
        "sb_gp_model_digest": (c_int, [c_void_p, ctypes.c_char * 65]),
        "sb_gp_free": (None, [c_void_p])}.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


def _np():
    import numpy
    return numpy


def _matrix(X, what="X"):
    np = _np()
    try:
        a = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    except (TypeError, ValueError) as e:
        raise InvalidInputError("%s must be numbers: %s" % (what, e)) from None
    if a.ndim != 2:
        raise InvalidInputError("%s must be 2-d (rows x features), got shape %r" % (what, a.shape))
    return a


def _ptr(a):
    return a.ctypes.data_as(_P(c_double))


class GaussianProcessRegressor(Estimator):
    """Gaussian process regression (scikit-learn's GaussianProcessRegressor).

    kernel: a samebits.gaussian_process.kernels object, a scikit-learn kernel
    object (translated), or None (ConstantKernel() * RBF(), scikit-learn's
    default in its 1.9 fit code). alpha: a number added to the kernel
    matrix's diagonal (an array per sample is refused by name). optimizer:
    "fmin_l_bfgs_b" (this library's projected L-BFGS, docs/gaussian-process.md)
    or None (the kernel's values kept). random_state: an int seeding the
    restarts' Philox draws (None is 0). copy_X_train is accepted for
    compatibility (the library always keeps its own copy). device: "cpu"
    (default), "cuda", "opencl" or "gpu": the kernel matrix, the Cholesky
    factor, L^-1, K^-1 and the gradient's terms of every likelihood
    evaluation on the GPU in IEEE doubles (the fit, predict's kernel values,
    sample_y and log_marginal_likelihood of this estimator), the same bits as
    the CPU's (docs/gaussian-process.md, "Devices").
    """
    _estimator_kind = "regressor"

    def __init__(self, kernel=None, *, alpha=1e-10, optimizer="fmin_l_bfgs_b", n_restarts_optimizer=0,
                 normalize_y=False, copy_X_train=True, n_targets=None, random_state=None, device="cpu"):
        self.kernel = kernel
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.copy_X_train = copy_X_train
        self.n_targets = n_targets
        self.random_state = random_state
        self.device = device

    def _kernel(self):
        if self.kernel is None:
            return ConstantKernel() * RBF()
        return _as_kernel(self.kernel)

    def _pairs(self):
        alpha = self.alpha
        if hasattr(alpha, "__len__"):
            raise InvalidArgumentError("alpha as an array (one value per sample) is not built: give one number "
                                       "(docs/gaussian-process.md)")
        if self.optimizer not in ("fmin_l_bfgs_b", None):
            raise InvalidArgumentError("optimizer=%r is not built: 'fmin_l_bfgs_b' or None" % (self.optimizer,))
        rs = self.random_state
        if rs is None:
            rs = 0
        if isinstance(rs, bool) or not isinstance(rs, int) or rs < 0:
            raise InvalidArgumentError("random_state=%r must be None or an int >= 0 (a RandomState object is not "
                                       "built: the restarts draw from Philox)" % (self.random_state,))
        pairs = [("alpha", repr(float(alpha))), ("normalize_y", "true" if self.normalize_y else "false"),
                 ("optimizer", "fmin_l_bfgs_b" if self.optimizer else "none"), ("random_state", str(rs))]
        if self.n_restarts_optimizer:
            pairs.append(("n_restarts_optimizer", str(int(self.n_restarts_optimizer))))
        if self.device not in (None, "cpu"):
            if not isinstance(self.device, str):
                raise InvalidArgumentError("device=%r: a device name (cpu, cuda, opencl, gpu)" % (self.device,))
            pairs.append(("device", self.device))
        return pairs

    def fit(self, X, y):
        np = _np()
        Xa = _matrix(X)
        ya = np.asarray(y, dtype=np.float64)
        if ya.ndim not in (1, 2) or ya.shape[0] != Xa.shape[0]:
            raise InvalidInputError("y must have one value (or one row of targets) per row of X: X %r, y %r"
                                    % (Xa.shape, ya.shape))
        self._y_ndim = ya.ndim
        ya = np.ascontiguousarray(ya.reshape(Xa.shape[0], -1))
        if self.n_targets is not None and ya.shape[1] != self.n_targets:
            raise InvalidInputError("n_targets=%d but y has %d" % (self.n_targets, ya.shape[1]))
        k = self._kernel()
        p = _params(self._pairs())
        h = c_void_p()
        check(lib.sb_gp_fit(k.spec().encode(), p.ptr, _ptr(Xa), Xa.shape[0], Xa.shape[1], _ptr(ya), ya.shape[1],
                            None, byref(h)))
        self._handle = Handle(h, lib.sb_gp_free)
        self._kernel_in = k
        self.n_features_in_ = Xa.shape[1]
        return self

    def _check_fitted(self):
        if getattr(self, "_handle", None) is None:
            raise not_fitted("this GaussianProcessRegressor is not fitted yet; call fit first")

    def _arr(self, name):
        self._check_fitted()
        np = _np()
        n = c_size_t(0)
        check(lib.sb_gp_get_array(self._handle.ptr, name.encode(), None, 0, byref(n)))
        out = np.empty(n.value, dtype=np.float64)
        if n.value:
            check(lib.sb_gp_get_array(self._handle.ptr, name.encode(), _ptr(out), n.value, byref(n)))
        return out

    def _int(self, name):
        v = c_int64(0)
        check(lib.sb_gp_get_int(self._handle.ptr, name.encode(), byref(v)))
        return v.value

    def _shape_y(self, a, n):
        return a.reshape(n) if self._y_ndim == 1 else a.reshape(n, -1)

    @property
    def kernel_(self):
        """The fitted kernel: the given kernel with the values the optimizer chose."""
        self._check_fitted()
        return self._kernel_in._with(list(self._arr("params")))

    @property
    def alpha_(self):
        self._check_fitted()
        return self._shape_y(self._arr("alpha_"), self._int("n_samples"))

    @property
    def L_(self):
        self._check_fitted()
        n = self._int("n_samples")
        return self._arr("L_").reshape(n, n)

    @property
    def X_train_(self):
        self._check_fitted()
        return self._arr("X_train_").reshape(self._int("n_samples"), -1)

    @property
    def y_train_(self):
        self._check_fitted()
        return self._shape_y(self._arr("y_train_"), self._int("n_samples"))

    @property
    def log_marginal_likelihood_value_(self):
        return float(self._arr("log_marginal_likelihood_value_")[0])

    @property
    def n_iter_(self):
        """Optimizer iterations, every start together."""
        self._check_fitted()
        return self._int("nit")

    @property
    def model_digest_(self):
        """The SHA-256 of the model file's bytes (hex), as every samebits estimator's."""
        self._check_fitted()
        buf = (ctypes.c_char * 65)()
        check(lib.sb_gp_model_digest(self._handle.ptr, buf))
        return buf.value.decode()

    @property
    def kernel_spec_(self):
        """The fitted kernel as the text the C library and the CLI read."""
        self._check_fitted()
        return text_call(lib.sb_gp_kernel_spec, self._handle.ptr)

    def predict(self, X, return_std=False, return_cov=False):
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        self._check_fitted()
        np = _np()
        Xa = _matrix(X)
        m, t = Xa.shape[0], self._int("n_targets")
        mean = np.empty((m, t))
        std = np.empty((m, t)) if return_std else None
        cov = np.empty((m, m, t)) if return_cov else None
        check(lib.sb_gp_predict(self._handle.ptr, _ptr(Xa), m, Xa.shape[1], _ptr(mean),
                                _ptr(std) if std is not None else None, _ptr(cov) if cov is not None else None))
        one = self._y_ndim == 1
        mean = mean[:, 0] if one else mean
        if return_std:
            return mean, (std[:, 0] if one else std)
        if return_cov:
            return mean, (cov[:, :, 0] if one else cov)
        return mean

    def sample_y(self, X, n_samples=1, random_state=0):
        if random_state is None:
            random_state = 0
        if isinstance(random_state, bool) or not isinstance(random_state, int) or random_state < 0:
            raise InvalidArgumentError("random_state=%r must be an int >= 0 (draws from Philox)" % (random_state,))
        self._check_fitted()
        np = _np()
        Xa = _matrix(X)
        m, t = Xa.shape[0], self._int("n_targets")
        out = np.empty((m, t, int(n_samples)))
        check(lib.sb_gp_sample_y(self._handle.ptr, _ptr(Xa), m, Xa.shape[1], int(n_samples), random_state,
                                 _ptr(out)))
        return out[:, 0, :] if self._y_ndim == 1 else out

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        self._check_fitted()
        np = _np()
        lml = c_double(0.0)
        nt = self._int("n_theta")
        th = None
        if theta is not None:
            th = np.ascontiguousarray(np.asarray(theta, dtype=np.float64).ravel())
        elif eval_gradient:
            th = self._arr("theta")
        grad = np.empty(nt) if eval_gradient else None
        check(lib.sb_gp_log_marginal_likelihood(self._handle.ptr, _ptr(th) if th is not None else None,
                                                th.size if th is not None else 0, byref(lml),
                                                _ptr(grad) if grad is not None else None))
        return (lml.value, grad) if eval_gradient else lml.value

    def score(self, X, y, sample_weight=None):
        """R^2 of the predictive mean (a single target)."""
        if self._y_ndim != 1:
            raise InvalidArgumentError("score is built for a single target only")
        return r2_score(list(y), list(self.predict(X)), sample_weight)

    def model_bytes(self):
        self._check_fitted()
        need = c_size_t(0)
        check(lib.sb_gp_to_bytes(self._handle.ptr, None, 0, byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        check(lib.sb_gp_to_bytes(self._handle.ptr, buf, need.value, byref(need)))
        return buf.raw[:need.value]

    def save_model(self, path):
        self._check_fitted()
        check(lib.sb_gp_save(self._handle.ptr, str(path).encode()))


__all__ = ["GaussianProcessRegressor", "kernels"]
