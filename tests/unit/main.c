/* main.c: runner of the unit tests registered with SB_TEST (see sb_test.h). */
#include "sb_test.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SB_MAX_TESTS 512

static struct { const char *name; sb_test_fn fn; } g_tests[SB_MAX_TESTS];
static int g_ntests;
static int g_failed_checks;

void sb_test_register(const char *name, sb_test_fn fn) {
    if (g_ntests >= SB_MAX_TESTS) {
        fprintf(stderr, "sb_unit: too many tests (raise SB_MAX_TESTS)\n");
        exit(2);
    }
    g_tests[g_ntests].name = name;
    g_tests[g_ntests].fn = fn;
    g_ntests++;
}

void sb_test_fail(const char *file, int line, const char *expr) {
    g_failed_checks++;
    fprintf(stderr, "  check failed at %s:%d: %s\n", file, line, expr);
}

const char *sb_test_data_dir(void) {
    const char *d = getenv("SB_TEST_DATA");
    return d && *d ? d : "tests/data";
}

int sb_test_golden(const char *rel, char path[512]) {
    snprintf(path, 512, "%s%s", sb_test_data_dir(), rel);
    const char *w = getenv("SB_WRITE_GOLDEN");
    return w && !strcmp(w, "1");
}

uint8_t *sb_test_read_file(const char *path, size_t cap, size_t *n) {
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = malloc(cap + 1);
    if (b) *n = fread(b, 1, cap + 1, f);
    fclose(f);
    return b;
}

static int cmp_names(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return strcmp(x, y);
}

static int run_one(int i) {
    int before = g_failed_checks;
    g_tests[i].fn();
    int ok = g_failed_checks == before;
    printf("%s %s\n", ok ? "ok" : "FAIL", g_tests[i].name);
    fflush(stdout);
    return ok;
}

const char *sb_test_temp_file(const char *text, size_t n) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/sb_test_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return "/nonexistent/mkstemp-failed";
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    close(fd);
    return path;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        const char *names[SB_MAX_TESTS];
        for (int i = 0; i < g_ntests; i++) names[i] = g_tests[i].name;
        qsort(names, (size_t)g_ntests, sizeof names[0], cmp_names);
        for (int i = 0; i < g_ntests; i++) printf("%s\n", names[i]);
        return 0;
    }
    int passed = 0, failed = 0;
    if (argc == 1) {
        for (int i = 0; i < g_ntests; i++) {
            if (run_one(i)) passed++;
            else failed++;
        }
    } else {
        for (int a = 1; a < argc; a++) {
            int found = 0;
            for (int i = 0; i < g_ntests; i++) {
                if (strcmp(g_tests[i].name, argv[a]) == 0) {
                    found = 1;
                    if (run_one(i)) passed++;
                    else failed++;
                }
            }
            if (!found) {
                printf("FAIL %s (no such test)\n", argv[a]);
                failed++;
            }
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

float *sb_test_rows(int64_t n, int32_t d, uint64_t seed) {
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    uint64_t r = seed;
    for (int64_t i = 0; i < n * d; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(r >> 40) * 0x1p-24f * 4.0f - 2.0f;
    }
    return x;
}
