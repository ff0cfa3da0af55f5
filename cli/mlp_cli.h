/* mlp_cli.h: the multi-layer perceptrons' commands (cli/mlp_cli.c). Each
 * returns the CLI's exit status: 0 done, 2 bad usage or an error. */
#ifndef SB_CLI_MLP_H
#define SB_CLI_MLP_H
#include "samebits.h"

/* samebits train --model mlp --data FILE --out MODEL [--label NAME] [--card CARD] task=classifier|regressor [key=value ...] */
int sb_cli_train_mlp(int argc, char **argv);
/* samebits predict for an mlp model already loaded: a class code or value per row (--proba: probabilities). */
int sb_cli_predict_mlp(sb_mlp *net, const char *data, const char *out, int proba);

#endif
