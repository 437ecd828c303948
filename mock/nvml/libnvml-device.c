/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: enumeration, identity, memory and telemetry queries.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "abi/host/nvidia-host.h"
#include "base/cleanup.h"
#include "mock/nvml/libnvml-internal.h"

/* ------------------------------------------------------------------ */
/* enumeration and identity                                            */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
        BEGIN_OUT(deviceCount);
        *deviceCount = S.profile->device_count;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
        BEGIN();
        if (!device || index >= S.profile->device_count)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *device = &S.gpus[index];
        /* A lost GPU still hands out its handle; every call on it says GPU_IS_LOST. */
        return mn_leave((S.lost & (1ULL << index)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
        BEGIN();
        if (!uuid || !device)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < S.profile->device_count; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                if (strcasecmp(d->uuid, uuid) == 0) {
                        *device = &S.gpus[i];
                        return mn_leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                }
                for (size_t m = 0; mn_mig_on(d) && m < d->n_mig_devices; m++)
                        if (d->mig_devices[m].uuid && strcasecmp(d->mig_devices[m].uuid, uuid) == 0) {
                                *device = &S.migs[i][m];
                                return mn_leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                        }
        }
        return mn_leave(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
        BEGIN();
        if (!pciBusId || !device)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned dom, bus, dev, fn = 0;
        int n = -1;
        if (sscanf(pciBusId, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) != 4 || n < 0 || pciBusId[n]) {
                n = -1;
                if (sscanf(pciBusId, "%x:%x.%x%n", &bus, &dev, &fn, &n) != 3 || n < 0 || pciBusId[n])
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
                dom = 0;
        }
        for (unsigned i = 0; i < S.profile->device_count; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                if (d->pci_domain == dom && d->pci_bus == bus && d->pci_device == dev && fn == 0) {
                        *device = &S.gpus[i];
                        return mn_leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                }
        }
        return mn_leave(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
        DEVICE_QUERY(ANY_HANDLE, device, NO_OUT, 0);
        if (m < 0)
                return mn_leave(mn_copy_str(name, length, d->name));
        const gv_mock_mig_device_t *md = &d->mig_devices[m];
        _cleanup_free_ char *s = NULL;
        if (asprintf(&s, "%s MIG %s", d->name, md->ci_profile ? md->ci_profile : md->profile) < 0)
                return mn_leave(NVML_ERROR_MEMORY);
        return mn_leave(mn_copy_str(name, length, s));
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
        DEVICE_QUERY(ANY_HANDLE, device, NO_OUT, 0);
        return mn_leave(mn_copy_str(uuid, length, m < 0 ? d->uuid : d->mig_devices[m].uuid));
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
        DEVICE_QUERY(GPU_HANDLE, device, index, 0);
        *index = g;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
        DEVICE_QUERY(GPU_HANDLE, device, minorNumber, GV_MOCK_FIELD_MINOR_NUMBER);
        *minorNumber = d->minor_number;
        return mn_leave(NVML_SUCCESS);
}

void mn_fill_pci(nvmlPciInfo_t *pci, unsigned domain, unsigned bus, unsigned dev, unsigned device_id,
                     unsigned subsystem)
{
        memset(pci, 0, sizeof(*pci));
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", domain & 0xffff, bus & 0xff,
                 dev & 0xff);
        snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", domain, bus & 0xff, dev & 0xff);
        pci->domain = domain;
        pci->bus = bus;
        pci->device = dev;
        pci->pciDeviceId = (device_id << 16) | GV_PCI_VENDOR_NVIDIA;
        pci->pciSubSystemId = subsystem;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        /*
         * As the real driver does, the PCI info of a lost GPU's handle still
         * answers, from the profile's bus id: it is how nvidia-smi and the
         * validator name the GPU that fell off the bus.
         */
        unsigned lg;
        int lm;
        pthread_mutex_lock(&S.lock);
        if (S.refcount && mn_resolve(device, &lg, &lm) == NVML_ERROR_GPU_IS_LOST) {
                if (!pci)
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
                const gv_mock_device_t *ld = mn_gpu_at(lg);
                mn_fill_pci(pci, ld->pci_domain, ld->pci_bus, ld->pci_device, ld->pci_device_id, ld->pci_subsystem_id);
                return mn_leave(NVML_SUCCESS);
        }
        pthread_mutex_unlock(&S.lock);
        DEVICE_QUERY(ANY_HANDLE, device, pci, 0);
        mn_fill_pci(pci, d->pci_domain, d->pci_bus, d->pci_device, d->pci_device_id, d->pci_subsystem_id);
        return mn_leave(NVML_SUCCESS);
}

/* Total, reserved and used MiB of a GPU or MIG device. */
static void memory_of(const gv_mock_device_t *d, int m, unsigned long long *total, unsigned long long *reserved,
                      unsigned long long *used)
{
        if (m >= 0) {
                *total = d->mig_devices[m].memory_mib;
                *reserved = 0;
                *used = 0;
                for (size_t i = 0; i < d->n_processes; i++)
                        if (d->processes[i].gi_id == d->mig_devices[m].gi_id &&
                            d->processes[i].ci_id == d->mig_devices[m].ci_id)
                                *used += d->processes[i].used_memory_mib;
                if (*used > *total)
                        *used = *total;
                return;
        }
        *total = d->memory_total_mib;
        *reserved = d->memory_reserved_mib;
        *used = d->memory_used_mib;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, memory, 0);
        unsigned long long t, res, u;
        memory_of(d, m, &t, &res, &u);
        /* Version 1 counts the driver's reservation as used. */
        memory->total = t * MIB;
        memory->used = (u + res) * MIB;
        memory->free = (t - u - res) * MIB;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, memory, 0);
        if (memory->version != nvmlMemory_v2)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        unsigned long long t, res, u;
        memory_of(d, m, &t, &res, &u);
        memory->total = t * MIB;
        memory->reserved = res * MIB;
        memory->used = u * MIB;
        memory->free = (t - u - res) * MIB;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
        DEVICE_QUERY(ANY_HANDLE, device, major, 0);
        if (!minor)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *major = d->cuda_cc_major;
        *minor = d->cuda_cc_minor;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
        DEVICE_QUERY(ANY_HANDLE, device, arch, 0);
        *arch = d->architecture;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
        DEVICE_QUERY(ANY_HANDLE, device, type, 0);
        *type = (nvmlBrandType_t) d->brand;
        return mn_leave(NVML_SUCCESS);
}

static nvmlReturn_t string_field(nvmlDevice_t device, size_t off, uint32_t bit, char *buf, unsigned length)
{
        DEVICE_QUERY(ANY_HANDLE, device, buf, 0);
        const char *s = *(char *const *) ((const char *) d + off);
        if (mn_unsup(d, bit) || !s)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        return mn_leave(mn_copy_str(buf, length, s));
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, serial), GV_MOCK_FIELD_SERIAL, serial, length);
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, vbios_version), GV_MOCK_FIELD_VBIOS, version, length);
}

nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, board_part_number), GV_MOCK_FIELD_BOARD_PART_NUMBER,
                            partNumber, length);
}

/* ------------------------------------------------------------------ */
/* telemetry                                                           */

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
        DEVICE_QUERY(ANY_HANDLE, device, temp, GV_MOCK_FIELD_TEMPERATURE);
        if (sensorType != NVML_TEMPERATURE_GPU)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *temp = d->temperature_c;
        return mn_leave(NVML_SUCCESS);
}

/* The versioned query nvitop prefers: the same reading in an nvmlTemperature_v1_t. */
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
        DEVICE_QUERY(ANY_HANDLE, device, temperature, 0);
        if (temperature->version != nvmlTemperature_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (mn_unsup(d, GV_MOCK_FIELD_TEMPERATURE))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        if (temperature->sensorType != NVML_TEMPERATURE_GPU)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        temperature->temperature = (int) d->temperature_c;
        return mn_leave(NVML_SUCCESS);
}

SCALAR_GETTER(nvmlDeviceGetPowerUsage, unsigned int, power, GV_MOCK_FIELD_POWER_USAGE, d->power_usage_mw)
SCALAR_GETTER(nvmlDeviceGetPowerManagementLimit, unsigned int, limit, GV_MOCK_FIELD_POWER_LIMIT, d->power_limit_mw)
SCALAR_GETTER(nvmlDeviceGetPowerManagementDefaultLimit, unsigned int, defaultLimit, GV_MOCK_FIELD_POWER_LIMIT,
              d->power_default_limit_mw)
SCALAR_GETTER(nvmlDeviceGetEnforcedPowerLimit, unsigned int, limit, GV_MOCK_FIELD_POWER_LIMIT, d->power_limit_mw)
SCALAR_GETTER(nvmlDeviceGetFanSpeed, unsigned int, speed, GV_MOCK_FIELD_FAN, d->fan_speed)
SCALAR_GETTER(nvmlDeviceGetPersistenceMode, nvmlEnableState_t, mode, GV_MOCK_FIELD_PERSISTENCE,
              d->persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED)
SCALAR_GETTER(nvmlDeviceGetComputeMode, nvmlComputeMode_t, mode, GV_MOCK_FIELD_COMPUTE_MODE, d->compute_mode)
SCALAR_GETTER(nvmlDeviceGetPerformanceState, nvmlPstates_t, pState, GV_MOCK_FIELD_PSTATE, d->pstate)
/* R580 deprecates the display mode query on every model: each 580+ capture (H100 580.105.08, GB200 and GB300
 * 580.173.02, RTX A5000 590.44.01, L40S and T4 595.91.07) prints "Requested functionality has been deprecated";
 * the 510-535 captures answer Enabled or Disabled. */
nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display)
{
        DEVICE_QUERY(ANY_HANDLE, device, display, GV_MOCK_FIELD_DISPLAY);
        if (mn_driver_branch() >= 580)
                return mn_leave(NVML_ERROR_DEPRECATED);
        *display = d->display_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return mn_leave(NVML_SUCCESS);
}
SCALAR_GETTER(nvmlDeviceGetDisplayActive, nvmlEnableState_t, isActive, GV_MOCK_FIELD_DISPLAY,
              d->display_active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED)

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit,
                                                          unsigned int *maxLimit)
{
        DEVICE_QUERY(ANY_HANDLE, device, minLimit, GV_MOCK_FIELD_POWER_LIMIT);
        if (!maxLimit)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *minLimit = d->power_min_limit_mw;
        *maxLimit = d->power_max_limit_mw;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t mn_clock_query(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock, bool max)
{
        DEVICE_QUERY(ANY_HANDLE, device, clock, GV_MOCK_FIELD_CLOCKS);
        switch (type) {
        case NVML_CLOCK_GRAPHICS: *clock = max ? d->max_clock_graphics_mhz : d->clock_graphics_mhz; break;
        case NVML_CLOCK_SM: *clock = max ? d->max_clock_sm_mhz : d->clock_sm_mhz; break;
        case NVML_CLOCK_MEM: *clock = max ? d->max_clock_mem_mhz : d->clock_mem_mhz; break;
        case NVML_CLOCK_VIDEO: *clock = max ? d->max_clock_video_mhz : d->clock_video_mhz; break;
        default: return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return mn_clock_query(device, type, clock, false);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return mn_clock_query(device, type, clock, true);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
        DEVICE_QUERY(ANY_HANDLE, device, utilization, GV_MOCK_FIELD_UTILIZATION);
        if (mn_mig_on(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* as on real MIG-enabled GPUs */
        utilization->gpu = d->utilization_gpu;
        utilization->memory = d->utilization_memory;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
        DEVICE_QUERY(ANY_HANDLE, device, current, GV_MOCK_FIELD_ECC);
        if (!pending)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *current = d->ecc_current ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        *pending = d->ecc_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return mn_leave(NVML_SUCCESS);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlDeviceGetCount, nvmlDeviceGetCount_v2)
GV_MOCK_ALIAS(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2)
GV_MOCK_ALIAS(nvmlDeviceGetPciInfo, nvmlDeviceGetPciInfo_v3)
GV_MOCK_ALIAS(nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo_v3)
GV_MOCK_ALIAS(nvmlDeviceGetHandleByPciBusId, nvmlDeviceGetHandleByPciBusId_v2)
