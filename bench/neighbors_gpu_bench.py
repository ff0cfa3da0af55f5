#!/usr/bin/env python3
"""Nearest neighbors and DBSCAN on a GPU beside scikit-learn on the host's
cores (issue 23's H200 rows), with PyTorch's torch.cdist + topk on the same GPU
as a brute-force reference.

    python3 bench/neighbors_gpu_bench.py [--devices cuda,opencl] [--workloads knn,dbscan]
        [--rows 1000000] [--queries 10000] [--seeds 0,1,2] [--identity-queries 1000]
        [--data DIR] [--commit SHA] [--out FILE.json] [--md FILE.md]

knn: 64 blob centers from numpy's default_rng(seed) uniform in [-10, 10]^128,
--rows x 128 float32 training rows around them (unit normal noise) and
--queries query rows drawn the same way (a second stream of the same seed);
NearestNeighbors(n_neighbors=10). Timed from the host arrays to the answer:
samebits fit + kneighbors on the device named (the upload included);
scikit-learn NearestNeighbors(algorithm="brute", n_jobs=-1) fit + kneighbors on
every host core; PyTorch: the rows uploaded once (not timed), then
torch.cdist + topk over chunks of queries on the GPU (float32, no identity
promise). Each library is timed once after a warm-up call on a small slice.
Quality: each query's list against scikit-learn's: equal, different only among
rows at exactly equal float64 distance ("tie only"), or a mismatch.
Identity: the first --identity-queries queries' indices and distances on the
CPU and on every device, as SHA-256 digests (equal or not).

dbscan: the first 100,000 training rows of flights-3m.parquet (7 standardized
features, bench/linear_bench.py's loader; --data names its folder),
DBSCAN(eps=0.3, min_samples=10); samebits on each device (three timed fits)
beside scikit-learn DBSCAN(n_jobs=-1) (three timed fits); the adjusted Rand
index between the labelings, and the model digests of the CPU and each device.
"""
import argparse
import hashlib
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from cluster_gpu_bench import gpu_facts, median, report_head, write_outputs  # noqa: E402
from _common import git_commit  # noqa: E402


def blobs(n, nq, d, k, seed):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, size=(k, d)).astype(np.float32)
    x = rng.standard_normal(size=(n, d), dtype=np.float32)
    x += centers[rng.integers(0, k, size=n)]
    q = rng.standard_normal(size=(nq, d), dtype=np.float32)
    q += centers[rng.integers(0, k, size=nq)]
    return x, q


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def compare_lists(x, q, ours, theirs):
    """(equal, tie only, mismatch) over the queries: a list that differs counts as
    tie only when the two lists' float64 distances, sorted, are the same values."""
    eq = tie = bad = 0
    for i in range(len(q)):
        a, b = ours[i], theirs[i]
        if np.array_equal(a, b):
            eq += 1
            continue
        da = np.sort(((x[a].astype(np.float64) - q[i].astype(np.float64)) ** 2).sum(1))
        db = np.sort(((x[b].astype(np.float64) - q[i].astype(np.float64)) ** 2).sum(1))
        if np.array_equal(da, db):
            tie += 1
        else:
            bad += 1
    return eq, tie, bad


def torch_knn(x, q, k):
    import torch
    dev = torch.device("cuda")
    xt = torch.from_numpy(x).to(dev)
    qh = torch.from_numpy(q)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = []
    for s in range(0, len(q), 1024):
        qt = qh[s:s + 1024].to(dev)
        out.append(torch.cdist(qt, xt).topk(k, dim=1, largest=False).indices.cpu())
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def run_knn(a, devices):
    from sklearn.neighbors import NearestNeighbors as SK
    rows, identity = [], []
    k = 10
    for seed in [int(s) for s in a.seeds.split(",")]:
        x, q = blobs(a.rows, a.queries, 128, 64, seed)
        row = {"seed": seed, "rows": a.rows, "queries": a.queries}
        res = {}
        for dev in devices:
            samebits.NearestNeighbors(n_neighbors=k, device=dev).fit(x[:5000]).kneighbors(q[:64])  # warm-up
            t0 = time.perf_counter()
            m = samebits.NearestNeighbors(n_neighbors=k, device=dev).fit(x)
            t1 = time.perf_counter()
            dist, idx = m.kneighbors(q)
            row[dev] = {"s": time.perf_counter() - t0, "fit_s": t1 - t0, "query_s": time.perf_counter() - t1}
            del m
            res[dev] = (np.asarray(idx), np.asarray(dist))
            row[dev]["digest"] = digest(*res[dev])
            print("knn", seed, dev, row[dev], flush=True)
        SK(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(x[:5000]).kneighbors(q[:64])
        t0 = time.perf_counter()
        skm = SK(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(x)
        t1 = time.perf_counter()
        sk_idx = skm.kneighbors(q, return_distance=False)
        row["sklearn"] = {"s": time.perf_counter() - t0, "fit_s": t1 - t0, "query_s": time.perf_counter() - t1}
        eq, tie, bad = compare_lists(x, q, res[devices[0]][0], sk_idx)
        row["lists"] = {"equal": eq, "tie_only": tie, "mismatch": bad}
        print("knn", seed, "sklearn", row["sklearn"], row["lists"], flush=True)
        try:
            torch_knn(x[:5000], q[:64], k)
            row["torch_s"] = torch_knn(x, q, k)
        except Exception as e:  # no torch or no GPU: recorded as absent
            row["torch_s"], row["torch_error"] = None, str(e)[:200]
        rows.append(row)
        qi = q[: a.identity_queries]
        dig = {}
        for dev in ["cpu"] + devices:
            dist, idx = samebits.NearestNeighbors(n_neighbors=k, device=dev).fit(x).kneighbors(qi)
            dig[dev] = digest(np.asarray(idx), np.asarray(dist))
        identity.append({"case": f"knn blobs {a.rows} x 128, the first {len(qi)} queries, k {k}, seed {seed}",
                         "digests": dig, "equal": len(set(dig.values())) == 1})
        print(identity[-1], flush=True)
        del x, q
    return rows, identity


def run_dbscan(a, devices):
    import linear_bench as lb
    from sklearn.cluster import DBSCAN as SK
    from sklearn.metrics import adjusted_rand_score
    if a.data:
        lb.DATA = a.data
    _, sets, _ = lb.load_flights()
    x = np.ascontiguousarray(sets["std"][0][:100000], dtype=np.float32)
    row = {"rows": len(x)}
    labels = {}
    for dev in devices:
        samebits.DBSCAN(eps=0.3, min_samples=10, device=dev).fit(x[:2000])  # warm-up
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            m = samebits.DBSCAN(eps=0.3, min_samples=10, device=dev).fit(x)
            times.append(time.perf_counter() - t0)
        row[dev] = {"s": times, "digest": m.model_digest_}
        labels[dev] = np.asarray(m.labels_)
        print("dbscan", dev, row[dev], flush=True)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        sk = SK(eps=0.3, min_samples=10, n_jobs=-1).fit(x)
        times.append(time.perf_counter() - t0)
    row["sklearn"] = {"s": times}
    row["ari"] = float(adjusted_rand_score(sk.labels_, labels[devices[0]]))
    cpu = samebits.DBSCAN(eps=0.3, min_samples=10).fit(x)
    dig = {"cpu": cpu.model_digest_, **{d: row[d]["digest"] for d in devices}}
    print("dbscan sklearn", row["sklearn"], "ari", row["ari"], flush=True)
    return row, {"case": "dbscan flights 100000 x 7, eps 0.3, min_samples 10", "digests": dig,
                 "equal": len(set(dig.values())) == 1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--workloads", default="knn,dbscan")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--identity-queries", type=int, default=1000)
    ap.add_argument("--data", help="the folder of flights-3m.parquet (default: bench/linear_bench.py's)")
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--commit", help="the sources' commit, where the checkout's own HEAD is not it (the device copy)")
    a = ap.parse_args()
    commit = a.commit or git_commit()[0]
    devices = [d for d in a.devices.split(",") if d]
    work = a.workloads.split(",")
    res = {"bench": "neighbors-gpu", "commit": commit, "identity": []}
    if "knn" in work:
        res["knn"], ident = run_knn(a, devices)
        res["identity"] += ident
    if "dbscan" in work:
        res["dbscan"], ident = run_dbscan(a, devices)
        res["identity"].append(ident)
    res["machine"], res["versions"] = gpu_facts()
    write_outputs(a.out, a.md, res, report(res, devices))


def report(res, devices):
    med = median
    L = report_head(res, "Nearest neighbors and DBSCAN on a GPU beside scikit-learn", "neighbors_gpu_bench.py",
                    "scikit-learn's n_jobs=-1: all of them") + [""]
    if "knn" in res:
        r0 = res["knn"][0]
        L += [f"NearestNeighbors(n_neighbors=10), {r0['rows']} x 128 float32 blobs, {r0['queries']} queries. "
              "kneighbors: the search alone (the query's host arrays to the answer, the rows' upload included); "
              "fit: samebits copies the rows into its model and prepares their screening panels on the host, "
              "scikit-learn keeps a reference to the array", "",
              "| seed | " + " | ".join(f"samebits {d} kneighbors s (fit s)" for d in devices) +
              " | scikit-learn kneighbors s (fit s) | kneighbors speedup " + " / ".join(devices) +
              " | fit + kneighbors speedup " + " / ".join(devices) + " | torch cdist+topk s | "
              "lists equal / tie only / mismatch |",
              "| --- " * (len(devices) + 6) + "|"]
        for r in res["knn"]:
            sk = r["sklearn"]
            L.append(f"| {r['seed']} | " + " | ".join(f"{r[d]['query_s']:.3f} ({r[d]['fit_s']:.3f})" for d in devices) +
                     f" | {sk['query_s']:.3f} ({sk['fit_s']:.3f}) | " +
                     " / ".join(f"{sk['query_s'] / r[d]['query_s']:.1f}x" for d in devices) + " | " +
                     " / ".join(f"{sk['s'] / r[d]['s']:.1f}x" for d in devices) + " | " +
                     (f"{r['torch_s']:.3f}" if r.get("torch_s") else "-") +
                     f" | {r['lists']['equal']} / {r['lists']['tie_only']} / {r['lists']['mismatch']} |")
        for d in devices:
            L.append("")
            L.append(f"kNN median speedup on {d}: kneighbors "
                     f"{med([r['sklearn']['query_s'] / r[d]['query_s'] for r in res['knn']]):.1f}x, fit + kneighbors "
                     f"{med([r['sklearn']['s'] / r[d]['s'] for r in res['knn']]):.1f}x (issue 23's target: at least 50x)")
        L.append("")
    if "dbscan" in res:
        r = res["dbscan"]
        sk = med(r["sklearn"]["s"])
        L += [f"DBSCAN(eps=0.3, min_samples=10) on {r['rows']} flights rows x 7 (standardized); three timed fits each", "",
              "| device | samebits s (median; each) | scikit-learn s (median) | speedup | ARI vs scikit-learn |",
              "| --- | --- | --- | --- | --- |"]
        for d in devices:
            L.append(f"| {d} | {med(r[d]['s']):.3f}; " + ", ".join(f"{t:.3f}" for t in r[d]["s"]) +
                     f" | {sk:.3f} | {sk / med(r[d]['s']):.1f}x | {r['ari']:.4f} |")
        L += ["", "(issue 23's target: at least 10x)", ""]
    L += ["Identity (digests of the answers; DBSCAN: model digests):", ""]
    for i in res["identity"]:
        L.append(f"- {i['case']}: {'equal' if i['equal'] else 'DIFFER'} {i['digests']}")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
