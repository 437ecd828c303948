/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin: the device plugin advertises GPUs on this node.  Watches the Node
 * (never polls) until status.allocatable has nvidia.com/gpu* or
 * nvidia.com/mig-* >= 1, bounded by CAPACITY_WAIT_SECONDS; skips when the
 * node carries nvidia.com/gpu.deploy.device-plugin=false (the operator then runs
 * no device plugin there), and records that in plugin-ready (SKIPPED=true,
 * SKIP_REASON) so that the chain reads as complete; with
 * WITH_WORKLOAD runs the plugin validation pod asking for one unit of the
 * resource found (MIG first, as upstream), which detects "every GPU already
 * allocated" (the pod's UnexpectedAdmissionError) within seconds.  Publishes DEVICE_PLUGIN_DEVICES for the metrics.
 * In DRA mode (node label nvidia.com/gpu.deploy.dra-driver=true, which wins
 * over the device-plugin label) there is no nvidia.com/gpu capacity to wait
 * for: the check is that the DRA driver's ResourceSlices publish this node's
 * GPUs (dra.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "dra.h"
#include "kube-internal.h"

#define COMPONENT "plugin"

typedef struct node_wait {
        bool once;             /* capacity wait 0: decide on the first full list */
        bool seen;             /* the node was delivered at least once */
        bool missing;          /* the list had no such node (and once) or it was deleted */
        bool deleted;          /* a DELETED event came after the node was seen: the wait ends at once */
        bool disabled;         /* the device-plugin deploy label is "false" */
        bool dra;              /* DRA mode label (dra.h) */
        unsigned long devices; /* gv_node_gpu_devices() of the last version */
        json_object *node;     /* last version (owned) */
} node_wait_t;

static bool node_cb(void *userdata, const gv_k8s_watch_event_t *ev)
{
        node_wait_t *w = userdata;
        switch (ev->type) {
        case GV_K8S_EVENT_ADDED:
        case GV_K8S_EVENT_MODIFIED:
                if (!ev->object)
                        return true;
                json_object_put(w->node);
                w->node = json_object_get(ev->object);
                w->seen = true;
                w->missing = false;
                w->disabled = gv_node_device_plugin_disabled(ev->object);
                w->dra = gv_dra_node_enabled(ev->object);
                w->devices = gv_node_gpu_devices(ev->object);
                return !(w->dra || w->disabled || w->devices > 0);
        case GV_K8S_EVENT_DELETED:
                json_object_put(w->node);
                w->node = NULL;
                w->devices = 0;
                w->missing = true;
                w->deleted = w->seen;
                return !w->deleted; /* a Node that is gone gets no capacity: no point waiting the bound out */
        case GV_K8S_EVENT_SYNCED:
                if (!w->seen)
                        w->missing = true;
                return !(w->once || (w->missing && !w->seen));
        default:
                return true;
        }
}

/* "nvidia.com/gpu: 8, nvidia.com/mig-1g.5gb: 7" of the node's GPU resources (heap), for messages. */
static char *describe_resources(json_object *node)
{
        json_object *res = gv_node_gpu_resources(node);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        bool any = false;
        if (res) {
                json_object_object_foreach(res, key, val)
                {
                        if (strncmp(key, "nvidia.com/gpu", 14) != 0 && strncmp(key, "nvidia.com/mig-", 15) != 0)
                                continue;
                        fprintf(f, "%s%s: %s", any ? ", " : "", key, json_object_get_string(val));
                        any = true;
                }
        }
        if (!any)
                fputs("no nvidia.com/gpu* or nvidia.com/mig-* resource", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/*
 * What the capacity watch (result @r) found: 0 when @w holds a node with GPU
 * capacity, 1 when the device plugin is disabled there (skip), 2 when the
 * node is in DRA mode, else a
 * negative errno with *err (no capacity in time, the node deleted or not
 * found, or the watch's own error).
 */
static int capacity_check(const gv_config_t *cfg, const node_wait_t *w, int r, gv_error_t **err)
{
        if (r == -ETIMEDOUT || (r == 0 && w->once && !w->dra && !w->disabled && w->devices == 0 && !w->missing)) {
                _cleanup_free_ char *described = w->node ? describe_resources(w->node) : NULL;
                return gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT,
                                    "no GPU advertised on node %s after %u s (allocatable: %s); is the NVIDIA device "
                                    "plugin running there? (bound: CAPACITY_WAIT_SECONDS / --capacity-wait)",
                                    cfg->kube.node_name, cfg->workload.capacity_wait_s,
                                    described ? described : w->seen ? "unknown" : "node never seen");
        }
        if (r < 0) {
                gv_error_prefix(err, "watch node %s", cfg->kube.node_name);
                return r;
        }
        if (w->deleted)
                return gv_error_set(err, ENOENT, GV_REASON_KUBERNETES,
                                    "node %s was deleted while waiting for GPU capacity; nothing to validate on a Node "
                                    "that is gone (it is validated again when it registers anew)",
                                    cfg->kube.node_name);
        if (w->missing && !w->node)
                return gv_error_set(err, ENOENT, GV_REASON_KUBERNETES,
                                    "node %s not found in the API (NODE_NAME must be this node's name)", cfg->kube.node_name);
        return w->dra ? 2 : w->disabled ? 1 : 0;
}

/* The result for a node whose device plugin is disabled: skipped on purpose, recorded. */
static int disabled_result(const gv_config_t *cfg, gv_result_t *res, gv_error_t **err)
{
        res->skipped = true;
        res->record_skip = true; /* skipped on purpose: plugin-ready says so, the chain stays complete */
        if (asprintf(&res->summary,
                     "the device plugin is disabled on node %s (label " GV_DEVICE_PLUGIN_DEPLOY_LABEL
                     "=false); nothing to validate, plugin-ready records SKIPPED=true",
                     cfg->kube.node_name) < 0) {
                res->summary = NULL;
                return gv_error_oom(err);
        }
        return 0;
}

/*
 * The node in @w advertises GPUs: pick the resource, run the validation pod
 * (with WITH_WORKLOAD) and fill @res with the device count and the summary.
 */
static int node_result(const gv_config_t *cfg, gv_k8s_client_t *client,
                       const node_wait_t *w, gv_result_t *res, gv_error_t **err)
{
        _cleanup_free_ char *resource = NULL;
        _cleanup_free_ char *described = describe_resources(w->node);
        int r = gv_workload_pick_gpu_resource(gv_node_gpu_resources(w->node), &resource, err);
        if (r < 0)
                return r;
        gv_cfg_logf(cfg, GV_LOG_INFO, COMPONENT, GV_REASON_NONE, "node %s advertises %lu GPU device(s) (%s)",
                    cfg->kube.node_name, w->devices, described ? described : "");

        gv_pod_run_result_t pr = { 0 };
        if (cfg->workload.with_workload) {
                gv_workload_job_t job;
                gv_kube_job(cfg, GV_WORKLOAD_PLUGIN, COMPONENT, &job);
                job.gpu_resource = resource;
                r = gv_workload_validate(client, &job, &pr, err);
        }
        char count[32];
        snprintf(count, sizeof(count), "%lu", w->devices);
        if (r >= 0 && (r = gv_kvlist_set(&res->facts, "MODE", "device-plugin", err)) >= 0)
                r = gv_kvlist_set(&res->facts, "DEVICE_PLUGIN_DEVICES", count, err);
        if (r >= 0 &&
            (cfg->workload.with_workload
                     ? asprintf(&res->summary, "%lu GPU device(s) advertised (%s); validation pod %s got one %s in "
                                "%.1f s",
                                w->devices, described ? described : "", pr.pod_name ? pr.pod_name : "", resource,
                                pr.duration_s)
                     : asprintf(&res->summary, "%lu GPU device(s) advertised (%s); no validation pod "
                                "(WITH_WORKLOAD=false)",
                                w->devices, described ? described : "")) < 0) {
                res->summary = NULL;
                r = gv_error_oom(err);
        }
        gv_pod_run_result_clear(&pr);
        return r < 0 ? r : 0;
}

static int plugin_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        gv_k8s_client_t *client = NULL;
        int r = gv_kube_open(cfg, COMPONENT, cfg->workload.with_workload, &client, err);
        if (r < 0)
                return r;

        gv_result_t res = { 0 };
        node_wait_t w = { .once = cfg->workload.capacity_wait_s == 0 };
        gv_cfg_logf(cfg, GV_LOG_INFO, COMPONENT, GV_REASON_NONE,
                    "waiting up to %u s for GPU capacity on node %s (CAPACITY_WAIT_SECONDS)", cfg->workload.capacity_wait_s,
                    cfg->kube.node_name);
        r = gv_k8s_node_watch(client, cfg->kube.node_name, NULL, cfg->workload.capacity_wait_s ? cfg->workload.capacity_wait_s : 1, node_cb,
                              &w, err);
        r = capacity_check(cfg, &w, r, err);
        if (r == 2)
                r = gv_dra_validate(cfg, client, store, &res, err);
        else if (r == 1)
                r = disabled_result(cfg, &res, err);
        else if (r == 0)
                r = node_result(cfg, client, &w, &res, err);
        json_object_put(w.node);
        gv_k8s_client_free(client);
        if (r < 0) {
                gv_result_clear(&res);
                return r;
        }
        *result = res;
        return 0;
}

GV_COMPONENT(plugin, "plugin", GV_MARKER_PLUGIN, plugin_validate);
