/* SPDX-License-Identifier: Apache-2.0 */
#include "nvml.h"
#include "nvml-returns.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"

/* Symbols without which no validation is possible. */
static const char *const required_symbols[] = {
        "nvmlInit_v2",           "nvmlShutdown",       "nvmlErrorString",        "nvmlSystemGetDriverVersion",
        "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
        NULL,
};

static bool is_required(const char *name)
{
        for (const char *const *s = required_symbols; *s; s++)
                if (strcmp(*s, name) == 0)
                        return true;
        return false;
}

const char *gv_nvml_return_name(nvmlReturn_t ret)
{
        return gv_nvml_return_code_name(ret);
}

const char *gv_nvml_strerror(const gv_nvml_t *nvml, nvmlReturn_t ret)
{
        if (nvml && nvml->nvmlErrorString) {
                const char *s = nvml->nvmlErrorString(ret);
                if (s && *s)
                        return s;
        }
        return gv_nvml_return_text(ret);
}

gv_reason_t gv_nvml_reason(nvmlReturn_t ret)
{
        switch (ret) {
        case NVML_SUCCESS:
                return GV_REASON_NONE;
        case NVML_ERROR_NO_PERMISSION:
                return GV_REASON_PERMISSION_DENIED;
        case NVML_ERROR_DRIVER_NOT_LOADED:
                return GV_REASON_DRIVER_NOT_LOADED;
        case NVML_ERROR_LIBRARY_NOT_FOUND:
        case NVML_ERROR_FUNCTION_NOT_FOUND:
                return GV_REASON_LIBRARY_NOT_FOUND;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                return GV_REASON_DRIVER_MISMATCH;
        case NVML_ERROR_GPU_IS_LOST:
                return GV_REASON_GPU_LOST;
        case NVML_ERROR_GPU_NOT_FOUND:
                return GV_REASON_NO_GPU;
        case NVML_ERROR_TIMEOUT:
                return GV_REASON_TIMEOUT;
        default:
                return GV_REASON_NVML;
        }
}

int gv_nvml_error(gv_error_t **err, const gv_nvml_t *nvml, nvmlReturn_t ret, const char *what)
{
        int e = ret == NVML_ERROR_NO_PERMISSION ? EACCES : EIO;
        return gv_error_set(err, e, gv_nvml_reason(ret), "%s: %s (%s, %d)", what, gv_nvml_strerror(nvml, ret),
                            gv_nvml_return_name(ret), (int) ret);
}

void gv_nvml_close(gv_nvml_t **nvml)
{
        if (!nvml || !*nvml)
                return;
        if ((*nvml)->handle)
                dlclose((*nvml)->handle);
        free((*nvml)->path);
        free(*nvml);
        *nvml = NULL;
}

/* NOLINTNEXTLINE(readability-function-cognitive-complexity): one dlsym per NVML entry point with its versioned fallbacks; to be split in the architecture refactor */
static int resolve(gv_nvml_t *n, gv_error_t **err)
{
        void *sym;
#define GV_NVML_RESOLVE(name, params)                                                                     \
        sym = dlsym(n->handle, #name);                                                                    \
        if (!sym && is_required(#name))                                                                   \
                return gv_error_set(err, ENOSYS, GV_REASON_LIBRARY_NOT_FOUND,                             \
                                    "%s: required symbol %s is missing (not an NVML library?)", n->path,  \
                                    #name);                                                               \
        memcpy(&n->name, &sym, sizeof(sym));
        GV_NVML_FUNCTIONS(GV_NVML_RESOLVE)
#undef GV_NVML_RESOLVE
        sym = dlsym(n->handle, "nvmlErrorString");
        if (!sym)
                return gv_error_set(err, ENOSYS, GV_REASON_LIBRARY_NOT_FOUND,
                                    "%s: required symbol nvmlErrorString is missing", n->path);
        memcpy(&n->nvmlErrorString, &sym, sizeof(sym));
        return 0;
}

int gv_nvml_open(const char *const *candidates, gv_nvml_t **out, gv_error_t **err)
{
        char *tried = NULL;
        size_t tried_len = 0;
        _cleanup_fclose_ FILE *tf = open_memstream(&tried, &tried_len);
        if (!tf)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");

        for (const char *const *c = candidates; c && *c; c++) {
                bool is_path = strchr(*c, '/') != NULL;
                if (is_path && access(*c, F_OK) < 0) {
                        fprintf(tf, "\n  %s: %s", *c, strerror(errno));
                        continue;
                }
                void *h = dlopen(*c, RTLD_NOW | RTLD_LOCAL);
                if (!h) {
                        const char *de = dlerror();
                        fprintf(tf, "\n  %s: %s", *c, de ? de : "cannot load");
                        continue;
                }
                gv_nvml_t *n = calloc(1, sizeof(*n));
                if (!n || !(n->path = strdup(*c))) {
                        free(n);
                        dlclose(h);
                        (void) fclose(TAKE_PTR(tf)); /* 'tried' is dropped */
                        free(tried);
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                }
                n->handle = h;
                int r = resolve(n, err);
                if (r < 0) {
                        gv_nvml_close(&n);
                        (void) fclose(TAKE_PTR(tf)); /* 'tried' is dropped */
                        free(tried);
                        return r;
                }
                (void) fclose(TAKE_PTR(tf)); /* 'tried' is dropped */
                free(tried);
                *out = n;
                return 0;
        }
        if (gv_memstream_close(TAKE_PTR(tf), &tried) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        int r = gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found; tried:%s",
                             tried && *tried ? tried : " (no candidate paths)");
        free(tried);
        return r;
}
