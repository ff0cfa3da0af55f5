#!/usr/bin/env python3
"""knn_gpu_probe.py: the device path's phases (SAMEBITS_KNN_TIMING=1 prints them)
on the shapes of issue 23's H200 rows: kneighbors at 1M x 128 (10k queries,
k = 10) and DBSCAN at 100k flights rows; a measurement aid for
bench/neighbors_gpu_bench.py, which records the claims.

    SAMEBITS_KNN_TIMING=1 python3 tools/knn_gpu_probe.py DEVICE [DATA_DIR]
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import numpy as np  # noqa: E402
import samebits  # noqa: E402
import neighbors_gpu_bench as nb  # noqa: E402

dev = sys.argv[1]
x, q = nb.blobs(1000000, 10000, 128, 64, 0)
samebits.NearestNeighbors(n_neighbors=10, device=dev).fit(x[:5000]).kneighbors(q[:64])
m = samebits.NearestNeighbors(n_neighbors=10, device=dev).fit(x)
for _ in range(2):
    t = time.perf_counter()
    m.kneighbors(q)
    print(dev, "kneighbors", round(time.perf_counter() - t, 4), flush=True)
if len(sys.argv) > 2:
    import linear_bench as lb
    lb.DATA = sys.argv[2]
    _, sets, _ = lb.load_flights()
    xf = np.ascontiguousarray(sets["std"][0][:100000], dtype=np.float32)
    for _ in range(2):
        t = time.perf_counter()
        samebits.DBSCAN(eps=0.3, min_samples=10, device=dev).fit(xf)
        print(dev, "dbscan", round(time.perf_counter() - t, 4), flush=True)
