#!/usr/bin/env python3
"""Every function the public headers declare returns an sb_status or says why not.

The rule, mechanical so that a script can hold the headers to it:
  - each `SB_API` declaration, and each function-pointer typedef (a callback the
    library calls), is a function whose return type is read from the text;
  - one returning `sb_status` passes;
  - any other must sit directly under a comment (the comment's last line is the
    line just above the declaration) that contains the marker "Not a status:"
    followed by the reason, in words;
  - a comment carrying the marker above a function that does return sb_status is
    stale, and fails too, so the marker keeps meaning what it says.

Usage: check_headers.py [HEADER...]   (default: include/*.h of this tree)
Prints one line per declaration that breaks the rule; exit status 0 if none,
1 otherwise, 2 if a header holds no declaration at all (a parse gone wrong).
"""
import glob
import os
import re
import sys

MARKER = "Not a status:"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# `SB_API <return type> <name>(` or `typedef <return type> (*<name>)(`.
_API = re.compile(r"^\s*SB_API\s+(?P<ret>[^;(]*?)\s*\b(?P<name>sb_\w+)\s*\(")
_CALLBACK = re.compile(r"^\s*typedef\s+(?P<ret>[^;(]*?)\s*\(\s*\*\s*(?P<name>sb_\w+)\s*\)\s*\(")


class Decl:
    def __init__(self, header, line, name, ret, comment):
        self.header, self.line, self.name, self.ret, self.comment = header, line, name, ret, comment

    @property
    def returns_status(self):
        return self.ret == "sb_status"

    def where(self):
        return "%s:%d: %s" % (os.path.relpath(self.header, ROOT), self.line, self.name)


def _comment_above(lines, i):
    """The comment block whose last line is lines[i - 1], as one string ("" if none)."""
    j = i - 1
    if j < 0 or not lines[j].rstrip().endswith("*/"):
        return ""
    while j >= 0 and "/*" not in lines[j]:
        j -= 1
    return " ".join(l.strip() for l in lines[max(j, 0):i])


def declarations(header):
    """Every function declaration of header (SB_API ones and callback typedefs)."""
    with open(header) as f:
        lines = f.read().split("\n")
    out = []
    for i, text in enumerate(lines):
        if text.lstrip().startswith("#"):
            continue  # the SB_API macro's own definition
        m = _API.match(text) or _CALLBACK.match(text)
        if m:
            ret = " ".join(m.group("ret").split())
            out.append(Decl(header, i + 1, m.group("name"), ret, _comment_above(lines, i)))
        elif re.match(r"^\s*SB_API\b", text):
            # SB_API on something this parser does not read as a function: say so
            # rather than let it pass unchecked.
            out.append(Decl(header, i + 1, text.strip(), "<not a function>", ""))
    return out


def problems(decls):
    bad = []
    for d in decls:
        if d.ret == "<not a function>":
            bad.append("%s: SB_API on a declaration that is not a function" % d.where())
            continue
        has_marker = MARKER in d.comment
        if d.returns_status:
            if has_marker:
                bad.append("%s: returns sb_status but its comment says '%s'" % (d.where(), MARKER))
            continue
        if not has_marker:
            bad.append("%s: returns '%s', not sb_status, and the comment directly above it does not "
                       "say why ('%s' and a reason)" % (d.where(), d.ret, MARKER))
            continue
        reason = d.comment.split(MARKER, 1)[1].replace("*/", " ").replace("*", " ")
        if len(reason.split()) < 3:
            bad.append("%s: '%s' is not followed by a reason" % (d.where(), MARKER))
    return bad


def main(argv):
    headers = argv[1:] or sorted(glob.glob(os.path.join(ROOT, "include", "*.h")))
    status = 0
    for h in headers:
        decls = declarations(h)
        if not decls:
            print("%s: no declarations found" % h)
            return 2
        for line in problems(decls):
            print(line)
            status = 1
        n_other = sum(not d.returns_status for d in decls)
        print("%s: %d functions, %d return sb_status, %d say why not" %
              (os.path.relpath(h, ROOT), len(decls), len(decls) - n_other, n_other), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
