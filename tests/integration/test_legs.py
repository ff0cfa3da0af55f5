"""Cross-architecture and cross-thread-count identity of the pinned fixtures.

x86-64 runs every fixture at 1, 2 and 7 threads, aarch64 and s390x (under
qemu-user) at 1 and 7 (conftest's LEG_THREADS says why): one pass over the
suite per leg and thread count, one test each, which checks every fixture of
the pass (each one's stages equal the reference's; a verify pass's cards also
equal the committed cards by `card diff`) and the pass's own verdict: verify's
PASS, or doctor's build facts and self-check. test_arms.py and
test_certify.py show that broken builds fail this."""
import pytest

from conftest import DOCTOR_THREADS, FIXTURES, LEG_THREADS, LEGS, card_diff, leg_pass, reference_card, samebits

def _passes():
    # slowest first (LEGS reversed: s390x's about 300 s a pass in a 2-core
    # `make test`, aarch64's 80, x86-64's 5); conftest collects the passes
    # first, in this order
    for leg in reversed(list(LEGS)):
        for t in LEG_THREADS[leg]:
            yield pytest.param(leg, t, id=f"{leg}-{t}", marks=pytest.mark.leg_pass)


@pytest.mark.parametrize("leg,threads", list(_passes()))
def test_every_fixture_matches_its_reference(leg, threads, tmp_path):
    s = leg_pass(leg, threads, tmp_path)
    out = s.stdout[-3000:] + s.stderr[-2000:]
    bad = [f"{f}: {s.line(f)}" for f in FIXTURES if not s.line(f).startswith("identical")]
    assert not bad, "\n".join(bad) + "\n" + out
    assert sorted(s.lines) == sorted(FIXTURES), out
    assert s.returncode == 0, out
    if threads == DOCTOR_THREADS[leg]:
        for fact in ("self-check: passed", "contraction: off", "excess precision: none", "denormals: kept",
                     f"threads: {threads} ", f"arch: {leg}",
                     "endianness: big" if leg == "s390x" else "endianness: little"):
            assert fact in s.stdout, (fact, out)
        return
    n = len(FIXTURES)
    assert f"{n} fixtures: {n} identical, 0 not identical (0 differ, 0 refused, 0 errors)" in s.stdout, out
    assert s.stdout.rstrip().endswith("verify: PASS"), out
    assert f"arch {leg}, device cpu, threads {threads}" in s.stdout.splitlines()[0], out
    for f in FIXTURES:
        card = s.cards / f"{f}.card"
        assert card.exists(), (f, out)
        assert f'"meta.threads":"{threads}"' in card.read_text().splitlines()[0], f
        d = card_diff(reference_card(f), card)
        assert d is None, (f, d)


def test_reference_cards_cover_every_fixture():
    r = samebits("fixture", "list")
    assert r.returncode == 0
    assert sorted(r.stdout.split()) == sorted(FIXTURES)
    for f in FIXTURES:
        assert reference_card(f).exists(), f"no reference card for {f}"
