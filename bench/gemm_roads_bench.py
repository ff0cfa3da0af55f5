#!/usr/bin/env python3
"""The host's two roads to the identical product's exact totals, side by side:
the digit planes (int8 products, the CPU's vector kernels) and the direct road
(int32 integers, 64-bit products, 128-bit sums; src/linalg/gemm_direct.c). Both
give the same bits; this measures which is faster per shape, the measurements
src/linalg/gemm.c's direct_pays() follows.

    python3 bench/gemm_roads_bench.py [--threads N] [--save]

Data: NumPy default_rng(0) standard normal float32 (four digits on both sides).
Time: best of 3 calls of sb_gemm("cpu", ...) per road (SAMEBITS_GEMM_HOST),
wall seconds, in one process. --save writes bench/results/gemm-roads-DATE-COMMIT.txt.
"""
import argparse
import ctypes
import datetime
import os
import platform
import sys
import time

import numpy as np
from _common import git_commit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = [(0, 0, 60000, 60, 784), (0, 0, 60000, 10, 784), (1, 0, 784, 60, 60000), (1, 0, 784, 10, 60000),
          (0, 0, 20000, 64, 256), (0, 0, 4096, 4096, 64), (0, 0, 100000, 8, 64), (0, 0, 512, 512, 512),
          (1, 0, 64, 64, 100000), (1, 0, 200, 200, 20000), (0, 0, 16346, 3, 8), (0, 0, 1000, 1000, 1000)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    os.environ["SAMEBITS_NUM_THREADS"] = str(a.threads)
    path = os.environ.get("SAMEBITS_LIB", os.path.join(REPO, "build", "libsamebits.so"))
    lib = ctypes.CDLL(path)
    f = ctypes.POINTER(ctypes.c_float)
    lib.sb_gemm.argtypes = [ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64,
                            ctypes.c_int64, f, ctypes.c_int64, f, ctypes.c_int64, f, ctypes.c_int64]
    rng = np.random.default_rng(0)
    commit = git_commit(short=True)[0]
    lines = ["# The host's two product roads (bench/gemm_roads_bench.py)", "",
             "- commit %s, %s, %s, %d threads, %s" % (commit, platform.machine(), platform.processor() or "cpu",
                                                       a.threads, datetime.date.today().isoformat()),
             "- seconds: best of 3 sb_gemm calls per road; ratio = direct / digits (below 1: direct faster)", "",
             "| op | m x n x K | products | digits (s) | direct (s) | direct / digits |", "|---|---|---|---|---|---|"]
    for ta, tb, m, n, k in SHAPES:
        A = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
        B = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        C = np.zeros((m, n), np.float32)
        out = []
        for road in ("digits", "direct"):
            os.environ["SAMEBITS_GEMM_HOST"] = road
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                st = lib.sb_gemm(b"cpu", ta, tb, m, n, k, A.ctypes.data_as(f), A.shape[1], B.ctypes.data_as(f),
                                 B.shape[1], C.ctypes.data_as(f), n)
                best = min(best, time.perf_counter() - t0)
                if st != 0:
                    sys.exit("sb_gemm failed: %d" % st)
            out.append(best)
        row = "| %s%s | %d x %d x %d | %.2e | %.4f | %.4f | %.2f |" % (
            "T" if ta else "N", "T" if tb else "N", m, n, k, float(m) * n * k, out[0], out[1], out[1] / out[0])
        print(row, flush=True)
        lines.append(row)
    os.environ.pop("SAMEBITS_GEMM_HOST", None)
    if a.save:
        name = "gemm-roads-%s-%s.txt" % (datetime.date.today().isoformat(), commit)
        with open(os.path.join(REPO, "bench", "results", name), "w") as fh:
            fh.write("\n".join(lines) + "\n")
        print("wrote bench/results/" + name)


if __name__ == "__main__":
    main()
