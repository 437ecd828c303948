/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda and plugin: placeholders until the Kubernetes parts land (another
 * developer owns src/k8s and src/workload).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int cuda_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        if (!cfg->with_workload) {
                /* upstream: WITH_WORKLOAD=false writes cuda-ready with no check */
                gv_result_t res = { 0 };
                res.summary = strdup("no CUDA workload check (WITH_WORKLOAD=false, as upstream)");
                if (!res.summary)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                *result = res;
                return 0;
        }
        /* TODO(k8s): run the CUDA validation pod (shared/cases/upstream-gpu-operator/
         * validator_manifests_cuda-workload-validation.yaml) through src/workload. */
        return gv_error_set(err, ENOSYS, GV_REASON_NOT_IMPLEMENTED,
                            "the CUDA workload check is not implemented yet; set WITH_WORKLOAD=false to skip it");
}

static int plugin_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) cfg;
        (void) store;
        (void) result;
        /* TODO(k8s): poll the Node's capacity for nvidia.com/gpu* / nvidia.com/mig-* >= 1
         * (even with WITH_WORKLOAD=false, as upstream), skip when the device plugin is
         * disabled on the node (FR08), and with WITH_WORKLOAD run the plugin pod (FR07, FR09). */
        return gv_error_set(err, ENOSYS, GV_REASON_NOT_IMPLEMENTED,
                            "the device plugin check needs the Kubernetes client, which is not implemented yet");
}

const gv_component_t gv_component_cuda = {
        .name = "cuda",
        .marker = GV_MARKER_CUDA,
        .validate = cuda_validate,
};

const gv_component_t gv_component_plugin = {
        .name = "plugin",
        .marker = GV_MARKER_PLUGIN,
        .validate = plugin_validate,
};
