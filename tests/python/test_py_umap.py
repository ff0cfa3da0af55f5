"""UMAP (docs/umap.md): umap-learn's names, identity across thread counts and
calls, umap-learn's quality on digits (trustworthiness within 0.01), the
model file (save, load, digest of the bytes, transform from the loaded
model), and the named refusals."""
import hashlib
import pickle

import pytest

import samebits
from samebits.errors import InvalidArgumentError, InvalidInputError

np = pytest.importorskip("numpy")


def _blobs(n=90, d=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    x[n // 3:2 * n // 3, 0] += 8.0
    x[2 * n // 3:, 1] += 8.0
    return x


def test_fit_transform_shape_and_digest():
    x = _blobs()
    u = samebits.UMAP(n_epochs=50, random_state=1)
    e = u.fit_transform(x)
    assert e.shape == (90, 2) and e.dtype == np.float64 and np.all(np.isfinite(e))
    assert np.array_equal(u.embedding_, e)
    assert isinstance(u.model_digest_, str) and len(u.model_digest_) == 64
    assert u.n_features_in_ == 5
    # float32 values widened exactly
    assert np.array_equal(e.astype(np.float32).astype(np.float64), e)


@pytest.mark.parametrize("kw", [{}, {"metric": "manhattan"}, {"metric": "manhattan", "neighbors": "nndescent"}])
def test_identical_across_threads_and_calls(kw):
    x = _blobs()
    digests = set()
    for t in (1, 2, 5):
        samebits.set_num_threads(t)
        digests.add(samebits.UMAP(n_epochs=60, random_state=7, **kw).fit(x).model_digest_)
    samebits.set_num_threads(0)
    assert len(digests) == 1
    assert samebits.UMAP(n_epochs=60, random_state=8, **kw).fit(x).model_digest_ not in digests


def test_random_state_none_is_seed_zero():
    x = _blobs()
    a = samebits.UMAP(n_epochs=30).fit(x)
    b = samebits.UMAP(n_epochs=30, random_state=0).fit(x)
    assert np.array_equal(a.embedding_, b.embedding_)


def test_parameters_change_the_result():
    x = _blobs()
    base = samebits.UMAP(n_epochs=40).fit(x).embedding_
    for kw in (dict(min_dist=0.5), dict(spread=2.0), dict(n_neighbors=8), dict(metric="cosine"), dict(metric="manhattan"),
               dict(learning_rate=0.5), dict(negative_sample_rate=2), dict(init="random"),
               dict(set_op_mix_ratio=0.5), dict(local_connectivity=2.0), dict(repulsion_strength=2.0),
               dict(n_epochs=41), dict(random_state=1)):
        args = dict(n_epochs=40)
        args.update(kw)
        assert not np.array_equal(samebits.UMAP(**args).fit(x).embedding_, base), kw


def test_init_array_and_components():
    x = _blobs()
    init = np.random.default_rng(3).uniform(0, 10, size=(90, 3)).astype(np.float32)
    e = samebits.UMAP(n_components=3, init=init, n_epochs=20).fit_transform(x)
    assert e.shape == (90, 3)
    with pytest.raises(InvalidInputError, match="init has shape"):
        samebits.UMAP(n_components=2, init=init).fit(x)


def test_spectral_fallback_warns_and_equals_random():
    """init='spectral' that no eigensolve serves (3 rows, 2 components) starts
    from the random initialization with a UserWarning naming why, as
    umap-learn warns; a fit the eigensolver serves warns nothing."""
    import warnings
    x = _blobs(3, 4)
    with pytest.warns(UserWarning, match=r"n_components \+ 1 >= the 3 rows.*random initialization"):
        a = samebits.UMAP(n_neighbors=2, n_epochs=20, random_state=4).fit(x)
    b = samebits.UMAP(n_neighbors=2, n_epochs=20, random_state=4, init="random").fit(x)
    assert np.array_equal(a.embedding_, b.embedding_)
    assert a.init == "spectral"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samebits.UMAP(n_epochs=20).fit(_blobs())


def test_hostile_inputs():
    # duplicates, one feature, more neighbors than rows (clamped to n - 1)
    x = np.repeat(_blobs(6, 3), 10, axis=0)
    assert np.all(np.isfinite(samebits.UMAP(n_neighbors=6, n_epochs=30).fit_transform(x)))
    line = np.arange(40, dtype=np.float32).reshape(-1, 1)
    assert np.all(np.isfinite(samebits.UMAP(n_neighbors=5, n_epochs=30).fit_transform(line)))
    small = _blobs(12, 3)
    a = samebits.UMAP(n_neighbors=50, n_epochs=20).fit_transform(small)
    b = samebits.UMAP(n_neighbors=11, n_epochs=20).fit_transform(small)
    assert np.array_equal(a, b)


def test_refusals_by_name():
    x = _blobs()
    with pytest.raises(InvalidArgumentError, match="chebyshev"):
        samebits.UMAP(metric="chebyshev").fit(x)
    with pytest.raises(InvalidArgumentError, match="supervised"):
        samebits.UMAP().fit(x, y=np.zeros(90))
    with pytest.raises(InvalidInputError, match="features"):
        samebits.UMAP(n_epochs=10).fit(x).transform(x[:, :3])
    with pytest.raises(InvalidArgumentError, match="min_dist"):
        samebits.UMAP(min_dist=3.0).fit(x)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="finite"):
        samebits.UMAP().fit(bad)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_quality_beside_umap_learn_on_digits(metric):
    """Trustworthiness (k = 15, in the fit's metric) within 0.01 of umap-learn's
    (manhattan 0.9859 against 0.9850 when written)."""
    umap = pytest.importorskip("umap")
    datasets = pytest.importorskip("sklearn.datasets")
    manifold = pytest.importorskip("sklearn.manifold")
    x = datasets.load_digits().data.astype(np.float32)
    e_sb = samebits.UMAP(random_state=42, metric=metric).fit_transform(x)
    e_ul = umap.UMAP(random_state=42, metric=metric).fit_transform(x)
    t_sb = manifold.trustworthiness(x, e_sb, n_neighbors=15, metric=metric)
    t_ul = manifold.trustworthiness(x, e_ul, n_neighbors=15, metric=metric)
    assert abs(t_sb - t_ul) <= 0.01, (t_sb, t_ul)


def test_transform_batch_independent_and_near_its_neighbors():
    x = _blobs(150)
    train, new = x[::2].copy(), x[1::2].copy()
    u = samebits.UMAP(n_neighbors=10, n_epochs=90, random_state=2).fit(train)
    whole = u.transform(new)
    assert whole.shape == (75, 2) and np.all(np.isfinite(whole))
    parts = np.vstack([u.transform(new[i:i + 7]) for i in range(0, 75, 7)])
    assert np.array_equal(whole, parts)
    assert np.array_equal(whole[::-1], u.transform(new[::-1]))
    samebits.set_num_threads(3)
    assert np.array_equal(whole, u.transform(new))
    samebits.set_num_threads(0)
    # each new row lands nearest to embedded training rows of its own blob
    lab_train = np.array([0 if i < 50 else 1 if i < 100 else 2 for i in range(0, 150, 2)])
    lab_new = np.array([0 if i < 50 else 1 if i < 100 else 2 for i in range(1, 150, 2)])
    d = ((whole[:, None, :] - u.embedding_[None, :, :]) ** 2).sum(-1)
    assert np.mean(lab_train[d.argmin(1)] == lab_new) >= 0.95
    # the caller's array changed after fit does not move the frozen model
    train[:] = 0
    assert np.array_equal(whole, u.transform(new))


def test_model_file_save_load_and_transform(tmp_path):
    x = _blobs(120)
    train, new = x[::2].copy(), x[1::2].copy()
    u = samebits.UMAP(n_neighbors=9, n_epochs=45, random_state=4, min_dist=0.2).fit(train)
    raw = u.model_bytes()
    assert raw[:8] == b"SBMODEL\0"
    # the digest is the SHA-256 of the file's bytes (their last 32 bytes too)
    assert u.model_digest_ == raw[-32:].hex()
    assert u.model_digest_ == hashlib.sha256(raw[:-32]).hexdigest()
    path = tmp_path / "u.sbm"
    u.save_model(str(path))
    assert path.read_bytes() == raw
    whole = u.transform(new)
    for v in (samebits.load_model(str(path)), samebits.UMAP().load_model(raw), pickle.loads(pickle.dumps(u))):
        assert isinstance(v, samebits.UMAP)
        assert v.model_digest_ == u.model_digest_
        assert np.array_equal(v.embedding_, u.embedding_)
        assert (v.n_neighbors, v.n_epochs, v.min_dist, v.random_state) == (9, 45, 0.2, 4)
        for t in (1, 2, 7):
            samebits.set_num_threads(t)
            for b in (1, 7, len(new)):
                got = np.vstack([v.transform(new[i:i + b]) for i in range(0, len(new), b)])
                assert np.array_equal(got, whole), (t, b)
        samebits.set_num_threads(0)
        assert v.model_bytes() == raw
    # refitting the loaded estimator gives the same file
    assert samebits.load_model(raw).fit(train).model_bytes() == raw


def test_model_file_refusals(tmp_path):
    x = _blobs()
    u = samebits.UMAP(n_epochs=10).fit(x)
    raw = bytearray(u.model_bytes())
    raw[-40] ^= 1
    with pytest.raises(InvalidInputError):
        samebits.load_model(bytes(raw))
    kde = samebits.KernelDensity().fit(x).model_bytes()
    with pytest.raises(InvalidInputError, match="UMAP cannot hold"):
        samebits.UMAP().load_model(kde)
    with pytest.raises(samebits.errors.NotFittedError):
        samebits.UMAP().transform(x)
    bad = x[:5].copy()
    bad[2, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        u.transform(bad)


def test_neighbors_parameter(tmp_path):
    """neighbors="auto" is the exact search below 4,096 rows (umap-learn's
    switch); "nndescent" forces the approximate lists, the same bits at every
    thread count; the model file keeps a value that is not auto; an unknown
    value is refused by name."""
    x = _blobs(n=300, d=6)
    auto = samebits.UMAP(n_epochs=30, random_state=2).fit(x)
    exact = samebits.UMAP(n_epochs=30, random_state=2, neighbors="exact").fit(x)
    assert np.array_equal(auto.embedding_, exact.embedding_)
    assert auto.get_params()["neighbors"] == "auto"
    digests = set()
    for t in (1, 3):
        samebits.set_num_threads(t)
        digests.add(samebits.UMAP(n_epochs=30, random_state=2, neighbors="nndescent").fit(x).model_digest_)
    samebits.set_num_threads(0)
    assert len(digests) == 1
    nd = samebits.UMAP(n_epochs=30, random_state=2, neighbors="nndescent").fit(x)
    path = tmp_path / "nd.sbm"
    nd.save_model(str(path))
    back = samebits.UMAP().load_model(str(path))
    assert back.neighbors == "nndescent" and back.model_digest_ == nd.model_digest_
    with pytest.raises(InvalidArgumentError, match="neighbors='brute'"):
        samebits.UMAP(neighbors="brute").fit(x)


def test_rows_past_the_exact_search_limit_refused_at_fit_and_load():
    """A row whose centered squared norm passes 1e37 is one transform's exact
    search refuses: every neighbors mode refuses it at fit (NN-descent itself
    would take it), and a model file holding one (its digest made right) is
    refused at load, not at the first transform."""
    x = _blobs(n=300, d=5)
    bad = x.copy()
    bad[3] *= np.float32(1e19)
    for nb in ("exact", "nndescent"):
        with pytest.raises(samebits.errors.LimitError, match="below 1e37"):
            samebits.UMAP(n_epochs=10, neighbors=nb, random_state=1).fit(bad)
    raw = bytearray(samebits.UMAP(n_epochs=10, neighbors="nndescent", random_state=1).fit(x).model_bytes())
    row = x[3].astype("<f4").tobytes()
    at = bytes(raw).find(row)
    assert at > 0 and bytes(raw).find(row, at + 1) < 0
    raw[at:at + len(row)] = bad[3].astype("<f4").tobytes()
    raw[-32:] = hashlib.sha256(bytes(raw[:-32])).digest()
    with pytest.raises(samebits.errors.LimitError, match="umap: row 3: .*below 1e37"):
        samebits.load_model(bytes(raw))
