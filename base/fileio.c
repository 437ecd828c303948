/* SPDX-License-Identifier: Apache-2.0 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cleanup.h"

int gv_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int gv_fsync_dir(int dirfd)
{
        if (fsync(dirfd) < 0 && errno != EINVAL && errno != EROFS)
                return -errno;
        return 0;
}

int gv_atomic_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                       gv_error_t **err)
{
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                return gv_error_set(err, EISDIR, GV_REASON_IO,
                                    "%s: a folder sits where a file belongs; remove it", name);

        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
                uint64_t rnd = 0;
                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = ((uint64_t) getpid() << 32) ^ (uint64_t) attempt ^ (uint64_t) (uintptr_t) &rnd;
                free(tmp);
                if (asprintf(&tmp, ".%s.tmp-%016llx", name, (unsigned long long) rnd) < 0) {
                        tmp = NULL;
                        return gv_error_oom(err);
                }
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd < 0 && errno != EEXIST)
                        return gv_error_set(err, errno, GV_REASON_IO, "%s: create temporary file: %s", name,
                                            strerror(errno));
        }
        if (fd < 0)
                return gv_error_set(err, EEXIST, GV_REASON_IO, "%s: no free temporary name", name);

        int r = 0;
        const char *step = "write";
        if (fchmod(fd, mode) < 0) {
                r = -errno;
                step = "chmod";
        } else if ((r = gv_write_all(fd, data, len)) < 0) {
                step = "write";
        } else if (fsync(fd) < 0) {
                r = -errno;
                step = "fsync";
        } else if (renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                step = "rename";
        }
        if (r < 0) {
                int saved = -r;
                unlinkat(dirfd, tmp, 0);
                return gv_error_set(err, saved, GV_REASON_IO, "%s: %s: %s%s", name, step, strerror(saved),
                                    saved == ENOSPC ? " (disk full; nothing was changed)" : "");
        }
        r = gv_fsync_dir(dirfd);
        if (r < 0)
                return gv_error_set(err, r, GV_REASON_IO, "%s: fsync folder: %s", name, strerror(-r));
        return 0;
}

int gv_read_file_at(int dirfd, const char *name, bool nofollow, size_t max_bytes, char **out,
                    size_t *len, gv_error_t **err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                                                         (nofollow ? O_NOFOLLOW : 0));
        if (fd < 0) {
                int e = errno;
                if (e == ELOOP && nofollow)
                        return gv_error_set(err, e, GV_REASON_IO, "%s: is a symbolic link; refused", name);
                return gv_error_set(err, e, GV_REASON_IO, "%s: %s", name, strerror(e));
        }
        struct stat st;
        if (fstat(fd, &st) < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "%s: stat: %s", name, strerror(errno));
        if (!S_ISREG(st.st_mode))
                return gv_error_set(err, EINVAL, GV_REASON_IO, "%s: not a regular file", name);

        size_t cap = 4096, used = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return gv_error_oom(err);
        for (;;) {
                if (used + 1 >= cap) {
                        if (cap > max_bytes + 1)
                                return gv_error_set(err, EFBIG, GV_REASON_IO, "%s: larger than %zu bytes",
                                                    name, max_bytes);
                        if (!GV_GREEDY_REALLOC(buf, cap, cap + 1))
                                return gv_error_oom(err);
                }
                ssize_t n = read(fd, buf + used, cap - used - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return gv_error_set(err, errno, GV_REASON_IO, "%s: read: %s", name, strerror(errno));
                }
                if (n == 0)
                        break;
                used += (size_t) n;
                if (used > max_bytes)
                        return gv_error_set(err, EFBIG, GV_REASON_IO, "%s: larger than %zu bytes", name,
                                            max_bytes);
        }
        buf[used] = '\0';
        if (len)
                *len = used;
        *out = TAKE_PTR(buf);
        return 0;
}

char *gv_path_join(const char *a, const char *b)
{
        char *out = NULL;
        size_t la = strlen(a);
        while (la > 1 && a[la - 1] == '/')
                la--;
        while (*b == '/')
                b++;
        if (la == 0)
                return asprintf(&out, "/%s", b) < 0 ? NULL : out;
        if (la == 1 && a[0] == '/')
                return asprintf(&out, "/%s", b) < 0 ? NULL : out;
        if (*b == '\0')
                return asprintf(&out, "%.*s", (int) la, a) < 0 ? NULL : out;
        return asprintf(&out, "%.*s/%s", (int) la, a, b) < 0 ? NULL : out;
}

int gv_mkdir_p(const char *path, mode_t mode, gv_error_t **err)
{
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return gv_error_oom(err);
        size_t n = strlen(p);
        for (size_t i = 1; i <= n; i++) {
                if (p[i] != '/' && p[i] != '\0')
                        continue;
                char c = p[i];
                p[i] = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return gv_error_set(err, errno, GV_REASON_IO, "create folder %s: %s", p,
                                            strerror(errno));
                p[i] = c;
        }
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return gv_error_set(err, ENOTDIR, GV_REASON_IO, "%s: not a folder", path);
        return 0;
}

int gv_memstream_close(FILE *f, char **buf)
{
        int r = f ? fclose(f) : EOF;
        if (r != 0 || !*buf) {
                free(*buf);
                *buf = NULL;
                return -ENOMEM;
        }
        return 0;
}

char *gv_vasprintf(const char *fmt, va_list ap)
{
        char *s = NULL;
        return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}
