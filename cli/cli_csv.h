/* cli_csv.h: the float64 CSV reader of gp_cli.c, shared with mlp_cli.c: a
 * header line naming the columns, then rows of numbers read by strtod; a
 * quoted, empty or non-numeric field is refused by name with its line. */
#ifndef SB_CLI_CSV_H
#define SB_CLI_CSV_H
#include <stdint.h>

typedef struct csv {
    char **names;
    int64_t ncols, nrows;
    double *v; /* nrows x ncols */
} csv;

/* 0, or the CLI's error status after naming the problem on stderr. */
int csv_read(const char *path, csv *c);
void csv_free(csv *c);

#endif
