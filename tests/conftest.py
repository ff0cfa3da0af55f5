"""Shared helpers for the integration tests: where each leg's build lives and
how to run its binaries (natively, or under qemu-user for the other CPUs).

`make test` builds every leg and arm before pytest starts; a missing build is a
test failure (never a skip), so nothing can pass by not running."""
import os
import re
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


# ---- one pass over the whole pinned suite per leg and thread count ---------------------
#
# Under qemu a pass over every pinned fixture takes minutes (on s390x umap-fit
# alone about five at 1 thread), so each leg and thread count gets one pass,
# run by one test that checks every fixture in it (tests/integration/test_legs.py):
# the fixtures' identity, verify's or doctor's verdict and doctor's build facts.
#
# The thread counts: natively 1, 2 and 7; on the emulated legs 1 and 7 (the
# ends; 2 is one more pass of minutes there). `make evidence-cpu` records
# every leg at 1, 2 and 7 (evidence/cpu/). At DOCTOR_THREADS[leg] the pass is
# `doctor --threads N` (the build facts, then the self-check), at the others
# `verify --threads N --cards DIR` (each fixture's card kept, so it is also
# compared with the committed card by `card diff`). Both compare every stage
# of every fixture with the reference cards the build embeds from
# fixtures/cards/.

LEG_THREADS = {"x86_64": (1, 2, 7), "aarch64": (1, 7), "s390x": (1, 7)}
DOCTOR_THREADS = {"x86_64": 2, "aarch64": 7, "s390x": 7}
SUITE_LINE = re.compile(r"^  (\S+)\s+(identical|DIFFERS|ERROR)(.*)$", re.M)


class SuiteRun:
    """One pass: the CLI's stdout and exit status, each fixture's line after
    its name, and the folder of cards (None for doctor, which keeps none)."""

    def __init__(self, result, cards):
        self.returncode = result.returncode
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.cards = cards
        self.lines = {m.group(1): (m.group(2) + m.group(3)).strip() for m in SUITE_LINE.finditer(result.stdout)}

    def line(self, fixture):
        return self.lines.get(fixture, f"(no line for {fixture})")


def leg_pass(leg, threads, tmp_path):
    """The pass (leg, threads): doctor at DOCTOR_THREADS[leg], else verify
    keeping its cards in tmp_path/cards."""
    assert threads in LEG_THREADS[leg], (leg, threads)
    if threads == DOCTOR_THREADS[leg]:
        return SuiteRun(run_bin(leg, "samebits", ["doctor", "--threads", str(threads)], timeout=1800), None)
    cards = tmp_path / "cards"
    cards.mkdir()
    r = run_bin(leg, "samebits", ["verify", "--threads", str(threads), "--cards", str(cards)], timeout=1800)
    return SuiteRun(r, cards)


def pytest_collection_modifyitems(config, items):
    """The emulated legs' passes first (minutes each, the longest tests of the
    suite), so the workers do not end on them; the rest keep their order.
    Every worker collects the same order."""
    first = [it for it in items if it.get_closest_marker("leg_pass")]
    rest = [it for it in items if not it.get_closest_marker("leg_pass")]
    items[:] = first + rest


def pytest_configure(config):
    config.addinivalue_line("markers", "leg_pass: one pass over the pinned suite on a leg, collected first")
