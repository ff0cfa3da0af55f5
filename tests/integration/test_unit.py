"""The C unit tests, natively one case at a time, and whole under qemu-user on
aarch64 and s390x (big-endian), where they must pass just the same."""
import subprocess

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


@pytest.mark.parametrize("leg", ["aarch64", "s390x"])
def test_unit_cross(leg):
    r = run_bin(leg, "sb_unit", [])
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert " 0 failed" in r.stdout
