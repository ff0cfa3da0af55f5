#!/usr/bin/env python3
"""evidence_layout.py: the one naming scheme of evidence folders, and whether a
folder's recorded sources still match the tree (format: evidence/README.md).

A folder is evidence/<backend>/<date>-<machine>-<families>-<commit7>[-N]/:
the date of the run (UTC, as in its summary.json), the machine that ran it
(x86_64, aarch64, s390x, pocl, h200: lower case, no dash), what it ran (`all`
when it verified every pinned fixture, else its families joined by `+`, as in
profile+gbdt), the first seven digits of the recorded commit, and -2, -3 ... for
another run of the same key on the same day. The fields are split by dashes and
never contain one, so a name reads back one way only.

Freshness: a run proves the bits of the sources it was built from, and those are
named with their SHA-256 in the folder's sources.sha256 (`sha256sum` output,
paths relative to the repository root). A folder is
  fresh       when every listed file exists in the tree with the listed hash,
  stale       when any listed file changed or no longer exists,
  unverified  when it has no sources.sha256, lists nothing, or has a line that
              is not a hash and a relative path (it cannot say what it ran).
Only fresh evidence counts as a pass in the support matrix. Python 3 stdlib only.
"""
import hashlib
import os
import re

NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([a-z0-9_]+)-([a-z0-9]+(?:\+[a-z0-9]+)*)-([0-9a-f]{7})"
                  r"(?:-([2-9]|[1-9][0-9]+))?$")
# One line of `sha256sum` output: the digest, a space, then a space (text mode)
# or an asterisk (binary mode), then the path.
SHA_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
SOURCES = "sources.sha256"


def folder_name(date, machine, families, commit, n=1):
    """The scheme's name of a run (families: 'all' or a list of family names)."""
    fam = families if isinstance(families, str) else "+".join(families)
    name = f"{date}-{machine}-{fam}-{commit[:7]}" + (f"-{n}" if n > 1 else "")
    if not NAME.match(name):
        raise ValueError(f"'{name}' does not fit the evidence folder scheme (evidence/README.md)")
    return name


def parse_name(name):
    """{date, machine, families, commit7, n} of a folder name, or None when it
    does not fit the scheme."""
    m = NAME.match(name)
    if not m:
        return None
    return {"date": m.group(1), "machine": m.group(2), "families": m.group(3), "commit7": m.group(4),
            "n": int(m.group(5) or 1)}


def name_problems(name, summary):
    """What is wrong with a folder's name given its summary.json (empty: nothing)."""
    p = parse_name(name)
    if p is None:
        return [f"'{name}' does not fit <date>-<machine>-<families>-<commit7>[-N]"]
    out = []
    if summary.get("date") and p["date"] != summary["date"]:
        out.append(f"named for {p['date']} but summary.json says {summary['date']}")
    if summary.get("commit") and p["commit7"] != summary["commit"][:7]:
        out.append(f"named for commit {p['commit7']} but summary.json says {summary['commit'][:7]}")
    return out


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def read_sources(folder):
    """[(digest, path)] from FOLDER/sources.sha256; raises ValueError with the
    reason when the file is missing, empty or has a line that is not a digest and
    a relative path inside the repository."""
    path = os.path.join(folder, SOURCES)
    if not os.path.exists(path):
        raise ValueError(f"no {SOURCES}")
    entries = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f.read().splitlines(), 1):
            m = SHA_LINE.match(line)
            if not m:
                raise ValueError(f"{SOURCES} line {i} is not a digest and a path: {line[:60]!r}")
            rel = m.group(2)
            parts = rel.replace("\\", "/").split("/")
            if rel.startswith("/") or ".." in parts:
                raise ValueError(f"{SOURCES} line {i} names a path outside the repository: {rel}")
            entries.append((m.group(1), rel))
    if not entries:
        raise ValueError(f"{SOURCES} lists no file")
    return entries


def freshness(root, folder):
    """{'state': 'fresh' | 'stale' | 'unverified', 'total', 'changed', 'missing',
    'reason'} of an evidence folder against the tree at ROOT."""
    try:
        entries = read_sources(folder)
    except ValueError as e:
        return {"state": "unverified", "total": 0, "changed": [], "missing": [], "reason": str(e)}
    changed, missing = [], []
    for digest, rel in entries:
        p = os.path.join(root, rel)
        if not os.path.isfile(p):
            missing.append(rel)
        elif sha256_of(p) != digest:
            changed.append(rel)
    state = "stale" if changed or missing else "fresh"
    return {"state": state, "total": len(entries), "changed": changed, "missing": missing, "reason": None}


def sources_sha256(root, paths):
    """sha256sum-style text for PATHS (relative to ROOT) as they are in the tree."""
    return "".join(f"{sha256_of(os.path.join(root, p))}  {p}\n" for p in paths)


def warn_name(folder, summary):
    """Prints to stderr what is wrong with the name of FOLDER when it sits in
    evidence/<backend>/ (a device's scratch folder is not judged). The summary
    scripts call it, so a folder unpacked under a name off the scheme is told
    at once rather than at `make test`."""
    folder = os.path.abspath(folder)
    if os.path.basename(os.path.dirname(os.path.dirname(folder))) != "evidence":
        return
    import sys
    for p in name_problems(os.path.basename(folder), summary):
        print(f"warning: {folder}: {p} (evidence/README.md, Layout)", file=sys.stderr)
