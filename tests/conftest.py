"""Shared helpers for the integration tests: where each leg's build lives and
how to run its binaries (natively, or under qemu-user for the other CPUs).

`make test` builds every leg and arm before pytest starts; a missing build is a
test failure (never a skip), so nothing can pass by not running."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# leg name -> (build directory, command prefix)
LEGS = {
    "x86_64": ("build", []),
    "aarch64": ("build-aarch64", ["qemu-aarch64"]),
    "s390x": ("build-s390x", ["qemu-s390x"]),
}
THREAD_COUNTS = (1, 2, 7)
FIXTURES = ("profile-core", "logit-train", "gbdt-regression", "gbdt-binary", "gbdt-multiclass",
            "gbdt-extremes", "gbdt-constant", "gbdt-one-class", "gbdt-many-classes", "gbdt-missing-shift", "gbdt-refusals",
            "gbdt-overflow", "gbdt-objectives", "gbdt-continue", "gbdt-constraints", "gbdt-dart", "gbdt-categorical", "gbdt-valid-weights", "gbdt-rowwise", "gbdt-lambdarank", "gbdt-rank-pairwise",
            "forest-rf-classes", "forest-rf-entropy", "forest-et-regression", "forest-isolation",
            "forest-rf-weighted", "forest-et-weighted", "forest-isolation-weighted", "forest-warm-start", "explain-trees", "linalg-gemm", "linalg-reduce", "linalg-solve", "linear-fit",
            "kmeans-fit", "knn-fit", "kde-fit", "svm-fit", "dbscan-fit", "agglomerative-fit", "spectral-fit", "ets-fit",
            "arima-fit", "umap-fit", "gp-fit", "mlp-fit", "lm-fit")


def build_dir(leg, sabotage=None):
    d = LEGS[leg][0]
    if sabotage:
        d += "-sabotage-" + sabotage
    return ROOT / d


def run_bin(leg, name, args, sabotage=None, env=None, timeout=600):
    """Run build binary `name` of a leg; returns CompletedProcess (text)."""
    exe = build_dir(leg, sabotage) / name
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run 'make test' (it builds every leg and arm)")
    full_env = dict(os.environ)
    full_env.pop("SAMEBITS_NUM_THREADS", None)
    full_env.pop("SAMEBITS_NUMERIC_MODE", None)
    if env:
        full_env.update(env)
    return subprocess.run(LEGS[leg][1] + [str(exe)] + list(args), capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=ROOT)


def samebits(*args, env=None):
    """Run the native CLI."""
    return run_bin("x86_64", "samebits", args, env=env)


def reference_card(fixture):
    return ROOT / "fixtures" / "cards" / f"{fixture}.card"


def fixture_card(tmp_path, fixture, tag, args=(), sabotage=None, env=None, leg="x86_64"):
    """`samebits fixture run FIXTURE ARGS` of a leg (or its sabotage build) into
    tmp_path/TAG.card; the card's path (a failed run fails the test)."""
    path = tmp_path / f"{tag}.card"
    r = run_bin(leg, "samebits", ["fixture", "run", fixture] + list(args) + ["--out", str(path)], sabotage=sabotage,
                env=env)
    assert r.returncode == 0, r.stderr
    return path


def card_diff(a, b):
    """None when cards a and b are identical, else `samebits card diff`'s first line."""
    d = samebits("card", "diff", str(a), str(b))
    assert d.returncode in (0, 1), d.stderr
    return None if d.returncode == 0 else d.stdout.splitlines()[0]
