#!/usr/bin/env python3
"""summary.json for a folder recorded by tools/device-h200.sh (every GPU leg of
the device layer in one run), derived from the folder's own files only:

    python3 tools/evidence_device_summary.py evidence/cuda/<date>-h200-all-<commit7>

Legs: cuda (verify-cuda.txt), opencl-nvidia (verify-opencl.txt: NVIDIA's OpenCL
driver, a leg apart from PoCL's), and x86_64 on the GPU host (verify-cpu-1.txt and
verify-cpu-16.txt, both must agree). Arms: every fixture line of each
verify-cuda-arm-*.txt and verify-opencl-arm-*.txt (caught: the fixture DIFFERS,
with the first stage). The result is pass only when summary.txt says so.
"""
import json
import os
import re
import sys

LINE = re.compile(r"^  (\S+)\s+(identical|DIFFERS|REFUSED|ERROR)\b(.*)$", re.M)


def fixtures_of(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for name, word, _ in LINE.findall(f.read()):
            out[name] = {"identical": "pass", "DIFFERS": "fail", "REFUSED": "refused", "ERROR": "fail"}[word]
    return out


def arms_of(path, label):
    arms = []
    with open(path, encoding="utf-8") as f:
        for name, word, rest in LINE.findall(f.read()):
            m = re.search(r"differ at stage \d+: (\S+)", rest)
            arms.append({"arm": label, "caught": word == "DIFFERS", "fixture": name,
                         "stage": m.group(1) if m else None})
    return arms


def summarize(folder):
    """The summary.json a folder's own files give (a dict)."""
    facts = open(os.path.join(folder, "facts.txt"), encoding="utf-8").read()
    summary = open(os.path.join(folder, "summary.txt"), encoding="utf-8").read()
    get = lambda k: (re.search(r"^" + k + r": (.*)$", facts, re.M) or [None, "unknown"])[1]
    gpu = re.search(r"^(NVIDIA [^,]+), ([\d.]+), ([\d.]+),", facts, re.M)
    nvcc = re.search(r"^Cuda compilation tools, (.*)$", facts, re.M)
    gcc = re.search(r"^(gcc .*)$", facts, re.M)
    flags = get("nvcc flags \\(profile\\)")
    device = f"{gpu.group(1)}, compute capability {gpu.group(3)}, driver {gpu.group(2)}" if gpu else "unknown"
    host = (gcc.group(1) if gcc else "gcc")
    cpu1, cpu16 = fixtures_of(os.path.join(folder, "verify-cpu-1.txt")), fixtures_of(os.path.join(folder, "verify-cpu-16.txt"))
    cpu = {n: ("pass" if v == "pass" and cpu16.get(n) == "pass" else "fail") for n, v in cpu1.items()}
    legs = [
        {"leg": "cuda", "label": f"CUDA, {gpu.group(1) if gpu else 'GPU'}", "device": device, "emulated": False,
         "toolchain": f"{nvcc.group(1) if nvcc else 'nvcc'}; host {host}", "flags": flags,
         "compared_with": "the reference cards", "fixtures": fixtures_of(os.path.join(folder, "verify-cuda.txt"))},
        {"leg": "opencl-nvidia", "label": f"OpenCL, {gpu.group(1) if gpu else 'GPU'} (NVIDIA driver)",
         "device": device, "emulated": False, "toolchain": f"the NVIDIA driver's OpenCL compiler; host {host}",
         "flags": "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt", "compared_with": "the reference cards",
         "fixtures": fixtures_of(os.path.join(folder, "verify-opencl.txt"))},
        {"leg": "x86_64", "label": "x86-64 (the GPU host)", "device": get("cpu"), "emulated": False,
         "toolchain": host, "flags": "the Makefile's profile flags", "threads": [1, 16],
         "compared_with": "the reference cards", "fixtures": cpu},
    ]
    arms = []
    for name in sorted(os.listdir(folder)):
        m = re.match(r"verify-(cuda|opencl)-arm-(.+)\.txt$", name)
        if m:
            arms += arms_of(os.path.join(folder, name), f"{m.group(1)} {m.group(2)}")
    controls = [{"control": f"opencl {m.group(1)}", "holds": bool(m.group(2) == "holds"),
                 "note": "must change no bit: the FP_CONTRACT OFF pragma decides (docs/verification.md)"}
                for m in re.finditer(r"^opencl control (\S+): (holds|BROKEN)", summary, re.M)]
    date_utc = get("date_utc")
    out = {"samebits_evidence": 1, "date": date_utc[:10], "date_utc": date_utc, "commit": get("commit"),
           "machine": get("uname"), "source": "summary.txt, facts.txt, verify-*.txt",
           "result": "pass" if re.search(r"^result: pass$", summary, re.M) else "fail", "legs": legs, "arms": arms}
    if controls:
        out["controls"] = controls
    return out


def main():
    folder = sys.argv[1]
    out = summarize(folder)
    legs = out["legs"]
    with open(os.path.join(folder, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"{folder}: {out['result']}; " + "; ".join(
        f"{l['leg']} {sum(v == 'pass' for v in l['fixtures'].values())}/{len(l['fixtures'])}" for l in legs))


if __name__ == "__main__":
    main()
