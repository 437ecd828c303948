/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tiny stand-in for libnvidia-ml.so.1, private to the components tests, so
 * that each fault is one environment variable away and the tests do not
 * depend on the full mock (mock/nvml).  Everything is read from the
 * environment at call time; there is no state.
 *   FAKE_NVML_INIT_RC     return code of nvmlInit_v2 / nvmlInitWithFlags (0)
 *   FAKE_NVML_COUNT       number of GPUs (2)
 *   FAKE_NVML_LOST_INDEX  this GPU answers NVML_ERROR_GPU_IS_LOST to GetName
 *   FAKE_NVML_MIG         "enabled-empty" or "enabled-3": MIG on every GPU
 *   FAKE_NVML_INIT_LOG    a file that nvmlInit* appends "init\n" / "init-no-attach\n" to
 *   FAKE_NVML_FABRIC      fabric of each GPU, comma-separated by index (the last entry repeats):
 *                         STATE[:STATUS] with STATE a number (1 NOT_STARTED, 2 IN_PROGRESS,
 *                         3 COMPLETED) and STATUS an NVML return number, or "none" for
 *                         NVML_ERROR_NOT_SUPPORTED (a PCIe card); unset: NOT_SUPPORTED
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/nvml/nvml-abi.h"

#define GV_FAKE_PROTO(name, params) __attribute__((visibility("default"))) nvmlReturn_t name params;
GV_NVML_FUNCTIONS(GV_FAKE_PROTO)
#undef GV_FAKE_PROTO
__attribute__((visibility("default"))) const char *nvmlErrorString(nvmlReturn_t result);

static long env_long(const char *name, long dflt)
{
        const char *v = getenv(name);
        return v && *v ? strtol(v, NULL, 10) : dflt;
}

static nvmlDevice_t handle_of(unsigned i)
{
        return (nvmlDevice_t) (uintptr_t) (0x1000 + i);
}

static long index_of(nvmlDevice_t d)
{
        return (long) ((uintptr_t) d - 0x1000);
}

static void log_init(const char *what)
{
        const char *p = getenv("FAKE_NVML_INIT_LOG");
        if (!p)
                return;
        FILE *f = fopen(p, "a");
        if (f) {
                fprintf(f, "%s\n", what);
                fclose(f);
        }
}

nvmlReturn_t nvmlInit_v2(void)
{
        log_init("init");
        return (nvmlReturn_t) env_long("FAKE_NVML_INIT_RC", 0);
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
        log_init(flags & NVML_INIT_FLAG_NO_ATTACH ? "init-no-attach" : "init");
        return (nvmlReturn_t) env_long("FAKE_NVML_INIT_RC", 0);
}

nvmlReturn_t nvmlShutdown(void)
{
        return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
        switch (result) {
        case NVML_SUCCESS:
                return "Success";
        case NVML_ERROR_NO_PERMISSION:
                return "Insufficient Permissions";
        case NVML_ERROR_DRIVER_NOT_LOADED:
                return "Driver Not Loaded";
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                return "RM has detected an NVML/RM version mismatch";
        case NVML_ERROR_GPU_IS_LOST:
                return "GPU is lost";
        default:
                return "Unknown Error";
        }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
        snprintf(version, length, "550.163.01");
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
        *v = 12040;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
        *count = (unsigned) env_long("FAKE_NVML_COUNT", 2);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
        if (index >= (unsigned) env_long("FAKE_NVML_COUNT", 2))
                return NVML_ERROR_INVALID_ARGUMENT;
        *device = handle_of(index);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        memset(pci, 0, sizeof(*pci));
        snprintf(pci->busId, sizeof(pci->busId), "00000000:%02lX:00.0", 0x10 + index_of(device));
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
        if (index_of(device) == env_long("FAKE_NVML_LOST_INDEX", -1))
                return NVML_ERROR_GPU_IS_LOST;
        snprintf(name, length, "NVIDIA A100-SXM4-40GB");
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
        snprintf(uuid, length, "GPU-00000000-0000-0000-0000-%012ld", index_of(device));
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor)
{
        *minor = (unsigned) index_of(device);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *cur, unsigned int *pending)
{
        (void) device;
        const char *m = getenv("FAKE_NVML_MIG");
        *cur = *pending = m && strncmp(m, "enabled", 7) == 0;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
        (void) device;
        *count = 7;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *mig)
{
        const char *m = getenv("FAKE_NVML_MIG");
        if (m && strcmp(m, "enabled-3") == 0 && index < 3) {
                *mig = (nvmlDevice_t) (uintptr_t) (0x100000 + (uintptr_t) index_of(device) * 16 + index);
                return NVML_SUCCESS;
        }
        return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info)
{
        const char *v = getenv("FAKE_NVML_FABRIC");
        if (!v || !*v)
                return NVML_ERROR_NOT_SUPPORTED;
        if (info->version != nvmlGpuFabricInfo_v2 && info->version != nvmlGpuFabricInfo_v3)
                return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        const char *e = v;
        for (long i = 0; i < index_of(device); i++) {
                const char *c = strchr(e, ',');
                if (!c)
                        break;
                e = c + 1;
        }
        if (strncmp(e, "none", 4) == 0)
                return NVML_ERROR_NOT_SUPPORTED;
        char *end = NULL;
        unsigned state = (unsigned) strtoul(e, &end, 10);
        unsigned status = end && *end == ':' ? (unsigned) strtoul(end + 1, NULL, 10)
                          : state == 3   ? 0
                                         : (unsigned) NVML_ERROR_NOT_READY;
        info->state = (nvmlGpuFabricState_t) state;
        info->status = (nvmlReturn_t) status;
        return NVML_SUCCESS;
}
