/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: fabric state, topology common ancestor, NVLink state and remote PCI info.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stdio.h>
#include <string.h>

#include "mock/nvml/libnvml-internal.h"

/* ------------------------------------------------------------------ */
/* fabric, topology, NVLink                                            */

/* The fabric state of @d, after MOCK_NVML_FABRIC_STATE; NOT_SUPPORTED when it has none. */
static nvmlReturn_t fabric_state(const gv_mock_device_t *d, unsigned char *state)
{
        if (mn_unsup(d, GV_MOCK_FIELD_FABRIC) || d->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                return NVML_ERROR_NOT_SUPPORTED;
        if (S.fabric_override == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                return NVML_ERROR_NOT_SUPPORTED;
        *state = (unsigned char) (S.fabric_override > 0 ? S.fabric_override : (int) d->fabric_state);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device, gpuFabricInfo, 0);
        unsigned char st;
        nvmlReturn_t r = fabric_state(d, &st);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        memset(gpuFabricInfo, 0, sizeof(*gpuFabricInfo));
        memcpy(gpuFabricInfo->clusterUuid, d->fabric_cluster_uuid, NVML_GPU_FABRIC_UUID_LEN);
        gpuFabricInfo->status = st == NVML_GPU_FABRIC_STATE_COMPLETED ? (nvmlReturn_t) d->fabric_status
                                                                      : NVML_ERROR_NOT_READY;
        gpuFabricInfo->cliqueId = d->fabric_clique_id;
        gpuFabricInfo->state = st;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
        BEGIN();
        gv_mock_device_t *d;
        unsigned char st;
        if (!gpuFabricInfo) {
                nvmlReturn_t r = mn_resolve_physical(device, &d, NULL);
                return mn_leave(r != NVML_SUCCESS ? r : NVML_ERROR_INVALID_ARGUMENT);
        }
        unsigned v = gpuFabricInfo->version;
        if (v != nvmlGpuFabricInfo_v2 && v != nvmlGpuFabricInfo_v3)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        /* Here the version is checked before the handle. */
        nvmlReturn_t r = mn_resolve_physical(device, &d, NULL);
        if (r == NVML_SUCCESS)
                r = fabric_state(d, &st);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        /* Write only as many bytes as the caller's version has. */
        nvmlGpuFabricInfo_v2_t *v2 = (nvmlGpuFabricInfo_v2_t *) (void *) gpuFabricInfo;
        memset(v2, 0, sizeof(*v2));
        v2->version = v;
        memcpy(v2->clusterUuid, d->fabric_cluster_uuid, NVML_GPU_FABRIC_UUID_LEN);
        v2->status = st == NVML_GPU_FABRIC_STATE_COMPLETED ? (nvmlReturn_t) d->fabric_status : NVML_ERROR_NOT_READY;
        v2->cliqueId = d->fabric_clique_id;
        v2->state = st;
        v2->healthMask = 0;
        if (v == nvmlGpuFabricInfo_v3)
                gpuFabricInfo->healthSummary = 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device1, NO_OUT, 0);
        gv_mock_device_t *b;
        unsigned gb;
        nvmlReturn_t r = mn_resolve_physical(device2, &b, &gb);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        if (!pathInfo)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        /* HGX-like layout: pairs share a PCIe switch, halves a CPU socket. */
        if (g == gb)
                *pathInfo = NVML_TOPOLOGY_INTERNAL;
        else if (g / 2 == gb / 2)
                *pathInfo = NVML_TOPOLOGY_MULTIPLE;
        else if (g / 4 == gb / 4)
                *pathInfo = NVML_TOPOLOGY_NODE;
        else
                *pathInfo = NVML_TOPOLOGY_SYSTEM;
        return mn_leave(NVML_SUCCESS);
}

/* INVALID_ARGUMENT for a link number NVML never has, NOT_SUPPORTED for a link @d lacks. */
nvmlReturn_t mn_nvlink_check(const gv_mock_device_t *d, unsigned link)
{
        if (link >= NVML_NVLINK_MAX_LINKS)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (mn_unsup(d, GV_MOCK_FIELD_NVLINK) || link >= d->nvlink_count)
                return NVML_ERROR_NOT_SUPPORTED;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
        DEVICE_QUERY(GPU_HANDLE, device, isActive, 0);
        nvmlReturn_t r = mn_nvlink_check(d, link);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        *isActive = d->nvlink_active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
        DEVICE_QUERY(GPU_HANDLE, device, pci, 0);
        nvmlReturn_t r = mn_nvlink_check(d, link);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        /* The far end is an NVSwitch (PCI device 0x1AF1); links fan out over six switches. */
        mn_fill_pci(pci, 0, 0x01 + link % 6, 0, 0x1AF1, 0x16A010DE);
        return mn_leave(NVML_SUCCESS);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlDeviceGetNvLinkRemotePciInfo, nvmlDeviceGetNvLinkRemotePciInfo_v2)
