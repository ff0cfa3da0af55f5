"""bench/ts_gpu_bench.py's series (its derive rule, seed 7, 1,000 days each) as one
batch: batch(n) gives (values, offsets) for bench/arima_lib_time.py, and run as a
script it writes them for bench/arima_device_probe.cu (int64 n; int64 offsets[n + 1];
doubles)."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ts_bench_common import derive  # noqa: E402  (ts_gpu_bench.py's rule, without samebits)


def batch(n):
    """The first n series, concatenated (float64), and their offsets (int64, n + 1)."""
    ys = derive(dict(np.load(os.path.join(HERE, "data", "taxi-daily-bases.npz"))), n, 1000, 7)
    off = np.zeros(n + 1, np.int64)
    off[1:] = np.cumsum([len(y) for y in ys])
    return np.ascontiguousarray(np.concatenate(ys), dtype=np.float64), off


if __name__ == "__main__":
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    y, off = batch(n)
    with open(out, "wb") as f:
        f.write(np.int64(n).tobytes())
        f.write(off.tobytes())
        f.write(y.tobytes())
