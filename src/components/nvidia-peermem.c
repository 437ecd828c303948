/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-peermem: GPUDirect RDMA.  Validates only when GPU_DIRECT_RDMA_ENABLED is true in
 * <OUTPUT_DIR>/.driver-ctr-ready (the driver container's flags); then ready
 * when the kernel module nvidia_peermem is loaded (<sysfs>/module/nvidia_peermem, live).
 * Writes nvidia-peermem-ready under driver-ready.  Upstream:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
#include "sandbox.h"

GV_GPUDIRECT_COMPONENT(nvidia_peermem, "nvidia-peermem", GV_MARKER_NVIDIA_PEERMEM, "GPU_DIRECT_RDMA_ENABLED", "nvidia_peermem");
