/*
 * certify.c: the certification commands of the CLI.
 *
 *   verify         run pinned fixtures here and compare each card with its
 *                  reference, stage by stage (refusals are not passes)
 *   check-fixture  check the fixtures' input digests without training
 *   fixture inputs write a fixture's input card
 *   conformance    export a self-describing bundle, or validate one (and a
 *                  candidate's model and predictions against it)
 *
 * Bundle format: docs/conformance.md. Everything written goes to a temporary
 * name first and is renamed into place, so a failure leaves nothing half-made.
 */
#include "certify.h"
#include "samebits_cert.h"
#include "cli_fail.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_DIFF 1
#define EXIT_ERROR 2

static int usage(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "samebits %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nrun 'samebits help' for usage\n");
    return EXIT_ERROR;
}

/* "--threads N" by the library's one rule (sb_parse_num_threads). */
static int set_threads(const char *cmd, const char *v) {
    (void)cmd;
    int32_t n = 0;
    sb_status st = sb_parse_num_threads(v, "--threads", &n);
    if (st == SB_OK) st = sb_set_num_threads(n);
    return st == SB_OK ? 0 : lib_fail(st);
}

static const char *this_arch(void) {
    static char arch[64];
    char info[2048];
    strcpy(arch, "unknown");
    if (sb_build_info(info, sizeof info, NULL) == SB_OK) {
        const char *a = strstr(info, "arch: ");
        if (a) sscanf(a + 6, "%63s", arch);
    }
    return arch;
}

static int is_refusal(sb_status st) {
    return st == SB_ERR_IDENTITY_REFUSED || st == SB_ERR_MODE_UNSUPPORTED || st == SB_ERR_BACKEND_UNAVAILABLE;
}

static void print_diff(const sb_card_diff *d) {
    printf("differ at stage %lld: %s (%s)\n", (long long)d->stage_index, d->stage_a[0] ? d->stage_a : d->stage_b,
           d->reason);
    if (d->stage_a[0] && d->stage_b[0] && strcmp(d->stage_a, d->stage_b) != 0)
        printf("  tags: %s vs %s\n", d->stage_a, d->stage_b);
    printf("  a: %s\n  b: %s\n", d->digest_a[0] ? d->digest_a : "(no such stage)",
           d->digest_b[0] ? d->digest_b : "(no such stage)");
}

/* The value of "device=" in extra, or "cpu". */
static void device_of(const char *extra, char *out, size_t cap) {
    const char *d = strstr(extra, "device=");
    snprintf(out, cap, "%s", "cpu");
    if (d) snprintf(out, cap, "%.*s", (int)strcspn(d + 7, " ,\t\n"), d + 7);
}

/* ---- verify ---------------------------------------------------------------- */

static const char *const k_families[] = {"profile", "logit",  "gbdt", "forest",        "linalg",
                                         "linear",  "kmeans", "knn",  "dbscan", "agglomerative", "spectral",
                                         "kde",     "explain", "ets", "arima", "umap", "mlp", "gp", "svm", "lm"};

int sb_cli_verify(int argc, char **argv) {
    const char *names[64];
    int n = 0;
    const char *family = NULL, *cards_dir = NULL;
    char extra[512] = "";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            int rc = set_threads("verify", argv[++i]);
            if (rc) return rc;
        } else if (strcmp(argv[i], "--family") == 0 && i + 1 < argc) {
            family = argv[++i];
            int known = 0;
            for (size_t k = 0; k < sizeof k_families / sizeof k_families[0]; k++)
                known |= strcmp(family, k_families[k]) == 0;
            if (!known)
                return usage("verify", "unknown family '%s'; families: profile, logit, gbdt, forest, linalg, linear, "
                             "kmeans, knn, dbscan, agglomerative, spectral, kde, explain, ets, arima, umap, mlp, gp, svm, lm", family);
        } else if (strcmp(argv[i], "--cards") == 0 && i + 1 < argc) {
            cards_dir = argv[++i];
        } else if (argv[i][0] != '-' && strchr(argv[i], '=')) {
            if (strlen(extra) + strlen(argv[i]) + 2 > sizeof extra)
                return usage("verify", "parameters too long at '%s'", argv[i]);
            if (*extra) strcat(extra, " ");
            strcat(extra, argv[i]);
        } else if (argv[i][0] == '-' || n == 64) {
            return usage("verify", "unexpected argument '%s'", argv[i]);
        } else {
            names[n++] = argv[i];
        }
    }
    if (family && n) return usage("verify", "give fixture names or --family, not both%s", "");
    if (!n) {
        for (int32_t i = 0; i < sb_fixture_count() && n < 64; i++) {
            const char *name = sb_fixture_name(i);
            if (!family || strcmp(sb_fixture_family(name), family) == 0) names[n++] = name;
        }
    }
    int32_t threads = 0;
    sb_status tst = sb_get_num_threads(&threads); /* an invalid SAMEBITS_NUM_THREADS: refused before any run */
    if (tst != SB_OK) return lib_fail(tst);
    char device[64];
    device_of(extra, device, sizeof device);
    printf("samebits verify: profile %s, arch %s, device %s, threads %d\n", sb_profile_version(), this_arch(),
           device, (int)threads);
    int same = 0, differ = 0, refused = 0, errors = 0;
    for (int i = 0; i < n; i++) {
        sb_card *ref = NULL, *run = NULL;
        char tbuf[16];
        snprintf(tbuf, sizeof tbuf, "%d", (int)threads);
        sb_status st = sb_fixture_reference(names[i], &ref);
        if (st == SB_OK) st = sb_card_create(&run);
        if (st == SB_OK) st = sb_card_set_meta(run, "arch", this_arch());
        if (st == SB_OK) st = sb_card_set_meta(run, "threads", tbuf);
        if (st == SB_OK) st = sb_card_set_meta(run, "device", device);
        if (st == SB_OK) st = sb_fixture_run_with(names[i], extra, run);
        if (st != SB_OK) {
            printf("  %-15s %s %s: %s\n", names[i], is_refusal(st) ? "REFUSED" : "ERROR", sb_status_name(st),
                   sb_last_error());
            if (is_refusal(st)) refused++;
            else errors++;
        } else {
            sb_card_diff d;
            int64_t nstages = 0;
            sb_card_stage_count(ref, &nstages);
            if (sb_card_compare(ref, run, &d) == SB_OK) {
                printf("  %-15s identical (%lld stages)\n", names[i], (long long)nstages);
                same++;
            } else {
                printf("  %-15s DIFFERS: ", names[i]);
                print_diff(&d);
                differ++;
            }
            if (cards_dir) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s.card", cards_dir, names[i]);
                if ((st = sb_card_save(run, path)) != SB_OK) {
                    printf("  %-15s ERROR %s: %s\n", names[i], sb_status_name(st), sb_last_error());
                    errors++;
                }
            }
        }
        sb_card_free(ref);
        sb_card_free(run);
    }
    int bad = differ + refused + errors;
    printf("%d fixtures: %d identical, %d not identical (%d differ, %d refused, %d errors)\n", n, same, bad, differ,
           refused, errors);
    printf("verify: %s\n", n > 0 && bad == 0 ? "PASS" : "FAIL");
    return n > 0 && bad == 0 ? 0 : EXIT_DIFF;
}

/* ---- inputs ------------------------------------------------------------------ */

static sb_status record_input(void *ctx, const char *name, sb_dtype dtype, const void *data, uint64_t count) {
    return sb_card_record(ctx, name, dtype, data, count);
}

static sb_status input_card(const char *name, sb_card **out) {
    sb_card *c;
    sb_status st = sb_card_create(&c);
    if (st == SB_OK) st = sb_card_set_meta(c, "fixture", name);
    if (st == SB_OK) st = sb_card_set_meta(c, "kind", "inputs");
    if (st == SB_OK) st = sb_fixture_inputs(name, record_input, c);
    if (st != SB_OK) {
        sb_card_free(c);
        return st;
    }
    *out = c;
    return SB_OK;
}

int sb_cli_fixture_inputs(int argc, char **argv) {
    const char *name = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' || name) return usage("fixture inputs", "unexpected argument '%s'", argv[i]);
        else name = argv[i];
    }
    if (!name) return usage("fixture inputs", "which fixture? ('samebits fixture list')%s", "");
    sb_card *c;
    sb_status st = input_card(name, &c);
    if (st != SB_OK) return lib_fail(st);
    if (out) {
        st = sb_card_save(c, out);
    } else {
        size_t need = 0;
        char *text = NULL;
        st = sb_card_text(c, NULL, 0, &need);
        if (st == SB_OK && !(text = malloc(need))) st = SB_ERR_OUT_OF_MEMORY;
        if (st == SB_OK) st = sb_card_text(c, text, need, NULL);
        if (st == SB_OK) fputs(text, stdout);
        free(text);
    }
    sb_card_free(c);
    return st == SB_OK ? 0 : lib_fail(st);
}

/* Compare an installed card file with the one built into the library. */
static int check_installed(const char *dir, const char *card_name, const sb_card *built_in) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.card", dir, card_name);
    sb_card *c = NULL;
    sb_status st = sb_card_load(path, &c);
    if (st != SB_OK) {
        printf("    installed %s: ERROR %s: %s\n", path, sb_status_name(st), sb_last_error());
        return 1;
    }
    sb_card_diff d;
    st = sb_card_compare(built_in, c, &d);
    sb_card_free(c);
    if (st == SB_OK) return 0;
    printf("    installed %s DIFFERS from the built-in card: ", path);
    print_diff(&d);
    return 1;
}

int sb_cli_check_fixture(int argc, char **argv) {
    const char *names[64], *dir = NULL;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (argv[i][0] == '-' || n == 64) return usage("check-fixture", "unexpected argument '%s'", argv[i]);
        else names[n++] = argv[i];
    }
    if (!n)
        for (int32_t i = 0; i < sb_fixture_count() && n < 64; i++) names[n++] = sb_fixture_name(i);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        sb_card *ref = NULL, *got = NULL, *full = NULL;
        sb_status st = sb_fixture_input_reference(names[i], &ref);
        if (st == SB_OK) st = input_card(names[i], &got);
        if (st != SB_OK) {
            printf("  %-15s ERROR %s: %s\n", names[i], sb_status_name(st), sb_last_error());
            bad++;
        } else {
            sb_card_diff d;
            int64_t k = 0;
            sb_card_stage_count(ref, &k);
            if (sb_card_compare(ref, got, &d) == SB_OK) {
                printf("  %-15s inputs identical (%lld arrays)\n", names[i], (long long)k);
            } else {
                printf("  %-15s inputs DIFFER: ", names[i]);
                print_diff(&d);
                bad++;
            }
            if (dir) {
                char inputs_name[256];
                snprintf(inputs_name, sizeof inputs_name, "%s.inputs", names[i]);
                int b = check_installed(dir, inputs_name, ref);
                if ((st = sb_fixture_reference(names[i], &full)) != SB_OK) {
                    printf("    ERROR %s: %s\n", sb_status_name(st), sb_last_error());
                    b = 1;
                } else {
                    b |= check_installed(dir, names[i], full);
                }
                bad += b;
            }
        }
        sb_card_free(ref);
        sb_card_free(got);
        sb_card_free(full);
    }
    printf("%d fixtures: %d with pinned inputs, %d not\n", n, n - bad, bad);
    printf("check-fixture: %s\n", bad ? "FAIL" : "PASS");
    return bad ? EXIT_DIFF : 0;
}

/* ---- conformance bundles --------------------------------------------------- */

static int host_is_little(void) {
    const uint16_t probe = 1;
    return *(const uint8_t *)&probe == 1;
}

static size_t dtype_size(sb_dtype t) {
    return t == SB_DTYPE_U8 ? 1 : (t == SB_DTYPE_I64 || t == SB_DTYPE_U64) ? 8 : 4;
}

static const char *dtype_name(sb_dtype t) {
    static const char *const n[] = {"u8", "i32", "u32", "i64", "u64", "f32"};
    return (unsigned)t < 6 ? n[t] : "?";
}

static int dtype_parse(const char *s, sb_dtype *t) {
    for (int i = 0; i < 6; i++)
        if (strcmp(s, dtype_name((sb_dtype)i)) == 0) {
            *t = (sb_dtype)i;
            return 0;
        }
    return -1;
}

/* Canonical bytes (docs/cards.md): little-endian elements, every f32 NaN as
 * 0x7FC00000, so a file's SHA-256 equals the card digest of its stage. */
static uint8_t *canonical(sb_dtype t, const void *data, uint64_t count) {
    size_t w = dtype_size(t), n = (size_t)count * w;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return NULL;
    memcpy(b, data, n);
    for (size_t i = 0; i < (size_t)count; i++) {
        uint8_t *e = b + i * w;
        if (t == SB_DTYPE_F32) {
            uint32_t u;
            memcpy(&u, e, 4);
            if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) {
                u = 0x7FC00000u;
                memcpy(e, &u, 4);
            }
        }
        if (!host_is_little())
            for (size_t a = 0, z = w - 1; a < z; a++, z--) {
                uint8_t tmp = e[a];
                e[a] = e[z];
                e[z] = tmp;
            }
    }
    return b;
}

static void hex_sha256(const void *data, size_t n, char hex[65]) {
    uint8_t d[32];
    sb_sha256(data, n, d);
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", d[i]);
}

/* Reading a bundle (docs/conformance.md, "Validating"): every file is opened
 * without following a symbolic link at any step below the bundle directory
 * (a bundle holds none: one is damage, whatever it points to), without
 * blocking (O_NONBLOCK: a FIFO does not hang the validator), and read only if
 * fstat says it is a regular file (a device such as /dev/zero is never read),
 * and then at most the bytes its manifest line states (the manifest itself at
 * most BUNDLE_MANIFEST_MAX). A candidate file the user names may be a link
 * but must be a regular file, read to at most BUNDLE_FILE_MAX. */
#define BUNDLE_MANIFEST_MAX ((size_t)16 << 20)
#define BUNDLE_FILE_MAX ((size_t)1 << 30)

/* Read at most limit bytes of fd (a regular file) into a new buffer (a NUL
 * after the bytes): 0, 1 when the file holds more than limit, -1 on error. */
static int read_fd_bounded(int fd, size_t limit, uint8_t **out, size_t *len) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    if ((uint64_t)st.st_size > (uint64_t)limit) return 1;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    uint8_t *b = malloc(cap + 1);
    if (!b) return -1;
    for (;;) {
        ssize_t k = read(fd, b + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            free(b);
            return -1;
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n > limit) { /* grew while being read */
            free(b);
            return 1;
        }
        if (n == cap) break;
    }
    b[n] = 0;
    *out = b;
    *len = n;
    return 0;
}

/* Open rel (relative, no "..", checked by the caller) under the bundle
 * directory dirfd, following no symbolic link on the way, only if it is a
 * regular file: the descriptor, or -1 with *why saying what was found. */
static int bundle_open(int dirfd, const char *rel, const char **why) {
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf) {
        *why = "path too long";
        return -1;
    }
    int cur = dirfd;
    char *s = buf;
    for (char *slash; (slash = strchr(s, '/')) != NULL; s = slash + 1) {
        *slash = 0;
        int next = openat(cur, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        if (cur != dirfd) close(cur);
        if (next < 0) {
            *why = e == ENOENT ? "missing file" : "a folder on its path is a symbolic link or not a folder";
            return -1;
        }
        cur = next;
    }
    int fd = openat(cur, s, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    if (cur != dirfd) close(cur);
    if (fd < 0) {
        *why = e == ENOENT ? "missing file" : e == ELOOP ? "a symbolic link (a bundle holds none)" : "unreadable file";
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *why = "not a regular file (a device, a FIFO or a folder)";
        return -1;
    }
    return fd;
}

/* A bundle file's bytes, at most limit of them: 0; 1 when it holds more;
 * -1 with *why when it cannot be read. */
static int bundle_read(int dirfd, const char *rel, size_t limit, uint8_t **out, size_t *len, const char **why) {
    int fd = bundle_open(dirfd, rel, why);
    if (fd < 0) return -1;
    int r = read_fd_bounded(fd, limit, out, len);
    close(fd);
    if (r < 0) *why = "unreadable file";
    return r;
}

/* A file the user names (a candidate): links followed, but only a regular
 * file is read, and at most BUNDLE_FILE_MAX bytes of it. 0, or -1. */
static int read_user_file(const char *path, uint8_t **out, size_t *len) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = read_fd_bounded(fd, BUNDLE_FILE_MAX, out, len);
    close(fd);
    return r == 0 ? 0 : -1;
}

/* An array handed over by sb_fixture_inputs, kept in native order. */
typedef struct input_array {
    char name[64];
    sb_dtype dtype;
    uint64_t count;
    void *data;
} input_array;

typedef struct input_set {
    input_array a[64];
    int n;
} input_set;

static sb_status collect_input(void *ctx, const char *name, sb_dtype dtype, const void *data, uint64_t count) {
    input_set *s = ctx;
    if (s->n == 64 || strlen(name) >= sizeof s->a[0].name) return SB_ERR_LIMIT;
    input_array *a = &s->a[s->n];
    size_t bytes = (size_t)count * dtype_size(dtype);
    if (!(a->data = malloc(bytes ? bytes : 1))) return SB_ERR_OUT_OF_MEMORY;
    memcpy(a->data, data, bytes);
    strcpy(a->name, name);
    a->dtype = dtype;
    a->count = count;
    s->n++;
    return SB_OK;
}

static const input_array *find_input(const input_set *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->a[i].name, name) == 0) return &s->a[i];
    return NULL;
}

/* The bundle under construction: a staging directory, the paths made in it
 * (removed in reverse on failure) and the manifest's lines. */
typedef struct bundle {
    char stage[4096];
    char *made[8192]; /* every file and folder the export made (a bundle of 46 fixtures makes about 1,100) */
    int nmade;
    FILE *manifest;
} bundle;

static int remember(bundle *b, const char *path) {
    if (b->nmade == (int)(sizeof b->made / sizeof b->made[0])) {
        errno = ENOSPC; /* named in the caller's message: more files than an export may make */
        return -1;
    }
    if (!(b->made[b->nmade] = strdup(path))) return -1;
    b->nmade++;
    return 0;
}

static int make_dir(bundle *b, const char *rel) {
    char path[5200];
    snprintf(path, sizeof path, "%s/%s", b->stage, rel);
    if (mkdir(path, 0755) != 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot create '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return remember(b, path);
}

static int write_bytes(bundle *b, const char *rel, const void *data, size_t n) {
    char path[5200];
    snprintf(path, sizeof path, "%s/%s", b->stage, rel);
    FILE *f = fopen(path, "wb");
    if (!f || remember(b, path) != 0 || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void json_escaped(FILE *f, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

/* Write one file of the bundle and its manifest line. */
static int add_file(bundle *b, const char *fixture, const char *role, const char *name, const char *rel,
                    sb_dtype dtype, const void *native, uint64_t count) {
    uint8_t *bytes = canonical(dtype, native, count);
    if (!bytes) return -1;
    size_t n = (size_t)count * dtype_size(dtype);
    char hex[65];
    hex_sha256(bytes, n, hex);
    int rc = write_bytes(b, rel, bytes, n);
    free(bytes);
    if (rc) return rc;
    fprintf(b->manifest, "{\"fixture\":\"%s\",\"role\":\"%s\",\"name\":\"", fixture, role);
    json_escaped(b->manifest, name, strlen(name));
    fprintf(b->manifest, "\",\"path\":\"%s\",\"dtype\":\"%s\",\"count\":%llu,\"sha256\":\"%s\"}\n", rel,
            dtype_name(dtype), (unsigned long long)count, hex);
    return 0;
}

static int add_card(bundle *b, const char *fixture, const char *role, const char *rel, const sb_card *c) {
    size_t need = 0;
    char *text = NULL;
    sb_status st = sb_card_text(c, NULL, 0, &need);
    if (st == SB_OK && !(text = malloc(need))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_card_text(c, text, need, NULL);
    int rc = st == SB_OK ? add_file(b, fixture, role, role, rel, SB_DTYPE_U8, text, strlen(text)) : -1;
    if (st != SB_OK) lib_fail(st);
    free(text);
    return rc;
}

/* Retrain a model fixture from its exported inputs through the public API,
 * so the bundle's model and predictions come from exactly the bytes it ships;
 * the card of this run must equal the reference card. */
static sb_status retrain(const char *name, const input_set *in, const sb_card *ref, uint8_t **model,
                         size_t *model_len, float **pred, size_t *npred) {
    const input_array *params = find_input(in, "params"), *shape = find_input(in, "shape");
    const input_array *tx = find_input(in, "train.x"), *ty = find_input(in, "train.y");
    const input_array *tw = find_input(in, "train.w"), *vx = find_input(in, "valid.x");
    const input_array *vy = find_input(in, "valid.y");
    const input_array *tq = find_input(in, "train.qid"), *vq = find_input(in, "valid.qid"); /* ranking */
    const int64_t *sh = shape->data;
    sb_dataset *tr = NULL, *va = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    sb_card *card = NULL;
    char *ptext = malloc((size_t)params->count + 1);
    sb_status st = ptext ? SB_OK : SB_ERR_OUT_OF_MEMORY;
    if (!tx || !ty || !vx || !vy) st = SB_ERR_INTERNAL;
    if (st == SB_OK) {
        memcpy(ptext, params->data, (size_t)params->count);
        ptext[params->count] = 0;
        st = sb_dataset_from_matrix(tx->data, sh[0], (int32_t)sh[2], &tr);
    }
    if (st == SB_OK) st = sb_dataset_from_matrix(vx->data, sh[1], (int32_t)sh[2], &va);
    if (st == SB_OK) st = sb_dataset_set_label(tr, ty->data, sh[0]);
    if (st == SB_OK) st = sb_dataset_set_label(va, vy->data, sh[1]);
    if (st == SB_OK && tw) st = sb_dataset_set_weight(tr, tw->data, sh[0]);
    if (st == SB_OK && tq) st = sb_dataset_set_qid(tr, tq->data, sh[0]);
    if (st == SB_OK && vq) st = sb_dataset_set_qid(va, vq->data, sh[1]);
    if (st == SB_OK) st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, ptext);
    if (st == SB_OK) st = sb_card_create(&card);
    if (st == SB_OK) /* the family the fixture's parameters name (docs/forest.md), else gradient boosting */
        st = strstr(ptext, "model=isolation_forest") ? sb_isolation_forest_fit(p, tr, card, &m)
           : strstr(ptext, "model=")                 ? sb_forest_fit(p, tr, card, &m)
                                                     : sb_gbdt_fit(p, tr, va, card, &m);
    *model = NULL;
    *pred = NULL;
    /* The model as its card's model-bytes stage records it: the tree families'
     * version-1 file (docs/model-format.md, "Cards"), which every reader reads. */
    if (st == SB_OK) st = sb_model_to_bytes_version(m, 1, NULL, 0, model_len);
    if (st == SB_OK && !(*model = malloc(*model_len))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_to_bytes_version(m, 1, *model, *model_len, NULL);
    if (st == SB_OK) st = sb_model_predict(m, va, SB_PREDICT_RAW, NULL, 0, npred);
    if (st == SB_OK && !(*pred = malloc(sizeof(float) * (*npred ? *npred : 1)))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_predict(m, va, SB_PREDICT_RAW, *pred, *npred, NULL);
    if (st == SB_OK) st = sb_card_record(card, "predict.valid_margin", SB_DTYPE_F32, *pred, *npred);
    sb_card_diff d;
    if (st == SB_OK && sb_card_compare(ref, card, &d) != SB_OK) {
        printf("  %-15s DIFFERS from its reference when retrained from the bundle's inputs: ", name);
        print_diff(&d);
        st = SB_ERR_MISMATCH;
    }
    if (st != SB_OK) {
        free(*model);
        free(*pred);
        *model = NULL;
        *pred = NULL;
    }
    free(ptext);
    sb_card_free(card);
    sb_model_free(m);
    sb_params_free(p);
    sb_dataset_free(tr);
    sb_dataset_free(va);
    return st;
}

/* One fixture into the bundle: 0, or nonzero after printing why. */
static int export_fixture(bundle *b, const char *name) {
    input_set in = {.n = 0};
    sb_card *ref_in = NULL, *got_in = NULL, *ref = NULL, *run = NULL;
    uint8_t *model = NULL;
    float *pred = NULL;
    size_t model_len = 0, npred = 0;
    sb_card_diff d;
    int rc = 1;
    sb_status st = sb_fixture_input_reference(name, &ref_in);
    if (st == SB_OK) st = sb_fixture_reference(name, &ref);
    if (st == SB_OK) st = sb_fixture_inputs(name, collect_input, &in);
    if (st == SB_OK) st = input_card(name, &got_in);
    if (st != SB_OK) {
        lib_fail(st);
        goto done;
    }
    if (sb_card_compare(ref_in, got_in, &d) != SB_OK) {
        printf("  %-15s inputs DIFFER from their pinned digests: ", name);
        print_diff(&d);
        goto done;
    }
    /* The machine must reproduce the reference before it may export it. */
    if ((st = sb_card_create(&run)) == SB_OK) st = sb_fixture_run(name, run);
    if (st != SB_OK) {
        lib_fail(st);
        goto done;
    }
    if (sb_card_compare(ref, run, &d) != SB_OK) {
        printf("  %-15s DIFFERS from its reference card on this machine: ", name);
        print_diff(&d);
        goto done;
    }
    const int has_model = find_input(&in, "params") && find_input(&in, "shape");
    if (has_model && (st = retrain(name, &in, ref, &model, &model_len, &pred, &npred)) != SB_OK) {
        if (st != SB_ERR_MISMATCH) lib_fail(st);
        goto done;
    }
    char rel[1024];
    if (make_dir(b, name)) goto done;
    snprintf(rel, sizeof rel, "%s/inputs", name);
    if (make_dir(b, rel)) goto done;
    for (int i = 0; i < in.n; i++) {
        const input_array *a = &in.a[i];
        int is_params = strcmp(a->name, "params") == 0;
        if (is_params) snprintf(rel, sizeof rel, "%s/params.txt", name);
        else snprintf(rel, sizeof rel, "%s/inputs/%s.%s", name, a->name, dtype_name(a->dtype));
        if (add_file(b, name, is_params ? "params" : "input", a->name, rel, a->dtype, a->data, a->count)) goto done;
    }
    snprintf(rel, sizeof rel, "%s/inputs.card", name);
    if (add_card(b, name, "expected_inputs_card", rel, ref_in)) goto done;
    snprintf(rel, sizeof rel, "%s/expected.card", name);
    if (add_card(b, name, "expected_card", rel, ref)) goto done;
    if (has_model) {
        /* the stage that holds the model bytes: the family's (gbdt., forest., iforest.) */
        const char *model_stage = "gbdt.model_bytes";
        for (int32_t i = 0; i < in.n; i++)
            if (strcmp(in.a[i].name, "params") == 0) {
                char ptxt[512];
                size_t k = in.a[i].count < sizeof ptxt - 1 ? (size_t)in.a[i].count : sizeof ptxt - 1;
                memcpy(ptxt, in.a[i].data, k);
                ptxt[k] = 0;
                if (strstr(ptxt, "model=isolation_forest")) model_stage = "iforest.model_bytes";
                else if (strstr(ptxt, "model=")) model_stage = "forest.model_bytes";
            }
        snprintf(rel, sizeof rel, "%s/model.sbm", name);
        if (add_file(b, name, "model", model_stage, rel, SB_DTYPE_U8, model, model_len)) goto done;
        snprintf(rel, sizeof rel, "%s/predictions.f32", name);
        if (add_file(b, name, "predictions", "predict.valid_margin", rel, SB_DTYPE_F32, pred, npred)) goto done;
    }
    printf("  %-15s exported (%d input arrays%s)\n", name, in.n - (find_input(&in, "params") ? 1 : 0),
           has_model ? ", model, predictions" : "");
    rc = 0;
done:
    for (int i = 0; i < in.n; i++) free(in.a[i].data);
    free(model);
    free(pred);
    sb_card_free(ref_in);
    sb_card_free(got_in);
    sb_card_free(ref);
    sb_card_free(run);
    return rc;
}

static int conformance_export(int argc, char **argv) {
    const char *dir = NULL, *names[64];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' || n == 64) return usage("conformance export", "unexpected argument '%s'", argv[i]);
        if (!dir) dir = argv[i];
        else names[n++] = argv[i];
    }
    if (!dir) return usage("conformance export", "expected a directory to create%s", "");
    struct stat sst;
    if (lstat(dir, &sst) == 0) /* a dangling symbolic link too: never replaced */
        return usage("conformance export", "'%s' exists; give a new directory", dir);
    if (!n)
        for (int32_t i = 0; i < sb_fixture_count() && n < 64; i++) names[n++] = sb_fixture_name(i);
    for (int i = 0; i < n; i++) {
        const char *family;
        sb_status st = sb_fixture_get_family(names[i], &family);
        if (st != SB_OK) return lib_fail(st); /* names the fixture and lists the known ones */
    }
    bundle *b = calloc(1, sizeof *b);
    if (!b) return lib_fail(SB_ERR_OUT_OF_MEMORY);
    int rc = EXIT_ERROR;
    char manifest_tmp[4200], manifest[4200];
    snprintf(b->stage, sizeof b->stage, "%s.partial.%ld", dir, (long)getpid());
    if (mkdir(b->stage, 0755) != 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot create '%s': %s\n", b->stage, strerror(errno));
        free(b);
        return EXIT_ERROR;
    }
    snprintf(manifest_tmp, sizeof manifest_tmp, "%s/MANIFEST.jsonl.tmp", b->stage);
    snprintf(manifest, sizeof manifest, "%s/MANIFEST.jsonl", b->stage);
    b->manifest = fopen(manifest_tmp, "w");
    if (!b->manifest || remember(b, manifest_tmp)) goto fail;
    fprintf(b->manifest,
            "{\"samebits_conformance\":1,\"profile\":\"%s\",\"library\":\"%s\",\"exported_on\":\"%s\","
            "\"fixtures\":%d,\"doc\":\"docs/conformance.md\"}\n",
            sb_profile_version(), sb_version(), this_arch(), n);
    printf("samebits conformance export: %d fixtures into %s\n", n, dir);
    for (int i = 0; i < n; i++) {
        fprintf(b->manifest, "{\"fixture\":\"%s\",\"role\":\"fixture\",\"family\":\"%s\"}\n", names[i],
                sb_fixture_family(names[i]));
        if (export_fixture(b, names[i])) {
            rc = EXIT_DIFF;
            goto fail;
        }
    }
    FILE *mf = b->manifest;
    b->manifest = NULL;
    if (fclose(mf) != 0 || rename(manifest_tmp, manifest) != 0) goto fail;
    b->made[0][strlen(b->made[0]) - 4] = 0; /* made[0] was MANIFEST.jsonl.tmp: now its final name */
    if (rename(b->stage, dir) != 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot rename '%s' to '%s': %s\n", b->stage, dir,
                strerror(errno));
        goto fail;
    }
    printf("conformance export: done (%s/MANIFEST.jsonl)\n", dir);
    for (int i = 0; i < b->nmade; i++) free(b->made[i]);
    free(b);
    return 0;
fail:
    if (b->manifest) fclose(b->manifest);
    for (int i = b->nmade - 1; i >= 0; i--) {
        remove(b->made[i]);
        free(b->made[i]);
    }
    rmdir(b->stage);
    free(b);
    fprintf(stderr, "samebits: conformance export failed; nothing was written to '%s'\n", dir);
    return rc;
}

/* ---- validate ---- */

/* The string value of "key" in a one-line JSON object; 0 if found. */
static int json_str(const char *line, const char *key, char *out, size_t cap) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    p += strlen(pat);
    size_t n = 0;
    for (; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++;
        if (n + 1 < cap) out[n++] = *p;
    }
    out[n] = 0;
    return *p == '"' ? 0 : -1;
}

static int json_u64(const char *line, const char *key, uint64_t *out) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    char *end;
    *out = strtoull(p + strlen(pat), &end, 10);
    return end == p + strlen(pat) ? -1 : 0;
}

/* The most files a bundle's manifest may list: the export's own cap. */
#define BUNDLE_FILES_MAX 8192

typedef struct bfile {
    char fixture[128], role[64], name[64], path[1024], sha[65];
    sb_dtype dtype;
    uint64_t count;
} bfile;

/* The stage digest of tag in card text; 0 if present. */
static int stage_digest(const char *card_text, const char *tag, char hex[65], uint64_t *count) {
    char pat[128];
    snprintf(pat, sizeof pat, "\"stage\":\"%s\",", tag);
    const char *line = strstr(card_text, pat);
    if (!line) return -1;
    const char *eol = strchr(line, '\n');
    char buf[512];
    size_t n = eol ? (size_t)(eol - line) : strlen(line);
    if (n >= sizeof buf) return -1;
    memcpy(buf, line, n);
    buf[n] = 0;
    return json_str(buf, "sha256", hex, 65) || json_u64(buf, "count", count) ? -1 : 0;
}

static int bad_bundle(int *bad, const char *what, const char *detail) {
    printf("  DAMAGED: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    (*bad)++;
    return 0;
}

static const bfile *find_file(const bfile *f, int n, const char *fixture, const char *role) {
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].fixture, fixture) == 0 && strcmp(f[i].role, role) == 0) return &f[i];
    return NULL;
}

/* The bytes a manifest line states for f, at most (and BUNDLE_FILE_MAX). */
static size_t stated_size(const bfile *f) {
    size_t w = dtype_size(f->dtype);
    return f->count > BUNDLE_FILE_MAX / w ? BUNDLE_FILE_MAX : (size_t)f->count * w;
}

static char *file_text(int dirfd, const bfile *f) {
    uint8_t *b;
    size_t n;
    const char *why;
    if (bundle_read(dirfd, f->path, stated_size(f), &b, &n, &why) != 0) return NULL;
    return (char *)b; /* read_fd_bounded ends it with a NUL */
}

/* A candidate model file in the encoding of the bundle's model (the version-1
 * file its card's stage records): a model file of another version that this
 * library reads is written again in version 1, so the version-2 file of the
 * same model compares identical; 1 when *got was so replaced. Anything that
 * does not read as a model is left as it is (and then differs). */
static int as_stage_model(uint8_t **got, size_t *ngot) {
    if (*ngot < 12 || memcmp(*got, "SBMODEL", 8) != 0 || (*got)[8] == 1) return 0;
    sb_model *m = NULL;
    uint8_t *b = NULL;
    size_t need = 0;
    int done = sb_model_from_bytes(*got, *ngot, &m) == SB_OK &&
               sb_model_to_bytes_version(m, 1, NULL, 0, &need) == SB_OK && (b = malloc(need)) != NULL &&
               sb_model_to_bytes_version(m, 1, b, need, NULL) == SB_OK;
    sb_model_free(m);
    if (!done) {
        free(b);
        return 0;
    }
    free(*got);
    *got = b;
    *ngot = need;
    return 1;
}

/* Compare a candidate file with the bundle's file of the same role. */
static int check_candidate(int dirfd, const bfile *want, const char *path) {
    uint8_t *got = NULL, *exp = NULL;
    size_t ngot, nexp;
    char hex[65];
    const char *why;
    if (read_user_file(path, &got, &ngot)) {
        printf("  candidate %s: ERROR SB_ERR_IO: cannot read '%s' (a regular file of at most 1 GiB)\n", want->role,
               path);
        return EXIT_ERROR;
    }
    const int reencoded = !strcmp(want->role, "model") && as_stage_model(&got, &ngot);
    if (want->dtype == SB_DTYPE_F32 && ngot % 4 == 0)
        for (size_t i = 0; i < ngot; i += 4) { /* little-endian words; NaN as the profile's one NaN */
            uint32_t u = (uint32_t)got[i] | (uint32_t)got[i + 1] << 8 | (uint32_t)got[i + 2] << 16 |
                         (uint32_t)got[i + 3] << 24;
            if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) {
                got[i] = 0, got[i + 1] = 0, got[i + 2] = 0xC0, got[i + 3] = 0x7F;
            }
        }
    hex_sha256(got, ngot, hex);
    int same = strcmp(hex, want->sha) == 0;
    if (same) {
        printf("  candidate %s (%s): identical (sha256 %s%s)\n", want->role, want->fixture, hex,
               reencoded ? ", of its version-1 encoding" : "");
    } else {
        size_t w = dtype_size(want->dtype), first = 0, ndiff = 0;
        if (bundle_read(dirfd, want->path, stated_size(want), &exp, &nexp, &why) == 0 && nexp == ngot) {
            for (size_t i = 0; i < nexp; i += w)
                if (memcmp(exp + i, got + i, w) != 0 && ndiff++ == 0) first = i / w;
            printf("  candidate %s (%s): DIFFERS in %zu of %zu elements, first at element %zu\n", want->role,
                   want->fixture, ndiff, nexp / w, first);
        } else {
            printf("  candidate %s (%s): DIFFERS: %zu bytes, expected %llu\n", want->role, want->fixture, ngot,
                   (unsigned long long)(want->count * dtype_size(want->dtype)));
        }
        printf("    expected sha256 %s\n    got      sha256 %s\n", want->sha, hex);
    }
    free(got);
    free(exp);
    return same ? 0 : EXIT_DIFF;
}

/* The manifest's next line (without its newline) into line: 1, or 0 at the
 * end. A line too long for line comes back truncated and then fails to parse
 * as a manifest line (damage), never split into two. */
static int next_line(const char **mp, const char *mend, char *line, size_t cap) {
    if (*mp >= mend) return 0;
    const char *nl = memchr(*mp, '\n', (size_t)(mend - *mp));
    const char *e = nl ? nl : mend;
    size_t n = (size_t)(e - *mp) < cap - 1 ? (size_t)(e - *mp) : cap - 1;
    memcpy(line, *mp, n);
    line[n] = 0;
    if (memchr(line, 0, n)) line[0] = 0; /* a NUL inside: not a manifest line */
    *mp = nl ? nl + 1 : mend;
    return 1;
}

static int validate_bundle(const char *dir, int dirfd, const char *fixture, const char *cand_model,
                           const char *cand_pred, const char *cand_card);

static int conformance_validate(int argc, char **argv) {
    const char *dir = NULL, *fixture = NULL, *cand_model = NULL, *cand_pred = NULL, *cand_card = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--fixture") == 0 && i + 1 < argc) fixture = argv[++i];
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) cand_model = argv[++i];
        else if (strcmp(argv[i], "--predictions") == 0 && i + 1 < argc) cand_pred = argv[++i];
        else if (strcmp(argv[i], "--card") == 0 && i + 1 < argc) cand_card = argv[++i];
        else if (argv[i][0] == '-' || dir) return usage("conformance validate", "unexpected argument '%s'", argv[i]);
        else dir = argv[i];
    }
    if (!dir) return usage("conformance validate", "expected a bundle directory%s", "");
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the bundle itself: as the user names it */
    if (dirfd < 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot open the bundle '%s': %s\n", dir, strerror(errno));
        return EXIT_ERROR;
    }
    int rc = validate_bundle(dir, dirfd, fixture, cand_model, cand_pred, cand_card);
    close(dirfd);
    return rc;
}

static int validate_bundle(const char *dir, int dirfd, const char *fixture, const char *cand_model,
                           const char *cand_pred, const char *cand_card) {
    uint8_t *mtext = NULL;
    size_t mlen = 0;
    const char *why = NULL;
    int mr = bundle_read(dirfd, "MANIFEST.jsonl", BUNDLE_MANIFEST_MAX, &mtext, &mlen, &why);
    if (mr != 0) {
        fprintf(stderr, "samebits: error: SB_ERR_IO: cannot read '%s/MANIFEST.jsonl': %s\n", dir,
                mr > 0 ? "larger than its 16 MiB limit" : why);
        return EXIT_ERROR;
    }
    static bfile files[BUNDLE_FILES_MAX]; /* as many as an export may make (46 fixtures: about 1,100) */
    int nf = 0, bad = 0, nfix = 0;
    char line[4096], profile[64] = "";
    uint64_t version = 0;
    const char *mp = (const char *)mtext, *mend = mp + mlen;
    if (!next_line(&mp, mend, line, sizeof line) || json_u64(line, "samebits_conformance", &version) || version != 1 ||
        json_str(line, "profile", profile, sizeof profile)) {
        free(mtext);
        printf("conformance validate: %s is not a samebits conformance bundle of format 1\n", dir);
        return EXIT_DIFF;
    }
    printf("samebits conformance validate: %s (profile %s)\n", dir, profile);
    if (strcmp(profile, sb_profile_version()) != 0)
        printf("  note: this library implements profile %s\n", sb_profile_version());
    while (next_line(&mp, mend, line, sizeof line)) {
        bfile f;
        char dt[16] = "";
        memset(&f, 0, sizeof f);
        if (json_str(line, "fixture", f.fixture, sizeof f.fixture) || json_str(line, "role", f.role, sizeof f.role)) {
            bad_bundle(&bad, "manifest line without fixture and role", NULL);
            continue;
        }
        if (strcmp(f.role, "fixture") == 0) {
            nfix++;
            continue;
        }
        if (nf == BUNDLE_FILES_MAX) {
            bad_bundle(&bad, "more files in the manifest than a bundle may hold (8,192)", f.fixture);
            continue;
        }
        if (json_str(line, "name", f.name, sizeof f.name) ||
            json_str(line, "path", f.path, sizeof f.path) || json_str(line, "dtype", dt, sizeof dt) ||
            dtype_parse(dt, &f.dtype) || json_u64(line, "count", &f.count) ||
            json_str(line, "sha256", f.sha, sizeof f.sha) || strstr(f.path, "..") || f.path[0] == '/') {
            bad_bundle(&bad, "malformed manifest line", f.path[0] ? f.path : f.fixture);
            continue;
        }
        files[nf++] = f;
    }
    free(mtext);
    /* Every file: present, of the stated size and digest. */
    for (int i = 0; i < nf; i++) {
        uint8_t *b;
        size_t n;
        char hex[65];
        int r = bundle_read(dirfd, files[i].path, stated_size(&files[i]), &b, &n, &why);
        if (r < 0) {
            bad_bundle(&bad, why, files[i].path);
            continue;
        }
        if (r > 0) {
            bad_bundle(&bad, "wrong size", files[i].path);
            continue;
        }
        hex_sha256(b, n, hex);
        free(b);
        if (n != files[i].count * dtype_size(files[i].dtype)) bad_bundle(&bad, "wrong size", files[i].path);
        else if (strcmp(hex, files[i].sha) != 0) bad_bundle(&bad, "digest differs from the manifest", files[i].path);
    }
    /* Each fixture: its files agree with its expected cards. */
    for (int i = 0; i < nf; i++) {
        const bfile *f = &files[i];
        const char *card_role = NULL;
        if (!strcmp(f->role, "input") || !strcmp(f->role, "params")) card_role = "expected_inputs_card";
        else if (!strcmp(f->role, "model") || !strcmp(f->role, "predictions")) card_role = "expected_card";
        if (!card_role) continue;
        const bfile *cf = find_file(files, nf, f->fixture, card_role);
        char *text = cf ? file_text(dirfd, cf) : NULL;
        char hex[65];
        uint64_t count = 0;
        if (!text) bad_bundle(&bad, "no readable expected card for", f->path);
        else if (stage_digest(text, f->name, hex, &count) || count != f->count || strcmp(hex, f->sha) != 0)
            bad_bundle(&bad, "file does not match its stage in the expected card", f->path);
        free(text);
    }
    for (int i = 0; i < nf; i++) {
        if (strcmp(files[i].role, "expected_card") && strcmp(files[i].role, "expected_inputs_card")) continue;
        char *text = file_text(dirfd, &files[i]);
        sb_card *c = NULL;
        if (!text || sb_card_parse(text, strlen(text), &c) != SB_OK) bad_bundle(&bad, "card does not parse", files[i].path);
        sb_card_free(c);
        free(text);
    }
    /* Informative: the expected cards against this library's own references
     * (another library version may differ without the bundle being damaged). */
    int same_ref = 0, other_ref = 0;
    for (int i = 0; i < nf; i++) {
        int inputs = !strcmp(files[i].role, "expected_inputs_card");
        if (!inputs && strcmp(files[i].role, "expected_card")) continue;
        char *text = file_text(dirfd, &files[i]);
        sb_card *c = NULL, *ref = NULL;
        sb_card_diff d;
        if (text && sb_card_parse(text, strlen(text), &c) == SB_OK &&
            (inputs ? sb_fixture_input_reference(files[i].fixture, &ref)
                    : sb_fixture_reference(files[i].fixture, &ref)) == SB_OK) {
            if (sb_card_compare(ref, c, &d) == SB_OK) same_ref++;
            else other_ref++;
        }
        sb_card_free(c);
        sb_card_free(ref);
        free(text);
    }
    printf("  %d fixtures, %d files; %d expected cards equal this library's references, %d differ\n", nfix, nf,
           same_ref, other_ref);
    printf("bundle: %s\n", bad ? "DAMAGED" : "intact");
    if (bad) return EXIT_DIFF;
    if (!cand_model && !cand_pred && !cand_card) return 0;
    /* Candidate outputs: against one fixture's expected bytes. */
    if (!fixture) {
        int models = 0;
        for (int i = 0; i < nf; i++)
            if (!strcmp(files[i].role, "model")) models++, fixture = files[i].fixture;
        if (models != 1) return usage("conformance validate", "the bundle holds %s models; name one with --fixture",
                                      models ? "several" : "no");
    }
    int rc = 0, r;
    const bfile *want;
    if (cand_model) {
        if (!(want = find_file(files, nf, fixture, "model")))
            return usage("conformance validate", "fixture '%s' has no model in this bundle", fixture);
        if ((r = check_candidate(dirfd, want, cand_model)) > rc) rc = r;
    }
    if (cand_pred) {
        if (!(want = find_file(files, nf, fixture, "predictions")))
            return usage("conformance validate", "fixture '%s' has no predictions in this bundle", fixture);
        if ((r = check_candidate(dirfd, want, cand_pred)) > rc) rc = r;
    }
    if (cand_card) {
        if (!(want = find_file(files, nf, fixture, "expected_card")))
            return usage("conformance validate", "fixture '%s' is not in this bundle", fixture);
        char *text = file_text(dirfd, want);
        sb_card *exp = NULL, *got = NULL;
        sb_status st = text ? sb_card_parse(text, strlen(text), &exp) : SB_ERR_IO;
        free(text);
        uint8_t *ctext = NULL;
        size_t clen = 0;
        if (st == SB_OK && read_user_file(cand_card, &ctext, &clen) != 0) {
            free(ctext);
            sb_card_free(exp);
            fprintf(stderr, "samebits: error: SB_ERR_IO: cannot read the candidate card '%s' (a regular file of at "
                    "most 1 GiB)\n", cand_card);
            return EXIT_ERROR;
        }
        if (st == SB_OK) st = sb_card_parse((const char *)ctext, clen, &got);
        free(ctext);
        if (st != SB_OK) {
            sb_card_free(exp);
            return lib_fail(st);
        }
        sb_card_diff d;
        if (sb_card_compare(exp, got, &d) == SB_OK) {
            printf("  candidate card (%s): identical\n", fixture);
        } else {
            printf("  candidate card (%s): DIFFERS: ", fixture);
            print_diff(&d);
            if (rc < EXIT_DIFF) rc = EXIT_DIFF;
        }
        sb_card_free(exp);
        sb_card_free(got);
    }
    printf("candidate: %s\n", rc == 0 ? "PASS" : "FAIL");
    return rc;
}

int sb_cli_conformance(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "export") == 0) return conformance_export(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "validate") == 0) return conformance_validate(argc - 1, argv + 1);
    return usage("conformance", "expected 'export DIR [NAME...]' or 'validate DIR [...]'%s", "");
}
