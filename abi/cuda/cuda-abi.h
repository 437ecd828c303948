/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUDA Driver API contract: the types, result codes and entry points that
 * `gpu-validator cuda-check` (src/cudacheck, through cuda-loader.h) calls and
 * the mock libcuda.so.1 (mock/cuda) defines, in one place so the two can never
 * drift apart.  Our own declarations for x86-64 and aarch64 Linux (64-bit
 * device pointers, the `_v2` ABI), written from NVIDIA's CUDA Driver API
 * reference (docs.nvidia.com/cuda/cuda-driver-api: "Data types used by CUDA
 * driver", "Error Handling", "Initialization", "Device Management", "Primary
 * Context Management", "Context Management", "Module Management", "Library
 * Management", "Memory Management", "Stream Management", "Event Management",
 * "Execution Control", "Driver Entry Point Access"); enumerator names and
 * values are those of the CUDA 13 reference.  No NVIDIA header is included
 * or copied.
 *
 * One list, GV_CUDA_FUNCTIONS, names every entry point under its exported
 * symbol with its parameter list: the loader turns it into a typed dlopen
 * table, the mock into prototypes its definitions must match.
 */
#ifndef GV_ABI_CUDA_ABI_H
#define GV_ABI_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* CUresult (enum cudaError_enum): X(code, value, cuGetErrorString text) in cuda-results.h. */
#include "abi/cuda/cuda-results.h"

typedef int CUdevice;                    /* device ordinal (CUdevice_v1) */
typedef unsigned long long CUdeviceptr;  /* 64-bit device address (CUdeviceptr_v2) */
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;    /* NULL: the legacy default stream */
typedef struct CUevent_st *CUevent;
typedef struct CUuuid_st {
        char bytes[16];
} CUuuid;

/* Special stream handles ("Stream Management"). */
#define CU_STREAM_LEGACY ((CUstream) 0x1)
#define CU_STREAM_PER_THREAD ((CUstream) 0x2)
/* cuStreamCreate flags. */
#define CU_STREAM_DEFAULT 0x0
#define CU_STREAM_NON_BLOCKING 0x1
/* cuEventCreate flags. */
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_BLOCKING_SYNC 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_EVENT_INTERPROCESS 0x4
/* cuMemHostAlloc flags. */
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04
/* cuLaunchKernel's `extra` array: the parameter buffer and its size, closed by END. */
#define CU_LAUNCH_PARAM_END ((void *) 0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *) 0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *) 0x02)

/* cuGetProcAddress flags and status ("Driver Entry Point Access"). */
#define CU_GET_PROC_ADDRESS_DEFAULT 0
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM (1 << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1 << 1)
typedef enum CUdriverProcAddressQueryResult_enum {
        CU_GET_PROC_ADDRESS_SUCCESS = 0,
        CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
        CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

/* cuCtxCreate_v4's parameters (CUDA 12.5); the mock accepts them empty. */
typedef struct CUexecAffinityParam_st CUexecAffinityParam;
typedef struct CUctxCigParam_st CUctxCigParam;
typedef struct CUctxCreateParams_st {
        CUexecAffinityParam *execAffinityParams;
        int numExecAffinityParams;
        CUctxCigParam *cigParams;
} CUctxCreateParams;

/* JIT options of cuModuleLoadDataEx / cuLibraryLoadData (CUjit_option), the ones the mock reads. */
typedef enum CUjit_option_enum {
        CU_JIT_MAX_REGISTERS = 0,
        CU_JIT_THREADS_PER_BLOCK = 1,
        CU_JIT_WALL_TIME = 2,
        CU_JIT_INFO_LOG_BUFFER = 3,
        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
        CU_JIT_ERROR_LOG_BUFFER = 5,
        CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
        CU_JIT_OPTIMIZATION_LEVEL = 7,
        CU_JIT_TARGET_FROM_CUCONTEXT = 8,
        CU_JIT_TARGET = 9,
        CU_JIT_FALLBACK_STRATEGY = 10,
        CU_JIT_GENERATE_DEBUG_INFO = 11,
        CU_JIT_LOG_VERBOSE = 12,
        CU_JIT_GENERATE_LINE_INFO = 13,
        CU_JIT_CACHE_MODE = 14,
        CU_JIT_NUM_OPTIONS = 36,
} CUjit_option;
typedef enum CUlibraryOption_enum {
        CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
        CU_LIBRARY_BINARY_IS_PRESERVED = 1,
} CUlibraryOption;

/* cuFuncGetAttribute (CUfunction_attribute). */
typedef enum CUfunction_attribute_enum {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
        CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
        CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
        CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
} CUfunction_attribute;

/* cuOccupancyMaxPotentialBlockSize's callback: dynamic shared memory for a block size. */
typedef size_t (*CUoccupancyB2DSize)(int blockSize);

/* cuDevicePrimaryCtxSetFlags / cuCtxCreate scheduling flags (CUctx_flags). */
#define CU_CTX_SCHED_AUTO 0x00
#define CU_CTX_SCHED_SPIN 0x01
#define CU_CTX_SCHED_YIELD 0x02
#define CU_CTX_SCHED_BLOCKING_SYNC 0x04
#define CU_CTX_SCHED_MASK 0x07
#define CU_CTX_MAP_HOST 0x08
#define CU_CTX_LMEM_RESIZE_TO_MAX 0x10
#define CU_CTX_COREDUMP_ENABLE 0x20
#define CU_CTX_USER_COREDUMP_ENABLE 0x40
#define CU_CTX_SYNC_MEMOPS 0x80
#define CU_CTX_FLAGS_MASK 0xFF

/* CUcomputemode (CU_DEVICE_ATTRIBUTE_COMPUTE_MODE). */
typedef enum CUcomputemode_enum {
        CU_COMPUTEMODE_DEFAULT = 0,
        CU_COMPUTEMODE_PROHIBITED = 2,
        CU_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
} CUcomputemode;

/*
 * CUdevice_attribute: every value of the CUDA 13 reference (deprecated
 * aliases that share another's number are left out).  CU_DEVICE_ATTRIBUTE_MAX
 * is one past the last.
 */
typedef enum CUdevice_attribute_enum {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
        CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
        CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
        CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
        CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
        CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15, /* deprecated: ASYNC_ENGINE_COUNT */
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
        CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
        CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
        CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
        CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29,
        CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
        CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
        CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
        CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
        CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
        CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
        CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43,
        CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44, /* deprecated */
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49,
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
        CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69, /* deprecated */
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77,
        CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
        CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
        CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
        CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
        CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
        CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
        CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
        CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
        CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
        CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
        CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
        CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92, /* deprecated */
        CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93, /* deprecated */
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94, /* deprecated */
        CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
        CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96, /* deprecated */
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
        CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
        CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
        CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
        CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104,
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
        CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107,
        CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
        CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
        CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
        CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112,
        CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
        CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114,
        CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
        CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
        CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
        CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121,
        CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123,
        CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
        CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
        CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126,
        CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127,
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
        CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129,
        CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
        CU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
        CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
        CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134,
        CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135,
        CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136,
        CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137,
        CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138,
        CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139,
        CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140,
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142,
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143,
        CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144,
        CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145,
        CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
        CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147,
        CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED = 148,
        CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT = 149,
        CU_DEVICE_ATTRIBUTE_MAX_OVERSIZED_SHARED_MEMORY_PER_BLOCK = 150,
        CU_DEVICE_ATTRIBUTE_D3D12_CIG_STREAMS_SUPPORTED = 151,
        CU_DEVICE_ATTRIBUTE_DMA_BUF_MMAP_SUPPORTED = 152,
        CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED = 153,
        CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_MULTICAST_SUPPORTED = 154,
        CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED = 155,
        CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED = 156,
        CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT = 157,
        CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_SUPPORTED_HANDLE_TYPES = 158,
        CU_DEVICE_ATTRIBUTE_VULKAN_CIG_STREAMS_SUPPORTED = 159,
        CU_DEVICE_ATTRIBUTE_TENSOR_MAP_LARGE_TENSOR_MIN_SIZE = 160,
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED = 161,
        CU_DEVICE_ATTRIBUTE_MAX,
} CUdevice_attribute;

/*
 * X(symbol, parameter list): every Driver API entry point under its exported
 * name.  Versioned names (`_v2` ... `_v4`) are separate entry points with
 * their own parameters; `_ptds` / `_ptsz` are the per-thread default stream
 * flavours of the same parameters (GV_CUDA_PTDS_FUNCTIONS).
 */
#define GV_CUDA_FUNCTIONS(X)                                                                                  \
        X(cuInit, (unsigned int flags))                                                                       \
        X(cuDriverGetVersion, (int *driverVersion))                                                           \
        X(cuGetErrorString, (CUresult error, const char **pStr))                                              \
        X(cuGetErrorName, (CUresult error, const char **pStr))                                                \
        X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags))              \
        X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,            \
                                CUdriverProcAddressQueryResult *symbolStatus))                                \
        X(cuDeviceGet, (CUdevice *device, int ordinal))                                                       \
        X(cuDeviceGetCount, (int *count))                                                                     \
        X(cuDeviceGetName, (char *name, int len, CUdevice dev))                                               \
        X(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev))                                                      \
        X(cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev))                                                   \
        X(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))                                                 \
        X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev))                           \
        X(cuDeviceComputeCapability, (int *major, int *minor, CUdevice dev))                                  \
        X(cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev))                                       \
        X(cuDeviceGetByPCIBusId, (CUdevice *dev, const char *pciBusId))                                       \
        X(cuDeviceCanAccessPeer, (int *canAccessPeer, CUdevice dev, CUdevice peerDev))                        \
        X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))                                          \
        X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                                          \
        X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                                                       \
        X(cuDevicePrimaryCtxReset, (CUdevice dev))                                                            \
        X(cuDevicePrimaryCtxReset_v2, (CUdevice dev))                                                         \
        X(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active))                       \
        X(cuDevicePrimaryCtxSetFlags, (CUdevice dev, unsigned int flags))                                     \
        X(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags))                                  \
        X(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev))                                   \
        X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))                                \
        X(cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, \
                           CUdevice dev))                                                                     \
        X(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)) \
        X(cuCtxDestroy, (CUcontext ctx))                                                                      \
        X(cuCtxDestroy_v2, (CUcontext ctx))                                                                   \
        X(cuCtxSetCurrent, (CUcontext ctx))                                                                   \
        X(cuCtxGetCurrent, (CUcontext *pctx))                                                                 \
        X(cuCtxPushCurrent, (CUcontext ctx))                                                                  \
        X(cuCtxPushCurrent_v2, (CUcontext ctx))                                                               \
        X(cuCtxPopCurrent, (CUcontext *pctx))                                                                 \
        X(cuCtxPopCurrent_v2, (CUcontext *pctx))                                                              \
        X(cuCtxGetDevice, (CUdevice *device))                                                                 \
        X(cuCtxGetDevice_v2, (CUdevice *device, CUcontext ctx))                                               \
        X(cuCtxGetApiVersion, (CUcontext ctx, unsigned int *version))                                         \
        X(cuCtxGetFlags, (unsigned int *flags))                                                               \
        X(cuCtxSynchronize, (void))                                                                           \
        X(cuCtxSynchronize_v2, (CUcontext ctx))                                                               \
        X(cuModuleLoad, (CUmodule *module, const char *fname))                                                \
        X(cuModuleLoadData, (CUmodule *module, const void *image))                                            \
        X(cuModuleLoadDataEx, (CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, \
                               void **optionValues))                                                          \
        X(cuModuleLoadFatBinary, (CUmodule *module, const void *fatCubin))                                    \
        X(cuModuleUnload, (CUmodule hmod))                                                                    \
        X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name))                          \
        X(cuModuleGetGlobal_v2, (CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name))          \
        X(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc))                       \
        X(cuOccupancyMaxPotentialBlockSize, (int *minGridSize, int *blockSize, CUfunction func,              \
                                             CUoccupancyB2DSize blockSizeToDynamicSMemSize,                   \
                                             size_t dynamicSMemSize, int blockSizeLimit))                     \
        X(cuLibraryLoadData, (CUlibrary *library, const void *code, CUjit_option *jitOptions,                 \
                              void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions, \
                              void **libraryOptionValues, unsigned int numLibraryOptions))                    \
        X(cuLibraryLoadFromFile, (CUlibrary *library, const char *fileName, CUjit_option *jitOptions,         \
                                  void **jitOptionsValues, unsigned int numJitOptions,                        \
                                  CUlibraryOption *libraryOptions, void **libraryOptionValues,                \
                                  unsigned int numLibraryOptions))                                            \
        X(cuLibraryUnload, (CUlibrary library))                                                               \
        X(cuLibraryGetKernel, (CUkernel *pKernel, CUlibrary library, const char *name))                       \
        X(cuLibraryGetModule, (CUmodule *pMod, CUlibrary library))                                            \
        X(cuLibraryGetGlobal, (CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name))        \
        X(cuKernelGetFunction, (CUfunction *pFunc, CUkernel kernel))                                          \
        X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))                                                \
        X(cuMemFree_v2, (CUdeviceptr dptr))                                                                   \
        X(cuMemGetInfo_v2, (size_t *free, size_t *total))                                                     \
        X(cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr))                     \
        X(cuMemAllocHost_v2, (void **pp, size_t bytesize))                                                    \
        X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))                                   \
        X(cuMemFreeHost, (void *p))                                                                           \
        X(cuMemHostGetDevicePointer_v2, (CUdeviceptr *pdptr, void *p, unsigned int Flags))                    \
        X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount))                                     \
        X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))                    \
        X(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))                          \
        X(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount))                  \
        X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N))                                 \
        X(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N))                               \
        X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N))                                 \
        X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))              \
        X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)) \
        X(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))   \
        X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
        X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))             \
        X(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream))           \
        X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))             \
        X(cuStreamCreate, (CUstream *phStream, unsigned int Flags))                                           \
        X(cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority))                 \
        X(cuStreamDestroy, (CUstream hStream))                                                                \
        X(cuStreamDestroy_v2, (CUstream hStream))                                                             \
        X(cuStreamSynchronize, (CUstream hStream))                                                            \
        X(cuStreamQuery, (CUstream hStream))                                                                  \
        X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags))                          \
        X(cuEventCreate, (CUevent *phEvent, unsigned int Flags))                                              \
        X(cuEventDestroy, (CUevent hEvent))                                                                   \
        X(cuEventDestroy_v2, (CUevent hEvent))                                                                \
        X(cuEventRecord, (CUevent hEvent, CUstream hStream))                                                  \
        X(cuEventSynchronize, (CUevent hEvent))                                                               \
        X(cuEventQuery, (CUevent hEvent))                                                                     \
        X(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd))                           \
        X(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd))                        \
        X(cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,  \
                           unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,            \
                           unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra))

/*
 * X(symbol, same-parameter entry point): the per-thread default stream
 * flavours (`_ptds` for synchronous calls, `_ptsz` for those that take a
 * stream), each with the parameters of the entry point it is the flavour of.
 */
#define GV_CUDA_PTDS_FUNCTIONS(X)                                                                             \
        X(cuMemcpy_ptds, cuMemcpy)                                                                            \
        X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)                                                              \
        X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)                                                              \
        X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)                                                              \
        X(cuMemsetD8_v2_ptds, cuMemsetD8_v2)                                                                  \
        X(cuMemsetD16_v2_ptds, cuMemsetD16_v2)                                                                \
        X(cuMemsetD32_v2_ptds, cuMemsetD32_v2)                                                                \
        X(cuMemcpyAsync_ptsz, cuMemcpyAsync)                                                                  \
        X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2)                                                    \
        X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2)                                                    \
        X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2)                                                    \
        X(cuMemsetD8Async_ptsz, cuMemsetD8Async)                                                              \
        X(cuMemsetD16Async_ptsz, cuMemsetD16Async)                                                            \
        X(cuMemsetD32Async_ptsz, cuMemsetD32Async)                                                            \
        X(cuStreamSynchronize_ptsz, cuStreamSynchronize)                                                      \
        X(cuStreamQuery_ptsz, cuStreamQuery)                                                                  \
        X(cuStreamWaitEvent_ptsz, cuStreamWaitEvent)                                                          \
        X(cuEventRecord_ptsz, cuEventRecord)                                                                  \
        X(cuLaunchKernel_ptsz, cuLaunchKernel)

/* The function pointer type of each entry point: cuInit_fn, cuMemAlloc_v2_fn, ... */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): 'params' is a parameter list */
#define GV_CUDA_TYPEDEF(name, params) typedef CUresult (*name##_fn) params;
GV_CUDA_FUNCTIONS(GV_CUDA_TYPEDEF)
#undef GV_CUDA_TYPEDEF

/* The soname the CUDA driver installs; dlopen() searches the usual paths for it. */
#define GV_CUDA_LIBRARY "libcuda.so.1"

#endif
