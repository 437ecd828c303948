/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod-status classifier (gv_pod_classify()) and the node helpers: pure
 * functions of a Pod or Node object, no API call.  See lifecycle.h and
 * docs/workload-lifecycle.md.
 */
#include "lifecycle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "workload-internal.h"

static bool in_list(const char *const *list, const char *s)
{
        for (; list && *list; list++)
                if (streq(*list, s))
                        return true;
        return false;
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

/*
 * Record the FAILED verdict @f with its message in cx->st; returns 1, or
 * -ENOMEM in @err.  @err comes before the format, as in gv_error_set(): a
 * printf-style function ends with its format and arguments.
 */
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
                return gv_error_oom(err);
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&cx->st.message, fmt, ap);
        va_end(ap);
        if (n < 0) {
                cx->st.message = NULL;
                return gv_error_oom(err);
        }
        return 1;
}

/* What one container status says, for the checks below. */
typedef struct cstatus {
        json_object *cs;     /* the containerStatuses entry */
        json_object *state;  /* its state */
        const char *name;    /* container name */
        const char *what;    /* "init container" or "container" */
        const char *wreason; /* state.waiting.reason, or NULL */
        const char *wmsg;    /* state.waiting.message, or NULL */
        const char *image;   /* status image, else the spec's */
        bool init;
} cstatus_t;

/* A non-zero exit code, in state.terminated or else lastState.terminated. */
static int check_exit(classify_ctx_t *cx, const cstatus_t *s, gv_error_t **err)
{
        json_object *term = jget(s->state, "terminated");
        bool last = false;
        if (!term || jint(term, "exitCode", 0) == 0) {
                term = jget(jget(s->cs, "lastState"), "terminated");
                last = true;
        }
        if (!term)
                return 0;
        int64_t code = jint(term, "exitCode", 0);
        if (code == 0)
                return 0;
        const char *treason = jstr(term, "reason");
        const char *tmsg = jstr(term, "message");
        const char *wreason = s->wreason;
        return fail_with(cx, s->init ? GV_POD_FAIL_INIT_CONTAINER : GV_POD_FAIL_CONTAINER, s->name, s->init,
                         (int) code, s->image, err, "%s %s exited with code %" PRId64 "%s%s%s%s%s%s", s->what,
                         s->name, code, treason ? " (" : "", treason ? treason : "", treason ? ")" : "",
                         tmsg ? ": " : "", tmsg ? tmsg : "",
                         last && wreason ? (streq(wreason, "CrashLoopBackOff") ? "; now in CrashLoopBackOff"
                                                                               : "; restarting")
                                         : "");
}

static int check_one(classify_ctx_t *cx, const cstatus_t *s, check_t check, gv_error_t **err)
{
        switch (check) {
        case CHECK_EXIT:
                return check_exit(cx, s, err);
        case CHECK_IMAGE:
                if (in_list(image_pull_reasons, s->wreason))
                        return fail_with(cx, GV_POD_FAIL_IMAGE_PULL, s->name, s->init, 0, s->image, err,
                                         "%s %s cannot pull image %s: %s%s%s", s->what, s->name,
                                         s->image ? s->image : "(unknown)", s->wreason, s->wmsg ? ": " : "",
                                         s->wmsg ? s->wmsg : "");
                return 0;
        case CHECK_CREATE:
                if (in_list(create_reasons, s->wreason))
                        return fail_with(cx, GV_POD_FAIL_CREATE_CONTAINER, s->name, s->init, 0, s->image, err,
                                         "%s %s cannot be started: %s%s%s", s->what, s->name, s->wreason,
                                         s->wmsg ? ": " : "", s->wmsg ? s->wmsg : "");
                return 0;
        case CHECK_CRASH: {
                int64_t restarts = jint(s->cs, "restartCount", 0);
                if (streq(s->wreason, "CrashLoopBackOff") || restarts > (int64_t) cx->max_restarts)
                        return fail_with(cx, GV_POD_FAIL_CRASH_LOOP, s->name, s->init, 0, s->image, err,
                                         "%s %s is crash-looping (%s, restarted %" PRId64 " times, bound %u)",
                                         s->what, s->name, s->wreason ? s->wreason : "restarting", restarts,
                                         cx->max_restarts);
                return 0;
        }
        }
        return 0;
}

/* Run @check over the statuses in @list (of the containers named in @names). 1: failure found. */
static int check_statuses(classify_ctx_t *cx, json_object *list, const char *const *names, bool init, check_t check,
                          gv_error_t **err)
{
        if (!list || !json_object_is_type(list, json_type_array))
                return 0;
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                cstatus_t s = { .cs = json_object_array_get_idx(list, i), .init = init };
                s.name = jstr(s.cs, "name");
                if (!s.name || !in_list(names, s.name))
                        continue; /* injected sidecar (a service mesh's, never exiting) or garbage */
                s.what = init ? "init container" : "container";
                s.state = jget(s.cs, "state");
                json_object *waiting = jget(s.state, "waiting");
                s.wreason = jstr(waiting, "reason");
                s.wmsg = jstr(waiting, "message");
                s.image = jstr(s.cs, "image");
                if (!s.image || !*s.image)
                        s.image = spec_image(cx->pod, s.name);
                int r = check_one(cx, &s, check, err);
                if (r != 0)
                        return r;
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
                return gv_error_oom(err);
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
                        r = gv_error_oom(err);
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
                r = gv_error_oom(err);
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
