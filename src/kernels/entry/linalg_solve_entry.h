/*
 * linalg_solve_entry.h: entry kernels of the linear-algebra core's solve operations
 * (included by linalg_entry.h, so they are part of the linalg program; their
 * names go in SB_LINALG_SOLVE_KERNELS, src/device/programs.h).
 */
