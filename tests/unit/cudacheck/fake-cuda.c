/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake CUDA driver (libcuda.so.1) for tests: the Driver API entry points
 * that cudacheck resolves, computed on the CPU.  "Device memory" is host
 * memory; cuLaunchKernel runs gv_vector_add element by element; the PTX
 * text is checked for the shape a real JIT needs.  Prototypes follow the
 * CUDA Driver API reference, as declared in src/cudacheck/cudacheck.h.
 *
 * Controlled by the environment, read at each call:
 *   FAKE_CUDA_DEVICES      device count (default 2)
 *   FAKE_CUDA_MODE         "" / ok, "stub" (cuInit fails as a stub library does),
 *                          "no-device" (cuInit: CUDA_ERROR_NO_DEVICE), "wrong" (one
 *                          wrong sum), "skip-last" (last element not written),
 *                          "launch-fail", "oom" (third cuMemAlloc fails),
 *                          "bad-ptx" (refuse every module)
 *   FAKE_CUDA_FAIL_DEVICE  apply the kernel/memory modes only on this device
 *
 * Test code: it keeps the current device and the live allocation count in
 * thread-local variables, as a real driver keeps its current context.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudacheck/cudacheck.h"

#define EXPORT __attribute__((visibility("default")))

static _Thread_local int current_device = -1;
static _Thread_local int live_allocs;
static _Thread_local int alloc_calls;
static _Thread_local bool initialised;

/* Prototypes for -Wmissing-prototypes; the types come from GV_CUDA_FUNCTIONS. */
#define FAKE_PROTO(name, params) EXPORT CUresult name params;
GV_CUDA_FUNCTIONS(FAKE_PROTO)
#undef FAKE_PROTO
EXPORT int fake_cuda_live_allocations(void);

struct CUctx_st {
        int device;
};
struct CUmod_st {
        int magic;
};

static const char *mode(void)
{
        const char *m = getenv("FAKE_CUDA_MODE");
        return m ? m : "";
}

static bool mode_is(const char *m)
{
        return strcmp(mode(), m) == 0;
}

/* Whether a device-side fault mode applies to the current device. */
static bool fault(const char *m)
{
        if (!mode_is(m))
                return false;
        const char *d = getenv("FAKE_CUDA_FAIL_DEVICE");
        return !d || atoi(d) == current_device;
}

static int device_count(void)
{
        const char *n = getenv("FAKE_CUDA_DEVICES");
        return n ? atoi(n) : 2;
}

int fake_cuda_live_allocations(void)
{
        return live_allocs;
}

CUresult cuInit(unsigned int flags)
{
        if (flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (mode_is("stub"))
                return CUDA_ERROR_STUB_LIBRARY;
        if (mode_is("no-device"))
                return CUDA_ERROR_NO_DEVICE;
        initialised = true;
        return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
        *version = 12040;
        return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
        if (!initialised)
                return CUDA_ERROR_NOT_INITIALIZED;
        *count = device_count();
        return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
        if (!initialised)
                return CUDA_ERROR_NOT_INITIALIZED;
        if (ordinal < 0 || ordinal >= device_count())
                return CUDA_ERROR_INVALID_DEVICE;
        *device = ordinal;
        return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
        if (len < 1 || dev < 0 || dev >= device_count())
                return CUDA_ERROR_INVALID_VALUE;
        snprintf(name, (size_t) len, "Fake GPU %d", dev);
        return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        if (dev < 0 || dev >= device_count())
                return CUDA_ERROR_INVALID_DEVICE;
        CUcontext c = calloc(1, sizeof(*c));
        if (!c)
                return CUDA_ERROR_OUT_OF_MEMORY;
        c->device = dev;
        current_device = dev;
        alloc_calls = 0;
        *pctx = c;
        return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
        if (!ctx)
                return CUDA_ERROR_INVALID_VALUE;
        free(ctx);
        current_device = -1;
        return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
        return current_device < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* What a JIT needs at the least: header directives, the entry, four parameters, balanced braces. */
static bool ptx_plausible(const char *ptx)
{
        if (!strstr(ptx, ".version ") || !strstr(ptx, ".target sm_") || !strstr(ptx, ".address_size 64") ||
            !strstr(ptx, ".entry " GV_CUDACHECK_KERNEL "("))
                return false;
        int depth = 0, params = 0;
        for (const char *p = ptx; *p; p++) {
                if (*p == '{')
                        depth++;
                else if (*p == '}' && --depth < 0)
                        return false;
        }
        for (const char *p = ptx; (p = strstr(p, ".param ")) != NULL; p++)
                if (p[-1] == '\t' || p[-1] == ' ')
                        params += (strncmp(p, ".param .u", 9) == 0);
        return depth == 0 && params == 4 && strstr(ptx, "ret;") && strstr(ptx, "st.global.f32");
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
        if (current_device < 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (mode_is("bad-ptx") || !ptx_plausible(image))
                return CUDA_ERROR_INVALID_PTX;
        CUmodule m = calloc(1, sizeof(*m));
        if (!m)
                return CUDA_ERROR_OUT_OF_MEMORY;
        m->magic = 0x5054;
        *module = m;
        return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
        if (!hmod || hmod->magic != 0x5054)
                return CUDA_ERROR_INVALID_VALUE;
        free(hmod);
        return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
        if (!hmod || strcmp(name, GV_CUDACHECK_KERNEL) != 0)
                return CUDA_ERROR_NOT_FOUND;
        *hfunc = (CUfunction) hmod;
        return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        if (++alloc_calls == 3 && fault("oom"))
                return CUDA_ERROR_OUT_OF_MEMORY;
        void *p = malloc(bytesize);
        if (!p)
                return CUDA_ERROR_OUT_OF_MEMORY;
        live_allocs++;
        *dptr = (CUdeviceptr) (uintptr_t) p;
        return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        if (!dptr)
                return CUDA_ERROR_INVALID_VALUE;
        free((void *) (uintptr_t) dptr);
        live_allocs--;
        return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
        memcpy((void *) (uintptr_t) dst, src, bytes);
        return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
        memcpy(dst, (const void *) (uintptr_t) src, bytes);
        return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                              unsigned int block_x, unsigned int block_y, unsigned int block_z,
                              unsigned int shared_mem_bytes, CUstream stream, void **kernel_params,
                              void **extra)
{
        if (!f || !kernel_params || extra || grid_y != 1 || grid_z != 1 || block_y != 1 || block_z != 1 ||
            block_x == 0 || block_x > 1024)
                return CUDA_ERROR_INVALID_VALUE;
        if (fault("launch-fail"))
                return CUDA_ERROR_LAUNCH_FAILED;
        const float *a = (const float *) (uintptr_t) *(CUdeviceptr *) kernel_params[0];
        const float *b = (const float *) (uintptr_t) *(CUdeviceptr *) kernel_params[1];
        float *c = (float *) (uintptr_t) *(CUdeviceptr *) kernel_params[2];
        unsigned int n = *(unsigned int *) kernel_params[3];
        unsigned long long threads = (unsigned long long) grid_x * block_x;
        for (unsigned long long i = 0; i < threads && i < n; i++)
                c[i] = a[i] + b[i];
        if (fault("wrong") && n > 1)
                c[n / 2] += 1.0f;
        if (fault("skip-last") && n > 0)
                c[n - 1] = 0.0f / 0.0f;
        return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **str)
{
        switch (error) {
        case CUDA_ERROR_STUB_LIBRARY:
                *str = "fake: CUDA driver is a stub library";
                return CUDA_SUCCESS;
        case CUDA_ERROR_NO_DEVICE:
                *str = "fake: no CUDA-capable device is detected";
                return CUDA_SUCCESS;
        case CUDA_ERROR_LAUNCH_FAILED:
                *str = "fake: unspecified launch failure";
                return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_PTX:
                *str = "fake: a PTX JIT compilation failed";
                return CUDA_SUCCESS;
        default:
                *str = NULL;
                return CUDA_ERROR_INVALID_VALUE;
        }
}

CUresult cuGetErrorName(CUresult error, const char **str)
{
        (void) error;
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE; /* exercise our fallback names */
}
