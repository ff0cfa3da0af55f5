"""The multi-layer perceptrons trained on the OpenCL device (device=opencl)
on PoCL (docs/mlp.md, "Devices"): every product through the identical GEMM
on the device, every other value by kernels/entry/nn_entry.h (the host's
per-value text, kernels/nn.h), the rows, parameters and optimizer state
resident, and the CPU's bytes. `make test` installs PoCL
(tools/ensure-deps.sh), so a missing OpenCL platform is a FAILURE here, never
a skip.

- the mlp-fit fixture identical to its reference card on PoCL (per epoch the
  loss, every parameter tensor, the last layer's weight gradient; the
  optimizer state, outputs, predictions and model digest);
- the arms that reach the device's own code part mlp-fit: mlp-grad-order
  (the bias gradients' column sums in float32 from the last row up: the CPU
  arm of that name, here in the device's kernel), mlp-softmax-order (a
  softmax row's exponentials added in float32 from the last down),
  vendor-exp (the softmax's exponential from OpenCL's built-in exp) and
  contract (FP_CONTRACT ON: Adam's and the activations' products fused);
  mad-enable is recorded inert (the pragma decides, docs/opencl.md);
- train --model mlp device=opencl from the command line writes the CPU's
  model file."""
import os
import re

import pytest

from conftest import ROOT, samebits

ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def verify(env=None):
    e = dict(ENV)
    e.update(env or {})
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    return samebits("verify", "mlp-fit", "device=opencl", env=e)


def test_mlp_fit_identical_on_opencl():
    r = verify()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device opencl" in r.stdout and "verify: PASS" in r.stdout
    assert re.search(r"^  mlp-fit +identical", r.stdout, re.M), r.stdout


@pytest.mark.parametrize("arm,stage", [("mlp-grad-order", "multi.e5.intercepts0"),
                                       ("mlp-softmax-order", "multi.e1.coefs0"),
                                       ("vendor-exp", "multi.e1.coefs0"),
                                       ("contract", "multi.e1.coefs0")])
def test_arms_reaching_the_device_part_the_fixture(arm, stage):
    r = verify({"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  mlp-fit "))
    assert "DIFFERS" in line and stage in line, line


def test_mad_enable_is_inert():
    r = verify({"SAMEBITS_OPENCL_ARM": "mad-enable"})
    assert "SEPARATING ARM 'mad-enable'" in r.stderr
    assert r.returncode == 0 and "verify: PASS" in r.stdout, r.stdout + r.stderr


def test_cli_train_on_opencl_writes_the_cpu_model(tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.RandomState(2)
    X = rng.uniform(-2, 2, (150, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] - X[:, 3] > 1).astype(int)
    data = tmp_path / "d.csv"
    data.write_text("a,b,c,d,cls\n" + "".join("%r,%r,%r,%r,%d\n" % (*map(float, X[i]), y[i]) for i in range(len(X))))
    outs = []
    for dev in ("cpu", "opencl"):
        model = tmp_path / ("m-%s.sbm" % dev)
        e = dict(ENV)
        os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
        r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), "task=classifier",
                     "hidden_layer_sizes=16,8", "max_iter=12", "batch_size=32", "learning_rate_init=0.01",
                     "random_state=3", "device=" + dev, env=e)
        assert r.returncode == 0, r.stderr
        outs.append(model.read_bytes())
    assert outs[0] == outs[1] and len(outs[0]) > 0
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(tmp_path / "x.sbm"), "task=classifier",
                 "device=cpu-batched")
    assert r.returncode != 0 and "no batched host path" in r.stderr
