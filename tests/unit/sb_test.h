/*
 * sb_test.h: the unit-test harness. Each test file defines cases with SB_TEST;
 * they register themselves and tests/unit/main.c runs them by name:
 *   sb_unit --list | sb_unit [NAME...]
 * A case fails if any SB_CHECK in it fails; the runner prints one line a case
 * and "N passed, N failed" at the end, and exits non-zero on any failure.
 */
#ifndef SB_TEST_H
#define SB_TEST_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*sb_test_fn)(void);
void sb_test_register(const char *name, sb_test_fn fn);
void sb_test_fail(const char *file, int line, const char *expr);
/* Directory of test data given by SB_TEST_DATA (default "tests/data"). */
const char *sb_test_data_dir(void);
/* The golden file rel (appended to sb_test_data_dir()) into path; 1 when
 * SB_WRITE_GOLDEN=1 asks the caller to rewrite it there first (by hand, at a
 * format change). */
int sb_test_golden(const char *rel, char path[512]);
/* Up to cap + 1 bytes of the file at path (malloc'd; the caller frees; *n
 * their count, so a longer file shows), or NULL when it cannot be opened. */
uint8_t *sb_test_read_file(const char *path, size_t cap, size_t *n);
/* A new temporary file holding text[0..n) (NULs included); its path lives in
 * a buffer of the runner's until the next call (a path that cannot exist when
 * mkstemp fails, so the read under test fails by name). */
const char *sb_test_temp_file(const char *text, size_t n);
/* n x d floats in [-2, 2) from a 64-bit LCG seeded with seed (malloc'd; the
 * caller frees): the same rows on every machine. */
float *sb_test_rows(int64_t n, int32_t d, uint64_t seed);

#define SB_TEST(name)                                                     \
    static void name(void);                                               \
    __attribute__((constructor)) static void name##_register(void) {      \
        sb_test_register(#name, name);                                    \
    }                                                                     \
    static void name(void)

#define SB_CHECK(cond)                                                    \
    do {                                                                  \
        if (!(cond)) sb_test_fail(__FILE__, __LINE__, #cond);             \
    } while (0)

#define SB_CHECK_EQ_U64(a, b)                                             \
    do {                                                                  \
        unsigned long long sb_a_ = (unsigned long long)(a);               \
        unsigned long long sb_b_ = (unsigned long long)(b);               \
        if (sb_a_ != sb_b_) {                                             \
            char sb_m_[256];                                              \
            snprintf(sb_m_, sizeof sb_m_, "%s == %s (0x%llx != 0x%llx)",  \
                     #a, #b, sb_a_, sb_b_);                               \
            sb_test_fail(__FILE__, __LINE__, sb_m_);                      \
        }                                                                 \
    } while (0)

#endif
