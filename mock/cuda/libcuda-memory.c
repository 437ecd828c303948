// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: device memory (host memory, checked against the
 * allocations), pinned host memory (the same pointer on both sides, as with
 * unified addressing), copies and fills, synchronous and on a stream (Driver
 * API "Memory Management").  Streams run each operation when it is issued,
 * so the asynchronous calls have finished when they return, which every
 * program that synchronises before it reads is content with.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mock/cuda/libcuda-internal.h"

alloc_t *mc_find_alloc(CUdeviceptr p, size_t bytes)
{
        for (alloc_t *a = S.allocs; a; a = a->next) {
                uintptr_t b = (uintptr_t) a->p;
                if (p >= b && p - b <= a->bytes && bytes <= a->bytes - (size_t) (p - b))
                        return a;
        }
        return NULL;
}

bool mc_alloc_range(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
        (void) ctx;
        alloc_t *a = mc_find_alloc(addr, 1);
        if (!a)
                return false;
        *lo = (uintptr_t) a->p;
        *hi = (uintptr_t) a->p + a->bytes;
        return true;
}

bool mc_add_alloc(void *p, size_t bytes, alloc_kind_t kind, bool mapped, struct CUctx_st *ctx)
{
        alloc_t *a = calloc(1, sizeof(*a));
        if (!a)
                return false;
        *a = (alloc_t) { .next = S.allocs, .p = p, .bytes = bytes, .kind = kind, .mapped = mapped, .ctx = ctx,
                         .device = ctx ? ctx->device : -1 };
        S.allocs = a;
        if (kind == ALLOC_DEVICE)
                S.devs[ctx->device].used += bytes;
        return true;
}

/*
 * Memory for a device or pinned host buffer, 256-byte aligned as cudaMalloc's (so every naturally
 * aligned access of a kernel is).  Buffers of 64 KiB and more are mapped and unmapped whole: from
 * the heap, a program that allocates and frees 16 MiB buffers between its own host buffers (as
 * cuda-check does on each GPU) fragments it and the process grows by each GPU's share.
 */
static void *buffer_alloc(size_t bytes, bool *mapped)
{
        *mapped = bytes >= (64u << 10);
        if (*mapped) {
                void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED)
                        return NULL;
                /* 2 MiB pages where the kernel's transparent huge pages allow: a 16 MiB buffer
                 * filled by cuMemcpyHtoD or written by a kernel takes 8 page faults, not 4,096
                 * (cuda-check on 8 GPUs x 4 Mi elements: 35 -> 22 ms a GPU); advice only */
                if (bytes >= (2u << 20))
                        (void) madvise(p, bytes, MADV_HUGEPAGE);
                return p;
        }
        return aligned_alloc(256, (bytes + 255) / 256 * 256);
}

static void buffer_free(void *p, size_t bytes, bool mapped)
{
        if (mapped)
                munmap(p, bytes);
        else
                free(p);
}

/* Unlinks and frees *pp (and its memory unless a module owns it). */
static void unlink_alloc(alloc_t **pp)
{
        alloc_t *a = *pp;
        *pp = a->next;
        if (a->kind == ALLOC_DEVICE)
                S.devs[a->device].used -= a->bytes;
        if (a->kind != ALLOC_MODULE)
                buffer_free(a->p, a->bytes, a->mapped);
        free(a);
}

void mc_drop_allocs(const struct CUctx_st *ctx)
{
        for (alloc_t **p = &S.allocs; *p;) {
                if ((*p)->ctx == ctx && (*p)->kind != ALLOC_HOST)
                        unlink_alloc(p);
                else
                        p = &(*p)->next;
        }
}

void mc_drop_all_allocs(void)
{
        while (S.allocs)
                unlink_alloc(&S.allocs);
}

void mc_drop_alloc_at(const void *ptr)
{
        for (alloc_t **p = &S.allocs; *p; p = &(*p)->next)
                if ((*p)->p == ptr && (*p)->kind == ALLOC_MODULE) {
                        unlink_alloc(p);
                        return;
                }
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        if (!dptr || !bytesize)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        struct CUctx_st *c = mc_current_ctx();
        mock_dev_t *d = &S.devs[c->device];
        if (bytesize > d->total - d->used)
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        bool mapped;
        void *p = buffer_alloc(bytesize, &mapped);
        if (!p || !mc_add_alloc(p, bytesize, ALLOC_DEVICE, mapped, c)) {
                if (p)
                        buffer_free(p, bytesize, mapped);
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        }
        *dptr = (CUdeviceptr) (uintptr_t) p;
        return mc_leave(CUDA_SUCCESS);
}

/* Frees the allocation that starts at @p and is of @kind. */
static CUresult free_kind(uintptr_t p, alloc_kind_t kind)
{
        ENTER();
        for (alloc_t **a = &S.allocs; *a; a = &(*a)->next)
                if ((uintptr_t) (*a)->p == p && (*a)->kind == kind) {
                        unlink_alloc(a);
                        return mc_leave(CUDA_SUCCESS);
                }
        return mc_leave(CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        if (!dptr)
                return CUDA_SUCCESS; /* as cudaFree(NULL) */
        return free_kind((uintptr_t) dptr, ALLOC_DEVICE);
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
        if (!free_bytes || !total)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        const mock_dev_t *d = &S.devs[mc_current_ctx()->device];
        *total = (size_t) d->total;
        *free_bytes = (size_t) (d->total - d->used);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
        ENTER();
        alloc_t *a = mc_find_alloc(dptr, 0);
        if (!a)
                return mc_leave(CUDA_ERROR_NOT_FOUND);
        if (pbase)
                *pbase = (CUdeviceptr) (uintptr_t) a->p;
        if (psize)
                *psize = a->bytes;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
        if (!pp || !bytesize || (Flags & ~0x7u))
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        bool mapped;
        void *p = buffer_alloc(bytesize, &mapped);
        if (!p || !mc_add_alloc(p, bytesize, ALLOC_HOST, mapped, NULL)) {
                if (p)
                        buffer_free(p, bytesize, mapped);
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        }
        *pp = p;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
        return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void *p)
{
        return free_kind((uintptr_t) p, ALLOC_HOST);
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
        if (!pdptr || Flags)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        alloc_t *a = mc_find_alloc((uintptr_t) p, 0);
        if (!a || a->kind != ALLOC_HOST)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        *pdptr = (CUdeviceptr) (uintptr_t) p; /* unified addressing: one pointer on both sides */
        return mc_leave(CUDA_SUCCESS);
}

/* Copies @bytes from @src to @dst; each side is checked against the allocations when it is device memory. */
static CUresult copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t bytes, CUstream stream)
{
        if ((!dst || !src) && bytes)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        if (!mc_stream_ok(stream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        if ((dst_dev && !mc_find_alloc((uintptr_t) dst, bytes)) || (src_dev && !mc_find_alloc((uintptr_t) src, bytes)))
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        if (bytes) /* memmove() wants valid pointers even for 0 bytes */
                memmove(dst, src, bytes);
        return mc_leave(CUDA_SUCCESS);
}

#define DEV(p) ((void *) (uintptr_t) (p))

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
        return copy(DEV(dstDevice), true, srcHost, false, ByteCount, NULL);
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
        return copy(dstHost, false, DEV(srcDevice), true, ByteCount, NULL);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
        return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
        /* unified addressing: either side may be device or (pinned or pageable) host memory */
        return copy(DEV(dst), false, DEV(src), false, ByteCount, NULL);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
        return copy(DEV(dstDevice), true, srcHost, false, ByteCount, hStream);
}

CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
        return copy(dstHost, false, DEV(srcDevice), true, ByteCount, hStream);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
        return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
        return copy(DEV(dst), false, DEV(src), false, ByteCount, hStream);
}

/* Fills @n elements of @size bytes at @dst with @value. */
static CUresult fill(CUdeviceptr dst, uint32_t value, size_t size, size_t n, CUstream stream)
{
        if (n && (n > SIZE_MAX / size || (dst & (size - 1))))
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        if (!mc_stream_ok(stream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        if (!mc_find_alloc(dst, n * size))
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        uint8_t *p = DEV(dst);
        for (size_t i = 0; i < n; i++)
                memcpy(p + i * size, &value, size); /* little-endian: the low bytes of @value */
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
        if (!N)
                return CUDA_SUCCESS;
        return fill(dstDevice, uc, 1, N, NULL);
}

CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
        return fill(dstDevice, us, 2, N, NULL);
}

CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
        return fill(dstDevice, ui, 4, N, NULL);
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
        return fill(dstDevice, uc, 1, N, hStream);
}

CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
        return fill(dstDevice, us, 2, N, hStream);
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
        return fill(dstDevice, ui, 4, N, hStream);
}

/* The per-thread default stream flavours: every stream runs its work at once, so they are the same calls. */
ALIAS(cuMemcpy_ptds, cuMemcpy)
ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)
ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)
ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)
ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2)
ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2)
ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2)
ALIAS(cuMemcpyAsync_ptsz, cuMemcpyAsync)
ALIAS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2)
ALIAS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2)
ALIAS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2)
ALIAS(cuMemsetD8Async_ptsz, cuMemsetD8Async)
ALIAS(cuMemsetD16Async_ptsz, cuMemsetD16Async)
ALIAS(cuMemsetD32Async_ptsz, cuMemsetD32Async)
