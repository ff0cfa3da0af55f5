/* lm_cli.h: the byte language model's commands (cli/lm_cli.c). Each returns
 * the CLI's exit status: 0 done, 2 bad usage or an error. */
#ifndef SB_CLI_LM_H
#define SB_CLI_LM_H
#include "samebits.h"

/* samebits train --model lm --data FILE --out MODEL [--steps N] [--eval-every K] [--init CHECKPOINT]
 * [--threads T] [key=value ...] */
int sb_cli_train_lm(int argc, char **argv);
/* samebits generate --model-file MODEL --prompt TEXT [--count N] [--temperature T] [--seed S] [--out FILE] */
int sb_cli_generate(int argc, char **argv);

#endif
