"""The architecture as the tree shows it (issue 16, DESIGN.md section 6):
layers point one way, kernel entries are written once, and programs with a
main live outside src/. Each rule reads the sources, so a change that breaks
one fails here by name."""
import re

from conftest import ROOT

SRC = ROOT / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _sources(folder, exts=(".c", ".h", ".cu", ".cl")):
    return [p for p in sorted((SRC / folder).rglob("*")) if p.suffix in exts]


def _includes(path):
    """The repository-relative folders of every quoted include of path."""
    out = []
    for inc in INCLUDE.findall(path.read_text()):
        target = (path.parent / inc).resolve()
        if not target.exists():
            target = (SRC / inc).resolve()
        try:
            out.append(str(target.relative_to(SRC)))
        except ValueError:
            out.append(str(target))
    return out


def _violations(folder, forbidden):
    bad = []
    for p in _sources(folder):
        for inc in _includes(p):
            if any(inc.startswith(f + "/") for f in forbidden):
                bad.append(f"{p.relative_to(ROOT)} includes {inc}")
    return bad


def test_core_and_io_reach_neither_backends_nor_models_nor_the_device_layer():
    assert _violations("core", ("backends", "models", "device", "io", "fixtures")) == []
    assert _violations("io", ("backends", "models", "device", "fixtures")) == []


def test_kernels_never_name_a_backend():
    # the backend includes its compat header first, as Cycles' kernels are compiled
    assert _violations("kernels", ("backends", "models", "device", "io", "fixtures")) == []


def test_the_device_layer_and_backends_know_no_family():
    assert _violations("device", ("models", "fixtures", "io")) == []
    assert _violations("backends", ("models", "fixtures", "io")) == []


def test_no_program_with_a_main_in_src():
    mains = [str(p.relative_to(ROOT)) for p in _sources("", (".c", ".cu", ".cpp"))
             if re.search(r"\bint\s+main\s*\(", _strip_comments(p.read_text()))]
    assert mains == [], mains


def test_entry_kernels_are_spelled_only_in_the_entry_sources_and_compat_headers():
    # __global__ (CUDA, HIP) and __kernel (OpenCL) appear in the compat headers
    # alone; every entry is SB_KERNEL in src/kernels/entry/
    bad = []
    for p in _sources(""):
        if p.parent.parent == SRC / "backends" and p.name.startswith("compat_"):
            continue
        text = _strip_comments(p.read_text())
        if re.search(r"\b__global__\b|\b__kernel\b", text):
            bad.append(str(p.relative_to(ROOT)))
    assert bad == [], bad


def test_every_listed_kernel_is_an_entry_and_every_entry_is_listed():
    programs = (SRC / "device" / "programs.h").read_text()
    for macro, entry in (("SB_TREE_KERNELS", "tree_entry.h"), ("SB_FOREST_KERNELS", "forest_entry.h"),
                         ("SB_CORE_KERNELS", "core_entry.h"),
                         ("SB_LINALG_REDUCE_KERNELS", "linalg_reduce_entry.h")):
        body = re.search(r"#define " + macro + r"\(X\)(.*?)(?:\n\n|\n/\*)", programs, re.S).group(1)
        listed = set(re.findall(r"X\((\w+)\)", body))
        defined = set(re.findall(r"SB_KERNEL\s+void\s+(\w+)\s*\(", (SRC / "kernels" / "entry" / entry).read_text()))
        assert listed == defined, (entry, listed ^ defined)
