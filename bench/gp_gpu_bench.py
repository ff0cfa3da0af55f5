"""GaussianProcessRegressor on a GPU beside the CPU and scikit-learn (issue 27):
for the lead's GPU run; not run on this workplace (no GPU).

Workload: bench/gp_bench.py's (California housing, the eight numeric features,
rows with a missing value dropped, target median_house_value / 1e5, a fixed
permutation by numpy RandomState(seed) giving the first n rows for training
and the 1,000 after them held out, features standardized by the training
rows, normalize_y=True) and its kernels and optimizer settings:
  iso:   ConstantKernel(1.0, (1e-3, 1e3)) * RBF(1.0, (1e-2, 1e2)) + WhiteKernel(0.1, (1e-5, 1e1)),
  ard:   the same with one length scale per feature,
  fixed: ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(0.1), optimizer=None,
fmin_l_bfgs_b (samebits' projected L-BFGS), no restarts.

The GPU host has no copy of the CSV: the rows the runs need (the permutation's
first max(n) + 1,000, unstandardized) are carried in a small .npz that this
script writes where the CSV is (--export FILE, about 0.5 MB):

    python3 bench/gp_gpu_bench.py --export build/gp-housing.npz          # here
    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python \\
        python3 bench/gp_gpu_bench.py --data build/gp-housing.npz        # the GPU host

Per run and device (--devices, default "cuda opencl cpu"): samebits' fit time
(one fit, timed after an untimed 50-row fit on the device that opens it and
builds its program), its model digest (SHA-256 of the model file), the log
marginal likelihood, the iterations, and the SHA-256 of predict's mean and
standard deviation on the held-out rows; the digests must be equal on every
device (the run prints whether they are and exits nonzero where they are not).
scikit-learn's GaussianProcessRegressor beside it on the same rows, kernel
and optimizer, with its BLAS on every core (threadpoolctl; --sk-threads), and
its differences from samebits (the predictive mean relative to its largest
|mean|, the log marginal likelihood relative). samebits' CPU fit runs at
--threads (default every core). Ratios are samebits' time over
scikit-learn's, in one run on one machine.

Writes bench/results/gp-gpu-DATE-COMMIT.{json,md} (unless --no-save).
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)

CSV = "/work/shared/data/california-housing.csv"
TEST = 1000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=os.path.join(REPO, "build", "gp-housing.npz"),
                   help="the rows .npz (--export writes it); the CSV is read where the file is absent")
    p.add_argument("--export", help="write the rows the runs need to this .npz and stop")
    p.add_argument("--runs", default="iso:2000,iso:5000", help="KIND:ROWS,... (KIND: iso, ard, fixed)")
    p.add_argument("--seed", type=int, default=0, help="the permutation's seed and both libraries' random_state")
    p.add_argument("--devices", nargs="*", default=["cuda", "opencl", "cpu"])
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="samebits' host threads")
    p.add_argument("--sk-threads", type=int, default=os.cpu_count(), help="scikit-learn's BLAS threads")
    p.add_argument("--no-sklearn", action="store_true")
    p.add_argument("--no-save", action="store_true")
    return p.parse_args()


def runs_of(text):
    out = []
    for item in text.split(","):
        kind, n = item.split(":")
        if kind not in ("iso", "ard", "fixed"):
            raise SystemExit("unknown run kind %r (iso, ard, fixed)" % kind)
        out.append((kind, int(n)))
    return out


def export(path, nmax, seed):
    """The permutation's first nmax + TEST complete rows (features raw, target / 1e5) into path."""
    import numpy as np
    import pandas as pd
    d = pd.read_csv(CSV).drop(columns=["ocean_proximity"]).dropna()
    X = d.drop(columns=["median_house_value"]).values.astype(np.float64)
    y = d["median_house_value"].values.astype(np.float64) / 1e5
    idx = np.random.RandomState(seed).permutation(len(X))[:nmax + TEST]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.savez_compressed(path, X=X[idx], y=y[idx], seed=seed, rows_complete=len(X),
                        columns=np.array(list(d.drop(columns=["median_house_value"]).columns)))
    print("wrote %s: %d rows (seed %d), %d bytes" % (path, len(idx), seed, os.path.getsize(path)))


def load(path, n, seed):
    """gp_bench.load's rows: the first n of the permutation for training, the TEST after them."""
    import numpy as np
    if os.path.exists(path):
        z = np.load(path)
        if int(z["seed"]) != seed or len(z["X"]) < n + TEST:
            raise SystemExit("%s holds %d rows of seed %d: export it again for %d rows of seed %d" % (
                path, len(z["X"]), int(z["seed"]), n + TEST, seed))
        X, y, rows = z["X"], z["y"], int(z["rows_complete"])
        tr, te = np.arange(n), np.arange(n, n + TEST)
    else:
        import gp_bench
        Xtr, ytr, Xte, yte = gp_bench.load(n, seed)
        return Xtr, ytr, Xte, yte, None
    mu, sd = X[tr].mean(0), X[tr].std(0)
    return (X[tr] - mu) / sd, y[tr], (X[te] - mu) / sd, y[te], rows


def kernels(kind, d):
    from samebits.gaussian_process import kernels as SK
    ls = [1.0] * d if kind == "ard" else 1.0
    if kind == "fixed":
        a = SK.ConstantKernel(1.0) * SK.RBF(1.0) + SK.WhiteKernel(0.1)
    else:
        a = SK.ConstantKernel(1.0, (1e-3, 1e3)) * SK.RBF(ls, (1e-2, 1e2)) + SK.WhiteKernel(0.1, (1e-5, 1e1))
    try:
        from sklearn.gaussian_process import kernels as K
    except ImportError:
        return a, None
    if kind == "fixed":
        return a, K.ConstantKernel(1.0) * K.RBF(1.0) + K.WhiteKernel(0.1)
    return a, K.ConstantKernel(1.0, (1e-3, 1e3)) * K.RBF(ls, (1e-2, 1e2)) + K.WhiteKernel(0.1, (1e-5, 1e1))


def sha(a):
    import numpy as np
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()


def run(kind, n, A):
    import numpy as np
    import samebits
    X, y, Xt, yt, _ = load(A.data, n, A.seed)
    ks, kk = kernels(kind, X.shape[1])
    opt = None if kind == "fixed" else "fmin_l_bfgs_b"
    row = {"run": kind, "n": n, "features": X.shape[1], "optimizer": opt or "None", "devices": {}}
    digests = set()
    ref_mean = None
    for dev in A.devices:
        try:
            samebits.set_num_threads(A.threads)
            # untimed: the device's first use opens it and builds its program
            samebits.GaussianProcessRegressor(ks, optimizer=None, normalize_y=True, device=dev).fit(X[:50], y[:50])
            t, c = time.perf_counter(), time.process_time()
            m = samebits.GaussianProcessRegressor(ks, optimizer=opt, normalize_y=True, random_state=A.seed,
                                                  device=dev).fit(X, y)
            fit_s, cpu_s = time.perf_counter() - t, time.process_time() - c
            t = time.perf_counter()
            mean, std = m.predict(Xt, return_std=True)
            pred_s = time.perf_counter() - t
        except samebits.BackendUnavailableError as e:
            row["devices"][dev] = {"refused": str(e)}
            print(json.dumps({"run": kind, "n": n, "device": dev, "refused": str(e)}), flush=True)
            continue
        d = {"fit_s": fit_s, "process_cpu_s": cpu_s, "predict_s": pred_s, "model_digest": m.model_digest_,
             "lml": m.log_marginal_likelihood_value_, "n_iter": m.n_iter_, "kernel": repr(m.kernel_),
             "predict_sha256": sha(np.concatenate([mean, std])),
             "rmse": float(np.sqrt(np.mean((mean - yt) ** 2)))}
        digests.add((d["model_digest"], d["predict_sha256"]))
        ref_mean = mean if ref_mean is None else ref_mean
        row["devices"][dev] = d
        print(json.dumps(dict(d, run=kind, n=n, device=dev)), flush=True)
    row["identical_across_devices"] = len(digests) <= 1
    if kk is not None and not A.no_sklearn:
        from sklearn.gaussian_process import GaussianProcessRegressor as SKGP
        from threadpoolctl import threadpool_limits
        with threadpool_limits(limits=A.sk_threads), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, c = time.perf_counter(), time.process_time()
            b = SKGP(kk, optimizer=opt, normalize_y=True, random_state=A.seed).fit(X, y)
            row["sklearn_fit_s"], row["sklearn_cpu_s"] = time.perf_counter() - t, time.process_time() - c
            mb = b.predict(Xt)
        row["sklearn_lml"] = float(b.log_marginal_likelihood_value_)
        row["sklearn_kernel"] = repr(b.kernel_)
        row["sklearn_rmse"] = float(np.sqrt(np.mean((mb - yt) ** 2)))
        if ref_mean is not None:
            row["mean_rel_vs_sklearn"] = float(np.max(np.abs(ref_mean - mb)) / np.max(np.abs(mb)))
            lml = next(d["lml"] for d in row["devices"].values() if "lml" in d)
            row["lml_rel_vs_sklearn"] = (lml - row["sklearn_lml"]) / abs(row["sklearn_lml"])
        for d in row["devices"].values():
            if "fit_s" in d:
                d["ratio_vs_sklearn"] = d["fit_s"] / row["sklearn_fit_s"]
        print(json.dumps({"run": kind, "n": n, "sklearn_fit_s": row["sklearn_fit_s"], "sklearn_lml": row["sklearn_lml"]}),
              flush=True)
    return row


def table(rows, A):
    out = ["| run | rows | device | fit s | ratio vs scikit-learn | iterations | LML | model digest | "
           "predict sha256 | identical on every device |", "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for r in rows:
        for dev, d in r["devices"].items():
            if "refused" in d:
                out.append("| %s | %d | %s | refused: %s | | | | | | |" % (r["run"], r["n"], dev, d["refused"][:80]))
                continue
            out.append("| %s | %d | %s | %.2f | %s | %d | %.10f | %s | %s | %s |" % (
                r["run"], r["n"], dev, d["fit_s"], "%.3f" % d["ratio_vs_sklearn"] if "ratio_vs_sklearn" in d else "-",
                d["n_iter"], d["lml"], d["model_digest"][:16], d["predict_sha256"][:16],
                "yes" if r["identical_across_devices"] else "**NO**"))
        if "sklearn_fit_s" in r:
            out.append("| %s | %d | scikit-learn (%d BLAS threads) | %.2f | 1 | | %.10f | | | mean rel. diff %.2e, LML rel. "
                       "diff %.2e |" % (r["run"], r["n"], A.sk_threads, r["sklearn_fit_s"], r["sklearn_lml"],
                                         r.get("mean_rel_vs_sklearn", float("nan")),
                                         r.get("lml_rel_vs_sklearn", float("nan"))))
    return out


def main():
    A = parse_args()
    runs = runs_of(A.runs)
    if A.export:
        export(A.export, max(n for _, n in runs), A.seed)
        return
    from _common import run_header, save_record
    import linear_bench as lb
    h = run_header("gp_gpu_bench.py", A.threads, devices=A.devices, sk_dtype="float64")
    h["workload"] = {"data": "california-housing.csv (%s)" % (A.data if os.path.exists(A.data) else CSV),
                     "runs": A.runs, "seed": A.seed, "test_rows": TEST, "normalize_y": True,
                     "sk_threads": A.sk_threads}
    rows = [run(kind, n, A) for kind, n in runs]
    h["loadavg_end"] = lb.loadavg()
    same = all(r["identical_across_devices"] for r in rows)
    lines = table(rows, A)
    print("\n".join(lines))
    print("model digests and predictions identical on every device:", "yes" if same else "NO")
    if not A.no_save:
        def write_md(path):
            md = ["# GaussianProcessRegressor on a GPU beside the CPU and scikit-learn (issue 27)", "",
                  "Commit `%s`%s, %s; %s." % (h["commit"][:7], " (dirty)" if h.get("dirty") else "", h["date"],
                                               h["machine"]),
                  "Command: `%s`." % h["command"],
                  "California housing (bench/gp_bench.py's rows, kernels and settings; seed %d), normalize_y, "
                  "1,000 held-out rows; samebits device=cpu at %d threads, scikit-learn %s with %d BLAS threads." % (
                      A.seed, A.threads, h["versions"].get("scikit-learn", "?"), A.sk_threads), ""]
            md += lines
            md += ["", "Load average at the start %s, at the end %s." % (h["loadavg_start"], h.get("loadavg_end"))]
            with open(path, "w") as fh:
                fh.write("\n".join(md) + "\n")
        save_record(h, "gp-gpu", {"runs": rows}, write_md)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
