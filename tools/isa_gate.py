#!/usr/bin/env python3
"""isa_gate.py: refuse a shipped binary that holds an instruction above its
declared baseline (issue 32; docs/packaging.md, "The instruction-set gate").

    python3 tools/isa_gate.py --arch x86_64 FILE...      # baseline x86-64 (SSE2)
    python3 tools/isa_gate.py --arch aarch64 FILE...     # baseline armv8.0-a

A wheel built on one machine must run on every machine of its platform tag: an
instruction the build machine has and another lacks is a SIGILL there, and the
seed project once withdrew a wheel whose host code had been compiled with
AVX-512. Every function of every FILE is disassembled (objdump -d, the
toolchain's for the architecture) and each instruction classified by the
instruction-set extension it needs; one above the baseline fails the gate,
unless its function is named in tools/isa-dispatch.txt for that extension.
That file lists the functions that run only after a run-time check of the CPU
(the integer GEMM's AVX2, AVX-512 VNNI and AMX kernels, chosen by
__builtin_cpu_supports and CPUID; libgcc's outline atomics on aarch64, chosen
by the kernel's HWCAP_ATOMICS), each with the check that guards it.

The classification is by mnemonic and operands (AT&T syntax on x86: a ymm
register is AVX, a zmm or mask register AVX-512, a tile instruction AMX; the
SSE3 to SSE4.2, POPCNT, LZCNT, BMI1/2, MOVBE, ADX, AES, PCLMUL, SHA, RDRAND and
CMPXCHG16B mnemonics by name; on aarch64 the LSE atomics, RDM, dot product,
CRC32, FP16 arithmetic, SVE registers, RCPC, JSCVT, FCMA, I8MM, BF16 and the
v8.5 rounding and flag instructions). Exit 0: every instruction is within the
baseline or allowed; 1: the first offenders, by function; 2: a usage error or a
missing objdump.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW = os.path.join(ROOT, "tools", "isa-dispatch.txt")

# ---- x86-64 -------------------------------------------------------------------------

X86_NAMED = {
    "sse3": "addsubps addsubpd haddps haddpd hsubps hsubpd lddqu movddup movshdup movsldup fisttp monitor mwait",
    "ssse3": "pabsb pabsw pabsd palignr phaddw phaddd phaddsw phsubw phsubd phsubsw pmaddubsw pmulhrsw pshufb "
             "psignb psignw psignd",
    "sse4.1": "blendpd blendps blendvpd blendvps dppd dpps extractps insertps movntdqa mpsadbw packusdw pblendvb "
              "pblendw pcmpeqq pextrb pextrd pextrq phminposuw pinsrb pinsrd pinsrq pmaxsb pmaxsd pmaxud pmaxuw "
              "pminsb pminsd pminud pminuw pmovsxbw pmovsxbd pmovsxbq pmovsxwd pmovsxwq pmovsxdq pmovzxbw "
              "pmovzxbd pmovzxbq pmovzxwd pmovzxwq pmovzxdq pmuldq pmulld ptest roundpd roundps roundsd roundss",
    "sse4.2": "pcmpestri pcmpestrm pcmpistri pcmpistrm pcmpgtq crc32",
    "popcnt": "popcnt",
    "lzcnt": "lzcnt",
    "bmi1": "andn bextr blsi blsmsk blsr tzcnt",
    "bmi2": "bzhi mulx pdep pext rorx sarx shlx shrx",
    "movbe": "movbe",
    "adx": "adcx adox",
    "aes": "aesenc aesenclast aesdec aesdeclast aesimc aeskeygenassist",
    "pclmul": "pclmulqdq pclmullqlqdq pclmulhqlqdq pclmullqhqdq pclmulhqhqdq",
    "sha": "sha1rnds4 sha1nexte sha1msg1 sha1msg2 sha256rnds2 sha256msg1 sha256msg2",
    "rdrand": "rdrand rdseed",
    "cx16": "cmpxchg16b",
    "amx": "ldtilecfg sttilecfg tileloadd tileloaddt1 tilestored tilerelease tilezero tdpbssd tdpbsud tdpbusd "
           "tdpbuud tdpbf16ps tdpfp16ps",
}
X86_BY_NAME = {m: ext for ext, names in X86_NAMED.items() for m in names.split()}
# Extensions each x86 baseline includes beyond SSE2 (x86-64-v2: the psABI's level 2).
X86_BASELINES = {"x86-64": set(), "x86-64-v2": {"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16"}}
X86_SUFFIX = re.compile(r"^(.*?)(b|w|l|q)?$")


def x86_extension(mnemonic, operands):
    """The extension an x86-64 instruction needs beyond SSE2, or None."""
    m = mnemonic
    if "%zmm" in operands or re.search(r"%k[0-7]\b", operands) or "{%k" in operands or m.startswith("k") and \
            m[1:4] in ("mov", "and", "or", "xor", "not", "add", "shi", "tes", "uni", "ort"):
        return "avx512"
    if m in X86_BY_NAME:
        return X86_BY_NAME[m]
    base = X86_SUFFIX.match(m).group(1)
    if base in X86_BY_NAME and base not in ("pextr", "pinsr"):
        return X86_BY_NAME[base]
    if "%ymm" in operands:
        return "avx"
    if m.startswith("vfmadd") or m.startswith("vfmsub") or m.startswith("vfnmadd") or m.startswith("vfnmsub"):
        return "fma"
    if m.startswith("vpdpbusd") or m.startswith("vpdpwssd"):
        return "avx512"  # VNNI (EVEX; the VEX form is AVX-VNNI, newer still)
    if m.startswith("v") and ("%xmm" in operands or m in ("vzeroupper", "vzeroall", "vldmxcsr", "vstmxcsr")):
        return "avx"  # any VEX-encoded instruction
    if m in ("xgetbv",):
        return None  # reads XCR0: the dispatch's own probe, valid wherever CPUID says OSXSAVE
    return None


# ---- aarch64 ------------------------------------------------------------------------

ARM_PREFIX = [  # (mnemonic prefix, extension), first match wins
    ("cas", "lse"), ("swp", "lse"), ("ldadd", "lse"), ("ldclr", "lse"), ("ldeor", "lse"), ("ldset", "lse"),
    ("ldsmax", "lse"), ("ldsmin", "lse"), ("ldumax", "lse"), ("ldumin", "lse"), ("stadd", "lse"),
    ("stclr", "lse"), ("steor", "lse"), ("stset", "lse"), ("stsmax", "lse"), ("stsmin", "lse"),
    ("stumax", "lse"), ("stumin", "lse"),
    ("sqrdmlah", "rdm"), ("sqrdmlsh", "rdm"),
    ("sdot", "dotprod"), ("udot", "dotprod"), ("usdot", "i8mm"), ("sudot", "i8mm"),
    ("smmla", "i8mm"), ("ummla", "i8mm"), ("usmmla", "i8mm"),
    ("bfdot", "bf16"), ("bfmmla", "bf16"), ("bfcvt", "bf16"), ("bfmlal", "bf16"),
    ("crc32", "crc"), ("ldapr", "rcpc"), ("ldapur", "rcpc"), ("stlur", "rcpc"), ("fjcvtzs", "jscvt"),
    ("fcmla", "fcma"), ("fcadd", "fcma"), ("frint32", "frintts"), ("frint64", "frintts"),
    ("cfinv", "flagm"), ("rmif", "flagm"), ("setf8", "flagm"), ("setf16", "flagm"), ("axflag", "flagm"),
    ("xaflag", "flagm"), ("sha512", "sha3"), ("eor3", "sha3"), ("rax1", "sha3"), ("xar", "sha3"),
    ("bcax", "sha3"), ("sm3", "sm4"), ("sm4", "sm4"),
]
ARM_BASELINES = {"armv8-a": set()}
ARM_FP16 = re.compile(r"(^|[\s,])h\d+\b|\.[48]h\b")
ARM_FP_OPS = ("fadd", "fsub", "fmul", "fdiv", "fmadd", "fmsub", "fnmadd", "fnmsub", "fmax", "fmin", "fabs", "fneg",
              "fsqrt", "fcmp", "fccmp", "fcsel", "frint", "fmla", "fmls", "fabd", "faddp", "fcm", "fmaxnm",
              "fminnm", "frecpe", "frsqrte")


def arm_extension(mnemonic, operands):
    """The extension an aarch64 instruction needs beyond armv8.0-a, or None."""
    m = mnemonic
    if re.search(r"(^|[\s,{])z\d+\.", operands) or re.search(r"(^|[\s,])p\d+/[mz]", operands) or \
            m in ("ptrue", "ptrues", "whilelo", "whilelt", "rdvl", "addvl", "cntb", "cnth", "cntw", "cntd"):
        return "sve"
    for p, ext in ARM_PREFIX:
        if m.startswith(p):
            return ext
    if m.startswith(ARM_FP_OPS) and ARM_FP16.search(operands):
        return "fp16"
    return None


# ---- the gate ------------------------------------------------------------------------

FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN = re.compile(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$")


def objdump_for(arch):
    names = {"x86_64": ["objdump", "x86_64-linux-gnu-objdump"],
             "aarch64": ["aarch64-linux-gnu-objdump", "objdump"]}[arch]
    for n in names:
        p = shutil.which(n)
        if p and (arch == "x86_64" or "aarch64" in n):
            return p
    raise SystemExit(f"isa_gate: no objdump for {arch} (install binutils"
                     f"{'-aarch64-linux-gnu' if arch == 'aarch64' else ''})")


def load_allow(path, arch):
    """[(compiled regex, set of extensions, why)] for arch from tools/isa-dispatch.txt."""
    out = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        parts = body.split()
        if len(parts) < 3:
            raise SystemExit(f"{path}:{n}: want ARCH FUNCTION-REGEX EXTENSION...")
        if parts[0] == arch:
            out.append((re.compile(parts[1]), set(parts[2:]), line.split("#", 1)[1].strip() if "#" in line else ""))
    return out


def scan(path, arch, baseline, allow, limit=20):
    """(offenders, allowed, functions): offenders [(function, extension, instruction)];
    allowed {function: extensions used}."""
    classify = x86_extension if arch == "x86_64" else arm_extension
    base = (X86_BASELINES if arch == "x86_64" else ARM_BASELINES)[baseline]
    r = subprocess.run([objdump_for(arch), "-d", "--no-show-raw-insn", "-w", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"isa_gate: objdump failed on {path}: {r.stderr.strip()[:300]}")
    func, offenders, allowed, nfunc = "?", [], {}, 0
    for line in r.stdout.splitlines():
        f = FUNC.match(line)
        if f:
            func, nfunc = f.group(1), nfunc + 1
            continue
        i = INSN.match(line)
        if not i:
            continue
        mnemonic = i.group(1)
        if mnemonic in ("rep", "repz", "repnz", "lock", "data16", "notrack", "bnd", "addr32", "cs", "ds"):
            rest = i.group(2).split(None, 1)
            if not rest:
                continue
            mnemonic, ops = rest[0], rest[1] if len(rest) > 1 else ""
        else:
            ops = i.group(2)
        ext = classify(mnemonic, ops)
        if ext is None or ext in base:
            continue
        name = func.split("@")[0]
        if any(rx.search(name) and ext in exts for rx, exts, _ in allow):
            allowed.setdefault(name, set()).add(ext)
            continue
        offenders.append((func, ext, (mnemonic + " " + ops).strip()))
    return offenders, allowed, nfunc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", required=True, choices=["x86_64", "aarch64"])
    ap.add_argument("--baseline", help="x86-64 (default) or x86-64-v2; armv8-a on aarch64")
    ap.add_argument("--allow", default=ALLOW, help="the dispatch list (default tools/isa-dispatch.txt)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    baseline = a.baseline or ("x86-64" if a.arch == "x86_64" else "armv8-a")
    if baseline not in (X86_BASELINES if a.arch == "x86_64" else ARM_BASELINES):
        ap.error(f"baseline {baseline} is not one of {a.arch}'s")
    allow = load_allow(a.allow, a.arch)
    bad = 0
    for path in a.files:
        if not os.path.isfile(path):
            print(f"isa_gate: {path}: no such file", file=sys.stderr)
            return 2
        offenders, allowed, nfunc = scan(path, a.arch, baseline, allow)
        used = "; ".join(f"{k} ({', '.join(sorted(v))})" for k, v in sorted(allowed.items()))
        if offenders:
            bad += 1
            funcs = sorted({o[0] for o in offenders})
            print(f"{path}: FAIL: {len(offenders)} instructions above {baseline} in {len(funcs)} functions "
                  f"not dispatched at run time (tools/isa-dispatch.txt):")
            for func, ext, insn in offenders[:20]:
                print(f"  {func}: {ext}: {insn}")
            if len(offenders) > 20:
                print(f"  ... and {len(offenders) - 20} more")
        else:
            print(f"{path}: pass: {nfunc} functions within {baseline}"
                  + (f"; above it only in the dispatched functions {used}" if used else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
