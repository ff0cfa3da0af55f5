"""Issue 30's cross-leg record through the command line: an MLP on
Fashion-MNIST and a two-block byte LM, each trained at least 128 optimizer
steps, on every leg, the model files compared byte for byte (a file holds the
parameters, both AdamW/Adam moments, the step and the loss curve, so equal
files are equal trajectories).

Runs (one leg per call, one JSON line each appended to --out):
  lm   samebits train --model lm --data CORPUS --steps 128 n_layer=2 d_model=32
       n_head=2 context=32 batch_size=8 learning_rate=3e-3 random_state=0
       (CORPUS: every regular file directly under /usr/share/common-licenses,
       sorted by name, concatenated: bench/lm_bench.py's corpus). The width is
       smaller than bench/lm_bench.py's so that the emulated legs (qemu-user)
       run it in minutes; the block count is the issue's two.
  mlp  samebits train --model mlp --data FMNIST.csv task=classifier
       hidden_layer_sizes=128 activation=relu solver=adam alpha=1e-4
       batch_size=200 learning_rate_init=1e-3 max_iter=3 tol=0
       n_iter_no_change=3 random_state=0: the first 10,000 Fashion-MNIST
       training images (Debian's dataset-fashion-mnist, or --npz), each pixel
       / 255 in float32 written as its shortest round-trip decimal, the label
       last; 3 epochs of 50 batches = 150 Adam steps.

    python3 bench/legs_steps.py run --label x86-64 --threads 1 [--exe build/samebits]
        [--runner qemu-aarch64] [--device cpu|opencl|cuda] [--out FILE.jsonl]
    python3 bench/legs_steps.py report FILE.jsonl... [--out-dir bench/results]

report writes bench/results/legs-steps-DATE-COMMIT.{md,json}: per run the
model files' sha256 and whether every leg gave one file per model.
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _common  # noqa: E402
FMNIST = "/usr/share/datasets/fashion-mnist"
LM = ["n_layer=2", "d_model=32", "n_head=2", "context=32", "batch_size=8", "learning_rate=3e-3", "random_state=0"]
MLP = ["task=classifier", "hidden_layer_sizes=128", "activation=relu", "solver=adam", "alpha=1e-4", "batch_size=200",
       "learning_rate_init=1e-3", "max_iter=3", "tol=0", "n_iter_no_change=3", "random_state=0"]
ROWS = 10000


def corpus(path):
    with open(path, "wb") as f:
        f.write(_common.license_corpus()[1])


def fmnist_csv(path, npz=None):
    """The first ROWS training images as CSV (pixels / 255 in float32, label last)."""
    import numpy as np
    if npz:
        z = np.load(npz)
        X, y = z["X_train"][:ROWS].reshape(ROWS, -1), z["y_train"][:ROWS]
    else:
        with gzip.open(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")) as f:
            X = np.frombuffer(f.read()[16:], dtype=np.uint8).reshape(-1, 784)[:ROWS]
        with gzip.open(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz")) as f:
            y = np.frombuffer(f.read()[8:], dtype=np.uint8)[:ROWS]
    Xf = X.astype(np.float32) / np.float32(255)
    # 256 pixel values only: each float32's shortest round-trip decimal, looked up
    text = {int(v): repr(float(np.float32(v) / np.float32(255))) if v else "0" for v in range(256)}
    for v in range(256):  # the decimal reads back as the same float32
        assert np.float32(float(text[v])) == np.float32(v) / np.float32(255)
    with open(path, "w") as f:
        f.write(",".join("p%d" % i for i in range(784)) + ",label\n")
        for r in range(ROWS):
            f.write(",".join(text[int(v)] for v in X[r]) + ",%d\n" % int(y[r]))
    return Xf.shape


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run(a):
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    cpath, fpath = os.path.join(work, "corpus.bin"), os.path.join(work, "fmnist-10000.csv")
    if not os.path.exists(cpath):
        corpus(cpath)
    if not os.path.exists(fpath):
        fmnist_csv(fpath + ".tmp", a.npz)
        os.replace(fpath + ".tmp", fpath)
    exe = ([a.runner] if a.runner else []) + [a.exe]
    env = dict(os.environ, SAMEBITS_NUM_THREADS=str(a.threads))
    dev = [] if a.device == "cpu" else ["device=" + a.device]
    row = {"label": a.label, "threads": a.threads, "device": a.device, "exe": a.exe, "runner": a.runner or "",
           "commit": _common.git_commit(short=True)[0],
           "corpus_sha256": sha(cpath), "fmnist_csv_sha256": sha(fpath)}
    tag = "%s-%s-%d" % (a.label, a.device, a.threads)
    for name, cmd in (("lm", ["train", "--model", "lm", "--data", cpath, "--steps", "128"] + LM),
                      ("mlp", ["train", "--model", "mlp", "--data", fpath] + MLP)):
        if a.only and name not in a.only.split(","):
            continue
        out = os.path.join(work, "%s-%s.sbm" % (name, tag))
        t = time.perf_counter()
        r = subprocess.run(exe + cmd + ["--out", out] + dev, env=env, capture_output=True, text=True)
        row[name + "_seconds"] = round(time.perf_counter() - t, 2)
        if r.returncode != 0:
            row[name] = "ERROR rc=%d: %s" % (r.returncode, (r.stderr or r.stdout).strip().splitlines()[-1:])
        else:
            row[name] = sha(out)
            row[name + "_log"] = r.stdout.strip().splitlines()[-1:]
    print(json.dumps(row), flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(row) + "\n")


def report(a):
    rows = []
    for p in a.files:
        with open(p) as f:
            rows += [json.loads(ln) for ln in f if ln.strip()]
    commits = sorted({r["commit"] for r in rows})
    date = datetime.date.today().isoformat()
    same = {m: len({r.get(m) for r in rows if m in r}) == 1 and all(len(str(r.get(m, ""))) == 64 for r in rows)
            for m in ("lm", "mlp")}
    base = "legs-steps-%s-%s" % (date, "+".join(c[:8] for c in commits))
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, base + ".json"), "w") as f:
        json.dump({"date": date, "commits": commits, "lm_params": LM, "mlp_params": MLP, "rows": rows,
                   "one_file_per_model": same}, f, indent=1)
    with open(os.path.join(a.out_dir, base + ".md"), "w") as f:
        f.write("# The MLP and the two-block byte LM, 128+ steps, on every leg (issue 30; %s)\n\n" % date)
        f.write("Commits %s (the runs' sources; see the notes). Generated by bench/legs_steps.py (its docstring: "
                "the data and the commands). lm: `%s`, 128 steps. mlp: `%s` on the first 10,000 Fashion-MNIST "
                "training images: 150 Adam steps.\n\n" % (", ".join(commits), " ".join(LM), " ".join(MLP)))
        f.write("| leg | device | threads | lm model file sha256 (first 16) | s | mlp model file sha256 (first 16) | s |\n")
        f.write("| --- | --- | ---: | --- | ---: | --- | ---: |\n")
        for r in rows:
            f.write("| %s | %s | %d | `%s` | %s | `%s` | %s |\n" % (
                r["label"], r["device"], r["threads"], str(r.get("lm", "not run"))[:16], r.get("lm_seconds", ""),
                str(r.get("mlp", "not run"))[:16], r.get("mlp_seconds", "")))
        f.write("\nOne model file for every leg: lm %s, mlp %s.\n" % ("yes" if same["lm"] else "NO",
                                                                   "yes" if same["mlp"] else "NO"))
    print(base, same)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--label", required=True)
    r.add_argument("--exe", default=os.path.join(HERE, "..", "build", "samebits"))
    r.add_argument("--runner", default="")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--device", default="cpu")
    r.add_argument("--only", default="", help="lm, mlp or both (default)")
    r.add_argument("--npz", default="", help="a Fashion-MNIST .npz (bench/fashion_mnist_npz.py) instead of Debian's")
    r.add_argument("--work", default=os.path.join(HERE, "..", "build", "legs-steps"))
    r.add_argument("--out", default=os.path.join(HERE, "..", "build", "legs-steps", "runs.jsonl"))
    p = sub.add_parser("report")
    p.add_argument("files", nargs="+")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    (run if a.cmd == "run" else report)(a)


if __name__ == "__main__":
    sys.exit(main())
