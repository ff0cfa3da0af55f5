"""Markdown tables from the JSON records of bench/gemm_bench.py and bench/gemm_accuracy.py.

    python3 bench/gemm_report.py speed RECORD.json [RECORD.json ...] > bench/results/gemm-gpu-DATE-COMMIT.md
    python3 bench/gemm_report.py accuracy RECORD.json > bench/results/gemm-accuracy-DATE-COMMIT.md

The tables only rearrange what the records hold (commit, machine, shapes,
median times, throughput, digests); nothing is computed beyond ratios.
"""
import json
import sys


def shape_key(r):
    return (r["m"], r["n"], r["k"])


def fmt_shape(s):
    m, n, k = s
    return "%d x %d x %d" % (m, n, k) if not (m == n == k) else "%d^3" % m


def speed(paths):
    out = []
    for p in paths:
        rec = json.load(open(p))
        out.append("## %s\n" % p.split("/")[-1])
        out.append("- Commit `%s`, %s, %s cores; recorded %s; %d timed products a shape (median)."
                   % (rec.get("commit", "?")[:7], rec.get("machine", "?"), rec.get("cores"), rec.get("date_utc"),
                      rec.get("reps", 0)))
        out.append("- Identical across the samebits devices of this run (C's SHA-256 per shape): **%s**.\n"
                   % ("yes" if rec.get("identical_across_devices") else "NO"))
        peers = sorted({r["peer"] for r in rec["peers"] if "peer" in r and "error" not in r})
        devs = []
        for r in rec["samebits"]:
            d = r.get("device")
            if d not in devs:
                devs.append(d)
        head = ["shape"] + ["samebits %s TFLOP/s" % d for d in devs] + ["%s TFLOP/s" % p for p in peers]
        head += ["samebits %s / %s" % (devs[0], peers[0])] if devs and peers else []
        head += ["C sha256 (first 12)"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + " --- |" * len(head))
        shapes = []
        for r in rec["samebits"] + rec["peers"]:
            if "m" in r and shape_key(r) not in shapes:
                shapes.append(shape_key(r))
        for s in shapes:
            row = [fmt_shape(s)]
            first = None
            digest = ""
            for d in devs:
                r = next((x for x in rec["samebits"] if x.get("device") == d and "m" in x and shape_key(x) == s),
                         None)
                if r is None:
                    row.append("-")
                elif "error" in r:
                    row.append("error: " + r["error"][:60])
                else:
                    row.append("%.3g (%s)" % (r["tflops"], r.get("path", "")))
                    first = r["tflops"] if first is None else first
                    digest = r["c_sha256"][:12]
            ptf = None
            for p in peers:
                r = next((x for x in rec["peers"] if x.get("peer") == p and shape_key(x) == s), None)
                row.append("%.3g" % r["tflops"] if r else "-")
                if ptf is None and r:
                    ptf = r["tflops"]
            if devs and peers:
                row.append("%.2f" % (first / ptf) if first and ptf else "-")
            row.append("`%s`" % digest if digest else "-")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return "\n".join(out)


def accuracy(path):
    rec = json.load(open(path))
    out = ["- Commit `%s`, NumPy %s, seed %s, recorded %s." % (rec.get("commit", "?")[:7], rec.get("numpy"),
                                                              rec.get("seed"), rec.get("date_utc")),
           "- Relative error |c - ref| / |ref| over the elements with ref != 0, ref the float64 product of the "
           "same float32 inputs; samebits on device cpu (every device gives its bits).",
           "- Every case no worse than NumPy at the median and the maximum: **%s**.\n"
           % ("yes" if rec.get("all_no_worse") else "NO"),
           "| case | m x n x k | samebits median | samebits max | NumPy float32 median | NumPy float32 max | no worse |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rec["rows"]:
        m, n, k = r["shape"]
        out.append("| %s | %d x %d x %d | %.3g | %.3g | %.3g | %.3g | %s |"
                   % (r["case"], m, n, k, r["samebits_median"], r["samebits_max"], r["numpy_median"],
                      r["numpy_max"], "yes" if r["no_worse"] else "**no**"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("speed", "accuracy"):
        sys.exit(__doc__)
    print(speed(sys.argv[2:]) if sys.argv[1] == "speed" else accuracy(sys.argv[2]))
