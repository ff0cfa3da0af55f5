"""Write bench/ts_gpu_bench.py's series (its derive rule, seed 7) for
bench/arima_device_probe.cu: int64 n; int64 offsets[n + 1]; doubles."""
import sys
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from ts_bench_common import derive  # noqa: E402  (ts_gpu_bench.py's rule, without samebits)


if __name__ == "__main__":
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    here = __import__("os").path.dirname(__file__)
    ys = derive(dict(np.load(here + "/data/taxi-daily-bases.npz")), n, 1000, 7)
    off = np.zeros(n + 1, np.int64)
    off[1:] = np.cumsum([len(y) for y in ys])
    with open(out, "wb") as f:
        f.write(np.int64(n).tobytes())
        f.write(off.tobytes())
        f.write(np.concatenate(ys).astype(np.float64).tobytes())
