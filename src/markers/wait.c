/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_store_wait(): event-driven wait for a marker's whole chain.  The
 * store's folder watch (gv_dirwatch, watch.c) wakes it; the chain is
 * re-judged after each batch of events, and after each re-arming the store
 * re-opens the folder by its path first (the folder may have been replaced).
 * Without an inotify instance it looks again every GV_DIRWATCH_POLL_MS.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "markers-internal.h"
#include "markers.h"

/* "driver-ready: ready; toolkit-ready: missing (not present)" for the chain root first; NULL when out of memory. */
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
        if (gv_memstream_close(f, &buf) < 0)
                return NULL;
        return buf;
}

/* Whether the store's watch has no inotify instance (and waits poll). */
static bool polling(const gv_store_t *s)
{
        return s->watch && gv_dirwatch_state(s->watch) == GV_DIRWATCH_POLLING;
}

int gv_store_watch(gv_store_t *s, const char **why, gv_error_t **err)
{
        if (!s->watch) {
                gv_dirwatch_options_t o = { .markers_only = true };
                int r = gv_dirwatch_open(s->dir, &o, &s->watch, err);
                if (r < 0)
                        return r;
        }
        if (!polling(s))
                return 0;
        if (why)
                *why = gv_dirwatch_error(s->watch)->msg;
        return 1;
}

/*
 * The watch is (re)armed: open the folder now at the path (the one the
 * watch is on, or a newer one whose arrival is already queued as an event),
 * so that no change can fall between the watch and the reading.
 * 0, or negative errno: the folder cannot be opened or watched.
 */
static int follow_folder(gv_store_t *s, gv_error_t **err)
{
        if (s->dirfd >= 0) {
                close(s->dirfd);
                s->dirfd = -1;
        }
        int r = gv_store_attach(s, err);
        if (r < 0)
                return r;
        const gv_error_t *e = gv_dirwatch_error(s->watch);
        if (e && !polling(s))
                return gv_error_set(err, e->errnum, e->reason, "%s", e->msg);
        return 0;
}

/*
 * No inotify: wait one poll interval (at most @left_ms, < 0: no bound).
 * Like the inotify wait's ppoll(), a signal whose handler runs ends it
 * (-EINTR); gv_sleep_ms() would sleep through it.  GV_DIRWATCH_POLLED.
 */
static int poll_pause(int64_t left_ms, gv_error_t **err)
{
        int64_t ms = left_ms >= 0 && left_ms < GV_DIRWATCH_POLL_MS ? left_ms : GV_DIRWATCH_POLL_MS;
        struct timespec ts = { .tv_sec = (time_t) (ms / 1000), .tv_nsec = (long) (ms % 1000) * 1000000L };
        if (ppoll(NULL, 0, &ts, NULL) < 0 && errno == EINTR)
                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted by a signal");
        return GV_DIRWATCH_POLLED;
}

/* 1 when @id is READY (@info filled when not NULL), 0 when not, negative errno. */
static int check_ready(gv_store_t *s, gv_marker_id_t id, gv_marker_info_t *info, gv_error_t **err)
{
        gv_marker_info_t cur = { 0 };
        int r = gv_store_inspect(s, id, &cur, err);
        if (r < 0)
                return r;
        if (cur.state != GV_MARKER_READY) {
                gv_marker_info_clear(&cur);
                return 0;
        }
        if (info)
                *info = cur;
        else
                gv_marker_info_clear(&cur);
        return 1;
}

int gv_store_wait(gv_store_t *store, gv_marker_id_t id, int64_t timeout_ms, gv_marker_info_t *info,
                  gv_error_t **err)
{
        if (!store || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "wait: bad store or marker id");
        const char *file = gv_marker_file(id);
        int64_t deadline = timeout_ms >= 0 ? gv_now_ms() + timeout_ms : INT64_MAX;
        int r = gv_store_watch(store, NULL, err);
        if (r < 0)
                return r;
        bool rearmed = true; /* the folder may have been replaced since the last wait */
        for (;;) {
                if (rearmed) {
                        r = follow_folder(store, err);
                        if (r < 0)
                                return gv_error_prefix(err, "wait for %s", file);
                }
                /* The watch is in place before we look: no event can fall between. */
                r = check_ready(store, id, info, err);
                if (r != 0)
                        return r < 0 ? gv_error_prefix(err, "wait for %s", file) : 0;
                int64_t left = deadline == INT64_MAX ? -1 : deadline - gv_now_ms();
                if (deadline != INT64_MAX && left <= 0) {
                        _cleanup_free_ char *report = chain_report(store, id);
                        return gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT, "%s not ready after %lld ms: %s",
                                            file, (long long) timeout_ms, report ? report : "(out of memory)");
                }
                /* A time-out loops once more: the chain is judged again and reported. */
                r = polling(store) ? poll_pause(left, err) : gv_dirwatch_next(store->watch, left, NULL, err);
                if (r < 0)
                        return gv_error_prefix(err, "wait for %s", file);
                /* polled: the folder may have been replaced unseen, so it is opened again by its path */
                rearmed = r == GV_DIRWATCH_REARMED || r == GV_DIRWATCH_POLLED;
        }
}
