/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-fs: GDS (GPUDirect Storage).  Validates only when GDS_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module nvidia_fs is loaded (<sysfs>/module/nvidia_fs, live).
 * Writes nvidia-fs-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

GV_GPUDIRECT_COMPONENT(nvidia_fs, "nvidia-fs", GV_MARKER_NVIDIA_FS, "GDS_ENABLED", "nvidia_fs");
