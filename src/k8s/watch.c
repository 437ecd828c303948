/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watches (gv_k8s_watch()): an optional LIST, then WATCH connections on
 * their own easy handle, resumed from the last resourceVersion after a
 * dropped stream, listing again after 410 Gone, with a backoff between
 * failures.  See docs/kubernetes.md.
 */
#include "base/clock.h"
#include "client-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"

/* The parse state of one watch stream. */
typedef struct wstate {
        gv_k8s_client_t *c;
        gv_k8s_watch_fn cb;
        void *userdata;
        gv_k8s_linebuf_t lb;
        char *rv;             /* last resourceVersion seen (heap) */
        unsigned events;      /* events in this connection */
        bool cb_stop;         /* the callback said stop */
        bool gone;            /* ERROR event with code 410 */
        int line_error;       /* a malformed line ended the connection */
} wstate_t;

/* One gv_k8s_watch() call: its bounds, its failures so far and its result. */
typedef struct wrun {
        gv_k8s_client_t *c;
        const gv_k8s_watch_spec_t *spec;
        wstate_t w;
        gv_k8s_xfer_t x;
        gv_error_t *last;     /* the last failure, for the give-up and time-out messages */
        unsigned timeout_s, max_failures, failures;
        uint64_t deadline;    /* gv_now_ms() */
        bool need_list;
        int ret;              /* the result once W_END */
} wrun_t;

/* What the loop of gv_k8s_watch() does after a step. */
typedef enum wstep {
        W_PROCEED,  /* on to the next step of this round */
        W_CONTINUE, /* start the next round */
        W_END,      /* return wrun_t.ret */
} wstep_t;

static const char *object_rv(json_object *o)
{
        json_object *md = NULL, *rv = NULL;
        if (o && json_object_object_get_ex(o, "metadata", &md) && json_object_object_get_ex(md, "resourceVersion", &rv) &&
            json_object_is_type(rv, json_type_string))
                return json_object_get_string(rv);
        return "";
}

static int set_rv(wstate_t *w, const char *rv)
{
        if (!rv || !*rv)
                return 0;
        char *n = strdup(rv);
        if (!n)
                return -ENOMEM;
        free(w->rv);
        w->rv = n;
        return 0;
}

static int watch_line(void *ud, char *line, size_t len)
{
        wstate_t *w = ud;
        gv_k8s_event_type_t type;
        _cleanup_json_ json_object *obj = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_k8s_watch_event_parse(line, len, &type, &obj, &e) < 0) {
                gv_k8s_logf(w->c, GV_LOG_WARN, "%s", e->msg);
                w->line_error = -EBADMSG;
                return -EBADMSG;
        }
        w->events++;
        if (type == GV_K8S_EVENT_ERROR) {
                json_object *code = NULL;
                if (json_object_object_get_ex(obj, "code", &code) && json_object_get_int(code) == 410) {
                        w->gone = true;
                        return 1;
                }
        } else if (set_rv(w, object_rv(obj)) < 0) {
                return -ENOMEM;
        }
        gv_k8s_watch_event_t ev = { .type = type, .object = obj, .resource_version = object_rv(obj) };
        if (!w->cb(w->userdata, &ev)) {
                w->cb_stop = true;
                return 1;
        }
        return 0;
}

static size_t watch_stream(gv_k8s_xfer_t *x, const char *data, size_t len)
{
        wstate_t *w = x->stream_data;
        int r = gv_k8s_linebuf_feed(&w->lb, data, len, watch_line, w);
        if (r == -EMSGSIZE)
                w->line_error = -EMSGSIZE;
        return r == 0 ? len : 0;
}

/* Deliver @items as ADDED, then SYNCED, until the callback says stop. */
static void deliver_list(wstate_t *w, json_object *items)
{
        size_t n = json_object_array_length(items);
        for (size_t i = 0; i < n && !w->cb_stop; i++) {
                json_object *it = json_object_array_get_idx(items, i);
                gv_k8s_watch_event_t ev = { .type = GV_K8S_EVENT_ADDED, .object = it, .resource_version = object_rv(it),
                                            .from_list = true };
                if (!w->cb(w->userdata, &ev))
                        w->cb_stop = true;
        }
        if (!w->cb_stop) {
                gv_k8s_watch_event_t ev = { .type = GV_K8S_EVENT_SYNCED, .resource_version = w->rv, .from_list = true };
                if (!w->cb(w->userdata, &ev))
                        w->cb_stop = true;
        }
}

/* LIST the collection, deliver items as ADDED + SYNCED, take the list's resourceVersion. */
static int relist(wstate_t *w, const gv_k8s_watch_spec_t *spec, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_k8s_build_path(spec->path, "labelSelector", spec->label_selector,
                                                      "fieldSelector", spec->field_selector, NULL);
        if (!path)
                return gv_error_oom(err);
        _cleanup_json_ json_object *list = NULL;
        int r = gv_k8s_get(w->c, path, &list, err);
        if (r < 0)
                return r;
        json_object *items = NULL, *md = NULL, *rv = NULL;
        if (!list || !json_object_object_get_ex(list, "items", &items) || !json_object_is_type(items, json_type_array) ||
            !json_object_object_get_ex(list, "metadata", &md) || !json_object_object_get_ex(md, "resourceVersion", &rv))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "GET %s%s: not a list with a resourceVersion",
                                    w->c->cfg->server, path);
        if (set_rv(w, json_object_get_string(rv)) < 0)
                return gv_error_oom(err);
        deliver_list(w, items);
        return 0;
}

/* Top of a round: stop, deadline, too many failures; then the backoff after a failure. */
static wstep_t watch_gate(wrun_t *r, gv_error_t **err)
{
        gv_k8s_client_t *c = r->c;
        if (gv_k8s_stopped(c)) {
                r->ret = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "watch %s: interrupted", r->spec->path);
                return W_END;
        }
        uint64_t now = (uint64_t) gv_now_ms();
        if (now >= r->deadline) {
                r->ret = gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT, "watch %s%s: no end after %u s%s%s",
                                      c->cfg->server, r->spec->path, r->timeout_s, r->last ? "; last error: " : "",
                                      r->last ? r->last->msg : "");
                return W_END;
        }
        if (r->failures >= r->max_failures) {
                gv_error_prefix(&r->last, "watch: gave up after %u failed attempts", r->failures);
                r->ret = gv_k8s_error_move(&r->last, err);
                return W_END;
        }
        if (r->failures == 0)
                return W_PROCEED;
        unsigned d = gv_k8s_backoff_ms(r->failures, c->opts.backoff_initial_ms, c->opts.backoff_max_ms,
                                       gv_k8s_rnd32(c));
        if (now + d > r->deadline)
                d = (unsigned) (r->deadline - now);
        gv_k8s_logf(c, GV_LOG_INFO, "watch %s: %s; resuming in %u ms", r->spec->path,
                    r->last ? r->last->msg : "stream ended", d);
        if (gv_sleep_ms((int64_t) d, c->opts.stop) < 0 || (uint64_t) gv_now_ms() >= r->deadline)
                return W_CONTINUE; /* reported at the top */
        return W_PROCEED;
}

/* Whether a failed LIST ends the watch rather than counting as one more failure. */
static bool list_error_final(int r, const gv_error_t *e)
{
        return r == -EINTR || !gv_reason_retryable(e->reason) || r == -ENOENT || r == -EACCES || r == -EPERM ||
               r == -EINVAL || r == -EMSGSIZE;
}

/* The LIST when there is no resourceVersion to resume from (first round, or after 410 Gone). */
static wstep_t watch_list(wrun_t *r, gv_error_t **err)
{
        if (!r->need_list)
                return W_PROCEED;
        _cleanup_error_ gv_error_t *e = NULL;
        int k = relist(&r->w, r->spec, &e);
        if (r->w.cb_stop) {
                r->ret = 0;
                return W_END;
        }
        if (k < 0) {
                if (list_error_final(k, e)) {
                        r->ret = k;
                        if (err) {
                                gv_error_free(err);
                                *err = TAKE_PTR(e);
                        }
                        return W_END;
                }
                gv_error_free(&r->last);
                r->last = TAKE_PTR(e);
                r->failures++;
                return W_CONTINUE;
        }
        r->need_list = false;
        return W_PROCEED;
}

/* The URL of the next WATCH request (heap), or NULL when out of memory. */
static char *watch_url(const wrun_t *r)
{
        unsigned remaining_s = (unsigned) ((r->deadline - (uint64_t) gv_now_ms() + 999) / 1000);
        char tos[24];
        snprintf(tos, sizeof(tos), "%u", remaining_s ? remaining_s : 1);
        const gv_k8s_watch_spec_t *spec = r->spec;
        _cleanup_free_ char *path = gv_k8s_build_path(spec->path, "watch", "1", "resourceVersion", r->w.rv,
                                                      "allowWatchBookmarks", "true", "timeoutSeconds", tos,
                                                      "labelSelector", spec->label_selector, "fieldSelector",
                                                      spec->field_selector, NULL);
        char *url = NULL;
        if (!path || asprintf(&url, "%s%s", r->c->cfg->server, path) < 0)
                return NULL;
        return url;
}

/* A connection that ended with an HTTP status or a transport failure: record it in r->last. */
static wstep_t watch_failed(wrun_t *r, const char *url, CURLcode cc, gv_error_t **err)
{
        gv_k8s_xfer_t *x = &r->x;
        if (cc == CURLE_OK || (x->status && x->status != 200)) {
                gv_k8s_http_error("GET", url, x->status, x->body, x->len, &r->last);
                if (!gv_k8s_http_retryable(x->status, false)) {
                        r->ret = gv_k8s_error_move(&r->last, err);
                        return W_END;
                }
        } else if (r->w.line_error) {
                gv_error_set(&r->last, -r->w.line_error, GV_REASON_KUBERNETES, "GET %s: malformed event stream", url);
        } else {
                gv_error_set(&r->last, gv_k8s_curl_errno(cc, x), GV_REASON_KUBERNETES, "GET %s: %s", url,
                             gv_k8s_curl_text(cc, x));
        }
        r->failures = r->w.events > 0 ? 1 : r->failures + 1;
        return W_CONTINUE;
}

/* How one WATCH connection ended (started at @t0 ms). */
static wstep_t watch_ended(wrun_t *r, const char *url, CURLcode cc, uint64_t t0, gv_error_t **err)
{
        gv_k8s_xfer_t *x = &r->x;
        if (r->w.cb_stop) {
                r->ret = 0;
                return W_END;
        }
        if (x->aborted_by_stop || gv_k8s_stopped(r->c) || x->aborted_by_deadline)
                return W_CONTINUE; /* reported at the top */
        if (r->w.gone || x->status == 410) {
                gv_k8s_logf(r->c, GV_LOG_INFO, "watch %s: resourceVersion %s is too old (410 Gone); listing again",
                            r->spec->path, r->w.rv ? r->w.rv : "");
                r->need_list = true;
                r->failures = 0;
                return W_CONTINUE;
        }
        gv_error_free(&r->last);
        if (r->w.line_error == -EMSGSIZE) { /* it would come again on resume */
                r->ret = gv_error_set(err, EMSGSIZE, GV_REASON_KUBERNETES,
                                      "GET %s: a watch event is larger than %u MiB (the limit); watch ended", url,
                                      GV_K8S_MAX_WATCH_EVENT_BYTES >> 20);
                return W_END;
        }
        if (cc == CURLE_OK && x->status == 200) {
                /* The server ended the stream (timeoutSeconds): resume at once, unless it
                 * keeps closing immediately without an event. */
                if (r->w.events == 0 && (uint64_t) gv_now_ms() - t0 < 1000) {
                        gv_error_set(&r->last, EPIPE, GV_REASON_KUBERNETES, "GET %s: stream ended at once", url);
                        r->failures++;
                } else {
                        r->failures = 0;
                }
                return W_CONTINUE;
        }
        return watch_failed(r, url, cc, err);
}

/* One WATCH connection from the last resourceVersion. */
static wstep_t watch_connect(wrun_t *r, gv_error_t **err)
{
        if ((r->ret = gv_k8s_refresh_token(r->c, false, err)) < 0)
                return W_END;
        _cleanup_free_ char *url = watch_url(r);
        if (!url) {
                r->ret = gv_error_oom(err);
                return W_END;
        }
        wstate_t *w = &r->w;
        w->events = 0;
        w->gone = false;
        w->line_error = 0;
        gv_k8s_linebuf_clear(&w->lb);
        w->lb.max_line = GV_K8S_MAX_WATCH_EVENT_BYTES;
        uint64_t t0 = (uint64_t) gv_now_ms();
        CURLcode cc = gv_k8s_xfer_perform(&r->x, "GET", url, NULL, NULL, 0, 0);
        gv_k8s_logf(r->c, GV_LOG_DEBUG, "GET %s: %s %ld, %u events (%llu ms%s)", url,
                    cc == CURLE_OK ? "ended" : gv_k8s_curl_text(cc, &r->x), r->x.status, w->events,
                    (unsigned long long) ((uint64_t) gv_now_ms() - t0),
                    r->x.new_connections ? ", new connection" : "");
        return watch_ended(r, url, cc, t0, err);
}

/* The steps of one round, in order. */
typedef wstep_t (*wstep_fn)(wrun_t *r, gv_error_t **err);
static const wstep_fn round_steps[] = { watch_gate, watch_list, watch_connect };

int gv_k8s_watch(gv_k8s_client_t *c, const gv_k8s_watch_spec_t *spec, gv_k8s_watch_fn cb, void *userdata,
                 gv_error_t **err)
{
        wrun_t r = { .c = c, .spec = spec, .w = { .c = c, .cb = cb, .userdata = userdata } };
        r.timeout_s = spec->timeout_s ? spec->timeout_s : 300;
        r.max_failures = spec->max_failures ? spec->max_failures : 5;
        r.deadline = (uint64_t) gv_now_ms() + (uint64_t) r.timeout_s * 1000u;
        r.x = (gv_k8s_xfer_t) { .c = c, .stream = watch_stream, .stream_data = &r.w, .deadline_ms = r.deadline };
        r.need_list = !spec->resource_version || !*spec->resource_version;

        if (!r.need_list && set_rv(&r.w, spec->resource_version) < 0)
                return gv_error_oom(err);
        r.x.easy = gv_k8s_easy_new(c);
        if (!r.x.easy) {
                free(r.w.rv);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "cannot make a curl handle");
        }
        for (;;) {
                wstep_t s = W_PROCEED;
                for (size_t i = 0; i < GV_ARRAY_SIZE(round_steps) && s == W_PROCEED; i++)
                        s = round_steps[i](&r, err);
                if (s == W_END)
                        break;
        }
        gv_k8s_xfer_reset(&r.x);
        curl_easy_cleanup(r.x.easy);
        gv_k8s_linebuf_clear(&r.w.lb);
        free(r.w.rv);
        gv_error_free(&r.last);
        return r.ret;
}
