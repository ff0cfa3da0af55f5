"""The factorizations', solves', eigensolver's and projections' identity and
their separating arms (docs/linalg.md, "Factorizations, solves, eigenvalues and
projections").

The fixture linalg-solve (hostile Cholesky factorizations, triangular solves,
Jacobi spectra, random matrices and projections) must give its reference card
on every CPU leg at every thread count (x86-64 natively; aarch64 and big-endian
s390x under qemu-user) and on OpenCL (PoCL here). Each arm below breaks one
rule the fixed orders stand on and must be caught:

  contract       -ffp-contract=fast (aarch64, s390x builds): gcc fuses the
                 dot products' p + x*y, the rotations' h + g*tau and the polar
                 method's u*u + v*v into fused multiply-adds (rule 2)
  jacobi-order   each row's q of the Jacobi sweep in descending order: another
                 sequence of rotations, other bits (x86-64 build)
  OpenCL contract  FP_CONTRACT ON in the compat header (PoCL's clang then fuses)
  OpenCL fast-relaxed-math  -cl-fast-relaxed-math
  OpenCL mad-enable  -cl-mad-enable: inert on PoCL, whose clang ignores the
                 option on x86 (docs/opencl.md); the pragma is what decides, and
                 the contract arm shows it; on the NVIDIA driver it may act
"""
import re

import pytest

from conftest import ROOT, card_diff, fixture_card, reference_card, samebits

FIXTURE = "linalg-solve"


def _card(tmp_path, tag, args, **kw):
    return fixture_card(tmp_path, FIXTURE, tag, args, **kw)


_diff = card_diff


def _stages(path):
    return dict(re.findall(r'"stage":"([^"]+)".*?"sha256":"([0-9a-f]+)"', path.read_text()))


def _differing(a, b):
    sa, sb = _stages(a), _stages(b)
    return sorted(k for k in sa if sa[k] != sb.get(k))


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_cpu_matches_reference(tmp_path, threads):
    card = _card(tmp_path, f"cpu-{threads}", ["--threads", str(threads)])
    assert _diff(reference_card(FIXTURE), card) is None


def test_opencl_matches_reference(tmp_path):
    card = _card(tmp_path, "opencl", ["device=opencl"])
    assert _diff(reference_card(FIXTURE), card) is None


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
@pytest.mark.parametrize("threads", [1, 7])
def test_emulated_legs_match_reference(tmp_path, leg, threads):
    card = _card(tmp_path, f"{leg}-{threads}", ["--threads", str(threads)], leg=leg)
    assert _diff(reference_card(FIXTURE), card) is None


def test_reference_card_holds_the_hostile_cases():
    st = _stages(reference_card(FIXTURE))
    for stage in ("chol.n1", "chol.prime61", "chol.illcond", "chol.huge", "chol.subnormal", "chol.graded",
                  "chol.zero_blocks", "chol.not_spd.refusal", "chol.not_spd.column", "chol.semidefinite.refusal",
                  "eigh.ties.values", "eigh.diagonal.sweeps_rotations", "eigh.zero_blocks.vectors",
                  "eigh.huge.values", "eigh.subnormal.values", "solve.prime61.upper", "random.normal",
                  "random.rademacher", "projection.normal", "projection.rademacher"):
        assert stage in st, stage
    # the values alone are the values of the full solve
    assert st["eigh.prime37.values_only"] == st["eigh.prime37.values"]


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_arm_contraction_is_caught(tmp_path, leg):
    # the build is the contracting one (its probe says so: test_arms.py's
    # test_arm_contraction_is_caught), and here is what it does to the solvers
    card = _card(tmp_path, f"contract-{leg}", ["--threads", "2"], sabotage="contract", leg=leg)
    diff = _diff(reference_card(FIXTURE), card)
    assert diff is not None, "a contracting build produced the reference card"
    differ = _differing(reference_card(FIXTURE), card)
    # every float path is reached: Cholesky, the solves, Jacobi and the normal draws
    for stage in ("chol.prime61", "solve.prime61.lower", "eigh.prime37.values", "random.normal"):
        assert stage in differ, (stage, differ)
    # and the exact ones are not: Rademacher signs, the refusals, a diagonal matrix
    for stage in ("random.rademacher", "chol.not_spd.column", "eigh.diagonal.values", "eigh.n1.values"):
        assert stage not in differ, (stage, differ)
    print(leg, "contract:", diff, f"({len(differ)} stages)")


def test_arm_jacobi_order_is_caught(tmp_path):
    cards = {t: _card(tmp_path, f"order-{t}", ["--threads", str(t)], sabotage="jacobi-order") for t in (1, 7)}
    for t in (1, 7):
        differ = _differing(reference_card(FIXTURE), cards[t])
        assert differ and all(s.startswith("eigh.") for s in differ), differ
        # a diagonal matrix and n = 1 have no order to change
        assert "eigh.diagonal.values" not in differ and "eigh.n1.values" not in differ
    assert _diff(cards[1], cards[7]) is None  # the arm is an order, not a schedule


@pytest.mark.parametrize("arm", ["contract", "fast-relaxed-math"])
def test_opencl_arm_is_caught(tmp_path, arm):
    card = _card(tmp_path, f"opencl-{arm}", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": arm})
    assert _diff(reference_card(FIXTURE), card) is not None
    differ = _differing(reference_card(FIXTURE), card)
    assert "chol.prime61" in differ and "eigh.prime37.values" in differ, differ


def test_opencl_mad_enable_is_inert_on_pocl(tmp_path):
    """PoCL's clang ignores -cl-mad-enable (docs/opencl.md): the arm cannot act
    there, so the card stays the reference. Recorded, not hidden: the contract
    arm above is the one that shows contraction is caught on OpenCL."""
    card = _card(tmp_path, "opencl-mad", ["device=opencl"], env={"SAMEBITS_OPENCL_ARM": "mad-enable"})
    assert _diff(reference_card(FIXTURE), card) is None


def test_fixture_parameters_are_refused_by_name(tmp_path):
    r = samebits("fixture", "run", FIXTURE, "n=3", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "n=3" in r.stderr
    r = samebits("fixture", "run", FIXTURE, "device=tpu", "--out", str(tmp_path / "x.card"))
    assert r.returncode != 0 and "unknown device" in r.stderr
    assert not (tmp_path / "x.card").exists()


def test_inputs_match_their_pinned_digests():
    r = samebits("check-fixture", FIXTURE)
    assert r.returncode == 0 and "inputs identical" in r.stdout, r.stdout + r.stderr


def test_solve_kernel_list_is_the_entry_source():
    programs = (ROOT / "src" / "device" / "programs.h").read_text()
    body = re.search(r"#define SB_LINALG_SOLVE_KERNELS\(X\)(.*?)\n#define", programs, re.S).group(1)
    listed = set(re.findall(r"X\((\w+)\)", body))
    entry = (ROOT / "src" / "kernels" / "entry" / "linalg_solve_entry.h").read_text()
    defined = set(re.findall(r"SB_KERNEL\s+void\s+(\w+)\s*\(", entry))
    assert listed == defined and listed, listed ^ defined
