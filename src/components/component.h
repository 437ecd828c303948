/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Components: one interface (name, marker, validate) and one file per
 * component (driver.c, toolkit.c, ...).  The runner (runner.c) wraps a
 * component's validate() in the marker protocol: invalidate downstream,
 * validate, publish upstream-first or fail, with bounded retries.
 * Data flows CLI -> component -> marker store / NVML loader; nothing here
 * prints to the user (events go through gv_config_t.log) or exits.
 */
#ifndef GV_COMPONENTS_COMPONENT_H
#define GV_COMPONENTS_COMPONENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/log.h" /* gv_log_fn, gv_log_level_t */
#include "markers/markers.h"
#include "nvml/nvml.h" /* gv_gpu_note_t */

/*
 * The default bound of the retries (--max-wait / MAX_WAIT_SECONDS), seconds: a wait for something
 * that never comes (a deleted mount, a driver container that never starts) ends and says so;
 * MAX_WAIT_SECONDS=0 keeps upstream's "forever".
 */
#define GV_DEFAULT_MAX_WAIT_S 900
#define GV_DEFAULT_MAX_WAIT_S_TEXT "900"

/*
 * What the components need, filled by the CLI from flags and the upstream
 * environment variables (names in comments; see
 * shared/reference/upstream-compat.md), in one part per concern; a helper
 * takes the part it needs.  Strings are borrowed; lists are NULL-terminated
 * arrays of borrowed strings.  Times in seconds.
 */

/* The driver check: where the driver is and what is checked (driver component). */
typedef struct gv_driver_config {
        const char *host_root;                   /* HOST_ROOT, "/": the host filesystem as the host sees it
                                                    (written into driver-ready) */
        const char *host_root_ctr_path;          /* HOST_ROOT_CTR_PATH: where that filesystem is mounted
                                                    here (the chart: /host); NULL = host_root */
        const char *driver_install_dir;          /* DRIVER_INSTALL_DIR, /run/nvidia/driver (host path) */
        const char *driver_install_dir_ctr_path; /* DRIVER_INSTALL_DIR_CTR_PATH, /run/nvidia/driver (as mounted here) */
        const char *dev_char_dir;                /* where /dev/char symlinks go; "/dev/char" */
        bool disable_dev_char_symlinks;          /* DISABLE_DEV_CHAR_SYMLINK_CREATION */
        bool skip_gpu_init;                      /* DRIVER_VALIDATION_SKIP_GPU_INIT */
        unsigned dev_node_wait_s;                /* how long to wait for late /dev/nvidia* nodes, 30 */
        bool strict;                             /* nvidia-smi exit 14 (infoROM warning) is a failure */
        bool run_nvidia_smi;                     /* also run nvidia-smi in the driver check, true */
        const char *const *lib_search;           /* folders under a root searched for libnvidia-ml.so.1 */
        const char *const *bin_search;           /* folders under a root searched for nvidia-smi */
        unsigned expected_gpus;                  /* --expected-gpus / EXPECTED_GPU_COUNT: GPUs NVML must see;
                                                    0: as many as the PCI bus shows (docs/components.md) */
        bool mock;                               /* validating a mock driver root as a containerised driver:
                                                    no host-driver probe, no kernel module (run --mock) */
        const gv_gpu_note_t *gpu_notes;          /* what `watch`'s GPU health monitor knows of each GPU
                                                    (UUID, bus id, last Xid), to name a lost GPU; may be NULL */
        size_t n_gpu_notes;
} gv_driver_config_t;

/* The container toolkit check (toolkit component). */
typedef struct gv_toolkit_config {
        const char *const *cdi_dirs;             /* CDI spec folders, /etc/cdi /var/run/cdi */
        const char *const *runtime_configs;      /* containerd/CRI-O/Docker config files to look for nvidia runtime */
} gv_toolkit_config_t;

/* The sandbox, vGPU and GPUDirect components (docs/components.md). */
typedef struct gv_sandbox_config {
        const char *sysfs_root;                  /* --sysfs-root / GV_SYSFS_ROOT: where sysfs is read, "/sys" */
        const char *default_workload_config;     /* DEFAULT_GPU_WORKLOAD_CONFIG: used when the node has no valid
                                                    nvidia.com/gpu.workload.config label; NULL: vm-passthrough */
        const char *mofed_ready_file;            /* --mofed-ready-file / MOFED_READY_FILE,
                                                    /run/mellanox/drivers/.driver-ready */
        bool use_host_mofed;                     /* USE_HOST_MOFED: mofed is ready when mlx5_core is loaded */
        bool gpu_direct_rdma_enabled;            /* GPU_DIRECT_RDMA_ENABLED: mofed validates only when true */
} gv_sandbox_config_t;

/* The validation pods of cuda and plugin (docs/workload-lifecycle.md); strings may be NULL. */
typedef struct gv_workload_config {
        bool with_workload;                      /* WITH_WORKLOAD */
        const char *workload_template;           /* --workload-template / WORKLOAD_TEMPLATE: override file */
        const char *validator_image;             /* VALIDATOR_IMAGE */
        const char *validator_image_pull_policy; /* VALIDATOR_IMAGE_PULL_POLICY */
        const char *validator_image_pull_secrets;/* VALIDATOR_IMAGE_PULL_SECRETS, comma list */
        const char *validator_runtime_class;     /* VALIDATOR_RUNTIME_CLASS */
        const char *validator_pod_name;          /* VALIDATOR_POD_NAME (else POD_NAME): own pod, for tolerations/owner */
        const char *validator_pod_uid;           /* VALIDATOR_POD_UID (else POD_UID) */
        unsigned pod_timeout_s;                  /* --pod-timeout / POD_TIMEOUT_SECONDS: one bound per pod, 300 (0: 300) */
        unsigned capacity_wait_s;                /* --capacity-wait / CAPACITY_WAIT_SECONDS: GPU capacity wait, 150 */
} gv_workload_config_t;

/* The Kubernetes API and this node in it (cuda, plugin, node labels; strings may be NULL). */
typedef struct gv_kube_config {
        const char *node_name;                   /* NODE_NAME */
        const char *namespace;                   /* OPERATOR_NAMESPACE */
        const char *kubeconfig;                  /* --kubeconfig / KUBECONFIG (first of a ':' list) */
        const char *kube_context;                /* --kube-context, NULL: current-context */
        const char *k8s_service_host;            /* KUBERNETES_SERVICE_HOST (in-cluster configuration) */
        const char *k8s_service_port;            /* KUBERNETES_SERVICE_PORT */
        const char *home_dir;                    /* HOME, for ~/.kube/config */
} gv_kube_config_t;

/* The whole configuration: the run (markers, retries, stop, log) and the parts above. */
typedef struct gv_config {
        const char *output_dir;                  /* OUTPUT_DIR, /run/nvidia/validations */
        const char *boot_id_path;                /* --boot-id-file (tests), /proc/sys/kernel/random/boot_id */
        bool with_wait;                          /* WITH_WAIT: retry until success or max_wait_s */
        unsigned sleep_interval_s;               /* SLEEP_INTERVAL_SECONDS: first backoff step, 5 */
        unsigned max_backoff_s;                  /* cap of the exponential backoff, 60 */
        unsigned max_wait_s;                     /* --max-wait / MAX_WAIT_SECONDS; 0 = no bound (upstream) */
        const char *const *assume_ready;         /* --assume-ready / ASSUME_READY: components provided outside;
                                                    their marker is published without validating, with
                                                    ASSUMED=true and ASSUMED_BY (docs/components.md) */
        const char *assume_ready_by;             /* who said so: "--assume-ready" or "ASSUME_READY" */
        const volatile sig_atomic_t *stop;       /* set by SIGTERM/SIGINT; components give up promptly */
        gv_log_fn log;                           /* may be NULL */
        void *log_userdata;
        gv_driver_config_t driver;
        gv_toolkit_config_t toolkit;
        gv_sandbox_config_t sandbox;
        gv_workload_config_t workload;
        gv_kube_config_t kube;
} gv_config_t;

/* What a successful validation learned; published into the marker. */
typedef struct gv_result {
        gv_kvlist_t facts;  /* extra marker keys (driver-ready's upstream keys, versions, GPU_COUNT) */
        bool host_driver;   /* driver only: also write host-driver-ready */
        bool skipped;       /* nothing to validate here (device plugin disabled on the node): exit 0, no marker ... */
        bool record_skip;   /* ... unless set: skipped on purpose, the marker is published with the facts
                               (SKIPPED=true, SKIP_REASON) so the chain and the node signal see it complete */
        char *summary;      /* one line for the run report (heap), may be NULL */
        char *warning;      /* non-fatal problem (nvidia-smi exit 14), heap, may be NULL */
} gv_result_t;

/* gv_result_clear - free what @r holds (facts, summary, warning) and zero it; the struct itself is the caller's. */
void gv_result_clear(gv_result_t *r);

typedef struct gv_component {
        const char *name;      /* "driver" */
        gv_marker_id_t marker; /* GV_MARKER_DRIVER */
        /*
         * validate - check this node once.  Fills @result on success (0).
         * On failure returns a negative errno with *err set; the reason class
         * decides whether the runner retries.  Never touches markers.
         */
        int (*validate)(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err);
        /*
         * workload - for a sandbox component, the workload config it validates ("vm-passthrough",
         * "vm-vgpu"); NULL for the others.  The runner resolves the node's config first
         * (gv_sandbox_begin(): label, DEFAULT_GPU_WORKLOAD_CONFIG, writes workload-type) and skips
         * the component when it differs, before its parent marker is looked at: upstream's rule,
         * so vgpu-devices skips on a node where vgpu-manager skipped.
         */
        const char *workload;
} gv_component_t;

/* Whether @name is in cfg->assume_ready. */
bool gv_component_assumed(const gv_config_t *cfg, const char *name);

/*
 * gv_component_followers - the components validated implicitly after @c
 * passes, as upstream's driver validation does for nvidia-fs, gdrcopy and
 * nvidia-peermem (each skips, quietly, when its .driver-ctr-ready flag is not
 * true).  NULL-terminated static list; empty for the others.  Source:
 * shared/reference/upstream-components.md ("nvidia-fs, gdrcopy, nvidia-peermem").
 */
const gv_component_t *const *gv_component_followers(const gv_component_t *c);

/* The component called @name, or NULL.  Static table. */
const gv_component_t *gv_component_find(const char *name);

/* All components in chain order, NULL-terminated.  Static table. */
const gv_component_t *const *gv_components_all(void);

/* Outcome of gv_component_run(). */
typedef struct gv_run_report {
        const gv_component_t *component;
        int status;           /* 0, or the negative errno of the last attempt */
        gv_reason_t reason;   /* failure class when status < 0 */
        char *message;        /* heap: last error message, or the summary on success */
        char *warning;        /* heap or NULL */
        bool skipped;
        bool assumed;         /* published without validating (cfg->assume_ready) */
        unsigned attempts;
        double duration_s;    /* wall time of the whole run, seconds */
        gv_reason_t last_reason; /* reason of the last failed attempt (differs from reason on timeout) */
        char generation[GV_GENERATION_HEX_LEN + 1];
} gv_run_report_t;

/* gv_run_report_clear - free the report's strings and zero it; the struct itself is the caller's. */
void gv_run_report_clear(gv_run_report_t *r);

/*
 * gv_component_run - the marker protocol around one component:
 * gv_store_invalidate(), validate(), then gv_store_publish() or
 * gv_store_fail().  With cfg->with_wait, failures whose reason is
 * retryable are retried after a capped exponential backoff (first step
 * sleep_interval_s, doubling, capped at max_backoff_s, with jitter) until
 * cfg->max_wait_s passes (0 = no bound); a stop request ends the wait and
 * leaves the marker removed.  Returns 0 on success or skip, else a
 * negative errno; @report is always filled (caller clears it).
 */
int gv_component_run(const gv_component_t *c, const gv_config_t *cfg, gv_store_t *store, gv_run_report_t *report);


/* ---- additions of the components module ---- */

/*
 * gv_backoff_delay_s - the wait before retry number @attempt (1 = the wait
 * after the first failure), in seconds: @first_s * 2^(attempt-1), capped at
 * max(@cap_s, @first_s), then reduced by up to 20 % by @jitter (0 <= jitter
 * < 1; values outside are clamped), so it never exceeds the cap.  A @first_s
 * of 0 counts as 0.1 s so that a retry loop never spins.  Pure function.
 */
double gv_backoff_delay_s(unsigned attempt, unsigned first_s, unsigned cap_s, double jitter);

/*
 * The default folders searched, under a driver root, for libnvidia-ml.so.1
 * and for nvidia-smi: upstream's lists plus ours (/lib64, /lib, /bin,
 * /usr/local/bin, /usr/local/nvidia/lib64, /usr/local/glibc/lib, ...).
 * NULL-terminated static tables, for --help and as defaults when
 * cfg->driver.lib_search / cfg->driver.bin_search are NULL.  docs/components.md lists them.
 */
const char *const *gv_driver_default_lib_search(void);
const char *const *gv_driver_default_bin_search(void);

/*
 * Where the driver check looks, as seen from this process: the host root
 * (HOST_ROOT_CTR_PATH, else HOST_ROOT, else "/") and the driver container's
 * root (DRIVER_INSTALL_DIR_CTR_PATH, else DRIVER_INSTALL_DIR, else
 * upstream's /run/nvidia/driver).  Borrowed from @d or static; never NULL.
 */
const char *gv_driver_host_root_here(const gv_driver_config_t *d);
const char *gv_driver_ctr_root_here(const gv_driver_config_t *d);

/* Default CDI spec folders (/etc/cdi, /var/run/cdi); NULL-terminated static table. */
const char *const *gv_toolkit_default_cdi_dirs(void);

/*
 * Default container runtime configuration files (containerd, CRI-O with its
 * drop-in folder written with a trailing "/" and "*", Docker), looked up under the
 * host root; NULL-terminated static table.
 */
const char *const *gv_toolkit_default_runtime_configs(void);

/*
 * gv_nvidia_smi_exit_reason - the exit-code policy of nvidia-smi (nvidia-smi(1), "RETURN VALUE").
 * 0: GV_REASON_NONE.  14 (infoROM warning): GV_REASON_NONE with *warning set
 * to true, or GV_REASON_NVIDIA_SMI when @strict.  9: driver-not-loaded
 * (retryable).  12: library-not-found (not retried).  18:
 * driver-library-mismatch (not retried).  Anything else, including death by
 * a signal (pass -1): nvidia-smi-failed.  @warning may be NULL.
 */
gv_reason_t gv_nvidia_smi_exit_reason(int exit_code, bool strict, bool *warning);

#endif
