#!/usr/bin/env python3
"""Ranking benchmark: samebits lambdarank beside LightGBM's at 1M+ rows.

The data is LightGBM's LETOR-format ranking sample (lambdarank_rank.train: 3,005
rows in 201 queries, 300 features) resampled by query: query k of the large set
is a copy of the sample's query floor(u_k x 201), u_k the counter generator's
draw keyed by (seed 8, purpose 'RNKB', k) (Philox4x32-10, the same function as
src/core/rng.h), until the row count is reached. Every feature row is a real
row of the sample; nothing is synthesized. The held-out set is the sample's own
lambdarank_rank.test (50 queries), scored by NDCG@10 for both libraries with
LightGBM's definition (gains 2^label - 1, discount 1/log2(2 + i), a query with
no relevant document counts 1), computed here in float64 from the predictions.

Both read the same svmlight file and .query file (the parse is timed in
both), train with the same matched parameters on the same number of threads,
one run each, side by side on the same cores. Results: bench/results/rank-DATE-COMMIT.{md,json}.

    python3 bench/rank_bench.py                      # 1.05M rows, 100 trees x 63 leaves, 2 threads
    python3 bench/rank_bench.py --rows 200000 --trees 20 --no-save
    # on the GPU machine (tools/device-gbdt.sh): samebits on CUDA and on the
    # host's cores beside LightGBM on the same cores
    python3 bench/rank_bench.py --data DIR --exe build-cuda/samebits --devices cuda,cpu --threads 16 \
        --commit SHA --results-dir OUT
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from _common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "lightgbm-examples", "lambdarank_rank")
if not os.path.exists(DATA + ".train"):
    DATA = "/work/shared/data/lightgbm-examples/lambdarank_rank"

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox_word0(seed, purpose, index):
    """sb_rng_words(seed, purpose, index, 0)[0] (src/core/rng.h)."""
    c0, c1, c2, c3 = index & MASK, (index >> 32) & MASK, purpose, 0
    k0, k1 = seed & MASK, (seed >> 32) & MASK
    for r in range(10):
        if r:
            k0 = (k0 + W0) & MASK
            k1 = (k1 + W1) & MASK
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
    return c0


def read_queries(path):
    lines = open(path).read().splitlines()
    sizes = [int(v) for v in open(path + ".query").read().split()]
    out, k = [], 0
    for n in sizes:
        out.append(lines[k:k + n])
        k += n
    assert k == len(lines)
    return out


def make_set(rows, workdir):
    src = read_queries(DATA + ".train")
    path = os.path.join(workdir, "rank-%d.svm" % rows)
    if os.path.exists(path) and os.path.exists(path + ".query"):
        return path
    n, sizes = 0, []
    with open(path + ".tmp", "w") as f:
        k = 0
        while n < rows:
            u = (philox_word0(8, 0x524E4B42, k) >> 8) * 2.0 ** -24   # sb_u32_to_unit_f32
            q = src[int(u * len(src))]
            f.write("\n".join(q) + "\n")
            sizes.append(len(q))
            n += len(q)
            k += 1
    with open(path + ".query.tmp", "w") as f:
        f.write("\n".join(str(s) for s in sizes) + "\n")
    os.rename(path + ".query.tmp", path + ".query")
    os.rename(path + ".tmp", path)
    return path


def ndcg_at(k, labels, scores, sizes):
    """Mean NDCG@k over queries, LightGBM's definition; ties in score by row."""
    total, s0 = 0.0, 0
    for n in sizes:
        y, s = labels[s0:s0 + n], scores[s0:s0 + n]
        order = sorted(range(n), key=lambda i: (-s[i], i))
        ideal = sorted(y, reverse=True)
        md = sum((2.0 ** ideal[i] - 1) / math.log2(i + 2) for i in range(min(k, n)))
        dcg = sum((2.0 ** y[order[i]] - 1) / math.log2(i + 2) for i in range(min(k, n)))
        total += dcg / md if md > 0 else 1.0
        s0 += n
    return total / len(sizes)


def read_dense(path, nf):
    """A LETOR/svmlight file as a dense float64 matrix (absent entries 0, as
    LightGBM reads them); no dependency beyond NumPy."""
    import numpy as np
    lines = open(path).read().splitlines()
    x = np.zeros((len(lines), nf))
    for i, line in enumerate(lines):
        for tok in line.split("#", 1)[0].split()[1:]:
            k, v = tok.split(":")
            if k != "qid" and int(k) < nf:
                x[i, int(k)] = float(v)
    return x


def test_set():
    labels = [float(l.split(" ", 1)[0]) for l in open(DATA + ".test").read().splitlines()]
    sizes = [int(v) for v in open(DATA + ".test.query").read().split()]
    return labels, sizes


def run_samebits(path, args, workdir, device="cpu"):
    exe = args.exe or os.path.join(ROOT, "build", "samebits")
    model = os.path.join(workdir, "rank-%s.sbm" % device)
    cmd = [exe, "train", "--model", "gbdt", "--data", path, "--objective", "lambdarank", "--threads",
           str(args.threads), "--out", model, "n_estimators=%d" % args.trees, "num_leaves=%d" % args.leaves,
           "learning_rate=0.1", "max_bin=255", "min_samples_leaf=20", "min_child_weight=0.001",
           "reg_lambda=0", "lambdarank_truncation_level=30", "eval_period=0", "device=%s" % device]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        sys.exit("samebits failed: " + r.stderr)
    read = float(r.stderr.split("read in ")[1].split(" s")[0])
    fit = float(r.stderr.split(" trees in ")[1].split(" s")[0])
    digest = r.stdout.split("model digest: ")[1].split()[0] if "model digest: " in r.stdout else ""
    pred = os.path.join(workdir, "rank-pred-%s.csv" % device)
    r = subprocess.run([exe, "predict", "--model", model, "--data", DATA + ".test", "--out", pred],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("samebits predict failed: " + r.stderr)
    scores = [float(v) for v in open(pred).read().split()]
    return {"wall_s": wall, "read_s": read, "fit_s": fit, "scores": scores, "cmd": " ".join(cmd[1:]),
            "model_digest": digest}


def run_lightgbm(path, args):
    import lightgbm as lgb
    params = dict(objective="lambdarank", num_leaves=args.leaves, learning_rate=0.1, max_bin=255,
                  min_data_in_leaf=20, min_sum_hessian_in_leaf=0.001, lambda_l2=0.0,
                  lambdarank_truncation_level=30, num_threads=args.threads, verbose=-1, max_depth=-1)
    t0 = time.perf_counter()
    ds = lgb.Dataset(path, params={"verbose": -1, "max_bin": 255, "num_threads": args.threads})
    ds.construct()
    t1 = time.perf_counter()
    booster = lgb.train(params, ds, args.trees)
    t2 = time.perf_counter()
    scores = list(booster.predict(read_dense(DATA + ".test", booster.num_feature()), num_threads=args.threads))
    return {"wall_s": t2 - t0, "read_s": t1 - t0, "fit_s": t2 - t1, "scores": scores,
            "version": lgb.__version__, "params": params}


def commit(override=None):
    if override:
        return override[:7]
    return git_commit(short=True)[0] or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1050000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=63)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/samebits-bench")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--data", help="a folder holding lightgbm-examples/lambdarank_rank.* (default: ../shared/data)")
    ap.add_argument("--exe", help="the samebits CLI (default build/samebits)")
    ap.add_argument("--devices", default="cpu", help="samebits devices, comma-separated: cpu, cuda, opencl")
    ap.add_argument("--commit", help="the commit to record (where .git is not to be trusted)")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    global DATA
    if args.data:
        DATA = os.path.join(args.data, "lightgbm-examples", "lambdarank_rank")
    os.makedirs(args.workdir, exist_ok=True)
    path = make_set(args.rows, args.workdir)
    nrows = sum(int(v) for v in open(path + ".query").read().split())
    nq = len(open(path + ".query").read().split())
    labels, sizes = test_set()
    res = {}
    devices = [d for d in args.devices.split(",") if d]
    for d in devices:
        res["samebits-" + d] = run_samebits(path, args, args.workdir, d)
    res["lightgbm"] = run_lightgbm(path, args)
    for k in res:
        res[k]["ndcg@10"] = ndcg_at(10, labels, res[k].pop("scores"), sizes)
    c = commit(args.commit)
    day = datetime.date.today().isoformat()
    lg = res["lightgbm"]
    lines = [
        "# Ranking benchmark %s at %s" % (day, c), "",
        "lambdarank on %d rows in %d queries (LightGBM's ranking sample resampled by query with the "
        "counter generator; real feature rows), 300 features; %d trees x %d leaves, learning rate 0.1, "
        "255 bins, 20 rows a leaf, truncation 30; %d threads, one run each, side by side on %s (%s, %d cores "
        "shared with other work). Held out: lambdarank_rank.test (50 queries)." %
        (nrows, nq, args.trees, args.leaves, args.threads, platform.node(), platform.machine(), os.cpu_count()),
        "",
        "| library | read s | fit s | wall s | wall vs LightGBM | NDCG@10 held out |",
        "| --- | --- | --- | --- | --- | --- |",
    ] + ["| samebits %s, device %s | %.2f | %.2f | %.2f | %.2fx | %.4f |" % (
        c, d, res["samebits-" + d]["read_s"], res["samebits-" + d]["fit_s"], res["samebits-" + d]["wall_s"],
        res["samebits-" + d]["wall_s"] / lg["wall_s"], res["samebits-" + d]["ndcg@10"]) for d in devices] + [
        "| LightGBM %s | %.2f | %.2f | %.2f | 1.00x | %.4f |" % (lg["version"], lg["read_s"], lg["fit_s"],
                                                               lg["wall_s"], lg["ndcg@10"]),
        "",
        "fit-only ratio (samebits / LightGBM): %s. samebits' wall is the `samebits train` process "
        "(parse, bin, boost, write the model); LightGBM's is Dataset construction from the same file plus "
        "lgb.train." % ", ".join("%s %.2fx" % (d, res["samebits-" + d]["fit_s"] / lg["fit_s"]) for d in devices),
        "",
        "samebits model digests: %s." % ", ".join("%s %s" % (d, res["samebits-" + d]["model_digest"])
                                                  for d in devices),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        os.makedirs(args.results_dir, exist_ok=True)
        base = os.path.join(args.results_dir, "rank-%s-%s" % (day, c))
        with open(base + ".md", "w") as f:
            f.write(text)
        with open(base + ".json", "w") as f:
            json.dump({"commit": c, "rows": nrows, "queries": nq, "args": vars(args), "results": res}, f,
                      indent=1, default=str)


if __name__ == "__main__":
    main()
