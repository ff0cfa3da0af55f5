#!/usr/bin/env python3
"""k-means on a GPU beside scikit-learn on the host's cores (issue 23's speed
shape), with PyTorch's Lloyd iterations on the same GPU as a brute-force
reference.

    python3 bench/cluster_gpu_bench.py [--devices cuda,opencl] [--scale 1.0] [--seeds 0,1,2]
                                       [--identity-rows 200000] [--out FILE.json] [--md FILE.md]

Workload (synthetic, the shape of the issue and of cuML's published figure):
64 blob centers drawn from numpy's default_rng(seed) uniform in [-10, 10]^128,
5,000,000 x 128 float32 rows around them (unit normal noise) at --scale 1;
KMeans(n_clusters=64) with scikit-learn's defaults (k-means++, n_init=1,
max_iter=300, tol=1e-4) in both libraries, random_state=seed.

Timed from the host array to the fitted estimator (samebits: the data's
conversion and checks, the upload, the fit; scikit-learn: its fit on every host
core). Reported per seed: both times, the ratio scikit-learn / samebits, the
iterations, inertia and the adjusted Rand index between the two labelings.
PyTorch's reference: Lloyd iterations written with torch.cdist + argmin +
index_add on the GPU in float32 (no identity promise), from samebits' initial
centers for the same number of iterations; its time per iteration is put beside
samebits' (fit time / n_iter, an upper bound: it includes the seeding).

Identity: every device's model digest at each seed (cuda == opencl), and the
CPU's at --identity-rows rows (a prefix of the data, every device the same
bytes), plus a wide case (60,000 x 784, 10 clusters: more centers than one
chunk of the device's local memory holds) on every device.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from _common import git_commit  # noqa: E402


def blobs(n, d, k, seed):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, size=(k, d)).astype(np.float32)
    lab = rng.integers(0, k, size=n)
    x = rng.standard_normal(size=(n, d), dtype=np.float32)
    x += centers[lab]
    return x, lab


def torch_lloyd(x, init, iters):
    import torch
    dev = torch.device("cuda")
    xt = torch.from_numpy(x).to(dev)
    c = torch.from_numpy(np.ascontiguousarray(init)).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    k, d = c.shape
    for _ in range(iters):
        lab = torch.cdist(xt, c).argmin(dim=1)
        s = torch.zeros((k, d), device=dev).index_add_(0, lab, xt)
        cnt = torch.bincount(lab, minlength=k).clamp(min=1).to(torch.float32)
        c = s / cnt[:, None]
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters


def gpu_facts():
    """(machine, versions) of a GPU bench's record: the GPU and driver as nvidia-smi names
    them, the host's cores and platform; samebits', scikit-learn's, NumPy's and (where
    present) PyTorch's versions."""
    import sklearn
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        gpu = "none (nvidia-smi absent)"
    versions = {"samebits": getattr(samebits, "__version__", "?"), "sklearn": sklearn.__version__,
                "numpy": np.__version__}
    try:
        import torch
        versions["torch"] = torch.__version__
    except Exception:
        pass
    return {"gpu": gpu, "host_cpus": os.cpu_count(), "platform": platform.platform()}, versions


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def report_head(res, title, script, threads):
    """A GPU bench report's first lines: its title with the commit, the machine, the
    versions and the command (the script's docstring says the rest)."""
    return [f"# {title} ({res['commit'][:7]})", "",
            f"- commit `{res['commit']}`; GPU {res['machine']['gpu']}; {res['machine']['host_cpus']} host cores "
            f"({threads}); {res['machine']['platform']}",
            f"- versions: {res['versions']}",
            f"- command: `python3 bench/{script}` (bench/{script}'s docstring: workloads, timing, identity)"]


def write_outputs(out, md, res, text):
    """res as JSON to out and text to md (each when named), then text on standard output."""
    if out:
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
    if md:
        with open(md, "w") as f:
            f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--identity-rows", type=int, default=200000)
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--commit", help="the sources' commit, where the checkout's own HEAD is not it (the device copy)")
    a = ap.parse_args()
    from sklearn.cluster import KMeans as SK
    from sklearn.metrics import adjusted_rand_score
    commit = a.commit or git_commit()[0]
    devices = [d for d in a.devices.split(",") if d]
    n, d, k = int(5_000_000 * a.scale), 128, 64
    rows = []
    identity = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        x, _ = blobs(n, d, k, seed)
        row = {"seed": seed, "rows": n}
        for dev in devices:
            t0 = time.perf_counter()
            m = samebits.KMeans(n_clusters=k, random_state=seed, device=dev).fit(x)
            row[dev] = {"s": time.perf_counter() - t0, "n_iter": int(m.n_iter_), "inertia": float(m.inertia_),
                        "digest": m.model_digest_}
            lab_sb = np.asarray(m.labels_)
            print(seed, dev, row[dev], flush=True)
        t0 = time.perf_counter()
        sk = SK(n_clusters=k, random_state=seed, n_init=1).fit(x)
        row["sklearn"] = {"s": time.perf_counter() - t0, "n_iter": int(sk.n_iter_), "inertia": float(sk.inertia_)}
        row["ari_sb_sklearn"] = float(adjusted_rand_score(sk.labels_, lab_sb))
        print(seed, "sklearn", row["sklearn"], "ari", row["ari_sb_sklearn"], flush=True)
        try:
            # PyTorch's Lloyd iterations from k-means++ centers of samebits' own seeding
            # (the first iteration's centers are not exposed; its fitted centers serve: the
            # per-iteration cost does not depend on where the centers are)
            row["torch_s_per_iter"] = torch_lloyd(x, np.asarray(m.cluster_centers_, dtype=np.float32), 20)
        except Exception as e:  # no torch or no GPU: recorded as absent
            row["torch_s_per_iter"] = None
            row["torch_error"] = str(e)[:200]
        rows.append(row)
        # identity with the CPU on a prefix (the CPU fit of all rows is long on these cores)
        xi = np.ascontiguousarray(x[: a.identity_rows])
        dig = {dv: samebits.KMeans(n_clusters=k, random_state=seed, device=dv).fit(xi).model_digest_
               for dv in ["cpu"] + devices}
        identity.append({"case": f"blobs {a.identity_rows} x {d}, k {k}, seed {seed}", "digests": dig,
                         "equal": len(set(dig.values())) == 1})
        print(identity[-1], flush=True)
        del x
    xw, _ = blobs(60000, 784, 10, 7)
    xw = np.abs(xw) / 20.0
    w = np.random.default_rng(1).uniform(0, 2, size=len(xw)).astype(np.float32)
    for kw in [dict(n_clusters=10, random_state=0), dict(n_clusters=10, random_state=1, init="random", n_init=3)]:
        dig = {dv: samebits.KMeans(**kw, device=dv).fit(xw, sample_weight=w).model_digest_ for dv in ["cpu"] + devices}
        identity.append({"case": f"wide 60000 x 784 weighted, {kw}", "digests": dig, "equal": len(set(dig.values())) == 1})
        print(identity[-1], flush=True)
    res = {"bench": "cluster-gpu", "commit": commit, "scale": a.scale, "rows": rows, "identity": identity}
    res["machine"], res["versions"] = gpu_facts()
    write_outputs(a.out, a.md, res, report(res, devices))


def report(res, devices):
    med = median
    L = report_head(res, "k-means on the H200 beside scikit-learn", "cluster_gpu_bench.py",
                    "scikit-learn's threads: all of them") + [
         "- KMeans(n_clusters=64), scikit-learn's defaults in both (k-means++, n_init=1, max_iter=300, tol=1e-4), "
         f"{res['rows'][0]['rows']} x 128 float32 blobs", "",
         "| seed | " + " | ".join(f"samebits {d} s (n_iter)" for d in devices) +
         " | scikit-learn s (n_iter) | speedup " + " / ".join(devices) +
         " | inertia samebits / scikit-learn | ARI between | torch s/iter | samebits s/iter (" + devices[0] + ") |",
         "| --- " * (len(devices) + 7) + "|"]
    for r in res["rows"]:
        sk = r["sklearn"]
        L.append(f"| {r['seed']} | " + " | ".join(f"{r[d]['s']:.3f} ({r[d]['n_iter']})" for d in devices) +
                 f" | {sk['s']:.3f} ({sk['n_iter']}) | " + " / ".join(f"{sk['s'] / r[d]['s']:.1f}x" for d in devices) +
                 f" | {r[devices[0]]['inertia']:.6g} / {sk['inertia']:.6g} | {r['ari_sb_sklearn']:.4f} | " +
                 (f"{r['torch_s_per_iter']:.4f}" if r.get("torch_s_per_iter") else "-") +
                 f" | {r[devices[0]]['s'] / r[devices[0]]['n_iter']:.4f} |")
    for d in devices:
        L.append("")
        L.append(f"Median speedup on {d}: {med([r['sklearn']['s'] / r[d]['s'] for r in res['rows']]):.1f}x "
                 "(the issue's target: at least 20x)")
    L += ["", "Identity (model digests):", ""]
    for i in res["identity"]:
        L.append(f"- {i['case']}: {'equal' if i['equal'] else 'DIFFER'} {i['digests']}")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
