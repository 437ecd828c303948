// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: primary contexts, created contexts and the
 * per-thread context stack (Driver API "Primary Context Management",
 * "Context Management").  Types, state and macros: libcuda-internal.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/libcuda-internal.h"

/* The calling thread's context stack; the top is the current context. */
#define STACK_MAX 64
static __thread struct CUctx_st *ctx_stack[STACK_MAX];
static __thread int ctx_depth;

struct CUctx_st *mc_current_ctx(void)
{
        return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

void mc_set_current(struct CUctx_st *ctx)
{
        if (ctx_depth == 0)
                ctx_depth = 1;
        ctx_stack[ctx_depth - 1] = ctx;
        if (!ctx && ctx_depth == 1)
                ctx_depth = 0;
}

static bool is_primary(const struct CUctx_st *ctx)
{
        return ctx >= &S.primary[0] && ctx < &S.primary[MAX_DEVICES];
}

bool mc_ctx_ok(const struct CUctx_st *ctx)
{
        if (!ctx)
                return false;
        if (is_primary(ctx))
                return ctx->device < S.n;
        for (size_t i = 0; i < MAX_CONTEXTS; i++)
                if (S.created[i] == ctx)
                        return true;
        return false;
}

/* Whether the GPU behind @dev is still there; a lost one poisons @ctx. */
CUresult mc_check_alive(int dev, struct CUctx_st *ctx)
{
        nvmlMemory_t mem;
        if (S.nvml->nvmlDeviceGetMemoryInfo(S.devs[dev].nvml, &mem) == NVML_ERROR_GPU_IS_LOST) {
                if (ctx)
                        ctx->sticky = CUDA_ERROR_LAUNCH_FAILED;
                return CUDA_ERROR_LAUNCH_FAILED;
        }
        return ctx ? ctx->sticky : CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* primary contexts                                                    */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
        ENTER_DEV_ARGS(!pctx, dev);
        CUresult r = mc_check_alive(dev, NULL);
        if (r != CUDA_SUCCESS)
                return mc_leave(r);
        S.primary_refs[dev]++;
        *pctx = &S.primary[dev];
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
        ENTER_DEV(dev);
        if (S.primary_refs[dev] <= 0)
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        if (--S.primary_refs[dev] == 0) {
                mc_drop_allocs(&S.primary[dev]);
                S.primary[dev].sticky = CUDA_SUCCESS;
        }
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
        ENTER_DEV(dev);
        mc_drop_allocs(&S.primary[dev]);
        S.primary[dev].sticky = CUDA_SUCCESS;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
        ENTER_DEV_ARGS(!flags || !active, dev);
        *flags = S.primary[dev].flags;
        *active = S.primary_refs[dev] > 0;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
        ENTER_DEV(dev);
        if (flags & ~(unsigned) CU_CTX_FLAGS_MASK)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        S.primary[dev].flags = flags;
        return mc_leave(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* created contexts                                                    */

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        ENTER_DEV_ARGS(!pctx, dev);
        if (flags & ~(unsigned) CU_CTX_FLAGS_MASK)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        CUresult r = mc_check_alive(dev, NULL);
        if (r != CUDA_SUCCESS)
                return mc_leave(r);
        size_t slot = 0;
        while (slot < MAX_CONTEXTS && S.created[slot])
                slot++;
        if (slot == MAX_CONTEXTS)
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        struct CUctx_st *c = calloc(1, sizeof(*c));
        if (!c)
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        c->device = dev;
        c->flags = flags;
        S.created[slot] = c;
        /* the new context is pushed onto the calling thread's stack */
        if (ctx_depth < STACK_MAX)
                ctx_stack[ctx_depth++] = c;
        else
                ctx_stack[STACK_MAX - 1] = c;
        *pctx = c;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
        /* execution affinity (SM count limits) is an MPS feature the mock does not model */
        if (numParams < 0 || (numParams > 0 && !paramsArray))
                return CUDA_ERROR_INVALID_VALUE;
        if (numParams > 0)
                return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
        if (ctxCreateParams && ctxCreateParams->execAffinityParams && ctxCreateParams->cigParams)
                return CUDA_ERROR_INVALID_VALUE;
        if (ctxCreateParams && ctxCreateParams->cigParams)
                return CUDA_ERROR_NOT_SUPPORTED; /* CUDA in Graphics needs a D3D12 or Vulkan client */
        return cuCtxCreate_v3(pctx, ctxCreateParams ? ctxCreateParams->execAffinityParams : NULL,
                              ctxCreateParams ? ctxCreateParams->numExecAffinityParams : 0, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
        ENTER();
        if (!mc_ctx_ok(ctx) || is_primary(ctx))
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        mc_drop_allocs(ctx); /* the context's allocations go with it */
        for (int i = 0; i < ctx_depth; i++)
                if (ctx_stack[i] == ctx) {
                        memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t) (ctx_depth - i - 1) * sizeof(struct CUctx_st *));
                        ctx_depth--;
                        i--;
                }
        for (size_t i = 0; i < MAX_CONTEXTS; i++)
                if (S.created[i] == ctx)
                        S.created[i] = NULL;
        free(ctx);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
        ENTER();
        if (ctx && !mc_ctx_ok(ctx))
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        mc_set_current(ctx);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        *pctx = mc_current_ctx();
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
        ENTER();
        if (!mc_ctx_ok(ctx))
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        if (ctx_depth >= STACK_MAX)
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        ctx_stack[ctx_depth++] = ctx;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
        ENTER();
        if (ctx_depth == 0)
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        struct CUctx_st *c = ctx_stack[--ctx_depth];
        if (pctx)
                *pctx = c;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxGetDevice(CUdevice *device)
{
        return cuCtxGetDevice_v2(device, NULL);
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        struct CUctx_st *c = ctx ? ctx : mc_current_ctx();
        if (!c || !mc_ctx_ok(c))
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        *device = c->device;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        CUdevice dev;
        CUresult r = cuCtxGetDevice_v2(&dev, ctx); /* the same checks: initialised, a live context */
        if (r == CUDA_SUCCESS)
                *version = 3020; /* the context API of every 64-bit driver since CUDA 3.2 */
        return r;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
        if (!flags)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        if (!mc_current_ctx())
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        *flags = mc_current_ctx()->flags;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuCtxSynchronize(void)
{
        return cuCtxSynchronize_v2(NULL);
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
        ENTER();
        struct CUctx_st *c = ctx ? ctx : mc_current_ctx();
        if (!c || !mc_ctx_ok(c))
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        /* every operation ran when it was issued: only an error it left behind remains */
        return mc_leave(mc_check_alive(c->device, c));
}

/* The names of the first API, with the same parameters on 64-bit hosts. */
ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)
ALIAS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2)
ALIAS(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2)
ALIAS(cuCtxCreate, cuCtxCreate_v2)
ALIAS(cuCtxDestroy, cuCtxDestroy_v2)
ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2)
ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2)
