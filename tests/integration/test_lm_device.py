"""The byte-level language model trained on a device (device=opencl here on
PoCL; cuda on the GPU host through tools/device-h200-tests.sh) (docs/lm.md,
"Devices"): every product through the identical GEMM on the device, every
other value by kernels/entry/lm_entry.h and nn_entry.h (the host's per-row and
per-value text, kernels/nn.h), parameters, moments, gradients and activations
resident, and the CPU's bytes step for step. `make test` installs PoCL
(tools/ensure-deps.sh), so a missing OpenCL platform is a FAILURE here, never
a skip.

- lm-fit identical to its reference card on the device (per step the loss,
  every tensor's gradient, both AdamW moments, every parameter; the held-out
  losses, samples and digests; its half run trains on the device and resumes
  on the host through the model file: device -> host);
- the arms that reach the device's code part lm-fit: float-atomic (the
  embedding gradients by float atomic adds), vendor-exp (the cross-entropy's
  exponential from OpenCL's built-in exp), contract (FP_CONTRACT ON) and
  lm-attn-order (the attention softmax's normalizer in float32 from the last
  key down);
- resume on another device from the command line (`train --init CHECKPOINT
  device=D`): host -> device and device -> host equal the uninterrupted run,
  model file byte for byte, and a resumed run on the float-atomic arm does
  not (so the comparison can fail).

SAMEBITS_LM_EXE names the CLI (default build/samebits), SAMEBITS_LM_DEVICES
the devices (default opencl)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

EXE = Path(os.environ.get("SAMEBITS_LM_EXE", str(ROOT / "build" / "samebits")))
DEVICES = [d for d in os.environ.get("SAMEBITS_LM_DEVICES", "opencl").split(",") if d]
POCL = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}
PARAMS = ["n_layer=2", "d_model=16", "n_head=2", "context=16", "batch_size=3", "eval_batches=1", "dropout=0.1",
          "learning_rate=0.01", "clip_norm=0.5", "random_state=5"]


def cli(*args, env=None):
    e = dict(os.environ)
    e.pop("SAMEBITS_NUM_THREADS", None)
    e.update(POCL)
    os.makedirs(e["POCL_CACHE_DIR"], exist_ok=True)
    e.update(env or {})
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: run 'make all'")
    return subprocess.run([str(EXE)] + list(args), capture_output=True, text=True, env=e, timeout=600, cwd=ROOT)


def verify(device, env=None):
    return cli("verify", "lm-fit", "device=" + device, env=env)


@pytest.mark.parametrize("device", DEVICES)
def test_lm_fit_identical_on_the_device(device):
    r = verify(device)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "device " + device in r.stdout and "verify: PASS" in r.stdout, r.stdout
    assert re.search(r"^  lm-fit +identical", r.stdout, re.M), r.stdout


@pytest.mark.parametrize("arm", ["float-atomic", "vendor-exp", "contract", "lm-attn-order"])
def test_arms_reaching_the_device_part_lm_fit(arm):
    r = verify("opencl", {"SAMEBITS_OPENCL_ARM": arm})
    assert "SEPARATING ARM '" + arm + "'" in r.stderr
    assert r.returncode == 1 and "verify: FAIL" in r.stdout, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  lm-fit "))
    # a trained stage parts: never the initialization
    assert "DIFFERS" in line and "train.step" in line, line


def _corpus(tmp_path):
    words = ["the", "same", "bits", "on", "every", "device", "resumed", "exact", "sum", "order", "never", "atomic"]
    text, x = [], 7
    for _ in range(900):
        x = (x * 1103515245 + 12345) % (1 << 31)
        text.append(words[(x >> 8) % len(words)] + (".\n" if (x >> 4) % 11 == 0 else " "))
    p = tmp_path / "corpus.txt"
    p.write_text("".join(text))
    return p


def _train(tmp_path, name, corpus, steps, *extra, init=None, env=None):
    out = tmp_path / (name + ".sbm")
    args = ["train", "--model", "lm", "--data", str(corpus), "--out", str(out), "--steps", str(steps),
            "--eval-every", "2"]
    if init:
        args += ["--init", str(init)]
    r = cli(*(args + list(extra)), env=env)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_resume_on_another_device_equals_the_uninterrupted_run(device, tmp_path):
    c = _corpus(tmp_path)
    whole = _train(tmp_path, "whole-cpu", c, 6, *PARAMS).read_bytes()
    # the uninterrupted run on the device
    assert _train(tmp_path, "whole-dev", c, 6, *PARAMS, "device=" + device).read_bytes() == whole
    # host -> device: three steps on the cpu, the checkpoint resumed on the device
    half_cpu = _train(tmp_path, "half-cpu", c, 3, *PARAMS)
    assert _train(tmp_path, "resumed-dev", c, 3, "device=" + device, init=half_cpu).read_bytes() == whole
    # device -> host: three steps on the device, resumed on the cpu
    half_dev = _train(tmp_path, "half-dev", c, 3, *PARAMS, "device=" + device)
    assert _train(tmp_path, "resumed-cpu", c, 3, init=half_dev).read_bytes() == whole


def test_resume_comparison_can_fail(tmp_path):
    """The float-atomic arm on the resumed half: another model file."""
    c = _corpus(tmp_path)
    whole = _train(tmp_path, "whole-cpu", c, 6, *PARAMS).read_bytes()
    half_cpu = _train(tmp_path, "half-cpu", c, 3, *PARAMS)
    armed = _train(tmp_path, "resumed-arm", c, 3, "device=opencl", init=half_cpu,
                   env={"SAMEBITS_OPENCL_ARM": "float-atomic"}).read_bytes()
    assert armed != whole


def test_other_options_with_init_are_still_refused(tmp_path):
    c = _corpus(tmp_path)
    half = _train(tmp_path, "half", c, 2, *PARAMS)
    r = cli("train", "--model", "lm", "--data", str(c), "--out", str(tmp_path / "x.sbm"), "--steps", "1",
            "--init", str(half), "device=cpu", "learning_rate=0.1")
    assert r.returncode != 0 and "key=value would leave its trajectory" in r.stderr, r.stderr
