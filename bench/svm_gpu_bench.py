"""SVC on a GPU beside scikit-learn's SVC (libsvm, single-threaded) on UCI
Adult (issue 27's target: device=cuda at least 10x faster than scikit-learn at
50,000 rows): for the lead's GPU run; not run on this workplace (no GPU).

Data: the .npz that bench/svm_adult_npz.py writes (all 48,842 rows of
adult.data and adult.test; the GPU machine has no network). Rows are shuffled
by RandomState(0); the last 2,000 of the permutation are the test rows, and a
training set of N rows is the first N of the others (46,842), continued from
the start of the permutation past them (50,000 rows: 3,158 rows twice, the
same for every estimator). svm_bench.py's encoding: the 6 numeric columns
standardized on the training rows, the 8 categorical ones one-hot over the
training rows' levels (107 or 108 features). SVC(C=1, kernel="rbf",
gamma="scale"), scikit-learn's defaults, tol 1e-3, cache_size 200 MB.

Per size (--sizes, default 10000 20000 50000): scikit-learn's fit time
(single-threaded: libsvm has no other mode; shrinking on, its default), and
samebits' on each device (--devices, default "cuda opencl cpu"; cpu at
--threads, default every core): fit time (the fastest of --repeat fits, after
an untimed small fit that opens the device and builds its program), the
decision_function time on the test rows, the model digest, iterations,
support vectors and test accuracy. The digests and the decision values must
be the same on every device (the run says so and exits 1 where they are not).
Speedup = scikit-learn's fit time / samebits'. A table and a JSON record
(svm-gpu-DATE-COMMIT.json/.md in --out-dir) after each size, so that a run
stopped by a time limit keeps the sizes it finished.

    python3 bench/svm_adult_npz.py                          # here: writes bench/adult_svm.npz
    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python \\
        python3 bench/svm_gpu_bench.py --npz bench/adult_svm.npz --out-dir "$OUT"
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
from _common import git_commit, loadavg, machine_line  # noqa: E402

N_TEST = 2000
PARAMS = dict(C=1.0, kernel="rbf", gamma="scale")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--npz", default=os.path.join(HERE, "adult_svm.npz"))
    p.add_argument("--sizes", nargs="*", type=int, default=[10000, 20000, 50000])
    p.add_argument("--devices", nargs="*", default=["cuda", "opencl", "cpu"])
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="samebits' host threads (device=cpu)")
    p.add_argument("--repeat", type=int, default=1, help="fits of each; the fastest is recorded")
    p.add_argument("--no-sklearn", action="store_true", help="samebits only (the speedups then read n/a)")
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    p.add_argument("--no-save", action="store_true")
    return p.parse_args()


def load(path):
    z = np.load(path)
    cats = [str(c) for c in z["categorical_names"]]
    return z["numeric"], z["categorical"], z["label"].astype(np.int64), cats, {c: z["levels_" + c] for c in cats}


def encode(num, cat, tr, idx):
    """Rows idx encoded as svm_bench.py encodes adult: numeric columns
    standardized by the training rows' mean and (population) std, categorical
    ones one-hot over the training rows' levels in sorted order."""
    mu, sd = num[tr].mean(axis=0), num[tr].std(axis=0)
    parts = [(num[idx] - mu) / sd]
    for j in range(cat.shape[1]):
        levels = np.unique(cat[tr, j])  # codes index the sorted level names: sorted codes, sorted names
        parts.append((cat[idx, j][:, None] == levels[None, :]).astype(np.float64))
    return np.concatenate(parts, axis=1).astype(np.float32)


def split(n_all, size):
    perm = np.random.RandomState(0).permutation(n_all)
    test, pool = perm[-N_TEST:], perm[:-N_TEST]
    reps = -(-size // len(pool))
    return np.concatenate([pool] * reps)[:size], test


def gpu_name():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def fit_timed(make, X, y, repeat):
    best, est = None, None
    for _ in range(repeat):
        e = make()
        t = time.perf_counter()
        e.fit(X, y)
        dt = time.perf_counter() - t
        if best is None or dt < best:
            best, est = dt, e
    return best, est


def run_size(size, num, cat, lab, A):
    import samebits
    tr, te = split(len(lab), size)
    Xtr, Xte = encode(num, cat, tr, tr), encode(num, cat, tr, te)
    ytr, yte = lab[tr], lab[te]
    row = {"rows": size, "distinct_rows": int(len(np.unique(tr))), "features": int(Xtr.shape[1]),
           "test_rows": int(len(te)), "devices": {}}
    print("== %d rows x %d features (%d distinct)" % (size, Xtr.shape[1], row["distinct_rows"]), flush=True)
    if not A.no_sklearn:
        import sklearn.svm as sks
        t, sk = fit_timed(lambda: sks.SVC(**PARAMS), Xtr, ytr, A.repeat)
        row["sklearn"] = {"fit_s": t, "n_iter": [int(v) for v in np.atleast_1d(sk.n_iter_)],
                          "n_sv": int(len(sk.support_)), "accuracy": float(sk.score(Xte, yte))}
        print("sklearn fit %.2f s" % t, json.dumps(row["sklearn"]), flush=True)
    for dev in A.devices:
        kw = dict(PARAMS, device=dev)
        if dev == "cpu":
            kw["n_jobs"] = A.threads
        try:
            samebits.SVC(**kw).fit(Xtr[:300], ytr[:300])  # untimed: opens the device, builds its program
        except samebits.BackendUnavailableError as e:
            row["devices"][dev] = {"refused": str(e)}
            print(dev, "refused:", e, flush=True)
            continue
        t, est = fit_timed(lambda: samebits.SVC(**kw), Xtr, ytr, A.repeat)
        t0 = time.perf_counter()
        dec = est.decision_function(Xte)
        tdec = time.perf_counter() - t0
        r = {"fit_s": t, "decision_s": tdec, "digest": est.model_digest_,
             "n_iter": [int(v) for v in np.atleast_1d(est.n_iter_)], "n_sv": int(len(est.support_)),
             "accuracy": float(est.score(Xte, yte)), "decision_sha256": __import__("hashlib").sha256(
                 np.ascontiguousarray(dec).tobytes()).hexdigest()}
        if "sklearn" in row:
            r["speedup_vs_sklearn"] = row["sklearn"]["fit_s"] / t
        row["devices"][dev] = r
        print(dev, "fit %.2f s" % t, json.dumps(r), flush=True)
    ran = [d for d in row["devices"].values() if "digest" in d]
    row["identical_across_devices"] = len({d["digest"] for d in ran}) <= 1 and \
        len({d["decision_sha256"] for d in ran}) <= 1
    row["devices_compared"] = [k for k, d in row["devices"].items() if "digest" in d]
    return row


def write_md(h, rows, path):
    out = ["# SVC on a GPU beside scikit-learn's SVC (libsvm, 1 thread) on UCI Adult (issue 27)", "",
           "Commit `%s`%s, %s; %s; GPU %s." % (h["commit"][:7] or "?", " (dirty)" if h.get("dirty") else "",
                                              h["date"], h["machine"], h["gpu"] or "none seen"),
           "Command: `%s`." % h["command"],
           "SVC(C=1, kernel=rbf, gamma=scale) on N training rows of Adult (bench/svm_gpu_bench.py's split), %d "
           "test rows; fit times the fastest of %d; samebits device=cpu at %d threads; scikit-learn %s." % (
               N_TEST, h["repeat"], h["threads"], h["sklearn"]), "",
           "| rows | estimator | fit s | speedup vs scikit-learn | n_iter | n_SV | test accuracy | decision s | "
           "model digest | identical on every device |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        sk = r.get("sklearn")
        if sk:
            out.append("| %d | scikit-learn | %.2f | 1 | %s | %d | %.5f | | | |" % (
                r["rows"], sk["fit_s"], sk["n_iter"][0], sk["n_sv"], sk["accuracy"]))
        for dev, d in r["devices"].items():
            if "refused" in d:
                out.append("| %d | samebits %s | refused: %s | | | | | | | |" % (r["rows"], dev, d["refused"][:80]))
                continue
            out.append("| %d | samebits %s | %.2f | %s | %s | %d | %.5f | %.3f | `%s` | %s |" % (
                r["rows"], dev, d["fit_s"], "%.1fx" % d["speedup_vs_sklearn"] if "speedup_vs_sklearn" in d else "n/a",
                d["n_iter"][0], d["n_sv"], d["accuracy"], d["decision_s"], d["digest"][:16],
                "yes" if r["identical_across_devices"] else "NO"))
    out += ["", "Load average at the start %s, at the end %s." % (h["loadavg_start"], h.get("loadavg_end"))]
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    A = parse_args()
    import sklearn
    num, cat, lab, _, _ = load(A.npz)
    commit, dirty = git_commit()
    h = {"bench": "svm_gpu_bench.py", "command": "python3 bench/svm_gpu_bench.py " + " ".join(sys.argv[1:]),
         "commit": commit, "dirty": dirty,
         "date": time.strftime("%Y-%m-%d"), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "machine": machine_line(), "gpu": gpu_name(), "sklearn": sklearn.__version__, "numpy": np.__version__,
         "threads": A.threads, "repeat": A.repeat, "params": PARAMS, "npz": os.path.basename(A.npz),
         "loadavg_start": loadavg(), "samebits_lib": os.environ.get("SAMEBITS_LIB", "")}
    rows = []
    stem = os.path.join(A.out_dir, "svm-gpu-%s-%s" % (h["date"], (h["commit"] or "nocommit")[:7]))
    for size in A.sizes:
        rows.append(run_size(size, num, cat, lab, A))
        h["loadavg_end"] = loadavg()
        if not A.no_save:
            os.makedirs(A.out_dir, exist_ok=True)
            with open(stem + ".json", "w") as f:
                json.dump({"header": h, "sizes": rows}, f, indent=1)
            write_md(h, rows, stem + ".md")
    same = all(r["identical_across_devices"] for r in rows)
    if not A.no_save:
        print(open(stem + ".md").read())
        print("wrote", stem + ".json")
    print("model digests and decision values identical on every device:", "yes" if same else "NO")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
