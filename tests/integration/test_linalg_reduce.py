"""The identity of the linear-algebra core's reductions, distances and selection,
and their separating arms (docs/linalg.md, "Reductions, distances and selection").

The fixture linalg-reduce (sums, squared norms, distances, argmin/argmax and
top-k of hostile matrices through the public entries) must give its reference
card on every CPU leg (x86-64 natively, aarch64 and big-endian s390x under
qemu-user) at 1, 2 and 7 threads, and on OpenCL (PoCL here). Each arm below
breaks one property the operations stand on and must be caught:

  reduce-order  sums, squared norms and distances in float, each line cut into
                one chunk per thread: the rounding follows the thread count
                (x86-64 build, -DSB_SABOTAGE_REDUCE_ORDER)
  topk-ties     selection ties broken to the higher index (x86-64 build,
                -DSB_SABOTAGE_TOPK_TIES)
  float-atomic  the device's sums added in float with a compare-and-swap loop,
                in arrival order (OpenCL arm SAMEBITS_OPENCL_ARM=float-atomic)
"""
import hashlib
import json

import pytest

from conftest import card_diff, fixture_card, reference_card, samebits

FIXTURE = "linalg-reduce"


def _card(tmp_path, tag, args, **kw):
    return fixture_card(tmp_path, FIXTURE, tag, args, **kw)


def _diff(a, b):
    """None when identical, else the first differing stage's name."""
    first = card_diff(a, b)
    if first is None:
        return None
    assert first.startswith("differ at stage "), first
    return first.split(": ", 1)[1].split(" ")[0]


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_cpu_matches_reference(tmp_path, threads):
    card = _card(tmp_path, f"cpu-{threads}", ["--threads", str(threads)])
    assert _diff(reference_card(FIXTURE), card) is None


@pytest.mark.parametrize("threads", [1, 7])
@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_other_architectures_match_reference(tmp_path, leg, threads):
    card = _card(tmp_path, f"{leg}-{threads}", ["--threads", str(threads)], leg=leg)
    assert _diff(reference_card(FIXTURE), card) is None


def test_opencl_matches_reference(tmp_path):
    card = _card(tmp_path, "opencl", ["device=opencl"])
    assert _diff(reference_card(FIXTURE), card) is None


def test_every_case_and_operation_is_pinned():
    stages = [json.loads(line)["stage"] for line in reference_card(FIXTURE).read_text().splitlines()[1:]]
    ops = ("row_sums", "col_sums", "row_sq_norms", "col_sq_norms", "sqdist", "argmin_rows", "argmax_rows",
           "argmin_cols", "argmax_cols", "topk_smallest.values", "topk_smallest.indices", "topk_largest.values",
           "topk_largest.indices", "nearest.indices")
    cases = ("plain", "d1", "d_prime", "m1", "n1", "ties", "zeros", "subnormal", "extremes", "specials", "cancel",
             "long_row", "tall")
    assert stages[:-2] == [f"reduce.{c}.{o}" for c in cases for o in ops]
    assert stages[-2:] == ["reduce.refuse.topk_k_above_n", "reduce.refuse.argmin_empty_rows"]


def test_refusals_are_recorded_by_name():
    """k above n is refused (never clamped), and so is argmin of empty rows."""
    want = hashlib.sha256(b"SB_ERR_INVALID_ARGUMENT").hexdigest()
    recs = [json.loads(line) for line in reference_card(FIXTURE).read_text().splitlines()[1:]]
    refusals = [r for r in recs if r["stage"].startswith("reduce.refuse.")]
    assert len(refusals) == 2 and all(r["sha256"] == want for r in refusals)


def test_arm_reduce_order_is_caught(tmp_path):
    cards = {t: _card(tmp_path, f"order-{t}", ["--threads", str(t)], sabotage="reduce-order") for t in (1, 2, 7)}
    first = _diff(reference_card(FIXTURE), cards[1])
    assert first is not None and first.split(".")[-1] in ("row_sums", "col_sums", "row_sq_norms", "col_sq_norms",
                                                          "sqdist"), first
    # the thread count now shows in the bits
    assert _diff(cards[2], cards[7]) is not None, "the chunked float sums gave the same bits at 2 and 7 threads"


def test_arm_topk_ties_is_caught(tmp_path):
    card = _card(tmp_path, "ties", ["--threads", "2"], sabotage="topk-ties")
    first = _diff(reference_card(FIXTURE), card)
    assert first is not None
    assert any(t in first for t in ("argmin", "argmax", "topk", "nearest")), first


def test_opencl_float_atomic_arm_is_caught(tmp_path):
    card = _card(tmp_path, "opencl-float-atomic", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": "float-atomic"})
    first = _diff(reference_card(FIXTURE), card)
    assert first is not None and first.endswith("_sums"), first


def test_contraction_cannot_reach_the_operations(tmp_path):
    """The control for the contract arm: every operation is integer arithmetic
    or a comparison, so a contracting OpenCL build gives the reference bits."""
    card = _card(tmp_path, "opencl-contract", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": "contract"})
    assert _diff(reference_card(FIXTURE), card) is None


def test_fixture_parameters_are_refused_by_name(tmp_path):
    r = samebits("fixture", "run", FIXTURE, "rows=3", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "rows=3" in r.stderr
    r = samebits("fixture", "run", FIXTURE, "device=tpu", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "unknown device" in r.stderr
    r = samebits("fixture", "run", FIXTURE, "device=cpu,device=cpu", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "more than once" in r.stderr
    assert not (tmp_path / "x.card").exists()
