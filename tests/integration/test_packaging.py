"""Packaging (issue 32; docs/packaging.md): the wheels build from this tree, hold
no instruction above their declared baseline outside the functions chosen at
run time, install into a fresh virtual environment holding nothing else, and
pass `samebits doctor` and `samebits verify` through their own console script:
x86-64 natively, aarch64 under qemu-user with Debian's arm64 CPython.

The gate's separating arm: the library built with -mavx512f (the seed's
withdrawn wheel) must fail it, and each extension class of the classifier is
checked on instructions written out here."""
import fcntl
import os
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import isa_gate  # noqa: E402

# These tests run make over shared build folders: one pytest-xdist worker runs
# them all, one after another (`make test` builds their binaries beforehand).
# The group alone does not hold under pytest 9 with pytest-xdist 3.8 (the
# group's nodeid suffix is dropped, seen 2026-12-07), so make also runs under
# a lock.
pytestmark = pytest.mark.xdist_group("packaging")

JOBS = str(os.cpu_count() or 2)


def make(*targets, timeout=1800):
    lock = ROOT / "build" / ".packaging-make.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        return subprocess.run(["make", "-j" + JOBS] + list(targets), cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)


@pytest.mark.parametrize("insn,ext", [
    ("addps %xmm1,%xmm0", None), ("movdqa (%rax),%xmm2", None), ("pshufd $0x1b,%xmm0,%xmm1", None),
    ("cvttss2si %xmm0,%eax", None), ("pextrw $0x3,%xmm0,%eax", None), ("pinsrw $0x1,%eax,%xmm0", None),
    ("pshufb %xmm1,%xmm0", "ssse3"), ("pmulld %xmm1,%xmm0", "sse4.1"), ("roundss $0x9,%xmm1,%xmm0", "sse4.1"),
    ("pextrd $0x1,%xmm0,%eax", "sse4.1"), ("crc32b %al,%ecx", "sse4.2"), ("popcnt %rax,%rbx", "popcnt"),
    ("tzcnt %eax,%ecx", "bmi1"), ("shlx %rax,%rbx,%rcx", "bmi2"), ("vaddps %ymm1,%ymm2,%ymm3", "avx"),
    ("vmovd %eax,%xmm0", "avx"), ("vzeroupper ", "avx"), ("vfmadd231ss %xmm2,%xmm1,%xmm0", "fma"),
    ("vpaddd %zmm1,%zmm2,%zmm3", "avx512"), ("kmovw %k1,%eax", "avx512"), ("tdpbssd %tmm2,%tmm1,%tmm0", "amx"),
    ("cmpxchg16b (%rdi)", "cx16"), ("movbe (%rax),%ecx", "movbe"),
])
def test_x86_classifier(insn, ext):
    mnemonic, _, ops = insn.partition(" ")
    assert isa_gate.x86_extension(mnemonic, ops) == ext, insn


@pytest.mark.parametrize("insn,ext", [
    ("add x0, x1, x2", None), ("ldaxr w0, [x1]", None), ("fadd s0, s1, s2", None), ("fadd v0.4s, v1.4s, v2.4s", None),
    ("ldadd w0, w1, [x2]", "lse"), ("casal x0, x1, [x2]", "lse"), ("sdot v0.4s, v1.16b, v2.16b", "dotprod"),
    ("fadd h0, h1, h2", "fp16"), ("fmla v0.8h, v1.8h, v2.8h", "fp16"), ("ld1b {z0.b}, p0/z, [x1]", "sve"),
    ("crc32cw w0, w1, w2", "crc"), ("ldapr w0, [x1]", "rcpc"), ("sqrdmlah v0.4s, v1.4s, v2.4s", "rdm"),
])
def test_aarch64_classifier(insn, ext):
    mnemonic, _, ops = insn.partition(" ")
    assert isa_gate.arm_extension(mnemonic, ops) == ext, insn


def test_isa_gate_passes_what_ships_and_refuses_its_arms():
    """`make isa-gate`: the wheels' library and CLI on x86-64 (with CUDA when
    nvcc is here) and aarch64 pass; the -mavx512f build and the aarch64 build
    with -march=armv8.2-a+dotprod (inline LSE atomics) fail, naming functions
    that are not dispatched at run time."""
    r = make("isa-gate")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "arm (-mavx512f) refused, as it must be" in r.stdout
    assert "build-isa-arm/libsamebits.so: FAIL:" in r.stdout
    assert "arm (-march=armv8.2-a+dotprod) refused, as it must be" in r.stdout
    assert "build-isa-arm-aarch64/libsamebits.so: FAIL:" in r.stdout
    for f in ("libsamebits.so: pass", "samebits: pass"):
        assert r.stdout.count(f) >= 2, r.stdout  # x86-64 and aarch64


def test_wheels_install_into_a_fresh_venv_and_verify(tmp_path):
    """`make wheels` then tools/wheel-check.sh: both wheels (the x86-64 one
    manylinux-repaired by auditwheel) install with nothing else, and their
    console script's doctor and verify pass at 1 and 2 threads; device=cuda is
    a named refusal without a driver."""
    dist = tmp_path / "dist"
    r = make("wheels", "DIST=" + str(dist))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = sorted(p.name for p in dist.glob("samebits-*.whl"))
    assert any(w.endswith("manylinux_2_34_x86_64.whl") or "manylinux_" in w and w.endswith("x86_64.whl")
               for w in wheels), wheels
    assert any(w.endswith("aarch64.whl") for w in wheels), wheels
    assert list(dist.glob("samebits-*.tar.gz")), "no sdist"
    out = tmp_path / "check"
    r = subprocess.run(["sh", str(ROOT / "tools" / "wheel-check.sh"), str(dist), str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0 and "wheel-check: pass" in r.stdout, r.stdout[-4000:] + r.stderr[-2000:]
    digests = set()
    for w in dist.glob("samebits-*.whl"):
        d = out / w.stem
        digests.add(next(l for l in (d / "python-api.txt").read_text().splitlines() if l.startswith("digest ")))
        v = (d / "verify-t2.txt").read_text()
        assert "0 not identical (0 differ, 0 refused, 0 errors)" in v and "verify: PASS" in v, v
        assert "package: samebits" in (d / "version.txt").read_text()
    # version and profile pinned in each wheel's metadata
    import re as _re
    import zipfile
    profile = _re.search(r'#define SB_PROFILE_VERSION "([^"]+)"', (ROOT / "include" / "samebits.h").read_text()).group(1)
    for w in dist.glob("samebits-*.whl"):
        meta = zipfile.ZipFile(w).read("samebits-0.1.0.dist-info/METADATA").decode()
        assert "\nVersion: 0.1.0\n" in meta and ("numeric profile " + profile) in meta, meta[:400]
    # the same fit from Python in each installed wheel: the same model bytes
    assert len(digests) == 1, digests
