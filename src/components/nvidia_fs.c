/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-fs: GDS (GPUDirect Storage).  Validates only when GDS_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module nvidia_fs is loaded (<sysfs>/module/nvidia_fs, live).
 * Writes nvidia-fs-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

#define COMPONENT "nvidia-fs"

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        return gv_gpudirect_validate(cfg, COMPONENT, "GDS_ENABLED", "nvidia_fs", result, err);
}

const gv_component_t gv_component_nvidia_fs = {
        .name = COMPONENT,
        .marker = GV_MARKER_NVIDIA_FS,
        .validate = validate,
};
