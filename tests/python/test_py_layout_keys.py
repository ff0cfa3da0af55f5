"""LightGBM's histogram layout keys from Python (issue 18): force_row_wise and
force_col_wise reach the C library (a refusal with a device and with both
shows they are passed), change no byte of the model, and a non-bool is refused
by name before training."""
import numpy as np
import pytest

import samebits
from samebits.errors import InvalidArgumentError


def _data(n=3000, nf=6, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, nf)).astype(np.float32)
    y = (X[:, 0] * 2 - X[:, 1] + 0.3 * rng.normal(size=n)).astype(np.float32)
    return X, y


@pytest.mark.parametrize("cls", [samebits.GradientBoostingRegressor, samebits.GradientBoostingClassifier])
def test_layouts_give_the_same_bytes(cls):
    X, y = _data()
    if cls is samebits.GradientBoostingClassifier:
        y = (y > 0).astype(np.float32)
    kw = dict(n_estimators=8, max_depth=6, num_leaves=40, random_state=1)
    a = cls(**kw).fit(X, y)
    b = cls(force_row_wise=True, **kw).fit(X, y)
    c = cls(force_col_wise=True, **kw).fit(X, y)
    assert a.model_digest_ == b.model_digest_ == c.model_digest_
    assert b.get_params()["force_row_wise"] is True and c.get_params()["force_col_wise"] is True


def test_layout_keys_reach_the_library():
    X, y = _data()
    # both together: the C library's refusal, so the keys are passed
    with pytest.raises(InvalidArgumentError, match="force_row_wise"):
        samebits.GradientBoostingRegressor(n_estimators=2, force_row_wise=True, force_col_wise=True).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="force_col_wise"):
        samebits.GradientBoostingRegressor(n_estimators=2, force_col_wise=True, device="cpu-batched").fit(X, y)


@pytest.mark.parametrize("bad", ["true", 1, 0.0])
def test_layout_key_must_be_bool(bad):
    X, y = _data(n=200)
    m = samebits.GradientBoostingRegressor(n_estimators=2, force_row_wise=bad)
    with pytest.raises(InvalidArgumentError, match="force_row_wise"):
        m.fit(X, y)
    assert not hasattr(m, "model_digest_")
