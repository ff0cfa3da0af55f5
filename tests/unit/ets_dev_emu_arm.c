/* ets_dev_emu.c with the ets-reg-order arm (SB_SABOTAGE_ETS_REG_ORDER: the
 * device's register sums of the normal equations split by the step's parity
 * and added at the end), the separating arm of test_ets_dev.c. */
#define SB_SABOTAGE_ETS_REG_ORDER 1
#define ETS_EMU_NAME sb_test_ets_dev_fit_arm
#include "ets_dev_emu.c"
