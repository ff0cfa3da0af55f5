"""Exceptions: one class per non-OK status of the C library, under SameBitsError.

Each carries the C library's message (str(e)), the status code (e.status) and
its name (e.status_name, e.g. "SB_ERR_INVALID_INPUT"). Where a builtin exception
means the same thing, the class also derives from it (InvalidInputError is a
ValueError, SameBitsIOError an OSError, ...), so generic handlers and
scikit-learn's own checks keep working.
"""


class SameBitsError(Exception):
    """Base class of every error raised by samebits."""

    status = None
    status_name = None

    def __init__(self, message="", status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message


class InvalidArgumentError(SameBitsError, ValueError):
    """SB_ERR_INVALID_ARGUMENT: a parameter is out of its domain."""
    status, status_name = 1, "SB_ERR_INVALID_ARGUMENT"


class InvalidInputError(SameBitsError, ValueError):
    """SB_ERR_INVALID_INPUT: data, a file or a parameter string is malformed."""
    status, status_name = 2, "SB_ERR_INVALID_INPUT"


class InvalidInputTypeError(InvalidInputError, TypeError):
    """Input of a type that is no number at all (a dict in an object array): an
    InvalidInputError that is also a TypeError, as scikit-learn's checks expect."""


class OutOfMemoryError(SameBitsError, MemoryError):
    """SB_ERR_OUT_OF_MEMORY."""
    status, status_name = 3, "SB_ERR_OUT_OF_MEMORY"


class SameBitsIOError(SameBitsError, OSError):
    """SB_ERR_IO: a file could not be read or written."""
    status, status_name = 4, "SB_ERR_IO"


class ModeUnsupportedError(SameBitsError):
    """SB_ERR_MODE_UNSUPPORTED (a refusal): the numeric tier asked for is not built
    (only 'identical' is)."""
    status, status_name = 5, "SB_ERR_MODE_UNSUPPORTED"


class IdentityRefusedError(SameBitsError):
    """SB_ERR_IDENTITY_REFUSED (a refusal): the configuration cannot meet the profile."""
    status, status_name = 6, "SB_ERR_IDENTITY_REFUSED"


class BackendUnavailableError(SameBitsError):
    """SB_ERR_BACKEND_UNAVAILABLE (a refusal): the device asked for is not built or not present."""
    status, status_name = 7, "SB_ERR_BACKEND_UNAVAILABLE"


class LimitError(SameBitsError):
    """SB_ERR_LIMIT: an input exceeds a documented limit."""
    status, status_name = 8, "SB_ERR_LIMIT"


class MismatchError(SameBitsError):
    """SB_ERR_MISMATCH: a comparison of cards or digests found a difference."""
    status, status_name = 9, "SB_ERR_MISMATCH"


class NotFoundError(SameBitsError, LookupError):
    """SB_ERR_NOT_FOUND: a named fixture, stage or key does not exist."""
    status, status_name = 10, "SB_ERR_NOT_FOUND"


class InternalError(SameBitsError):
    """SB_ERR_INTERNAL."""
    status, status_name = 11, "SB_ERR_INTERNAL"


class LibraryNotFoundError(SameBitsError, ImportError):
    """The shared library libsamebits.so could not be found or loaded."""


class VersionMismatchError(SameBitsError, ImportError):
    """The shared library's sb_version() differs from the package's __version__."""


class NotFittedError(SameBitsError, ValueError, AttributeError):
    """The estimator is used before fit (as scikit-learn's NotFittedError)."""


_sk_not_fitted = {}


def not_fitted(message):
    """NotFittedError; when scikit-learn is already imported, one that is also
    sklearn.exceptions.NotFittedError (scikit-learn is never imported for it)."""
    import sys
    sk = sys.modules.get("sklearn.exceptions")
    base = getattr(sk, "NotFittedError", None) if sk is not None else None
    if base is None:
        return NotFittedError(message)
    cls = _sk_not_fitted.get(base)
    if cls is None:
        cls = _sk_not_fitted[base] = type("NotFittedError", (NotFittedError, base), {"__module__": __name__})
    return cls(message)


BY_STATUS = {
    cls.status: cls
    for cls in (InvalidArgumentError, InvalidInputError, OutOfMemoryError, SameBitsIOError,
                ModeUnsupportedError, IdentityRefusedError, BackendUnavailableError, LimitError,
                MismatchError, NotFoundError, InternalError)
}


def error_for(status, message):
    """The exception for a non-OK status (an unknown code becomes InternalError)."""
    cls = BY_STATUS.get(status)
    if cls is None:
        return InternalError("unknown status %d: %s" % (status, message), status=status)
    return cls(message)
