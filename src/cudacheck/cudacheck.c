/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CUDA driver loader and the vector-add run.  Prototypes and CUresult
 * values: CUDA Driver API reference (docs.nvidia.com/cuda/cuda-driver-api),
 * declared in cudacheck.h in our own words.
 */
#include "base/clock.h"
#include "cudacheck.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"

const char *const gv_cudacheck_required[] = {
        "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuCtxCreate_v2", "cuCtxDestroy_v2",
        "cuModuleLoadData", "cuModuleGetFunction", "cuMemAlloc_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
        "cuLaunchKernel", "cuCtxSynchronize", "cuMemFree_v2", "cuGetErrorString", NULL,
};

int gv_cudacheck_open(const char *path, gv_cuda_t **out, gv_error_t **err)
{
        return gv_cuda_open(path, gv_cudacheck_required, out, err);
}

int gv_cuda_error(gv_error_t **err, const gv_cuda_t *cuda, CUresult res, const char *what)
{
        const char *text = gv_cuda_strerror(cuda, res), *name = gv_cuda_strname(cuda, res);
        int errnum = EIO;
        gv_reason_t reason = GV_REASON_WORKLOAD;
        switch (res) {
        case CUDA_ERROR_NO_DEVICE:
        case CUDA_ERROR_STUB_LIBRARY:
        case CUDA_ERROR_INSUFFICIENT_DRIVER:
        case CUDA_ERROR_NOT_INITIALIZED:
        case CUDA_ERROR_DEINITIALIZED:
                errnum = ENODEV;
                reason = GV_REASON_DRIVER_NOT_LOADED;
                break;
        case CUDA_ERROR_OUT_OF_MEMORY:
                errnum = ENOMEM;
                break;
        default:
                break;
        }
        return gv_error_set(err, errnum, reason, "%s: %s (%s, %d)", what, text, name, (int) res);
}

int gv_cuda_init(gv_cuda_t *cuda, int *device_count, int *driver_version, gv_error_t **err)
{
        CUresult res = cuda->cuInit(0);
        if (res != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "cuInit");
        int count = 0;
        res = cuda->cuDeviceGetCount(&count);
        if (res != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "cuDeviceGetCount");
        int version = 0;
        if (cuda->cuDriverGetVersion && cuda->cuDriverGetVersion(&version) != CUDA_SUCCESS)
                version = 0;
        if (device_count)
                *device_count = count;
        if (driver_version)
                *driver_version = version;
        return 0;
}

int gv_cuda_device_name(gv_cuda_t *cuda, int ordinal, char **out, gv_error_t **err)
{
        CUdevice dev = 0;
        CUresult res = cuda->cuDeviceGet(&dev, ordinal);
        if (res != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "cuDeviceGet");
        char name[256] = "";
        res = cuda->cuDeviceGetName(name, (int) sizeof(name), dev);
        if (res != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "cuDeviceGetName");
        name[sizeof(name) - 1] = '\0';
        char *copy = strdup(name[0] ? name : "unnamed device");
        if (!copy)
                return gv_error_oom(err);
        *out = copy;
        return 0;
}

/* Device resources of one run, released by run_release() on every path. */
typedef struct run {
        gv_cuda_t *cuda;
        CUcontext ctx;
        CUmodule mod;
        CUdeviceptr d[3];
} run_t;

static void run_release(run_t *r)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(r->d); i++)
                if (r->d[i])
                        r->cuda->cuMemFree_v2(r->d[i]);
        if (r->mod && r->cuda->cuModuleUnload)
                r->cuda->cuModuleUnload(r->mod);
        /* Destroying the context releases whatever the module and buffers still hold. */
        if (r->ctx)
                r->cuda->cuCtxDestroy_v2(r->ctx);
}

/* The device part of a run; host buffers belong to the caller. */
static int run_device(run_t *r, int ordinal, size_t elements, const float *a, const float *b, float *c,
                      double *kernel_ms, gv_error_t **err)
{
        gv_cuda_t *cuda = r->cuda;
        size_t bytes = elements * sizeof(float);
        CUdevice dev = 0;
        CUresult res = cuda->cuDeviceGet(&dev, ordinal);
        if (res != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "cuDeviceGet");
        if ((res = cuda->cuCtxCreate_v2(&r->ctx, 0, dev)) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "create context (cuCtxCreate_v2)");
        if ((res = cuda->cuModuleLoadData(&r->mod, gv_cudacheck_ptx)) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "load PTX module (cuModuleLoadData)");
        CUfunction fn = NULL;
        if ((res = cuda->cuModuleGetFunction(&fn, r->mod, GV_CUDACHECK_KERNEL)) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "find kernel " GV_CUDACHECK_KERNEL " (cuModuleGetFunction)");
        for (size_t i = 0; i < GV_ARRAY_SIZE(r->d); i++) {
                if ((res = cuda->cuMemAlloc_v2(&r->d[i], bytes)) != CUDA_SUCCESS) {
                        r->d[i] = 0;
                        return gv_cuda_error(err, cuda, res, "allocate device memory (cuMemAlloc_v2)");
                }
        }
        if ((res = cuda->cuMemcpyHtoD_v2(r->d[0], a, bytes)) != CUDA_SUCCESS ||
            (res = cuda->cuMemcpyHtoD_v2(r->d[1], b, bytes)) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "copy inputs to the device (cuMemcpyHtoD_v2)");

        unsigned int n = (unsigned int) elements;
        void *params[] = { &r->d[0], &r->d[1], &r->d[2], &n };
        unsigned int grid = (unsigned int) ((elements + GV_CUDACHECK_BLOCK - 1) / GV_CUDACHECK_BLOCK);
        double t0 = ((double) gv_now_ns() / 1e6);
        if ((res = cuda->cuLaunchKernel(fn, grid, 1, 1, GV_CUDACHECK_BLOCK, 1, 1, 0, NULL, params, NULL)) !=
            CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "launch kernel (cuLaunchKernel)");
        if ((res = cuda->cuCtxSynchronize()) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "run kernel (cuCtxSynchronize)");
        *kernel_ms = ((double) gv_now_ns() / 1e6) - t0;
        if ((res = cuda->cuMemcpyDtoH_v2(c, r->d[2], bytes)) != CUDA_SUCCESS)
                return gv_cuda_error(err, cuda, res, "copy the result back (cuMemcpyDtoH_v2)");
        return 0;
}

int gv_cudacheck_vector_add(gv_cuda_t *cuda, int ordinal, size_t elements, gv_cudacheck_result_t *out,
                            gv_error_t **err)
{
        if (elements < 1 || elements > GV_CUDACHECK_MAX_ELEMENTS)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%zu elements: expected 1 to %u", elements,
                                    GV_CUDACHECK_MAX_ELEMENTS);
        _cleanup_free_ float *a = malloc(elements * sizeof(float));
        _cleanup_free_ float *b = malloc(elements * sizeof(float));
        _cleanup_free_ float *c = malloc(elements * sizeof(float));
        if (!a || !b || !c) {
                gv_error_oom(err);
                return gv_error_prefix(err, "%zu MiB of host buffers", gv_cudacheck_bytes(elements) >> 20);
        }
        gv_cudacheck_fill(a, b, elements);
        /* A value the kernel cannot produce, so an element it skipped is caught. */
        memset(c, 0xff, elements * sizeof(float));

        double t0 = ((double) gv_now_ns() / 1e6), kernel_ms = 0;
        run_t r = { .cuda = cuda };
        int ret = run_device(&r, ordinal, elements, a, b, c, &kernel_ms, err);
        run_release(&r);
        if (ret < 0)
                return ret;
        double total_ms = ((double) gv_now_ns() / 1e6) - t0;

        size_t first = 0;
        size_t bad = gv_cudacheck_verify(c, elements, &first);
        if (bad > 0) {
                return gv_error_set(err, EIO, GV_REASON_WORKLOAD,
                                    "%zu of %zu results wrong, first at index %zu: got %g, expected %g", bad,
                                    elements, first, (double) c[first], (double) (a[first] + b[first]));
        }
        *out = (gv_cudacheck_result_t) {
                .elements = elements,
                .bytes = gv_cudacheck_bytes(elements),
                .total_ms = total_ms,
                .kernel_ms = kernel_ms,
        };
        return 0;
}

/* ---- NVML-only check ---- */

void gv_nvml_gpus_free(gv_nvml_gpu_t *gpus, size_t n)
{
        if (!gpus)
                return;
        for (size_t i = 0; i < n; i++) {
                free(gpus[i].name);
                free(gpus[i].uuid);
        }
        free(gpus);
}

static int nvml_gpus(gv_nvml_t *nvml, gv_nvml_gpu_t **out, size_t *n_out, gv_error_t **err)
{
        unsigned count = 0;
        nvmlReturn_t ret = nvml->nvmlDeviceGetCount_v2(&count);
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, nvml, ret, "nvmlDeviceGetCount_v2");
        if (count == 0) {
                *out = NULL;
                *n_out = 0;
                return 0;
        }
        gv_nvml_gpu_t *gpus = calloc(count, sizeof(*gpus));
        if (!gpus)
                return gv_error_oom(err);
        for (unsigned i = 0; i < count; i++) {
                nvmlDevice_t dev = NULL;
                char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
                char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
                int r = 0;
                if ((ret = nvml->nvmlDeviceGetHandleByIndex_v2(i, &dev)) != NVML_SUCCESS)
                        r = gv_nvml_error(err, nvml, ret, "nvmlDeviceGetHandleByIndex_v2");
                else if ((ret = nvml->nvmlDeviceGetName(dev, name, sizeof(name))) != NVML_SUCCESS)
                        r = gv_nvml_error(err, nvml, ret, "nvmlDeviceGetName");
                else if ((ret = nvml->nvmlDeviceGetUUID(dev, uuid, sizeof(uuid))) != NVML_SUCCESS)
                        r = gv_nvml_error(err, nvml, ret, "nvmlDeviceGetUUID");
                if (r < 0) {
                        gv_nvml_gpus_free(gpus, count);
                        return gv_error_prefix(err, "GPU %u", i);
                }
                name[sizeof(name) - 1] = uuid[sizeof(uuid) - 1] = '\0';
                gpus[i].index = i;
                gpus[i].name = strdup(name);
                gpus[i].uuid = strdup(uuid);
                if (!gpus[i].name || !gpus[i].uuid) {
                        gv_nvml_gpus_free(gpus, count);
                        return gv_error_oom(err);
                }
        }
        *out = gpus;
        *n_out = count;
        return 0;
}

int gv_cudacheck_nvml_gpus(gv_nvml_t *nvml, gv_nvml_gpu_t **out, size_t *n, gv_error_t **err)
{
        nvmlReturn_t ret = nvml->nvmlInit_v2();
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, nvml, ret, "nvmlInit_v2");
        int r = nvml_gpus(nvml, out, n, err);
        nvml->nvmlShutdown();
        return r;
}
