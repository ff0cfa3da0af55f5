/*
 * fuzz_card.c: the identity-card parser (sb_card_parse, src/core/card.c) on
 * arbitrary bytes. Contract (docs/cards.md): a refusal is a named error with
 * no card; an accepted card renders to text that parses back to a card equal
 * to it (sb_card_compare says identical) and renders to the same text.
 */
#include "fuzz_common.h"
#include "samebits_cert.h"

static char *render(const sb_card *c, size_t *n) {
    size_t need = 0;
    sb_status st = sb_card_text(c, NULL, 0, &need);
    sb_fuzz_require(st == SB_OK || st == SB_ERR_LIMIT);
    char *buf = malloc(need + 1);
    sb_fuzz_require(buf != NULL);
    sb_fuzz_require(sb_card_text(c, buf, need + 1, n) == SB_OK);
    sb_fuzz_require(*n >= 1 && buf[*n - 1] == '\0');
    *n -= 1; /* needed counts the terminator */
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sb_card *c = (sb_card *)1;
    sb_status st = sb_card_parse((const char *)data, size, &c);
    if (st != SB_OK) {
        sb_fuzz_require(sb_fuzz_named_error(st) && c == NULL);
        return 0;
    }
    sb_fuzz_require(c != NULL);
    size_t n1 = 0, n2 = 0;
    char *t1 = render(c, &n1);
    sb_card *c2 = NULL;
    sb_fuzz_require(sb_card_parse(t1, n1, &c2) == SB_OK);
    sb_card_diff diff;
    sb_fuzz_require(sb_card_compare(c, c2, &diff) == SB_OK);
    char *t2 = render(c2, &n2);
    sb_fuzz_require(n1 == n2 && memcmp(t1, t2, n1) == 0);
    free(t1);
    free(t2);
    sb_card_free(c2);
    sb_card_free(c);
    return 0;
}
