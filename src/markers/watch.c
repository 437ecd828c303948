/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_dirwatch: the one folder watcher (docs/markers.md, "Watching the
 * folder").  inotify on the folder and on its parent for the folder's name
 * (or, while the folder does not exist, on its nearest existing ancestor);
 * re-armed by itself when the folder goes, is moved or is replaced, and the
 * caller told so (GV_DIRWATCH_REARMED) so that it reads everything again.
 * Without inotify it says "poll" every interval.
 *
 * Why the parent too: a reader often holds the folder open (the marker
 * store does), and the kernel sends IN_DELETE_SELF / IN_IGNORED only when
 * the last reference to a removed folder goes -- an empty folder removed and
 * re-created (or replaced by a rename) while it is held open sends its own
 * watch nothing at all.  The parent's IN_DELETE / IN_CREATE / IN_MOVED_*
 * for the folder's name always come.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "markers.h"

/* What can change an entry of the folder; reads (IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE) cannot. */
#define FOLDER_MASK                                                                                     \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
#define ANCESTOR_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define PARENT_MASK                                                                                     \
        (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* Events that mean a watched folder itself is gone or moved: arm again. */
#define SELF_GONE (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)
/* With a stop flag, ppoll() waits at most this long before looking at it again. */
#define STOP_SLICE_MS 100

struct gv_dirwatch {
        char *dir;          /* the folder, trailing slashes dropped */
        const char *name;   /* its last component (points into dir), as the parent's events name it */
        bool markers_only;
        int poll_ms;
        int ifd;            /* -1: polling */
        int wd;             /* the folder's watch (WATCHING) or its ancestor's (MISSING), -1 for none */
        int pwd;            /* WATCHING: the parent's watch, -1 for none */
        gv_dirwatch_state_t state;
        gv_error_t *error;  /* why the folder is not watched (POLLING, UNWATCHED), else NULL */
};

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

static bool in_set(int wd, const int *set, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (set[i] == wd)
                        return true;
        return false;
}

/*
 * Make @wd / @pwd the watches in state @state, removing every other watch
 * the instance may hold (the old ones and @extra, added on the way).  The
 * same wd comes back when an inode is already watched, so a watch is
 * removed only when it is none of the new ones.  EINVAL from
 * inotify_rm_watch() after IN_IGNORED is fine.
 */
static void set_watches(gv_dirwatch_t *w, int wd, int pwd, int extra, gv_dirwatch_state_t state)
{
        const int keep[2] = { wd, pwd };
        const int drop[3] = { w->wd, w->pwd, extra };
        for (size_t i = 0; i < GV_ARRAY_SIZE(drop); i++)
                if (drop[i] >= 0 && !in_set(drop[i], keep, 2) && !in_set(drop[i], drop, i))
                        inotify_rm_watch(w->ifd, drop[i]);
        w->wd = wd;
        w->pwd = pwd;
        w->state = state;
        if (state != GV_DIRWATCH_UNWATCHED)
                gv_error_free(&w->error);
}

/* Arming failed on @path with errno @e: no watch left, the reason kept. */
static int arm_failed(gv_dirwatch_t *w, const char *path, int e, int extra)
{
        set_watches(w, -1, -1, extra, GV_DIRWATCH_UNWATCHED);
        return gv_error_set(&w->error, e, GV_REASON_IO, "%s: inotify: %s", path, strerror(e));
}

/* No folder: watch its nearest existing ancestor.  0, or negative errno (UNWATCHED). */
static int arm_ancestor(gv_dirwatch_t *w, int extra)
{
        _cleanup_free_ char *p = parent_of(w->dir);
        for (;;) {
                if (!p)
                        return arm_failed(w, w->dir, ENOMEM, extra);
                int wd = inotify_add_watch(w->ifd, p, ANCESTOR_MASK);
                if (wd >= 0) {
                        set_watches(w, wd, -1, extra, GV_DIRWATCH_MISSING);
                        return 0;
                }
                if (errno != ENOENT || strcmp(p, "/") == 0 || strcmp(p, ".") == 0)
                        return arm_failed(w, p, errno, extra);
                char *up = parent_of(p);
                free(p);
                p = up;
        }
}

/*
 * Watch the folder and its parent, or its nearest existing ancestor while
 * it does not exist.  0 when armed (WATCHING or MISSING); negative errno
 * when it cannot be watched (UNWATCHED, the reason in w->error).
 */
static int arm(gv_dirwatch_t *w)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                /* The parent first: a removal after this is seen by one of the two watches. */
                _cleanup_free_ char *parent = parent_of(w->dir);
                if (!parent)
                        return arm_failed(w, w->dir, ENOMEM, -1);
                /*
                 * Without it (a parent we may not read: -1) the folder's own
                 * watch still sees everything but an empty folder's removal
                 * while someone holds it open: better than no watch.
                 */
                int pwd = inotify_add_watch(w->ifd, parent, PARENT_MASK);
                int wd = inotify_add_watch(w->ifd, w->dir, FOLDER_MASK);
                if (wd >= 0) {
                        set_watches(w, wd, pwd, -1, GV_DIRWATCH_WATCHING);
                        return 0;
                }
                if (errno != ENOENT)
                        return arm_failed(w, w->dir, errno, pwd);
                int r = arm_ancestor(w, pwd);
                if (r < 0)
                        return r;
                /* It may have appeared between the two. */
                struct stat st;
                if (lstat(w->dir, &st) < 0)
                        return 0;
        }
        return arm_failed(w, w->dir, EAGAIN, -1);
}

int gv_dirwatch_open(const char *dir, const gv_dirwatch_options_t *opts, gv_dirwatch_t **out, gv_error_t **err)
{
        static const gv_dirwatch_options_t defaults = { 0 };
        if (!dir || !*dir || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_dirwatch_open: bad argument");
        if (!opts)
                opts = &defaults;
        gv_dirwatch_t *w = calloc(1, sizeof(*w));
        if (!w || !(w->dir = strdup(dir))) {
                free(w);
                return gv_error_oom(err);
        }
        size_t n = strlen(w->dir);
        while (n > 1 && w->dir[n - 1] == '/')
                w->dir[--n] = '\0';
        const char *slash = strrchr(w->dir, '/');
        w->name = slash && slash[1] ? slash + 1 : w->dir;
        w->markers_only = opts->markers_only;
        w->poll_ms = opts->poll_interval_ms > 0 ? opts->poll_interval_ms : GV_DIRWATCH_POLL_MS;
        w->wd = w->pwd = -1;
        w->ifd = opts->no_inotify ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->ifd < 0) {
                w->state = GV_DIRWATCH_POLLING;
                int e = opts->no_inotify ? ENOSYS : errno;
                (void) gv_error_set(&w->error, e, GV_REASON_IO, "inotify: %s", strerror(e));
        } else {
                (void) arm(w); /* UNWATCHED is a state, not a failure: next() tries again */
        }
        *out = w;
        return 0;
}

void gv_dirwatch_close(gv_dirwatch_t **w)
{
        if (!w || !*w)
                return;
        if ((*w)->ifd >= 0)
                close((*w)->ifd); /* drops every watch */
        gv_error_free(&(*w)->error);
        free((*w)->dir);
        free(*w);
        *w = NULL;
}

gv_dirwatch_state_t gv_dirwatch_state(const gv_dirwatch_t *w)
{
        return w->state;
}

const gv_error_t *gv_dirwatch_error(const gv_dirwatch_t *w)
{
        return w->error;
}

int gv_dirwatch_fd(const gv_dirwatch_t *w)
{
        return w->ifd;
}

/* What one event means: 0 nothing, GV_DIRWATCH_CHANGED, or GV_DIRWATCH_REARMED (arm again). */
static gv_dirwatch_result_t classify(const gv_dirwatch_t *w, const struct inotify_event *ev)
{
        if (ev->mask & IN_Q_OVERFLOW)
                return GV_DIRWATCH_REARMED; /* events were lost, self events among them perhaps */
        if (ev->wd == w->pwd && w->pwd >= 0)
                return (ev->mask & SELF_GONE) || (ev->len > 0 && strcmp(ev->name, w->name) == 0)
                               ? GV_DIRWATCH_REARMED /* the folder's name removed, created or moved */
                               : GV_DIRWATCH_TIMEOUT;
        if (ev->wd != w->wd || w->wd < 0)
                return GV_DIRWATCH_TIMEOUT; /* a watch dropped earlier */
        if (w->state == GV_DIRWATCH_MISSING || (ev->mask & SELF_GONE))
                return GV_DIRWATCH_REARMED; /* the folder may be there now, or is gone */
        /*
         * With markers_only, only a marker's own name can change a state: a
         * writer's temporary file becomes one by rename (IN_MOVED_TO
         * <marker>), and the writer lock or files of others never do.
         * Events about the folder itself count.
         */
        if (ev->len == 0 || !w->markers_only || gv_marker_by_file(ev->name) != GV_MARKER_INVALID)
                return GV_DIRWATCH_CHANGED;
        return GV_DIRWATCH_TIMEOUT;
}

/* Read every pending event; the strongest meaning of the batch (TIMEOUT: none), or negative errno. */
static int drain(gv_dirwatch_t *w, gv_error_t **err)
{
        gv_dirwatch_result_t res = GV_DIRWATCH_TIMEOUT;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (;;) {
                ssize_t n = read(w->ifd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return (int) res;
                if (n < 0)
                        return gv_error_set(err, errno, GV_REASON_IO, "inotify read: %s", strerror(errno));
                if (n == 0)
                        return (int) res;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) (void *) p;
                        gv_dirwatch_result_t c = classify(w, ev);
                        if (c > res)
                                res = c;
                        p += sizeof(*ev) + ev->len;
                }
        }
}

/* After a batch that asks for it: arm again; REARMED when the watch moved, else TIMEOUT (nothing to re-read). */
static gv_dirwatch_result_t rearm(gv_dirwatch_t *w)
{
        gv_dirwatch_state_t was = w->state;
        (void) arm(w);
        if (was == GV_DIRWATCH_MISSING && w->state == GV_DIRWATCH_MISSING)
                return GV_DIRWATCH_TIMEOUT; /* an ancestor's event that brought no folder (perhaps a step to it) */
        return GV_DIRWATCH_REARMED;
}

/* No watch (POLLING, UNWATCHED): sleep up to the poll interval, then say "poll" (or REARMED once armed). */
static int next_unwatched(gv_dirwatch_t *w, int64_t timeout_ms, const volatile sig_atomic_t *stop, gv_error_t **err)
{
        int64_t ms = timeout_ms >= 0 && timeout_ms < w->poll_ms ? timeout_ms : w->poll_ms;
        if (gv_sleep_ms(ms, stop) < 0)
                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted by a signal");
        if (w->state == GV_DIRWATCH_UNWATCHED && arm(w) == 0)
                return GV_DIRWATCH_REARMED;
        return GV_DIRWATCH_POLLED;
}

static bool stopped(const volatile sig_atomic_t *stop)
{
        return stop && *stop;
}

int gv_dirwatch_next(gv_dirwatch_t *w, int64_t timeout_ms, const volatile sig_atomic_t *stop, gv_error_t **err)
{
        if (!w)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_dirwatch_next: NULL watch");
        if (stopped(stop))
                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted by a signal");
        if (w->state == GV_DIRWATCH_POLLING || w->state == GV_DIRWATCH_UNWATCHED)
                return next_unwatched(w, timeout_ms, stop, err);
        int64_t deadline = timeout_ms >= 0 ? gv_now_ms() + timeout_ms : INT64_MAX;
        for (;;) {
                int64_t left = deadline == INT64_MAX ? -1 : deadline - gv_now_ms();
                if (left < 0 && deadline != INT64_MAX)
                        left = 0;
                if (stop && (left < 0 || left > STOP_SLICE_MS))
                        left = STOP_SLICE_MS;
                struct timespec ts = { .tv_sec = (time_t) (left / 1000), .tv_nsec = (long) (left % 1000) * 1000000L };
                struct pollfd pfd = { .fd = w->ifd, .events = POLLIN };
                int r = ppoll(&pfd, 1, left >= 0 ? &ts : NULL, NULL);
                if (r < 0 && (errno != EINTR || !stop))
                        return errno == EINTR ? gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted by a signal")
                                              : gv_error_set(err, errno, GV_REASON_IO, "ppoll: %s", strerror(errno));
                if (stopped(stop))
                        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted by a signal");
                if (r > 0) {
                        r = drain(w, err);
                        if (r == GV_DIRWATCH_REARMED)
                                r = rearm(w);
                        if (r != GV_DIRWATCH_TIMEOUT)
                                return r; /* CHANGED, REARMED, or an error */
                }
                if (deadline != INT64_MAX && gv_now_ms() >= deadline)
                        return GV_DIRWATCH_TIMEOUT;
        }
}
