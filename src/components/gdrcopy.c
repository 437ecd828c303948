/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gdrcopy: GDRCopy.  Validates only when GDRCOPY_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module gdrdrv is loaded (<sysfs>/module/gdrdrv, live).
 * Writes gdrcopy-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

#define COMPONENT "gdrcopy"

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        return gv_gpudirect_validate(cfg, COMPONENT, "GDRCOPY_ENABLED", "gdrdrv", result, err);
}

const gv_component_t gv_component_gdrcopy = {
        .name = COMPONENT,
        .marker = GV_MARKER_GDRCOPY,
        .validate = validate,
};
