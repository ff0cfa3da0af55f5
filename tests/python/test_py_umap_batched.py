"""UMAP's batched epochs (optimize="batched", docs/umap.md "optimize=batched"):
each epoch's moves computed from the epoch's starting positions, rounded to
fixed point, summed per row as exact integers and applied at the epoch's end.
The same bits at 1, 2 and 3 threads (the threads split the edges by timing);
the default (sequential) unchanged; the model file records the choice (and
an older file, which has no optimize, reads as sequential); unknown values
and a GPU device with sequential epochs are refused by name. The OpenCL leg
is tests/integration/test_opencl_umap.py."""
import hashlib
from pathlib import Path

import pytest

import samebits
from samebits.errors import InvalidArgumentError
from test_py_umap import _blobs as _three_blobs

np = pytest.importorskip("numpy")
CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus" / "model" / "umap-v2.sbm"


def _blobs(n=300, d=6, seed=0):
    return _three_blobs(n, d, seed)  # test_py_umap.py's three blobs


def _digest(e):
    return hashlib.sha256(np.ascontiguousarray(e).tobytes()).hexdigest()


@pytest.mark.parametrize("kw", [dict(), dict(metric="cosine", init="random", n_neighbors=7, negative_sample_rate=2),
                                dict(negative_sample_rate=0, learning_rate=0.5)])
def test_batched_identical_at_1_2_3_threads(kw):
    x = _blobs()
    digests, files = set(), set()
    try:
        for t in (1, 2, 3):
            samebits.set_num_threads(t)
            u = samebits.UMAP(n_epochs=40, random_state=3, optimize="batched", **kw).fit(x)
            digests.add(_digest(u.embedding_))
            files.add(u.model_digest_)
    finally:
        samebits.set_num_threads(0)
    assert len(digests) == 1 and len(files) == 1
    assert np.all(np.isfinite(u.embedding_))


def test_default_is_sequential_and_batched_differs():
    x = _blobs()
    d = samebits.UMAP(n_epochs=40, random_state=3).fit(x)
    s = samebits.UMAP(n_epochs=40, random_state=3, optimize="sequential").fit(x)
    b = samebits.UMAP(n_epochs=40, random_state=3, optimize="batched").fit(x)
    assert d.model_digest_ == s.model_digest_
    assert b"optimize" not in d.model_bytes()
    assert not np.array_equal(d.embedding_, b.embedding_)
    assert b"optimize=batched\n" in b.model_bytes()


def test_model_file_records_the_choice(tmp_path):
    x = _blobs()
    b = samebits.UMAP(n_epochs=30, random_state=1, optimize="batched").fit(x)
    path = tmp_path / "b.sbm"
    b.save_model(str(path))
    back = samebits.UMAP().load_model(str(path))
    assert back.optimize == "batched" and back.model_digest_ == b.model_digest_
    assert np.array_equal(back.transform(x[:9]), b.transform(x[:9]))
    # refitting the loaded estimator gives the same file
    assert back.fit(x).model_bytes() == b.model_bytes()
    # a file written before the parameter existed reads as sequential
    old = samebits.UMAP().load_model(CORPUS.read_bytes())
    assert old.optimize == "sequential"


def test_quality_near_sequential_on_digits():
    datasets = pytest.importorskip("sklearn.datasets")
    manifold = pytest.importorskip("sklearn.manifold")
    x = datasets.load_digits().data.astype(np.float32)
    tw = {}
    for opt in ("sequential", "batched"):
        e = samebits.UMAP(random_state=42, optimize=opt).fit_transform(x)
        tw[opt] = manifold.trustworthiness(x, e, n_neighbors=15)
    assert abs(tw["batched"] - tw["sequential"]) <= 0.01, tw


def test_refusals_by_name():
    x = _blobs(60)
    with pytest.raises(InvalidArgumentError, match="optimize='jacobi'"):
        samebits.UMAP(optimize="jacobi").fit(x)
    with pytest.raises(samebits.errors.SameBitsError, match="device"):
        samebits.UMAP(device="tpu", optimize="batched").fit(x)
