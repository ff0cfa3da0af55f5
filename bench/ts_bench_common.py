"""What the time series benches (ets_bench.py, arima_bench.py) share: the
command line, the record's header (commit, machine, versions), the JSON and
Markdown files, and the time table (samebits beside statsmodels)."""
import argparse
import datetime
import json
import os

import numpy as np
from _common import git_commit, machine_line

HERE = os.path.dirname(os.path.abspath(__file__))


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
