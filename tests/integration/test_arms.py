"""Separating arms: deliberately broken builds that the identity checks must
catch. An identity test counts only because these builds fail it.

  contract      -ffp-contract=fast on aarch64 and s390x (rule 2)
  libm-exp      glibc's expf in place of the profile's exp (rule 3)
  thread-chunks a float reduction chunked by thread count (rules 4 and 8)
  excess-precision  float expressions evaluated in double on s390x (rule 2)
"""
import pytest

from conftest import reference_card, run_bin, samebits


def _card(leg, fixture, threads, tmp_path, sabotage):
    path = tmp_path / f"{fixture}-{leg}-{sabotage}-{threads}.card"
    r = run_bin(leg, "samebits", ["fixture", "run", fixture, "--threads", str(threads),
                                  "--out", str(path)], sabotage=sabotage)
    assert r.returncode == 0, r.stderr
    return path


def _first_diff(a, b):
    d = samebits("card", "diff", str(a), str(b))
    assert d.returncode in (0, 1), d.stderr
    return None if d.returncode == 0 else d.stdout.splitlines()[0]


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_arm_contraction_is_caught(leg, tmp_path):
    r = run_bin(leg, "samebits", ["doctor"], sabotage="contract")
    assert "contraction: ON" in r.stdout, r.stdout
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    card = _card(leg, "logit-train", 2, tmp_path, "contract")
    diff = _first_diff(reference_card("logit-train"), card)
    assert diff is not None, "a contracting build produced the reference card"
    print(leg, "contract:", diff)


def test_arm_libm_exp_is_caught(tmp_path):
    r = run_bin("x86_64", "samebits", ["doctor"], sabotage="libm-exp")
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    card = _card("x86_64", "profile-core", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("profile-core"), card)
    assert diff is not None and "math.exp" in diff, diff


def test_arm_thread_chunks_is_caught(tmp_path):
    r = run_bin("x86_64", "samebits", ["doctor"], sabotage="thread-chunks")
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    cards = {t: _card("x86_64", "logit-train", t, tmp_path, "thread-chunks") for t in (1, 2, 7)}
    # Against the reference, and against each other: the thread count now shows.
    assert _first_diff(reference_card("logit-train"), cards[2]) is not None
    d = _first_diff(cards[1], cards[7])
    assert d is not None and "step0.weights" in d, d
    assert _first_diff(cards[2], cards[7]) is not None


def test_unsabotaged_builds_pass_the_same_checks(tmp_path):
    """The control: the real build passes exactly what the arms fail."""
    for t in (1, 2, 7):
        card = _card("x86_64", "logit-train", t, tmp_path, None)
        assert _first_diff(reference_card("logit-train"), card) is None


def test_arm_excess_precision_is_caught(tmp_path):
    """gcc for s390x evaluates float expressions in double under ISO C with
    -fexcess-precision=standard; the real build avoids it, the arm restores it."""
    r = run_bin("s390x", "samebits", ["doctor"], sabotage="excess-precision")
    assert "excess precision: PRESENT" in r.stdout, r.stdout
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    card = _card("s390x", "logit-train", 2, tmp_path, "excess-precision")
    diff = _first_diff(reference_card("logit-train"), card)
    assert diff is not None, "a build with excess precision produced the reference card"
    r = run_bin("s390x", "samebits", ["doctor"])
    assert "excess precision: none" in r.stdout


# ---- gradient boosting arms (issue: gbdt on the CPU) ----

GBDT_FIXTURES = ("gbdt-regression", "gbdt-binary", "gbdt-multiclass")


@pytest.mark.parametrize("fixture", GBDT_FIXTURES)
def test_arm_float_histogram_is_caught(fixture, tmp_path):
    """Float histograms summed per thread: the thread count shows in the model."""
    r = run_bin("x86_64", "samebits", ["doctor", "--threads", "2"], sabotage="float-hist")
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    for t in (2, 7):
        card = _card("x86_64", fixture, t, tmp_path, "float-hist")
        d = _first_diff(reference_card(fixture), card)
        assert d is not None, f"float histograms on {t} threads gave the reference card"


@pytest.mark.parametrize("fixture", GBDT_FIXTURES)
def test_arm_ties_without_total_order_is_caught(fixture, tmp_path):
    """Equal gains settled by scan order instead of (gain, feature, bin): the
    fixtures hold an exact duplicate column, so the chosen feature changes."""
    card = _card("x86_64", fixture, 1, tmp_path, "ties")
    d = _first_diff(reference_card(fixture), card)
    assert d is not None and "splits" in d, d


@pytest.mark.parametrize("fixture", ["gbdt-regression", "gbdt-binary"])
def test_arm_sampling_by_consumption_order_is_caught(fixture, tmp_path):
    """Row subsampling drawn from per-thread streams in consumption order."""
    r = run_bin("x86_64", "samebits", ["doctor", "--threads", "2"], sabotage="rng-order")
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    for t in (2, 7):
        card = _card("x86_64", fixture, t, tmp_path, "rng-order")
        assert _first_diff(reference_card(fixture), card) is not None


def test_weighted_forest_fixtures_catch_their_arms(tmp_path):
    """Forest weights (issue #7): bootstrap draws from per-worker streams change
    the weighted random forest (its balanced_subsample class weights come from
    the draws), and impurity sums in float change the weighted Extra Trees
    regression, at 2 and 7 threads alike."""
    for t in (2, 7):
        card = _card("x86_64", "forest-rf-weighted", t, tmp_path, "rng-order")
        assert _first_diff(reference_card("forest-rf-weighted"), card) is not None
        card = _card("x86_64", "forest-et-weighted", t, tmp_path, "float-hist")
        assert _first_diff(reference_card("forest-et-weighted"), card) is not None


def test_verify_fails_on_an_arm_and_names_the_stage():
    """`samebits verify` is the user's check: on a broken build it must fail and
    say where the first difference is."""
    r = run_bin("x86_64", "samebits", ["verify", "profile-core"], sabotage="libm-exp")
    assert r.returncode == 1, r.stdout
    assert "profile-core    DIFFERS: differ at stage 5: math.exp (digest)" in r.stdout, r.stdout


# ---- ranking arm (issue #8) ----

@pytest.mark.parametrize("fixture,stage", [("gbdt-lambdarank", "tree0.grad_q"), ("gbdt-rank-pairwise", "tree1.grad_q")])
def test_arm_rank_ties_without_total_order_is_caught(fixture, stage, tmp_path):
    """Documents with equal margins ranked by another rule than (margin, row):
    every margin is equal before the first tree, so lambdarank's position
    discounts change at once; pairwise gradients do not depend on positions, so
    only the order of its sums can show, from the second tree on."""
    card = _card("x86_64", fixture, 1, tmp_path, "rank-ties")
    d = _first_diff(reference_card(fixture), card)
    assert d is not None and stage in d, d
