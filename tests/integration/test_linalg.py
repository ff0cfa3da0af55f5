"""The linear-algebra core's identity and its separating arms (docs/linalg.md).

The fixture linalg-gemm (hostile products through sb_gemm) must give its
reference card on every CPU leg at every thread count (test_certify.py and
test_legs.py run it with the other fixtures) and on OpenCL (PoCL here); each
arm below breaks one property the exact scheme stands on and must be caught:

  gemm-order   the product summed in float with K chunked by thread count:
               the accumulation order follows the schedule (x86-64 build)
  gemm-fma     the seven exact parts recombined in float with fmaf, a
               contracted recombination (x86-64 build; OpenCL arm gemm-fma)
  float-atomic the parts summed with float atomics (OpenCL arm; CUDA's
               CUDA_VARIANT=float-atomic on the H200, tools/device-h200.sh)
"""
import os

import pytest

from conftest import card_diff, fixture_card, reference_card, samebits

FIXTURE = "linalg-gemm"


def _card(tmp_path, tag, args, **kw):
    return fixture_card(tmp_path, FIXTURE, tag, args, **kw)


_diff = card_diff


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_cpu_matches_reference(tmp_path, threads):
    card = _card(tmp_path, f"cpu-{threads}", ["--threads", str(threads)])
    assert _diff(reference_card(FIXTURE), card) is None


def test_opencl_matches_reference(tmp_path):
    card = _card(tmp_path, "opencl", ["device=opencl"])
    assert _diff(reference_card(FIXTURE), card) is None


def test_arm_gemm_order_is_caught(tmp_path):
    cards = {t: _card(tmp_path, f"order-{t}", ["--threads", str(t)], sabotage="gemm-order") for t in (1, 2, 7)}
    assert _diff(reference_card(FIXTURE), cards[1]) is not None
    # the thread count now shows in the bits
    d = _diff(cards[2], cards[7])
    assert d is not None, "the chunked float sum gave the same bits at 2 and 7 threads"


def test_arm_gemm_fma_is_caught(tmp_path):
    card = _card(tmp_path, "fma", ["--threads", "2"], sabotage="gemm-fma")
    assert _diff(reference_card(FIXTURE), card) is not None


@pytest.mark.parametrize("arm", ["gemm-fma", "float-atomic"])
def test_opencl_arm_is_caught(tmp_path, arm):
    card = _card(tmp_path, f"opencl-{arm}", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": arm})
    assert _diff(reference_card(FIXTURE), card) is not None


def test_contraction_cannot_reach_the_product(tmp_path):
    """The control for the contract arm: the product is integer arithmetic, so a
    contracting OpenCL build gives the reference bits (the arm is caught by the
    families that use floats, not here)."""
    card = _card(tmp_path, "opencl-contract", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": "contract"})
    assert _diff(reference_card(FIXTURE), card) is None


def test_fixture_parameters_are_refused_by_name(tmp_path):
    r = samebits("fixture", "run", FIXTURE, "rows=3", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "rows=3" in r.stderr
    r = samebits("fixture", "run", FIXTURE, "device=tpu", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "unknown device" in r.stderr
    assert not (tmp_path / "x.card").exists()
