// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: cuLaunchKernel (Driver API "Execution Control").
 * The parameters are laid out as the kernel's PTX declares them (from
 * kernelParams, one pointer per parameter, or from the `extra` buffer), the
 * grid runs on the CPU (ptx.h gv_ptx_run(), blocks spread over one worker
 * per online CPU), and a fault in the kernel becomes the context's sticky
 * error, reported by the next synchronising call as a GPU's would be:
 * CUDA_ERROR_ILLEGAL_ADDRESS (700), CUDA_ERROR_MISALIGNED_ADDRESS (716),
 * CUDA_ERROR_LAUNCH_FAILED (719) for a trap.  A kernel with an instruction
 * the interpreter does not run is refused at launch with
 * CUDA_ERROR_NOT_SUPPORTED (801) and a line on stderr naming it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/cuda/libcuda-internal.h"

/* Copies the launch's parameters into @buf (layout @pl); CUDA_SUCCESS or INVALID_VALUE. */
static CUresult gather_params(const gv_ptx_params_t *pl, void **params, void **extra, uint8_t *buf)
{
        if (params) {
                for (size_t i = 0; i < pl->count; i++) {
                        if (!params[i])
                                return CUDA_ERROR_INVALID_VALUE;
                        memcpy(buf + pl->offset[i], params[i], pl->size[i]);
                }
                return CUDA_SUCCESS;
        }
        if (!extra)
                return pl->count ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
        const void *ptr = NULL;
        size_t size = 0;
        bool have_size = false;
        for (size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
                if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
                        ptr = extra[i + 1];
                } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                        if (!extra[i + 1])
                                return CUDA_ERROR_INVALID_VALUE;
                        memcpy(&size, extra[i + 1], sizeof(size));
                        have_size = true;
                } else {
                        return CUDA_ERROR_INVALID_VALUE;
                }
        }
        if (!ptr || !have_size || size < pl->bytes)
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(buf, ptr, pl->bytes);
        return CUDA_SUCCESS;
}

static CUresult fault_result(gv_ptx_fault_t f)
{
        switch (f) {
        case GV_PTX_ILLEGAL_ADDRESS: return CUDA_ERROR_ILLEGAL_ADDRESS;
        case GV_PTX_MISALIGNED: return CUDA_ERROR_MISALIGNED_ADDRESS;
        case GV_PTX_TRAP: return CUDA_ERROR_LAUNCH_FAILED;
        case GV_PTX_NO_MEMORY: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
        default: return CUDA_ERROR_UNKNOWN;
        }
}

/* Grid and block limits of every GPU since compute capability 3.0 (CUDA C++ Programming Guide, "Compute Capabilities"). */
static bool dims_ok(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz)
{
        return gx && gy && gz && bx && by && bz && gx <= 2147483647u && gy <= 65535 && gz <= 65535 && bx <= 1024 &&
               by <= 1024 && bz <= 64 && (unsigned long long) bx * by * bz <= 1024;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
        if (!f)
                return CUDA_ERROR_INVALID_HANDLE;
        if (!dims_ok(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ))
                return CUDA_ERROR_INVALID_VALUE;
        ENTER_CTX();
        struct CUctx_st *c = mc_current_ctx();
        if (!mc_stream_ok(hStream))
                return mc_leave(CUDA_ERROR_INVALID_HANDLE);
        if (f->module->ctx != c)
                return mc_leave(CUDA_ERROR_INVALID_HANDLE); /* a function of another context */
        CUresult r = mc_check_alive(c->device, c);
        if (r != CUDA_SUCCESS)
                return mc_leave(r);
        if (gv_ptx_func_shared(f->ptx) + sharedMemBytes > (size_t) mc_max_shared_per_block_optin(c->device))
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        _cleanup_free_ char *unsupported = gv_ptx_unsupported(f->ptx);
        if (unsupported) {
                fprintf(stderr, "mock libcuda: kernel %s cannot run on the CPU: %s\n", gv_ptx_func_name(f->ptx),
                        unsupported);
                return mc_leave(CUDA_ERROR_NOT_SUPPORTED);
        }
        gv_ptx_params_t pl = gv_ptx_func_params(f->ptx);
        _cleanup_free_ uint8_t *buf = calloc(1, pl.bytes ? pl.bytes : 1);
        if (!buf)
                return mc_leave(CUDA_ERROR_OUT_OF_MEMORY);
        if ((r = gather_params(&pl, kernelParams, extra, buf)) != CUDA_SUCCESS)
                return mc_leave(r);
        gv_ptx_launch_t l = {
                .grid = { gridDimX, gridDimY, gridDimZ },
                .block = { blockDimX, blockDimY, blockDimZ },
                .dynamic_shared = sharedMemBytes,
                .params = buf,
                .range = mc_alloc_range,
        };
        _cleanup_free_ char *msg = NULL;
        gv_ptx_fault_t fault = gv_ptx_run(f->ptx, &l, &msg);
        if (fault == GV_PTX_UNSUPPORTED) {
                fprintf(stderr, "mock libcuda: kernel %s: %s\n", gv_ptx_func_name(f->ptx), msg ? msg : "");
                return mc_leave(CUDA_ERROR_NOT_SUPPORTED);
        }
        if (fault != GV_PTX_OK) {
                /* asynchronous on a GPU: the launch succeeds, the error is the context's from now on */
                fprintf(stderr, "mock libcuda: kernel %s: %s\n", gv_ptx_func_name(f->ptx), msg ? msg : "fault");
                c->sticky = fault_result(fault);
        }
        return mc_leave(CUDA_SUCCESS);
}

ALIAS(cuLaunchKernel_ptsz, cuLaunchKernel)
