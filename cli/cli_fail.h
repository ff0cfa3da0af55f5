/*
 * cli_fail.h: the command line's two ways of failing, shared by the family
 * commands (ets_cli.c, gp_cli.c, lightgbm.c): a usage error in the tool's
 * words, and a library call's status with its message. Both print one line
 * on stderr and return the exit status 2.
 */
#ifndef SB_CLI_FAIL_H
#define SB_CLI_FAIL_H
#include "samebits.h"
#include <stdio.h>

#ifndef EXIT_ERROR
#define EXIT_ERROR 2
#endif

/* "samebits: " and msg (a format with one %s, arg), as a usage error. */
static inline int fail(const char *msg, const char *arg) {
    fprintf(stderr, "samebits: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n");
    return EXIT_ERROR;
}

/* A library call's failure: its status name and the thread's last error. */
static inline int lib_fail(sb_status st) {
    fprintf(stderr, "samebits: error: %s: %s\n", sb_status_name(st), sb_last_error());
    return EXIT_ERROR;
}

#endif
