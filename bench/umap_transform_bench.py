"""UMAP.transform beside umap-learn's (seeded) on scikit-learn's digits: fit
on the first 1,500 rows, embed the other 297, and score the new rows by the
15-NN accuracy of their labels against the training embedding's labels, plus
the trustworthiness (k = 15) of the new rows' embedding. One run, the same
cores; umap-learn installed by the caller (pip install umap-learn).

    SAMEBITS_LIB=build/libsamebits.so PYTHONPATH=python python3 bench/umap_transform_bench.py
"""
import json
import os
import time

import numpy as np
from _common import git_commit


def main():
    import samebits
    import umap
    from sklearn.datasets import load_digits
    from sklearn.manifold import trustworthiness
    from sklearn.neighbors import KNeighborsClassifier
    commit = git_commit(short=7)[0]
    d = load_digits()
    x, y = d.data, d.target
    x = x.astype(np.float32)
    xt, yt, xn, yn = x[:1500], y[:1500], x[1500:], y[1500:]
    rec = {"bench": "umap-transform", "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "data": "scikit-learn digits: fit on rows 0..1499, transform rows 1500..1796", "peers": {}}
    umap.UMAP(random_state=42).fit(xt[:300]).transform(xn[:10])  # numba compile outside the timing
    for name, make in (("samebits", lambda: samebits.UMAP(random_state=42)), ("umap_learn", lambda: umap.UMAP(random_state=42))):
        u = make().fit(xt)
        t0 = time.perf_counter()
        en = u.transform(xn)
        dt = time.perf_counter() - t0
        acc = float(KNeighborsClassifier(n_neighbors=15).fit(u.embedding_, yt).score(en, yn))
        rec["peers"][name] = {"transform_s": dt, "knn15_accuracy_new_rows": acc,
                              "trustworthiness_k15_new_rows": float(trustworthiness(xn, en, n_neighbors=15))}
    rec["peers"]["umap_learn"]["version"] = umap.__version__
    os.makedirs("bench/results", exist_ok=True)
    with open("bench/results/umap-transform-%s-%s.json" % (rec["date"], commit), "w") as f:
        json.dump(rec, f, indent=1)
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
