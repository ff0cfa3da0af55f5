"""scikit-learn's check_estimator run on one estimator, with the checks expected
to fail pinned (each test file lists them, and why)."""
import warnings

import pytest


def assert_failed_checks(est, expected):
    """Run check_estimator(est) and require exactly the checks in expected to
    fail; the message names each failing check and its error."""
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed == expected, {r["check_name"]: str(r["exception"])[:200] for r in results if r["status"] == "failed"}
