/*
 * samebits_cert.h: certification and test control for samebits: identity cards
 * (a run's stages as digests), the pinned fixtures that certify a machine, and
 * the two primitives every card rests on, Philox4x32-10 and SHA-256.
 *
 * A program that only trains and predicts needs samebits.h alone. This header
 * is for whoever checks that two machines give the same bits: the CLI's doctor,
 * verify, card and fixture commands, conformance kits, tests, and the GPU legs'
 * recorders (docs/cards.md, docs/verification.md). It includes samebits.h, so
 * its conventions hold here too: every call that can fail returns an sb_status,
 * and one that returns something else says why after "Not a status:".
 *
 * These are part of the library's ABI like the rest: the same shared library
 * exports them, and the Python package binds them by name.
 */
#ifndef SAMEBITS_CERT_H
#define SAMEBITS_CERT_H

#include "samebits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- randomness and digests ----------------------------------------------- */

/* Philox4x32-10 (Salmon et al., SC'11): out = block(ctr, key). The counter
 * generator every draw of the library comes from, exposed so that a card's
 * inputs can be regenerated outside it. */
SB_API sb_status sb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                                  uint32_t out[4]);

/* SHA-256 (FIPS 180-4) of n bytes: the digest of every card stage. */
SB_API sb_status sb_sha256(const void *data, size_t n, uint8_t out[32]);

/* ---- identity cards -------------------------------------------------------- */

/* Element types a card stage can hold; digests cover canonical little-endian
 * bytes of the elements (float NaNs are canonicalised to 0x7FC00000). */
typedef enum sb_dtype {
    SB_DTYPE_U8 = 0,
    SB_DTYPE_I32 = 1,
    SB_DTYPE_U32 = 2,
    SB_DTYPE_I64 = 3,
    SB_DTYPE_U64 = 4,
    SB_DTYPE_F32 = 5
} sb_dtype;

/* sb_card itself is declared in samebits.h, since training takes one. */

SB_API sb_status sb_card_create(sb_card **out);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_card_free(sb_card *card);

/* Append a stage: tag (1..63 chars of [A-Za-z0-9._-]), dtype, count elements
 * read from data in native byte order. Only the digest is kept. */
SB_API sb_status sb_card_record(sb_card *card, const char *stage, sb_dtype dtype,
                                const void *data, uint64_t count);

/* Informative header fields (leg, host, threads...). Not compared by diff. */
SB_API sb_status sb_card_set_meta(sb_card *card, const char *key, const char *value);

SB_API sb_status sb_card_stage_count(const sb_card *card, int64_t *count);

/* The card as JSON lines (one header line, one line per stage). */
SB_API sb_status sb_card_text(const sb_card *card, char *buf, size_t cap, size_t *needed);
/* Write the card to path atomically: a temporary file renamed into place. */
SB_API sb_status sb_card_save(const sb_card *card, const char *path);
/* Parse a card from text or a file. Malformed input is SB_ERR_INVALID_INPUT. */
SB_API sb_status sb_card_parse(const char *text, size_t len, sb_card **out);
SB_API sb_status sb_card_load(const char *path, sb_card **out);

/* Result of comparing two cards stage by stage. */
typedef struct sb_card_diff {
    int32_t identical;      /* 1 if both cards hold the same stages with equal digests */
    int64_t stage_index;    /* index of the first differing stage, -1 if identical */
    char stage_a[64];       /* stage tag at that index in a ("" if a ended) */
    char stage_b[64];
    char digest_a[65];      /* hex digest in a ("" if a ended) */
    char digest_b[65];
    char reason[96];        /* "digest", "tag", "dtype", "count", "missing" */
} sb_card_diff;

/* Compare: SB_OK if identical, SB_ERR_MISMATCH otherwise; diff filled either way. */
SB_API sb_status sb_card_compare(const sb_card *a, const sb_card *b, sb_card_diff *diff);

/* ---- pinned fixtures -------------------------------------------------------- */

/* Number of pinned fixtures built into the library.
 * Not a status: the size of a table compiled into the library; cannot fail. */
SB_API int32_t sb_fixture_count(void);
/* The name of the index-th fixture, for index in [0, sb_fixture_count()).
 * Not a status: the only failure is an index out of that range, which the
 * caller bounds by the count; it gives NULL. */
SB_API const char *sb_fixture_name(int32_t index);

/* Run the named fixture on this machine, recording its stages into card. */
SB_API sb_status sb_fixture_run(const char *name, sb_card *card);

/* The reference card of the named fixture, as shipped with the library. */
SB_API sb_status sb_fixture_reference(const char *name, sb_card **out);

/* The family a fixture belongs to ("profile", "logit", "gbdt", "forest") in
 * *family, a string that lives as long as the library. An unknown name is
 * SB_ERR_NOT_FOUND with a message that lists the fixtures; NULL arguments are
 * SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_fixture_get_family(const char *name, const char **family);

/* The same answer in one value, for loops over sb_fixture_name.
 * Not a status: a NULL result has one cause, a name that is not a fixture (or
 * NULL); sb_fixture_get_family says so with a message. */
SB_API const char *sb_fixture_family(const char *name);

/* Run the named fixture with extra parameters (e.g. "device=cuda") applied on
 * top of its pinned ones. NULL or "" is sb_fixture_run. A fixture that takes no
 * parameters refuses any device but cpu (SB_ERR_BACKEND_UNAVAILABLE). */
SB_API sb_status sb_fixture_run_with(const char *name, const char *extra, sb_card *card);

/* A fixture's inputs, without running it: fn is called once per input array
 * (name, dtype, native-order elements, count), in a fixed order. The first
 * array of a model fixture is "params", its parameter text as u8. fn's status
 * other than SB_OK stops the walk and is returned. */
typedef sb_status (*sb_fixture_input_fn)(void *ctx, const char *name, sb_dtype dtype,
                                         const void *data, uint64_t count);
SB_API sb_status sb_fixture_inputs(const char *name, sb_fixture_input_fn fn, void *ctx);

/* The pinned digests of a fixture's inputs (a card of one stage per input array). */
SB_API sb_status sb_fixture_input_reference(const char *name, sb_card **out);

/* ---- output files ---------------------------------------------------------- */

/* The one rule for writing a file a user named, which sb_model_save and
 * sb_card_save follow too (docs/robustness.md, "Output paths"): "-" is
 * standard output; a character device or FIFO (also through a symbolic link)
 * is written directly, never replaced; a regular file or a new name is written
 * to "<target>.tmp.<pid>" beside it and renamed over it at commit, so a failure
 * or a kill leaves the old file; a symbolic link is never replaced (its target
 * is); a read-only file (no write bit, even for root), a directory, a block
 * device, a socket or a dangling link is refused. Every failure is SB_ERR_IO
 * with one message naming the path. The caller owns the handle until commit or
 * discard, each of which frees it. */
typedef struct sb_output sb_output;
SB_API sb_status sb_output_open(const char *path, sb_output **out);
SB_API sb_status sb_output_write(sb_output *o, const void *data, size_t n);
/* Before committing two outputs that belong together (a model and its card):
 * remove the file a staged output will replace, so that no moment shows the
 * other's new file beside this one's old file. A direct output: nothing. */
SB_API sb_status sb_output_retract(sb_output *o);
/* Flush, fsync and rename into place (staged) or flush and close (direct). */
SB_API sb_status sb_output_commit(sb_output *o);
/* Drop the temporary file (staged) and free. Not a status: nothing to report. */
SB_API void sb_output_discard(sb_output *o);

#ifdef __cplusplus
}
#endif
#endif /* SAMEBITS_CERT_H */
