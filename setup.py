"""Build the samebits Python package: `pip install .` runs `make` (the Makefile's
flags are the numeric profile's; none are added here) and puts build/libsamebits.so
inside the package. `SAMEBITS_CUDA=1 pip install .` builds with the CUDA backend
instead (make CUDA=1, build-cuda/libsamebits.so; nvcc needed), so that
device="cuda" works from Python. Metadata lives in pyproject.toml."""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
CUDA = os.environ.get("SAMEBITS_CUDA", "") not in ("", "0")
LIB = os.path.join("build-cuda" if CUDA else "build", "libsamebits.so")


def header_version():
    with open(os.path.join(ROOT, "include", "samebits.h")) as f:
        return re.search(r'#define SB_VERSION_STRING "([^"]+)"', f.read()).group(1)


def package_version():
    with open(os.path.join(ROOT, "python", "samebits", "_version.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


class BuildPyWithLibrary(build_py):
    """build_py that first runs make and then copies the shared library into the package."""

    def run(self):
        if header_version() != package_version():
            raise SystemExit("include/samebits.h says %s but python/samebits/_version.py says %s"
                             % (header_version(), package_version()))
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["make", "-j" + jobs] + (["CUDA=1"] if CUDA else []) + [LIB], cwd=ROOT)
        super().run()
        dest = os.path.join(self.build_lib, "samebits")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, LIB), os.path.join(dest, "libsamebits.so"))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
setup(
    cmdclass={"build_py": BuildPyWithLibrary},
    distclass=BinaryDistribution,
    # setuptools' own build tree goes inside make's build/ (ignored by git, removed by
    # make clean), not next to the sources.
    options={"build": {"build_base": os.path.join("build", "python")},
             "egg_info": {"egg_base": os.path.join(ROOT, "build")}},
)
