// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: modules and libraries as a real driver takes them
 * (PTX text, a fatbin container, nvcc's fatbin wrapper; Driver API "Module
 * Management", "Library Management") and kernel launches run by the PTX
 * interpreter ("Execution Control").
 *
 * What a real driver refuses is refused with its code:
 *  - a fatbin without PTX this GPU can JIT (only newer PTX, only cubins):
 *    CUDA_ERROR_NO_BINARY_FOR_GPU (209);
 *  - PTX whose .version needs a newer CUDA than the driver's (the PTX ISA
 *    release table, ptx.h gv_ptx_isa_cuda()): CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222);
 *  - PTX for a target above the GPU's compute capability, or an `a` target
 *    of another one, or malformed PTX: CUDA_ERROR_INVALID_PTX (218).
 * The reason is written to the JIT error log (CU_JIT_ERROR_LOG_BUFFER) when
 * the caller gave one, else to stderr, as ptxas's message would be.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/fileio.h"
#include "mock/cuda/fatbin.h"
#include "mock/cuda/libcuda-internal.h"

/* Where a load writes its error text (CU_JIT_ERROR_LOG_BUFFER / _SIZE_BYTES), if anywhere. */
typedef struct jit_log {
        char *buf;
        size_t size;
        bool given;
} jit_log_t;

static void say(jit_log_t *log, const char *what, const char *why)
{
        if (log && log->given) {
                if (log->buf && log->size)
                        snprintf(log->buf, log->size, "%s: %s", what, why ? why : "out of memory");
                return;
        }
        fprintf(stderr, "mock libcuda: %s: %s\n", what, why ? why : "out of memory");
}

/* The JIT options the mock reads: the error log buffer. */
static jit_log_t jit_options(unsigned n, const CUjit_option *opts, void **values)
{
        jit_log_t log = { 0 };
        for (unsigned i = 0; opts && values && i < n; i++) {
                if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) {
                        log.buf = values[i];
                        log.given = true;
                } else if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
                        log.size = (size_t) (uintptr_t) values[i];
                }
        }
        return log;
}

/* The device's sm number: 80 for compute capability 8.0, 100 for 10.0. */
static unsigned device_sm(int dev)
{
        return (unsigned) (S.devs[dev].cc_major * 10 + S.devs[dev].cc_minor);
}

/* Whether a module for @target (suffix @sfx) runs on a GPU of sm number @sm (PTX ISA ".target"). */
static bool target_fits(unsigned target, char sfx, unsigned sm)
{
        if (sfx == 'a')
                return target == sm;              /* architecture-specific: that exact GPU */
        if (sfx == 'f')
                return target / 10 == sm / 10 && target <= sm; /* family-specific: same major, not older */
        return target <= sm;
}

/* Checks a parsed module against the driver and the device; CUDA_SUCCESS or the refusal. */
static CUresult check_module(const gv_ptx_module_t *m, int dev, jit_log_t *log)
{
        char why[160];
        unsigned v = gv_ptx_version(m), sm = device_sm(dev);
        int needs = gv_ptx_isa_cuda(v);
        if (S.driver_version && (needs == 0 || needs > S.driver_version)) {
                snprintf(why, sizeof(why),
                         "PTX ISA %u.%u needs CUDA %d.%d or newer; this driver supports CUDA %d.%d", v / 10, v % 10,
                         needs ? needs / 1000 : (int) (v / 10 + 4), needs ? needs % 1000 / 10 : (int) (v % 10),
                         S.driver_version / 1000, S.driver_version % 1000 / 10);
                say(log, "ptxas application ptx input", why);
                return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
        }
        unsigned t = gv_ptx_target(m);
        char sfx = gv_ptx_target_suffix(m);
        if (!target_fits(t, sfx, sm)) {
                snprintf(why, sizeof(why), ".target sm_%u%s is not supported by %s (compute capability %d.%d)", t,
                         sfx == 'a' ? "a" : sfx == 'f' ? "f" : "", S.devs[dev].name, S.devs[dev].cc_major,
                         S.devs[dev].cc_minor);
                say(log, "ptxas application ptx input", why);
                return CUDA_ERROR_INVALID_PTX;
        }
        return CUDA_SUCCESS;
}

static void module_free(struct CUmod_st *m)
{
        if (!m)
                return;
        for (size_t i = 0; m->ptx && i < gv_ptx_global_count(m->ptx); i++) {
                void *addr;
                size_t bytes;
                gv_ptx_global_at(m->ptx, i, &addr, &bytes);
                if (addr)
                        mc_drop_alloc_at(addr);
        }
        gv_ptx_free(m->ptx);
        free(m->funcs);
        free(m);
}

/* Builds a module from the PTX @text (@len bytes) for the current context; S.lock is held. */
static CUresult module_from_ptx(const char *text, size_t len, struct CUmod_st **out, jit_log_t *log)
{
        struct CUctx_st *c = mc_current_ctx();
        _cleanup_free_ char *msg = NULL;
        gv_ptx_module_t *ptx = NULL;
        int r = gv_ptx_parse(text, len, &ptx, &msg);
        if (r == -ENOMEM)
                return CUDA_ERROR_OUT_OF_MEMORY;
        if (r < 0) {
                say(log, "ptxas application ptx input", msg);
                return CUDA_ERROR_INVALID_PTX;
        }
        CUresult cr = check_module(ptx, c->device, log);
        struct CUmod_st *m = calloc(1, sizeof(*m));
        if (cr != CUDA_SUCCESS || !m) {
                free(m);
                gv_ptx_free(ptx);
                return cr != CUDA_SUCCESS ? cr : CUDA_ERROR_OUT_OF_MEMORY;
        }
        m->ptx = ptx;
        m->ctx = c;
        m->n = gv_ptx_entry_count(ptx);
        if (m->n && !(m->funcs = calloc(m->n, sizeof(*m->funcs)))) {
                module_free(m);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (size_t i = 0; i < m->n; i++)
                m->funcs[i] = (struct CUfunc_st) { .ptx = gv_ptx_entry_at(ptx, i), .module = m };
        for (size_t i = 0; i < gv_ptx_global_count(ptx); i++) {
                void *addr;
                size_t bytes;
                gv_ptx_global_at(ptx, i, &addr, &bytes);
                if (addr && !mc_add_alloc(addr, bytes ? bytes : 1, ALLOC_MODULE, false, c)) {
                        module_free(m);
                        return CUDA_ERROR_OUT_OF_MEMORY;
                }
        }
        *out = m;
        return CUDA_SUCCESS;
}

/* Loads any image a driver takes: a fatbin wrapper, a fatbin container, a cubin (refused), or PTX text. */
static CUresult load_image(const void *image, struct CUmod_st **out, jit_log_t *log)
{
        const uint8_t *p = image;
        uint32_t magic;
        memcpy(&magic, p, sizeof(magic));
        if (magic == GV_FATBIN_WRAPPER_MAGIC) { /* { int magic; int version; const void *data; void *file } */
                const void *data;
                memcpy(&data, p + 8, sizeof(data));
                if (!data)
                        return CUDA_ERROR_INVALID_IMAGE;
                p = data;
                memcpy(&magic, p, sizeof(magic));
        }
        if (memcmp(p, "\177ELF", 4) == 0) {
                say(log, "cuModuleLoadData", "a cubin (SASS) image; the mock runs PTX only");
                return CUDA_ERROR_NO_BINARY_FOR_GPU;
        }
        if (magic == GV_FATBIN_MAGIC) {
                size_t size = gv_fatbin_size(p, 16);
                _cleanup_free_ char *ptx = NULL, *msg = NULL;
                size_t len = 0;
                int r = size ? gv_fatbin_ptx(p, size, device_sm(mc_current_ctx()->device), &ptx, &len, &msg) : -EINVAL;
                if (r == -ENOMEM)
                        return CUDA_ERROR_OUT_OF_MEMORY;
                if (r < 0) {
                        say(log, "cuModuleLoadData", msg ? msg : "fatbin: bad header");
                        return r == -ENOENT ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
                }
                return module_from_ptx(ptx, len, out, log);
        }
        return module_from_ptx(image, strnlen(image, GV_PTX_MAX_TEXT + 1), out, log);
}

static CUresult load(CUmodule *module, const void *image, jit_log_t *log)
{
        if (!module || !image)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        return mc_leave(load_image(image, module, log));
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
        return load(module, image, NULL);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
        jit_log_t log = jit_options(numOptions, options, optionValues);
        return load(module, image, &log);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
        return load(module, fatCubin, NULL);
}

/*
 * Reads the module file @fname whole (NUL-terminated, at most GV_FATBIN_MAX bytes) into *image:
 * CUDA_ERROR_OUT_OF_MEMORY when memory runs out, CUDA_ERROR_FILE_NOT_FOUND when it cannot be read
 * (absent, not a regular file, too large).
 */
static CUresult read_module_file(const char *fname, char **image)
{
        _cleanup_error_ gv_error_t *err = NULL;
        int r = gv_read_file_at(AT_FDCWD, fname, false, GV_FATBIN_MAX, image, NULL, &err);
        if (r == -ENOMEM)
                return CUDA_ERROR_OUT_OF_MEMORY;
        return r < 0 ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_SUCCESS;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
        if (!module || !fname)
                return CUDA_ERROR_INVALID_VALUE;
        _cleanup_free_ char *image = NULL;
        CUresult r = read_module_file(fname, &image);
        if (r != CUDA_SUCCESS)
                return r;
        return load(module, image, NULL);
}

CUresult cuModuleUnload(CUmodule hmod)
{
        if (!hmod)
                return CUDA_ERROR_INVALID_HANDLE;
        ENTER();
        module_free(hmod);
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
        if (!hfunc || !hmod || !name)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        for (size_t i = 0; i < hmod->n; i++)
                if (strcmp(gv_ptx_func_name(hmod->funcs[i].ptx), name) == 0) {
                        *hfunc = &hmod->funcs[i];
                        return mc_leave(CUDA_SUCCESS);
                }
        return mc_leave(CUDA_ERROR_NOT_FOUND);
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
        if (!hmod || !name)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        void *addr;
        size_t size;
        if (!gv_ptx_global(hmod->ptx, name, &addr, &size))
                return mc_leave(CUDA_ERROR_NOT_FOUND);
        if (dptr)
                *dptr = (CUdeviceptr) (uintptr_t) addr;
        if (bytes)
                *bytes = size;
        return mc_leave(CUDA_SUCCESS);
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
        if (!pi || !hfunc)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER();
        const gv_ptx_func_t *f = hfunc->ptx;
        const gv_ptx_module_t *m = hfunc->module->ptx;
        switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = (int) gv_ptx_func_shared(f); break;
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = (int) gv_ptx_func_local(f); break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = (int) (gv_ptx_func_registers(f) > 255 ? 255 : gv_ptx_func_registers(f)); break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = (int) gv_ptx_version(m); break;
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = (int) device_sm(hfunc->module->ctx->device); break;
        case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
                *pi = 49152 - (int) gv_ptx_func_shared(f);
                break;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
        default: return mc_leave(CUDA_ERROR_INVALID_VALUE);
        }
        return mc_leave(CUDA_SUCCESS);
}

/*
 * The block size that keeps a multiprocessor fullest, and the grid that fills the device with it
 * ("Occupancy"): the largest multiple of 32 up to @blockSizeLimit (1024 when 0) whose shared
 * memory (static, plus the callback's or @dynamicSMemSize) fits a block; registers are not
 * modelled (the interpreter has as many as a kernel declares).
 */
CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
        if (!minGridSize || !blockSize || !func || blockSizeLimit < 0)
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        int dev = func->module->ctx->device, limit = blockSizeLimit && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
        size_t fixed = gv_ptx_func_shared(func->ptx), cap = (size_t) mc_max_shared_per_block_optin(dev);
        int best = 0;
        for (int b = limit / 32 * 32; b >= 32 && !best; b -= 32) {
                size_t dyn = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(b) : dynamicSMemSize;
                if (fixed + dyn <= cap)
                        best = b;
        }
        if (!best)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        int per_sm = mc_max_threads_per_sm(dev) / best;
        *blockSize = best;
        *minGridSize = (int) S.devs[dev].sms * (per_sm ? per_sm : 1);
        return mc_leave(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* libraries (context-independent modules, CUDA 12.0)                  */

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
        (void) libraryOptions;
        (void) libraryOptionValues;
        (void) numLibraryOptions;
        if (!library || !code)
                return CUDA_ERROR_INVALID_VALUE;
        struct CUlib_st *lib = calloc(1, sizeof(*lib));
        if (!lib)
                return CUDA_ERROR_OUT_OF_MEMORY;
        jit_log_t log = jit_options(numJitOptions, jitOptions, jitOptionsValues);
        /* the mock's libraries live in the context current at load (the primary context in a runtime program) */
        CUresult r = load(&lib->module, code, &log);
        if (r != CUDA_SUCCESS) {
                free(lib);
                return r;
        }
        *library = lib;
        return CUDA_SUCCESS;
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
        if (!library || !fileName)
                return CUDA_ERROR_INVALID_VALUE;
        _cleanup_free_ char *image = NULL;
        CUresult r = read_module_file(fileName, &image);
        if (r != CUDA_SUCCESS)
                return r;
        return cuLibraryLoadData(library, image, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                                 libraryOptionValues, numLibraryOptions);
}

CUresult cuLibraryUnload(CUlibrary library)
{
        if (!library)
                return CUDA_ERROR_INVALID_HANDLE;
        CUresult r = cuModuleUnload(library->module);
        free(library);
        return r;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
        if (!pMod || !library)
                return CUDA_ERROR_INVALID_VALUE;
        *pMod = library->module;
        return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
        if (!pKernel || !library)
                return CUDA_ERROR_INVALID_VALUE;
        CUfunction f = NULL;
        CUresult r = cuModuleGetFunction(&f, library->module, name);
        if (r == CUDA_SUCCESS)
                *pKernel = (CUkernel) (void *) f; /* a kernel of the mock is its function in the load context */
        return r;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
        if (!pFunc || !kernel)
                return CUDA_ERROR_INVALID_VALUE;
        *pFunc = (CUfunction) (void *) kernel;
        return CUDA_SUCCESS;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
        if (!library)
                return CUDA_ERROR_INVALID_VALUE;
        return cuModuleGetGlobal_v2(dptr, bytes, library->module, name);
}
