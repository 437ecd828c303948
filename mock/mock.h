/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock's public header: the ONLY mock header the product (src/)
 * includes.  The mock GPU backend (mock/nvml: the GPU profiles and the mock
 * libnvidia-ml.so.1; mock/smi: nvidia-smi; mock/cuda: libcuda.so.1) shares
 * only the NVML ABI contract (abi/nvml) with the product; what the product
 * needs from the mock is declared here: laying out and removing mock driver
 * roots (mock/root), reading a root's manifest, and the profile list and
 * views of `gpu-validator mock profiles`.
 *
 * Mock driver roots: a folder laid out like a driver installation (the mock
 * libnvidia-ml.so.<version> with its links, nvidia-smi, the finalized GPU
 * profile beside the library, /proc/driver/nvidia/version, /proc/devices,
 * MIG capabilities, /dev nodes, sys/bus/pci/devices files, an ld.so.cache and
 * a CDI spec), so that every component of gpu-validator, and any other tool
 * that dlopen()s NVML or runs nvidia-smi under a driver root, can be
 * exercised without a GPU; with a workload (gv_mock_workload_t) also the
 * sysfs and driver-container files of a container, vm-passthrough or vm-vgpu
 * node and its GPUDirect options (mock/root/workload.c).  Layout and
 * manifest: docs/mock-driver-root.md.
 *
 * Everything install creates is listed in a manifest at
 * <root>/.gpu-validator-mock.json, written first as an intent record
 * ("state": "installing", everything planned) and last as the final list;
 * remove deletes exactly those entries (and nothing that changed type
 * since), then the folders install created.  An install killed at any point
 * is finished by the next install or undone by remove.
 *
 * Nothing here prints, reads the environment or exits: the CLI
 * (`gpu-validator mock`, src/cli/cmd-mock.c) and `gpu-validator run --mock`
 * call these functions and report the result.  Errors follow docs/errors.md.
 *
 * Outside facts: /proc/driver/nvidia/version format from
 * shared/cases/nvidia-smi/proc__*.txt; device numbers 195:N, 195:255, 195:254
 * (modeset) from the NVIDIA driver's registered character major; the MIG
 * capability minors, mig-minors and capability file formats from NVIDIA's MIG
 * user guide ("Device Nodes and Capabilities"); ld.so.cache from glibc's
 * format (mock/root/ldcache.h); the CDI layout from
 * shared/cases/nvidia-smi/cdi__nvidia-ctk-cdi-generate_*.yaml.
 */
#ifndef GV_MOCK_MOCK_H
#define GV_MOCK_MOCK_H

#include <stdbool.h>

#include "base/error.h"

/* ---- GPU profiles (mock/nvml/profile.h holds the model itself) ---- */

/* GPU count bounds of a profile and of `--gpus` (mock install, run --mock). */
#define GV_MOCK_MAX_GPUS 64u
#define GV_MOCK_MIN_GPUS 1u
/* The profile `mock install` and `run --mock` use when none is given. */
#define GV_MOCK_DEFAULT_PROFILE "a100-sxm4-40gb"

/* gv_mock_profile_builtin_names - NULL-terminated static list of built-in profile names (no aliases). */
const char *const *gv_mock_profile_builtin_names(void);

/* What gv_mock_profile_view() writes. */
typedef enum gv_mock_profile_view {
        GV_MOCK_PROFILE_VIEW_JSON = 0, /* the finalized profile in its own schema, as JSON (loads back) */
        GV_MOCK_PROFILE_VIEW_REPORT,   /* what NVML will report, flat, in NVML units (not a profile) */
} gv_mock_profile_view_t;

/*
 * gv_mock_profile_view - load the profile @name (built-in name/alias, or a
 * YAML/JSON file: see gv_mock_profile_is_path() in mock/nvml/profile.h),
 * apply @gpus (0 keeps the profile's) and @node_name (NULL keeps it),
 * finalize it and write it as @view: pretty JSON text ending in a newline.
 * @text: receives the heap text, owned by the caller.
 * Errors: those of the profile loader (-EINVAL / GV_REASON_CONFIG
 * "<file>:<line>: <field>: <problem>"; an unreadable file is reported as
 * GV_REASON_CONFIG too); -ENOMEM.
 */
int gv_mock_profile_view(const char *name, unsigned gpus, const char *node_name, gv_mock_profile_view_t view,
                         char **text, gv_error_t **err);

/* ---- mock driver roots (mock/root) ---- */

/* File name of the manifest in the root. */
#define GV_MOCK_MANIFEST_NAME ".gpu-validator-mock.json"
/* File name of the CDI spec in the CDI folder. */
#define GV_MOCK_CDI_SPEC_NAME "nvidia-mock.yaml"
/*
 * File name of the finalized profile beside the mock library
 * (<root>/usr/lib64/<this>); the mock library reads it from the folder it was
 * loaded from (docs/mock-nvml.md).
 */
#define GV_MOCK_ROOT_PROFILE_NAME "nvml-mock.yaml"
/* Character device numbers: the NVIDIA driver's fixed major 195 (nvidiaN = 195:N, nvidiactl = 195:255). */
#define GV_MOCK_NVIDIA_MAJOR 195u
#define GV_MOCK_NVIDIACTL_MINOR 255u
/*
 * nvidia-uvm's major is allocated dynamically by the kernel on a real host
 * (often 23x-51x); the mock uses this fixed one (uvm = :0, uvm-tools = :1).
 */
#define GV_MOCK_UVM_MAJOR 235u
/* nvidia-modeset is 195:254 on a real host. */
#define GV_MOCK_MODESET_MINOR 254u
/*
 * nvidia-caps' major is dynamic too (listed in /proc/devices as
 * "nvidia-caps"); the mock uses this one and writes it to <root>/proc/devices.
 */
#define GV_MOCK_CAPS_MAJOR 236u

/* How /dev nodes are made. */
typedef enum gv_mock_nodes {
        GV_MOCK_NODES_DEFAULT = 0, /* CHAR when running as root, else FILES */
        GV_MOCK_NODES_CHAR,        /* mknod() character devices */
        GV_MOCK_NODES_FILES,       /* empty regular files */
} gv_mock_nodes_t;

/* gv_mock_nodes_name - "char", "files" or "default"; static string. */
const char *gv_mock_nodes_name(gv_mock_nodes_t kind);

/* Paths of the built artifacts that install copies (heap strings). */
typedef struct gv_mock_artifacts {
        char *nvml_lib;   /* the mock libnvidia-ml.so.1 */
        char *nvidia_smi; /* our nvidia-smi */
} gv_mock_artifacts_t;

/*
 * gv_mock_locate_artifacts - find the mock library and nvidia-smi to copy.
 * Tries, in order: @override_dir (the CLI passes $GPU_VALIDATOR_MOCK_DIR;
 * NULL to skip) holding libnvidia-ml.so.1 and nvidia-smi; the build tree
 * (<exe_dir>/../../mock/nvml/libnvidia-ml.so.1 and
 * <exe_dir>/../../mock/smi/nvidia-smi, for build/src/cli/gpu-validator);
 * the installed layout <exe_dir>/../lib/gpu-validator/.
 * @out: filled on success; release with gv_mock_artifacts_clear().
 * Errors: -ENOENT (GV_REASON_CONFIG) listing every place tried.
 */
int gv_mock_locate_artifacts(const char *exe_dir, const char *override_dir, gv_mock_artifacts_t *out,
                             gv_error_t **err);

/* gv_mock_artifacts_clear - free the strings of @a and zero it. */
void gv_mock_artifacts_clear(gv_mock_artifacts_t *a);

/*
 * The kind of node a mock root imitates beyond the driver files
 * (`mock install --workload`, docs/mock-driver-root.md "Workloads"): which
 * driver the GPUs' PCI functions are bound to, which kernel modules are
 * loaded (<root>/sys/module), vGPU parents and devices, and the driver
 * container's flags.  NONE lays out nothing of it (the root stays as it
 * always was).  The names are upstream's workload configs (the node label
 * nvidia.com/gpu.workload.config).
 */
typedef enum gv_mock_workload {
        GV_MOCK_WORKLOAD_NONE = 0,
        GV_MOCK_WORKLOAD_CONTAINER,      /* GPUs bound to nvidia, the driver container's .driver-ctr-ready */
        GV_MOCK_WORKLOAD_VM_PASSTHROUGH, /* GPUs bound to vfio-pci */
        GV_MOCK_WORKLOAD_VM_VGPU,        /* GPUs bound to nvidia with the vGPU manager, in one of two shapes */
} gv_mock_workload_t;

/* The two shapes of a vm-vgpu node (gpu-operator #2365, #2594). */
typedef enum gv_mock_vgpu_shape {
        GV_MOCK_VGPU_MDEV = 0, /* mdev types on each GPU, the GPU an mdev parent, one mdev device per GPU */
        GV_MOCK_VGPU_SRIOV,    /* GV_MOCK_SRIOV_VFS VFs per GPU, all enabled, the first with a vGPU type */
} gv_mock_vgpu_shape_t;

/* SR-IOV VFs laid out per GPU in the sriov shape (sriov_totalvfs = sriov_numvfs = this). */
#define GV_MOCK_SRIOV_VFS 4u

/* gv_mock_workload_name - "container", "vm-passthrough", "vm-vgpu" or "none"; static string. */
const char *gv_mock_workload_name(gv_mock_workload_t w);

/* gv_mock_workload_parse - @s as a workload name (not "none") into *out: 0, or -EINVAL. */
int gv_mock_workload_parse(const char *s, gv_mock_workload_t *out);

/* What to install.  Strings are borrowed for the duration of the call. */
typedef struct gv_mock_install_opts {
        const char *root;          /* the driver root to lay out (created when missing) */
        const char *profile;       /* built-in name/alias, or a YAML file (contains '/' or ends .yaml/.yml); NULL = default */
        unsigned gpus;             /* GPU count override, 1..64; 0 keeps the profile's */
        const char *node_name;     /* node name for UUID derivation; NULL keeps the profile's / hostname */
        const char *cdi_dir;       /* where the CDI spec goes; NULL = <root>/etc/cdi */
        gv_mock_nodes_t device_nodes;
        const char *nvml_lib;      /* file to copy as the library (see gv_mock_locate_artifacts()) */
        const char *nvidia_smi;    /* file to copy as usr/bin/nvidia-smi */
        /*
         * The node kind (NONE: none) and its options; docs/mock-driver-root.md
         * "Workloads".  gds / gdrcopy / rdma need the container workload (NONE
         * becomes it); vgpu_shape SRIOV needs vm-vgpu; cc goes with any.
         */
        gv_mock_workload_t workload;
        gv_mock_vgpu_shape_t vgpu_shape;
        bool gds;                  /* GPUDirect Storage: module nvidia_fs, GDS_ENABLED: true */
        bool gdrcopy;              /* GDRCopy: module gdrdrv, GDRCOPY_ENABLED: true */
        bool rdma;                 /* GPUDirect RDMA: a Mellanox NIC, mlx5_core, nvidia_peermem, MOFED's flag */
        bool cc;                   /* the cc-manager container's flag .cc-manager-ctr-ready */
        /* NULL-terminated kernel module names left out of <root>/sys/module (a flag set, its module absent); NULL = none */
        const char *const *omit_modules;
        /*
         * The validator may create /dev/char/MAJ:MIN links to this root's character devices
         * (recorded in the manifest as "dev_char_links"); without it a driver check on the root
         * creates none: on a real GPU host they would repoint the real nodes' links at the mock.
         */
        bool dev_char_links;
        /*
         * Tests only (crash tests kill the process there); NULL normally:
         * called with 1, 2, ... before each change install makes to the
         * filesystem (a folder, a file, a link, a node, a manifest write, a
         * removal).
         */
        void (*step_hook)(void *data, unsigned step);
        void *step_data;
} gv_mock_install_opts_t;

/* What install did.  Heap strings, released by gv_mock_install_result_clear(). */
typedef struct gv_mock_install_result {
        char *root;                /* absolute root path */
        char *cdi_spec;            /* absolute path of the CDI spec */
        char *manifest;            /* absolute path of the manifest */
        char *profile_name;        /* profile name ("a100-sxm4-40gb"), or its source when unnamed */
        char *driver_version;      /* "550.163.01" */
        char *node_name;           /* node name the UUIDs derive from */
        unsigned gpu_count;
        gv_mock_nodes_t device_nodes;  /* CHAR or FILES: what was made */
        bool device_nodes_fallback;    /* CHAR was asked but mknod() was refused; files were made */
        char *fallback_reason;         /* strerror() text of that refusal, or NULL */
        bool updated;              /* the root already was a mock root (re-install / update) */
        bool recovered;            /* the root held an unfinished install (killed); this one finished it */
        unsigned entries;          /* files, links, nodes and folders now listed in the manifest */
        char *workload;            /* what --workload and its flags laid out ("vm-vgpu/sriov", "container+gds"), or NULL */
} gv_mock_install_result_t;

/* gv_mock_install_result_clear - free the strings of @r and zero it. */
void gv_mock_install_result_clear(gv_mock_install_result_t *r);

/*
 * gv_mock_install - lay out a mock driver root (see the file comment).
 * Idempotent: with the same options it rewrites the same files; with other
 * options it updates the root and removes what the old manifest listed and
 * the new layout no longer has.  Files are written atomically
 * (gv_atomic_write_at()).  The manifest is written first as an intent record
 * (a new root is renamed into place with it), so a root left by a killed
 * install is finished by the next call (result.recovered) or removed by
 * gv_mock_remove().  On failure what this call created is removed again and
 * the previous manifest put back.
 * Errors: -EINVAL (GV_REASON_CONFIG) bad options or a bad profile (message
 * "<file>:<line>: <field>: <problem>" from the profile loader); -ENOTEMPTY
 * (GV_REASON_CONFIG) when @root is a non-empty folder without a manifest;
 * -ENOTDIR (GV_REASON_CONFIG) when it is not a folder; I/O errors (GV_REASON_IO).
 * @out: filled on success only.
 */
int gv_mock_install(const gv_mock_install_opts_t *opts, gv_mock_install_result_t *out, gv_error_t **err);

/*
 * gv_mock_remove - remove what the manifest in @root lists: files, links
 * and nodes whose type still matches (anything else is left alone and
 * counted in *kept), then the folders install created, deepest first, when
 * empty, then the manifest, and the root itself when install created it.
 * Entries that leave the root are refused unless they are the recorded CDI
 * spec or one of its folders.  An unfinished root (intent record) is removed
 * the same way, with the temporary files of interrupted writes; with no
 * manifest, a staging folder or manifest temporary files a killed install
 * left are removed (success).  @removed / @kept may be NULL.
 * Errors: -ENOENT (GV_REASON_CONFIG) when @root holds no manifest; -EINVAL
 * (GV_REASON_CONFIG) for an unreadable manifest; I/O errors (GV_REASON_IO).
 */
int gv_mock_remove(const char *root, unsigned *removed, unsigned *kept, gv_error_t **err);

/*
 * gv_mock_manifest_probe - the driver component's view of @root's manifest
 * (<root>/GV_MOCK_MANIFEST_NAME): whether it is there, and whether it says
 * "device_nodes": "files" (*files_ok; then plain files stand in for
 * /dev/nvidia* nodes), and whether install was asked for /dev/char links
 * ("dev_char_links": true, *dev_char_links).  Any JSON object counts as a manifest (an unfinished
 * install too), so that a root gpu-validator laid out is never taken for a
 * real driver.  Returns 1 when present, 0 when absent.
 * Errors: -errno (GV_REASON_CONFIG, "mock manifest: ...") when it cannot be
 * read or is over 64 KiB; -EINVAL (GV_REASON_CONFIG) when it is not a JSON
 * object or its "device_nodes" is neither "char" nor "files"; -ENOMEM.
 */
int gv_mock_manifest_probe(const char *root, bool *files_ok, bool *dev_char_links, gv_error_t **err);

/*
 * gv_mock_remove_dev_char_links - remove every symbolic link directly in @dir (a /dev/char
 * folder) whose target lies under the mock root @root (as written: "<root>/..."), that is the
 * links a driver check made into it; other links and files stay.  *removed (may be NULL) counts
 * them.  A missing @dir is no error.  Errors: -errno with GV_REASON_IO naming @dir or the link.
 */
int gv_mock_remove_dev_char_links(const char *root, const char *dir, unsigned *removed, gv_error_t **err);

/* What gv_mock_root_detect() found. */
typedef struct gv_mock_root_info {
        bool is_mock;              /* a readable manifest is there */
        gv_mock_nodes_t device_nodes; /* CHAR or FILES (DEFAULT when not a mock root) */
        unsigned gpu_count;
        char driver_version[64];   /* "" when unknown */
        char profile[128];         /* "" when unknown */
} gv_mock_root_info_t;

/*
 * gv_mock_root_detect - whether @root is a mock root made by gv_mock_install(),
 * and what kind of device nodes it holds (the driver component accepts plain
 * files for /dev/nvidia* only under a mock root with device_nodes "files").
 * Always fills *info (zeroed when not a mock root).  Returns info->is_mock.
 */
bool gv_mock_root_detect(const char *root, gv_mock_root_info_t *info);

/* ---- runtime changes of a mock root (mock/nvml/mock-set.c, `gpu-validator mock set`) ---- */

/*
 * Files beside the profile (<root>/usr/lib64/<name>) that the mock library
 * watches while it is loaded: the runtime state (an overlay on the profile,
 * replaced atomically) and the Xid control file (lines "<gpu> <xid>", appended).
 */
#define GV_MOCK_ROOT_STATE_NAME "nvml-mock.state"
#define GV_MOCK_ROOT_XID_NAME "nvml-mock.xid"

/* What to change.  Strings are borrowed for the duration of the call. */
typedef struct gv_mock_set_opts {
        const char *root;              /* the mock driver root (made by gv_mock_install()) */
        const char *gpu;               /* "all" (or NULL), a GPU index or a GPU UUID */
        const char *const *settings;   /* "KEY=VALUE" each (docs/mock-nvml.md, Faults: runtime changes) */
        size_t n_settings;
        bool clear;                    /* first drop the runtime changes of the selected GPUs */
        bool seeded;                   /* draw the faults' amounts from @seed (else fixed amounts) */
        unsigned long long seed;
} gv_mock_set_opts_t;

/* What gv_mock_set() did.  Heap string, released by gv_mock_set_result_clear(). */
typedef struct gv_mock_set_result {
        char *state_file;              /* absolute path of the state file */
        unsigned gpus;                 /* GPUs selected */
        unsigned xids;                 /* Xid events appended to the Xid control file */
        bool removed;                  /* no change is left: the state file was removed */
} gv_mock_set_result_t;

/* gv_mock_set_result_clear - free the strings of @r and zero it. */
void gv_mock_set_result_clear(gv_mock_set_result_t *r);

/*
 * gv_mock_set - change the runtime state of the GPUs of a mock root while
 * clients keep its libnvidia-ml.so.1 loaded: reads the root's profile and
 * state file, applies --clear and the settings (KEY=VALUE, or fault=NAME:
 * ecc-burst, fell-off-the-bus, thermal-slowdown, power-slowdown, nvlink-down)
 * to the selected GPUs, appends the faults' Xid events to the Xid control
 * file and replaces the state file atomically (under an flock of the
 * library folder, so concurrent calls do not lose each other's changes).
 * Nothing is written when any setting is refused.
 * Errors: -EINVAL (GV_REASON_CONFIG) for a bad selection, key or value (the
 * message names them) or a root without a profile; -errno (GV_REASON_IO)
 * when a file cannot be read or written.
 */
int gv_mock_set(const gv_mock_set_opts_t *opts, gv_mock_set_result_t *out, gv_error_t **err);

#endif
