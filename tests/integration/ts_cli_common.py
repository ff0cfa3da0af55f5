"""What the time series CLI tests (test_cli_ets.py, test_cli_arima.py) share:
the long-format CSV writer and the checks every batch family gets (a model
file read back forecasts as the one-shot fit, one model file at any thread
count and on every leg, a hostile file refused by name)."""
from conftest import run_bin, samebits


def stamp(t):
    """Day t of the series as an ISO date (28-day months from 2020-01-01)."""
    return "2020-%02d-%02d" % (1 + t // 28, 1 + t % 28)


def write_long_csv(path, rows, shuffle=True):
    """rows (unique_id, ds, y) as a long-format CSV, reversed when shuffle;
    returns rows as given."""
    out = rows[::-1] if shuffle else rows
    path.write_text("unique_id,ds,y\n" + "".join("%s,%s,%r\n" % r for r in out))
    return rows


def arima_long_csv(path, shuffle=True):
    """Three AR(1) series of 60, 69 and 78 days around 100, 40 and 70 (the
    ARIMA CLI and device tests' data) written by write_long_csv; returns its rows."""
    rows = []
    for k, (base, phi) in enumerate(((100.0, 0.5), (40.0, -0.3), (70.0, 0.8))):
        v = 0.0
        for t in range(60 + 9 * k):
            e = ((t * 7919 + k * 104729) % 97) / 16.0 - 3.0
            v = phi * v + e
            rows.append(("s%d" % k, stamp(t), base + v))
    return write_long_csv(path, rows, shuffle)


def train_then_forecast(tmp_path, data, family, params, forecast_args, one_shot_args):
    """Train family on data into a model file (its digest as `samebits digest`
    says), then forecast from the file and from the CSV in one shot; returns
    both outputs' lines."""
    model = tmp_path / "s.sbm"
    r = samebits("train", "--model", family, "--data", str(data), "--out", str(model), *params)
    assert r.returncode == 0, r.stderr
    assert "%s fitted 3 series; model digest: " % family in r.stderr
    digest = r.stderr.strip().splitlines()[0].rsplit(" ", 1)[1]
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == digest
    a = samebits("forecast", "--model", str(model), *forecast_args)
    b = samebits("forecast", "--data", str(data), *forecast_args, *one_shot_args, *params)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    return a.stdout.splitlines(), b.stdout.splitlines()


def model_files_at_threads(tmp_path, data, family, params, threads=("1", "2", "3")):
    """The distinct model files trained at each thread count."""
    files = set()
    for t in threads:
        out = tmp_path / ("m%s.sbm" % t)
        r = samebits("train", "--model", family, "--data", str(data), "--out", str(out), "--threads", t, *params)
        assert r.returncode == 0, r.stderr
        files.add(out.read_bytes())
    return files


def assert_leg_model_bytes(leg, tmp_path, data, family, params):
    """The model file of leg's samebits at 3 threads is the native one-thread
    file, byte for byte."""
    ref, out = tmp_path / "ref.sbm", tmp_path / ("%s.sbm" % leg)
    r = samebits("train", "--model", family, "--data", str(data), "--out", str(ref), "--threads", "1", *params)
    assert r.returncode == 0, r.stderr
    r = run_bin(leg, "samebits", ["train", "--model", family, "--data", str(data), "--out", str(out), "--threads",
                                  "3", *params])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == ref.read_bytes()


def assert_refused(tmp_path, text, args, words):
    """A forecast of the CSV text with args exits 2 naming words."""
    data = tmp_path / "bad.csv"
    data.write_text(text)
    r = samebits("forecast", "--data", str(data), "--h", "2", *args)
    assert r.returncode == 2 and words in r.stderr, r.stderr
