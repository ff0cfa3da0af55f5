"""Write bench/ts_gpu_bench.py's series (its derive rule, seed 7) for
bench/arima_device_probe.cu: int64 n; int64 offsets[n + 1]; doubles."""
import sys
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))


def derive(bases, n, length, seed):  # bench/ts_gpu_bench.py's derive, without its imports
    names = sorted(bases)
    rng = np.random.default_rng(seed)
    ys = []
    for i in range(n):
        b = bases[names[i % len(names)]]
        L = min(length, len(b))
        s = int(rng.integers(0, len(b) - L + 1))
        ys.append(np.ascontiguousarray(b[s:s + L] * (0.5 + float(rng.random())) + 1.0))
    return ys


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
