// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: cuGetProcAddress (Driver API "Driver Entry Point
 * Access", CUDA 11.3; _v2 with the status, CUDA 12.0).  A program asks for
 * an entry point by its base name and the CUDA version it was built for;
 * the driver answers with the ABI of that version: "cuCtxCreate" at 12050 or
 * later is cuCtxCreate_v4, at 11040 cuCtxCreate_v3, at 3020 cuCtxCreate_v2.
 * With CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM it answers the `_ptds`
 * / `_ptsz` flavour where there is one.  The versions are those of NVIDIA's
 * cudaTypedefs.h (PFN_<name>_v<version>) for the entry points the mock has.
 */
#include <stdint.h>
#include <string.h>

#include "mock/cuda/libcuda-internal.h"

typedef void (*any_fn)(void);

static const struct proc {
        const char *name;
        int version;    /* the first CUDA version (1000 * major + 10 * minor) with this ABI */
        bool per_thread;
        any_fn fn;
} procs[] = {
#define P(name, version, sym) { #name, version, false, (any_fn) (sym) },
#define T(name, version, sym) { #name, version, true, (any_fn) (sym) },
        P(cuInit, 2000, cuInit)
        P(cuDriverGetVersion, 2020, cuDriverGetVersion)
        P(cuGetErrorString, 6000, cuGetErrorString)
        P(cuGetErrorName, 6000, cuGetErrorName)
        P(cuGetProcAddress, 11030, cuGetProcAddress)
        P(cuGetProcAddress, 12000, cuGetProcAddress_v2)
        P(cuDeviceGet, 2000, cuDeviceGet)
        P(cuDeviceGetCount, 2000, cuDeviceGetCount)
        P(cuDeviceGetName, 2000, cuDeviceGetName)
        P(cuDeviceGetUuid, 9020, cuDeviceGetUuid)
        P(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2)
        P(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2)
        P(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute)
        P(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability)
        P(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId)
        P(cuDeviceGetByPCIBusId, 4010, cuDeviceGetByPCIBusId)
        P(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer)
        P(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain)
        P(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease)
        P(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2)
        P(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset)
        P(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2)
        P(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState)
        P(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags)
        P(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2)
        P(cuCtxCreate, 3020, cuCtxCreate_v2)
        P(cuCtxCreate, 11040, cuCtxCreate_v3)
        P(cuCtxCreate, 12050, cuCtxCreate_v4)
        P(cuCtxDestroy, 4000, cuCtxDestroy_v2)
        P(cuCtxSetCurrent, 4000, cuCtxSetCurrent)
        P(cuCtxGetCurrent, 4000, cuCtxGetCurrent)
        P(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2)
        P(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2)
        P(cuCtxGetDevice, 2000, cuCtxGetDevice)
        P(cuCtxGetDevice, 13000, cuCtxGetDevice_v2)
        P(cuCtxGetApiVersion, 3020, cuCtxGetApiVersion)
        P(cuCtxGetFlags, 7000, cuCtxGetFlags)
        P(cuCtxSynchronize, 2000, cuCtxSynchronize)
        P(cuCtxSynchronize, 13000, cuCtxSynchronize_v2)
        P(cuModuleLoad, 2000, cuModuleLoad)
        P(cuModuleLoadData, 2000, cuModuleLoadData)
        P(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx)
        P(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary)
        P(cuModuleUnload, 2000, cuModuleUnload)
        P(cuModuleGetFunction, 2000, cuModuleGetFunction)
        P(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2)
        P(cuFuncGetAttribute, 2020, cuFuncGetAttribute)
        P(cuOccupancyMaxPotentialBlockSize, 6050, cuOccupancyMaxPotentialBlockSize)
        P(cuLibraryLoadData, 12000, cuLibraryLoadData)
        P(cuLibraryLoadFromFile, 12000, cuLibraryLoadFromFile)
        P(cuLibraryUnload, 12000, cuLibraryUnload)
        P(cuLibraryGetKernel, 12000, cuLibraryGetKernel)
        P(cuLibraryGetModule, 12000, cuLibraryGetModule)
        P(cuLibraryGetGlobal, 12000, cuLibraryGetGlobal)
        P(cuKernelGetFunction, 12000, cuKernelGetFunction)
        P(cuMemAlloc, 3020, cuMemAlloc_v2)
        P(cuMemFree, 3020, cuMemFree_v2)
        P(cuMemGetInfo, 3020, cuMemGetInfo_v2)
        P(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2)
        P(cuMemAllocHost, 3020, cuMemAllocHost_v2)
        P(cuMemHostAlloc, 2020, cuMemHostAlloc)
        P(cuMemFreeHost, 2000, cuMemFreeHost)
        P(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2)
        P(cuMemcpy, 4000, cuMemcpy)
        T(cuMemcpy, 7000, cuMemcpy_ptds)
        P(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2)
        T(cuMemcpyHtoD, 7000, cuMemcpyHtoD_v2_ptds)
        P(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2)
        T(cuMemcpyDtoH, 7000, cuMemcpyDtoH_v2_ptds)
        P(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2)
        T(cuMemcpyDtoD, 7000, cuMemcpyDtoD_v2_ptds)
        P(cuMemcpyAsync, 4000, cuMemcpyAsync)
        T(cuMemcpyAsync, 7000, cuMemcpyAsync_ptsz)
        P(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2)
        T(cuMemcpyHtoDAsync, 7000, cuMemcpyHtoDAsync_v2_ptsz)
        P(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2)
        T(cuMemcpyDtoHAsync, 7000, cuMemcpyDtoHAsync_v2_ptsz)
        P(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2)
        T(cuMemcpyDtoDAsync, 7000, cuMemcpyDtoDAsync_v2_ptsz)
        P(cuMemsetD8, 3020, cuMemsetD8_v2)
        T(cuMemsetD8, 7000, cuMemsetD8_v2_ptds)
        P(cuMemsetD16, 3020, cuMemsetD16_v2)
        T(cuMemsetD16, 7000, cuMemsetD16_v2_ptds)
        P(cuMemsetD32, 3020, cuMemsetD32_v2)
        T(cuMemsetD32, 7000, cuMemsetD32_v2_ptds)
        P(cuMemsetD8Async, 3020, cuMemsetD8Async)
        T(cuMemsetD8Async, 7000, cuMemsetD8Async_ptsz)
        P(cuMemsetD16Async, 3020, cuMemsetD16Async)
        T(cuMemsetD16Async, 7000, cuMemsetD16Async_ptsz)
        P(cuMemsetD32Async, 3020, cuMemsetD32Async)
        T(cuMemsetD32Async, 7000, cuMemsetD32Async_ptsz)
        P(cuStreamCreate, 2000, cuStreamCreate)
        P(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority)
        P(cuStreamDestroy, 4000, cuStreamDestroy_v2)
        P(cuStreamSynchronize, 2000, cuStreamSynchronize)
        T(cuStreamSynchronize, 7000, cuStreamSynchronize_ptsz)
        P(cuStreamQuery, 2000, cuStreamQuery)
        T(cuStreamQuery, 7000, cuStreamQuery_ptsz)
        P(cuStreamWaitEvent, 3020, cuStreamWaitEvent)
        T(cuStreamWaitEvent, 7000, cuStreamWaitEvent_ptsz)
        P(cuEventCreate, 2000, cuEventCreate)
        P(cuEventDestroy, 4000, cuEventDestroy_v2)
        P(cuEventRecord, 2000, cuEventRecord)
        T(cuEventRecord, 7000, cuEventRecord_ptsz)
        P(cuEventSynchronize, 2000, cuEventSynchronize)
        P(cuEventQuery, 2000, cuEventQuery)
        P(cuEventElapsedTime, 2000, cuEventElapsedTime)
        P(cuEventElapsedTime, 12080, cuEventElapsedTime_v2)
        P(cuLaunchKernel, 4000, cuLaunchKernel)
        T(cuLaunchKernel, 7000, cuLaunchKernel_ptsz)
#undef P
#undef T
};

/* Looks @symbol up for @version and @flags; the status and, on success, the entry point. */
static CUdriverProcAddressQueryResult lookup(const char *symbol, int version, cuuint64_t flags, any_fn *out)
{
        const struct proc *best = NULL;
        bool found = false;
        bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
                const struct proc *p = &procs[i];
                if (strcmp(p->name, symbol) != 0)
                        continue;
                found = true;
                if (p->version > version || (p->per_thread && !per_thread))
                        continue;
                /* the newest ABI not after @version; a per-thread flavour wins over the plain one */
                if (!best || p->version > best->version || (p->per_thread && !best->per_thread))
                        best = p;
        }
        if (!best)
                return found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        *out = best->fn;
        return CU_GET_PROC_ADDRESS_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
        if (!symbol || !pfn || (flags & ~(cuuint64_t) 3) || cudaVersion <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        any_fn fn = NULL;
        CUdriverProcAddressQueryResult st = lookup(symbol, cudaVersion, flags, &fn);
        if (symbolStatus)
                *symbolStatus = st;
        if (st != CU_GET_PROC_ADDRESS_SUCCESS) {
                *pfn = NULL;
                return CUDA_ERROR_NOT_FOUND;
        }
        memcpy(pfn, &fn, sizeof(fn)); /* POSIX: function pointers convert to void * */
        return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
        return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
