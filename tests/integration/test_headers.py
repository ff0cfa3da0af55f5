"""The two public headers (issue #16; docs/api.md): samebits.h is the product
API, samebits_cert.h adds certification and test control; every function either
declares returns an sb_status or says why not; the library exports exactly what
the two declare; `make install` installs both, and programs build against them.

Each check is shown able to fail: the rule checker on a header that breaks it,
the split on a program that reaches for a card through samebits.h alone."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import check_headers  # noqa: E402

PRODUCT = ROOT / "include" / "samebits.h"
CERT = ROOT / "include" / "samebits_cert.h"
CC = os.environ.get("CC") if os.environ.get("CC") not in (None, "", "cc") else "gcc"
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def compile_c(tmp_path, name, source, include, link=None, extra=()):
    """Compile source (syntax only, or linked into an executable with link's
    arguments); returns (CompletedProcess, path of the executable)."""
    src = tmp_path / (name + ".c")
    src.write_text(source)
    exe = tmp_path / name
    cmd = [CC] + CFLAGS + list(extra) + ["-I" + str(include), str(src)]
    cmd += ["-fsyntax-only"] if link is None else ["-o", str(exe)] + link
    return subprocess.run(cmd, capture_output=True, text=True), exe


def static_lib():
    lib = ROOT / "build" / "libsamebits.a"
    if not lib.exists():
        pytest.fail(f"{lib} is missing: run 'make'")
    return [str(lib), "-pthread", "-lm"]


# ---- every function returns a status or says why not ------------------------------

def test_every_declaration_returns_a_status_or_says_why():
    r = subprocess.run([sys.executable, str(ROOT / "tests/check_headers.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "include/samebits.h:" in r.stderr and "include/samebits_cert.h:" in r.stderr, r.stderr


def _check(path):
    return subprocess.run([sys.executable, str(ROOT / "tests/check_headers.py"), str(path)],
                          capture_output=True, text=True)


def test_the_rule_fails_a_header_that_breaks_it(tmp_path):
    text = PRODUCT.read_text()
    why = "/* Not a status: freeing cannot fail, and NULL is a no-op. */\nSB_API void sb_dataset_free"
    assert why in text
    cases = {
        # a void function with its reason removed
        "no-reason": (text.replace(why, "SB_API void sb_dataset_free"), "sb_dataset_free: returns 'void'"),
        # the marker with no words after it
        "empty-reason": (text.replace(why, "/* Not a status: */\nSB_API void sb_dataset_free"),
                         "is not followed by a reason"),
        # a reason that sits above a blank line, not directly above the function
        "detached": (text.replace(why, why.replace("*/\n", "*/\n\n")), "sb_dataset_free: returns 'void'"),
        # a stale marker above a function that returns a status
        "stale": (text.replace("SB_API sb_status sb_params_create",
                               "/* Not a status: a stale reason. */\nSB_API sb_status sb_params_create"),
                  "sb_params_create: returns sb_status but"),
        # a callback that returns something else
        "callback": (text.replace("typedef struct sb_card sb_card;",
                                  "typedef struct sb_card sb_card;\ntypedef int (*sb_bad_fn)(void *ctx);"),
                     "sb_bad_fn: returns 'int'"),
        # a declaration the parser cannot read is reported, not skipped
        "unreadable": (text.replace("SB_API sb_status sb_params_create(sb_params **out);",
                                    "SB_API sb_status\nsb_params_create(sb_params **out);"),
                       "SB_API on a declaration that is not a function"),
    }
    for name, (broken, want) in cases.items():
        assert broken != text, name
        p = tmp_path / (name + ".h")
        p.write_text(broken)
        r = _check(p)
        assert r.returncode == 1 and want in r.stdout, (name, r.stdout, r.stderr)


# ---- the split ----------------------------------------------------------------------

def cert_names():
    """What samebits_cert.h declares: its functions, callback and types."""
    names = [d.name for d in check_headers.declarations(str(CERT))]
    return names + ["sb_dtype", "sb_card_diff", "SB_DTYPE_F32"]


def _use(name):
    """A file-scope function that needs name declared (a function, a type or a constant)."""
    if name in ("sb_dtype", "sb_card_diff", "sb_fixture_input_fn"):
        return "void use(void);\nvoid use(void) { %s v; (void)&v; }\n" % name
    return "void use(void);\nvoid use(void) { (void)%s; }\n" % name


def test_the_product_header_declares_no_certification(tmp_path):
    names = cert_names()
    assert {"sb_card_create", "sb_card_compare", "sb_fixture_run", "sb_fixture_count", "sb_sha256",
            "sb_philox4x32_10", "sb_fixture_input_fn"} <= set(names), names
    for name in names:
        body = _use(name)
        r, _ = compile_c(tmp_path, "product", '#include "samebits.h"\n' + body, ROOT / "include")
        assert r.returncode != 0, "%s compiles with samebits.h alone" % name
        assert name in r.stderr, r.stderr
        r, _ = compile_c(tmp_path, "cert", '#include "samebits_cert.h"\n' + body, ROOT / "include")
        assert r.returncode == 0, (name, r.stderr)


def test_each_header_stands_alone_in_c_and_cpp(tmp_path):
    for h in ("samebits.h", "samebits_cert.h"):
        for std in ("-std=c99", "-std=c11"):
            r, _ = compile_c(tmp_path, "alone", '#include "%s"\n#include "%s"\nint x;\n' % (h, h),
                             ROOT / "include", extra=[std])
            assert r.returncode == 0, (h, std, r.stderr)
        if shutil.which("g++"):
            src = tmp_path / "alone.cpp"
            src.write_text('#include "%s"\nint x;\n' % h)
            r = subprocess.run(["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                                "-I" + str(ROOT / "include"), str(src)], capture_output=True, text=True)
            assert r.returncode == 0, (h, r.stderr)


def test_the_library_exports_what_the_headers_declare_once():
    so = ROOT / "build" / "libsamebits.so"
    if not so.exists():
        pytest.fail(f"{so} is missing: run 'make'")
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-1].startswith("sb_")}
    product = {d.name for d in check_headers.declarations(str(PRODUCT))}
    cert = {d.name for d in check_headers.declarations(str(CERT))} - {"sb_fixture_input_fn"}
    assert not product & cert, product & cert
    assert exported == product | cert, ("exported, not declared", exported - product - cert,
                                        "declared, not exported", (product | cert) - exported)


# ---- programs against the headers ------------------------------------------------------

PRODUCT_PROGRAM = r"""
#include "samebits.h"
#include <stdio.h>

#define CHECK(call) do { sb_status st_ = (call); if (st_ != SB_OK) { \
    fprintf(stderr, "%s: %s: %s\n", #call, sb_status_name(st_), sb_last_error()); return 1; } } while (0)

int main(void) {
    float x[16], y[8], pred[8];
    for (int i = 0; i < 8; i++) { x[2 * i] = (float)i; x[2 * i + 1] = (float)(i % 3); y[i] = (float)(i > 3); }
    sb_params *p = NULL; sb_dataset *d = NULL; sb_model *m = NULL;
    size_t n = 0; char hex[65];
    CHECK(sb_params_create(&p));
    CHECK(sb_params_parse(p, "objective=binary num_iterations=3 min_data_in_leaf=1"));
    CHECK(sb_dataset_from_matrix(x, 8, 2, &d));
    CHECK(sb_dataset_set_label(d, y, 8));
    CHECK(sb_gbdt_fit(p, d, NULL, NULL, &m)); /* no card: the product API needs none */
    CHECK(sb_model_predict(m, d, SB_PREDICT_PROBA, pred, 8, &n));
    CHECK(sb_model_digest(m, hex));
    printf("%s %zu %s\n", sb_version(), n, hex);
    sb_model_free(m); sb_dataset_free(d); sb_params_free(p);
    return n == 8 ? 0 : 1;
}
"""

CERT_PROGRAM = r"""
#include "samebits_cert.h"
#include <stdio.h>
#include <string.h>

int main(void) {
    uint8_t h[32];
    sb_card *a = NULL, *b = NULL;
    sb_card_diff diff;
    const char *family = NULL;
    float v[3] = {1.0f, -0.0f, 2.5f};
    if (sb_sha256("abc", 3, h) != SB_OK || h[0] != 0xba || h[31] != 0xad) return 1; /* FIPS 180-4 */
    if (sb_card_create(&a) != SB_OK || sb_card_record(a, "x", SB_DTYPE_F32, v, 3) != SB_OK) return 2;
    if (sb_fixture_reference("profile-core", &b) != SB_OK) return 3;
    if (sb_card_compare(a, b, &diff) != SB_ERR_MISMATCH || diff.identical) return 4;
    if (sb_fixture_get_family("profile-core", &family) != SB_OK || strcmp(family, "profile") != 0) return 5;
    printf("%d fixtures, first %s\n", (int)sb_fixture_count(), sb_fixture_name(0));
    sb_card_free(a); sb_card_free(b);
    return 0;
}
"""


def test_programs_build_against_the_source_tree(tmp_path):
    r, exe = compile_c(tmp_path, "product", PRODUCT_PROGRAM, ROOT / "include", link=static_lib())
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[1] == "8", out.stdout + out.stderr
    r, exe = compile_c(tmp_path, "cert", CERT_PROGRAM, ROOT / "include", link=static_lib())
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and "fixtures, first profile-core" in out.stdout, out.stdout + out.stderr
    # The certification program is exactly what samebits.h alone refuses.
    r, _ = compile_c(tmp_path, "cert-product-only", CERT_PROGRAM.replace("samebits_cert.h", "samebits.h"),
                     ROOT / "include")
    assert r.returncode != 0 and "sb_card_diff" in r.stderr, r.stderr


def test_install_puts_both_headers_and_programs_build_against_them(tmp_path):
    prefix = tmp_path / "prefix"
    r = subprocess.run(["make", "-s", "install", "PREFIX=" + str(prefix)], cwd=ROOT, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    inc = prefix / "include"
    assert sorted(os.listdir(inc)) == ["samebits.h", "samebits_cert.h"]
    for h in ("samebits.h", "samebits_cert.h"):
        assert (inc / h).read_bytes() == (ROOT / "include" / h).read_bytes(), h
    lib = prefix / "lib"
    link = ["-L" + str(lib), "-Wl,-rpath," + str(lib), "-lsamebits", "-pthread", "-lm"]
    for name, program in (("product", PRODUCT_PROGRAM), ("cert", CERT_PROGRAM)):
        r, exe = compile_c(tmp_path, name, program, inc, link=link)
        assert r.returncode == 0, (name, r.stderr)
        out = subprocess.run([str(exe)], capture_output=True, text=True)
        assert out.returncode == 0, (name, out.stdout, out.stderr)
