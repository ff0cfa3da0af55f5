"""MLPClassifier trained on a GPU (device=cuda and device=opencl) beside the
CPU's bits and beside PyTorch (issue 30: the same loss, parameters and
predictions on every device; speed against PyTorch's float32 eager with
deterministic algorithms on, the aim within 3x). For the lead's GPU run; not
run on this workplace (no GPU, no PyTorch).

Workload: bench/mlp_bench.py's (bench/results/mlp-*): the first --rows
Fashion-MNIST training images (default 10,000; 60,000 is the whole set) and
the 10,000 test images, each pixel / 255 as float32; hidden (--hidden,) =
(128,), relu, adam, alpha 1e-4, batch 200, learning_rate_init 1e-3, --epochs
15 with tol 0 (every epoch runs), shuffle, random_state --seed.

Data: --data, either the .npz that bench/fashion_mnist_npz.py writes (uint8
X_train, y_train, X_test, y_test: carry it to a machine without the Debian
package) or a directory of the IDX files (default
/usr/share/datasets/fashion-mnist, then build/fashion-mnist.npz).

samebits: the fit on device=cpu at --threads (the reference), then on each of
--devices (default cuda, opencl), each after an untimed one-epoch fit on 200
rows that opens the device and builds its program. Each device's model digest,
loss curve, coefs_, intercepts_ and test probabilities must be the CPU's
bytes: the run prints whether they are and exits 1 where any differs.
epochs/s = epochs / the fit's wall time (the upload of the rows included).

PyTorch (when importable and CUDA is present): the same architecture
(Linear(784, 128), ReLU, Linear(128, 10)), softmax cross-entropy plus
scikit-learn's penalty alpha / 2 * sum ||W||^2 / batch rows, torch.optim.Adam
(lr 1e-3, betas 0.9/0.999, eps 1e-8), batch 200 of a torch.randperm order per
epoch, the rows resident on the GPU, float32 (TF32 off),
torch.use_deterministic_algorithms(True) with CUBLAS_WORKSPACE_CONFIG=:4096:8;
the epoch's loss read once an epoch (as samebits reads its batches' losses).
Eager, and torch.compile'd where it compiles (--no-compile skips it); one
untimed epoch first, then --epochs timed. Its own initialization and order: its
accuracy is beside, not equal.

Writes bench/results/mlp-gpu-DATE-COMMIT.{json,md} (--out-dir elsewhere;
--no-save none) and prints the table.

    python3 bench/fashion_mnist_npz.py     # here: build/fashion-mnist.npz (31 MB), carried
    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 bench/mlp_gpu_bench.py \\
        --data build/fashion-mnist.npz [--rows 60000] [--out-dir $OUT]
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch initializes cuBLAS

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
import samebits  # noqa: E402

DEBIAN = "/usr/share/datasets/fashion-mnist"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="the .npz of bench/fashion_mnist_npz.py or a directory of IDX files")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="samebits' CPU reference fit")
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile row")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--no-save", action="store_true")
    return ap.parse_args()


def _idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        b = f.read()
    dims = b[3]
    shape = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(A):
    """(X, y, Xt, yt, source, sha256 of the .npz or None): float32 pixels / 255."""
    cands = [A.data] if A.data else [DEBIAN, os.path.join(REPO, "build", "fashion-mnist.npz")]
    for src in cands:
        if src and os.path.isfile(src):
            with open(src, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            z = np.load(src, allow_pickle=False)
            arr = {k: z[k] for k in ("X_train", "y_train", "X_test", "y_test")}
            break
        if src and os.path.isdir(src):
            def one(stem):
                for name in (stem + ".gz", stem):
                    if os.path.exists(os.path.join(src, name)):
                        return _idx(os.path.join(src, name))
                raise FileNotFoundError(os.path.join(src, stem))
            try:
                arr = {"X_train": one("train-images-idx3-ubyte"), "y_train": one("train-labels-idx1-ubyte"),
                       "X_test": one("t10k-images-idx3-ubyte"), "y_test": one("t10k-labels-idx1-ubyte")}
            except FileNotFoundError:
                continue
            digest = None
            break
    else:
        raise SystemExit("no Fashion-MNIST at %s: run bench/fashion_mnist_npz.py where the Debian package is, carry "
                         "build/fashion-mnist.npz and pass --data" % " or ".join(c for c in cands if c))
    n = A.rows
    X = arr["X_train"][:n].reshape(n, -1).astype(np.float32) / np.float32(255)
    y = arr["y_train"][:n].astype(np.int64)
    Xt = arr["X_test"].reshape(len(arr["X_test"]), -1).astype(np.float32) / np.float32(255)
    yt = arr["y_test"].astype(np.int64)
    return X, y, Xt, yt, src, digest


def sb_params(A, device, epochs=None):
    e = A.epochs if epochs is None else epochs
    return dict(hidden_layer_sizes=(A.hidden,), activation="relu", solver="adam", alpha=1e-4, batch_size=A.batch,
                learning_rate_init=1e-3, max_iter=e, tol=0.0, n_iter_no_change=e, shuffle=True,
                random_state=A.seed, device=device)


def sb_run(A, device, data):
    """One samebits fit on device (after an untimed warm-up fit off the CPU):
    its time, epochs/s, digest, test accuracy and the arrays compared."""
    X, y, Xt, yt = data
    row = {"library": "samebits", "device": device}
    try:
        if device != "cpu":
            samebits.MLPClassifier(**sb_params(A, device, 1)).fit(X[:200], y[:200])
        t = time.perf_counter()
        m = samebits.MLPClassifier(**sb_params(A, device)).fit(X, y)
        row["fit_s"] = time.perf_counter() - t
    except samebits.SameBitsError as e:
        row["refused"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(row), flush=True)
        return row, None
    proba = m.predict_proba(Xt)
    row.update(epochs=int(m.n_iter_), epochs_per_s=m.n_iter_ / row["fit_s"], model_digest=m.model_digest_,
               final_loss=float(m.loss_), test_accuracy=float(np.mean(np.argmax(proba, axis=1) == yt)))
    arrays = {"loss_curve": np.asarray(m.loss_curve_, dtype=np.float64).tobytes(),
              "params": b"".join(a.tobytes() for a in m.coefs_ + m.intercepts_), "test_proba": proba.tobytes()}
    print(json.dumps(row), flush=True)
    return row, arrays


def torch_run(A, data, compiled):
    """PyTorch's float32 fit of the same network, deterministic algorithms on."""
    import torch
    import torch.nn.functional as F
    row = {"library": "torch", "device": "cuda", "mode": "compile" if compiled else "eager"}
    if not torch.cuda.is_available():
        row["refused"] = "no CUDA device"
        return row
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(A.seed)
    X, y, Xt, yt = data
    dev = torch.device("cuda")
    Xg, yg = torch.from_numpy(X).to(dev), torch.from_numpy(y).to(dev)
    Xtg = torch.from_numpy(Xt).to(dev)
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], A.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(A.hidden, 10)).to(dev)
    weights = [model[0].weight, model[2].weight]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    alpha, n, bs = 1e-4, len(X), A.batch

    def step(xb, yb):
        logits = model(xb)
        loss = F.cross_entropy(logits, yb) + (alpha / (2 * xb.shape[0])) * sum((w * w).sum() for w in weights)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    if compiled:
        try:
            step = torch.compile(step)
        except Exception as e:  # noqa: BLE001
            row["refused"] = "torch.compile: %s" % e
            return row
    gen = torch.Generator(device=dev).manual_seed(A.seed)

    def epoch():
        perm = torch.randperm(n, device=dev, generator=gen)
        acc = torch.zeros((), device=dev)
        for b0 in range(0, n, bs):
            idx = perm[b0:b0 + bs]
            acc = acc + step(Xg[idx], yg[idx]) * idx.shape[0]
        return float(acc) / n  # one read an epoch

    try:
        epoch()  # untimed: cuBLAS handles, kernels, compilation
        torch.cuda.synchronize()
        t = time.perf_counter()
        losses = [epoch() for _ in range(A.epochs)]
        torch.cuda.synchronize()
        row["fit_s"] = time.perf_counter() - t
    except Exception as e:  # noqa: BLE001
        row["refused"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        print(json.dumps(row), flush=True)
        return row
    with torch.no_grad():
        pred = model(Xtg).argmax(1).cpu().numpy()
    row.update(epochs=A.epochs, epochs_per_s=A.epochs / row["fit_s"], final_loss=losses[-1],
               test_accuracy=float(np.mean(pred == yt)), version=torch.__version__,
               gpu=torch.cuda.get_device_name(0))
    print(json.dumps(row), flush=True)
    return row


def header(A, src, digest):
    h = None
    try:
        from _common import run_header
        h = run_header("mlp_gpu_bench.py", A.threads, devices=["cpu"] + A.devices.split(","))
    except Exception as e:  # noqa: BLE001  (a machine without scipy or git: a smaller header)
        from _common import git_commit, machine_line, loadavg
        commit, dirty = git_commit()
        h = {"commit": commit, "dirty": dirty, "date": datetime.date.today().isoformat(), "machine": machine_line(),
             "versions": {"samebits": samebits.__version__, "numpy": np.__version__,
                          "python": platform.python_version()},
             "command": "python3 bench/mlp_gpu_bench.py " + " ".join(sys.argv[1:]), "loadavg_start": loadavg(),
             "header_note": "linear_bench's header unavailable: %s" % e}
    try:
        h["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                                  capture_output=True, text=True).stdout.strip()
    except OSError:
        h["gpu"] = None
    h["workload"] = {"data": src, "npz_sha256": digest, "rows": A.rows, "test_rows": 10000, "hidden": A.hidden,
                     "epochs": A.epochs, "batch": A.batch, "seed": A.seed, "solver": "adam", "alpha": 1e-4,
                     "learning_rate_init": 1e-3, "activation": "relu", "cpu_threads": A.threads}
    return h


def write_md(h, rows, path, A, same):
    eager = next((r for r in rows if r.get("library") == "torch" and r.get("mode") == "eager" and "fit_s" in r), None)
    out = ["# MLPClassifier on a GPU beside the CPU's bits and PyTorch (issue 30)", "",
           "Commit `%s`%s, %s; %s; GPU %s." % ((h.get("commit") or "?")[:7], " (dirty)" if h.get("dirty") else "",
                                               h["date"], h["machine"], h.get("gpu")),
           "Command: `%s`." % h["command"],
           "Fashion-MNIST, %d training rows, 10,000 test rows, 784 float32 features; hidden (%d,), relu, adam, "
           "alpha 1e-4, batch %d, learning_rate_init 1e-3, %d epochs (tol 0), seed %d. samebits' CPU reference at %d "
           "threads. PyTorch: float32, TF32 off, deterministic algorithms on, its own initialization and order." % (
               A.rows, A.hidden, A.batch, A.epochs, A.seed, A.threads), "",
           "| library | device | mode | fit s | epochs/s | samebits time / torch eager | test accuracy | final loss | "
           "model digest (first 12) | identical to the CPU |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        if "refused" in r:
            out.append("| %s | %s | %s | refused: %s | | | | | | |" % (r["library"], r["device"], r.get("mode", ""),
                                                                      r["refused"][:100]))
            continue
        ratio = "%.2f" % (r["fit_s"] / eager["fit_s"]) if eager and r["library"] == "samebits" else ""
        out.append("| %s | %s | %s | %.3f | %.2f | %s | %.4f | %.4f | %s | %s |" % (
            r["library"], r["device"], r.get("mode", ""), r["fit_s"], r["epochs_per_s"], ratio, r["test_accuracy"],
            r["final_loss"], ("`%s`" % r["model_digest"][:12]) if "model_digest" in r else "",
            {True: "yes", False: "NO", None: ""}[r.get("identical_to_cpu")]))
    out += ["", "Every device's model digest, loss curve, parameters and test probabilities the CPU's bytes: %s." % (
        "yes" if same else "NO"), "Load average at the start %s." % (h.get("loadavg_start"),)]
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    A = parse_args()
    X, y, Xt, yt, src, digest = load(A)
    data = (X, y, Xt, yt)
    h = header(A, src, digest)
    samebits.set_num_threads(A.threads)
    rows = []
    ref_row, ref = sb_run(A, "cpu", data)
    ref_row["identical_to_cpu"] = None
    rows.append(ref_row)
    same = ref is not None
    for dev in [d for d in A.devices.split(",") if d]:
        row, arrays = sb_run(A, dev, data)
        if arrays is not None and ref is not None:
            row["identical_to_cpu"] = row["model_digest"] == ref_row["model_digest"] and all(
                arrays[k] == ref[k] for k in ref)
            row["identical_parts"] = {k: arrays[k] == ref[k] for k in ref}
            same = same and row["identical_to_cpu"]
        else:
            same = False
        rows.append(row)
    if not A.no_torch:
        try:
            import torch  # noqa: F401
            for compiled in ([False] if A.no_compile else [False, True]):
                rows.append(torch_run(A, data, compiled))
        except ImportError as e:
            rows.append({"library": "torch", "device": "cuda", "mode": "eager", "refused": "not importable: %s" % e})
    eager = next((r for r in rows if r.get("library") == "torch" and r.get("mode") == "eager" and "fit_s" in r), None)
    for r in rows:
        if eager and r["library"] == "samebits" and "fit_s" in r:
            r["time_vs_torch_eager"] = r["fit_s"] / eager["fit_s"]
    h["loadavg_end"] = list(os.getloadavg())
    print()
    print("%-9s %-7s %-8s %9s %9s %12s %9s %14s %s" % ("library", "device", "mode", "fit_s", "epochs/s",
                                                     "vs_torch_eg", "test_acc", "digest", "identical_to_cpu"))
    for r in rows:
        if "refused" in r:
            print("%-9s %-7s %-8s refused: %s" % (r["library"], r["device"], r.get("mode", ""), r["refused"][:120]))
            continue
        print("%-9s %-7s %-8s %9.3f %9.2f %12s %9.4f %14s %s" % (
            r["library"], r["device"], r.get("mode", ""), r["fit_s"], r["epochs_per_s"],
            "%.2f" % r["time_vs_torch_eager"] if "time_vs_torch_eager" in r else "", r["test_accuracy"],
            r.get("model_digest", "")[:12], {True: "yes", False: "NO", None: "(reference)" if r["library"] ==
                                                 "samebits" else ""}[r.get("identical_to_cpu")]))
    print("every device the CPU's bytes (digest, loss curve, parameters, test probabilities):", "yes" if same else "NO")
    if not A.no_save:
        os.makedirs(A.out_dir, exist_ok=True)
        stem = os.path.join(A.out_dir, "mlp-gpu-%s-%s" % (h["date"], (h.get("commit") or "nocommit")[:7]))
        with open(stem + ".json", "w") as f:
            json.dump({"header": h, "rows": rows, "identical_on_every_device": same}, f, indent=1)
        write_md(h, rows, stem + ".md", A, same)
        print("wrote", stem + ".json", stem + ".md")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
