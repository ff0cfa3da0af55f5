/* lightgbm.h: LightGBM's command-line form of samebits (cli/lightgbm.c). */
#ifndef SB_CLI_LIGHTGBM_H
#define SB_CLI_LIGHTGBM_H

/* samebits config=FILE [key=value ...], or key=value pairs alone: LightGBM's
 * keys and aliases, task=train or task=predict. Returns the CLI's exit status
 * (0 success, 2 bad usage or an error, printed). */
int sb_cli_lightgbm(int argc, char **argv);

/* samebits train ARGS (cli/samebits.c): argv holds the arguments after the
 * command word; the same exit status. */
int sb_cli_train(int argc, char **argv);

#endif
