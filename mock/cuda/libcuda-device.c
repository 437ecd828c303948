// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: device queries (count, name, UUID, memory, attributes, PCI bus id).
 * Types, state and macros: libcuda-internal.h.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/libcuda-internal.h"

CUresult cuDeviceGetCount(int *count)
{
        if (!count)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        *count = S.n;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
        ENTER_DEV_ARGS(!device, ordinal);
        *device = ordinal;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
        ENTER_DEV_ARGS(!name || len <= 0, dev);
        snprintf(name, (size_t) len, "%s", S.devs[dev].name);
        return leave(CUDA_SUCCESS);
}

/* "GPU-xxxxxxxx-xxxx-..." or "MIG-..." to the 16 bytes CUDA reports. */
static void uuid_bytes(const char *s, CUuuid *u)
{
        memset(u, 0, sizeof(*u));
        const char *p = strchr(s, '-');
        p = p ? p + 1 : s;
        for (int k = 0; *p && k < 16;) {
                if (*p == '-') {
                        p++;
                        continue;
                }
                unsigned v;
                if (!isxdigit((unsigned char) p[0]) || !isxdigit((unsigned char) p[1]) || sscanf(p, "%2x", &v) != 1)
                        break;
                u->bytes[k++] = (char) v;
                p += 2;
        }
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
        ENTER_DEV_ARGS(!uuid, dev);
        uuid_bytes(S.devs[dev].uuid, uuid);
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
        return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        ENTER_DEV_ARGS(!bytes, dev);
        *bytes = (size_t) S.devs[dev].total;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
        ENTER_DEV_ARGS(!pi, dev);
        const mock_dev_t *d = &S.devs[dev];
        unsigned clk = 0;
        /* One attribute a line, as the CUDA documentation's table: equal values stay separate cases. */
        switch (attrib) {
        /* Limits every GPU since compute capability 3.0 has (CUDA C Programming Guide, "Technical Specifications"). */
        case ATTR_MAX_THREADS_PER_BLOCK: *pi = 1024; break; // NOLINT(bugprone-branch-clone): see above
        case ATTR_MAX_BLOCK_DIM_X: *pi = 1024; break;
        case ATTR_MAX_BLOCK_DIM_Y: *pi = 1024; break;
        case ATTR_MAX_BLOCK_DIM_Z: *pi = 64; break;
        case ATTR_MAX_GRID_DIM_X: *pi = 2147483647; break;
        case ATTR_MAX_GRID_DIM_Y: *pi = 65535; break; // NOLINT(bugprone-branch-clone): see above
        case ATTR_MAX_GRID_DIM_Z: *pi = 65535; break;
        case ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
        case ATTR_WARP_SIZE: *pi = 32; break;
        case ATTR_INTEGRATED: *pi = 0; break;
        case ATTR_UNIFIED_ADDRESSING: *pi = 1; break;
        case ATTR_CLOCK_RATE: /* kHz */
                if (S.nvml.nvmlDeviceGetMaxClockInfo(d->parent, NVML_CLOCK_SM, &clk) != NVML_SUCCESS)
                        clk = 0;
                *pi = (int) clk * 1000;
                break;
        case ATTR_MEMORY_CLOCK_RATE:
                if (S.nvml.nvmlDeviceGetMaxClockInfo(d->parent, NVML_CLOCK_MEM, &clk) != NVML_SUCCESS)
                        clk = 0;
                *pi = (int) clk * 1000;
                break;
        case ATTR_MULTIPROCESSOR_COUNT: *pi = (int) d->sms; break;
        case ATTR_PCI_BUS_ID: *pi = (int) d->pci.bus; break;
        case ATTR_PCI_DEVICE_ID: *pi = (int) d->pci.device; break;
        case ATTR_PCI_DOMAIN_ID: *pi = (int) d->pci.domain; break;
        case ATTR_COMPUTE_CAPABILITY_MAJOR: *pi = d->cc_major; break;
        case ATTR_COMPUTE_CAPABILITY_MINOR: *pi = d->cc_minor; break;
        default: return leave(CUDA_ERROR_INVALID_VALUE);
        }
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
        ENTER_DEV_ARGS(!major || !minor, dev);
        *major = S.devs[dev].cc_major;
        *minor = S.devs[dev].cc_minor;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
        ENTER_DEV_ARGS(!pciBusId || len <= 0, dev);
        const nvmlPciInfo_t *p = &S.devs[dev].pci;
        snprintf(pciBusId, (size_t) len, "%04X:%02X:%02X.0", p->domain, p->bus, p->device);
        return leave(CUDA_SUCCESS);
}

/* The legacy names of the functions above. */
ALIAS(cuDeviceTotalMem, cuDeviceTotalMem_v2)
