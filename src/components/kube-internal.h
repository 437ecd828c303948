/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cuda and plugin components share (private to src/components):
 * a Kubernetes client and a validation-pod job made from gv_config_t, both
 * logging to cfg->log under a component name.  Defined in cuda.c.
 */
#ifndef GV_COMPONENTS_KUBE_H
#define GV_COMPONENTS_KUBE_H

#include "components-internal.h"
#include "k8s/k8s.h"
#include "workload/lifecycle.h"

/*
 * gv_kube_client - load the Kubernetes configuration from cfg (kubeconfig,
 * kube_context, k8s_service_host/port, home_dir; order in docs/kubernetes.md)
 * and make a client whose stop flag is cfg->stop and whose log goes to
 * cfg->log as @component (reason "").  @component must outlive the client.
 * *out is owned by the caller (gv_k8s_client_free()).
 * Errors: GV_REASON_CONFIG when no configuration applies or it is broken,
 * naming what was tried; -ENOMEM.
 */
int gv_kube_client(const gv_config_t *cfg, const char *component, gv_k8s_client_t **out, gv_error_t **err);

/*
 * gv_kube_job - fill @job's image settings, template path, validator pod,
 * bounds (pod_timeout_s) and log (cfg->log as @component) from @cfg, for
 * @kind on cfg->kube.node_name in cfg->kube.namespace.  @component must outlive the job.
 */
void gv_kube_job(const gv_config_t *cfg, gv_workload_kind_t kind, const char *component, gv_workload_job_t *job);

/*
 * gv_kube_require - a GV_REASON_CONFIG error (-EINVAL) for @component when
 * NODE_NAME (always) or OPERATOR_NAMESPACE (when @need_namespace) is unset.
 * Returns 0 when both are there.
 */
int gv_kube_require(const gv_config_t *cfg, const char *component, bool need_namespace, gv_error_t **err);

/*
 * gv_kube_open - gv_kube_require() then gv_kube_client(): what a component
 * that talks to the API server does first.  *out is the caller's
 * (gv_k8s_client_free()); errors as the two functions.
 */
int gv_kube_open(const gv_config_t *cfg, const char *component, bool need_namespace, gv_k8s_client_t **out,
                 gv_error_t **err);

#endif
