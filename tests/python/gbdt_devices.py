"""Helpers of the gradient boosting device tests (test_py_constraints.py,
test_py_dart.py, test_py_init_score.py): which devices to compare, a child
Python's environment and its digests by thread count, a model's trees."""
import json
import os
import subprocess
import sys

import numpy as np

import samebits

PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def child_env(threads):
    """The environment of a child Python: this package's source first, threads set."""
    return dict(os.environ, SAMEBITS_NUM_THREADS=threads,
                PYTHONPATH=os.pathsep.join([PYDIR] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def digests_by_threads(code, threads=("1", "2", "5")):
    """The stripped standard output of a child Python running code at each
    thread count (each child must succeed), as a set: one member when every
    thread count printed the same digest."""
    outs = set()
    for t in threads:
        r = subprocess.run([sys.executable, "-c", code], env=child_env(t), capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout.strip())
    return outs


def devices():
    """The devices compared with the CPU: SAMEBITS_GBDT_DEVICES when set (the
    GPU run names cuda,opencl,cpu-batched), else cpu-batched and OpenCL where a
    platform is."""
    if os.environ.get("SAMEBITS_GBDT_DEVICES"):
        return ["cpu"] + os.environ["SAMEBITS_GBDT_DEVICES"].split(",")
    out = ["cpu", "cpu-batched"]
    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    try:
        samebits.GradientBoostingRegressor(n_estimators=1, device="opencl").fit(X, X[:, 0])
        out.append("opencl")
    except Exception:  # no OpenCL platform here: the CPU legs only
        pass
    return out


def trees(m):
    """A fitted gradient boosting model's trees, as its JSON dump lists them."""
    d = m.dump_model("json")
    return (json.loads(d) if isinstance(d, str) else d)["trees"]
