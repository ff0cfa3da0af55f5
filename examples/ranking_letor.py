#!/usr/bin/env python3
"""Learning to rank on LightGBM's LETOR-format ranking sample.

    make -j2 && python3 examples/ranking_letor.py [--data DIR] [--trees 100] [--lightgbm]

The sample (lambdarank_rank.{train,test} with .query files) is LightGBM's
format: a relevance label first, then libsvm-style index:value features; the
query sizes are in the .query file beside each. This script reads them in
plain Python, trains samebits' GradientBoostingRanker (lambdarank, NDCG@10 on
the test queries logged every 10 trees), and with --lightgbm trains LightGBM's
lambdarank with the same parameters for comparison. The same model comes from
the CLI:

    samebits train --model gbdt --data DIR/lambdarank_rank.train --objective lambdarank \\
        n_estimators=100 num_leaves=31 min_samples_leaf=50
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpy as np  # noqa: E402
import samebits  # noqa: E402

DEFAULT = "/work/shared/data/lightgbm-examples"


def read_letor(path, nfeat=None):
    """(X float32, y float32, query sizes) of a LETOR/libsvm file and its .query file."""
    rows, labels, width = [], [], 0
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        labels.append(float(line[0]))
        feats = {}
        for tok in line[1:]:
            k, v = tok.split(":")
            if k == "qid":
                continue
            feats[int(k)] = float(v)
            width = max(width, int(k) + 1)
        rows.append(feats)
    width = max(width, nfeat or 0)
    X = np.zeros((len(rows), width), dtype=np.float32)
    for i, feats in enumerate(rows):
        for k, v in feats.items():
            X[i, k] = v
    sizes = [int(v) for v in open(path + ".query").read().split()]
    return X, np.asarray(labels, dtype=np.float32), sizes


def ndcg_at(k, y, s, sizes):
    """Mean NDCG@k (LightGBM's definition: gains 2^y - 1, a query without relevant documents counts 1)."""
    total, s0 = 0.0, 0
    for n in sizes:
        yy, ss = y[s0:s0 + n], s[s0:s0 + n]
        order = sorted(range(n), key=lambda i: (-ss[i], i))
        ideal = sorted(yy, reverse=True)
        md = sum((2.0 ** ideal[i] - 1) / math.log2(i + 2) for i in range(min(k, n)))
        dcg = sum((2.0 ** yy[order[i]] - 1) / math.log2(i + 2) for i in range(min(k, n)))
        total += dcg / md if md > 0 else 1.0
        s0 += n
    return total / len(sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--min-leaf", type=int, default=50)
    ap.add_argument("--min-hessian", type=float, default=1e-3)
    ap.add_argument("--lightgbm", action="store_true", help="also train LightGBM's lambdarank")
    args = ap.parse_args()
    base = os.path.join(args.data, "lambdarank_rank")
    Xtr, ytr, qtr = read_letor(base + ".train")
    Xte, yte, qte = read_letor(base + ".test", Xtr.shape[1])
    Xte = Xte[:, :Xtr.shape[1]]
    print("train: %d rows, %d queries, %d features; test: %d rows, %d queries"
          % (Xtr.shape[0], len(qtr), Xtr.shape[1], Xte.shape[0], len(qte)))
    ranker = samebits.GradientBoostingRanker(n_estimators=args.trees, num_leaves=args.leaves, learning_rate=0.1,
                                             min_samples_leaf=args.min_leaf, min_child_weight=args.min_hessian,
                                             eval_metric="ndcg@10", verbose=10)
    ranker.fit(Xtr, ytr, group=qtr, eval_set=(Xte, yte), eval_group=qte)
    s = np.asarray(ranker.predict(Xte))
    print("samebits: NDCG@10 on the test queries %.4f (model digest %s)" % (ndcg_at(10, yte, s, qte),
                                                                          ranker.digest()))
    if args.lightgbm:
        import lightgbm as lgb
        p = dict(objective="lambdarank", learning_rate=0.1, num_leaves=args.leaves, min_data_in_leaf=args.min_leaf,
                 min_sum_hessian_in_leaf=args.min_hessian, lambda_l2=0.0, max_bin=255, verbose=-1)
        b = lgb.train(p, lgb.Dataset(Xtr, ytr, group=qtr), args.trees)
        print("LightGBM %s: NDCG@10 on the test queries %.4f" % (lgb.__version__,
                                                                ndcg_at(10, yte, b.predict(Xte), qte)))


if __name__ == "__main__":
    main()
