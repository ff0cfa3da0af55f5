/* gp_cli.h: gaussian process regression's commands (cli/gp_cli.c). Each takes
 * the arguments after its command words and returns the CLI's exit status: 0
 * done, 2 bad usage or an error. */
#ifndef SB_CLI_GP_H
#define SB_CLI_GP_H
#include "samebits.h"

/* samebits train --model gp --data FILE --out MODEL [--label NAME] [--kernel SPEC] [--card CARD] [key=value ...] */
int sb_cli_train_gp(int argc, char **argv);
/* samebits predict for a gp model already loaded: writes mean (and std) per row. */
int sb_cli_predict_gp(sb_gp *g, const char *data, const char *out, int with_std);

#endif
