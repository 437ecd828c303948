// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: PTX modules, kernels run on the CPU, and the error text.
 * Types, state and macros: libcuda-internal.h.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/libcuda-internal.h"
#include "mock/cuda/ptx.h"

/* ------------------------------------------------------------------ */
/* modules and kernels                                                 */

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

