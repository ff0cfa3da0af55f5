/*
 * test_igemm_amx_emu.c: src/backends/cpu/igemm.c compiled again with
 * SB_IGEMM_AMX_EMULATE, its public functions renamed (igemm_amx_emu.h), and
 * the six tile operations of its AMX path (LDTILECFG, TILELOADD, TILESTORED,
 * TILEZERO, TDPBSSD, TILERELEASE) replaced by the C functions below, which
 * follow Intel's documented semantics (the SDM and the intrinsics guide's
 * pseudo-code) on a per-thread emulated tile state. The packing, the index
 * arithmetic of the tile loop and of the edges, the blocking and the per-task
 * configuration are the AMX path's own code, unchanged; tests/unit/test_igemm.c
 * runs them on its hostile shapes against its reference.
 *
 * The stand-ins also refuse what the hardware refuses, counted as faults: a
 * configuration LDTILECFG would #GP on (palette other than 0 or 1, start_row or
 * reserved bytes not 0, a tile of more than 16 rows or 64 bytes a row, rows and
 * bytes not both 0 or both set, tiles past the 8 of palette 1), any tile
 * instruction on a thread with no configuration (#UD: before LDTILECFG or after
 * TILERELEASE), on a tile with no shape, and a TDPBSSD whose tiles are not
 * distinct or whose shapes do not agree (dst.rows = src1.rows, src1.colsb =
 * 4 * src2.rows, dst.colsb = src2.colsb). Memory is read and written exactly
 * where the hardware would (rows x colsb bytes at base + row * stride), so the
 * sanitizer build sees any access past the packed panels or C.
 *
 * Not modelled: the order of memory accesses the compiler may choose around
 * gcc's asm intrinsics (see the barriers in igemm.c), timing, and the kernel's
 * permission (amx_detect), which only the real machine exercises.
 */
#define SB_IGEMM_AMX_EMULATE 1
#define sb_cpu_igemm_s8 sb_emu_igemm_s8
#define sb_cpu_igemm_s8_upper sb_emu_igemm_s8_upper
#define sb_cpu_igemm_path sb_emu_igemm_path
#define sb_cpu_igemm_release_scratch sb_emu_igemm_release_scratch
#define sb_cpu_igemm_pack_budget_for_tests sb_emu_igemm_pack_budget_for_tests
#define sb_cpu_igemm_gram_amx_on sb_emu_igemm_gram_amx_on
#define sb_cpu_amxg_bytes sb_emu_amxg_bytes
#define sb_cpu_amxg_pack4 sb_emu_amxg_pack4
#define sb_cpu_igemm_gram_amx sb_emu_igemm_gram_amx
#include "backends/cpu/igemm.c"
#include "igemm_amx_emu.h"
#include <stdatomic.h>
#include <stdio.h>

/* One thread's tiles: its configuration (palette 0 is the INIT state: none) and
 * 8 tiles of up to 16 rows x 64 bytes. */
typedef struct emu_tiles {
    int palette;
    int rows[8];
    int colsb[8];
    uint8_t data[8][16][64];
} emu_tiles;

static _Thread_local emu_tiles t_emu;
static atomic_long g_faults, g_live, g_configs, g_releases, g_dps;

static void emu_fault(const char *what, int tile) {
    if (atomic_fetch_add(&g_faults, 1) < 8)
        fprintf(stderr, "  amx emulation: the hardware would fault: %s (tile %d)\n", what, tile);
}

void sb_emu_amx_get_counts(sb_emu_amx_counts *out) {
    out->faults = atomic_load(&g_faults);
    out->live = atomic_load(&g_live);
    out->configs = atomic_load(&g_configs);
    out->releases = atomic_load(&g_releases);
    out->dps = atomic_load(&g_dps);
}

/* INIT: no configuration, tiles zero. */
static void emu_init_state(void) {
    if (t_emu.palette != 0) atomic_fetch_sub(&g_live, 1);
    memset(&t_emu, 0, sizeof t_emu);
}

/* LDTILECFG m512: byte 0 palette, 1 start_row, 2-15 reserved (0), 16 + 2i the
 * bytes a row of tile i (16-bit, the host's order: on x86-64 little-endian, as
 * the instruction reads it), 48 + i its rows; for palette 1, tiles 0-7, and
 * bytes 32-47 and 56-63 reserved (0). Palette 0 is the INIT state. A valid
 * load zeroes the tiles. */
static void amx_emu_loadconfig(const void *cfg) {
    const uint8_t *p = cfg;
    atomic_fetch_add(&g_configs, 1);
    if (p[0] == 0) {
        emu_init_state();
        return;
    }
    if (p[0] != 1) { emu_fault("LDTILECFG: palette not 1", -1); return; }
    if (p[1] != 0) { emu_fault("LDTILECFG: start_row not 0", -1); return; }
    for (int i = 2; i < 16; i++)
        if (p[i] != 0) { emu_fault("LDTILECFG: reserved byte not 0", -1); return; }
    for (int i = 32; i < 48; i++)
        if (p[i] != 0) { emu_fault("LDTILECFG: colsb of a tile past 7 not 0", -1); return; }
    for (int i = 56; i < 64; i++)
        if (p[i] != 0) { emu_fault("LDTILECFG: rows of a tile past 7 not 0", -1); return; }
    int rows[8], colsb[8];
    for (int i = 0; i < 8; i++) {
        uint16_t cb;
        memcpy(&cb, p + 16 + 2 * i, 2);
        colsb[i] = cb;
        rows[i] = p[48 + i];
        if (rows[i] > 16 || colsb[i] > 64) { emu_fault("LDTILECFG: tile larger than 16 x 64", i); return; }
        if ((rows[i] == 0) != (colsb[i] == 0)) { emu_fault("LDTILECFG: rows and colsb disagree", i); return; }
    }
    if (t_emu.palette == 0) atomic_fetch_add(&g_live, 1);
    memset(&t_emu, 0, sizeof t_emu);
    t_emu.palette = 1;
    memcpy(t_emu.rows, rows, sizeof rows);
    memcpy(t_emu.colsb, colsb, sizeof colsb);
}

/* Whether tile t may be used now (#UD otherwise). */
static int emu_usable(int t, const char *op) {
    if (t < 0 || t > 7) {
        emu_fault(op, t);
        return 0;
    }
    if (t_emu.palette == 0) {
        emu_fault("tile instruction with no tile configuration on this thread", t);
        return 0;
    }
    if (t_emu.rows[t] == 0) {
        emu_fault("tile instruction on a tile with no shape", t);
        return 0;
    }
    return 1;
}

/* TILELOADD tmm, [base + stride * row]: rows x colsb bytes; the rest zero. */
static void amx_emu_loadd(int t, const void *base, int64_t stride) {
    if (!emu_usable(t, "TILELOADD")) return;
    memset(t_emu.data[t], 0, sizeof t_emu.data[t]);
    for (int r = 0; r < t_emu.rows[t]; r++)
        memcpy(t_emu.data[t][r], (const uint8_t *)base + r * stride, (size_t)t_emu.colsb[t]);
}

/* TILESTORED [base + stride * row], tmm: rows x colsb bytes. */
static void amx_emu_stored(int t, void *base, int64_t stride) {
    if (!emu_usable(t, "TILESTORED")) return;
    for (int r = 0; r < t_emu.rows[t]; r++)
        memcpy((uint8_t *)base + r * stride, t_emu.data[t][r], (size_t)t_emu.colsb[t]);
}

static void amx_emu_zero(int t) {
    if (!emu_usable(t, "TILEZERO")) return;
    memset(t_emu.data[t], 0, sizeof t_emu.data[t]);
}

/* TDPBSSD dst, src1, src2, as the intrinsics guide writes it:
 *   FOR m < dst.rows: tmp := dst.row[m]
 *     FOR k < src1.colsb / 4: FOR n < dst.colsb / 4:
 *       tmp.dword[n] := DPBD(tmp.dword[n], src1.row[m].dword[k], src2.row[k].dword[n])
 *     write_row_and_zero(dst, m, tmp, dst.colsb)
 *   zero_upper_rows(dst, dst.rows)
 * DPBD(c, x, y) = c + the four SignExtend(x.byte[i]) * SignExtend(y.byte[i]),
 * 32-bit, wrapping. byte[i] of a dword is the byte at its address + i; the
 * accumulator dwords are the host's int32 (on x86-64 those of the hardware). */
static void amx_emu_dpbssd(int d, int s1, int s2) {
    atomic_fetch_add(&g_dps, 1);
    if (!emu_usable(d, "TDPBSSD") || !emu_usable(s1, "TDPBSSD") || !emu_usable(s2, "TDPBSSD")) return;
    if (d == s1 || d == s2 || s1 == s2) { emu_fault("TDPBSSD: tiles not distinct", d); return; }
    if (t_emu.rows[d] != t_emu.rows[s1] || t_emu.colsb[s1] != 4 * t_emu.rows[s2] ||
        t_emu.colsb[d] != t_emu.colsb[s2])
        { emu_fault("TDPBSSD: tile shapes disagree", d); return; }
    const int M = t_emu.rows[d], KQ = t_emu.colsb[s1] / 4, N = t_emu.colsb[d] / 4;
    for (int m = 0; m < M; m++) {
        uint32_t tmp[16];
        memcpy(tmp, t_emu.data[d][m], sizeof tmp);
        for (int k = 0; k < KQ; k++) {
            const uint8_t *x = &t_emu.data[s1][m][4 * k];
            for (int n = 0; n < N; n++) {
                const uint8_t *y = &t_emu.data[s2][k][4 * n];
                uint32_t s = tmp[n];
                for (int i = 0; i < 4; i++) s += (uint32_t)((int32_t)(int8_t)x[i] * (int32_t)(int8_t)y[i]);
                tmp[n] = s;
            }
        }
        memset(t_emu.data[d][m], 0, 64);
        memcpy(t_emu.data[d][m], tmp, (size_t)t_emu.colsb[d]);
    }
    for (int m = M; m < 16; m++) memset(t_emu.data[d][m], 0, 64);
}

/* TILERELEASE: back to INIT (no configuration, tiles zero). */
static void amx_emu_release(void) {
    if (t_emu.palette != 0) atomic_fetch_add(&g_releases, 1);
    emu_init_state();
}
