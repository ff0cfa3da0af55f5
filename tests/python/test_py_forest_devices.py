"""The forest device path (src/backends/fdev.h, src/models/forest/forest_dev.c)
against the CPU forest: device=cpu-batched grows the trees level by level, a
batch of trees at a time, with the kernel bodies the GPU runs
(src/kernels/forest.h) in the GPU's data layout on the host; its models must be
the CPU's byte for byte on every configuration and thread count. The
separating arms (float sums in the device's histograms, nodes keyed by creation
order) are in tests/integration/test_forest_devices.py. CUDA itself needs a GPU:
docs/forest.md says how to run the same comparison there. Weighted forests
(sample weights, class_weight, min_weight_fraction_leaf) and the isolation
forest are compared the same way."""
import os

import pytest

np = pytest.importorskip("numpy")
import samebits  # noqa: E402

# The devices compared with the CPU forest: cpu-batched, and opencl where the
# library has it (PoCL here: `make test` installs it, so a missing platform
# fails); on a GPU machine SAMEBITS_LIB=build-cuda/libsamebits.so
# SAMEBITS_FOREST_DEVICES=cuda,cpu-batched runs the same comparison on CUDA,
# and SAMEBITS_FOREST_DEVICES=opencl on the GPU's OpenCL driver
# (tools/device-h200.sh).
_DEFAULT = "cpu-batched,opencl" if "opencl" in samebits.build_info()["backends"] else "cpu-batched"
DEVICES = [d for d in os.environ.get("SAMEBITS_FOREST_DEVICES", _DEFAULT).split(",") if d]
# Those that grow weighted forests and the isolation forest too: every device
# now (opencl since its weighted and isolation kernels; checked on PoCL here).
FULL = list(DEVICES)


def data(n=1500, nf=9, seed=21, classes=3):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, nf)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)            # heavy ties
    X[:, 2] = X[:, 0]                          # an exact duplicate column
    X[:, 3] = 5.0                              # constant
    X[g.random((n, nf)) < 0.05] = np.nan       # missing values
    Xn = np.nan_to_num(X)
    if classes <= 3:
        yc = (np.floor(np.abs(Xn[:, 0] * 4 + Xn[:, 1] + 0.4 * g.standard_normal(n))) % classes).astype(np.int64)
    else:  # about `classes` classes, more sums a node than a GPU thread's small-node search keeps
        yc = np.clip(np.floor((Xn[:, 0] + 0.3 * Xn[:, 4] + 3) * 4), 0, classes - 1).astype(np.int64)
    yr = (Xn[:, 0] * 2 + np.sin(Xn[:, 4]) + Xn[:, 1] ** 2 + 0.1 * g.standard_normal(n)).astype(np.float32)
    return X, yc, yr


RF_C, RF_R = samebits.RandomForestClassifier, samebits.RandomForestRegressor
ET_C, ET_R = samebits.ExtraTreesClassifier, samebits.ExtraTreesRegressor
CONFIGS = [
    ("rf-gini", RF_C, dict(n_estimators=6, random_state=3)),
    ("rf-gini-depth", RF_C, dict(n_estimators=5, max_depth=4, random_state=4)),
    ("rf-entropy-log2-max-samples", RF_C, dict(n_estimators=5, criterion="entropy", max_features="log2",
                                                max_samples=0.6, random_state=1)),
    ("rf-gini-no-bootstrap-leaf", RF_C, dict(n_estimators=4, bootstrap=False, min_samples_leaf=5,
                                              max_features=3, random_state=8)),
    ("rf-squared", RF_R, dict(n_estimators=5, max_depth=9, random_state=2)),
    ("rf-squared-all-features-split", RF_R, dict(n_estimators=4, max_features=1.0, min_samples_split=10,
                                                  random_state=6)),
    ("et-gini", ET_C, dict(n_estimators=6, random_state=3, min_samples_leaf=3)),
    ("et-entropy-bootstrap", ET_C, dict(n_estimators=5, criterion="entropy", bootstrap=True, max_samples=0.8,
                                        random_state=7)),
    ("et-squared", ET_R, dict(n_estimators=6, max_features=0.5, random_state=2)),
    ("et-squared-depth-leaf", ET_R, dict(n_estimators=5, max_depth=6, min_samples_leaf=4, max_bin=31,
                                         random_state=5)),
    # 20 classes, every feature: histograms too large for a GPU block's shared memory
    ("rf-many-classes-all-features", RF_C, dict(n_estimators=3, max_features=1.0, random_state=9)),
    ("et-many-classes", ET_C, dict(n_estimators=3, random_state=9)),
]
MANY = {"rf-many-classes-all-features", "et-many-classes"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("name,cls,kw", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_device_models_equal_cpu(name, cls, kw, threads, device):
    X, yc, yr = data(classes=20 if name in MANY else 3)
    y = yr if cls in (RF_R, ET_R) else yc
    old = samebits.get_num_threads()
    try:
        samebits.set_num_threads(threads)
        a = cls(**kw).fit(X, y)
        b = cls(device=device, **kw).fit(X, y)
    finally:
        samebits.set_num_threads(old)
    assert a.model_bytes() == b.model_bytes(), (name, threads, device)
    assert a.digest() == b.digest()
    # and the trees are not trivial: several splits per tree
    assert len(a.model_bytes()) > 2000


@pytest.mark.parametrize("device", DEVICES)
def test_large_nodes(device):
    # 20,000 rows: nodes of many histogram and partition tiles on a GPU
    X, yc, yr = data(n=20000, nf=7, seed=4)
    for cls, y, kw in ((RF_C, yc, dict(criterion="entropy")), (ET_R, yr, dict(max_features=0.5))):
        a = cls(n_estimators=3, max_depth=8, random_state=2, **kw).fit(X, y)
        b = cls(n_estimators=3, max_depth=8, random_state=2, device=device, **kw).fit(X, y)
        assert a.model_bytes() == b.model_bytes(), (cls.__name__, device)


@pytest.mark.parametrize("device", DEVICES)
def test_node_chunks_change_no_bit(device, monkeypatch):
    # SAMEBITS_CUDA_FOREST_CHUNK / SAMEBITS_OPENCL_FOREST_CHUNK: at most 3
    # nodes a CUDA or OpenCL launch (small and histogram searches in many
    # chunks); the host reference ignores them
    X, yc, yr = data(n=3000, nf=6, seed=8)
    a = RF_C(n_estimators=3, random_state=4).fit(X, yc)
    c = ET_R(n_estimators=3, random_state=4).fit(X, yr)
    monkeypatch.setenv("SAMEBITS_CUDA_FOREST_CHUNK", "3")
    monkeypatch.setenv("SAMEBITS_OPENCL_FOREST_CHUNK", "3")
    assert RF_C(n_estimators=3, random_state=4, device=device).fit(X, yc).model_bytes() == a.model_bytes()
    assert ET_R(n_estimators=3, random_state=4, device=device).fit(X, yr).model_bytes() == c.model_bytes()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", ["1", "4", "64"])
def test_level_chunks_change_no_bit(chunk, device, monkeypatch):
    # SAMEBITS_FOREST_LEVEL_CHUNK: level entries a host task of the device
    # grower (8,192 by default, one chunk here); small chunks make each
    # level's compactions cross many chunk offsets, at 3 threads
    X, yc, yr = data(n=3000, nf=6, seed=9)
    a = RF_C(n_estimators=4, random_state=5).fit(X, yc)
    c = ET_R(n_estimators=4, random_state=5).fit(X, yr)
    old = samebits.get_num_threads()
    monkeypatch.setenv("SAMEBITS_FOREST_LEVEL_CHUNK", chunk)
    try:
        samebits.set_num_threads(3)
        assert RF_C(n_estimators=4, random_state=5, device=device).fit(X, yc).model_bytes() == a.model_bytes()
        assert ET_R(n_estimators=4, random_state=5, device=device).fit(X, yr).model_bytes() == c.model_bytes()
    finally:
        samebits.set_num_threads(old)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batch", ["1", "7", ""])
def test_batches_of_trees_change_no_bit(batch, device, monkeypatch):
    # SAMEBITS_FOREST_BATCH_TREES: trees grown together on the device (a
    # memory choice); two classes, one feature drawn per node
    X, yc, _ = data(n=600, nf=5, seed=3, classes=2)
    a = RF_C(n_estimators=17, max_features=1, random_state=1).fit(X, yc)
    monkeypatch.setenv("SAMEBITS_FOREST_BATCH_TREES", batch)
    b = RF_C(n_estimators=17, max_features=1, random_state=1, device=device).fit(X, yc)
    assert a.model_bytes() == b.model_bytes()


def test_cuda_refused_by_name_without_a_cuda_build():
    if "cuda" in samebits.build_info()["backends"]:
        pytest.skip("this library has the CUDA backend")
    X, yc, _ = data(n=200, nf=6)
    with pytest.raises(samebits.BackendUnavailableError, match="no CUDA backend"):
        RF_C(n_estimators=2, device="cuda").fit(X, yc)


@pytest.mark.parametrize("device", DEVICES)
def test_more_than_64_classes(device):
    # about 90 classes: more sums a node than the OpenCL device's local root
    # sums hold (64), so they go by global atomics
    g = np.random.Generator(np.random.Philox(key=7))
    X = g.standard_normal((3000, 6)).astype(np.float32)
    y = np.clip(np.floor((X[:, 0] + 3) * 15), 0, 99).astype(np.int64)
    assert len(np.unique(y)) > 64
    for cls in (RF_C, ET_C):
        a = cls(n_estimators=3, random_state=1).fit(X, y)
        b = cls(n_estimators=3, random_state=1, device=device).fit(X, y)
        assert a.model_bytes() == b.model_bytes(), (cls.__name__, device)


# ---- weighted forests: the fixed-point weights ride with each position

def weights(n, seed=5, zeros=True):
    g = np.random.Generator(np.random.Philox(key=seed))
    w = (0.25 + 2.0 * g.random(n)).astype(np.float32)
    if zeros:
        w[g.random(n) < 0.08] = 0.0   # rows of weight zero leave the tree
    return w


WEIGHTED = [
    ("rf-sample-weight", RF_C, dict(n_estimators=5, random_state=3), True),
    ("rf-balanced", RF_C, dict(n_estimators=5, class_weight="balanced", max_depth=8, random_state=4), False),
    ("rf-balanced-subsample", RF_C, dict(n_estimators=6, class_weight="balanced_subsample", min_samples_leaf=2,
                                         random_state=5), True),
    ("rf-balanced-subsample-entropy-max-samples", RF_C, dict(n_estimators=4, class_weight="balanced_subsample",
                                                             criterion="entropy", max_samples=0.5, random_state=6),
     False),
    ("rf-class-dict-min-weight", RF_C, dict(n_estimators=4, class_weight={0: 1.0, 1: 3.5, 2: 0.5},
                                            min_weight_fraction_leaf=0.01, random_state=7), True),
    ("rf-squared-weights", RF_R, dict(n_estimators=5, max_depth=10, random_state=2), True),
    ("rf-squared-min-weight", RF_R, dict(n_estimators=4, min_weight_fraction_leaf=0.02, random_state=8), True),
    ("et-gini-weights-leaf", ET_C, dict(n_estimators=5, min_samples_leaf=3, random_state=3), True),
    ("et-balanced-subsample-bootstrap", ET_C, dict(n_estimators=4, bootstrap=True,
                                                    class_weight="balanced_subsample", random_state=9), True),
    ("et-squared-weights-min-weight", ET_R, dict(n_estimators=5, max_features=0.5, min_weight_fraction_leaf=0.005,
                                                 random_state=2), True),
    # 20 classes: the weighted sums (K + 1) too many for the small-node search
    ("rf-many-classes-balanced", RF_C, dict(n_estimators=3, class_weight="balanced", max_features=0.5,
                                            random_state=9), True),
]


@pytest.mark.parametrize("device", FULL)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("name,cls,kw,sw", WEIGHTED, ids=[c[0] for c in WEIGHTED])
def test_weighted_device_models_equal_cpu(name, cls, kw, sw, threads, device):
    X, yc, yr = data(classes=20 if "many" in name else 3)
    y = yr if cls in (RF_R, ET_R) else yc
    w = weights(len(y)) if sw else None
    old = samebits.get_num_threads()
    try:
        samebits.set_num_threads(threads)
        a = cls(**kw).fit(X, y, sample_weight=w)
        b = cls(device=device, **kw).fit(X, y, sample_weight=w)
    finally:
        samebits.set_num_threads(old)
    assert a.model_bytes() == b.model_bytes(), (name, threads, device)
    assert len(a.model_bytes()) > 2000
    # the weights moved the trees: the unweighted forest is another model
    c = cls(device=device, **{k: v for k, v in kw.items() if k not in ("class_weight", "min_weight_fraction_leaf")})
    assert c.fit(X, y).model_bytes() != b.model_bytes()


@pytest.mark.parametrize("device", FULL)
def test_negative_zero_weights(device):
    # -0.0 is a weight of zero (the CPU's w >= 0 accepts it); a device that
    # orders weights by their bits must not take it for the largest
    X, yc, _ = data(n=900, nf=6, seed=13)
    w = weights(len(yc), seed=4)
    wn = w.copy()
    wn[wn == 0] = -0.0
    assert np.signbit(wn).sum() > 20
    for kw in (dict(class_weight="balanced_subsample"), dict(class_weight="balanced"), dict()):
        a = RF_C(n_estimators=4, random_state=1, **kw).fit(X, yc, sample_weight=w)
        b = RF_C(n_estimators=4, random_state=1, device=device, **kw).fit(X, yc, sample_weight=wn)
        assert a.model_bytes() == b.model_bytes(), (kw, device)


@pytest.mark.parametrize("device", FULL)
@pytest.mark.parametrize("batch", ["1", "3"])
def test_weighted_batches_change_no_bit(batch, device, monkeypatch):
    # balanced_subsample: each tree's own class weights and scale, in batches
    X, yc, _ = data(n=900, nf=6, seed=12)
    w = weights(len(yc), seed=2)
    kw = dict(n_estimators=7, class_weight="balanced_subsample", min_weight_fraction_leaf=0.01, random_state=3)
    a = RF_C(**kw).fit(X, yc, sample_weight=w)
    monkeypatch.setenv("SAMEBITS_FOREST_BATCH_TREES", batch)
    monkeypatch.setenv("SAMEBITS_CUDA_FOREST_CHUNK", "2")
    monkeypatch.setenv("SAMEBITS_OPENCL_FOREST_CHUNK", "2")
    monkeypatch.setenv("SAMEBITS_FOREST_LEVEL_CHUNK", "5")  # the host's level work in many chunks
    assert RF_C(device=device, **kw).fit(X, yc, sample_weight=w).model_bytes() == a.model_bytes()


@pytest.mark.parametrize("device", FULL)
def test_weighted_refusals_on_the_device(device):
    X, yc, yr = data(n=300, nf=5, seed=2)
    # every weight zero: refused by name, as on the CPU
    with pytest.raises(samebits.InvalidInputError, match="zero"):
        RF_C(n_estimators=2, device=device).fit(X, yc, sample_weight=np.zeros(len(yc), np.float32))
    # a positive weight below the fixed point's resolution: SB_ERR_LIMIT naming
    # the row, as on the CPU (balanced_subsample: found by the device, per tree)
    w = np.ones(len(yc), np.float32)
    w[17] = w[40] = w[41] = w[99] = 1e-10  # beyond 2^-31 (and balanced_subsample's per-tree 2^-21)
    for kw in (dict(bootstrap=False), dict(class_weight="balanced_subsample", n_estimators=4)):
        kw.setdefault("n_estimators", 2)
        msgs = []
        for dev in ("cpu", device):
            with pytest.raises(samebits.LimitError, match="row (17|40|41|99)") as e:
                RF_C(device=dev, random_state=1, **kw).fit(X, yc, sample_weight=w)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1], msgs


# ---- the isolation forest: subsample, random feature and threshold by path key

ISO = [
    ("iso-default", dict(n_estimators=12, random_state=3)),
    ("iso-small-sample", dict(n_estimators=20, max_samples=40, random_state=5)),
    ("iso-all-rows-few-bins", dict(n_estimators=5, max_samples=1500, max_bin=15, random_state=7)),
    ("iso-large-sample", dict(n_estimators=6, max_samples=1024, random_state=2)),
]


@pytest.mark.parametrize("device", FULL)
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("name,kw", ISO, ids=[c[0] for c in ISO])
def test_isolation_device_models_equal_cpu(name, kw, threads, device):
    X, _, _ = data()
    old = samebits.get_num_threads()
    try:
        samebits.set_num_threads(threads)
        a = samebits.IsolationForest(**kw).fit(X)
        b = samebits.IsolationForest(device=device, **kw).fit(X)
    finally:
        samebits.set_num_threads(old)
    assert a.model_bytes() == b.model_bytes(), (name, threads, device)
    assert a.score_samples(X).tolist() == b.score_samples(X).tolist()
    assert len(a.model_bytes()) > 2000


@pytest.mark.parametrize("device", FULL)
@pytest.mark.parametrize("batch", ["1", "4"])
def test_isolation_batches_change_no_bit(batch, device, monkeypatch):
    X, _, _ = data(n=5000, nf=5, seed=6)
    a = samebits.IsolationForest(n_estimators=9, max_samples=300, random_state=1).fit(X)
    monkeypatch.setenv("SAMEBITS_FOREST_BATCH_TREES", batch)
    b = samebits.IsolationForest(n_estimators=9, max_samples=300, random_state=1, device=device).fit(X)
    assert a.model_bytes() == b.model_bytes()


def test_no_device_refuses_weights_or_isolation_and_unknown_devices_stay_refused():
    # every forest device grows weighted and isolation forests (FULL is
    # DEVICES); what stays refused by name is a device that does not exist
    assert FULL == DEVICES
    X, yc, _ = data(n=300, nf=5, seed=2)
    # (an unknown name is a bad argument, worded once by the device layer for every family)
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device 'metal'; devices: cpu, cpu-batched"):
        RF_C(n_estimators=2, device="metal").fit(X, yc, sample_weight=weights(len(yc)))
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device 'metal'; devices: cpu, cpu-batched"):
        samebits.IsolationForest(n_estimators=2, device="metal").fit(X)


@pytest.mark.skipif("opencl" not in DEVICES, reason="opencl is not one of SAMEBITS_FOREST_DEVICES")
def test_opencl_weighted_and_isolation_timing_and_chunks_change_no_bit(monkeypatch):
    # the OpenCL weighted and isolation paths with every histogram by global
    # atomics, one node a launch and each operation timed (its own queue drains)
    X, yc, yr = data(n=2500, nf=6, seed=13)
    w = weights(len(yc), seed=4)
    a = RF_C(n_estimators=3, class_weight="balanced_subsample", random_state=2).fit(X, yc, sample_weight=w)
    b = ET_R(n_estimators=3, min_weight_fraction_leaf=0.01, random_state=2).fit(X, yr, sample_weight=w)
    c = samebits.IsolationForest(n_estimators=4, max_samples=700, random_state=2).fit(X)
    for k, v in (("SAMEBITS_OPENCL_HIST", "global"), ("SAMEBITS_OPENCL_FOREST_CHUNK", "1"),
                 ("SAMEBITS_OPENCL_TIMING", "1")):
        monkeypatch.setenv(k, v)
    kw = dict(n_estimators=3, random_state=2, device="opencl")
    assert RF_C(class_weight="balanced_subsample", **kw).fit(X, yc, sample_weight=w).model_bytes() == a.model_bytes()
    assert ET_R(min_weight_fraction_leaf=0.01, **kw).fit(X, yr, sample_weight=w).model_bytes() == b.model_bytes()
    kw["n_estimators"] = 4
    assert samebits.IsolationForest(max_samples=700, **kw).fit(X).model_bytes() == c.model_bytes()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls", [RF_C, ET_R])
def test_min_weight_fraction_leaf_unweighted(cls, device):
    # no weights: each node's min_w (its tree's share of the root's rows) is
    # all the device needs, so opencl grows it too
    X, yc, yr = data(n=2000, nf=6, seed=11)
    y = yr if cls is ET_R else yc
    kw = dict(n_estimators=4, min_weight_fraction_leaf=0.02, random_state=3)
    a = cls(**kw).fit(X, y)
    assert a.model_bytes() == cls(device=device, **kw).fit(X, y).model_bytes()
    assert a.model_bytes() != cls(n_estimators=4, random_state=3).fit(X, y).model_bytes()
