"""Separating arms: deliberately broken builds that the identity checks must
catch. An identity test counts only because these builds fail it.

  contract      -ffp-contract=fast on aarch64 and s390x (rule 2)
  libm-exp      glibc's expf in place of the profile's exp (rule 3)
  thread-chunks a float reduction chunked by thread count (rules 4 and 8)
  excess-precision  float expressions evaluated in double on s390x (rule 2)
  libm-log, libm-sigmoid  glibc's logf; the sigmoid through expf (rule 3)
  forest-ties   forest split ties to the higher feature and bin (rules 5, 7)
  bin-key       the binning key from the raw bits: -0 apart from +0 (rule 7)
  writer-endian the model writer in host byte order, caught on s390x (rule 9)
  f64-conv      decimals rounded through float64 (rule 1)
  refusal-downgrade  a device this build lacks run on the CPU (rule 10)
  nan-side      missing values always left at a node without any, not with the
                majority (rule 7: a stated rule, the same on every backend)
  proba-recip   a forest classifier's probabilities as m * (1/s), two roundings
  mono-order    monotone constraints' bounded score and bound midpoint rounded in another order
  dart-scale    DART's dropped trees scaled by v * k / (k + 1), two roundings
                where the profile has one division (rule 2)
  ets-sse-order exponential smoothing's SSE added in pairs (rule 4)
  ets-auto-tie  AutoETS's tie of AICc to the later candidate (rule 7)
  umap-epoch-order  UMAP's epoch moves applied in reverse edge order (rule 4)
  umap-lane-deps UMAP's epoch lanes without the dependence test (rule 4)
  umap-nnd-ties UMAP's NN-descent ties by descending index (rule 7)


  gp-chol-order the gaussian process's Cholesky diagonal blocks sum the products first (rule 4)
  mlp-grad-order the mlp's bias gradients summed in float32 from the last row
                up instead of exactly (rule 4)
  lm-attn-order the byte lm's attention softmax normalizer summed in float32
                from the last key down instead of exactly (rule 4)
  iforest-wdraw the weighted isolation subsample drawn with replacement over
                every row's weight, repeats rejected (rule 6: the draw is a
                stated rule, not only a distribution)

docs/verification.md ("Separating arms") has the full list and one row per
rule of DESIGN.md section 1; the last test here checks that table.

The contraction arm must bite in the training code, not in the fixtures' own
inputs or the host's binning: those round every product on their own
(sb_round_f32), so under the arm the inputs card and the binning stages stay
the reference's and the first stage that parts is one the kernels compute
(docs/verification.md, "Where contraction can bite").
"""
import re
import subprocess

import pytest

from conftest import ROOT, reference_card, run_bin, samebits


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


def _parted_stages(a, b, case):
    """The stages of fixture case `case` (from its case.<name> stage to the
    next case's) whose digests differ between cards a and b: an arm's first
    difference is an earlier case's; this shows it reaches that case too."""
    import json

    def stages(path):
        out, inside = [], False
        for line in open(path):
            rec = json.loads(line)
            if "stage" not in rec:
                continue
            if rec["stage"].startswith("case."):
                inside = rec["stage"] == "case." + case
            if inside:
                out.append((rec["stage"], rec["sha256"]))
        return out
    sa, sb = stages(a), stages(b)
    assert sa and [n for n, _ in sa] == [n for n, _ in sb], (sa, sb)
    return [n for (n, x), (_, y) in zip(sa, sb) if x != y]


PROBE_CASE = "test_build_info_probes_find_the_profile_arithmetic"


def probe_fails(leg, sabotage, fact):
    """The arm's own build of the unit case that reads the build's probes
    (the text doctor prints) fails it, saying `fact`: the probe catches the
    arm without a whole self-check under qemu (test_unit.py runs the case on
    every real leg, where it passes)."""
    r = run_bin(leg, "sb_unit", [PROBE_CASE], sabotage=sabotage)
    assert r.returncode != 0 and "0 passed, 1 failed" in r.stdout, r.stdout + r.stderr
    assert fact in r.stderr, r.stderr


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_arm_contraction_is_caught(leg, tmp_path):
    probe_fails(leg, "contract", "contraction: ON")
    card = _card(leg, "logit-train", 2, tmp_path, "contract")
    diff = _first_diff(reference_card("logit-train"), card)
    assert diff is not None, "a contracting build produced the reference card"
    print(leg, "contract:", diff)


# Where each family's training code has a multiply feeding an add (the sites
# tools/contraction-sites.sh lists): ranking gradients (gbdt/rank.c, the
# host's lambda and hessian sums), the forest's Gini and entropy sums
# (kernels/forest.h). The forest card records no stage between the bins and
# the grown trees, so its kernels show in the model bytes.
CONTRACT_KERNEL_STAGES = [("gbdt-lambdarank", "tree0.grad_q"), ("gbdt-objectives", "tree0.grad_q"),
                          ("forest-rf-entropy", "forest.model_bytes"),
                          ("explain-trees", "explain.gbdt.contrib"),
                          ("kde-fit", "blobs.cosine.kernel_sums")]


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
@pytest.mark.parametrize("fixture,stage", CONTRACT_KERNEL_STAGES)
def test_arm_contraction_parts_in_the_kernels(leg, fixture, stage, tmp_path):
    """Under -ffp-contract=fast the inputs are the pinned bytes, and the card
    parts first at a stage of the training kernels (the comparator names the
    first differing stage, so every binning stage before it is identical)."""
    inputs = tmp_path / f"{fixture}-{leg}.inputs.card"
    r = run_bin(leg, "samebits", ["fixture", "inputs", fixture, "--out", str(inputs)], sabotage="contract")
    assert r.returncode == 0, r.stderr
    assert _first_diff(ROOT / "fixtures" / "cards" / f"{fixture}.inputs.card", inputs) is None, \
        "the contracting build generated other inputs: the arm no longer reaches the kernels alone"
    card = _card(leg, fixture, 2, tmp_path, "contract")
    d = _first_diff(reference_card(fixture), card)
    assert d is not None, f"a contracting build produced the reference card of {fixture}"
    assert f": {stage} (" in d, d


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_arm_contraction_parts_lm_fit(leg, tmp_path):
    """The byte lm's training (layer norm, GELU, AdamW, the attention's
    scaling: kernels/nn.h's rows) has multiply-adds: under -ffp-contract=fast
    on aarch64 and on s390x its inputs are the pinned bytes and lm-fit parts
    at step 0's first gradient (recorded on both legs)."""
    inputs = tmp_path / f"lm-fit-{leg}.inputs.card"
    r = run_bin(leg, "samebits", ["fixture", "inputs", "lm-fit", "--out", str(inputs)], sabotage="contract")
    assert r.returncode == 0, r.stderr
    assert _first_diff(ROOT / "fixtures" / "cards" / "lm-fit.inputs.card", inputs) is None
    d = _first_diff(reference_card("lm-fit"), _card(leg, "lm-fit", 2, tmp_path, "contract"))
    assert d is not None and ": train.step0.grad.wte (" in d, d


def test_gbdt_kernels_have_no_contraction_site(tmp_path):
    """The gradient boosting kernels (gradients, quantization, histograms,
    gains, leaf values, prediction) have no multiply feeding an add, so with
    the inputs and binning exact the contracting build trains the reference's
    model bit for bit; the day a site is added this fails, and
    docs/verification.md must say which fixture makes it bite."""
    for fixture in ("gbdt-regression", "gbdt-binary"):
        card = _card("aarch64", fixture, 2, tmp_path, "contract")
        assert _first_diff(reference_card(fixture), card) is None, fixture


def _cpu_sites(*sources):
    """tools/contraction-sites.sh cpu SOURCES: the f32 sites, as FILE:LINE strings."""
    r = subprocess.run(["sh", "tools/contraction-sites.sh", "cpu", *sources], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("cpu ") and " f32 " in ln]


def test_contraction_sites_are_where_the_docs_say():
    """The table of docs/verification.md, checked on the CPU's code: the
    fixtures' input generators and binning have no site left, the gbdt
    training path none, the forest kernels exactly the Gini and entropy sums."""
    assert _cpu_sites("src/fixtures/gbdt_fixtures.c", "src/fixtures/gbdt_hostile.c", "src/fixtures/rank_fixtures.c",
                      "src/models/trees/binning.c") == []
    # the gbdt training path: the Tweedie gradient's two lines alone (-y a + b and its hessian's sum of
    # products, sb_k_grad_tweedie in src/kernels/gbdt.h; gbdt-objectives' tweedie run makes them bite)
    src = (ROOT / "src" / "kernels" / "gbdt.h").read_text().splitlines()
    first = next(i for i, ln in enumerate(src) if "SB_FN void sb_k_grad_tweedie" in ln) + 1
    tweedie = ["src/kernels/gbdt.h:%d" % (first + 2), "src/kernels/gbdt.h:%d" % (first + 3)]
    # and monotone constraints' bounded leaf score (sb_k_leaf_score_at, the profile's spelling)
    bounded = next(i for i, ln in enumerate(src) if "return -((2.0f * t) * w + ((h + lambda) * w) * w);" in ln) + 1
    assert _cpu_sites("src/models/gbdt/gbdt.c", "src/models/trees/grow.c", "src/models/trees/grow_dev.c",
                      "src/models/trees/tdev_host.c", "src/models/predict.c") == sorted(
                          tweedie + ["src/kernels/gbdt.h:%d" % bounded], key=lambda x: int(x.split(":")[1]))
    assert _cpu_sites("src/models/forest/forest.c") == [
        "src/kernels/forest.h:213", "src/kernels/forest.h:221", "src/kernels/forest.h:225"]
    # TreeSHAP: the leaf's share added to phi, and the trees' expectations (src/kernels/tree.h)
    sites = _cpu_sites("src/models/explain.c")
    assert len(sites) == 2 and all(s.startswith("src/kernels/tree.h:") for s in sites), sites
    # kernel density's fixture inputs have none (its sites are all double: the host's sums and polynomials)
    assert _cpu_sites("src/fixtures/density_fixtures.c") == []


def test_arm_libm_exp_is_caught(tmp_path):
    r = run_bin("x86_64", "samebits", ["doctor"], sabotage="libm-exp")
    assert r.returncode == 1 and "self-check: FAILED" in r.stdout, r.stdout
    card = _card("x86_64", "profile-core", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("profile-core"), card)
    assert diff is not None and "math.exp" in diff, diff
    # the log-link objectives' exp in the gradients (gbdt-objectives' poisson run)
    card = _card("x86_64", "gbdt-objectives", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("gbdt-objectives"), card)
    assert diff is not None and ("hess_q" in diff or "grad_q" in diff), diff
    # kernel density's gaussian terms (the kernel sums before their log)
    card = _card("x86_64", "kde-fit", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("kde-fit"), card)
    assert diff is not None and "blobs.gaussian.kernel_sums" in diff, diff
    # support vector machines' rbf kernel values (the SMO path before the model)
    card = _card("x86_64", "svm-fit", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("svm-fit"), card)
    assert diff is not None and "svm.pair" in diff and ".alpha" in diff, diff
    # the byte lm's exponentials (the cross-entropy's softmax and the attention's): a trained step parts
    card = _card("x86_64", "lm-fit", 2, tmp_path, "libm-exp")
    diff = _first_diff(reference_card("lm-fit"), card)
    assert diff is not None and "train.step0." in diff and "init." not in diff, diff


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
    -fexcess-precision=standard; the real build avoids it (its doctor says
    "excess precision: none": test_legs.py), the arm restores it."""
    probe_fails("s390x", "excess-precision", "excess precision: PRESENT")
    card = _card("s390x", "logit-train", 2, tmp_path, "excess-precision")
    diff = _first_diff(reference_card("logit-train"), card)
    assert diff is not None, "a build with excess precision produced the reference card"


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


@pytest.mark.parametrize("fixture", ["gbdt-missing-shift", "gbdt-regression", "gbdt-multiclass", "gbdt-lambdarank"])
def test_arm_nan_side_is_caught(fixture, tmp_path):
    """Missing values sent left at every node without any (the rule before
    the majority's, kernels/tree.h sb_k_split_at): the split record carries
    the side, so the first tree's splits part; gbdt-missing-shift's
    validation margins read the side as well."""
    card = _card("x86_64", fixture, 1, tmp_path, "nan-side")
    d = _first_diff(reference_card(fixture), card)
    assert d is not None and "tree0.splits" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_lin_dot_is_caught(threads, tmp_path):
    """The linear family's dot products as float sums chunked by thread (the
    reduction rule 4 forbids): linear-fit parts from its reference card at one
    thread (another order of the same sum) and at two (another chunking)."""
    card = _card("x86_64", "linear-fit", threads, tmp_path, "lin-dot")
    d = _first_diff(reference_card("linear-fit"), card)
    assert d is not None, "the lin-dot arm did not part linear-fit"
    # and coordinate descent with several targets (appended cases): some target's stages part too
    for case in ("lasso-targets", "elasticnet-targets"):
        parted = _parted_stages(reference_card("linear-fit"), card, case)
        assert any(".target" in p for p in parted), (case, parted)


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_ets_sse_order_is_caught(threads, tmp_path):
    """Exponential smoothing's SSE added in pairs (the same squares, another
    order; rule 4): ets-fit parts from its reference card, and the refusals
    at its end (no arithmetic) are not what parts first."""
    card = _card("x86_64", "ets-fit", threads, tmp_path, "ets-sse-order")
    d = _first_diff(reference_card("ets-fit"), card)
    assert d is not None, "the ets-sse-order arm did not part ets-fit"
    assert "refuse." not in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_ets_auto_tie_is_caught(threads, tmp_path):
    """AutoETS's tie rule reversed (rule 7: a stated tie rule): ets-fit parts
    at the constant case's pick (every candidate's AICc is minus infinity),
    and no earlier stage moves (the fits are untouched)."""
    card = _card("x86_64", "ets-fit", threads, tmp_path, "ets-auto-tie")
    d = _first_diff(reference_card("ets-fit"), card)
    assert d is not None, "the ets-auto-tie arm did not part ets-fit"
    assert "auto.constant.pick" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_arima_kalman_order_is_caught(threads, tmp_path):
    """ARIMA's Kalman filter adding T P T' + R R' in another order (the same
    three terms; rule 4): arima-fit parts from its reference card in a
    fitted case, not at the refusals at its end (no arithmetic)."""
    card = _card("x86_64", "arima-fit", threads, tmp_path, "arima-kalman-order")
    d = _first_diff(reference_card("arima-fit"), card)
    assert d is not None, "the arima-kalman-order arm did not part arima-fit"
    assert "refuse." not in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_gp_chol_order_is_caught(threads, tmp_path):
    """Gaussian process regression's Cholesky diagonal blocks summing each
    element's products first and subtracting the sum once (the same
    products, another order; rule 4): gp-fit parts from its
    reference card at a fitted stage (the optimizer's first start, its trace
    or the factor), never at the refusals at its end."""
    card = _card("x86_64", "gp-fit", threads, tmp_path, "gp-chol-order")
    d = _first_diff(reference_card("gp-fit"), card)
    assert d is not None, "the gp-chol-order arm did not part gp-fit"
    assert "refuse." not in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_mlp_grad_order_is_caught(threads, tmp_path):
    """The mlp's bias gradients summed in float32 from the last row up (the
    same values, another order, rounded at every add; rule 4): mlp-fit parts
    from its reference card at a trained stage (an epoch's parameters or
    loss), never at the refusals at its end."""
    card = _card("x86_64", "mlp-fit", threads, tmp_path, "mlp-grad-order")
    d = _first_diff(reference_card("mlp-fit"), card)
    assert d is not None, "the mlp-grad-order arm did not part mlp-fit"
    assert "refuse." not in d and ".e0." not in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_lm_attn_order_is_caught(threads, tmp_path):
    """The byte lm's attention softmax normalizer summed in float32 from the
    last key down (the same terms, another order, rounded at every add; rule
    4): lm-fit parts from its reference card at a trained stage (a step's
    loss, gradients or parameters), never at the initialization or the
    refusals at its end."""
    card = _card("x86_64", "lm-fit", threads, tmp_path, "lm-attn-order")
    d = _first_diff(reference_card("lm-fit"), card)
    assert d is not None, "the lm-attn-order arm did not part lm-fit"
    assert "refuse." not in d and "init." not in d and ".step" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_umap_epoch_order_is_caught(threads, tmp_path):
    """UMAP's epoch moves applied in reverse edge order (the same moves,
    another order; rule 4): umap-fit parts from its reference card at an
    epoch's embedding, every stage before the epochs (neighbors, graph, a/b,
    init) still the reference's, and verify fails."""
    card = _card("x86_64", "umap-fit", threads, tmp_path, "umap-epoch-order")
    d = _first_diff(reference_card("umap-fit"), card)
    assert d is not None and "umap.epoch." in d, d
    # the spectral fallback's fit (appended, random init) parts too, up to its model's bytes
    parted = _parted_stages(reference_card("umap-fit"), card, "spectral-fallback")
    assert "model.spectral-fallback.bytes" in parted, parted
    r = run_bin("x86_64", "samebits", ["verify", "umap-fit", "--threads", str(threads)], sabotage="umap-epoch-order")
    assert r.returncode != 0, r.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_umap_lane_deps_is_caught(threads, tmp_path):
    """UMAP's epoch lanes starting a row's steps beside the rows in flight
    without the dependence test (rows sharing a position then overlap: the
    same moves, interleaved; rule 4): umap-fit parts from its reference card
    at an epoch's embedding, every stage before the epochs still the
    reference's, and verify fails. The real build's lanes are checked by
    every umap-fit verify (the reference is the sequential loop's)."""
    card = _card("x86_64", "umap-fit", threads, tmp_path, "umap-lane-deps")
    d = _first_diff(reference_card("umap-fit"), card)
    assert d is not None and "umap.epoch." in d, d
    r = run_bin("x86_64", "samebits", ["verify", "umap-fit", "--threads", str(threads)], sabotage="umap-lane-deps")
    assert r.returncode != 0, r.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_umap_nnd_ties_is_caught(threads, tmp_path):
    """UMAP's NN-descent with equal distances ordered by descending index
    (the tie rule reversed; rule 7): umap-fit parts from its reference card
    at the NN-descent case's neighbors (past neighbors=auto's 4,096 rows),
    every stage before it, the exact-search cases and the models included,
    still the reference's, and verify fails."""
    card = _card("x86_64", "umap-fit", threads, tmp_path, "umap-nnd-ties")
    d = _first_diff(reference_card("umap-fit"), card)
    assert d is not None and "umap.neighbors" in d, d
    # and NN-descent under manhattan (its grid rows tie): that case parts too
    parted = _parted_stages(reference_card("umap-fit"), card, "nndescent-manhattan")
    assert "umap.neighbors" in parted, parted
    r = run_bin("x86_64", "samebits", ["verify", "umap-fit", "--threads", str(threads)], sabotage="umap-nnd-ties")
    assert r.returncode != 0, r.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_kmeans_ties_is_caught(threads, tmp_path):
    """k-means' assignment with ties to the higher center index: kmeans-fit
    parts from its reference card at a run's labels (the duplicates case puts
    rows at exactly equal distance from two centers)."""
    card = _card("x86_64", "kmeans-fit", threads, tmp_path, "kmeans-ties")
    d = _first_diff(reference_card("kmeans-fit"), card)
    assert d is not None and "labels" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_knn_ties_is_caught(threads, tmp_path):
    """Nearest neighbors with equal distances ordered to the higher index:
    knn-fit parts from its reference card at the duplicates case's neighbor
    lists (three points ten times each, k = 12: every list ends in ties)."""
    card = _card("x86_64", "knn-fit", threads, tmp_path, "knn-ties")
    d = _first_diff(reference_card("knn-fit"), card)
    assert d is not None and "duplicates.kneighbors" in d, d
    # manhattan's own search (no screen) orders by the same rule: its grid case parts too
    parted = _parted_stages(reference_card("knn-fit"), card, "manhattan-grid")
    assert any("kneighbors" in p for p in parted), parted


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_knn_bound_is_caught(threads, tmp_path):
    """The nearest-neighbors screen trusted as exact (its bound 0): knn-fit
    parts from its reference card at the far-from-origin case, whose float32
    screen cannot order rows 2^-10 apart 12288 from the origin."""
    card = _card("x86_64", "knn-fit", threads, tmp_path, "knn-bound")
    d = _first_diff(reference_card("knn-fit"), card)
    assert d is not None and "far-from-origin" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_kde_order_is_caught(threads, tmp_path):
    """Kernel density's sum over the training rows in reversed index order:
    kde-fit parts from its reference card at its first kernel sums (the
    doubles before their log; the model bytes and bandwidth before them stay
    the reference's), and verify names the stage."""
    card = _card("x86_64", "kde-fit", threads, tmp_path, "kde-order")
    d = _first_diff(reference_card("kde-fit"), card)
    assert d is not None and "blobs.gaussian.kernel_sums" in d, d
    r = run_bin("x86_64", "samebits", ["verify", "kde-fit", "--threads", str(threads)], sabotage="kde-order")
    assert r.returncode != 0 and "kernel_sums" in r.stdout, r.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_svm_wss_ties_is_caught(threads, tmp_path):
    """SMO's working-set ties broken by the higher index instead of the lower:
    svm-fit parts from its reference card at the first pair's iteration count
    (every +1 row ties at the start, so the first working set changes), and
    verify names the stage."""
    card = _card("x86_64", "svm-fit", threads, tmp_path, "svm-wss-ties")
    d = _first_diff(reference_card("svm-fit"), card)
    assert d is not None and "svm.pair0" in d, d
    r = run_bin("x86_64", "samebits", ["verify", "svm-fit", "--threads", str(threads)], sabotage="svm-wss-ties")
    assert r.returncode != 0 and "svm.pair0" in r.stdout, r.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_dbscan_border_is_caught(threads, tmp_path):
    """DBSCAN's border rows to the highest-index core neighbor's cluster:
    dbscan-fit parts from its reference card at the labels (the border-ties
    case puts a border row exactly eps from the cores of two clusters)."""
    card = _card("x86_64", "dbscan-fit", threads, tmp_path, "dbscan-border")
    d = _first_diff(reference_card("dbscan-fit"), card)
    assert d is not None and "labels" in d, d
    # the same line under manhattan (no screen): its labels part too
    assert any("labels" in p for p in _parted_stages(reference_card("dbscan-fit"), card, "manhattan-border-ties"))


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_agglo_ties_is_caught(threads, tmp_path):
    """Agglomerative merges at equal distance to the higher cluster id:
    agglomerative-fit parts from its reference card at a tree (the line of
    equally spaced rows ties every adjacent pair)."""
    card = _card("x86_64", "agglomerative-fit", threads, tmp_path, "agglo-ties")
    d = _first_diff(reference_card("agglomerative-fit"), card)
    assert d is not None and "agglomerative" in d, d


@pytest.mark.parametrize("threads", [1, 2])
def test_arm_spectral_order_is_caught(threads, tmp_path):
    """Spectral clustering's degrees summed in reverse column order (a
    reordered reduction): spectral-fit parts from its reference card at the
    degrees of its first rbf case."""
    card = _card("x86_64", "spectral-fit", threads, tmp_path, "spectral-order")
    d = _first_diff(reference_card("spectral-fit"), card)
    assert d is not None and "spectral.degrees" in d, d


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


# ---- arms for DESIGN.md rules 1, 3, 7, 9 and 10 (issue 17) ----
#
# Which legs run which arm, and why: the arms whose code is integer logic or
# glibc code that is the same C everywhere (forest-ties, bin-key, f64-conv's
# strtod, refusal-downgrade) cannot part differently by leg, so they run on
# x86-64 only. glibc's logf and expf are other code on aarch64 and s390x (and
# x86-64 picks an FMA variant at run time), so libm-log and libm-sigmoid run on
# all three legs. writer-endian can show only on a big-endian host: s390x.

STAGE = re.compile(r"differ at stage \d+: (\S+) ")


def _stage(diff):
    m = STAGE.search(diff or "")
    return m.group(1) if m else None


@pytest.mark.parametrize("leg", ["x86_64", "aarch64", "s390x"])
def test_arm_libm_log_is_caught(leg, tmp_path):
    """Rule 3: glibc's logf in place of the profile's log. profile-core's log
    stage parts (its training fixtures' few log calls, the base score's logit
    and the forest's entropy sums, happen to land where glibc rounds correctly)."""
    card = _card(leg, "profile-core", 2, tmp_path, "libm-log")
    d = _first_diff(reference_card("profile-core"), card)
    assert _stage(d) == "math.log", d


@pytest.mark.parametrize("leg", ["x86_64", "aarch64", "s390x"])
def test_arm_libm_sigmoid_is_caught(leg, tmp_path):
    """Rule 3: the textbook sigmoid 1/(1+expf(-x)) through libm. profile-core
    parts at its sigmoid stage, and training with it parts too: logistic
    regression's weights after one step, binary boosting's gradients once the
    margins differ (tree1)."""
    card = _card(leg, "profile-core", 2, tmp_path, "libm-sigmoid")
    d = _first_diff(reference_card("profile-core"), card)
    assert _stage(d) == "math.sigmoid", d
    if leg == "x86_64":
        for fixture, stage in (("logit-train", "step1.weights"), ("gbdt-binary", "tree1.grad_q")):
            card = _card(leg, fixture, 2, tmp_path, "libm-sigmoid")
            d = _first_diff(reference_card(fixture), card)
            assert _stage(d) == stage, (fixture, d)


FOREST_TIES = ("forest-rf-classes", "forest-rf-entropy", "forest-et-regression", "forest-rf-weighted",
               "forest-et-weighted")


@pytest.mark.parametrize("fixture", FOREST_TIES)
def test_arm_forest_ties_is_caught(fixture, tmp_path):
    """Rules 5 and 7: forest split candidates of equal score settled to the
    higher feature and bin (still a total order, but not the profile's). The
    forest fixtures hold exact ties (duplicate and coarse columns), so other
    splits are chosen and the training predictions part."""
    card = _card("x86_64", fixture, 2, tmp_path, "forest-ties")
    d = _first_diff(reference_card(fixture), card)
    assert _stage(d) in ("forest.train_raw", "forest.model_bytes"), d


@pytest.mark.parametrize("fixture", ["gbdt-extremes", "gbdt-constant"])
def test_arm_bin_key_is_caught(fixture, tmp_path):
    """Rule 7: the binning key taken from the raw bits, so -0 sorts apart from
    +0 and gets an edge of its own. Both fixtures mix -0 and +0 in a column:
    the bin edges part at once (gbdt-constant's column of zeros gains a bin)."""
    card = _card("x86_64", fixture, 2, tmp_path, "bin-key")
    d = _first_diff(reference_card(fixture), card)
    assert _stage(d) == "gbdt.bin_edges", d


@pytest.mark.parametrize("leg", ["x86_64", "s390x"])
def test_arm_writer_endian_is_caught_on_big_endian(leg, tmp_path):
    """Rule 9: the model writer copies the host's bytes instead of writing
    little-endian. On a little-endian host (x86-64, aarch64) the bug is
    invisible: the bytes are the same, and this test asserts exactly that, so
    the s390x leg is the one that must catch it. There the model bytes part
    (and nothing before them), and the real s390x build writes the reference bytes."""
    fixture = "gbdt-regression"
    card = _card(leg, fixture, 2, tmp_path, "writer-endian")
    d = _first_diff(reference_card(fixture), card)
    if leg == "x86_64":
        assert d is None, d
    else:
        assert _stage(d) == "gbdt.model_bytes", d
    control = _card(leg, fixture, 2, tmp_path, None)
    assert _first_diff(reference_card(fixture), control) is None


def test_arm_f64_conv_is_caught(tmp_path):
    """Rule 1: decimals rounded to float64 first, then to float32. The readers'
    number test holds a decimal just above a float32 midpoint that float64
    rounds onto the midpoint (then to even: 0x3F800000, not 0x3F800001), and a
    decimal beyond FLT_MAX that float64 holds but float32 does not (refused by
    the real reader, an infinity through float64). The real build passes it;
    through the CLI, a CSV with that decimal trains another model."""
    r = run_bin("x86_64", "sb_unit", ["test_io_float_bits"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_bin("x86_64", "sb_unit", ["test_io_float_bits"], sabotage="f64-conv")
    assert r.returncode == 1 and "FAIL test_io_float_bits" in r.stdout, r.stdout
    assert "0x3f800000 != 0x3f800001" in r.stderr, r.stderr
    # The same through `samebits train`: one column whose values differ only
    # in the digits float64 drops; the model (its split threshold) parts.
    data = tmp_path / "halfway.csv"
    rows = ["x,y"] + [f"{'1.000000059604644775390625001' if i % 2 else '1.0000000596046447753906249'},{i % 2}"
                      for i in range(40)]
    data.write_text("\n".join(rows) + "\n")
    digests = {}
    for arm in (None, "f64-conv"):
        model = tmp_path / f"m-{arm}.model"
        r = run_bin("x86_64", "samebits", ["train", "--model", "gbdt", "--data", str(data), "--label", "y",
                                           "--out", str(model), "--threads", "1", "n_estimators=2",
                                           "min_data_in_leaf=1"], sabotage=arm)
        assert r.returncode == 0, r.stderr
        r = run_bin("x86_64", "samebits", ["digest", str(model)])
        assert r.returncode == 0, r.stderr
        digests[arm] = r.stdout.strip()
    assert digests[None] != digests["f64-conv"], digests


def test_arm_refusal_downgrade_is_caught(tmp_path):
    """Rule 10: a device this build lacks quietly becomes the CPU. `verify`
    asked for device=cuda in a build without CUDA must refuse by name and fail;
    the arm instead reports the CPU's cards as identical under the GPU's name
    and passes, and `train device=cuda` trains. The real build refuses both."""
    args = ["verify", "--threads", "2", "gbdt-regression", "device=cuda"]
    r = run_bin("x86_64", "samebits", args)
    assert r.returncode == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in r.stdout, r.stdout
    a = run_bin("x86_64", "samebits", args, sabotage="refusal-downgrade")
    assert a.returncode == 0 and "REFUSED" not in a.stdout and "verify: PASS" in a.stdout, a.stdout
    data = tmp_path / "small.csv"
    data.write_text("x,y\n" + "".join(f"{i % 7},{i % 3}\n" for i in range(30)))
    train = ["train", "--model", "gbdt", "--data", str(data), "--label", "y", "--out", str(tmp_path / "m.model"),
             "n_estimators=2", "device=cuda"]
    r = run_bin("x86_64", "samebits", train)
    assert r.returncode != 0 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr
    a = run_bin("x86_64", "samebits", train, sabotage="refusal-downgrade")
    assert a.returncode == 0, a.stderr


def test_arm_iforest_wdraw_is_caught(tmp_path):
    """Rule 6: the weighted isolation forest's subsample drawn by another rule
    of the same distribution (with replacement over every row's weight,
    repeats rejected, in place of each draw over the rows not yet drawn).
    forest-isolation-weighted parts at its training scores, its binned rows
    and fixed-point weights unchanged; the unweighted isolation forest (equal
    weights take the unweighted draw) and the warm start are unchanged."""
    card = _card("x86_64", "forest-isolation-weighted", 2, tmp_path, "iforest-wdraw")
    d = _first_diff(reference_card("forest-isolation-weighted"), card)
    assert _stage(d) == "iforest.train_score", d
    for fixture in ("forest-isolation", "forest-warm-start"):
        card = _card("x86_64", fixture, 2, tmp_path, "iforest-wdraw")
        assert _first_diff(reference_card(fixture), card) is None, fixture
    control = _card("x86_64", "forest-isolation-weighted", 2, tmp_path, None)
    assert _first_diff(reference_card("forest-isolation-weighted"), control) is None


def _makefile_sabotages():
    """The names in the Makefile's `SABOTAGES :=` list (continuation lines included)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^SABOTAGES :=((?:.*\\\n)*.*)$", text, re.M)
    assert m, "no SABOTAGES list in the Makefile"
    return set(m.group(1).replace("\\\n", " ").split())


def _doc_tables():
    """(rule number -> arms, arms of the arm table) from docs/verification.md."""
    text = (ROOT / "docs" / "verification.md").read_text()
    rules_part = text.split("### Every rule has an arm", 1)[1].split("### The arms", 1)[0]
    arms_part = text.split("### The arms", 1)[1].split("\n## ", 1)[0]
    rules = {}
    for ln in rules_part.splitlines():
        m = re.match(r"^\| (\d+)\. [^|]+\| (.*) \|$", ln)
        if m:
            rules[int(m.group(1))] = re.findall(r"`([^`]+)`", m.group(2))
    listed = [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", arms_part, re.M)]
    return rules, listed


def test_every_device_arm_of_the_docs_is_built_by_both_backends():
    """docs/verification.md's device-arm table names only arms that exist: each
    CUDA variant is one tools/cuda-compile-check.sh can print flags for, each
    OpenCL arm one SAMEBITS_OPENCL_ARM accepts, and tools/device-h200.sh runs
    every one of them (and the mad-enable control)."""
    import subprocess
    text = (ROOT / "docs" / "verification.md").read_text()
    part = text.split("### Device arms", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in part.splitlines() if re.match(r"^\| [\d, ]+\. ", ln)]
    assert len(rows) >= 4, part
    ocl_src = (ROOT / "src" / "backends" / "opencl" / "ocl_common.c").read_text()
    script = (ROOT / "tools" / "device-h200.sh").read_text()
    cuda_all = re.search(r'^CUDA_ARMS_ALL="([^"]*)"', script, re.M).group(1).split()
    ocl_all = re.search(r'^OCL_ARMS_ALL="([^"]*)"', script, re.M).group(1).split()
    for ln in rows:
        cells = ln.split("|")
        for v in re.findall(r"`([a-z0-9-]+)`", cells[2]):
            r = subprocess.run(["sh", "tools/cuda-compile-check.sh", "--print-flags", v], cwd=ROOT,
                               capture_output=True, text=True)
            assert r.returncode == 0, (v, r.stderr)
            assert v in cuda_all, v
        for a in re.findall(r"`([a-z0-9-]+)`", cells[3].split("control:")[0]):
            assert '{"%s", ' % a in ocl_src, a
            assert a in ocl_all, a
    assert re.search(r'^OCL_CONTROLS="mad-enable"', script, re.M)


def test_every_design_rule_names_an_arm_the_makefile_builds():
    """docs/verification.md's rule table: rules 1..10 of DESIGN.md section 1
    each name at least one CPU arm, every arm named is one `make SABOTAGE=`
    knows, every Makefile arm has a row in the arm table, and `make arms`
    builds every native arm."""
    sabotages = _makefile_sabotages()
    rules, listed = _doc_tables()
    assert sorted(rules) == list(range(1, 11)), sorted(rules)
    for n, arms in rules.items():
        assert arms, f"rule {n} names no arm"
        for a in arms:
            assert a in sabotages, f"rule {n} names arm {a!r}, which the Makefile's SABOTAGES lacks"
    assert sorted(listed) == sorted(sabotages), (sorted(set(listed) ^ sabotages))
    native = re.search(r"^NATIVE_ARMS :=((?:.*\\\n)*.*)$", (ROOT / "Makefile").read_text(), re.M)
    native = set(native.group(1).replace("\\\n", " ").split())
    assert sabotages - native <= {"contract", "excess-precision"}, sabotages - native
    # the CPU evidence records every native arm on x86-64 (tools/evidence_cpu.py), but
    # writer-endian, which only a big-endian leg can catch (recorded on s390x)
    import importlib.util
    spec = importlib.util.spec_from_file_location("evidence_cpu", ROOT / "tools" / "evidence_cpu.py")
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    assert native - set(ev.ARMS["x86_64"]) == {"writer-endian"}, native - set(ev.ARMS["x86_64"])
    assert "writer-endian" in ev.ARMS["s390x"]


@pytest.mark.parametrize("fixture", ["forest-rf-classes", "forest-rf-entropy", "forest-rf-weighted"])
def test_arm_proba_recip_is_caught(fixture, tmp_path):
    """Rule 2 (profile v5's forest probabilities): p = m / s, one correctly
    rounded division, spelled as m * (1/s) (what -freciprocal-math or nvcc's
    -prec-div=false make of it). Every stage before the probabilities stays
    the reference's; forest.train_proba parts; the real build passes."""
    card = _card("x86_64", fixture, 2, tmp_path, "proba-recip")
    d = _first_diff(reference_card(fixture), card)
    assert _stage(d) == "forest.train_proba", d
    assert _first_diff(reference_card(fixture), _card("x86_64", fixture, 2, tmp_path, None)) is None


def test_arm_mono_order_is_caught(tmp_path):
    """Rule 2 for the per-node rules (issue 21): monotone constraints' bounded
    leaf score and the children's bound are spelled-out floats; rounded in
    another order they move gbdt-constraints' leaf values at 1 and 2 threads,
    and no other gbdt fixture (the unconstrained search never reads them)."""
    for t in (1, 2):
        card = _card("x86_64", "gbdt-constraints", t, tmp_path, "mono-order")
        d = _first_diff(reference_card("gbdt-constraints"), card)
        assert _stage(d) == "tree0.values", d
    assert _first_diff(reference_card("gbdt-regression"), _card("x86_64", "gbdt-regression", 2, tmp_path,
                                                                "mono-order")) is None


def test_arm_rng_order_catches_bynode_draws(tmp_path):
    """Rule 6 for colsample_bynode: draws keyed by the order the growers visit
    nodes, not by the node's path, part gbdt-constraints at its first splits."""
    for t in (1, 2):
        card = _card("x86_64", "gbdt-constraints", t, tmp_path, "rng-order")
        d = _first_diff(reference_card("gbdt-constraints"), card)
        assert _stage(d) == "tree0.splits", d


def test_arm_dart_scale_is_caught(tmp_path):
    """Rule 2 for DART (issue 21): the dropped trees' scaling is one multiply by
    a factor rounded once; as v * k / (k + 1) (two roundings) the rescaled
    trees move the next iteration's gradients at 1 and 2 threads."""
    for t in (1, 2):
        card = _card("x86_64", "gbdt-dart", t, tmp_path, "dart-scale")
        d = _first_diff(reference_card("gbdt-dart"), card)
        assert d is not None and _stage(d).endswith(".grad_q"), d


def test_arm_cat_ties_is_caught(tmp_path):
    """Rule 3 for categorical features (issue 20): categories of equal key
    g / (h + cat_smooth) are ordered by the smaller bin. gbdt-categorical's
    codes 1 and 2 have the same labels row for row, so their keys tie at the
    first tree's root, and max_cat_threshold=2 makes the set take one of them:
    sorted larger bin first, the set holds the other, at 1 and 2 threads."""
    for t in (1, 2):
        card = _card("x86_64", "gbdt-categorical", t, tmp_path, "cat-ties")
        d = _first_diff(reference_card("gbdt-categorical"), card)
        assert _stage(d) == "tree0.cat_codes", d
