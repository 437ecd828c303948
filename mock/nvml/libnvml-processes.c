/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: compute, graphics and MPS process lists.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stdio.h>
#include <string.h>

#include "mock/nvml/libnvml-internal.h"

/* Which process list a query reads. */
enum process_list {
        COMPUTE_PROCESSES,  /* the profile's processes: CUDA jobs */
        GRAPHICS_PROCESSES, /* none: profiles describe compute nodes */
        MPS_PROCESSES,      /* none: profiles run no MPS server */
};

/* Whether process @p shows through MIG slot @m of @d (-1: the whole GPU, every process shows). */
static bool process_visible(const gv_mock_device_t *d, int m, const gv_mock_process_t *p)
{
        return m < 0 || (p->gi_id == d->mig_devices[m].gi_id && p->ci_id == d->mig_devices[m].ci_id);
}

/*
 * process_query - the body of the compute/graphics/MPS process queries.
 * @infos holds *infoCount entries of @entry bytes: sizeof(nvmlProcessInfo_v1_t)
 * for the plain names, sizeof(nvmlProcessInfo_t) for _v2/_v3.  A MIG handle
 * sees the processes of its GPU and compute instance only.
 */
static nvmlReturn_t process_query(nvmlDevice_t device, unsigned int *infoCount, void *infos, size_t entry,
                                  enum process_list list)
{
        DEVICE_QUERY(ANY_HANDLE, device, infoCount, GV_MOCK_FIELD_PROCESSES);
        unsigned n = 0;
        for (size_t i = 0; list == COMPUTE_PROCESSES && i < d->n_processes; i++) {
                const gv_mock_process_t *p = &d->processes[i];
                if (!process_visible(d, m, p))
                        continue;
                n++;
        }
        if (*infoCount < n) {
                *infoCount = n;
                return mn_leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n && !infos)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned char *out = infos;
        for (size_t i = 0; list == COMPUTE_PROCESSES && i < d->n_processes; i++) {
                const gv_mock_process_t *p = &d->processes[i];
                if (!process_visible(d, m, p))
                        continue;
                nvmlProcessInfo_t e = { .pid = p->pid,
                                        .usedGpuMemory = p->used_memory_mib * MIB,
                                        .gpuInstanceId = p->gi_id,
                                        .computeInstanceId = p->ci_id };
                memcpy(out, &e, entry); /* v1 is the first 16 bytes of v2/v3 */
                out += entry;
        }
        *infoCount = n;
        return mn_leave(NVML_SUCCESS);
}

/*
 * PROCESS_GETTER(fn, entry_type, list) - entry point @fn: process list @list
 * in entries of @entry_type (nvmlProcessInfo_v1_t for the plain names,
 * nvmlProcessInfo_t for _v2/_v3).
 */
#define PROCESS_GETTER(fn, entry_type, list)                                                        \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'entry_type' is a type name, not an expression */ \
        nvmlReturn_t fn(nvmlDevice_t device, unsigned int *infoCount, entry_type *infos)            \
        {                                                                                           \
                return process_query(device, infoCount, infos, sizeof(*infos), (list));             \
        }

PROCESS_GETTER(nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t, COMPUTE_PROCESSES)
PROCESS_GETTER(nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t, COMPUTE_PROCESSES)
PROCESS_GETTER(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t, GRAPHICS_PROCESSES)
PROCESS_GETTER(nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t, GRAPHICS_PROCESSES)
PROCESS_GETTER(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t, MPS_PROCESSES)
PROCESS_GETTER(nvmlDeviceGetMPSComputeRunningProcesses, nvmlProcessInfo_v1_t, MPS_PROCESSES)

/*
 * nvmlDeviceGetProcessUtilization - one sample per process of the profile,
 * taken now (CLOCK_REALTIME, microseconds), when that is newer than
 * @lastSeenTimeStamp; else NOT_FOUND, as nvml.h says when no sample is
 * newer.  A NULL @utilization or a short buffer: INSUFFICIENT_SIZE with the
 * count.  The profile gives no per-process figures: the GPU's SM and memory
 * utilisation are shared evenly by its processes (the first ones get the
 * remainder), the codecs are idle.  Not supported with MIG on (nvml.h).
 */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp)
{
        DEVICE_QUERY(ANY_HANDLE, device, processSamplesCount, GV_MOCK_FIELD_PROCESSES | GV_MOCK_FIELD_UTILIZATION);
        if (mn_mig_on(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        unsigned long long stamp =
                (unsigned long long) now.tv_sec * 1000000ULL + (unsigned long long) now.tv_nsec / 1000ULL;
        unsigned n = stamp > lastSeenTimeStamp ? (unsigned) d->n_processes : 0;
        if (!n)
                return mn_leave(NVML_ERROR_NOT_FOUND);
        if (!utilization || *processSamplesCount < n) {
                *processSamplesCount = n;
                return mn_leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        for (unsigned i = 0; i < n; i++) {
                utilization[i] = (nvmlProcessUtilizationSample_t) {
                        .pid = d->processes[i].pid,
                        .timeStamp = stamp,
                        .smUtil = d->utilization_gpu / n + (i < d->utilization_gpu % n ? 1 : 0),
                        .memUtil = d->utilization_memory / n + (i < d->utilization_memory % n ? 1 : 0),
                };
        }
        *processSamplesCount = n;
        return mn_leave(NVML_SUCCESS);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlDeviceGetComputeRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3)
GV_MOCK_ALIAS(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlDeviceGetGraphicsRunningProcesses_v3)
GV_MOCK_ALIAS(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlDeviceGetMPSComputeRunningProcesses_v3)

/*
 * nvmlSystemGetProcessName - the name of process @pid: a process of the profile
 * or of `mock set process=PID:MIB:NAME` gives its NAME; else, as NVML does for a
 * real process, argv[0] from /proc/PID/cmdline.  NOT_FOUND for neither.
 */
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
        BEGIN();
        if (!name || !length)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < S.profile->device_count && i < GV_MOCK_MAX_GPUS; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                for (size_t k = 0; k < d->n_processes; k++)
                        if (d->processes[k].pid == pid && d->processes[k].name)
                                return mn_leave(mn_copy_str(name, length, d->processes[k].name));
        }
        char path[64], buf[256];
        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        FILE *f = fopen(path, "re");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
                (void) fclose(f);
        if (!n)
                return mn_leave(NVML_ERROR_NOT_FOUND);
        buf[n] = '\0'; /* argv[0] ends at its NUL */
        return mn_leave(mn_copy_str(name, length, buf));
}
