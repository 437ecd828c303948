// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1's internal types, state and entry-point macros,
 * shared by its files (libcuda.c describes the library):
 *
 *   libcuda.c           NVML, the visible devices, cuInit, versions, error text
 *   libcuda-device.c    device queries and every CUdevice_attribute
 *   libcuda-context.c   primary and created contexts, the context stack
 *   libcuda-memory.c    device and host memory, copies and fills
 *   libcuda-stream.c    streams and events
 *   libcuda-module.c    modules and libraries (PTX and fatbins), kernel launch
 *   libcuda-proc.c      cuGetProcAddress and the versioned names
 *
 * The library is built with hidden visibility and a version script that
 * exports the `cu*` entry points only (libcuda.map).  The helpers its files
 * share carry the library's prefix, mc_ (mock CUDA); the entry points carry
 * NVIDIA's names.
 */
#ifndef GV_MOCK_CUDA_LIBCUDA_INTERNAL_H
#define GV_MOCK_CUDA_LIBCUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/cuda/cuda-abi.h"
#include "abi/nvml/nvml-loader.h"
#include "mock/cuda/ptx.h"

#define EXPORT __attribute__((visibility("default")))

#define MAX_DEVICES 64
#define MAX_CONTEXTS 256   /* contexts cuCtxCreate made and not yet destroyed */
#define MAX_HANDLES 4096   /* live streams, and live events */

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
        unsigned flags;
        CUresult sticky; /* an asynchronous error: returned by synchronize and later calls */
};

struct CUfunc_st {
        const gv_ptx_func_t *ptx;
        struct CUmod_st *module;
};

struct CUmod_st {
        gv_ptx_module_t *ptx;
        struct CUctx_st *ctx;
        size_t n;
        struct CUfunc_st *funcs; /* one per .entry */
};

struct CUlib_st {
        struct CUmod_st *module;
};

struct CUstream_st {
        struct CUctx_st *ctx;
        unsigned flags;
        int priority;
};

struct CUevent_st {
        struct CUctx_st *ctx;
        unsigned flags;
        bool recorded;
        uint64_t ns; /* CLOCK_MONOTONIC when recorded */
};

/* What an allocation is: device memory, pinned host memory, or a module's global variable. */
typedef enum alloc_kind { ALLOC_DEVICE, ALLOC_HOST, ALLOC_MODULE } alloc_kind_t;

typedef struct alloc {
        struct alloc *next;
        void *p;
        size_t bytes;
        alloc_kind_t kind;
        bool mapped;          /* memory from mmap() (large buffers), else from aligned_alloc() */
        int device;
        struct CUctx_st *ctx; /* the context it was made in (NULL for host memory) */
} alloc_t;

/* The library's one state (libcuda.c), guarded by its lock. */
struct mock_cuda_state {
        pthread_mutex_t lock;
        bool initialised;
        CUresult init_result;
        int driver_version;
        gv_nvml_t *nvml;
        bool nvml_initialised; /* cuInit's nvmlInit succeeded: unload shuts NVML down */
        /* NVML queries beyond the loader's table (nvml-abi.h GV_NVML_MOCK_FUNCTIONS), NULL when missing */
        nvmlDeviceGetMemoryBusWidth_fn bus_width;
        nvmlDeviceGetNumGpuCores_fn gpu_cores;
        int n;
        mock_dev_t devs[MAX_DEVICES];
        struct CUctx_st primary[MAX_DEVICES];
        int primary_refs[MAX_DEVICES];
        alloc_t *allocs;
        /* live handles the library made, for the checks of the calls that take them */
        struct CUctx_st *created[MAX_CONTEXTS];
        struct CUstream_st *streams[MAX_HANDLES];
        struct CUevent_st *events[MAX_HANDLES];
};

/* The state, under the short name every entry point uses. */
extern struct mock_cuda_state mc_state;
#define S mc_state

/* Prototypes of the entry points: a definition that differs fails to compile. */
#define PROTO(name, params) EXPORT CUresult name params;
GV_CUDA_FUNCTIONS(PROTO)
#undef PROTO
/* The per-thread default stream flavours: aliases defined beside their functions (ALIAS). */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): names in a declaration, not expressions */
#define PTDS_PROTO(sym, same) EXPORT __typeof__(same) sym;
GV_CUDA_PTDS_FUNCTIONS(PTDS_PROTO)
#undef PTDS_PROTO
EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);

/* ALIAS(plain, impl) - export @plain as the same function as @impl; it must sit in the file that defines @impl. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): the arguments are names in a declaration, not expressions */
#define ALIAS(plain, impl) extern __typeof__(impl) plain __attribute__((alias(#impl), visibility("default")));

/* mc_leave - release S.lock and return @r: how every locked entry point returns. */
CUresult mc_leave(CUresult r);

/* mc_current_ctx - the calling thread's current context (the top of its context stack), or NULL. */
struct CUctx_st *mc_current_ctx(void);

/* mc_set_current - make @ctx the calling thread's current context (replaces the top of the stack). */
void mc_set_current(struct CUctx_st *ctx);

/* Lock and check cuInit succeeded. */
#define ENTER()                                                                           \
        do {                                                                              \
                pthread_mutex_lock(&S.lock);                                              \
                if (!S.initialised)                                                       \
                        return mc_leave(S.init_result ? S.init_result : CUDA_ERROR_NOT_INITIALIZED); \
        } while (0)

#define ENTER_DEV(dev)                                                    \
        do {                                                              \
                ENTER();                                                  \
                if ((dev) < 0 || (dev) >= S.n)                            \
                        return mc_leave(CUDA_ERROR_INVALID_DEVICE);       \
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
                if (!mc_current_ctx())                                    \
                        return mc_leave(CUDA_ERROR_INVALID_CONTEXT);      \
                if (mc_current_ctx()->sticky)                             \
                        return mc_leave(mc_current_ctx()->sticky);        \
        } while (0)

/* mc_check_alive - CUDA_SUCCESS while the GPU behind @dev is there; a lost one poisons @ctx (libcuda-context.c). */
CUresult mc_check_alive(int dev, struct CUctx_st *ctx);

/* mc_ctx_ok - whether @ctx is a live context of this library (libcuda-context.c). */
bool mc_ctx_ok(const struct CUctx_st *ctx);

/* mc_find_alloc - the live allocation that holds [p, p + bytes), or NULL (libcuda-memory.c). */
alloc_t *mc_find_alloc(CUdeviceptr p, size_t bytes);

/* mc_add_alloc - record [p, p + bytes) as an allocation of @kind (@mapped: from mmap); false on OOM (libcuda-memory.c). */
bool mc_add_alloc(void *p, size_t bytes, alloc_kind_t kind, bool mapped, struct CUctx_st *ctx);

/* mc_drop_allocs - forget (and free, unless ALLOC_MODULE) every allocation made in @ctx (libcuda-memory.c). */
void mc_drop_allocs(const struct CUctx_st *ctx);

/* mc_drop_all_allocs - forget every allocation (and free device and host memory), at unload (libcuda-memory.c). */
void mc_drop_all_allocs(void);

/* mc_drop_alloc_at - forget the ALLOC_MODULE record of [p, ...) (libcuda-memory.c). */
void mc_drop_alloc_at(const void *p);

/* mc_alloc_range - gv_ptx_range_fn over the allocations (libcuda-memory.c); called while S.lock is held. */
bool mc_alloc_range(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* mc_stream_ok - whether @s is NULL, a special handle, or a live stream of the current context (libcuda-stream.c). */
bool mc_stream_ok(CUstream s);

/* The per-architecture limits of device @dev: shared memory a block may opt in to (bytes), threads a multiprocessor holds (libcuda-device.c). */
int mc_max_shared_per_block_optin(int dev);
int mc_max_threads_per_sm(int dev);

#endif
