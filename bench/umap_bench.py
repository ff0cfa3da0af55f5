"""UMAP beside umap-learn (seeded) on a Fashion-MNIST subset, one run, the
same cores: trustworthiness (scikit-learn, k = 15), kNN accuracy in the
embedding (15-NN, 5-fold cross-validation in index order), fit time and its
ratio. umap-learn is installed by the caller (pip install umap-learn); the
bench says which version ran.

    SAMEBITS_LIB=build/libsamebits.so PYTHONPATH=python python3 bench/umap_bench.py [--rows 10000] [--seeds 42,43,44]
        [--optimize sequential|batched] [--learning-rate 1.0] [--metric euclidean|manhattan|cosine]

--optimize batched fits samebits with optimize="batched" (each epoch's moves
summed as fixed-point integers and applied at the epoch's end, docs/umap.md);
--learning-rate is samebits' learning_rate (umap-learn keeps its default 1.0:
the peer runs as umap-learn's users run it). Both go in the record and the
file name.

--profile-only: samebits alone, its fit split into the part before the
epochs (the exact neighbors, the graph, a/b, the initialization: a fit with
n_epochs=1, whose one epoch is negligible) and the epochs (the full fit's
time less that), for row counts where the peer's run and scikit-learn's
trustworthiness (an n x n float64 distance matrix: 39 GB at 70,000 rows) do
not fit this machine; the record says so.
"""
import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np


def load_fashion(rows):
    """The first rows of Fashion-MNIST's 70,000: the training set's 60,000, then the test set's 10,000."""
    base = "/usr/share/datasets/fashion-mnist"
    xs, ys = [], []
    for part in ("train", "t10k"):
        with gzip.open(os.path.join(base, "%s-images-idx3-ubyte.gz" % part)) as f:
            xs.append(np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784))
        with gzip.open(os.path.join(base, "%s-labels-idx1-ubyte.gz" % part)) as f:
            ys.append(np.frombuffer(f.read(), dtype=np.uint8, offset=8))
    x, y = np.concatenate(xs), np.concatenate(ys)
    if rows > len(x):
        raise SystemExit("Fashion-MNIST has %d rows, %d asked" % (len(x), rows))
    return (x[:rows].astype(np.float32) / 255.0), y[:rows].astype(np.int64)


def input_ranks(x, metric, block=2000):
    """ranks[i, j]: j's place among row i's other rows by distance in the input space (1 the nearest; ties by
    argsort's stable order, as scikit-learn's trustworthiness takes them), int32, n x n: computed once a run so
    that each embedding's trustworthiness under a metric other than euclidean does not recompute the n x n
    distances (scikit-learn's trustworthiness does, single-threaded, at every call)."""
    from sklearn.metrics import pairwise_distances
    n = len(x)
    ranks = np.empty((n, n), dtype=np.int32)
    for b in range(0, n, block):
        d = pairwise_distances(x[b:b + block], x, metric=metric, n_jobs=2)
        d[np.arange(len(d)), np.arange(b, b + len(d))] = np.inf  # the row itself last
        order = np.argsort(d, axis=1, kind="stable")
        np.put_along_axis(ranks[b:b + len(d)], order, np.arange(1, n + 1, dtype=np.int32)[None, :].repeat(len(d), 0),
                          axis=1)
    return ranks


def trust_from_ranks(ranks, e, k=15):
    """Trustworthiness (Venna and Kaski 2001, scikit-learn's definition): 1 - 2 / (n k (2n - 3k - 1)) times the
    sum over rows i and their k nearest embedded rows j of max(0, ranks[i, j] - k); within 2e-7 of scikit-learn's
    trustworthiness on 1,500 Fashion-MNIST rows under manhattan and euclidean, random and UMAP embeddings."""
    from sklearn.neighbors import NearestNeighbors
    n = len(e)
    nn = NearestNeighbors(n_neighbors=k).fit(e).kneighbors(return_distance=False)
    r = ranks[np.arange(n)[:, None], nn].astype(np.int64) - k
    return float(1.0 - r[r > 0].sum() * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))))


def quality(x, y, e, metric="euclidean", ranks=None):
    """Trustworthiness (k = 15, the input rows' distances in the fit's metric: scikit-learn's function for
    euclidean, trust_from_ranks on input_ranks' table otherwise) and the 15-NN accuracy."""
    from sklearn.manifold import trustworthiness
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    tw = float(trustworthiness(x, e, n_neighbors=15)) if ranks is None else trust_from_ranks(ranks, e)
    acc = float(np.mean(cross_val_score(KNeighborsClassifier(n_neighbors=15), e, y, cv=KFold(5))))
    return tw, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--seeds", default="", help="comma-separated random_state values, each fitted by both (e.g. 42,43,44)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--profile-only", action="store_true")
    ap.add_argument("--optimize", default="sequential", choices=("sequential", "batched"),
                    help="samebits' optimize (umap-learn has one rule: in place, in edge order)")
    ap.add_argument("--learning-rate", type=float, default=1.0, help="samebits' learning_rate (umap-learn: 1.0)")
    ap.add_argument("--metric", default="euclidean", choices=("euclidean", "manhattan", "cosine"),
                    help="both libraries' metric (and trustworthiness's input distances)")
    ap.add_argument("--skip-full", action="store_true", help="with --profile-only: time the part before the epochs only")
    ap.add_argument("--no-split", action="store_true", help="with --profile-only: the full fit alone (no n_epochs=1 fit)")
    ap.add_argument("--peer", action="store_true",
                    help="with --profile-only: seeded umap-learn's fit too (after its warm-up), and both embeddings' "
                         "15-NN accuracy (trustworthiness left out: its n x n distances)")
    a = ap.parse_args()
    if a.profile_only:
        return profile(a)
    import samebits
    import umap
    # the commit whose sources run (taken before the fits: commits made while it runs are not it)
    commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True).stdout.strip()
    x, y = load_fashion(a.rows)
    seeds = [int(v) for v in a.seeds.split(",")] if a.seeds else [a.seed]
    base = dict(n_neighbors=15, n_components=2, min_dist=0.1, metric=a.metric)
    samebits.set_num_threads(a.threads)
    ranks = None if a.metric == "euclidean" else input_ranks(x, a.metric)
    # umap-learn compiles its numba kernels (and pynndescent's, used above
    # 4,096 rows) on the first fit: a warm-up fit on 4,500 rows of other data
    # first, so that the timed fit is the fit alone (the warm-up recorded beside)
    t0 = time.perf_counter()
    umap.UMAP(random_state=seeds[0], **base).fit_transform(load_fashion(a.rows + 4500)[0][a.rows:])
    t_warm = time.perf_counter() - t0
    runs = []
    for seed in seeds:
        params = dict(base, random_state=seed)
        t0 = time.perf_counter()
        sb = samebits.UMAP(**params, **sb_extra(a))
        e_sb = sb.fit_transform(x)
        t_sb = time.perf_counter() - t0
        t0 = time.perf_counter()
        ul = umap.UMAP(**params)
        e_ul = ul.fit_transform(x)
        t_ul = time.perf_counter() - t0
        q_sb, q_ul = quality(x, y, e_sb, a.metric, ranks), quality(x, y, e_ul, a.metric, ranks)
        runs.append({"random_state": seed, "load_average": os.getloadavg(),
                     "samebits": {"fit_s": t_sb, "trustworthiness_k15": q_sb[0], "knn15_accuracy": q_sb[1],
                                  "model_digest": sb.model_digest_},
                     "umap_learn": {"fit_s": t_ul, "trustworthiness_k15": q_ul[0], "knn15_accuracy": q_ul[1]},
                     "fit_time_ratio_samebits_over_umap_learn": t_sb / t_ul,
                     "trustworthiness_gap": q_sb[0] - q_ul[0], "knn_accuracy_gap": q_sb[1] - q_ul[1]})
        print(json.dumps(runs[-1]), flush=True)
    tot_sb = sum(r["samebits"]["fit_s"] for r in runs)
    tot_ul = sum(r["umap_learn"]["fit_s"] for r in runs)
    rec = {
        "bench": "umap", "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "python": platform.python_version()},
        "load_average_at_end": os.getloadavg(),
        "data": "Fashion-MNIST train, first %d rows, pixels / 255 (float32)" % a.rows,
        "params": base, "seeds": seeds, "samebits_threads": a.threads, "samebits_extra_params": sb_extra(a),
        "samebits_neighbors": "auto (%s at %d rows)" % ("nndescent" if a.rows >= 4096 else "exact", a.rows),
        "peers": {"umap-learn": umap.__version__, "samebits": samebits.__version__},
        "runs": runs,
        "umap_learn_warmup_fit_4500_rows_s": t_warm,
        "fit_time_ratio_total": tot_sb / tot_ul,
        "targets": {"trustworthiness_within_0.01": all(abs(r["trustworthiness_gap"]) <= 0.01 for r in runs),
                    "knn_accuracy_within_1pct": all(r["knn_accuracy_gap"] >= -0.01 for r in runs),
                    "no_slower_than_seeded_umap_learn": tot_sb <= tot_ul},
    }
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "umap-%s-%s%s%s%s%s" % (rec["date"], commit, "" if a.rows == 10000 else "-%d" % a.rows,
                                                     "" if len(seeds) == 1 else "-%dseeds" % len(seeds), sb_tag(a),
                                                     "" if a.metric == "euclidean" else "-" + a.metric))
    with open(stem + ".json", "w") as f:
        json.dump(rec, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write("# UMAP beside umap-learn %s (commit %s)\n\n" % (umap.__version__, commit))
        f.write("%s; %s cores (%s); samebits at %d threads, neighbors=auto (NN-descent from 4,096 rows); umap-learn "
                "seeded (its one-thread mode), timed after a warm-up fit on 4,500 other rows (its and pynndescent's "
                "numba compile: %.1f s). Parameters: %s; random_state %s, each seed's two fits one after the other. "
                "samebits' own parameters beside them: %s.\n\n"
                % (rec["data"], os.cpu_count(), rec["machine"]["cpu"], a.threads, t_warm, base,
                   ", ".join(str(v) for v in seeds), sb_extra(a) or "none"))
        f.write("| random_state | samebits fit (s) | umap-learn fit (s) | ratio | trustworthiness k=15 samebits / "
                "umap-learn | 15-NN accuracy (5-fold) samebits / umap-learn | load average (1 min) |\n"
                "|---|---|---|---|---|---|---|\n")
        for r in runs:
            f.write("| %d | %.2f | %.2f | %.3f | %.4f / %.4f | %.4f / %.4f | %.1f |\n" % (
                r["random_state"], r["samebits"]["fit_s"], r["umap_learn"]["fit_s"],
                r["fit_time_ratio_samebits_over_umap_learn"], r["samebits"]["trustworthiness_k15"],
                r["umap_learn"]["trustworthiness_k15"], r["samebits"]["knn15_accuracy"],
                r["umap_learn"]["knn15_accuracy"], r["load_average"][0]))
        f.write("\nThe machine was shared with other builds (load average %.1f, %.1f, %.1f at the end): each ratio is "
                "of two runs under the same load, one after the other.\n\n" % os.getloadavg())
        f.write("Fit time ratio samebits / umap-learn over all seeds: %.3f. Targets: %s\n" % (tot_sb / tot_ul,
                                                                                             rec["targets"]))
    print(json.dumps(rec, indent=1))


def sb_extra(a):
    """samebits' parameters beyond umap-learn's (only those off their defaults)."""
    extra = {}
    if a.optimize != "sequential":
        extra["optimize"] = a.optimize
    if a.learning_rate != 1.0:
        extra["learning_rate"] = a.learning_rate
    return extra


def sb_tag(a):
    """The file name's part for sb_extra (empty at the defaults)."""
    return "".join("-%s" % (v if k == "optimize" else "lr%g" % v) for k, v in sorted(sb_extra(a).items()))


def profile(a):
    """samebits' fit at a.rows split into before-the-epochs and the epochs
    (module docstring); no peer, no quality (see the record)."""
    import samebits
    commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True).stdout.strip()
    x, _ = load_fashion(a.rows)
    params = dict(n_neighbors=15, n_components=2, min_dist=0.1, metric="euclidean", random_state=a.seed)
    samebits.set_num_threads(a.threads)
    sbp = dict(params, **sb_extra(a))
    t_pre, one = None, None
    if not a.no_split:
        t0 = time.perf_counter()
        one = samebits.UMAP(n_epochs=1, **sbp).fit(x)
        t_pre = time.perf_counter() - t0
    t_full = None
    if not a.skip_full:
        t0 = time.perf_counter()
        full = samebits.UMAP(**sbp).fit(x)
        t_full = time.perf_counter() - t0
    peer = None
    if a.peer and not a.skip_full:
        import umap
        _, y = load_fashion(a.rows)
        t0 = time.perf_counter()
        umap.UMAP(**params).fit_transform(load_fashion(a.rows + 4500)[0][a.rows:] if a.rows + 4500 <= 70000
                                          else load_fashion(4500)[0][::-1].copy())
        t_warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        e_ul = umap.UMAP(**params).fit_transform(x)
        t_ul = time.perf_counter() - t0
        from sklearn.model_selection import KFold, cross_val_score
        from sklearn.neighbors import KNeighborsClassifier

        def acc(e):
            return float(np.mean(cross_val_score(KNeighborsClassifier(n_neighbors=15), e, y, cv=KFold(5))))
        peer = {"umap-learn": umap.__version__, "warmup_4500_rows_s": t_warm, "fit_s": t_ul,
                "fit_time_ratio_samebits_over_umap_learn": t_full / t_ul,
                "knn15_accuracy": {"samebits": acc(full.embedding_), "umap_learn": acc(e_ul)}}
    rec = {
        "bench": "umap-profile", "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "python": platform.python_version()},
        "load_average_at_end": os.getloadavg(),
        "data": "Fashion-MNIST (train then test), first %d rows, pixels / 255 (float32)" % a.rows,
        "params": params, "samebits_threads": a.threads, "samebits": samebits.__version__,
        "samebits_extra_params": sb_extra(a),
        "fit_n_epochs_1_s": t_pre, "fit_default_epochs_s": t_full,
        "n_epochs_default": int(full.n_epochs_) if t_full is not None else None,
        "epochs_s": (t_full - t_pre) if t_full is not None and t_pre is not None else None,
        "model_digest_n_epochs_1": one.model_digest_ if one is not None else None,
        "model_digest": full.model_digest_ if t_full is not None else None,
        # how the fit started (the model's init: 0 spectral, 1 random where spectral fell back)
        "spectral_init": (int(full._model.get_int("init")) == 0) if t_full is not None else None,
        "samebits_neighbors": "auto (%s at %d rows)" % ("nndescent" if a.rows >= 4096 else "exact", a.rows),
        "peer": peer,
    }
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "umap-profile-%s-%s-%d%s" % (rec["date"], commit, a.rows, sb_tag(a)))
    with open(stem + ".json", "w") as f:
        json.dump(rec, f, indent=1)
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
