"""AutoETS beside statsforecast's AutoETS over many real series (issue 28's
sMAPE target: the automatic search within 2% of statsforecast's).

bench/ts_statsforecast_bench.py compares the searches on 15 series, where one
series (the sunspots) decides the AutoETS mean. This bench widens the set by a
rule fixed before any run: **the --zones busiest pickup zones of the NYC taxi
samples** (ranked by their trips 2018-2020, the same ranking as that bench's
batched speed), each zone's daily trip count over the 1,096 days 2018-2020,
zeros kept, season 7. Each series less its last --h days (default 14) is
fitted by statsforecast's AutoETS and by samebits.auto_ets_forecast with the
same model string (default "AZZ", additive errors: ANN, AAN, AAdN, ANA, AAA,
AAdA; also "ZZZ" with --models AZZ,ZZZ), and the held-out tail scores each
with sMAPE, 100 * mean(2|y - f| / (|y| + |f|)), a 0/0 term counting 0 (that
bench's definition). The tail is the last two weeks of 2020, after the
pandemic's break: a hard test for both.

Reported: the mean and median sMAPE of each side, the relative gap of the
means, per-series wins, how often the two pick the same model, and the picks.
Times are not the point here (the batched speed is that bench's), but both
fit times are recorded, samebits on --threads threads and statsforecast with
n_jobs = --threads.

Run: python3 bench/auto_ets_zones.py [--zones 100] [--h 14] [--models AZZ] [--threads 2]
Writes bench/results/auto-ets-zones-<date>-<commit>.md and .json.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
warnings.filterwarnings("ignore")

import samebits  # noqa: E402
from ts_statsforecast_bench import long_frame, smape, zone_series  # noqa: E402


def sf_auto_ets(df, h, model, n_jobs):
    """statsforecast's AutoETS on every series: (forecasts, picks, seconds of
    fit and predict). fit() keeps the models, so one fit gives both."""
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS
    sf = StatsForecast(models=[AutoETS(season_length=7, model=model)], freq=1, n_jobs=n_jobs)
    t0 = time.perf_counter()
    sf.fit(df=df)
    fc = sf.predict(h=h)
    t = time.perf_counter() - t0
    fc = fc.reset_index() if "unique_id" not in fc.columns else fc
    fcs = {str(k): g["AutoETS"].to_numpy() for k, g in fc.groupby("unique_id", sort=False)}
    return fcs, {str(k): m.model_["method"] for k, m in zip(sf.uids, sf.fitted_[:, 0])}, t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zones", type=int, default=100)
    ap.add_argument("--h", type=int, default=14)
    ap.add_argument("--models", default="AZZ")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    import statsforecast
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "include", "python"], cwd=HERE,
                           capture_output=True, text=True).stdout.strip()
    zones = zone_series(a.zones)
    train = {k: y[:-a.h] for k, y in zones.items()}
    test = {k: y[-a.h:] for k, y in zones.items()}
    df = long_frame(train)
    res = {"commit": commit, "library_dirty": bool(dirty), "zones": a.zones, "h": a.h, "threads": a.threads,
           "statsforecast": statsforecast.__version__, "samebits_profile": samebits.profile_version(),
           "machine": os.uname().machine, "load_start": open("/proc/loadavg").read().split()[:3], "models": {}}
    for model in a.models.split(","):
        t0 = time.perf_counter()
        sb = samebits.auto_ets_forecast(df, a.h, season_length=7, model=model, n_jobs=a.threads)
        t_sb = time.perf_counter() - t0
        sb_fc = {k: g.sort_values("step")["AutoETS"].to_numpy() for k, g in sb.groupby("unique_id", sort=False)}
        sb_pick = {k: g["model"].iloc[0] for k, g in sb.groupby("unique_id", sort=False)}
        sf_fc, sf_pick, t_sf = sf_auto_ets(df, a.h, model, a.threads)
        rows = []
        for k in zones:
            rows.append({"series": k, "smape_sb": smape(test[k], sb_fc[k]), "smape_sf": smape(test[k], sf_fc[k]),
                         "pick_sb": sb_pick[k], "pick_sf": sf_pick.get(k, "?")})
        s_sb = np.array([r["smape_sb"] for r in rows])
        s_sf = np.array([r["smape_sf"] for r in rows])
        res["models"][model] = {
            "rows": rows, "samebits_s": t_sb, "sf_s": t_sf,
            "mean_sb": float(s_sb.mean()), "mean_sf": float(s_sf.mean()),
            "median_sb": float(np.median(s_sb)), "median_sf": float(np.median(s_sf)),
            "gap_rel": float(s_sb.mean() / s_sf.mean() - 1.0),
            "sb_better": int((s_sb < s_sf - 1e-12).sum()), "sf_better": int((s_sf < s_sb - 1e-12).sum()),
            "same_pick": int(sum(r["pick_sb"] == r["pick_sf"] for r in rows)),
        }
        m = res["models"][model]
        print("%s: %d zones, mean sMAPE samebits %.3f statsforecast %.3f (%+.2f%%), median %.3f / %.3f, "
              "samebits better on %d, sf on %d, same pick %d; times %.2f s / %.2f s" % (
                  model, len(rows), m["mean_sb"], m["mean_sf"], 100 * m["gap_rel"], m["median_sb"], m["median_sf"],
                  m["sb_better"], m["sf_better"], m["same_pick"], t_sb, t_sf), flush=True)
    res["load_end"] = open("/proc/loadavg").read().split()[:3]
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "auto-ets-zones-%s-%s" % (time.strftime("%Y-%m-%d"), commit[:8]))
    with open(stem + ".json", "w") as f:
        json.dump(res, f, indent=1)
    L = ["# AutoETS over the %d busiest taxi pickup zones beside statsforecast's AutoETS" % a.zones, "",
         "bench/auto_ets_zones.py (its docstring fixes the rule): each zone's daily trips 2018-2020, season 7, "
         "the last %d days held out, sMAPE on them. Commit %s%s; statsforecast %s; profile %s; %s, %d threads "
         "(samebits) and n_jobs=%d (statsforecast); load %s at start, %s at end." % (
             a.h, commit[:12], " (library sources modified)" if dirty else "", statsforecast.__version__,
             res["samebits_profile"], res["machine"], a.threads, a.threads, " ".join(res["load_start"]),
             " ".join(res["load_end"])), ""]
    for model, m in res["models"].items():
        L += ["## AutoETS(\"%s\")" % model, "",
              "| | samebits | statsforecast |", "|---|---|---|",
              "| mean sMAPE | %.3f | %.3f |" % (m["mean_sb"], m["mean_sf"]),
              "| median sMAPE | %.3f | %.3f |" % (m["median_sb"], m["median_sf"]),
              "| series with the lower sMAPE | %d | %d |" % (m["sb_better"], m["sf_better"]),
              "| fit and forecast time (s) | %.2f | %.2f |" % (m["samebits_s"], m["sf_s"]), "",
              "Mean sMAPE gap: %+.2f%% (samebits against statsforecast; issue 28's bound is 2%%). The same "
              "model picked on %d of %d series." % (100 * m["gap_rel"], m["same_pick"], len(m["rows"])), "",
              "| zone | samebits pick | sMAPE | statsforecast pick | sMAPE |", "|---|---|---|---|---|"]
        L += ["| %s | %s | %.2f | %s | %.2f |" % (r["series"], r["pick_sb"], r["smape_sb"], r["pick_sf"],
                                                 r["smape_sf"]) for r in m["rows"]]
        L += [""]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote", stem + ".md")


if __name__ == "__main__":
    main()
