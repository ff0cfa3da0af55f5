"""What the time series benches (ets_bench.py, arima_bench.py, and the GPU
benches ets_gpu_bench.py and ts_gpu_bench.py) share: the taxi's daily
series, the command line, the record's header (commit, machine, versions), the JSON and
Markdown files, and the time table (samebits beside statsmodels)."""
import argparse
import datetime
import json
import os

import numpy as np
from _common import git_commit, machine_line

HERE = os.path.dirname(os.path.abspath(__file__))


def taxi_daily(root, zones=5, hint=""):
    """The NYC taxi samples under root as daily series over 2018-2020: trips,
    trips paid by card and by cash, the total fare, and the trips of the
    zones busiest pickup zones, each a float64 array by day (a day without
    trips 0). hint: what the refusal adds where root holds no sample."""
    import glob
    import gzip
    import pandas as pd
    frames = []
    for path in sorted(glob.glob(os.path.join(root, "yellow_tripdata_sample_*.csv.gz"))):
        with gzip.open(path, "rt") as f:
            frames.append(pd.read_csv(f, usecols=["pickup_datetime", "pickup_location_id", "payment_type",
                                                  "total_amount"]))
    if not frames:
        raise SystemExit("no taxi samples under %s%s" % (root, hint))
    d = pd.concat(frames, ignore_index=True)
    d["day"] = pd.to_datetime(d["pickup_datetime"]).dt.normalize()
    d = d[(d.day >= "2018-01-01") & (d.day <= "2020-12-31")]
    days = pd.date_range("2018-01-01", "2020-12-31", freq="D")
    out = {"taxi/trips": d.groupby("day").size().reindex(days, fill_value=0)}
    for pt, name in ((1, "card"), (2, "cash")):
        out["taxi/trips-" + name] = d[d.payment_type == pt].groupby("day").size().reindex(days, fill_value=0)
    out["taxi/total-fare"] = d.groupby("day")["total_amount"].sum().reindex(days, fill_value=0.0)
    for z in d.pickup_location_id.value_counts().index[:zones]:
        out["taxi/zone-%d" % z] = d[d.pickup_location_id == z].groupby("day").size().reindex(days, fill_value=0)
    return {k: v.to_numpy(dtype=np.float64) for k, v in out.items()}


def derive(bases, n, length, seed):
    """N series of the given length from the bases (bench/ts_gpu_bench.py's docstring states
    the rule; bench/arima_probe_data.py writes the same series for the device probe)."""
    names = sorted(bases)
    rng = np.random.default_rng(seed)
    ys = []
    for i in range(n):
        b = bases[names[i % len(names)]]
        L = min(length, len(b))
        s = int(rng.integers(0, len(b) - L + 1))
        ys.append(np.ascontiguousarray(b[s:s + L] * (0.5 + float(rng.random())) + 1.0))
    return ys


def gpu_name():
    """The first GPU nvidia-smi lists (name, driver), "none seen" without one."""
    import shutil
    import subprocess
    if not shutil.which("nvidia-smi"):
        return "none seen"
    r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "none seen"


def fit_misses(r):
    """What a time-series row misses of the agreement bar: its parameters
    (1e-3), log-likelihood (relative 1e-4) and forecasts (relative 1e-4), each
    named with its size; [] where all are met."""
    miss = []
    if r["param_diff"] > 1e-3:
        miss.append("params %.1e" % r["param_diff"])
    if abs(r["llf_rel"]) > 1e-4:
        miss.append("llf %.1e" % r["llf_rel"])
    if r["fc_rel"] > 1e-4:
        miss.append("forecasts %.1e" % r["fc_rel"])
    return miss


def parse_args():
    """--threads (default 2, this workplace's cores) and --out (bench/results)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    return ap.parse_args()


def header(threads, parameters):
    """The record's header: commit (and whether the tree was dirty), date,
    machine, threads, the versions of samebits, statsmodels and numpy, and the
    parameters' prose."""
    import samebits
    import statsmodels
    commit, dirty = git_commit(short=True)
    return {"commit": commit, "dirty": dirty, "date": datetime.date.today().isoformat(),
            "machine": machine_line(),
            "threads": threads, "samebits": samebits.__version__, "profile": samebits.profile_version(),
            "statsmodels": statsmodels.__version__, "numpy": np.__version__, "parameters": parameters}


def run_line(head):
    """The Markdown record's line naming the commit, machine and versions."""
    return "commit %s%s; %s; %d threads; samebits %s (%s), statsmodels %s, numpy %s." % (
        head["commit"], " (dirty)" if head["dirty"] else "", head["machine"], head["threads"], head["samebits"],
        head["profile"], head["statsmodels"], head["numpy"])


def write_json(out, base, head, rows, times):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, base + ".json"), "w") as f:
        json.dump({"header": head, "rows": rows, "times": times}, f, indent=1)


def time_rows(times, ratio="%.2f"):
    """The time table's rows, a model a row and then all, the ratio
    samebits / statsmodels in the format ratio."""
    fmt = "| %s | %d | %.3f | %.3f | " + ratio + " |"
    lines = [fmt % (t["model"], t["fits"], t["samebits_s"], t["statsmodels_s"], t["samebits_s"] / t["statsmodels_s"])
             for t in times]
    tot_sb = sum(t["samebits_s"] for t in times)
    tot_sm = sum(t["statsmodels_s"] for t in times)
    lines.append(fmt % ("all", sum(t["fits"] for t in times), tot_sb, tot_sm, tot_sb / tot_sm))
    return lines


def write_md(out, base, lines, shown):
    """The Markdown record; prints its first shown lines and its path."""
    with open(os.path.join(out, base + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:shown]))
    print("wrote", os.path.join(out, base + ".md"))
