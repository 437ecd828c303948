/* SPDX-License-Identifier: Apache-2.0 */
/* The typed dlopen binding of the CUDA contract (see cuda-loader.h). */
#include "abi/cuda/cuda-loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda/cuda-results.h"
#include "base/cleanup.h"

/* Every member of gv_cuda_t that dlsym() fills: its symbol name and where it sits. */
static const struct {
        const char *name;
        size_t offset;
} symbol_table[] = {
#define GV_CUDA_SYMBOL(name, params) { #name, offsetof(gv_cuda_t, name) },
        GV_CUDA_FUNCTIONS(GV_CUDA_SYMBOL)
#undef GV_CUDA_SYMBOL
};

void gv_cuda_close(gv_cuda_t **cuda)
{
        if (!cuda || !*cuda)
                return;
        if ((*cuda)->handle)
                dlclose((*cuda)->handle);
        free((*cuda)->path);
        free(*cuda);
        *cuda = NULL;
}

int gv_cuda_open(const char *path, const char *const *required, gv_cuda_t **out, gv_error_t **err)
{
        if (!path || !*path)
                path = GV_CUDA_LIBRARY;
        _cleanup_free_ gv_cuda_t *c = calloc(1, sizeof(*c));
        if (!c || !(c->path = strdup(path)))
                return gv_error_oom(err);
        dlerror();
        c->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!c->handle) {
                const char *why = dlerror();
                free(c->path);
                return gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "%s", why ? why : path);
        }
        /* dlsym() returns void *; POSIX guarantees it converts to a function pointer, which memcpy expresses. */
        for (size_t i = 0; i < sizeof(symbol_table) / sizeof(symbol_table[0]); i++) {
                void *sym = dlsym(c->handle, symbol_table[i].name);
                memcpy((char *) c + symbol_table[i].offset, &sym, sizeof(sym));
        }
        for (const char *const *r = required; r && *r; r++) {
                if (!dlsym(c->handle, *r)) {
                        int ret = gv_error_set(err, ENOSYS, GV_REASON_LIBRARY_NOT_FOUND,
                                               "%s: required symbol %s is missing (not a CUDA driver?)", path, *r);
                        gv_cuda_t *tmp = TAKE_PTR(c);
                        gv_cuda_close(&tmp);
                        return ret;
                }
        }
        *out = TAKE_PTR(c);
        return 0;
}

const char *gv_cuda_strerror(const gv_cuda_t *cuda, CUresult res)
{
        const char *s = NULL;
        if (cuda && cuda->cuGetErrorString && cuda->cuGetErrorString(res, &s) == CUDA_SUCCESS && s && *s)
                return s;
        s = gv_cuda_result_text(res);
        return s ? s : "unknown error";
}

const char *gv_cuda_strname(const gv_cuda_t *cuda, CUresult res)
{
        const char *s = NULL;
        if (cuda && cuda->cuGetErrorName && cuda->cuGetErrorName(res, &s) == CUDA_SUCCESS && s && *s)
                return s;
        s = gv_cuda_result_name(res);
        return s ? s : "CUDA_ERROR";
}
