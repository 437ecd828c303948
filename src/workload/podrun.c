/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_pod_run() as an explicit state machine (states in podrun.h): one
 * function per state, each returning the next, and a loop that dispatches
 * until GV_POD_RUN_DONE.  See lifecycle.h and docs/workload-lifecycle.md.
 */
#include "podrun.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "workload-internal.h"

#define DEFAULT_TIMEOUT_S 300u
#define DEFAULT_PENDING_TIMEOUT_S 120u
#define DEFAULT_MAX_RESTARTS 3u
#define DEFAULT_MAX_RECREATE 3u
#define DEFAULT_RECREATE_BACKOFF_MS 1000u
#define DEFAULT_LOG_TAIL_LINES 20u
#define MAX_LOG_CHARS 4096u     /* of the tail kept in a message */
#define MAX_WATCH_ROUNDS 100000u /* watch rounds of one pod */

/* Log through the caller's gv_log_fn (may be NULL) under o->log_component, reason "". */
#define logf_(o, level, ...) gv_logf((o)->log, (o)->log_userdata, (level), (o)->log_component, "", __VA_ARGS__)

static const char *const state_names[GV_POD_RUN__MAX] = {
        [GV_POD_RUN_PREPARE] = "prepare",     [GV_POD_RUN_DELETE_OLD] = "delete-old",
        [GV_POD_RUN_BACKOFF] = "backoff",     [GV_POD_RUN_CREATE] = "create",
        [GV_POD_RUN_WATCH] = "watch",         [GV_POD_RUN_JUDGE] = "judge",
        [GV_POD_RUN_SUCCEEDED] = "succeeded", [GV_POD_RUN_FAILED] = "failed",
        [GV_POD_RUN_PENDING] = "pending",     [GV_POD_RUN_TIMED_OUT] = "timed-out",
        [GV_POD_RUN_BROKEN] = "broken",       [GV_POD_RUN_GIVE_UP] = "give-up",
        [GV_POD_RUN_DELETE] = "delete",       [GV_POD_RUN_DONE] = "done",
};

const char *gv_pod_run_state_name(gv_pod_run_state_t s)
{
        return (unsigned) s < GV_POD_RUN__MAX && state_names[s] ? state_names[s] : "unknown";
}

/* ---------------------------------------------------------------------- */
/* watching one pod                                                        */
/* ---------------------------------------------------------------------- */

void gv_pod_watch_clear(gv_pod_watch_t *w)
{
        gv_pod_status_clear(&w->st);
        free(w->rv);
        w->rv = NULL;
        gv_error_free(&w->err);
}

bool gv_pod_watch_judge(gv_pod_watch_t *w, json_object *pod)
{
        gv_pod_status_t st = { 0 };
        int r = gv_pod_classify(pod, w->init_names, w->names, w->max_restarts, &st, &w->err);
        if (r < 0) {
                w->error = r;
                return false;
        }
        gv_pod_status_clear(&w->st);
        w->st = st;
        if (jget(jget(pod, "metadata"), "deletionTimestamp"))
                w->terminating = true;
        /* containers killed by someone else's deletion are not a validation failure: wait for DELETED */
        if (st.verdict == GV_POD_SUCCEEDED || (st.verdict == GV_POD_FAILED && !w->terminating))
                w->decided = true;
        return !w->decided;
}

bool gv_pod_watch_event(void *userdata, const gv_k8s_watch_event_t *ev)
{
        gv_pod_watch_t *w = userdata;
        if (ev->resource_version && *ev->resource_version) {
                char *rv = strdup(ev->resource_version);
                if (rv) {
                        free(w->rv);
                        w->rv = rv;
                }
        }
        if (!ev->object || ev->type == GV_K8S_EVENT_BOOKMARK || ev->type == GV_K8S_EVENT_ERROR)
                return true;
        json_object *md = jget(ev->object, "metadata");
        if (!streq(jstr(md, "name"), w->name))
                return true;
        const char *uid = jstr(md, "uid");
        if (w->uid && uid && !streq(uid, w->uid))
                return true; /* an older pod of the same name */
        if (ev->type == GV_K8S_EVENT_DELETED) {
                w->deleted = true;
                return false;
        }
        return gv_pod_watch_judge(w, ev->object);
}

gv_pod_run_state_t gv_pod_run_next(const gv_pod_watch_t *w, unsigned creation, unsigned max_recreate,
                                   bool before_deadline)
{
        if (w->error < 0)
                return GV_POD_RUN_BROKEN;
        if (w->deleted)
                return creation >= max_recreate ? GV_POD_RUN_GIVE_UP : GV_POD_RUN_BACKOFF;
        if (w->decided)
                return w->st.verdict == GV_POD_SUCCEEDED ? GV_POD_RUN_SUCCEEDED : GV_POD_RUN_FAILED;
        /* a bound passed */
        return before_deadline && !w->st.started ? GV_POD_RUN_PENDING : GV_POD_RUN_TIMED_OUT;
}

/* ---------------------------------------------------------------------- */
/* the run                                                                 */
/* ---------------------------------------------------------------------- */

typedef struct pod_run {
        gv_k8s_client_t *c;
        json_object *pod;          /* the Pod to create (borrowed) */
        gv_pod_run_options_t o;    /* with the defaults applied */
        const char *kind;          /* gv_workload_kind_name(o.kind) */
        gv_pod_run_result_t res;
        int64_t start, deadline;   /* gv_now_ms() */
        int64_t created_at;        /* of the current pod */
        char **init_names, **names;
        char *selector;
        char *uid;                 /* of the current pod */
        unsigned creation;         /* 0 = the first pod */
        unsigned round;            /* watch rounds of the current pod */
        gv_pod_watch_t w;
        int r;                     /* the result */
        gv_error_t **err;
} pod_run_t;

static unsigned secs_left(int64_t deadline)
{
        int64_t left = deadline - gv_now_ms();
        return left <= 0 ? 0 : (unsigned) ((left + 999) / 1000);
}

static gv_pod_run_options_t with_defaults(const gv_pod_run_options_t *in)
{
        gv_pod_run_options_t o = *in;
        if (!o.timeout_s)
                o.timeout_s = DEFAULT_TIMEOUT_S;
        if (!o.pending_timeout_s)
                o.pending_timeout_s = DEFAULT_PENDING_TIMEOUT_S;
        if (o.pending_timeout_s > o.timeout_s)
                o.pending_timeout_s = o.timeout_s;
        if (!o.max_restarts)
                o.max_restarts = DEFAULT_MAX_RESTARTS;
        if (!o.max_recreate)
                o.max_recreate = DEFAULT_MAX_RECREATE;
        if (!o.recreate_backoff_ms)
                o.recreate_backoff_ms = DEFAULT_RECREATE_BACKOFF_MS;
        if (!o.log_tail_lines)
                o.log_tail_lines = DEFAULT_LOG_TAIL_LINES;
        return o;
}

/* "    line\n    line" of the last MAX_LOG_CHARS of @text (trailing newlines dropped), or NULL. */
static char *indent_tail(char *text)
{
        size_t len = strlen(text);
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
                text[--len] = '\0';
        const char *t = len > MAX_LOG_CHARS ? text + len - MAX_LOG_CHARS : text;
        _cleanup_free_ char *ind = NULL;
        size_t ind_len = 0;
        FILE *f = open_memstream(&ind, &ind_len);
        if (!f)
                return NULL;
        fputs("    ", f);
        for (const char *p = t; *p; p++) {
                fputc(*p, f);
                if (*p == '\n' && p[1])
                        fputs("    ", f);
        }
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(ind);
}

/* Append "; last log lines of <container>:\n    line..." to *msg, best effort. */
static void append_log_tail(pod_run_t *pr, const char *container, char **msg)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *lerr = NULL;
        _cleanup_free_ char *add = NULL;
        int n;
        if (gv_k8s_pod_log(pr->c, pr->o.namespace, pr->res.pod_name, container, pr->o.log_tail_lines, &text,
                           &lerr) < 0) {
                n = asprintf(&add, "%s; its log could not be read: %s", *msg, lerr->msg);
        } else {
                _cleanup_free_ char *ind = indent_tail(text);
                if (!*text)
                        n = asprintf(&add, "%s; its log is empty", *msg);
                else if (!ind)
                        return;
                else
                        n = asprintf(&add, "%s; last log lines of %s:\n%s", *msg, container, ind);
        }
        if (n < 0)
                return;
        free(*msg);
        *msg = TAKE_PTR(add);
}

static gv_pod_run_state_t st_prepare(pod_run_t *pr)
{
        const gv_pod_run_options_t *o = &pr->o;
        if (!o->namespace || !*o->namespace || !o->node_name || !*o->node_name) {
                pr->r = gv_error_set(pr->err, EINVAL, GV_REASON_CONFIG,
                                     "%s validation pod: the namespace and the node name "
                                     "are needed (OPERATOR_NAMESPACE, NODE_NAME)",
                                     pr->kind);
                return GV_POD_RUN_DONE;
        }
        pr->r = gv_workload_container_names(pr->pod, &pr->init_names, &pr->names, pr->err);
        if (pr->r < 0)
                return GV_POD_RUN_DONE;
        if (!(pr->selector = gv_workload_label_selector(o->kind, o->node_name))) {
                pr->r = gv_error_oom(pr->err);
                return GV_POD_RUN_DONE;
        }
        return GV_POD_RUN_DELETE_OLD;
}

static gv_pod_run_state_t st_delete_old(pod_run_t *pr)
{
        pr->r = gv_workload_delete_old(pr->c, &pr->o, secs_left(pr->deadline), pr->err);
        return pr->r < 0 ? GV_POD_RUN_DONE : GV_POD_RUN_CREATE;
}

static gv_pod_run_state_t st_backoff(pod_run_t *pr)
{
        pr->creation++;
        unsigned shift = pr->creation - 1 < 10 ? pr->creation - 1 : 10;
        int64_t delay = (int64_t) pr->o.recreate_backoff_ms << shift;
        if (gv_now_ms() + delay >= pr->deadline)
                delay = pr->deadline - gv_now_ms() - 1000;
        if (delay > 0 && gv_sleep_ms(delay, pr->o.stop) < 0) {
                pr->r = gv_error_set(pr->err, EINTR, GV_REASON_INTERRUPTED,
                                     "interrupted before re-creating the %s validation pod", pr->kind);
                return GV_POD_RUN_DONE;
        }
        return GV_POD_RUN_CREATE;
}

static gv_pod_run_state_t st_create(pod_run_t *pr)
{
        gv_pod_watch_clear(&pr->w); /* the watch of a pod deleted by someone else */
        _cleanup_json_ json_object *created = NULL;
        pr->r = gv_k8s_pod_create(pr->c, pr->o.namespace, pr->pod, &created, pr->err);
        if (pr->r < 0) {
                gv_error_prefix(pr->err, "create the %s validation pod", pr->kind);
                return GV_POD_RUN_DONE;
        }
        pr->res.creations++;
        json_object *md = jget(created, "metadata");
        const char *cname = jstr(md, "name");
        free(pr->res.pod_name);
        pr->res.pod_name = cname ? strdup(cname) : NULL;
        free(pr->uid);
        pr->uid = jstr(md, "uid") ? strdup(jstr(md, "uid")) : NULL;
        pr->w = (gv_pod_watch_t) { .name = pr->res.pod_name,
                                   .uid = pr->uid,
                                   .init_names = (const char *const *) pr->init_names,
                                   .names = (const char *const *) pr->names,
                                   .max_restarts = pr->o.max_restarts };
        const char *crv = jstr(md, "resourceVersion");
        pr->w.rv = crv ? strdup(crv) : NULL;
        if (!pr->res.pod_name || !pr->w.rv) {
                pr->r = cname && crv ? gv_error_oom(pr->err)
                                     : gv_error_set(pr->err, EPROTO, GV_REASON_KUBERNETES,
                                                    "the created %s validation pod has no name or resourceVersion",
                                                    pr->kind);
                return GV_POD_RUN_DONE;
        }
        logf_(&pr->o, GV_LOG_INFO, "created %s validation pod %s/%s on node %s%s", pr->kind, pr->o.namespace,
              pr->res.pod_name, pr->o.node_name, pr->creation ? " (re-created)" : "");
        gv_pod_watch_judge(&pr->w, created);
        pr->created_at = gv_now_ms();
        pr->round = 0;
        return GV_POD_RUN_WATCH;
}

/* One watch round, resuming from the last version; JUDGE once decided, deleted or a bound passed. */
static gv_pod_run_state_t st_watch(pod_run_t *pr)
{
        const gv_pod_watch_t *w = &pr->w;
        if (w->decided || w->deleted || w->error != 0 || pr->round >= MAX_WATCH_ROUNDS)
                return GV_POD_RUN_JUDGE;
        int64_t now = gv_now_ms();
        if (now >= pr->deadline)
                return GV_POD_RUN_JUDGE;
        int64_t until = pr->deadline;
        int64_t pending_until = pr->created_at + (int64_t) pr->o.pending_timeout_s * 1000;
        if (!w->st.started && pending_until < until)
                until = pending_until;
        if (now >= until)
                return GV_POD_RUN_JUDGE;
        unsigned wt = (unsigned) ((until - now + 999) / 1000);
        pr->round++;
        pr->r = gv_k8s_pod_watch(pr->c, pr->o.namespace, pr->selector, pr->o.node_name, w->rv, wt,
                                 gv_pod_watch_event, &pr->w, pr->err);
        if (pr->r == -ETIMEDOUT) {
                gv_error_free(pr->err);
                return GV_POD_RUN_WATCH;
        }
        if (pr->r < 0) {
                if (pr->r != -EINTR)
                        gv_error_prefix(pr->err, "watch %s validation pod %s/%s", pr->kind, pr->o.namespace,
                                        pr->res.pod_name);
                return GV_POD_RUN_DELETE;
        }
        return GV_POD_RUN_WATCH;
}

static gv_pod_run_state_t st_judge(pod_run_t *pr)
{
        gv_pod_run_state_t next = gv_pod_run_next(&pr->w, pr->creation, pr->o.max_recreate,
                                                  gv_now_ms() < pr->deadline);
        if (next == GV_POD_RUN_BACKOFF)
                logf_(&pr->o, GV_LOG_WARN,
                      "%s validation pod %s/%s was deleted by someone else; re-creating it (%u of %u)", pr->kind,
                      pr->o.namespace, pr->res.pod_name, pr->creation + 1, pr->o.max_recreate);
        return next;
}

static gv_pod_run_state_t st_succeeded(pod_run_t *pr)
{
        logf_(&pr->o, GV_LOG_INFO, "%s validation pod %s/%s succeeded: %s", pr->kind, pr->o.namespace,
              pr->res.pod_name, pr->w.st.message ? pr->w.st.message : "");
        pr->r = 0;
        return GV_POD_RUN_DELETE;
}

static gv_pod_run_state_t st_failed(pod_run_t *pr)
{
        gv_pod_status_t *st = &pr->w.st;
        gv_pod_failure_t f = st->failure;
        if (st->container &&
            (f == GV_POD_FAIL_INIT_CONTAINER || f == GV_POD_FAIL_CONTAINER || f == GV_POD_FAIL_CRASH_LOOP))
                append_log_tail(pr, st->container, &st->message);
        pr->r = gv_error_set(pr->err, EIO, GV_REASON_WORKLOAD, "%s validation pod %s/%s: %s [%s]", pr->kind,
                             pr->o.namespace, pr->res.pod_name, st->message ? st->message : "failed",
                             gv_pod_failure_name(f));
        return GV_POD_RUN_DELETE;
}

static gv_pod_run_state_t st_pending(pod_run_t *pr)
{
        pr->r = gv_error_set(pr->err, ETIMEDOUT, GV_REASON_WORKLOAD,
                             "%s validation pod %s/%s: still Pending after %u s, never started by the "
                             "kubelet [%s]",
                             pr->kind, pr->o.namespace, pr->res.pod_name, pr->o.pending_timeout_s,
                             gv_pod_failure_name(GV_POD_FAIL_PENDING_TOO_LONG));
        return GV_POD_RUN_DELETE;
}

static gv_pod_run_state_t st_timed_out(pod_run_t *pr)
{
        const gv_pod_status_t *st = &pr->w.st;
        pr->r = gv_error_set(pr->err, ETIMEDOUT, GV_REASON_TIMEOUT,
                             "%s validation pod %s/%s did not finish within %u s (%s%s)", pr->kind, pr->o.namespace,
                             pr->res.pod_name, pr->o.timeout_s, st->message ? st->message : "no status",
                             st->started ? "" : ", not started");
        return GV_POD_RUN_DELETE;
}

static gv_pod_run_state_t st_broken(pod_run_t *pr)
{
        pr->r = pr->w.error;
        if (pr->err) {
                gv_error_free(pr->err);
                *pr->err = TAKE_PTR(pr->w.err);
        }
        return GV_POD_RUN_DELETE;
}

static gv_pod_run_state_t st_give_up(pod_run_t *pr)
{
        pr->r = gv_error_set(pr->err, ENOENT, GV_REASON_WORKLOAD,
                             "%s validation pod %s/%s was deleted by someone else; giving up "
                             "after %u re-creation%s",
                             pr->kind, pr->o.namespace, pr->res.pod_name, pr->o.max_recreate,
                             pr->o.max_recreate == 1 ? "" : "s");
        return GV_POD_RUN_DONE;
}

/* Delete our pod at the end (best effort, logged). */
static gv_pod_run_state_t st_delete(pod_run_t *pr)
{
        const gv_pod_run_options_t *o = &pr->o;
        const char *name = pr->res.pod_name;
        if (!name)
                return GV_POD_RUN_DONE;
        _cleanup_error_ gv_error_t *derr = NULL;
        int r = gv_k8s_pod_delete(pr->c, o->namespace, name, -1, &derr);
        if (r < 0 && r != -ENOENT)
                logf_(o, GV_LOG_WARN, "could not delete validation pod %s/%s: %s", o->namespace, name,
                      derr ? derr->msg : "unknown error");
        else if (r == 0)
                logf_(o, GV_LOG_INFO, "deleted validation pod %s/%s", o->namespace, name);
        return GV_POD_RUN_DONE;
}

typedef gv_pod_run_state_t (*state_fn)(pod_run_t *pr);

static const state_fn state_fns[GV_POD_RUN__MAX] = {
        [GV_POD_RUN_PREPARE] = st_prepare,     [GV_POD_RUN_DELETE_OLD] = st_delete_old,
        [GV_POD_RUN_BACKOFF] = st_backoff,     [GV_POD_RUN_CREATE] = st_create,
        [GV_POD_RUN_WATCH] = st_watch,         [GV_POD_RUN_JUDGE] = st_judge,
        [GV_POD_RUN_SUCCEEDED] = st_succeeded, [GV_POD_RUN_FAILED] = st_failed,
        [GV_POD_RUN_PENDING] = st_pending,     [GV_POD_RUN_TIMED_OUT] = st_timed_out,
        [GV_POD_RUN_BROKEN] = st_broken,       [GV_POD_RUN_GIVE_UP] = st_give_up,
        [GV_POD_RUN_DELETE] = st_delete,
};

int gv_pod_run(gv_k8s_client_t *c, json_object *pod, const gv_pod_run_options_t *opts, gv_pod_run_result_t *result,
               gv_error_t **err)
{
        pod_run_t pr = { .c = c, .pod = pod, .o = with_defaults(opts), .err = err };
        pr.kind = gv_workload_kind_name(pr.o.kind);
        pr.start = gv_now_ms();
        pr.deadline = pr.start + (int64_t) pr.o.timeout_s * 1000;
        gv_pod_run_state_t s = GV_POD_RUN_PREPARE;
        while (s != GV_POD_RUN_DONE)
                s = state_fns[s](&pr);
        gv_pod_watch_clear(&pr.w);
        free(pr.uid);
        free(pr.selector);
        gv_strv_freep(&pr.init_names);
        gv_strv_freep(&pr.names);
        pr.res.duration_s = (double) (gv_now_ms() - pr.start) / 1000.0;
        if (result)
                *result = pr.res;
        else
                gv_pod_run_result_clear(&pr.res);
        return pr.r < 0 ? pr.r : 0;
}
