/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The table of fields of our nvidia-smi (smi.h): one row per field, in `-q`
 * document order, with its --query-gpu name(s), CSV unit and style, `-q -x`
 * path, `-q` label and getter.  CSV, `-q` and `-q -x` are written from it.
 *
 * Adding a field: an id in smi_field_id_t (its place there is its place in
 * `-h`), then one row below at its place in the `-q` document, with a getter
 * (most fields use a shared one with an argument: get_uint + U_FAN_SPEED).
 *
 * Outside facts: canonical names, units and value shapes as in the header
 * and rows of csv__query-gpu_l40s_under-load_595.80.csv and
 * csv__query-gpu_h100-80gb-hbm3_mig-enabled_590.48.01.csv; aliases are the
 * short spellings nvidia-smi --help-query-gpu documents (clocks.gr,
 * gpu_name); XML paths and labels from xml__* and q__* in
 * shared/cases/nvidia-smi/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"

/* ---- getters: each calls NVML through src->nvml and fills *v ---- */

enum { CTX_TIMESTAMP, CTX_DRIVER_VERSION, CTX_COUNT, CTX_INDEX };

static void get_ctx(const smi_src_t *s, int arg, smi_value_t *v)
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

enum { TXT_NAME, TXT_SERIAL, TXT_UUID, TXT_VBIOS, TXT_PART_NUMBER };

/* A string query, with the buffer size nvml.h gives for it. */
static void get_text(const smi_src_t *s, int arg, smi_value_t *v)
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

enum { PCI_BUS_ID, PCI_DOMAIN, PCI_BUS, PCI_DEVICE, PCI_DEVICE_ID, PCI_SUBSYSTEM_ID };

static void get_pci(const smi_src_t *s, int arg, smi_value_t *v)
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

enum { U_FAN_SPEED, U_MINOR_NUMBER, U_TEMPERATURE, U_POWER_USAGE, U_POWER_LIMIT, U_ENFORCED_LIMIT, U_DEFAULT_LIMIT };

/* A query answering one unsigned int. */
static void get_uint(const smi_src_t *s, int arg, smi_value_t *v)
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

enum { E_PERSISTENCE, E_DISPLAY_MODE, E_DISPLAY_ACTIVE };

/* A query answering an nvmlEnableState_t. */
static void get_enabled(const smi_src_t *s, int arg, smi_value_t *v)
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

static void get_pstate(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
        v->ret = NV(s->nvml, nvmlDeviceGetPerformanceState, s->dev, &ps);
        v->num = ps;
}

static void get_compute_mode(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        nvmlComputeMode_t cm = NVML_COMPUTEMODE_DEFAULT;
        v->ret = NV(s->nvml, nvmlDeviceGetComputeMode, s->dev, &cm);
        v->num = cm;
}

/* Brand names in nvmlBrandType_t order (nvml.h). */
static void get_brand(const smi_src_t *s, int arg, smi_value_t *v)
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

static void get_architecture(const smi_src_t *s, int arg, smi_value_t *v)
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

enum { MEM_TOTAL, MEM_RESERVED, MEM_USED, MEM_FREE };

/* Memory in MiB: nvmlDeviceGetMemoryInfo_v2 (used excludes the reservation), else the v1 query (reserved 0). */
static void get_memory(const smi_src_t *s, int arg, smi_value_t *v)
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

static void get_compute_cap(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        int major = 0, minor = 0;
        v->ret = NV(s->nvml, nvmlDeviceGetCudaComputeCapability, s->dev, &major, &minor);
        v->num = (unsigned long long) major;
        v->num2 = minor;
}

/* Pairs of one query: arg 0 the first value, 1 the second. */
enum { PAIR_UTILIZATION, PAIR_ECC_MODE, PAIR_MIG_MODE, PAIR_POWER_CONSTRAINTS };
#define PAIR(what, second) ((what) * 2 + (second))

static void get_pair(const smi_src_t *s, int arg, smi_value_t *v)
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

#define CLOCK_MAX 0x100 /* or'ed with an nvmlClockType_t: the max clock */

static void get_clock(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned u = 0;
        nvmlClockType_t type = (nvmlClockType_t) (arg & 0xff);
        if (arg & CLOCK_MAX)
                v->ret = NV(s->nvml, nvmlDeviceGetMaxClockInfo, s->dev, type, &u);
        else
                v->ret = NV(s->nvml, nvmlDeviceGetClockInfo, s->dev, type, &u);
        v->num = u;
}

/* Memory temperature needs NVML field values, which our NVML subset does not read. */
static void get_not_supported(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        v->ret = NVML_ERROR_NOT_SUPPORTED;
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

enum { FAB_STATE, FAB_STATUS, FAB_CLIQUE_ID, FAB_CLUSTER_UUID };

/* Fabric (NVSwitch / NVLink domain) registration; NOT_SUPPORTED (N/A) on a GPU that has none. */
static void get_fabric(const smi_src_t *s, int arg, smi_value_t *v)
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
__attribute__((format(printf, 2, 3))) static void set_text(smi_value_t *v, const char *fmt, ...)
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
static void get_na(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        v->ret = NVML_ERROR_NOT_SUPPORTED;
}

enum { B_ACCOUNTING_MODE, B_ACCOUNTING_BUFFER, B_MULTIGPU_BOARD, B_BOARD_ID, B_VIRTUALIZATION };

/* Board facts: accounting, multi-GPU board, board id, virtualization mode (nvmlGpuVirtualizationMode_t names). */
static void get_board(const smi_src_t *s, int arg, smi_value_t *v)
{
        static const char *const virt[] = { "None", "Pass-Through", "VGPU", "Host VGPU", "Host VSGA" };
        const gv_nvml_t *n = s->nvml;
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        unsigned u = 0;
        switch (arg) {
        case B_ACCOUNTING_MODE:
                v->ret = NVX(n, nvmlDeviceGetAccountingMode, s->dev, &es);
                set_text(v, "%s", es == NVML_FEATURE_ENABLED ? "Enabled" : "Disabled");
                break;
        case B_ACCOUNTING_BUFFER:
                v->ret = NVX(n, nvmlDeviceGetAccountingBufferSize, s->dev, &u);
                set_text(v, "%u", u);
                break;
        case B_MULTIGPU_BOARD:
                v->ret = NVX(n, nvmlDeviceGetMultiGpuBoard, s->dev, &u);
                set_text(v, "%s", u ? "Yes" : "No");
                break;
        case B_BOARD_ID:
                v->ret = NVX(n, nvmlDeviceGetBoardId, s->dev, &u);
                set_text(v, "0x%x", u);
                break;
        default:
                v->ret = NVX(n, nvmlDeviceGetVirtualizationMode, s->dev, &u);
                set_text(v, "%s", u < GV_ARRAY_SIZE(virt) ? virt[u] : "Unknown");
        }
}

enum { INFOROM_IMAGE = -1 }; /* else an nvmlInforomObject_t */

static void get_inforom(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg == INFOROM_IMAGE)
                v->ret = NVX(s->nvml, nvmlDeviceGetInforomImageVersion, s->dev, v->text, sizeof(v->text));
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetInforomVersion, s->dev, (nvmlInforomObject_t) arg, v->text,
                            sizeof(v->text));
        v->str = v->text;
}

enum { L_MAX_GEN, L_CUR_GEN, L_MAX_WIDTH, L_CUR_WIDTH, L_REPLAY, L_TX, L_RX };

/* PCIe link: generation, width ("16x"), replays, throughput ("KB/s"). */
static void get_pcie(const smi_src_t *s, int arg, smi_value_t *v)
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
        set_text(v, fmt, u);
}

/* A replay counter rollover count: NVML has no call for it; the real tool prints 0 on every capture. */
static void get_zero(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        set_text(v, "0");
}

/* One clock event reason (arg: its bit in nvmlClocksEventReason*): "Active" or "Not Active". */
static void get_event_reason(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long mask = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetCurrentClocksEventReasons, s->dev, &mask);
        set_text(v, "%s", mask & (unsigned long long) arg ? "Active" : "Not Active");
}

enum { BAR1_TOTAL, BAR1_USED, BAR1_FREE };

static void get_bar1(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlBAR1Memory_t b = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetBAR1MemoryInfo, s->dev, &b);
        const unsigned long long bytes[] = { b.bar1Total, b.bar1Used, b.bar1Free };
        set_text(v, "%llu MiB", bytes[arg >= 0 && arg < 3 ? arg : 0] / (1024ULL * 1024ULL));
}

enum { ENG_ENCODER, ENG_DECODER, ENG_JPEG, ENG_OFA };

/* Engine utilisation in percent. */
static void get_engine_util(const smi_src_t *s, int arg, smi_value_t *v)
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
        set_text(v, "%u %%", u);
}

/* Encoder (arg 0..2) and FBC (3..5) session stats: count, average FPS, average latency. */
static void get_sessions(const smi_src_t *s, int arg, smi_value_t *v)
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
        set_text(v, "%u", st[arg % 3]);
}

/* ECC error count: arg = counter type * 4 + location (0 SRAM, 1 DRAM) * 2 + error type. */
#define ECC(counter, dram, uncorrected) ((counter) * 4 + (dram) * 2 + (uncorrected))

static void get_ecc_count(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long c = 0;
        nvmlMemoryLocation_t loc = (arg / 2) % 2 ? SMI_NVML_MEMORY_LOCATION_DRAM : SMI_NVML_MEMORY_LOCATION_SRAM;
        v->ret = NVX(s->nvml, nvmlDeviceGetMemoryErrorCounter, s->dev, (nvmlMemoryErrorType_t) (arg % 2),
                    (nvmlEccCounterType_t) (arg / 4), loc, &c);
        set_text(v, "%llu", c);
}

enum { RP_SINGLE_BIT, RP_DOUBLE_BIT, RP_PENDING };

/* Retired pages: count per cause (nvmlPageRetirementCause_t), pending retirement (Yes/No). */
static void get_retired(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg == RP_PENDING) {
                nvmlEnableState_t p = NVML_FEATURE_DISABLED;
                v->ret = NVX(s->nvml, nvmlDeviceGetRetiredPagesPendingStatus, s->dev, &p);
                set_text(v, "%s", p == NVML_FEATURE_ENABLED ? "Yes" : "No");
                return;
        }
        unsigned count = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetRetiredPages, s->dev, (nvmlPageRetirementCause_t) arg, &count, NULL);
        set_text(v, "%u", count);
}

enum { RR_CORR, RR_UNC, RR_PENDING, RR_FAILURE, RR_H_MAX, RR_H_HIGH, RR_H_PARTIAL, RR_H_LOW, RR_H_NONE };

/* Remapped rows and the row remapper histogram ("N bank(s)"). */
static void get_remapped(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg >= RR_H_MAX) {
                nvmlRowRemapperHistogramValues_t h = { 0 };
                v->ret = NVX(s->nvml, nvmlDeviceGetRowRemapperHistogram, s->dev, &h);
                const unsigned banks[] = { h.max, h.high, h.partial, h.low, h.none };
                set_text(v, "%u bank(s)", banks[(arg - RR_H_MAX) % 5]);
                return;
        }
        unsigned r[4] = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetRemappedRows, s->dev, &r[0], &r[1], &r[2], &r[3]);
        if (arg >= RR_PENDING)
                set_text(v, "%s", r[arg] ? "Yes" : "No");
        else
                set_text(v, "%u", r[arg]);
}

/* A temperature threshold (nvmlTemperatureThresholds_t) in C. */
static void get_temp_threshold(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned t = 0;
        v->ret = NVX(s->nvml, nvmlDeviceGetTemperatureThreshold, s->dev, (nvmlTemperatureThresholds_t) arg, &t);
        set_text(v, "%u C", t);
}

#define APP_CLOCK 0x100     /* or'ed with an nvmlClockType_t: the applications clock */
#define DEFAULT_CLOCK 0x200 /* the default applications clock */

/* Applications, default applications and max customer boost clocks in MHz. */
static void get_app_clock(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned u = 0;
        nvmlClockType_t type = (nvmlClockType_t) (arg & 0xff);
        if (arg & APP_CLOCK)
                v->ret = NVX(s->nvml, nvmlDeviceGetApplicationsClock, s->dev, type, &u);
        else if (arg & DEFAULT_CLOCK)
                v->ret = NVX(s->nvml, nvmlDeviceGetDefaultApplicationsClock, s->dev, type, &u);
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetMaxCustomerBoostClock, s->dev, type, &u);
        set_text(v, "%u MHz", u);
}

/* Clock event reason counters (nvmlPerfPolicyType_t: 0 power, 1 thermal, 2 sync boost): time in that state, us. */
static void get_violation(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlViolationTime_t t = { 0 };
        v->ret = NVX(s->nvml, nvmlDeviceGetViolationStatus, s->dev, (nvmlPerfPolicyType_t) arg, &t);
        set_text(v, "%llu us", t.violationTime / 1000ULL);
}

/* Most clocks a supported-clocks list holds (nvml.h gives no bound; real GPUs list under 200 graphics clocks). */
#define SMI_MAX_SUPPORTED_CLOCKS 512

/* <supported_clocks>: each memory clock with its graphics clocks (XML only: plain `-q` leaves it out, q__*). */
static void emit_supported_clocks(smi_emit_t *e, const smi_src_t *src)
{
        if (!e->xml)
                return;
        unsigned mem[32], gr[SMI_MAX_SUPPORTED_CLOCKS];
        unsigned n_mem = GV_ARRAY_SIZE(mem);
        smi_emit_open(e, "supported_clocks", "Supported Clocks", NULL, NULL);
        if (NVX(src->nvml, nvmlDeviceGetSupportedMemoryClocks, src->dev, &n_mem, mem) != NVML_SUCCESS)
                n_mem = 0;
        if (n_mem == 0)
                smi_emit_text(e, "N/A", false);
        for (unsigned i = 0; i < n_mem && i < GV_ARRAY_SIZE(mem); i++) {
                unsigned n_gr = GV_ARRAY_SIZE(gr);
                if (NVX(src->nvml, nvmlDeviceGetSupportedGraphicsClocks, src->dev, mem[i], &n_gr, gr) != NVML_SUCCESS)
                        n_gr = 0;
                smi_emit_open(e, "supported_mem_clock", "Memory", NULL, NULL);
                smi_emit_leaf(e, "value", "Memory", "%u MHz", mem[i]);
                for (unsigned k = 0; k < n_gr && k < GV_ARRAY_SIZE(gr); k++)
                        smi_emit_leaf(e, "supported_graphics_clock", "Graphics", "%u MHz", gr[k]);
                smi_emit_close(e, "supported_mem_clock");
        }
        smi_emit_close(e, "supported_clocks");
}

/* <accounted_processes>: empty, as with accounting disabled in every xml__ capture (XML only, like the real -q). */
static void emit_accounted_processes(smi_emit_t *e, const smi_src_t *src)
{
        (void) src;
        if (!e->xml)
                return;
        smi_emit_open(e, "accounted_processes", "Accounted Processes", NULL, NULL);
        smi_emit_close(e, "accounted_processes");
}

/* ---- the table ---- */

/* Row shorthands: no alias, a CSV-only row (no -q path), a `-q`-only row (no --query-gpu name). */
#define NO_ALIAS { NULL }
#define ALIAS(a) { (a), NULL }
#define CSV_ONLY NULL, NULL
#define Q_ONLY NULL, NO_ALIAS, NULL

static const smi_field_def_t field_table[] = {
        /* id, --query-gpu name, aliases, CSV unit, style, -q -x path, -q label, getter, argument */
        { SMI_F_TIMESTAMP, "timestamp", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, get_ctx, CTX_TIMESTAMP, NULL },
        { SMI_F_DRIVER_VERSION, "driver_version", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, get_ctx,
          CTX_DRIVER_VERSION, NULL },
        { SMI_F_COUNT, "count", NO_ALIAS, NULL, SMI_STYLE_UINT, CSV_ONLY, get_ctx, CTX_COUNT, NULL },
        { SMI_F_INDEX, "index", NO_ALIAS, NULL, SMI_STYLE_UINT, CSV_ONLY, get_ctx, CTX_INDEX, NULL },
        { SMI_F_NAME, "name", ALIAS("gpu_name"), NULL, SMI_STYLE_STR, "product_name", "Product Name", get_text,
          TXT_NAME, NULL },
        { SMI_F_PRODUCT_BRAND, Q_ONLY, SMI_STYLE_STR, "product_brand", "Product Brand", get_brand, 0, NULL },
        { SMI_F_PRODUCT_ARCHITECTURE, Q_ONLY, SMI_STYLE_STR, "product_architecture", "Product Architecture",
          get_architecture, 0, NULL },
        { SMI_F_DISPLAY_MODE, "display_mode", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "display_mode", "Display Mode",
          get_enabled, E_DISPLAY_MODE, NULL },
        { SMI_F_DISPLAY_ACTIVE, "display_active", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "display_active",
          "Display Active", get_enabled, E_DISPLAY_ACTIVE, NULL },
        { SMI_F_PERSISTENCE_MODE, "persistence_mode", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "persistence_mode",
          "Persistence Mode", get_enabled, E_PERSISTENCE, NULL },
        { SMI_F_MIG_MODE_CURRENT, "mig.mode.current", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "mig_mode/current_mig",
          "MIG Mode/Current", get_pair, PAIR(PAIR_MIG_MODE, 0), NULL },
        { SMI_F_MIG_MODE_PENDING, "mig.mode.pending", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "mig_mode/pending_mig",
          "MIG Mode/Pending", get_pair, PAIR(PAIR_MIG_MODE, 1), NULL },
        { SMI_F_MIG_DEVICES, Q_ONLY, SMI_STYLE_STR, "mig_devices", "MIG Devices", NULL, 0, smi_emit_mig_devices },
        { SMI_F_ACCOUNTING_MODE, Q_ONLY, SMI_STYLE_STR, "accounting_mode", "Accounting Mode", get_board, B_ACCOUNTING_MODE, NULL },
        { SMI_F_ACCOUNTING_BUFFER, Q_ONLY, SMI_STYLE_STR, "accounting_mode_buffer_size", "Accounting Mode Buffer Size", get_board, B_ACCOUNTING_BUFFER, NULL },
        { SMI_F_DRIVER_MODEL_CURRENT, Q_ONLY, SMI_STYLE_STR, "driver_model/current_dm", "Driver Model/Current", get_na, 0, NULL },
        { SMI_F_DRIVER_MODEL_PENDING, Q_ONLY, SMI_STYLE_STR, "driver_model/pending_dm", "Driver Model/Pending", get_na, 0, NULL },
        { SMI_F_SERIAL, "serial", ALIAS("gpu_serial"), NULL, SMI_STYLE_STR, "serial", "Serial Number", get_text,
          TXT_SERIAL, NULL },
        { SMI_F_UUID, "uuid", ALIAS("gpu_uuid"), NULL, SMI_STYLE_STR, "uuid", "GPU UUID", get_text, TXT_UUID, NULL },
        { SMI_F_MINOR_NUMBER, Q_ONLY, SMI_STYLE_UINT, "minor_number", "Minor Number", get_uint, U_MINOR_NUMBER,
          NULL },
        { SMI_F_VBIOS_VERSION, "vbios_version", NO_ALIAS, NULL, SMI_STYLE_STR, "vbios_version", "VBIOS Version",
          get_text, TXT_VBIOS, NULL },
        { SMI_F_MULTIGPU_BOARD, Q_ONLY, SMI_STYLE_STR, "multigpu_board", "MultiGPU Board", get_board, B_MULTIGPU_BOARD, NULL },
        { SMI_F_BOARD_ID, Q_ONLY, SMI_STYLE_STR, "board_id", "Board ID", get_board, B_BOARD_ID, NULL },
        { SMI_F_BOARD_PART_NUMBER, Q_ONLY, SMI_STYLE_STR, "board_part_number", "Board Part Number", get_text,
          TXT_PART_NUMBER, NULL },
        { SMI_F_INFOROM_IMAGE, Q_ONLY, SMI_STYLE_STR, "inforom_version/img_version", "Inforom Version/Image Version", get_inforom, INFOROM_IMAGE, NULL },
        { SMI_F_INFOROM_OEM, Q_ONLY, SMI_STYLE_STR, "inforom_version/oem_object", "Inforom Version/OEM Object", get_inforom, NVML_INFOROM_OEM, NULL },
        { SMI_F_INFOROM_ECC, Q_ONLY, SMI_STYLE_STR, "inforom_version/ecc_object", "Inforom Version/ECC Object", get_inforom, NVML_INFOROM_ECC, NULL },
        { SMI_F_INFOROM_POWER, Q_ONLY, SMI_STYLE_STR, "inforom_version/pwr_object", "Inforom Version/Power Management Object", get_inforom, NVML_INFOROM_POWER, NULL },
        { SMI_F_GOM_CURRENT, Q_ONLY, SMI_STYLE_STR, "gpu_operation_mode/current_gom", "GPU Operation Mode/Current", get_na, 0, NULL },
        { SMI_F_GOM_PENDING, Q_ONLY, SMI_STYLE_STR, "gpu_operation_mode/pending_gom", "GPU Operation Mode/Pending", get_na, 0, NULL },
        { SMI_F_VIRTUALIZATION_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/virtualization_mode", "GPU Virtualization Mode/Virtualization Mode", get_board, B_VIRTUALIZATION, NULL },
        { SMI_F_HOST_VGPU_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/host_vgpu_mode", "GPU Virtualization Mode/Host VGPU Mode", get_na, 0, NULL },
        { SMI_F_VGPU_HETEROGENEOUS_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/vgpu_heterogeneous_mode", "GPU Virtualization Mode/vGPU Heterogeneous Mode", get_na, 0, NULL },
        { SMI_F_RELAXED_ORDERING, Q_ONLY, SMI_STYLE_STR, "ibmnpu/relaxed_ordering_mode", "IBMNPU/Relaxed Ordering Mode", get_na, 0, NULL },
        { SMI_F_PCI_BUS, "pci.bus", NO_ALIAS, NULL, SMI_STYLE_HEX2, "pci/pci_bus", "PCI/Bus", get_pci, PCI_BUS,
          NULL },
        { SMI_F_PCI_DEVICE, "pci.device", NO_ALIAS, NULL, SMI_STYLE_HEX2, "pci/pci_device", "PCI/Device", get_pci,
          PCI_DEVICE, NULL },
        { SMI_F_PCI_DOMAIN, "pci.domain", NO_ALIAS, NULL, SMI_STYLE_HEX4, "pci/pci_domain", "PCI/Domain", get_pci,
          PCI_DOMAIN, NULL },
        { SMI_F_PCI_DEVICE_ID, "pci.device_id", NO_ALIAS, NULL, SMI_STYLE_HEX8, "pci/pci_device_id",
          "PCI/Device Id", get_pci, PCI_DEVICE_ID, NULL },
        { SMI_F_PCI_BUS_ID, "pci.bus_id", ALIAS("gpu_bus_id"), NULL, SMI_STYLE_STR, "pci/pci_bus_id", "PCI/Bus Id",
          get_pci, PCI_BUS_ID, NULL },
        { SMI_F_PCI_SUB_DEVICE_ID, "pci.sub_device_id", NO_ALIAS, NULL, SMI_STYLE_HEX8, "pci/pci_sub_system_id",
          "PCI/Sub System Id", get_pci, PCI_SUBSYSTEM_ID, NULL },
        { SMI_F_PCIE_GEN_MAX, Q_ONLY, SMI_STYLE_STR, "pci/pci_gpu_link_info/pcie_gen/max_link_gen", "PCI/GPU Link Info/PCIe Generation/Max", get_pcie, L_MAX_GEN, NULL },
        { SMI_F_PCIE_GEN_CURRENT, Q_ONLY, SMI_STYLE_STR, "pci/pci_gpu_link_info/pcie_gen/current_link_gen", "PCI/GPU Link Info/PCIe Generation/Current", get_pcie, L_CUR_GEN, NULL },
        { SMI_F_PCIE_WIDTH_MAX, Q_ONLY, SMI_STYLE_STR, "pci/pci_gpu_link_info/link_widths/max_link_width", "PCI/GPU Link Info/Link Width/Max", get_pcie, L_MAX_WIDTH, NULL },
        { SMI_F_PCIE_WIDTH_CURRENT, Q_ONLY, SMI_STYLE_STR, "pci/pci_gpu_link_info/link_widths/current_link_width", "PCI/GPU Link Info/Link Width/Current", get_pcie, L_CUR_WIDTH, NULL },
        { SMI_F_BRIDGE_CHIP_TYPE, Q_ONLY, SMI_STYLE_STR, "pci/pci_bridge_chip/bridge_chip_type", "PCI/Bridge Chip/Type", get_na, 0, NULL },
        { SMI_F_BRIDGE_CHIP_FW, Q_ONLY, SMI_STYLE_STR, "pci/pci_bridge_chip/bridge_chip_fw", "PCI/Bridge Chip/Firmware", get_na, 0, NULL },
        { SMI_F_PCIE_REPLAY, Q_ONLY, SMI_STYLE_STR, "pci/replay_counter", "PCI/Replays Since Reset", get_pcie, L_REPLAY, NULL },
        { SMI_F_PCIE_REPLAY_ROLLOVER, Q_ONLY, SMI_STYLE_STR, "pci/replay_rollover_counter", "PCI/Replay Number Rollovers", get_zero, 0, NULL },
        { SMI_F_PCIE_TX, Q_ONLY, SMI_STYLE_STR, "pci/tx_util", "PCI/Tx Throughput", get_pcie, L_TX, NULL },
        { SMI_F_PCIE_RX, Q_ONLY, SMI_STYLE_STR, "pci/rx_util", "PCI/Rx Throughput", get_pcie, L_RX, NULL },
        { SMI_F_FAN_SPEED, "fan.speed", NO_ALIAS, "%", SMI_STYLE_PERCENT, "fan_speed", "Fan Speed", get_uint,
          U_FAN_SPEED, NULL },
        { SMI_F_PSTATE, "pstate", NO_ALIAS, NULL, SMI_STYLE_PSTATE, "performance_state", "Performance State",
          get_pstate, 0, NULL },
        { SMI_F_CER_GPU_IDLE, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_gpu_idle", "Clocks Event Reasons/Idle", get_event_reason, 0x1, NULL },
        { SMI_F_CER_APPLICATIONS_CLOCKS_SETTING, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_applications_clocks_setting", "Clocks Event Reasons/Applications Clocks Setting", get_event_reason, 0x2, NULL },
        { SMI_F_CER_SW_POWER_CAP, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sw_power_cap", "Clocks Event Reasons/SW Power Cap", get_event_reason, 0x4, NULL },
        { SMI_F_CER_HW_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_slowdown", "Clocks Event Reasons/HW Slowdown", get_event_reason, 0x8, NULL },
        { SMI_F_CER_HW_THERMAL_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_thermal_slowdown", "Clocks Event Reasons/HW Thermal Slowdown", get_event_reason, 0x40, NULL },
        { SMI_F_CER_HW_POWER_BRAKE_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_power_brake_slowdown", "Clocks Event Reasons/HW Power Brake Slowdown", get_event_reason, 0x80, NULL },
        { SMI_F_CER_SYNC_BOOST, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sync_boost", "Clocks Event Reasons/Sync Boost", get_event_reason, 0x10, NULL },
        { SMI_F_CER_SW_THERMAL_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sw_thermal_slowdown", "Clocks Event Reasons/SW Thermal Slowdown", get_event_reason, 0x20, NULL },
        { SMI_F_CER_DISPLAY_CLOCKS_SETTING, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_display_clocks_setting", "Clocks Event Reasons/Display Clock Setting", get_event_reason, 0x100, NULL },
        { SMI_F_CER_COUNTER_SW_POWER_CAP, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons_counters/clocks_event_reasons_counters_sw_power_cap", "Clocks Event Reasons Counters/SW Power Capping", get_violation, 0, NULL },
        { SMI_F_CER_COUNTER_SYNC_BOOST, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons_counters/clocks_event_reasons_counters_sync_boost", "Clocks Event Reasons Counters/Sync Boost", get_violation, 2, NULL },
        { SMI_F_CER_COUNTER_SW_THERMAL, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons_counters/clocks_event_reasons_counters_sw_therm_slowdown", "Clocks Event Reasons Counters/SW Thermal Slowdown", get_violation, 1, NULL },
        { SMI_F_MEMORY_TOTAL, "memory.total", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/total",
          "FB Memory Usage/Total", get_memory, MEM_TOTAL, NULL },
        { SMI_F_MEMORY_RESERVED, "memory.reserved", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/reserved",
          "FB Memory Usage/Reserved", get_memory, MEM_RESERVED, NULL },
        { SMI_F_MEMORY_USED, "memory.used", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/used",
          "FB Memory Usage/Used", get_memory, MEM_USED, NULL },
        { SMI_F_MEMORY_FREE, "memory.free", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/free",
          "FB Memory Usage/Free", get_memory, MEM_FREE, NULL },
        { SMI_F_BAR1_TOTAL, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/total", "BAR1 Memory Usage/Total", get_bar1, BAR1_TOTAL, NULL },
        { SMI_F_BAR1_USED, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/used", "BAR1 Memory Usage/Used", get_bar1, BAR1_USED, NULL },
        { SMI_F_BAR1_FREE, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/free", "BAR1 Memory Usage/Free", get_bar1, BAR1_FREE, NULL },
        { SMI_F_COMPUTE_MODE, "compute_mode", NO_ALIAS, NULL, SMI_STYLE_COMPUTE_MODE, "compute_mode", "Compute Mode",
          get_compute_mode, 0, NULL },
        { SMI_F_COMPUTE_CAP, "compute_cap", NO_ALIAS, NULL, SMI_STYLE_CC, CSV_ONLY, get_compute_cap, 0, NULL },
        { SMI_F_UTILIZATION_GPU, "utilization.gpu", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/gpu_util",
          "Utilization/GPU", get_pair, PAIR(PAIR_UTILIZATION, 0), NULL },
        { SMI_F_UTILIZATION_MEMORY, "utilization.memory", NO_ALIAS, "%", SMI_STYLE_PERCENT,
          "utilization/memory_util", "Utilization/Memory", get_pair, PAIR(PAIR_UTILIZATION, 1), NULL },
        { SMI_F_UTILIZATION_ENCODER, Q_ONLY, SMI_STYLE_STR, "utilization/encoder_util", "Utilization/Encoder", get_engine_util, ENG_ENCODER, NULL },
        { SMI_F_UTILIZATION_DECODER, Q_ONLY, SMI_STYLE_STR, "utilization/decoder_util", "Utilization/Decoder", get_engine_util, ENG_DECODER, NULL },
        { SMI_F_UTILIZATION_JPEG, Q_ONLY, SMI_STYLE_STR, "utilization/jpeg_util", "Utilization/JPEG", get_engine_util, ENG_JPEG, NULL },
        { SMI_F_UTILIZATION_OFA, Q_ONLY, SMI_STYLE_STR, "utilization/ofa_util", "Utilization/OFA", get_engine_util, ENG_OFA, NULL },
        { SMI_F_ENCODER_SESSIONS, Q_ONLY, SMI_STYLE_STR, "encoder_stats/session_count", "Encoder Stats/Active Sessions", get_sessions, 0, NULL },
        { SMI_F_ENCODER_FPS, Q_ONLY, SMI_STYLE_STR, "encoder_stats/average_fps", "Encoder Stats/Average FPS", get_sessions, 1, NULL },
        { SMI_F_ENCODER_LATENCY, Q_ONLY, SMI_STYLE_STR, "encoder_stats/average_latency", "Encoder Stats/Average Latency", get_sessions, 2, NULL },
        { SMI_F_FBC_SESSIONS, Q_ONLY, SMI_STYLE_STR, "fbc_stats/session_count", "FBC Stats/Active Sessions", get_sessions, 3, NULL },
        { SMI_F_FBC_FPS, Q_ONLY, SMI_STYLE_STR, "fbc_stats/average_fps", "FBC Stats/Average FPS", get_sessions, 4, NULL },
        { SMI_F_FBC_LATENCY, Q_ONLY, SMI_STYLE_STR, "fbc_stats/average_latency", "FBC Stats/Average Latency", get_sessions, 5, NULL },
        { SMI_F_DRAM_ENCRYPTION_CURRENT, Q_ONLY, SMI_STYLE_STR, "dram_encryption_mode/current_dram_encryption", "DRAM Encryption Mode/Current", get_na, 0, NULL },
        { SMI_F_DRAM_ENCRYPTION_PENDING, Q_ONLY, SMI_STYLE_STR, "dram_encryption_mode/pending_dram_encryption", "DRAM Encryption Mode/Pending", get_na, 0, NULL },
        { SMI_F_ECC_MODE_CURRENT, "ecc.mode.current", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "ecc_mode/current_ecc",
          "ECC Mode/Current", get_pair, PAIR(PAIR_ECC_MODE, 0), NULL },
        { SMI_F_ECC_MODE_PENDING, "ecc.mode.pending", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "ecc_mode/pending_ecc",
          "ECC Mode/Pending", get_pair, PAIR(PAIR_ECC_MODE, 1), NULL },
        { SMI_F_ECC_VOLATILE_SRAM_CORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/volatile/sram_correctable", "ECC Errors/Volatile/SRAM Correctable", get_ecc_count, ECC(0, 0, 0), NULL },
        { SMI_F_ECC_VOLATILE_SRAM_UNCORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/volatile/sram_uncorrectable", "ECC Errors/Volatile/SRAM Uncorrectable", get_ecc_count, ECC(0, 0, 1), NULL },
        { SMI_F_ECC_VOLATILE_DRAM_CORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/volatile/dram_correctable", "ECC Errors/Volatile/DRAM Correctable", get_ecc_count, ECC(0, 1, 0), NULL },
        { SMI_F_ECC_VOLATILE_DRAM_UNCORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/volatile/dram_uncorrectable", "ECC Errors/Volatile/DRAM Uncorrectable", get_ecc_count, ECC(0, 1, 1), NULL },
        { SMI_F_ECC_AGGREGATE_SRAM_CORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/aggregate/sram_correctable", "ECC Errors/Aggregate/SRAM Correctable", get_ecc_count, ECC(1, 0, 0), NULL },
        { SMI_F_ECC_AGGREGATE_SRAM_UNCORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/aggregate/sram_uncorrectable", "ECC Errors/Aggregate/SRAM Uncorrectable", get_ecc_count, ECC(1, 0, 1), NULL },
        { SMI_F_ECC_AGGREGATE_DRAM_CORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/aggregate/dram_correctable", "ECC Errors/Aggregate/DRAM Correctable", get_ecc_count, ECC(1, 1, 0), NULL },
        { SMI_F_ECC_AGGREGATE_DRAM_UNCORRECTABLE, Q_ONLY, SMI_STYLE_STR, "ecc_errors/aggregate/dram_uncorrectable", "ECC Errors/Aggregate/DRAM Uncorrectable", get_ecc_count, ECC(1, 1, 1), NULL },
        { SMI_F_RETIRED_SINGLE_BIT, Q_ONLY, SMI_STYLE_STR, "retired_pages/multiple_single_bit_retirement/retired_count", "Retired Pages/Single Bit ECC/Count", get_retired, RP_SINGLE_BIT, NULL },
        { SMI_F_RETIRED_DOUBLE_BIT, Q_ONLY, SMI_STYLE_STR, "retired_pages/double_bit_retirement/retired_count", "Retired Pages/Double Bit ECC/Count", get_retired, RP_DOUBLE_BIT, NULL },
        { SMI_F_RETIRED_PENDING_BLACKLIST, Q_ONLY, SMI_STYLE_STR, "retired_pages/pending_blacklist", "Retired Pages/Pending Page Blacklist", get_retired, RP_PENDING, NULL },
        { SMI_F_RETIRED_PENDING, Q_ONLY, SMI_STYLE_STR, "retired_pages/pending_retirement", "Retired Pages/Pending Page Retirement", get_retired, RP_PENDING, NULL },
        { SMI_F_REMAPPED_CORR, Q_ONLY, SMI_STYLE_STR, "remapped_rows/remapped_row_corr", "Remapped Rows/Correctable Error", get_remapped, RR_CORR, NULL },
        { SMI_F_REMAPPED_UNC, Q_ONLY, SMI_STYLE_STR, "remapped_rows/remapped_row_unc", "Remapped Rows/Uncorrectable Error", get_remapped, RR_UNC, NULL },
        { SMI_F_REMAPPED_PENDING, Q_ONLY, SMI_STYLE_STR, "remapped_rows/remapped_row_pending", "Remapped Rows/Pending", get_remapped, RR_PENDING, NULL },
        { SMI_F_REMAPPED_FAILURE, Q_ONLY, SMI_STYLE_STR, "remapped_rows/remapped_row_failure", "Remapped Rows/Remapping Failure Occurred", get_remapped, RR_FAILURE, NULL },
        { SMI_F_REMAP_HISTOGRAM_MAX, Q_ONLY, SMI_STYLE_STR, "remapped_rows/row_remapper_histogram/row_remapper_histogram_max", "Remapped Rows/Bank Remap Availability Histogram/Max", get_remapped, RR_H_MAX, NULL },
        { SMI_F_REMAP_HISTOGRAM_HIGH, Q_ONLY, SMI_STYLE_STR, "remapped_rows/row_remapper_histogram/row_remapper_histogram_high", "Remapped Rows/Bank Remap Availability Histogram/High", get_remapped, RR_H_HIGH, NULL },
        { SMI_F_REMAP_HISTOGRAM_PARTIAL, Q_ONLY, SMI_STYLE_STR, "remapped_rows/row_remapper_histogram/row_remapper_histogram_partial", "Remapped Rows/Bank Remap Availability Histogram/Partial", get_remapped, RR_H_PARTIAL, NULL },
        { SMI_F_REMAP_HISTOGRAM_LOW, Q_ONLY, SMI_STYLE_STR, "remapped_rows/row_remapper_histogram/row_remapper_histogram_low", "Remapped Rows/Bank Remap Availability Histogram/Low", get_remapped, RR_H_LOW, NULL },
        { SMI_F_REMAP_HISTOGRAM_NONE, Q_ONLY, SMI_STYLE_STR, "remapped_rows/row_remapper_histogram/row_remapper_histogram_none", "Remapped Rows/Bank Remap Availability Histogram/None", get_remapped, RR_H_NONE, NULL },
        /* The real CSV header has no unit for temperature.gpu and the value is a bare number. */
        { SMI_F_TEMPERATURE_GPU, "temperature.gpu", NO_ALIAS, NULL, SMI_STYLE_CELSIUS, "temperature/gpu_temp",
          "Temperature/GPU Current Temp", get_uint, U_TEMPERATURE, NULL },
        { SMI_F_TEMP_SHUTDOWN, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_threshold", "Temperature/GPU Shutdown Temp", get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, NULL },
        { SMI_F_TEMP_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_slow_threshold", "Temperature/GPU Slowdown Temp", get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, NULL },
        { SMI_F_TEMP_GPU_MAX, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_gpu_threshold", "Temperature/GPU Max Operating Temp", get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, NULL },
        { SMI_F_TEMP_TARGET, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_target_temperature", "Temperature/GPU Target Temperature", get_na, 0, NULL },
        { SMI_F_TEMP_MEM_MAX, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_mem_threshold", "Temperature/Memory Max Operating Temp", get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, NULL },
        { SMI_F_TARGET_TEMP_MIN, Q_ONLY, SMI_STYLE_STR, "supported_gpu_target_temp/gpu_target_temp_min", "Supported GPU Target Temp/GPU Target Temp Min", get_na, 0, NULL },
        { SMI_F_TARGET_TEMP_MAX, Q_ONLY, SMI_STYLE_STR, "supported_gpu_target_temp/gpu_target_temp_max", "Supported GPU Target Temp/GPU Target Temp Max", get_na, 0, NULL },
        { SMI_F_TEMPERATURE_MEMORY, "temperature.memory", NO_ALIAS, NULL, SMI_STYLE_UINT, CSV_ONLY,
          get_not_supported, 0, NULL },
        { SMI_F_POWER_DRAW, "power.draw", NO_ALIAS, "W", SMI_STYLE_WATT, CSV_ONLY, get_uint, U_POWER_USAGE, NULL },
        { SMI_F_POWER_DRAW_AVERAGE, "power.draw.average", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/average_power_draw", "GPU Power Readings/Average Power Draw", get_uint, U_POWER_USAGE,
          NULL },
        { SMI_F_POWER_DRAW_INSTANT, "power.draw.instant", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/instant_power_draw", "GPU Power Readings/Instantaneous Power Draw", get_uint,
          U_POWER_USAGE, NULL },
        { SMI_F_POWER_LIMIT, "power.limit", NO_ALIAS, "W", SMI_STYLE_WATT, "gpu_power_readings/current_power_limit",
          "GPU Power Readings/Current Power Limit", get_uint, U_POWER_LIMIT, NULL },
        { SMI_F_POWER_REQUESTED_LIMIT, Q_ONLY, SMI_STYLE_WATT, "gpu_power_readings/requested_power_limit", "GPU Power Readings/Requested Power Limit", get_uint, U_POWER_LIMIT, NULL },
        { SMI_F_ENFORCED_POWER_LIMIT, "enforced.power.limit", NO_ALIAS, "W", SMI_STYLE_WATT, CSV_ONLY, get_uint,
          U_ENFORCED_LIMIT, NULL },
        { SMI_F_POWER_DEFAULT_LIMIT, "power.default_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/default_power_limit", "GPU Power Readings/Default Power Limit", get_uint,
          U_DEFAULT_LIMIT, NULL },
        { SMI_F_POWER_MIN_LIMIT, "power.min_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/min_power_limit", "GPU Power Readings/Min Power Limit", get_pair,
          PAIR(PAIR_POWER_CONSTRAINTS, 0), NULL },
        { SMI_F_POWER_MAX_LIMIT, "power.max_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/max_power_limit", "GPU Power Readings/Max Power Limit", get_pair,
          PAIR(PAIR_POWER_CONSTRAINTS, 1), NULL },
        { SMI_F_POWER_SMOOTHING, Q_ONLY, SMI_STYLE_STR, "power_smoothing", "Power Smoothing", get_na, 0, NULL },
        { SMI_F_POWER_PROFILES_REQUESTED, Q_ONLY, SMI_STYLE_STR, "power_profiles/power_profile_requested_profiles", "Workload Power Profiles/Requested Profiles", get_na, 0, NULL },
        { SMI_F_POWER_PROFILES_ENFORCED, Q_ONLY, SMI_STYLE_STR, "power_profiles/power_profile_enforced_profiles", "Workload Power Profiles/Enforced Profiles", get_na, 0, NULL },
        { SMI_F_CLOCKS_GR, "clocks.current.graphics", ALIAS("clocks.gr"), "MHz", SMI_STYLE_MHZ,
          "clocks/graphics_clock", "Clocks/Graphics", get_clock, NVML_CLOCK_GRAPHICS, NULL },
        { SMI_F_CLOCKS_SM, "clocks.current.sm", ALIAS("clocks.sm"), "MHz", SMI_STYLE_MHZ, "clocks/sm_clock",
          "Clocks/SM", get_clock, NVML_CLOCK_SM, NULL },
        { SMI_F_CLOCKS_MEM, "clocks.current.memory", ALIAS("clocks.mem"), "MHz", SMI_STYLE_MHZ, "clocks/mem_clock",
          "Clocks/Memory", get_clock, NVML_CLOCK_MEM, NULL },
        { SMI_F_CLOCKS_VIDEO, "clocks.current.video", ALIAS("clocks.video"), "MHz", SMI_STYLE_MHZ,
          "clocks/video_clock", "Clocks/Video", get_clock, NVML_CLOCK_VIDEO, NULL },
        { SMI_F_APP_CLOCK_GR, Q_ONLY, SMI_STYLE_STR, "applications_clocks/graphics_clock", "Applications Clocks/Graphics", get_app_clock, APP_CLOCK | NVML_CLOCK_GRAPHICS, NULL },
        { SMI_F_APP_CLOCK_MEM, Q_ONLY, SMI_STYLE_STR, "applications_clocks/mem_clock", "Applications Clocks/Memory", get_app_clock, APP_CLOCK | NVML_CLOCK_MEM, NULL },
        { SMI_F_DEFAULT_APP_CLOCK_GR, Q_ONLY, SMI_STYLE_STR, "default_applications_clocks/graphics_clock", "Default Applications Clocks/Graphics", get_app_clock, DEFAULT_CLOCK | NVML_CLOCK_GRAPHICS, NULL },
        { SMI_F_DEFAULT_APP_CLOCK_MEM, Q_ONLY, SMI_STYLE_STR, "default_applications_clocks/mem_clock", "Default Applications Clocks/Memory", get_app_clock, DEFAULT_CLOCK | NVML_CLOCK_MEM, NULL },
        { SMI_F_DEFERRED_CLOCK_MEM, Q_ONLY, SMI_STYLE_STR, "deferred_clocks/mem_clock", "Deferred Clocks/Memory", get_na, 0, NULL },
        { SMI_F_CLOCKS_MAX_GR, "clocks.max.graphics", ALIAS("clocks.max.gr"), "MHz", SMI_STYLE_MHZ,
          "max_clocks/graphics_clock", "Max Clocks/Graphics", get_clock, CLOCK_MAX | NVML_CLOCK_GRAPHICS, NULL },
        { SMI_F_CLOCKS_MAX_SM, "clocks.max.sm", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "max_clocks/sm_clock",
          "Max Clocks/SM", get_clock, CLOCK_MAX | NVML_CLOCK_SM, NULL },
        { SMI_F_CLOCKS_MAX_MEM, "clocks.max.memory", ALIAS("clocks.max.mem"), "MHz", SMI_STYLE_MHZ,
          "max_clocks/mem_clock", "Max Clocks/Memory", get_clock, CLOCK_MAX | NVML_CLOCK_MEM, NULL },
        { SMI_F_CLOCKS_MAX_VIDEO, Q_ONLY, SMI_STYLE_MHZ, "max_clocks/video_clock", "Max Clocks/Video", get_clock,
          CLOCK_MAX | NVML_CLOCK_VIDEO, NULL },
        { SMI_F_BOOST_CLOCK_GR, Q_ONLY, SMI_STYLE_STR, "max_customer_boost_clocks/graphics_clock", "Max Customer Boost Clocks/Graphics", get_app_clock, NVML_CLOCK_GRAPHICS, NULL },
        { SMI_F_AUTO_BOOST, Q_ONLY, SMI_STYLE_STR, "clock_policy/auto_boost", "Clock Policy/Auto Boost", get_na, 0, NULL },
        { SMI_F_AUTO_BOOST_DEFAULT, Q_ONLY, SMI_STYLE_STR, "clock_policy/auto_boost_default", "Clock Policy/Auto Boost Default", get_na, 0, NULL },
        { SMI_F_FABRIC_STATE, Q_ONLY, SMI_STYLE_STR, "fabric/state", "Fabric/State", get_fabric, FAB_STATE, NULL },
        { SMI_F_FABRIC_STATUS, Q_ONLY, SMI_STYLE_STR, "fabric/status", "Fabric/Status", get_fabric, FAB_STATUS,
          NULL },
        { SMI_F_FABRIC_CLIQUE_ID, Q_ONLY, SMI_STYLE_STR, "fabric/cliqueId", "Fabric/CliqueId", get_fabric,
          FAB_CLIQUE_ID, NULL },
        { SMI_F_FABRIC_CLUSTER_UUID, Q_ONLY, SMI_STYLE_STR, "fabric/clusterUuid", "Fabric/ClusterUUID", get_fabric,
          FAB_CLUSTER_UUID, NULL },
        { SMI_F_FABRIC_HEALTH_SUMMARY, Q_ONLY, SMI_STYLE_STR, "fabric/health/summary", "Fabric/Health/Summary", get_na, 0, NULL },
        { SMI_F_FABRIC_HEALTH_BANDWIDTH, Q_ONLY, SMI_STYLE_STR, "fabric/health/bandwidth", "Fabric/Health/Bandwidth", get_na, 0, NULL },
        { SMI_F_FABRIC_HEALTH_ROUTE_RECOVERY_IN_PROGRESS, Q_ONLY, SMI_STYLE_STR, "fabric/health/route_recovery_in_progress", "Fabric/Health/Route Recovery in progress", get_na, 0, NULL },
        { SMI_F_FABRIC_HEALTH_ROUTE_UNHEALTHY, Q_ONLY, SMI_STYLE_STR, "fabric/health/route_unhealthy", "Fabric/Health/Route Unhealthy", get_na, 0, NULL },
        { SMI_F_FABRIC_HEALTH_ACCESS_TIMEOUT_RECOVERY, Q_ONLY, SMI_STYLE_STR, "fabric/health/access_timeout_recovery", "Fabric/Health/Access Timeout Recovery", get_na, 0, NULL },
        { SMI_F_FABRIC_HEALTH_INCORRECT_CONFIGURATION, Q_ONLY, SMI_STYLE_STR, "fabric/health/incorrect_configuration", "Fabric/Health/Incorrect Configuration", get_na, 0, NULL },
        { SMI_F_SUPPORTED_CLOCKS, Q_ONLY, SMI_STYLE_STR, "supported_clocks", "Supported Clocks", NULL, 0,
          emit_supported_clocks },
        { SMI_F_PROCESSES, Q_ONLY, SMI_STYLE_STR, "processes", "Processes", NULL, 0, smi_emit_processes },
        { SMI_F_ACCOUNTED_PROCESSES, Q_ONLY, SMI_STYLE_STR, "accounted_processes", "Accounted Processes", NULL, 0,
          emit_accounted_processes },
};

const smi_field_def_t *smi_fields(size_t *n)
{
        if (n)
                *n = GV_ARRAY_SIZE(field_table);
        return field_table;
}

const smi_field_def_t *smi_field_lookup(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(field_table); i++) {
                const smi_field_def_t *d = &field_table[i];
                if (!d->name)
                        continue;
                if (strcmp(d->name, name) == 0)
                        return d;
                for (size_t a = 0; a < GV_ARRAY_SIZE(d->aliases) && d->aliases[a]; a++)
                        if (strcmp(d->aliases[a], name) == 0)
                                return d;
        }
        return NULL;
}

const smi_field_def_t *smi_field_by_id(smi_field_id_t id)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(field_table); i++)
                if (field_table[i].id == id)
                        return &field_table[i];
        return NULL;
}

void smi_field_read(const smi_field_def_t *def, const smi_src_t *src, smi_value_t *v)
{
        memset(v, 0, sizeof(*v));
        if (!def || !def->get) {
                v->ret = NVML_ERROR_UNKNOWN;
                return;
        }
        def->get(src, def->arg, v);
}

void smi_field_get(smi_field_id_t id, const smi_src_t *src, smi_value_t *v)
{
        smi_field_read(smi_field_by_id(id), src, v);
}
