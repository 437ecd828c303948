/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validation pod lifecycle around the pod run: delete earlier pods, and the
 * whole job (template, the validator's own pod, render, gv_pod_run()).  The
 * classifier is in classify.c, the run's state machine in podrun.c.  See
 * lifecycle.h and docs/workload-lifecycle.md.
 */
#include "lifecycle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "workload-internal.h"

/* Log through the caller's gv_log_fn (may be NULL) under o->log_component, reason "". */
#define logf_(o, level, ...) gv_logf((o)->log, (o)->log_userdata, (level), (o)->log_component, "", __VA_ARGS__)

void gv_pod_run_result_clear(gv_pod_run_result_t *r)
{
        if (!r)
                return;
        free(r->pod_name);
        *r = (gv_pod_run_result_t) { 0 };
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
        for (size_t i = 0; g->names && i < g->n; i++)
                free(g->names[i]);
        free(g->names);
}

/* The names of the pods in @list's items into @g (left = n). */
static int gone_fill(gone_ctx_t *g, json_object *list, gv_error_t **err)
{
        json_object *items = jget(list, "items");
        size_t n = items && json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
        if (!(g->names = calloc(n + 1, sizeof(char *))))
                return gv_error_oom(err);
        for (size_t i = 0; i < n; i++) {
                const char *name = jstr(jget(json_object_array_get_idx(items, i), "metadata"), "name");
                if (!name)
                        continue;
                if (!(g->names[g->n] = strdup(name)))
                        return gv_error_oom(err);
                g->n++;
        }
        g->left = g->n;
        return 0;
}

/* The error when the watch for the pods in @g to go ended with @r. */
static int gone_wait_error(const gv_pod_run_options_t *opts, const gone_ctx_t *g, unsigned timeout_s, int r,
                           gv_error_t **err)
{
        if (r == -ETIMEDOUT) {
                const char *still = "";
                for (size_t i = 0; i < g->n && !*still; i++)
                        if (g->names[i])
                                still = g->names[i];
                return gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT,
                                    "earlier validation pod %s/%s (and %zu more) still not gone after %u s",
                                    opts->namespace, still, g->left - 1, timeout_s);
        }
        gv_error_prefix(err, "wait for earlier validation pods to go");
        return r;
}

int gv_workload_delete_old(gv_k8s_client_t *c, const gv_pod_run_options_t *opts, unsigned timeout_s,
                           gv_error_t **err)
{
        _cleanup_free_ char *selector = gv_workload_label_selector(opts->kind, opts->node_name);
        if (!selector)
                return gv_error_oom(err);
        _cleanup_json_ json_object *list = NULL;
        int r = gv_k8s_pod_list(c, opts->namespace, selector, opts->node_name, &list, err);
        if (r < 0)
                return gv_error_prefix(err, "list earlier validation pods");
        _cleanup_free_ char *rv = NULL;
        const char *lrv = jstr(jget(list, "metadata"), "resourceVersion");
        if (lrv && !(rv = strdup(lrv)))
                return gv_error_oom(err);
        _cleanup_(gone_clear) gone_ctx_t g = { 0 };
        r = gone_fill(&g, list, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < g.n; i++) {
                logf_(opts, GV_LOG_INFO, "deleting earlier validation pod %s/%s", opts->namespace, g.names[i]);
                r = gv_k8s_pod_delete(c, opts->namespace, g.names[i], -1, err);
                if (r == -ENOENT) {
                        gv_error_free(err);
                        continue; /* its DELETED event follows the list's version */
                }
                if (r < 0) {
                        gv_error_prefix(err, "delete earlier validation pod %s/%s", opts->namespace, g.names[i]);
                        return r;
                }
        }
        if (g.left == 0)
                return 0;
        r = gv_k8s_pod_watch(c, opts->namespace, selector, opts->node_name, rv, timeout_s ? timeout_s : 1, gone_cb,
                             &g, err);
        if (r < 0)
                return gone_wait_error(opts, &g, timeout_s, r, err);
        return (int) g.n;
}

/* ---------------------------------------------------------------------- */
/* template + own pod + run                                                */
/* ---------------------------------------------------------------------- */

static void overrides_freep(gv_workload_overrides_t **ov)
{
        gv_workload_overrides_free(*ov);
}

/*
 * The validator's own pod (owned) into *self, or NULL with a warning when it
 * cannot be read; only an interruption is an error (-EINTR).
 */
static int read_self(gv_k8s_client_t *c, const gv_workload_job_t *job, json_object **self, gv_error_t **err)
{
        const gv_pod_run_options_t *o = &job->run;
        *self = NULL;
        if (!job->validator_pod_name || !*job->validator_pod_name)
                return 0;
        _cleanup_error_ gv_error_t *gerr = NULL;
        if (gv_k8s_pod_get(c, o->namespace, job->validator_pod_name, self, &gerr) < 0) {
                if (gerr && gerr->reason == GV_REASON_INTERRUPTED)
                        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s", gerr->msg);
                logf_(o, GV_LOG_WARN,
                      "could not read the validator's own pod %s/%s (%s); the validation pod gets no copied "
                      "tolerations and no owner reference",
                      o->namespace, job->validator_pod_name, gerr ? gerr->msg : "unknown error");
                *self = NULL;
        }
        return 0;
}

int gv_workload_validate(gv_k8s_client_t *c, const gv_workload_job_t *job, gv_pod_run_result_t *result,
                         gv_error_t **err)
{
        const gv_pod_run_options_t *o = &job->run;
        _cleanup_(overrides_freep) gv_workload_overrides_t *ov = NULL;
        int r;
        if (job->template_path && *job->template_path) {
                r = gv_workload_overrides_load(job->template_path, &ov, err);
                if (r < 0)
                        return gv_error_prefix(err, "workload template %s", job->template_path);
        }
        _cleanup_json_ json_object *self = NULL;
        r = read_self(c, job, &self, err);
        if (r < 0)
                return r;
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
        _cleanup_json_ json_object *pod = NULL;
        r = gv_workload_pod(o->kind, ov, &rt, &pod, err);
        if (r < 0)
                return gv_error_prefix(err, "render the %s validation pod", gv_workload_kind_name(o->kind));
        return gv_pod_run(c, pod, o, result, err);
}
