/* rng.c: the public entry point of the counter generator (src/core/rng.h). */
#include "internal.h"
#include "rng.h"

sb_status sb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    sb_clear_error();
    if (!ctr || !key || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_philox4x32_10: NULL argument");
    sb_philox4x32_10_block(ctr, key, out);
    return SB_OK;
}
