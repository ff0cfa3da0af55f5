#!/usr/bin/env python3
"""support_matrix.py [--check] [--root DIR]: docs/SUPPORT_MATRIX.md from evidence.

Reads evidence/*/*/summary.json (format: evidence/README.md) and the pinned
fixtures (fixtures/cards/NAME.card), and writes one cell per family x leg: the
newest recorded run of that leg that ran any fixture of the family, with its
commit, toolchain and date. A leg with no such run is "pending": nothing is
inferred from other legs, other families or other folders. A folder without a
summary.json is listed as not counted.

A run proves the bits of the sources it ran, not of the tree as it is now: each
folder's sources.sha256 is checked against the files in this tree
(tools/evidence_layout.py), and a cell whose run lists a changed or missing file
says **stale**, one whose run lists no sources says **unverified**; only a fresh
run's pass reads "pass". So the generated file depends on the source tree too,
and a commit that changes a listed source must regenerate it.

--check: exit 1 (printing a diff) if the committed file differs from what this
script generates, or if evidence/ holds a folder that is the newest run of no
cell and the newest record of no arm (superseded: it belongs to git history,
`git rm -r` it) or whose name does
not fit the scheme; CI runs it (make support-matrix-check). Python 3 stdlib
only; the output depends on the files alone (no clock, no host, no git).
"""
import difflib
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evidence_layout  # noqa: E402

OUT = os.path.join("docs", "SUPPORT_MATRIX.md")
# Columns in this order first; any other leg found in evidence follows, sorted.
KNOWN_LEGS = [("x86_64", "x86-64"), ("aarch64", "aarch64"), ("s390x", "s390x (big-endian)"),
              ("cuda", "CUDA (NVIDIA)"), ("opencl", "OpenCL on PoCL (CPU)"),
              ("opencl-nvidia", "OpenCL (NVIDIA driver)"),
              ("wheel-x86_64", "x86-64 (installed wheel)"), ("wheel-aarch64", "aarch64 (installed wheel)"),
              ("wheel-cuda", "CUDA (installed wheel)"), ("wheel-opencl-nvidia", "OpenCL NVIDIA (installed wheel)")]


def column_of(leg):
    """The matrix column of one recorded leg. OpenCL runs go to the column of
    the implementation that ran them, whatever key the recording tool wrote:
    the `opencl` column holds PoCL only, NVIDIA's driver has its own, and any
    other OpenCL implementation gets a column named by its device."""
    key = leg["leg"]
    if key not in ("opencl", "opencl-nvidia"):
        return key
    words = (leg.get("label", "") + " " + leg.get("device", "")).lower()
    if "nvidia" in words:
        return "opencl-nvidia"
    if "pocl" in words:
        return "opencl"
    return "opencl-" + (leg.get("device") or "unknown").split(":")[-1].strip().replace(" ", "-")
FAMILY_OF_PREFIX = {"profile": "profile", "logit": "logit", "gbdt": "gbdt", "forest": "forest", "linalg": "linalg",
                    "linear": "linear", "kmeans": "kmeans", "knn": "knn", "dbscan": "dbscan", "agglomerative": "agglomerative",
                    "spectral": "spectral", "kde": "kde", "svm": "svm", "ets": "ets", "arima": "arima", "umap": "umap", "gp": "gp", "mlp": "mlp", "lm": "lm"}
FAMILY_TITLE = {"profile": "profile core (rng, elementary functions, reductions)",
                "logit": "logistic training steps", "gbdt": "gradient boosting",
                "forest": "random forests and Extra Trees",
                "linalg": "the linear-algebra core (matrix product, reductions and selection, factorizations and eigenvalues)",
                "linear": "linear models and PCA (least squares, ridge, lasso, elastic net, logistic regression, PCA)",
                "kmeans": "k-means (every CPU leg, PoCL, CUDA and NVIDIA OpenCL)",
                "knn": "nearest neighbors (on a GPU the screen runs on the device, the exact distances on the host)",
                "dbscan": "DBSCAN (on a GPU its neighborhoods' screen runs on the device)",
                "agglomerative": "agglomerative clustering (on a GPU its distance matrix runs on the device, the merges on the host)",
                "spectral": "spectral clustering (its eigenvectors and k-means on the device named)",
                "kde": "kernel density (on a GPU its kernel sums run on the device, the logs and the draws on the host)",
                "svm": "support vector machines (float64 kernel values; on a GPU the kernel rows and decision sums run on the device, the SMO's choices on the host)",
                "ets": "exponential smoothing (float64; on a GPU one work-item a series, the host's own fit)",
                "arima": "ARIMA (float64; on a GPU one work-item a series, the host's own fit: kernels/arima.h, one text)",
                "umap": "UMAP (the sequential epochs on the host; optimize=batched's epochs on a GPU, the rest on the host)",
                "gp": "gaussian process regression (float64; on a GPU the kernel matrix, Cholesky, inverses and gradient terms on the device, the optimizer on the host)",
                "mlp": "multi-layer perceptrons (on a GPU the whole fit runs on the device: the identical GEMM and the network kernels)",
                "lm": "the byte-level language model (on a GPU the training step runs on the device: the identical GEMM and the network kernels)"}


def family(fixture):
    return FAMILY_OF_PREFIX.get(fixture.split("-")[0], fixture.split("-")[0])


def fixtures(root):
    names = []
    for p in sorted(glob.glob(os.path.join(root, "fixtures", "cards", "*.card"))):
        b = os.path.basename(p)[:-len(".card")]
        if not b.endswith(".inputs"):
            names.append(b)
    return names


def load_runs(root):
    """(runs, folders, unsummarized): one run per leg of each summary.json, the
    facts of each counted folder (its summary, freshness and name problems) by
    relative path, and the folders without a summary.json."""
    runs, folders, unsummarized = [], {}, []
    for folder in sorted(glob.glob(os.path.join(root, "evidence", "*", "*"))):
        if not os.path.isdir(folder):
            continue
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        path = os.path.join(folder, "summary.json")
        if not os.path.exists(path):
            unsummarized.append(rel)
            continue
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
        if s.get("samebits_evidence") != 1:
            raise SystemExit(f"{rel}/summary.json: not a samebits_evidence 1 summary")
        fresh = evidence_layout.freshness(root, folder)
        folders[rel] = {"summary": s, "fresh": fresh,
                        "name_problems": evidence_layout.name_problems(os.path.basename(folder), s)}
        for leg in s.get("legs", []):
            runs.append({"folder": rel, "date": s["date"], "when": s.get("date_utc", s["date"]),
                         "commit": s["commit"], "leg": column_of(leg),
                         "label": leg.get("label", leg["leg"]), "emulated": bool(leg.get("emulated")),
                         "toolchain": leg.get("toolchain", "unknown"), "threads": leg.get("threads"),
                         "fixtures": leg.get("fixtures", {}), "arms": s.get("arms", []),
                         "controls": s.get("controls", []), "fresh": fresh})
    return runs, folders, unsummarized


def sources_phrase(fresh):
    """How a folder's sources compare with the tree, in a few words."""
    if fresh["state"] == "unverified":
        return fresh["reason"]
    n = len(fresh["changed"]) + len(fresh["missing"])
    return f"{n} of {fresh['total']} sources changed" if n else f"{fresh['total']} sources unchanged"


def cell(runs, leg, fam, current):
    """(text, detail or None) for one family x leg."""
    mine = [r for r in runs if r["leg"] == leg and any(family(n) == fam for n in r["fixtures"])]
    if not mine:
        return "pending", None
    r = max(mine, key=lambda r: (r["when"], r["folder"]))
    ran = {n: v for n, v in r["fixtures"].items() if family(n) == fam}
    want = [n for n in current if family(n) == fam]
    fails = sorted(n for n, v in ran.items() if v == "fail")
    refused = sorted(n for n, v in ran.items() if v == "refused")
    missing = sorted(n for n in want if n not in ran)
    npass = sum(v == "pass" for v in ran.values())
    if fails:
        word = "**FAIL**"
    elif refused:
        word = "refused"
    elif missing:
        word = "partial"
    else:
        word = "pass"
    emu = ", emulated" if r["emulated"] else ""
    verdict = f"{word} {npass}/{len(want)}{emu}"
    # The verdict holds for the sources the run recorded; when those are not
    # the tree's (or the run did not say which they were), the cell says so
    # first and keeps the old verdict only as what the run found.
    state = r["fresh"]["state"]
    if state == "fresh":
        text = verdict
    else:
        text = f"**{state}** ({sources_phrase(r['fresh'])}; was {verdict})"
    text += f"<br>`{r['commit'][:7]}` {r['date']}"
    detail = {"leg": leg, "family": fam, "run": r, "fails": fails, "refused": refused, "missing": missing,
              "pass": sorted(n for n, v in ran.items() if v == "pass"), "state": state}
    return text, detail


def layout(root):
    """(columns, families, runs, folders, unsummarized, cells) where cells maps
    (family, leg) to cell()'s (text, detail)."""
    current = fixtures(root)
    runs, folders, unsummarized = load_runs(root)
    legs = [k for k, _ in KNOWN_LEGS] + sorted({r["leg"] for r in runs} - {k for k, _ in KNOWN_LEGS})
    fams = [f for f in FAMILY_TITLE if any(family(n) == f for n in current)]
    fams += sorted({family(n) for n in current} - set(fams))
    cells = {(fam, leg): cell(runs, leg, fam, current) for fam in fams for leg in legs}
    return legs, fams, runs, folders, unsummarized, cells, current


def _arm_names(summary):
    return {a["arm"] for a in summary.get("arms", [])}


def _when(summary):
    return summary.get("date_utc", summary["date"])


def problems(root):
    """What evidence/ must not hold: folders that are the newest run of no cell
    and the newest record of no arm (superseded; history keeps them), and names
    outside the scheme. A folder whose cells a newer run took still holds the
    newest record of an arm that no newer folder ran (an identity-only run
    records no arm), and stays."""
    _, _, _, folders, _, cells, _ = layout(root)
    used = {d["run"]["folder"] for _, d in cells.values() if d}
    for rel, f in folders.items():
        mine, when = _arm_names(f["summary"]), _when(f["summary"])
        newer = set()
        for other, g in folders.items():
            if other != rel and _when(g["summary"]) > when:
                newer |= _arm_names(g["summary"])
        if mine - newer:
            used.add(rel)
    out = []
    for rel, f in sorted(folders.items()):
        if rel not in used:
            out.append(f"{rel}: superseded (the newest run of no family x leg): git rm -r {rel}")
        for p in f["name_problems"]:
            out.append(f"{rel}: name: {p} (evidence/README.md, Layout)")
    return out


def generate(root):
    legs, fams, runs, folders, unsummarized, cells, current = layout(root)
    titles = dict(KNOWN_LEGS)
    out = ["# Support matrix", "",
           "Generated by `tools/support_matrix.py` from `evidence/*/*/summary.json` and the sources each",
           "run recorded; do not edit by hand (`make support-matrix` rewrites it, and `make test` fails",
           "if it differs, which includes a commit that changes a source some run recorded).", "",
           "Each cell is the newest recorded run of that leg for that family: `pass N/M` (N of the",
           "family's M pinned fixtures identical to their reference cards at every thread count",
           "recorded), `partial` (all that ran passed, but not every fixture ran), `refused`, `FAIL`,",
           "or `pending` (no recorded run: nothing is inferred). Emulated legs ran under qemu-user.",
           "A run proves the bits of the sources it ran: **stale** means a file its `sources.sha256`",
           "lists has changed or gone since (the verdict it found follows `was`), **unverified** that",
           "it recorded no sources; neither counts as a pass until the leg is recorded again.",
           "How to record a leg: [evidence/README.md](../evidence/README.md).", "",
           "| family | " + " | ".join(titles.get(l, l) for l in legs) + " |",
           "| --- | " + " | ".join("---" for _ in legs) + " |"]
    details = []
    for fam in fams:
        row = []
        for leg in legs:
            text, d = cells[(fam, leg)]
            row.append(text)
            if d:
                details.append(d)
        out.append(f"| {fam} ({sum(family(n) == fam for n in current)} fixtures) | " + " | ".join(row) + " |")
    out += ["", "Families: " + "; ".join(f"`{f}`: {FAMILY_TITLE.get(f, f)}" for f in fams) + ".", "",
            "## Cells", ""]
    for d in details:
        r = d["run"]
        out.append(f"- **{d['family']} on {titles.get(d['leg'], d['leg'])}**: [{r['folder']}](../{r['folder']}), "
                   f"commit `{r['commit']}`, {r['date']}; {r['label']}; toolchain: {r['toolchain']}"
                   + (f"; threads {', '.join(map(str, r['threads']))}" if r["threads"] else "")
                   + ("." if d["state"] == "fresh" else f"; **{d['state']}**: {sources_phrase(r['fresh'])}."))
        out.append(f"  Identical: {', '.join(d['pass']) or 'none'}."
                   + (f" Not identical: {', '.join(d['fails'])}." if d["fails"] else "")
                   + (f" Refused: {', '.join(d['refused'])}." if d["refused"] else "")
                   + (f" Not run in this record: {', '.join(d['missing'])}." if d["missing"] else ""))
    out += ["", "## Sources of each folder", "",
            "`sources.sha256` of each folder against this tree: the files changed or gone since the run.", ""]
    for rel, f in sorted(folders.items()):
        fr = f["fresh"]
        line = f"- [{rel}](../{rel}): {fr['state']}, {sources_phrase(fr)}"
        if fr["changed"]:
            line += "; changed: " + ", ".join(fr["changed"])
        if fr["missing"]:
            line += "; gone: " + ", ".join(fr["missing"])
        out.append(line + ".")
    out += ["", "## Separating arms in the evidence", "",
            "One row per arm of each folder: caught when at least one fixture parted from its reference "
            "under it (a refusal or an error is no catch), with every fixture that parted and its first "
            "differing stage.", "",
            "| folder | arm | caught | first differing stage |", "| --- | --- | --- | --- |"]
    seen = set()
    for r in sorted(runs, key=lambda r: r["folder"]):
        if r["folder"] in seen:
            continue
        seen.add(r["folder"])
        for name, entries in arm_rows(r["arms"]):
            caught, where = arm_cells(entries)
            out.append(f"| {r['folder']} | {name} | {caught} | {where} |")
    controls = [(r["folder"], c) for r in sorted(runs, key=lambda r: r["folder"]) for c in r["controls"]]
    if controls:
        out += ["", "## Controls in the evidence", "",
                "Build options and paths that must change no bit (a control holds when every fixture stayed "
                "identical under it); they are not arms and count as no catch.", "",
                "| folder | control | holds | why |", "| --- | --- | --- | --- |"]
        seen = set()
        for folder, c in controls:
            if (folder, c["control"]) in seen:
                continue
            seen.add((folder, c["control"]))
            out.append(f"| {folder} | {c['control']} | {'yes' if c.get('holds') else '**no**'} | {c.get('note', '-')} |")
    if unsummarized:
        out += ["", "## Folders not counted (no summary.json)", ""] + [f"- {u}" for u in unsummarized]
    return "\n".join(out) + "\n"


def arm_rows(arms):
    """A folder's arm entries (one per arm, or one per arm and fixture as the
    device recorders write them) grouped by arm, in first-seen order."""
    order, by = [], {}
    for a in arms:
        if a["arm"] not in by:
            order.append(a["arm"])
            by[a["arm"]] = []
        by[a["arm"]].append(a)
    return [(n, by[n]) for n in order]


def arm_cells(entries):
    """The caught and where cells of one arm's row: yes when any entry caught
    it (**no** when none did, "not run" when none ran), and every fixture that
    parted with its first differing stage."""
    states = [e.get("caught") for e in entries]
    caught = "yes" if True in states else "**no**" if False in states else "not run"
    where = "; ".join((e.get("fixture") + ": " if e.get("fixture") else "") + (e.get("stage") or "-")
                      for e in entries if e.get("caught")) or "-"
    return caught, where


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    check = False
    while argv:
        a = argv.pop(0)
        if a == "--check":
            check = True
        elif a == "--root" and argv:
            root = argv.pop(0)
        else:
            print(__doc__.splitlines()[0], file=sys.stderr)
            return 2
    text = generate(root)
    path = os.path.join(root, OUT)
    if check:
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        bad = problems(root)
        for p in bad:
            print(f"evidence/ holds {p}")
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       path + " (committed)", path + " (generated)"))
            print(f"{OUT} is stale: run 'make support-matrix' and commit it")
            return 1
        if bad:
            return 1
        print(f"{OUT} matches the evidence and the sources")
        return 0
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    print(f"wrote {OUT}")
    for p in problems(root):
        print(f"warning: evidence/ holds {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
