"""UMAP's batched epochs (optimize=batched, docs/umap.md) on the OpenCL device
(device=opencl) on PoCL: every edge's moves (kum_edges) and every row's
integer sums applied at the epoch's end (kum_apply, src/kernels/umap.h: the
host's own functions) give the host's model bytes, hence its embedding.
`make test` installs PoCL (tools/ensure-deps.sh), so a missing OpenCL
platform is a FAILURE here, never a skip.

- the umap-fit fixture identical to its reference card on PoCL (its batched
  cases' epochs on the device, the others on the host);
- the model file of device=opencl is the host's at 1, 2 and 3 threads, for
  euclidean with spectral init and cosine with random init;
- the separating arm SAMEBITS_OPENCL_ARM=umap-float-sum (each move summed
  per row as float32 in arrival order, no fixed point) parts umap-fit at the
  batched blobs' first epoch with moves, and the model file from the host's;
- device=opencl with optimize=sequential is refused by name."""
import os
import re

import pytest

from conftest import ROOT, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}
CASES = {"blobs": ["n_epochs=60", "random_state=5"],
         "cosine": ["n_epochs=40", "random_state=9", "metric=cosine", "init=random", "n_neighbors=8",
                    "negative_sample_rate=3"]}


def verify(env=None):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", "umap-fit", "device=opencl", env=e)


def test_umap_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert re.search(r"^  umap-fit +identical", r.stdout, re.M), r.stdout


def test_arm_umap_float_sum_parts_umap_fit():
    r = verify({"SAMEBITS_OPENCL_ARM": "umap-float-sum"})
    assert "SEPARATING ARM 'umap-float-sum'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  umap-fit "))
    # stages 169.. are the batched blobs (case, neighbors, ..., init, epoch 1: no edge is sampled at t = 0)
    assert "DIFFERS" in line and "umap.epoch.2" in line, line


def _data(path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 6)).astype(np.float32)
    x[130:260, 0] += 6.0
    x[260:, 1] += 6.0
    path.write_text("a,b,c,d,e,f\n" + "".join(",".join("%r" % float(v) for v in r) + "\n" for r in x))
    return path


def _train(tmp_path, case, device, threads="2", env=None):
    data = tmp_path / "x.csv"
    if not data.exists():
        _data(data)
    out = tmp_path / ("%s-%s-%s.sbm" % (case, device, threads))
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(out), "--threads", threads,
                 "optimize=batched", "device=" + device, *CASES[case], env=e)
    return r, out


@pytest.mark.parametrize("case", sorted(CASES))
def test_batched_on_opencl_is_the_host_model(tmp_path, case):
    files = []
    for device, threads in (("cpu", "1"), ("cpu", "2"), ("cpu", "3"), ("opencl", "2")):
        r, out = _train(tmp_path, case, device, threads)
        assert r.returncode == 0, r.stderr
        files.append(out.read_bytes())
    assert files[0] == files[1] == files[2] == files[3]
    assert b"optimize=batched\n" in files[0] and b"device" not in files[0]


def test_arm_umap_float_sum_parts_from_the_host(tmp_path):
    r, host = _train(tmp_path, "blobs", "cpu")
    assert r.returncode == 0, r.stderr
    r, arm = _train(tmp_path, "blobs", "opencl", env={"SAMEBITS_OPENCL_ARM": "umap-float-sum"})
    assert "SEPARATING ARM 'umap-float-sum'" in r.stderr
    assert r.returncode == 0, r.stderr
    assert arm.read_bytes() != host.read_bytes()


def test_device_with_sequential_is_refused(tmp_path):
    data = _data(tmp_path / "x.csv")
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(tmp_path / "m.sbm"), "device=opencl",
                 env=ENV)
    assert r.returncode != 0
    assert "device='opencl' runs the epochs of optimize='batched' only" in r.stderr, r.stderr
