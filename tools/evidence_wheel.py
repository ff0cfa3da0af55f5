#!/usr/bin/env python3
"""evidence_wheel.py: record the installed wheels as their own artifact class
(issue 32): for each wheel of DIST, tools/wheel-check.sh installs it into a
fresh virtual environment and runs its console script; this script keeps those
outputs as evidence/wheel/<date>-<arch>-all-<commit7>/ with a summary.json that
tools/support_matrix.py reads into the columns "x86-64 (installed wheel)" and
"aarch64 (installed wheel)", and sources.sha256 naming what the wheel was built
from (the library's sources and the packaging: setup.py, pyproject.toml,
python/samebits, the wheel tools), so a change to any of them makes the cells
stale. Needs a clean tree (the commit must say what ran).

    make wheels && python3 tools/evidence_wheel.py [--dist dist]
    python3 tools/evidence_wheel.py --device-run DIR --commit SHA --wheel NAME.whl

--device-run imports the same checks made on a GPU machine (the device tool's
$OUT: version.txt, doctor.txt, gpu.txt, verify-cuda.txt, verify-opencl.txt,
verify-cpu-t16.txt from the x86-64 wheel installed in a fresh venv there, as
tools/device-h200-wheel.sh writes them into wheel.tar.gz) as
evidence/wheel/<date>-h200-all-<commit7>/, with the legs wheel-cuda and
wheel-opencl-nvidia (the columns "CUDA (installed wheel)" and "OpenCL NVIDIA
(installed wheel)"); SHA is the commit the wheel was built at (its
_build_facts.json), whose sources must be the tree's.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import evidence_cpu  # noqa: E402  (the CPU legs' source list)
import evidence_layout  # noqa: E402

PACKAGING = ["setup.py", "pyproject.toml", "MANIFEST.in", "tools/build-wheel.sh", "tools/wheel-check.sh",
             "tools/isa_gate.py", "tools/isa-dispatch.txt", "tools/qemu-python.sh", "mk/packaging.mk",
             "tools/device-h200-wheel.sh"]
LINE = re.compile(r"^  (\S+)\s+(identical|DIFFERS|REFUSED|ERROR)\b")


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True).stdout.strip()


def source_list():
    files = []
    for p in evidence_cpu.CPU_SOURCES + PACKAGING + ["python/samebits"]:
        full = os.path.join(ROOT, p)
        if os.path.isdir(full):
            files += sorted(os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(full) for f in fs
                            if not f.endswith((".pyc",)) and "__pycache__" not in d)
        elif os.path.isfile(full):
            files.append(p)
    tracked = set(git("ls-files").splitlines())
    return [f for f in files if f in tracked]


def fixtures_of(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line)
        if m:
            out[m.group(1)] = {"identical": "pass", "DIFFERS": "fail", "REFUSED": "refused"}.get(m.group(2), "error")
    return out


def write_folder(d, dest, summary, pattern):
    """Copy the outputs in d to dest with summary.json and sources.sha256;
    earlier folders matching pattern (evidence/wheel/<pattern>) are superseded
    and removed (git history keeps them)."""
    for old in glob.glob(os.path.join(ROOT, "evidence", "wheel", pattern)):
        if os.path.abspath(old) != os.path.abspath(dest):
            subprocess.run(["git", "-C", ROOT, "rm", "-rq", old], check=False)
            shutil.rmtree(old, ignore_errors=True)
            print(f"{os.path.relpath(old, ROOT)}: superseded by {os.path.relpath(dest, ROOT)}, removed")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(d, dest)
    with open(os.path.join(dest, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(dest, evidence_layout.SOURCES), "w") as f:
        f.write(evidence_layout.sources_sha256(ROOT, source_list()))


def import_device(d, commit, wheel):
    """evidence/wheel/<date>-h200-all-<commit7>/ from a GPU machine's checks."""
    now = datetime.datetime.now(datetime.timezone.utc)
    gpu = open(os.path.join(d, "gpu.txt")).read().strip()
    version = open(os.path.join(d, "version.txt")).read().strip().replace("\n", "; ")
    legs = []
    for key, f, label in (("wheel-cuda", "verify-cuda.txt", "CUDA on " + gpu),
                          ("wheel-opencl-nvidia", "verify-opencl.txt", "NVIDIA's OpenCL on " + gpu)):
        # (verify-cpu-t16.txt, the host CPU, is kept in the folder; the column
        # "x86-64 (installed wheel)" is the local run's, tools/wheel-check.sh)
        legs.append({"leg": key, "label": label + ", installed wheel " + wheel, "emulated": False,
                     "device": key.split("-", 1)[1], "threads": None,
                     "compared_with": "the reference cards carried in the wheel", "toolchain": version,
                     "fixtures": fixtures_of(os.path.join(d, f))})
    ok = all(v in ("pass", "refused") for l in legs for v in l["fixtures"].values()) and \
        all(l["fixtures"] for l in legs)
    s = {"samebits_evidence": 1, "commit": commit, "date": now.strftime("%Y-%m-%d"),
         "date_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": gpu, "result": "pass" if ok else "fail",
         "source": "the device tool: a fresh venv, pip install --no-index --no-deps " + wheel +
                   ", then the console script's version, doctor, verify device=cuda, verify device=opencl, "
                   "verify --threads 16", "legs": legs}
    name = evidence_layout.folder_name(s["date"], "h200", "all", commit)
    dest = os.path.join(ROOT, "evidence", "wheel", name)
    write_folder(d, dest, s, "*-h200-all-*")
    print(f"{os.path.relpath(dest, ROOT)}: {s['result']} (" + "; ".join(
        f"{l['leg']} {sum(v == 'pass' for v in l['fixtures'].values())}/{len(l['fixtures'])}" for l in legs) + ")")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dist", default=os.path.join(ROOT, "dist"))
    ap.add_argument("--device-run")
    ap.add_argument("--commit")
    ap.add_argument("--wheel")
    a = ap.parse_args()
    if a.device_run:
        if not (a.commit and a.wheel):
            ap.error("--device-run needs --commit and --wheel")
        return import_device(a.device_run, a.commit, a.wheel)
    if git("status", "--porcelain", "--untracked-files=no"):
        raise SystemExit("evidence_wheel: the tree has uncommitted changes; commit first (the record names a commit)")
    commit = git("rev-parse", "HEAD")
    work = os.path.join(ROOT, "build", "wheel-evidence")
    shutil.rmtree(work, ignore_errors=True)
    r = subprocess.run(["sh", os.path.join(ROOT, "tools", "wheel-check.sh"), a.dist, work], cwd=ROOT)
    now = datetime.datetime.now(datetime.timezone.utc)
    ok_all = r.returncode == 0
    for d in sorted(glob.glob(os.path.join(work, "samebits-*"))):
        base = os.path.basename(d)
        arch = "aarch64" if base.endswith("aarch64") else "x86_64"
        summary_txt = open(os.path.join(d, "summary.txt")).read() if os.path.exists(os.path.join(d, "summary.txt")) else ""
        fx = fixtures_of(os.path.join(d, "verify-t1.txt")) if os.path.exists(os.path.join(d, "verify-t1.txt")) else {}
        fx2 = fixtures_of(os.path.join(d, "verify-t2.txt")) if os.path.exists(os.path.join(d, "verify-t2.txt")) else {}
        fixtures = {n: (v if fx2.get(n) == v else "fail") for n, v in fx.items()}
        steps_ok = bool(summary_txt) and ", no" not in summary_txt
        version = open(os.path.join(d, "version.txt")).read().strip() if os.path.exists(os.path.join(d, "version.txt")) else ""
        leg = {"leg": "wheel-" + arch, "label": ("x86-64" if arch == "x86_64" else "aarch64 under qemu-user")
               + ", installed wheel " + base + ".whl", "emulated": arch == "aarch64",
               "device": "cpu", "threads": [1, 2], "compared_with": "the reference cards carried in the wheel",
               "toolchain": version.replace("\n", "; "), "fixtures": fixtures,
               "check_fixture": "pass" if "check-fixture: rc 0, yes" in summary_txt else "fail"}
        s = {"samebits_evidence": 1, "commit": commit, "date": now.strftime("%Y-%m-%d"),
             "date_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": " ".join(os.uname()[i] for i in (0, 2, 4)),
             "result": "pass" if steps_ok and fixtures and all(v == "pass" for v in fixtures.values()) else "fail",
             "source": "tools/wheel-check.sh: " + ", ".join(l.split(":")[0] for l in summary_txt.splitlines()),
             "legs": [leg]}
        name = evidence_layout.folder_name(s["date"], arch, "all", commit)
        dest = os.path.join(ROOT, "evidence", "wheel", name)
        write_folder(d, dest, s, "*-%s-all-*" % arch)
        print(f"{os.path.relpath(dest, ROOT)}: {s['result']} ({sum(v == 'pass' for v in fixtures.values())}/"
              f"{len(fixtures)} fixtures at 1 and 2 threads)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
