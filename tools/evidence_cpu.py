#!/usr/bin/env python3
"""evidence_cpu.py [--out-root DIR] [LEG...]: record the legs CI runs on its CPU.
   evidence_cpu.py --sources-at COMMIT LEG: print the sources.sha256 of LEG's
   sources as they were at COMMIT (for a folder recorded before this script
   wrote one; evidence/README.md).

For each leg (x86_64 natively; aarch64 and s390x under qemu-user, labelled
emulated), from the builds `make legs` and `make arms` made:
  doctor.txt                  `samebits doctor`
  check-fixture.txt           `samebits check-fixture`
  verify-tN.txt, cards-tN/    `samebits verify --threads N --cards cards-tN` for N in 1, 2, 7
  arm-NAME.txt                `samebits verify` on each sabotage build of the leg (or, for
                              the arms in ARM_CHECKS, their own check on the real build
                              and on the arm)
  sources.sha256              SHA-256 of every tracked source the build reads
  summary.json                read from those outputs (evidence/README.md)
into evidence/cpu/<date>-<leg>-all-<commit7>/ (written under a temporary name
and renamed, so a failed run leaves no folder). A fixture passes on a leg only
if it is identical at every thread count. The run then removes the folders of
the same leg that it superseded (the newest run of no family x leg any more):
git history keeps them, and the removal is committed with the new folder.

Leg `opencl` (PoCL, the OpenCL implementation on this CPU): tools/opencl-check.sh
(profile-core through the OpenCL kernel source, and its two arms), then gradient
boosting on the OpenCL tree device (`samebits verify --family gbdt device=opencl
--cards cards-gbdt`, verify-gbdt.txt) and its arms (SAMEBITS_OPENCL_ARM=NAME,
arm-gbdt-NAME.txt), every forest fixture (verify-forest.txt) and its float-atomic
arm, every linalg fixture (verify-linalg.txt) and its float-atomic and gemm-fma
arms, every k-means fixture (verify-kmeans.txt) and its kmeans-ties arm, the
spectral fixture (verify-spectral.txt), the nearest-neighbors and DBSCAN fixtures
(verify-knn.txt, verify-dbscan.txt) and their knn-bound arm, the agglomerative
fixture (verify-agglomerative.txt) and its agglo-order arm, the explanation, kernel
density, SVM, MLP and GP fixtures with their arms, and the time series (verify-ets.txt,
verify-arima.txt: ets-sse-order, arima-device-order) and the byte language model
(verify-lm.txt: float-atomic, vendor-exp, contract, lm-attn-order), into
evidence/opencl/<date>-pocl-profile+gbdt+forest+linalg+linear+kmeans+spectral+knn+dbscan+agglomerative-<commit7>/:
opencl-check.txt, the cards, sources.sha256, summary.json. The gbdt arms
contract and mad-enable are expected to be inert on PoCL (docs/opencl.md); they
are recorded, not required to separate.
Python 3 stdlib only.
"""
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import evidence_layout  # noqa: E402
LEGS = {"x86_64": ("build", [], False), "aarch64": ("build-aarch64", ["qemu-aarch64"], True),
        "s390x": ("build-s390x", ["qemu-s390x"], True)}
ARMS = {"x86_64": ["libm-exp", "thread-chunks", "float-hist", "ties", "rng-order", "rank-ties", "forest-keys",
                   "gemm-order", "gemm-fma", "reduce-order", "topk-ties", "jacobi-order", "libm-log",
                   "libm-sigmoid", "forest-ties", "bin-key", "f64-conv", "refusal-downgrade", "nan-side", "lin-dot",
                   "kmeans-ties", "knn-ties", "knn-bound", "dbscan-border", "agglo-ties", "spectral-order", "kde-order", "svm-wss-ties",
                   "proba-recip", "mono-order", "dart-scale", "iforest-wdraw", "cat-ties", "float-allreduce", "ets-sse-order", "ets-auto-tie",
                   "arima-kalman-order", "umap-epoch-order", "umap-lane-deps", "umap-nnd-ties", "gp-chol-order", "mlp-grad-order", "lm-attn-order"],
        "aarch64": ["contract", "libm-log", "libm-sigmoid"],
        "s390x": ["contract", "excess-precision", "libm-log", "libm-sigmoid", "writer-endian"]}
# Arms whose check is not `samebits verify` on the fixtures (docs/verification.md,
# "The arms"): the program and arguments run on the real build (the control,
# which must pass the check) and on the arm (which must fail it), and how each
# outcome reads. writer-endian is recorded on s390x only: on a little-endian
# host its bytes are the right ones, so it cannot be caught there.
ARM_CHECKS = {
    # rule 1: the readers' number test (a decimal that float64 rounds onto a float32 midpoint)
    "f64-conv": {"exe": "sb_unit", "args": ["test_io_float_bits"], "fixture": "sb_unit",
                 "stage": "test_io_float_bits",
                 "control_ok": lambda rc, t: rc == 0 and "ok test_io_float_bits" in t,
                 "caught": lambda rc, t: rc == 1 and "FAIL test_io_float_bits" in t},
    # rule 8: the forest device's node keys (creation order instead of the data's)
    # show only where the device grower runs: cpu-batched, its host twin
    "forest-keys": {"exe": "samebits", "args": ["verify", "--threads", "2", "--family", "forest", "device=cpu-batched"],
                    "fixture": "forest (device=cpu-batched)", "stage": "the forest device's node order",
                    "control_ok": lambda rc, t: rc == 0 and "verify: PASS" in t,
                    "caught": lambda rc, t: rc == 1 and "verify: FAIL" in t},
    # rule 4: distributed=mpi's all-reduce (tools/mpi_identity_check.py runs mpirun on
    # the build it is given; its exit status says whether every rank count gave the
    # single process's model bytes)
    "float-allreduce": {"exe": "libsamebits_mpi.so", "script": "tools/mpi_identity_check.py",
                        "fixture": "LightGBM's binary example under mpirun -np 2, 3, 4",
                        "stage": "model bytes", "control_ok": lambda rc, t: rc == 0 and "identity: PASS" in t,
                        "caught": lambda rc, t: rc == 1 and "identity: FAIL" in t},
    # rule 10: a device this build lacks must be refused by name, never run on the CPU
    "refusal-downgrade": {"exe": "samebits", "args": ["verify", "--threads", "2", "gbdt-regression", "device=cuda"],
                          "fixture": "gbdt-regression", "stage": "device=cuda not refused",
                          "control_ok": lambda rc, t: rc == 1 and "REFUSED SB_ERR_BACKEND_UNAVAILABLE" in t,
                          "caught": lambda rc, t: rc == 0 and "REFUSED" not in t},
}
THREADS = (1, 2, 7)
# What decides the bits of a CPU leg: every tracked file its build reads (the
# library, the CLI, the flags in the Makefile, the reference cards it embeds
# and compares with, the embedding scripts), less the CUDA sources only nvcc
# compiles. A superset errs towards stale, never towards a pass it has not
# shown. PoCL's leg adds the script that builds and runs its profile program.
CPU_SOURCES = ["src", "include", "cli", "Makefile", "mk", "fixtures/cards", "tools/embed_cards.sh",
               "tools/embed_cl.sh"]
OPENCL_SOURCES = CPU_SOURCES + ["tools/opencl-check.sh"]
# The machine and families fields of each leg's folder name (evidence/README.md).
FOLDER_KEY = {"x86_64": ("x86_64", "all"), "aarch64": ("aarch64", "all"), "s390x": ("s390x", "all"),
              "opencl": ("pocl", ["profile", "gbdt", "forest", "linalg", "linear", "kmeans", "spectral", "knn", "dbscan",
                                  "agglomerative"])}
LINE = re.compile(r"^  (\S+)\s+(identical|DIFFERS|REFUSED|ERROR)\b(?:: differ at stage \d+: (\S+))?")


def run(prefix, exe, args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SAMEBITS_")}
    e.update(env or {})
    r = subprocess.run(prefix + [exe] + args, capture_output=True, text=True, cwd=ROOT, timeout=1800, env=e)
    return r.returncode, r.stdout + r.stderr


def verdicts(text):
    """fixture -> (verdict, first differing stage) from `samebits verify` output."""
    out = {}
    for ln in text.splitlines():
        m = LINE.match(ln)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def arm_entries(arm, rc, text):
    """The summary.json entries of one arm's verify run: one per fixture that
    parted from its reference (so the matrix shows every stage the arm reaches,
    e.g. contraction in the forest kernels beside profile-core's inputs), or one
    not-caught entry when none did. A refusal or an error is no catch."""
    parted = [(n, st) for n, (v, st) in verdicts(text).items() if v == "DIFFERS"]
    if rc == 1 and "verify: FAIL" in text and parted:
        return [{"arm": arm, "caught": True, "fixture": n, "stage": st} for n, st in parted]
    return [{"arm": arm, "caught": False, "fixture": None, "stage": None}]


def arms_caught(arms):
    """arm -> whether at least one of its entries caught it (None entries: not built)."""
    out = {}
    for a in arms:
        out[a["arm"]] = out.get(a["arm"], False) or bool(a["caught"])
    return out


def tool_version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        return "unknown"


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)


def source_list(leg, commit=None):
    """The tracked files that decide LEG's bits, in the tree (commit None) or at COMMIT."""
    paths = OPENCL_SOURCES if leg == "opencl" else CPU_SOURCES
    r = git("ls-tree", "-r", "--name-only", commit, "--", *paths) if commit else git("ls-files", "--", *paths)
    if r.returncode != 0:
        raise SystemExit(f"git could not list the sources: {r.stderr.strip()}")
    return sorted(p for p in r.stdout.splitlines() if not p.endswith(".cu"))


def sources_at(commit, leg):
    """sources.sha256 text of LEG's sources as they were at COMMIT (from git's objects)."""
    out = []
    for p in source_list(leg, commit):
        blob = subprocess.run(["git", "cat-file", "blob", f"{commit}:{p}"], capture_output=True, cwd=ROOT)
        if blob.returncode != 0:
            raise SystemExit(f"git has no {commit}:{p}")
        out.append(f"{hashlib.sha256(blob.stdout).hexdigest()}  {p}\n")
    return "".join(out)


def new_folder(out_root, leg, date, commit):
    """The scheme's folder for a run of LEG: a second run of the same key on one
    day gets -2, and so on (a folder is never rewritten)."""
    machine, families = FOLDER_KEY[leg]
    n = 1
    while True:
        folder = os.path.join(out_root, evidence_layout.folder_name(date, machine, families, commit, n))
        if not os.path.exists(folder):
            return folder
        n += 1


def write_sources(tmp, leg):
    with open(os.path.join(tmp, evidence_layout.SOURCES), "w", encoding="utf-8") as f:
        f.write(evidence_layout.sources_sha256(ROOT, source_list(leg)))


def record(leg, out_root, commit, now):
    date, date_utc = now.strftime("%Y-%m-%d"), now.strftime("%Y-%m-%dT%H:%M:%SZ")
    build, prefix, emulated = LEGS[leg]
    exe = os.path.join(ROOT, build, "samebits")
    if not os.path.exists(exe):
        raise SystemExit(f"{exe} is missing: run 'make legs' (and 'make arms') first")
    folder = new_folder(out_root, leg, date, commit)
    tmp = folder + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write_sources(tmp, leg)
    files = {}
    rc, doctor = run(prefix, exe, ["doctor", "--threads", "1"])
    files["doctor.txt"] = doctor
    rc_cf, cf = run(prefix, exe, ["check-fixture"])
    files["check-fixture.txt"] = cf
    results = {}
    for t in THREADS:
        cards = os.path.join(tmp, f"cards-t{t}")
        os.makedirs(cards)
        rc, text = run(prefix, exe, ["verify", "--threads", str(t), "--cards", cards])
        files[f"verify-t{t}.txt"] = text
        for name, (verdict, _) in verdicts(text).items():
            v = {"identical": "pass", "REFUSED": "refused"}.get(verdict, "fail")
            prev = results.get(name, "pass")
            results[name] = v if prev == "pass" else prev
    arms = []
    for arm in ARMS[leg]:
        aexe = os.path.join(ROOT, f"{build}-sabotage-{arm}", "samebits")
        if not os.path.exists(aexe):
            arms.append({"arm": arm, "caught": None, "stage": None, "note": "not built"})
            continue
        check = ARM_CHECKS.get(arm)
        if check and not os.path.exists(os.path.join(ROOT, f"{build}-sabotage-{arm}", check["exe"])):
            arms.append({"arm": arm, "caught": None, "stage": None, "note": "not built"})
            continue
        if check:
            # The control first: a check the real build fails catches nothing.
            if check.get("script"):  # a check script given the build folder to run
                check = dict(check, exe=check["script"], args=["--build", build])
                crc, ctext = run([sys.executable], os.path.join(ROOT, check["script"]), ["--build", build])
                rc, text = run([sys.executable], os.path.join(ROOT, check["script"]),
                               ["--build", f"{build}-sabotage-{arm}"])
            else:
                crc, ctext = run(prefix, os.path.join(ROOT, build, check["exe"]), check["args"])
                rc, text = run(prefix, os.path.join(ROOT, f"{build}-sabotage-{arm}", check["exe"]), check["args"])
            files[f"arm-{arm}.txt"] = (f"$ {check['exe']} {' '.join(check['args'])}   (real build)\n{ctext}\n"
                                       f"$ {check['exe']} {' '.join(check['args'])}   (arm {arm})\n{text}")
            control = check["control_ok"](crc, ctext)
            arms.append({"arm": arm, "caught": control and check["caught"](rc, text), "control": control,
                         "fixture": check["fixture"], "stage": check["stage"]})
            continue
        rc, text = run(prefix, aexe, ["verify", "--threads", "2"])
        files[f"arm-{arm}.txt"] = text
        arms += arm_entries(arm, rc, text)
    for name, text in files.items():
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
            f.write(text)
    facts = dict(ln.split(": ", 1) for ln in doctor.splitlines() if ": " in ln)
    toolchain = facts.get("compiler", "unknown") + " (" + facts.get("target", "?") + ")"
    if emulated:
        toolchain += "; " + tool_version([prefix[0], "--version"])
    summary = {
        "samebits_evidence": 1, "date": date, "date_utc": date_utc, "commit": commit, "source": "verify-t*.txt",
        "machine": tool_version(["uname", "-srm"]),
        "result": "pass" if results and all(v == "pass" for v in results.values())
        and rc_cf == 0 and all(arms_caught(arms).values()) else "fail",
        "legs": [{"leg": leg, "label": leg + (" under qemu-user (emulated)" if emulated else " (native)"),
                  "device": "qemu-user" if emulated else "this CPU", "emulated": emulated,
                  "toolchain": toolchain, "flags": facts.get("cflags", ""), "threads": list(THREADS),
                  "compared_with": "the reference cards", "fixtures": results,
                  "check_fixture": "pass" if rc_cf == 0 else "fail"}],
        "arms": arms,
    }
    with open(os.path.join(tmp, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
    os.rename(tmp, folder)
    npass = sum(v == "pass" for v in results.values())
    print(f"{os.path.relpath(folder, ROOT)}: {npass}/{len(results)} fixtures pass at threads "
          f"{','.join(map(str, THREADS))}; arms caught: {sum(arms_caught(arms).values())}/{len(arms_caught(arms))}; "
          f"result {summary['result']}")
    return folder, summary["result"] == "pass"


def record_opencl(out_root, commit, now):
    date, date_utc = now.strftime("%Y-%m-%d"), now.strftime("%Y-%m-%dT%H:%M:%SZ")
    folder = new_folder(out_root, "opencl", date, commit)
    tmp = folder + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write_sources(tmp, "opencl")
    rc, text = run([], "sh", ["tools/opencl-check.sh"])
    with open(os.path.join(tmp, "opencl-check.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    for card in ("profile-core.card", "profile-core-arm-fast-relaxed-math.card", "profile-core-arm-contract.card",
                 "profile-core-arm-vendor-exp.card"):
        src = os.path.join(ROOT, "build", "opencl", card)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(tmp, card))
    leg_ok = re.search(r"^leg: identical to fixtures/cards/profile-core.card$", text, re.M) is not None
    device = next((m.group(1) for m in re.finditer(r"^profile_core: (.+?): card build/opencl/profile-core\.card",
                                                   text, re.M)), "unknown device")
    arms = []
    for m in re.finditer(r"^arm (\S+): (differs, as it must: differ at stage \d+: (\S+)|FAILED)", text, re.M):
        arms.append({"arm": "opencl " + m.group(1), "caught": m.group(3) is not None, "fixture": "profile-core",
                     "stage": m.group(3)})
    pocl = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "pocl-opencl-icd"], capture_output=True,
                          text=True).stdout.strip() or "unknown"
    fixtures = {"profile-core": "pass" if leg_ok else "fail"}
    # Gradient boosting on the OpenCL tree device, and its arms.
    exe = os.path.join(ROOT, "build", "samebits")
    cache = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", os.path.join(ROOT, "build", "opencl", "pocl-cache"))}
    os.makedirs(cache["POCL_CACHE_DIR"], exist_ok=True)

    def verify_family(fam):
        """Every fixture of fam on device=opencl into cards-FAM/ and verify-FAM.txt;
        their verdicts into fixtures; whether all passed."""
        cards = os.path.join(tmp, f"cards-{fam}")
        os.makedirs(cards)
        rc_v, text = run([], exe, ["verify", "--family", fam, "--cards", cards, "device=opencl"], env=cache)
        with open(os.path.join(tmp, f"verify-{fam}.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        for name, (verdict, _) in verdicts(text).items():
            fixtures[name] = {"identical": "pass", "REFUSED": "refused"}.get(verdict, "fail")
        return rc_v == 0 and "verify: PASS" in text and any(n.startswith(fam + "-") for n in fixtures)

    def arm_run(fam, arm):
        """fam's fixtures under SAMEBITS_OPENCL_ARM=arm into arm-FAM-ARM.txt: the arm's entry."""
        rc_a, text = run([], exe, ["verify", "--family", fam, "device=opencl"],
                         env=dict(cache, SAMEBITS_OPENCL_ARM=arm))
        with open(os.path.join(tmp, f"arm-{fam}-{arm}.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        first = next(((n, st) for n, (v, st) in verdicts(text).items() if v == "DIFFERS"), (None, None))
        return {"arm": f"opencl {fam} {arm}", "caught": rc_a == 1 and "verify: FAIL" in text and first[0] is not None,
                "fixture": first[0], "stage": first[1]}

    gbdt_ok = verify_family("gbdt")
    # The forest families on the same device layer (the forest program), and their float-atomic arm.
    forest_ok = verify_family("forest")
    forest_arm = arm_run("forest", "float-atomic")
    # contraction where the kernels have sites: the forest's Gini and entropy sums,
    # the linalg factorizations (docs/verification.md); -cl-mad-enable is inert on PoCL
    contract_arms = [arm_run("forest", "contract"), arm_run("linalg", "contract"), arm_run("explain", "contract")]
    mad_arms = [arm_run("forest", "mad-enable"), arm_run("linalg", "mad-enable"), arm_run("explain", "mad-enable")]
    # The linear-algebra core on the same device layer (the linalg program), and its arms.
    linalg_ok = verify_family("linalg")
    linalg_arms = [arm_run("linalg", a) for a in ("float-atomic", "gemm-fma")]
    # The linear family: host code around the linalg program, so the product's arms must part it too.
    linear_ok = verify_family("linear")
    linear_arms = [arm_run("linear", a) for a in ("float-atomic", "gemm-fma")]
    # k-means: host code around its own kernels in the linalg program (cluster_entry.h).
    kmeans_ok = verify_family("kmeans")
    # spectral clustering: the core's eigensolver and k-means on the device, the affinity on the host.
    spectral_ok = verify_family("spectral")
    # nearest neighbors and DBSCAN: the screen on the device (neighbors_entry.h), the exact distances on the host;
    # the knn-bound arm trusts the device's screen as exact and must part them.
    knn_ok = verify_family("knn")
    dbscan_ok = verify_family("dbscan")
    knn_arms = [arm_run("knn", "knn-bound"), arm_run("dbscan", "knn-bound")]
    # agglomerative clustering: the distance matrix on the device (ka_dist, integer binary64), the merges on the
    # host; the agglo-order arm sums each pair's features in reverse order and must part it.
    agglo_ok = verify_family("agglomerative")
    # explanations (pred_leaf, TreeSHAP pred_contrib) on the tree program (tree_entry.h)
    explain_ok = verify_family("explain")
    knn_arms.append(arm_run("agglomerative", "agglo-order"))
    # kernel density: the kernel sums on the device (kd_sums, kernels/kde.h: integer binary64), the logs on the
    # host; kde-order reverses the device's sum and vendor-exp swaps the profile's exp, each must part kde-fit;
    # the contraction arms have nothing to fuse in its integer body (controls: they must change no bit of it).
    kde_ok = verify_family("kde")
    knn_arms += [arm_run("kde", "kde-order"), arm_run("kde", "vendor-exp")]
    kde_controls = [arm_run("kde", "contract"), arm_run("kde", "mad-enable")]
    # support vector machines: the SMO's kernel rows and the decision sums on the device (svm_entry.h, IEEE
    # doubles), the SMO's choices on the host; svm-kernel-f32 (the kernel's sum in float32), vendor-exp (rbf's
    # exp) and contract (the decision sums fused) must part svm-fit; mad-enable is a control.
    svm_ok = verify_family("svm")
    knn_arms += [arm_run("svm", "svm-kernel-f32"), arm_run("svm", "vendor-exp"), arm_run("svm", "contract")]
    svm_controls = [arm_run("svm", "mad-enable")]
    # the multi-layer perceptrons trained on the device (mlp_dev.c: the identical GEMM and nn_entry.h): the
    # device's own column sums and softmax reordered, the softmax's exp the vendor's, contraction (Adam's and the
    # activations' products) each must part mlp-fit.
    mlp_ok = verify_family("mlp")
    knn_arms += [arm_run("mlp", a) for a in ("mlp-grad-order", "mlp-softmax-order", "vendor-exp", "contract")]
    # Gaussian process regression: the float64 program (kernels/entry/gp_entry.h: the kernel matrix, the Cholesky,
    # L^-1, -K^-1 and the gradient's terms in the host's element order, native IEEE doubles); gp-dev-order sums
    # the device Cholesky's products first and contraction fuses its multiply-subtracts: each must part gp-fit.
    gp_ok = verify_family("gp")
    knn_arms += [arm_run("gp", "gp-dev-order"), arm_run("gp", "contract")]
    # the time series (kernels/entry/ts_entry.h: one work-item a series, the host's text): exponential smoothing's
    # SSE summed in another order (ets-sse-order) and ARIMA's device sums reordered (arima-device-order) must
    # part their fixtures.
    ets_ok = verify_family("ets")
    arima_ok = verify_family("arima")
    knn_arms += [arm_run("ets", "ets-sse-order"), arm_run("arima", "arima-device-order")]
    # the byte language model's training step on the device (lm_dev.c): a float atomic in the embedding
    # gradient, the vendor's exp in the softmax, contraction, and the attention's sums reordered must part lm-fit.
    lm_ok = verify_family("lm")
    knn_arms += [arm_run("lm", a) for a in ("float-atomic", "vendor-exp", "contract", "lm-attn-order")]
    # UMAP: the batched cases' epochs on the device (kernels/umap.h: integer row sums), the other cases on the
    # host; umap-float-sum sums each row's moves as float32 in arrival order and must part umap-fit.
    umap_ok = verify_family("umap")
    knn_arms += [arm_run("umap", "umap-float-sum")]
    # The kernels' tie rules (rule 7), broken the way the CPU arms of those names break them.
    tie_arms = [arm_run("gbdt", "ties"), arm_run("forest", "forest-ties"), arm_run("linalg", "topk-ties"),
                arm_run("gbdt", "nan-side"), arm_run("kmeans", "kmeans-ties")]
    required = [a["arm"] for a in arms]
    # Controls: what must change no bit, recorded apart from the arms (a control
    # holds when no fixture parts): -cl-mad-enable, which the FP_CONTRACT pragma
    # overrides (PoCL's clang ignores it on x86 besides; docs/opencl.md).
    # Contraction is an arm on the gbdt path since gbdt-objectives: the log
    # links' gradients (poisson, gamma, tweedie) have a multiply feeding an add.
    controls = []
    for arm, must in (("float-atomic", True), ("fast-relaxed-math", True), ("contract", True),
                      ("mad-enable", False)):
        entry = arm_run("gbdt", arm)
        if not must:
            controls.append({"control": entry["arm"], "holds": not entry["caught"] and entry["fixture"] is None,
                             "note": "the FP_CONTRACT OFF pragma decides (docs/opencl.md)"})
        else:
            required.append(entry["arm"])
            arms.append(entry)
    arms.append(forest_arm)
    required.append(forest_arm["arm"])
    for entry in linalg_arms + linear_arms + contract_arms + tie_arms + knn_arms:
        arms.append(entry)
        required.append(entry["arm"])
    for entry in kde_controls:
        controls.append({"control": entry["arm"], "holds": not entry["caught"] and entry["fixture"] is None,
                         "note": "kde's device body is integer binary64 and sb_expf's integer core: nothing to fuse "
                                 "(docs/density.md)"})
    for entry in svm_controls:
        controls.append({"control": entry["arm"], "holds": not entry["caught"] and entry["fixture"] is None,
                         "note": "the FP_CONTRACT OFF pragma decides; PoCL's clang ignores -cl-mad-enable (docs/opencl.md)"})
    for entry in mad_arms:
        controls.append({"control": entry["arm"], "holds": not entry["caught"] and entry["fixture"] is None,
                         "note": "the FP_CONTRACT OFF pragma decides; PoCL's clang ignores -cl-mad-enable (docs/opencl.md)"})
    summary = {
        "samebits_evidence": 1, "date": date, "date_utc": date_utc, "commit": commit,
        "source": "opencl-check.txt, verify-gbdt.txt, verify-forest.txt, verify-linalg.txt, verify-linear.txt, verify-kmeans.txt, verify-spectral.txt, verify-knn.txt, verify-dbscan.txt, verify-agglomerative.txt, verify-explain.txt, verify-kde.txt, verify-svm.txt, verify-mlp.txt, verify-gp.txt, verify-ets.txt, verify-arima.txt, verify-lm.txt, verify-umap.txt, arm-*.txt",
        "machine": tool_version(["uname", "-srm"]),
        "result": "pass" if rc == 0 and leg_ok and gbdt_ok and forest_ok and linalg_ok and linear_ok and kmeans_ok and spectral_ok and knn_ok and dbscan_ok and agglo_ok and explain_ok and kde_ok and svm_ok and mlp_ok and gp_ok and ets_ok and arima_ok and lm_ok and umap_ok
        and all(a["caught"] for a in arms if a["arm"] in required) and all(c["holds"] for c in controls)
        else "fail",
        "legs": [{"leg": "opencl", "label": "OpenCL on PoCL (a CPU device)", "device": device, "emulated": False,
                  "toolchain": f"PoCL {pocl}; host {tool_version(['gcc', '--version'])}",
                  "flags": "the profile's OpenCL build options (docs/opencl.md)",
                  "compared_with": "the reference cards",
                  "fixtures": fixtures}],
        "arms": arms,
        "controls": controls,
    }
    with open(os.path.join(tmp, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
    os.rename(tmp, folder)
    print(f"{os.path.relpath(folder, ROOT)}: profile-core {'pass' if leg_ok else 'FAIL'}; gbdt on device=opencl "
          f"{sum(v == 'pass' for k, v in fixtures.items() if k.startswith('gbdt-'))}/"
          f"{sum(k.startswith('gbdt-') for k in fixtures)} pass; arms caught: "
          f"{sum(bool(a['caught']) for a in arms)}/{len(arms)}; result {summary['result']}")
    return folder, summary["result"] == "pass"


def remove_superseded(written):
    """Removes the folders of the keys just recorded that the support matrix no
    longer reads (the newest run of no family x leg): evidence/ keeps the latest
    run per leg and family, git history the rest. A folder just written is never
    removed, even when a newer run of another machine fills its cells."""
    import support_matrix
    legs, fams, runs, folders, _, cells, _ = support_matrix.layout(ROOT)
    used = {d["run"]["folder"] for _, d in cells.values() if d}
    keep = {os.path.realpath(f) for f in written}
    for folder in written:
        key = evidence_layout.parse_name(os.path.basename(folder))
        parent = os.path.dirname(folder)
        for other in sorted(os.listdir(parent)):
            p = evidence_layout.parse_name(other)
            rel = os.path.relpath(os.path.join(parent, other), ROOT).replace(os.sep, "/")
            if os.path.realpath(os.path.join(parent, other)) in keep:
                continue
            if p and p["machine"] == key["machine"] and p["families"] == key["families"] \
                    and rel in folders and rel not in used:
                shutil.rmtree(os.path.join(parent, other))
                print(f"{rel}: superseded by {os.path.relpath(folder, ROOT)}, removed (git history keeps it)")


def main(argv):
    out_root = os.path.join(ROOT, "evidence", "cpu")
    if argv[:1] == ["--sources-at"] and len(argv) == 3:
        sys.stdout.write(sources_at(argv[1], argv[2]))
        return 0
    if argv[:1] == ["--out-root"]:
        out_root, argv = os.path.abspath(argv[1]), argv[2:]
    legs = argv or list(LEGS) + ["opencl"]
    for leg in legs:
        if leg not in LEGS and leg != "opencl":
            raise SystemExit(f"unknown leg '{leg}'; legs: {', '.join(LEGS)}, opencl")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True, cwd=ROOT).stdout.strip()
    if not commit:
        raise SystemExit("not a git checkout: the evidence needs a commit")
    # Untracked files where the build globs for sources would be built too, and
    # would be in no commit: they count as uncommitted work.
    untracked = git("status", "--porcelain", "--untracked-files=all", "--", "src", "include", "cli").stdout
    if dirty or "?? " in untracked:
        raise SystemExit("the working tree has uncommitted changes: commit first, so the evidence names its source")
    now = datetime.datetime.now(datetime.timezone.utc)
    opencl_root = os.path.join(os.path.dirname(out_root), "opencl")
    done = [record_opencl(opencl_root, commit, now) if leg == "opencl" else record(leg, out_root, commit, now)
            for leg in legs]
    if os.path.realpath(out_root) == os.path.realpath(os.path.join(ROOT, "evidence", "cpu")):
        remove_superseded([folder for folder, _ in done])
    return 0 if all(ok for _, ok in done) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
