/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: ECC and memory health, inforom, sessions, board facts, topology, affinity, field values.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mock/nvml/libnvml-internal.h"

/* ECC counters exist when ECC is on: every counter of a healthy mock GPU is 0 (the captures' volatile counts). */
static nvmlReturn_t ecc_counter(const gv_mock_device_t *d, unsigned errorType, unsigned counterType)
{
        if (mn_unsup(d, GV_MOCK_FIELD_ECC) || !d->ecc_current)
                return NVML_ERROR_NOT_SUPPORTED;
        if (errorType > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType > NVML_AGGREGATE_ECC)
                return NVML_ERROR_INVALID_ARGUMENT;
        /* With MIG on, the GPU's volatile counts are N/A on 510 (the A100-40GB capture; its MIG devices count) and 0 on
         * 535 (the A100-80GB capture). */
        if (counterType == NVML_VOLATILE_ECC && mn_mig_on(d) && mn_driver_branch() < 535)
                return NVML_ERROR_NOT_SUPPORTED;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
        DEVICE_QUERY(GPU_HANDLE, device, eccCounts, 0);
        nvmlReturn_t r = ecc_counter(d, errorType, counterType);
        if (r == NVML_SUCCESS) /* 0 unless `mock set` burst errors (volatile = aggregate) */
                *eccCounts = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? mn_control_gpu(g)->ecc_corrected
                                                                          : mn_control_gpu(g)->ecc_uncorrected;
        return mn_leave(r);
}

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                             nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType,
                                             unsigned long long *count)
{
        DEVICE_QUERY(ANY_HANDLE, device, count, 0);
        nvmlReturn_t r = ecc_counter(d, errorType, counterType);
        if (m >= 0) { /* a MIG device has its volatile counts (the A100 MIG captures' sram_uncorrectable 0), no aggregate */
                r = ecc_counter(d, errorType, NVML_AGGREGATE_ECC); /* ECC on, a known error type */
                if (r == NVML_SUCCESS && counterType != NVML_VOLATILE_ECC)
                        r = counterType == NVML_AGGREGATE_ECC ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
        }
        if (r == NVML_SUCCESS && locationType >= NVML_MEMORY_LOCATION_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r == NVML_SUCCESS) /* a burst of `mock set` is counted in device memory (DRAM, location 2) */
                *count = locationType != 2                                ? 0
                         : errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? mn_control_gpu(g)->ecc_corrected
                                                                          : mn_control_gpu(g)->ecc_uncorrected;
        return mn_leave(r);
}

/* Page retirement is the pre-Ampere scheme (T4: 0 pages, not pending); Ampere and later remap rows instead. */
static bool retires_pages(const gv_mock_device_t *d)
{
        return d->architecture < NVML_DEVICE_ARCH_AMPERE && d->ecc_current && !mn_unsup(d, GV_MOCK_FIELD_ECC);
}

static bool remaps_rows(const gv_mock_device_t *d)
{
        /* Not with MIG on: the A100 MIG captures (510, 535) and the H100 MIG -q (590) print Remapped Rows N/A. */
        return d->architecture >= NVML_DEVICE_ARCH_AMPERE && d->architecture != NVML_DEVICE_ARCH_UNKNOWN &&
               d->ecc_current && !mn_unsup(d, GV_MOCK_FIELD_ECC) && !mn_mig_on(d);
}

nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                          unsigned long long *addresses, unsigned long long *timestamps)
{
        DEVICE_QUERY(GPU_HANDLE, device, pageCount, 0);
        if (cause >= NVML_PAGE_RETIREMENT_CAUSE_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!retires_pages(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        /* Pages retire for double bit errors (cause 1) only after a `mock set` ECC burst. */
        unsigned n = cause == 1 ? mn_control_gpu(g)->retired_pages : 0;
        if (*pageCount < n) {
                *pageCount = n;
                return mn_leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        for (unsigned i = 0; i < n; i++) {
                if (addresses)
                        addresses[i] = 0x100000ULL * (i + 1);
                if (timestamps)
                        timestamps[i] = 0;
        }
        *pageCount = n;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
        return nvmlDeviceGetRetiredPages_v2(device, cause, pageCount, addresses, NULL);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending)
{
        DEVICE_QUERY(GPU_HANDLE, device, isPending, 0);
        if (!retires_pages(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *isPending = mn_control_gpu(g)->retired_pages ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
        DEVICE_QUERY(GPU_HANDLE, device, corrRows, 0);
        if (!uncRows || !isPending || !failureOccurred)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!remaps_rows(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *corrRows = *failureOccurred = 0;
        *uncRows = mn_control_gpu(g)->remapped_rows; /* rows `mock set` remapped, pending a GPU reset */
        *isPending = *uncRows > 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device, nvmlRowRemapperHistogramValues_t *values)
{
        DEVICE_QUERY(GPU_HANDLE, device, values, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!remaps_rows(d) || !f || !f->remap_banks)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        /* Every bank still has its full remapping capacity (captures: "max N bank(s)", the rest 0). */
        *values = (nvmlRowRemapperHistogramValues_t){ .max = f->remap_banks };
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, nvmlInforomObject_t object, char *version,
                                         unsigned int length)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        const char *v = NULL;
        switch (object) {
        case NVML_INFOROM_OEM: v = f ? f->inforom_oem : NULL; break;
        case NVML_INFOROM_ECC: v = f ? f->inforom_ecc : NULL; break;
        case NVML_INFOROM_POWER:
        case NVML_INFOROM_DEN: v = NULL; break; /* "pwr_object N/A" in every capture */
        default: return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        if (!v)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        return mn_leave(mn_copy_str(version, length, v));
}

nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char *version, unsigned int length)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || !f->inforom_image)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        return mn_leave(mn_copy_str(version, length, f->inforom_image));
}

/* Encoder and frame-buffer-capture statistics: no session on a mock GPU (the captures: 0 / 0 / 0). */
nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
                                       unsigned int *averageLatency)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        if (!averageFps || !averageLatency)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *sessionCount = *averageFps = *averageLatency = 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderSessions(nvmlDevice_t device, unsigned int *sessionCount,
                                          nvmlEncoderSessionInfo_t *sessionInfos)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        (void) sessionInfos; /* no encoder session runs: nothing to write */
        *sessionCount = 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFBCStats(nvmlDevice_t device, nvmlFBCStats_t *fbcStats)
{
        DEVICE_QUERY(ANY_HANDLE, device, fbcStats, 0);
        *fbcStats = (nvmlFBCStats_t){ 0 };
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFBCSessions(nvmlDevice_t device, unsigned int *sessionCount, nvmlFBCSessionInfo_t *sessionInfo)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        (void) sessionInfo; /* no frame-capture session runs: nothing to write */
        *sessionCount = 0;
        return mn_leave(NVML_SUCCESS);
}

/* Accounting is off unless an administrator turns it on ("accounting_mode Disabled" in every capture). */
SCALAR_GETTER(nvmlDeviceGetAccountingMode, nvmlEnableState_t, mode, 0, NVML_FEATURE_DISABLED)
/* Power management is always on for these boards (deprecated query, nvml.h). */
SCALAR_GETTER(nvmlDeviceGetPowerManagementMode, nvmlEnableState_t, mode, GV_MOCK_FIELD_POWER_LIMIT, NVML_FEATURE_ENABLED)
/* Bare metal: no vGPU or pass-through layer is modelled. */
SCALAR_GETTER(nvmlDeviceGetVirtualizationMode, nvmlGpuVirtualizationMode_t, pVirtualMode, 0,
              NVML_GPU_VIRTUALIZATION_MODE_NONE)
SCALAR_GETTER(nvmlDeviceGetBusType, nvmlBusType_t, type, 0, NVML_BUS_TYPE_PCIE)
/* No PCIe replays on a healthy link. */
SCALAR_GETTER(nvmlDeviceGetPcieReplayCounter, unsigned int, value, 0, 0)
/* SXM and single-GPU PCIe boards: not a multi-GPU board. */
SCALAR_GETTER(nvmlDeviceGetMultiGpuBoard, unsigned int, multiGpuBool, 0, 0)
/* The mock topology: GPUs in groups of four per CPU socket (nvmlDeviceGetTopologyCommonAncestor), one NUMA node each. */
SCALAR_GETTER(nvmlDeviceGetNumaNodeId, unsigned int, node, 0, d->index / 4)

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
        DEVICE_QUERY(GPU_HANDLE, device, violTime, 0);
        if (perfPolicyType >= NVML_PERF_POLICY_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        /* Never throttled (the H100 capture's clocks_event_reasons_counters are all 0). */
        violTime->referenceTime = (unsigned long long) now.tv_sec * 1000000ULL + (unsigned long long) now.tv_nsec / 1000ULL;
        violTime->violationTime = 0;
        return mn_leave(NVML_SUCCESS);
}

FACT_GETTER(nvmlDeviceGetMemoryBusWidth, GPU_HANDLE, busWidth, memory_bus_width)

nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int *maxSpeed)
{
        DEVICE_QUERY(GPU_HANDLE, device, maxSpeed, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || !f->pcie_gen_max || f->pcie_gen_max > 6)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        /* NVML_PCIE_LINK_MAX_SPEED_2500MBPS (1) .. _64000MBPS (6): one step per PCIe generation. */
        *maxSpeed = f->pcie_gen_max;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTopologyNearestGpus(nvmlDevice_t device, nvmlGpuTopologyLevel_t level, unsigned int *count,
                                              nvmlDevice_t *deviceArray)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        if (level != NVML_TOPOLOGY_INTERNAL && level != NVML_TOPOLOGY_SINGLE && level != NVML_TOPOLOGY_MULTIPLE &&
            level != NVML_TOPOLOGY_HOSTBRIDGE && level != NVML_TOPOLOGY_NODE && level != NVML_TOPOLOGY_SYSTEM)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        /* The GPUs at @level or nearer, in the layout of nvmlDeviceGetTopologyCommonAncestor. */
        unsigned n = 0;
        nvmlDevice_t found[MAXG] = { 0 };
        for (unsigned o = 0; o < S.profile->device_count; o++) {
                if (o == g)
                        continue;
                unsigned lv = o / 2 == g / 2 ? NVML_TOPOLOGY_MULTIPLE : o / 4 == g / 4 ? NVML_TOPOLOGY_NODE
                                                                                         : NVML_TOPOLOGY_SYSTEM;
                if (lv <= level)
                        found[n++] = &S.gpus[o];
        }
        if (*count < n) {
                *count = n;
                return mn_leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n && !deviceArray)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < n; i++)
                deviceArray[i] = found[i];
        *count = n;
        return mn_leave(NVML_SUCCESS);
}

/* Datacenter boards ship with ECC on: the default is enabled wherever ECC exists. */
SCALAR_GETTER(nvmlDeviceGetDefaultEccMode, nvmlEnableState_t, defaultMode, GV_MOCK_FIELD_ECC, NVML_FEATURE_ENABLED)
/* The board id nvidia-smi prints is bus << 8 | device (captures: bus 0x30 -> 0x3000, T4 at 00:1e -> 0x1e). */
SCALAR_GETTER(nvmlDeviceGetBoardId, unsigned int, boardId, 0, d->pci_bus << 8 | d->pci_device)

nvmlReturn_t nvmlDeviceGetPcieSpeed(nvmlDevice_t device, unsigned int *pcieSpeed)
{
        DEVICE_QUERY(GPU_HANDLE, device, pcieSpeed, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        /* The current link's transfer rate a lane, Mbps: 2500, 5000, 8000, 16000, 32000 for gen 1..5. */
        static const unsigned by_gen[] = { 0, 2500, 5000, 8000, 16000, 32000, 64000 };
        if (!f || !f->pcie_gen_cur || f->pcie_gen_cur > 6)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *pcieSpeed = by_gen[f->pcie_gen_cur];
        return mn_leave(NVML_SUCCESS);
}

/*
 * CPU and memory affinity in the mock topology: one CPU socket (and NUMA
 * node) per group of four GPUs, the host's CPUs split evenly over the
 * sockets in order.  Fills @n words of @set (bit i: CPU or node i).
 */
static nvmlReturn_t affinity(const gv_mock_device_t *d, unsigned n, unsigned long *set, unsigned scope, bool cpus)
{
        if (!n || !set || (scope != NVML_AFFINITY_SCOPE_NODE && scope != NVML_AFFINITY_SCOPE_SOCKET))
                return NVML_ERROR_INVALID_ARGUMENT;
        unsigned sockets = (S.profile->device_count + 3) / 4, node = d->index / 4;
        long host = sysconf(_SC_NPROCESSORS_CONF);
        unsigned ncpu = host > 0 ? (unsigned) host : 1;
        unsigned first = node, last = node + 1; /* a range of CPUs or nodes */
        if (cpus) {
                unsigned per = ncpu / sockets ? ncpu / sockets : 1;
                first = node * per < ncpu ? node * per : 0;
                last = node + 1 == sockets || first + per > ncpu ? ncpu : first + per;
        }
        const unsigned bits = 8 * sizeof(unsigned long);
        memset(set, 0, n * sizeof(*set));
        for (unsigned i = first; i < last && i / bits < n; i++)
                set[i / bits] |= 1UL << (i % bits);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinityWithinScope(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet,
                                                 nvmlAffinityScope_t scope)
{
        DEVICE_QUERY(GPU_HANDLE, device, cpuSet, 0);
        return mn_leave(affinity(d, cpuSetSize, cpuSet, scope, true));
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet)
{
        return nvmlDeviceGetCpuAffinityWithinScope(device, cpuSetSize, cpuSet, NVML_AFFINITY_SCOPE_NODE);
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet,
                                         nvmlAffinityScope_t scope)
{
        DEVICE_QUERY(GPU_HANDLE, device, nodeSet, 0);
        return mn_leave(affinity(d, nodeSetSize, nodeSet, scope, false));
}

/* T.Limit threshold field @id of @d (model facts @f) in *out, C; NOT_SUPPORTED without T.Limit (and the memory
 * one without an HBM sensor). */
static nvmlReturn_t tlimit_field(const gv_mock_device_t *d, const gv_mock_model_facts_t *f, unsigned id, int *out)
{
        if (!f || !f->tlimit_c || mn_unsup(d, GV_MOCK_FIELD_TEMPERATURE))
                return NVML_ERROR_NOT_SUPPORTED;
        switch (id) {
        case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT: *out = f->tlimit_shutdown; return NVML_SUCCESS;
        case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT: *out = f->tlimit_slowdown; return NVML_SUCCESS;
        case NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT: *out = 0; return f->memory_temp_c ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
        default: *out = 0; return NVML_SUCCESS; /* GPU max operating: 0 in every capture */
        }
}

/* One field of nvmlDeviceGetFieldValues; sets v->nvmlReturn, valueType and value. */
static void field_value(const gv_mock_device_t *d, nvmlFieldValue_t *v)
{
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        const gv_mock_gpu_state_t *c = mn_control_gpu(d->index); /* runtime changes of `mock set` */
        nvmlReturn_t r = NVML_SUCCESS;
        bool ull = false, sint = false;
        int sx = 0;
        unsigned long long x = 0;
        switch (v->fieldId) {
        case NVML_FI_DEV_ECC_CURRENT: x = d->ecc_current; r = mn_unsup(d, GV_MOCK_FIELD_ECC) ? NVML_ERROR_NOT_SUPPORTED : r; break;
        case NVML_FI_DEV_ECC_PENDING: x = d->ecc_pending; r = mn_unsup(d, GV_MOCK_FIELD_ECC) ? NVML_ERROR_NOT_SUPPORTED : r; break;
        case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_SBE_AGG_TOTAL: ull = true; r = ecc_counter(d, 0, 0); x = c->ecc_corrected; break;
        case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_DBE_AGG_TOTAL: ull = true; r = ecc_counter(d, 0, 0); x = c->ecc_uncorrected; break;
        case NVML_FI_DEV_RETIRED_SBE: ull = true; r = retires_pages(d) ? r : NVML_ERROR_NOT_SUPPORTED; break;
        case NVML_FI_DEV_RETIRED_DBE:
        case NVML_FI_DEV_RETIRED_PENDING:
                ull = true;
                x = v->fieldId == NVML_FI_DEV_RETIRED_DBE ? c->retired_pages : c->retired_pages > 0;
                r = retires_pages(d) ? r : NVML_ERROR_NOT_SUPPORTED;
                break;
        case NVML_FI_DEV_REMAPPED_COR:
        case NVML_FI_DEV_REMAPPED_FAILURE:
        case NVML_FI_DEV_REMAPPED_ROWS_COR_INACTIVE: /* no remapping turned inactive: 0, as qx-l40s (595) */
        case NVML_FI_DEV_REMAPPED_ROWS_UNC_INACTIVE: r = remaps_rows(d) ? r : NVML_ERROR_NOT_SUPPORTED; break;
        case NVML_FI_DEV_REMAPPED_UNC:
        case NVML_FI_DEV_REMAPPED_PENDING:
                x = v->fieldId == NVML_FI_DEV_REMAPPED_UNC ? c->remapped_rows : c->remapped_rows > 0;
                r = remaps_rows(d) ? r : NVML_ERROR_NOT_SUPPORTED;
                break;
        case NVML_FI_DEV_PCIE_REPLAY_COUNTER: break;
        case NVML_FI_DEV_MEMORY_TEMP: /* the HBM sensor (model-facts.c); GDDR boards print N/A */
                x = f ? f->memory_temp_c : 0;
                r = !x || mn_unsup(d, GV_MOCK_FIELD_TEMPERATURE) ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_NVLINK_LINK_COUNT:
                x = d->nvlink_count;
                r = mn_unsup(d, GV_MOCK_FIELD_NVLINK) || !f || !f->nvlink_version ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_POWER_AVERAGE:
        case NVML_FI_DEV_POWER_INSTANT:
                x = d->power_usage_mw;
                r = mn_unsup(d, GV_MOCK_FIELD_POWER_USAGE) || v->scopeId != NVML_POWER_SCOPE_GPU ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
        case NVML_FI_DEV_ENERGY:
                ull = true;
                x = (unsigned long long) d->power_usage_mw * (unsigned long long) mn_ms_since(&S.init_time) / 1000ULL;
                r = mn_unsup(d, GV_MOCK_FIELD_POWER_USAGE) || d->architecture < NVML_DEVICE_ARCH_VOLTA ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: /* None (every capture); a GPU reset while remapped rows are pending */
                x = c->remapped_rows > 0 ? NVML_GPU_RECOVERY_ACTION_GPU_RESET : NVML_GPU_RECOVERY_ACTION_NONE;
                break;
        case NVML_FI_DEV_RESET_STATUS: x = c->remapped_rows > 0; break; /* "No" in the 535 capture */
        case NVML_FI_DEV_DRAIN_AND_RESET_STATUS: break;
        case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN: /* never throttled: "0 us" (qx-h100, qx-l40s) */
        case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN: ull = true; break;
        case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT: /* T.Limit thresholds (model-facts.c), signed C */
        case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT:
        case NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT:
        case NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT:
                r = tlimit_field(d, f, v->fieldId, &sx);
                sint = true;
                break;
        default: r = NVML_ERROR_NOT_SUPPORTED; break;
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        v->timestamp = (long long) now.tv_sec * 1000000LL + now.tv_nsec / 1000L;
        v->latencyUsec = 0;
        v->nvmlReturn = r;
        memset(&v->value, 0, sizeof(v->value));
        if (r != NVML_SUCCESS)
                return;
        v->valueType = ull ? NVML_VALUE_TYPE_UNSIGNED_LONG_LONG : NVML_VALUE_TYPE_UNSIGNED_INT;
        if (sint) {
                v->valueType = NVML_VALUE_TYPE_SIGNED_INT;
                v->value.siVal = sx;
        } else if (ull)
                v->value.ullVal = x;
        else
                v->value.uiVal = (unsigned) x;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
        DEVICE_QUERY(ANY_HANDLE, device, values, 0);
        if (valuesCount < 0)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        /* The common fields exporters read: ECC, retired pages, remapped rows, power, energy, NVLink count, memory temperature. */
        for (int i = 0; i < valuesCount; i++)
                field_value(d, &values[i]);
        return mn_leave(NVML_SUCCESS);
}

