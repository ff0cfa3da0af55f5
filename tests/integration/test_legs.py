"""Cross-architecture and cross-thread-count identity of the pinned fixtures.

Every leg (x86-64 natively, aarch64 and s390x under qemu-user) runs every
fixture at 1, 2 and 7 threads; each card must equal the committed reference
card stage for stage. test_arms.py shows that broken builds fail this."""
import pytest

from conftest import FIXTURES, LEGS, THREAD_COUNTS, reference_card, run_bin, samebits


@pytest.mark.parametrize("threads", THREAD_COUNTS)
@pytest.mark.parametrize("leg", list(LEGS))
@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_card_matches_reference(fixture, leg, threads, tmp_path):
    card = tmp_path / f"{fixture}-{leg}-{threads}.card"
    r = run_bin(leg, "samebits", ["fixture", "run", fixture, "--threads", str(threads),
                                  "--out", str(card)])
    assert r.returncode == 0, r.stderr
    d = samebits("card", "diff", str(reference_card(fixture)), str(card))
    assert d.returncode == 0 and d.stdout.strip() == "identical", d.stdout + d.stderr


@pytest.mark.parametrize("leg", list(LEGS))
def test_doctor_self_check_passes(leg):
    r = run_bin(leg, "samebits", ["doctor"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check: passed" in r.stdout
    assert "contraction: off" in r.stdout
    assert "denormals: kept" in r.stdout
    assert f"arch: {leg}" in r.stdout
    assert ("endianness: big" if leg == "s390x" else "endianness: little") in r.stdout


def test_reference_cards_cover_every_fixture():
    r = samebits("fixture", "list")
    assert r.returncode == 0
    assert sorted(r.stdout.split()) == sorted(FIXTURES)
    for f in FIXTURES:
        assert reference_card(f).exists(), f"no reference card for {f}"
