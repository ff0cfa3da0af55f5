/*
 * output.c: the one way the library and the CLI write a file that a user named
 * (models, cards, predictions). The rules, by what the path is when it is
 * opened (docs/robustness.md, "Output paths"):
 *
 *   "-"                   standard output, written directly.
 *   absent, regular file  the bytes go to "<path>.tmp.<pid>" in the same
 *                         directory, flushed, fsync'ed and renamed over path at
 *                         commit (then the directory is fsync'ed). A failure
 *                         or a kill before the rename leaves path as it was; an
 *                         existing file keeps its permission bits.
 *   read-only regular     refused, not replaced: a file with no write bit at
 *                         all (even for root, whom access(2) would let through),
 *                         or one the caller may not write (faccessat W_OK).
 *   symbolic link         never replaced: followed to its final target, to
 *                         which the rules here then apply (a regular target is
 *                         replaced by a rename in the target's directory); a
 *                         link whose target does not exist is refused.
 *   character device,     opened and written directly (/dev/stdout, /dev/null,
 *   FIFO                  a pipe): never replaced, never renamed over.
 *   directory, block      refused.
 *   device, socket
 *
 * Every failure is SB_ERR_IO with one message that names the path as the
 * caller gave it: "cannot write 'PATH': reason". Direct writes cannot be
 * undone: a failure there may leave part of the bytes in the device or pipe.
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sb_output {
    FILE *f;
    char *path;  /* as the caller named it: every message uses it */
    char *final; /* staged: the file the rename replaces (a link's target); NULL when direct */
    char *tmp;   /* staged: the temporary file; NULL when direct */
    int err;     /* errno of the first failed write; 0 while none */
};

static void output_free(sb_output *o) {
    if (!o) return;
    sb_free(o->path);
    sb_free(o->final);
    sb_free(o->tmp);
    sb_free(o);
}

/* Best effort: make a rename or unlink in path's directory durable. */
static void sync_dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

static sb_status open_fail(sb_output *o, const char *path, const char *fmt, const char *detail) {
    sb_status st = sb_fail(SB_ERR_IO, fmt, path, detail);
    output_free(o);
    return st;
}

sb_status sb_output_open(const char *path, sb_output **out) {
    sb_clear_error();
    if (!path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_output_open: NULL argument");
    *out = NULL;
    if (!*path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "the output path is empty (use '-' for standard output)");
    sb_output *o = sb_calloc(1, sizeof *o);
    if (!o || !(o->path = sb_strdup(path))) {
        output_free(o);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "opening '%s': out of memory", path);
    }
    if (strcmp(path, "-") == 0) {
        fflush(stdout); /* what the program printed before stays before */
        int fd = dup(STDOUT_FILENO);
        if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
            if (fd >= 0) close(fd);
            return open_fail(o, "standard output", "cannot write '%s': %s", strerror(errno));
        }
        *out = o;
        return SB_OK;
    }
    struct stat st;
    char *resolved = NULL;
    const char *target = path;
    int exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT) return open_fail(o, path, "cannot write '%s': %s", strerror(errno));
    if (exists && S_ISLNK(st.st_mode)) {
        /* what the link leads to decides; /dev/stdout -> /proc/self/fd/1 ->
         * a pipe has no name to resolve, so only a regular target is resolved
         * (for the rename in its own directory) */
        if (stat(path, &st) != 0)
            return open_fail(o, path,
                             "cannot write '%s': it is a symbolic link whose target cannot be reached (%s); the "
                             "link is not replaced",
                             strerror(errno));
        if (S_ISREG(st.st_mode)) {
            resolved = realpath(path, NULL); /* libc's allocation: free(), below */
            if (!resolved)
                return open_fail(o, path, "cannot write '%s': its symbolic link cannot be resolved (%s)",
                                 strerror(errno));
            target = resolved;
        }
    }
    mode_t mode = 0666;
    if (exists) {
        if (S_ISDIR(st.st_mode)) {
            free(resolved);
            return open_fail(o, path, "cannot write '%s': %s", "it is a directory");
        }
        if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
            free(resolved);
            return open_fail(o, path, "cannot write '%s': %s", "it is a block device or a socket, not a file");
        }
        if (!S_ISREG(st.st_mode)) { /* a device or a pipe: written where it is */
            int fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
            int e = errno;
            free(resolved);
            if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
                if (fd >= 0) close(fd);
                return open_fail(o, path, "cannot write '%s': %s", strerror(e));
            }
            *out = o;
            return SB_OK;
        }
        if ((st.st_mode & 0222) == 0 || faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0) {
            free(resolved);
            return open_fail(o, path, "cannot write '%s': %s", "the file is read-only; it is not replaced");
        }
        mode = st.st_mode & 07777;
    }
    size_t tlen = strlen(target);
    o->final = sb_strdup(target);
    o->tmp = sb_malloc(tlen + 32);
    free(resolved);
    if (!o->final || !o->tmp) {
        output_free(o);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "opening '%s': out of memory", path);
    }
    snprintf(o->tmp, tlen + 32, "%s.tmp.%ld", o->final, (long)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        sb_status fst = sb_fail(SB_ERR_IO, "cannot write '%s': %s (creating '%s')", path, strerror(e), o->tmp);
        output_free(o);
        return fst;
    }
    if (exists) (void)fchmod(fd, mode); /* the umask does not narrow a replaced file's bits */
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        sb_status fst = sb_fail(SB_ERR_IO, "cannot write '%s': %s", path, strerror(e));
        output_free(o);
        return fst;
    }
    *out = o;
    return SB_OK;
}

sb_status sb_output_write(sb_output *o, const void *data, size_t n) {
    sb_clear_error();
    if (!o || (!data && n)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_output_write: NULL argument");
    if (!o->err && n && fwrite(data, 1, n, o->f) != n) o->err = errno ? errno : EIO;
    if (o->err) return sb_fail(SB_ERR_IO, "cannot write '%s': %s", o->path, strerror(o->err));
    return SB_OK;
}

FILE *sb_output_stream(sb_output *o) { return o ? o->f : NULL; }

void sb_output_set_error(sb_output *o, int err) {
    if (o && !o->err) o->err = err ? err : EIO;
}

sb_status sb_output_retract(sb_output *o) {
    sb_clear_error();
    if (!o) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_output_retract: NULL argument");
    if (!o->final) return SB_OK;
    if (unlink(o->final) != 0 && errno != ENOENT)
        return sb_fail(SB_ERR_IO, "cannot write '%s': removing the file it replaces: %s", o->path, strerror(errno));
    sync_dir_of(o->final);
    return SB_OK;
}

sb_status sb_output_commit(sb_output *o) {
    sb_clear_error();
    if (!o) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_output_commit: NULL argument");
    errno = 0;
    int err = o->err;
    if (!err && fflush(o->f) != 0) err = errno ? errno : EIO;
    if (!err && o->tmp && fsync(fileno(o->f)) != 0) err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
    o->f = NULL;
    sb_status st = SB_OK;
    if (err) {
        st = sb_fail(SB_ERR_IO, "cannot write '%s': %s", o->path, strerror(err));
        if (o->tmp) unlink(o->tmp);
    } else if (o->tmp) {
        if (rename(o->tmp, o->final) != 0) {
            err = errno;
            unlink(o->tmp);
            st = sb_fail(SB_ERR_IO, "cannot write '%s': renaming its temporary file into place: %s", o->path,
                         strerror(err));
        } else {
            sync_dir_of(o->final);
        }
    }
    output_free(o);
    return st;
}

void sb_output_discard(sb_output *o) {
    if (!o) return;
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    output_free(o);
}
