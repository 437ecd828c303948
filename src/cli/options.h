/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validation options shared by `run`, `wait`, `status`, `env` and `cleanup`:
 * each flag and the environment variable of the same meaning (upstream's
 * names where upstream has one).  Flags win over the environment.
 */
#ifndef GV_CLI_OPTIONS_H
#define GV_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/cleanup.h"
#include "cli.h"

/*
 * Owns every string it hands to gv_config_t (heap copies), so the config
 * stays valid as long as this object does.
 */
typedef struct gv_options {
        gv_config_t cfg;
        char **owned;          /* heap strings to free */
        size_t n_owned;
        char **lib_search;     /* NULL-terminated heap lists, or NULL for the defaults */
        char **bin_search;
        char **cdi_dirs;
        char **runtime_configs;
        char **components;     /* --components / COMPONENT, NULL means all */
        char **assume_ready;   /* --assume-ready / ASSUME_READY, NULL when none */
        char *mock_profile;    /* --mock[=PROFILE]; NULL when not mock */
        unsigned mock_gpus;    /* --gpus for --mock, 0 = profile's count */
        char *mock_dir;        /* --mock-dir */
        int mock_workload;     /* --mock-workload: a gv_mock_workload_t (mock/mock.h); 0 = none */
        int mock_vgpu_shape;   /* --mock-vgpu-shape: a gv_mock_vgpu_shape_t */
        bool mock_vgpu_shape_set, mock_gds, mock_gdrcopy, mock_rdma, mock_cc; /* --mock-vgpu-shape given, --mock-gds... */
        bool output_dir_set;   /* --output-dir or OUTPUT_DIR given explicitly */
        const char *driver_install_dir_from;          /* who set it: "DRIVER_INSTALL_DIR", "--driver-install-dir", or NULL */
        const char *driver_install_dir_ctr_path_from; /* the same for DRIVER_INSTALL_DIR_CTR_PATH */
        bool cleanup_all;      /* CLEANUP_ALL (upstream's -r/--cleanup-all): run removes every marker first */
        const char *mig_strategy; /* MIG_STRATEGY (upstream's -m): read, and unused as upstream's */
} gv_options_t;

/* Option ids above the ASCII range, for getopt_long tables. */
enum {
        GV_OPT_OUTPUT_DIR = 0x100,
        GV_OPT_BOOT_ID_FILE,
        GV_OPT_HOST_ROOT,
        GV_OPT_HOST_ROOT_CTR_PATH,
        GV_OPT_DRIVER_INSTALL_DIR,
        GV_OPT_DRIVER_INSTALL_DIR_CTR_PATH,
        GV_OPT_DEV_CHAR_DIR,
        GV_OPT_NO_DEV_CHAR_SYMLINKS,
        GV_OPT_SKIP_GPU_INIT,
        GV_OPT_WAIT,
        GV_OPT_NO_WAIT,
        GV_OPT_WITH_WORKLOAD,
        GV_OPT_SLEEP_INTERVAL,
        GV_OPT_MAX_WAIT,
        GV_OPT_MAX_BACKOFF,
        GV_OPT_DEV_NODE_WAIT,
        GV_OPT_EXPECTED_GPUS,
        GV_OPT_STRICT,
        GV_OPT_NO_NVIDIA_SMI,
        GV_OPT_LIB_SEARCH,
        GV_OPT_BIN_SEARCH,
        GV_OPT_CDI_DIR,
        GV_OPT_RUNTIME_CONFIG,
        GV_OPT_NODE_NAME,
        GV_OPT_NAMESPACE,
        GV_OPT_COMPONENTS,
        GV_OPT_MOCK,
        GV_OPT_GPUS,
        GV_OPT_MOCK_DIR,
        GV_OPT_JSON,
        GV_OPT_TIMEOUT,
        GV_OPT_PRINT_ENV,
        /* cuda/plugin on Kubernetes (docs/workload-lifecycle.md) */
        GV_OPT_KUBECONFIG,
        GV_OPT_KUBE_CONTEXT,
        GV_OPT_WORKLOAD_TEMPLATE,
        GV_OPT_POD_TIMEOUT,
        GV_OPT_CAPACITY_WAIT,
        GV_OPT_VALIDATOR_POD_NAME,
        /* sandbox, vGPU, GPUDirect */
        GV_OPT_SYSFS_ROOT,
        GV_OPT_DEFAULT_WORKLOAD_CONFIG,
        GV_OPT_MOFED_READY_FILE,
        GV_OPT_ASSUME_READY,
        /* run --mock: the mock install's workload (docs/mock-driver-root.md "Workloads") */
        GV_OPT_MOCK_WORKLOAD,
        GV_OPT_MOCK_VGPU_SHAPE,
        GV_OPT_MOCK_GDS,
        GV_OPT_MOCK_GDRCOPY,
        GV_OPT_MOCK_RDMA,
        GV_OPT_MOCK_CC,
};

/* getopt_long entries for the store-only options (--output-dir, --boot-id-file). */
#define GV_STORE_LONG_OPTIONS                                                        \
        { "output-dir", required_argument, NULL, GV_OPT_OUTPUT_DIR },                \
        { "boot-id-file", required_argument, NULL, GV_OPT_BOOT_ID_FILE }

/* getopt_long entries for every validation option (run). */
#define GV_VALIDATION_LONG_OPTIONS                                                              \
        GV_STORE_LONG_OPTIONS,                                                                  \
        { "host-root", required_argument, NULL, GV_OPT_HOST_ROOT },                             \
        { "host-root-ctr-path", required_argument, NULL, GV_OPT_HOST_ROOT_CTR_PATH },           \
        { "driver-install-dir", required_argument, NULL, GV_OPT_DRIVER_INSTALL_DIR },           \
        { "driver-install-dir-ctr-path", required_argument, NULL, GV_OPT_DRIVER_INSTALL_DIR_CTR_PATH }, \
        { "dev-char-dir", required_argument, NULL, GV_OPT_DEV_CHAR_DIR },                       \
        { "disable-dev-char-symlinks", no_argument, NULL, GV_OPT_NO_DEV_CHAR_SYMLINKS },        \
        { "skip-gpu-init", no_argument, NULL, GV_OPT_SKIP_GPU_INIT },                           \
        { "wait", no_argument, NULL, GV_OPT_WAIT },                                             \
        { "no-wait", no_argument, NULL, GV_OPT_NO_WAIT },                                       \
        { "with-workload", required_argument, NULL, GV_OPT_WITH_WORKLOAD },                     \
        { "sleep-interval", required_argument, NULL, GV_OPT_SLEEP_INTERVAL },                   \
        { "max-wait", required_argument, NULL, GV_OPT_MAX_WAIT },                               \
        { "max-backoff", required_argument, NULL, GV_OPT_MAX_BACKOFF },                         \
        { "dev-node-wait", required_argument, NULL, GV_OPT_DEV_NODE_WAIT },                     \
        { "expected-gpus", required_argument, NULL, GV_OPT_EXPECTED_GPUS },                     \
        { "strict", no_argument, NULL, GV_OPT_STRICT },                                         \
        { "no-nvidia-smi", no_argument, NULL, GV_OPT_NO_NVIDIA_SMI },                           \
        { "lib-search", required_argument, NULL, GV_OPT_LIB_SEARCH },                           \
        { "bin-search", required_argument, NULL, GV_OPT_BIN_SEARCH },                           \
        { "cdi-dir", required_argument, NULL, GV_OPT_CDI_DIR },                                 \
        { "runtime-config", required_argument, NULL, GV_OPT_RUNTIME_CONFIG },                   \
        { "node-name", required_argument, NULL, GV_OPT_NODE_NAME },                             \
        { "namespace", required_argument, NULL, GV_OPT_NAMESPACE },                             \
        { "kubeconfig", required_argument, NULL, GV_OPT_KUBECONFIG },                           \
        { "context", required_argument, NULL, GV_OPT_KUBE_CONTEXT },                            \
        { "workload-template", required_argument, NULL, GV_OPT_WORKLOAD_TEMPLATE },             \
        { "pod-timeout", required_argument, NULL, GV_OPT_POD_TIMEOUT },                         \
        { "capacity-wait", required_argument, NULL, GV_OPT_CAPACITY_WAIT },                     \
        { "validator-pod-name", required_argument, NULL, GV_OPT_VALIDATOR_POD_NAME },                 \
        { "sysfs-root", required_argument, NULL, GV_OPT_SYSFS_ROOT },                           \
        { "default-workload-config", required_argument, NULL, GV_OPT_DEFAULT_WORKLOAD_CONFIG }, \
        { "mofed-ready-file", required_argument, NULL, GV_OPT_MOFED_READY_FILE },               \
        { "assume-ready", required_argument, NULL, GV_OPT_ASSUME_READY }

/*
 * gv_options_init - defaults, then the environment variables.
 * Errors: GV_REASON_CONFIG naming the variable.
 */
int gv_options_init(gv_options_t *o, gv_cli_t *cli, gv_error_t **err);

/*
 * gv_options_handle - apply one getopt_long result @opt with @arg.
 * Returns 1 when handled, 0 when @opt is not a shared option, or a
 * negative errno with GV_REASON_CONFIG.
 */
int gv_options_handle(gv_options_t *o, int opt, const char *arg, gv_error_t **err);

/* Where the GPU Operator's validator DaemonSet mounts the host's / and /dev/char (upstream's
 * cmd/nvidia-validator/main.go looks only there). */
#define GV_OPERATOR_HOST_MOUNT "/host"
#define GV_OPERATOR_DEV_CHAR_MOUNT "/host-dev-char"

/*
 * gv_options_resolve_mounts - the defaults that depend on this container's mounts: when
 * HOST_ROOT_CTR_PATH was not given, the host root is "/" (or unset) and @host_mount is a
 * folder, host_root_ctr_path becomes @host_mount; when DEV_CHAR_DIR was not given,
 * dev_char_dir becomes @dev_char_mount if that is a folder, else "/dev/char".  Explicit
 * values are kept.  @host_mount and @dev_char_mount are borrowed: they must outlive @c.
 * Never fails (a path that cannot be stat()ed is not a folder).
 */
void gv_options_resolve_mounts(gv_config_t *c, const char *host_mount, const char *dev_char_mount);

/*
 * gv_options_finish - point cfg's lists at the parsed ones and decide the mount defaults with
 * gv_options_resolve_mounts(GV_OPERATOR_HOST_MOUNT, GV_OPERATOR_DEV_CHAR_MOUNT) (call after
 * parsing).
 */
void gv_options_finish(gv_options_t *o);

/*
 * gv_options_free - free everything the options own and zero @o, so that a
 * second call (or a call on a zeroed object that was never initialised) is
 * harmless.
 */
void gv_options_free(gv_options_t *o);

/*
 * _cleanup_options_ - gv_options_free() when the variable leaves scope:
 * `_cleanup_options_ gv_options_t o = { 0 };`.  The options live on the
 * stack, so the cleanup function takes them by address directly (as
 * _cleanup_error_ does) rather than through GV_DEFINE_CLEANUP's pointer slot.
 */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): a macro, as those in .clang-tidy */
#define _cleanup_options_ _cleanup_(gv_options_free)

/* Help text for the shared options, with their environment variables. */
void gv_options_help_store(FILE *f);
void gv_options_help_validation(FILE *f);

/* How a command uses the status folder. */
typedef enum gv_store_use {
        GV_STORE_READER,  /* status, wait, env: never writes; a missing folder reads as all missing */
        GV_STORE_WRITER,  /* cleanup: writes, folder must exist */
        GV_STORE_CREATOR, /* run: writes, creates the folder */
} gv_store_use_t;

/*
 * gv_options_check_driver_roots - the containerised driver root, as the host sees it
 * (DRIVER_INSTALL_DIR) and as mounted here (DRIVER_INSTALL_DIR_CTR_PATH), must each be a folder
 * or absent (the driver container may not have made it yet): a regular file, a FIFO, a dangling
 * symbolic link or any other non-folder there is a configuration error naming the variable or
 * flag that set it (or "default").  Errors: -ENOTDIR with GV_REASON_CONFIG.
 */
int gv_options_check_driver_roots(const gv_options_t *o, gv_error_t **err);

/* gv_options_open_store - open the store at cfg.output_dir for @use. Errors as gv_store_open(). */
int gv_options_open_store(const gv_options_t *o, gv_store_use_t use, gv_store_t **out, gv_error_t **err);

/* The global options every command takes after its name too (gv_cli_getopt()). */
enum {
        GV_OPT_LOG_LEVEL = 0x1000,
        GV_OPT_LOG_FORMAT,
};

/* gv_cli_getopt's result when the command must end: the message is printed, *exit_code set. */
#define GV_GETOPT_STOP (-2)

/*
 * gv_cli_getopt - the one option parser of every command: getopt_long() over
 * @argc/@argv with the command's @shortopts and @longopts (a table ending in
 * a zeroed entry), plus the global options, which it applies to @cli itself
 * and never returns: -v/--verbose (info, twice: debug), --log-level LEVEL
 * and --log-format text|json.  So global options work before and after the
 * command's name.  Returns the next option of the command (with optarg set,
 * 'h' for --help when the command has it), -1 at the end (positional
 * arguments from optind, permuted to the end as getopt_long() does), or
 * GV_GETOPT_STOP with the error printed as gv_cli_usage_error() for @cmd
 * ("unknown option '--x'", "option '--x' needs a value", a bad level) and
 * *exit_code set.  Start a command with optind = 0.
 */
int gv_cli_getopt(gv_cli_t *cli, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *longopts, int *exit_code);

/*
 * gv_cli_getopt_long_only - gv_cli_getopt() where a long option may also be spelled with one
 * dash (-node-name, -ns), as Go's flag packages take them: for upstream's flags before the
 * command (getopt_long_only()).
 */
int gv_cli_getopt_long_only(gv_cli_t *cli, const char *cmd, int argc, char **argv, const char *shortopts,
                            const struct option *longopts, int *exit_code);

/* Help text of the global options (for every command's --help). */
void gv_options_help_global(FILE *f);

/*
 * gv_cli_help_tail - the end of every command's --help: the global options, then "Examples:"
 * from @examples, pairs of a command line and what it does, ending with NULL.
 */
void gv_cli_help_tail(FILE *f, const char *const *examples);

/*
 * gv_extra_opt_fn - handles one of a command's own options (@opt, the
 * getopt_long value, with @arg or NULL).  Returns 0, or a negative errno with
 * *err set (its reason decides the exit code).
 */
typedef int (*gv_extra_opt_fn)(void *userdata, int opt, const char *arg, gv_error_t **err);

/*
 * gv_cli_parse_store_command - fill @o for command @cmd from the environment
 * and argv: the store options (--output-dir, --boot-id-file), --help, and
 * the @n_extra long options in @extra, each of which (when not a shared
 * validation option) goes to @on_extra with @userdata.  Positional arguments
 * are left at argv[optind..].  @o is taken zeroed (`= { 0 }`) and must be
 * freed with gv_options_free() whatever the result.
 * Returns 0 when the command should go on.  Otherwise the command ends with
 * *exit_code, the message already printed, and the result says why:
 * -ECANCELED after --help (exit code 0), -EINVAL for a usage error (2),
 * -ENOMEM when memory ran out (1), or the negative errno of the failed
 * environment variable or option (its reason's exit code).
 */
int gv_cli_parse_store_command(gv_cli_t *cli, const char *cmd, int argc, char **argv,
                               const struct option *extra, size_t n_extra, gv_extra_opt_fn on_extra,
                               void *userdata, void (*help)(FILE *), gv_options_t *o, int *exit_code);

/*
 * gv_cli_parse_store_only - gv_cli_parse_store_command() for a command that
 * takes only the store options and no positional argument (`env`,
 * `cleanup`): a positional argument is a usage error (-EINVAL, exit code 2).
 * Returns and fills *exit_code as gv_cli_parse_store_command().
 */
int gv_cli_parse_store_only(gv_cli_t *cli, const char *cmd, int argc, char **argv, void (*help)(FILE *),
                            gv_options_t *o, int *exit_code);

/* gv_split_list - split @s at any of @seps into a NULL-terminated heap list (empty items dropped). */
char **gv_split_list(const char *s, const char *seps);

#endif
