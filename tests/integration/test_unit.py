"""The C unit tests, one case at a time: natively, and under qemu-user on
aarch64 and s390x (big-endian), where they must pass just the same.

Each case is its own test with its own timeout: one slow case under qemu is
named by itself, and the suite's wall time spreads over pytest's workers
(a whole-binary run under qemu-s390x once outgrew a single 600 s timeout)."""
import subprocess
import warnings

import pytest

from conftest import ROOT, run_bin


def _cases():
    exe = ROOT / "build" / "sb_unit"
    if not exe.exists():
        return ["sb_unit-not-built"]
    out = subprocess.run([str(exe), "--list"], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("case", _cases())
def test_unit_native(case):
    r = run_bin("x86_64", "sb_unit", [case])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("case", _cases())
@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_unit_cross(leg, case):
    r = run_bin(leg, "sb_unit", [case])
    if r.returncode < 0 and "qemu: uncaught target signal" in r.stderr:
        # Seen once (2026-12-07, a loaded 2-core machine): a threaded case died
        # of SIGSEGV under qemu-s390x and passed in 19 reruns under qemu (10 at
        # once), natively under ThreadSanitizer and 8 times at once under
        # AddressSanitizer. One rerun, said aloud; a second death fails.
        warnings.warn(f"{leg} {case}: {r.stderr.strip()[-200:]}; run again once")
        r = run_bin(leg, "sb_unit", [case])
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert " 0 failed" in r.stdout, r.stdout[-4000:]
