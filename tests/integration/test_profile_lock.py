"""The profile lock (tools/profile_lock.py): under one numeric profile a
reference card's stage or a golden model file never moves; a numerical change
bumps the profile (DESIGN.md section 1, docs/numeric-profile.md 'Versions').

The repository's own lock must hold. Each rule is shown able to fail on a copy
of the cards: one digest changed, a stage removed, a golden file rewritten, a
card recorded under another profile, the header bumped without a new lock; and
an added stage, card or golden file is shown to pass. Python only."""
import json
import shutil
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import profile_lock  # noqa: E402

sys.path.pop(0)


def copy_tree(tmp_path):
    """The parts of the repository the lock reads, copied under tmp_path."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "fixtures/cards", root / "fixtures/cards")
    (root / "include").mkdir(parents=True)
    shutil.copy(ROOT / "include/samebits.h", root / "include/samebits.h")
    for rel in profile_lock.GOLDEN_DIRS:
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, root / rel)
    return root


def rewrite_card(path, fn):
    """Applies fn to each stage record (not the header) of one card."""
    lines = path.read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        rec = fn(json.loads(line))
        if rec is not None:
            out.append(json.dumps(rec, separators=(",", ":")))
    path.write_text("\n".join(out) + "\n")


def test_repository_lock_holds():
    r = subprocess.run([sys.executable, str(ROOT / "tools/profile_lock.py"), "check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "holds" in r.stdout


def test_moved_digest_is_a_breach(tmp_path):
    root = copy_tree(tmp_path)
    assert profile_lock.breaches(str(root)) == []
    card = root / "fixtures/cards/gp-fit.card"
    first = {}

    def flip(rec):
        if not first:
            first["stage"] = rec["stage"]
            rec["sha256"] = "0" * 64
        return rec

    rewrite_card(card, flip)
    found = profile_lock.breaches(str(root))
    assert len(found) == 1 and "gp-fit.card %s#0" % first["stage"] in found[0]
    assert "needs a profile bump" in found[0]
    # write refuses to absorb it under the same profile
    assert profile_lock.write(str(root)) == 1
    assert profile_lock.breaches(str(root)) == found


def test_removed_stage_is_a_breach(tmp_path):
    root = copy_tree(tmp_path)
    card = root / "fixtures/cards/arima-fit.card"
    last = card.read_text().splitlines()[-1]
    card.write_text("\n".join(card.read_text().splitlines()[:-1]) + "\n")
    found = profile_lock.breaches(str(root))
    assert len(found) == 1 and "gone" in found[0] and json.loads(last)["stage"] in found[0]


def test_only_a_listed_gone_stage_is_retired_by_write(tmp_path):
    """PROFILE.retired lets write drop a stage that is gone (a refusal case
    that stopped being one); an unlisted gone stage, and a listed stage that
    moved while still there, are refused as before."""
    root = copy_tree(tmp_path)
    card = root / "fixtures/cards/arima-fit.card"
    lines = card.read_text().splitlines()
    last, second = json.loads(lines[-1]), json.loads(lines[-2])
    card.write_text("\n".join(lines[:-1]) + "\n")  # the last stage gone
    assert profile_lock.write(str(root)) == 1  # not listed: refused
    key = "card arima-fit.card %s#%d" % (last["stage"], sum(json.loads(x)["stage"] == last["stage"]
                                                             for x in lines[1:-1]))
    retired = root / "fixtures/cards/PROFILE.retired"
    retired.write_text(retired.read_text() + key + " : a test's retirement\n")
    assert profile_lock.write(str(root)) == 0 and profile_lock.breaches(str(root)) == []
    assert key not in profile_lock.read_lock(str(root))[1]
    # a listed stage that is still there but moved: refused
    key2 = "card arima-fit.card %s#%d" % (second["stage"], sum(json.loads(x)["stage"] == second["stage"]
                                                               for x in lines[1:-2]))
    retired.write_text(retired.read_text() + key2 + " : a test's retirement\n")
    rewrite_card(card, lambda rec: dict(rec, sha256="0" * 64) if rec["stage"] == second["stage"] else rec)
    assert profile_lock.write(str(root)) == 1


def test_rewritten_golden_file_is_a_breach(tmp_path):
    root = copy_tree(tmp_path)
    golden = root / "tests/fuzz/corpus/model/gp-v2.sbm"
    data = bytearray(golden.read_bytes())
    data[-1] ^= 1
    golden.write_bytes(bytes(data))
    found = profile_lock.breaches(str(root))
    assert len(found) == 1 and "gp-v2.sbm" in found[0]


def test_card_of_another_profile_is_a_breach(tmp_path):
    root = copy_tree(tmp_path)
    card = root / "fixtures/cards/kde-fit.card"
    lines = card.read_text().splitlines()
    head = json.loads(lines[0])
    head["profile"] = "sb-identical-v0"
    card.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    found = profile_lock.breaches(str(root))
    assert any("kde-fit.card was recorded under sb-identical-v0" in b for b in found)


def test_additions_pass_and_extend_the_lock(tmp_path):
    root = copy_tree(tmp_path)
    card = root / "fixtures/cards/kde-fit.card"
    with card.open("a") as f:
        f.write(json.dumps({"i": 9999, "stage": "appended.stage", "dtype": "u8", "count": 1,
                            "sha256": "1" * 64}) + "\n")
    shutil.copy(card, root / "fixtures/cards/new-fixture.card")
    shutil.copy(root / "tests/fuzz/corpus/model/gp-v2.sbm", root / "tests/fuzz/corpus/model/new-v2.sbm")
    assert profile_lock.breaches(str(root)) == []
    before = len(profile_lock.read_lock(str(root))[1])
    assert profile_lock.write(str(root)) == 0
    after = profile_lock.read_lock(str(root))[1]
    assert "card kde-fit.card appended.stage#0" in after
    assert "file tests/fuzz/corpus/model/new-v2.sbm" in after
    assert len(after) > before
    assert profile_lock.breaches(str(root)) == []


def test_bump_without_new_lock_is_a_breach_and_write_relocks(tmp_path):
    root = copy_tree(tmp_path)
    header = root / "include/samebits.h"
    want = profile_lock.header_profile(str(root))
    bumped = want[:-1] + str(int(want[-1]) + 1)
    header.write_text(header.read_text().replace('"%s"' % want, '"%s"' % bumped, 1))
    found = profile_lock.breaches(str(root))
    assert len(found) == 1 and "after a bump" in found[0]
    # the cards are still of the old profile: write refuses until they are re-recorded
    assert profile_lock.write(str(root)) == 1
    for card in (root / "fixtures/cards").glob("*.card"):
        lines = card.read_text().splitlines()
        head = json.loads(lines[0])
        head["profile"] = bumped
        card.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    rewrite_card(root / "fixtures/cards/gp-fit.card", lambda rec: dict(rec, sha256="2" * 64))
    assert profile_lock.write(str(root)) == 0
    assert profile_lock.read_lock(str(root))[0] == bumped
    assert profile_lock.breaches(str(root)) == []
