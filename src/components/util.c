/* SPDX-License-Identifier: Apache-2.0 */
/* Shared helpers of the components: logging, clocks, sleeps, paths inside a root. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "components-internal.h"

#define GV_MAX_SYMLINKS 40

void gv_cfg_logf(const gv_config_t *cfg, gv_log_level_t level, const char *component, gv_reason_t reason,
                 const char *fmt, ...)
{
        if (!cfg)
                return;
        va_list ap;
        va_start(ap, fmt);
        gv_vlogf(cfg->log, cfg->log_userdata, level, component, reason == GV_REASON_NONE ? "" : gv_reason_name(reason),
                 fmt, ap);
        va_end(ap);
}

size_t gv_strv_len(const char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* Drop the last component of the in-root path @p ("/a/b" -> "/a", "/a" -> ""). */
static void pop_component(char *p)
{
        char *s = strrchr(p, '/');
        if (s)
                *s = '\0';
}

int gv_root_resolve(const char *root, const char *path, char **out, gv_error_t **err)
{
        _cleanup_free_ char *resolved = strdup(""); /* "" or "/a/b": real folders inside the root */
        _cleanup_free_ char *rest = strdup(path ? path : "");
        if (!resolved || !rest)
                return gv_error_oom(err);
        unsigned links = 0;

        for (;;) {
                const char *p = rest;
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                const char *end = strchrnul(p, '/');
                _cleanup_free_ char *comp = strndup(p, (size_t) (end - p));
                char *next_rest = strdup(end);
                if (!comp || !next_rest) {
                        free(next_rest);
                        return gv_error_oom(err);
                }
                free(rest);
                rest = next_rest;

                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        pop_component(resolved);
                        continue;
                }
                _cleanup_free_ char *cand = NULL;
                if (asprintf(&cand, "%s/%s", resolved, comp) < 0)
                        return gv_error_oom(err);
                _cleanup_free_ char *host = gv_path_join(root, cand);
                if (!host)
                        return gv_error_oom(err);
                struct stat st;
                if (lstat(host, &st) < 0)
                        return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", host, strerror(errno));
                if (!S_ISLNK(st.st_mode)) {
                        free(resolved);
                        resolved = TAKE_PTR(cand);
                        continue;
                }
                if (++links > GV_MAX_SYMLINKS)
                        return gv_error_set(err, ELOOP, GV_REASON_IO, "%s: too many levels of symbolic links",
                                            host);
                size_t cap = st.st_size > 0 ? (size_t) st.st_size + 1 : 256;
                _cleanup_free_ char *target = NULL;
                for (;;) {
                        free(target);
                        target = malloc(cap);
                        if (!target)
                                return gv_error_oom(err);
                        ssize_t n = readlink(host, target, cap);
                        if (n < 0)
                                return gv_error_set(err, errno, GV_REASON_IO, "%s: readlink: %s", host,
                                                    strerror(errno));
                        if ((size_t) n < cap) {
                                target[n] = '\0';
                                break;
                        }
                        if (cap > 65536)
                                return gv_error_set(err, ENAMETOOLONG, GV_REASON_IO, "%s: link target too long",
                                                    host);
                        cap *= 2;
                }
                if (target[0] == '/')
                        resolved[0] = '\0'; /* absolute target: start again at the root */
                char *joined = NULL;
                if (asprintf(&joined, "%s/%s", target, rest) < 0)
                        return gv_error_oom(err);
                free(rest);
                rest = joined;
        }
        char *o = gv_path_join(root, resolved);
        if (!o)
                return gv_error_oom(err);
        *out = o;
        return 0;
}

int gv_root_find(const char *root, const char *const *dirs, const char *name, char **found, char **found_dir,
                 FILE *tried)
{
        for (const char *const *d = dirs; d && *d; d++) {
                _cleanup_free_ char *inside = gv_path_join(*d, name);
                _cleanup_free_ char *shown = inside ? gv_path_join(root, inside) : NULL;
                if (!inside || !shown)
                        return -ENOMEM;
                _cleanup_free_ char *host = NULL;
                _cleanup_error_ gv_error_t *e = NULL;
                int r = gv_root_resolve(root, inside, &host, &e);
                if (r < 0) {
                        if (tried)
                                fprintf(tried, "\n  %s: %s", shown, strerror(-r));
                        continue;
                }
                struct stat st;
                if (stat(host, &st) < 0) {
                        if (tried)
                                fprintf(tried, "\n  %s: %s", shown, strerror(errno));
                        continue;
                }
                if (!S_ISREG(st.st_mode)) {
                        if (tried)
                                fprintf(tried, "\n  %s: not a regular file", shown);
                        continue;
                }
                if (found_dir) {
                        char *slash = strrchr(host, '/');
                        char *dir = slash && slash != host ? strndup(host, (size_t) (slash - host)) : strdup("/");
                        if (!dir)
                                return -ENOMEM;
                        *found_dir = dir;
                }
                *found = TAKE_PTR(host);
                return 0;
        }
        return -ENOENT;
}

void gv_result_summary(gv_result_t *r, const char *fmt, ...)
{
        free(r->summary);
        va_list ap;
        va_start(ap, fmt);
        r->summary = gv_vasprintf(fmt, ap);
        va_end(ap);
}
