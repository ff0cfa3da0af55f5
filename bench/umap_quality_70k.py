"""Issue 29's quality at all 70,000 Fashion-MNIST rows on a host without a GPU:
samebits' UMAP and seeded umap-learn fitted one after the other for each seed,
trustworthiness (k = 15, umap_quality_gpu.trust_cpu: scikit-learn's sum with
float32 input distances in row blocks, since scikit-learn's own needs the
n x n float64 distances, 39 GB) and 15-NN accuracy (5-fold in index order,
umap_gpu_bench.knn_acc) of both embeddings. The fit times are printed but
taken on whatever the cores were doing: not a speed result.

    PYTHONPATH=python python3 bench/umap_quality_70k.py --seeds 42,43,44 \\
        [--optimize batched|sequential] [--threads 2] --out bench/results/NAME.json

Writes the .json (every number, the parameters, the commit) and a .md table
beside it.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import samebits  # noqa: E402
from umap_gpu_bench import BASE, knn_acc, load  # noqa: E402
from umap_quality_gpu import trust_cpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="42,43,44")
    ap.add_argument("--optimize", default="batched", choices=("batched", "sequential"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=70000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import umap
    x, y, _, _ = load(argparse.Namespace(data=None, rows=a.rows))
    x = np.ascontiguousarray(x, dtype=np.float32)
    samebits.set_num_threads(a.threads)
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=HERE).stdout.strip()
    rec = {"bench": "umap-quality-%d" % a.rows, "date": time.strftime("%Y-%m-%d"),
           "commit": commit + (" (uncommitted changes)" if dirty else ""),
           "machine": "%s, %d logical CPUs (%s)" % (platform.processor() or platform.machine(), os.cpu_count(),
                                                    platform.platform()),
           "load_start": os.getloadavg()[0], "params": dict(BASE, n_epochs="default (200)"),
           "optimize": a.optimize, "threads": a.threads, "umap_learn": umap.__version__,
           "samebits_version": getattr(samebits, "__version__", "?"), "runs": []}
    for seed in [int(s) for s in a.seeds.split(",")]:
        with __import__("warnings").catch_warnings(record=True) as caught:
            __import__("warnings").simplefilter("always")
            t0 = time.perf_counter()
            u = samebits.UMAP(random_state=seed, optimize=a.optimize, **BASE).fit(x)
            t_sb = time.perf_counter() - t0
        fell_back = [str(w.message) for w in caught if "could not be computed" in str(w.message)]
        e_sb = np.asarray(u.embedding_, dtype=np.float32)
        t0 = time.perf_counter()
        e_ul = np.asarray(umap.UMAP(random_state=seed, **BASE).fit_transform(x), dtype=np.float32)
        t_ul = time.perf_counter() - t0
        tr = trust_cpu(x, [e_sb, e_ul])
        run = {"seed": seed,
               "samebits": {"model_digest": u.model_digest_, "init_used": int(u._model.get_int("init")),
                            "fallback_warning": fell_back, "fit_s": t_sb, "knn15": knn_acc(e_sb, y),
                            "trust15": tr[0]},
               "umap_learn": {"fit_s": t_ul, "knn15": knn_acc(e_ul, y), "trust15": tr[1]}}
        rec["runs"].append(run)
        print(json.dumps(run), flush=True)
    rec["load_end"] = os.getloadavg()[0]
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    md = os.path.splitext(a.out)[0] + ".md"
    with open(md, "w") as f:
        f.write("# UMAP beside umap-learn at %d Fashion-MNIST rows (issue 29's quality), optimize=%s\n\n"
                % (a.rows, a.optimize))
        f.write("Commit %s, %s; %s; load average %.1f at start, %.1f at end. Default parameters (%s), "
                "samebits at %d threads, umap-learn %s seeded. `%s`. Trustworthiness k=15 by "
                "bench/umap_quality_gpu.py's trust_cpu; 15-NN accuracy 5-fold in index order. Fit times were "
                "taken on shared cores: not a speed result.\n\n"
                % (rec["commit"], rec["date"], rec["machine"], rec["load_start"], rec["load_end"],
                   ", ".join("%s %s" % kv for kv in BASE.items()), a.threads, rec["umap_learn"],
                   "python3 bench/umap_quality_70k.py --seeds %s --optimize %s --threads %d --rows %d"
                   % (a.seeds, a.optimize, a.threads, a.rows)))
        f.write("| random_state | init used | trustworthiness samebits / umap-learn | gap | 15-NN accuracy "
                "samebits / umap-learn | gap (points) | fit s samebits / umap-learn | samebits model digest |\n")
        f.write("|---|---|---|---|---|---|---|---|\n")
        for r in rec["runs"]:
            s, p = r["samebits"], r["umap_learn"]
            f.write("| %d | %s | %.4f / %.4f | %+.4f | %.4f / %.4f | %+.2f | %.1f / %.1f | `%s` |\n"
                    % (r["seed"], ["spectral", "random", "array"][s["init_used"]], s["trust15"], p["trust15"],
                       s["trust15"] - p["trust15"], s["knn15"], p["knn15"], 100 * (s["knn15"] - p["knn15"]),
                       s["fit_s"], p["fit_s"], s["model_digest"][:16]))
        ok = all(abs(r["samebits"]["trust15"] - r["umap_learn"]["trust15"]) <= 0.01 and
                 abs(r["samebits"]["knn15"] - r["umap_learn"]["knn15"]) <= 0.01 for r in rec["runs"])
        f.write("\nIssue 29's quality targets (trustworthiness within 0.01, 15-NN accuracy within 1 point): %s.\n"
                % ("met on every seed" if ok else "**not met on every seed**"))
    print("wrote", a.out, md)


if __name__ == "__main__":
    main()
