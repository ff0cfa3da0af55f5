/*
 * samebits: the command-line interface.
 * Exit status: 0 success; 1 a comparison or self-check found a difference;
 * 2 bad usage or an error (the message names the status).
 */
#include "samebits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_DIFF 1
#define EXIT_ERROR 2

static const char *k_usage =
    "usage: samebits COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  version                          print the library and profile versions\n"
    "  doctor [--threads N]             build facts, then a self-check of every pinned\n"
    "                                   fixture against its reference card\n"
    "  fixture list                     list the pinned fixtures\n"
    "  fixture run NAME [--out FILE] [--threads N]\n"
    "                                   run a fixture and write its card (stdout if no FILE)\n"
    "  card diff A B                    compare two cards: 'identical' (exit 0) or the\n"
    "                                   first stage where they part (exit 1)\n"
    "  help                             this text\n"
    "\n"
    "environment: SAMEBITS_NUM_THREADS (worker threads), SAMEBITS_NUMERIC_MODE\n"
    "(identical | deterministic | fast).\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "samebits: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nrun 'samebits help' for usage\n");
    return EXIT_ERROR;
}

static int lib_error(sb_status st) {
    fprintf(stderr, "samebits: error: %s: %s\n", sb_status_name(st), sb_last_error());
    return EXIT_ERROR;
}

/* Parse "--threads N" style options shared by commands; returns 0 on success. */
static int parse_threads(const char *v) {
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > SB_MAX_THREADS) {
        usage_error("--threads takes a thread count in 1..1024, got '%s'", v);
        return -1;
    }
    sb_status st = sb_set_num_threads((int32_t)n);
    if (st != SB_OK) {
        lib_error(st);
        return -1;
    }
    return 0;
}

/* Runs fixture `name` into a new card tagged with this leg's facts. */
static sb_status run_fixture(const char *name, sb_card **out) {
    sb_card *card;
    sb_status st = sb_card_create(&card);
    if (st != SB_OK) return st;
    char info[2048], arch[64] = "unknown";
    if (sb_build_info(info, sizeof info, NULL) == SB_OK) {
        const char *a = strstr(info, "arch: ");
        if (a) sscanf(a + 6, "%63s", arch);
    }
    int32_t threads = 0;
    st = sb_get_num_threads(&threads);
    char tbuf[16];
    snprintf(tbuf, sizeof tbuf, "%d", (int)threads);
    if (st == SB_OK) st = sb_card_set_meta(card, "arch", arch);
    if (st == SB_OK) st = sb_card_set_meta(card, "threads", tbuf);
    if (st == SB_OK) st = sb_fixture_run(name, card);
    if (st != SB_OK) {
        sb_card_free(card);
        return st;
    }
    *out = card;
    return SB_OK;
}

static void print_diff(const sb_card_diff *d) {
    printf("differ at stage %lld: %s (%s)\n", (long long)d->stage_index,
           d->stage_a[0] ? d->stage_a : d->stage_b, d->reason);
    if (d->stage_a[0] && d->stage_b[0] && strcmp(d->stage_a, d->stage_b) != 0)
        printf("  tags: %s vs %s\n", d->stage_a, d->stage_b);
    printf("  a: %s\n  b: %s\n", d->digest_a[0] ? d->digest_a : "(no such stage)",
           d->digest_b[0] ? d->digest_b : "(no such stage)");
}

static int cmd_doctor(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else {
            return usage_error("doctor: unknown argument '%s'", argv[i]);
        }
    }
    char info[2048];
    sb_status st = sb_build_info(info, sizeof info, NULL);
    if (st != SB_OK) return lib_error(st);
    printf("samebits doctor\n%s", info);
    int32_t threads;
    st = sb_get_num_threads(&threads);
    if (st != SB_OK) return lib_error(st);
    const char *env = getenv("SAMEBITS_NUM_THREADS");
    printf("threads: %d (%s)\n", (int)threads, env && *env ? "SAMEBITS_NUM_THREADS" : "default: online cores");
    sb_numeric_mode mode;
    st = sb_get_numeric_mode(&mode);
    if (st != SB_OK) return lib_error(st);
    printf("numeric mode: %s\n", sb_numeric_mode_name(mode));
    printf("self-check (pinned fixtures against reference cards):\n");
    int failed = 0;
    for (int32_t i = 0; i < sb_fixture_count(); i++) {
        const char *name = sb_fixture_name(i);
        sb_card *ref = NULL, *run = NULL;
        st = sb_fixture_reference(name, &ref);
        if (st == SB_OK) st = run_fixture(name, &run);
        if (st != SB_OK) {
            printf("  %-14s ERROR %s: %s\n", name, sb_status_name(st), sb_last_error());
            failed++;
        } else {
            sb_card_diff d;
            int64_t nstages = 0;
            sb_card_stage_count(ref, &nstages);
            if (sb_card_compare(ref, run, &d) == SB_OK) {
                printf("  %-14s identical (%lld stages)\n", name, (long long)nstages);
            } else {
                printf("  %-14s DIFFERS: ", name);
                print_diff(&d);
                failed++;
            }
        }
        sb_card_free(ref);
        sb_card_free(run);
    }
    printf("self-check: %s\n", failed ? "FAILED" : "passed");
    return failed ? EXIT_DIFF : 0;
}

static int cmd_fixture(int argc, char **argv) {
    if (argc < 1) return usage_error("fixture: expected 'list' or 'run NAME'%s", "");
    if (strcmp(argv[0], "list") == 0) {
        if (argc != 1) return usage_error("fixture list: unexpected argument '%s'", argv[1]);
        for (int32_t i = 0; i < sb_fixture_count(); i++) printf("%s\n", sb_fixture_name(i));
        return 0;
    }
    if (strcmp(argv[0], "run") != 0) return usage_error("fixture: unknown subcommand '%s'", argv[0]);
    const char *name = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else if (argv[i][0] == '-' || name) {
            return usage_error("fixture run: unexpected argument '%s'", argv[i]);
        } else {
            name = argv[i];
        }
    }
    if (!name) return usage_error("fixture run: which fixture? ('samebits fixture list')%s", "");
    sb_card *card;
    sb_status st = run_fixture(name, &card);
    if (st != SB_OK) return lib_error(st);
    if (out) {
        st = sb_card_save(card, out);
    } else {
        size_t need = 0;
        st = sb_card_text(card, NULL, 0, &need);
        char *text = st == SB_OK ? malloc(need) : NULL;
        if (st == SB_OK && !text) st = SB_ERR_OUT_OF_MEMORY;
        if (st == SB_OK) st = sb_card_text(card, text, need, NULL);
        if (st == SB_OK) fputs(text, stdout);
        free(text);
    }
    sb_card_free(card);
    return st == SB_OK ? 0 : lib_error(st);
}

static int cmd_card(int argc, char **argv) {
    if (argc < 1 || strcmp(argv[0], "diff") != 0)
        return usage_error("card: expected 'diff A B'%s", "");
    if (argc != 3) return usage_error("card diff: expected two card files%s", "");
    sb_card *a = NULL, *b = NULL;
    sb_status st = sb_card_load(argv[1], &a);
    if (st == SB_OK) st = sb_card_load(argv[2], &b);
    if (st != SB_OK) {
        sb_card_free(a);
        return lib_error(st);
    }
    sb_card_diff d;
    st = sb_card_compare(a, b, &d);
    sb_card_free(a);
    sb_card_free(b);
    if (st == SB_OK) {
        printf("identical\n");
        return 0;
    }
    if (st != SB_ERR_MISMATCH) return lib_error(st);
    print_diff(&d);
    return EXIT_DIFF;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(k_usage, stderr);
        return EXIT_ERROR;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(k_usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("samebits %s (profile %s)\n", sb_version(), sb_profile_version());
        return 0;
    }
    if (strcmp(cmd, "doctor") == 0) return cmd_doctor(argc - 2, argv + 2);
    if (strcmp(cmd, "fixture") == 0) return cmd_fixture(argc - 2, argv + 2);
    if (strcmp(cmd, "card") == 0) return cmd_card(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
