"""The estimators' distributed= keyword (docs/distributed.md, "Python"): every
gradient boosting and forest estimator passes it to the C library as the key
`distributed`, and under `mpirun` a fit with distributed="mpi" gives, at any
rank count, the single process's model bytes.

Each rank runs the same script on the same full X, y (the C API's row rule,
distributed_rows=split: the library takes rank k's block itself); rank 0 prints
the models' digests, which must equal those of one process fitting the same
data without the key. The separating arm is the C tests' (make
SABOTAGE=float-allreduce: the histograms and node sums summed across ranks as
floats), loaded through SAMEBITS_LIB: its single process gives the real
build's digests, its ranks other ones for the models whose sums exceed
float32's integers (gradient boosting, a weighted random forest regression).
An unweighted classification forest and an isolation forest cannot show that
arm (docs/distributed.md says why); for them a different seed giving
different digests shows the comparison can fail. The tests that launch ranks
skip only when mpirun is not installed, as tests/integration/test_distributed.py.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

import samebits
from samebits.errors import InvalidArgumentError
from conftest import PYDIR, ROOT, build_dir, make_data, write_csv

needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None,
                               reason="mpirun is not installed (tools/ensure-deps.sh installs openmpi-bin)")

CLASSES = [samebits.GradientBoostingRegressor, samebits.GradientBoostingClassifier, samebits.GradientBoostingRanker,
           samebits.RandomForestClassifier, samebits.RandomForestRegressor, samebits.ExtraTreesClassifier,
           samebits.ExtraTreesRegressor, samebits.IsolationForest]

# What each rank runs: the whole data file read by every rank, five fits with
# distributed=argv[2] ("none": the key left out), rank 0 printing the digests
# as one JSON line. argv[3] is the seed (random_state) of every fit.
WORKER = r'''
import csv, json, os, sys
import samebits

path, dist, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
dist = None if dist == "none" else dist
with open(path) as f:
    rows = list(csv.reader(f))[1:]
X = [[float(v) if v else float("nan") for v in r[:-1]] for r in rows]
y = [float(r[-1]) for r in rows]
yb = [1 if v > 1.0 else 0 for v in y]
w = [0.0 if (i + 1) % 11 == 0 else (i % 6) * 0.5 + 0.5 for i in range(len(y))]
out = {
    "gbdt-regression": samebits.GradientBoostingRegressor(
        n_estimators=8, subsample=0.8, random_state=seed, distributed=dist).fit(X, y).model_digest_,
    "gbdt-binary": samebits.GradientBoostingClassifier(
        n_estimators=8, colsample_bynode=0.5, random_state=seed, distributed=dist).fit(X, yb, sample_weight=w).model_digest_,
    "rf-regression-weighted": samebits.RandomForestRegressor(
        n_estimators=4, max_samples=0.6, max_depth=10, random_state=seed, distributed=dist).fit(
        X, y, sample_weight=w).model_digest_,
    "et-binary": samebits.ExtraTreesClassifier(
        n_estimators=4, max_depth=10, random_state=seed, distributed=dist).fit(X, yb).model_digest_,
    "iforest": samebits.IsolationForest(n_estimators=20, random_state=seed, distributed=dist).fit(X).model_digest_,
}
if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
    print(json.dumps(out, sort_keys=True))
'''
# the models whose sums the float all-reduce arm rounds (see the module's note)
ARM_SHOWS = ("gbdt-regression", "gbdt-binary", "rf-regression-weighted")


def _env(lib=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SAMEBITS_")}
    e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader,tcp",
              "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})  # containers often forbid CMA
    e["PYTHONPATH"] = str(PYDIR) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    if lib is not None:
        e["SAMEBITS_LIB"] = str(lib)
    return e


def _lib(sabotage=None):
    d = build_dir("x86_64", sabotage)
    if not (d / "libsamebits.so").exists() or not (d / "libsamebits_mpi.so").exists():
        pytest.fail(f"{d}/libsamebits.so or its libsamebits_mpi.so is missing: run "
                    f"`make{' SABOTAGE=' + sabotage if sabotage else ''}` with mpicc installed (make test builds both)")
    return d / "libsamebits.so"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """1,201 rows (blocks of unequal sizes at 2 and 3 ranks), some NaN; the worker script beside them."""
    d = tmp_path_factory.mktemp("dist")
    X, y = make_data(1201, "regression", seed=26, nfeat=5)
    write_csv(d / "train.csv", X, y)
    (d / "worker.py").write_text(WORKER)
    return d


def _digests(data, np=None, dist="mpi", seed=0, sabotage=None):
    """The worker's digests: in one process (np None; the key as dist) or under mpirun -np np."""
    cmd = [sys.executable, str(data / "worker.py"), str(data / "train.csv"), dist if np else "none", str(seed)]
    if np is not None:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np), "-x", "PYTHONPATH", "-x", "SAMEBITS_LIB"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(_lib(sabotage)), timeout=300, cwd=ROOT)
    assert r.returncode == 0, (np, r.stdout, r.stderr)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, ("rank 0 alone prints", r.stdout)
    return json.loads(lines[0])


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_distributed_is_a_constructor_parameter(cls):
    """None by default (the key not passed: one process), stored unchanged, in get_params and set_params."""
    assert cls().get_params()["distributed"] is None
    assert cls(distributed="mpi").get_params()["distributed"] == "mpi"
    assert cls().set_params(distributed="none").distributed == "none"
    assert "distributed='mpi'" in repr(cls(distributed="mpi"))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", ["tcp", "MPI", True])
def test_a_bad_value_is_refused_by_name_before_training(cls, bad):
    """The C parameter check (or the string check before it) refuses it by name: no MPI is started, nothing is fitted."""
    X, y = make_data(60, "binary", seed=3)
    est = cls(distributed=bad, n_estimators=2)
    args = (X,) if cls is samebits.IsolationForest else (X, y)
    kw = {"group": [30, 30]} if cls is samebits.GradientBoostingRanker else {}
    with pytest.raises(InvalidArgumentError, match="distributed"):
        est.fit(*args, **kw)
    assert getattr(est, "_model", None) is None


def test_none_is_one_process(data):
    """distributed="none" is the key's C default: the digests of the key left out;
    another seed gives other digests for every model (the comparison can fail)."""
    X, y = make_data(300, "regression", seed=5)
    for cls in (samebits.GradientBoostingRegressor, samebits.RandomForestRegressor, samebits.IsolationForest):
        args = (X,) if cls is samebits.IsolationForest else (X, y)
        assert cls(n_estimators=3, distributed="none").fit(*args).model_digest_ == \
            cls(n_estimators=3).fit(*args).model_digest_
    one, other = _digests(data), _digests(data, seed=1)
    assert all(one[k] != other[k] for k in one), (one, other)


@needs_mpi
@pytest.mark.parametrize("np", [1, 2, 3])
def test_ranks_give_the_single_process_digests(data, np):
    want = _digests(data)
    got = _digests(data, np=np)
    assert got == want, f"{np} ranks gave other model digests than one process"


@needs_mpi
def test_float_allreduce_arm_parts_from_the_single_process(data):
    """The arm's single process is the real build's (it changes the all-reduce alone);
    at 2 and 3 ranks the models whose sums it rounds get other digests."""
    real = _digests(data)
    assert _digests(data, sabotage="float-allreduce") == real, "the arm must change the all-reduce only"
    for np in (2, 3):
        arm = _digests(data, np=np, sabotage="float-allreduce")
        parted = [k for k in ARM_SHOWS if arm[k] != real[k]]
        assert parted == list(ARM_SHOWS), f"the float all-reduce arm was not caught at {np} ranks: {parted}"
