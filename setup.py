"""Build the samebits Python package: `pip install .` runs `make` (the Makefile's
flags are the numeric profile's; none are added here) and puts build/libsamebits.so
and the CLI (build/samebits, run by the `samebits` console script) inside the
package. `SAMEBITS_CUDA=1 pip install .` builds with the CUDA backend instead
(make CUDA=1, build-cuda/; nvcc needed), so that device="cuda" works from Python.
`make wheel` and `make wheel-aarch64` (mk/packaging.mk, tools/build-wheel.sh) set
SAMEBITS_WHEEL_BUILD to the build folder they made with the profile's flags: then
nothing is built here, that folder's library and CLI are packed, with the
reference cards and the build facts (samebits/_build_facts.json). Metadata lives in
pyproject.toml."""
import json
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
CUDA = os.environ.get("SAMEBITS_CUDA", "") not in ("", "0")
WHEEL_BUILD = os.environ.get("SAMEBITS_WHEEL_BUILD", "")
BUILD = WHEEL_BUILD or ("build-cuda" if CUDA else "build")
LIB = os.path.join(BUILD, "libsamebits.so")
CLI = os.path.join(BUILD, "samebits")


def header_version():
    with open(os.path.join(ROOT, "include", "samebits.h")) as f:
        return re.search(r'#define SB_VERSION_STRING "([^"]+)"', f.read()).group(1)


def package_version():
    with open(os.path.join(ROOT, "python", "samebits", "_version.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def build_facts():
    """What the wheel's binaries are: read back by `samebits version` and
    samebits.build_info() (python/samebits/_lib.py)."""
    def git(*args):
        r = subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    arch = os.environ.get("SAMEBITS_WHEEL_ARCH") or os.uname().machine
    return {"version": package_version(), "profile": profile_version(), "arch": arch,
            "baseline": "armv8-a" if arch == "aarch64" else "x86-64",
            "cuda": os.path.exists(os.path.join(ROOT, BUILD, "obj", "src", "backends", "cuda", "dev_cuda.o")),
            "opencl": True, "commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain",
                                                                                    "--untracked-files=no")),
            "build": os.path.basename(BUILD)}


def profile_version():
    with open(os.path.join(ROOT, "include", "samebits.h")) as f:
        return re.search(r'#define SB_PROFILE_VERSION "([^"]+)"', f.read()).group(1)


class BuildPyWithLibrary(build_py):
    """build_py that runs make (unless a wheel build made the binaries already) and
    then copies the shared library, the CLI and the reference cards into the package."""

    def run(self):
        if header_version() != package_version():
            raise SystemExit("include/samebits.h says %s but python/samebits/_version.py says %s"
                             % (header_version(), package_version()))
        if not WHEEL_BUILD:
            jobs = str(os.cpu_count() or 2)
            subprocess.check_call(["make", "-j" + jobs] + (["CUDA=1"] if CUDA else []) + [LIB, CLI], cwd=ROOT)
        for f in (LIB, CLI):
            if not os.path.isfile(os.path.join(ROOT, f)):
                raise SystemExit("setup.py: %s is missing" % f)
        super().run()
        dest = os.path.join(self.build_lib, "samebits")
        os.makedirs(os.path.join(dest, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, LIB), os.path.join(dest, "libsamebits.so"))
        shutil.copy2(os.path.join(ROOT, CLI), os.path.join(dest, "bin", "samebits"))
        os.chmod(os.path.join(dest, "bin", "samebits"), 0o755)
        cards = os.path.join(dest, "cards")
        os.makedirs(cards, exist_ok=True)
        src = os.path.join(ROOT, "fixtures", "cards")
        for name in sorted(os.listdir(src)):
            if name.endswith(".card"):
                shutil.copy2(os.path.join(src, name), os.path.join(cards, name))
        with open(os.path.join(dest, "_build_facts.json"), "w") as f:
            json.dump(build_facts(), f, indent=1, sort_keys=True)


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70: the wheel package's
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: the library is loaded with ctypes, so one wheel serves
    every Python 3 of a platform; only the platform tag is specific."""

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
setup(
    # the wheel's metadata names the numeric profile its bits follow (Summary:)
    description="Machine learning that trains bitwise-identically on every machine: numeric profile %s "
                "(Python bindings over the C library)" % profile_version(),
    cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel},
    distclass=BinaryDistribution,
    # setuptools' own build tree goes inside make's build/ (ignored by git, removed by
    # make clean), not next to the sources.
    options={"build": {"build_base": os.path.join("build", "python")},
             "egg_info": {"egg_base": os.path.join(ROOT, "build")}},
)
