"""Kernels of Gaussian process regression (docs/gaussian-process.md), named and
parameterized as scikit-learn's sklearn.gaussian_process.kernels: ConstantKernel,
WhiteKernel, RBF, Matern (nu 0.5, 1.5, 2.5), RationalQuadratic, and their sums
and products (k1 + k2, k1 * k2; a number beside a kernel is a ConstantKernel,
as in scikit-learn).

Nothing numeric is computed here: a kernel is written as the text the C library
parses (spec()), and the fitted kernel's values come back from the library.
scikit-learn's own kernel objects are accepted too (translated by from_sklearn).
"""
import math

from ..errors import InvalidArgumentError

_DEFAULT_BOUNDS = (1e-5, 1e5)


def _num(v):
    return repr(float(v))


def _bounds(b):
    if isinstance(b, str):
        if b != "fixed":
            raise InvalidArgumentError("bounds=%r: a pair (lo, hi) or \"fixed\"" % (b,))
        return '"fixed"'
    try:
        lo, hi = b
    except (TypeError, ValueError):
        raise InvalidArgumentError("bounds=%r: a pair (lo, hi) or \"fixed\"" % (b,)) from None
    return "(%s, %s)" % (_num(lo), _num(hi))


class Kernel:
    """Base of the kernels: + and * build sums and products."""

    def __add__(self, other):
        return Sum(self, _as_kernel(other))

    def __radd__(self, other):
        return Sum(_as_kernel(other), self)

    def __mul__(self, other):
        return Product(self, _as_kernel(other))

    def __rmul__(self, other):
        return Product(_as_kernel(other), self)

    def _leaves(self):
        return [self]

    def _n_values(self):
        return len(self._values())

    def __eq__(self, other):
        return type(self) is type(other) and self.spec() == other.spec()

    def __hash__(self):
        return hash(self.spec())


def _as_kernel(v):
    if isinstance(v, Kernel):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ConstantKernel(v)
    return from_sklearn(v)


class ConstantKernel(Kernel):
    def __init__(self, constant_value=1.0, constant_value_bounds=_DEFAULT_BOUNDS):
        self.constant_value = constant_value
        self.constant_value_bounds = constant_value_bounds

    def get_params(self, deep=True):
        return {"constant_value": self.constant_value, "constant_value_bounds": self.constant_value_bounds}

    def spec(self):
        return "ConstantKernel(%s, %s)" % (_num(self.constant_value), _bounds(self.constant_value_bounds))

    def _values(self):
        return [self.constant_value]

    def _with(self, vals):
        return ConstantKernel(vals[0], self.constant_value_bounds)

    def __repr__(self):
        return "{0:.3g}**2".format(math.sqrt(self.constant_value))


class WhiteKernel(Kernel):
    def __init__(self, noise_level=1.0, noise_level_bounds=_DEFAULT_BOUNDS):
        self.noise_level = noise_level
        self.noise_level_bounds = noise_level_bounds

    def get_params(self, deep=True):
        return {"noise_level": self.noise_level, "noise_level_bounds": self.noise_level_bounds}

    def spec(self):
        return "WhiteKernel(%s, %s)" % (_num(self.noise_level), _bounds(self.noise_level_bounds))

    def _values(self):
        return [self.noise_level]

    def _with(self, vals):
        return WhiteKernel(vals[0], self.noise_level_bounds)

    def __repr__(self):
        return "WhiteKernel(noise_level={0:.3g})".format(self.noise_level)


def _ls_spec(ls):
    if isinstance(ls, (int, float)):
        return _num(ls)
    vals = [float(v) for v in ls]
    return "[" + ", ".join(_num(v) for v in vals) + "]"


def _ls_list(ls):
    return [ls] if isinstance(ls, (int, float)) else [float(v) for v in ls]


def _ls_repr(ls):
    if isinstance(ls, (int, float)) or len(ls) == 1:
        v = ls if isinstance(ls, (int, float)) else ls[0]
        return "{0:.3g}".format(v)
    return "[{0}]".format(", ".join("{0:.3g}".format(v) for v in ls))


class RBF(Kernel):
    def __init__(self, length_scale=1.0, length_scale_bounds=_DEFAULT_BOUNDS):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds

    def get_params(self, deep=True):
        return {"length_scale": self.length_scale, "length_scale_bounds": self.length_scale_bounds}

    def spec(self):
        return "RBF(%s, %s)" % (_ls_spec(self.length_scale), _bounds(self.length_scale_bounds))

    def _values(self):
        return _ls_list(self.length_scale)

    def _with(self, vals):
        ls = vals[0] if isinstance(self.length_scale, (int, float)) else list(vals)
        return RBF(ls, self.length_scale_bounds)

    def __repr__(self):
        return "RBF(length_scale=%s)" % _ls_repr(self.length_scale)


class Matern(Kernel):
    def __init__(self, length_scale=1.0, length_scale_bounds=_DEFAULT_BOUNDS, nu=1.5):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds
        self.nu = nu

    def get_params(self, deep=True):
        return {"length_scale": self.length_scale, "length_scale_bounds": self.length_scale_bounds, "nu": self.nu}

    def spec(self):
        return "Matern(%s, %s, nu=%s)" % (_ls_spec(self.length_scale), _bounds(self.length_scale_bounds),
                                          _num(self.nu))

    def _values(self):
        return _ls_list(self.length_scale)

    def _with(self, vals):
        ls = vals[0] if isinstance(self.length_scale, (int, float)) else list(vals)
        return Matern(ls, self.length_scale_bounds, self.nu)

    def __repr__(self):
        return "Matern(length_scale=%s, nu={0:.3g})".format(self.nu) % _ls_repr(self.length_scale)


class RationalQuadratic(Kernel):
    def __init__(self, length_scale=1.0, alpha=1.0, length_scale_bounds=_DEFAULT_BOUNDS, alpha_bounds=_DEFAULT_BOUNDS):
        self.length_scale = length_scale
        self.alpha = alpha
        self.length_scale_bounds = length_scale_bounds
        self.alpha_bounds = alpha_bounds

    def get_params(self, deep=True):
        return {"length_scale": self.length_scale, "alpha": self.alpha,
                "length_scale_bounds": self.length_scale_bounds, "alpha_bounds": self.alpha_bounds}

    def spec(self):
        return "RationalQuadratic(%s, %s, %s, %s)" % (_num(self.length_scale), _num(self.alpha),
                                                     _bounds(self.length_scale_bounds), _bounds(self.alpha_bounds))

    def _values(self):
        return [self.alpha, self.length_scale]  # scikit-learn's theta order: alpha first

    def _with(self, vals):
        return RationalQuadratic(vals[1], vals[0], self.length_scale_bounds, self.alpha_bounds)

    def __repr__(self):
        return "RationalQuadratic(alpha={0:.3g}, length_scale={1:.3g})".format(self.alpha, self.length_scale)


class _Op(Kernel):
    _sym = None

    def __init__(self, k1, k2):
        self.k1 = k1
        self.k2 = k2

    def get_params(self, deep=True):
        return {"k1": self.k1, "k2": self.k2}

    def spec(self):
        return "(%s %s %s)" % (self.k1.spec(), self._sym, self.k2.spec())

    def _values(self):
        return self.k1._values() + self.k2._values()

    def _with(self, vals):
        n1 = len(self.k1._values())
        return type(self)(self.k1._with(vals[:n1]), self.k2._with(vals[n1:]))

    def __repr__(self):
        return "{0} {1} {2}".format(self.k1, self._sym, self.k2)


class Sum(_Op):
    _sym = "+"


class Product(_Op):
    _sym = "*"


_SKLEARN = {"ConstantKernel": ConstantKernel, "WhiteKernel": WhiteKernel, "RBF": RBF, "Matern": Matern,
            "RationalQuadratic": RationalQuadratic}


def from_sklearn(k):
    """A scikit-learn kernel object translated into this module's (the same
    class names and parameters); a kernel not built here is refused by name."""
    name = type(k).__name__
    mod = type(k).__module__ or ""
    if not mod.startswith("sklearn.") or not hasattr(k, "get_params"):
        raise InvalidArgumentError("kernel %r is neither a samebits nor a scikit-learn kernel" % (k,))
    p = k.get_params(deep=False)
    if name in ("Sum", "Product"):
        return (Sum if name == "Sum" else Product)(_as_kernel(p["k1"]), _as_kernel(p["k2"]))
    if name not in _SKLEARN:
        raise InvalidArgumentError("kernel %s is not built (ConstantKernel, WhiteKernel, RBF, Matern with nu 0.5, "
                                   "1.5 or 2.5, RationalQuadratic, sums and products; docs/gaussian-process.md)" % name)
    cls = _SKLEARN[name]
    args = {}
    for key, v in p.items():
        if hasattr(v, "tolist"):
            v = v.tolist()
        args[key] = v
    return cls(**args)


__all__ = ["Kernel", "ConstantKernel", "WhiteKernel", "RBF", "Matern", "RationalQuadratic", "Sum", "Product",
           "from_sklearn"]
