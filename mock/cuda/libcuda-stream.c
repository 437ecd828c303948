// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: streams and events (Driver API "Stream
 * Management", "Event Management").  Every operation runs when it is issued
 * (libcuda-memory.c, libcuda-module.c), so a stream is always idle, work on
 * any two streams is ordered as it was issued, and an event records the
 * time it was reached: cuEventElapsedTime gives the time the work between
 * two events took, in milliseconds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "mock/cuda/libcuda-internal.h"

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Stores @p in a free entry of @table; false when it is full. */
static bool track(void **table, void *p)
{
        for (size_t i = 0; i < MAX_HANDLES; i++)
                if (!table[i]) {
                        table[i] = p;
                        return true;
                }
        return false;
}

/* Removes @p from @table; false when it was not there. */
static bool untrack(void **table, const void *p)
{
        for (size_t i = 0; p && i < MAX_HANDLES; i++)
                if (table[i] == p) {
                        table[i] = NULL;
                        return true;
                }
        return false;
}

static bool tracked(void *const *table, const void *p)
{
        for (size_t i = 0; p && i < MAX_HANDLES; i++)
                if (table[i] == p)
                        return true;
        return false;
}

bool mc_stream_ok(CUstream s)
{
        return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || tracked((void *const *) S.streams, s);
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
        if (!phStream || (flags & ~(unsigned) CU_STREAM_NON_BLOCKING))
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        struct CUstream_st *s = calloc(1, sizeof(*s));
        if (!s || !track((void **) S.streams, s)) {
                free(s);
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        }
        /* priorities are clamped to the range cuCtxGetStreamPriorityRange gives on a GPU: [-5, 0] */
        *s = (struct CUstream_st) { .ctx = mc_current_ctx(), .flags = flags,
                                    .priority = priority > 0 ? 0 : priority < -5 ? -5 : priority };
        *phStream = s;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
        return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
        ENTER();
        if (!untrack((void **) S.streams, hStream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        free(hStream);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuStreamSynchronize(CUstream hStream)
{
        ENTER();
        if (!mc_stream_ok(hStream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        struct CUctx_st *c = hStream && tracked((void *const *) S.streams, hStream) ? hStream->ctx : mc_current_ctx();
        if (!c)
                return mc_leave(CUDA_ERROR_INVALID_CONTEXT);
        return mc_leave(mc_check_alive(c->device, c));
}

CUresult cuStreamQuery(CUstream hStream)
{
        ENTER();
        if (!mc_stream_ok(hStream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        struct CUctx_st *c = mc_current_ctx();
        return mc_leave(c && c->sticky ? c->sticky : CUDA_SUCCESS); /* never CUDA_ERROR_NOT_READY: all work is done */
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
        ENTER();
        if (!mc_stream_ok(hStream) || !tracked((void *const *) S.events, hEvent))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        return mc_leave(Flags & ~1u ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
        if (!phEvent || (Flags & ~0xFu))
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        struct CUevent_st *e = calloc(1, sizeof(*e));
        if (!e || !track((void **) S.events, e)) {
                free(e);
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        }
        *e = (struct CUevent_st) { .ctx = mc_current_ctx(), .flags = Flags };
        *phEvent = e;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
        ENTER();
        if (!untrack((void **) S.events, hEvent))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        free(hEvent);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
        ENTER();
        if (!tracked((void *const *) S.events, hEvent) || !mc_stream_ok(hStream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        hEvent->recorded = true;
        hEvent->ns = now_ns();
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuEventSynchronize(CUevent hEvent)
{
        ENTER();
        if (!tracked((void *const *) S.events, hEvent))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        return mc_leave(hEvent->ctx->sticky);
}

CUresult cuEventQuery(CUevent hEvent)
{
        ENTER();
        if (!tracked((void *const *) S.events, hEvent))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        return mc_leave(hEvent->ctx->sticky);
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
        if (!pMilliseconds)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        if (!tracked((void *const *) S.events, hStart) || !tracked((void *const *) S.events, hEnd))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        if (!hStart->recorded || !hEnd->recorded)
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        *pMilliseconds = (float) ((double) ((int64_t) (hEnd->ns - hStart->ns)) / 1e6);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
        return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

ALIAS(cuStreamDestroy, cuStreamDestroy_v2)
ALIAS(cuEventDestroy, cuEventDestroy_v2)
ALIAS(cuStreamSynchronize_ptsz, cuStreamSynchronize)
ALIAS(cuStreamQuery_ptsz, cuStreamQuery)
ALIAS(cuStreamWaitEvent_ptsz, cuStreamWaitEvent)
ALIAS(cuEventRecord_ptsz, cuEventRecord)
