/*
 * sanitizer_canary.c: deliberate bugs, one per argument, built with the
 * sanitizer build's flags (build-asan/sb_canary). tests/integration/
 * test_hardening.py requires each to be reported and to fail the process, so
 * a build whose sanitizers are off, recover, or miss leaks cannot pass as
 * clean. "none" must exit 0. Never linked into the library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "none";
    volatile int k = argc + 30; /* opaque to the optimizer */
    if (!strcmp(what, "heap-overflow")) {
        char *volatile p = malloc(8);
        memset(p, 0, 8);
        int v = p[k - 24]; /* p[8] */
        free(p);
        return v;
    } else if (!strcmp(what, "use-after-free")) {
        int *p = malloc(sizeof *p);
        free(p);
        return *p;
    } else if (!strcmp(what, "leak")) {
        void *volatile p = malloc(100);
        p = NULL;
        (void)p;
    } else if (!strcmp(what, "shift")) {
        volatile int32_t one = 1;
        printf("%d\n", (int)(one << k)); /* 1 << 32 */
    } else if (!strcmp(what, "signed-overflow")) {
        volatile int32_t big = INT32_MAX;
        printf("%d\n", (int)(big + (k - 31)));
    } else if (!strcmp(what, "float-cast")) {
        volatile float f = 1e20f;
        printf("%d\n", (int)(int32_t)f); /* float-cast-overflow */
    } else if (strcmp(what, "none") != 0) {
        return 3;
    }
    return 0;
}
