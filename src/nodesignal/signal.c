/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running node-level signal: an inotify watch on the status folder, the
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
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/cleanup.h"
#include "base/log.h"
#include "nodesignal.h"

#define LOG_COMPONENT "node-signal"
#define MAX_CONFLICTS 5   /* 409 answers in one sync before giving up until the next try */
#define MAX_ROUNDS 16     /* plan/patch rounds in one sync (two patches and the conflicts fit easily) */
#define SETTLE_CAP_MS 2000 /* a folder that keeps changing is synced at least this often */

#define WATCH_MASK                                                                                      \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

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
        gv_store_t *store; /* NULL until opened, or after the folder was lost */
        int inotify_fd;    /* -1 when inotify is unavailable: the folder is re-read every second */
        int wd;

        /* state */
        gv_nodesignal_phase_t memory;     /* the phase last applied */
        gv_nodesignal_verdict_t synced;   /* the verdict the Node agrees with */
        bool have_synced;
        char *problem;                    /* last logged judge problem, to log each once */
        uint64_t rnd;                     /* xorshift state for the backoff jitter */
        uint64_t writes, failures;
};

/* Log through the caller's gv_log_fn (may be NULL) as LOG_COMPONENT; @reason NULL is "". */
#define logf_(ns, level, reason, ...) \
        gv_logf((ns)->log, (ns)->log_userdata, (level), LOG_COMPONENT, (reason), __VA_ARGS__)

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
        if (ns->inotify_fd >= 0)
                close(ns->inotify_fd);
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

int gv_nodesignal_new(const gv_nodesignal_options_t *opts, gv_k8s_config_t *cfg, gv_nodesignal_t **out,
                      gv_error_t **err)
{
        __attribute__((cleanup(k8s_config_freep))) gv_k8s_config_t *kc = cfg;
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
        gv_marker_id_t last = opts->last == GV_MARKER_INVALID ? GV_MARKER_PLUGIN : opts->last;
        if (last < 0 || last >= GV_MARKER__MAX || last == GV_MARKER_HOST_DRIVER)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "node signal: bad last component");

        __attribute__((cleanup(nodesignal_freep))) gv_nodesignal_t *ns = calloc(1, sizeof(*ns));
        if (!ns)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        ns->inotify_fd = -1;
        ns->wd = -1;
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
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
        int r = gv_k8s_client_new(TAKE_PTR(kc), &ko, &ns->client, err);
        if (r < 0)
                return gv_error_prefix(err, "node signal");

        ns->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ns->inotify_fd < 0)
                logf_(ns, GV_LOG_WARN, "io", "inotify unavailable (%s): the status folder is re-read every second",
                      strerror(errno));
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

/* Watch the folder when it exists and is not watched yet; true when a watch was just added. */
static bool ensure_watch(gv_nodesignal_t *ns)
{
        if (ns->inotify_fd < 0 || ns->wd >= 0)
                return false;
        int wd = inotify_add_watch(ns->inotify_fd, ns->output_dir, WATCH_MASK);
        if (wd < 0)
                return false;
        ns->wd = wd;
        gv_store_close(&ns->store); /* re-open on the folder now there */
        return true;
}

/* Read pending events; true when one may change a marker's state. */
static bool drain(gv_nodesignal_t *ns)
{
        bool dirty = false;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (int rounds = 0; rounds < 1024; rounds++) {
                ssize_t n = read(ns->inotify_fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;
                        p += sizeof(*ev) + ev->len;
                        if (ev->len == 0 || (ev->mask & IN_Q_OVERFLOW) || gv_marker_by_file(ev->name) != GV_MARKER_INVALID)
                                dirty = true;
                        if (ev->wd == ns->wd && (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))) {
                                if (!(ev->mask & IN_IGNORED))
                                        inotify_rm_watch(ns->inotify_fd, ns->wd);
                                ns->wd = -1;
                                gv_store_close(&ns->store);
                                dirty = true;
                        }
                }
        }
        return dirty;
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

static void json_putp(json_object **o)
{
        if (*o)
                json_object_put(*o);
}

/* Bring the Node in line with @v.  1: nothing written; 0: written. */
static int apply(gv_nodesignal_t *ns, const gv_nodesignal_verdict_t *v, gv_error_t **err)
{
        __attribute__((cleanup(json_putp))) json_object *node = NULL;
        int r = gv_k8s_node_get(ns->client, ns->node, &node, err);
        if (r < 0)
                return gv_error_prefix(err, "read Node %s", ns->node);

        bool wrote = false;
        unsigned conflicts = 0;
        const char *ev_type = NULL, *ev_reason = NULL;
        _cleanup_free_ char *ev_msg = NULL;
        gv_nodesignal_phase_t before = GV_NODESIGNAL_UNKNOWN, after = GV_NODESIGNAL_UNKNOWN;
        for (unsigned round = 0;; round++) {
                if (round >= MAX_ROUNDS)
                        return gv_error_set(err, EAGAIN, GV_REASON_KUBERNETES,
                                            "Node %s: still differs after %u rounds of patches", ns->node, round);
                char now[32];
                now_rfc3339(now);
                gv_nodesignal_plan_t p;
                r = gv_nodesignal_plan(&ns->spec, v, node, ns->memory, now, &p, err);
                if (r < 0)
                        return gv_error_prefix(err, "Node %s", ns->node);
                if (!wrote) { /* the transition is judged on the Node before our first write */
                        before = p.before;
                        after = p.after;
                        ev_type = p.event_type;
                        ev_reason = p.event_reason;
                        free(ev_msg);
                        ev_msg = TAKE_PTR(p.event_message);
                }
                if (!p.status_patch && !p.node_patch) {
                        gv_nodesignal_plan_clear(&p);
                        break;
                }
                /*
                 * Gate first: on success the condition and label go before the
                 * taint is lifted; on failure the taint goes on before the rest.
                 */
                bool status = p.after == GV_NODESIGNAL_VALIDATED ? p.status_patch != NULL : p.node_patch == NULL;
                json_object *patch = status ? p.status_patch : p.node_patch;
                json_object *answer = NULL;
                r = gv_k8s_node_patch(ns->client, ns->node, status, patch, &answer, err);
                gv_nodesignal_plan_clear(&p);
                if (r == -EBUSY && ++conflicts <= MAX_CONFLICTS) {
                        logf_(ns, GV_LOG_DEBUG, NULL, "Node %s changed meanwhile (409 Conflict); reading it again",
                              ns->node);
                        gv_error_free(err);
                        json_object_put(node);
                        node = NULL;
                        r = gv_k8s_node_get(ns->client, ns->node, &node, err);
                        if (r < 0)
                                return gv_error_prefix(err, "read Node %s", ns->node);
                        continue;
                }
                if (r < 0)
                        return gv_error_prefix(err, "patch Node %s%s", ns->node, status ? " status" : "");
                wrote = true;
                if (answer) {
                        json_object_put(node);
                        node = answer;
                } else {
                        json_object_put(node);
                        node = NULL;
                        r = gv_k8s_node_get(ns->client, ns->node, &node, err);
                        if (r < 0)
                                return gv_error_prefix(err, "read Node %s", ns->node);
                }
        }
        ns->memory = after;
        if (!wrote)
                return 1;
        ns->writes++;
        logf_(ns, after == GV_NODESIGNAL_VALIDATED ? GV_LOG_INFO : GV_LOG_WARN, NULL, "Node %s: %s (was %s)%s%s%s",
              ns->node, gv_nodesignal_phase_name(after), gv_nodesignal_phase_name(before),
              ns->spec.condition_type ? "; condition " : "", ns->spec.condition_type ? ns->spec.condition_type : "",
              ns->spec.condition_type ? (after == GV_NODESIGNAL_VALIDATED ? "=True" : "=False") : "");
        if (ev_reason && ev_msg) {
                if (!json_object_object_get_ex(node, "kind", NULL))
                        json_object_object_add(node, "kind", json_object_new_string("Node"));
                if (!json_object_object_get_ex(node, "apiVersion", NULL))
                        json_object_object_add(node, "apiVersion", json_object_new_string("v1"));
                _cleanup_error_ gv_error_t *e = NULL;
                gv_k8s_event_t event = { .type = ev_type, .reason = ev_reason, .message = ev_msg,
                                         .action = GV_NODESIGNAL_EVENT_ACTION, .component = GV_NODESIGNAL_EVENT_SOURCE,
                                         .instance = ns->event_instance };
                if (gv_k8s_event_create(ns->client, ns->event_ns, node, &event, &e) < 0)
                        logf_(ns, GV_LOG_WARN, gv_reason_name(e->reason), "event %s on Node %s not recorded: %s",
                              ev_reason, ns->node, e->msg);
                else
                        logf_(ns, GV_LOG_INFO, NULL, "event %s on Node %s: %s", ev_reason, ns->node, ev_msg);
        }
        return 0;
}

/* While not validated: what the validator's own pod says about the init containers (best effort). */
static void read_progress(gv_nodesignal_t *ns, gv_nodesignal_verdict_t *v)
{
        if (!ns->pod || v->validated)
                return;
        json_object *pod = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_k8s_pod_get(ns->client, ns->pod_ns, ns->pod, &pod, &e) < 0) {
                logf_(ns, GV_LOG_DEBUG, gv_reason_name(e->reason), "pod %s/%s not read (progress unknown): %s",
                      ns->pod_ns, ns->pod, e->msg);
                return;
        }
        if (gv_nodesignal_pod_progress(pod, v) < 0)
                logf_(ns, GV_LOG_DEBUG, "internal", "pod %s/%s: out of memory reading its progress", ns->pod_ns,
                      ns->pod);
        json_object_put(pod);
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
                        logf_(ns, GV_LOG_INFO, NULL, "status folder readable again");
                free(ns->problem);
                ns->problem = NULL;
                return;
        }
        if (ns->problem && strcmp(ns->problem, e->msg) == 0)
                return;
        free(ns->problem);
        ns->problem = strdup(e->msg);
        logf_(ns, GV_LOG_WARN, gv_reason_name(e->reason), "%s", e->msg);
}

/* NOLINTNEXTLINE(readability-function-cognitive-complexity): the watch loop of the node signal; to be split in the architecture refactor */
int gv_nodesignal_run(gv_nodesignal_t *ns, gv_error_t **err)
{
        uint64_t now = (uint64_t) gv_now_ms();
        bool need = true, dirty = true; /* converge at start */
        uint64_t due = now, retry_at = now, pending_since = now;
        uint64_t next_resync = now + (uint64_t) ns->resync_s * 1000u;
        unsigned failed_in_row = 0;

        while (!stopped(ns)) {
                now = (uint64_t) gv_now_ms();
                if (ensure_watch(ns))
                        dirty = true;
                if (ns->inotify_fd < 0 || ns->wd < 0)
                        dirty = true; /* no watch: look every wake */
                if (dirty) {
                        dirty = false;
                        gv_nodesignal_verdict_t v;
                        _cleanup_error_ gv_error_t *e = NULL;
                        if (judge(ns, &v, &e) < 0) {
                                set_problem(ns, e);
                                gv_store_close(&ns->store);
                        } else {
                                set_problem(ns, NULL);
                                if (!ns->have_synced || !gv_nodesignal_verdict_equal(&v, &ns->synced)) {
                                        if (!need)
                                                pending_since = now;
                                        need = true;
                                        uint64_t settle = now + ns->settle_ms;
                                        if (settle > pending_since + SETTLE_CAP_MS)
                                                settle = pending_since + SETTLE_CAP_MS;
                                        due = settle > retry_at ? settle : retry_at;
                                }
                                gv_nodesignal_verdict_clear(&v);
                        }
                }
                if (now >= next_resync) {
                        next_resync = now + (uint64_t) ns->resync_s * 1000u;
                        if (!need)
                                due = now > retry_at ? now : retry_at;
                        need = true;
                }
                if (need && now >= due) {
                        _cleanup_error_ gv_error_t *e = NULL;
                        int r = gv_nodesignal_sync(ns, &e);
                        if (r >= 0) {
                                if (failed_in_row)
                                        logf_(ns, GV_LOG_INFO, NULL, "Node %s in line with the markers again after %u failed tries",
                                              ns->node, failed_in_row);
                                need = false;
                                failed_in_row = 0;
                                retry_at = (uint64_t) gv_now_ms();
                                /* Validating: the pod's progress (init containers) changes no marker. */
                                uint64_t soon = retry_at + (uint64_t) ns->progress_s * 1000u;
                                if (ns->pod && !ns->synced.validated && soon < next_resync)
                                        next_resync = soon;
                        } else if (r == -EINTR && stopped(ns)) {
                                break;
                        } else {
                                ns->failures++;
                                failed_in_row++;
                                unsigned delay = gv_k8s_backoff_ms(failed_in_row, ns->backoff_initial_ms,
                                                                   ns->backoff_max_ms, next_rand(ns));
                                retry_at = due = (uint64_t) gv_now_ms() + delay;
                                logf_(ns, GV_LOG_WARN, e ? gv_reason_name(e->reason) : "",
                                      "%s; trying again in %u ms (failure %u in a row)",
                                      e ? e->msg : "sync failed", delay, failed_in_row);
                        }
                        now = (uint64_t) gv_now_ms();
                }

                int timeout = 1000; /* bounds the delay of a stop request */
                if (need && due > now && due - now < (uint64_t) timeout)
                        timeout = (int) (due - now);
                else if (need && due <= now)
                        timeout = 0;
                struct pollfd pfd = { .fd = ns->inotify_fd, .events = POLLIN };
                int n = poll(&pfd, ns->inotify_fd >= 0 ? 1 : 0, timeout);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return gv_error_set(err, errno, GV_REASON_INTERNAL, "node signal: poll: %s", strerror(errno));
                }
                if (n > 0 && drain(ns))
                        dirty = true;
        }
        return 0;
}
