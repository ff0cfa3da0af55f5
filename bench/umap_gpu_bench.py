"""UMAP's batched epochs on a GPU (optimize="batched", device=cuda and
device=opencl) beside the host's bits and beside umap-learn seeded on the
host's cores (issue 29: on the H200 at least 10x umap-learn with a seed set
on 16 cores at 70,000 Fashion-MNIST rows, the same embedding on every
device). For the lead's GPU run; not run on this workplace (no GPU).

Workload: all 70,000 Fashion-MNIST rows (--rows; the training set's 60,000,
then the test set's 10,000), pixels / 255 as float32, umap-learn's defaults
(n_neighbors 15, n_components 2, min_dist 0.1, euclidean, 200 epochs above
10,000 rows), random_state --seed (several: --seeds 42,43,44).

Data: --data, the .npz that bench/fashion_mnist_npz.py writes (carry it to a
machine without the Debian package) or a directory of the IDX files (default
/usr/share/datasets/fashion-mnist, then build/fashion-mnist.npz).

samebits (per seed): optimize="batched" on device=cpu at --threads (the
reference), then on each of --devices (default cuda, opencl), each device
warmed first by an untimed 300-row fit (opens the device, builds its
program). Each device's embedding and model digest must be the CPU's bytes:
the run prints whether they are and exits 1 where any differs. Only the
epochs run on the GPU (the neighbors, the graph and the initialization are
the host's, at --threads): --split also times a fit with n_epochs=1 on each
device, so the record shows the part before the epochs beside the epochs.

umap-learn: seeded (random_state set, which makes it run its epochs on one
thread) with n_jobs=--threads, numba's threads set to --threads, timed after
an untimed warm-up fit on 4,500 other rows (its and pynndescent's numba
compile). --no-peer skips it.

Quality: 15-NN accuracy of each embedding (5-fold, index order); the
trustworthiness (k = 15) with --trust only (scikit-learn's needs the n x n
float64 distances: 39 GB at 70,000 rows) or --trust-gpu (the same sum in
row blocks on the GPU with PyTorch: bench/umap_quality_gpu.py's trust_gpu).

Writes bench/results/umap-gpu-DATE-COMMIT.{json,md} (--out-dir elsewhere)
and prints the table.

    python3 bench/fashion_mnist_npz.py     # here: build/fashion-mnist.npz, carried
    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 bench/umap_gpu_bench.py \\
        --data build/fashion-mnist.npz --threads 16 [--seeds 42,43,44] [--split] [--out-dir $OUT]
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
import samebits  # noqa: E402
from mlp_gpu_bench import load as load_fashion_parts  # noqa: E402  (the .npz or IDX reader)

BASE = dict(n_neighbors=15, n_components=2, min_dist=0.1, metric="euclidean")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="the .npz of bench/fashion_mnist_npz.py or a directory of IDX files")
    ap.add_argument("--rows", type=int, default=70000)
    ap.add_argument("--seeds", default="42")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--learning-rate", type=float, default=1.0, help="samebits' learning_rate (umap-learn: 1.0)")
    ap.add_argument("--split", action="store_true", help="also time n_epochs=1 fits: the part before the epochs")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--trust", action="store_true", help="trustworthiness k=15 too (n x n float64 distances)")
    ap.add_argument("--trust-gpu", action="store_true",
                    help="trustworthiness k=15 on the GPU in row blocks (bench/umap_quality_gpu.py's trust_gpu)")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    return ap.parse_args()


def load(A):
    """(X, y, source, sha256): the first A.rows of the 70,000 (train then test)."""
    ns = argparse.Namespace(data=A.data, rows=60000)
    X, y, Xt, yt, src, digest = load_fashion_parts(ns)
    X, y = np.concatenate([X, Xt]), np.concatenate([y, yt])
    if A.rows > len(X):
        raise SystemExit("Fashion-MNIST has %d rows, %d asked" % (len(X), A.rows))
    return np.ascontiguousarray(X[:A.rows]), y[:A.rows], src, digest


def knn_acc(e, y):
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    return float(np.mean(cross_val_score(KNeighborsClassifier(n_neighbors=15), e, y, cv=KFold(5))))


TRUST_GPU = False


def trust(x, e):
    if TRUST_GPU:
        from umap_quality_gpu import trust_gpu
        return trust_gpu(x, e)
    from sklearn.manifold import trustworthiness
    return float(trustworthiness(x, e, n_neighbors=15))


def sb_fit(A, x, seed, device, n_epochs=None):
    kw = dict(BASE, random_state=seed, optimize="batched", device=device)
    if A.learning_rate != 1.0:
        kw["learning_rate"] = A.learning_rate
    if n_epochs is not None:
        kw["n_epochs"] = n_epochs
    t0 = time.perf_counter()
    u = samebits.UMAP(**kw).fit(x)
    return time.perf_counter() - t0, u


def header(A, src, digest):
    try:
        from _common import git_commit, machine_line, loadavg
        commit, dirty = git_commit()
        h = {"commit": commit, "dirty": dirty, "machine": machine_line(), "loadavg_start": loadavg()}
    except Exception as e:  # noqa: BLE001
        h = {"commit": os.environ.get("SAMEBITS_COMMIT", ""), "header_note": str(e)}
    h["date"] = datetime.date.today().isoformat()
    h["command"] = "python3 bench/umap_gpu_bench.py " + " ".join(sys.argv[1:])
    h["versions"] = {"samebits": samebits.__version__, "numpy": np.__version__, "python": platform.python_version()}
    try:
        h["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                   "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        h["gpu"] = None
    h["workload"] = {"data": src, "npz_sha256": digest, "rows": A.rows, "params": BASE, "seeds": A.seeds,
                     "samebits": {"optimize": "batched", "learning_rate": A.learning_rate, "threads": A.threads},
                     "umap_learn": None if A.no_peer else {"n_jobs": A.threads, "seeded": True}}
    return h


def main():
    A = parse_args()
    global TRUST_GPU
    TRUST_GPU = A.trust_gpu
    A.trust = A.trust or A.trust_gpu
    seeds = [int(s) for s in A.seeds.split(",")]
    devices = [d for d in A.devices.split(",") if d]
    x, y, src, digest = load(A)
    h = header(A, src, digest)
    samebits.set_num_threads(A.threads)
    small = x[-300:].copy()
    for d in devices:  # open each device and build its program, untimed
        samebits.UMAP(n_epochs=2, random_state=0, optimize="batched", device=d).fit(small)
    ul = None
    if not A.no_peer:
        import numba
        import umap
        numba.set_num_threads(min(A.threads, numba.config.NUMBA_NUM_THREADS))
        h["versions"]["umap-learn"] = umap.__version__
        t0 = time.perf_counter()
        other = x[:4500][::-1].copy() if A.rows + 4500 > 70000 else load(argparse.Namespace(
            data=A.data, rows=A.rows + 4500))[0][A.rows:]
        umap.UMAP(random_state=seeds[0], n_jobs=A.threads, **BASE).fit_transform(other)
        h["umap_learn_warmup_4500_rows_s"] = time.perf_counter() - t0
        ul = umap
    rows, same = [], True
    for seed in seeds:
        t_cpu, ref = sb_fit(A, x, seed, "cpu")
        ref_emb = np.asarray(ref.embedding_, dtype=np.float32)
        r = {"seed": seed, "samebits": {"cpu": {"fit_s": t_cpu, "model_digest": ref.model_digest_}}}
        r["knn15_accuracy"] = {"samebits": knn_acc(ref_emb, y)}
        if A.trust:
            r["trustworthiness_k15"] = {"samebits": trust(x, ref_emb)}
        if A.split:
            r["samebits"]["cpu"]["fit_n_epochs_1_s"] = sb_fit(A, x, seed, "cpu", n_epochs=1)[0]
        for d in devices:
            t_d, u = sb_fit(A, x, seed, d)
            emb = np.asarray(u.embedding_, dtype=np.float32)
            ok = u.model_digest_ == ref.model_digest_ and emb.tobytes() == ref_emb.tobytes()
            same &= ok
            r["samebits"][d] = {"fit_s": t_d, "model_digest": u.model_digest_, "identical_to_cpu": ok,
                                "embedding_sha256": hashlib.sha256(emb.tobytes()).hexdigest()}
            if A.split:
                r["samebits"][d]["fit_n_epochs_1_s"] = sb_fit(A, x, seed, d, n_epochs=1)[0]
        if ul is not None:
            t0 = time.perf_counter()
            e_ul = ul.UMAP(random_state=seed, n_jobs=A.threads, **BASE).fit_transform(x)
            r["umap_learn"] = {"fit_s": time.perf_counter() - t0}
            r["knn15_accuracy"]["umap_learn"] = knn_acc(e_ul, y)
            if A.trust:
                r["trustworthiness_k15"]["umap_learn"] = trust(x, e_ul)
            for d in ["cpu"] + devices:
                r["samebits"][d]["speedup_over_umap_learn"] = r["umap_learn"]["fit_s"] / r["samebits"][d]["fit_s"]
        r["loadavg"] = os.getloadavg()
        rows.append(r)
        print(json.dumps(r), flush=True)
    h["loadavg_end"] = os.getloadavg()
    os.makedirs(A.out_dir, exist_ok=True)
    stem = os.path.join(A.out_dir, "umap-gpu-%s-%s" % (h["date"], (h.get("commit") or "nocommit")[:7]))
    with open(stem + ".json", "w") as f:
        json.dump({"header": h, "runs": rows, "all_devices_identical_to_cpu": same}, f, indent=1)
    out = ["# UMAP's batched epochs on a GPU beside the host's bits and umap-learn (issue 29)", "",
           "Commit `%s`%s, %s; %s; GPU %s. %d rows of Fashion-MNIST, %s, samebits optimize=batched "
           "(learning_rate %g) at %d host threads; umap-learn %s seeded, n_jobs %d."
           % ((h.get("commit") or "?")[:7], " (dirty)" if h.get("dirty") else "", h["date"], h.get("machine"),
              h.get("gpu"), A.rows, BASE, A.learning_rate, A.threads, h["versions"].get("umap-learn", "(not run)"),
              A.threads), "",
           "| seed | run | fit (s) | x umap-learn | identical to cpu | 15-NN accuracy | trustworthiness (k=15) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        for d in ["cpu"] + devices:
            s = r["samebits"][d]
            tr = r.get("trustworthiness_k15", {})
            out.append("| %d | samebits %s | %.2f | %s | %s | %s | %s |" % (
                r["seed"], d, s["fit_s"], "%.2f" % s["speedup_over_umap_learn"] if "speedup_over_umap_learn" in s
                else "-", "yes" if d == "cpu" or s["identical_to_cpu"] else "NO",
                "%.4f" % r["knn15_accuracy"]["samebits"], "%.4f" % tr["samebits"] if "samebits" in tr else "-"))
        if "umap_learn" in r:
            tr = r.get("trustworthiness_k15", {})
            out.append("| %d | umap-learn | %.2f | 1 | - | %.4f | %s |" % (
                r["seed"], r["umap_learn"]["fit_s"], r["knn15_accuracy"]["umap_learn"],
                "%.4f" % tr["umap_learn"] if "umap_learn" in tr else "-"))
    out += ["", "Every device identical to the CPU: %s." % ("yes" if same else "NO")]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    print("wrote", stem + ".md")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
