"""The OpenCL tree device's multi-work-group schedule (docs/opencl.md) at a
size where it is really used: 200,000 rows x 40 features of up to 255 bins,
so a partition spreads the root over about a hundred work-groups and the
local-memory histograms need several feature groups and several row tiles
(PoCL reports 2 compute units and 2 MiB of local memory; the tree device caps
a feature group at 64 KiB, 16 features of 256 bins). The model bytes must be
the CPU grower's at 1 and 3 threads, on the local-memory path and on the
global fallback; the float-atomic arm must change them; and every partition
must be the stable one (SAMEBITS_OPENCL_CHECK_PARTITION=1: the host checks the
rows after each call, since a row order moves no model bit).

`make test` installs PoCL and numpy (tools/ensure-deps.sh): a missing one is
a failure here, not a skip."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}

# Fits one model and prints the SHA-256 of its bytes (argv: data folder,
# device, threads, growth).
FIT = r"""
import hashlib, sys
import numpy as np
import samebits as sb
X = np.load(sys.argv[1] + "/X.npy"); y = np.load(sys.argv[1] + "/y.npy")
sb.set_num_threads(int(sys.argv[3]))
kw = dict(growth="depthwise", max_depth=6) if sys.argv[4] == "depthwise" else dict(num_leaves=31)
m = sb.GradientBoostingRegressor(n_estimators=4, min_samples_leaf=5, device=sys.argv[2], **kw).fit(X, y)
print("model", hashlib.sha256(m.model_bytes()).hexdigest())
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    import numpy as np  # make test installs it
    d = tmp_path_factory.mktemp("oclsched")
    g = np.random.Generator(np.random.Philox(key=11))
    n, f = 200_000, 40
    X = g.standard_normal((n, f)).astype(np.float32)
    X[:, 5] = X[:, 5] > 0                 # two values: every row of a tile in two bins
    X[:, 17] = np.round(X[:, 17] * 3)     # a handful of values
    X[g.random(X.shape) < 0.03] = np.nan  # a missing bin in every feature
    Xn = np.nan_to_num(X)
    y = (Xn[:, 0] * 2 + Xn[:, 13] ** 2 - Xn[:, 27] * Xn[:, 5] + np.sin(Xn[:, 39] * 3)
         + 0.1 * g.standard_normal(n)).astype(np.float32)
    np.save(d / "X.npy", X)
    np.save(d / "y.npy", y)
    return d


def fit(data, device, threads, growth, env=None):
    """(model digest, stderr) of one fit in a fresh process."""
    e = dict(os.environ)
    for k in ("SAMEBITS_OPENCL_ARM", "SAMEBITS_OPENCL_HIST", "SAMEBITS_OPENCL_TIMING",
              "SAMEBITS_OPENCL_CHECK_PARTITION", "SAMEBITS_NUM_THREADS"):
        e.pop(k, None)
    e.update(ENV)
    e.update({"SAMEBITS_LIB": str(ROOT / "build" / "libsamebits.so"), "PYTHONPATH": str(ROOT / "python")})
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = subprocess.run([sys.executable, "-c", FIT, str(data), device, str(threads), growth],
                       capture_output=True, text=True, env=e, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    digest = next(l.split()[1] for l in r.stdout.splitlines() if l.startswith("model "))
    return digest, r.stderr


def schedule(stderr):
    """The numbers of the 'opencl schedule:' line (SAMEBITS_OPENCL_TIMING=1)."""
    line = next(l for l in stderr.splitlines() if l.startswith("opencl schedule: "))
    m = re.search(r"partition up to (\d+) work-groups a call; histograms in local memory \((\d+)-bit atomics\), "
                  r"(\d+) feature group\(s\) of up to (\d+) bytes, up to (\d+) tile\(s\) of (\d+) rows", line)
    assert m, line
    return dict(zip(("part_groups", "bits", "feature_groups", "bytes", "hist_tiles", "tile_rows"), map(int, m.groups())))


@pytest.fixture(scope="module")
def cpu_digests(data):
    return {g: fit(data, "cpu", 1, g)[0] for g in ("leafwise", "depthwise")}


@pytest.mark.parametrize("growth,threads,path", [("leafwise", 1, "local"), ("leafwise", 3, "local64"),
                                                ("depthwise", 1, "local64"), ("depthwise", 3, "local")])
def test_multi_group_schedule_gives_the_cpu_model(data, cpu_digests, growth, threads, path):
    digest, err = fit(data, "opencl", threads, growth,
                      {"SAMEBITS_OPENCL_TIMING": "1", "SAMEBITS_OPENCL_CHECK_PARTITION": "1",
                       "SAMEBITS_OPENCL_HIST": path})
    s = schedule(err)
    assert s["bits"] == (64 if path == "local64" else 32), s  # local: the 32-bit local atomics
    # the root's 200,000 rows over tiles of 256 x 8 rows; 40 features of 256
    # entries over groups of at most 4096 entries; the root over tiles of at
    # most 16384 rows
    assert s["part_groups"] >= 90, s
    assert s["feature_groups"] >= 3 and s["bytes"] <= 65536, s
    assert s["hist_tiles"] >= 2 and s["tile_rows"] <= 16384, s
    checked = re.search(r"opencl partition check: (\d+) rows placed as the stable partition places them", err)
    assert checked and int(checked.group(1)) >= 4 * 200_000, err
    assert digest == cpu_digests[growth], (growth, threads)


def test_global_fallback_gives_the_cpu_model(data, cpu_digests):
    digest, err = fit(data, "opencl", 3, "depthwise", {"SAMEBITS_OPENCL_HIST": "global", "SAMEBITS_OPENCL_TIMING": "1"})
    assert "histograms by global atomics" in err, err
    assert digest == cpu_digests["depthwise"]


@pytest.mark.parametrize("path", ["local", "local64", "global"])
def test_float_atomic_arm_is_caught_at_scale(data, cpu_digests, path):
    digest, err = fit(data, "opencl", 1, "leafwise",
                      {"SAMEBITS_OPENCL_ARM": "float-atomic", "SAMEBITS_OPENCL_HIST": path,
                       "SAMEBITS_OPENCL_TIMING": "1"})
    assert "SEPARATING ARM 'float-atomic'" in err
    if path.startswith("local"):
        assert schedule(err)["feature_groups"] >= 3
    else:
        assert "histograms by global atomics" in err, err
    assert digest != cpu_digests["leafwise"], "the float-atomic arm changed no bit: it separates nothing"


def test_doctor_names_the_device_and_its_local_memory():
    r = samebits("doctor", env=ENV)
    line = next(l for l in r.stdout.splitlines() if l.startswith("opencl devices: "))
    assert re.search(r": usable \[selected\]; local memory \d+ KiB, \d+ compute units", line), line


def test_unknown_histogram_path_is_an_error_not_a_run():
    r = samebits("verify", "gbdt-binary", "device=opencl", env=dict(ENV, SAMEBITS_OPENCL_HIST="shared"))
    assert r.returncode == 1 and "gbdt-binary     ERROR SB_ERR_INVALID_ARGUMENT" in r.stdout, r.stdout
