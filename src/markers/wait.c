/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_store_wait(): event-driven wait for a marker's whole chain.  inotify
 * on the folder and on its parent for the folder's name (or, while it does
 * not exist, on its nearest existing ancestor), the chain re-judged after
 * each batch of events and after each re-arming, ppoll() with the remaining
 * time.  No polling loop.
 *
 * Why the parent too: the store holds the folder open, and the kernel sends
 * IN_DELETE_SELF / IN_IGNORED only when the last reference to a removed
 * folder goes -- an empty folder removed and re-created (or replaced by a
 * rename) while we hold it sends its own watch nothing at all.  The
 * parent's IN_DELETE / IN_CREATE / IN_MOVED_* for the folder's name always
 * come.
 */
#include "base/clock.h"
#include "markers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "markers-internal.h"

#define FOLDER_MASK                                                                                       \
        (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | \
         IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
#define ANCESTOR_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define PARENT_MASK                                                                                     \
        (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* Events that mean a watched folder itself is gone or moved: watch again. */
#define SELF_GONE (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)

/* The parent folder of @path as a heap string ("." for a bare name, "/" for "/x"); NULL when out of memory. */
static char *parent_of(const char *path)
{
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/')
                n--;
        while (n > 0 && path[n - 1] != '/')
                n--;
        if (n == 0)
                return strdup(".");
        while (n > 1 && path[n - 1] == '/')
                n--;
        return strndup(path, n);
}

/*
 * Replace the store's watches by @wd (folder or ancestor) and @pwd (the
 * folder's parent, -1 for none).  The same wd comes back when an inode is
 * already watched, so an old watch is removed only when neither new one is
 * it.  EINVAL from inotify_rm_watch() after IN_IGNORED is fine.
 */
static void set_watches(gv_store_t *s, int wd, int pwd, bool on_folder)
{
        const int old[2] = { s->wd, s->pwd };
        for (size_t i = 0; i < 2; i++)
                if (old[i] >= 0 && old[i] != wd && old[i] != pwd && (i == 0 || old[i] != old[0]))
                        inotify_rm_watch(s->ifd, old[i]);
        s->wd = wd;
        s->pwd = wd >= 0 && on_folder ? pwd : -1;
        s->on_folder = wd >= 0 && on_folder;
}

static void set_watch(gv_store_t *s, int wd, bool on_folder)
{
        set_watches(s, wd, -1, on_folder);
}

/* The last component of the folder path (the name the parent watch reports). */
static const char *folder_name(const gv_store_t *s)
{
        const char *slash = strrchr(s->dir, '/');
        return slash && slash[1] ? slash + 1 : s->dir;
}

/*
 * Watch the store's folder, attaching the store to it; when it does not
 * exist, watch the nearest existing ancestor for it to appear.  Cheap when
 * the right watch is already in place.
 */
static int watch(gv_store_t *s, gv_error_t **err)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                int r = gv_store_attach(s, err);
                if (r < 0)
                        return r;
                if (r == 1) {
                        /* The parent first: a removal after this is seen by one of the two watches. */
                        _cleanup_free_ char *parent = parent_of(s->dir);
                        if (!parent)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        /*
                         * Without it (a parent we may not read, no watch left: -1) the
                         * folder's own watch still sees everything but an empty
                         * folder's removal while we hold it: better than no wait.
                         */
                        int pwd = inotify_add_watch(s->ifd, parent, PARENT_MASK);
                        int wd = inotify_add_watch(s->ifd, s->dir, FOLDER_MASK);
                        if (wd < 0 && errno != ENOENT) {
                                int e = errno;
                                set_watches(s, pwd, -1, false); /* keep no watch we do not track */
                                set_watch(s, -1, false);
                                return gv_error_set(err, e, GV_REASON_IO, "%s: inotify: %s", s->dir, strerror(e));
                        }
                        /* The watch and the open folder must be the same inode. */
                        struct stat a, b;
                        if (wd >= 0 && fstat(s->dirfd, &a) == 0 && lstat(s->dir, &b) == 0 &&
                            a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                                set_watches(s, wd, pwd, true);
                                return 0;
                        }
                        /* Replaced or gone meanwhile: drop every watch, attach again. */
                        set_watches(s, wd, pwd, true);
                        if (s->pwd < 0 && pwd >= 0)
                                set_watches(s, pwd, -1, false); /* wd < 0: track pwd to drop it */
                        set_watch(s, -1, false);
                        close(s->dirfd);
                        s->dirfd = -1;
                        continue;
                }
                /* No folder yet: watch the nearest ancestor that exists. */
                _cleanup_free_ char *p = parent_of(s->dir);
                int wd;
                for (;;) {
                        if (!p)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        wd = inotify_add_watch(s->ifd, p, ANCESTOR_MASK);
                        if (wd >= 0)
                                break;
                        if (errno != ENOENT || strcmp(p, "/") == 0 || strcmp(p, ".") == 0)
                                return gv_error_set(err, errno, GV_REASON_IO, "%s: inotify: %s", p,
                                                    strerror(errno));
                        char *up = parent_of(p);
                        free(p);
                        p = up;
                }
                set_watch(s, wd, false);
                /* It may have appeared between the attach and the watch. */
                struct stat st;
                if (lstat(s->dir, &st) < 0)
                        return 0;
        }
        return gv_error_set(err, EAGAIN, GV_REASON_IO, "%s: folder keeps changing; cannot watch it", s->dir);
}

/* "driver-ready: ready; toolkit-ready: missing (not present)" for the chain root first. */
static char *chain_report(gv_store_t *s, gv_marker_id_t id)
{
        gv_marker_id_t chain[GV_MARKER__MAX];
        size_t n = 0;
        for (gv_marker_id_t p = id; p != GV_MARKER_INVALID && n < GV_ARRAY_SIZE(chain); p = gv_marker_parent(p))
                chain[n++] = p;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = n; i-- > 0;) {
                gv_marker_info_t mi = { 0 };
                if (gv_store_inspect(s, chain[i], &mi, NULL) < 0)
                        fprintf(f, "%s: cannot inspect", gv_marker_file(chain[i]));
                else
                        fprintf(f, "%s: %s%s%s%s", gv_marker_file(chain[i]), gv_marker_state_name(mi.state),
                                mi.detail ? " (" : "", mi.detail ? mi.detail : "", mi.detail ? ")" : "");
                if (i > 0)
                        fputs("; ", f);
                gv_marker_info_clear(&mi);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* NOLINTNEXTLINE(readability-function-cognitive-complexity): the inotify wait loop with its folder and timeout cases; to be split in the architecture refactor */
int gv_store_wait(gv_store_t *store, gv_marker_id_t id, int64_t timeout_ms, gv_marker_info_t *info,
                  gv_error_t **err)
{
        if (!store || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "wait: bad store or marker id");
        const char *file = gv_marker_file(id);
        int64_t deadline = timeout_ms >= 0 ? gv_now_ms() + timeout_ms : INT64_MAX;

        if (store->ifd < 0) {
                store->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                if (store->ifd < 0)
                        return gv_error_set(err, errno, GV_REASON_IO, "inotify: %s", strerror(errno));
                store->wd = -1;
                store->on_folder = false;
        }
        int ifd = store->ifd;
        bool rewatch = true; /* cheap when the watch from an earlier wait still fits */

        for (;;) {
                int r;
                if (rewatch) {
                        r = watch(store, err);
                        if (r < 0)
                                return gv_error_prefix(err, "wait for %s", file);
                        rewatch = false;
                }
                /* The watch is in place before we look: no event can fall between. */
                gv_marker_info_t cur = { 0 };
                r = gv_store_inspect(store, id, &cur, err);
                if (r < 0)
                        return gv_error_prefix(err, "wait for %s", file);
                if (cur.state == GV_MARKER_READY) {
                        if (info)
                                *info = cur;
                        else
                                gv_marker_info_clear(&cur);
                        return 0;
                }
                gv_marker_info_clear(&cur);

                int64_t left = deadline == INT64_MAX ? -1 : deadline - gv_now_ms();
                if (deadline != INT64_MAX && left <= 0) {
                        _cleanup_free_ char *report = chain_report(store, id);
                        return gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT, "%s not ready after %lld ms: %s",
                                            file, (long long) timeout_ms, report ? report : "(out of memory)");
                }
                struct timespec ts = { 0 };
                if (left >= 0) {
                        ts.tv_sec = (time_t) (left / 1000);
                        ts.tv_nsec = (long) (left % 1000) * 1000000L;
                }
                struct pollfd pfd = { .fd = ifd, .events = POLLIN };
                r = ppoll(&pfd, 1, left >= 0 ? &ts : NULL, NULL);
                if (r < 0) {
                        if (errno == EINTR)
                                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED,
                                                    "wait for %s: interrupted by a signal", file);
                        return gv_error_set(err, errno, GV_REASON_IO, "wait for %s: ppoll: %s", file,
                                            strerror(errno));
                }
                if (r == 0)
                        continue; /* timed out: the loop re-checks once more and reports */

                /* Drain the whole batch, then re-judge the chain once. */
                char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
                for (;;) {
                        ssize_t n = read(ifd, buf, sizeof(buf));
                        if (n < 0) {
                                if (errno == EINTR)
                                        continue;
                                if (errno == EAGAIN)
                                        break;
                                return gv_error_set(err, errno, GV_REASON_IO, "wait for %s: inotify read: %s",
                                                    file, strerror(errno));
                        }
                        for (char *p = buf; p < buf + n;) {
                                const struct inotify_event *ev = (const struct inotify_event *) (void *) p;
                                if (ev->wd == store->wd && (!store->on_folder || (ev->mask & SELF_GONE)))
                                        rewatch = true; /* folder gone or appeared: watch again */
                                if (ev->wd == store->pwd && store->pwd >= 0 &&
                                    ((ev->mask & SELF_GONE) ||
                                     (ev->len > 0 && strcmp(ev->name, folder_name(store)) == 0)))
                                        rewatch = true; /* the folder's name removed, created or moved */
                                if (ev->mask & IN_Q_OVERFLOW)
                                        rewatch = true;
                                p += sizeof(struct inotify_event) + ev->len;
                        }
                }
        }
}
