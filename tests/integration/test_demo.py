"""make demo (tools/demo.sh): the Fashion-MNIST model trained on this machine
has the digest fixtures/demo/fashion-mnist.digests records, and the demo says
DIFFERS and exits non-zero when it does not (a digest line changed by one hex
digit). Needs Debian's dataset-fashion-mnist (tools/ensure-deps.sh installs it)."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
BUILD = ROOT / "build"


def run_demo(tmp_path, digests=None):
    """Runs tools/demo.sh against a copy of the tree's demo fixtures (the
    digests file replaced when given), its work folder under tmp_path."""
    tree = tmp_path / "tree"
    (tree / "fixtures").mkdir(parents=True)
    shutil.copytree(ROOT / "fixtures/demo", tree / "fixtures/demo")
    shutil.copytree(ROOT / "tools", tree / "tools")
    if digests is not None:
        (tree / "fixtures/demo/fashion-mnist.digests").write_text(digests)
    b = tmp_path / "b"
    b.mkdir()
    os.symlink(BUILD / "samebits", b / "samebits")
    return subprocess.run(["sh", "tools/demo.sh", str(b)], cwd=tree, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(not os.path.exists(DATA), reason="dataset-fashion-mnist is not installed")
def test_demo_digest_recorded_and_a_changed_one_differs(tmp_path):
    r = run_demo(tmp_path / "real")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "reference x86-64:" in r.stdout and "DIFFERS" not in r.stdout
    ref = (ROOT / "fixtures/demo/fashion-mnist.digests").read_text()
    line = next(x for x in ref.splitlines() if x.startswith("x86-64 "))
    digest = line.split()[1]
    flipped = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    r = run_demo(tmp_path / "arm", ref.replace(line, "x86-64 " + flipped))
    assert r.returncode != 0 and "DIFFERS" in r.stdout
