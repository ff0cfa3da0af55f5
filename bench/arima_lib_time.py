"""The library's ARIMA(1,1,1) fit of bench/arima_device_probe.cu's batch (bench/ts_gpu_bench.py's
10,000 taxi-derived series, seed 7), called straight through ctypes so that no Python conversion
is timed: sb_arima_fit three times on each device named (comma-separated: cpu, cuda, opencl), and
sb_arima_free. Beside the probe's launch time it gives the host's work around the launch.

Run (the GPU host, from the checkout): SAMEBITS_LIB=build-cuda/libsamebits.so python3 bench/arima_lib_time.py cuda
"""
import ctypes, sys, time
import numpy as np
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import arima_probe_data as a
from samebits._lib import lib, params as _params
from samebits import arima as sb_arima  # declares the signatures
ys = a.derive(dict(np.load("bench/data/taxi-daily-bases.npz")), 10000, 1000, 7)
y = np.ascontiguousarray(np.concatenate(ys))
off = np.zeros(len(ys) + 1, np.int64); off[1:] = np.cumsum([len(s) for s in ys])
P = ctypes.POINTER
for dev in sys.argv[1].split(","):
    p = _params(sb_arima._pairs((1, 1, 1), (0, 0, 0, 0), "n", None, dev))
    for rep in range(3):
        h = ctypes.c_void_p()
        t = time.perf_counter()
        st = lib.sb_arima_fit(p.ptr, y.ctypes.data_as(P(ctypes.c_double)), off.ctypes.data_as(P(ctypes.c_int64)),
                              len(ys), None, ctypes.byref(h))
        dt = time.perf_counter() - t
        print("%s rep %d: sb_arima_fit %.3f s (status %d)" % (dev, rep, dt, st), flush=True)
        t = time.perf_counter()
        lib.sb_arima_free(h)
        print("   free %.3f s" % (time.perf_counter() - t), flush=True)
