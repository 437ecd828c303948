/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a folder is a mount whose source was deleted: /proc/self/mountinfo
 * (proc(5), "/proc/[pid]/mountinfo") shows such a mount's root (field 4)
 * with "//deleted" appended, as the kernel's d_path() does for an unlinked
 * dentry.  A bind mount of the driver container's /run/nvidia/driver keeps
 * pointing at the removed folder after the container is replaced: empty
 * forever, so waiting for it cannot help.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "components-internal.h"

#define DELETED_SUFFIX "//deleted"

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) of @len bytes at @s. */
static char *unescape(const char *s, size_t len)
{
        char *out = malloc(len + 1);
        if (!out)
                return NULL;
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        out[n++] = (char) ((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
                        i += 3;
                } else {
                        out[n++] = s[i];
                }
        }
        out[n] = '\0';
        return out;
}

int gv_mountinfo_deleted(const char *text, const char *mount_point, char **root)
{
        if (root)
                *root = NULL;
        const char *line = text;
        int found = 0;
        while (line && *line) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                /* fields: ID PARENT MAJ:MIN ROOT MOUNT_POINT ... */
                const char *f = line;
                const char *fields[5] = { 0 };
                size_t flen[5] = { 0 };
                for (int k = 0; k < 5 && f < line + len; k++) {
                        size_t w = strcspn(f, " \n");
                        if (f + w > line + len)
                                w = (size_t) (line + len - f);
                        fields[k] = f;
                        flen[k] = w;
                        f += w;
                        while (f < line + len && *f == ' ')
                                f++;
                }
                if (fields[4]) {
                        _cleanup_free_ char *mp = unescape(fields[4], flen[4]);
                        _cleanup_free_ char *r = unescape(fields[3], flen[3]);
                        if (!mp || !r)
                                return -ENOMEM;
                        size_t rl = strlen(r), sl = strlen(DELETED_SUFFIX);
                        /* the last mount on a point is the one seen there: later lines win */
                        if (strcmp(mp, mount_point) == 0) {
                                found = rl > sl && strcmp(r + rl - sl, DELETED_SUFFIX) == 0;
                                if (root) {
                                        free(*root);
                                        *root = found ? TAKE_PTR(r) : NULL;
                                }
                        }
                }
                line = end ? end + 1 : NULL;
        }
        return found;
}

int gv_mount_source_deleted(const char *path, char **root)
{
        _cleanup_free_ char *real = realpath(path, NULL);
        if (!real)
                return 0; /* absent: not a mount at all */
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_read_file_at(AT_FDCWD, "/proc/self/mountinfo", false, 4u << 20, &text, NULL, &e) < 0)
                return 0; /* no /proc: nothing to say */
        return gv_mountinfo_deleted(text, real, root);
}
