/*
 * lm_cli.c: the byte-level language model from the command line (docs/lm.md,
 * "Command line"). `samebits train --model lm` trains on a file's raw bytes
 * (any file: the model reads bytes, not characters) for --steps AdamW steps
 * and writes the checkpoint (the model file), printing each held-out loss on
 * stderr; --init CHECKPOINT resumes a saved run on the same file, which
 * continues the uninterrupted run's trajectory byte for byte (the options
 * are the checkpoint's: key=value is refused with --init, but device=D,
 * the run's own choice: a checkpoint resumes on another device on the same
 * trajectory). `samebits
 * generate` samples bytes after a prompt.
 */
#include "lm_cli.h"
#include "cli_fail.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_CLI_MAX_BYTES 2000000000l

/* The whole file, or NULL after a message. */
static uint8_t *read_all(const char *path, int64_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "samebits: error: cannot read '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        const size_t got = fread(b + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
        if (len == cap) {
            if (cap > (size_t)LM_CLI_MAX_BYTES) {
                free(b), b = NULL;
                fprintf(stderr, "samebits: error: '%s' is larger than %ld bytes\n", path, LM_CLI_MAX_BYTES);
                fclose(f);
                return NULL;
            }
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) free(b);
            b = nb, cap *= 2;
        }
    }
    const int err = ferror(f);
    fclose(f);
    if (!b || err) {
        free(b);
        fprintf(stderr, "samebits: error: %s '%s'\n", b ? "reading failed:" : "out of memory for", path);
        return NULL;
    }
    *n = (int64_t)len;
    return b;
}

static int whole_arg(const char *what, const char *v, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    const long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "samebits: %s '%s' must be a whole number in %lld..%lld\n", what, v, lo, hi);
        return 0;
    }
    *out = x;
    return 1;
}

int sb_cli_train_lm(int argc, char **argv) {
    const char *data = NULL, *out = NULL, *init = NULL, *device = NULL;
    long long steps = 128, every = 0;
    int nkeys = 0;
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st != SB_OK) return lib_fail(st);
    int rc = EXIT_ERROR;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (!strcmp(a, "--model") && has) i++;
        else if (!strcmp(a, "--data") && has) data = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (!strcmp(a, "--init") && has) init = argv[++i];
        else if (!strcmp(a, "--steps") && has) {
            if (!whole_arg("train: --steps", argv[++i], 0, 100000000, &steps)) goto done;
        } else if (!strcmp(a, "--eval-every") && has) {
            if (!whole_arg("train: --eval-every", argv[++i], 0, 100000000, &every)) goto done;
        } else if (!strcmp(a, "--threads") && has) {
            long long t;
            if (!whole_arg("train: --threads", argv[++i], 1, 4096, &t)) goto done;
            if ((st = sb_set_num_threads((int32_t)t)) != SB_OK) {
                rc = lib_fail(st);
                goto done;
            }
        } else if (!strncmp(a, "device=", 7)) {
            device = a + 7; /* a run's choice, with --init too (sb_lm_set_device) */
            if ((st = sb_params_parse(params, a)) != SB_OK) {
                rc = lib_fail(st);
                goto done;
            }
        } else if (a[0] != '-' && strchr(a, '=')) {
            if ((st = sb_params_parse(params, a)) != SB_OK) {
                rc = lib_fail(st);
                goto done;
            }
            nkeys++;
        } else {
            rc = fail("train: unexpected argument '%s' (usage: train --model lm --data FILE --out MODEL [--steps N] "
                      "[--eval-every K] [--init CHECKPOINT] [--threads T] [key=value ...])", a);
            goto done;
        }
    }
    if (!data || !out) {
        rc = fail("train: --model lm needs --data FILE and --out MODEL%s", "");
        goto done;
    }
    if (init && nkeys) {
        rc = fail("train: --init '%s' resumes a checkpoint with its own options; key=value would leave its trajectory", init);
        goto done;
    }
    int64_t n = 0;
    uint8_t *corpus = read_all(data, &n);
    if (!corpus) goto done;
    sb_lm *lm = NULL;
    st = init ? sb_lm_load(init, &lm) : sb_lm_create(params, &lm);
    if (st == SB_OK && init && device) st = sb_lm_set_device(lm, device);
    int64_t before = 0;
    if (st == SB_OK) st = sb_lm_get_int(lm, "n_heldout", &before);
    if (st == SB_OK) st = sb_lm_train(lm, corpus, n, steps, every);
    if (st == SB_OK) st = sb_lm_save(lm, out);
    if (st == SB_OK) {
        int64_t step = 0, nh = 0, np = 0;
        sb_lm_get_int(lm, "step", &step);
        sb_lm_get_int(lm, "n_heldout", &nh);
        sb_lm_get_int(lm, "n_params", &np);
        float *h = malloc(sizeof(float) * (size_t)(nh ? nh : 1));
        size_t got = 0;
        if (h && sb_lm_get_f32(lm, "heldout_loss", h, (size_t)(nh ? nh : 1), &got) == SB_OK)
            for (int64_t i = before; i < nh; i++) {
                char name[48];
                int64_t at = 0;
                snprintf(name, sizeof name, "heldout_step_%lld", (long long)i);
                sb_lm_get_int(lm, name, &at);
                fprintf(stderr, "lm: step %lld held-out loss %.9g\n", (long long)at, (double)h[i]);
            }
        free(h);
        fprintf(stderr, "lm: %lld bytes, %lld parameters, step %lld\n", (long long)n, (long long)np, (long long)step);
        rc = 0;
    } else
        rc = lib_fail(st);
    sb_lm_free(lm);
    free(corpus);
done:
    sb_params_free(params);
    return rc;
}

int sb_cli_generate(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *out = "-";
    long long count = 200, seed = 0;
    double temperature = 1.0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (!strcmp(a, "--model-file") && has) model = argv[++i];
        else if (!strcmp(a, "--prompt") && has) prompt = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (!strcmp(a, "--count") && has) {
            if (!whole_arg("generate: --count", argv[++i], 0, 100000000, &count)) return EXIT_ERROR;
        } else if (!strcmp(a, "--seed") && has) {
            if (!whole_arg("generate: --seed", argv[++i], 0, 0x7fffffffffffffffll, &seed)) return EXIT_ERROR;
        } else if (!strcmp(a, "--temperature") && has) {
            char *end;
            temperature = strtod(argv[++i], &end);
            if (end == argv[i] || *end) return fail("generate: --temperature '%s' must be a number", argv[i]);
        } else if (!strcmp(a, "--threads") && has) {
            long long t;
            if (!whole_arg("generate: --threads", argv[++i], 1, 4096, &t)) return EXIT_ERROR;
            const sb_status st = sb_set_num_threads((int32_t)t);
            if (st != SB_OK) return lib_fail(st);
        } else
            return fail("generate: unexpected argument '%s' (usage: generate --model-file MODEL --prompt TEXT "
                        "[--count N] [--temperature T] [--seed S] [--out FILE])", a);
    }
    if (!model || !prompt) return fail("generate: needs --model-file MODEL and --prompt TEXT%s", "");
    sb_lm *lm = NULL;
    sb_status st = sb_lm_load(model, &lm);
    if (st != SB_OK) return lib_fail(st);
    uint8_t *buf = malloc((size_t)(count ? count : 1));
    int rc = EXIT_ERROR;
    if (!buf) rc = fail("generate: out of memory for %s bytes", "--count");
    else if ((st = sb_lm_generate(lm, (const uint8_t *)prompt, (int64_t)strlen(prompt), count, temperature,
                                  (uint64_t)seed, buf)) != SB_OK)
        rc = lib_fail(st);
    else {
        FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
        if (!f) rc = fail("error: cannot write '%s'", out);
        else {
            int bad = fwrite(buf, 1, (size_t)count, f) != (size_t)count;
            if (f != stdout) bad |= fclose(f) != 0;
            else bad |= fflush(f) != 0;
            rc = bad ? fail("error: writing '%s' failed", out) : 0;
        }
    }
    free(buf);
    sb_lm_free(lm);
    return rc;
}
