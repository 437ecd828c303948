/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running node-level signal: a watch on the status folder (gv_dirwatch), the
 * verdict of the markers, and the Node brought in line with it through the
 * Kubernetes client (GET, then only the merge patches that are needed, each
 * with the Node's resourceVersion; an Event per transition), retried with
 * a capped, jittered exponential backoff while the API server fails.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/cleanup.h"
#include "base/cleanup-json.h"
#include "base/log.h"
#include "nodesignal.h"

#define LOG_COMPONENT "node-signal"
#define MAX_CONFLICTS 5   /* 409 answers in one sync before giving up until the next try */
#define MAX_ROUNDS 16     /* plan/patch rounds in one sync (two patches and the conflicts fit easily) */
#define SETTLE_CAP_MS 2000 /* a folder that keeps changing is synced at least this often */

struct gv_nodesignal {
        /* settings (heap copies) */
        char *condition_type, *label_key, *label_value;
        gv_nodesignal_taint_t taint;
        gv_nodesignal_spec_t spec; /* points into the fields above */
        char *node;
        char *event_ns;
        char *event_instance; /* reportingInstance: gpu-validator-<node> */
        char *pod, *pod_ns;   /* the validator's own pod, or NULL */
        unsigned progress_s;
        gv_marker_id_t last;
        char *output_dir, *boot_id_path;
        unsigned backoff_initial_ms, backoff_max_ms, resync_s, settle_ms;
        const volatile sig_atomic_t *stop;
        gv_log_fn log;
        void *log_userdata;

        /* resources */
        gv_k8s_client_t *client;
        gv_store_t *store;     /* NULL until opened, or after the folder was lost or replaced */
        gv_dirwatch_t *watch;  /* not WATCHING (no inotify, no folder): the folder is re-read every wake */

        /* state */
        gv_nodesignal_phase_t memory;     /* the phase last applied */
        gv_nodesignal_verdict_t synced;   /* the verdict the Node agrees with */
        bool have_synced;
        char *problem;                    /* last logged judge problem, to log each once */
        uint64_t rnd;                     /* xorshift state for the backoff jitter */
        uint64_t writes, failures;
};


static bool stopped(const gv_nodesignal_t *ns)
{
        return ns->stop && *ns->stop;
}

static uint32_t next_rand(gv_nodesignal_t *ns)
{
        uint64_t x = ns->rnd;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ns->rnd = x;
        return (uint32_t) (x >> 32);
}

/* ---- life cycle ---- */

void gv_nodesignal_free(gv_nodesignal_t **nsp)
{
        gv_nodesignal_t *ns = nsp ? *nsp : NULL;
        if (!ns)
                return;
        gv_k8s_client_free(ns->client);
        gv_store_close(&ns->store);
        gv_dirwatch_close(&ns->watch);
        free(ns->condition_type);
        free(ns->label_key);
        free(ns->label_value);
        gv_nodesignal_taint_clear(&ns->taint);
        free(ns->node);
        free(ns->event_ns);
        free(ns->event_instance);
        free(ns->pod);
        free(ns->pod_ns);
        free(ns->output_dir);
        free(ns->boot_id_path);
        gv_nodesignal_verdict_clear(&ns->synced);
        free(ns->problem);
        free(ns);
        *nsp = NULL;
}

static void nodesignal_freep(gv_nodesignal_t **ns)
{
        gv_nodesignal_free(ns);
}

static void k8s_config_freep(gv_k8s_config_t **cfg)
{
        gv_k8s_config_free(*cfg);
}

/* strdup of @s, or of @fallback when @s is NULL; *ok becomes false when out of memory. */
static char *dup_or(const char *s, const char *fallback, bool *ok)
{
        const char *v = s ? s : fallback;
        if (!v)
                return NULL;
        char *d = strdup(v);
        if (!d)
                *ok = false;
        return d;
}

/* The checks of gv_nodesignal_new() on @opts alone; *@last: the last component the signal follows. */
static int check_options(const gv_nodesignal_options_t *opts, gv_marker_id_t *last, gv_error_t **err)
{
        if (!opts->node_name || !*opts->node_name)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "node signal: no node name (set NODE_NAME or --node-name)");
        const gv_nodesignal_spec_t *sp = &opts->spec;
        if (!sp->condition_type && !sp->label_key && !sp->taint)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "node signal: nothing to manage (no condition, label or taint)");
        if (sp->condition_type && !gv_nodesignal_condition_type_valid(sp->condition_type))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "node signal: '%s' is not a valid condition type",
                                    sp->condition_type);
        *last = opts->last == GV_MARKER_INVALID ? GV_MARKER_PLUGIN : opts->last;
        if (*last < 0 || *last >= GV_MARKER__MAX || *last == GV_MARKER_HOST_DRIVER)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "node signal: bad last component");
        return 0;
}

int gv_nodesignal_new(const gv_nodesignal_options_t *opts, gv_k8s_config_t *cfg, gv_nodesignal_t **out,
                      gv_error_t **err)
{
        __attribute__((cleanup(k8s_config_freep))) gv_k8s_config_t *kc = cfg;
        gv_marker_id_t last = GV_MARKER_PLUGIN;
        int r = check_options(opts, &last, err);
        if (r < 0)
                return r;
        const gv_nodesignal_spec_t *sp = &opts->spec;

        __attribute__((cleanup(nodesignal_freep))) gv_nodesignal_t *ns = calloc(1, sizeof(*ns));
        if (!ns)
                return gv_error_oom(err);
        gv_nodesignal_verdict_clear(&ns->synced);
        bool ok = true;
        ns->condition_type = dup_or(sp->condition_type, NULL, &ok);
        ns->label_key = dup_or(sp->label_key, NULL, &ok);
        ns->label_value = sp->label_key ? dup_or(sp->label_value, "", &ok) : NULL;
        if (sp->taint) {
                ns->taint.key = dup_or(sp->taint->key, NULL, &ok);
                ns->taint.value = dup_or(sp->taint->value, NULL, &ok);
                ns->taint.effect = dup_or(sp->taint->effect, NULL, &ok);
                if (!ns->taint.key || !ns->taint.effect)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "node signal: taint without key or effect");
        }
        ns->node = dup_or(opts->node_name, NULL, &ok);
        const char *evns = opts->event_namespace && *opts->event_namespace ? opts->event_namespace : "default";
        if (strcmp(evns, "default") != 0 && strcmp(evns, "kube-system") != 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "node signal: Events about a Node go to namespace default (or kube-system); "
                                    "kube-apiserver rejects them in '%s'", evns);
        ns->event_ns = dup_or(evns, NULL, &ok);
        if (asprintf(&ns->event_instance, GV_NODESIGNAL_EVENT_SOURCE "-%s", opts->node_name) < 0) {
                ns->event_instance = NULL;
                ok = false;
        }
        if (opts->pod_name && *opts->pod_name) {
                ns->pod = dup_or(opts->pod_name, NULL, &ok);
                ns->pod_ns = dup_or(opts->pod_namespace && *opts->pod_namespace ? opts->pod_namespace
                                                                                 : kc ? kc->namespace : NULL,
                                    "default", &ok);
        }
        ns->progress_s = opts->progress_s ? opts->progress_s : 5;
        ns->output_dir = dup_or(opts->output_dir, GV_DEFAULT_OUTPUT_DIR, &ok);
        ns->boot_id_path = dup_or(opts->boot_id_path, GV_DEFAULT_BOOT_ID_PATH, &ok);
        if (!ok)
                return gv_error_oom(err);
        ns->spec = (gv_nodesignal_spec_t) {
                .condition_type = ns->condition_type,
                .label_key = ns->label_key,
                .label_value = ns->label_value,
                .taint = sp->taint ? &ns->taint : NULL,
        };
        ns->last = last;
        ns->backoff_initial_ms = opts->backoff_initial_ms ? opts->backoff_initial_ms : 1000;
        ns->backoff_max_ms = opts->backoff_max_ms ? opts->backoff_max_ms : 30000;
        if (ns->backoff_max_ms < ns->backoff_initial_ms)
                ns->backoff_max_ms = ns->backoff_initial_ms;
        ns->resync_s = opts->resync_s ? opts->resync_s : 300;
        ns->settle_ms = opts->settle_ms ? opts->settle_ms : 100;
        ns->stop = opts->stop;
        ns->log = opts->log;
        ns->log_userdata = opts->log_userdata;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ns->rnd = ((uint64_t) ts.tv_nsec << 20) ^ (uint64_t) ts.tv_sec ^ ((uint64_t) getpid() << 40) ^ 0x9e3779b97f4a7c15u;

        unsigned timeout = opts->request_timeout_s ? opts->request_timeout_s : 15;
        gv_k8s_options_t ko = {
                .timeout_s = timeout,
                .connect_timeout_s = timeout < 5 ? timeout : 5,
                .max_attempts = 3,
                .max_retry_s = 10,
                .backoff_initial_ms = 250,
                .backoff_max_ms = 2000,
                .stop = opts->stop,
                .log = opts->log,
                .log_userdata = opts->log_userdata,
                .log_component = LOG_COMPONENT,
        };
        r = gv_k8s_client_new(TAKE_PTR(kc), &ko, &ns->client, err);
        if (r < 0)
                return gv_error_prefix(err, "node signal");

        gv_dirwatch_options_t wo = { .markers_only = true };
        r = gv_dirwatch_open(ns->output_dir, &wo, &ns->watch, err);
        if (r < 0)
                return gv_error_prefix(err, "node signal");
        if (gv_dirwatch_state(ns->watch) == GV_DIRWATCH_POLLING)
                gv_logf(ns->log, ns->log_userdata, GV_LOG_WARN, LOG_COMPONENT, "io",
                        "inotify unavailable (%s): the status folder is re-read every second",
                        strerror(gv_dirwatch_error(ns->watch)->errnum));
        *out = TAKE_PTR(ns);
        return 0;
}

uint64_t gv_nodesignal_writes(const gv_nodesignal_t *ns)
{
        return ns->writes;
}

uint64_t gv_nodesignal_failures(const gv_nodesignal_t *ns)
{
        return ns->failures;
}

/* ---- status folder ---- */

static int judge(gv_nodesignal_t *ns, gv_nodesignal_verdict_t *v, gv_error_t **err)
{
        if (!ns->store) {
                gv_store_options_t so = {
                        .dir = ns->output_dir,
                        .boot_id_path = ns->boot_id_path,
                        .allow_missing = true,
                        .read_only = true,
                };
                int r = gv_store_open(&so, &ns->store, err);
                if (r < 0)
                        return gv_error_prefix(err, "status folder");
        }
        return gv_nodesignal_judge(ns->store, ns->last, v, err);
}

/* ---- sync ---- */

static void now_rfc3339(char out[32])
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What a sync changes, as judged on the Node before its first write. */
typedef struct transition {
        gv_nodesignal_phase_t before, after;
        const char *ev_type, *ev_reason; /* static strings, or NULL */
        char *ev_msg;                    /* heap, or NULL */
        bool wrote;
} transition_t;

static void transition_clear(transition_t *t)
{
        free(t->ev_msg);
}

/* Read the Node again into *node, releasing the copy held there.  0, or negative errno. */
static int read_node(gv_nodesignal_t *ns, json_object **node, gv_error_t **err)
{
        json_object_put(*node);
        *node = NULL;
        int r = gv_k8s_node_get(ns->client, ns->node, node, err);
        return r < 0 ? gv_error_prefix(err, "read Node %s", ns->node) : 0;
}

/*
 * One plan and patch round on *node (replaced by the Node after the patch).
 * 1 when the Node is in line (nothing to patch), 0 after a patch or a
 * conflict, negative errno.
 */
static int patch_round(gv_nodesignal_t *ns, const gv_nodesignal_verdict_t *v, json_object **node, transition_t *t,
                       unsigned *conflicts, gv_error_t **err)
{
        char now[32];
        now_rfc3339(now);
        gv_nodesignal_plan_t p;
        int r = gv_nodesignal_plan(&ns->spec, v, *node, ns->memory, now, &p, err);
        if (r < 0)
                return gv_error_prefix(err, "Node %s", ns->node);
        if (!t->wrote) { /* the transition is judged on the Node before our first write */
                t->before = p.before;
                t->after = p.after;
                t->ev_type = p.event_type;
                t->ev_reason = p.event_reason;
                free(t->ev_msg);
                t->ev_msg = TAKE_PTR(p.event_message);
        }
        if (!p.status_patch && !p.node_patch) {
                gv_nodesignal_plan_clear(&p);
                return 1;
        }
        /*
         * Gate first: on success the condition and label go before the
         * taint is lifted; on failure the taint goes on before the rest.
         */
        bool status = p.after == GV_NODESIGNAL_VALIDATED ? p.status_patch != NULL : p.node_patch == NULL;
        json_object *answer = NULL;
        r = gv_k8s_node_patch(ns->client, ns->node, status, status ? p.status_patch : p.node_patch, &answer, err);
        gv_nodesignal_plan_clear(&p);
        if (r == -EBUSY && ++*conflicts <= MAX_CONFLICTS) {
                gv_logf(ns->log, ns->log_userdata, GV_LOG_DEBUG, LOG_COMPONENT, NULL,
                        "Node %s changed meanwhile (409 Conflict); reading it again", ns->node);
                gv_error_free(err);
                return read_node(ns, node, err);
        }
        if (r < 0)
                return gv_error_prefix(err, "patch Node %s%s", ns->node, status ? " status" : "");
        t->wrote = true;
        if (!answer)
                return read_node(ns, node, err);
        json_object_put(*node);
        *node = answer;
        return 0;
}

/* Log a written transition and record its Event on @node (best effort: a failure is logged). */
static void announce(gv_nodesignal_t *ns, json_object *node, const transition_t *t)
{
        const char *cond = ns->spec.condition_type;
        gv_logf(ns->log, ns->log_userdata, t->after == GV_NODESIGNAL_VALIDATED ? GV_LOG_INFO : GV_LOG_WARN,
                LOG_COMPONENT, NULL, "Node %s: %s (was %s)%s%s%s", ns->node, gv_nodesignal_phase_name(t->after),
                gv_nodesignal_phase_name(t->before), cond ? "; condition " : "", cond ? cond : "",
                cond ? (t->after == GV_NODESIGNAL_VALIDATED ? "=True" : "=False") : "");
        if (!t->ev_reason || !t->ev_msg)
                return;
        if (!json_object_object_get_ex(node, "kind", NULL))
                json_object_object_add(node, "kind", json_object_new_string("Node"));
        if (!json_object_object_get_ex(node, "apiVersion", NULL))
                json_object_object_add(node, "apiVersion", json_object_new_string("v1"));
        _cleanup_error_ gv_error_t *e = NULL;
        gv_k8s_event_t event = { .type = t->ev_type, .reason = t->ev_reason, .message = t->ev_msg,
                                 .action = GV_NODESIGNAL_EVENT_ACTION, .component = GV_NODESIGNAL_EVENT_SOURCE,
                                 .instance = ns->event_instance };
        if (gv_k8s_event_create(ns->client, ns->event_ns, node, &event, &e) < 0)
                gv_logf(ns->log, ns->log_userdata, GV_LOG_WARN, LOG_COMPONENT, gv_reason_name(e->reason),
                        "event %s on Node %s not recorded: %s", t->ev_reason, ns->node, e->msg);
        else
                gv_logf(ns->log, ns->log_userdata, GV_LOG_INFO, LOG_COMPONENT, NULL, "event %s on Node %s: %s",
                        t->ev_reason, ns->node, t->ev_msg);
}

/* Bring the Node in line with @v.  1: nothing written; 0: written; negative errno. */
static int apply(gv_nodesignal_t *ns, const gv_nodesignal_verdict_t *v, gv_error_t **err)
{
        _cleanup_json_ json_object *node = NULL;
        int r = read_node(ns, &node, err);
        if (r < 0)
                return r;
        _cleanup_(transition_clear) transition_t t = { .before = GV_NODESIGNAL_UNKNOWN,
                                                       .after = GV_NODESIGNAL_UNKNOWN };
        unsigned conflicts = 0;
        for (unsigned round = 0;; round++) {
                if (round >= MAX_ROUNDS)
                        return gv_error_set(err, EAGAIN, GV_REASON_KUBERNETES,
                                            "Node %s: still differs after %u rounds of patches", ns->node, round);
                r = patch_round(ns, v, &node, &t, &conflicts, err);
                if (r < 0)
                        return r;
                if (r == 1)
                        break;
        }
        ns->memory = t.after;
        if (!t.wrote)
                return 1;
        ns->writes++;
        announce(ns, node, &t);
        return 0;
}

/* While not validated: what the validator's own pod says about the init containers (best effort). */
static void read_progress(gv_nodesignal_t *ns, gv_nodesignal_verdict_t *v)
{
        if (!ns->pod || v->validated)
                return;
        _cleanup_json_ json_object *pod = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_k8s_pod_get(ns->client, ns->pod_ns, ns->pod, &pod, &e) < 0) {
                gv_logf(ns->log, ns->log_userdata, GV_LOG_DEBUG, LOG_COMPONENT, gv_reason_name(e->reason),
                        "pod %s/%s not read (progress unknown): %s", ns->pod_ns, ns->pod, e->msg);
                return;
        }
        if (gv_nodesignal_pod_progress(pod, v) < 0)
                gv_logf(ns->log, ns->log_userdata, GV_LOG_DEBUG, LOG_COMPONENT, "internal",
                        "pod %s/%s: out of memory reading its progress", ns->pod_ns, ns->pod);
}

int gv_nodesignal_sync(gv_nodesignal_t *ns, gv_error_t **err)
{
        gv_nodesignal_verdict_t v;
        int r = judge(ns, &v, err);
        if (r < 0)
                return r;
        read_progress(ns, &v);
        r = apply(ns, &v, err);
        if (r < 0) {
                gv_nodesignal_verdict_clear(&v);
                return r;
        }
        gv_nodesignal_verdict_clear(&ns->synced);
        ns->synced = v;
        ns->have_synced = true;
        return r;
}

/* ---- loop ---- */

static void set_problem(gv_nodesignal_t *ns, const gv_error_t *e)
{
        if (!e) {
                if (ns->problem)
                        gv_logf(ns->log, ns->log_userdata, GV_LOG_INFO, LOG_COMPONENT, NULL,
                                "status folder readable again");
                free(ns->problem);
                ns->problem = NULL;
                return;
        }
        if (ns->problem && strcmp(ns->problem, e->msg) == 0)
                return;
        free(ns->problem);
        ns->problem = strdup(e->msg);
        gv_logf(ns->log, ns->log_userdata, GV_LOG_WARN, LOG_COMPONENT, gv_reason_name(e->reason), "%s", e->msg);
}

/* The run loop's schedule: times are gv_now_ms() values. */
typedef struct loop {
        uint64_t now;
        bool need;              /* the Node must be synced (at or after due) */
        bool dirty;             /* the markers must be judged again */
        uint64_t due, retry_at, pending_since, next_resync;
        uint64_t next_progress; /* while validating with a pod: its next read (0: none) */
        unsigned failed_in_row;
} loop_t;

/* Judge the markers again when dirty; a verdict the Node does not agree with schedules a sync after settle_ms. */
static void look(gv_nodesignal_t *ns, loop_t *l)
{
        if (!l->dirty)
                return;
        l->dirty = false;
        gv_nodesignal_verdict_t v;
        _cleanup_error_ gv_error_t *e = NULL;
        if (judge(ns, &v, &e) < 0) {
                set_problem(ns, e);
                gv_store_close(&ns->store);
                return;
        }
        set_problem(ns, NULL);
        if (!ns->have_synced || !gv_nodesignal_verdict_equal(&v, &ns->synced)) {
                if (!l->need)
                        l->pending_since = l->now;
                l->need = true;
                uint64_t settle = l->now + ns->settle_ms;
                if (settle > l->pending_since + SETTLE_CAP_MS)
                        settle = l->pending_since + SETTLE_CAP_MS;
                l->due = settle > l->retry_at ? settle : l->retry_at;
        }
        gv_nodesignal_verdict_clear(&v);
}

/* Sync the Node when due; on failure schedule the next try with backoff.  False when stopped meanwhile. */
static bool sync_when_due(gv_nodesignal_t *ns, loop_t *l)
{
        if (!l->need || l->now < l->due)
                return true;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_nodesignal_sync(ns, &e);
        if (r >= 0) {
                if (l->failed_in_row)
                        gv_logf(ns->log, ns->log_userdata, GV_LOG_INFO, LOG_COMPONENT, NULL,
                                "Node %s in line with the markers again after %u failed tries", ns->node,
                                l->failed_in_row);
                l->need = false;
                l->failed_in_row = 0;
                l->retry_at = (uint64_t) gv_now_ms();
                /* Validating: the pod's progress (init containers) changes no marker; read it again soon. */
                l->next_progress = ns->pod && !ns->synced.validated
                                           ? l->retry_at + (uint64_t) ns->progress_s * 1000u
                                           : 0;
        } else if (r == -EINTR && stopped(ns)) {
                return false;
        } else {
                ns->failures++;
                l->failed_in_row++;
                unsigned delay = gv_k8s_backoff_ms(l->failed_in_row, ns->backoff_initial_ms, ns->backoff_max_ms,
                                                   next_rand(ns));
                l->retry_at = l->due = (uint64_t) gv_now_ms() + delay;
                gv_logf(ns->log, ns->log_userdata, GV_LOG_WARN, LOG_COMPONENT, e ? gv_reason_name(e->reason) : "",
                        "%s; trying again in %u ms (failure %u in a row)", e ? e->msg : "sync failed", delay,
                        l->failed_in_row);
        }
        l->now = (uint64_t) gv_now_ms();
        return true;
}

/*
 * Whether the markers or the validator's pod say something else than what the
 * Node was last brought in line with; reads the pod only, not the Node.
 */
static bool progress_changed(gv_nodesignal_t *ns)
{
        if (!ns->have_synced)
                return true;
        gv_nodesignal_verdict_t v;
        _cleanup_error_ gv_error_t *e = NULL;
        if (judge(ns, &v, &e) < 0)
                return true; /* the sync says why */
        read_progress(ns, &v);
        bool same = gv_nodesignal_verdict_equal(&v, &ns->synced) && gv_nodesignal_progress_equal(&v, &ns->synced);
        gv_nodesignal_verdict_clear(&v);
        return !same;
}

/* Read the pod's progress when due; a change schedules a sync now. */
static void progress_when_due(gv_nodesignal_t *ns, loop_t *l)
{
        if (!l->next_progress || l->now < l->next_progress || l->need)
                return;
        if (progress_changed(ns)) {
                l->need = true;
                l->pending_since = l->now;
                l->due = l->now > l->retry_at ? l->now : l->retry_at;
                l->next_progress = 0; /* the sync sets it again */
                return;
        }
        l->next_progress = (uint64_t) gv_now_ms() + (uint64_t) ns->progress_s * 1000u;
}

/*
 * Wait for the folder watch until the next sync is due (at most a second,
 * which bounds the delay of a stop request).  0, or negative errno.
 */
static int wait_for_change(gv_nodesignal_t *ns, loop_t *l, gv_error_t **err)
{
        int timeout = 1000;
        if (l->need && l->due > l->now && l->due - l->now < (uint64_t) timeout)
                timeout = (int) (l->due - l->now);
        else if (l->need && l->due <= l->now)
                timeout = 0;
        int r = gv_dirwatch_next(ns->watch, timeout, ns->stop, err);
        if (r == -EINTR) {
                gv_error_free(err);
                return 0; /* the loop looks at the stop flag */
        }
        if (r < 0)
                return gv_error_prefix(err, "node signal");
        if (r == GV_DIRWATCH_REARMED)
                gv_store_close(&ns->store); /* open the folder now at the path */
        if (r != GV_DIRWATCH_TIMEOUT)
                l->dirty = true;
        return 0;
}

int gv_nodesignal_run(gv_nodesignal_t *ns, gv_error_t **err)
{
        uint64_t now = (uint64_t) gv_now_ms();
        loop_t l = { .now = now, .need = true, .dirty = true, /* converge at start */
                     .due = now, .retry_at = now, .pending_since = now,
                     .next_resync = now + (uint64_t) ns->resync_s * 1000u };
        while (!stopped(ns)) {
                l.now = (uint64_t) gv_now_ms();
                if (gv_dirwatch_state(ns->watch) != GV_DIRWATCH_WATCHING)
                        l.dirty = true; /* no watch: look every wake */
                look(ns, &l);
                if (l.now >= l.next_resync) {
                        l.next_resync = l.now + (uint64_t) ns->resync_s * 1000u;
                        if (!l.need)
                                l.due = l.now > l.retry_at ? l.now : l.retry_at;
                        l.need = true;
                }
                progress_when_due(ns, &l);
                if (!sync_when_due(ns, &l))
                        break;
                int r = wait_for_change(ns, &l, err);
                if (r < 0)
                        return r;
        }
        return 0;
}
