/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the driver check's files share (private to src/components): the facts NVML gave
 * (driver.c gathers them) and the NVSwitch fabric check over them (driver-fabric.c).
 */
#ifndef GV_COMPONENTS_DRIVER_INTERNAL_H
#define GV_COMPONENTS_DRIVER_INTERNAL_H

#include <stdbool.h>

#include "base/error.h"
#include "nvml/nvml.h"

/* One GPU as NVML showed it: its bus id and fabric (NVSwitch systems). */
typedef struct gpu_info {
        char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1]; /* "00000000:18:00.0" or "" */
        bool fabric;                      /* NVML answered fabric info with a state other than NOT_SUPPORTED */
        unsigned char fabric_state;       /* NVML_GPU_FABRIC_STATE_* */
        nvmlReturn_t fabric_status;       /* meaningful once COMPLETED */
} gpu_info_t;

/* What NVML told us. */
typedef struct nvml_facts {
        char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        char cuda_version[32]; /* "12.4" or "" */
        char first_name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        unsigned count;
        unsigned *minors; /* heap, count entries: /dev/nvidia<minor> */
        char *uuids;      /* heap, comma-separated */
        bool init_no_attach;
        gpu_info_t *gpus; /* heap, count entries: bus id and fabric of each GPU */
} nvml_facts_t;

/*
 * gv_driver_fabric_query - the fabric of @dev (NVSwitch systems): nvmlDeviceGetGpuFabricInfoV
 * (struct v3, then v2 for drivers that know only v2), else nvmlDeviceGetGpuFabricInfo (older
 * drivers); both are optional in the loader.  Fills *g's fabric fields.  Returns NVML_SUCCESS,
 * or NVML's error; NOT_SUPPORTED when the library has neither call.  Field facts:
 * shared/reference/nvml-abi.md.
 */
nvmlReturn_t gv_driver_fabric_query(const gv_nvml_t *nvml, nvmlDevice_t dev, gpu_info_t *g);

/*
 * gv_driver_fabric_check - every fabric GPU of @f must be COMPLETED with status SUCCESS, else
 * CUDA fails with "system not yet initialized" (gpu-operator #1043, #2511).  GPUs without
 * fabric info (PCIe cards) pass.  Fails with GV_REASON_FABRIC_NOT_READY (retryable: --wait
 * waits for the fabric manager) naming each GPU that is not ready: index, bus id, state and
 * status (NVML's text).
 */
int gv_driver_fabric_check(const gv_nvml_t *nvml, const nvml_facts_t *f, gv_error_t **err);

#endif
