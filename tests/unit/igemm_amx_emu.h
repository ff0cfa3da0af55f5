/*
 * igemm_amx_emu.h: the AMX path of src/backends/cpu/igemm.c built a second
 * time, inside the unit runner, with C stand-ins for the tile instructions
 * (test_igemm_amx_emu.c), so that its packing, its tile loop and the blocked
 * driver around it are checked on any machine. The functions are the
 * library's own (sb_cpu_igemm_s8 and its hooks), renamed; they take the AMX
 * path whenever SAMEBITS_CPU_IGEMM is unset or "amx" (on x86-64 where the
 * CPU has the AVX-512 that the B packer uses; elsewhere always).
 */
#ifndef SB_TEST_IGEMM_AMX_EMU_H
#define SB_TEST_IGEMM_AMX_EMU_H
#include "core/internal.h"

sb_status sb_emu_igemm_s8(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                          const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc);
const char *sb_emu_igemm_path(void);
void sb_emu_igemm_release_scratch(void);
void sb_emu_igemm_pack_budget_for_tests(int64_t bytes);
int sb_emu_igemm_gram_amx_on(void);
int64_t sb_emu_amxg_bytes(int64_t lines, int64_t ng);
void sb_emu_amxg_pack4(const float *x, int64_t qs, const float *shift, int64_t lines, int64_t k, int64_t q0,
                       int64_t len, const double *scale, uint8_t *pa, uint8_t *pb);
sb_status sb_emu_igemm_gram_amx(int64_t lines, int64_t ng, const uint8_t *pa, const uint8_t *pb,
                                void (*fold)(void *, int64_t, int64_t, const int32_t *), void *ctx);

/* What the emulated tiles saw since the start of the process. */
typedef struct sb_emu_amx_counts {
    long faults;   /* what the hardware would refuse (#GP, #UD): must stay 0 */
    long live;     /* threads holding a tile configuration now: 0 between calls */
    long configs;  /* LDTILECFG */
    long releases; /* TILERELEASE of a configured thread */
    long dps;      /* TDPBSSD */
} sb_emu_amx_counts;
void sb_emu_amx_get_counts(sb_emu_amx_counts *out);

#endif
