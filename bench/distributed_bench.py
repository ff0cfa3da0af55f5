#!/usr/bin/env python3
"""Cost of distributed=mpi (issue 26): bytes each rank sends per tree and time
per tree, at 1, 2 and 4 MPI ranks, beside the single process.

    python3 bench/distributed_bench.py [--ranks 1 2 4] [--trees 100] [--forest-trees 20] [--repeat 3] [--no-save]

Workloads (real data, ../shared/data): LightGBM's binary example (7,000 x 28,
weights beside it) and California housing (20,640 x 8, its text column
dropped), 31 leaves, learning rate 0.1, one thread per rank; and forests
(issue 26's second part): a random forest regression on California housing
and Extra Trees classification on the binary example (--forest-trees trees,
min_samples_leaf=5, every node's sums all-reduced), and an isolation forest
on California housing (256 rows a tree, 25 x --forest-trees trees), whose time is the CLI's "fitted in
S s". Every run is
`build/samebits train` (under `mpirun --oversubscribe -np N` for the ranks);
the time is the CLI's "N trees in S s" (training only, after every rank has
read the file), best of --repeat; bytes are the MPI shim's count
(SAMEBITS_MPI_STATS: each rank's send-buffer bytes over every collective,
binning sample and metrics gathers included), divided by the trees. The
model digest of every run must be the single process's (the script fails
otherwise). Results: bench/results/distributed-DATE-COMMIT.{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from _common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
EXE = os.path.join(ROOT, "build", "samebits")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SAMEBITS_")}
ENV.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "SAMEBITS_MPI_STATS": "1"})


def workloads(tmp, trees):
    cal = os.path.join(tmp, "california.csv")
    with open(os.path.join(DATA, "california-housing.csv")) as f, open(cal, "w") as g:
        for ln in f:
            g.write(",".join(ln.rstrip("\n").split(",")[:9]) + "\n")
    ex = os.path.join(DATA, "lightgbm-examples", "binary_classification_binary.train")
    return {
        "higgs-binary-7k": ("gbdt", ["--data", ex, "--label", "0", "--objective", "binary", f"n_estimators={trees}"]),
        "california-20k": ("gbdt", ["--data", cal, "--label", "median_house_value", f"n_estimators={trees}"]),
    }


def forest_workloads(tmp, trees):
    cal = os.path.join(tmp, "california.csv")
    ex = os.path.join(DATA, "lightgbm-examples", "binary_classification_binary.train")
    return {
        "rf-regression-california-20k": ("random_forest", ["--data", cal, "--label", "median_house_value",
                                                           "objective=regression", f"n_estimators={trees}",
                                                           "min_samples_leaf=5"]),
        "et-classes-higgs-7k": ("extra_trees", ["--data", ex, "--label", "0", f"n_estimators={trees}",
                                                "min_samples_leaf=5"]),
        # isolation forest: 256 rows a tree (their bins gathered), every feature of California housing
        # (25 x --forest-trees trees: one is too quick for the CLI's 10 ms resolution)
        "iforest-california-20k": ("isolation_forest", ["--data", cal, f"n_estimators={25 * trees}"]),
    }


def run(model, args, ranks, out):
    extra = ["eval_period=0"] if model == "gbdt" else []
    cmd = [EXE, "train", "--model", model, "--threads", "1"] + args + extra + ["--out", out]
    if ranks:
        cmd = ["mpirun", "--oversubscribe", "-np", str(ranks)] + cmd + ["distributed=mpi"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=1200)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    if model == "gbdt":
        m = re.search(r"samebits: (\d+) trees in ([0-9.]+) s", r.stderr)
        ntrees, secs = int(m.group(1)), float(m.group(2))
    else:  # a forest: its n_estimators, and the CLI's "fitted in S s"
        m = re.search(r"samebits: \w+ fitted in ([0-9.]+) s", r.stderr)
        ntrees = int(next(x for x in args if x.startswith("n_estimators=")).split("=")[1])
        secs = float(m.group(1))
    d = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    stats = [dict(rank=int(a), bytes=int(b), calls=int(c))
             for a, b, c in re.findall(r"samebits-mpi-stats: rank=(\d+) size=\d+ bytes=(\d+) calls=(\d+)", r.stderr)]
    return ntrees, secs, d.group(1), stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--forest-trees", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    commit = git_commit(short=True)[0]
    ompi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        todo = dict(workloads(tmp, a.trees))
        todo.update(forest_workloads(tmp, a.forest_trees))
        for name, (model, args) in todo.items():
            best = {}
            digest0 = None
            for rep in range(a.repeat):
                for ranks in [0] + a.ranks:
                    ntrees, secs, digest, stats = run(model, args, ranks, os.path.join(tmp, "m.sbm"))
                    digest0 = digest0 or digest
                    if digest != digest0:
                        sys.exit(f"{name}: {ranks} ranks gave digest {digest}, one process {digest0}")
                    if ranks not in best or secs < best[ranks][1]:
                        best[ranks] = (ntrees, secs, stats)
            for ranks in [0] + a.ranks:
                ntrees, secs, stats = best[ranks]
                per_rank = [s["bytes"] / ntrees for s in sorted(stats, key=lambda s: s["rank"])]
                rows.append({"workload": name, "model": model, "ranks": ranks, "trees": ntrees, "seconds": secs,
                             "ms_per_tree": 1000.0 * secs / ntrees,
                             "bytes_per_tree_per_rank": per_rank,
                             "bytes_per_tree_max_rank": max(per_rank) if per_rank else 0.0,
                             "collectives_per_tree": (stats[0]["calls"] / ntrees) if stats else 0.0,
                             "digest": digest0})
    machine = f"{platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    out = {"bench": "distributed", "commit": commit, "date": datetime.date.today().isoformat(), "machine": machine,
           "note": f"{os.cpu_count()} cores shared with other work; the ranks are oversubscribed (4 ranks on "
                   f"{os.cpu_count()} cores) and talk through shared memory on one host: the times show the cost of "
                   "the exchange and of oversubscription, not a cluster's scaling",
           "mpi": ompi, "parameters": {"trees": a.trees, "num_leaves": 31, "learning_rate": 0.1, "threads_per_rank": 1,
                                       "repeat": a.repeat, "timing": "best of repeat, training only (CLI)",
                                       "forest_trees": a.forest_trees, "forest_min_samples_leaf": 5},
           "rows": rows}
    lines = [f"# distributed=mpi: bytes and time per tree ({out['date']}, commit {commit})", "",
             f"Machine: {machine}. {out['note']}. {ompi}. {a.trees} trees x 31 leaves, one thread per rank, "
             f"best of {a.repeat}; forests: {a.forest_trees} trees, min_samples_leaf=5 (an RF or ET tree is an "
             "estimator; a classification forest's per-class model trees are not counted apart). Bytes: what each rank hands to collectives per tree (the MPI shim's count: "
             "histogram all-reduces of 3 int64 per bin (forests: every node's sums, the drawn features' histograms "
             "or Extra Trees' bin ranges and threshold sums), maxima, sums, and the one-time binning-sample and label "
             "gathers spread over the trees). Every run's model digest is the single process's.", "",
             "| workload | ranks | ms per tree | bytes per tree (each rank) | collectives per tree | digest |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        b = ", ".join(f"{x:,.0f}" for x in r["bytes_per_tree_per_rank"]) or "(one process)"
        lines.append(f"| {r['workload']} | {r['ranks'] or 'none (one process)'} | {r['ms_per_tree']:.2f} | {b} | "
                     f"{r['collectives_per_tree']:.1f} | {r['digest'][:12]} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        base = os.path.join(ROOT, "bench", "results", f"distributed-{out['date']}-{commit}")
        with open(base + ".json", "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
        with open(base + ".md", "w") as f:
            f.write(text)
        print("wrote", base + ".{md,json}")


if __name__ == "__main__":
    main()
