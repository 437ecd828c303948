/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gdrcopy: GDRCopy.  Validates only when GDRCOPY_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module gdrdrv is loaded (<sysfs>/module/gdrdrv, live).
 * Writes gdrcopy-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

GV_GPUDIRECT_COMPONENT(gdrcopy, "gdrcopy", GV_MARKER_GDRCOPY, "GDRCOPY_ENABLED", "gdrdrv");
