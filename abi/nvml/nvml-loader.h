/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NVML contract's binding: dlopen() a libnvidia-ml.so.1 and resolve the
 * typed symbol table of nvml-abi.h, in the manner of libnvidia-container.
 * Shared by the product (src/nvml adds the mapping of NVML returns to our
 * failure classes; the driver component and cuda-check use it) and by the
 * mock's nvidia-smi; nothing links against NVML directly.  Depends only on
 * the contract (nvml-abi.h, nvml-returns.h) and base/.
 */
#ifndef GV_ABI_NVML_LOADER_H
#define GV_ABI_NVML_LOADER_H

#include <stdbool.h>

#include "abi/nvml/nvml-abi.h"
#include "base/error.h"

/*
 * The loaded library.  Every member of GV_NVML_FUNCTIONS is present as a
 * function pointer of its exact type; a symbol the library lacks is NULL
 * unless it is one of the required ones (then gv_nvml_open() fails).
 */
typedef struct gv_nvml {
        void *handle;      /* dlopen() handle */
        char *path;        /* the path that was opened (heap) */
#define GV_NVML_MEMBER(name, params) name##_fn name;
        GV_NVML_FUNCTIONS(GV_NVML_MEMBER)
#undef GV_NVML_MEMBER
        nvmlErrorString_fn nvmlErrorString;
} gv_nvml_t;

/*
 * gv_nvml_open - dlopen() the first candidate path that exists (RTLD_NOW |
 * RTLD_LOCAL) and resolve the symbol table.  A candidate without a slash is
 * passed to dlopen() as is, so the system search applies (for a host driver
 * seen from the host).
 * @candidates: NULL-terminated list of paths, tried in order.
 * @out: receives a heap object owned by the caller (gv_nvml_close()).
 * Errors: -ENOENT / GV_REASON_LIBRARY_NOT_FOUND listing every path tried
 * and dlerror()'s text; -ENOSYS / GV_REASON_LIBRARY_NOT_FOUND when a
 * required symbol is missing (named in the message); -ENOMEM.
 */
int gv_nvml_open(const char *const *candidates, gv_nvml_t **out, gv_error_t **err);

/* gv_nvml_close - dlclose() and free; sets *nvml to NULL.  Does not call nvmlShutdown. */
void gv_nvml_close(gv_nvml_t **nvml);

/*
 * gv_nvml_strerror - the library's own text for @ret (nvmlErrorString), or
 * the contract's one (nvml-returns.h) when the library has none (or @nvml
 * is NULL).  Static string; never NULL.
 */
const char *gv_nvml_strerror(const gv_nvml_t *nvml, nvmlReturn_t ret);

/* gv_nvml_return_name - "NVML_ERROR_NO_PERMISSION" and so on (nvml-returns.h); static string. */
const char *gv_nvml_return_name(nvmlReturn_t ret);

#endif
