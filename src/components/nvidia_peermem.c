/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-peermem: GPUDirect RDMA.  Validates only when GPU_DIRECT_RDMA_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module nvidia_peermem is loaded (<sysfs>/module/nvidia_peermem, live).
 * Writes nvidia-peermem-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

#define COMPONENT "nvidia-peermem"

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        return gv_gpudirect_validate(cfg, COMPONENT, "GPU_DIRECT_RDMA_ENABLED", "nvidia_peermem", result, err);
}

const gv_component_t gv_component_nvidia_peermem = {
        .name = COMPONENT,
        .marker = GV_MARKER_NVIDIA_PEERMEM,
        .validate = validate,
};
