/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library half of our nvidia-smi (smi_lib), around ONE table of fields
 * (smi-fields.c): a row per field holds its `--query-gpu` name(s), CSV
 * unit and value style, its `-q -x` XML path, its `-q` label and its getter
 * (the NVML call, made through the gv_nvml_t handed in).  The CSV rows
 * (smi.c), the `-q` text and the `-q -x` XML (smi-emit.c) are views of that
 * table, so a new field is one row (and its id in smi_field_id_t).  The
 * default table's row layout is in smi-table.c.
 *
 * Nothing here loads NVML or reads the environment: the getters call the
 * library they are given, so the parser, the formatting and the emitter are
 * unit tested and fuzzed on their own.  The nvidia-smi program
 * (nvidia-smi*.c) opens NVML, selects and gathers the GPUs and picks the view.
 *
 * Outside facts: field names, units, value formats, table widths, XML
 * element names and `-q` labels are taken from the real captures in
 * shared/cases/nvidia-smi/ (csv__*, table__*_580.126.09 / *_590.48.01,
 * xml__*, q__*) and shared/reference/nvml-abi.md "nvidia-smi formats".
 */
#ifndef GV_MOCK_SMI_SMI_H
#define GV_MOCK_SMI_SMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "abi/nvml/nvml-abi.h"
#include "abi/nvml/nvml-loader.h"

/* Call an optional NVML entry point; a symbol the library lacks reads as FUNCTION_NOT_FOUND. */
#define NV(n, fn, ...) ((n)->fn ? (n)->fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

/*
 * smi_nvml_sym - an entry point the loader does not resolve (GV_NVML_MOCK_FUNCTIONS: optional in the supported
 * driver range), looked up by name in the library @n opened; NULL when it lacks it (or @n has no library).
 */
void *smi_nvml_sym(const gv_nvml_t *n, const char *name);

/* nvml.h nvmlMemoryLocation_t values the ECC rows read (abi/nvml names only the count). */
#define SMI_NVML_MEMORY_LOCATION_DRAM 2
#define SMI_NVML_MEMORY_LOCATION_SRAM 7

/* Call such an entry point (one lookup); a library without it reads as FUNCTION_NOT_FOUND (N/A). */
#define NVX(n, fn, ...)                                                                                      \
        __extension__({                                                                                      \
                fn##_fn nvx_fn_ = (fn##_fn) smi_nvml_sym((n), #fn);                                          \
                nvx_fn_ ? nvx_fn_(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND;                              \
        })

/* How a field's value is written (CSV). */
typedef enum smi_style {
        SMI_STYLE_STR,          /* the string as is */
        SMI_STYLE_UINT,         /* "%llu" */
        SMI_STYLE_MIB,          /* "%llu MiB"; value in MiB */
        SMI_STYLE_PERCENT,      /* "%llu %" */
        SMI_STYLE_WATT,         /* "%.2f W"; value in milliwatts */
        SMI_STYLE_MHZ,          /* "%llu MHz" */
        SMI_STYLE_HEX2,         /* "0x%02llX" */
        SMI_STYLE_HEX4,         /* "0x%04llX" */
        SMI_STYLE_HEX8,         /* "0x%08llX" */
        SMI_STYLE_ENABLED,      /* "Enabled" / "Disabled" */
        SMI_STYLE_PSTATE,       /* "P%llu", 32 = "Unknown" */
        SMI_STYLE_CC,           /* "%d.%d" from num (major) and num2 (minor) */
        SMI_STYLE_COMPUTE_MODE, /* "Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process" */
        SMI_STYLE_CELSIUS,      /* "%llu": the CSV has no unit; `-q` writes "%llu C" */
        SMI_STYLE_HEX1,         /* "0x%llX" (PCI class codes; XML "%llX") */
        SMI_STYLE_HEX16,        /* "0x%016llX" (clock event reason masks) */
        SMI_STYLE_WIDTH,        /* "%llu"; `-q` writes "%llux" (PCIe link width) */
        SMI_STYLE_US,           /* "%llu us" (clock event reason counters) */
        SMI_STYLE_BANKS,        /* "%llu"; `-q` writes "%llu bank(s)" (row remapper histogram) */
        SMI_STYLE_SCELSIUS,     /* "%lld" of num2 (signed); `-q` writes "%lld C" (T.Limit temperatures) */
} smi_style_t;

/*
 * Every field of the table.  The order of the ids is the order in which `-h`
 * lists the --query-gpu names (the real --help-query-gpu order); the order
 * of the table rows is the `-q` document order.
 */
typedef enum smi_field_id {
        /* --query-gpu fields, in the real --help-query-gpu order (the CSV headers of the 590/595 captures) */
        SMI_F_TIMESTAMP,
        SMI_F_DRIVER_VERSION,
        SMI_F_Q_KMD_VERSION,
        SMI_F_Q_VGPU_DRIVER_CAPABILITY_HETEROGENOUS_MULTIVGPU,
        SMI_F_COUNT,
        SMI_F_NAME,
        SMI_F_SERIAL,
        SMI_F_UUID,
        SMI_F_PCI_BUS_ID,
        SMI_F_PCI_DOMAIN,
        SMI_F_PCI_BUS,
        SMI_F_PCI_DEVICE,
        SMI_F_PCI_BASE_CLASS,
        SMI_F_PCI_SUB_CLASS,
        SMI_F_PCI_DEVICE_ID,
        SMI_F_PCI_SUB_DEVICE_ID,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_FRACTIONAL_MULTIVGPU,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_HETEROGENEOUS_TIMESLICE_PROFILE,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_HETEROGENEOUS_TIMESLICE_SIZES,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_HOMOGENEOUS_PLACEMENTS,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_MIG_TIMESLICING,
        SMI_F_Q_VGPU_DEVICE_CAPABILITY_MIG_TIMESLICING_MODE,
        SMI_F_PCIE_GEN_CURRENT,
        SMI_F_PCIE_GEN_DEVICE_CURRENT,
        SMI_F_PCIE_GEN_MAX,
        SMI_F_PCIE_GEN_DEVICE_MAX,
        SMI_F_PCIE_GEN_HOST_MAX,
        SMI_F_PCIE_WIDTH_CURRENT,
        SMI_F_PCIE_WIDTH_MAX,
        SMI_F_INDEX,
        SMI_F_DISPLAY_MODE,
        SMI_F_DISPLAY_ATTACHED,
        SMI_F_DISPLAY_ACTIVE,
        SMI_F_PERSISTENCE_MODE,
        SMI_F_ADDRESSING_MODE,
        SMI_F_ACCOUNTING_MODE,
        SMI_F_ACCOUNTING_BUFFER,
        SMI_F_DRIVER_MODEL_CURRENT,
        SMI_F_DRIVER_MODEL_PENDING,
        SMI_F_VBIOS_VERSION,
        SMI_F_INFOROM_IMAGE,
        SMI_F_INFOROM_OEM,
        SMI_F_INFOROM_ECC,
        SMI_F_INFOROM_POWER,
        SMI_F_Q_INFOROM_CHECKSUM_VALIDATION,
        SMI_F_GPU_RECOVERY_ACTION,
        SMI_F_GOM_CURRENT,
        SMI_F_GOM_PENDING,
        SMI_F_FAN_SPEED,
        SMI_F_PSTATE,
        SMI_F_Q_CLOCKS_EVENT_REASONS_SUPPORTED,
        SMI_F_Q_CLOCKS_EVENT_REASONS_ACTIVE,
        SMI_F_CER_GPU_IDLE,
        SMI_F_CER_APPLICATIONS_CLOCKS_SETTING,
        SMI_F_CER_SW_POWER_CAP,
        SMI_F_CER_HW_SLOWDOWN,
        SMI_F_CER_HW_THERMAL_SLOWDOWN,
        SMI_F_CER_HW_POWER_BRAKE_SLOWDOWN,
        SMI_F_CER_SW_THERMAL_SLOWDOWN,
        SMI_F_CER_SYNC_BOOST,
        SMI_F_CER_COUNTER_SW_POWER_CAP,
        SMI_F_CER_COUNTER_SYNC_BOOST,
        SMI_F_CER_COUNTER_SW_THERMAL,
        SMI_F_CER_COUNTER_HW_THERMAL,
        SMI_F_CER_COUNTER_HW_POWER_BRAKE,
        SMI_F_MEMORY_TOTAL,
        SMI_F_MEMORY_RESERVED,
        SMI_F_MEMORY_USED,
        SMI_F_MEMORY_FREE,
        SMI_F_COMPUTE_MODE,
        SMI_F_COMPUTE_CAP,
        SMI_F_UTILIZATION_GPU,
        SMI_F_UTILIZATION_MEMORY,
        SMI_F_UTILIZATION_ENCODER,
        SMI_F_UTILIZATION_DECODER,
        SMI_F_UTILIZATION_JPEG,
        SMI_F_UTILIZATION_OFA,
        SMI_F_ENCODER_SESSIONS,
        SMI_F_ENCODER_FPS,
        SMI_F_ENCODER_LATENCY,
        SMI_F_DRAM_ENCRYPTION_CURRENT,
        SMI_F_DRAM_ENCRYPTION_PENDING,
        SMI_F_ECC_MODE_CURRENT,
        SMI_F_ECC_MODE_PENDING,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_DEVICE_MEMORY,
        SMI_F_ECC_VOLATILE_DRAM_CORRECTABLE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_REGISTER_FILE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_L1_CACHE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_L2_CACHE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_TEXTURE_MEMORY,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_CBU,
        SMI_F_ECC_VOLATILE_SRAM_CORRECTABLE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_TOTAL,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_DEVICE_MEMORY,
        SMI_F_ECC_AGGREGATE_DRAM_CORRECTABLE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_REGISTER_FILE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_L1_CACHE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_L2_CACHE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_TEXTURE_MEMORY,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_CBU,
        SMI_F_ECC_AGGREGATE_SRAM_CORRECTABLE,
        SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_TOTAL,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_DEVICE_MEMORY,
        SMI_F_ECC_VOLATILE_DRAM_UNCORRECTABLE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_REGISTER_FILE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_L1_CACHE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_L2_CACHE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_TEXTURE_MEMORY,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_CBU,
        SMI_F_ECC_VOLATILE_SRAM_UNCORRECTABLE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_TOTAL,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_DEVICE_MEMORY,
        SMI_F_ECC_AGGREGATE_DRAM_UNCORRECTABLE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_REGISTER_FILE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_L1_CACHE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_L2_CACHE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_TEXTURE_MEMORY,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_CBU,
        SMI_F_ECC_AGGREGATE_SRAM_UNCORRECTABLE,
        SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_TOTAL,
        SMI_F_ECC_VOLATILE_SRAM_PARITY,
        SMI_F_ECC_VOLATILE_SRAM_SECDED,
        SMI_F_ECC_AGGREGATE_SRAM_PARITY,
        SMI_F_ECC_AGGREGATE_SRAM_SECDED,
        SMI_F_ECC_SRAM_THRESHOLD_EXCEEDED,
        SMI_F_ECC_SRAM_SOURCE_L2,
        SMI_F_ECC_SRAM_SOURCE_SM,
        SMI_F_ECC_SRAM_SOURCE_MICROCONTROLLER,
        SMI_F_ECC_SRAM_SOURCE_PCIE,
        SMI_F_ECC_SRAM_SOURCE_OTHER,
        SMI_F_RETIRED_SINGLE_BIT,
        SMI_F_RETIRED_DOUBLE_BIT,
        SMI_F_RETIRED_PENDING,
        SMI_F_REMAPPED_CORR,
        SMI_F_REMAPPED_CORR_INACTIVE,
        SMI_F_REMAPPED_UNC,
        SMI_F_REMAPPED_UNC_INACTIVE,
        SMI_F_REMAPPED_PENDING,
        SMI_F_REMAPPED_FAILURE,
        SMI_F_REMAP_HISTOGRAM_MAX,
        SMI_F_REMAP_HISTOGRAM_HIGH,
        SMI_F_REMAP_HISTOGRAM_PARTIAL,
        SMI_F_REMAP_HISTOGRAM_LOW,
        SMI_F_REMAP_HISTOGRAM_NONE,
        SMI_F_TEMPERATURE_GPU,
        SMI_F_TEMP_TLIMIT,
        SMI_F_TEMPERATURE_MEMORY,  /* not in our NVML subset: always unavailable */
        SMI_F_POWER_MANAGEMENT,
        SMI_F_POWER_DRAW,
        SMI_F_POWER_DRAW_AVERAGE,
        SMI_F_POWER_DRAW_INSTANT,
        SMI_F_POWER_LIMIT,
        SMI_F_ENFORCED_POWER_LIMIT,
        SMI_F_POWER_DEFAULT_LIMIT,
        SMI_F_POWER_MIN_LIMIT,
        SMI_F_POWER_MAX_LIMIT,
        SMI_F_MODULE_POWER_AVERAGE,
        SMI_F_MODULE_POWER_INSTANT,
        SMI_F_MODULE_POWER_CURRENT_LIMIT,
        SMI_F_Q_MODULE_ENFORCED_POWER_LIMIT,
        SMI_F_MODULE_POWER_DEFAULT_LIMIT,
        SMI_F_MODULE_POWER_MIN_LIMIT,
        SMI_F_MODULE_POWER_MAX_LIMIT,
        SMI_F_Q_POWER_SMOOTHING_DELAYED_POWER_SMOOTHING_SUPPORTED,
        SMI_F_Q_POWER_SMOOTHING_PRIMARY_POWER_FLOOR,
        SMI_F_Q_POWER_SMOOTHING_SECONDARY_POWER_FLOOR,
        SMI_F_Q_POWER_SMOOTHING_MIN_PRIMARY_FLOOR_ACTIVATION_OFFSET,
        SMI_F_Q_POWER_SMOOTHING_MIN_PRIMARY_FLOOR_ACTIVATION_POINT,
        SMI_F_Q_POWER_SMOOTHING_WINDOW_MULTIPLIER,
        SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_SECONDARY_POWER_FLOOR,
        SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_ACT_WINDOW_MULTIPLIER,
        SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_TAR_WINDOW_MULTIPLIER,
        SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_ACT_OFFSET,
        SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_SECONDARY_POWER_FLOOR,
        SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_ACT_WINDOW_MULTIPLIER,
        SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_TAR_WINDOW_MULTIPLIER,
        SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_ACT_OFFSET,
        SMI_F_EDPP_MULTIPLIER,
        SMI_F_CLOCKS_GR,
        SMI_F_CLOCKS_SM,
        SMI_F_CLOCKS_MEM,
        SMI_F_CLOCKS_VIDEO,
        SMI_F_APP_CLOCK_GR,
        SMI_F_APP_CLOCK_MEM,
        SMI_F_DEFAULT_APP_CLOCK_GR,
        SMI_F_DEFAULT_APP_CLOCK_MEM,
        SMI_F_CLOCKS_MAX_GR,
        SMI_F_CLOCKS_MAX_SM,
        SMI_F_CLOCKS_MAX_MEM,
        SMI_F_MIG_MODE_CURRENT,
        SMI_F_MIG_MODE_PENDING,
        SMI_F_Q_GSP_MODE_CURRENT,
        SMI_F_Q_GSP_MODE_DEFAULT,
        SMI_F_C2C_MODE,
        SMI_F_CC_MEMORY_TOTAL,
        SMI_F_CC_MEMORY_USED,
        SMI_F_CC_MEMORY_FREE,
        SMI_F_FABRIC_STATE,
        SMI_F_FABRIC_STATUS,
        SMI_F_FABRIC_CLIQUE_ID,
        SMI_F_FABRIC_CLUSTER_UUID,
        SMI_F_FABRIC_HEALTH_SUMMARY,
        SMI_F_FABRIC_HEALTH_BANDWIDTH,
        SMI_F_FABRIC_HEALTH_ROUTE_RECOVERY_IN_PROGRESS,
        SMI_F_FABRIC_HEALTH_ROUTE_UNHEALTHY,
        SMI_F_FABRIC_HEALTH_ACCESS_TIMEOUT_RECOVERY,
        SMI_F_FABRIC_HEALTH_INCORRECT_CONFIGURATION,
        SMI_F_FABRIC_HEALTH_PARTITION_ASSIGNED,
        SMI_F_PLATFORM_CHASSIS_SERIAL,
        SMI_F_PLATFORM_SLOT,
        SMI_F_PLATFORM_TRAY,
        SMI_F_PLATFORM_HOST_ID,
        SMI_F_PLATFORM_PEER_TYPE,
        SMI_F_MODULE_ID,
        SMI_F_PLATFORM_FABRIC_GUID,
        SMI_F_Q_HOSTNAME,
        /* `-q` only (no --query-gpu name) */
        SMI_F_PRODUCT_BRAND,
        SMI_F_PRODUCT_ARCHITECTURE,
        SMI_F_MINOR_NUMBER,
        SMI_F_BOARD_PART_NUMBER,
        SMI_F_CLOCKS_MAX_VIDEO,
        SMI_F_MULTIGPU_BOARD,
        SMI_F_BOARD_ID,
        SMI_F_VIRTUALIZATION_MODE,
        SMI_F_HOST_VGPU_MODE,
        SMI_F_RELAXED_ORDERING,
        SMI_F_BRIDGE_CHIP_TYPE,
        SMI_F_BRIDGE_CHIP_FW,
        SMI_F_PCIE_REPLAY,
        SMI_F_PCIE_REPLAY_ROLLOVER,
        SMI_F_PCIE_TX,
        SMI_F_PCIE_RX,
        SMI_F_CER_DISPLAY_CLOCKS_SETTING,
        SMI_F_BAR1_TOTAL,
        SMI_F_BAR1_USED,
        SMI_F_BAR1_FREE,
        SMI_F_FBC_SESSIONS,
        SMI_F_FBC_FPS,
        SMI_F_FBC_LATENCY,
        SMI_F_RETIRED_PENDING_BLACKLIST,
        SMI_F_TEMP_SHUTDOWN,
        SMI_F_TEMP_SLOWDOWN,
        SMI_F_TEMP_GPU_MAX,
        SMI_F_TEMP_TARGET,
        SMI_F_TEMP_MEM_MAX,
        SMI_F_TARGET_TEMP_MIN,
        SMI_F_TARGET_TEMP_MAX,
        SMI_F_BOOST_CLOCK_GR,
        SMI_F_AUTO_BOOST,
        SMI_F_AUTO_BOOST_DEFAULT,
        SMI_F_POWER_REQUESTED_LIMIT,
        SMI_F_DEFERRED_CLOCK_MEM,
        SMI_F_VGPU_HETEROGENEOUS_MODE,
        SMI_F_POWER_SMOOTHING,
        SMI_F_POWER_PROFILES_REQUESTED,
        SMI_F_POWER_PROFILES_ENFORCED,
        SMI_F_PDI,
        SMI_F_GPU_PART_NUMBER,
        SMI_F_GPU_FRU_PART_NUMBER,
        SMI_F_INFOROM_BBX_TIMESTAMP,
        SMI_F_INFOROM_BBX_DURATION,
        SMI_F_GSP_FIRMWARE_VERSION,
        SMI_F_RESET_REQUIRED,
        SMI_F_DRAIN_AND_RESET,
        SMI_F_ATOMIC_CAPS_OUTBOUND,
        SMI_F_ATOMIC_CAPS_INBOUND,
        SMI_F_SPARSE_OPERATION_MODE,
        SMI_F_ECC_CHANNEL_REPAIR_PENDING,
        SMI_F_ECC_TPC_REPAIR_PENDING,
        SMI_F_ECC_UNREPAIRABLE_MEMORY,
        SMI_F_RETIRED_SINGLE_BIT_LIST,
        SMI_F_RETIRED_DOUBLE_BIT_LIST,
        SMI_F_TEMP_SHUTDOWN_TLIMIT,
        SMI_F_TEMP_SLOWDOWN_TLIMIT,
        SMI_F_TEMP_GPU_MAX_TLIMIT,
        SMI_F_TEMP_MEM_MAX_TLIMIT,
        SMI_F_POWER_STATE,
        SMI_F_MEMORY_POWER_AVERAGE,
        SMI_F_MEMORY_POWER_INSTANT,
        SMI_F_MODULE_POWER_STATE,
        SMI_F_MODULE_POWER_DRAW,
        SMI_F_MODULE_POWER_REQUESTED_LIMIT,
        SMI_F_VOLTAGE_GRAPHICS,
        SMI_F_CAPABILITY_EGM,
        SMI_F_SUPPORTED_CLOCKS,    /* a block (XML only): supported memory and graphics clocks */
        SMI_F_ACCOUNTED_PROCESSES, /* a block (XML only): empty, accounting is off */
        SMI_F_MIG_DEVICES,         /* a block: the MIG devices of the GPU */
        SMI_F_PROCESSES,           /* a block: the GPU's compute processes */
        SMI_F__MAX
} smi_field_id_t;

/*
 * A row's condition on the GPU besides the driver branch.  The T.Limit temperature thresholds: the real tool
 * prints `gpu_temp_*_tlimit_threshold` on Ada and later GPUs (RTX 4090 535.86, H100 580.105, L40S 595.91) and
 * the plain `gpu_temp_*_threshold` names on older ones (A100 510/535, RTX A5000 590.44), xml__* captures.
 */
typedef enum smi_gate {
        SMI_GATE_NONE,
        SMI_GATE_TLIMIT,    /* branch 535 or later and an Ada or later GPU */
        SMI_GATE_NO_TLIMIT, /* the others */
        /*
         * The SRAM uncorrectable parity / SEC-DED split and its sources: from 570 on Ampere and later GPUs (A100
         * 570.148, RTX A5000 590.44, H100/B200 580.105 ...); a T4 on 595.91 still writes `sram_uncorrectable`
         * (k8s-test-infra qx-t4, qx-a100).
         */
        SMI_GATE_SRAM_SPLIT,
        SMI_GATE_NO_SRAM_SPLIT, /* the others */
        SMI_GATE_AMPERE,        /* an Ampere or later GPU (channel/TPC repair, unrepairable memory) */
} smi_gate_t;

/* A value read through NVML.  ret != NVML_SUCCESS means unavailable. */
typedef struct smi_value {
        nvmlReturn_t ret;
        unsigned long long num;  /* numbers (units as smi_style_t says) */
        long long num2;          /* second number (CC minor) */
        const char *str;         /* SMI_STYLE_STR: borrowed (static, or text below), must outlive the formatting call */
        char text[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* storage a getter writes a string into (str then points here) */
} smi_value_t;

/* One MIG device of a GPU, as gathered for -L, the tables and -q. */
typedef struct smi_mig {
        nvmlDevice_t h;
        unsigned dev;             /* position among the GPU's MIG devices */
        unsigned gi, ci;
        nvmlReturn_t gi_ret, ci_ret;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvmlReturn_t uuid_ret;
        nvmlReturn_t attr_ret;
        nvmlDeviceAttributes_t attr;
        nvmlReturn_t mem_ret;
        nvmlMemory_t mem;
        char *profile;            /* "1g.5gb" (heap) */
} smi_mig_t;

/* What a getter reads: the GPU shown, its gathered lists, and what every GPU shares. */
typedef struct smi_src {
        const gv_nvml_t *nvml;          /* the loaded library (getters call through it) */
        nvmlDevice_t dev;               /* the GPU */
        unsigned index;                 /* its nvidia-smi index */
        unsigned count;                 /* GPUs NVML reports */
        const char *driver_version;
        const char *timestamp;          /* the CSV timestamp */
        const smi_mig_t *migs;          /* its MIG devices (n_migs) */
        size_t n_migs;
        const nvmlProcessInfo_t *procs; /* its compute processes (n_procs) */
        unsigned n_procs;
} smi_src_t;

typedef struct smi_emit smi_emit_t;

/* A getter: fills *v (zeroed by the caller) for @src; @arg is the row's (which value of a shared call). */
typedef void smi_getter_fn(const smi_src_t *src, int arg, smi_value_t *v);
/* A block: writes a whole `-q` element that is not one value (the MIG devices, the processes). */
typedef void smi_block_fn(smi_emit_t *e, const smi_src_t *src);

/*
 * One row of the table of fields.  xml and label are paths of the same
 * shape: "leaf" at the GPU level or "section/leaf" one level down; rows in
 * a run with the same section share one section element.
 */
typedef struct smi_field_def {
        smi_field_id_t id;
        const char *name;           /* canonical --query-gpu name, as in the real CSV header; NULL: `-q` only */
        const char *aliases[3];     /* other accepted spellings ("clocks.gr"); NULL-padded */
        const char *unit;           /* CSV header unit without brackets ("MiB"), or NULL */
        smi_style_t style;          /* how the value is written (CSV and -q) */
        const char *xml;            /* `-q -x` path ("fb_memory_usage/total"); NULL: CSV only */
        const char *label;          /* `-q` label path ("FB Memory Usage/Total") */
        smi_getter_fn *get;         /* the value; NULL for a block */
        int arg;                    /* passed to get */
        smi_block_fn *block;        /* a block row's writer, else NULL */
        /*
         * Driver version gating, in version keys (smi_driver_key(): 580173 for "580.173.02"; a branch is its
         * major number, 535 of "535.54.03"; the first and last version of each row are those of the real
         * captures that print it, shared/cases/nvidia-smi/xml__* and k8s-test-infra's hardware captures):
         */
        unsigned since;             /* first version key that prints the row; 0: every version */
        unsigned until;             /* last version key that prints it; 0: every later version */
        unsigned renamed;           /* version key from which xml/label hold; before it old_xml/old_label; 0: never */
        const char *old_xml;        /* the `-q -x` path before @renamed (same shape as xml) */
        const char *old_label;      /* the `-q` label path before @renamed */
        smi_gate_t gate;            /* a further condition on the GPU (SMI_GATE_NONE: none) */
        bool na_section;            /* when unavailable, the row's section is one N/A leaf without its other rows
                                     * (`<remapped_rows>N/A</remapped_rows>` of xml__tesla-t4, xml__a100-*) */
} smi_field_def_t;

/* A parsed --query-gpu / --format pair.  fields is heap-allocated (smi_query_free()). */
typedef struct smi_query {
        size_t n;
        const smi_field_def_t **fields; /* static definitions, in the order asked */
        bool header;                    /* false with `noheader` */
        bool units;                     /* false with `nounits` */
} smi_query_t;

/* What went wrong in smi_query_parse(). */
typedef enum smi_parse_error {
        SMI_PARSE_OK = 0,
        SMI_PARSE_BAD_FIELD,   /* *bad names the field */
        SMI_PARSE_BAD_FORMAT,  /* *bad names the format option */
        SMI_PARSE_NO_FORMAT,   /* --format missing, or without csv */
        SMI_PARSE_EMPTY,       /* no field at all */
        SMI_PARSE_NOMEM,
} smi_parse_error_t;

/* smi_fields - the whole static table of fields, in `-q` document order; *n receives its length. */
const smi_field_def_t *smi_fields(size_t *n);

/*
 * smi_driver_branch - the driver branch of a driver version string: its major number (535 of "535.54.03");
 * 0 when @version is NULL or does not start with a number (read as the newest branch by the gating).
 */
unsigned smi_driver_branch(const char *version);

/*
 * smi_driver_key - a driver version as one number, major * 1000 + minor (580173 of "580.173.02", minor capped at
 * 999); 0 like smi_driver_branch().
 */
unsigned smi_driver_key(const char *version);

/* smi_dtd_version - the DTD version nvidia-smi -q -x names for a branch: 11 before 535, 12 for 535 to 579,
 * 13 from 580 (and for branch 0). */
unsigned smi_dtd_version(unsigned branch);

/*
 * smi_row_shown - whether @def is printed for @src in `-q`/`-q -x`: its XML path is set, the version key of
 * src->driver_version lies in [since, until] and its gate holds for the GPU.
 */
bool smi_row_shown(const smi_field_def_t *def, const smi_src_t *src);

/* smi_row_xml / smi_row_label - the `-q -x` path / `-q` label path of @def on driver version key @key (the old
 * names before def->renamed; 0: the newest). */
const char *smi_row_xml(const smi_field_def_t *def, unsigned key);
const char *smi_row_label(const smi_field_def_t *def, unsigned key);

/* smi_field_lookup - the row of a --query-gpu name or alias (exact, case-sensitive), or NULL. */
const smi_field_def_t *smi_field_lookup(const char *name);

/* smi_field_by_id - the row of @id (every id has one), or NULL for an id out of range. */
const smi_field_def_t *smi_field_by_id(smi_field_id_t id);

/*
 * smi_field_get - the value of field @id for @src into *v (zeroed first;
 * v->str may point into v, so keep v where it is while using it).  A block
 * row, or an id without a row, reads as NVML_ERROR_UNKNOWN.
 */
void smi_field_get(smi_field_id_t id, const smi_src_t *src, smi_value_t *v);

/* smi_field_read - the same for a row. */
void smi_field_read(const smi_field_def_t *def, const smi_src_t *src, smi_value_t *v);

/*
 * smi_query_parse - parse a --query-gpu list (@fields, comma separated,
 * blanks around names ignored) and a --format list (@format: `csv` plus
 * optional `noheader`, `nounits`; NULL when --format was not given).
 * On success fills *q (release with smi_query_free()).  On failure returns
 * the error kind and, for BAD_FIELD / BAD_FORMAT, *bad receives the
 * offending token as a heap string (caller frees); *q is untouched.
 */
smi_parse_error_t smi_query_parse(const char *fields, const char *format, smi_query_t *q, char **bad);

/*
 * smi_next_token - the next comma-separated item at *p, blanks trimmed, into
 * *tok (heap); *p moves past its comma, or becomes NULL after the last item.
 * -ENOMEM.
 */
int smi_next_token(const char **p, char **tok);

/*
 * smi_format_parse - the --format list: `csv` plus optional `noheader` (*header false) and
 * `nounits` (*units false); NULL (not given) or a list without csv is SMI_PARSE_NO_FORMAT, an
 * unknown option SMI_PARSE_BAD_FORMAT with *bad (heap) naming it.  For every --query-* view.
 */
smi_parse_error_t smi_format_parse(const char *format, bool *header, bool *units, char **bad);

/* smi_query_free - release what smi_query_parse() allocated; accepts a zeroed query. */
void smi_query_free(smi_query_t *q);

/*
 * smi_unavailable_text - the bracketed text nvidia-smi prints for an NVML
 * failure in a CSV cell: NOT_SUPPORTED "[N/A]", DEPRECATED "[Requested
 * functionality has been deprecated]", NO_PERMISSION "[Insufficient
 * Permissions]", GPU_IS_LOST "[GPU is lost]", anything else "[Unknown
 * Error]".  Static string.
 */
const char *smi_unavailable_text(nvmlReturn_t ret);

/*
 * smi_format_value - one CSV cell for @def and @v, with or without units.
 * Returns a heap string (caller frees) or NULL when out of memory.
 */
char *smi_format_value(const smi_field_def_t *def, const smi_value_t *v, bool units);

/* smi_csv_header - the header line (no newline), e.g. "name, memory.total [MiB]"; heap string or NULL. */
char *smi_csv_header(const smi_query_t *q);

/*
 * smi_csv_row - one row (no newline): the cells of @values (q->n of them,
 * in query order) joined by ", ".  Heap string or NULL when out of memory.
 */
char *smi_csv_row(const smi_query_t *q, const smi_value_t *values);

/*
 * smi_compute_mode_name - the name of an NVML compute mode as the CSV cells
 * and -q / -x show it ("Default", "Exclusive_Thread", "Prohibited",
 * "Exclusive_Process"; "Unknown" for anything else).  Static string.
 */
const char *smi_compute_mode_name(unsigned long long m);

/* smi_is_unavailable_cell - whether a CSV cell is a bracketed "unavailable" value ("[N/A]", "[Unknown Error]"). */
bool smi_is_unavailable_cell(const char *cell);

/* ---- default table (580+ layout: 91 columns, `+---` separators) ---- */

/* Strings for one GPU's three rows; every member is a short display string. */
typedef struct smi_table_gpu {
        unsigned index;
        const char *name;        /* truncated to fit by the renderer */
        const char *persistence; /* "On" / "Off" */
        const char *bus_id;      /* "00000000:8D:00.0" */
        const char *disp_a;      /* "On" / "Off" */
        const char *ecc;         /* "0", "N/A", "On" (MIG) */
        const char *fan;         /* "30%" / "N/A" */
        const char *temp;        /* "39C" / "N/A" */
        const char *perf;        /* "P0" / "N/A" */
        const char *pwr_usage;   /* "104W" / "N/A" */
        const char *pwr_cap;     /* "325W" / "N/A" */
        const char *mem_used;    /* "803MiB" */
        const char *mem_total;   /* "46068MiB" */
        const char *gpu_util;    /* "0%" / "N/A" */
        const char *compute_mode;/* "Default", "E. Process", "Prohibited", "E. Thread" / "N/A" */
        const char *mig_mode;    /* "Disabled" / "Enabled" / "N/A" */
} smi_table_gpu_t;

/* One MIG device row pair of the "MIG devices:" table. */
typedef struct smi_table_mig {
        unsigned gpu, gi, ci, dev;
        const char *mem_used, *mem_total;   /* "26MiB", "40448MiB" */
        const char *bar1_used, *bar1_total; /* "0MiB", "24739MiB" or "N/A" */
        unsigned sm;
        const char *ecc;                    /* "0" / "N/A" */
        unsigned ce, enc, dec, ofa, jpg;
} smi_table_mig_t;

/* One row of the Processes table. */
typedef struct smi_table_process {
        unsigned gpu;
        const char *gi, *ci;     /* "N/A" or the id as text */
        unsigned pid;
        const char *type;        /* "C" */
        const char *name;        /* truncated to fit */
        const char *mem;         /* "794MiB" */
} smi_table_process_t;

/* Header lines: timestamp line, version box and the GPU table's column titles. */
void smi_table_header(FILE *f, const char *timestamp, const char *driver_version, const char *cuda_version);
/* The three lines of one GPU and the separator under them. */
void smi_table_gpu(FILE *f, const smi_table_gpu_t *g);
/* The "MIG devices:" table (nothing when n == 0), followed by an empty line. */
void smi_table_mig(FILE *f, const smi_table_mig_t *m, size_t n);
/* The Processes box ("No running processes found" when n == 0). */
void smi_table_processes(FILE *f, const smi_table_process_t *p, size_t n);

/* ---- -q text and -q -x XML from one set of calls ---- */

struct smi_emit {
        FILE *f;
        bool xml;
        int depth;
        unsigned branch; /* driver branch (smi_driver_branch()); picks the DTD version; 0: the newest */
        const char *const *only; /* NULL, or the top-level `-q -x` names to write (-d): the others are left out */
};

/* Start a document: XML declaration + DOCTYPE + <nvidia_smi_log>, or the "NVSMI LOG" banner. */
void smi_emit_begin(smi_emit_t *e);
/* End it: </nvidia_smi_log> (XML); nothing in text mode, whose GPU blocks end with an empty line. */
void smi_emit_end(smi_emit_t *e);
/* Open a section: <xml> / a label line.  @attr_name/@attr_value add one attribute (XML) or suffix (text); may be NULL. */
void smi_emit_open(smi_emit_t *e, const char *xml, const char *label, const char *attr_name, const char *attr_value);
/* Close the section opened last with this name. */
void smi_emit_close(smi_emit_t *e, const char *xml);
/* A leaf: <xml>value</xml> / "label : value".  Value is escaped for XML. */
void smi_emit_leaf(smi_emit_t *e, const char *xml, const char *label, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* A bare text line inside the current section (XML "None" bodies); nothing in text mode unless @in_text. */
void smi_emit_text(smi_emit_t *e, const char *text, bool in_text);
/* An empty line (after each GPU block, in both modes, as the real output has). */
void smi_emit_blank(smi_emit_t *e);

/*
 * smi_emit_gpu - one GPU's whole `-q` / `-q -x` element from the table of
 * fields: <gpu id="BUS ID"> / "GPU BUS ID", every row with an XML path in
 * table order (sections opened and closed as the paths say, "N/A" for an
 * unavailable value, XML hex without "0x"), then an empty line.
 */
void smi_emit_gpu(smi_emit_t *e, const smi_src_t *src);

/*
 * smi_format_q - the `-q` / `-q -x` text of @v for @def: "N/A" when
 * unavailable, else as smi_format_value() with units, except that XML
 * writes hex without "0x" and SMI_STYLE_CELSIUS gets " C".  Heap string or NULL.
 */
char *smi_format_q(const smi_field_def_t *def, const smi_value_t *v, bool xml);

/* smi_emit_mig_devices - the MIG devices block of smi_emit_gpu() (src->migs); a block row's writer. */
void smi_emit_mig_devices(smi_emit_t *e, const smi_src_t *src);

/* smi_emit_processes - the processes block of smi_emit_gpu() (src->procs); a block row's writer. */
void smi_emit_processes(smi_emit_t *e, const smi_src_t *src);

/*
 * smi_process_name - the name of process @pid as nvidia-smi shows it: NVML's
 * (nvmlSystemGetProcessName, which is what the real tool asks, and what names a
 * mock process of `gpu-validator mock set process=PID:MIB:NAME`), else argv[0]
 * from /proc/PID/cmdline, else "N/A".  Heap string or NULL.
 */
char *smi_process_name(const gv_nvml_t *nvml, unsigned pid);

/* smi_xml_escape - @s with &, <, >, " and ' escaped; heap string or NULL when out of memory. */
char *smi_xml_escape(const char *s);

/*
 * smi_mig_profile_name - the MIG profile name for -L and the tables: the part
 * after " MIG " in an NVML MIG device name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb"
 * -> "1g.5gb"); when the name has none, derived from slice counts and memory
 * ("{ci}c.{gi}g.{gb}gb", GiB rounded up).  Heap string or NULL.
 */
char *smi_mig_profile_name(const char *nvml_name, unsigned gi_slices, unsigned ci_slices,
                           unsigned long long memory_mib);

#endif
