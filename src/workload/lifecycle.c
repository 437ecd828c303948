/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validation pod lifecycle: delete old pods, create, watch, judge, re-create
 * after an external deletion, delete.  See lifecycle.h and
 * docs/workload-lifecycle.md.
 */
#include "base/clock.h"
#include "lifecycle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"

#define DEFAULT_TIMEOUT_S 300u
#define DEFAULT_PENDING_TIMEOUT_S 120u
#define DEFAULT_MAX_RESTARTS 3u
#define DEFAULT_MAX_RECREATE 3u
#define DEFAULT_RECREATE_BACKOFF_MS 1000u
#define DEFAULT_LOG_TAIL_LINES 20u
#define MAX_LOG_CHARS 4096u /* of the tail kept in a message */

/* ---------------------------------------------------------------------- */
/* small helpers                                                           */
/* ---------------------------------------------------------------------- */

static json_object *jget(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static const char *jstr(json_object *o, const char *key)
{
        json_object *v = jget(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool streq(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

static bool in_list(const char *const *list, const char *s)
{
        for (; list && *list; list++)
                if (streq(*list, s))
                        return true;
        return false;
}

/* Log through the caller's gv_log_fn (may be NULL) under o->log_component, reason "". */
#define logf_(o, level, ...) gv_logf((o)->log, (o)->log_userdata, (level), (o)->log_component, "", __VA_ARGS__)

static int oom(gv_error_t **err)
{
        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
}

/* ---------------------------------------------------------------------- */
/* classifier                                                              */
/* ---------------------------------------------------------------------- */

static const char *const failure_names[GV_POD_FAIL__MAX] = {
        [GV_POD_FAIL_NONE] = "none",
        [GV_POD_FAIL_INIT_CONTAINER] = "init-container-failed",
        [GV_POD_FAIL_CONTAINER] = "container-failed",
        [GV_POD_FAIL_ADMISSION] = "admission-error",
        [GV_POD_FAIL_IMAGE_PULL] = "image-pull-error",
        [GV_POD_FAIL_UNSCHEDULABLE] = "unschedulable",
        [GV_POD_FAIL_CRASH_LOOP] = "crash-loop",
        [GV_POD_FAIL_CREATE_CONTAINER] = "create-container-error",
        [GV_POD_FAIL_POD_FAILED] = "pod-failed",
        [GV_POD_FAIL_PENDING_TOO_LONG] = "pending-too-long",
};

const char *gv_pod_failure_name(gv_pod_failure_t f)
{
        return (unsigned) f < GV_POD_FAIL__MAX && failure_names[f] ? failure_names[f] : "unknown";
}

void gv_pod_status_clear(gv_pod_status_t *s)
{
        if (!s)
                return;
        free(s->container);
        free(s->image);
        free(s->message);
        free(s->phase);
        *s = (gv_pod_status_t) { 0 };
}

static const char *const image_pull_reasons[] = { "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                                                  "ErrImageNeverPull", "RegistryUnavailable", NULL };
static const char *const create_reasons[] = { "CreateContainerConfigError", "CreateContainerError",
                                              "RunContainerError", "PreStartHookError", "PostStartHookError", NULL };

/* The image of container @name in the pod's spec (init containers too), or NULL. */
static const char *spec_image(json_object *pod, const char *name)
{
        json_object *spec = jget(pod, "spec");
        const char *lists[] = { "initContainers", "containers" };
        for (size_t l = 0; l < GV_ARRAY_SIZE(lists); l++) {
                json_object *arr = jget(spec, lists[l]);
                if (!arr || !json_object_is_type(arr, json_type_array))
                        continue;
                size_t n = json_object_array_length(arr);
                for (size_t i = 0; i < n; i++) {
                        json_object *c = json_object_array_get_idx(arr, i);
                        if (streq(jstr(c, "name"), name))
                                return jstr(c, "image");
                }
        }
        return NULL;
}

static int64_t jint(json_object *o, const char *key, int64_t dflt)
{
        json_object *v = jget(o, key);
        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_int64(v)
                       : dflt;
}

/* Checks applied to the container statuses, in the order of the header's list. */
typedef enum check {
        CHECK_EXIT,
        CHECK_IMAGE,
        CHECK_CREATE,
        CHECK_CRASH,
} check_t;

typedef struct classify_ctx {
        json_object *pod;
        unsigned max_restarts;
        gv_pod_status_t st;
} classify_ctx_t;

static int fail_with(classify_ctx_t *cx, gv_pod_failure_t f, const char *container, bool init, int exit_code,
                     const char *image, gv_error_t **err, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static int fail_with(classify_ctx_t *cx, gv_pod_failure_t f, const char *container, bool init, int exit_code,
                     const char *image, gv_error_t **err, const char *fmt, ...)
{
        cx->st.verdict = GV_POD_FAILED;
        cx->st.failure = f;
        cx->st.init_container = init;
        cx->st.exit_code = exit_code;
        if ((container && !(cx->st.container = strdup(container))) || (image && !(cx->st.image = strdup(image))))
                return oom(err);
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&cx->st.message, fmt, ap);
        va_end(ap);
        if (n < 0) {
                cx->st.message = NULL;
                return oom(err);
        }
        return 1;
}

/* Run @check over the statuses in @list (of the containers named in @names). 1: failure found. */
/* NOLINTNEXTLINE(readability-function-cognitive-complexity): one branch per pod and container state; to be split in the architecture refactor */
static int check_statuses(classify_ctx_t *cx, json_object *list, const char *const *names, bool init, check_t check,
                          gv_error_t **err)
{
        if (!list || !json_object_is_type(list, json_type_array))
                return 0;
        const char *what = init ? "init container" : "container";
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *cs = json_object_array_get_idx(list, i);
                const char *name = jstr(cs, "name");
                if (!name || !in_list(names, name))
                        continue; /* injected sidecar (FR09) or garbage */
                json_object *state = jget(cs, "state");
                json_object *waiting = jget(state, "waiting");
                const char *wreason = jstr(waiting, "reason");
                const char *wmsg = jstr(waiting, "message");
                const char *image = jstr(cs, "image");
                if (!image || !*image)
                        image = spec_image(cx->pod, name);
                switch (check) {
                case CHECK_EXIT: {
                        json_object *term = jget(state, "terminated");
                        bool last = false;
                        if (!term || jint(term, "exitCode", 0) == 0) {
                                term = jget(jget(cs, "lastState"), "terminated");
                                last = true;
                        }
                        if (!term)
                                break;
                        int64_t code = jint(term, "exitCode", 0);
                        if (code == 0)
                                break;
                        const char *treason = jstr(term, "reason");
                        const char *tmsg = jstr(term, "message");
                        return fail_with(cx, init ? GV_POD_FAIL_INIT_CONTAINER : GV_POD_FAIL_CONTAINER, name, init,
                                         (int) code, image, err, "%s %s exited with code %" PRId64 "%s%s%s%s%s%s",
                                         what, name, code, treason ? " (" : "", treason ? treason : "",
                                         treason ? ")" : "", tmsg ? ": " : "", tmsg ? tmsg : "",
                                         last && wreason ? (streq(wreason, "CrashLoopBackOff")
                                                                    ? "; now in CrashLoopBackOff"
                                                                    : "; restarting")
                                                         : "");
                }
                case CHECK_IMAGE:
                        if (in_list(image_pull_reasons, wreason))
                                return fail_with(cx, GV_POD_FAIL_IMAGE_PULL, name, init, 0, image, err,
                                                 "%s %s cannot pull image %s: %s%s%s", what, name,
                                                 image ? image : "(unknown)", wreason, wmsg ? ": " : "",
                                                 wmsg ? wmsg : "");
                        break;
                case CHECK_CREATE:
                        if (in_list(create_reasons, wreason))
                                return fail_with(cx, GV_POD_FAIL_CREATE_CONTAINER, name, init, 0, image, err,
                                                 "%s %s cannot be started: %s%s%s", what, name, wreason,
                                                 wmsg ? ": " : "", wmsg ? wmsg : "");
                        break;
                case CHECK_CRASH: {
                        int64_t restarts = jint(cs, "restartCount", 0);
                        if (streq(wreason, "CrashLoopBackOff") || restarts > (int64_t) cx->max_restarts)
                                return fail_with(cx, GV_POD_FAIL_CRASH_LOOP, name, init, 0, image, err,
                                                 "%s %s is crash-looping (%s, restarted %" PRId64 " times, bound %u)",
                                                 what, name, wreason ? wreason : "restarting", restarts,
                                                 cx->max_restarts);
                        break;
                }
                }
        }
        return 0;
}

/* Whether container @name has a status with state.terminated.exitCode 0 in @list. */
static bool terminated_ok(json_object *list, const char *name)
{
        if (!list || !json_object_is_type(list, json_type_array))
                return false;
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *cs = json_object_array_get_idx(list, i);
                if (!streq(jstr(cs, "name"), name))
                        continue;
                json_object *term = jget(jget(cs, "state"), "terminated");
                return term && jget(term, "exitCode") && jint(term, "exitCode", 1) == 0;
        }
        return false;
}

static bool any_started(json_object *list)
{
        if (!list || !json_object_is_type(list, json_type_array))
                return false;
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *cs = json_object_array_get_idx(list, i);
                json_object *state = jget(cs, "state");
                const char *wreason = jstr(jget(state, "waiting"), "reason");
                if (jget(state, "running") || jget(state, "terminated") || jget(jget(cs, "lastState"), "terminated") ||
                    streq(wreason, "ContainerCreating") || streq(wreason, "PodInitializing") ||
                    in_list(image_pull_reasons, wreason) || in_list(create_reasons, wreason))
                        return true;
        }
        return false;
}

int gv_pod_classify(json_object *pod, const char *const *init_names, const char *const *names,
                    unsigned max_restarts, gv_pod_status_t *out, gv_error_t **err)
{
        if (!pod || !json_object_is_type(pod, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_KUBERNETES, "pod status: not a Pod object");
        classify_ctx_t cx = { .pod = pod, .max_restarts = max_restarts };
        json_object *status = jget(pod, "status");
        const char *phase = jstr(status, "phase");
        const char *reason = jstr(status, "reason");
        const char *message = jstr(status, "message");
        json_object *init_st = jget(status, "initContainerStatuses");
        json_object *main_st = jget(status, "containerStatuses");
        if (!(cx.st.phase = strdup(phase ? phase : "")))
                return oom(err);
        cx.st.started = any_started(init_st) || any_started(main_st) || streq(phase, "Running") ||
                        streq(phase, "Succeeded");
        int r = 0;

        if (streq(reason, "UnexpectedAdmissionError")) {
                r = fail_with(&cx, GV_POD_FAIL_ADMISSION, NULL, false, 0, NULL, err,
                              "the kubelet rejected the pod (UnexpectedAdmissionError: %s): no free GPU on the node "
                              "- every device is already allocated to other pods",
                              message ? message : "no message");
                goto done;
        }
        static const check_t checks[] = { CHECK_EXIT, CHECK_IMAGE, CHECK_CREATE, CHECK_CRASH };
        for (size_t i = 0; i < GV_ARRAY_SIZE(checks); i++) {
                if ((r = check_statuses(&cx, init_st, init_names, true, checks[i], err)) != 0 ||
                    (r = check_statuses(&cx, main_st, names, false, checks[i], err)) != 0)
                        goto done;
        }
        json_object *conds = jget(status, "conditions");
        size_t nc = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
        for (size_t i = 0; i < nc; i++) {
                json_object *c = json_object_array_get_idx(conds, i);
                if (streq(jstr(c, "type"), "PodScheduled") && streq(jstr(c, "status"), "False") &&
                    streq(jstr(c, "reason"), "Unschedulable")) {
                        const char *m = jstr(c, "message");
                        r = fail_with(&cx, GV_POD_FAIL_UNSCHEDULABLE, NULL, false, 0, NULL, err,
                                      "the pod cannot be scheduled (Unschedulable: %s)", m ? m : "no message");
                        goto done;
                }
        }

        bool all_ok = names && *names;
        for (const char *const *n = init_names; all_ok && n && *n; n++)
                all_ok = terminated_ok(init_st, *n);
        for (const char *const *n = names; all_ok && n && *n; n++)
                all_ok = terminated_ok(main_st, *n);
        if (all_ok || streq(phase, "Succeeded")) {
                cx.st.verdict = GV_POD_SUCCEEDED;
                if (!(cx.st.message = strdup(all_ok ? "every validation container exited with code 0"
                                                    : "pod phase Succeeded")))
                        r = oom(err);
                goto done;
        }
        if (streq(phase, "Failed")) {
                r = fail_with(&cx, GV_POD_FAIL_POD_FAILED, NULL, false, 0, NULL, err, "the pod failed (%s%s%s)",
                              reason ? reason : "no reason given", message ? ": " : "", message ? message : "");
                goto done;
        }
        cx.st.verdict = GV_POD_WAITING;
        if (asprintf(&cx.st.message, "phase %s", phase ? phase : "unknown") < 0) {
                cx.st.message = NULL;
                r = oom(err);
        }
done:
        if (r < 0) {
                gv_pod_status_clear(&cx.st);
                return r;
        }
        *out = cx.st;
        return 0;
}

/* ---------------------------------------------------------------------- */
/* node helpers                                                            */
/* ---------------------------------------------------------------------- */

bool gv_node_device_plugin_disabled(json_object *node)
{
        return streq(jstr(jget(jget(node, "metadata"), "labels"), GV_DEVICE_PLUGIN_DEPLOY_LABEL), "false");
}

json_object *gv_node_gpu_resources(json_object *node)
{
        json_object *status = jget(node, "status");
        json_object *res = jget(status, "allocatable");
        if (!res || !json_object_is_type(res, json_type_object))
                res = jget(status, "capacity");
        return res && json_object_is_type(res, json_type_object) ? res : NULL;
}

static bool is_gpu_resource(const char *key)
{
        return strncmp(key, "nvidia.com/gpu", 14) == 0 || strncmp(key, "nvidia.com/mig-", 15) == 0;
}

/* A quantity that is a plain non-negative integer ("8", 8); else 0. */
static unsigned long quantity(json_object *v)
{
        if (json_object_is_type(v, json_type_int)) {
                int64_t q = json_object_get_int64(v);
                return q > 0 ? (unsigned long) q : 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return 0;
        const char *s = json_object_get_string(v);
        if (!*s || strlen(s) > 15)
                return 0;
        unsigned long q = 0;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return 0;
                q = q * 10 + (unsigned long) (*s - '0');
        }
        return q;
}

unsigned long gv_node_gpu_devices(json_object *node)
{
        json_object *res = gv_node_gpu_resources(node);
        if (!res)
                return 0;
        unsigned long total = 0;
        json_object_object_foreach(res, key, val)
        {
                if (is_gpu_resource(key))
                        total += quantity(val);
        }
        return total;
}

/* ---------------------------------------------------------------------- */
/* deleting earlier pods                                                   */
/* ---------------------------------------------------------------------- */

typedef struct gone_ctx {
        char **names;  /* pods still to disappear; removed entries freed and set to "" */
        size_t n, left;
} gone_ctx_t;

static bool gone_cb(void *userdata, const gv_k8s_watch_event_t *ev)
{
        gone_ctx_t *g = userdata;
        if (ev->type != GV_K8S_EVENT_DELETED || !ev->object)
                return true;
        const char *name = jstr(jget(ev->object, "metadata"), "name");
        for (size_t i = 0; i < g->n; i++) {
                if (g->names[i] && streq(g->names[i], name)) {
                        free(g->names[i]);
                        g->names[i] = NULL;
                        g->left--;
                }
        }
        return g->left > 0;
}

static void gone_clear(gone_ctx_t *g)
{
        for (size_t i = 0; i < g->n; i++)
                free(g->names[i]);
        free(g->names);
}

int gv_workload_delete_old(gv_k8s_client_t *c, const gv_pod_run_options_t *opts, unsigned timeout_s,
                           gv_error_t **err)
{
        _cleanup_free_ char *selector = gv_workload_label_selector(opts->kind, opts->node_name);
        if (!selector)
                return oom(err);
        json_object *list = NULL;
        int r = gv_k8s_pod_list(c, opts->namespace, selector, opts->node_name, &list, err);
        if (r < 0)
                return gv_error_prefix(err, "list earlier validation pods");
        json_object *items = jget(list, "items");
        size_t n = items && json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
        _cleanup_free_ char *rv = NULL;
        const char *lrv = jstr(jget(list, "metadata"), "resourceVersion");
        if (lrv && !(rv = strdup(lrv))) {
                json_object_put(list);
                return oom(err);
        }
        gone_ctx_t g = { .names = calloc(n + 1, sizeof(char *)) };
        if (!g.names) {
                json_object_put(list);
                return oom(err);
        }
        for (size_t i = 0; i < n; i++) {
                const char *name = jstr(jget(json_object_array_get_idx(items, i), "metadata"), "name");
                if (!name)
                        continue;
                if (!(g.names[g.n] = strdup(name))) {
                        json_object_put(list);
                        gone_clear(&g);
                        return oom(err);
                }
                g.n++;
        }
        json_object_put(list);
        g.left = g.n;
        for (size_t i = 0; i < g.n; i++) {
                logf_(opts, GV_LOG_INFO, "deleting earlier validation pod %s/%s", opts->namespace, g.names[i]);
                r = gv_k8s_pod_delete(c, opts->namespace, g.names[i], -1, err);
                if (r == -ENOENT) {
                        gv_error_free(err);
                        continue; /* its DELETED event follows the list's version */
                }
                if (r < 0) {
                        gv_error_prefix(err, "delete earlier validation pod %s/%s", opts->namespace, g.names[i]);
                        gone_clear(&g);
                        return r;
                }
        }
        if (g.left == 0) {
                gone_clear(&g);
                return 0;
        }
        r = gv_k8s_pod_watch(c, opts->namespace, selector, opts->node_name, rv, timeout_s ? timeout_s : 1, gone_cb,
                             &g, err);
        if (r == -ETIMEDOUT) {
                const char *still = "";
                for (size_t i = 0; i < g.n && !*still; i++)
                        if (g.names[i])
                                still = g.names[i];
                r = gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT,
                                 "earlier validation pod %s/%s (and %zu more) still not gone after %u s",
                                 opts->namespace, still, g.left - 1, timeout_s);
        } else if (r < 0) {
                gv_error_prefix(err, "wait for earlier validation pods to go");
        }
        int deleted = (int) g.n;
        gone_clear(&g);
        return r < 0 ? r : deleted;
}

/* ---------------------------------------------------------------------- */
/* one pod                                                                 */
/* ---------------------------------------------------------------------- */

typedef struct watch_ctx {
        const char *name;
        const char *uid;
        const char *const *init_names;
        const char *const *names;
        unsigned max_restarts;
        gv_pod_status_t st;     /* last classification */
        char *rv;               /* last resourceVersion seen */
        bool decided;           /* SUCCEEDED or FAILED */
        bool deleted;           /* DELETED event of our pod */
        bool terminating;       /* deletionTimestamp seen */
        int error;              /* classification error (out of memory) */
        gv_error_t *err;
} watch_ctx_t;

static void watch_ctx_clear(watch_ctx_t *w)
{
        gv_pod_status_clear(&w->st);
        free(w->rv);
        gv_error_free(&w->err);
}

/* Judge one version of our pod; false when the watch can end. */
static bool watch_judge(watch_ctx_t *w, json_object *pod)
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

static bool watch_cb(void *userdata, const gv_k8s_watch_event_t *ev)
{
        watch_ctx_t *w = userdata;
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
        return watch_judge(w, ev->object);
}

/* Append "; last N log lines of <container>:\n    line..." to *msg, best effort. */
static void append_log_tail(gv_k8s_client_t *c, const gv_pod_run_options_t *o, const char *pod, const char *container,
                            unsigned tail, char **msg)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *lerr = NULL;
        _cleanup_free_ char *add = NULL;
        if (gv_k8s_pod_log(c, o->namespace, pod, container, tail, &text, &lerr) < 0) {
                if (asprintf(&add, "%s; its log could not be read: %s", *msg, lerr->msg) < 0)
                        return;
        } else {
                size_t len = strlen(text);
                while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
                        text[--len] = '\0';
                const char *t = text;
                if (len > MAX_LOG_CHARS)
                        t = text + len - MAX_LOG_CHARS;
                if (!*t) {
                        if (asprintf(&add, "%s; its log is empty", *msg) < 0)
                                return;
                } else {
                        _cleanup_free_ char *ind = NULL;
                        size_t ind_len = 0;
                        FILE *f = open_memstream(&ind, &ind_len);
                        if (!f)
                                return;
                        fputs("    ", f);
                        for (const char *p = t; *p; p++) {
                                fputc(*p, f);
                                if (*p == '\n' && p[1])
                                        fputs("    ", f);
                        }
                        if (fclose(f) != 0)
                                return;
                        if (asprintf(&add, "%s; last log lines of %s:\n%s", *msg, container, ind) < 0)
                                return;
                }
        }
        free(*msg);
        *msg = TAKE_PTR(add);
}

/* Delete our pod at the end (best effort, logged). */
static void delete_pod(gv_k8s_client_t *c, const gv_pod_run_options_t *o, const char *name)
{
        _cleanup_error_ gv_error_t *derr = NULL;
        int r = gv_k8s_pod_delete(c, o->namespace, name, -1, &derr);
        if (r < 0 && r != -ENOENT)
                logf_(o, GV_LOG_WARN, "could not delete validation pod %s/%s: %s", o->namespace, name,
                      derr ? derr->msg : "unknown error");
        else if (r == 0)
                logf_(o, GV_LOG_INFO, "deleted validation pod %s/%s", o->namespace, name);
}

void gv_pod_run_result_clear(gv_pod_run_result_t *r)
{
        if (!r)
                return;
        free(r->pod_name);
        *r = (gv_pod_run_result_t) { 0 };
}

static unsigned secs_left(int64_t deadline)
{
        int64_t left = deadline - gv_now_ms();
        return left <= 0 ? 0 : (unsigned) ((left + 999) / 1000);
}

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): create, watch, judge and delete of one pod; to be split in the architecture refactor */
int gv_pod_run(gv_k8s_client_t *c, json_object *pod, const gv_pod_run_options_t *opts_in,
               gv_pod_run_result_t *result, gv_error_t **err)
{
        gv_pod_run_options_t o = *opts_in;
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
        const char *kind = gv_workload_kind_name(o.kind);
        gv_pod_run_result_t res = { 0 };
        int64_t start = gv_now_ms();
        int64_t deadline = start + (int64_t) o.timeout_s * 1000;
        _cleanup_strv_free_ char **init_names = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *selector = NULL;
        int r;

        if (!o.namespace || !*o.namespace || !o.node_name || !*o.node_name) {
                r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s validation pod: the namespace and the node name "
                                 "are needed (OPERATOR_NAMESPACE, NODE_NAME)", kind);
                goto out;
        }
        r = gv_workload_container_names(pod, &init_names, &names, err);
        if (r < 0)
                goto out;
        if (!(selector = gv_workload_label_selector(o.kind, o.node_name))) {
                r = oom(err);
                goto out;
        }

        r = gv_workload_delete_old(c, &o, secs_left(deadline), err);
        if (r < 0)
                goto out;

        for (unsigned creation = 0; creation <= o.max_recreate; creation++) {
                if (creation > 0) {
                        unsigned shift = creation - 1 < 10 ? creation - 1 : 10;
                        int64_t delay = (int64_t) o.recreate_backoff_ms << shift;
                        if (gv_now_ms() + delay >= deadline)
                                delay = deadline - gv_now_ms() - 1000;
                        if (delay > 0 && gv_sleep_ms(delay, o.stop) < 0) {
                                r = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED,
                                                 "interrupted before re-creating the %s validation pod", kind);
                                goto out;
                        }
                }
                json_object *created = NULL;
                r = gv_k8s_pod_create(c, o.namespace, pod, &created, err);
                if (r < 0) {
                        gv_error_prefix(err, "create the %s validation pod", kind);
                        goto out;
                }
                res.creations++;
                json_object *md = jget(created, "metadata");
                const char *cname = jstr(md, "name");
                free(res.pod_name);
                res.pod_name = cname ? strdup(cname) : NULL;
                _cleanup_free_ char *uid = jstr(md, "uid") ? strdup(jstr(md, "uid")) : NULL;
                watch_ctx_t w = { .name = res.pod_name,
                                  .uid = uid,
                                  .init_names = (const char *const *) init_names,
                                  .names = (const char *const *) names,
                                  .max_restarts = o.max_restarts };
                const char *crv = jstr(md, "resourceVersion");
                w.rv = crv ? strdup(crv) : NULL;
                if (!res.pod_name || !w.rv) {
                        json_object_put(created);
                        watch_ctx_clear(&w);
                        r = cname && crv ? oom(err)
                                         : gv_error_set(err, EPROTO, GV_REASON_KUBERNETES,
                                                        "the created %s validation pod has no name or resourceVersion",
                                                        kind);
                        goto out;
                }
                logf_(&o, GV_LOG_INFO, "created %s validation pod %s/%s on node %s%s", kind, o.namespace,
                      res.pod_name, o.node_name, creation ? " (re-created)" : "");
                watch_judge(&w, created);
                json_object_put(created);
                int64_t created_at = gv_now_ms();

                /* watch until decided, deleted, or a bound passes; each round resumes from the last version */
                for (unsigned round = 0; !w.decided && !w.deleted && w.error == 0 && round < 100000u; round++) {
                        int64_t now = gv_now_ms();
                        if (now >= deadline)
                                break;
                        int64_t until = deadline;
                        if (!w.st.started && created_at + (int64_t) o.pending_timeout_s * 1000 < until)
                                until = created_at + (int64_t) o.pending_timeout_s * 1000;
                        if (now >= until)
                                break;
                        unsigned wt = (unsigned) ((until - now + 999) / 1000);
                        r = gv_k8s_pod_watch(c, o.namespace, selector, o.node_name, w.rv, wt, watch_cb, &w, err);
                        if (r == -ETIMEDOUT) {
                                gv_error_free(err);
                                continue;
                        }
                        if (r < 0) {
                                if (r != -EINTR)
                                        gv_error_prefix(err, "watch %s validation pod %s/%s", kind, o.namespace,
                                                        res.pod_name);
                                watch_ctx_clear(&w);
                                goto delete_and_out;
                        }
                }
                if (w.error < 0) {
                        r = w.error;
                        if (err) {
                                gv_error_free(err);
                                *err = TAKE_PTR(w.err);
                        }
                        watch_ctx_clear(&w);
                        goto delete_and_out;
                }
                if (w.deleted) {
                        watch_ctx_clear(&w);
                        if (creation >= o.max_recreate) {
                                r = gv_error_set(err, ENOENT, GV_REASON_WORKLOAD,
                                                 "%s validation pod %s/%s was deleted by someone else; giving up "
                                                 "after %u re-creation%s",
                                                 kind, o.namespace, res.pod_name, o.max_recreate,
                                                 o.max_recreate == 1 ? "" : "s");
                                goto out;
                        }
                        logf_(&o, GV_LOG_WARN,
                              "%s validation pod %s/%s was deleted by someone else; re-creating it (%u of %u)", kind,
                              o.namespace, res.pod_name, creation + 1, o.max_recreate);
                        continue;
                }
                if (w.decided && w.st.verdict == GV_POD_SUCCEEDED) {
                        logf_(&o, GV_LOG_INFO, "%s validation pod %s/%s succeeded: %s", kind, o.namespace,
                              res.pod_name, w.st.message ? w.st.message : "");
                        watch_ctx_clear(&w);
                        r = 0;
                        goto delete_and_out;
                }
                if (w.decided) {
                        gv_pod_failure_t f = w.st.failure;
                        if (w.st.container && (f == GV_POD_FAIL_INIT_CONTAINER || f == GV_POD_FAIL_CONTAINER ||
                                               f == GV_POD_FAIL_CRASH_LOOP))
                                append_log_tail(c, &o, res.pod_name, w.st.container, o.log_tail_lines, &w.st.message);
                        r = gv_error_set(err, EIO, GV_REASON_WORKLOAD, "%s validation pod %s/%s: %s [%s]", kind,
                                         o.namespace, res.pod_name, w.st.message ? w.st.message : "failed",
                                         gv_pod_failure_name(f));
                        watch_ctx_clear(&w);
                        goto delete_and_out;
                }
                /* a bound passed */
                if (gv_now_ms() < deadline && !w.st.started) {
                        r = gv_error_set(err, ETIMEDOUT, GV_REASON_WORKLOAD,
                                         "%s validation pod %s/%s: still Pending after %u s, never started by the "
                                         "kubelet [%s]",
                                         kind, o.namespace, res.pod_name, o.pending_timeout_s,
                                         gv_pod_failure_name(GV_POD_FAIL_PENDING_TOO_LONG));
                } else {
                        r = gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT,
                                         "%s validation pod %s/%s did not finish within %u s (%s%s)", kind,
                                         o.namespace, res.pod_name, o.timeout_s,
                                         w.st.message ? w.st.message : "no status",
                                         w.st.started ? "" : ", not started");
                }
                watch_ctx_clear(&w);
                goto delete_and_out;
        }

delete_and_out:
        if (res.pod_name)
                delete_pod(c, &o, res.pod_name);
out:
        res.duration_s = (double) (gv_now_ms() - start) / 1000.0;
        if (result)
                *result = res;
        else
                gv_pod_run_result_clear(&res);
        return r < 0 ? r : 0;
}

/* ---------------------------------------------------------------------- */
/* template + own pod + run                                                */
/* ---------------------------------------------------------------------- */

int gv_workload_validate(gv_k8s_client_t *c, const gv_workload_job_t *job, gv_pod_run_result_t *result,
                         gv_error_t **err)
{
        const gv_pod_run_options_t *o = &job->run;
        gv_workload_overrides_t *ov = NULL;
        int r;
        if (job->template_path && *job->template_path) {
                r = gv_workload_overrides_load(job->template_path, &ov, err);
                if (r < 0)
                        return gv_error_prefix(err, "workload template %s", job->template_path);
        }
        json_object *self = NULL;
        if (job->validator_pod_name && *job->validator_pod_name) {
                _cleanup_error_ gv_error_t *gerr = NULL;
                if (gv_k8s_pod_get(c, o->namespace, job->validator_pod_name, &self, &gerr) < 0) {
                        if (gerr && gerr->reason == GV_REASON_INTERRUPTED) {
                                gv_workload_overrides_free(ov);
                                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s", gerr->msg);
                        }
                        logf_(o, GV_LOG_WARN,
                              "could not read the validator's own pod %s/%s (%s); the validation pod gets no copied "
                              "tolerations and no owner reference",
                              o->namespace, job->validator_pod_name, gerr ? gerr->msg : "unknown error");
                        self = NULL;
                }
        }
        json_object *tol = jget(jget(self, "spec"), "tolerations");
        const char *self_uid = jstr(jget(self, "metadata"), "uid");
        gv_workload_runtime_t rt = {
                .node_name = o->node_name,
                .namespace = o->namespace,
                .image = job->image,
                .image_pull_policy = job->image_pull_policy,
                .image_pull_secrets = job->image_pull_secrets,
                .runtime_class = job->runtime_class,
                .tolerations = tol && json_object_is_type(tol, json_type_array) ? tol : NULL,
                .service_account = jstr(jget(self, "spec"), "serviceAccountName"),
                .owner_name = job->validator_pod_name,
                .owner_uid = job->validator_pod_uid && *job->validator_pod_uid ? job->validator_pod_uid : self_uid,
                .gpu_resource = job->gpu_resource,
                .placeholders = false,
        };
        if (!rt.owner_uid)
                rt.owner_name = NULL;
        json_object *pod = NULL;
        r = gv_workload_pod(o->kind, ov, &rt, &pod, err);
        json_object_put(self);
        gv_workload_overrides_free(ov);
        if (r < 0)
                return gv_error_prefix(err, "render the %s validation pod", gv_workload_kind_name(o->kind));
        r = gv_pod_run(c, pod, o, result, err);
        json_object_put(pod);
        return r;
}
