/*
 * fuzz_model.c: the model loader (sb_model_from_bytes, src/models/model_format.c).
 * Each input is tried twice: as it is, and "sealed" (its length field and its
 * digest recomputed) so that mutations reach the field checks behind the
 * digest. Contract (docs/model-format.md): a refusal is a named error with no
 * model; an accepted file is exactly what the writer produces for the model it
 * read (one spelling), its digest is its last 32 bytes, and the model predicts.
 */
#include "fuzz_common.h"
#include "samebits_cert.h"

static void check_accepted(const sb_model *m, const uint8_t *file, size_t size) {
    size_t need = 0;
    sb_fuzz_require(sb_model_to_bytes(m, NULL, 0, &need) == SB_ERR_LIMIT || need > 0);
    sb_fuzz_require(need == size);
    uint8_t *back = malloc(need);
    sb_fuzz_require(back != NULL);
    sb_fuzz_require(sb_model_to_bytes(m, back, need, &need) == SB_OK);
    sb_fuzz_require(memcmp(back, file, size) == 0);
    free(back);
    char hex[65], want[65];
    sb_fuzz_require(sb_model_digest(m, hex) == SB_OK);
    for (int i = 0; i < 32; i++) snprintf(want + 2 * i, 3, "%02x", file[size - 32 + i]);
    sb_fuzz_require(strcmp(hex, want) == 0);

    sb_model_info info;
    sb_fuzz_require(sb_model_get_info(m, &info) == SB_OK);
    /* Two rows: zeros and NaNs (every missing-value direction is walked). */
    const int32_t nf = info.num_features;
    float *x = malloc(sizeof(float) * 2 * (size_t)nf);
    sb_fuzz_require(x != NULL);
    for (int32_t j = 0; j < nf; j++) {
        x[j] = 0.0f;
        x[nf + j] = __builtin_nanf("");
    }
    sb_dataset *d = NULL;
    sb_fuzz_require(sb_dataset_from_matrix(x, 2, nf, &d) == SB_OK);
    float out[2 * 10000]; /* num_class <= 10,000 */
    for (int kind = 0; kind <= 2; kind++) {
        size_t got = 0;
        sb_status st = sb_model_predict(m, d, (sb_predict_kind)kind, out, sizeof out / sizeof out[0], &got);
        /* Probabilities of a regression or ranking model are refused by name. */
        int no_proba = kind == SB_PREDICT_PROBA &&
                       (strcmp(info.objective, "regression") == 0 || strcmp(info.objective, "lambdarank") == 0 ||
                        strcmp(info.objective, "rank_pairwise") == 0);
        sb_fuzz_require(no_proba ? st == SB_ERR_INVALID_ARGUMENT : st == SB_OK);
        if (kind == SB_PREDICT_RAW) sb_fuzz_require(got == 2 * (size_t)info.num_class);
    }
    sb_dataset_free(d);
    free(x);
}

static void one(const uint8_t *file, size_t size) {
    sb_model *m = (sb_model *)1;
    sb_status st = sb_model_from_bytes(file, size, &m);
    if (st == SB_OK) {
        sb_fuzz_require(m != NULL);
        check_accepted(m, file, size);
        sb_model_free(m);
    } else {
        sb_fuzz_require(sb_fuzz_named_error(st) && m == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    one(data, size);
    /* Sealed: drop the last 32 bytes, set total_length (u64 LE at offset 12),
     * append the SHA-256 of the rest. */
    if (size < 52 || size > ((size_t)1 << 24)) return 0;
    size_t body = size - 32;
    uint8_t *f = malloc(size);
    sb_fuzz_require(f != NULL);
    memcpy(f, data, body);
    for (int i = 0; i < 8; i++) f[12 + i] = (uint8_t)((uint64_t)size >> (8 * i));
    sb_fuzz_require(sb_sha256(f, body, f + body) == SB_OK);
    one(f, size);
    free(f);
    return 0;
}
