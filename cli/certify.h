/* certify.h: the CLI's certification commands (cli/certify.c). Each takes the
 * arguments after its command words and returns the CLI's exit status:
 * 0 pass, 1 a difference (or a refusal) was found, 2 bad usage or an error. */
#ifndef SB_CLI_CERTIFY_H
#define SB_CLI_CERTIFY_H

/* samebits verify [--family F] [--threads N] [--cards DIR] [device=D ...] [NAME...] */
int sb_cli_verify(int argc, char **argv);
/* samebits check-fixture [--dir DIR] [NAME...] */
int sb_cli_check_fixture(int argc, char **argv);
/* samebits fixture inputs NAME [--out FILE] */
int sb_cli_fixture_inputs(int argc, char **argv);
/* samebits conformance export DIR [NAME...] | validate DIR [...] */
int sb_cli_conformance(int argc, char **argv);

#endif
