/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The getters of the table of fields (smi-fields.c) for the rows every driver branch has: each calls
 * NVML through src->nvml and fills *v.  smi-getters-newer.c holds those of newer branches, the `-q`
 * blocks and the --query-gpu-only fields.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"
#include "mock/smi/smi-getters-internal.h"

/* ---- getters: each calls NVML through src->nvml and fills *v ---- */


void smi_get_ctx(const smi_src_t *s, int arg, smi_value_t *v)
{
        switch (arg) {
        case CTX_TIMESTAMP:
                v->str = s->timestamp;
                break;
        case CTX_DRIVER_VERSION:
                v->str = s->driver_version;
                break;
        case CTX_COUNT:
                v->num = s->count;
                break;
        default:
                v->num = s->index;
        }
}


/* A string query, with the buffer size nvml.h gives for it. */
void smi_get_text(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        switch (arg) {
        case TXT_NAME:
                v->ret = NV(n, nvmlDeviceGetName, s->dev, v->text, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
                break;
        case TXT_SERIAL:
                v->ret = NV(n, nvmlDeviceGetSerial, s->dev, v->text, NVML_DEVICE_SERIAL_BUFFER_SIZE);
                break;
        case TXT_UUID:
                v->ret = NV(n, nvmlDeviceGetUUID, s->dev, v->text, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
                break;
        case TXT_VBIOS:
                v->ret = NV(n, nvmlDeviceGetVbiosVersion, s->dev, v->text, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
                break;
        default:
                v->ret = NV(n, nvmlDeviceGetBoardPartNumber, s->dev, v->text, NVML_DEVICE_PART_NUMBER_BUFFER_SIZE);
        }
        v->str = v->text;
}


void smi_get_pci(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlPciInfo_t p = { 0 };
        v->ret = NV(s->nvml, nvmlDeviceGetPciInfo_v3, s->dev, &p);
        const unsigned long long nums[] = { 0, p.domain, p.bus, p.device, p.pciDeviceId, p.pciSubSystemId };
        if (arg == PCI_BUS_ID) {
                snprintf(v->text, sizeof(v->text), "%s", p.busId);
                v->str = v->text;
        } else if (arg > 0 && (size_t) arg < GV_ARRAY_SIZE(nums)) {
                v->num = nums[arg];
        }
}


/* A query answering one unsigned int. */
void smi_get_uint(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        unsigned u = 0;
        switch (arg) {
        case U_FAN_SPEED:
                v->ret = NV(n, nvmlDeviceGetFanSpeed, s->dev, &u);
                break;
        case U_MINOR_NUMBER:
                v->ret = NV(n, nvmlDeviceGetMinorNumber, s->dev, &u);
                break;
        case U_TEMPERATURE:
                v->ret = NV(n, nvmlDeviceGetTemperature, s->dev, NVML_TEMPERATURE_GPU, &u);
                break;
        case U_POWER_USAGE:
                v->ret = NV(n, nvmlDeviceGetPowerUsage, s->dev, &u);
                break;
        case U_POWER_LIMIT:
                v->ret = NV(n, nvmlDeviceGetPowerManagementLimit, s->dev, &u);
                break;
        case U_ENFORCED_LIMIT:
                v->ret = NV(n, nvmlDeviceGetEnforcedPowerLimit, s->dev, &u);
                break;
        default:
                v->ret = NV(n, nvmlDeviceGetPowerManagementDefaultLimit, s->dev, &u);
        }
        v->num = u;
}


/* A query answering an nvmlEnableState_t. */
void smi_get_enabled(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        if (arg == E_PERSISTENCE)
                v->ret = NV(n, nvmlDeviceGetPersistenceMode, s->dev, &es);
        else if (arg == E_DISPLAY_MODE)
                v->ret = NV(n, nvmlDeviceGetDisplayMode, s->dev, &es);
        else
                v->ret = NV(n, nvmlDeviceGetDisplayActive, s->dev, &es);
        v->num = es;
}

void smi_get_pstate(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
        v->ret = NV(s->nvml, nvmlDeviceGetPerformanceState, s->dev, &ps);
        v->num = ps;
}

void smi_get_compute_mode(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        nvmlComputeMode_t cm = NVML_COMPUTEMODE_DEFAULT;
        v->ret = NV(s->nvml, nvmlDeviceGetComputeMode, s->dev, &cm);
        v->num = cm;
}

/* Brand names in nvmlBrandType_t order (nvml.h). */
void smi_get_brand(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        static const char *const names[] = {
                "Unknown", "Quadro", "Tesla", "NVS", "GRID", "GeForce", "Titan", "NVIDIA Virtual Applications",
                "NVIDIA Virtual PC", "NVIDIA Virtual Compute Server", "NVIDIA RTX Virtual Workstation",
                "NVIDIA Cloud Gaming", "Quadro RTX", "NVIDIA RTX", "NVIDIA", "GeForce RTX", "Titan RTX",
        };
        nvmlBrandType_t b = NVML_BRAND_UNKNOWN;
        v->ret = NV(s->nvml, nvmlDeviceGetBrand, s->dev, &b);
        v->str = (size_t) b < GV_ARRAY_SIZE(names) ? names[b] : "Unknown";
}

void smi_get_architecture(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        static const struct {
                nvmlDeviceArchitecture_t arch;
                const char *name;
        } names[] = {
                { NVML_DEVICE_ARCH_KEPLER, "Kepler" },   { NVML_DEVICE_ARCH_MAXWELL, "Maxwell" },
                { NVML_DEVICE_ARCH_PASCAL, "Pascal" },   { NVML_DEVICE_ARCH_VOLTA, "Volta" },
                { NVML_DEVICE_ARCH_TURING, "Turing" },   { NVML_DEVICE_ARCH_AMPERE, "Ampere" },
                { NVML_DEVICE_ARCH_ADA, "Ada Lovelace" }, { NVML_DEVICE_ARCH_HOPPER, "Hopper" },
                { NVML_DEVICE_ARCH_BLACKWELL, "Blackwell" }, { NVML_DEVICE_ARCH_RUBIN, "Rubin" },
        };
        nvmlDeviceArchitecture_t a = NVML_DEVICE_ARCH_UNKNOWN;
        v->ret = NV(s->nvml, nvmlDeviceGetArchitecture, s->dev, &a);
        v->str = "Unknown";
        for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++)
                if (names[i].arch == a)
                        v->str = names[i].name;
}


/* Memory in MiB: nvmlDeviceGetMemoryInfo_v2 (used excludes the reservation), else the v1 query (reserved 0). */
void smi_get_memory(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
        v->ret = NV(s->nvml, nvmlDeviceGetMemoryInfo_v2, s->dev, &m2);
        if (v->ret != NVML_SUCCESS) {
                nvmlMemory_t m1 = { 0 };
                v->ret = NV(s->nvml, nvmlDeviceGetMemoryInfo, s->dev, &m1);
                m2 = (nvmlMemory_v2_t){ .total = m1.total, .used = m1.used, .free = m1.free };
        }
        const unsigned long long bytes[] = { m2.total, m2.reserved, m2.used, m2.free };
        v->num = bytes[arg >= 0 && arg < 4 ? arg : 0] / (1024ULL * 1024ULL);
}

void smi_get_compute_cap(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        int major = 0, minor = 0;
        v->ret = NV(s->nvml, nvmlDeviceGetCudaComputeCapability, s->dev, &major, &minor);
        v->num = (unsigned long long) major;
        v->num2 = minor;
}

/* Pairs of one query: arg 0 the first value, 1 the second. */

void smi_get_pair(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        unsigned a = 0, b = 0;
        nvmlUtilization_t u = { 0 };
        nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pend = NVML_FEATURE_DISABLED;
        switch (arg / 2) {
        case PAIR_UTILIZATION:
                v->ret = NV(n, nvmlDeviceGetUtilizationRates, s->dev, &u);
                a = u.gpu;
                b = u.memory;
                break;
        case PAIR_ECC_MODE:
                v->ret = NV(n, nvmlDeviceGetEccMode, s->dev, &cur, &pend);
                a = cur;
                b = pend;
                break;
        case PAIR_MIG_MODE:
                v->ret = NV(n, nvmlDeviceGetMigMode, s->dev, &a, &b);
                break;
        default:
                v->ret = NV(n, nvmlDeviceGetPowerManagementLimitConstraints, s->dev, &a, &b);
        }
        v->num = arg % 2 ? b : a;
}


void smi_get_clock(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned u = 0;
        nvmlClockType_t type = (nvmlClockType_t) (arg & 0xff);
        if (arg & CLOCK_MAX)
                v->ret = NV(s->nvml, nvmlDeviceGetMaxClockInfo, s->dev, type, &u);
        else
                v->ret = NV(s->nvml, nvmlDeviceGetClockInfo, s->dev, type, &u);
        v->num = u;
}


static const char *fabric_state_name(unsigned state)
{
        switch (state) {
        case NVML_GPU_FABRIC_STATE_NOT_STARTED:
                return "Not Started";
        case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
                return "In Progress";
        case NVML_GPU_FABRIC_STATE_COMPLETED:
                return "Completed";
        default:
                return "N/A";
        }
}


/* Fabric (NVSwitch / NVLink domain) registration; NOT_SUPPORTED (N/A) on a GPU that has none. */
void smi_get_fabric(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlGpuFabricInfo_t fi = { 0 };
        nvmlReturn_t r = NV(s->nvml, nvmlDeviceGetGpuFabricInfo, s->dev, &fi);
        bool fab = r == NVML_SUCCESS && fi.state != NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
        v->ret = fab ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
        v->str = v->text;
        const unsigned char *u = fi.clusterUuid;
        switch (arg) {
        case FAB_STATE:
                v->str = fabric_state_name(fi.state);
                break;
        case FAB_STATUS:
                if (fi.state != NVML_GPU_FABRIC_STATE_COMPLETED)
                        v->ret = NVML_ERROR_NOT_SUPPORTED;
                v->str = fi.status == NVML_SUCCESS ? "Success" : gv_nvml_strerror(s->nvml, fi.status);
                break;
        case FAB_CLIQUE_ID:
                snprintf(v->text, sizeof(v->text), "%u", fi.cliqueId);
                break;
        default:
                snprintf(v->text, sizeof(v->text),
                         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                         u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        }
}

/* ---- getters of the `-q` only rows: each writes the value's text as the real tool prints it ---- */

/* A getter's text: the value as printf formats it; str points at it. */
void smi_set_text(smi_value_t *v, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): ap is started on the line above; clang 14 loses it */
        (void) vsnprintf(v->text, sizeof(v->text), fmt, ap);
        va_end(ap);
        v->str = v->text;
}

/* A value the real tool prints N/A for on every GPU our profiles model (Linux driver model, GOM, bridge chip,
 * clock policy, target temperature: N/A in every xml__ capture). */
void smi_get_na(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        v->ret = NVML_ERROR_NOT_SUPPORTED;
}


/* Board facts: accounting, multi-GPU board, board id, virtualization mode (nvmlGpuVirtualizationMode_t names). */
void smi_get_board(const smi_src_t *s, int arg, smi_value_t *v)
{
        static const char *const virt[] = { "None", "Pass-Through", "VGPU", "Host VGPU", "Host VSGA" };
        const gv_nvml_t *n = s->nvml;
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        unsigned u = 0;
        switch (arg) {
        case B_ACCOUNTING_MODE:
                v->ret = NVX(n, nvmlDeviceGetAccountingMode, s->dev, &es);
                smi_set_text(v, "%s", es == NVML_FEATURE_ENABLED ? "Enabled" : "Disabled");
                break;
        case B_ACCOUNTING_BUFFER:
                v->ret = NVX(n, nvmlDeviceGetAccountingBufferSize, s->dev, &u);
                smi_set_text(v, "%u", u);
                break;
        case B_MULTIGPU_BOARD:
                v->ret = NVX(n, nvmlDeviceGetMultiGpuBoard, s->dev, &u);
                smi_set_text(v, "%s", u ? "Yes" : "No");
                break;
        case B_BOARD_ID:
                v->ret = NVX(n, nvmlDeviceGetBoardId, s->dev, &u);
                smi_set_text(v, "0x%x", u);
                break;
        default:
                v->ret = NVX(n, nvmlDeviceGetVirtualizationMode, s->dev, &u);
                smi_set_text(v, "%s", u < GV_ARRAY_SIZE(virt) ? virt[u] : "Unknown");
        }
}


void smi_get_inforom(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg == INFOROM_IMAGE)
                v->ret = NVX(s->nvml, nvmlDeviceGetInforomImageVersion, s->dev, v->text, sizeof(v->text));
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetInforomVersion, s->dev, (nvmlInforomObject_t) arg, v->text,
                            sizeof(v->text));
        v->str = v->text;
}


/* PCIe link: generation, width ("16x"), replays, throughput ("KB/s"). */
void smi_get_pcie(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        unsigned u = 0;
        const char *fmt = "%u";
        switch (arg) {
        case L_MAX_GEN:
                v->ret = NVX(n, nvmlDeviceGetMaxPcieLinkGeneration, s->dev, &u);
                break;
        case L_CUR_GEN:
                v->ret = NVX(n, nvmlDeviceGetCurrPcieLinkGeneration, s->dev, &u);
                break;
        case L_MAX_WIDTH:
                v->ret = NVX(n, nvmlDeviceGetMaxPcieLinkWidth, s->dev, &u);
                fmt = "%ux";
                break;
        case L_CUR_WIDTH:
                v->ret = NVX(n, nvmlDeviceGetCurrPcieLinkWidth, s->dev, &u);
                fmt = "%ux";
                break;
        case L_REPLAY:
                v->ret = NVX(n, nvmlDeviceGetPcieReplayCounter, s->dev, &u);
                break;
        default:
                v->ret = NVX(n, nvmlDeviceGetPcieThroughput, s->dev,
                            arg == L_TX ? NVML_PCIE_UTIL_TX_BYTES : NVML_PCIE_UTIL_RX_BYTES, &u);
                fmt = "%u KB/s";
        }
        smi_set_text(v, fmt, u);
        v->num = u;
}

/* A replay counter rollover count: NVML has no call for it; the real tool prints 0 on every capture. */
void smi_get_zero(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        smi_set_text(v, "0");
}

/* One clock event reason (arg: its bit in nvmlClocksEventReason*): "Active" or "Not Active". */
void smi_get_event_reason(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long mask = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetCurrentClocksEventReasons, s->dev, &mask);
        smi_set_text(v, "%s", mask & (unsigned long long) arg ? "Active" : "Not Active");
}


void smi_get_bar1(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlBAR1Memory_t b = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetBAR1MemoryInfo, s->dev, &b);
        const unsigned long long bytes[] = { b.bar1Total, b.bar1Used, b.bar1Free };
        smi_set_text(v, "%llu MiB", bytes[arg >= 0 && arg < 3 ? arg : 0] / (1024ULL * 1024ULL));
}


/* Engine utilisation in percent. */
void smi_get_engine_util(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        unsigned u = 0, period = 0;
        if (arg == ENG_ENCODER)
                v->ret = NVX(n, nvmlDeviceGetEncoderUtilization, s->dev, &u, &period);
        else if (arg == ENG_DECODER)
                v->ret = NVX(n, nvmlDeviceGetDecoderUtilization, s->dev, &u, &period);
        else if (arg == ENG_JPEG)
                v->ret = NVX(n, nvmlDeviceGetJpgUtilization, s->dev, &u, &period);
        else
                v->ret = NVX(n, nvmlDeviceGetOfaUtilization, s->dev, &u, &period);
        v->num = u;
}

/* Encoder (arg 0..2) and FBC (3..5) session stats: count, average FPS, average latency. */
void smi_get_sessions(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned st[3] = { 0 };
        if (arg < 3) {
                v->ret = NVX(s->nvml, nvmlDeviceGetEncoderStats, s->dev, &st[0], &st[1], &st[2]);
        } else {
                nvmlFBCStats_t f = { 0 };
                v->ret = NVX(s->nvml, nvmlDeviceGetFBCStats, s->dev, &f);
                st[0] = f.sessionsCount;
                st[1] = f.averageFPS;
                st[2] = f.averageLatency;
        }
        smi_set_text(v, "%u", st[arg % 3]);
}

/* ECC error count: arg = counter type * 4 + location (0 SRAM, 1 DRAM) * 2 + error type. */

void smi_get_ecc_count(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long c = 0;
        nvmlMemoryLocation_t loc = (arg / 2) % 2 ? SMI_NVML_MEMORY_LOCATION_DRAM : SMI_NVML_MEMORY_LOCATION_SRAM;
        v->ret = NVX(s->nvml, nvmlDeviceGetMemoryErrorCounter, s->dev, (nvmlMemoryErrorType_t) (arg % 2),
                    (nvmlEccCounterType_t) (arg / 4), loc, &c);
        smi_set_text(v, "%llu", c);
}


/* Retired pages: count per cause (nvmlPageRetirementCause_t), pending retirement (Yes/No). */
void smi_get_retired(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg == RP_PENDING) {
                nvmlEnableState_t p = NVML_FEATURE_DISABLED;
                v->ret = NVX(s->nvml, nvmlDeviceGetRetiredPagesPendingStatus, s->dev, &p);
                smi_set_text(v, "%s", p == NVML_FEATURE_ENABLED ? "Yes" : "No");
                return;
        }
        unsigned count = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetRetiredPages, s->dev, (nvmlPageRetirementCause_t) arg, &count, NULL);
        smi_set_text(v, "%u", count);
}


/* Remapped rows and the row remapper histogram ("N bank(s)"). */
void smi_get_remapped(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg >= RR_H_MAX) {
                nvmlRowRemapperHistogramValues_t h = { 0 };
                v->ret = NVX(s->nvml, nvmlDeviceGetRowRemapperHistogram, s->dev, &h);
                const unsigned banks[] = { h.max, h.high, h.partial, h.low, h.none };
                v->num = banks[(arg - RR_H_MAX) % 5];
                return;
        }
        unsigned r[4] = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetRemappedRows, s->dev, &r[0], &r[1], &r[2], &r[3]);
        if (arg >= RR_PENDING)
                smi_set_text(v, "%s", r[arg] ? "Yes" : "No");
        else
                smi_set_text(v, "%u", r[arg]);
}

/* A temperature threshold (nvmlTemperatureThresholds_t) in C. */
void smi_get_temp_threshold(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned t = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetTemperatureThreshold, s->dev, (nvmlTemperatureThresholds_t) arg, &t);
        smi_set_text(v, "%u C", t);
}


/* Applications, default applications and max customer boost clocks in MHz. */
void smi_get_app_clock(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned u = 0;
        nvmlClockType_t type = (nvmlClockType_t) (arg & 0xff);
        if (arg & APP_CLOCK)
                v->ret = NVX(s->nvml, nvmlDeviceGetApplicationsClock, s->dev, type, &u);
        else if (arg & DEFAULT_CLOCK)
                v->ret = NVX(s->nvml, nvmlDeviceGetDefaultApplicationsClock, s->dev, type, &u);
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetMaxCustomerBoostClock, s->dev, type, &u);
        v->num = u;
}

/* Clock event reason counters (nvmlPerfPolicyType_t: 0 power, 1 thermal, 2 sync boost): time in that state, us. */
void smi_get_violation(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlViolationTime_t t = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetViolationStatus, s->dev, (nvmlPerfPolicyType_t) arg, &t);
        v->num = t.violationTime / 1000ULL;
        smi_set_text(v, "%llu us", v->num);
}
