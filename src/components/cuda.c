/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda: run the CUDA validation pod on this node (upstream's cuda
 * component, with the lifecycle of src/workload/lifecycle.c: watched, not
 * polled, failures named as they happen, the pod deleted afterwards).
 * WITH_WORKLOAD=false publishes cuda-ready with no check, as upstream.
 * Also the Kubernetes glue shared with plugin.c (kube-internal.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "kube-internal.h"

#define COMPONENT "cuda"

int gv_kube_client(const gv_config_t *cfg, const char *component, gv_k8s_client_t **out, gv_error_t **err)
{
        gv_k8s_env_t env = {
                .kubeconfig = cfg->kube.kubeconfig,
                .context = cfg->kube.kube_context,
                .service_host = cfg->kube.k8s_service_host,
                .service_port = cfg->kube.k8s_service_port,
                .home = cfg->kube.home_dir,
        };
        gv_k8s_config_t *kc = NULL;
        int r = gv_k8s_config_load(&env, &kc, err);
        if (r < 0)
                return gv_error_prefix(err, "Kubernetes configuration");
        gv_k8s_options_t opts = {
                .stop = cfg->stop,
                .log = cfg->log,
                .log_userdata = cfg->log_userdata,
                .log_component = component,
        };
        return gv_k8s_client_new(kc, &opts, out, err);
}

void gv_kube_job(const gv_config_t *cfg, gv_workload_kind_t kind, const char *component, gv_workload_job_t *job)
{
        *job = (gv_workload_job_t) {
                .run = {
                        .kind = kind,
                        .namespace = cfg->kube.namespace,
                        .node_name = cfg->kube.node_name,
                        .timeout_s = cfg->workload.pod_timeout_s,
                        .stop = cfg->stop,
                        .log = cfg->log,
                        .log_userdata = cfg->log_userdata,
                        .log_component = component,
                },
                .template_path = cfg->workload.workload_template,
                .image = cfg->workload.validator_image,
                .image_pull_policy = cfg->workload.validator_image_pull_policy,
                .image_pull_secrets = cfg->workload.validator_image_pull_secrets,
                .runtime_class = cfg->workload.validator_runtime_class,
                .validator_pod_name = cfg->workload.validator_pod_name,
                .validator_pod_uid = cfg->workload.validator_pod_uid,
        };
}

int gv_kube_require(const gv_config_t *cfg, const char *component, bool need_namespace, gv_error_t **err)
{
        if (!cfg->kube.node_name || !*cfg->kube.node_name)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: NODE_NAME is not set (the DaemonSet passes spec.nodeName; or --node-name)",
                                    component);
        if (need_namespace && (!cfg->kube.namespace || !*cfg->kube.namespace))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: OPERATOR_NAMESPACE is not set (the DaemonSet passes metadata.namespace; or "
                                    "--namespace); needed for the validation pod (set WITH_WORKLOAD=false to skip it)",
                                    component);
        return 0;
}

int gv_kube_open(const gv_config_t *cfg, const char *component, bool need_namespace, gv_k8s_client_t **out,
                 gv_error_t **err)
{
        int r = gv_kube_require(cfg, component, need_namespace, err);
        return r < 0 ? r : gv_kube_client(cfg, component, out, err);
}

static int cuda_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        gv_result_t res = { 0 };
        if (!cfg->workload.with_workload) {
                /* upstream: WITH_WORKLOAD=false writes cuda-ready with no check */
                res.summary = strdup("no CUDA workload check (WITH_WORKLOAD=false, as upstream)");
                if (!res.summary)
                        return gv_error_oom(err);
                *result = res;
                return 0;
        }
        gv_k8s_client_t *client = NULL;
        int r = gv_kube_open(cfg, COMPONENT, true, &client, err);
        if (r < 0)
                return r;
        gv_workload_job_t job;
        gv_kube_job(cfg, GV_WORKLOAD_CUDA, COMPONENT, &job);
        gv_pod_run_result_t pr = { 0 };
        r = gv_workload_validate(client, &job, &pr, err);
        gv_k8s_client_free(client);
        if (r < 0) {
                gv_pod_run_result_clear(&pr);
                return r;
        }
        if (asprintf(&res.summary, "CUDA validation pod %s succeeded in %.1f s%s", pr.pod_name ? pr.pod_name : "",
                     pr.duration_s, pr.creations > 1 ? " (re-created after deletion)" : "") < 0) {
                res.summary = NULL;
                gv_pod_run_result_clear(&pr);
                return gv_error_oom(err);
        }
        gv_pod_run_result_clear(&pr);
        *result = res;
        return 0;
}

GV_COMPONENT(cuda, "cuda", GV_MARKER_CUDA, cuda_validate);
