"""Tests of the Python package. They run from the source tree, installed or not:
python/ goes first on sys.path, and the package finds build/libsamebits.so (built
by make) itself, or the library named by SAMEBITS_LIB."""
import importlib.util
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYDIR = ROOT / "python"
if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))
CLI = ROOT / "build" / "samebits"

# This file replaces tests/conftest.py as the module named `conftest` once pytest
# has loaded it; test modules collected later that do `from conftest import ...`
# still find the helpers of tests/conftest.py.
_spec = importlib.util.spec_from_file_location("_samebits_tests_conftest", ROOT / "tests" / "conftest.py")
_parent = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_parent)
for _name in ("LEGS", "THREAD_COUNTS", "FIXTURES", "build_dir", "run_bin", "samebits", "reference_card", "fixture_card",
              "card_diff"):
    if hasattr(_parent, _name):
        globals()[_name] = getattr(_parent, _name)


def f32(v):
    """v rounded to float32 (as a Python float)."""
    return struct.unpack("f", struct.pack("f", v))[0]


def make_data(n, kind, seed=1, nfeat=4, nan_rate=0.05):
    """Rows of float32-exact features (some NaN) and labels: regression values,
    binary 0/1 or multiclass 0..2."""
    rnd = random.Random(seed)
    X, y = [], []
    for _ in range(n):
        row = [f32(rnd.uniform(-2, 2)) for _ in range(nfeat)]
        s = row[0] * row[0] - row[1] + 0.3 * row[2]
        if rnd.random() < nan_rate:
            row[3] = float("nan")
        if kind == "regression":
            y.append(f32(s + rnd.gauss(0, 0.1)))
        elif kind == "binary":
            y.append(1 if s + rnd.gauss(0, 0.3) > 1.0 else 0)
        else:
            y.append(0 if s < 0.5 else 1 if s < 2.0 else 2)
        X.append(row)
    return X, y


def write_csv(path, X, y, names=None):
    names = names or ["f%d" % j for j in range(len(X[0]))]
    with open(path, "w") as f:
        f.write(",".join(list(names) + ["y"]) + "\n")
        for row, t in zip(X, y):
            f.write(",".join("" if v != v else "%.9g" % v for v in row) + ",%.9g\n" % t)


def cli_train(tmp_path, X, y, objective, params, names=None, out=None):
    """Run build/samebits train on a CSV of X, y; returns (digest, model bytes or None)."""
    if not CLI.exists():
        pytest.fail("%s is missing: run make" % CLI)
    data = tmp_path / ("cli-%s.csv" % objective)
    write_csv(data, X, y, names)
    out = out or tmp_path / ("cli-%s.sbm" % objective)
    env = dict(os.environ)
    env.pop("SAMEBITS_NUMERIC_MODE", None)
    args = [str(CLI), "train", "--model", "gbdt", "--data", str(data), "--label", "y", "--objective", objective,
            "--out", str(out), "--threads", "2"] + ["%s=%s" % kv for kv in params.items()]
    r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("model digest: ")]
    assert line, r.stdout
    return line[0].split(": ", 1)[1].strip(), Path(out).read_bytes()


def run_python(code, env=None, timeout=300):
    """Run code in a fresh interpreter with python/ on the path; returns CompletedProcess."""
    full = dict(os.environ)
    full.pop("SAMEBITS_NUMERIC_MODE", None)
    full["PYTHONPATH"] = str(PYDIR) + (os.pathsep + full["PYTHONPATH"] if full.get("PYTHONPATH") else "")
    if env:
        full.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                          timeout=timeout, cwd=str(ROOT))


@pytest.fixture(autouse=True)
def _default_mode_and_threads():
    """Each test starts from the default numeric mode and thread count."""
    import samebits
    yield
    samebits.set_numeric_mode("identical")
    samebits.set_num_threads(0)
