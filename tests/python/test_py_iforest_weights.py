"""IsolationForest's sample weights (issue 20; docs/forest.md, "Isolation forest
sample weights"): each tree draws max_samples rows without replacement, each
draw a row not yet drawn with probability proportional to its weight; rows of
weight zero are never drawn; equal weights are the unweighted forest's bytes;
the same bytes at any n_jobs, on cpu-batched and OpenCL, and through a warm
start; a weight of 2 is not two copies of the row."""
import pytest

import samebits

np = pytest.importorskip("numpy")

RNG = np.random.default_rng(7)
N = 600
X = RNG.normal(size=(N, 3))
W = RNG.uniform(0.2, 3.0, size=N)
W[::4] = 0.0  # a quarter of the rows: weight zero
# the rows of weight zero are far out on feature 0: a threshold there shows one drawn
X[::4, 0] = 50.0 + np.arange(0, N, 4)
KW = dict(n_estimators=12, max_samples=100, random_state=3)


def _thresholds(m, feature):
    return [nd["threshold"] for t in m.dump_model()["trees"] for nd in t["nodes"]
            if nd.get("split_feature") == feature]


def test_rows_of_weight_zero_are_never_drawn():
    m = samebits.IsolationForest(**KW).fit(X, sample_weight=W)
    assert max(_thresholds(m, 0)) < 50.0
    # unweighted, the far rows are drawn and split off
    u = samebits.IsolationForest(**KW).fit(X)
    assert max(_thresholds(u, 0)) > 50.0
    # max_samples beyond the rows of positive weight: every tree draws all of them
    everything = samebits.IsolationForest(n_estimators=3, max_samples=N, random_state=3).fit(X, sample_weight=W)
    assert everything.max_samples_ == int((W > 0).sum()) == 450
    assert [t["nodes"][0]["count"] for t in everything.dump_model()["trees"]] == [450] * 3


def test_equal_weights_are_the_unweighted_forest_and_unequal_ones_are_not():
    ref = samebits.IsolationForest(**KW).fit(X).model_bytes()
    for w in (np.ones(N), np.full(N, 7.5), [2] * N):
        assert samebits.IsolationForest(**KW).fit(X, sample_weight=w).model_bytes() == ref
    assert samebits.IsolationForest(**KW).fit(X, sample_weight=W).model_bytes() != ref
    # a power-of-two scale of the weights is the same fixed point: no bit moves
    a = samebits.IsolationForest(**KW).fit(X, sample_weight=W).model_bytes()
    assert samebits.IsolationForest(**KW).fit(X, sample_weight=W * 8.0).model_bytes() == a


def test_heavy_rows_are_drawn_more():
    # two groups, same shape: weights 10 on the second. The heavy group is
    # what the trees see, so its rows score as less anomalous than the light ones
    Z = np.vstack([RNG.normal(size=(300, 2)), RNG.normal(size=(300, 2)) + 6.0])
    w = np.r_[np.ones(300), np.full(300, 10.0)]
    m = samebits.IsolationForest(n_estimators=50, max_samples=64, random_state=0).fit(Z, sample_weight=w)
    s = np.asarray(m.score_samples(Z))
    u = samebits.IsolationForest(n_estimators=50, max_samples=64, random_state=0).fit(Z)
    su = np.asarray(u.score_samples(Z))
    # unweighted the groups score alike (within 0.05); weighted the heavy one
    # scores well above the light one (0.15 here)
    assert abs(su[300:].mean() - su[:300].mean()) < 0.05
    assert s[300:].mean() - s[:300].mean() > 0.1


def test_same_bytes_at_any_n_jobs_and_device():
    """n_jobs 1 and 2, and every device SAMEBITS_FOREST_DEVICES names (default
    cpu-batched and OpenCL; the H200 run names cuda too): one forest's bytes."""
    import os
    ref = samebits.IsolationForest(n_jobs=1, **KW).fit(X, sample_weight=W).model_bytes()
    assert samebits.IsolationForest(n_jobs=2, **KW).fit(X, sample_weight=W).model_bytes() == ref
    named = os.environ.get("SAMEBITS_FOREST_DEVICES")
    for d in (named.split(",") if named else ["cpu-batched", "opencl"]):
        try:
            got = samebits.IsolationForest(device=d, **KW).fit(X, sample_weight=W).model_bytes()
        except samebits.BackendUnavailableError as e:  # no such platform here: refused by name
            if named:
                raise
            pytest.skip(str(e))
        assert got == ref, d


def test_warm_start_is_the_whole_fit():
    full = samebits.IsolationForest(**KW).fit(X, sample_weight=W).model_bytes()
    kw = dict(KW, n_estimators=5)
    m = samebits.IsolationForest(warm_start=True, **kw).fit(X, sample_weight=W)
    m.set_params(n_estimators=12)
    assert m.fit(X, sample_weight=W).model_bytes() == full


def test_weight_two_is_not_two_copies():
    # row 0 at weight 2 against row 0 repeated: other bytes (the draws go by
    # row position, and a row is drawn at most once)
    w = np.ones(N)
    w[0] = 2.0
    a = samebits.IsolationForest(**KW).fit(X, sample_weight=w)
    b = samebits.IsolationForest(**KW).fit(np.vstack([X[:1], X]))
    assert a.model_bytes() != b.model_bytes()
    assert a.max_samples_ == b.max_samples_ == 100


def test_weights_are_not_overwritten_and_bad_ones_refused():
    w = W.copy()
    samebits.IsolationForest(**KW).fit(X, sample_weight=w)
    assert np.array_equal(w, W)
    for bad, msg in ((np.r_[W[:-1], -1.0], "sample_weight\\[599\\]"), (np.r_[W[:-1], np.nan], ">= 0"),
                     (np.zeros(N), "all zero"), (np.r_[1.0, np.zeros(N - 1)], "2 rows of positive")):
        with pytest.raises(samebits.InvalidInputError, match=msg):
            samebits.IsolationForest(**KW).fit(X, sample_weight=bad)
