/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subset of the NVML ABI that gpu-validator uses and that its mock
 * library implements.  Our own declarations, written from the facts in
 * shared/reference/nvml-abi.md (NVML API version 13, x86-64 sizes) and
 * NVIDIA's public nvml.h; no NVIDIA header is included or copied.
 *
 * One list, GV_NVML_FUNCTIONS, names every entry point with its parameter
 * list.  The NVML loader (abi/nvml/nvml-loader.h) turns it into a typed dlopen
 * symbol table; the mock library (mock/nvml) turns it into prototypes that
 * its definitions must match, so the two can never drift apart.
 */
#ifndef GV_NVML_ABI_H
#define GV_NVML_ABI_H

#include <assert.h>
#include <stddef.h>

/* ---- return codes (nvml-abi.md "nvmlReturn_t") ---- */
typedef enum nvmlReturn_enum {
        NVML_SUCCESS = 0,
        NVML_ERROR_UNINITIALIZED = 1,
        NVML_ERROR_INVALID_ARGUMENT = 2,
        NVML_ERROR_NOT_SUPPORTED = 3,
        NVML_ERROR_NO_PERMISSION = 4,
        NVML_ERROR_ALREADY_INITIALIZED = 5,
        NVML_ERROR_NOT_FOUND = 6,
        NVML_ERROR_INSUFFICIENT_SIZE = 7,
        NVML_ERROR_INSUFFICIENT_POWER = 8,
        NVML_ERROR_DRIVER_NOT_LOADED = 9,
        NVML_ERROR_TIMEOUT = 10,
        NVML_ERROR_IRQ_ISSUE = 11,
        NVML_ERROR_LIBRARY_NOT_FOUND = 12,
        NVML_ERROR_FUNCTION_NOT_FOUND = 13,
        NVML_ERROR_CORRUPTED_INFOROM = 14,
        NVML_ERROR_GPU_IS_LOST = 15,
        NVML_ERROR_RESET_REQUIRED = 16,
        NVML_ERROR_OPERATING_SYSTEM = 17,
        NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
        NVML_ERROR_IN_USE = 19,
        NVML_ERROR_MEMORY = 20,
        NVML_ERROR_NO_DATA = 21,
        NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
        NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
        NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
        NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
        NVML_ERROR_DEPRECATED = 26,
        NVML_ERROR_NOT_READY = 27,
        NVML_ERROR_GPU_NOT_FOUND = 28,
        NVML_ERROR_INVALID_STATE = 29,
        NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
        NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* ---- opaque handles ---- */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* ---- buffer sizes (nvml-abi.md "Buffer sizes") ---- */
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE 16
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_DEVICE_PART_NUMBER_BUFFER_SIZE 80
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_NVLINK_MAX_LINKS 36 /* nvml.h API 13; 18 in headers before 570 */

/* ---- enumerations (nvml-abi.md "Enumerations", nvml.h) ---- */
typedef enum nvmlEnableState_enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1
#define NVML_INIT_FLAG_NO_GPUS 1
#define NVML_INIT_FLAG_NO_ATTACH 2

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_RUBIN 13
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

typedef enum nvmlBrandType_enum {
        NVML_BRAND_UNKNOWN = 0,
        NVML_BRAND_QUADRO = 1,
        NVML_BRAND_TESLA = 2,
        NVML_BRAND_NVS = 3,
        NVML_BRAND_GRID = 4,
        NVML_BRAND_GEFORCE = 5,
        NVML_BRAND_TITAN = 6,
        NVML_BRAND_NVIDIA_VAPPS = 7,
        NVML_BRAND_NVIDIA_VPC = 8,
        NVML_BRAND_NVIDIA_VCS = 9,
        NVML_BRAND_NVIDIA_VWS = 10,
        NVML_BRAND_NVIDIA_CLOUD_GAMING = 11,
        NVML_BRAND_QUADRO_RTX = 12,
        NVML_BRAND_NVIDIA_RTX = 13,
        NVML_BRAND_NVIDIA = 14,
        NVML_BRAND_GEFORCE_RTX = 15,
        NVML_BRAND_TITAN_RTX = 16
} nvmlBrandType_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
        NVML_CLOCK_GRAPHICS = 0,
        NVML_CLOCK_SM = 1,
        NVML_CLOCK_MEM = 2,
        NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlComputeMode_enum {
        NVML_COMPUTEMODE_DEFAULT = 0,
        NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
        NVML_COMPUTEMODE_PROHIBITED = 2,
        NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
} nvmlComputeMode_t;

/* Performance state P0..P15; 32 is unknown. */
typedef enum nvmlPStates_enum { NVML_PSTATE_0 = 0, NVML_PSTATE_15 = 15, NVML_PSTATE_UNKNOWN = 32 } nvmlPstates_t;

typedef enum nvmlGpuTopologyLevel_enum {
        NVML_TOPOLOGY_INTERNAL = 0,
        NVML_TOPOLOGY_SINGLE = 10,
        NVML_TOPOLOGY_MULTIPLE = 20,
        NVML_TOPOLOGY_HOSTBRIDGE = 30,
        NVML_TOPOLOGY_NODE = 40,
        NVML_TOPOLOGY_SYSTEM = 50
} nvmlGpuTopologyLevel_t;

/* Fabric state is an unsigned char in nvml.h. */
typedef unsigned char nvmlGpuFabricState_t;
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

/* Event types (bit mask). eventData carries the Xid for XidCriticalError. */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypePState 0x0000000000000004ULL
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
#define nvmlEventTypeClock 0x0000000000000010ULL
#define nvmlEventTypePowerSourceChange 0x0000000000000080ULL
#define nvmlEventMigConfigChange 0x0000000000000100ULL
#define nvmlEventTypeNone 0x0000000000000000ULL

/* GPU instance profiles (nvml.h NVML_GPU_INSTANCE_PROFILE_*). */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX 0xA
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX 0xB
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX 0xC
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME 0xD
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME 0xE
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME 0xF
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME 0x10
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE_GFX 0x11
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x12

/* Compute instance profiles (nvml.h NVML_COMPUTE_INSTANCE_PROFILE_*). */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL 0x8
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x9
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0

/* nvmlTemperatureThresholds_t */
#define NVML_TEMPERATURE_THRESHOLD_SHUTDOWN 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1
#define NVML_TEMPERATURE_THRESHOLD_MEM_MAX 2
#define NVML_TEMPERATURE_THRESHOLD_GPU_MAX 3
#define NVML_TEMPERATURE_THRESHOLD_COUNT 8
typedef unsigned int nvmlTemperatureThresholds_t;

/* nvmlPcieUtilCounter_t */
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
typedef unsigned int nvmlPcieUtilCounter_t;

/* Clock event (throttle) reasons, a bit mask (nvml.h nvmlClocksEventReason*). */
#define nvmlClocksEventReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksEventReasonNone 0x0000000000000000ULL
/* The reasons a Volta or later datacenter GPU reports as supported (0x1FF in real captures). */
#define GV_NVML_CLOCKS_EVENT_REASONS_SUPPORTED 0x00000000000001FFULL

/* nvmlClockId_t */
#define NVML_CLOCK_ID_CURRENT 0
#define NVML_CLOCK_ID_APP_CLOCK_TARGET 1
#define NVML_CLOCK_ID_APP_CLOCK_DEFAULT 2
#define NVML_CLOCK_ID_CUSTOMER_BOOST_MAX 3
typedef unsigned int nvmlClockId_t;

/* nvmlInforomObject_t */
#define NVML_INFOROM_OEM 0
#define NVML_INFOROM_ECC 1
#define NVML_INFOROM_POWER 2
#define NVML_INFOROM_DEN 3
typedef unsigned int nvmlInforomObject_t;

/* nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlMemoryLocation_t (COUNT: 8 locations, 0..7) */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_MEMORY_LOCATION_COUNT 8
typedef unsigned int nvmlMemoryErrorType_t;
typedef unsigned int nvmlEccCounterType_t;
typedef unsigned int nvmlMemoryLocation_t;

/* nvmlPageRetirementCause_t, nvmlPerfPolicyType_t (COUNT 8), nvmlBusType_t, nvmlGpuVirtualizationMode_t */
#define NVML_PAGE_RETIREMENT_CAUSE_COUNT 2
#define NVML_PERF_POLICY_COUNT 8
#define NVML_BUS_TYPE_PCIE 2
#define NVML_GPU_VIRTUALIZATION_MODE_NONE 0
typedef unsigned int nvmlPageRetirementCause_t;
typedef unsigned int nvmlPerfPolicyType_t;
typedef unsigned int nvmlBusType_t;
typedef unsigned int nvmlGpuVirtualizationMode_t;

/* PCIe link max speed (NVML_PCIE_LINK_MAX_SPEED_*): gen 1..6 are 1..6 (2500 .. 64000 MB/s). */
#define NVML_PCIE_LINK_MAX_SPEED_INVALID 0

/* Power scopes of nvmlFieldValue_t.scopeId for the power fields. */
#define NVML_POWER_SCOPE_GPU 0U

/* Field ids (nvml.h NVML_FI_DEV_*) the mock answers in nvmlDeviceGetFieldValues. */
#define NVML_FI_DEV_ECC_CURRENT 1
#define NVML_FI_DEV_ECC_PENDING 2
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5
#define NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6
#define NVML_FI_DEV_RETIRED_SBE 29
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_RETIRED_PENDING 31
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define NVML_FI_DEV_REMAPPED_COR 142
#define NVML_FI_DEV_REMAPPED_UNC 143
#define NVML_FI_DEV_REMAPPED_PENDING 144
#define NVML_FI_DEV_REMAPPED_FAILURE 145
#define NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT 193 /* T.Limit temperatures (signed int, C): shutdown, */
#define NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT 194 /* HW slowdown, */
#define NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT 195  /* SW slowdown for memory temperature, */
#define NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT 196  /* throttling below base clock */
#define NVML_FI_DEV_RESET_STATUS 226                  /* deprecated by NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: reset required */
#define NVML_FI_DEV_DRAIN_AND_RESET_STATUS 227        /* deprecated likewise: drain and reset recommended */
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230       /* NVML_GPU_RECOVERY_ACTION_* */
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN 270       /* ns throttled by HW thermal slowdown */
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN 271 /* ns throttled by the external power brake */
#define NVML_FI_DEV_REMAPPED_ROWS_COR_INACTIVE 301 /* inactive row remappings for correctable errors */
#define NVML_FI_DEV_REMAPPED_ROWS_UNC_INACTIVE 302 /* inactive row remappings for uncorrectable errors */
#define NVML_FI_DEV_POWER_AVERAGE 185
#define NVML_FI_DEV_POWER_INSTANT 186
#define NVML_FI_DEV_ENERGY 191

/* nvmlValueType_t */
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_INT 5
typedef unsigned int nvmlValueType_t;

/* nvmlNvLinkCapability_t (COUNT 6), nvmlNvLinkErrorCounter_t (COUNT 5) */
#define NVML_NVLINK_CAP_P2P_SUPPORTED 0
#define NVML_NVLINK_CAP_SYSMEM_ACCESS 1
#define NVML_NVLINK_CAP_P2P_ATOMICS 2
#define NVML_NVLINK_CAP_SYSMEM_ATOMICS 3
#define NVML_NVLINK_CAP_SLI_BRIDGE 4
#define NVML_NVLINK_CAP_VALID 5
#define NVML_NVLINK_CAP_COUNT 6
#define NVML_NVLINK_ERROR_COUNT 5
typedef unsigned int nvmlNvLinkCapability_t;
typedef unsigned int nvmlNvLinkErrorCounter_t;

/* nvmlAffinityScope_t */
#define NVML_AFFINITY_SCOPE_NODE 0
#define NVML_AFFINITY_SCOPE_SOCKET 1
typedef unsigned int nvmlAffinityScope_t;

/* Types the mock only passes around (it writes no entry of them). */
typedef struct nvmlEncoderSessionInfo_st nvmlEncoderSessionInfo_t;
typedef struct nvmlFBCSessionInfo_st nvmlFBCSessionInfo_t;

/* ---- structures (nvml-abi.md "Structures", x86-64) ---- */
typedef struct nvmlPciInfo_st {
        char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "%04X:%02X:%02X.0" */
        unsigned int domain;
        unsigned int bus;
        unsigned int device;
        unsigned int pciDeviceId;    /* device id << 16 | vendor 0x10DE */
        unsigned int pciSubSystemId;
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];          /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
        unsigned long long total; /* bytes */
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
        unsigned int version; /* nvmlMemory_v2 */
        unsigned long long total;
        unsigned long long reserved;
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 0x02000028u

typedef struct nvmlUtilization_st {
        unsigned int gpu;    /* percent */
        unsigned int memory; /* percent */
} nvmlUtilization_t;

typedef struct nvmlProcessInfo_st {
        unsigned int pid;
        unsigned long long usedGpuMemory; /* bytes */
        unsigned int gpuInstanceId;
        unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* The legacy process entry: what the plain (unversioned) process queries write. */
typedef struct nvmlProcessInfo_v1_st {
        unsigned int pid;
        unsigned long long usedGpuMemory; /* bytes */
} nvmlProcessInfo_v1_t;
typedef nvmlProcessInfo_t nvmlProcessInfo_v2_t;

typedef struct nvmlBAR1Memory_st {
        unsigned long long bar1Total; /* bytes */
        unsigned long long bar1Free;
        unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlViolationTime_st {
        unsigned long long referenceTime; /* CPU timestamp, microseconds */
        unsigned long long violationTime; /* nanoseconds */
} nvmlViolationTime_t;

typedef struct nvmlRowRemapperHistogramValues_st {
        unsigned int max, high, partial, low, none; /* banks by remaining remapping availability */
} nvmlRowRemapperHistogramValues_t;

typedef struct nvmlFBCStats_st {
        unsigned int sessionsCount;
        unsigned int averageFPS;
        unsigned int averageLatency; /* microseconds */
} nvmlFBCStats_t;

typedef union nvmlValue_st {
        double dVal;
        int siVal;
        unsigned int uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        signed long long sllVal;
        unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
        unsigned int fieldId;  /* NVML_FI_* (in) */
        unsigned int scopeId;  /* link or power scope (in) */
        long long timestamp;   /* microseconds since 1970 */
        long long latencyUsec;
        nvmlValueType_t valueType;
        nvmlReturn_t nvmlReturn;
        nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct nvmlEventData_st {
        nvmlDevice_t device;
        unsigned long long eventType;
        unsigned long long eventData;
        unsigned int gpuInstanceId;
        unsigned int computeInstanceId;
} nvmlEventData_t;

typedef struct nvmlDeviceAttributes_st {
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
        unsigned int gpuInstanceSliceCount;
        unsigned int computeInstanceSliceCount;
        unsigned long long memorySizeMB; /* MiB */
} nvmlDeviceAttributes_t;

typedef struct nvmlGpuInstancePlacement_st {
        unsigned int start;
        unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
        unsigned int id;
        unsigned int isP2pSupported;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB; /* MiB */
} nvmlGpuInstanceProfileInfo_t;

/* Versioned GPU instance profile info (nvmlDeviceGetGpuInstanceProfileInfoV): v2 and v3 are both 152 bytes. */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
        unsigned int version;
        unsigned int id;
        unsigned int isP2pSupported;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;

typedef struct nvmlGpuInstanceProfileInfo_v3_st {
        unsigned int version;
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        unsigned int capabilities;
} nvmlGpuInstanceProfileInfo_v3_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_v2_st {
        unsigned int version;
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlComputeInstanceProfileInfo_v2_t;

typedef struct nvmlComputeInstanceProfileInfo_v3_st {
        unsigned int version;
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        unsigned int capabilities;
} nvmlComputeInstanceProfileInfo_v3_t;

typedef struct nvmlGpuInstanceInfo_st {
        nvmlDevice_t device;
        unsigned int id;
        unsigned int profileId;
        nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
        unsigned int start;
        unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceInfo_st {
        nvmlDevice_t device;
        nvmlGpuInstance_t gpuInstance;
        unsigned int id;
        unsigned int profileId;
        nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

typedef struct nvmlGpuFabricInfo_st {
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status;
        unsigned int cliqueId;
        nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;

/* Versioned fabric info; nvmlGpuFabricInfoV_t callers set .version to one of these. */
typedef struct nvmlGpuFabricInfo_v2_st {
        unsigned int version;
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status;
        unsigned int cliqueId;
        nvmlGpuFabricState_t state;
        unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;

typedef struct nvmlGpuFabricInfo_v3_st {
        unsigned int version;
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status;
        unsigned int cliqueId;
        nvmlGpuFabricState_t state;
        unsigned int healthMask;
        unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
typedef nvmlGpuFabricInfo_v3_t nvmlGpuFabricInfoV_t;

/* NVML_STRUCT_VERSION(name, ver) = sizeof(struct) | ver << 24 (nvml.h). */
#define GV_NVML_STRUCT_VERSION(type, ver) ((unsigned int) (sizeof(type) | ((unsigned int) (ver) << 24U)))
#define nvmlGpuFabricInfo_v2 GV_NVML_STRUCT_VERSION(nvmlGpuFabricInfo_v2_t, 2)

/* nvmlTemperature_v1_t (nvml.h): nvmlDeviceGetTemperatureV's argument; the caller sets version and sensorType. */
typedef struct nvmlTemperature_v1_st {
        unsigned int version;                /* nvmlTemperature_v1 */
        nvmlTemperatureSensors_t sensorType; /* NVML_TEMPERATURE_GPU */
        int temperature;                     /* degrees C */
} nvmlTemperature_v1_t;
typedef nvmlTemperature_v1_t nvmlTemperature_t;
#define nvmlTemperature_v1 GV_NVML_STRUCT_VERSION(nvmlTemperature_v1_t, 1)

/* nvmlPciInfoExt_v1_t (nvml.h): nvmlDeviceGetPciInfoExt's argument, nvmlPciInfo_t plus the PCI class codes. */
typedef struct nvmlPciInfoExt_v1_st {
        unsigned int version;        /* nvmlPciInfoExt_v1 */
        unsigned int domain, bus, device;
        unsigned int pciDeviceId;    /* device id << 16 | vendor id */
        unsigned int pciSubSystemId;
        unsigned int baseClass;      /* 8-bit PCI base class code (0x03 display controller) */
        unsigned int subClass;       /* 8-bit PCI sub class code (0x02 3D controller) */
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfoExt_v1_t;
typedef nvmlPciInfoExt_v1_t nvmlPciInfoExt_t;
#define nvmlPciInfoExt_v1 GV_NVML_STRUCT_VERSION(nvmlPciInfoExt_v1_t, 1)

/* nvmlC2cModeInfo_v1_t (nvml.h): nvmlDeviceGetC2cModeInfoV's argument (no version member). */
typedef struct nvmlC2cModeInfo_v1_st {
        unsigned int isC2cEnabled;
} nvmlC2cModeInfo_v1_t;

/* nvmlDeviceAddressingModeType_t and nvmlDeviceAddressingMode_v1_t (nvml.h): nvmlDeviceGetAddressingMode. */
#define NVML_DEVICE_ADDRESSING_MODE_NONE 0
#define NVML_DEVICE_ADDRESSING_MODE_HMM 1
#define NVML_DEVICE_ADDRESSING_MODE_ATS 2
typedef struct nvmlDeviceAddressingMode_v1_st {
        unsigned int version; /* nvmlDeviceAddressingMode_v1 */
        unsigned int value;   /* NVML_DEVICE_ADDRESSING_MODE_* */
} nvmlDeviceAddressingMode_v1_t;
typedef nvmlDeviceAddressingMode_v1_t nvmlDeviceAddressingMode_t;
#define nvmlDeviceAddressingMode_v1 GV_NVML_STRUCT_VERSION(nvmlDeviceAddressingMode_v1_t, 1)

/* nvmlPdi_v1_t (nvml.h): nvmlDeviceGetPdi's argument, the GPU's 64-bit PDI. */
typedef struct nvmlPdi_v1_st {
        unsigned int version;     /* nvmlPdi_v1 */
        unsigned long long value;
} nvmlPdi_v1_t;
typedef nvmlPdi_v1_t nvmlPdi_t;
#define nvmlPdi_v1 GV_NVML_STRUCT_VERSION(nvmlPdi_v1_t, 1)

/* nvmlMarginTemperature_v1_t (nvml.h): nvmlDeviceGetMarginTemperature's argument, the distance in C to the
 * nearest slowdown threshold (nvidia-smi's "GPU T.Limit Temp"). */
typedef struct nvmlMarginTemperature_v1_st {
        unsigned int version; /* nvmlMarginTemperature_v1 */
        int marginTemperature;
} nvmlMarginTemperature_v1_t;
typedef nvmlMarginTemperature_v1_t nvmlMarginTemperature_t;
#define nvmlMarginTemperature_v1 GV_NVML_STRUCT_VERSION(nvmlMarginTemperature_v1_t, 1)

/* nvmlDeviceGpuRecoveryAction_t (nvml.h): NVML_FI_DEV_GET_GPU_RECOVERY_ACTION's values. */
#define NVML_GPU_RECOVERY_ACTION_NONE 0
#define NVML_GPU_RECOVERY_ACTION_GPU_RESET 1
#define NVML_GPU_RECOVERY_ACTION_NODE_REBOOT 2
#define NVML_GPU_RECOVERY_ACTION_DRAIN_P2P 3
#define NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET 4

/* nvmlEccSramErrorStatus_v1_t (nvml.h): nvmlDeviceGetSramEccErrorStatus's argument, SRAM ECC error counts. */
typedef struct nvmlEccSramErrorStatus_v1_st {
        unsigned int version; /* nvmlEccSramErrorStatus_v1 */
        unsigned long long aggregateUncParity, aggregateUncSecDed, aggregateCor;
        unsigned long long volatileUncParity, volatileUncSecDed, volatileCor;
        unsigned long long aggregateUncBucketL2, aggregateUncBucketSm, aggregateUncBucketPcie, aggregateUncBucketMcu,
                aggregateUncBucketOther;
        unsigned int bThresholdExceeded; /* the field diagnostics' error threshold is exceeded */
} nvmlEccSramErrorStatus_v1_t;
typedef nvmlEccSramErrorStatus_v1_t nvmlEccSramErrorStatus_t;
#define nvmlEccSramErrorStatus_v1 GV_NVML_STRUCT_VERSION(nvmlEccSramErrorStatus_v1_t, 1)

/* nvmlRepairStatus_v1_t (nvml.h): nvmlDeviceGetRepairStatus's argument. */
typedef struct nvmlRepairStatus_v1_st {
        unsigned int version; /* nvmlRepairStatus_v1 */
        unsigned int bChannelRepairPending;
        unsigned int bTpcRepairPending;
} nvmlRepairStatus_v1_t;
typedef nvmlRepairStatus_v1_t nvmlRepairStatus_t;
#define nvmlRepairStatus_v1 GV_NVML_STRUCT_VERSION(nvmlRepairStatus_v1_t, 1)

/* nvmlUnrepairableMemoryStatus_v1_t (nvml.h): nvmlDeviceGetUnrepairableMemoryFlag_v1's argument (no version member). */
typedef struct nvmlUnrepairableMemoryStatus_v1_st {
        unsigned int bUnrepairableMemory;
} nvmlUnrepairableMemoryStatus_v1_t;

/* nvmlDeviceCapabilities_v1_t (nvml.h): nvmlDeviceGetCapabilities's argument, a mask of NVML_DEV_CAP_*. */
#define NVML_DEV_CAP_EGM (1U << 0) /* extended GPU memory */
typedef struct nvmlDeviceCapabilities_v1_st {
        unsigned int version; /* nvmlDeviceCapabilities_v1 */
        unsigned int capMask;
} nvmlDeviceCapabilities_v1_t;
typedef nvmlDeviceCapabilities_v1_t nvmlDeviceCapabilities_t;
#define nvmlDeviceCapabilities_v1 GV_NVML_STRUCT_VERSION(nvmlDeviceCapabilities_v1_t, 1)

/* NVML_GSP_FIRMWARE_VERSION_BUF_SIZE (nvml.h): nvmlDeviceGetGspFirmwareVersion's buffer. */
#define NVML_GSP_FIRMWARE_VERSION_BUF_SIZE 0x40

/* nvmlProcessUtilizationSample_t (nvml.h): one process's utilisation, nvmlDeviceGetProcessUtilization. */
typedef struct nvmlProcessUtilizationSample_st {
        unsigned int pid;
        unsigned long long timeStamp; /* CPU timestamp of the sample, microseconds */
        unsigned int smUtil;          /* SM (3D/compute), percent */
        unsigned int memUtil;         /* frame buffer memory, percent */
        unsigned int encUtil;         /* encoder, percent */
        unsigned int decUtil;         /* decoder, percent */
} nvmlProcessUtilizationSample_t;
#define nvmlGpuFabricInfo_v3 GV_NVML_STRUCT_VERSION(nvmlGpuFabricInfo_v3_t, 3)
#define nvmlGpuInstanceProfileInfo_v2 GV_NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2)
#define nvmlGpuInstanceProfileInfo_v3 GV_NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v3_t, 3)
#define nvmlComputeInstanceProfileInfo_v2 GV_NVML_STRUCT_VERSION(nvmlComputeInstanceProfileInfo_v2_t, 2)
#define nvmlComputeInstanceProfileInfo_v3 GV_NVML_STRUCT_VERSION(nvmlComputeInstanceProfileInfo_v3_t, 3)

/* Sizes from nvml-abi.md, checked at compile time on LP64. */
#if defined(__x86_64__) || defined(__aarch64__)
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t v3 is 68 bytes");
static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t is 24 bytes");
static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes");
static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t is 8 bytes");
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t v2 is 24 bytes");
static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t is 32 bytes");
static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t is 40 bytes");
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "nvmlGpuInstanceProfileInfo_t is 48 bytes");
static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "nvmlGpuInstanceInfo_t is 24 bytes");
static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "nvmlComputeInstanceInfo_t is 32 bytes");
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28, "nvmlGpuFabricInfo_t is 28 bytes");
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "nvmlGpuFabricInfo_v2_t is 36 bytes");
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t is 16 bytes");
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t is 24 bytes");
static_assert(sizeof(nvmlBAR1Memory_t) == 24, "nvmlBAR1Memory_t is 24 bytes");
static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152, "nvmlGpuInstanceProfileInfo_v2_t is 152 bytes");
static_assert(sizeof(nvmlGpuInstanceProfileInfo_v3_t) == 152, "nvmlGpuInstanceProfileInfo_v3_t is 152 bytes");
static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "nvmlComputeInstanceProfileInfo_t is 36 bytes");
static_assert(sizeof(nvmlComputeInstanceProfileInfo_v2_t) == 136, "nvmlComputeInstanceProfileInfo_v2_t is 136 bytes");
static_assert(sizeof(nvmlComputeInstanceProfileInfo_v3_t) == 140, "nvmlComputeInstanceProfileInfo_v3_t is 140 bytes");
static_assert(nvmlGpuInstanceProfileInfo_v2 == 0x02000098u, "nvmlGpuInstanceProfileInfo_v2 version word (nvml.h)");
static_assert(nvmlComputeInstanceProfileInfo_v2 == 0x02000088u, "nvmlComputeInstanceProfileInfo_v2 version word (nvml.h)");
static_assert(nvmlComputeInstanceProfileInfo_v3 == 0x0300008Cu, "nvmlComputeInstanceProfileInfo_v3 version word (nvml.h)");
static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t is 16 bytes");
static_assert(sizeof(nvmlRowRemapperHistogramValues_t) == 20, "nvmlRowRemapperHistogramValues_t is 20 bytes");
static_assert(sizeof(nvmlFBCStats_t) == 12, "nvmlFBCStats_t is 12 bytes");
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t is 40 bytes");
static_assert(nvmlMemory_v2 == GV_NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2), "nvmlMemory_v2 version word");
static_assert(sizeof(nvmlTemperature_v1_t) == 12, "nvmlTemperature_v1_t is 12 bytes");
static_assert(nvmlTemperature_v1 == 0x0100000Cu, "nvmlTemperature_v1 version word (nvml.h)");
static_assert(sizeof(nvmlPciInfoExt_v1_t) == 64, "nvmlPciInfoExt_v1_t is 64 bytes");
static_assert(nvmlPciInfoExt_v1 == 0x01000040u, "nvmlPciInfoExt_v1 version word (nvml.h)");
static_assert(nvmlDeviceAddressingMode_v1 == 0x01000008u, "nvmlDeviceAddressingMode_v1 version word (nvml.h)");
static_assert(sizeof(nvmlPdi_v1_t) == 16, "nvmlPdi_v1_t is 16 bytes (8-byte aligned value)");
static_assert(nvmlPdi_v1 == 0x01000010u, "nvmlPdi_v1 version word (nvml.h)");
static_assert(nvmlMarginTemperature_v1 == 0x01000008u, "nvmlMarginTemperature_v1 version word (nvml.h)");
static_assert(sizeof(nvmlEccSramErrorStatus_v1_t) == 104, "nvmlEccSramErrorStatus_v1_t is 104 bytes");
static_assert(nvmlEccSramErrorStatus_v1 == 0x01000068u, "nvmlEccSramErrorStatus_v1 version word (nvml.h)");
static_assert(nvmlRepairStatus_v1 == 0x0100000Cu, "nvmlRepairStatus_v1 version word (nvml.h)");
static_assert(nvmlDeviceCapabilities_v1 == 0x01000008u, "nvmlDeviceCapabilities_v1 version word (nvml.h)");
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t is 32 bytes");
#endif

/*
 * Every entry point: X(name, parameter list).  All return nvmlReturn_t;
 * nvmlErrorString is declared on its own below.  Versioned names are the
 * canonical ones; GV_NVML_ALIASES lists the plain names that the mock
 * exports as the same function (nvml-abi.md "Library").
 */
#define GV_NVML_FUNCTIONS(X)                                                                              \
        X(nvmlInit_v2, (void))                                                                            \
        X(nvmlInitWithFlags, (unsigned int flags))                                                        \
        X(nvmlShutdown, (void))                                                                           \
        X(nvmlSystemGetDriverVersion, (char *version, unsigned int length))                               \
        X(nvmlSystemGetNVMLVersion, (char *version, unsigned int length))                                 \
        X(nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion))                                       \
        X(nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion))                                    \
        X(nvmlDeviceGetCount_v2, (unsigned int *deviceCount))                                             \
        X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device))                      \
        X(nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *device))                            \
        X(nvmlDeviceGetHandleByPciBusId_v2, (const char *pciBusId, nvmlDevice_t *device))                 \
        X(nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length))                      \
        X(nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length))                      \
        X(nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int *index))                                 \
        X(nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber))                     \
        X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci))                             \
        X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory))                           \
        X(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t device, nvmlMemory_v2_t *memory))                     \
        X(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor))              \
        X(nvmlDeviceGetArchitecture, (nvmlDevice_t device, nvmlDeviceArchitecture_t *arch))               \
        X(nvmlDeviceGetBrand, (nvmlDevice_t device, nvmlBrandType_t *type))                               \
        X(nvmlDeviceGetSerial, (nvmlDevice_t device, char *serial, unsigned int length))                  \
        X(nvmlDeviceGetVbiosVersion, (nvmlDevice_t device, char *version, unsigned int length))           \
        X(nvmlDeviceGetBoardPartNumber, (nvmlDevice_t device, char *partNumber, unsigned int length))     \
        X(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)) \
        X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count))                     \
        X(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)) \
        X(nvmlDeviceIsMigDeviceHandle, (nvmlDevice_t device, unsigned int *isMigDevice))                  \
        X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, (nvmlDevice_t migDevice, nvmlDevice_t *device))   \
        X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id))                            \
        X(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id))                        \
        X(nvmlDeviceGetAttributes_v2, (nvmlDevice_t device, nvmlDeviceAttributes_t *attributes))          \
        X(nvmlDeviceGetGpuInstanceProfileInfo, (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info)) \
        X(nvmlDeviceGetGpuInstanceById, (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance)) \
        X(nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info))         \
        X(nvmlGpuInstanceGetComputeInstanceById, (nvmlGpuInstance_t gpuInstance, unsigned int id, nvmlComputeInstance_t *computeInstance)) \
        X(nvmlComputeInstanceGetInfo_v2, (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info)) \
        X(nvmlDeviceGetGpuFabricInfo, (nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo))          \
        X(nvmlDeviceGetGpuFabricInfoV, (nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo))        \
        X(nvmlDeviceGetTopologyCommonAncestor, (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t *pathInfo)) \
        X(nvmlDeviceGetNvLinkState, (nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)) \
        X(nvmlDeviceGetNvLinkRemotePciInfo_v2, (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)) \
        X(nvmlEventSetCreate, (nvmlEventSet_t *set))                                                      \
        X(nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t device, unsigned long long *eventTypes))        \
        X(nvmlDeviceRegisterEvents, (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)) \
        X(nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms))       \
        X(nvmlEventSetFree, (nvmlEventSet_t set))                                                         \
        X(nvmlDeviceGetTemperature, (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)) \
        X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *power))                            \
        X(nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int *limit))                  \
        X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t device, unsigned int *defaultLimit))    \
        X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int *limit))                    \
        X(nvmlDeviceGetPowerManagementLimitConstraints, (nvmlDevice_t device, unsigned int *minLimit, unsigned int *maxLimit)) \
        X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock))       \
        X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock))    \
        X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t *utilization))          \
        X(nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int *speed))                              \
        X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t device, nvmlEnableState_t *mode))                   \
        X(nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t *mode))                       \
        X(nvmlDeviceGetEccMode, (nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)) \
        X(nvmlDeviceGetPerformanceState, (nvmlDevice_t device, nvmlPstates_t *pState))                    \
        X(nvmlDeviceGetDisplayMode, (nvmlDevice_t device, nvmlEnableState_t *display))                    \
        X(nvmlDeviceGetDisplayActive, (nvmlDevice_t device, nvmlEnableState_t *isActive))                 \
        X(nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))

/*
 * Plain (unversioned) names exported by the mock as the same function as the
 * versioned one: X(plain, versioned).  nvml-abi.md "Library".
 */
#define GV_NVML_ALIASES(X)                                                       \
        X(nvmlInit, nvmlInit_v2)                                                 \
        X(nvmlDeviceGetCount, nvmlDeviceGetCount_v2)                             \
        X(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2)             \
        X(nvmlDeviceGetPciInfo, nvmlDeviceGetPciInfo_v3)                         \
        X(nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo_v3)                      \
        X(nvmlEventSetWait, nvmlEventSetWait_v2)                                 \
        X(nvmlDeviceGetAttributes, nvmlDeviceGetAttributes_v2)                   \
        X(nvmlComputeInstanceGetInfo, nvmlComputeInstanceGetInfo_v2)             \
        X(nvmlDeviceGetHandleByPciBusId, nvmlDeviceGetHandleByPciBusId_v2)       \
        X(nvmlDeviceGetNvLinkRemotePciInfo, nvmlDeviceGetNvLinkRemotePciInfo_v2)

/*
 * Entry points the mock models beyond what gpu-validator's loader resolves
 * (the loader requires every GV_NVML_FUNCTIONS member, so functions real
 * drivers of the supported range may lack stay out of that list).  The
 * mock's export list and stubs: mock/nvml/nvml-api.txt.
 */
#define GV_NVML_MOCK_FUNCTIONS(X)                                                                         \
        X(nvmlDeviceGetComputeRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
        X(nvmlDeviceGetGraphicsRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
        X(nvmlDeviceGetGraphicsRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)) \
        X(nvmlDeviceGetMPSComputeRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
        X(nvmlDeviceGetMPSComputeRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)) \
        X(nvmlDeviceGetBAR1MemoryInfo, (nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory))              \
        X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int *maxLinkGen))            \
        X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int *maxLinkGenDevice))   \
        X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t device, unsigned int *maxLinkWidth))               \
        X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t device, unsigned int *currLinkGen))          \
        X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t device, unsigned int *currLinkWidth))             \
        X(nvmlDeviceGetPcieThroughput, (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)) \
        X(nvmlDeviceGetTemperatureThreshold, (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int *temp)) \
        X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t device, unsigned long long *clocksEventReasons)) \
        X(nvmlDeviceGetSupportedClocksEventReasons, (nvmlDevice_t device, unsigned long long *supportedClocksEventReasons)) \
        X(nvmlDeviceGetApplicationsClock, (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)) \
        X(nvmlDeviceGetDefaultApplicationsClock, (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)) \
        X(nvmlDeviceGetEncoderUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
        X(nvmlDeviceGetDecoderUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
        X(nvmlDeviceGetPowerState, (nvmlDevice_t device, nvmlPstates_t *pState))                          \
        X(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t device, unsigned long long *energy))         \
        X(nvmlDeviceGetNumGpuCores, (nvmlDevice_t device, unsigned int *numCores))                        \
        X(nvmlDeviceGetGpuInstanceProfileInfoV, (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *info)) \
        X(nvmlGpuInstanceGetComputeInstanceProfileInfo, (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile, nvmlComputeInstanceProfileInfo_t *info)) \
        X(nvmlGpuInstanceGetComputeInstanceProfileInfoV, (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile, nvmlComputeInstanceProfileInfo_v2_t *info)) \
        X(nvmlDeviceGetNvLinkVersion, (nvmlDevice_t device, unsigned int link, unsigned int *version))     \
        X(nvmlDeviceGetClock, (nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId, unsigned int *clockMHz)) \
        X(nvmlDeviceGetMaxCustomerBoostClock, (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)) \
        X(nvmlDeviceGetSupportedMemoryClocks, (nvmlDevice_t device, unsigned int *count, unsigned int *clocksMHz)) \
        X(nvmlDeviceGetSupportedGraphicsClocks, (nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int *count, unsigned int *clocksMHz)) \
        X(nvmlDeviceGetTotalEccErrors, (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType, unsigned long long *eccCounts)) \
        X(nvmlDeviceGetMemoryErrorCounter, (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType, unsigned long long *count)) \
        X(nvmlDeviceGetRetiredPages, (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount, unsigned long long *addresses)) \
        X(nvmlDeviceGetRetiredPages_v2, (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount, unsigned long long *addresses, unsigned long long *timestamps)) \
        X(nvmlDeviceGetRetiredPagesPendingStatus, (nvmlDevice_t device, nvmlEnableState_t *isPending))    \
        X(nvmlDeviceGetRemappedRows, (nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows, unsigned int *isPending, unsigned int *failureOccurred)) \
        X(nvmlDeviceGetRowRemapperHistogram, (nvmlDevice_t device, nvmlRowRemapperHistogramValues_t *values)) \
        X(nvmlDeviceGetInforomVersion, (nvmlDevice_t device, nvmlInforomObject_t object, char *version, unsigned int length)) \
        X(nvmlDeviceGetInforomImageVersion, (nvmlDevice_t device, char *version, unsigned int length))    \
        X(nvmlDeviceGetEncoderStats, (nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps, unsigned int *averageLatency)) \
        X(nvmlDeviceGetEncoderSessions, (nvmlDevice_t device, unsigned int *sessionCount, nvmlEncoderSessionInfo_t *sessionInfos)) \
        X(nvmlDeviceGetFBCStats, (nvmlDevice_t device, nvmlFBCStats_t *fbcStats))                         \
        X(nvmlDeviceGetFBCSessions, (nvmlDevice_t device, unsigned int *sessionCount, nvmlFBCSessionInfo_t *sessionInfo)) \
        X(nvmlDeviceGetAccountingMode, (nvmlDevice_t device, nvmlEnableState_t *mode))                    \
        X(nvmlDeviceGetPowerManagementMode, (nvmlDevice_t device, nvmlEnableState_t *mode))               \
        X(nvmlDeviceGetViolationStatus, (nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType, nvmlViolationTime_t *violTime)) \
        X(nvmlDeviceGetVirtualizationMode, (nvmlDevice_t device, nvmlGpuVirtualizationMode_t *pVirtualMode)) \
        X(nvmlDeviceGetMemoryBusWidth, (nvmlDevice_t device, unsigned int *busWidth))                     \
        X(nvmlDeviceGetPcieLinkMaxSpeed, (nvmlDevice_t device, unsigned int *maxSpeed))                   \
        X(nvmlDeviceGetBusType, (nvmlDevice_t device, nvmlBusType_t *type))                               \
        X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int *value))                     \
        X(nvmlDeviceGetMultiGpuBoard, (nvmlDevice_t device, unsigned int *multiGpuBool))                  \
        X(nvmlDeviceGetNumaNodeId, (nvmlDevice_t device, unsigned int *node))                             \
        X(nvmlDeviceGetTopologyNearestGpus, (nvmlDevice_t device, nvmlGpuTopologyLevel_t level, unsigned int *count, nvmlDevice_t *deviceArray)) \
        X(nvmlDeviceGetFieldValues, (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values))     \
        X(nvmlDeviceGetDefaultEccMode, (nvmlDevice_t device, nvmlEnableState_t *defaultMode))             \
        X(nvmlDeviceGetBoardId, (nvmlDevice_t device, unsigned int *boardId))                             \
        X(nvmlDeviceGetPcieSpeed, (nvmlDevice_t device, unsigned int *pcieSpeed))                         \
        X(nvmlDeviceGetNvLinkCapability, (nvmlDevice_t device, unsigned int link, nvmlNvLinkCapability_t capability, unsigned int *capResult)) \
        X(nvmlDeviceGetNvLinkErrorCounter, (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter, unsigned long long *counterValue)) \
        X(nvmlDeviceGetGpuInstances, (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances, unsigned int *count)) \
        X(nvmlGpuInstanceGetComputeInstances, (nvmlGpuInstance_t gpuInstance, unsigned int profileId, nvmlComputeInstance_t *computeInstances, unsigned int *count)) \
        X(nvmlDeviceGetCpuAffinity, (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet)) \
        X(nvmlDeviceGetCpuAffinityWithinScope, (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet, nvmlAffinityScope_t scope)) \
        X(nvmlDeviceGetMemoryAffinity, (nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet, nvmlAffinityScope_t scope)) \
        X(nvmlDeviceGetTemperatureV, (nvmlDevice_t device, nvmlTemperature_t *temperature))                \
        X(nvmlDeviceGetProcessUtilization, (nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization, unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp)) \
        X(nvmlDeviceGetAccountingBufferSize, (nvmlDevice_t device, unsigned int *bufferSize))              \
        X(nvmlDeviceGetJpgUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
        X(nvmlDeviceGetOfaUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
        X(nvmlDeviceGetIrqNum, (nvmlDevice_t device, unsigned int *irqNum))                                \
        X(nvmlDeviceGetSupportedPerformanceStates, (nvmlDevice_t device, nvmlPstates_t *pstates, unsigned int size)) \
        X(nvmlDeviceGetInforomConfigurationChecksum, (nvmlDevice_t device, unsigned int *checksum)) \
        X(nvmlDeviceGetGspFirmwareVersion, (nvmlDevice_t device, char *version))                         \
        X(nvmlDeviceGetModuleId, (nvmlDevice_t device, unsigned int *moduleId))                           \
        X(nvmlDeviceGetPciInfoExt, (nvmlDevice_t device, nvmlPciInfoExt_t *pci))                          \
        X(nvmlDeviceGetAddressingMode, (nvmlDevice_t device, nvmlDeviceAddressingMode_t *mode))           \
        X(nvmlDeviceGetC2cModeInfoV, (nvmlDevice_t device, nvmlC2cModeInfo_v1_t *c2cModeInfo))            \
        X(nvmlDeviceGetPdi, (nvmlDevice_t device, nvmlPdi_t *pdi))                                        \
        X(nvmlDeviceGetMarginTemperature, (nvmlDevice_t device, nvmlMarginTemperature_t *marginTempInfo)) \
        X(nvmlDeviceGetConfComputeProtectedMemoryUsage, (nvmlDevice_t device, nvmlMemory_t *memory))    \
        X(nvmlDeviceGetSramEccErrorStatus, (nvmlDevice_t device, nvmlEccSramErrorStatus_t *status))       \
        X(nvmlDeviceGetRepairStatus, (nvmlDevice_t device, nvmlRepairStatus_t *repairStatus))             \
        X(nvmlDeviceGetUnrepairableMemoryFlag_v1, (nvmlDevice_t device, nvmlUnrepairableMemoryStatus_v1_t *unrepairableMemoryStatus)) \
        X(nvmlDeviceGetCapabilities, (nvmlDevice_t device, nvmlDeviceCapabilities_t *caps))              \
        X(nvmlSystemGetProcessName, (unsigned int pid, char *name, unsigned int length))

/* Plain and older versioned names the mock exports as the same function: X(name, implementation). */
#define GV_NVML_MOCK_ALIASES(X)                                                                           \
        X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3)               \
        X(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlDeviceGetGraphicsRunningProcesses_v3)             \
        X(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlDeviceGetMPSComputeRunningProcesses_v3)         \
        X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlDeviceGetCurrentClocksEventReasons)              \
        X(nvmlDeviceGetSupportedClocksThrottleReasons, nvmlDeviceGetSupportedClocksEventReasons)

/* Function-pointer types: nvmlInit_v2_fn and so on. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): 'params' is a parameter list */
#define GV_NVML_DECLARE_FN_TYPE(name, params) typedef nvmlReturn_t (*name##_fn) params;
GV_NVML_FUNCTIONS(GV_NVML_DECLARE_FN_TYPE)
GV_NVML_MOCK_FUNCTIONS(GV_NVML_DECLARE_FN_TYPE)
#undef GV_NVML_DECLARE_FN_TYPE
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);

#endif
