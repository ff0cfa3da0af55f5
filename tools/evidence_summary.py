#!/usr/bin/env python3
"""evidence_summary.py FOLDER...: write FOLDER/summary.json for a CUDA run of
tools/device-run.sh, read from the folder's own summary.txt (never from
anything else, and never inventing a result the run did not print).

What it reads (the lines device-run.sh writes):
  date_utc:, commit:, gpu:, nvcc:, gcc:, nvcc flags (profile):
  leg cuda (profile flags) vs cpu:   identical | differs ...   -> leg cuda, profile-core
  leg cpu host doctor, N threads:    self-check: passed|FAILED  followed by
        NAME  identical (K stages) | DIFFERS ...                -> leg x86_64, each NAME
  arm NAME vs cpu:                   differs: differ at stage I: TAG (...)
  result: PASS | FAIL

The format of summary.json is in evidence/README.md. Python 3 stdlib only.

That recording script is in git history; tools/device-h200.sh and
tools/evidence_device_summary.py record the GPU legs now.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evidence_layout  # noqa: E402


def field(lines, key):
    for ln in lines:
        if ln.startswith(key + ":"):
            return ln[len(key) + 1:].strip()
    return None


def summarize_cuda(folder):
    path = os.path.join(folder, "summary.txt")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    date = field(lines, "date_utc")
    commit = field(lines, "commit")
    gpu = field(lines, "gpu") or "unknown GPU"
    nvcc = field(lines, "nvcc") or "unknown nvcc"
    gcc = field(lines, "gcc") or "unknown gcc"
    flags = field(lines, "nvcc flags (profile)") or ""
    if not date or not commit:
        raise SystemExit(f"{path}: no date_utc or commit line")
    legs = []
    cuda = {}
    for ln in lines:
        m = re.match(r"leg cuda \(profile flags\) vs cpu:\s+(\S+)", ln)
        if m:
            cuda["profile-core"] = "pass" if m.group(1) == "identical" else "fail"
    if cuda:
        legs.append({"leg": "cuda", "label": "CUDA, " + gpu.split(",")[0], "device": gpu,
                     "emulated": False, "toolchain": f"nvcc {nvcc}; host {gcc}", "flags": flags,
                     "compared_with": "the CPU card of the same run", "fixtures": cuda})
    # The host CPU's doctor: one block per thread count; a fixture passes only
    # if every block says identical.
    host, threads, in_doctor = {}, [], False
    for ln in lines:
        m = re.match(r"leg cpu host doctor, (\d+) threads?:\s+(.*)", ln)
        if m:
            threads.append(int(m.group(1)))
            in_doctor = True
            continue
        m = re.match(r"\s+(\S+)\s+(identical|DIFFERS|ERROR|REFUSED)\b", ln) if in_doctor else None
        if m:
            name, verdict = m.group(1), m.group(2)
            ok = verdict == "identical"
            host[name] = "pass" if ok and host.get(name, "pass") == "pass" else (
                "refused" if verdict == "REFUSED" else "fail")
            continue
        in_doctor = False
    if host:
        legs.append({"leg": "x86_64", "label": "x86-64 (the GPU host)", "device": field(lines, "cpu") or "",
                     "emulated": False, "toolchain": gcc, "flags": "the Makefile's profile flags",
                     "threads": sorted(set(threads)), "compared_with": "the reference cards",
                     "fixtures": host})
    arms = []
    for ln in lines:
        m = re.match(r"arm (.+?) vs cpu:\s+(identical|differs)(?:: differ at stage \d+: (\S+))?", ln)
        if m:
            arms.append({"arm": m.group(1), "caught": m.group(2) == "differs", "stage": m.group(3)})
    result = field(lines, "result")
    return {"samebits_evidence": 1, "date": date[:10], "date_utc": date, "commit": commit,
            "machine": field(lines, "uname") or "", "source": "summary.txt",
            "result": (result or "unknown").lower(), "legs": legs, "arms": arms}


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main(argv):
    if not argv:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    for folder in argv:
        s = summarize_cuda(folder)
        write_json(os.path.join(folder, "summary.json"), s)
        evidence_layout.warn_name(folder, s)
        print(f"{folder}/summary.json: " + ", ".join(
            f"{lg['leg']} {sum(v == 'pass' for v in lg['fixtures'].values())}/{len(lg['fixtures'])} pass"
            for lg in s["legs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
