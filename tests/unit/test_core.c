/* test_core.c: status, errors, modes, params, threads, digest, rng and cards. */
#include "sb_test.h"
#include "samebits_cert.h"
#include "core/internal.h"
#include "core/rng.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- status and per-thread errors ---- */

SB_TEST(test_core_status_names) {
    SB_CHECK(strcmp(sb_status_name(SB_OK), "SB_OK") == 0);
    SB_CHECK(strcmp(sb_status_name(SB_ERR_MODE_UNSUPPORTED), "SB_ERR_MODE_UNSUPPORTED") == 0);
    SB_CHECK(strcmp(sb_status_name(SB_ERR_IDENTITY_REFUSED), "SB_ERR_IDENTITY_REFUSED") == 0);
    SB_CHECK(strcmp(sb_status_name((sb_status)999), "SB_ERR_UNKNOWN_STATUS") == 0);
}

static void *other_thread_error(void *arg) {
    (void)arg;
    sb_numeric_mode m;
    sb_numeric_mode_parse("bogus-in-thread", &m);
    return strstr(sb_last_error(), "bogus-in-thread") ? (void *)1 : NULL;
}

SB_TEST(test_core_last_error_is_per_thread) {
    sb_numeric_mode m;
    SB_CHECK(sb_numeric_mode_parse("main-thread-bogus", &m) == SB_ERR_INVALID_ARGUMENT);
    pthread_t t;
    void *ok = NULL;
    pthread_create(&t, NULL, other_thread_error, NULL);
    pthread_join(t, &ok);
    SB_CHECK(ok != NULL);
    SB_CHECK(strstr(sb_last_error(), "main-thread-bogus") != NULL);
    SB_CHECK(sb_numeric_mode_parse("fast", &m) == SB_OK);
    SB_CHECK(sb_last_error()[0] == '\0');
}

SB_TEST(test_core_version) {
    SB_CHECK(strcmp(sb_version(), SB_VERSION_STRING) == 0);
    SB_CHECK(strcmp(sb_profile_version(), "sb-identical-v9") == 0);
    size_t need = 0;
    SB_CHECK(sb_build_info(NULL, 0, &need) == SB_OK && need > 10);
    char small[8];
    SB_CHECK(sb_build_info(small, sizeof small, NULL) == SB_ERR_LIMIT);
    SB_CHECK(strlen(small) == 7);
}

/* The build's own probes (build_info.c, compiled with the library's flags)
 * find the arithmetic the profile needs: no contraction, no excess
 * precision, denormals kept. doctor prints the same text. A contracting or
 * excess-precision arm build fails this case (tests/integration/test_arms.py
 * runs it there), which is how the probes are shown able to fail without a
 * whole self-check under qemu. */
SB_TEST(test_build_info_probes_find_the_profile_arithmetic) {
    char info[2048];
    SB_CHECK(sb_build_info(info, sizeof info, NULL) == SB_OK);
    const char *want[] = {"contraction: off", "excess precision: none", "denormals: kept"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(info, want[i])) {
            fprintf(stderr, "  build info lacks '%s':\n%s", want[i], info);
            sb_test_fail(__FILE__, __LINE__, want[i]);
        }
}

/* ---- numeric modes ---- */

SB_TEST(test_core_mode_parse_and_names) {
    sb_numeric_mode m;
    SB_CHECK(sb_numeric_mode_parse("identical", &m) == SB_OK && m == SB_MODE_IDENTICAL);
    SB_CHECK(sb_numeric_mode_parse("deterministic", &m) == SB_OK && m == SB_MODE_DETERMINISTIC);
    SB_CHECK(sb_numeric_mode_parse("fast", &m) == SB_OK && m == SB_MODE_FAST);
    SB_CHECK(sb_numeric_mode_parse("Identical", &m) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "identical, deterministic, fast") != NULL);
    SB_CHECK(strcmp(sb_numeric_mode_name(SB_MODE_DETERMINISTIC), "deterministic") == 0);
}

SB_TEST(test_core_mode_env_and_override) {
    sb_numeric_mode m;
    setenv("SAMEBITS_NUMERIC_MODE", "quick", 1);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUMERIC_MODE") != NULL);
    SB_CHECK(strstr(sb_last_error(), "identical, deterministic, fast") != NULL);
    /* A known name that is not built is a refusal by name, not identical run
     * under the label asked for. */
    setenv("SAMEBITS_NUMERIC_MODE", "fast", 1);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUMERIC_MODE=fast is not built: only identical is") != NULL);
    setenv("SAMEBITS_NUMERIC_MODE", "deterministic", 1);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUMERIC_MODE=deterministic is not built") != NULL);
    setenv("SAMEBITS_NUMERIC_MODE", "identical", 1);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_OK && m == SB_MODE_IDENTICAL);
    unsetenv("SAMEBITS_NUMERIC_MODE");
    SB_CHECK(sb_get_numeric_mode(&m) == SB_OK && m == SB_MODE_IDENTICAL);
    SB_CHECK(sb_set_numeric_mode("deterministic") == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(strstr(sb_last_error(), "numeric_mode=deterministic is not built: only identical is; "
                                     "see docs/numeric-profile.md") != NULL);
    SB_CHECK(sb_set_numeric_mode("fast") == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(strstr(sb_last_error(), "numeric_mode=fast is not built") != NULL);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_OK && m == SB_MODE_IDENTICAL); /* a refusal changes nothing */
    SB_CHECK(sb_set_numeric_mode("nope") == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_set_numeric_mode("identical") == SB_OK);
    SB_CHECK(sb_get_numeric_mode(&m) == SB_OK && m == SB_MODE_IDENTICAL);
}

SB_TEST(test_core_family_tiers_refuse_by_name) {
    /* Every family is identical-only: the other two tiers are not built. */
    for (int f = 0; f < SB_FAMILY_COUNT_; f++) {
        SB_CHECK(sb_family_supports_mode((sb_family)f, SB_MODE_IDENTICAL) == SB_OK);
        for (int mode = SB_MODE_DETERMINISTIC; mode <= SB_MODE_FAST; mode++) {
            SB_CHECK(sb_family_supports_mode((sb_family)f, (sb_numeric_mode)mode) == SB_ERR_MODE_UNSUPPORTED);
            SB_CHECK(strstr(sb_last_error(), "is not built: only identical is") &&
                     strstr(sb_last_error(), sb_numeric_mode_name((sb_numeric_mode)mode)) &&
                     strstr(sb_last_error(), sb_family_name((sb_family)f)));
        }
    }
}

SB_TEST(test_core_params_resolve_mode) {
    sb_params *p = NULL;
    sb_numeric_mode used;
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_params_resolve_mode(p, SB_FAMILY_GBDT, &used) == SB_OK && used == SB_MODE_IDENTICAL);
    SB_CHECK(sb_params_parse(p, "numeric_mode=identical, max_depth=6") == SB_OK);
    SB_CHECK(sb_params_resolve_mode(p, SB_FAMILY_GBDT, &used) == SB_OK && used == SB_MODE_IDENTICAL);
    /* A per-estimator tier that is not built is a refusal, not a downgrade. */
    SB_CHECK(sb_params_set(p, "numeric_mode", "fast") == SB_OK);
    used = (sb_numeric_mode)7;
    SB_CHECK(sb_params_resolve_mode(p, SB_FAMILY_GBDT, &used) == SB_ERR_MODE_UNSUPPORTED && used == 7);
    SB_CHECK(strstr(sb_last_error(), "numeric_mode=fast is not built"));
    SB_CHECK(sb_params_resolve_mode(p, SB_FAMILY_KMEANS, &used) == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(sb_params_set(p, "numeric_mode", "fastest") == SB_OK);
    SB_CHECK(sb_params_resolve_mode(p, SB_FAMILY_GBDT, &used) == SB_ERR_INVALID_ARGUMENT);
    const char *v = NULL;
    SB_CHECK(sb_params_get(p, "max_depth", &v) == SB_OK && strcmp(v, "6") == 0);
    SB_CHECK(sb_params_get(p, "missing", &v) == SB_ERR_NOT_FOUND);
    SB_CHECK(sb_params_parse(p, "novalue") == SB_ERR_INVALID_INPUT);
    SB_CHECK(sb_params_set(p, "bad key", "1") == SB_ERR_INVALID_ARGUMENT);
    sb_params_free(p);
    sb_params_free(NULL);
}

/* ---- threads ---- */

typedef struct count_ctx {
    int64_t n;
    int32_t *hits;
} count_ctx;

static void count_task(void *ctx, int64_t t) {
    count_ctx *c = ctx;
    __atomic_add_fetch(&c->hits[t], 1, __ATOMIC_RELAXED);
}

SB_TEST(test_core_parallel_for_runs_each_task_once) {
    int32_t counts[] = {1, 2, 3, 7, 16};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        SB_CHECK(sb_set_num_threads(counts[k]) == SB_OK);
        int32_t hits[1000];
        memset(hits, 0, sizeof hits);
        count_ctx c = {1000, hits};
        sb_parallel_for(1000, count_task, &c);
        int ok = 1;
        for (int i = 0; i < 1000; i++) ok &= hits[i] == 1;
        SB_CHECK(ok);
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

/* The pool's hand-off under load: many short jobs in a row (the shape of a
 * Householder reduction's steps), narrower jobs (a width below the pool's),
 * pool restarts between counts, and pauses long enough for the workers to go
 * to sleep, each job's every task run exactly once and the job over when the
 * call returns (a task still running after it would be missed by the check). */
typedef struct stress_ctx {
    int32_t *hits;
    int64_t *done;
} stress_ctx;

static void stress_task(void *ctx, int64_t t) {
    stress_ctx *c = ctx;
    __atomic_add_fetch(&c->hits[t], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(c->done, 1, __ATOMIC_RELEASE);
}

SB_TEST(test_core_parallel_for_handoff_stress) {
    int32_t counts[] = {2, 7, 3, 16};
    int32_t hits[64];
    int ok = 1;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        SB_CHECK(sb_set_num_threads(counts[k]) == SB_OK);
        for (int32_t job = 0; job < 3000 && ok; job++) {
            const int64_t ntasks = 1 + job % 64;
            int64_t done = 0;
            memset(hits, 0, sizeof hits);
            stress_ctx c = {hits, &done};
            if (job % 3 == 1) sb_parallel_for_width(ntasks, 1 + job % 5, stress_task, &c);
            else sb_parallel_for(ntasks, stress_task, &c);
            ok &= __atomic_load_n(&done, __ATOMIC_ACQUIRE) == ntasks;
            for (int64_t i = 0; i < ntasks; i++) ok &= hits[i] == 1;
            if (job % 1000 == 999) { /* long enough for the workers to sleep */
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        }
    }
    SB_CHECK(ok);
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

SB_TEST(test_core_thread_count_settings) {
    int32_t n = 0;
    SB_CHECK(sb_set_num_threads(-1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_set_num_threads(SB_MAX_THREADS + 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_set_num_threads(5) == SB_OK);
    SB_CHECK(sb_get_num_threads(&n) == SB_OK && n == 5);
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    setenv("SAMEBITS_NUM_THREADS", "3", 1);
    SB_CHECK(sb_get_num_threads(&n) == SB_OK && n == 3);
    setenv("SAMEBITS_NUM_THREADS", "three", 1);
    SB_CHECK(sb_get_num_threads(&n) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUM_THREADS") != NULL);
    setenv("SAMEBITS_NUM_THREADS", "0", 1);
    SB_CHECK(sb_get_num_threads(&n) == SB_ERR_INVALID_ARGUMENT);
    unsetenv("SAMEBITS_NUM_THREADS");
    SB_CHECK(sb_get_num_threads(&n) == SB_OK && n >= 1);
}

SB_TEST(test_core_fixed_chunks) {
    int64_t b, e;
    SB_CHECK(sb_chunk_count(0, 10) == 0);
    SB_CHECK(sb_chunk_count(10, 10) == 1);
    SB_CHECK(sb_chunk_count(11, 10) == 2);
    sb_chunk_range(11, 10, 1, &b, &e);
    SB_CHECK(b == 10 && e == 11);
}

/* ---- SHA-256: FIPS 180-4 example vectors ---- */

static int sha_hex_is(const void *data, size_t n, const char *want) {
    uint8_t d[32];
    char hex[65];
    sb_sha256(data, n, d);
    sb_hex(d, 32, hex);
    return strcmp(hex, want) == 0;
}

SB_TEST(test_core_sha256_fips_vectors) {
    SB_CHECK(sha_hex_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    SB_CHECK(sha_hex_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    SB_CHECK(sha_hex_is(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    SB_CHECK(sha_hex_is(m896, strlen(m896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
    /* One million 'a', fed in uneven pieces through the incremental interface. */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    sb_sha256_ctx c;
    sb_sha256_init(&c);
    size_t off = 0, step = 1;
    while (off < sizeof a) {
        size_t n = step < sizeof a - off ? step : sizeof a - off;
        sb_sha256_update(&c, a + off, n);
        off += n;
        step = step * 3 + 1;
    }
    uint8_t d[32];
    char hex[65];
    sb_sha256_final(&c, d);
    sb_hex(d, 32, hex);
    SB_CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
}

/* ---- Philox4x32-10: known answers from the Random123 distribution (kat_vectors) ---- */

SB_TEST(test_core_philox_known_answers) {
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        SB_CHECK(sb_philox4x32_10(kat[k], kat[k] + 4, out) == SB_OK);
        for (int i = 0; i < 4; i++) SB_CHECK_EQ_U64(out[i], kat[k][6 + i]);
    }
}

SB_TEST(test_core_rng_mappings) {
    SB_CHECK(sb_u32_to_unit_f32(0u) == 0.0f);
    SB_CHECK(sb_u32_to_unit_f32(0xFFFFFFFFu) == 1.0f - 0x1.0p-24f);
    SB_CHECK(sb_u32_to_open_unit_f32(0u) == 0x1.0p-24f);
    SB_CHECK(sb_u32_to_open_unit_f32(0xFFFFFFFFu) == 1.0f - 0x1.0p-24f);
    SB_CHECK(sb_u32_to_open_unit_f32(0xFFFFFFFFu) < 1.0f);
    SB_CHECK(sb_u32_to_open_unit_f32(0x80000000u) + sb_u32_to_open_unit_f32(0x7FFFFFFFu) == 1.0f);
    /* Bounded draws: in range, every value reached for small n, n = 1 gives 0. */
    int seen[7] = {0};
    for (uint64_t i = 0; i < 700; i++) {
        uint32_t v = sb_rng_below(42, 3, i, 7);
        SB_CHECK(v < 7);
        if (v < 7) seen[v]++;
    }
    for (int v = 0; v < 7; v++) SB_CHECK(seen[v] > 50 && seen[v] < 150);
    SB_CHECK(sb_rng_below(42, 3, 5, 1) == 0);
    SB_CHECK(sb_rng_below(42, 3, 5, 0xFFFFFFFFu) < 0xFFFFFFFFu);
    /* A draw is a pure function of (seed, purpose, index). */
    SB_CHECK(sb_rng_unit_f32(1, 2, 3) == sb_rng_unit_f32(1, 2, 3));
    SB_CHECK(sb_rng_unit_f32(1, 2, 3) != sb_rng_unit_f32(1, 2, 4));
}

/* ---- cards ---- */

SB_TEST(test_core_card_canonical_little_endian) {
    /* The digest covers little-endian bytes whatever the host's byte order. */
    sb_card *c = NULL;
    SB_CHECK(sb_card_create(&c) == SB_OK);
    uint32_t v[3] = {1, 2, 0xA1B2C3D4u};
    SB_CHECK(sb_card_record(c, "u32", SB_DTYPE_U32, v, 3) == SB_OK);
    const uint8_t le[12] = {1, 0, 0, 0, 2, 0, 0, 0, 0xD4, 0xC3, 0xB2, 0xA1};
    uint8_t d[32];
    char hex[65];
    sb_sha256(le, sizeof le, d);
    sb_hex(d, 32, hex);
    char text[1024];
    SB_CHECK(sb_card_text(c, text, sizeof text, NULL) == SB_OK);
    SB_CHECK(strstr(text, hex) != NULL);
    sb_card_free(c);
}

SB_TEST(test_core_card_nan_canonical) {
    sb_card *a = NULL, *b = NULL;
    sb_card_create(&a);
    sb_card_create(&b);
    uint32_t n1 = 0x7FC00000u, n2 = 0xFFC00001u;
    float f1, f2;
    memcpy(&f1, &n1, 4);
    memcpy(&f2, &n2, 4);
    sb_card_record(a, "nan", SB_DTYPE_F32, &f1, 1);
    sb_card_record(b, "nan", SB_DTYPE_F32, &f2, 1);
    sb_card_diff diff;
    SB_CHECK(sb_card_compare(a, b, &diff) == SB_OK && diff.identical == 1);
    /* ...but the same bits as u32 differ, and -0 differs from +0 as f32. */
    sb_card_record(a, "bits", SB_DTYPE_U32, &n1, 1);
    sb_card_record(b, "bits", SB_DTYPE_U32, &n2, 1);
    SB_CHECK(sb_card_compare(a, b, &diff) == SB_ERR_MISMATCH);
    SB_CHECK(diff.stage_index == 1 && strcmp(diff.reason, "digest") == 0);
    sb_card_free(a);
    sb_card_free(b);
}

SB_TEST(test_core_card_roundtrip_and_diff) {
    sb_card *a = NULL, *b = NULL, *p = NULL;
    sb_card_create(&a);
    sb_card_create(&b);
    float x[4] = {1.0f, -0.0f, 3.5f, 1e-45f};
    int64_t h[2] = {-5, 1LL << 40};
    SB_CHECK(sb_card_set_meta(a, "arch", "test") == SB_OK);
    SB_CHECK(sb_card_record(a, "s.x", SB_DTYPE_F32, x, 4) == SB_OK);
    SB_CHECK(sb_card_record(a, "s.h", SB_DTYPE_I64, h, 2) == SB_OK);
    SB_CHECK(sb_card_record(a, "bad tag", SB_DTYPE_F32, x, 4) == SB_ERR_INVALID_ARGUMENT);
    size_t need = 0;
    SB_CHECK(sb_card_text(a, NULL, 0, &need) == SB_OK);
    char *text = malloc(need);
    SB_CHECK(sb_card_text(a, text, need, NULL) == SB_OK);
    SB_CHECK(strlen(text) + 1 == need);
    SB_CHECK(sb_card_parse(text, strlen(text), &p) == SB_OK);
    sb_card_diff d;
    SB_CHECK(sb_card_compare(a, p, &d) == SB_OK && d.identical);
    /* b: same first stage, second stage changed by one bit of one element. */
    h[1] ^= 1;
    sb_card_record(b, "s.x", SB_DTYPE_F32, x, 4);
    sb_card_record(b, "s.h", SB_DTYPE_I64, h, 2);
    SB_CHECK(sb_card_compare(a, b, &d) == SB_ERR_MISMATCH);
    SB_CHECK(d.stage_index == 1 && strcmp(d.stage_a, "s.h") == 0 && strcmp(d.reason, "digest") == 0);
    SB_CHECK(strlen(d.digest_a) == 64 && strcmp(d.digest_a, d.digest_b) != 0);
    /* A card that stops early parts at the missing stage. */
    sb_card *c = NULL;
    sb_card_create(&c);
    sb_card_record(c, "s.x", SB_DTYPE_F32, x, 4);
    SB_CHECK(sb_card_compare(a, c, &d) == SB_ERR_MISMATCH && d.stage_index == 1);
    SB_CHECK(strcmp(d.reason, "missing") == 0);
    /* Same bytes under another dtype or count is a difference too. */
    sb_card *e = NULL;
    sb_card_create(&e);
    sb_card_record(e, "s.x", SB_DTYPE_U32, x, 4);
    SB_CHECK(sb_card_compare(c, e, &d) == SB_ERR_MISMATCH && strcmp(d.reason, "dtype") == 0);
    free(text);
    sb_card_free(a);
    sb_card_free(b);
    sb_card_free(c);
    sb_card_free(e);
    sb_card_free(p);
    sb_card_free(NULL);
}

SB_TEST(test_core_card_parse_rejects_malformed) {
    const char *bad[] = {
        "",
        "not json\n",
        "{\"i\":0,\"stage\":\"a\",\"dtype\":\"f32\",\"count\":1,\"sha256\":\"00\"}\n",
        "{\"samebits_card\":2,\"profile\":\"p\"}\n",
        "{\"samebits_card\":1,\"profile\":\"p\"}\n{\"i\":1,\"stage\":\"a\",\"dtype\":\"f32\",\"count\":1,"
        "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
        "{\"samebits_card\":1,\"profile\":\"p\"}\n{\"i\":0,\"stage\":\"a\",\"dtype\":\"f16\",\"count\":1,"
        "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
        "{\"samebits_card\":1,\"profile\":\"p\"}\n{\"i\":0,\"stage\":\"a\",\"dtype\":\"f32\",\"count\":99999999999999999999999,"
        "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
        "{\"samebits_card\":1,\"profile\":\"p\"}\n{\"i\":0,\"stage\":\"a\"",
        "{\"samebits_card\":1,\"profile\":\"p\"} trailing\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sb_card *c = (sb_card *)1;
        sb_status st = sb_card_parse(bad[k], strlen(bad[k]), &c);
        SB_CHECK(st == SB_ERR_INVALID_INPUT);
        SB_CHECK(c == NULL);
    }
    sb_card *c = NULL;
    SB_CHECK(sb_card_load("/nonexistent/dir/x.card", &c) == SB_ERR_IO);
}

SB_TEST(test_core_card_save_is_atomic) {
    sb_card *c = NULL;
    sb_card_create(&c);
    uint8_t b[3] = {1, 2, 3};
    sb_card_record(c, "bytes", SB_DTYPE_U8, b, 3);
    /* A directory that does not exist: error, and no file appears. */
    SB_CHECK(sb_card_save(c, "/nonexistent-samebits-dir/out.card") == SB_ERR_IO);
    char path[] = "/tmp/sb_card_XXXXXX";
    int fd = mkstemp(path);
    SB_CHECK(fd >= 0);
    close(fd);
    SB_CHECK(sb_card_save(c, path) == SB_OK);
    sb_card *back = NULL;
    SB_CHECK(sb_card_load(path, &back) == SB_OK);
    sb_card_diff d;
    SB_CHECK(sb_card_compare(c, back, &d) == SB_OK);
    remove(path);
    sb_card_free(back);
    sb_card_free(c);
}

/* ---- issue 17: one thread rule, keys given twice, the output rule ---- */

SB_TEST(test_core_thread_text_has_one_rule) {
    int32_t n = 0;
    SB_CHECK(sb_parse_num_threads("4", "--threads", &n) == SB_OK && n == 4);
    SB_CHECK(sb_parse_num_threads("1024", "--threads", &n) == SB_OK && n == 1024);
    const char *bad[] = {"0", "-1", "abc", "100000", "", " 2", "+2", "2x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 7;
        SB_CHECK(sb_parse_num_threads(bad[i], "--threads", &n) == SB_ERR_INVALID_ARGUMENT && n == 7);
        SB_CHECK(strstr(sb_last_error(), "--threads") != NULL);
    }
    /* The fits, the predictions and the fixtures refuse an invalid variable
     * before any work, instead of the pool quietly running one thread. */
    sb_set_num_threads(0);
    const char *env_bad[] = {"0", "-1", "abc", "100000"};
    for (size_t i = 0; i < 4; i++) {
        setenv("SAMEBITS_NUM_THREADS", env_bad[i], 1);
        sb_card *c = NULL;
        SB_CHECK(sb_card_create(&c) == SB_OK);
        SB_CHECK(sb_fixture_run("profile-core", c) == SB_ERR_INVALID_ARGUMENT);
        SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUM_THREADS") != NULL);
        sb_card_free(c);
        float x[4] = {0, 1, 2, 3}, y[4] = {0, 1, 0, 1};
        sb_dataset *d = NULL;
        sb_model *m = NULL;
        SB_CHECK(sb_dataset_from_matrix(x, 4, 1, &d) == SB_OK && sb_dataset_set_label(d, y, 4) == SB_OK);
        SB_CHECK(sb_gbdt_fit(NULL, d, NULL, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
        SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUM_THREADS") != NULL);
        SB_CHECK(sb_forest_fit(NULL, d, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
        SB_CHECK(sb_isolation_forest_fit(NULL, d, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
        float c2[4] = {0};
        SB_CHECK(sb_gemm("cpu", 0, 0, 2, 2, 1, x, 1, x, 2, c2, 2) == SB_ERR_INVALID_ARGUMENT);
        SB_CHECK(strstr(sb_last_error(), "SAMEBITS_NUM_THREADS") != NULL);
        SB_CHECK(sb_linalg_row_sums("cpu", 2, 2, x, 2, c2) == SB_ERR_INVALID_ARGUMENT);
        sb_dataset_free(d);
    }
    /* an explicit count replaces the variable */
    SB_CHECK(sb_set_num_threads(2) == SB_OK);
    sb_card *c = NULL;
    SB_CHECK(sb_card_create(&c) == SB_OK && sb_fixture_run("profile-core", c) == SB_OK);
    sb_card_free(c);
    sb_set_num_threads(0);
    unsetenv("SAMEBITS_NUM_THREADS");
}

/* issue 21: a comma list stays in its value ("metric=auc,binary_logloss"); a
 * comma before a word with '=' still separates pairs. */
SB_TEST(test_core_params_keep_comma_lists_whole) {
    sb_params *p = NULL;
    const char *v = NULL;
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_params_parse(p, "metric=auc,binary_logloss,eval_at=1,3,5 label_gain=0,1,3 seed=4,,n=2") == SB_OK);
    SB_CHECK(sb_params_get(p, "metric", &v) == SB_OK && strcmp(v, "auc,binary_logloss") == 0);
    SB_CHECK(sb_params_get(p, "eval_at", &v) == SB_OK && strcmp(v, "1,3,5") == 0);
    SB_CHECK(sb_params_get(p, "label_gain", &v) == SB_OK && strcmp(v, "0,1,3") == 0);
    SB_CHECK(sb_params_get(p, "seed", &v) == SB_OK && strcmp(v, "4") == 0);
    SB_CHECK(sb_params_get(p, "n", &v) == SB_OK && strcmp(v, "2") == 0);
    SB_CHECK(sb_params_parse(p, "a=1 b") == SB_ERR_INVALID_INPUT); /* a bare word after a blank is no value */
    SB_CHECK(strstr(sb_last_error(), "parameter 'b' has no '=value'") != NULL);
    sb_params_free(p);
}

SB_TEST(test_core_params_refuse_a_key_given_twice) {
    sb_params *p = NULL;
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_params_parse(p, "n_estimators=2 n_estimators=3") == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "'n_estimators' is given twice") != NULL);
    sb_params_free(p);
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_params_parse(p, "n_estimators=2") == SB_OK);
    SB_CHECK(sb_params_parse(p, "n_estimators=3") == SB_ERR_INVALID_ARGUMENT); /* across calls too */
    const char *v = NULL;
    SB_CHECK(sb_params_get(p, "n_estimators", &v) == SB_OK && strcmp(v, "2") == 0);
    SB_CHECK(sb_params_set(p, "n_estimators", "4") == SB_OK); /* set: a binding's set_params replaces */
    SB_CHECK(sb_params_parse_over(p, "n_estimators=5") == SB_OK);
    SB_CHECK(sb_params_get(p, "n_estimators", &v) == SB_OK && strcmp(v, "5") == 0);
    sb_params_free(p);
    /* aliases of one key, in every tree family's parser */
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    sb_dataset *d = NULL;
    sb_model *m = NULL;
    SB_CHECK(sb_dataset_from_matrix(x, 8, 1, &d) == SB_OK && sb_dataset_set_label(d, y, 8) == SB_OK);
    struct { const char *text; int family; const char *a, *b; } cases[] = {
        {"n_estimators=2 num_trees=3", 0, "n_estimators", "num_trees"},
        {"learning_rate=0.1 eta=0.2", 0, "learning_rate", "eta"},
        {"objective=binary loss=binary", 0, "objective", "loss"},
        {"eval_period=1 log_period=2", 0, "eval_period", "log_period"},
        {"model=random_forest n_estimators=2 num_trees=3", 1, "n_estimators", "num_trees"},
        {"model=random_forest seed=1 random_state=2", 1, "seed", "random_state"},
        {"model=isolation_forest seed=1 random_state=2", 2, "seed", "random_state"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        SB_CHECK(sb_params_create(&p) == SB_OK && sb_params_parse(p, cases[i].text) == SB_OK);
        sb_status st = cases[i].family == 0   ? sb_gbdt_fit(p, d, NULL, NULL, &m)
                       : cases[i].family == 1 ? sb_forest_fit(p, d, NULL, &m)
                                              : sb_isolation_forest_fit(p, d, NULL, &m);
        SB_CHECK(st == SB_ERR_INVALID_ARGUMENT && m == NULL);
        SB_CHECK(strstr(sb_last_error(), cases[i].a) && strstr(sb_last_error(), cases[i].b) &&
                 strstr(sb_last_error(), "aliases"));
        sb_params_free(p);
    }
    sb_dataset_free(d);
}

static int read_all(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return (int)n;
}

SB_TEST(test_core_output_rule) {
    char dir[] = "/tmp/sb_out_XXXXXX", path[512], link[512], target[512], buf[64];
    SB_CHECK(mkdtemp(dir) != NULL);
    sb_output *o = NULL;
    /* a new file: written, and no temporary left */
    snprintf(path, sizeof path, "%s/new.txt", dir);
    SB_CHECK(sb_output_open(path, &o) == SB_OK && sb_output_write(o, "abc", 3) == SB_OK);
    SB_CHECK(sb_output_commit(o) == SB_OK && read_all(path, buf, sizeof buf) == 3 && !strcmp(buf, "abc"));
    /* discard leaves the old bytes */
    SB_CHECK(sb_output_open(path, &o) == SB_OK && sb_output_write(o, "zzzz", 4) == SB_OK);
    sb_output_discard(o);
    SB_CHECK(read_all(path, buf, sizeof buf) == 3 && !strcmp(buf, "abc"));
    /* a replaced file keeps its permission bits */
    chmod(path, 0640);
    SB_CHECK(sb_output_open(path, &o) == SB_OK && sb_output_write(o, "de", 2) == SB_OK && sb_output_commit(o) == SB_OK);
    struct stat st;
    SB_CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
    /* read-only: refused even for root, and unchanged */
    chmod(path, 0444);
    SB_CHECK(sb_output_open(path, &o) == SB_ERR_IO && o == NULL && strstr(sb_last_error(), "read-only"));
    SB_CHECK(read_all(path, buf, sizeof buf) == 2 && !strcmp(buf, "de"));
    chmod(path, 0644);
    /* a symbolic link: its target is replaced, the link stays a link */
    snprintf(target, sizeof target, "%s/target.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    SB_CHECK(symlink("target.txt", link) == 0);
    SB_CHECK(sb_output_open(link, &o) == SB_ERR_IO && strstr(sb_last_error(), "symbolic link")); /* dangling */
    FILE *f = fopen(target, "w");
    fputs("old", f);
    fclose(f);
    SB_CHECK(sb_output_open(link, &o) == SB_OK && sb_output_write(o, "new", 3) == SB_OK && sb_output_commit(o) == SB_OK);
    SB_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    SB_CHECK(read_all(target, buf, sizeof buf) == 3 && !strcmp(buf, "new"));
    /* character devices are written, never replaced; /dev/full's error is one message */
    SB_CHECK(sb_output_open("/dev/null", &o) == SB_OK && sb_output_write(o, "x", 1) == SB_OK && sb_output_commit(o) == SB_OK);
    SB_CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    SB_CHECK(sb_output_open("/dev/full", &o) == SB_OK && sb_output_write(o, "x", 1) == SB_OK);
    SB_CHECK(sb_output_commit(o) == SB_ERR_IO && strstr(sb_last_error(), "cannot write '/dev/full'") &&
             strstr(sb_last_error(), "No space left"));
    SB_CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
    /* a directory is refused; retract removes what a staged output replaces */
    SB_CHECK(sb_output_open(dir, &o) == SB_ERR_IO && strstr(sb_last_error(), "directory"));
    SB_CHECK(sb_output_open(path, &o) == SB_OK && sb_output_retract(o) == SB_OK && access(path, F_OK) != 0);
    SB_CHECK(sb_output_commit(o) == SB_OK && access(path, F_OK) == 0);
    unlink(path);
    unlink(link);
    unlink(target);
    rmdir(dir); /* empty: no temporary was left anywhere above */
    SB_CHECK(access(dir, F_OK) != 0);
}
