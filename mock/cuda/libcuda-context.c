// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: contexts, synchronisation and device memory (host memory checked against the allocations).
 * Types, state and macros: libcuda-internal.h.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/libcuda-internal.h"

/* Whether the GPU behind @dev is still there; a lost one poisons @ctx. */
CUresult check_alive(int dev, struct CUctx_st *ctx)
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
        ENTER_DEV_ARGS(!pctx, dev);
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
        ENTER_DEV_ARGS(!pctx, dev);
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
alloc_t *find_alloc(CUdeviceptr p, size_t bytes)
{
        for (alloc_t *a = S.allocs; a; a = a->next) {
                uintptr_t b = (uintptr_t) a->p;
                if (p >= b && p - b <= a->bytes && bytes <= a->bytes - (size_t) (p - b))
                        return a;
        }
        return NULL;
}

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

/* The legacy names of the functions above. */
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
