/* ets_cli.h: exponential smoothing's commands (cli/ets_cli.c). Each takes the
 * arguments after its command words and returns the CLI's exit status: 0
 * done, 2 bad usage or an error. */
#ifndef SB_CLI_ETS_H
#define SB_CLI_ETS_H

/* samebits train --model ets --data FILE --out MODEL [--id C] [--time C] [--target C] [--card CARD] [key=value ...] */
int sb_cli_train_ets(int argc, char **argv);
/* samebits forecast (--model MODEL | --data FILE [key=value ...]) --h H [--out FILE] */
int sb_cli_forecast(int argc, char **argv);

#endif
