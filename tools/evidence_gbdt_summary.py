#!/usr/bin/env python3
"""Writes summary.json (evidence/README.md) for a tools/device-gbdt.sh folder,
read from its own summary.txt and facts.txt; it changes neither.

    python3 tools/evidence_gbdt_summary.py evidence/cuda/<date>-<gpu>-gbdt-<commit7>

Legs: "cuda" (each `cuda FIXTURE: ...` line) and "x86_64" (the GPU host's CPU,
`cpu t=N FIXTURE: ...` lines); a fixture passes on a leg only when every line
of it there says identical. Arms: one entry per (arm, fixture) line; caught
when the card differs, with the first differing stage.

That recording script is in git history; tools/device-h200.sh and
tools/evidence_device_summary.py record the GPU legs now.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evidence_layout  # noqa: E402


def read_facts(folder):
    """(key: value pairs, GPU fields [name, driver, compute capability, ...], nvcc line,
    gcc line) from a device folder's facts.txt (tools/device-{gbdt,forest}.sh write it)."""
    facts = open(os.path.join(folder, "facts.txt")).read().splitlines()
    f = {}
    for line in facts:
        if ": " in line:
            k, v = line.split(": ", 1)
            f.setdefault(k, v)
    gpu = next((l for l in facts if l.startswith("NVIDIA")), "unknown GPU").split(", ")
    nvcc = next((l for l in facts if l.startswith("Cuda compilation tools")), "nvcc ?")
    gcc = next((l for l in facts if l.startswith("gcc ")), "gcc ?")
    return f, gpu, nvcc, gcc


def summarize(folder, commit=None, note=None):
    """The summary.json object of a device-gbdt folder (commit: a corrected commit)."""
    summ = open(os.path.join(folder, "summary.txt")).read().splitlines()
    f, gpu, nvcc, gcc = read_facts(folder)
    cuda, cpu, ocl, arms, threads = {}, {}, {}, [], set()
    for line in summ:
        m = re.match(r"cuda (gbdt-\S+): (.*)$", line)
        if m:
            ok = m.group(2).startswith("identical")
            cuda[m.group(1)] = "pass" if ok and cuda.get(m.group(1), "pass") == "pass" else "fail"
            continue
        m = re.match(r"cuda rerun \d+ (gbdt-\S+): (.*)$", line)
        if m and not m.group(2).startswith("identical"):
            cuda[m.group(1)] = "fail"
            continue
        m = re.match(r"cpu +t=(\d+) (gbdt-\S+): (.*)$", line)
        if m:
            threads.add(int(m.group(1)))
            ok = m.group(3).startswith("identical")
            cpu[m.group(2)] = "pass" if ok and cpu.get(m.group(2), "pass") == "pass" else "fail"
            continue
        m = re.match(r"opencl (gbdt-\S+)\s+(identical|DIFFERS|REFUSED|ERROR)", line)
        if m:
            ocl[m.group(1)] = "pass" if m.group(2) == "identical" else "fail"
            continue
        m = re.match(r"opencl arm (\S+): verify: (PASS|FAIL); first: (.*)$", line)
        if m:
            st = re.search(r"stage \d+: (\S+)", m.group(3))
            fx = re.match(r"(\S+) DIFFERS", m.group(3))
            arms.append({"arm": "opencl " + m.group(1), "fixture": fx.group(1) if fx else None,
                         "caught": m.group(2) == "FAIL", "stage": st.group(1) if st else None})
            continue
        m = re.match(r"arm (\S+) (gbdt-\S+): (.*)$", line)
        if m:
            caught = not m.group(3).startswith("identical")
            st = re.search(r"stage \d+: (\S+)", m.group(3))
            arms.append({"arm": "cuda " + m.group(1), "fixture": m.group(2), "caught": caught,
                         "stage": st.group(1) if st else None})
    result = "pass" if cuda and all(v == "pass" for v in list(cuda.values()) + list(cpu.values())) else "fail"
    out = {
        "samebits_evidence": 1,
        "date": f.get("date_utc", "")[:10],
        "date_utc": f.get("date_utc", ""),
        "commit": commit or f.get("commit", ""),
        "machine": f.get("uname", ""),
        "source": "summary.txt, facts.txt",
        "result": result,
        "legs": [
            {"leg": "cuda", "label": "CUDA, " + gpu[0],
             "device": "%s, compute capability %s, driver %s" % (gpu[0], gpu[2] if len(gpu) > 2 else "?",
                                                                 gpu[1] if len(gpu) > 1 else "?"),
             "emulated": False, "toolchain": "%s; host %s" % (nvcc, gcc),
             "flags": f.get("nvcc flags (profile)", ""), "compared_with": "the reference cards",
             "fixtures": cuda},
            {"leg": "x86_64", "label": "x86-64 (the GPU host)", "device": f.get("cpu", ""), "emulated": False,
             "toolchain": gcc, "flags": "the Makefile's profile flags", "threads": sorted(threads),
             "compared_with": "the reference cards", "fixtures": cpu},
        ],
        "arms": arms,
    }
    if ocl:  # OpenCL through the NVIDIA driver on the same GPU (tools/device-gbdt.sh step 3b)
        out["legs"].append({"leg": "opencl-nvidia", "label": "OpenCL, " + gpu[0] + " (NVIDIA driver)",
                            "device": "%s, driver %s" % (gpu[0], gpu[1] if len(gpu) > 1 else "?"),
                            "emulated": False, "toolchain": "the NVIDIA driver's OpenCL compiler; host " + gcc,
                            "flags": "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt",
                            "compared_with": "the reference cards", "fixtures": ocl})
        if any(v != "pass" for v in ocl.values()):
            out["result"] = "fail"
    if note:
        out["commit_note"] = note
    return out


def is_gbdt_folder(folder):
    """Whether a folder was written by tools/device-gbdt.sh (its summary ends the
    fixtures with a "fixtures result:" line)."""
    try:
        with open(os.path.join(folder, "summary.txt")) as fh:
            return os.path.exists(os.path.join(folder, "facts.txt")) and any(
                l.startswith("fixtures result:") for l in fh)
    except OSError:
        return False


def main(folder, commit=None, note=None):
    out = summarize(folder, commit, note)
    with open(os.path.join(folder, "summary.json"), "w") as fh:
        json.dump(out, fh, indent=2, sort_keys=True)
        fh.write("\n")
    evidence_layout.warn_name(folder, out)


if __name__ == "__main__":
    # --commit SHA NOTE: a corrected commit (the folder's CORRECTION.md says why)
    if len(sys.argv) == 5 and sys.argv[2] == "--commit":
        main(sys.argv[1], sys.argv[3], sys.argv[4])
    else:
        main(sys.argv[1])
