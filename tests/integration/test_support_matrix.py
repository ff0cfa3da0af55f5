"""The support matrix says stale when the code moved on from the evidence
(issue #16): each evidence folder's sources.sha256 is checked against the tree,
and only a run whose listed sources are all unchanged reads "pass".

Every check here is shown able to fail: one changed byte in one listed source
turns a pass into stale, a deleted source too, and a run that lists no sources
is never a pass. Python only: no build needed."""
import hashlib
import json
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import evidence_layout  # noqa: E402
import support_matrix  # noqa: E402

sys.path.pop(0)

FAMILY_ROW = "| profile (1 fixtures) |"


def make_tree(tmp_path, sources):
    """A repository-shaped tree with the pinned profile fixture, two source files
    and one CUDA run of profile-core that passed; SOURCES is what its
    sources.sha256 says (None: no file). Returns (root, folder)."""
    root = tmp_path / "tree"
    (root / "fixtures/cards").mkdir(parents=True)
    (root / "fixtures/cards/profile-core.card").write_text("a card\n")
    (root / "src/kernels").mkdir(parents=True)
    (root / "src/kernels/profile_core.h").write_text("/* the profile's kernel */\n")
    (root / "tools").mkdir()
    (root / "tools/device-run.sh").write_text("#!/bin/sh\n")
    (root / "docs").mkdir()
    folder = root / "evidence/cuda/2099-01-01-h200-profile-abcdef0"
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({
        "samebits_evidence": 1, "date": "2099-01-01", "date_utc": "2099-01-01T00:00:00Z",
        "commit": "abcdef0" + "0" * 33, "legs": [{"leg": "cuda", "toolchain": "nvcc",
                                                 "fixtures": {"profile-core": "pass"}}]}))
    if sources is not None:
        (folder / "sources.sha256").write_text(sources)
    return root, folder


def hashed(root, *paths):
    return "".join(hashlib.sha256((root / p).read_bytes()).hexdigest() + "  " + p + "\n" for p in paths)


def cuda_cell(root):
    """The profile x CUDA cell of the matrix generated for ROOT."""
    row = next(ln for ln in support_matrix.generate(str(root)).splitlines() if ln.startswith(FAMILY_ROW))
    return [c.strip() for c in row.split("|")[1:-1]][4]


def test_intact_sources_pass_and_a_changed_one_is_stale(tmp_path):
    root, folder = make_tree(tmp_path, None)
    (folder / "sources.sha256").write_text(hashed(root, "src/kernels/profile_core.h", "tools/device-run.sh"))
    assert evidence_layout.freshness(str(root), str(folder))["state"] == "fresh"
    assert cuda_cell(root).startswith("pass 1/1<br>`abcdef0` 2099-01-01"), cuda_cell(root)
    # One byte of one listed source changes: the same evidence no longer passes.
    (root / "src/kernels/profile_core.h").write_text("/* the profile's kernel, edited */\n")
    f = evidence_layout.freshness(str(root), str(folder))
    assert f["state"] == "stale" and f["changed"] == ["src/kernels/profile_core.h"] and f["total"] == 2
    cell = cuda_cell(root)
    assert cell.startswith("**stale** (1 of 2 sources changed; was pass 1/1)"), cell
    assert "pass" not in cell.split("was")[0]
    text = support_matrix.generate(str(root))
    assert "stale, 1 of 2 sources changed; changed: src/kernels/profile_core.h." in text


def test_a_wrong_hash_in_a_copied_folder_is_stale(tmp_path):
    """The brief's case: a copy of a real evidence folder whose sources.sha256
    names a file with a wrong hash is stale; the intact copy passes."""
    real = ROOT / "evidence/cuda"
    src = next(d for d in sorted(real.iterdir()) if (d / "sources.sha256").exists())
    import hashlib
    import shutil
    root = tmp_path / "tree"
    copied = root / "evidence/cuda" / src.name
    shutil.copytree(src, copied)
    # the tree as the run saw it: the listed sources that still exist, with
    # the recorded list rewritten to their present hashes (fresh by construction,
    # whatever has changed in the repository since the run)
    kept = []
    for _, rel in evidence_layout.read_sources(str(src)):
        if (ROOT / rel).is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, root / rel)
            kept.append(hashlib.sha256((ROOT / rel).read_bytes()).hexdigest() + "  " + rel)
    assert kept, src
    (copied / "sources.sha256").write_text("\n".join(kept) + "\n")
    assert evidence_layout.freshness(str(root), str(copied))["state"] == "fresh"
    lines = (copied / "sources.sha256").read_text().splitlines()
    digest, rel = lines[0].split("  ", 1)
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    (copied / "sources.sha256").write_text("\n".join([wrong + "  " + rel] + lines[1:]) + "\n")
    f = evidence_layout.freshness(str(root), str(copied))
    assert f["state"] == "stale" and f["changed"] == [rel], f


def test_a_deleted_source_is_stale(tmp_path):
    root, folder = make_tree(tmp_path, None)
    (folder / "sources.sha256").write_text(hashed(root, "src/kernels/profile_core.h", "tools/device-run.sh"))
    (root / "tools/device-run.sh").unlink()
    f = evidence_layout.freshness(str(root), str(folder))
    assert f["state"] == "stale" and f["missing"] == ["tools/device-run.sh"]
    assert cuda_cell(root).startswith("**stale** (1 of 2 sources changed; was pass 1/1)")


def test_a_run_without_sources_is_unverified_never_a_pass(tmp_path):
    for sources, reason in ((None, "no sources.sha256"), ("", "sources.sha256 lists no file"),
                            ("sha256sum: src/gone.c: No such file or directory\n", "is not a digest and a path"),
                            ("0" * 64 + "  ../outside.c\n", "outside the repository")):
        root, folder = make_tree(tmp_path / str(len(reason)), sources)
        f = evidence_layout.freshness(str(root), str(folder))
        assert f["state"] == "unverified" and reason in f["reason"], (sources, f)
        assert cuda_cell(root).startswith("**unverified** ("), cuda_cell(root)


def test_the_check_fails_when_a_source_changes_until_the_matrix_is_regenerated(tmp_path):
    root, folder = make_tree(tmp_path, None)
    (folder / "sources.sha256").write_text(hashed(root, "src/kernels/profile_core.h"))
    tool = [sys.executable, str(ROOT / "tools/support_matrix.py"), "--root", str(root)]
    assert subprocess.run(tool, capture_output=True).returncode == 0
    assert subprocess.run(tool + ["--check"], capture_output=True).returncode == 0
    (root / "src/kernels/profile_core.h").write_text("changed\n")
    r = subprocess.run(tool + ["--check"], capture_output=True, text=True)
    assert r.returncode == 1 and "is stale" in r.stdout and "**stale**" in r.stdout
    assert subprocess.run(tool, capture_output=True).returncode == 0
    assert subprocess.run(tool + ["--check"], capture_output=True).returncode == 0


def test_superseded_and_misnamed_folders_fail_the_check(tmp_path):
    root, folder = make_tree(tmp_path, None)
    (folder / "sources.sha256").write_text(hashed(root, "src/kernels/profile_core.h"))
    tool = [sys.executable, str(ROOT / "tools/support_matrix.py"), "--root", str(root)]
    # An older run of the same leg and family is the newest of nothing: it belongs to history.
    old = root / "evidence/cuda/2098-01-01-h200-profile-1234567"
    old.mkdir()
    (old / "summary.json").write_text((folder / "summary.json").read_text()
                                      .replace("2099-01-01", "2098-01-01").replace("abcdef0", "1234567"))
    assert subprocess.run(tool, capture_output=True).returncode == 0
    r = subprocess.run(tool + ["--check"], capture_output=True, text=True)
    assert r.returncode == 1 and f"evidence/cuda/{old.name}: superseded" in r.stdout, r.stdout
    import shutil
    shutil.rmtree(old)
    assert subprocess.run(tool, capture_output=True).returncode == 0
    assert subprocess.run(tool + ["--check"], capture_output=True).returncode == 0
    # A name off the scheme, or one that disagrees with its summary, fails too.
    for bad in ("2099-01-01-h200-abcdef0", "2099-01-02-h200-profile-abcdef0", "2099-01-01-h200-profile-abcdef1"):
        moved = folder.rename(folder.parent / bad)
        assert subprocess.run(tool, capture_output=True).returncode == 0
        r = subprocess.run(tool + ["--check"], capture_output=True, text=True)
        assert r.returncode == 1 and f"evidence/cuda/{bad}: name:" in r.stdout, (bad, r.stdout)
        folder = moved.rename(folder.parent / "2099-01-01-h200-profile-abcdef0")


def test_folder_names_read_back_one_way():
    n = evidence_layout.folder_name("2026-11-30", "pocl", ["profile", "gbdt"], "7745efc48d2b", 2)
    assert n == "2026-11-30-pocl-profile+gbdt-7745efc-2"
    assert evidence_layout.parse_name(n) == {"date": "2026-11-30", "machine": "pocl", "families": "profile+gbdt",
                                            "commit7": "7745efc", "n": 2}
    assert evidence_layout.parse_name("2026-11-30-x86_64-7745efc") is None
    # Every committed folder fits the scheme and agrees with its summary.json.
    for d in sorted(ROOT.glob("evidence/*/*")):
        s = json.loads((d / "summary.json").read_text())
        assert evidence_layout.name_problems(d.name, s) == [], d


def test_opencl_runs_go_to_the_column_of_the_implementation_that_ran_them():
    """An NVIDIA OpenCL run recorded under the plain `opencl` key (older
    recording tools did) must not land in the PoCL column, nor an unknown
    OpenCL implementation in either."""
    col = support_matrix.column_of
    assert col({"leg": "opencl", "label": "OpenCL on PoCL (a CPU device)",
                "device": "opencl: pthread-skylake"}) == "opencl"
    assert col({"leg": "opencl", "label": "OpenCL, NVIDIA H200 (NVIDIA driver)", "device": "NVIDIA H200"}) \
        == "opencl-nvidia"
    assert col({"leg": "opencl-nvidia", "label": "OpenCL, H200", "device": "NVIDIA H200"}) == "opencl-nvidia"
    other = col({"leg": "opencl", "label": "OpenCL", "device": "opencl: gfx1100"})
    assert other not in ("opencl", "opencl-nvidia") and "gfx1100" in other
    assert col({"leg": "cuda", "label": "CUDA, NVIDIA H200"}) == "cuda"
    titles = dict(support_matrix.KNOWN_LEGS)
    assert "PoCL" in titles["opencl"] and "NVIDIA" in titles["opencl-nvidia"]


def test_remove_superseded_keeps_what_it_just_wrote(tmp_path, monkeypatch):
    """evidence_cpu.remove_superseded removes an older run of the same machine
    and families that no cell reads, and never the folder just written, even
    when another machine's newer run fills that folder's cells (it deleted its
    own fresh x86_64 folder once). Without the guard the first assertion fails."""
    sys.path.insert(0, str(ROOT / "tools"))
    import evidence_cpu  # noqa: E402
    sys.path.pop(0)
    cpu = tmp_path / "evidence" / "cpu"
    old, new = cpu / "2026-12-05-x86_64-all-aaaaaaa", cpu / "2026-12-06-x86_64-all-bbbbbbb"
    for d in (old, new):
        d.mkdir(parents=True)
    rel = lambda d: str(d.relative_to(tmp_path))  # noqa: E731
    gpu_run = "evidence/cuda/2026-12-06-h200-all-ccccccc"
    cells = {("x86_64", "gbdt"): (None, {"run": {"folder": gpu_run}})}
    monkeypatch.setattr(evidence_cpu, "ROOT", str(tmp_path))
    monkeypatch.setattr(support_matrix, "layout",
                        lambda root: (None, None, None, {rel(old), rel(new), gpu_run}, None, cells, None))
    evidence_cpu.remove_superseded([str(new)])
    assert new.is_dir()
    assert not old.is_dir()
