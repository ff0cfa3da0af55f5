/* dataset.h: the dataset handle is a table the library owns (see reader.h). */
#ifndef SB_IO_DATASET_H
#define SB_IO_DATASET_H
#include "reader.h"

struct sb_dataset {
    sb_table t;
};

/* Read a file into a dataset, widening LibSVM data to at least min_cols
 * columns (prediction data must have the model's feature count). */
sb_status sb_dataset_read_min_cols(const char *path, const char *format, const char *label,
                                   int32_t min_cols, sb_dataset **out);

/* IDX (MNIST) images with their labels file beside them (idx.c). */
int sb_is_idx_file(const char *path);
sb_status sb_read_idx(const char *path, sb_table *out);

#endif
