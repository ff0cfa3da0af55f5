"""The identical GEMM beside the vendors' float32 GEMM, in one run on one machine.

    python3 bench/gemm_bench.py --devices cuda,opencl --peers torch,cupy --out build/gemm.json
    python3 bench/gemm_bench.py --devices cpu --peers numpy --sizes 1024,4096 --out build/gemm-cpu.json

samebits runs through build*/gemm_bench (bench/gemm_bench.c: data resident on the
device, wall time of a queued product and a finish, median of --reps after a
warm-up). The peers run the same shapes on the same inputs' distribution:
PyTorch's torch.matmul and CuPy's matmul in float32 with TF32 off (cuBLAS SGEMM;
CUDA events, median of --reps after a warm-up) and NumPy's matmul on the host
(OpenBLAS SGEMM on the same cores). Throughput is 2mnk / median for all.
Each samebits row carries the SHA-256 of C: rows of one shape on different
devices must agree (the identity check of the run), and the JSON records it.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time
from _common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shapes_of(sizes, tall):
    out = [(n, n, n) for n in sizes]
    if tall:
        out.append((1048576, 128, 128))
    return out


def run_samebits(exe, device, reps, shapes, timeout):
    args = [exe, device, str(reps)]
    for s in shapes:
        args += [str(x) for x in s]
    rows = []
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
    if p.returncode != 0 and not rows:
        rows.append({"device": device, "error": p.stderr.strip()[-400:]})
    return rows


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def run_torch(reps, shapes):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    rows = []
    for (m, n, k) in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.rand((m, k), device="cuda", generator=g) * 2 - 1
        b = torch.rand((k, n), device="cuda", generator=g) * 2 - 1
        c = a @ b
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            c = a @ b
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1) / 1000.0)
        med = median(ts)
        rows.append({"peer": "torch " + torch.__version__ + " (cuBLAS SGEMM, TF32 off)", "m": m, "n": n, "k": k,
                     "reps": reps, "median_s": med, "best_s": min(ts), "tflops": 2.0 * m * n * k / med * 1e-12})
        del a, b, c
        torch.cuda.empty_cache()
    return rows


def run_cupy(reps, shapes):
    import cupy
    rows = []
    for (m, n, k) in shapes:
        rs = cupy.random.RandomState(0)
        a = (rs.random_sample((m, k), dtype=cupy.float32) * 2 - 1)
        b = (rs.random_sample((k, n), dtype=cupy.float32) * 2 - 1)
        c = a @ b
        cupy.cuda.Device().synchronize()
        ts = []
        for _ in range(reps):
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record()
            c = a @ b
            e1.record()
            e1.synchronize()
            ts.append(cupy.cuda.get_elapsed_time(e0, e1) / 1000.0)
        med = median(ts)
        rows.append({"peer": "cupy " + cupy.__version__ + " (cuBLAS SGEMM)", "m": m, "n": n, "k": k, "reps": reps,
                     "median_s": med, "best_s": min(ts), "tflops": 2.0 * m * n * k / med * 1e-12})
        del a, b, c
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def run_numpy(reps, shapes):
    import numpy as np
    rows = []
    for (m, n, k) in shapes:
        rng = np.random.default_rng(0)
        a = (rng.random((m, k), dtype=np.float32) * 2 - 1)
        b = (rng.random((k, n), dtype=np.float32) * 2 - 1)
        c = a @ b
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            c = a @ b
            ts.append(time.perf_counter() - t0)
        med = median(ts)
        cfg = ""
        try:
            import threadpoolctl
            info = threadpoolctl.threadpool_info()
            cfg = ", ".join("%s %s %s threads" % (i.get("internal_api"), i.get("version"), i.get("num_threads"))
                            for i in info if i.get("user_api") == "blas")
        except ImportError:
            pass
        rows.append({"peer": "numpy " + np.__version__ + " (" + (cfg or "BLAS") + ")", "m": m, "n": n, "k": k,
                     "reps": reps, "median_s": med, "best_s": min(ts), "tflops": 2.0 * m * n * k / med * 1e-12})
        del c
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--peers", default="torch,cupy")
    ap.add_argument("--sizes", default="1024,4096,8192,16384")
    ap.add_argument("--tall", type=int, default=1, help="1: also 1M x 128 times 128 x 128")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--exe", default=None, help="gemm_bench binary (default: build-cuda/ then build/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=int, default=1200)
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    shapes = shapes_of(sizes, a.tall)
    exe = a.exe or next((p for p in (os.path.join(ROOT, "build-cuda", "gemm_bench"),
                                     os.path.join(ROOT, "build", "gemm_bench")) if os.path.exists(p)), None)
    rec = {"machine": platform.node(), "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "shapes": shapes, "reps": a.reps,
           "samebits": [], "peers": []}
    rec["commit"] = git_commit()[0] or os.environ.get("COMMIT", "unknown")
    for dev in [d for d in a.devices.split(",") if d]:
        rows = run_samebits(exe, dev, a.reps, shapes, a.timeout)
        for r in rows:
            print("samebits", json.dumps(r), flush=True)
        rec["samebits"] += rows
    for peer in [p for p in a.peers.split(",") if p]:
        try:
            rows = {"torch": run_torch, "cupy": run_cupy, "numpy": run_numpy}[peer](a.reps, shapes)
        except Exception as e:  # a missing peer is recorded, not hidden
            rows = [{"peer": peer, "error": repr(e)[:300]}]
        for r in rows:
            print("peer", json.dumps(r), flush=True)
        rec["peers"] += rows
    # identity across the devices of this run
    by_shape = {}
    for r in rec["samebits"]:
        if "c_sha256" in r:
            by_shape.setdefault((r["m"], r["n"], r["k"]), set()).add(r["c_sha256"])
    rec["identical_across_devices"] = all(len(v) == 1 for v in by_shape.values())
    print("identical across devices:", rec["identical_across_devices"], flush=True)
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    return 0 if rec["identical_across_devices"] else 1


if __name__ == "__main__":
    sys.exit(main())
