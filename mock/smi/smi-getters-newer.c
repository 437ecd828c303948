/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The getters of the table of fields (smi-fields.c) for the rows of newer driver branches, the `-q`
 * blocks (retired pages, supported clocks, accounted processes) and the --query-gpu-only fields.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"
#include "mock/smi/smi-getters-internal.h"

/* ---- getters of the rows of newer driver branches (R535 and later captures) ---- */

/*
 * Entry points nvml-abi.h does not declare, called with the signature nvml.h gives them (written from its
 * facts; types prefixed smi_ so that they never clash with a later abi declaration).  A library without the
 * symbol, or that answers NOT_SUPPORTED (the mock's stubs), reads as N/A, as the real tool prints then.
 */
typedef struct {
        unsigned int version;
        unsigned int value;      /* 0 none, 1 HMM, 2 ATS */
} smi_nvml_addressing_mode_t;    /* nvmlDeviceAddressingMode_v1_t */
typedef struct {
        unsigned int version;
        unsigned long long value;
} smi_nvml_pdi_t;                /* nvmlPdi_v1_t */
typedef struct {
        unsigned int isC2cEnabled;
} smi_nvml_c2c_mode_t;           /* nvmlC2cModeInfo_v1_t */
typedef struct {
        unsigned int version;
        int marginTemperature;
} smi_nvml_margin_temperature_t; /* nvmlMarginTemperature_v1_t */
typedef struct {
        unsigned int version;
        unsigned int domain, bus, device, pciDeviceId, pciSubSystemId, baseClass, subClass;
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} smi_nvml_pci_info_ext_t;       /* nvmlPciInfoExt_v1_t */

typedef nvmlReturn_t (*smi_GetGspFirmwareVersion_fn)(nvmlDevice_t, char *); /* nvmlDeviceGetGspFirmwareVersion */
typedef nvmlReturn_t (*smi_GetModuleId_fn)(nvmlDevice_t, unsigned *); /* nvmlDeviceGetModuleId */
typedef nvmlReturn_t (*smi_GetC2cModeInfoV_fn)(nvmlDevice_t, smi_nvml_c2c_mode_t *); /* nvmlDeviceGetC2cModeInfoV */
typedef nvmlReturn_t (*smi_GetAddressingMode_fn)(nvmlDevice_t, smi_nvml_addressing_mode_t *); /* nvmlDeviceGetAddressingMode */
typedef nvmlReturn_t (*smi_GetPdi_fn)(nvmlDevice_t, smi_nvml_pdi_t *); /* nvmlDeviceGetPdi */
typedef nvmlReturn_t (*smi_GetMarginTemperature_fn)(nvmlDevice_t, smi_nvml_margin_temperature_t *); /* nvmlDeviceGetMarginTemperature */
typedef nvmlReturn_t (*smi_GetPciInfoExt_fn)(nvmlDevice_t, smi_nvml_pci_info_ext_t *); /* nvmlDeviceGetPciInfoExt */
typedef nvmlReturn_t (*smi_GetConfComputeProtectedMemoryUsage_fn)(nvmlDevice_t, nvmlMemory_t *); /* nvmlDeviceGetConfComputeProtectedMemoryUsage */

/* NVML_GSP_FIRMWARE_VERSION_BUF_SIZE of nvml.h. */
#define SMI_NVML_GSP_FIRMWARE_VERSION_BUF_SIZE 0x40

/* Call an entry point nvml-abi.h does not declare, of function type @fntype, looked up by name. */
#define NVXS(n, fntype, fn, ...)                                                                             \
        __extension__({                                                                                      \
                fntype nvxs_fn_ = (fntype) smi_nvml_sym((n), #fn);                                           \
                nvxs_fn_ ? nvxs_fn_(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND;                            \
        })


/* Values of the newer entry points: GSP firmware version, module id, C2C mode, addressing mode, PDI, T.Limit
 * temperature (the margin to the slowdown temperature), PCI class codes (XML "3", -q "0x3": one text for both,
 * as XML shows it). */
void smi_get_newer(const smi_src_t *s, int arg, smi_value_t *v)
{
        const gv_nvml_t *n = s->nvml;
        unsigned u = 0;
        switch (arg) {
        case X_GSP_FIRMWARE: {
                char buf[SMI_NVML_GSP_FIRMWARE_VERSION_BUF_SIZE] = "";
                v->ret = NVXS(n, smi_GetGspFirmwareVersion_fn, nvmlDeviceGetGspFirmwareVersion, s->dev, buf);
                buf[sizeof(buf) - 1] = '\0';
                smi_set_text(v, "%s", buf);
                break;
        }
        case X_MODULE_ID:
                v->ret = NVXS(n, smi_GetModuleId_fn, nvmlDeviceGetModuleId, s->dev, &u);
                smi_set_text(v, "%u", u);
                break;
        case X_C2C_MODE: {
                smi_nvml_c2c_mode_t c = { 0 };
                v->ret = NVXS(n, smi_GetC2cModeInfoV_fn, nvmlDeviceGetC2cModeInfoV,
                              s->dev, &c);
                smi_set_text(v, "%s", c.isC2cEnabled ? "Enabled" : "Disabled");
                break;
        }
        case X_ADDRESSING_MODE: {
                static const char *const names[] = { "None", "HMM", "ATS" };
                smi_nvml_addressing_mode_t m = { .version = GV_NVML_STRUCT_VERSION(smi_nvml_addressing_mode_t, 1) };
                v->ret = NVXS(n, smi_GetAddressingMode_fn, nvmlDeviceGetAddressingMode, s->dev, &m);
                smi_set_text(v, "%s", m.value < GV_ARRAY_SIZE(names) ? names[m.value] : "Unknown");
                break;
        }
        case X_PDI: {
                smi_nvml_pdi_t pdi = { .version = GV_NVML_STRUCT_VERSION(smi_nvml_pdi_t, 1) };
                v->ret = NVXS(n, smi_GetPdi_fn, nvmlDeviceGetPdi, s->dev, &pdi);
                smi_set_text(v, "0x%016llx", pdi.value);
                break;
        }
        case X_MARGIN_TEMPERATURE: {
                smi_nvml_margin_temperature_t m = { .version =
                                                            GV_NVML_STRUCT_VERSION(smi_nvml_margin_temperature_t, 1) };
                v->ret = NVXS(n, smi_GetMarginTemperature_fn, nvmlDeviceGetMarginTemperature, s->dev, &m);
                v->num2 = m.marginTemperature;
                break;
        }
        default: {
                smi_nvml_pci_info_ext_t p = { .version = GV_NVML_STRUCT_VERSION(smi_nvml_pci_info_ext_t, 1) };
                v->ret = NVXS(n, smi_GetPciInfoExt_fn, nvmlDeviceGetPciInfoExt,
                              s->dev, &p);
                v->num = arg == X_PCI_BASE_CLASS ? p.baseClass : p.subClass;
        }
        }
}

/* Confidential computing protected memory (nvmlDeviceGetConfComputeProtectedMemoryUsage), MiB: arg 0 total,
 * 1 used, 2 free. */
void smi_get_cc_memory(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlMemory_t m = { 0 };
        v->ret = NVXS(s->nvml, smi_GetConfComputeProtectedMemoryUsage_fn, nvmlDeviceGetConfComputeProtectedMemoryUsage, s->dev, &m);
        const unsigned long long bytes[] = { m.total, m.used, m.free };
        v->num = bytes[arg >= 0 && arg < 3 ? arg : 0] / (1024ULL * 1024ULL);
}

/* One NVML field value (nvmlDeviceGetFieldValues) of field @id in @scope; its own return in *ret. */
static unsigned long long field_value(const smi_src_t *s, unsigned id, unsigned scope, nvmlReturn_t *ret)
{
        nvmlFieldValue_t f = { .fieldId = id, .scopeId = scope };
        *ret = NVX(s->nvml, nvmlDeviceGetFieldValues, s->dev, 1, &f);
        if (*ret == NVML_SUCCESS)
                *ret = f.nvmlReturn;
        if (*ret != NVML_SUCCESS)
                return 0;
        switch (f.valueType) {
        case NVML_VALUE_TYPE_UNSIGNED_INT:
                return f.value.uiVal;
        case NVML_VALUE_TYPE_DOUBLE:
                return (unsigned long long) f.value.dVal;
        case NVML_VALUE_TYPE_SIGNED_INT: /* the caller reads it back as a long long */
                return (unsigned long long) (long long) f.value.siVal;
        default:
                return f.value.ullVal;
        }
}

/* Memory temperature: NVML_FI_DEV_MEMORY_TEMP (C; the CSV writes the bare number, -q adds " C"). */
void smi_get_memory_temp(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        v->num = field_value(s, NVML_FI_DEV_MEMORY_TEMP, 0, &v->ret);
}


/* SRAM ECC error split and sources (nvmlDeviceGetSramEccErrorStatus): counts, "Yes"/"No" for the threshold. */
void smi_get_sram_ecc(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlEccSramErrorStatus_t st = { .version = nvmlEccSramErrorStatus_v1 };
        v->ret = NVX(s->nvml, nvmlDeviceGetSramEccErrorStatus, s->dev, &st);
        const unsigned long long n[] = { st.volatileUncParity,    st.volatileUncSecDed,    st.aggregateUncParity,
                                         st.aggregateUncSecDed,   st.bThresholdExceeded,   st.aggregateUncBucketL2,
                                         st.aggregateUncBucketSm, st.aggregateUncBucketMcu, st.aggregateUncBucketPcie,
                                         st.aggregateUncBucketOther };
        unsigned long long x = n[arg >= 0 && arg < (int) GV_ARRAY_SIZE(n) ? arg : 0];
        if (arg == SRAM_THRESHOLD)
                smi_set_text(v, "%s", x ? "Yes" : "No");
        else
                smi_set_text(v, "%llu", x);
}

/* Channel / TPC repair pending (nvmlDeviceGetRepairStatus, arg 0 / 1) and unrepairable memory (arg 2). */
void smi_get_repair(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned x = 0;
        if (arg == 2) {
                nvmlUnrepairableMemoryStatus_v1_t u = { 0 };
                v->ret = NVX(s->nvml, nvmlDeviceGetUnrepairableMemoryFlag_v1, s->dev, &u);
                x = u.bUnrepairableMemory;
        } else {
                nvmlRepairStatus_t r = { .version = nvmlRepairStatus_v1 };
                v->ret = NVX(s->nvml, nvmlDeviceGetRepairStatus, s->dev, &r);
                x = arg ? r.bTpcRepairPending : r.bChannelRepairPending;
        }
        smi_set_text(v, "%s", x ? "Yes" : "No");
}

/* Device capabilities (nvmlDeviceGetCapabilities): EGM "enabled" / "disabled". */
void smi_get_capability(const smi_src_t *s, int arg, smi_value_t *v)
{
        nvmlDeviceCapabilities_t c = { .version = nvmlDeviceCapabilities_v1 };
        v->ret = NVX(s->nvml, nvmlDeviceGetCapabilities, s->dev, &c);
        smi_set_text(v, "%s", c.capMask & (unsigned) arg ? "enabled" : "disabled");
}

/* GPU recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION), as nvidia-smi names them. */
void smi_get_recovery_action(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        static const char *const names[] = { "None", "Reset", "Reboot", "Drain P2P", "Drain and Reset" };
        unsigned long long a = field_value(s, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, 0, &v->ret);
        smi_set_text(v, "%s", a < GV_ARRAY_SIZE(names) ? names[a] : "Unknown");
}

/* A yes/no field value (arg: the field id): GPU reset status on 535..579. */
void smi_get_field_yes_no(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long x = field_value(s, (unsigned) arg, 0, &v->ret);
        smi_set_text(v, "%s", x ? "Yes" : "No");
}

/* A clocks event reason counter kept as a field value in ns (arg: the field id), in us. */
void smi_get_field_us(const smi_src_t *s, int arg, smi_value_t *v)
{
        v->num = field_value(s, (unsigned) arg, 0, &v->ret) / 1000ULL;
        smi_set_text(v, "%llu us", v->num);
}

/* A T.Limit threshold (arg: NVML_FI_DEV_TEMPERATURE_*_TLIMIT), signed C: "-8 C". */
void smi_get_tlimit_threshold(const smi_src_t *s, int arg, smi_value_t *v)
{
        long long t = (long long) field_value(s, (unsigned) arg, 0, &v->ret);
        smi_set_text(v, "%lld C", t);
}

/* Inactive row remappings (arg 0 correctable, 1 uncorrectable): NVML_FI_DEV_REMAPPED_ROWS_{COR,UNC}_INACTIVE. */
void smi_get_remapped_inactive(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned id = arg ? NVML_FI_DEV_REMAPPED_ROWS_UNC_INACTIVE : NVML_FI_DEV_REMAPPED_ROWS_COR_INACTIVE;
        unsigned long long n = field_value(s, id, 0, &v->ret);
        smi_set_text(v, "%llu", n);
}

/* nvml.h power scopes beyond NVML_POWER_SCOPE_GPU: the module (GPU + CPU on Grace parts) and the memory. */
/* arg: scope * 2 + (0 average, 1 instantaneous) power draw, NVML_FI_DEV_POWER_AVERAGE/INSTANT, in W. */
void smi_get_power_field(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned id = arg % 2 ? NVML_FI_DEV_POWER_INSTANT : NVML_FI_DEV_POWER_AVERAGE;
        v->num = field_value(s, id, (unsigned) arg / 2, &v->ret);
}


/* Power state ("P0") and power management ("Supported") of the power readings. */
void smi_get_power_misc(const smi_src_t *s, int arg, smi_value_t *v)
{
        if (arg == PW_STATE) {
                nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
                v->ret = NVX(s->nvml, nvmlDeviceGetPowerState, s->dev, &ps);
                smi_set_text(v, "P%u", (unsigned) ps);
                return;
        }
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        v->ret = NVX(s->nvml, nvmlDeviceGetPowerManagementMode, s->dev, &es);
        if (v->ret == NVML_SUCCESS && es != NVML_FEATURE_ENABLED)
                v->ret = NVML_ERROR_NOT_SUPPORTED;
        smi_set_text(v, "Supported");
}

/* Display Attached (580+; the value nvmlDeviceGetDisplayMode reports, the older rows' Display Mode): Yes / No. */
void smi_get_display_attached(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) arg;
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        v->ret = NV(s->nvml, nvmlDeviceGetDisplayMode, s->dev, &es);
        smi_set_text(v, "%s", es == NVML_FEATURE_ENABLED ? "Yes" : "No");
}


/* The GPU's own PCIe generation, current and max (the link's may be lower: the host's limit). */
void smi_get_device_link_gen(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned u = 0;
        if (arg == LG_DEVICE_CURRENT)
                v->ret = NVX(s->nvml, nvmlDeviceGetCurrPcieLinkGeneration, s->dev, &u);
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetGpuMaxPcieLinkGeneration, s->dev, &u);
        smi_set_text(v, "%u", u);
}

/* <retired_pagelist> of a retirement cause (XML only, as the real -q leaves it out): empty, or N/A when the count
 * is unavailable (xml__tesla-t4: empty; xml__a100-*: N/A). Page addresses are not listed. */
static void emit_retired_pagelist(smi_emit_t *e, const smi_src_t *src, nvmlPageRetirementCause_t cause)
{
        if (!e->xml)
                return;
        unsigned count = 0;
        nvmlReturn_t r = NVX(src->nvml, nvmlDeviceGetRetiredPages, src->dev, cause, &count, NULL);
        smi_emit_leaf(e, "retired_pagelist", "Retired Pages", "%s", r == NVML_SUCCESS ? "" : "N/A");
}

void smi_block_retired_pagelist_single(smi_emit_t *e, const smi_src_t *src)
{
        emit_retired_pagelist(e, src, (nvmlPageRetirementCause_t) RP_SINGLE_BIT);
}

void smi_block_retired_pagelist_double(smi_emit_t *e, const smi_src_t *src)
{
        emit_retired_pagelist(e, src, (nvmlPageRetirementCause_t) RP_DOUBLE_BIT);
}

/* Most clocks a supported-clocks list holds (nvml.h gives no bound; real GPUs list under 200 graphics clocks). */
#define SMI_MAX_SUPPORTED_CLOCKS 512

/* <supported_clocks>: each memory clock with its graphics clocks (XML only: plain `-q` leaves it out, q__*). */
void smi_block_supported_clocks(smi_emit_t *e, const smi_src_t *src)
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
void smi_block_accounted_processes(smi_emit_t *e, const smi_src_t *src)
{
        (void) src;
        if (!e->xml)
                return;
        smi_emit_open(e, "accounted_processes", "Accounted Processes", NULL, NULL);
        smi_emit_close(e, "accounted_processes");
}

/* ---- getters of --query-gpu fields without a -q element ---- */

/* Clock event reason masks: arg 0 the supported reasons, 1 the active ones (HEX16). */
void smi_get_event_mask(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long mask = 0;
        if (arg == 0)
                v->ret = NVX(s->nvml, nvmlDeviceGetSupportedClocksEventReasons, s->dev, &mask);
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetCurrentClocksEventReasons, s->dev, &mask);
        v->num = mask;
}

typedef nvmlReturn_t (*smi_GetGspFirmwareMode_fn)(nvmlDevice_t, unsigned *, unsigned *); /* nvml.h */

/* GSP firmware mode (nvmlDeviceGetGspFirmwareMode): arg 0 current, 1 default; Enabled / Disabled. */
void smi_get_gsp_mode(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned enabled = 0, def = 0;
        v->ret = NVXS(s->nvml, smi_GetGspFirmwareMode_fn, nvmlDeviceGetGspFirmwareMode, s->dev, &enabled, &def);
        smi_set_text(v, "%s", (arg == 0 ? enabled : def) ? "Enabled" : "Disabled");
}

/* The host name (gethostname(2)); unavailable when it fails. */
void smi_get_hostname(const smi_src_t *s, int arg, smi_value_t *v)
{
        (void) s;
        (void) arg;
        v->ret = gethostname(v->text, sizeof(v->text) - 1) == 0 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
        v->text[sizeof(v->text) - 1] = '\0';
        v->str = v->text;
}

/* ECC count of one memory location (nvmlMemoryLocation_t, SMI_ECC_LOC_TOTAL: nvmlDeviceGetTotalEccErrors):
 * arg = location * 4 + aggregate * 2 + uncorrected. */

void smi_get_ecc_location(const smi_src_t *s, int arg, smi_value_t *v)
{
        unsigned long long c = 0;
        nvmlMemoryErrorType_t type = (nvmlMemoryErrorType_t) (arg % 2);
        nvmlEccCounterType_t counter = (nvmlEccCounterType_t) ((arg / 2) % 2);
        if (arg / 4 == SMI_ECC_LOC_TOTAL)
                v->ret = NVX(s->nvml, nvmlDeviceGetTotalEccErrors, s->dev, type, counter, &c);
        else
                v->ret = NVX(s->nvml, nvmlDeviceGetMemoryErrorCounter, s->dev, type, counter,
                             (nvmlMemoryLocation_t) (arg / 4), &c);
        smi_set_text(v, "%llu", c);
}
