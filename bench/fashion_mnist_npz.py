"""Fashion-MNIST as one compressed .npz for a machine without the Debian
package (the GPU machine of bench/mlp_gpu_bench.py has no internet): the four
IDX files of dataset-fashion-mnist (/usr/share/datasets/fashion-mnist) read
as they are, the images uint8 (60,000 and 10,000 of 28 x 28), the labels
uint8, saved as X_train, y_train, X_test, y_test (about 30 MB; np.load reads
it with no pickle). The bench turns pixels into float32 / 255 itself, as
bench/mlp_bench.py does, so the two read the same numbers.

    python3 bench/fashion_mnist_npz.py [--data /usr/share/datasets/fashion-mnist] [--out build/fashion-mnist.npz]

Prints the file's size and SHA-256 (the bench records the digest it read).
"""
import argparse
import gzip
import hashlib
import os

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    """An IDX file (gzip'ed or not) as a numpy uint8 array of its shape."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        b = f.read()
    if b[0] != 0 or b[1] != 0 or b[2] != 8:
        raise SystemExit("%s: not an IDX file of unsigned bytes" % path)
    dims = b[3]
    shape = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_dir(d):
    """The four arrays from a directory of the IDX files (.gz or not)."""
    def one(stem):
        for name in (stem + ".gz", stem):
            p = os.path.join(d, name)
            if os.path.exists(p):
                return idx(p)
        raise SystemExit("%s: no %s(.gz) (Debian: apt-get install dataset-fashion-mnist)" % (d, stem))
    return {"X_train": one("train-images-idx3-ubyte"), "y_train": one("train-labels-idx1-ubyte"),
            "X_test": one("t10k-images-idx3-ubyte"), "y_test": one("t10k-labels-idx1-ubyte")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DATA, help="the directory of the IDX files")
    ap.add_argument("--out", default="build/fashion-mnist.npz")
    a = ap.parse_args()
    arrays = load_dir(a.data)
    assert arrays["X_train"].shape == (60000, 28, 28) and arrays["X_test"].shape == (10000, 28, 28)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    np.savez_compressed(a.out, **arrays)
    with open(a.out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print("%s: %.1f MB, sha256 %s" % (a.out, os.path.getsize(a.out) / 1e6, digest))


if __name__ == "__main__":
    main()
