"""distributed=mpi (issue 26, docs/distributed.md): gradient boosting over MPI
ranks gives the single process's model bytes.

Every identity test here trains once in one process (no distributed key) and
then under `mpirun --oversubscribe -np N` for N = 1, 2, 3, 4 with
distributed=mpi, on real data (LightGBM's examples and California housing
from ../shared/data), and compares the model files byte for byte. The
separating arm (make SABOTAGE=float-allreduce: the histograms summed across
ranks as floats) must FAIL that comparison, while its single-process model
stays the real build's (the arm touches the all-reduce alone).

Rank failure uses the MPI shim's test hook SAMEBITS_MPI_TEST_KILL="R:C"
(src/backends/mpi/mpi_shim.c): rank R sends itself SIGKILL as it enters its
C-th collective, mid-training. The other ranks must end with a named error
within the timeout, mpirun with a non-zero status, and the output path must
hold no model (or the old file, untouched).

The tests that launch ranks skip only when mpirun is not installed (tools/ensure-deps.sh installs Debian's
openmpi-bin and libopenmpi-dev, so `make test` runs them); with mpirun present, a
missing shim is a failure.
"""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT, build_dir

EX = ROOT.parent / "shared" / "data" / "lightgbm-examples"
CAL = ROOT.parent / "shared" / "data" / "california-housing.csv"
RANKS = (1, 2, 3, 4)

needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None,
                               reason="mpirun is not installed (tools/ensure-deps.sh installs openmpi-bin)")


def _env(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SAMEBITS_")}
    e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader,tcp",
              "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})  # containers often forbid CMA
    e.update(extra or {})
    return e


def _exe(sabotage=None):
    d = build_dir("x86_64", sabotage)
    exe = d / "samebits"
    if not exe.exists() or not (d / "libsamebits_mpi.so").exists():
        pytest.fail(f"{exe} or its libsamebits_mpi.so is missing: run `make{' SABOTAGE=' + sabotage if sabotage else ''}`"
                    " with mpicc installed (make test builds both)")
    return str(exe)


def _train(args, out, np=None, sabotage=None, env=None, timeout=300, model="gbdt", threads=1):
    cmd = [_exe(sabotage), "train", "--model", model, "--threads", str(threads)] + list(args) + ["--out", str(out)]
    if np is not None:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + [a for k, v in (env or {}).items()
                                                                 for a in ("-x", f"{k}={v}")] + cmd + ["distributed=mpi"]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(env), timeout=timeout, cwd=ROOT)


def _data(name):
    if not EX.is_dir() or not CAL.exists():
        pytest.skip("../shared/data (LightGBM's examples, California housing) is not here")
    return str(EX / name)


def _california(tmp_path):
    """California housing without its one text column (ocean_proximity)."""
    _data("regression_regression.train")
    rows = CAL.read_text().splitlines()
    path = tmp_path / "california.csv"
    path.write_text("\n".join(",".join(r.split(",")[:9]) for r in rows) + "\n")
    return str(path)


def _zero_weights(tmp_path):
    """Weights for LightGBM's regression example: every seventh row 0 (an absent row)."""
    n = len(open(_data("regression_regression.train")).read().splitlines())
    path = tmp_path / "w.txt"
    path.write_text("".join("0\n" if (i + 1) % 7 == 0 else f"{(i + 1) % 3 + 0.5}\n" for i in range(n)))
    return str(path)


def _first_model(tmp_path):
    """A 5-iteration model of LightGBM's regression example, to continue from."""
    first = tmp_path / "first.sbm"
    r = _train(["--data", _data("regression_regression.train"), "--label", "0", "n_estimators=5"], first)
    assert r.returncode == 0, r.stderr
    return str(first)


def _with_init_scores(tmp_path):
    """LightGBM's regression example with initial scores beside it (DATA.init: half the label)."""
    src = _data("regression_regression.train")
    data = tmp_path / "ri.train"
    text = open(src).read()
    data.write_text(text)
    (tmp_path / "ri.train.init").write_text("".join(f"{float(ln.split()[0]) * 0.5}\n" for ln in text.splitlines()))
    return str(data)


def _zero_first_quarter(tmp_path):
    """Weights for LightGBM's regression example: its first quarter 0, so at 4 ranks
    rank 0's whole block weighs zero (and is dropped, as one process drops those rows)."""
    n = len(open(_data("regression_regression.train")).read().splitlines())
    path = tmp_path / "wq.txt"
    path.write_text("".join("0\n" if i < n // 4 + 3 else "1.5\n" for i in range(n)))
    return str(path)


CASES = {
    # binary with sample weights (its DATA.weight file beside it), leaf-wise, every default
    "binary-weights": lambda t: ["--data", _data("binary_classification_binary.train"), "--label", "0",
                                 "--objective", "binary", "n_estimators=30"],
    # binary: class weights from counts, bagging kept two iterations, columns drawn per node
    "binary-bagging": lambda t: ["--data", _data("binary_classification_binary.train"), "--label", "0",
                                 "--objective", "binary", "n_estimators=20", "is_unbalance=true", "subsample=0.5",
                                 "bagging_freq=2", "colsample_bynode=0.5"],
    "multiclass": lambda t: ["--data", _data("multiclass_classification_multiclass.train"), "--label", "0",
                             "--objective", "multiclass", "n_estimators=8"],
    # regression, depth-wise, bagging and columns per tree, a binning sample smaller than the data
    "regression-depthwise": lambda t: ["--data", _data("regression_regression.train"), "--label", "0",
                                       "n_estimators=20", "growth=depthwise", "max_depth=5", "subsample=0.7",
                                       "colsample=0.6", "bin_sample_rows=2000"],
    # the row-major histograms (force_row_wise; the single process's model is the same either way)
    "binary-rowwise": lambda t: ["--data", _data("binary_classification_binary.train"), "--label", "0",
                                 "--objective", "binary", "n_estimators=10", "growth=depthwise", "max_depth=6",
                                 "force_row_wise=true", "subsample=0.6"],
    # California housing (20,640 rows), the binning sample drawn by global row
    "california": lambda t: ["--data", _california(t), "--label", "median_house_value", "n_estimators=15",
                             "bin_sample_rows=5000", "num_leaves=63"],
    # DART: drops and rescaling decided from draws and weights alone, margins recomputed per row
    "binary-dart": lambda t: ["--data", _data("binary_classification_binary.train"), "--label", "0",
                              "--objective", "binary", "n_estimators=15", "boosting=dart", "drop_rate=0.3",
                              "skip_drop=0.2"],
    # continued training: each rank's margins start at the initial model's predictions of its rows
    "regression-continued": lambda t: ["--data", _data("regression_regression.train"), "--label", "0",
                                       "n_estimators=6", "subsample=0.7", "--init-model", _first_model(t)],
    # initial scores (DATA.init beside the data): each rank takes its block of them
    "regression-init-scores": lambda t: ["--data", _with_init_scores(t), "--label", "0", "n_estimators=6"],
    # a categorical feature (the house age's whole years as codes): the codes' bins from the gathered
    # sample, the category search (one-vs-rest and sorted sets) from the global histograms
    "california-categorical": lambda t: ["--data", _california(t), "--label", "median_house_value",
                                         "n_estimators=12", "categorical_feature=name:housing_median_age",
                                         "bin_sample_rows=4000", "min_data_per_group=50"],
    # quantile: the starting score from every rank's labels, each leaf renewed as the weighted quantile
    # of its rows' residuals over every rank (gathered per tree)
    "california-quantile": lambda t: ["--data", _california(t), "--label", "median_house_value",
                                      "n_estimators=10", "objective=quantile", "alpha=0.7", "subsample=0.8"],
    # ranking (LightGBM's lambdarank example, its .query file beside it): blocks of whole queries,
    # the training rows' NDCG over every rank's margins
    "lambdarank": lambda t: ["--data", _data("lambdarank_rank.train"), "--objective", "lambdarank",
                             "n_estimators=10", "subsample=0.8", "eval_period=5"],
    "rank-pairwise-valid": lambda t: ["--data", _data("lambdarank_rank.train"), "--objective", "rank_pairwise",
                                      "n_estimators=30", "--valid", _data("lambdarank_rank.test"),
                                      "early_stopping_rounds=3"],
    # a block that weighs zero as a whole (at 4 ranks, rank 0's; at 3, part of rank 0's)
    "regression-zero-block": lambda t: ["--data", _data("regression_regression.train"), "--label", "0",
                                        "--weight", _zero_first_quarter(t), "n_estimators=10", "subsample=0.9"],
    # rows of weight zero dropped before anything (global row numbers then count the kept rows)
    "poisson-zero-weights": lambda t: ["--data", _data("regression_regression.train"), "--label", "0",
                                       "--weight", _zero_weights(t), "n_estimators=12", "objective=poisson",
                                       "subsample=0.8"],
}


@needs_mpi
@pytest.mark.parametrize("case", sorted(CASES))
def test_ranks_give_the_single_process_model_bytes(case, tmp_path):
    args = CASES[case](tmp_path)
    single = tmp_path / "single.sbm"
    r = _train(args, single)
    assert r.returncode == 0, r.stderr
    want = single.read_bytes()
    for np in RANKS:
        out = tmp_path / f"np{np}.sbm"
        r = _train(args, out, np=np)
        assert r.returncode == 0, (np, r.stderr)
        assert out.read_bytes() == want, f"{case}: {np} ranks gave other model bytes than one process"


def _shards(tmp_path, cuts):
    """California housing (with weights beside it) whole, and cut at the given
    rows into shard{k}.csv files (each with its weights beside it)."""
    rows = open(_california(tmp_path)).read().splitlines()
    head, body = rows[0], rows[1:]
    w = [f"{(i % 5) * 0.5}\n" for i in range(len(body))]
    whole = tmp_path / "whole.csv"
    whole.write_text("\n".join([head] + body) + "\n")
    (tmp_path / "whole.csv.weight").write_text("".join(w))
    bounds = [0] + list(cuts) + [len(body)]
    for k in range(len(bounds) - 1):
        (tmp_path / f"shard{k}.csv").write_text("\n".join([head] + body[bounds[k]:bounds[k + 1]]) + "\n")
        (tmp_path / f"shard{k}.csv.weight").write_text("".join(w[bounds[k]:bounds[k + 1]]))
    return str(whole), str(tmp_path / "shard{rank}.csv")


@needs_mpi
@pytest.mark.parametrize("cuts", [(12000,), (5000, 14000), (1, 2, 20000)])
def test_given_rows_each_rank_reads_its_own_file(cuts, tmp_path):
    """distributed_rows=given: each rank reads its own shard (--data shard{rank}.csv, its
    weights beside it), shards of any sizes; the model is the single process's on the
    whole file, byte for byte."""
    whole, shard = _shards(tmp_path, cuts)
    args = ["--label", "median_house_value", "n_estimators=15", "subsample=0.7", "bin_sample_rows=4000"]
    single = tmp_path / "single.sbm"
    r = _train(["--data", whole] + args, single)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "given.sbm"
    r = _train(["--data", shard] + args + ["distributed_rows=given"], out, np=len(cuts) + 1)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == single.read_bytes()


@needs_mpi
def test_given_rows_ranking_shards_with_their_query_files(tmp_path):
    """LightGBM's lambdarank example cut between queries into 3 shards, each with its
    .query file beside it: the single process's model on the whole file."""
    rows = open(_data("lambdarank_rank.train")).read().splitlines()
    q = [int(x) for x in open(_data("lambdarank_rank.train") + ".query").read().split()]
    start = [0]
    for x in q:
        start.append(start[-1] + x)
    cut = [0, 40, 140, len(q)]
    for k in range(3):
        (tmp_path / f"rk{k}.train").write_text("\n".join(rows[start[cut[k]]:start[cut[k + 1]]]) + "\n")
        (tmp_path / f"rk{k}.train.query").write_text("".join(f"{x}\n" for x in q[cut[k]:cut[k + 1]]))
    args = ["--objective", "lambdarank", "n_estimators=10", "subsample=0.8", "eval_period=5"]
    single = tmp_path / "single.sbm"
    r = _train(["--data", _data("lambdarank_rank.train")] + args, single)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "given.sbm"
    r = _train(["--data", str(tmp_path / "rk{rank}.train")] + args + ["distributed_rows=given"], out, np=3)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == single.read_bytes()
    # the training NDCG logged by rank 0 is the single process's
    assert [ln for ln in r.stderr.splitlines() if "ndcg" in ln] == \
        [ln for ln in _train(["--data", _data("lambdarank_rank.train")] + args, tmp_path / "s2.sbm").stderr.splitlines()
         if "ndcg" in ln]


def test_a_rank_path_needs_given_rows(tmp_path):
    """{rank} in a path outside distributed_rows=given is a usage error, named."""
    if not (build_dir("x86_64") / "samebits").exists():
        pytest.fail("build/samebits is missing: run make")
    r = subprocess.run([str(build_dir("x86_64") / "samebits"), "train", "--model", "gbdt", "--data",
                        str(tmp_path / "shard{rank}.csv"), "--label", "y", "--out", str(tmp_path / "m.sbm")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60, env=_env())
    assert r.returncode != 0
    assert "{rank} is one rank's own file" in r.stderr and "distributed_rows=given" in r.stderr, r.stderr


@needs_mpi
def test_validation_and_early_stopping_match(tmp_path):
    """Every rank holds the whole validation set: early stopping cuts where one process cuts."""
    args = ["--data", _data("regression_regression.train"), "--label", "0",
            "--valid", _data("regression_regression.test"), "n_estimators=200", "early_stopping_rounds=3",
            "learning_rate=0.3"]
    single = tmp_path / "single.sbm"
    r = _train(args, single)
    assert r.returncode == 0, r.stderr
    assert "early stopping" in r.stderr, r.stderr
    for np in (2, 3):
        out = tmp_path / f"np{np}.sbm"
        r = _train(args, out, np=np)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes() == single.read_bytes(), np
        assert r.stderr.count("early stopping") == 1, r.stderr  # rank 0 alone logs


@needs_mpi
def test_float_allreduce_arm_fails_the_identity_test(tmp_path):
    """The separating arm: histograms summed across ranks in float. Its single
    process is the real build's model (control); over ranks it parts."""
    args = CASES["binary-weights"](tmp_path)
    real = tmp_path / "real.sbm"
    assert _train(args, real).returncode == 0
    control = tmp_path / "arm-single.sbm"
    r = _train(args, control, sabotage="float-allreduce")
    assert r.returncode == 0, r.stderr
    assert control.read_bytes() == real.read_bytes(), "the arm must change the all-reduce only"
    parted = []
    for np in (1, 2, 3, 4):
        out = tmp_path / f"arm{np}.sbm"
        r = _train(args, out, np=np, sabotage="float-allreduce")
        assert r.returncode == 0, r.stderr
        parted.append(out.read_bytes() != real.read_bytes())
    assert all(parted[1:]), f"the float all-reduce arm was not caught at 2..4 ranks: {parted}"


@needs_mpi
@pytest.mark.parametrize("when", ["1:3", "1:40", "2:300"])
def test_a_killed_rank_ends_the_job_by_name_and_writes_no_model(when, tmp_path):
    """when: rank:collective (3: during the first gathers, before any tree; 40, 300: mid-training)."""
    args = CASES["binary-weights"](tmp_path)[:-1] + ["n_estimators=400"]
    out = tmp_path / "m.sbm"
    r = _train(args, out, np=3, env={"SAMEBITS_MPI_TEST_KILL": when}, timeout=120)
    assert r.returncode != 0
    assert "error: SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi lost a rank" in r.stderr, r.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or "tmp" in p.name] == []
    # an old model at the output path stays as it was
    out.write_bytes(b"old model")
    r = _train(args, out, np=2, env={"SAMEBITS_MPI_TEST_KILL": "0:25"}, timeout=120)
    assert r.returncode != 0 and "lost a rank" in r.stderr, r.stderr
    assert out.read_bytes() == b"old model"


@needs_mpi
def test_a_failure_only_one_rank_sees_ends_the_job_by_name(tmp_path):
    """Rank 2's block holds a label binary refuses: the other ranks would wait
    in the next collective; the job ends, naming rank 2's error, within the timeout."""
    lines = open(_data("binary_classification_binary.train")).read().splitlines()
    cut = len(lines) * 5 // 6
    f = lines[cut].split("\t")
    f[0] = "2"
    lines[cut] = "\t".join(f)
    data = tmp_path / "bad.train"
    data.write_text("\n".join(lines) + "\n")
    r = _train(["--data", str(data), "--label", "0", "--objective", "binary", "n_estimators=5"], tmp_path / "m.sbm",
               np=3, timeout=120)
    assert r.returncode != 0
    assert "rank 2 of 3: error: SB_ERR_INVALID_INPUT" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()


@needs_mpi
def test_a_rank_that_cannot_read_its_file_ends_the_job(tmp_path):
    """Rank 1 is given a path that does not exist: its error ends the job
    (sb_distributed_abort) instead of leaving the others in their first
    collective and itself in MPI's finalization."""
    good = _data("regression_regression.train")
    script = ('D="$1"; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && D="$2"; exec "$3" train --model gbdt --threads 1 '
              '--data "$D" --label 0 n_estimators=5 distributed=mpi --out "$4"')
    out = tmp_path / "m.sbm"
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "3", "sh", "-c", script, "sh", good,
                        str(tmp_path / "absent.train"), _exe(), str(out)],
                       capture_output=True, text=True, env=_env(), timeout=120, cwd=ROOT)
    assert r.returncode != 0
    assert "SB_ERR_IO" in r.stderr and "absent.train" in r.stderr, r.stderr
    assert not out.exists()


@needs_mpi
@pytest.mark.parametrize("extra,what", [
    (["--card", "CARD"], "an identity card"),
    (["--card", "CARD", "device=opencl"], "an identity card"),
])
def test_what_distributed_cannot_run_is_refused_by_name(extra, what, tmp_path):
    extra = [str(tmp_path / "c.card") if a == "CARD" else a for a in extra]
    args = ["--data", _data("regression_regression.train"), "--label", "0", "n_estimators=3"] + extra
    r = _train(args, tmp_path / "m.sbm", np=2, timeout=120)
    assert r.returncode != 0
    assert f"SB_ERR_INVALID_ARGUMENT: distributed=mpi does not support {what}" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()


# ---- gradient boosting on the tree devices (docs/distributed.md, "Devices") ----
#
# Each rank trains its block on its own device (device=opencl on PoCL here;
# cpu-batched, the devices' host reference, everywhere); the histograms the
# split search reads are summed over the ranks on the host. device=cuda runs
# the same host schedule (tdev_gpu.c over the device layer) and grower
# (grow_dev.c): it is not run here (no GPU).

POCL_ENV = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}


def _pocl_usable():
    exe = build_dir("x86_64") / "samebits"
    if not exe.exists():
        return False
    os.makedirs(POCL_ENV["POCL_CACHE_DIR"], exist_ok=True)
    r = subprocess.run([str(exe), "doctor"], capture_output=True, text=True, env=_env(POCL_ENV), timeout=120)
    return any(ln.startswith("opencl devices: ") and "usable" in ln for ln in r.stdout.splitlines())


needs_pocl = pytest.mark.skipif(not _pocl_usable(), reason="no usable OpenCL device (PoCL: tools/ensure-deps.sh "
                                "installs pocl-opencl-icd)")

# small cases (seconds on PoCL): the device's batched depth-wise levels, leaf-wise growth with weights and
# bagging, multiclass margins, the host's categorical search, quantile leaves and ranking gradients
def _fewer(case, *extra):
    """CASES[case] with its n_estimators and eval_period replaced by extra."""
    keys = {a.split("=")[0] for a in extra}
    return lambda t: [a for a in CASES[case](t) if a.split("=")[0] not in keys] + list(extra)


DEVICE_CASES = {
    "binary-weights": _fewer("binary-weights", "n_estimators=8"),
    "binary-bagging": _fewer("binary-bagging", "n_estimators=8"),
    "multiclass": _fewer("multiclass", "n_estimators=3"),
    "regression-depthwise": _fewer("regression-depthwise", "n_estimators=8"),
    "california-categorical": _fewer("california-categorical", "n_estimators=6"),
    "california-quantile": _fewer("california-quantile", "n_estimators=6"),
    "lambdarank": _fewer("lambdarank", "n_estimators=8", "eval_period=0"),
}


def _device_identity(device, case, tmp_path, ranks=(1, 2, 3), threads=1):
    args = DEVICE_CASES[case](tmp_path)
    cpu = tmp_path / "cpu.sbm"
    r = _train(args, cpu)
    assert r.returncode == 0, r.stderr
    want = cpu.read_bytes()
    one = tmp_path / "device.sbm"
    r = _train(args + [f"device={device}"], one, env=POCL_ENV)
    assert r.returncode == 0, r.stderr
    assert one.read_bytes() == want, f"{case}: one process on {device} is not the CPU model"
    for np in ranks:
        out = tmp_path / f"np{np}.sbm"
        r = _train(args + [f"device={device}"], out, np=np, env=POCL_ENV, threads=threads)
        assert r.returncode == 0, (np, r.stderr)
        assert out.read_bytes() == want, f"{case}: {np} ranks on {device} gave other bytes than the CPU model"


@needs_mpi
@needs_pocl
@pytest.mark.parametrize("case", sorted(DEVICE_CASES))
def test_opencl_ranks_give_the_cpu_model_bytes(case, tmp_path):
    _device_identity("opencl", case, tmp_path)


@needs_mpi
@pytest.mark.parametrize("case", sorted(DEVICE_CASES))
def test_cpu_batched_ranks_give_the_cpu_model_bytes(case, tmp_path):
    _device_identity("cpu-batched", case, tmp_path)


@needs_mpi
@needs_pocl
def test_opencl_ranks_with_threads_and_an_empty_block(tmp_path):
    """3 threads a rank; and at 4 ranks a block that weighs zero as a whole (rank 0 holds no row)."""
    _device_identity("opencl", "binary-bagging", tmp_path, ranks=(2, 3), threads=3)
    args = CASES["regression-zero-block"](tmp_path)
    cpu = tmp_path / "zb-cpu.sbm"
    assert _train(args, cpu).returncode == 0
    out = tmp_path / "zb4.sbm"
    r = _train(args + ["device=opencl"], out, np=4, env=POCL_ENV)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == cpu.read_bytes()


@needs_mpi
@pytest.mark.parametrize("device", ["opencl", "cpu-batched"])
def test_float_allreduce_arm_fails_the_device_identity_test(device, tmp_path):
    """The separating arm on the devices: the histograms the host's split search
    reads are summed through sb_dist_sum_hist, which the arm makes a float sum."""
    if device == "opencl" and not _pocl_usable():
        pytest.skip("no usable OpenCL device (PoCL: tools/ensure-deps.sh installs pocl-opencl-icd)")
    args = DEVICE_CASES["binary-weights"](tmp_path) + [f"device={device}"]
    real = tmp_path / "real.sbm"
    assert _train(args, real, env=POCL_ENV).returncode == 0
    control = tmp_path / "arm-single.sbm"
    r = _train(args, control, sabotage="float-allreduce", env=POCL_ENV)
    assert r.returncode == 0, r.stderr
    assert control.read_bytes() == real.read_bytes(), "the arm must change the all-reduce only"
    real2 = tmp_path / "real2.sbm"
    r = _train(args, real2, np=2, env=POCL_ENV)
    assert r.returncode == 0 and real2.read_bytes() == real.read_bytes(), r.stderr  # the real build's ranks agree
    parted = []
    for np in (2, 3):
        out = tmp_path / f"arm{np}.sbm"
        r = _train(args, out, np=np, sabotage="float-allreduce", env=POCL_ENV)
        assert r.returncode == 0, r.stderr
        parted.append(out.read_bytes() != real.read_bytes())
    assert all(parted), f"the float all-reduce arm was not caught on {device} at 2, 3 ranks: {parted}"


def test_without_the_shim_it_is_refused_by_name(tmp_path):
    """No MPI needed: the shim is looked for before MPI is started."""
    if not (build_dir("x86_64") / "samebits").exists():
        pytest.fail("build/samebits is missing: run make")
    args = ["--data", _data("regression_regression.train"), "--label", "0", "n_estimators=3", "distributed=mpi"]
    cmd = [str(build_dir("x86_64") / "samebits"), "train", "--model", "gbdt", "--threads", "1"] + args + [
        "--out", str(tmp_path / "m.sbm")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env=_env({"SAMEBITS_MPI_SHIM": str(tmp_path / "absent.so")}))
    assert r.returncode != 0
    assert "SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi: the MPI shim" in r.stderr and "make mpi" in r.stderr, r.stderr


def test_the_library_links_no_mpi():
    """libsamebits.so opens the shim (and NCCL) with dlopen only when asked: no MPI or NCCL among its needs."""
    r = subprocess.run(["readelf", "-d", str(build_dir("x86_64") / "libsamebits.so")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    needed = [ln for ln in r.stdout.splitlines() if "NEEDED" in ln]
    assert needed and not any("mpi" in ln or "nccl" in ln for ln in needed), needed


# ---- distributed=nccl (issue 31): what can be shown without a GPU ----
#
# The NCCL engine (src/core/dist.c) sums the histograms in CUDA memory; no GPU
# is here, so its all-reduce is not run by these tests (docs/distributed.md,
# "NCCL", says what was run where). Shown here: it is accepted only with
# device=cuda, NCCL's absence is refused by name, and where libnccl.so.2 is
# installed it loads and the fit goes on to the CUDA device.

CUDA_BUILD = ROOT / "build-cuda"


def _cuda_exe():
    """build-cuda/samebits (make CUDA=1: the CUDA backend, built with nvcc; no GPU needed to build it)."""
    exe = CUDA_BUILD / "samebits"
    if not exe.exists() or not (CUDA_BUILD / "libsamebits_mpi.so").exists():
        pytest.skip("build-cuda/samebits is not built (make CUDA=1 needs nvcc)")
    return str(exe)


def _nccl_train(extra, tmp_path, env=None, np=None, exe=None):
    args = ["--data", _data("regression_regression.train"), "--label", "0", "n_estimators=2"] + extra
    cmd = [exe or _exe(), "train", "--model", "gbdt", "--threads", "1"] + args + ["--out", str(tmp_path / "m.sbm")]
    if np is not None:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + [a for k, v in (env or {}).items()
                                                                 for a in ("-x", f"{k}={v}")] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(env), timeout=180, cwd=ROOT)


@pytest.mark.parametrize("extra", [[], ["device=opencl"], ["device=cpu-batched"]])
def test_nccl_needs_device_cuda(extra, tmp_path):
    r = _nccl_train(extra + ["distributed=nccl"], tmp_path)
    assert r.returncode != 0
    assert ("SB_ERR_INVALID_ARGUMENT: distributed=nccl does not support a fit off CUDA GPUs" in r.stderr
            and "device=cuda" in r.stderr), r.stderr
    assert not (tmp_path / "m.sbm").exists()


def test_nccl_absent_is_refused_by_name(tmp_path):
    """In a CUDA build (the only one where device=cuda passes the parameters):
    NCCL is opened before MPI starts; missing, or without its entry points, it is named."""
    exe = _cuda_exe()
    r = _nccl_train(["device=cuda", "distributed=nccl"], tmp_path, exe=exe,
                    env={"SAMEBITS_NCCL_LIB": str(tmp_path / "libnccl.so.2")})
    assert r.returncode != 0
    assert "SB_ERR_BACKEND_UNAVAILABLE: distributed=nccl: NCCL's library" in r.stderr, r.stderr
    assert "could not be opened" in r.stderr and "distributed=mpi" in r.stderr, r.stderr
    r = _nccl_train(["device=cuda", "distributed=nccl"], tmp_path, exe=exe,
                    env={"SAMEBITS_NCCL_LIB": str(CUDA_BUILD / "libsamebits.so")})
    assert r.returncode != 0
    assert "has no ncclGetUniqueId (NCCL 2 is needed)" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()


def test_nccl_without_a_cuda_build_is_the_backend_refusal(tmp_path):
    r = _nccl_train(["device=cuda", "distributed=nccl"], tmp_path)
    assert r.returncode != 0
    assert "SB_ERR_BACKEND_UNAVAILABLE: device 'cuda': this build has no CUDA backend" in r.stderr, r.stderr


def _have_libnccl():
    r = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
    return r.returncode == 0 and "libnccl.so.2 " in r.stdout


@needs_mpi
@pytest.mark.skipif(not _have_libnccl(), reason="libnccl.so.2 is not installed here")
def test_nccl_present_loads_and_the_fit_goes_on_to_the_cuda_device(tmp_path):
    """With NCCL installed and no GPU (this workplace), two ranks of the CUDA
    build load NCCL, start MPI, read the data and stop at the CUDA device, by
    name. Where a GPU is present this is not the test to run (docs/distributed.md)."""
    exe = _cuda_exe()
    probe = subprocess.run([exe, "doctor"], capture_output=True, text=True, env=_env(), timeout=120)
    if "no usable GPU" not in probe.stdout:
        pytest.skip("a CUDA device may be present: run the NCCL identity tests instead")
    r = _nccl_train(["device=cuda", "distributed=nccl"], tmp_path, np=2, exe=exe)
    assert r.returncode != 0
    assert "nccl" not in r.stderr.lower(), r.stderr
    assert "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr and "cuda" in r.stderr.lower(), r.stderr
    assert "rank 0 of 2" in r.stderr or "rank 1 of 2" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()



@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_a_static_cross_build_refuses_it_by_name(leg, tmp_path):
    """The static cross builds carry no shim loader (SB_NO_MPI): distributed=mpi is
    refused by name there, never run as one process."""
    from conftest import run_bin
    if not EX.is_dir():
        pytest.skip("../shared/data/lightgbm-examples is not here")
    r = run_bin(leg, "samebits", ["train", "--model", "gbdt", "--threads", "1", "--data",
                                  str(EX / "regression_regression.train"), "--label", "0", "n_estimators=2",
                                  "distributed=mpi", "--out", str(tmp_path / "m.sbm")], timeout=300)
    assert r.returncode != 0
    assert "SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi is not built into this library" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()
    # forests too (issue 26's second part)
    r = run_bin(leg, "samebits", ["train", "--model", "random_forest", "--threads", "1", "--data",
                                  str(EX / "regression_regression.train"), "--label", "0", "objective=regression",
                                  "n_estimators=2", "distributed=mpi", "--out", str(tmp_path / "f.sbm")], timeout=300)
    assert r.returncode != 0
    assert "SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi is not built into this library" in r.stderr, r.stderr
    assert not (tmp_path / "f.sbm").exists()


# ---- forests (issue 26's second part): random forests and Extra Trees ----

def _california_weights(tmp_path):
    """Weights for California housing: 0.5 to 3 by row, every eleventh row 0."""
    n = len(open(_california(tmp_path)).read().splitlines()) - 1
    path = tmp_path / "cw.txt"
    path.write_text("".join("0\n" if (i + 1) % 11 == 0 else f"{(i % 6) * 0.5 + 0.5}\n" for i in range(n)))
    return str(path)


def _forest_init(tmp_path, model, args):
    """A forest of the first estimators, fitted in one process, to continue from."""
    init = tmp_path / f"init-{model}.sbm"
    r = _train(args, init, model=model)
    assert r.returncode == 0, r.stderr
    return str(init)


FOREST_CASES = {
    # random forest classification, the binary example's DATA.weight beside it (weighted class counts)
    "rf-binary-weights": ("random_forest", lambda t: ["--data", _data("binary_classification_binary.train"),
                                                      "--label", "0", "n_estimators=6"]),
    # multiclass, entropy, a fraction of the features, class weights per tree's bootstrap
    "rf-multiclass-subsample": ("random_forest", lambda t: [
        "--data", _data("multiclass_classification_multiclass.train"), "--label", "0", "n_estimators=5",
        "criterion=entropy", "max_features=0.5", "class_weight=balanced_subsample"]),
    # weighted regression on California housing (20,640 rows), max_samples of the global rows
    "rf-california-weighted": ("random_forest", lambda t: [
        "--data", _california(t), "--label", "median_house_value", "--weight", _california_weights(t),
        "objective=regression", "n_estimators=4", "max_samples=0.6", "max_depth=14", "bin_sample_rows=5000",
        "min_weight_fraction_leaf=0.001"]),
    # Extra Trees classification with a bootstrap, max_samples and balanced class weights
    "et-multiclass-bootstrap": ("extra_trees", lambda t: [
        "--data", _data("multiclass_classification_multiclass.train"), "--label", "0", "n_estimators=5",
        "bootstrap=true", "max_samples=0.5", "class_weight=balanced"]),
    # Extra Trees regression on California housing, no bootstrap (every row once), thresholds from the
    # nodes' global bin ranges
    "et-california": ("extra_trees", lambda t: [
        "--data", _california(t), "--label", "median_house_value", "objective=regression", "n_estimators=4",
        "max_depth=14", "max_features=sqrt"]),
    # Extra Trees regression without a bootstrap: rows of weight zero dropped (at 4 ranks rank 0's whole block)
    "et-regression-zero-block": ("extra_trees", lambda t: [
        "--data", _data("regression_regression.train"), "--label", "0", "--weight", _zero_first_quarter(t),
        "objective=regression", "n_estimators=4"]),
    # isolation forests: every tree's subsample drawn by global row on every rank, the drawn rows' bins
    # gathered; California housing unweighted, the binary example weighted (its DATA.weight beside it)
    "iforest-california": ("isolation_forest", lambda t: ["--data", _california(t), "n_estimators=25",
                                                          "bin_sample_rows=5000"]),
    "iforest-binary-weights": ("isolation_forest", lambda t: [
        "--data", _data("binary_classification_binary.train"), "n_estimators=25", "max_samples=300"]),
    # warm starts: the kept estimators' leaves re-valued from each tree's sample routed through them, the
    # sums over every rank's rows; the new trees grown as above
    "rf-warm-start": ("random_forest", lambda t: [
        "--data", _data("binary_classification_binary.train"), "--label", "0", "n_estimators=6", "max_samples=0.5",
        "--init-model", _forest_init(t, "random_forest", ["--data", _data("binary_classification_binary.train"),
                                                          "--label", "0", "n_estimators=3", "max_samples=0.5"])]),
    "et-warm-start-california": ("extra_trees", lambda t: [
        "--data", _california(t), "--label", "median_house_value", "objective=regression", "n_estimators=4",
        "max_depth=10", "--init-model", _forest_init(t, "extra_trees", [
            "--data", _california(t), "--label", "median_house_value", "objective=regression", "n_estimators=2",
            "max_depth=10"])]),
    "iforest-warm-start": ("isolation_forest", lambda t: [
        "--data", _california(t), "n_estimators=20", "--init-model",
        _forest_init(t, "isolation_forest", ["--data", _california(t), "n_estimators=10"])]),
}


@needs_mpi
@pytest.mark.parametrize("case", sorted(FOREST_CASES))
def test_forest_ranks_give_the_single_process_model_bytes(case, tmp_path):
    model, make = FOREST_CASES[case]
    args = make(tmp_path)
    single = tmp_path / "single.sbm"
    r = _train(args, single, model=model)
    assert r.returncode == 0, r.stderr
    want = single.read_bytes()
    for np in RANKS:
        out = tmp_path / f"np{np}.sbm"
        r = _train(args, out, np=np, model=model)
        assert r.returncode == 0, (np, r.stderr)
        assert out.read_bytes() == want, f"{case}: {np} ranks gave other model bytes than one process"


@needs_mpi
@pytest.mark.parametrize("case", ["rf-multiclass-subsample", "iforest-binary-weights"])
def test_forest_ranks_with_threads_give_the_single_process_model_bytes(case, tmp_path):
    """Each rank with 2 threads (trees grow one at a time on a rank; the bits
    do not depend on the threads) against one process with 1."""
    model, make = FOREST_CASES[case]
    args = make(tmp_path)
    single = tmp_path / "single.sbm"
    assert _train(args, single, model=model).returncode == 0
    out = tmp_path / "np3.sbm"
    r = _train(args + ["--threads", "2"], out, np=3, model=model)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == single.read_bytes()


@needs_mpi
@pytest.mark.parametrize("model,extra", [
    ("random_forest", ["--label", "median_house_value", "objective=regression", "max_samples=0.5", "max_depth=12"]),
    ("extra_trees", ["--label", "median_house_value", "objective=regression", "max_depth=12"]),
    ("isolation_forest", []),
])
def test_forest_given_rows_each_rank_reads_its_own_file(model, extra, tmp_path):
    """distributed_rows=given for forests: shards of California housing of 1, 4,999, 15,000 and
    640 rows with their weights beside them (rank 0's one row weighs 0: Extra Trees drop it);
    the model is the single process's on the whole file."""
    whole, shard = _shards(tmp_path, (1, 5000, 20000))
    args = extra + ["n_estimators=4"]
    single = tmp_path / "single.sbm"
    r = _train(["--data", whole] + args, single, model=model)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "given.sbm"
    r = _train(["--data", shard] + args + ["distributed_rows=given"], out, np=4, model=model)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == single.read_bytes()


@needs_mpi
def test_float_allreduce_arm_fails_the_forest_identity_test(tmp_path):
    """The separating arm sums a forest's node sums across ranks in float too
    (the one reduce, sb_dist_sum_hist): its single process is the real
    build's model; over 2 to 4 ranks it parts."""
    model, make = FOREST_CASES["rf-california-weighted"]
    args = make(tmp_path)
    real = tmp_path / "real.sbm"
    assert _train(args, real, model=model).returncode == 0
    control = tmp_path / "arm-single.sbm"
    r = _train(args, control, sabotage="float-allreduce", model=model)
    assert r.returncode == 0, r.stderr
    assert control.read_bytes() == real.read_bytes(), "the arm must change the all-reduce only"
    parted = []
    for np in (1, 2, 3, 4):
        out = tmp_path / f"arm{np}.sbm"
        r = _train(args, out, np=np, sabotage="float-allreduce", model=model)
        assert r.returncode == 0, r.stderr
        parted.append(out.read_bytes() != real.read_bytes())
    assert all(parted[1:]), f"the float all-reduce arm was not caught at 2..4 ranks: {parted}"


@needs_mpi
@pytest.mark.parametrize("model", ["random_forest", "extra_trees", "isolation_forest"])
def test_a_killed_rank_ends_forest_training_by_name_and_writes_no_model(model, tmp_path):
    label = [] if model == "isolation_forest" else ["--label", "median_house_value", "objective=regression"]
    args = ["--data", _california(tmp_path)] + label + ["n_estimators=300"]
    out = tmp_path / "m.sbm"
    r = _train(args, out, np=3, env={"SAMEBITS_MPI_TEST_KILL": "1:200"}, timeout=120, model=model)
    assert r.returncode != 0
    assert "error: SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi lost a rank" in r.stderr, r.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.name.startswith("m.sbm")] == []


@needs_mpi
def test_a_forest_failure_only_one_rank_sees_ends_the_job_by_name(tmp_path):
    """Rank 2's block holds a label classification refuses (-1)."""
    lines = open(_data("binary_classification_binary.train")).read().splitlines()
    cut = len(lines) * 5 // 6
    f = lines[cut].split("\t")
    f[0] = "-1"
    lines[cut] = "\t".join(f)
    data = tmp_path / "bad.train"
    data.write_text("\n".join(lines) + "\n")
    r = _train(["--data", str(data), "--label", "0", "n_estimators=5"], tmp_path / "m.sbm", np=3, timeout=120,
               model="random_forest")
    assert r.returncode != 0
    assert "rank 2 of 3: error: SB_ERR_INVALID_INPUT" in r.stderr, r.stderr
    assert f"label of row {cut} is -1" in r.stderr, r.stderr  # the file's row number, not the block's
    assert not (tmp_path / "m.sbm").exists()


@needs_mpi
@pytest.mark.parametrize("model,extra,what", [
    ("random_forest", ["device=opencl"], "a forest device"),
    ("extra_trees", ["--card", "CARD"], "an identity card"),
    ("isolation_forest", ["device=cpu-batched"], "a forest device"),
])
def test_what_distributed_forests_cannot_run_is_refused_by_name(model, extra, what, tmp_path):
    data = _data("regression_regression.train")
    extra = [str(tmp_path / "c.card") if a == "CARD" else a for a in extra]
    label = [] if model == "isolation_forest" else ["--label", "0", "objective=regression"]
    args = ["--data", data] + label + ["n_estimators=3"] + extra
    r = _train(args, tmp_path / "m.sbm", np=2, timeout=120, model=model)
    assert r.returncode != 0
    assert f"SB_ERR_INVALID_ARGUMENT: distributed=mpi does not support {what}" in r.stderr, r.stderr
    assert not (tmp_path / "m.sbm").exists()
