#!/usr/bin/env python3
"""Writes summary.json (evidence/README.md) for a tools/device-forest.sh folder,
read from its own files (facts.txt, verify-cuda-*.txt, verify-cuda-family.txt,
verify-cuda-float-atomic.txt, verify-opencl*.txt when present); it changes none.

    python3 tools/evidence_forest_summary.py evidence/cuda/<date>-<gpu>-forest-<commit7>

Legs: "cuda": a fixture passes when every CUDA verify of it in the folder says
identical (the named-fixture runs, run to run, and the whole family's run), is
"refused" when the family run refused it by name, "fail" otherwise; "opencl"
(the NVIDIA driver's OpenCL) the same from verify-opencl*.txt when the folder
has one. Arms: the float-atomic CUDA build (verify-cuda-float-atomic.txt) and
the OpenCL arms (verify-opencl-arm-NAME.txt), caught when a fixture differs.

That recording script is in git history; tools/device-h200.sh and
tools/evidence_device_summary.py record the GPU legs now.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evidence_layout  # noqa: E402
from evidence_gbdt_summary import read_facts  # noqa: E402

LINE = re.compile(r"^  (forest-\S+)\s+(identical|DIFFERS|REFUSED|ERROR)(.*)$")


def verdicts(path):
    out = {}
    for line in open(path).read().splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3).strip())
    return out


def leg_fixtures(paths):
    """fixture -> the worst verdict over the files: fail, then refused, then pass."""
    rank = {"pass": 0, "refused": 1, "fail": 2}
    res = {}
    for p in paths:
        for name, (word, _) in verdicts(p).items():
            v = {"identical": "pass", "REFUSED": "refused"}.get(word, "fail")
            if rank[v] >= rank.get(res.get(name, "pass"), 0):
                res[name] = v
    return res


def summarize(folder):
    """The summary.json object of a device-forest folder."""
    f, gpu, nvcc, gcc = read_facts(folder)
    cuda = leg_fixtures(sorted(glob.glob(os.path.join(folder, "verify-cuda-[0-9]*.txt")))
                        + [os.path.join(folder, "verify-cuda-family.txt")])
    arms = []
    arm_path = os.path.join(folder, "verify-cuda-float-atomic.txt")
    if os.path.exists(arm_path):
        for name, (word, rest) in verdicts(arm_path).items():
            st = re.search(r"stage \d+: (\S+)", rest)
            arms.append({"arm": "cuda float-atomic", "fixture": name, "caught": word == "DIFFERS",
                         "stage": st.group(1) if st else None})
    legs = [{"leg": "cuda", "label": "CUDA, " + gpu[0],
             "device": "%s, compute capability %s, driver %s" % (gpu[0], gpu[2] if len(gpu) > 2 else "?",
                                                                 gpu[1] if len(gpu) > 1 else "?"),
             "emulated": False, "toolchain": "%s; host %s" % (nvcc, gcc),
             "flags": f.get("nvcc flags (profile)", ""), "compared_with": "the reference cards",
             "fixtures": cuda}]
    ocl_paths = [q for q in sorted(glob.glob(os.path.join(folder, "verify-opencl*.txt"))) if "-arm-" not in q]
    for q in sorted(glob.glob(os.path.join(folder, "verify-opencl-arm-*.txt"))):
        arm = os.path.basename(q)[len("verify-opencl-arm-"):-len(".txt")]
        for name, (word, rest) in verdicts(q).items():
            st = re.search(r"stage \d+: (\S+)", rest)
            arms.append({"arm": "opencl " + arm, "fixture": name, "caught": word == "DIFFERS",
                         "stage": st.group(1) if st else None})
    if ocl_paths:
        legs.append({"leg": "opencl-nvidia", "label": "OpenCL, " + gpu[0] + " (NVIDIA driver)",
                     "device": "%s, driver %s" % (gpu[0], gpu[1] if len(gpu) > 1 else "?"), "emulated": False,
                     "toolchain": "the NVIDIA driver's OpenCL compiler; host " + gcc,
                     "flags": "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt",
                     "compared_with": "the reference cards", "fixtures": leg_fixtures(ocl_paths)})
    ok = all(v != "fail" for l in legs for v in l["fixtures"].values()) and any(
        v == "pass" for v in cuda.values())
    return {
        "samebits_evidence": 1,
        "date": f.get("date_utc", "")[:10],
        "date_utc": f.get("date_utc", ""),
        "commit": f.get("commit", ""),
        "machine": f.get("uname", ""),
        "source": "facts.txt, verify-*.txt",
        "result": "pass" if ok else "fail",
        "legs": legs,
        "arms": arms,
    }


def main(folder):
    out = summarize(folder)
    with open(os.path.join(folder, "summary.json"), "w") as fh:
        json.dump(out, fh, indent=2, sort_keys=True)
        fh.write("\n")
    evidence_layout.warn_name(folder, out)


if __name__ == "__main__":
    main(sys.argv[1])
