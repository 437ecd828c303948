/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUDA contract's binding: dlopen() a libcuda.so.1 and resolve the typed
 * symbol table of cuda-abi.h (GV_CUDA_FUNCTIONS), in the manner of
 * libnvidia-container's NVML table.  Used by `gpu-validator cuda-check`
 * (src/cudacheck) and by the tests of the mock libcuda; nothing links
 * against CUDA.  Depends only on the contract and base/.
 */
#ifndef GV_ABI_CUDA_LOADER_H
#define GV_ABI_CUDA_LOADER_H

#include "abi/cuda/cuda-abi.h"
#include "base/error.h"

/*
 * The loaded library: every member of GV_CUDA_FUNCTIONS as a function
 * pointer of its exact type, NULL where the library lacks the symbol (the
 * required ones are always there: gv_cuda_open() fails otherwise).
 */
typedef struct gv_cuda {
        void *handle; /* dlopen() handle */
        char *path;   /* what was passed to dlopen() (heap) */
#define GV_CUDA_MEMBER(name, params) name##_fn name;
        GV_CUDA_FUNCTIONS(GV_CUDA_MEMBER)
#undef GV_CUDA_MEMBER
} gv_cuda_t;

/*
 * gv_cuda_open - dlopen(@path, RTLD_NOW | RTLD_LOCAL) and resolve the table.
 * @path: a soname (system search, LD_LIBRARY_PATH applies) or a file path;
 * NULL or "" means GV_CUDA_LIBRARY.  @required: NULL-terminated symbol names
 * that must be present (NULL: none).  *out receives a heap object owned by
 * the caller (gv_cuda_close()).
 * Errors: -ENOENT / GV_REASON_LIBRARY_NOT_FOUND with dlerror()'s text when the
 * library cannot be loaded; -ENOSYS / GV_REASON_LIBRARY_NOT_FOUND naming the
 * first missing required symbol; -ENOMEM.
 */
int gv_cuda_open(const char *path, const char *const *required, gv_cuda_t **out, gv_error_t **err);

/* gv_cuda_close - dlclose() and free; sets *cuda to NULL; accepts NULL and *cuda == NULL. */
void gv_cuda_close(gv_cuda_t **cuda);

/*
 * gv_cuda_strerror - the driver's own text for @res (cuGetErrorString) or,
 * when it has none (NVIDIA's stub library, an unknown code), the contract's
 * (cuda-results.h); "unknown error" for a value no table knows.  Static
 * string, never NULL.
 */
const char *gv_cuda_strerror(const gv_cuda_t *cuda, CUresult res);

/*
 * gv_cuda_strname - the driver's name for @res (cuGetErrorName) or the
 * contract's; "CUDA_ERROR" for a value no table knows.  Static string.
 */
const char *gv_cuda_strname(const gv_cuda_t *cuda, CUresult res);

#endif
