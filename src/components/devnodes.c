/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver check's device nodes (part of the driver component, apart from
 * driver.c): wait for /dev/nvidia* under the device root (they may appear
 * seconds after the driver loads, or never) and create
 * the /dev/char/MAJ:MIN links upstream's consumers expect.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "components-internal.h"
#include "markers/markers.h"

#define COMPONENT "driver"

/* The state of one device node. */
typedef enum node_state { NODE_OK, NODE_MISSING, NODE_WRONG_TYPE, NODE_DENIED } node_state_t;

static node_state_t node_check(const char *dev_root, const char *name, bool files_ok, struct stat *st_out)
{
        _cleanup_free_ char *inside = NULL;
        if (asprintf(&inside, "/dev/%s", name) < 0)
                return NODE_MISSING;
        _cleanup_free_ char *p = NULL;
        int r = gv_root_resolve(dev_root, inside, &p, NULL);
        if (r == -EACCES)
                return NODE_DENIED;
        if (r < 0)
                return NODE_MISSING;
        struct stat st;
        if (stat(p, &st) < 0)
                return errno == EACCES ? NODE_DENIED : NODE_MISSING;
        if (st_out)
                *st_out = st;
        if (S_ISCHR(st.st_mode) || (files_ok && S_ISREG(st.st_mode)))
                return NODE_OK;
        return NODE_WRONG_TYPE;
}


/* How many of @names are not usable nodes; *denied when one of them is not accessible. */
static size_t nodes_bad(const char *dev_root, char **names, bool files_ok, bool *denied)
{
        size_t bad = 0;
        *denied = false;
        for (char **n = names; *n; n++) {
                node_state_t s = node_check(dev_root, *n, files_ok, NULL);
                if (s != NODE_OK)
                        bad++;
                if (s == NODE_DENIED)
                        *denied = true;
        }
        return bad;
}

/* The error naming every node that is not usable, and why. */
static int nodes_error(const gv_config_t *cfg, const char *dev_root, char **names, bool files_ok, bool denied,
                       gv_error_t **err)
{
        char *msg = NULL;
        size_t mlen = 0;
        FILE *mf = open_memstream(&msg, &mlen);
        if (!mf)
                return gv_error_oom(err);
        const char *sep = "";
        for (char **n = names; *n; n++) {
                node_state_t s = node_check(dev_root, *n, files_ok, NULL);
                if (s == NODE_OK)
                        continue;
                fprintf(mf, "%s/dev/%s%s", sep, *n,
                        s == NODE_WRONG_TYPE ? " (not a character device)"
                        : s == NODE_DENIED   ? " (permission denied)"
                                             : "");
                sep = ", ";
        }
        if (gv_memstream_close(mf, &msg) < 0)
                return gv_error_oom(err);
        int r = denied ? gv_error_set(err, EACCES, GV_REASON_PERMISSION_DENIED,
                                      "device nodes under %s not accessible: %s", dev_root, msg ? msg : "")
                       : gv_error_set(err, ENOENT, GV_REASON_DEVICE_NODE_MISSING,
                                      "device nodes missing under %s after waiting %u s: %s", dev_root,
                                      cfg->driver.dev_node_wait_s, msg ? msg : "");
        free(msg);
        return r;
}

/* A watch on <dev root>/dev as a wake-up, or NULL (then plain 100 ms slices). */
static gv_dirwatch_t *watch_dev(const char *dev_root)
{
        _cleanup_free_ char *devdir = NULL;
        gv_dirwatch_t *w = NULL;
        if (gv_root_resolve(dev_root, "/dev", &devdir, NULL) < 0 || gv_dirwatch_open(devdir, NULL, &w, NULL) < 0)
                return NULL;
        return w;
}

int gv_devnodes_wait(const gv_config_t *cfg, const char *dev_root, char **names, bool files_ok, gv_error_t **err)
{
        int64_t deadline = gv_now_ms() + (int64_t) cfg->driver.dev_node_wait_s * 1000;
        _cleanup_(gv_dirwatch_close) gv_dirwatch_t *watch = NULL;
        bool logged = false;
        for (;;) {
                bool denied = false;
                size_t bad = nodes_bad(dev_root, names, files_ok, &denied);
                if (bad == 0)
                        return 0;
                int64_t now = gv_now_ms();
                if (denied || now >= deadline)
                        return nodes_error(cfg, dev_root, names, files_ok, denied, err);
                if (cfg->stop && *cfg->stop)
                        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted while waiting for device nodes");
                if (!logged) {
                        gv_cfg_logf(cfg, GV_LOG_INFO, COMPONENT, GV_REASON_NONE,
                                    "waiting up to %u s for %zu device node(s) under %s/dev", cfg->driver.dev_node_wait_s, bad,
                                    dev_root);
                        logged = true;
                        watch = watch_dev(dev_root);
                }
                int64_t slice = deadline - now < 100 ? deadline - now : 100;
                if (watch)
                        (void) gv_dirwatch_next(watch, slice, cfg->stop, NULL); /* any outcome: look again */
                else
                        (void) gv_sleep_ms(slice, cfg->stop);
        }
}

void gv_devnodes_link_char(const gv_config_t *cfg, const char *dev_root_here, const char *dev_root_host,
                           char **names, bool files_ok)
{
        const char *dir = cfg->driver.dev_char_dir && *cfg->driver.dev_char_dir ? cfg->driver.dev_char_dir : "/dev/char";
        bool dir_ready = false;
        for (char **n = names; *n; n++) {
                struct stat st;
                if (node_check(dev_root_here, *n, files_ok, &st) != NODE_OK || !S_ISCHR(st.st_mode))
                        continue; /* regular-file mock nodes: nothing to link */
                if (!dir_ready) {
                        _cleanup_error_ gv_error_t *e = NULL;
                        if (gv_mkdir_p(dir, 0755, &e) < 0) {
                                gv_cfg_logf(cfg, GV_LOG_WARN, COMPONENT, GV_REASON_IO, "cannot create %s: %s", dir,
                                            e ? e->msg : "");
                                return;
                        }
                        dir_ready = true;
                }
                _cleanup_free_ char *link = NULL, *target = NULL, *tmp = NULL;
                if (asprintf(&link, "%s/%u:%u", dir, major(st.st_rdev), minor(st.st_rdev)) < 0 ||
                    asprintf(&target, "%s/dev/%s", strcmp(dev_root_host, "/") == 0 ? "" : dev_root_host, *n) < 0 ||
                    asprintf(&tmp, "%s/.%u:%u.tmp-%ld", dir, major(st.st_rdev), minor(st.st_rdev),
                             (long) getpid()) < 0) {
                        gv_cfg_logf(cfg, GV_LOG_WARN, COMPONENT, GV_REASON_INTERNAL, "out of memory");
                        return;
                }
                char cur[4096];
                ssize_t l = readlink(link, cur, sizeof(cur) - 1);
                if (l >= 0) {
                        cur[l] = '\0';
                        if (strcmp(cur, target) == 0)
                                continue;
                }
                unlink(tmp);
                if (symlink(target, tmp) < 0 || rename(tmp, link) < 0) {
                        gv_cfg_logf(cfg, GV_LOG_WARN, COMPONENT, GV_REASON_IO, "cannot create symlink %s -> %s: %s",
                                    link, target, strerror(errno));
                        unlink(tmp);
                        continue;
                }
                gv_cfg_logf(cfg, GV_LOG_DEBUG, COMPONENT, GV_REASON_NONE, "created %s -> %s", link, target);
        }
}

