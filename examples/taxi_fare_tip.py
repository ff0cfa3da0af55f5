#!/usr/bin/env python3
"""NYC taxi fare and tip regression with a time split: train on 2018-2019, test on 2020.

    make -j2 && python3 examples/taxi_fare_tip.py [--data DIR] [--trees 100] [--parquet]

Input: the monthly samples yellow_tripdata_sample_YYYY-MM.csv.gz (or .parquet
files of the same columns, read through samebits.read_parquet, which needs
pyarrow). With --parquet the CSV samples are first written as Parquet in a
temporary folder (pyarrow) and read back from there, to show that path.

Features (nothing derived from the amounts paid): pickup year, month, day of
week, minute of day, trip duration (s), distance, passengers, vendor, rate
code, pickup and dropoff zones, payment type. Targets: fare_amount (rows with
a fare in (0, 1000); the samples hold data errors such as a 429,490 $ fare),
and tip_amount on card payments (payment_type 1: cash tips are not recorded),
tips in [0, 500). The test year 2020 is shifted (the pandemic); every model's
error rises there, which is the point of a time split.
"""
import argparse
import csv
import datetime
import glob
import gzip
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpy as np  # noqa: E402
import samebits  # noqa: E402

DEFAULT = "/work/shared/data/nyc-taxi"
NAMES = ["year", "month", "dayofweek", "minute_of_day", "duration_s", "trip_distance", "passenger_count",
         "vendor_id", "rate_code_id", "pickup_location_id", "dropoff_location_id", "payment_type"]


def _num(v):
    return float(v) if v not in ("", None) else math.nan


def rows_from_csv(path):
    with gzip.open(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            pu = datetime.datetime.strptime(r["pickup_datetime"], "%Y-%m-%d %H:%M:%S")
            do = datetime.datetime.strptime(r["dropoff_datetime"], "%Y-%m-%d %H:%M:%S")
            yield ([pu.year, pu.month, pu.weekday(), pu.hour * 60 + pu.minute, (do - pu).total_seconds(),
                    _num(r["trip_distance"]), _num(r["passenger_count"]), _num(r["vendor_id"]),
                    _num(r["rate_code_id"]), _num(r["pickup_location_id"]), _num(r["dropoff_location_id"]),
                    _num(r["payment_type"])], _num(r["fare_amount"]), _num(r["tip_amount"]))


def load_csv(files):
    X, fare, tip = [], [], []
    for path in files:
        for x, fa, ti in rows_from_csv(path):
            X.append(x)
            fare.append(fa)
            tip.append(ti)
    return np.asarray(X, dtype=np.float64), np.asarray(fare), np.asarray(tip)


def to_parquet(files, folder):
    """The CSV samples as Parquet files (pyarrow), timestamps as timestamps."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq
    out = []
    for path in files:
        t = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
            column_types={"pickup_datetime": pa.timestamp("s"), "dropoff_datetime": pa.timestamp("s")}))
        dst = os.path.join(folder, os.path.basename(path).replace(".csv.gz", ".parquet"))
        pq.write_table(t, dst)
        out.append(dst)
    return out


PARQUET_COLUMNS = ["pickup_datetime", "dropoff_datetime", "trip_distance", "passenger_count", "vendor_id",
                   "rate_code_id", "pickup_location_id", "dropoff_location_id", "payment_type", "fare_amount",
                   "tip_amount"]


def load_parquet(files):
    X, fare, tip = [], [], []
    for path in files:
        c = samebits.parquet.read_parquet_columns(path, PARQUET_COLUMNS)
        pu = c["pickup_datetime"].astype("datetime64[s]")
        years = pu.astype("datetime64[Y]").astype(int) + 1970
        months = pu.astype("datetime64[M]").astype(int) % 12 + 1
        days = pu.astype("datetime64[D]").astype(int)
        dow = (days + 3) % 7                                    # 1970-01-01 was a Thursday (3, Monday = 0)
        minute = (c["pickup_datetime"] - days * 86400.0) // 60
        X.append(np.column_stack([years, months, dow, minute, c["dropoff_datetime"] - c["pickup_datetime"],
                                  c["trip_distance"], c["passenger_count"], c["vendor_id"], c["rate_code_id"],
                                  c["pickup_location_id"], c["dropoff_location_id"], c["payment_type"]]))
        fare.append(c["fare_amount"])
        tip.append(c["tip_amount"])
    return np.vstack(X), np.concatenate(fare), np.concatenate(tip)


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a, dtype=np.float64) - b) ** 2)))


def fit_eval(name, X, y, train, test, args):
    model = samebits.GradientBoostingRegressor(n_estimators=args.trees, num_leaves=63, learning_rate=0.1,
                                               reg_lambda=1.0)
    Xf = X.astype(np.float32)
    model.fit(Xf[train], y[train].astype(np.float32))
    pred = np.asarray(model.predict(Xf[test]))
    base = float(np.mean(y[train]))
    print("%-5s train %7d rows (2018-2019), test %7d rows (2020): RMSE %.3f (predicting the training mean: %.3f); "
          "model digest %s" % (name, train.sum(), test.sum(), rmse(pred, y[test]), rmse(np.full(test.sum(), base),
                                                                                       y[test]), model.digest()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--parquet", action="store_true", help="go through Parquet files (needs pyarrow)")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.data, "yellow_tripdata_sample_*.parquet")))
    if files:
        X, fare, tip = load_parquet(files)
    else:
        files = sorted(glob.glob(os.path.join(args.data, "yellow_tripdata_sample_*.csv.gz")))
        if not files:
            sys.exit("no yellow_tripdata_sample_*.csv.gz or .parquet files in " + args.data)
        if args.parquet:
            with tempfile.TemporaryDirectory() as d:
                X, fare, tip = load_parquet(to_parquet(files, d))
        else:
            X, fare, tip = load_csv(files)
    year = X[:, 0]
    train_years, test_years = year <= 2019, year == 2020
    ok = (fare > 0) & (fare < 1000)
    fit_eval("fare", X, fare, train_years & ok, test_years & ok, args)
    card = (X[:, 11] == 1) & (tip >= 0) & (tip < 500)
    fit_eval("tip", X, tip, train_years & card, test_years & card, args)


if __name__ == "__main__":
    main()
