/*
 * idx.c: the IDX format of MNIST and Fashion-MNIST (LeCun et al.): a 4-byte
 * magic (0, 0, type 0x08 = unsigned byte, number of dimensions), one big-endian
 * u32 per dimension, then the bytes. An images file (n x rows x cols) becomes n
 * rows of rows*cols float features; its labels come from the file of the same
 * name with "images-idx3" replaced by "labels-idx1", when it exists.
 */
#include "reader.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sb_status read_header(FILE *f, const char *path, int want_dims, uint32_t dims[3]) {
    uint8_t h[16];
    size_t need = 4 + 4 * (size_t)want_dims;
    if (fread(h, 1, need, f) != need) return sb_fail(SB_ERR_INVALID_INPUT, "%s: truncated IDX header", path);
    if (h[0] != 0 || h[1] != 0 || h[2] != 0x08 || h[3] != want_dims)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: not an IDX file of unsigned bytes with %d dimensions", path, want_dims);
    for (int d = 0; d < want_dims; d++)
        dims[d] = (uint32_t)h[4 + 4 * d] << 24 | (uint32_t)h[5 + 4 * d] << 16 | (uint32_t)h[6 + 4 * d] << 8 | h[7 + 4 * d];
    return SB_OK;
}

int sb_is_idx_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    uint8_t h[4];
    int ok = fread(h, 1, 4, f) == 4 && h[0] == 0 && h[1] == 0 && h[2] == 0x08 && (h[3] == 1 || h[3] == 3);
    fclose(f);
    return ok;
}

sb_status sb_read_idx(const char *path, sb_table *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return sb_fail(SB_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    uint32_t dims[3];
    uint8_t *buf = NULL;
    FILE *lf = NULL;
    char *lpath = NULL;
    sb_status st = read_header(f, path, 3, dims);
    if (st != SB_OK) goto done;
    /* Pixels an image: u32 x u32 can exceed int64 (a 16-byte header of
     * 0xFFFFFFFF dimensions), so the product is formed in u64, where it
     * cannot wrap, and checked against the column limit before any use. */
    const uint64_t npix = (uint64_t)dims[1] * (uint64_t)dims[2];
    if (dims[0] < 1 || npix < 1 || (int64_t)dims[0] > SB_IO_MAX_ROWS || npix > (uint64_t)SB_IO_MAX_COLS) {
        st = sb_fail(SB_ERR_LIMIT, "%s: %lu images of %lu x %lu pixels are outside the limits (1 to %lld images, 1 to %d pixels each)",
                     path, (unsigned long)dims[0], (unsigned long)dims[1], (unsigned long)dims[2], (long long)SB_IO_MAX_ROWS,
                     (int)SB_IO_MAX_COLS);
        goto done;
    }
    const int64_t n = dims[0], nf = (int64_t)npix;
    /* The pixels must be there before the table is sized by the header. */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (uint64_t)sb.st_size < 16u + (uint64_t)n * (uint64_t)nf) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: truncated: the header promises %lld images of %lld pixels, the file has %lld bytes",
                     path, (long long)n, (long long)nf, (long long)sb.st_size);
        goto done;
    }
    out->nrows = n;
    out->ncols = (int32_t)nf;
    out->x = sb_malloc(sizeof(float) * (size_t)(n * nf));
    out->names = sb_calloc((size_t)nf, sizeof(char *));
    buf = sb_malloc((size_t)nf);
    if (!out->x || !out->names || !buf) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        goto done;
    }
    for (int64_t k = 0; k < nf; k++) {
        char name[32];
        snprintf(name, sizeof name, "px%lld", (long long)k);
        if (!(out->names[k] = sb_strdup(name))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            goto done;
        }
    }
    for (int64_t r = 0; r < n; r++) {
        if (fread(buf, 1, (size_t)nf, f) != (size_t)nf) {
            st = sb_fail(SB_ERR_INVALID_INPUT, "%s: truncated at image %lld of %lld", path, (long long)r, (long long)n);
            goto done;
        }
        for (int64_t k = 0; k < nf; k++) out->x[r * nf + k] = (float)buf[k];
    }
    /* Labels beside the images, when present. */
    const char *at = strstr(path, "images-idx3");
    if (at) {
        size_t plen = strlen(path);
        lpath = sb_malloc(plen + 1);
        if (!lpath) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            goto done;
        }
        memcpy(lpath, path, plen + 1);
        memcpy(lpath + (at - path), "labels-idx1", 11);
        lf = fopen(lpath, "rb");
    }
    if (lf) {
        uint32_t ldim[3];
        if ((st = read_header(lf, lpath, 1, ldim)) != SB_OK) goto done;
        if ((int64_t)ldim[0] != n) {
            st = sb_fail(SB_ERR_INVALID_INPUT, "%s has %u labels for %lld images", lpath, ldim[0], (long long)n);
            goto done;
        }
        out->label = sb_malloc(sizeof(float) * (size_t)n);
        if (!out->label) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            goto done;
        }
        for (int64_t r = 0; r < n; r++) {
            int c = fgetc(lf);
            if (c == EOF) {
                st = sb_fail(SB_ERR_INVALID_INPUT, "%s: truncated at label %lld", lpath, (long long)r);
                goto done;
            }
            out->label[r] = (float)c;
        }
    }
done:
    fclose(f);
    if (lf) fclose(lf);
    sb_free(lpath);
    sb_free(buf);
    if (st != SB_OK) sb_table_release(out);
    return st;
}
