/* SPDX-License-Identifier: Apache-2.0 */
#include "nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"

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

static const struct {
        nvmlReturn_t code;
        const char *name;
        const char *text;
} return_names[] = {
        { NVML_SUCCESS, "NVML_SUCCESS", "Success" },
        { NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED", "Uninitialized" },
        { NVML_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT", "Invalid Argument" },
        { NVML_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED", "Not Supported" },
        { NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION", "Insufficient Permissions" },
        { NVML_ERROR_ALREADY_INITIALIZED, "NVML_ERROR_ALREADY_INITIALIZED", "Already Initialized" },
        { NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND", "Not Found" },
        { NVML_ERROR_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE", "Insufficient Size" },
        { NVML_ERROR_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER", "Insufficient External Power" },
        { NVML_ERROR_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED", "Driver Not Loaded" },
        { NVML_ERROR_TIMEOUT, "NVML_ERROR_TIMEOUT", "Timeout" },
        { NVML_ERROR_IRQ_ISSUE, "NVML_ERROR_IRQ_ISSUE", "Interrupt Request Issue" },
        { NVML_ERROR_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML Shared Library Not Found" },
        { NVML_ERROR_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND", "Function Not Found" },
        { NVML_ERROR_CORRUPTED_INFOROM, "NVML_ERROR_CORRUPTED_INFOROM", "Corrupted infoROM" },
        { NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST", "GPU is lost" },
        { NVML_ERROR_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED", "GPU requires restart" },
        { NVML_ERROR_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM", "The operating system has blocked the request" },
        { NVML_ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch" },
        { NVML_ERROR_IN_USE, "NVML_ERROR_IN_USE", "In use by another client" },
        { NVML_ERROR_MEMORY, "NVML_ERROR_MEMORY", "Insufficient Memory" },
        { NVML_ERROR_NO_DATA, "NVML_ERROR_NO_DATA", "No data" },
        { NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "The requested vgpu operation is not available on target device, because ECC is enabled" },
        { NVML_ERROR_INSUFFICIENT_RESOURCES, "NVML_ERROR_INSUFFICIENT_RESOURCES", "Ran out of critical resources, other than memory" },
        { NVML_ERROR_FREQ_NOT_SUPPORTED, "NVML_ERROR_FREQ_NOT_SUPPORTED", "Ran out of critical resources, other than memory" },
        { NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "The provided version is invalid/unsupported" },
        { NVML_ERROR_DEPRECATED, "NVML_ERROR_DEPRECATED", "The requested functionality has been deprecated" },
        { NVML_ERROR_NOT_READY, "NVML_ERROR_NOT_READY", "The system is not ready for the request" },
        { NVML_ERROR_GPU_NOT_FOUND, "NVML_ERROR_GPU_NOT_FOUND", "No GPUs were found" },
        { NVML_ERROR_INVALID_STATE, "NVML_ERROR_INVALID_STATE", "Resource not in correct state to perform requested operation" },
        { NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED", "Reset type not supported" },
        { NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN", "Unknown Error" },
};

const char *gv_nvml_return_name(nvmlReturn_t ret)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(return_names); i++)
                if (return_names[i].code == ret)
                        return return_names[i].name;
        return "NVML_ERROR_UNKNOWN";
}

const char *gv_nvml_strerror(const gv_nvml_t *nvml, nvmlReturn_t ret)
{
        if (nvml && nvml->nvmlErrorString) {
                const char *s = nvml->nvmlErrorString(ret);
                if (s && *s)
                        return s;
        }
        for (size_t i = 0; i < GV_ARRAY_SIZE(return_names); i++)
                if (return_names[i].code == ret)
                        return return_names[i].text;
        return "Unknown Error";
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
        if (fclose(TAKE_PTR(tf)) != 0) { /* out of memory: name no half list */
                free(tried);
                tried = NULL;
        }
        int r = gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found; tried:%s",
                             tried && *tried ? tried : " (no candidate paths)");
        free(tried);
        return r;
}
