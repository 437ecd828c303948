/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU profiles of the mock NVML library (mock/nvml) and of
 * `gpu-validator mock install`.
 *
 * A profile describes one node: driver facts (driver version, CUDA driver
 * version) and a list of GPUs with everything NVML reports about them (name,
 * UUID, PCI ids, memory, clocks, power, MIG layout, ...), plus optional fault
 * injection.  Profiles are YAML (docs/mock-nvml.md); two schemas are accepted:
 * ours (top-level `driver`, `gpu`, `gpu_count`, `devices`, `faults`) and the
 * one of NVIDIA's nvml-mock in k8s-test-infra (top-level `system`,
 * `device_defaults`, `devices`).
 *
 * Life cycle: load (file, built-in or memory) -> optionally
 * gv_mock_profile_set_gpu_count() / gv_mock_profile_set_node_name() ->
 * gv_mock_profile_finalize() (derives UUIDs, bus ids, minor numbers, MIG
 * UUIDs) -> read the public fields -> gv_mock_profile_free().
 * The fields are public and read-only for users of this header; only the
 * functions here change them.  A profile is not thread-safe; the library
 * guards its copy with its own mutex.
 *
 * Outside facts (NVML enumerations, bus id formats, product names) come from
 * shared/reference/nvml-abi.md and the real captures in
 * shared/cases/nvidia-smi/; numeric NVML values use abi/nvml/nvml-abi.h.
 *
 * Errors follow docs/errors.md: negative errno and a gv_error_t with reason
 * GV_REASON_CONFIG whose message names the file, the line and the field, for
 * example `profile.yaml:12: devices[3].memory_mib: expected an integer`.
 */
#ifndef GV_MOCK_NVML_PROFILE_H
#define GV_MOCK_NVML_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "mock/mock.h"

/* GV_MOCK_MIN_GPUS / GV_MOCK_MAX_GPUS, GV_MOCK_DEFAULT_PROFILE and gv_mock_profile_builtin_names() are in mock/mock.h. */
/* The most MIG devices (GPU instance x compute instance) one GPU can hold. */
#define GV_MOCK_MAX_MIG_DEVICES 8u
/*
 * Largest GPU instance id and compute instance id a profile may give
 * (gi_id/ci_id of a MIG device or a process).  finalize keeps the ids in use
 * as 64-bit sets (1ULL << id), so 63 is the most the shift allows; NVML's
 * ABI takes any unsigned id but 0xFFFFFFFF, which nvmlProcessInfo_t uses
 * for "not on a MIG device" (shared/reference/nvml-abi.md).  Real GPUs
 * stay far below: at most 8 slices give GPU instance ids 0..14 and compute
 * instance ids 0..7.
 */
#define GV_MOCK_MAX_INSTANCE_ID 63u

/*
 * Fields a profile can mark as not supported (value `N/A` in YAML, or listed
 * under `unsupported:`).  The matching NVML calls then return
 * NVML_ERROR_NOT_SUPPORTED.  Used as bits in gv_mock_device_t.unsupported.
 */
typedef enum gv_mock_field {
        GV_MOCK_FIELD_TEMPERATURE = 1u << 0,
        GV_MOCK_FIELD_POWER_USAGE = 1u << 1,
        GV_MOCK_FIELD_POWER_LIMIT = 1u << 2,  /* limit, default, enforced, constraints */
        GV_MOCK_FIELD_CLOCKS = 1u << 3,       /* current and max clocks */
        GV_MOCK_FIELD_UTILIZATION = 1u << 4,
        GV_MOCK_FIELD_FAN = 1u << 5,
        GV_MOCK_FIELD_PERSISTENCE = 1u << 6,
        GV_MOCK_FIELD_COMPUTE_MODE = 1u << 7,
        GV_MOCK_FIELD_ECC = 1u << 8,
        GV_MOCK_FIELD_PSTATE = 1u << 9,
        GV_MOCK_FIELD_SERIAL = 1u << 10,
        GV_MOCK_FIELD_VBIOS = 1u << 11,
        GV_MOCK_FIELD_BOARD_PART_NUMBER = 1u << 12,
        GV_MOCK_FIELD_DISPLAY = 1u << 13,     /* display mode and display active */
        GV_MOCK_FIELD_PROCESSES = 1u << 14,
        GV_MOCK_FIELD_FABRIC = 1u << 15,
        GV_MOCK_FIELD_NVLINK = 1u << 16,
        GV_MOCK_FIELD_MIG = 1u << 17,         /* GPU is not MIG capable */
        GV_MOCK_FIELD_MINOR_NUMBER = 1u << 18,
} gv_mock_field_t;

/* A GPU instance profile the GPU supports (nvmlGpuInstanceProfileInfo_t). */
typedef struct gv_mock_mig_profile {
        char *name;                       /* "1g.5gb" */
        unsigned id;                      /* NVML_GPU_INSTANCE_PROFILE_* (0x0..0x9) */
        unsigned slice_count;             /* GPU slices (1..8) */
        unsigned instance_count;          /* how many of it fit on the GPU */
        unsigned multiprocessor_count;    /* SMs */
        unsigned copy_engine_count;
        unsigned decoder_count;
        unsigned encoder_count;
        unsigned jpeg_count;
        unsigned ofa_count;
        unsigned long long memory_mib;    /* MiB */
} gv_mock_mig_profile_t;

/*
 * One MIG device: a compute instance inside a GPU instance.  Several MIG
 * devices may share a GPU instance (same gi_id, different ci_id), as in
 * `1c.3g.71gb` / `2c.3g.71gb` on an H200.
 */
typedef struct gv_mock_mig_device {
        char *profile;                    /* GPU instance profile name, "2g.10gb"; names a gv_mock_mig_profile_t */
        char *ci_profile;                 /* compute instance profile name ("1c.3g.71gb") or NULL for a full GI */
        char *uuid;                       /* "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; derived by finalize when NULL */
        unsigned gi_id;                   /* GPU instance id */
        unsigned ci_id;                   /* compute instance id within the GI */
        unsigned placement_start;         /* GI placement start slice; derived by finalize */
        unsigned ci_slice_count;          /* compute slices this CI uses; 0 means all of the GI (finalize fills it) */
        unsigned long long memory_mib;    /* MiB; 0 = take from the GI profile (finalize fills it) */
        unsigned multiprocessor_count;    /* SMs; 0 = take from the profile (finalize fills it) */
} gv_mock_mig_device_t;

/* A process shown as running on a GPU (nvmlProcessInfo_t). */
typedef struct gv_mock_process {
        unsigned pid;
        char *name;                       /* may be NULL */
        unsigned long long used_memory_mib; /* MiB */
        unsigned gi_id, ci_id;            /* 0xFFFFFFFF when not on a MIG device */
} gv_mock_process_t;

/* One physical GPU.  Units: MiB, MHz, degrees Celsius, milliwatts, percent. */
typedef struct gv_mock_device {
        unsigned index;                   /* 0-based, order of enumeration */
        char *name;                       /* product name as the driver reports it: "NVIDIA A100-SXM4-40GB" */
        char *uuid;                       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (derived when not given) */
        char *pci_bus_id;                 /* "%08X:%02X:%02X.0" (derived when not given) */
        unsigned pci_domain, pci_bus, pci_device; /* the parts of pci_bus_id */
        unsigned pci_device_id;           /* 16-bit PCI device id, e.g. 0x20B0; nvmlPciInfo_t packs it << 16 | 0x10DE */
        unsigned pci_subsystem_id;        /* 32-bit subsystem id as NVML reports it */
        unsigned minor_number;            /* /dev/nvidiaN; defaults to index */
        char *serial;                     /* board serial */
        char *vbios_version;              /* "92.00.45.00.03" */
        char *board_part_number;          /* "692-2G506-0200-002" */
        char *architecture_name;          /* "ampere", "hopper", ... */
        unsigned architecture;            /* nvmlDeviceArchitecture_t value */
        unsigned brand;                   /* nvmlBrandType_t value */
        int cuda_cc_major, cuda_cc_minor; /* compute capability, 8.0 for A100 */
        unsigned multiprocessor_count;    /* SMs of the full GPU */
        unsigned long long memory_total_mib;    /* MiB */
        unsigned long long memory_reserved_mib; /* MiB, driver reserved (nvmlMemory_v2_t.reserved) */
        unsigned long long memory_used_mib;     /* MiB, used (excluding reserved) */
        unsigned temperature_c;           /* GPU core temperature */
        unsigned power_usage_mw;          /* milliwatts */
        unsigned power_limit_mw;          /* current power management limit, mW */
        unsigned power_default_limit_mw;  /* mW */
        unsigned power_min_limit_mw;      /* mW */
        unsigned power_max_limit_mw;      /* mW */
        unsigned clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz, clock_video_mhz;
        unsigned max_clock_graphics_mhz, max_clock_sm_mhz, max_clock_mem_mhz, max_clock_video_mhz;
        unsigned utilization_gpu, utilization_memory; /* percent */
        unsigned fan_speed;               /* percent (fan is GV_MOCK_FIELD_FAN-unsupported on SXM parts) */
        bool persistence_mode;
        unsigned compute_mode;            /* nvmlComputeMode_t */
        bool ecc_current, ecc_pending;
        unsigned pstate;                  /* 0..15, 32 unknown */
        bool display_mode, display_active;
        unsigned nvlink_count;            /* NVLinks (0..18) */
        bool nvlink_active;               /* state of every link */
        unsigned fabric_state;            /* NVML_GPU_FABRIC_STATE_*; NOT_SUPPORTED (0) on non-fabric parts */
        unsigned fabric_status;           /* nvmlReturn_t of the fabric registration */
        unsigned fabric_clique_id;
        unsigned char fabric_cluster_uuid[16];
        uint32_t unsupported;             /* bits of gv_mock_field_t */
        bool mig_capable;                 /* false: MIG calls return NOT_SUPPORTED */
        unsigned mig_mode_current, mig_mode_pending; /* NVML_DEVICE_MIG_DISABLE / _ENABLE */
        size_t n_mig_profiles;
        gv_mock_mig_profile_t *mig_profiles; /* GPU instance profiles this GPU supports */
        size_t n_mig_devices;
        gv_mock_mig_device_t *mig_devices;   /* the MIG devices in slot order (MIG enabled only) */
        size_t n_processes;
        gv_mock_process_t *processes;
} gv_mock_device_t;

/* A scheduled Xid event (faults.xids). */
typedef struct gv_mock_xid {
        unsigned gpu;                     /* GPU index */
        unsigned long long xid;           /* Xid number, e.g. 79 */
        unsigned after_ms;                /* ms after nvmlInit at which it becomes deliverable */
} gv_mock_xid_t;

/* Fault injection (profile `faults:`; the environment can add to it, see docs/mock-nvml.md). */
typedef struct gv_mock_faults {
        unsigned init_error;              /* nvmlReturn_t that nvmlInit returns; 0 = none */
        uint64_t lost_gpus;               /* bit i: GPU i returns NVML_ERROR_GPU_IS_LOST */
        bool fabric_in_progress;          /* every fabric-capable GPU reports IN_PROGRESS */
        size_t n_xids;
        gv_mock_xid_t *xids;              /* scheduled Xid events */
        char *xid_control_file;           /* file polled by nvmlEventSetWait: lines "<gpu> <xid>"; NULL = none */
} gv_mock_faults_t;

/* A whole node. */
typedef struct gv_mock_profile {
        char *source;                     /* file path or "builtin:<name>", used in messages */
        char *name;                       /* profile name ("a100-sxm4-40gb"), may be NULL */
        char *node_name;                  /* node name used to derive UUIDs; may be NULL before finalize */
        char *driver_version;             /* "550.163.01" */
        char *nvml_version;               /* "12.550.163.01" */
        int cuda_driver_version;          /* 12040 style: major * 1000 + minor * 10 */
        unsigned device_count;            /* number of entries in devices (1..64) */
        gv_mock_device_t *devices;
        gv_mock_device_t *device_template; /* the defaults new GPUs are copied from (set_gpu_count) */
        gv_mock_faults_t faults;
        bool finalized;
} gv_mock_profile_t;

/*
 * gv_mock_profile_load_file - read and validate a profile from a YAML file.
 * @path: file to read (either schema, see above).
 * @out: receives the new profile (caller owns it; free with gv_mock_profile_free()).
 * Errors: -ENOENT/-EACCES/... (GV_REASON_IO) when the file cannot be read;
 * -EINVAL (GV_REASON_CONFIG) for broken YAML, a missing required field, a wrong
 * type or an out-of-range value, with "<path>:<line>: <field>: <problem>".
 * The profile is not finalized yet.
 */
int gv_mock_profile_load_file(const char *path, gv_mock_profile_t **out, gv_error_t **err);

/*
 * gv_mock_profile_load_memory - as gv_mock_profile_load_file() on @len bytes
 * of YAML at @text; @source names it in messages (e.g. "fuzz-input").
 */
int gv_mock_profile_load_memory(const char *source, const char *text, size_t len, gv_mock_profile_t **out,
                                gv_error_t **err);

/*
 * gv_mock_profile_load_builtin - load a built-in profile by name or alias
 * (`a100` = a100-sxm4-40gb, `h100` = h100-sxm5-80gb).  Errors: -ENOENT with
 * GV_REASON_CONFIG for an unknown name (the message lists the known names).
 */
int gv_mock_profile_load_builtin(const char *name, gv_mock_profile_t **out, gv_error_t **err);

/*
 * gv_mock_profile_is_path - whether @name (a --profile value) names a file
 * rather than a built-in profile: it holds a '/' or ends in .yaml, .yml or
 * .json (what `mock profiles --json` writes is a profile too).
 */
bool gv_mock_profile_is_path(const char *name);

/*
 * gv_mock_profile_builtin_yaml - the YAML text of a built-in profile (name
 * or alias), static and NUL-terminated, or NULL when unknown.  Suitable for
 * copying into a mock root as is.
 */
const char *gv_mock_profile_builtin_yaml(const char *name);

/*
 * gv_mock_profile_set_gpu_count - set the number of GPUs to @n (1..64).
 * Devices past @n are dropped; new ones are copies of the profile's device
 * template with derived identity.  Clears `finalized`.
 * Errors: -ERANGE (GV_REASON_CONFIG) when @n is out of range.
 */
int gv_mock_profile_set_gpu_count(gv_mock_profile_t *p, unsigned n, gv_error_t **err);

/*
 * gv_mock_profile_keep_gpus - keep only the GPUs whose bit is set in @keep
 * (bit i: the GPU at index i), in their order, renumbered from 0: what a
 * container that was given only some GPUs' device nodes enumerates.  Their
 * identity (UUID, bus id, minor number) stays; `faults.lost_gpus` and
 * `faults.xids` follow their GPUs (Xids of dropped GPUs are dropped).  For a
 * finalized profile; @keep must name at least one GPU.
 * Errors: -EINVAL (GV_REASON_INTERNAL) for a NULL profile or an empty @keep.
 */
int gv_mock_profile_keep_gpus(gv_mock_profile_t *p, uint64_t keep, gv_error_t **err);

/*
 * gv_mock_profile_keep_mig_devices - keep only the MIG devices of GPU @gpu
 * whose bit is set in @keep (bit k: mig_devices[k]), in their order: what a
 * container given some MIG devices' capability nodes enumerates.  None kept
 * leaves the GPU in MIG mode without instances.
 * Errors: -EINVAL (GV_REASON_INTERNAL) for a NULL profile or a GPU out of range.
 */
int gv_mock_profile_keep_mig_devices(gv_mock_profile_t *p, unsigned gpu, uint64_t keep, gv_error_t **err);

/*
 * gv_mock_profile_set_node_name - set the node name from which UUIDs are
 * derived (copied).  NULL or "" leaves it to finalize (gethostname()).
 * Clears `finalized`.  Errors: -ENOMEM (GV_REASON_INTERNAL).
 */
int gv_mock_profile_set_node_name(gv_mock_profile_t *p, const char *node_name, gv_error_t **err);

/*
 * gv_mock_profile_finalize - fill what the profile left out and check the
 * result: indexes, node name (gethostname() when unset), GPU UUIDs derived
 * deterministically from node name + index (FNV-1a based, formatted
 * GPU-8-4-4-4-12 hex), PCI bus ids ("%08X:%02X:%02X.0", bus 0x07.. by index
 * unless given), minor numbers, MIG placement, MIG UUIDs (MIG-..., from the
 * GPU UUID + GI + CI), per-MIG memory and SMs from the GI profile.
 * Errors: -EINVAL (GV_REASON_CONFIG) for duplicated UUIDs or bus ids, a MIG
 * device naming an unknown GI profile, more slices than the GPU has.
 * Idempotent once it has succeeded.
 */
int gv_mock_profile_finalize(gv_mock_profile_t *p, gv_error_t **err);

/*
 * gv_mock_profile_to_yaml - write the profile in our own schema as a YAML
 * document (*out: heap string, caller frees).  The profile must be finalized,
 * so UUIDs, bus ids, gpu count and node name are written explicitly and a
 * reload gives the same node.  Errors: -EINVAL (GV_REASON_CONFIG) when not
 * finalized, -ENOMEM (GV_REASON_INTERNAL).
 */
int gv_mock_profile_to_yaml(const gv_mock_profile_t *p, char **out, gv_error_t **err);

/* gv_mock_profile_free - free *p and set it to NULL; accepts NULL and an empty slot. */
void gv_mock_profile_free(gv_mock_profile_t **p);

/*
 * gv_mock_parse_return_name - parse an NVML return code given by name
 * ("driver-not-loaded", "NVML_ERROR_NO_PERMISSION", "lib_rm_version_mismatch",
 * "none") or number ("9") into *out.  Returns 0, or -EINVAL for anything
 * else (*out untouched).  Used for faults.init_error and MOCK_NVML_INIT_ERROR.
 */
int gv_mock_parse_return_name(const char *s, unsigned *out);

/* gv_mock_profile_device - the device at @index, or NULL when out of range. */
const gv_mock_device_t *gv_mock_profile_device(const gv_mock_profile_t *p, unsigned index);

#endif
