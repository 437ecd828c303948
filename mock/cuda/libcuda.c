// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1: the CUDA Driver API entry points a device query and
 * `gpu-validator cuda-check` use, answered from the mock NVML library so the
 * devices, names, UUIDs, memory sizes and faults are the NVML profile's.
 * Prototypes, types and CUresult values: the CUDA contract of abi/cuda
 * (shared with cuda-check), written from NVIDIA's CUDA Driver API reference;
 * nothing from a CUDA toolkit is used.  docs/mock-nvml.md "Mock libcuda" describes it.
 *
 * Devices: the GPUs of libnvidia-ml.so.1 (the one beside this library first,
 * else the ordinary search), filtered by NVIDIA_VISIBLE_DEVICES (what the
 * container toolkit would mount) and then CUDA_VISIBLE_DEVICES (indexes or
 * GPU-/MIG- UUIDs; the list stops at the first entry that names nothing, as
 * CUDA's does).  A MIG-enabled GPU contributes its MIG devices, and only one
 * MIG device is enumerated per process (CUDA 11/12, MIG user guide).
 *
 * Memory is host memory; a "device pointer" is its address, checked against
 * the live allocations.  Kernels run on the CPU: modules (PTX text or a
 * fatbin with a PTX entry) are parsed once into a decoded form that the PTX
 * interpreter (ptx.h) runs; an instruction it does not know fails the launch
 * with CUDA_ERROR_NOT_SUPPORTED and a line on stderr naming it, never a
 * wrong result.
 *
 * Faults from NVML: nvmlInit failing with DRIVER_NOT_LOADED makes cuInit
 * CUDA_ERROR_NO_DEVICE, LIB_RM_VERSION_MISMATCH CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
 * anything else CUDA_ERROR_UNKNOWN; a visible GPU that NVML reports lost
 * (GPU_IS_LOST, Xid 79) makes cuInit fail with CUDA_ERROR_UNKNOWN (999, what
 * CUDA applications print after a GPU fell off the bus), and a GPU lost after
 * cuInit fails context creation and launches with CUDA_ERROR_LAUNCH_FAILED
 * and later calls with the same sticky error.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "abi/cuda/cuda-results.h"
#include "base/cleanup.h"
#include "mock/cuda/libcuda-internal.h"

struct mock_cuda_state mc_state = { .lock = PTHREAD_MUTEX_INITIALIZER };

CUresult mc_leave(CUresult r)
{
        pthread_mutex_unlock(&S.lock);
        return r;
}

/* ------------------------------------------------------------------ */
/* NVML                                                                */

static void anchor(void)
{
}

/* Opens libnvidia-ml.so.1 beside this library, else through the ordinary search (abi/nvml's loader); NULL when neither loads. */
static gv_nvml_t *open_nvml(void)
{
        Dl_info info;
        _cleanup_free_ char *beside = NULL;
        if (dladdr((void *) (uintptr_t) &anchor, &info) && info.dli_fname) {
                const char *slash = strrchr(info.dli_fname, '/');
                if (slash && asprintf(&beside, "%.*s/libnvidia-ml.so.1", (int) (slash - info.dli_fname),
                                      info.dli_fname) < 0)
                        beside = NULL;
        }
        const char *candidates[] = { beside ? beside : "libnvidia-ml.so.1", "libnvidia-ml.so.1", NULL };
        gv_nvml_t *nvml = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_nvml_open(candidates, &nvml, &err) < 0)
                return NULL;
        return nvml;
}

/* The CUDA error a failed nvmlInit means (see the file comment). */
static CUresult init_error(nvmlReturn_t r)
{
        switch (r) {
        case NVML_ERROR_DRIVER_NOT_LOADED:
        case NVML_ERROR_LIBRARY_NOT_FOUND: return CUDA_ERROR_NO_DEVICE;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
        default: return CUDA_ERROR_UNKNOWN;
        }
}

/* Fills @d from the NVML handle @h (parent @parent); the NVML error, GPU_IS_LOST for a lost GPU. */
static nvmlReturn_t describe(const gv_nvml_t *a, nvmlDevice_t h, nvmlDevice_t parent, mock_dev_t *d)
{
        memset(d, 0, sizeof(*d));
        d->nvml = h;
        d->parent = parent;
        nvmlReturn_t r = a->nvmlDeviceGetName(h, d->name, sizeof(d->name));
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetUUID(h, d->uuid, sizeof(d->uuid));
        nvmlMemory_t mem;
        if (r == NVML_SUCCESS && (r = a->nvmlDeviceGetMemoryInfo(h, &mem)) == NVML_SUCCESS)
                d->total = mem.total;
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetCudaComputeCapability(parent, &d->cc_major, &d->cc_minor);
        if (r == NVML_SUCCESS)
                r = a->nvmlDeviceGetPciInfo_v3(parent, &d->pci);
        nvmlDeviceAttributes_t at;
        nvmlDeviceArchitecture_t arch;
        unsigned cores;
        if (r == NVML_SUCCESS && h != parent && a->nvmlDeviceGetAttributes_v2(h, &at) == NVML_SUCCESS)
                d->sms = at.multiprocessorCount;
        else if (r == NVML_SUCCESS && S.gpu_cores && S.gpu_cores(h, &cores) == NVML_SUCCESS &&
                 a->nvmlDeviceGetArchitecture(h, &arch) == NVML_SUCCESS)
                d->sms = cores / (arch >= NVML_DEVICE_ARCH_ADA && arch != NVML_DEVICE_ARCH_UNKNOWN ? 128 : 64);
        return r;
}

/* ------------------------------------------------------------------ */
/* visible devices                                                     */

/* The candidate list: every GPU, a MIG-enabled GPU replaced by its MIG devices. */
static CUresult enumerate_all(const gv_nvml_t *a, mock_dev_t *out, int *n)
{
        unsigned count = 0;
        if (a->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS)
                return CUDA_ERROR_UNKNOWN;
        *n = 0;
        for (unsigned i = 0; i < count && *n < MAX_DEVICES; i++) {
                nvmlDevice_t g;
                if (a->nvmlDeviceGetHandleByIndex_v2(i, &g) != NVML_SUCCESS) {
                        memset(&out[*n], 0, sizeof(out[*n]));
                        out[*n].lost = true; /* GPU_IS_LOST already here */
                        out[*n].gpu_index = i;
                        out[*n].mig_index = -1;
                        (*n)++;
                        continue;
                }
                unsigned cur = 0, pend = 0, max = 0;
                bool mig = a->nvmlDeviceGetMigMode(g, &cur, &pend) == NVML_SUCCESS && cur == NVML_DEVICE_MIG_ENABLE &&
                           a->nvmlDeviceGetMaxMigDeviceCount(g, &max) == NVML_SUCCESS;
                if (!mig) {
                        /* GPU_IS_LOST (Xid 79) or any other failure: cuInit's CUDA_ERROR_UNKNOWN if it is visible */
                        out[*n].lost = describe(a, g, g, &out[*n]) != NVML_SUCCESS;
                        out[*n].gpu_index = i;
                        out[*n].mig_index = -1;
                        (*n)++;
                        continue;
                }
                for (unsigned k = 0; k < max && *n < MAX_DEVICES; k++) {
                        nvmlDevice_t md;
                        nvmlReturn_t r = a->nvmlDeviceGetMigDeviceHandleByIndex(g, k, &md);
                        if (r == NVML_ERROR_NOT_FOUND)
                                continue;
                        if (r == NVML_SUCCESS)
                                r = describe(a, md, g, &out[*n]);
                        if (r != NVML_SUCCESS)
                                return CUDA_ERROR_UNKNOWN;
                        out[*n].gpu_index = i;
                        out[*n].mig_index = (int) k;
                        (*n)++;
                }
        }
        return CUDA_SUCCESS;
}

/*
 * Index into @all of the device @item names, -1 for none.  A number is a CUDA
 * ordinal (@physical false: CUDA_VISIBLE_DEVICES) or an NVML GPU index
 * (@physical true: NVIDIA_VISIBLE_DEVICES, which also takes "G:M", MIG
 * device M of GPU G).  A GPU- UUID, a GPU index, or a MIG-enabled GPU's UUID
 * selects the whole GPU (*whole_gpu: all entries with its parent).
 */
static int find_item(const gv_nvml_t *a, const mock_dev_t *all, int n, const char *item, bool physical,
                     bool *whole_gpu)
{
        *whole_gpu = false;
        char *end;
        long v = strtol(item, &end, 10);
        if (*item && end != item && !*end && !physical)
                return v >= 0 && v < n ? (int) v : -1;
        if (*item && end != item && physical) {
                long mig = -1;
                if (*end == ':') {
                        char *e2;
                        mig = strtol(end + 1, &e2, 10);
                        if (e2 == end + 1 || *e2)
                                return -1;
                } else if (*end) {
                        return -1;
                }
                for (int i = 0; i < n; i++)
                        if ((long) all[i].gpu_index == v && (mig < 0 || all[i].mig_index == mig)) {
                                *whole_gpu = mig < 0;
                                return i;
                        }
                return -1;
        }
        for (int i = 0; i < n; i++)
                if (strcasecmp(all[i].uuid, item) == 0)
                        return i;
        /* a GPU- UUID of a MIG-enabled GPU selects its MIG devices */
        for (int i = 0; i < n; i++) {
                char pu[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
                if (all[i].parent != all[i].nvml && a->nvmlDeviceGetUUID(all[i].parent, pu, sizeof(pu)) == NVML_SUCCESS &&
                    strcasecmp(pu, item) == 0) {
                        *whole_gpu = true;
                        return i;
                }
        }
        return -1;
}

/*
 * Applies one visibility list @spec to @all (n entries) into @out.  NULL or
 * empty: everything.  @stop_at_unknown: CUDA_VISIBLE_DEVICES stops at the
 * first entry naming nothing; NVIDIA_VISIBLE_DEVICES skips it.
 */
static int filter(const gv_nvml_t *a, const mock_dev_t *all, int n, const char *spec, bool stop_at_unknown,
                  mock_dev_t *out)
{
        if (!spec || !*spec || strcasecmp(spec, "all") == 0 || strcasecmp(spec, "void") == 0) {
                memmove(out, all, (size_t) n * sizeof(*all));
                return n;
        }
        if (strcasecmp(spec, "none") == 0)
                return 0;
        char *copy = strdup(spec);
        if (!copy)
                return 0;
        bool taken[MAX_DEVICES] = { false };
        int k = 0;
        char *save = NULL;
        for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
                while (isspace((unsigned char) *it))
                        it++;
                for (char *e = it + strlen(it); e > it && isspace((unsigned char) e[-1]); e--)
                        e[-1] = '\0';
                bool whole = false;
                int i = find_item(a, all, n, it, !stop_at_unknown, &whole);
                if (i < 0) {
                        if (stop_at_unknown)
                                break;
                        continue;
                }
                for (int j = i; j < n; j++) {
                        if (j != i && (!whole || all[j].parent != all[i].parent))
                                continue;
                        if (!taken[j] && k < MAX_DEVICES) {
                                taken[j] = true;
                                out[k++] = all[j];
                        }
                }
        }
        free(copy);
        return k;
}

/* Keeps the first MIG device and drops the others: CUDA enumerates one MIG device per process. */
static int one_mig_device(mock_dev_t *d, int n)
{
        int k = 0;
        bool seen = false;
        for (int i = 0; i < n; i++) {
                bool mig = d[i].parent != d[i].nvml;
                if (mig && seen)
                        continue;
                seen |= mig;
                d[k++] = d[i];
        }
        return k;
}

static CUresult do_init(void)
{
        if (!(S.nvml = open_nvml()))
                return CUDA_ERROR_NO_DEVICE; /* no NVML, no driver: what a node without the kernel module says */
        void *sym = dlsym(S.nvml->handle, "nvmlDeviceGetMemoryBusWidth");
        memcpy(&S.bus_width, &sym, sizeof(sym));
        sym = dlsym(S.nvml->handle, "nvmlDeviceGetNumGpuCores");
        memcpy(&S.gpu_cores, &sym, sizeof(sym));
        nvmlReturn_t r = S.nvml->nvmlInit_v2();
        if (r != NVML_SUCCESS)
                return init_error(r);
        S.nvml_initialised = true;
        if (!S.nvml->nvmlSystemGetCudaDriverVersion ||
            S.nvml->nvmlSystemGetCudaDriverVersion(&S.driver_version) != NVML_SUCCESS)
                S.driver_version = 0;
        _cleanup_free_ mock_dev_t *all = calloc(MAX_DEVICES, sizeof(*all));
        _cleanup_free_ mock_dev_t *mid = calloc(MAX_DEVICES, sizeof(*mid));
        if (!all || !mid)
                return CUDA_ERROR_OUT_OF_MEMORY;
        int n = 0;
        CUresult cr = enumerate_all(S.nvml, all, &n);
        if (cr != CUDA_SUCCESS)
                return cr;
        n = filter(S.nvml, all, n, getenv("NVIDIA_VISIBLE_DEVICES"), false, mid);
        n = filter(S.nvml, mid, n, getenv("CUDA_VISIBLE_DEVICES"), true, S.devs);
        S.n = one_mig_device(S.devs, n);
        for (int i = 0; i < S.n; i++)
                if (S.devs[i].lost)
                        return CUDA_ERROR_UNKNOWN;
        for (int i = 0; i < S.n; i++)
                S.primary[i].device = i;
        return CUDA_SUCCESS;
}

/*
 * When the library is unloaded (dlclose), what it holds goes: the NVML
 * binding and any memory the program did not free, which would otherwise
 * be unreachable from then on.
 */
__attribute__((destructor)) static void unload(void)
{
        mc_drop_all_allocs();
        if (S.nvml && S.nvml_initialised)
                S.nvml->nvmlShutdown(); /* the init of cuInit: NVML frees its state when the count drops to 0 */
        gv_nvml_close(&S.nvml);
}

CUresult cuInit(unsigned int flags)
{
        pthread_mutex_lock(&S.lock);
        if (flags != 0)
                return mc_leave(CUDA_ERROR_INVALID_VALUE);
        if (!S.initialised && !S.init_result) {
                S.init_result = do_init();
                S.initialised = S.init_result == CUDA_SUCCESS;
        }
        return mc_leave(S.init_result);
}

CUresult cuDriverGetVersion(int *version)
{
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_lock(&S.lock);
        /* Answers before cuInit, as the real one does: the NVML library's CUDA version. */
        if (!S.initialised && !S.driver_version) {
                int v = 0;
                gv_nvml_t *a = open_nvml();
                if (a && a->nvmlInit_v2() == NVML_SUCCESS) {
                        if (!a->nvmlSystemGetCudaDriverVersion || a->nvmlSystemGetCudaDriverVersion(&v) != NVML_SUCCESS)
                                v = 0;
                        a->nvmlShutdown();
                }
                gv_nvml_close(&a);
                *version = v;
                return mc_leave(CUDA_SUCCESS);
        }
        *version = S.driver_version;
        return mc_leave(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* error text (Driver API "Error Handling"; the table of abi/cuda)      */

CUresult cuGetErrorString(CUresult error, const char **str)
{
        if (!str)
                return CUDA_ERROR_INVALID_VALUE;
        *str = gv_cuda_result_text(error);
        return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **str)
{
        if (!str)
                return CUDA_ERROR_INVALID_VALUE;
        *str = gv_cuda_result_name(error);
        return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/*
 * NVIDIA's CUDA runtime library (libcudart) reaches the driver through
 * undocumented export tables; the mock has none.  A program built on the
 * runtime is told so plainly instead of failing somewhere later.
 */
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
        (void) pExportTableId;
        if (ppExportTable)
                *ppExportTable = NULL;
        fprintf(stderr, "mock libcuda: cuGetExportTable: the mock implements the documented CUDA Driver API "
                        "only; programs built on NVIDIA's CUDA runtime library (libcudart) need the real driver "
                        "(docs/cuda-check.md)\n");
        return CUDA_ERROR_NOT_SUPPORTED;
}
