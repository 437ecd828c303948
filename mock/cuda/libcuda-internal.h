// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1's internal types, state and entry-point macros,
 * shared by its files (libcuda.c describes the library):
 *
 *   libcuda.c          NVML loading, the visible devices, cuInit, cuDriverGetVersion
 *   libcuda-device.c   device queries (name, UUID, memory, attributes, PCI bus id)
 *   libcuda-context.c  primary and created contexts, synchronisation, memory
 *   libcuda-module.c   PTX modules, kernel launch on the CPU, error text
 *
 * Nothing here is exported: the library is built with hidden visibility and
 * exports the entry points marked EXPORT.
 */
#ifndef GV_MOCK_CUDA_LIBCUDA_INTERNAL_H
#define GV_MOCK_CUDA_LIBCUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/nvml/nvml-abi.h"

#define EXPORT __attribute__((visibility("default")))

/* CUresult values (Driver API "Data types": enum cudaError_enum). */
typedef enum {
        CUDA_SUCCESS = 0,
        CUDA_ERROR_INVALID_VALUE = 1,
        CUDA_ERROR_OUT_OF_MEMORY = 2,
        CUDA_ERROR_NOT_INITIALIZED = 3,
        CUDA_ERROR_DEINITIALIZED = 4,
        CUDA_ERROR_NO_DEVICE = 100,
        CUDA_ERROR_INVALID_DEVICE = 101,
        CUDA_ERROR_INVALID_IMAGE = 200,
        CUDA_ERROR_INVALID_CONTEXT = 201,
        CUDA_ERROR_INVALID_PTX = 218,
        CUDA_ERROR_INVALID_HANDLE = 400,
        CUDA_ERROR_NOT_FOUND = 500,
        CUDA_ERROR_ILLEGAL_ADDRESS = 700,
        CUDA_ERROR_LAUNCH_FAILED = 719,
        CUDA_ERROR_NOT_SUPPORTED = 801,
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
        CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct {
        char bytes[16];
} CUuuid;

/* CUdevice_attribute values the mock answers (Driver API "CUdevice_attribute"). */
enum {
        ATTR_MAX_THREADS_PER_BLOCK = 1,
        ATTR_MAX_BLOCK_DIM_X = 2,
        ATTR_MAX_BLOCK_DIM_Y = 3,
        ATTR_MAX_BLOCK_DIM_Z = 4,
        ATTR_MAX_GRID_DIM_X = 5,
        ATTR_MAX_GRID_DIM_Y = 6,
        ATTR_MAX_GRID_DIM_Z = 7,
        ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
        ATTR_WARP_SIZE = 10,
        ATTR_CLOCK_RATE = 13,
        ATTR_MULTIPROCESSOR_COUNT = 16,
        ATTR_INTEGRATED = 18,
        ATTR_PCI_BUS_ID = 33,
        ATTR_PCI_DEVICE_ID = 34,
        ATTR_MEMORY_CLOCK_RATE = 36,
        ATTR_UNIFIED_ADDRESSING = 41,
        ATTR_PCI_DOMAIN_ID = 50,
        ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
        ATTR_COMPUTE_CAPABILITY_MINOR = 76,
};

#define MAX_DEVICES 64
#define MAX_ENTRIES 16

/* One CUDA device: a full GPU or a MIG device, as NVML reports it. */
typedef struct mock_dev {
        nvmlDevice_t nvml;   /* the GPU or MIG handle */
        nvmlDevice_t parent; /* the physical GPU */
        unsigned gpu_index;  /* NVML index of the physical GPU */
        int mig_index;       /* MIG device index on it, -1 for a full GPU */
        bool lost;           /* NVML could not describe it (GPU_IS_LOST): cuInit fails when it is visible */
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        unsigned long long total; /* bytes */
        unsigned long long used;  /* bytes allocated through cuMemAlloc */
        int cc_major, cc_minor;
        unsigned sms;
        nvmlPciInfo_t pci;
} mock_dev_t;

struct CUctx_st {
        int device;
        CUresult sticky; /* an asynchronous error: returned by synchronize and later calls */
};

/* What a launch can run: the instruction sequence of one known kernel. */
typedef enum kernel_kind { KERNEL_UNKNOWN, KERNEL_VECTOR_ADD_F32 } kernel_kind_t;

struct CUfunc_st {
        char name[128];
        kernel_kind_t kind;
        struct CUmod_st *module;
};

struct CUmod_st {
        size_t n;
        struct CUfunc_st entries[MAX_ENTRIES];
};

typedef struct alloc {
        struct alloc *next;
        void *p;
        size_t bytes;
        int device;
        struct CUctx_st *ctx; /* the context it was made in */
} alloc_t;

typedef struct nvml_api {
        void *dl;
#define M_FIELD(name, params) name##_fn name;
        M_FIELD(nvmlInit_v2, x)
        M_FIELD(nvmlShutdown, x)
        M_FIELD(nvmlSystemGetCudaDriverVersion, x)
        M_FIELD(nvmlDeviceGetCount_v2, x)
        M_FIELD(nvmlDeviceGetHandleByIndex_v2, x)
        M_FIELD(nvmlDeviceGetName, x)
        M_FIELD(nvmlDeviceGetUUID, x)
        M_FIELD(nvmlDeviceGetMemoryInfo, x)
        M_FIELD(nvmlDeviceGetCudaComputeCapability, x)
        M_FIELD(nvmlDeviceGetPciInfo_v3, x)
        M_FIELD(nvmlDeviceGetMigMode, x)
        M_FIELD(nvmlDeviceGetMaxMigDeviceCount, x)
        M_FIELD(nvmlDeviceGetMigDeviceHandleByIndex, x)
        M_FIELD(nvmlDeviceGetAttributes_v2, x)
        M_FIELD(nvmlDeviceGetMaxClockInfo, x)
        M_FIELD(nvmlDeviceGetNumGpuCores, x)
        M_FIELD(nvmlDeviceGetArchitecture, x)
#undef M_FIELD
} nvml_api_t;

/* The library's one state (libcuda.c), guarded by its lock. */
struct mock_cuda_state {
        pthread_mutex_t lock;
        bool initialised;
        CUresult init_result;
        int driver_version;
        nvml_api_t nvml;
        int n;
        mock_dev_t devs[MAX_DEVICES];
        struct CUctx_st primary[MAX_DEVICES];
        int primary_refs[MAX_DEVICES];
        alloc_t *allocs;
};

/* The state, under the short name every entry point uses. */
extern struct mock_cuda_state gv_mock_cuda_state;
#define S gv_mock_cuda_state

/* The calling thread's current context (cuCtxSetCurrent). */
extern __thread CUcontext current;

/* Prototypes of the entry points: a definition that differs fails to compile. */
#define PROTO(ret, name, params) EXPORT ret name params;
PROTO(CUresult, cuInit, (unsigned int flags))
PROTO(CUresult, cuDriverGetVersion, (int *version))
PROTO(CUresult, cuDeviceGetCount, (int *count))
PROTO(CUresult, cuDeviceGet, (CUdevice *device, int ordinal))
PROTO(CUresult, cuDeviceGetName, (char *name, int len, CUdevice dev))
PROTO(CUresult, cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev))
PROTO(CUresult, cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev))
PROTO(CUresult, cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))
PROTO(CUresult, cuDeviceGetAttribute, (int *pi, int attrib, CUdevice dev))
PROTO(CUresult, cuDeviceComputeCapability, (int *major, int *minor, CUdevice dev))
PROTO(CUresult, cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev))
PROTO(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))
PROTO(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice dev))
PROTO(CUresult, cuDevicePrimaryCtxReset_v2, (CUdevice dev))
PROTO(CUresult, cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))
PROTO(CUresult, cuCtxDestroy_v2, (CUcontext ctx))
PROTO(CUresult, cuCtxSetCurrent, (CUcontext ctx))
PROTO(CUresult, cuCtxGetCurrent, (CUcontext *pctx))
PROTO(CUresult, cuCtxGetDevice, (CUdevice *device))
PROTO(CUresult, cuCtxSynchronize, (void))
PROTO(CUresult, cuStreamSynchronize, (CUstream stream))
PROTO(CUresult, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))
PROTO(CUresult, cuMemFree_v2, (CUdeviceptr dptr))
PROTO(CUresult, cuMemGetInfo_v2, (size_t *free, size_t *total))
PROTO(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes))
PROTO(CUresult, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes))
PROTO(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))
PROTO(CUresult, cuModuleLoadData, (CUmodule *module, const void *image))
PROTO(CUresult, cuModuleLoadDataEx, (CUmodule *module, const void *image, unsigned int numOptions, void *options,
                                     void **optionValues))
PROTO(CUresult, cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name))
PROTO(CUresult, cuModuleUnload, (CUmodule hmod))
PROTO(CUresult, cuLaunchKernel, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                                 void **params, void **extra))
PROTO(CUresult, cuGetErrorString, (CUresult error, const char **str))
PROTO(CUresult, cuGetErrorName, (CUresult error, const char **str))
#undef PROTO

/* ALIAS(plain, impl) - export @plain as the same function as @impl; it must sit in the file that defines @impl. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): the arguments are names in a declaration, not expressions */
#define ALIAS(plain, impl) extern __typeof__(impl) plain __attribute__((alias(#impl), visibility("default")));

/* leave - release S.lock and return @r: how every locked entry point returns. */
CUresult leave(CUresult r);

/* Lock and check cuInit succeeded. */
#define ENTER()                                                                           \
        do {                                                                              \
                pthread_mutex_lock(&S.lock);                                              \
                if (!S.initialised)                                                       \
                        return leave(S.init_result ? S.init_result : CUDA_ERROR_NOT_INITIALIZED); \
        } while (0)

#define ENTER_DEV(dev)                                                    \
        do {                                                              \
                ENTER();                                                  \
                if ((dev) < 0 || (dev) >= S.n)                            \
                        return leave(CUDA_ERROR_INVALID_DEVICE);          \
        } while (0)

/* ENTER_DEV_ARGS(bad, dev) - INVALID_VALUE (unlocked) when @bad (a NULL output, a bad length), then ENTER_DEV(dev). */
#define ENTER_DEV_ARGS(bad, dev)                                          \
        do {                                                              \
                if (bad)                                                  \
                        return CUDA_ERROR_INVALID_VALUE;                  \
                ENTER_DEV(dev);                                           \
        } while (0)


/* ENTER() and a current, healthy context. */
#define ENTER_CTX()                                                       \
        do {                                                              \
                ENTER();                                                  \
                if (!current)                                             \
                        return leave(CUDA_ERROR_INVALID_CONTEXT);         \
                if (current->sticky)                                      \
                        return leave(current->sticky);                    \
        } while (0)

/* load_nvml - dlopen the NVML library (beside this one first) and resolve *a; false when it cannot (libcuda.c). */
bool load_nvml(nvml_api_t *a);

/* check_alive - CUDA_SUCCESS while the GPU behind @dev is there; a lost one poisons @ctx (libcuda-context.c). */
CUresult check_alive(int dev, struct CUctx_st *ctx);

/* find_alloc - the live allocation that holds [p, p + bytes), or NULL (libcuda-context.c). */
alloc_t *find_alloc(CUdeviceptr p, size_t bytes);

#endif
