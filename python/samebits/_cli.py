"""The `samebits` console script: runs the CLI binary that the package carries
(samebits/bin/samebits, packed by setup.py next to libsamebits.so), with the same
arguments, so an installed wheel has the whole command line (train, predict,
verify, doctor, ...) without a source tree. Its exit status is the binary's.

SAMEBITS_CLI_LAUNCHER, when set, is a command line the binary is started
through (split on spaces: e.g. "qemu-aarch64 -L /sysroot", which is how
tools/wheel-check.sh runs the aarch64 wheel's CLI on an x86-64 host where the
kernel cannot start an aarch64 program by itself); unset, the binary is
exec'd directly.

A package without the binary (a copy of python/ used from a source tree) falls
back to `python -m samebits`, which implements the commands that need no data
files over the library, and says so on standard error."""
import json
import os
import subprocess
import sys


def binary_path():
    """The CLI binary inside this package, or None."""
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "samebits")
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


def wheel_facts():
    """The build facts that setup.py wrote into this package (version, profile,
    architecture, instruction-set baseline, CUDA in or not, commit), or None."""
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_build_facts.json")
    if not os.path.isfile(p):
        return None
    with open(p) as f:
        return json.load(f)


def _command(exe, args):
    launcher = os.environ.get("SAMEBITS_CLI_LAUNCHER", "").split()
    return launcher + [exe] + args


def main():
    exe = binary_path()
    if exe is not None and sys.argv[1:] == ["version"]:
        # the binary's own lines, then what the package says it was built as
        r = subprocess.run(_command(exe, ["version"]))
        facts = wheel_facts()
        if facts is not None:
            print("package: samebits %s (%s), %s, baseline %s, CUDA %s, OpenCL %s, commit %s%s"
                  % (facts["version"], facts["profile"], facts["arch"], facts["baseline"],
                     "in" if facts["cuda"] else "not built", "in" if facts["opencl"] else "not built",
                     facts["commit"][:12], " (uncommitted changes)" if facts.get("dirty") else ""))
        return r.returncode
    if exe is None:
        from . import __main__ as pymain
        print("samebits: this package carries no CLI binary; running python -m samebits", file=sys.stderr)
        return pymain.main(sys.argv[1:])
    cmd = _command(exe, sys.argv[1:])
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:  # exec refused (noexec mount, wrong architecture): say so by name
        print("samebits: cannot run %s: %s" % (" ".join(cmd[:-len(sys.argv[1:])] if sys.argv[1:] else cmd), e),
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
