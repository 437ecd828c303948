// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: the CUDA Driver API entry points a device query and
 * `gpu-validator cuda-check` use, answered from the mock NVML library so the
 * devices, names, UUIDs, memory sizes and faults are the NVML profile's.
 * Prototypes and CUresult values are our own, written from NVIDIA's CUDA
 * Driver API reference (docs.nvidia.com/cuda/cuda-driver-api); nothing from
 * a CUDA toolkit is used.  docs/mock-nvml.md "Mock libcuda" describes it.
 *
 * Devices: the GPUs of libnvidia-ml.so.1 (the one beside this library first,
 * else the ordinary search), filtered by NVIDIA_VISIBLE_DEVICES (what the
 * container toolkit would mount) and then CUDA_VISIBLE_DEVICES (indexes or
 * GPU-/MIG- UUIDs; the list stops at the first entry that names nothing, as
 * CUDA's does).  A MIG-enabled GPU contributes its MIG devices, and only one
 * MIG device is enumerated per process (CUDA 11/12, MIG user guide).
 *
 * Memory is host memory; a "device pointer" is its address, checked against
 * the live allocations.  Kernels run on the CPU: module load parses PTX
 * entries, and a launch runs an entry only when its instruction sequence is
 * one the mock knows (the element-wise float add of cuda-check); any other
 * kernel fails its launch with CUDA_ERROR_NOT_SUPPORTED and a line on stderr,
 * never a fake success.
 *
 * Faults from NVML: nvmlInit failing with DRIVER_NOT_LOADED makes cuInit
 * CUDA_ERROR_NO_DEVICE, LIB_RM_VERSION_MISMATCH CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
 * anything else CUDA_ERROR_UNKNOWN; a visible GPU that NVML reports lost
 * (GPU_IS_LOST, Xid 79) makes cuInit fail with CUDA_ERROR_UNKNOWN (999, what
 * CUDA applications print after a GPU fell off the bus), and a GPU lost after
 * cuInit fails context creation and launches with CUDA_ERROR_LAUNCH_FAILED
 * and later calls with the same sticky error.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static struct {
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
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread CUcontext current;

/* ------------------------------------------------------------------ */
/* NVML                                                                */

static void anchor(void)
{
}

/* dlopen()s libnvidia-ml.so.1 beside this library, else through the ordinary search. */
static void *open_nvml(void)
{
        Dl_info info;
        if (dladdr((void *) (uintptr_t) &anchor, &info) && info.dli_fname) {
                const char *slash = strrchr(info.dli_fname, '/');
                char *path = NULL;
                if (slash && asprintf(&path, "%.*s/libnvidia-ml.so.1", (int) (slash - info.dli_fname),
                                      info.dli_fname) > 0) {
                        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
                        free(path);
                        if (h)
                                return h;
                }
        }
        return dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
}

static bool load_nvml(nvml_api_t *a)
{
        if (!(a->dl = open_nvml()))
                return false;
#define M_SYM(name)                                                        \
        if (!(a->name = (name##_fn) (uintptr_t) dlsym(a->dl, #name)))      \
                return false;
        M_SYM(nvmlInit_v2)
        M_SYM(nvmlShutdown)
        M_SYM(nvmlSystemGetCudaDriverVersion)
        M_SYM(nvmlDeviceGetCount_v2)
        M_SYM(nvmlDeviceGetHandleByIndex_v2)
        M_SYM(nvmlDeviceGetName)
        M_SYM(nvmlDeviceGetUUID)
        M_SYM(nvmlDeviceGetMemoryInfo)
        M_SYM(nvmlDeviceGetCudaComputeCapability)
        M_SYM(nvmlDeviceGetPciInfo_v3)
        M_SYM(nvmlDeviceGetMigMode)
        M_SYM(nvmlDeviceGetMaxMigDeviceCount)
        M_SYM(nvmlDeviceGetMigDeviceHandleByIndex)
        M_SYM(nvmlDeviceGetAttributes_v2)
        M_SYM(nvmlDeviceGetMaxClockInfo)
        M_SYM(nvmlDeviceGetNumGpuCores)
        M_SYM(nvmlDeviceGetArchitecture)
#undef M_SYM
        return true;
}

/* The CUDA error a failed nvmlInit means (see the file comment). */
static CUresult init_error(nvmlReturn_t r)
{
        switch (r) {
        case NVML_ERROR_DRIVER_NOT_LOADED:
        case NVML_ERROR_LIBRARY_NOT_FOUND: return CUDA_ERROR_NO_DEVICE;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
        default: return CUDA_ERROR_UNKNOWN;
        }
}

/* Fills @d from the NVML handle @h (parent @parent); the NVML error, GPU_IS_LOST for a lost GPU. */
static nvmlReturn_t describe(const nvml_api_t *a, nvmlDevice_t h, nvmlDevice_t parent, mock_dev_t *d)
{
        memset(d, 0, sizeof(*d));
        d->nvml = h;
        d->parent = parent;
        nvmlReturn_t r = a->nvmlDeviceGetName(h, d->name, sizeof(d->name));
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetUUID(h, d->uuid, sizeof(d->uuid));
        nvmlMemory_t mem;
        if (r == NVML_SUCCESS && (r = a->nvmlDeviceGetMemoryInfo(h, &mem)) == NVML_SUCCESS)
                d->total = mem.total;
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetCudaComputeCapability(parent, &d->cc_major, &d->cc_minor);
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetPciInfo_v3(parent, &d->pci);
        nvmlDeviceAttributes_t at;
        nvmlDeviceArchitecture_t arch;
        unsigned cores;
        if (r == NVML_SUCCESS && h != parent && a->nvmlDeviceGetAttributes_v2(h, &at) == NVML_SUCCESS)
                d->sms = at.multiprocessorCount;
        else if (r == NVML_SUCCESS && a->nvmlDeviceGetNumGpuCores(h, &cores) == NVML_SUCCESS &&
                 a->nvmlDeviceGetArchitecture(h, &arch) == NVML_SUCCESS)
                d->sms = cores / (arch >= NVML_DEVICE_ARCH_ADA && arch != NVML_DEVICE_ARCH_UNKNOWN ? 128 : 64);
        return r;
}

/* ------------------------------------------------------------------ */
/* visible devices                                                     */

/* The candidate list: every GPU, a MIG-enabled GPU replaced by its MIG devices. */
static CUresult enumerate_all(const nvml_api_t *a, mock_dev_t *out, int *n)
{
        unsigned count = 0;
        if (a->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS)
                return CUDA_ERROR_UNKNOWN;
        *n = 0;
        for (unsigned i = 0; i < count && *n < MAX_DEVICES; i++) {
                nvmlDevice_t g;
                if (a->nvmlDeviceGetHandleByIndex_v2(i, &g) != NVML_SUCCESS) {
                        memset(&out[*n], 0, sizeof(out[*n]));
                        out[*n].lost = true; /* GPU_IS_LOST already here */
                        out[*n].gpu_index = i;
                        out[*n].mig_index = -1;
                        (*n)++;
                        continue;
                }
                unsigned cur = 0, pend = 0, max = 0;
                bool mig = a->nvmlDeviceGetMigMode(g, &cur, &pend) == NVML_SUCCESS && cur == NVML_DEVICE_MIG_ENABLE &&
                           a->nvmlDeviceGetMaxMigDeviceCount(g, &max) == NVML_SUCCESS;
                if (!mig) {
                        /* GPU_IS_LOST (Xid 79) or any other failure: cuInit's CUDA_ERROR_UNKNOWN if it is visible */
                        out[*n].lost = describe(a, g, g, &out[*n]) != NVML_SUCCESS;
                        out[*n].gpu_index = i;
                        out[*n].mig_index = -1;
                        (*n)++;
                        continue;
                }
                for (unsigned k = 0; k < max && *n < MAX_DEVICES; k++) {
                        nvmlDevice_t md;
                        nvmlReturn_t r = a->nvmlDeviceGetMigDeviceHandleByIndex(g, k, &md);
                        if (r == NVML_ERROR_NOT_FOUND)
                                continue;
                        if (r == NVML_SUCCESS)
                                r = describe(a, md, g, &out[*n]);
                        if (r != NVML_SUCCESS)
                                return CUDA_ERROR_UNKNOWN;
                        out[*n].gpu_index = i;
                        out[*n].mig_index = (int) k;
                        (*n)++;
                }
        }
        return CUDA_SUCCESS;
}

/*
 * Index into @all of the device @item names, -1 for none.  A number is a CUDA
 * ordinal (@physical false: CUDA_VISIBLE_DEVICES) or an NVML GPU index
 * (@physical true: NVIDIA_VISIBLE_DEVICES, which also takes "G:M", MIG
 * device M of GPU G).  A GPU- UUID, a GPU index, or a MIG-enabled GPU's UUID
 * selects the whole GPU (*whole_gpu: all entries with its parent).
 */
static int find_item(const nvml_api_t *a, const mock_dev_t *all, int n, const char *item, bool physical,
                     bool *whole_gpu)
{
        *whole_gpu = false;
        char *end;
        long v = strtol(item, &end, 10);
        if (*item && end != item && !*end && !physical)
                return v >= 0 && v < n ? (int) v : -1;
        if (*item && end != item && physical) {
                long mig = -1;
                if (*end == ':') {
                        char *e2;
                        mig = strtol(end + 1, &e2, 10);
                        if (e2 == end + 1 || *e2)
                                return -1;
                } else if (*end) {
                        return -1;
                }
                for (int i = 0; i < n; i++)
                        if ((long) all[i].gpu_index == v && (mig < 0 || all[i].mig_index == mig)) {
                                *whole_gpu = mig < 0;
                                return i;
                        }
                return -1;
        }
        for (int i = 0; i < n; i++)
                if (strcasecmp(all[i].uuid, item) == 0)
                        return i;
        /* a GPU- UUID of a MIG-enabled GPU selects its MIG devices */
        for (int i = 0; i < n; i++) {
                char pu[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
                if (all[i].parent != all[i].nvml && a->nvmlDeviceGetUUID(all[i].parent, pu, sizeof(pu)) == NVML_SUCCESS &&
                    strcasecmp(pu, item) == 0) {
                        *whole_gpu = true;
                        return i;
                }
        }
        return -1;
}

/*
 * Applies one visibility list @spec to @all (n entries) into @out.  NULL or
 * empty: everything.  @stop_at_unknown: CUDA_VISIBLE_DEVICES stops at the
 * first entry naming nothing; NVIDIA_VISIBLE_DEVICES skips it.
 */
static int filter(const nvml_api_t *a, const mock_dev_t *all, int n, const char *spec, bool stop_at_unknown,
                  mock_dev_t *out)
{
        if (!spec || !*spec || strcasecmp(spec, "all") == 0 || strcasecmp(spec, "void") == 0) {
                memmove(out, all, (size_t) n * sizeof(*all));
                return n;
        }
        if (strcasecmp(spec, "none") == 0)
                return 0;
        char *copy = strdup(spec);
        if (!copy)
                return 0;
        bool taken[MAX_DEVICES] = { false };
        int k = 0;
        char *save = NULL;
        for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
                while (isspace((unsigned char) *it))
                        it++;
                for (char *e = it + strlen(it); e > it && isspace((unsigned char) e[-1]); e--)
                        e[-1] = '\0';
                bool whole = false;
                int i = find_item(a, all, n, it, !stop_at_unknown, &whole);
                if (i < 0) {
                        if (stop_at_unknown)
                                break;
                        continue;
                }
                for (int j = i; j < n; j++) {
                        if (j != i && (!whole || all[j].parent != all[i].parent))
                                continue;
                        if (!taken[j] && k < MAX_DEVICES) {
                                taken[j] = true;
                                out[k++] = all[j];
                        }
                }
        }
        free(copy);
        return k;
}

/* Keeps the first MIG device and drops the others: CUDA enumerates one MIG device per process. */
static int one_mig_device(mock_dev_t *d, int n)
{
        int k = 0;
        bool seen = false;
        for (int i = 0; i < n; i++) {
                bool mig = d[i].parent != d[i].nvml;
                if (mig && seen)
                        continue;
                seen |= mig;
                d[k++] = d[i];
        }
        return k;
}

static CUresult do_init(void)
{
        if (!load_nvml(&S.nvml))
                return CUDA_ERROR_NO_DEVICE; /* no NVML, no driver: what a node without the kernel module says */
        nvmlReturn_t r = S.nvml.nvmlInit_v2();
        if (r != NVML_SUCCESS)
                return init_error(r);
        if (S.nvml.nvmlSystemGetCudaDriverVersion(&S.driver_version) != NVML_SUCCESS)
                S.driver_version = 0;
        static mock_dev_t all[MAX_DEVICES], mid[MAX_DEVICES];
        int n = 0;
        CUresult cr = enumerate_all(&S.nvml, all, &n);
        if (cr != CUDA_SUCCESS)
                return cr;
        n = filter(&S.nvml, all, n, getenv("NVIDIA_VISIBLE_DEVICES"), false, mid);
        n = filter(&S.nvml, mid, n, getenv("CUDA_VISIBLE_DEVICES"), true, S.devs);
        S.n = one_mig_device(S.devs, n);
        for (int i = 0; i < S.n; i++)
                if (S.devs[i].lost)
                        return CUDA_ERROR_UNKNOWN;
        for (int i = 0; i < S.n; i++)
                S.primary[i].device = i;
        return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* entry points                                                        */

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

/* The legacy names are the same functions (the Driver API keeps both). */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): the arguments are names in a declaration, not expressions */
#define ALIAS(plain, impl) extern __typeof__(impl) plain __attribute__((alias(#impl), visibility("default")));
ALIAS(cuDeviceTotalMem, cuDeviceTotalMem_v2)
ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)
ALIAS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2)
ALIAS(cuCtxCreate, cuCtxCreate_v2)
ALIAS(cuCtxDestroy, cuCtxDestroy_v2)
ALIAS(cuMemAlloc, cuMemAlloc_v2)
ALIAS(cuMemFree, cuMemFree_v2)
ALIAS(cuMemGetInfo, cuMemGetInfo_v2)
ALIAS(cuMemcpyHtoD, cuMemcpyHtoD_v2)
ALIAS(cuMemcpyDtoH, cuMemcpyDtoH_v2)
ALIAS(cuMemcpyDtoD, cuMemcpyDtoD_v2)
#undef ALIAS

static CUresult leave(CUresult r)
{
        pthread_mutex_unlock(&S.lock);
        return r;
}

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

CUresult cuInit(unsigned int flags)
{
        pthread_mutex_lock(&S.lock);
        if (flags != 0)
                return leave(CUDA_ERROR_INVALID_VALUE);
        if (!S.initialised && !S.init_result) {
                S.init_result = do_init();
                S.initialised = S.init_result == CUDA_SUCCESS;
        }
        return leave(S.init_result);
}

CUresult cuDriverGetVersion(int *version)
{
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_lock(&S.lock);
        /* Answers before cuInit, as the real one does; without NVML the CUDA 12.4 of the default profile. */
        if (!S.initialised && !S.driver_version) {
                nvml_api_t a;
                int v = 0;
                if (load_nvml(&a) && a.nvmlInit_v2() == NVML_SUCCESS) {
                        if (a.nvmlSystemGetCudaDriverVersion(&v) != NVML_SUCCESS)
                                v = 0;
                        a.nvmlShutdown();
                }
                *version = v;
                return leave(CUDA_SUCCESS);
        }
        *version = S.driver_version;
        return leave(CUDA_SUCCESS);
}

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
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(ordinal);
        *device = ordinal;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
        if (!name || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
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
        if (!uuid)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        uuid_bytes(S.devs[dev].uuid, uuid);
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
        return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        if (!bytes)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        *bytes = (size_t) S.devs[dev].total;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
        if (!pi)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
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
        if (!major || !minor)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        *major = S.devs[dev].cc_major;
        *minor = S.devs[dev].cc_minor;
        return leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
        if (!pciBusId || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        const nvmlPciInfo_t *p = &S.devs[dev].pci;
        snprintf(pciBusId, (size_t) len, "%04X:%02X:%02X.0", p->domain, p->bus, p->device);
        return leave(CUDA_SUCCESS);
}

/* Whether the GPU behind @dev is still there; a lost one poisons @ctx. */
static CUresult check_alive(int dev, struct CUctx_st *ctx)
{
        nvmlMemory_t mem;
        if (S.nvml.nvmlDeviceGetMemoryInfo(S.devs[dev].nvml, &mem) == NVML_ERROR_GPU_IS_LOST) {
                if (ctx)
                        ctx->sticky = CUDA_ERROR_LAUNCH_FAILED;
                return CUDA_ERROR_LAUNCH_FAILED;
        }
        return ctx ? ctx->sticky : CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        CUresult r = check_alive(dev, NULL);
        if (r != CUDA_SUCCESS)
                return leave(r);
        S.primary_refs[dev]++;
        *pctx = &S.primary[dev];
        return leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
        ENTER_DEV(dev);
        if (S.primary_refs[dev] <= 0)
                return leave(CUDA_ERROR_INVALID_CONTEXT);
        S.primary_refs[dev]--;
        return leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
        ENTER_DEV(dev);
        S.primary[dev].sticky = CUDA_SUCCESS;
        return leave(CUDA_SUCCESS);
}

/* Whether @ctx is a primary context or one cuCtxCreate made (ours are heap objects with a valid device). */
static bool ctx_ok(const struct CUctx_st *ctx)
{
        return ctx && ctx->device >= 0 && ctx->device < S.n;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        (void) flags; /* scheduling and mapping flags change nothing for kernels run on the CPU */
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_DEV(dev);
        CUresult r = check_alive(dev, NULL);
        if (r != CUDA_SUCCESS)
                return leave(r);
        struct CUctx_st *c = calloc(1, sizeof(*c));
        if (!c)
                return leave(CUDA_ERROR_OUT_OF_MEMORY);
        c->device = dev;
        *pctx = c;
        current = c;
        return leave(CUDA_SUCCESS);
}

static bool is_primary(const struct CUctx_st *ctx)
{
        return ctx >= &S.primary[0] && ctx < &S.primary[MAX_DEVICES];
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
        ENTER();
        if (!ctx_ok(ctx) || is_primary(ctx))
                return leave(CUDA_ERROR_INVALID_CONTEXT);
        /* The context's allocations go with it. */
        for (alloc_t **p = &S.allocs; *p;) {
                alloc_t *a = *p;
                if (a->ctx == ctx) {
                        *p = a->next;
                        S.devs[a->device].used -= a->bytes;
                        free(a->p);
                        free(a);
                } else {
                        p = &a->next;
                }
        }
        if (current == ctx)
                current = NULL;
        free(ctx);
        return leave(CUDA_SUCCESS);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
        ENTER();
        if (ctx && !ctx_ok(ctx))
                return leave(CUDA_ERROR_INVALID_CONTEXT);
        current = ctx;
        return leave(CUDA_SUCCESS);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        *pctx = current;
        return leave(CUDA_SUCCESS);
}

CUresult cuCtxGetDevice(CUdevice *device)
{
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        if (!current)
                return leave(CUDA_ERROR_INVALID_CONTEXT);
        *device = current->device;
        return leave(CUDA_SUCCESS);
}

CUresult cuCtxSynchronize(void)
{
        ENTER();
        if (!current)
                return leave(CUDA_ERROR_INVALID_CONTEXT);
        return leave(check_alive(current->device, current));
}

CUresult cuStreamSynchronize(CUstream stream)
{
        (void) stream;
        return cuCtxSynchronize();
}

/* The live allocation that holds [p, p + bytes), or NULL. */
static alloc_t *find_alloc(CUdeviceptr p, size_t bytes)
{
        for (alloc_t *a = S.allocs; a; a = a->next) {
                uintptr_t b = (uintptr_t) a->p;
                if (p >= b && p - b <= a->bytes && bytes <= a->bytes - (size_t) (p - b))
                        return a;
        }
        return NULL;
}

/* ENTER() and a current, healthy context. */
#define ENTER_CTX()                                                       \
        do {                                                              \
                ENTER();                                                  \
                if (!current)                                             \
                        return leave(CUDA_ERROR_INVALID_CONTEXT);         \
                if (current->sticky)                                      \
                        return leave(current->sticky);                    \
        } while (0)

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        if (!dptr || !bytesize)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        mock_dev_t *d = &S.devs[current->device];
        if (bytesize > d->total - d->used)
                return leave(CUDA_ERROR_OUT_OF_MEMORY);
        alloc_t *a = calloc(1, sizeof(*a));
        void *p = a ? malloc(bytesize) : NULL;
        if (!p) {
                free(a);
                return leave(CUDA_ERROR_OUT_OF_MEMORY);
        }
        a->p = p;
        a->bytes = bytesize;
        a->device = current->device;
        a->ctx = current;
        a->next = S.allocs;
        S.allocs = a;
        d->used += bytesize;
        *dptr = (CUdeviceptr) (uintptr_t) p;
        return leave(CUDA_SUCCESS);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        ENTER();
        for (alloc_t **p = &S.allocs; *p; p = &(*p)->next) {
                alloc_t *a = *p;
                if ((uintptr_t) a->p == dptr) {
                        *p = a->next;
                        S.devs[a->device].used -= a->bytes;
                        free(a->p);
                        free(a);
                        return leave(CUDA_SUCCESS);
                }
        }
        return leave(CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
        if (!free_bytes || !total)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        const mock_dev_t *d = &S.devs[current->device];
        *total = (size_t) d->total;
        *free_bytes = (size_t) (d->total - d->used);
        return leave(CUDA_SUCCESS);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
        if (!src && bytes)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        if (!find_alloc(dst, bytes))
                return leave(CUDA_ERROR_INVALID_VALUE);
        if (bytes) /* memcpy() wants valid pointers even for 0 bytes */
                memcpy((void *) (uintptr_t) dst, src, bytes);
        return leave(CUDA_SUCCESS);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
        if (!dst && bytes)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        if (!find_alloc(src, bytes))
                return leave(CUDA_ERROR_INVALID_VALUE);
        if (bytes) /* memcpy() wants valid pointers even for 0 bytes */
                memcpy(dst, (const void *) (uintptr_t) src, bytes);
        return leave(CUDA_SUCCESS);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
        ENTER_CTX();
        if (!find_alloc(dst, bytes) || !find_alloc(src, bytes))
                return leave(CUDA_ERROR_INVALID_VALUE);
        memmove((void *) (uintptr_t) dst, (const void *) (uintptr_t) src, bytes);
        return leave(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* modules and kernels                                                 */

#include "mock/cuda/ptx.h"

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
        if (!module || !image)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        struct CUmod_st *m = calloc(1, sizeof(*m));
        if (!m)
                return leave(CUDA_ERROR_OUT_OF_MEMORY);
        gv_mock_ptx_entry_t entries[MAX_ENTRIES];
        size_t n = 0;
        if (gv_mock_ptx_parse(image, entries, MAX_ENTRIES, &n) < 0 || n == 0) {
                free(m);
                return leave(CUDA_ERROR_INVALID_PTX);
        }
        for (size_t i = 0; i < n; i++) {
                memcpy(m->entries[i].name, entries[i].name, sizeof(m->entries[i].name));
                m->entries[i].kind = entries[i].vector_add_f32 ? KERNEL_VECTOR_ADD_F32 : KERNEL_UNKNOWN;
                m->entries[i].module = m;
        }
        m->n = n;
        *module = m;
        return leave(CUDA_SUCCESS);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, void *options,
                            void **optionValues)
{
        (void) numOptions;
        (void) options;
        (void) optionValues;
        return cuModuleLoadData(module, image);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
        if (!hfunc || !hmod || !name)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        for (size_t i = 0; i < hmod->n; i++)
                if (strcmp(hmod->entries[i].name, name) == 0) {
                        *hfunc = &hmod->entries[i];
                        return leave(CUDA_SUCCESS);
                }
        return leave(CUDA_ERROR_NOT_FOUND);
}

CUresult cuModuleUnload(CUmodule hmod)
{
        if (!hmod)
                return CUDA_ERROR_INVALID_HANDLE;
        ENTER();
        free(hmod);
        return leave(CUDA_SUCCESS);
}

/* c[i] = a[i] + b[i] for i < min(n, threads), on buffers checked against the allocations. */
static CUresult run_vector_add(void **params, unsigned long long threads)
{
        if (!params || !params[0] || !params[1] || !params[2] || !params[3])
                return CUDA_ERROR_INVALID_VALUE;
        CUdeviceptr a, b, c;
        unsigned n;
        memcpy(&a, params[0], sizeof(a));
        memcpy(&b, params[1], sizeof(b));
        memcpy(&c, params[2], sizeof(c));
        memcpy(&n, params[3], sizeof(n));
        unsigned long long count = n < threads ? n : threads;
        size_t bytes = (size_t) count * sizeof(float);
        if (count && (!find_alloc(a, bytes) || !find_alloc(b, bytes) || !find_alloc(c, bytes)))
                return CUDA_ERROR_ILLEGAL_ADDRESS; /* the kernel would have faulted */
        const float *pa = (const float *) (uintptr_t) a, *pb = (const float *) (uintptr_t) b;
        float *pc = (float *) (uintptr_t) c;
        for (unsigned long long i = 0; i < count; i++)
                pc[i] = pa[i] + pb[i];
        return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,
                        void **extra)
{
        (void) shared;
        (void) stream;
        if (!f || !gx || !gy || !gz || !bx || !by || !bz || (unsigned long long) bx * by * bz > 1024 || extra)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        CUresult r = check_alive(current->device, current);
        if (r != CUDA_SUCCESS)
                return leave(r);
        if (f->kind != KERNEL_VECTOR_ADD_F32) {
                fprintf(stderr, "mock libcuda: kernel %s is not one the mock can run on the CPU "
                                "(only the element-wise float add of gpu-validator cuda-check)\n", f->name);
                return leave(CUDA_ERROR_NOT_SUPPORTED);
        }
        /* One thread per element, 1-D: x extents only, as the kernel indexes ctaid.x * ntid.x + tid.x. */
        r = run_vector_add(params, (unsigned long long) gx * bx);
        if (r == CUDA_ERROR_ILLEGAL_ADDRESS) {
                current->sticky = r; /* asynchronous: reported by the next synchronize */
                return leave(CUDA_SUCCESS);
        }
        return leave(r);
}

/* ------------------------------------------------------------------ */
/* error text (Driver API reference, cuGetErrorString)                 */

static const struct {
        CUresult code;
        const char *name, *text;
} errors[] = {
        { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
        { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
        { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
        { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
        { CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
        { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
        { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
        { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
        { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
        { CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
        { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
        { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
        { CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
        { CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
        { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
        { CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
          "system has unsupported display driver / cuda driver combination" },
        { CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_field(CUresult error, const char **str, bool name)
{
        if (!str)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
                if (errors[i].code == error) {
                        *str = name ? errors[i].name : errors[i].text;
                        return CUDA_SUCCESS;
                }
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **str)
{
        return error_field(error, str, false);
}

CUresult cuGetErrorName(CUresult error, const char **str)
{
        return error_field(error, str, true);
}
