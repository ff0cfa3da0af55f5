"""The library's ARIMA(1,1,1) fit of bench/arima_device_probe.cu's batch (bench/ts_gpu_bench.py's
10,000 taxi-derived series, seed 7), called straight through ctypes so that no Python conversion
is timed: sb_arima_fit three times on each device named (comma-separated: cpu, cuda, opencl), and
sb_arima_free. Beside the probe's launch time it gives the host's work around the launch.

Run (the GPU host, from the checkout): SAMEBITS_LIB=build-cuda/libsamebits.so python3 bench/arima_lib_time.py cuda
"""
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from arima_probe_data import batch  # noqa: E402
from samebits._lib import lib, params as _params  # noqa: E402
from samebits import arima as sb_arima  # noqa: E402  (declares the signatures)

y, off = batch(10000)
n = len(off) - 1
P = ctypes.POINTER
for dev in sys.argv[1].split(","):
    p = _params(sb_arima._pairs((1, 1, 1), (0, 0, 0, 0), "n", None, dev))
    for rep in range(3):
        h = ctypes.c_void_p()
        t = time.perf_counter()
        st = lib.sb_arima_fit(p.ptr, y.ctypes.data_as(P(ctypes.c_double)), off.ctypes.data_as(P(ctypes.c_int64)),
                              n, None, ctypes.byref(h))
        dt = time.perf_counter() - t
        print("%s rep %d: sb_arima_fit %.3f s (status %d)" % (dev, rep, dt, st), flush=True)
        t = time.perf_counter()
        lib.sb_arima_free(h)
        print("   free %.3f s" % (time.perf_counter() - t), flush=True)
