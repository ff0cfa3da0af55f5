#!/usr/bin/env python3
"""samebits' nearest neighbors beside scikit-learn's brute force, side by side
in one run on the same cores (issue 23's kNN quality and CPU speed rows).

    python3 bench/neighbors_bench.py [--workloads fashion-mnist fashion-cosine flights dbscan-flights dbscan-fashion]
                                     [--repeat 2] [--threads 2]

Workloads (data from ../shared/data or Debian's dataset-fashion-mnist, loaded
by bench/linear_bench.py's loaders, never copied into the repo):
  fashion-mnist   KNeighborsClassifier(n_neighbors=5) fitted on the 60,000
                  training images (pixels / 255, float32, 784 features), the
                  10,000 test images queried; accuracy against their classes
  fashion-cosine  NearestNeighbors(n_neighbors=5, metric="cosine"), the same
                  training images, the first 2,000 test images queried
  flights         NearestNeighbors(n_neighbors=10) on the first 1,000,000 rows
                  of flights-3m.parquet (7 standardized features), the first
                  10,000 rows of the time-split test part queried
  dbscan-flights  DBSCAN(eps=0.3, min_samples=10) on the first 100,000 of those
                  training rows
  dbscan-fashion  DBSCAN(eps=5, min_samples=5) on the first 10,000 training images
  agglo-fashion   AgglomerativeClustering(n_clusters=10) with each linkage on the
                  first 5,000 training images
  agglo-flights   AgglomerativeClustering(n_clusters=8) with each linkage on the
                  first 10,000 flights training rows (7 standardized features on
                  grids of hours, days and distances: exact distance ties abound)

DBSCAN: the timed call is fit, scikit-learn with its defaults (algorithm="auto":
a k-d tree for flights' 7 features, brute force for the images); quality is the
adjusted Rand index of the labels against scikit-learn's, at least 0.99
(issue 23), with the core rows compared as sets. Agglomerative clustering: the
timed call is fit (scikit-learn's default compute_full_tree="auto"), the same
index; the agglo-* rows also fit both libraries on the rows plus a uniform
jitter of 1e-3 (the same float32 array for both, untimed) to show whether a
difference comes from ties, where each library's merge order is its own.

Both libraries get the same float32 arrays, algorithm="brute". The timed call
is kneighbors(queries) (fit only stores the rows), --repeat times, the median
ratio reported with each repetition's. Quality (issue 23): the neighbor lists
equal scikit-learn's except at exact distance ties: a query whose lists differ
counts as a tie when the two lists' distances, each recomputed in float64 by
NumPy from the float32 rows, are the same sorted values, and as a mismatch
otherwise (target: no mismatch); accuracy equal (fashion-mnist). For cosine,
scikit-learn computes in float32 on float32 input, so its lists are taken from
a second, untimed run on float64 copies of the arrays. Speed: the median time
ratio samebits / scikit-learn at most 1.5. Results go to
bench/results/neighbors-DATE-COMMIT.{json,md}.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SPEED_TARGET = 1.5


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = ["fashion-mnist", "fashion-cosine", "flights", "dbscan-flights", "dbscan-fashion", "agglo-fashion",
             "agglo-flights"]
    ap.add_argument("--workloads", nargs="+", choices=names, default=names)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settle", type=float, default=0.3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    for k in THREAD_ENV:  # scikit-learn's threads, before NumPy is loaded
        os.environ[k] = str(a.threads)
    return a


A = parse_args()
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
import numpy as np  # noqa: E402
import linear_bench as lb  # noqa: E402  (the loaders and the run header)
from _common import run_header, save_record  # noqa: E402


def workload(name):
    if name.startswith("fashion"):
        desc, sets, _ = lb.load_fashion()
        Xtr, ytr, Xte, yte = sets["pixels"]
        if name == "fashion-cosine":
            return desc, Xtr, None, Xte[:2000], None, {"n_neighbors": 5, "metric": "cosine"}
        return desc, Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64), {"n_neighbors": 5}
    desc, sets, _ = lb.load_flights()
    return desc, sets["std"][0], None, sets["std"][2][:10000], None, {"n_neighbors": 10}


def exact_sorted(X, Q, ind, metric):
    """Each query's neighbor distances recomputed in float64 from the float32 rows, sorted."""
    out = np.empty(ind.shape)
    for b in range(0, len(Q), 1000):
        q = Q[b:b + 1000].astype(np.float64)
        y = X[ind[b:b + 1000]].astype(np.float64)
        if metric == "cosine":
            nq = np.linalg.norm(q, axis=1)[:, None]
            ny = np.linalg.norm(y, axis=2)
            with np.errstate(invalid="ignore", divide="ignore"):
                c = 1.0 - np.einsum("qf,qkf->qk", q, y) / (nq * ny)
            c[(nq * ny) == 0] = 1.0
            out[b:b + 1000] = np.sort(np.clip(c, 0.0, 2.0), axis=1)
        else:
            out[b:b + 1000] = np.sort(((y - q[:, None, :]) ** 2).sum(-1), axis=1)
    return out


def compare(X, Q, i_sb, i_sk, metric):
    differ = ~(i_sb == i_sk).all(axis=1)
    e_sb = exact_sorted(X, Q[differ], i_sb[differ], metric)
    e_sk = exact_sorted(X, Q[differ], i_sk[differ], metric)
    mismatch = ~(e_sb == e_sk).all(axis=1)
    return {"queries": int(len(Q)), "equal_lists": int((~differ).sum()), "tie_only": int((~mismatch).sum()),
            "mismatch": int(mismatch.sum()),
            "mismatch_samebits_nearer": int((e_sb[mismatch] < e_sk[mismatch]).any(axis=1).sum()) if mismatch.any() else 0}


def run_dbscan(name):
    import samebits
    import sklearn.cluster as skc
    from sklearn.metrics import adjusted_rand_score as ari
    if name == "dbscan-flights":
        desc, sets, _ = lb.load_flights()
        X, params = sets["std"][0][:100000], {"eps": 0.3, "min_samples": 10}
    else:
        desc, sets, _ = lb.load_fashion()
        X, params = sets["pixels"][0][:10000], {"eps": 5.0, "min_samples": 5}
    X = np.ascontiguousarray(X, dtype=np.float32)
    samebits.set_num_threads(A.threads)
    reps = []
    for r in range(A.repeat):
        time.sleep(A.settle)
        t = time.perf_counter()
        sb = samebits.DBSCAN(**params).fit(X)
        tsb = time.perf_counter() - t
        time.sleep(A.settle)
        t = time.perf_counter()
        sk = skc.DBSCAN(n_jobs=A.threads, **params).fit(X)
        tsk = time.perf_counter() - t
        reps.append({"samebits_s": tsb, "sklearn_s": tsk, "time_ratio": tsb / tsk})
        print(name, json.dumps(reps[-1]), flush=True)
    a = float(ari(sk.labels_, sb.labels_))
    res = {"workload": name, "description": desc, "shape": list(X.shape), "params": params, "repeats": reps,
           "time_ratio": statistics.median(r["time_ratio"] for r in reps), "ari": a,
           "clusters": {"samebits": int(sb.labels_.max() + 1), "sklearn": int(sk.labels_.max() + 1)},
           "noise": {"samebits": int((sb.labels_ < 0).sum()), "sklearn": int((sk.labels_ < 0).sum())},
           "core_equal": bool(np.array_equal(sb.core_sample_indices_, sk.core_sample_indices_)),
           "digest": sb.model_digest_}
    res["verdict"] = {"ari": a >= 0.99, "time_ratio": res["time_ratio"] <= SPEED_TARGET}
    print(name, json.dumps({k: res[k] for k in ("time_ratio", "ari", "core_equal", "verdict")}), flush=True)
    return res


def run_agglo(name):
    import samebits
    import sklearn.cluster as skc
    from sklearn.metrics import adjusted_rand_score as ari
    if name == "agglo-flights":
        desc, sets, _ = lb.load_flights()
        X, k = sets["std"][0][:10000], 8
    else:
        desc, sets, _ = lb.load_fashion()
        X, k = sets["pixels"][0][:5000], 10
    X = np.ascontiguousarray(X, dtype=np.float32)
    Xj = (X + np.random.default_rng(0).uniform(-1e-3, 1e-3, X.shape)).astype(np.float32)
    samebits.set_num_threads(A.threads)
    rows = []
    for linkage in ("ward", "complete", "average", "single"):
        reps = []
        for r in range(A.repeat):
            time.sleep(A.settle)
            t = time.perf_counter()
            sb = samebits.AgglomerativeClustering(n_clusters=k, linkage=linkage).fit(X)
            tsb = time.perf_counter() - t
            time.sleep(A.settle)
            t = time.perf_counter()
            sk = skc.AgglomerativeClustering(n_clusters=k, linkage=linkage).fit(X)
            tsk = time.perf_counter() - t
            reps.append({"samebits_s": tsb, "sklearn_s": tsk, "time_ratio": tsb / tsk})
        jit = float(ari(skc.AgglomerativeClustering(n_clusters=k, linkage=linkage).fit(Xj).labels_,
                        samebits.AgglomerativeClustering(n_clusters=k, linkage=linkage).fit(Xj).labels_))
        row = {"linkage": linkage, "repeats": reps, "time_ratio": statistics.median(r["time_ratio"] for r in reps),
               "ari": float(ari(sk.labels_, sb.labels_)), "ari_jittered": jit, "digest": sb.model_digest_}
        row["verdict"] = {"ari": row["ari"] >= 0.99, "time_ratio": row["time_ratio"] <= SPEED_TARGET}
        print(name, json.dumps(row), flush=True)
        rows.append(row)
    return {"workload": name, "description": desc, "shape": list(X.shape), "params": {"n_clusters": k},
            "linkages": rows}


def run(name):
    if name.startswith("agglo"):
        return run_agglo(name)
    if name.startswith("dbscan"):
        return run_dbscan(name)
    import samebits
    import sklearn.neighbors as skn
    desc, X, y, Q, yq, params = workload(name)
    X = np.ascontiguousarray(X, dtype=np.float32)
    Q = np.ascontiguousarray(Q, dtype=np.float32)
    metric = params.get("metric", "euclidean")
    samebits.set_num_threads(A.threads)
    if y is not None:
        sb = samebits.KNeighborsClassifier(algorithm="brute", **params).fit(X, y)
        sk = skn.KNeighborsClassifier(algorithm="brute", **params).fit(X, y)
    else:
        sb = samebits.NearestNeighbors(algorithm="brute", **params).fit(X)
        sk = skn.NearestNeighbors(algorithm="brute", **params).fit(X)
    reps = []
    for r in range(A.repeat):
        time.sleep(A.settle)
        t = time.perf_counter()
        d_sb, i_sb = sb.kneighbors(Q)
        tsb = time.perf_counter() - t
        time.sleep(A.settle)
        t = time.perf_counter()
        d_sk, i_sk = sk.kneighbors(Q)
        tsk = time.perf_counter() - t
        reps.append({"samebits_s": tsb, "sklearn_s": tsk, "time_ratio": tsb / tsk})
        print(name, json.dumps(reps[-1]), flush=True)
    if metric == "cosine":  # scikit-learn's float32 cosine is float32 arithmetic: its float64 lists are the reference
        ref = skn.NearestNeighbors(algorithm="brute", **params).fit(X.astype(np.float64))
        _, i_sk = ref.kneighbors(Q.astype(np.float64))
    res = {"workload": name, "description": desc, "shape": list(X.shape), "queries": int(len(Q)), "params": params,
           "repeats": reps, "time_ratio": statistics.median(r["time_ratio"] for r in reps),
           "neighbors": compare(X, Q, i_sb, i_sk, metric), "digest": sb.model_digest_}
    if yq is not None:
        res["accuracy"] = {"samebits": float((sb.predict(Q) == yq).mean()), "sklearn": float((sk.predict(Q) == yq).mean())}
    v = {"neighbors": res["neighbors"]["mismatch"] == 0, "time_ratio": res["time_ratio"] <= SPEED_TARGET}
    if yq is not None:
        v["accuracy"] = res["accuracy"]["samebits"] == res["accuracy"]["sklearn"]
    res["verdict"] = v
    print(name, json.dumps({k: res[k] for k in ("time_ratio", "neighbors", "verdict")}), flush=True)
    return res


def write_md(h, results, path):
    yes = lambda ok: "met" if ok else "**NOT met**"  # noqa: E731
    out = lb.header_lines(h, "Nearest neighbors beside scikit-learn", h["machine"])
    out += ["- command: `%s`; %d threads (samebits and scikit-learn's OpenMP/BLAS); kneighbors timed %d times a "
            "workload, %.1f s settle before each call" % (h["command"], h["threads"], A.repeat, A.settle),
            "- both libraries get the same float32 arrays, algorithm=\"brute\"; a differing list is a tie when its "
            "distances, recomputed in float64 from the rows, sort to the same values as scikit-learn's, else a "
            "mismatch (cosine: scikit-learn's lists from float64 copies, its float32 cosine being float32 arithmetic)",
            "", "| workload | estimator | training rows x features | queries | lists equal / tie only / mismatch | "
            "accuracy samebits / scikit-learn | time ratio samebits / scikit-learn (median; each) | quality | speed |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in [r for r in results if "neighbors" in r]:
        n, v = r["neighbors"], r["verdict"]
        est = ("KNeighborsClassifier(%s)" if "accuracy" in r else "NearestNeighbors(%s)") % ", ".join(
            "%s=%r" % kv for kv in r["params"].items())
        acc = ("%.4f / %.4f" % (r["accuracy"]["samebits"], r["accuracy"]["sklearn"])) if "accuracy" in r else "-"
        q = v["neighbors"] and v.get("accuracy", True)
        out.append("| %s | %s | %d x %d | %d | %d / %d / %d | %s | %.2f; %s | %s | %s |"
                   % (r["workload"], est, r["shape"][0], r["shape"][1], r["queries"], n["equal_lists"], n["tie_only"],
                      n["mismatch"], acc, r["time_ratio"], ", ".join("%.2f" % s["time_ratio"] for s in r["repeats"]),
                      yes(q), yes(v["time_ratio"])))
    db = [r for r in results if "ari" in r]
    if db:
        out += ["", "DBSCAN: the timed call is fit; scikit-learn with its default algorithm=\"auto\" (a k-d tree for "
                "7 features, brute force for 784) and n_jobs equal to the threads; the adjusted Rand index of the "
                "labels against scikit-learn's (border rows follow each library's own rule)",
                "", "| workload | estimator | rows x features | clusters samebits / scikit-learn | noise samebits / "
                "scikit-learn | core rows equal | ARI vs scikit-learn | time ratio (median; each) | quality | speed |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in db:
            est = "DBSCAN(%s)" % ", ".join("%s=%r" % kv for kv in r["params"].items())
            out.append("| %s | %s | %d x %d | %d / %d | %d / %d | %s | %.4f | %.2f; %s | %s | %s |"
                       % (r["workload"], est, r["shape"][0], r["shape"][1], r["clusters"]["samebits"],
                          r["clusters"]["sklearn"], r["noise"]["samebits"], r["noise"]["sklearn"],
                          "yes" if r["core_equal"] else "no", r["ari"], r["time_ratio"],
                          ", ".join("%.2f" % s["time_ratio"] for s in r["repeats"]), yes(r["verdict"]["ari"]),
                          yes(r["verdict"]["time_ratio"])))
    ag = [r for r in results if "linkages" in r]
    if ag:
        out += ["", "Agglomerative clustering: the timed call is fit, scikit-learn with its defaults; ARI of the labels "
                "against scikit-learn's, and on the rows plus a uniform jitter of 1e-3 (untimed)", "",
                "| workload | estimator | rows x features | ARI vs scikit-learn | ARI, jittered rows | time ratio "
                "(median; each) | samebits s | scikit-learn s | quality | speed |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in ag:
            for L in r["linkages"]:
                out.append("| %s | AgglomerativeClustering(n_clusters=%d, linkage=%r) | %d x %d | %.4f | %.4f | %.2f; %s "
                           "| %s | %s | %s | %s |"
                           % (r["workload"], r["params"]["n_clusters"], L["linkage"], r["shape"][0], r["shape"][1],
                              L["ari"], L["ari_jittered"], L["time_ratio"],
                              ", ".join("%.2f" % s["time_ratio"] for s in L["repeats"]),
                              ", ".join("%.3f" % s["samebits_s"] for s in L["repeats"]),
                              ", ".join("%.3f" % s["sklearn_s"] for s in L["repeats"]), yes(L["verdict"]["ari"]),
                              yes(L["verdict"]["time_ratio"])))
    out += ["", "Seconds per timed call (kneighbors; DBSCAN: fit):", "", "| workload | samebits s | scikit-learn s | samebits model digest |",
            "| --- | --- | --- | --- |"]
    for r in [r for r in results if "repeats" in r]:
        out.append("| %s | %s | %s | `%s` |" % (r["workload"], ", ".join("%.3f" % s["samebits_s"] for s in r["repeats"]),
                                               ", ".join("%.3f" % s["sklearn_s"] for s in r["repeats"]), r["digest"][:16]))
    out += ["", "## Data", ""] + ["- **%s**: %s" % (r["workload"], r["description"]) for r in results]
    out += ["", "Load average at the start %s, at the end %s." % (h["loadavg_start"], h.get("loadavg_end"))]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    import samebits
    h = run_header("neighbors_bench.py", A.threads, repeat=A.repeat, settle=A.settle)
    results = [run(w) for w in A.workloads]
    h["loadavg_end"] = lb.loadavg()
    if A.no_save:
        return
    save_record(h, "neighbors", {"workloads": results}, lambda path: write_md(h, results, path))
    del samebits


if __name__ == "__main__":
    main()
