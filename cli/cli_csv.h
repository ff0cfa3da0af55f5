/* cli_csv.h: the float64 CSV reader of gp_cli.c, shared with mlp_cli.c: a
 * header line naming the columns, then rows of numbers read by strtod; a
 * quoted, empty or non-numeric field is refused by name with its line. */
#ifndef SB_CLI_CSV_H
#define SB_CLI_CSV_H
#include "samebits.h"
#include <stdint.h>
#include <stdio.h>

typedef struct csv {
    char **names;
    int64_t ncols, nrows;
    double *v; /* nrows x ncols */
} csv;

/* 0, or the CLI's error status after naming the problem on stderr. */
int csv_read(const char *path, csv *c);
void csv_free(csv *c);

/* A training table split into features and target: the column named label
 * (NULL: the last one) is the target, every other column a feature in file
 * order; f32 stores both as float (rounded from the double read), else as
 * double. 0 with *X (rows x *d) and *y malloc'd, or the CLI's error status
 * after naming the problem (a missing column, no feature or no row, memory)
 * with *X and *y NULL. data names the file in the messages. */
int csv_split_label(const csv *c, const char *data, const char *label, int f32, void **X, void **y, int64_t *d);

/* The train command's arguments shared by the table families: --model
 * (skipped), --data, --out, --label, --card, --threads and key=value
 * parameters into params; --kernel too where kernel is not NULL. 0, or the
 * CLI's error status after naming the problem (params freed then); usage is
 * the command's usage line, model its name, for the messages. */
int cli_train_args(int argc, char **argv, sb_params *params, const char *usage, const char *model, const char **data,
                   const char **out, const char **label, const char **kernel, const char **card);

/* A prediction table's check: the model's d features, or those and a label
 * column last (the training file), and a row at least. 0, or the CLI's
 * error status after naming the problem; c is left to the caller. */
int csv_check_predict(const csv *c, const char *data, int64_t d);

/* The first d columns of c's rows as float (f32) or double, malloc'd (NULL
 * when out of memory). */
void *csv_features(const csv *c, int64_t d, int f32);

/* The prediction output: out, or stdout for "-"; NULL when it cannot be
 * opened (the caller names it). */
FILE *csv_out_open(const char *out);

/* Closes (or flushes stdout) what csv_out_open gave: 0, or the CLI's error
 * status naming out when bad is set or the close fails. */
int csv_out_close(FILE *f, const char *out, int bad);

#endif
