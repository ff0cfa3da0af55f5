/* lightgbm.h: LightGBM's command-line form of samebits (cli/lightgbm.c). */
#ifndef SB_CLI_LIGHTGBM_H
#define SB_CLI_LIGHTGBM_H
#include "samebits.h"

/* samebits config=FILE [key=value ...], or key=value pairs alone: LightGBM's
 * keys and aliases, task=train or task=predict. Returns the CLI's exit status
 * (0 success, 2 bad usage or an error, printed). */
int sb_cli_lightgbm(int argc, char **argv);

/* samebits train ARGS (cli/samebits.c): argv holds the arguments after the
 * command word; the same exit status. */
int sb_cli_train(int argc, char **argv);

/* nrows lines of per values each, separated by sep, 9 significant digits,
 * written to path by the library's output rule (cli/samebits.c). */
sb_status sb_cli_write_values(const char *path, const float *v, int64_t nrows, int64_t per, char sep);

#endif
