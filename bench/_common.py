"""What the benches' records share: the commit they ran (and whether tracked
files differed from it), the CPU's model name and the load average. A bench
run as `python3 bench/X.py` has bench/ on its path and imports this module as
`_common`."""
import argparse
import json
import os
import platform
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _git(*args):
    """git's output in this checkout, stripped; "" where git is absent or fails."""
    try:
        return subprocess.run(["git", "-C", REPO] + list(args), capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


LICENSES = "/usr/share/common-licenses"


def license_corpus():
    """(names, bytes): every regular file directly under /usr/share/common-licenses
    (Debian's base-files: every Debian machine has it), symbolic links skipped
    (GPL -> GPL-3 and the like would repeat text), read in sorted name order and
    concatenated as they are: the byte LM benches' corpus."""
    names = sorted(n for n in os.listdir(LICENSES)
                   if os.path.isfile(os.path.join(LICENSES, n)) and not os.path.islink(os.path.join(LICENSES, n)))
    data = b""
    for n in names:
        with open(os.path.join(LICENSES, n), "rb") as f:
            data += f.read()
    return names, data

def git_commit(short=None):
    """(commit, dirty): the environment's SAMEBITS_COMMIT as given when set
    (the device tool's copy of the tree carries a .git whose HEAD and index can
    be older than its files: it named 5de6cf4 for f785d7b's sources), not
    dirty; else HEAD of this checkout, whole (short None), git's abbreviation
    (short True) or that many digits (short an int), "" where git cannot say;
    dirty, whether a tracked file differs from HEAD (a record whose commit is
    not the sources it ran says so)."""
    if os.environ.get("SAMEBITS_COMMIT"):
        return os.environ["SAMEBITS_COMMIT"], False
    rev = ["--short"] if short is True else ["--short=%d" % short] if short else []
    commit = _git("rev-parse", *rev, "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return commit, dirty


def cpu_model():
    """The CPU's model name (/proc/cpuinfo); where it names none (aarch64, other
    systems), platform.processor() or else the architecture."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line():
    """The records' machine line: CPU model, logical CPUs, platform."""
    return "%s, %d logical CPUs (%s)" % (cpu_model(), os.cpu_count(), platform.platform())


def loadavg():
    """The 1, 5 and 15 minute load averages as a list; None where the system has none."""
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def run_header(script, threads, repeat=1, settle=0, devices=("cpu",), sk_dtype="float32"):
    """linear_bench's run header (commit, machine, versions, thread settings,
    load) for a run of bench/script with these settings, its command line
    the one this process was given."""
    import linear_bench
    la = argparse.Namespace(threads=threads, repeat=repeat, settle=settle, long_fit=0, devices=list(devices),
                            sk_dtype=sk_dtype)
    h = linear_bench.header_for(la)
    h["command"] = "python3 bench/%s " % script + " ".join(sys.argv[1:])
    return h


def save_record(h, name, body, write_md, suffix=""):
    """The run's record: bench/results/NAME-DATE-COMMIT{suffix}.json holding
    the header h and body's entries, and its Markdown written by
    write_md(path); prints the Markdown's path."""
    stem = os.path.join(REPO, "bench", "results", "%s-%s-%s%s" % (name, h["date"], h["commit"][:7], suffix))
    with open(stem + ".json", "w") as f:
        json.dump(dict({"header": h}, **body), f, indent=1)
    write_md(stem + ".md")
    print("wrote", stem + ".md")
