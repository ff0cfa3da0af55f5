"""ARIMA(1,1,1) under two builds of the library, side by side on one machine.

What a change to ARIMA's training costs and gains: bench/ts_gpu_bench.py's
taxi-derived series (N of them, 1,000 days each, its seed 7) fitted as one
batch by library A and by library B, each in a process of its own (a
library is loaded once a process), alternated R times so that a shared
machine's load falls on both. Reported: each library's fit time (median
and every run), the objective evaluations a fit (nfev: mean, median, 90th
percentile, largest), the iterations (nit) and how many fits ended at the
BFGS's cap of 100 and went on into the simplex runs, and B's
log-likelihood against A's per series (how many lower or higher by more
than 1e-9 and 1e-6 relative, the extremes) with the largest coefficient
difference.

Run: python3 bench/arima_lib_ab.py --lib-a OLD/libsamebits.so --lib-b build/libsamebits.so
     [--label-a v8 --label-b v9] [--n 400] [--threads 2] [--repeats 3] [--out bench/results]
Results: bench/results/arima-lib-ab-DATE-COMMIT.{md,json} (COMMIT: this checkout's, B's sources).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def child(n, threads):
    """In a process whose SAMEBITS_LIB is one library: fit the batch, print
    its numbers as one JSON line."""
    import time
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import samebits
    import ts_gpu_bench as T
    z = np.load(T.BASES)
    ys = T.derive({k: z[k] for k in z.files}, n, 1000, 7)
    F = T.FAMILIES["arima"]
    samebits.set_num_threads(threads)
    t0 = time.perf_counter()
    b = F["batch"]()(F["pairs"]("cpu"), ys)
    t = time.perf_counter() - t0
    out = {"fit_s": t, "profile": samebits.profile_version(),
           "nfev": [b.integer(i, "nfev") for i in range(n)], "nit": [b.integer(i, "nit") for i in range(n)],
           "llf": [b.array(i, "llf")[0] for i in range(n)], "params": [list(b.array(i, "params")) for i in range(n)]}
    print(json.dumps(out))


def run(lib, n, threads):
    env = dict(os.environ, SAMEBITS_LIB=os.path.abspath(lib))
    r = subprocess.run([sys.executable, __file__, "--child", "--n", str(n), "--threads", str(threads)],
                       env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def stats(d):
    nfev, nit = np.array(d["nfev"]), np.array(d["nit"])
    return {"nfev_mean": float(nfev.mean()), "nfev_median": float(np.median(nfev)),
            "nfev_p90": float(np.percentile(nfev, 90)), "nfev_max": int(nfev.max()),
            "nit_max": int(nit.max()), "at_cap": int((nit >= 100).sum())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib-a")
    ap.add_argument("--lib-b")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.child:
        return child(a.n, a.threads)
    if not (a.lib_a and a.lib_b):
        raise SystemExit("arima_lib_ab.py: --lib-a and --lib-b name the two libraries")
    from ts_bench_common import git_commit, machine_line
    import datetime
    runs = {"a": [], "b": []}
    for _ in range(a.repeats):
        for k, lib in (("a", a.lib_a), ("b", a.lib_b)):
            runs[k].append(run(lib, a.n, a.threads))
            print("%s: fit %.2f s" % (a.label_a if k == "a" else a.label_b, runs[k][-1]["fit_s"]), flush=True)
    A, B = runs["a"][0], runs["b"][0]
    for k in ("a", "b"):  # a library's fits are its own at every repeat
        assert all(r["llf"] == runs[k][0]["llf"] for r in runs[k])
    la, lb = np.array(A["llf"]), np.array(B["llf"])
    rel = (lb - la) / np.abs(la)
    dpar = max(max(abs(x - y) for x, y in zip(pa[:-1], pb[:-1])) for pa, pb in zip(A["params"], B["params"]))
    cmp = {"lower_1e-9": int((rel < -1e-9).sum()), "lower_1e-6": int((rel < -1e-6).sum()),
           "higher_1e-9": int((rel > 1e-9).sum()), "higher_1e-6": int((rel > 1e-6).sum()),
           "rel_min": float(rel.min()), "rel_max": float(rel.max()), "coef_max_diff": float(dpar)}
    ta = [r["fit_s"] for r in runs["a"]]
    tb = [r["fit_s"] for r in runs["b"]]
    commit, dirty = git_commit()
    date = datetime.date.today().isoformat()
    head = {"commit": commit, "dirty": dirty, "date": date, "machine": machine_line(), "n": a.n, "length": 1000, "seed": 7,
            "threads": a.threads, "repeats": a.repeats, a.label_a: {"lib": a.lib_a, "profile": A["profile"]},
            a.label_b: {"lib": a.lib_b, "profile": B["profile"]}}
    res = {"header": head, "times": {a.label_a: ta, a.label_b: tb},
           "stats": {a.label_a: stats(A), a.label_b: stats(B)}, "b_against_a": cmp}
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, "arima-lib-ab-%s-%s" % (date, commit[:8]))
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    sa, sb = stats(A), stats(B)
    lines = ["# ARIMA(1,1,1) under two libraries (%s)" % date, "",
             "commit %s%s (library B's sources); %s; %d threads; %d taxi-derived series x 1000 values "
             "(bench/ts_gpu_bench.py's rule, seed 7), one batch a run, the two alternated %d times. "
             "Generated by bench/arima_lib_ab.py." % (commit, " (dirty)" if dirty else "", machine_line(), a.threads, a.n, a.repeats), "",
             "| library | profile | fit s (median) | runs | nfev mean | median | p90 | max | nit max | "
             "fits at the BFGS cap |", "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for lab, d, t, s in ((a.label_a, A, ta, sa), (a.label_b, B, tb, sb)):
        lines.append("| %s | %s | %.2f | %s | %.0f | %.0f | %.0f | %d | %d | %d |" % (
            lab, d["profile"], statistics.median(t), ", ".join("%.2f" % x for x in t), s["nfev_mean"],
            s["nfev_median"], s["nfev_p90"], s["nfev_max"], s["nit_max"], s["at_cap"]))
    lines += ["", "%s against %s, per series: llf lower by more than 1e-9 relative in %d (1e-6: %d), higher by "
              "more than 1e-9 in %d (1e-6: %d); relative llf difference from %.2e to %.2e; the largest "
              "coefficient difference %.2e. Time ratio %s / %s (medians): %.3f." % (
                  a.label_b, a.label_a, cmp["lower_1e-9"], cmp["lower_1e-6"], cmp["higher_1e-9"],
                  cmp["higher_1e-6"], cmp["rel_min"], cmp["rel_max"], cmp["coef_max_diff"], a.label_b,
                  a.label_a, statistics.median(tb) / statistics.median(ta)), ""]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    print("wrote %s.md" % base)


if __name__ == "__main__":
    main()
