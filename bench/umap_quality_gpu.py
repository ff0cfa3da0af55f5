"""Trustworthiness (k = 15) of an embedding at full size on a GPU, and a sweep
of UMAP's batched rule on Fashion-MNIST (issue 29's quality at 70,000 rows).

trust_gpu(x, e) is scikit-learn's trustworthiness (Venna and Kaski 2001):
1 - 2 / (n k (2n - 3k - 1)) times the sum, over each row i and each of its k
nearest rows j in the embedding (itself excluded), of max(0, r(i, j) - k),
r(i, j) the rank of j among i's neighbours in the input (1 for the nearest,
itself excluded). Here the input distances are float64 on the GPU (PyTorch)
in blocks of rows, and a rank is 1 + the number of rows strictly nearer than
j (ties in j's favour, where scikit-learn's argsort breaks them by order);
scikit-learn's own needs the n x n float64 distances (39 GB at 70,000 rows).
On 3,000 rows the two agree to 1e-12 or better (checked by --check-small).

The sweep (--sweep): samebits' UMAP optimize="batched" on --device with
the batched rule's constants taken from SB_UB_PARTS and SB_UB_STEP, which
only the experiment build f3e2163 reads (the product fixed them at 427f577:
64 parts, the full step; on a later build every point of a sweep is that
rule), each embedding's trustworthiness and 15-NN accuracy (5-fold, index
order) beside umap-learn's seeded embedding of the same rows.
trust_cpu(x, embs) is the same sum on the host (float32 input distances
through BLAS), for a machine with no GPU.

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 bench/umap_quality_gpu.py \\
        --data DIR --sweep 1:0.125,16:1 [--seed 42] [--out FILE.json]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)


def trust_gpu(x, e, k=15, block=512):
    """scikit-learn's trustworthiness at k, computed in row blocks on the GPU."""
    import torch
    dev = torch.device("cuda")
    X = torch.as_tensor(np.asarray(x, dtype=np.float64), device=dev)
    E = torch.as_tensor(np.asarray(e, dtype=np.float64), device=dev)
    n = X.shape[0]
    xn, en = (X * X).sum(1), (E * E).sum(1)
    total = 0.0
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        rows = torch.arange(i0, i1, device=dev)
        de = en[i0:i1, None] + en[None, :] - 2.0 * (E[i0:i1] @ E.T)
        de[torch.arange(i1 - i0, device=dev), rows] = float("inf")
        nb = torch.topk(de, k, dim=1, largest=False).indices  # (b, k)
        dx = xn[i0:i1, None] + xn[None, :] - 2.0 * (X[i0:i1] @ X.T)
        dx[torch.arange(i1 - i0, device=dev), rows] = float("inf")
        dij = torch.gather(dx, 1, nb)  # (b, k)
        r = torch.stack([(dx < dij[:, c:c + 1]).sum(1) for c in range(k)], 1) + 1
        total += float(torch.clamp(r - k, min=0).sum().item())
    return 1.0 - total * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0)))


def trust_cpu(x, embs, k=15, block=1024):
    """trust_gpu's sum on the host for several embeddings of one x at once (numpy;
    the input distances float32 through BLAS in row blocks, ranks as in
    trust_gpu): for a machine with no GPU, where scikit-learn's n x n float64
    distances do not fit."""
    from sklearn.neighbors import NearestNeighbors
    x = np.asarray(x, dtype=np.float32)
    n = x.shape[0]
    nbs = []
    for e in embs:
        nn = NearestNeighbors(n_neighbors=k + 1).fit(e)
        ind = nn.kneighbors(e, return_distance=False)
        # drop the row itself (first unless a duplicate sits at distance 0 too)
        nbs.append(np.array([[j for j in r if j != i][:k] for i, r in enumerate(ind)], dtype=np.int64))
    xn = np.einsum("ij,ij->i", x, x)
    totals = [0.0] * len(embs)
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        dx = xn[i0:i1, None] + xn[None, :] - 2.0 * (x[i0:i1] @ x.T)
        dx[np.arange(i1 - i0), np.arange(i0, i1)] = np.inf
        for q, nb in enumerate(nbs):
            dij = np.take_along_axis(dx, nb[i0:i1], axis=1)
            r = np.stack([(dx < dij[:, c:c + 1]).sum(1) for c in range(k)], 1) + 1
            totals[q] += float(np.clip(r - k, 0, None).sum())
    return [1.0 - t * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))) for t in totals]


def knn_acc(e, y):
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    return float(np.mean(cross_val_score(KNeighborsClassifier(n_neighbors=15), e, y, cv=KFold(5))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    ap.add_argument("--rows", type=int, default=70000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sweep", default="1:0.125")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--check-small", action="store_true")
    ap.add_argument("--out", default=None)
    A = ap.parse_args()
    from umap_gpu_bench import load, BASE
    x, y, src, digest = load(argparse.Namespace(data=A.data, rows=A.rows))
    x = x.astype(np.float32)
    res = {"rows": A.rows, "seed": A.seed, "data": src, "params": BASE, "runs": []}
    if A.check_small:
        from sklearn.manifold import trustworthiness
        xs = x[:3000]
        es = xs[:, :2] + 0.01 * xs[:, 2:4]
        res["check_small"] = {"sklearn": float(trustworthiness(xs, es, n_neighbors=15)), "gpu": trust_gpu(xs, es)}
        print(json.dumps(res["check_small"]), flush=True)
    import samebits
    samebits.set_num_threads(A.threads)
    samebits.UMAP(n_epochs=2, random_state=0, optimize="batched", device=A.device).fit(x[-300:].copy())
    for cfg in A.sweep.split(","):
        parts, step = cfg.split(":")
        os.environ["SB_UB_PARTS"], os.environ["SB_UB_STEP"] = parts, step
        t0 = time.perf_counter()
        u = samebits.UMAP(random_state=A.seed, optimize="batched", device=A.device, **BASE).fit(x)
        t = time.perf_counter() - t0
        emb = np.asarray(u.embedding_, dtype=np.float32)
        r = {"parts": int(parts), "step": float(step), "fit_s": t, "model_digest": u.model_digest_,
             "knn15_accuracy": knn_acc(emb, y), "trustworthiness_k15": trust_gpu(x, emb)}
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
    if not A.no_peer:
        import numba
        import umap
        numba.set_num_threads(min(A.threads, numba.config.NUMBA_NUM_THREADS))
        t0 = time.perf_counter()
        e_ul = umap.UMAP(random_state=A.seed, n_jobs=A.threads, **BASE).fit_transform(x)
        r = {"umap_learn": umap.__version__, "fit_s": time.perf_counter() - t0,
             "knn15_accuracy": knn_acc(e_ul, y), "trustworthiness_k15": trust_gpu(x, e_ul)}
        res["umap_learn"] = r
        print(json.dumps(r), flush=True)
    if A.out:
        with open(A.out, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
