"""Every non-OK status becomes its named exception, carrying the C message;
bad input raises and leaves a fitted estimator unchanged."""
import pytest

import samebits
from samebits import errors
from conftest import make_data, run_python

SMALL = dict(n_estimators=5, min_samples_leaf=5)


def test_hierarchy_and_status_names():
    names = {
        1: "InvalidArgumentError", 2: "InvalidInputError", 3: "OutOfMemoryError", 4: "SameBitsIOError",
        5: "ModeUnsupportedError", 6: "IdentityRefusedError", 7: "BackendUnavailableError", 8: "LimitError",
        9: "MismatchError", 10: "NotFoundError", 11: "InternalError",
    }
    for status, name in names.items():
        cls = getattr(samebits, name)
        assert issubclass(cls, samebits.SameBitsError) and cls.status == status
        assert samebits._lib.sb_status_name(status).decode() == cls.status_name
        e = errors.error_for(status, "msg")
        assert type(e) is cls and str(e) == "msg"
    assert issubclass(samebits.InvalidInputError, ValueError)
    assert issubclass(samebits.SameBitsIOError, OSError)


def test_unknown_parameter():
    with pytest.raises(samebits.InvalidArgumentError, match="invalid parameter 'colour'"):
        samebits.GradientBoostingRegressor().set_params(colour="red")
    with pytest.raises(TypeError):
        samebits.GradientBoostingRegressor(colour="red")


def test_out_of_range_parameter_carries_the_c_message():
    X, y = make_data(100, "regression")
    with pytest.raises(samebits.InvalidArgumentError) as e:
        samebits.GradientBoostingRegressor(learning_rate=-1.0).fit(X, y)
    assert "learning_rate" in str(e.value) and e.value.status_name == "SB_ERR_INVALID_ARGUMENT"
    with pytest.raises(samebits.InvalidArgumentError, match="objective 'absolute_error' is not supported"):
        samebits.GradientBoostingRegressor(loss="absolute_error").fit(X, y)
    with pytest.raises(samebits.LimitError, match="max_bin='1000' is beyond its limit 255"):
        samebits.GradientBoostingRegressor(max_bin=1000).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="max_bin"):
        samebits.GradientBoostingRegressor(max_bin=1).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="integer"):
        samebits.GradientBoostingRegressor(n_estimators=2.5).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="random_state"):
        samebits.GradientBoostingRegressor(random_state=object()).fit(X, y)
    with pytest.raises(samebits.LimitError, match="max_depth"):
        samebits.GradientBoostingRegressor(growth="depthwise", max_depth=40).fit(X, y)


def test_bad_mode():
    X, y = make_data(100, "regression")
    with pytest.raises(samebits.InvalidArgumentError, match="bogus"):
        samebits.GradientBoostingRegressor(numeric_mode="bogus").fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="bogus"):
        samebits.set_numeric_mode("bogus")
    assert samebits.get_numeric_mode() == "identical"


def test_cuda_device_is_refused_by_the_c_library():
    X, y = make_data(100, "regression")
    with pytest.raises(samebits.BackendUnavailableError, match="cuda") as e:
        samebits.GradientBoostingRegressor(device="cuda").fit(X, y)
    assert e.value.status_name == "SB_ERR_BACKEND_UNAVAILABLE"
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device"):
        samebits.GradientBoostingRegressor(device="abacus").fit(X, y)


def test_feature_count_mismatch_at_predict():
    X, y = make_data(100, "regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    with pytest.raises(samebits.InvalidInputError, match="feature-count mismatch"):
        m.predict([r[:3] for r in X])


def test_bad_inputs():
    X, y = make_data(100, "regression")
    R = samebits.GradientBoostingRegressor
    C = samebits.GradientBoostingClassifier
    with pytest.raises(samebits.InvalidInputError, match="not finite"):
        R(**SMALL).fit(X, y[:-1] + [float("nan")])
    with pytest.raises(samebits.InvalidInputError, match="NaN|label"):
        C(**SMALL).fit(X, [0.0] * 50 + [float("nan")] + [1.0] * 49)
    with pytest.raises(samebits.InvalidInputError, match="rows"):
        R(**SMALL).fit(X, y[:-1])
    with pytest.raises(samebits.InvalidInputError, match="ragged"):
        R(**SMALL).fit(X[:-1] + [[1.0, 2.0]], y)
    with pytest.raises(samebits.InvalidInputError, match="2-D"):
        R(**SMALL).fit([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    with pytest.raises(samebits.InvalidInputError, match="not a number"):
        R(**SMALL).fit([["a", 1.0]] * 10, [1.0] * 10)
    with pytest.raises(samebits.InvalidArgumentError, match="at least one row"):
        R(**SMALL).fit([], [])
    with pytest.raises(samebits.InvalidInputError, match="two classes"):
        C(**SMALL).fit(X, [1] * 100)
    with pytest.raises(samebits.InvalidArgumentError, match="weight"):
        R(**SMALL).fit(X, y, sample_weight=[-1.0] * 100)
    with pytest.raises(samebits.InvalidArgumentError, match="validation"):
        R(early_stopping_rounds=3, **SMALL).fit(X, y)
    with pytest.raises(samebits.NotFittedError):
        R().predict(X)


def test_failed_fit_leaves_the_estimator_unchanged():
    X, y = make_data(200, "regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    before = (m.model_digest_, m.predict(X).tobytes(), dict(vars(m)).keys())
    with pytest.raises(samebits.InvalidInputError):
        m.fit([r + [1.0] for r in X], y[:-1] + [float("nan")])
    m.set_params(learning_rate=-1.0)
    with pytest.raises(samebits.InvalidArgumentError):
        m.fit(X, y)
    assert (m.model_digest_, m.predict(X).tobytes(), dict(vars(m)).keys()) == before


def test_io_and_format_errors(tmp_path):
    with pytest.raises(samebits.SameBitsIOError):
        samebits.load_model(str(tmp_path / "missing.sbm"))
    with pytest.raises(samebits.InvalidInputError):
        samebits.load_model(b"not a model")
    X, y = make_data(100, "regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    data = bytearray(m.model_bytes())
    data[len(data) // 2] ^= 1
    with pytest.raises(samebits.InvalidInputError):
        samebits.load_model(bytes(data))


def test_version_mismatch_is_refused():
    code = ("import sys, types\n"
            "v = types.ModuleType('samebits._version'); v.__version__ = '9.9.9'\n"
            "sys.modules['samebits._version'] = v\n"
            "try:\n    import samebits\n"
            "except ImportError as e:\n    print(type(e).__name__, e)\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("VersionMismatchError") and "9.9.9" in r.stdout and "0.1.0" in r.stdout


def test_missing_library_is_named(tmp_path):
    r = run_python("import samebits", env={"SAMEBITS_LIB": str(tmp_path / "nope.so")})
    assert r.returncode != 0 and "LibraryNotFoundError" in r.stderr and "nope.so" in r.stderr


def test_environment_mode():
    code = ("import samebits\n"
            "m = samebits.GradientBoostingRegressor(n_estimators=2)\n"
            "m.fit([[float(i)] for i in range(50)], [float(i) for i in range(50)])\n"
            "print(samebits.get_numeric_mode(), m.numeric_mode_used())\n")
    r = run_python(code, env={"SAMEBITS_NUMERIC_MODE": "identical"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["identical", "identical"]
    for mode in ("deterministic", "fast"):  # known names, not built: refused by name
        r = run_python(code, env={"SAMEBITS_NUMERIC_MODE": mode})
        assert r.returncode != 0 and "ModeUnsupportedError" in r.stderr
        assert f"SAMEBITS_NUMERIC_MODE={mode} is not built: only identical is" in r.stderr
    r = run_python(code, env={"SAMEBITS_NUMERIC_MODE": "sloppy"})
    assert r.returncode != 0 and "InvalidArgumentError" in r.stderr and "sloppy" in r.stderr


def test_python_m_samebits(tmp_path):
    import subprocess
    import sys
    from conftest import CLI, PYDIR, ROOT
    env = dict(__import__("os").environ, PYTHONPATH=str(PYDIR))
    env.pop("SAMEBITS_NUMERIC_MODE", None)

    def pym(*args):
        return subprocess.run([sys.executable, "-m", "samebits"] + list(args), capture_output=True, text=True,
                              env=env, cwd=str(ROOT), timeout=300)
    r = pym("doctor", "--threads", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check: passed" in r.stdout and "gbdt-binary" in r.stdout
    a, b = tmp_path / "a.card", tmp_path / "b.card"
    assert pym("fixture", "run", "gbdt-binary", "--out", str(a)).returncode == 0
    subprocess.run([str(CLI), "fixture", "run", "gbdt-binary", "--out", str(b)], check=True, capture_output=True)
    r = pym("card", "diff", str(a), str(b))
    assert (r.returncode, r.stdout) == (0, "identical\n")
    c = tmp_path / "c.card"
    subprocess.run([str(CLI), "fixture", "run", "gbdt-regression", "--out", str(c)], check=True,
                   capture_output=True)
    r = pym("card", "diff", str(a), str(c))
    cli = subprocess.run([str(CLI), "card", "diff", str(a), str(c)], capture_output=True, text=True)
    assert r.returncode == cli.returncode == 1 and r.stdout == cli.stdout
    r = pym("card", "diff", str(a), str(tmp_path / "missing"))
    assert r.returncode == 2 and "SB_ERR_IO" in r.stderr
    r = pym("verify", "gbdt-multiclass")
    cli = subprocess.run([str(CLI), "verify", "gbdt-multiclass"], capture_output=True, text=True)
    assert r.returncode == cli.returncode == 0 and r.stdout == cli.stdout
    r = pym("verify", "no-such-fixture")
    assert r.returncode == 1 and "SB_ERR_NOT_FOUND" in r.stdout


def test_python_side_input_errors():
    X, y = make_data(100, "regression")
    with pytest.raises(samebits.InvalidInputError, match="requires y"):
        samebits.GradientBoostingRegressor().fit(X, None)
    with pytest.raises(samebits.InvalidInputError, match="Unknown label type"):
        samebits.GradientBoostingClassifier().fit(X, [v + 0.25 for v in range(100)])
    with pytest.raises(samebits.InvalidInputError, match="all zero"):
        samebits.GradientBoostingRegressor().fit(X, y, sample_weight=[0.0] * 100)
    scipy_sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(samebits.InvalidInputError, match="sparse input is not supported"):
        samebits.GradientBoostingRegressor().fit(scipy_sparse.csr_matrix([[1.0, 0.0]] * 100), y)


@pytest.mark.parametrize("value", ["0", "-1", "abc", "100000"])
def test_invalid_thread_variable_is_refused_by_fit_and_predict(monkeypatch, value):
    """SAMEBITS_NUM_THREADS goes through the library's one rule: fit and predict
    refuse an invalid value by name (before issue 17, fit ran on one thread)."""
    X, y = make_data(100, "regression")
    fitted = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    monkeypatch.setenv("SAMEBITS_NUM_THREADS", value)
    samebits.set_num_threads(0)
    with pytest.raises(samebits.InvalidArgumentError, match=f"SAMEBITS_NUM_THREADS='{value}'"):
        samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="SAMEBITS_NUM_THREADS"):
        samebits.RandomForestRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="SAMEBITS_NUM_THREADS"):
        fitted.predict(X)
    with pytest.raises(samebits.InvalidArgumentError, match="SAMEBITS_NUM_THREADS"):
        samebits.get_num_threads()
    samebits.set_num_threads(2)  # an explicit count replaces the variable
    try:
        samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    finally:
        samebits.set_num_threads(0)

