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
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
        ENTER_DEV_ARGS(!device, ordinal);
        *device = ordinal;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
        ENTER_DEV_ARGS(!name || len <= 0, dev);
        snprintf(name, (size_t) len, "%s", S.devs[dev].name);
        return mc_leave(CUDA_SUCCESS);
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
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
        /* _v2 (CUDA 11.4) gives a MIG device its own UUID, as the mock always does */
        return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        ENTER_DEV_ARGS(!bytes, dev);
        *bytes = (size_t) S.devs[dev].total;
        return mc_leave(CUDA_SUCCESS);
}

/*
 * Limits per compute capability: CUDA C++ Programming Guide, "Compute
 * Capabilities", table "Technical Specifications per Compute Capability"
 * (threads, blocks and shared memory per multiprocessor, shared memory a
 * block may opt in to), and for the L2 cache the architecture's datacenter
 * part per NVIDIA's datasheets (T4, A100, A10, L40S, H100, B200, RTX PRO 6000).
 */
typedef struct arch {
        int cc;                 /* 10 * major + minor, the first capability the row is for */
        int threads_per_sm, blocks_per_sm;
        int shared_per_sm, shared_optin; /* bytes */
        int l2;                 /* bytes */
        int fp64_ratio;         /* single- to double-precision throughput */
} arch_t;

static const arch_t arches[] = {
        { 50, 2048, 32, 65536, 49152, 2097152, 32 },
        { 60, 2048, 32, 65536, 49152, 4194304, 2 },
        { 61, 2048, 32, 98304, 49152, 3145728, 32 },
        { 70, 2048, 32, 98304, 98304, 6291456, 2 },
        { 75, 1024, 16, 65536, 65536, 4194304, 32 },
        { 80, 2048, 32, 167936, 166912, 41943040, 2 },
        { 86, 1536, 16, 102400, 101376, 6291456, 64 },
        { 87, 1536, 16, 167936, 166912, 4194304, 64 },
        { 89, 1536, 24, 102400, 101376, 100663296, 64 },
        { 90, 2048, 32, 233472, 232448, 52428800, 2 },
        { 100, 2048, 32, 233472, 232448, 132120576, 2 },
        { 120, 1536, 32, 102400, 101376, 134217728, 64 },
};

/* The row for @dev: the last one whose capability is not above the device's. */
static const arch_t *arch_of(int dev)
{
        int cc = S.devs[dev].cc_major * 10 + S.devs[dev].cc_minor;
        const arch_t *a = &arches[0];
        for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
                if (arches[i].cc <= cc)
                        a = &arches[i];
        return a;
}

int mc_max_shared_per_block_optin(int dev)
{
        return arch_of(dev)->shared_optin;
}

int mc_max_threads_per_sm(int dev)
{
        return arch_of(dev)->threads_per_sm;
}

/*
 * Attributes every GPU the profiles describe (compute capability 7.5 and
 * later, Linux, no display) answers with the same value: the limits of the
 * Programming Guide's table and what the Linux driver supports.  0 is "not
 * supported" (Windows and graphics interop, MPS, features of systems with
 * Grace CPUs or NVSwitch multicast, which the profiles do not model).
 */
static const struct {
        CUdevice_attribute attr;
        int value;
} fixed[] = {
        { CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024 },
        { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024 },
        { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024 },
        { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64 },
        { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647 },
        { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535 },
        { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535 },
        { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152 },
        { CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536 },
        { CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32 },
        { CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2147483647 },
        { CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536 },
        { CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512 },
        { CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 1 },
        { CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 131072 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, 131072 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, 65536 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, 2048 },
        { CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, 512 },
        { CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1 },
        { CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 2 },
        { CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, 2048 },
        { CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, 1 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, 8192 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, 8192 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, 32768 },
        { CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 32 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS, 2046 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, 131072 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, 65536 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, 16384 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS, 2048 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS, 2048 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS, 2046 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, 268435456 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, 131072 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, 65000 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, 2097120 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT, 32768 },
        { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH, 32768 },
        { CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536 },
        { CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1 },
        { CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1 },
        { CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 1 },
        { CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 1 },
        { CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1 },
        { CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, 1 },
        { CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 1 },
        { CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_NUMA_ID, -1 },
        { CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, -1 },
        { CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1 },
        { CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 1 },
};

/* An NVML clock in kHz, 0 when NVML has none. */
static int clock_khz(const mock_dev_t *d, nvmlClockType_t type)
{
        unsigned mhz = 0;
        if (!S.nvml->nvmlDeviceGetMaxClockInfo || S.nvml->nvmlDeviceGetMaxClockInfo(d->parent, type, &mhz) != NVML_SUCCESS)
                mhz = 0;
        return (int) mhz * 1000;
}

/* The value of an attribute that depends on the device; false for the others. */
// NOLINTNEXTLINE(readability-function-size): one case per attribute, as the reference lists them
static bool device_value(int dev, CUdevice_attribute attrib, int *pi)
{
        const mock_dev_t *d = &S.devs[dev];
        const arch_t *a = arch_of(dev);
        int cc = d->cc_major * 10 + d->cc_minor;
        unsigned u = 0;
        nvmlEnableState_t cur, pend;
        nvmlComputeMode_t mode;
        switch (attrib) {
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = clock_khz(d, NVML_CLOCK_SM); break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *pi = clock_khz(d, NVML_CLOCK_MEM); break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        case CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT: *pi = (int) d->sms; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
                *pi = S.nvml->nvmlDeviceGetComputeMode && S.nvml->nvmlDeviceGetComputeMode(d->parent, &mode) == NVML_SUCCESS
                              ? (mode == NVML_COMPUTEMODE_PROHIBITED         ? CU_COMPUTEMODE_PROHIBITED
                                 : mode == NVML_COMPUTEMODE_EXCLUSIVE_PROCESS ? CU_COMPUTEMODE_EXCLUSIVE_PROCESS
                                                                              : CU_COMPUTEMODE_DEFAULT)
                              : CU_COMPUTEMODE_DEFAULT;
                break;
        case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
                *pi = S.nvml->nvmlDeviceGetEccMode && S.nvml->nvmlDeviceGetEccMode(d->parent, &cur, &pend) == NVML_SUCCESS &&
                      cur == NVML_FEATURE_ENABLED;
                break;
        case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = (int) d->pci.bus; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = (int) d->pci.device; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = (int) d->pci.domain; break;
        case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: *pi = (int) d->pci.pciDeviceId; break;
        case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: *pi = (int) d->pci.pciSubSystemId; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
                *pi = S.bus_width && S.bus_width(d->parent, &u) == NVML_SUCCESS
                              ? (int) u
                              : 0;
                break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *pi = a->l2; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *pi = a->threads_per_sm; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *pi = a->blocks_per_sm; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = a->shared_per_sm; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = a->shared_optin; break;
        case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: *pi = a->fp64_ratio; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = d->cc_major; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = d->cc_minor; break;
        case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: *pi = dev; break;
        /* Ampere and later: compressible memory, persisting L2 (up to 3/4 of it), the access policy window */
        case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: *pi = cc >= 80; break;
        case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: *pi = cc >= 80 ? a->l2 / 4 * 3 : 0; break;
        case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: *pi = cc >= 80 ? 134213632 : 0; break;
        case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *pi = cc >= 80 ? 1024 : 0; break;
        /* Hopper and later: thread block clusters, tensor maps, four memory synchronisation domains */
        case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
        case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: *pi = cc >= 90; break;
        case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: *pi = cc >= 90 ? 4 : 1; break;
        default: return false;
        }
        return true;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
        ENTER_DEV_ARGS(!pi, dev);
        if ((int) attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        if (device_value(dev, attrib, pi))
                return mc_leave(CUDA_SUCCESS);
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
                if (fixed[i].attr == attrib) {
                        *pi = fixed[i].value;
                        return mc_leave(CUDA_SUCCESS);
                }
        *pi = 0; /* a feature the mock's GPUs do not have (see fixed[]) */
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
        ENTER_DEV_ARGS(!major || !minor, dev);
        *major = S.devs[dev].cc_major;
        *minor = S.devs[dev].cc_minor;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
        if (!dev || !pciBusId)
                return CUDA_ERROR_INVALID_VALUE;
        unsigned domain = 0, bus = 0, device = 0, fn = 0;
        /* "[domain]:[bus]:[device].[function]" or "[bus]:[device].[function]", hexadecimal */
        if (sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &device, &fn) != 4) {
                domain = 0;
                if (sscanf(pciBusId, "%x:%x.%x", &bus, &device, &fn) != 3)
                        return CUDA_ERROR_INVALID_VALUE;
        }
        ENTER();
        for (int i = 0; i < S.n; i++)
                if (S.devs[i].pci.domain == domain && S.devs[i].pci.bus == bus && S.devs[i].pci.device == device) {
                        *dev = i;
                        return mc_leave(CUDA_SUCCESS);
                }
        return mc_leave(CUDA_ERROR_INVALID_DEVICE);
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
        ENTER_DEV_ARGS(!canAccessPeer, dev);
        if (peerDev < 0 || peerDev >= S.n)
                return mc_leave(CUDA_ERROR_INVALID_DEVICE);
        /* the GPUs of one node reach each other (NVLink or PCIe peer to peer); a GPU is no peer of itself */
        *canAccessPeer = dev != peerDev;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
        ENTER_DEV_ARGS(!pciBusId || len <= 0, dev);
        const nvmlPciInfo_t *p = &S.devs[dev].pci;
        snprintf(pciBusId, (size_t) len, "%04X:%02X:%02X.0", p->domain, p->bus, p->device);
        return mc_leave(CUDA_SUCCESS);
}


