#!/usr/bin/env python3
"""The profile lock: a numerical change must bump the profile (DESIGN.md s. 1).

fixtures/cards/PROFILE.lock names the numeric profile and, under it, every
stage of every reference card (fixtures/cards/*.card: tag, dtype, count,
digest) and the digest of every golden model file (tests/data/models,
tests/fuzz/corpus/model). While the profile stays the same, those entries are
frozen: a stage may be added, a card or golden file may be added, but a
locked stage whose digest, dtype or count moves, or that disappears, is a
numerical change made without a bump, and `check` fails naming it.

One exception, written down where it is made: a fixture case that recorded a
refusal stops being one when the thing refused is built (a refused metric
becomes a metric). Its stages then cannot stay, and no number of any
computation moved. fixtures/cards/PROFILE.retired lists such card stages, a
line each, `KEY : why` (KEY as the lock writes it); `write` drops a listed
stage that is gone from the cards. A listed stage that is still there, or a
golden file, is not retirable, and a moved stage never is.

  tools/profile_lock.py check [--root DIR]   exit 0, or 1 with every breach listed
  tools/profile_lock.py write [--root DIR]   extend the lock with what is new; under
                                             the same profile it refuses to change a
                                             locked entry; after a bump (the header's
                                             SB_PROFILE_VERSION differs from the lock's)
                                             it writes the lock afresh

The lock is text, one entry a line, sorted, so a bump's diff says what moved.
"""
import argparse
import hashlib
import json
import os
import re
import sys

LOCK = os.path.join("fixtures", "cards", "PROFILE.lock")
RETIRED = os.path.join("fixtures", "cards", "PROFILE.retired")
GOLDEN_DIRS = (os.path.join("tests", "data", "models"), os.path.join("tests", "fuzz", "corpus", "model"))


def header_profile(root):
    """The profile the sources implement: SB_PROFILE_VERSION in include/samebits.h."""
    with open(os.path.join(root, "include", "samebits.h"), encoding="utf-8") as f:
        m = re.search(r'#define\s+SB_PROFILE_VERSION\s+"([^"]+)"', f.read())
    if not m:
        raise SystemExit("profile_lock: SB_PROFILE_VERSION not found in include/samebits.h")
    return m.group(1)


def card_entries(root):
    """Every stage of every card as {key: value}. A key is 'card NAME STAGE#k'
    (k counts earlier stages of the same tag in that card, so a repeated tag
    keeps its place); the value 'dtype count sha256'. Each card's first line
    gives its profile, returned beside the entries."""
    out, profiles = {}, {}
    d = os.path.join(root, "fixtures", "cards")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".card"):
            continue
        seen = {}
        with open(os.path.join(d, name), encoding="utf-8") as f:
            for n, line in enumerate(f):
                line = line.strip()
                if not line:
                    continue
                rec = json.loads(line)
                if n == 0:
                    profiles[name] = rec.get("profile")
                    continue
                tag = rec["stage"]
                k = seen.get(tag, 0)
                seen[tag] = k + 1
                out["card %s %s#%d" % (name, tag, k)] = "%s %s %s" % (rec["dtype"], rec["count"], rec["sha256"])
    return out, profiles


def golden_entries(root):
    """The sha256 of every golden model file, keyed 'file PATH'."""
    out = {}
    for rel in GOLDEN_DIRS:
        d = os.path.join(root, rel)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".sbm"):
                with open(os.path.join(d, name), "rb") as f:
                    out["file %s/%s" % (rel, name)] = hashlib.sha256(f.read()).hexdigest()
    return out


def current(root):
    cards, profiles = card_entries(root)
    cards.update(golden_entries(root))
    return cards, profiles


def read_lock(root):
    """(profile, {key: value}) from the lock, or (None, {}) when there is none."""
    path = os.path.join(root, LOCK)
    if not os.path.exists(path):
        return None, {}
    profile, entries = None, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("profile "):
                profile = line.split(" ", 1)[1]
                continue
            key, _, value = line.rpartition(" = ")
            entries[key] = value
    return profile, entries


def read_retired(root):
    """{key: why} of the stages retired under PROFILE.retired (empty when there is none)."""
    path = os.path.join(root, RETIRED)
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, sep, why = line.partition(" : ")
            if not sep or not why.strip() or not key.startswith("card "):
                raise SystemExit("profile_lock: %s line %d: 'card NAME STAGE#k : why' expected" % (RETIRED, n))
            out[key] = why.strip()
    return out


def breaches(root):
    """Every way the tree breaks the lock, as sentences (empty: it holds)."""
    want = header_profile(root)
    locked_profile, locked = read_lock(root)
    if locked_profile is None:
        return ["no lock: %s is missing (tools/profile_lock.py write)" % LOCK]
    out = []
    if locked_profile != want:
        out.append("the lock is of %s and the sources implement %s: after a bump, run "
                   "tools/profile_lock.py write" % (locked_profile, want))
        return out
    have, profiles = current(root)
    for name, p in sorted(profiles.items()):
        if p != want:
            out.append("fixtures/cards/%s was recorded under %s, not %s" % (name, p, want))
    for key, value in sorted(locked.items()):
        now = have.get(key)
        if now is None:
            out.append("%s: locked under %s and gone" % (key, want))
        elif now != value:
            out.append("%s: moved under %s (locked %s, now %s): a numerical change needs a profile bump"
                       % (key, want, value, now))
    return out


def write(root):
    want = header_profile(root)
    locked_profile, locked = read_lock(root)
    have, profiles = current(root)
    retired = read_retired(root)
    if locked_profile == want:
        moved = [k for k, v in locked.items() if have.get(k) != v and not (k in retired and k not in have)]
        if moved:
            for k in sorted(moved):
                print("profile_lock: refused: %s would change under %s" % (k, want), file=sys.stderr)
            print("profile_lock: a locked entry moves only with a profile bump (include/samebits.h "
                  "SB_PROFILE_VERSION, docs/numeric-profile.md 'Versions')", file=sys.stderr)
            return 1
    stale = sorted(n for n, p in profiles.items() if p != want)
    if stale:
        print("profile_lock: refused: cards not recorded under %s: %s (make reference-cards)"
              % (want, ", ".join(stale)), file=sys.stderr)
        return 1
    tmp = os.path.join(root, LOCK + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# tools/profile_lock.py: the stages and golden files frozen under this profile\n")
        f.write("profile %s\n" % want)
        for key in sorted(have):
            f.write("%s = %s\n" % (key, have[key]))
    os.replace(tmp, os.path.join(root, LOCK))
    added = len([k for k in have if k not in locked]) if locked_profile == want else len(have)
    dropped = len([k for k in locked if k not in have]) if locked_profile == want else 0
    print("profile_lock: %s: %d entries (%d new, %d retired)" % (want, len(have), added, dropped))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("check", "write"))
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args(argv)
    if a.command == "write":
        return write(a.root)
    found = breaches(a.root)
    for b in found:
        print("profile_lock: " + b, file=sys.stderr)
    if found:
        print("profile_lock: %d breach(es)" % len(found), file=sys.stderr)
        return 1
    print("profile_lock: %s holds" % header_profile(a.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
