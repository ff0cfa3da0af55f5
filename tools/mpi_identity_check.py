#!/usr/bin/env python3
"""mpi_identity_check.py --build DIR: distributed=mpi's identity check on one
build (the float-allreduce arm's check in tools/evidence_cpu.py).

Trains LightGBM's binary example (../shared/data/lightgbm-examples) with
gradient boosting, and California housing (../shared/data) with a random
forest regression (issue 26's forests), in one process with DIR/samebits,
then under `mpirun --oversubscribe -np N` for N = 1..4 with distributed=mpi,
and compares the model bytes. Prints one line per workload and rank count
and "identity: PASS" (exit 0) when every one equals the single process's
model, "identity: FAIL" (exit 1) otherwise; exit 2 when it cannot run (no
mpirun, no data, a failed training).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data", "lightgbm-examples", "binary_classification_binary.train")
CAL = os.path.join(os.path.dirname(ROOT), "shared", "data", "california-housing.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="1,2,3,4")
    a = ap.parse_args()
    exe = os.path.join(ROOT, a.build, "samebits")
    if not shutil.which("mpirun") or not os.path.exists(exe) or not os.path.exists(DATA) or not os.path.exists(CAL):
        print(f"mpi_identity_check: cannot run (mpirun, {exe}, {DATA} or {CAL} missing)")
        return 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAMEBITS_")}
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})
    gbdt = ["train", "--model", "gbdt", "--threads", "1", "--data", DATA, "--label", "0", "--objective", "binary",
            "n_estimators=30"]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        cal = os.path.join(tmp, "california.csv")
        with open(CAL) as f, open(cal, "w") as g:  # without its one text column
            for ln in f:
                g.write(",".join(ln.rstrip("\n").split(",")[:9]) + "\n")
        forest = ["train", "--model", "random_forest", "--threads", "1", "--data", cal, "--label",
                  "median_house_value", "objective=regression", "n_estimators=4", "max_samples=0.6", "max_depth=14"]
        for name, args in (("gbdt binary", gbdt), ("random forest regression", forest)):
            single = os.path.join(tmp, "single.sbm")
            r = subprocess.run([exe] + args + ["--out", single], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                print(r.stderr)
                return 2
            want = open(single, "rb").read()
            for n in [int(x) for x in a.ranks.split(",")]:
                out = os.path.join(tmp, f"np{n}.sbm")
                r = subprocess.run(["mpirun", "--oversubscribe", "-np", str(n), exe] + args +
                                   ["distributed=mpi", "--out", out], capture_output=True, text=True, env=env,
                                   timeout=600)
                if r.returncode != 0:
                    print(r.stderr)
                    return 2
                same = open(out, "rb").read() == want
                ok = ok and same
                print(f"  {name}, {n} ranks: {'identical' if same else 'DIFFERS'} (model bytes against one process)")
    print("identity: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
