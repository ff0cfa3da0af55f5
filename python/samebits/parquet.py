"""Parquet input through pyarrow (when installed): columns to float32 features.

The C library reads CSV, LibSVM and TSV itself; Parquet goes through pyarrow,
which this package does not require. Conversion to float32 is NumPy's
float64 -> float32 cast (round to nearest even), the rule every reader of the
project follows (docs/io.md); integer columns beyond 2^24 round the same way.
Timestamps become seconds since the epoch (as float64 first, then float32), and
nulls become NaN (missing).
"""
from .errors import BackendUnavailableError, InvalidInputError


def _pyarrow():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise BackendUnavailableError("reading Parquet needs pyarrow (pip install pyarrow); "
                                      "or convert the file to CSV") from None
    return pq


def read_parquet_columns(path, columns=None):
    """{name: float64 NumPy array} of the file's columns (all, or those named).
    Timestamps are seconds since the epoch; nulls are NaN."""
    import numpy as np
    pq = _pyarrow()
    table = pq.read_table(path, columns=list(columns) if columns is not None else None)
    out = {}
    for name in table.column_names:
        col = table.column(name)
        t = str(col.type)
        if t.startswith("timestamp"):
            a = col.cast("int64").to_numpy(zero_copy_only=False).astype(np.float64)
            unit = {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[col.type.unit]
            mask = col.is_null().to_numpy(zero_copy_only=False)
            a = a / unit
            a[mask] = np.nan
        else:
            try:
                a = col.to_numpy(zero_copy_only=False).astype(np.float64)
            except (ValueError, TypeError):
                raise InvalidInputError("%s: column %r of type %s is not numeric" % (path, name, t)) from None
        out[name] = a
    return out


def read_parquet(path, label=None, columns=None):
    """(X float32 (n, d), y float32 or None, feature names) from a Parquet file:
    every named column (or all) but the label is a feature."""
    import numpy as np
    cols = read_parquet_columns(path, columns)
    names = [c for c in cols if c != label]
    if label is not None and label not in cols:
        raise InvalidInputError("%s: no label column %r; columns: %s" % (path, label, ", ".join(cols)))
    X = np.column_stack([cols[c] for c in names]).astype(np.float32) if names else None
    y = cols[label].astype(np.float32) if label is not None else None
    return X, y, names
