/*
 * fuzz_common.h: shared by the libFuzzer targets in tests/fuzz (make fuzz).
 * A target's checks beyond "no sanitizer report" are contracts of the API under
 * test; a broken one aborts through sb_fuzz_require, which libFuzzer records as
 * a crash with its input.
 */
#ifndef SB_FUZZ_COMMON_H
#define SB_FUZZ_COMMON_H
#include "samebits.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define sb_fuzz_require(cond)                                                      \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fuzz contract broken at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                        \
            abort();                                                               \
        }                                                                          \
    } while (0)

/* The readers take a path: each input is written to one file per process, in
 * $TMPDIR (default /tmp), rewritten for every input and removed at exit.
 * Returns the path. */
static char sb_fuzz_path[512];

static void sb_fuzz_remove_file(void) { remove(sb_fuzz_path); }

static inline const char *sb_fuzz_file(const uint8_t *data, size_t size) {
    char *path = sb_fuzz_path;
    if (!path[0]) {
        const char *d = getenv("TMPDIR");
        snprintf(path, sizeof sb_fuzz_path, "%s/sb_fuzz_input.%ld", d && *d ? d : "/tmp", (long)getpid());
        atexit(sb_fuzz_remove_file);
    }
    FILE *f = fopen(path, "wb");
    sb_fuzz_require(f != NULL);
    sb_fuzz_require(size == 0 || fwrite(data, 1, size, f) == size);
    sb_fuzz_require(fclose(f) == 0);
    return path;
}

/* A status is SB_OK or one of the named errors a parser may return. */
static inline int sb_fuzz_named_error(sb_status st) {
    return st == SB_ERR_INVALID_INPUT || st == SB_ERR_LIMIT || st == SB_ERR_OUT_OF_MEMORY ||
           st == SB_ERR_IO;
}
#endif
