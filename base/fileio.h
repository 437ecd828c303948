/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Safe file helpers: atomic replace, reads that never follow a planted
 * symlink, path joining without fixed buffers.
 */
#ifndef GV_BASE_FILEIO_H
#define GV_BASE_FILEIO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

/*
 * gv_atomic_write_at - replace @name in the folder @dirfd with @len bytes of @data.
 *
 * Writes a temporary file in the same folder (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC,
 * mode @mode), writes, fsync()s it, rename()s it over @name and fsync()s the
 * folder.  Whatever sits at @name (a regular file, a symlink, a FIFO) is
 * replaced by the rename and never opened or followed.  A folder at @name is
 * refused (EISDIR).  On any failure the temporary file is removed and @name is
 * left as it was.
 * Errors: negative errno with *err set (reason GV_REASON_IO); ENOSPC for a full disk.
 */
int gv_atomic_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                       gv_error_t **err);

/*
 * gv_read_file_at - read the regular file @name under @dirfd (or a path when
 * @dirfd is AT_FDCWD) into a NUL-terminated heap buffer.
 *
 * With @nofollow, a symlink at the last component is refused (ELOOP).  A
 * file that is not regular is refused (EINVAL).  At most @max_bytes are
 * accepted (EFBIG beyond).  *out is owned by the caller (free()); *len may be NULL.
 * Errors: negative errno with *err set; ENOENT when absent.
 */
int gv_read_file_at(int dirfd, const char *name, bool nofollow, size_t max_bytes, char **out,
                    size_t *len, gv_error_t **err);

/*
 * gv_path_join - "<a>/<b>" with exactly one slash between, as a heap string
 * (caller frees).  Either part may be empty.  Returns NULL only when out of memory.
 */
char *gv_path_join(const char *a, const char *b);

/*
 * gv_mkdir_p - create @path and its missing parents with @mode.
 * Errors: negative errno with *err set (GV_REASON_IO).
 */
int gv_mkdir_p(const char *path, mode_t mode, gv_error_t **err);

/*
 * gv_write_all - write the whole buffer to @fd, retrying on EINTR and short writes.
 * Returns 0 or a negative errno.  Sets no error object (a helper for callers that do).
 */
int gv_write_all(int fd, const void *data, size_t len);

/*
 * gv_fsync_dir - fsync() the open folder @dirfd.  Filesystems that cannot
 * sync a folder (EINVAL, EROFS) count as success.  Returns 0 or a negative errno.
 */
int gv_fsync_dir(int dirfd);

/*
 * gv_memstream_close - fclose() a stream from open_memstream() over @buf and
 * say whether its text is whole: fclose() fails (ENOMEM) when the final flush
 * cannot grow the buffer, and the text must then not be used.  On failure,
 * or with no buffer, *@buf is freed, set to NULL and -ENOMEM returned; on 0
 * *@buf is the caller's NUL-terminated heap string.  @f is closed either way
 * (NULL is accepted: -ENOMEM).  Sets no error object.
 */
int gv_memstream_close(FILE *f, char **buf);

/*
 * gv_vasprintf - the text of @fmt with @ap in a new heap string (the caller
 * frees it), or NULL when memory runs out.  Sets no error object: callers
 * that may go on without the text (a log line, an optional summary) fall
 * back to something fixed.
 */
char *gv_vasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
