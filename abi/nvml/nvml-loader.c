/* SPDX-License-Identifier: Apache-2.0 */
/* The typed dlopen binding of the NVML contract (see nvml-loader.h). */
#include "abi/nvml/nvml-loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nvml/nvml-returns.h"
#include "base/cleanup.h"
#include "base/fileio.h"

/* Symbols without which no validation is possible. */
static const char *const required_symbols[] = {
        "nvmlInit_v2",           "nvmlShutdown",       "nvmlErrorString",        "nvmlSystemGetDriverVersion",
        "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
        NULL,
};

/* Every member of gv_nvml_t that dlsym() fills: its symbol name and where it sits. */
static const struct {
        const char *name;
        size_t offset;
} symbol_table[] = {
#define GV_NVML_SYMBOL(name, params) { #name, offsetof(gv_nvml_t, name) },
        GV_NVML_FUNCTIONS(GV_NVML_SYMBOL)
#undef GV_NVML_SYMBOL
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

/* dlsym() every entry point of the table into @n; the required ones must be there. */
static int resolve(gv_nvml_t *n, gv_error_t **err)
{
        for (size_t i = 0; i < sizeof(symbol_table) / sizeof(symbol_table[0]); i++) {
                void *sym = dlsym(n->handle, symbol_table[i].name);
                if (!sym && is_required(symbol_table[i].name))
                        return gv_error_set(err, ENOSYS, GV_REASON_LIBRARY_NOT_FOUND,
                                            "%s: required symbol %s is missing (not an NVML library?)", n->path,
                                            symbol_table[i].name);
                memcpy((char *) n + symbol_table[i].offset, &sym, sizeof(sym));
        }
        void *sym = dlsym(n->handle, "nvmlErrorString");
        if (!sym)
                return gv_error_set(err, ENOSYS, GV_REASON_LIBRARY_NOT_FOUND,
                                    "%s: required symbol nvmlErrorString is missing", n->path);
        memcpy(&n->nvmlErrorString, &sym, sizeof(sym));
        return 0;
}

/* Wrap the dlopen() handle @h of @path in a resolved gv_nvml_t (*out); closes @h on failure. */
static int bind_library(void *h, const char *path, gv_nvml_t **out, gv_error_t **err)
{
        gv_nvml_t *n = calloc(1, sizeof(*n));
        if (!n || !(n->path = strdup(path))) {
                free(n);
                dlclose(h);
                return gv_error_oom(err);
        }
        n->handle = h;
        int r = resolve(n, err);
        if (r < 0) {
                gv_nvml_close(&n);
                return r;
        }
        *out = n;
        return 0;
}

int gv_nvml_open(const char *const *candidates, gv_nvml_t **out, gv_error_t **err)
{
        /* Declared first so that it is freed after the stream that writes it is closed. */
        _cleanup_free_ char *tried = NULL;
        size_t tried_len = 0;
        _cleanup_fclose_ FILE *tf = open_memstream(&tried, &tried_len);
        if (!tf)
                return gv_error_oom(err);

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
                return bind_library(h, *c, out, err); /* 'tried' is dropped */
        }
        if (gv_memstream_close(TAKE_PTR(tf), &tried) < 0)
                return gv_error_oom(err);
        return gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found; tried:%s",
                            tried && *tried ? tried : " (no candidate paths)");
}
