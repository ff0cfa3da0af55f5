import sys, time, numpy as np
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
from cluster_gpu_bench import blobs
import samebits
x, _ = blobs(5_000_000, 128, 64, 0)
t = time.perf_counter(); ok = np.isfinite(x).all(); print("np isfinite", time.perf_counter() - t)
for dev in ["cuda", "cuda"]:
    t = time.perf_counter(); m = samebits.KMeans(n_clusters=64, random_state=0, device=dev).fit(x); print(dev, "fit", time.perf_counter() - t, m.n_iter_)
