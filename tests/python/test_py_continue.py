"""Continued training (issue 21; sb_gbdt_fit_continue): init_model's m
iterations continued for n more give the m + n iteration model, byte for
byte, whatever the device of either part; what cannot continue is refused by
name before any work."""
import pytest

import samebits

np = pytest.importorskip("numpy")

RNG = np.random.default_rng(21)
X = RNG.normal(size=(2500, 6)).astype(np.float32)
KW = dict(learning_rate=0.2, subsample=0.8, colsample_bytree=0.7, random_state=9, num_leaves=15)
CASES = [
    (samebits.GradientBoostingRegressor, (X[:, 0] + 0.5 * X[:, 1] ** 2).astype(np.float32)),
    (samebits.GradientBoostingClassifier, (X[:, 2] > 0).astype(np.int64)),
    (samebits.GradientBoostingClassifier, np.digitize(X[:, 1], [-0.5, 0.5])),
]


@pytest.mark.parametrize("cls, y", CASES)
def test_m_then_n_iterations_are_the_m_plus_n_fit(cls, y, tmp_path):
    full = cls(n_estimators=11, **KW).fit(X, y)
    half = cls(n_estimators=4, **KW).fit(X, y)
    assert half.model_digest_ != full.model_digest_
    cont = cls(n_estimators=7, **KW).fit(X, y, init_model=half)
    assert cont.model_digest_ == full.model_digest_
    path = tmp_path / "half.sbm"
    half.save_model(str(path))
    assert cls(n_estimators=7, **KW).fit(X, y, init_model=str(path)).model_digest_ == full.model_digest_
    assert cls(n_estimators=7, **KW).fit(X, y, init_model=path.read_bytes()).model_digest_ == full.model_digest_


@pytest.mark.parametrize("device", ["opencl", "cuda"])
def test_a_fit_moved_between_devices_stays_on_its_trajectory(device):
    cls, y = CASES[2]
    full = cls(n_estimators=9, **KW).fit(X, y)
    try:
        half_dev = cls(n_estimators=4, device=device, **KW).fit(X, y)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    half_cpu = cls(n_estimators=4, **KW).fit(X, y)
    assert half_dev.model_digest_ == half_cpu.model_digest_
    on_dev = cls(n_estimators=5, device=device, **KW).fit(X, y, init_model=half_cpu)
    on_cpu = cls(n_estimators=5, **KW).fit(X, y, init_model=half_dev)
    assert on_dev.model_digest_ == on_cpu.model_digest_ == full.model_digest_


def test_what_cannot_continue_is_refused_by_name():
    reg = samebits.GradientBoostingRegressor(n_estimators=3).fit(X, CASES[0][1])
    with pytest.raises(samebits.InvalidArgumentError, match="objective"):
        samebits.GradientBoostingClassifier(n_estimators=2).fit(X, CASES[1][1], init_model=reg)
    with pytest.raises(samebits.InvalidInputError, match="features"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(X[:, :4], CASES[0][1], init_model=reg)
    with pytest.raises(samebits.InvalidArgumentError, match="not fitted"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(X, CASES[0][1],
                                                              init_model=samebits.GradientBoostingRegressor())
    with pytest.raises(TypeError):  # a forest's fit has no init_model, as scikit-learn's
        samebits.RandomForestRegressor(n_estimators=2).fit(X, CASES[0][1], init_model=reg)
    rf = samebits.RandomForestRegressor(n_estimators=2).fit(X, CASES[0][1])
    with pytest.raises(samebits.InvalidArgumentError, match="continued training takes a gradient boosting model"):
        samebits.GradientBoostingRegressor(n_estimators=2).fit(X, CASES[0][1], init_model=rf.model_bytes())
