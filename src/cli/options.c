/* SPDX-License-Identifier: Apache-2.0 */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"

static const char *own(gv_options_t *o, const char *s)
{
        char *copy = strdup(s);
        if (!copy)
                return NULL;
        char **n = realloc(o->owned, (o->n_owned + 1) * sizeof(*n));
        if (!n) {
                free(copy);
                return NULL;
        }
        o->owned = n;
        o->owned[o->n_owned++] = copy;
        return copy;
}

static void strv_free(char **v)
{
        gv_strv_freep(&v);
}

char **gv_split_list(const char *s, const char *seps)
{
        size_t n = 0, cap = 4;
        char **v = calloc(cap, sizeof(*v));
        if (!v)
                return NULL;
        while (s && *s) {
                size_t len = strcspn(s, seps);
                if (len > 0) {
                        if (!GV_GREEDY_REALLOC(v, cap, n + 2)) {
                                strv_free(v);
                                return NULL;
                        }
                        v[n] = strndup(s, len);
                        if (!v[n]) {
                                strv_free(v);
                                return NULL;
                        }
                        v[++n] = NULL;
                }
                s += len;
                if (*s)
                        s++;
        }
        return v;
}

/* Append the items of @s (colon or comma separated) to the list *v. */
static int list_append(char ***v, const char *s, gv_error_t **err)
{
        _cleanup_strv_free_ char **add = gv_split_list(s, ":,");
        if (!add)
                return gv_error_oom(err);
        size_t have = 0, more = 0;
        while (*v && (*v)[have])
                have++;
        while (add[more])
                more++;
        char **n = realloc(*v, (have + more + 1) * sizeof(*n));
        if (!n)
                return gv_error_oom(err);
        for (size_t i = 0; i < more; i++) {
                n[have + i] = add[i];
                add[i] = NULL;
        }
        n[have + more] = NULL;
        *v = n;
        return 0;
}

static int set_list(char ***v, const char *s, gv_error_t **err)
{
        strv_free(*v);
        *v = NULL;
        return list_append(v, s, err);
}

static int parse_uint_opt(const char *name, const char *arg, unsigned *out, gv_error_t **err)
{
        if (gv_parse_uint(arg, out) < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s %s: expected a whole number of seconds",
                                    name, arg);
        return 0;
}

/* NO_NVIDIA_SMI, and upstream's CLEANUP_ALL and MIG_STRATEGY, into @o.  0, or -EINVAL naming the variable. */
static int env_run_options(gv_options_t *o, gv_error_t **err)
{
        bool no_smi = false;
        int r;
        if ((r = gv_env_bool("NO_NVIDIA_SMI", &no_smi, err)) < 0 ||
            (r = gv_env_bool("CLEANUP_ALL", &o->cleanup_all, err)) < 0)
                return r;
        o->cfg.driver.run_nvidia_smi = !no_smi;
        /* Upstream declares MIG_STRATEGY (default single) and never reads it; the plugin check looks
         * for nvidia.com/mig-* before nvidia.com/gpu whatever it says, as upstream's does. */
        o->mig_strategy = gv_env("MIG_STRATEGY") ? gv_env("MIG_STRATEGY") : "single";
        return 0;
}

/* The defaults of every setting before the environment and the flags (upstream's where it has one). */
static void set_defaults(gv_config_t *c, gv_cli_t *cli)
{
        c->output_dir = GV_DEFAULT_OUTPUT_DIR;
        c->boot_id_path = GV_DEFAULT_BOOT_ID_PATH;
        c->driver.host_root = "/";
        c->driver.driver_install_dir = "/run/nvidia/driver";
        c->driver.driver_install_dir_ctr_path = "/run/nvidia/driver";
        /* dev_char_dir and host_root_ctr_path: NULL until gv_options_finish() decides. */
        c->workload.with_workload = true;
        c->sleep_interval_s = 5;
        c->max_backoff_s = 60;
        c->max_wait_s = GV_DEFAULT_MAX_WAIT_S; /* bounded; MAX_WAIT_SECONDS=0: forever, as upstream */
        c->driver.dev_node_wait_s = 30;
        c->driver.run_nvidia_smi = true;
        c->workload.pod_timeout_s = 300;
        c->workload.capacity_wait_s = 150; /* upstream: 30 polls, 5 s apart */
        c->sandbox.sysfs_root = "/sys";
        c->sandbox.mofed_ready_file = "/run/mellanox/drivers/.driver-ready";
        c->stop = cli->stop;
        c->log = gv_cli_log;
        c->log_userdata = cli;
}

int gv_options_init(gv_options_t *o, gv_cli_t *cli, gv_error_t **err)
{
        memset(o, 0, sizeof(*o));
        gv_config_t *c = &o->cfg;
        set_defaults(c, cli);

        static const struct {
                const char *var;
                size_t offset;
        } strings[] = {
                { "OUTPUT_DIR", offsetof(gv_config_t, output_dir) },
                { "HOST_ROOT", offsetof(gv_config_t, driver.host_root) },
                { "HOST_ROOT_CTR_PATH", offsetof(gv_config_t, driver.host_root_ctr_path) },
                { "DRIVER_INSTALL_DIR", offsetof(gv_config_t, driver.driver_install_dir) },
                { "DRIVER_INSTALL_DIR_CTR_PATH", offsetof(gv_config_t, driver.driver_install_dir_ctr_path) },
                { "DEV_CHAR_DIR", offsetof(gv_config_t, driver.dev_char_dir) },
                { "NODE_NAME", offsetof(gv_config_t, kube.node_name) },
                { "OPERATOR_NAMESPACE", offsetof(gv_config_t, kube.namespace) },
                { "KUBECONFIG", offsetof(gv_config_t, kube.kubeconfig) },
                { "KUBERNETES_SERVICE_HOST", offsetof(gv_config_t, kube.k8s_service_host) },
                { "KUBERNETES_SERVICE_PORT", offsetof(gv_config_t, kube.k8s_service_port) },
                { "HOME", offsetof(gv_config_t, kube.home_dir) },
                { "WORKLOAD_TEMPLATE", offsetof(gv_config_t, workload.workload_template) },
                { "VALIDATOR_IMAGE", offsetof(gv_config_t, workload.validator_image) },
                { "VALIDATOR_IMAGE_PULL_POLICY", offsetof(gv_config_t, workload.validator_image_pull_policy) },
                { "VALIDATOR_IMAGE_PULL_SECRETS", offsetof(gv_config_t, workload.validator_image_pull_secrets) },
                { "VALIDATOR_RUNTIME_CLASS", offsetof(gv_config_t, workload.validator_runtime_class) },
                { "POD_NAME", offsetof(gv_config_t, workload.validator_pod_name) },
                { "VALIDATOR_POD_NAME", offsetof(gv_config_t, workload.validator_pod_name) }, /* wins over POD_NAME */
                { "POD_UID", offsetof(gv_config_t, workload.validator_pod_uid) },
                { "VALIDATOR_POD_UID", offsetof(gv_config_t, workload.validator_pod_uid) },   /* wins over POD_UID */
                { "GV_SYSFS_ROOT", offsetof(gv_config_t, sandbox.sysfs_root) },
                { "DEFAULT_GPU_WORKLOAD_CONFIG", offsetof(gv_config_t, sandbox.default_workload_config) },
                { "MOFED_READY_FILE", offsetof(gv_config_t, sandbox.mofed_ready_file) },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(strings); i++) {
                const char *v = gv_env(strings[i].var);
                if (v)
                        *(const char **) ((char *) c + strings[i].offset) = v;
        }
        o->output_dir_set = gv_env("OUTPUT_DIR") != NULL;
        o->driver_install_dir_from = gv_env("DRIVER_INSTALL_DIR") ? "DRIVER_INSTALL_DIR" : NULL;
        o->driver_install_dir_ctr_path_from = gv_env("DRIVER_INSTALL_DIR_CTR_PATH") ? "DRIVER_INSTALL_DIR_CTR_PATH" : NULL;
        if (gv_env("ASSUME_READY"))
                c->assume_ready_by = "ASSUME_READY";

        int r;
        if ((r = gv_env_bool("DISABLE_DEV_CHAR_SYMLINK_CREATION", &c->driver.disable_dev_char_symlinks, err)) < 0 ||
            (r = gv_env_bool("DRIVER_VALIDATION_SKIP_GPU_INIT", &c->driver.skip_gpu_init, err)) < 0 ||
            (r = gv_env_bool("WITH_WAIT", &c->with_wait, err)) < 0 ||
            (r = gv_env_bool("WITH_WORKLOAD", &c->workload.with_workload, err)) < 0 ||
            (r = gv_env_bool("STRICT", &c->driver.strict, err)) < 0 ||
            (r = gv_env_bool("USE_HOST_MOFED", &c->sandbox.use_host_mofed, err)) < 0 ||
            (r = gv_env_bool("GPU_DIRECT_RDMA_ENABLED", &c->sandbox.gpu_direct_rdma_enabled, err)) < 0 ||
            (r = gv_env_uint("SLEEP_INTERVAL_SECONDS", &c->sleep_interval_s, err)) < 0 ||
            (r = gv_env_uint("MAX_WAIT_SECONDS", &c->max_wait_s, err)) < 0 ||
            (r = gv_env_uint("MAX_BACKOFF_SECONDS", &c->max_backoff_s, err)) < 0 ||
            (r = gv_env_uint("DEV_NODE_WAIT_SECONDS", &c->driver.dev_node_wait_s, err)) < 0 ||
            (r = gv_env_uint("EXPECTED_GPU_COUNT", &c->driver.expected_gpus, err)) < 0 ||
            (r = gv_env_uint("POD_TIMEOUT_SECONDS", &c->workload.pod_timeout_s, err)) < 0 ||
            (r = gv_env_uint("CAPACITY_WAIT_SECONDS", &c->workload.capacity_wait_s, err)) < 0)
                return r;
        if ((r = env_run_options(o, err)) < 0)
                return r;

        static const struct {
                const char *var;
                size_t offset;
        } lists[] = {
                { "LIB_SEARCH", offsetof(gv_options_t, lib_search) },
                { "BIN_SEARCH", offsetof(gv_options_t, bin_search) },
                { "CDI_DIRS", offsetof(gv_options_t, cdi_dirs) },
                { "RUNTIME_CONFIGS", offsetof(gv_options_t, runtime_configs) },
                { "COMPONENT", offsetof(gv_options_t, components) },
                { "ASSUME_READY", offsetof(gv_options_t, assume_ready) },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(lists); i++) {
                const char *v = gv_env(lists[i].var);
                if (v && (r = set_list((char ***) ((char *) o + lists[i].offset), v, err)) < 0)
                        return r;
        }
        return 0;
}

/* The options that set a path or name in gv_config_t (a non-empty copy of the argument). */
static const struct {
        int opt;
        size_t offset;
} string_opts[] = {
        { GV_OPT_OUTPUT_DIR, offsetof(gv_config_t, output_dir) },
        { GV_OPT_BOOT_ID_FILE, offsetof(gv_config_t, boot_id_path) },
        { GV_OPT_HOST_ROOT, offsetof(gv_config_t, driver.host_root) },
        { GV_OPT_HOST_ROOT_CTR_PATH, offsetof(gv_config_t, driver.host_root_ctr_path) },
        { GV_OPT_DRIVER_INSTALL_DIR, offsetof(gv_config_t, driver.driver_install_dir) },
        { GV_OPT_DRIVER_INSTALL_DIR_CTR_PATH, offsetof(gv_config_t, driver.driver_install_dir_ctr_path) },
        { GV_OPT_DEV_CHAR_DIR, offsetof(gv_config_t, driver.dev_char_dir) },
        { GV_OPT_NODE_NAME, offsetof(gv_config_t, kube.node_name) },
        { GV_OPT_NAMESPACE, offsetof(gv_config_t, kube.namespace) },
        { GV_OPT_KUBECONFIG, offsetof(gv_config_t, kube.kubeconfig) },
        { GV_OPT_KUBE_CONTEXT, offsetof(gv_config_t, kube.kube_context) },
        { GV_OPT_WORKLOAD_TEMPLATE, offsetof(gv_config_t, workload.workload_template) },
        { GV_OPT_VALIDATOR_POD_NAME, offsetof(gv_config_t, workload.validator_pod_name) },
        { GV_OPT_SYSFS_ROOT, offsetof(gv_config_t, sandbox.sysfs_root) },
        { GV_OPT_DEFAULT_WORKLOAD_CONFIG, offsetof(gv_config_t, sandbox.default_workload_config) },
        { GV_OPT_MOFED_READY_FILE, offsetof(gv_config_t, sandbox.mofed_ready_file) },
};

/* The options that set a whole number in gv_config_t, with their flag for messages. */
static const struct {
        int opt;
        const char *flag;
        size_t offset;
} uint_opts[] = {
        { GV_OPT_POD_TIMEOUT, "--pod-timeout", offsetof(gv_config_t, workload.pod_timeout_s) },
        { GV_OPT_CAPACITY_WAIT, "--capacity-wait", offsetof(gv_config_t, workload.capacity_wait_s) },
        { GV_OPT_SLEEP_INTERVAL, "--sleep-interval", offsetof(gv_config_t, sleep_interval_s) },
        { GV_OPT_MAX_WAIT, "--max-wait", offsetof(gv_config_t, max_wait_s) },
        { GV_OPT_MAX_BACKOFF, "--max-backoff", offsetof(gv_config_t, max_backoff_s) },
        { GV_OPT_DEV_NODE_WAIT, "--dev-node-wait", offsetof(gv_config_t, driver.dev_node_wait_s) },
        { GV_OPT_EXPECTED_GPUS, "--expected-gpus", offsetof(gv_config_t, driver.expected_gpus) },
};

/* The options without an argument that set a bool in gv_config_t to @value. */
static const struct {
        int opt;
        size_t offset;
        bool value;
} bool_opts[] = {
        { GV_OPT_NO_DEV_CHAR_SYMLINKS, offsetof(gv_config_t, driver.disable_dev_char_symlinks), true },
        { GV_OPT_SKIP_GPU_INIT, offsetof(gv_config_t, driver.skip_gpu_init), true },
        { GV_OPT_WAIT, offsetof(gv_config_t, with_wait), true },
        { GV_OPT_NO_WAIT, offsetof(gv_config_t, with_wait), false },
        { GV_OPT_STRICT, offsetof(gv_config_t, driver.strict), true },
        { GV_OPT_NO_NVIDIA_SMI, offsetof(gv_config_t, driver.run_nvidia_smi), false },
};

/* Sets the path or name option @opt from @arg; 1 when handled, 0 when @opt is not one, or a negative errno. */
static int handle_string(gv_options_t *o, int opt, const char *arg, gv_error_t **err)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(string_opts); i++) {
                if (string_opts[i].opt != opt)
                        continue;
                if (opt == GV_OPT_OUTPUT_DIR)
                        o->output_dir_set = true;
                else if (opt == GV_OPT_DRIVER_INSTALL_DIR)
                        o->driver_install_dir_from = "--driver-install-dir";
                else if (opt == GV_OPT_DRIVER_INSTALL_DIR_CTR_PATH)
                        o->driver_install_dir_ctr_path_from = "--driver-install-dir-ctr-path";
                if (!arg || !*arg)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "empty value for an option that needs a path or name");
                const char *v = own(o, arg);
                if (!v)
                        return gv_error_oom(err);
                *(const char **) ((char *) &o->cfg + string_opts[i].offset) = v;
                return 1;
        }
        return 0;
}

/* Sets the number or flag option @opt from @arg; 1 when handled, 0 when @opt is not one, or a negative errno. */
static int handle_scalar(gv_options_t *o, int opt, const char *arg, gv_error_t **err)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(uint_opts); i++) {
                if (uint_opts[i].opt != opt)
                        continue;
                unsigned *target = (unsigned *) ((char *) &o->cfg + uint_opts[i].offset);
                int r = parse_uint_opt(uint_opts[i].flag, arg, target, err);
                return r < 0 ? r : 1;
        }
        for (size_t i = 0; i < GV_ARRAY_SIZE(bool_opts); i++) {
                if (bool_opts[i].opt == opt) {
                        *(bool *) ((char *) &o->cfg + bool_opts[i].offset) = bool_opts[i].value;
                        return 1;
                }
        }
        return 0;
}

int gv_options_handle(gv_options_t *o, int opt, const char *arg, gv_error_t **err)
{
        gv_config_t *c = &o->cfg;
        int r;
        if ((r = handle_string(o, opt, arg, err)) != 0 || (r = handle_scalar(o, opt, arg, err)) != 0)
                return r;
        switch (opt) {
        case GV_OPT_WITH_WORKLOAD:
                if (gv_parse_bool(arg, &c->workload.with_workload) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--with-workload %s: expected true or false",
                                            arg);
                return 1;
        case GV_OPT_LIB_SEARCH:
                return (r = set_list(&o->lib_search, arg, err)) < 0 ? r : 1;
        case GV_OPT_BIN_SEARCH:
                return (r = set_list(&o->bin_search, arg, err)) < 0 ? r : 1;
        case GV_OPT_CDI_DIR:
                return (r = list_append(&o->cdi_dirs, arg, err)) < 0 ? r : 1;
        case GV_OPT_RUNTIME_CONFIG:
                return (r = list_append(&o->runtime_configs, arg, err)) < 0 ? r : 1;
        case GV_OPT_COMPONENTS:
                return (r = set_list(&o->components, arg, err)) < 0 ? r : 1;
        case GV_OPT_ASSUME_READY:
                c->assume_ready_by = "--assume-ready";
                return (r = set_list(&o->assume_ready, arg, err)) < 0 ? r : 1;
        default:
                return 0;
        }
}

static bool is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void gv_options_resolve_mounts(gv_config_t *c, const char *host_mount, const char *dev_char_mount)
{
        /* Upstream's validator looks for a host driver only under "/host" and writes the
         * /dev/char links into "/host-dev-char", whatever HOST_ROOT says; its DaemonSet mounts
         * the host's / and /dev/char there (NVIDIA/gpu-operator cmd/nvidia-validator/main.go:
         * hostDevCharPath = "/host-dev-char", resolveHostNvidiaSMI("/host"); and
         * assets/state-operator-validation/0500_daemonset.yaml).  Follow it when nothing was
         * said explicitly and those mounts are there. */
        bool host_is_root = !c->driver.host_root || strcmp(c->driver.host_root, "/") == 0;
        if (!c->driver.host_root_ctr_path && host_is_root && is_dir(host_mount))
                c->driver.host_root_ctr_path = host_mount;
        if (!c->driver.dev_char_dir)
                c->driver.dev_char_dir = is_dir(dev_char_mount) ? dev_char_mount : "/dev/char";
}

void gv_options_finish(gv_options_t *o)
{
        gv_options_resolve_mounts(&o->cfg, GV_OPERATOR_HOST_MOUNT, GV_OPERATOR_DEV_CHAR_MOUNT);
        o->cfg.driver.lib_search = (const char *const *) o->lib_search;
        o->cfg.driver.bin_search = (const char *const *) o->bin_search;
        o->cfg.toolkit.cdi_dirs = (const char *const *) o->cdi_dirs;
        o->cfg.toolkit.runtime_configs = (const char *const *) o->runtime_configs;
        o->cfg.assume_ready = (const char *const *) o->assume_ready;
}

void gv_options_free(gv_options_t *o)
{
        for (size_t i = 0; i < o->n_owned; i++)
                free(o->owned[i]);
        free(o->owned);
        strv_free(o->lib_search);
        strv_free(o->bin_search);
        strv_free(o->cdi_dirs);
        strv_free(o->runtime_configs);
        strv_free(o->components);
        strv_free(o->assume_ready);
        free(o->mock_profile);
        free(o->mock_dir);
        memset(o, 0, sizeof(*o));
}

void gv_options_help_store(FILE *f)
{
        fprintf(f,
                "  --output-dir DIR         marker folder (OUTPUT_DIR, default " GV_DEFAULT_OUTPUT_DIR ")\n"
                "  --boot-id-file FILE      where the boot id is read (default " GV_DEFAULT_BOOT_ID_PATH ")\n");
}

void gv_options_help_validation(FILE *f)
{
        gv_options_help_store(f);
        fprintf(f,
                "  --host-root DIR          host filesystem as the host sees it, written into driver-ready\n"
                "                           (HOST_ROOT, default /)\n"
                "  --host-root-ctr-path DIR where that filesystem is mounted here, searched for a host\n"
                "                           driver (HOST_ROOT_CTR_PATH; default: /host when the host root is /\n"
                "                           and /host is a folder, as in the GPU Operator's DaemonSet, else\n"
                "                           the host root)\n"
                "  --driver-install-dir DIR containerised driver root, host path (DRIVER_INSTALL_DIR,\n"
                "                           default /run/nvidia/driver)\n"
                "  --driver-install-dir-ctr-path DIR\n"
                "                           the same as mounted here (DRIVER_INSTALL_DIR_CTR_PATH)\n"
                "  --lib-search LIST        folders under a driver root searched for libnvidia-ml.so.1,\n"
                "                           colon-separated; replaces the defaults (LIB_SEARCH)\n"
                "  --bin-search LIST        folders searched for nvidia-smi (BIN_SEARCH)\n"
                "  --cdi-dir DIR            CDI spec folder, repeatable (CDI_DIRS, default /etc/cdi:/var/run/cdi)\n"
                "  --runtime-config FILE    container runtime configuration to inspect, repeatable\n"
                "                           (RUNTIME_CONFIGS)\n"
                "  --dev-char-dir DIR       where /dev/char/MAJ:MIN links go (DEV_CHAR_DIR; default:\n"
                "                           /host-dev-char when it is a folder, as in the GPU Operator's\n"
                "                           DaemonSet, else /dev/char)\n"
                "  --disable-dev-char-symlinks\n"
                "                           (DISABLE_DEV_CHAR_SYMLINK_CREATION)\n"
                "  --skip-gpu-init          check the driver without initialising GPUs\n"
                "                           (DRIVER_VALIDATION_SKIP_GPU_INIT)\n"
                "  --no-nvidia-smi          do not run nvidia-smi, NVML only (NO_NVIDIA_SMI)\n"
                "  --strict                 nvidia-smi's infoROM warning (exit 14) fails the check (STRICT)\n"
                "  --wait / --no-wait       retry failures that can go away (WITH_WAIT)\n"
                "  --max-wait SECONDS       give up retrying after this long; 0 = no bound, as upstream\n"
                "                           (MAX_WAIT_SECONDS, default " GV_DEFAULT_MAX_WAIT_S_TEXT ")\n"
                "  --sleep-interval SECONDS first retry delay, doubling after each try\n"
                "                           (SLEEP_INTERVAL_SECONDS, default 5)\n"
                "  --max-backoff SECONDS    longest delay between tries (MAX_BACKOFF_SECONDS, default 60)\n"
                "  --dev-node-wait SECONDS  how long to wait for late /dev/nvidia* nodes\n"
                "                           (DEV_NODE_WAIT_SECONDS, default 30)\n"
                "  --expected-gpus N        driver: NVML must see at least N GPUs, else gpu-missing\n"
                "                           (EXPECTED_GPU_COUNT; default 0: as many NVIDIA display/3D\n"
                "                           controllers as the PCI bus under --sysfs-root shows; a mock\n"
                "                           root is counted only with a --sysfs-root other than /sys)\n"
                "  --with-workload BOOL     run the cuda/plugin validation pods (WITH_WORKLOAD, default true)\n"
                "  --node-name NAME         this node (NODE_NAME)\n"
                "  --namespace NS           namespace for workload pods (OPERATOR_NAMESPACE)\n"
                "  --kubeconfig FILE        Kubernetes client configuration (KUBECONFIG; default: in-cluster,\n"
                "                           then ~/.kube/config)\n"
                "  --context NAME           kubeconfig context (default: current-context)\n"
                "  --workload-template FILE override file for the cuda/plugin pods (WORKLOAD_TEMPLATE)\n"
                "  --pod-timeout SECONDS    bound for one validation pod (POD_TIMEOUT_SECONDS, default 300)\n"
                "  --capacity-wait SECONDS  plugin: how long to wait for GPU capacity on the node, or in DRA\n"
                "                           mode (label nvidia.com/gpu.deploy.dra-driver=true) for the\n"
                "                           gpu.nvidia.com ResourceSlices (CAPACITY_WAIT_SECONDS, default 150)\n"
                "  --validator-pod-name POD the validator's own pod, for tolerations and the owner\n"
                "                           reference (VALIDATOR_POD_NAME or POD_NAME; VALIDATOR_POD_UID)\n"
                "  --sysfs-root DIR         where sysfs is read by driver (PCI GPU count), mofed, nvidia-fs,\n"
                "                           gdrcopy, nvidia-peermem, vfio-pci, vgpu-manager, vgpu-devices\n"
                "                           (GV_SYSFS_ROOT, default /sys)\n"
                "  --default-workload-config CONFIG\n"
                "                           container, vm-passthrough or vm-vgpu when the node has no valid\n"
                "                           nvidia.com/gpu.workload.config label (DEFAULT_GPU_WORKLOAD_CONFIG,\n"
                "                           default vm-passthrough)\n"
                "  --assume-ready LIST      comma-separated components provided outside (e.g. toolkit on GKE\n"
                "                           COS): their marker is published without validating, with\n"
                "                           ASSUMED=true and ASSUMED_BY; the parent must still be ready\n"
                "                           (ASSUME_READY)\n"
                "  --mofed-ready-file FILE  the MOFED driver container's flag (MOFED_READY_FILE, default\n"
                "                           /run/mellanox/drivers/.driver-ready); also read: USE_HOST_MOFED,\n"
                "                           GPU_DIRECT_RDMA_ENABLED\n"
                "  Also read: VALIDATOR_IMAGE, VALIDATOR_IMAGE_PULL_POLICY, VALIDATOR_IMAGE_PULL_SECRETS,\n"
                "  VALIDATOR_RUNTIME_CLASS (the validation pods' image settings).\n");
        static const struct {
                const char *title;
                const char *const *(*list)(void);
        } defaults[] = {
                { "libnvidia-ml.so.1 search, under a driver root (--lib-search)", gv_driver_default_lib_search },
                { "nvidia-smi search, under a driver root (--bin-search)", gv_driver_default_bin_search },
                { "CDI folders, under the host root (--cdi-dir)", gv_toolkit_default_cdi_dirs },
                { "runtime configurations, under the host root (--runtime-config)",
                  gv_toolkit_default_runtime_configs },
        };
        fprintf(f, "\nDefault search lists:\n");
        for (size_t i = 0; i < GV_ARRAY_SIZE(defaults); i++) {
                fprintf(f, "  %s:\n   ", defaults[i].title);
                size_t col = 3;
                for (const char *const *p = defaults[i].list(); p && *p; p++) {
                        size_t w = strlen(*p) + 1;
                        if (col + w > 92) {
                                fputs("\n   ", f);
                                col = 3;
                        }
                        fprintf(f, " %s", *p);
                        col += w;
                }
                fputc('\n', f);
        }
}

/* What sits at @path when it is not a folder ("a regular file", ...), or NULL for a folder or nothing. */
static const char *not_a_folder(const char *path)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return NULL; /* absent: the driver container has not made it yet */
        if (S_ISLNK(st.st_mode)) {
                struct stat target;
                if (stat(path, &target) < 0)
                        return "a dangling symbolic link";
                st = target;
        }
        return S_ISDIR(st.st_mode)    ? NULL
               : S_ISREG(st.st_mode)  ? "a regular file"
               : S_ISFIFO(st.st_mode) ? "a FIFO"
               : S_ISSOCK(st.st_mode) ? "a socket"
               : S_ISCHR(st.st_mode)  ? "a character device"
                                      : "not a folder";
}

int gv_options_check_driver_roots(const gv_options_t *o, gv_error_t **err)
{
        const struct {
                const char *var, *path, *from, *what;
        } roots[] = {
                { "DRIVER_INSTALL_DIR_CTR_PATH", o->cfg.driver.driver_install_dir_ctr_path, o->driver_install_dir_ctr_path_from,
                  "the containerised driver root as mounted here" },
                { "DRIVER_INSTALL_DIR", o->cfg.driver.driver_install_dir, o->driver_install_dir_from,
                  "the containerised driver root as the host sees it" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(roots); i++) {
                const char *bad = roots[i].path ? not_a_folder(roots[i].path) : NULL;
                if (!bad)
                        continue;
                const char *from = roots[i].from ? roots[i].from : roots[i].var;
                return gv_error_set(err, ENOTDIR, GV_REASON_CONFIG, "%s%s%s is %s, not a folder (%s%s)", from,
                                    from[0] == '-' ? " " : "=", roots[i].path, bad, roots[i].what,
                                    roots[i].from ? "" : "; the default");
        }
        return 0;
}

int gv_options_open_store(const gv_options_t *o, gv_store_use_t use, gv_store_t **out, gv_error_t **err)
{
        gv_store_options_t so = {
                .dir = o->cfg.output_dir,
                .boot_id_path = o->cfg.boot_id_path,
                .create = use == GV_STORE_CREATOR,
                .validator_version = GV_VERSION,
                .allow_missing = use == GV_STORE_READER,
                .read_only = use == GV_STORE_READER,
        };
        return gv_store_open(&so, out, err);
}

/* The global options, appended to every command's table by gv_cli_getopt(). */
static const struct option global_opts[] = {
        { "verbose", no_argument, NULL, 'v' },
        { "log-level", required_argument, NULL, GV_OPT_LOG_LEVEL },
        { "log-format", required_argument, NULL, GV_OPT_LOG_FORMAT },
};

/* Applies global option @c (with @arg); 0, or GV_GETOPT_STOP with the error printed. */
static int apply_global(gv_cli_t *cli, const char *cmd, int c, const char *arg, int *exit_code)
{
        switch (c) {
        case 'v':
                cli->min_level = cli->level_set && cli->min_level <= GV_LOG_INFO ? GV_LOG_DEBUG : GV_LOG_INFO;
                cli->level_set = true;
                return 0;
        case GV_OPT_LOG_LEVEL:
                if (gv_cli_set_log_level(cli, arg) == 0)
                        return 0;
                *exit_code = gv_cli_usage_error(cli, cmd, "--log-level %s: expected debug, info, warning or error",
                                                arg);
                return GV_GETOPT_STOP;
        default: /* GV_OPT_LOG_FORMAT */
                if (gv_cli_set_log_format(cli, arg) == 0)
                        return 0;
                *exit_code = gv_cli_usage_error(cli, cmd, "--log-format %s: expected text or json", arg);
                return GV_GETOPT_STOP;
        }
}

/* printf into a new heap string, or NULL when memory ran out. */
static char *fmt_or_null(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_or_null(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = gv_vasprintf(fmt, ap);
        va_end(ap);
        return s;
}

/* The option getopt_long() just refused, as the user spelled it (without a value). */
static char *refused_option(int argc, char **argv)
{
        const char *a = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        if (strncmp(a, "--", 2) != 0 && optopt > 0 && optopt < 0x100)
                return fmt_or_null("-%c", optopt);
        return strndup(a, strcspn(a, "="));
}

static int cli_getopt(gv_cli_t *cli, const char *cmd, int argc, char **argv, const char *shortopts,
                      const struct option *longopts, bool long_only, int *exit_code)
{
        size_t n = 0;
        while (longopts && longopts[n].name)
                n++;
        _cleanup_free_ struct option *opts = calloc(n + GV_ARRAY_SIZE(global_opts) + 1, sizeof(*opts));
        /* ':' first tells a missing value from an unknown option */
        bool in_order = shortopts && shortopts[0] == '+'; /* stop at the first non-option */
        _cleanup_free_ char *shorts = fmt_or_null("%s:%sv", in_order ? "+" : "",
                                                  shortopts ? shortopts + in_order : "");
        if (!opts || !shorts) {
                (void) gv_cli_usage_error(cli, cmd, "out of memory");
                *exit_code = GV_EXIT_FAILED;
                return GV_GETOPT_STOP;
        }
        if (n)
                memcpy(opts, longopts, n * sizeof(*opts));
        memcpy(opts + n, global_opts, sizeof(global_opts));
        opterr = 0; /* the messages below are in the one error format */
        for (;;) {
                int c = long_only ? getopt_long_only(argc, argv, shorts, opts, NULL)
                                  : getopt_long(argc, argv, shorts, opts, NULL);
                if (c == 'v' || c == GV_OPT_LOG_LEVEL || c == GV_OPT_LOG_FORMAT) {
                        if (apply_global(cli, cmd, c, optarg, exit_code) < 0)
                                return GV_GETOPT_STOP;
                        continue;
                }
                if (c != '?' && c != ':')
                        return c;
                _cleanup_free_ char *what = refused_option(argc, argv);
                *exit_code = c == ':' ? gv_cli_usage_error(cli, cmd, "option '%s' needs a value", what ? what : "?")
                                      : gv_cli_usage_error(cli, cmd, "unknown option '%s'", what ? what : "?");
                return GV_GETOPT_STOP;
        }
}

void gv_cli_help_tail(FILE *f, const char *const *examples)
{
        gv_options_help_global(f);
        fprintf(f, "\nExamples:\n");
        for (const char *const *e = examples; e && e[0] && e[1]; e += 2)
                fprintf(f, "  %s\n      %s\n", e[0], e[1]);
}

int gv_cli_getopt(gv_cli_t *cli, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *longopts, int *exit_code)
{
        return cli_getopt(cli, cmd, argc, argv, shortopts, longopts, false, exit_code);
}

int gv_cli_getopt_long_only(gv_cli_t *cli, const char *cmd, int argc, char **argv, const char *shortopts,
                            const struct option *longopts, int *exit_code)
{
        return cli_getopt(cli, cmd, argc, argv, shortopts, longopts, true, exit_code);
}

void gv_options_help_global(FILE *f)
{
        fprintf(f,
                "\nGlobal options (before or after the command):\n"
                "  -v, --verbose            log info events on stderr; twice: debug events too\n"
                "  --log-level LEVEL        debug, info, warning (the default) or error (LOG_LEVEL)\n"
                "  --log-format text|json   log and error line format on stderr (LOG_FORMAT)\n");
}

/* Handles one getopt_long result @c; 0 to go on, else a negative errno with *exit_code set. */
static int parse_one(gv_cli_t *cli, const char *cmd, int c, gv_extra_opt_fn on_extra, void *userdata,
                     void (*help)(FILE *), gv_options_t *o, int *exit_code)
{
        _cleanup_error_ gv_error_t *err = NULL;
        if (c == 'h') {
                help(stdout);
                *exit_code = GV_EXIT_OK;
                return -ECANCELED;
        }
        int r = gv_options_handle(o, c, optarg, &err);
        if (r == 0 && on_extra) {
                r = on_extra(userdata, c, optarg, &err);
                if (r >= 0)
                        r = 1;
        }
        if (r < 0) {
                *exit_code = gv_cli_fail(cli, cmd, &err);
                return r;
        }
        if (r == 0) {
                *exit_code = gv_cli_usage_error(cli, cmd, "unknown option");
                return -EINVAL;
        }
        return 0;
}

int gv_cli_parse_store_command(gv_cli_t *cli, const char *cmd, int argc, char **argv,
                               const struct option *extra, size_t n_extra, gv_extra_opt_fn on_extra,
                               void *userdata, void (*help)(FILE *), gv_options_t *o, int *exit_code)
{
        static const struct option base[] = { GV_STORE_LONG_OPTIONS, { "help", no_argument, NULL, 'h' } };
        size_t n = GV_ARRAY_SIZE(base) + n_extra;
        _cleanup_free_ struct option *opts = calloc(n + 1, sizeof(*opts));
        _cleanup_error_ gv_error_t *err = NULL;
        if (!opts) {
                *exit_code = GV_EXIT_FAILED;
                return -ENOMEM;
        }
        memcpy(opts, base, sizeof(base));
        if (n_extra)
                memcpy(opts + GV_ARRAY_SIZE(base), extra, n_extra * sizeof(*extra));

        int r = gv_options_init(o, cli, &err);
        if (r < 0) {
                *exit_code = gv_cli_fail(cli, cmd, &err);
                return r;
        }
        int c;
        while ((c = gv_cli_getopt(cli, cmd, argc, argv, "h", opts, exit_code)) != -1) {
                if (c == GV_GETOPT_STOP)
                        return -EINVAL;
                if ((r = parse_one(cli, cmd, c, on_extra, userdata, help, o, exit_code)) < 0)
                        return r;
        }
        gv_options_finish(o);
        return 0;
}

int gv_cli_parse_store_only(gv_cli_t *cli, const char *cmd, int argc, char **argv, void (*help)(FILE *),
                            gv_options_t *o, int *exit_code)
{
        int r = gv_cli_parse_store_command(cli, cmd, argc, argv, NULL, 0, NULL, NULL, help, o, exit_code);
        if (r < 0)
                return r;
        if (optind < argc) {
                *exit_code = gv_cli_usage_error(cli, cmd, "unexpected argument '%s'", argv[optind]);
                return -EINVAL;
        }
        return 0;
}
