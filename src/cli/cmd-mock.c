/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator mock install|remove|profiles`: lay out and remove mock
 * driver roots (mock/mock.h, docs/mock-driver-root.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "options.h"
#include "mock/mock.h"

static void usage_mock(FILE *f)
{
        fputs("Usage: gpu-validator mock COMMAND [OPTIONS]\n"
              "\n"
              "Mock driver roots: a folder laid out like an NVIDIA driver installation, with the mock\n"
              "libnvidia-ml.so.1, our nvidia-smi, /proc/driver/nvidia/version, /dev nodes and a CDI spec,\n"
              "so that the validator (and any NVML consumer) runs without a GPU.\n"
              "\nCommands:\n"
              "  install    lay out (or update) a mock driver root\n"
              "  remove     remove exactly what install created\n"
              "  profiles   list the built-in GPU profiles (--json NAME: the finalized profile as JSON,\n"
              "             readable by --profile; --report NAME: the values NVML will report)\n"
              "  set        change GPUs (temperature, utilisation, memory, processes, faults) while\n"
              "             clients keep the mock library loaded\n"
              "\nRun 'gpu-validator mock COMMAND --help' for the options of a command.\n"
              "See docs/mock-driver-root.md.\n",
              f);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator mock install --root /tmp/mock-root --profile h100-sxm5-80gb --gpus 2",
                "lay out a mock driver root with two H100s",
                "gpu-validator mock set --root /tmp/mock-root --gpu 0 temperature_c=95",
                "make GPU 0 hot while clients run",
                "gpu-validator mock remove --root /tmp/mock-root",
                "remove what install made",
                NULL });
}

static void usage_install(FILE *f)
{
        fprintf(f, "Usage: gpu-validator mock install --root DIR [OPTIONS]\n"
              "\n"
              "Lays out a mock driver root under DIR: usr/lib64/libnvidia-ml.so.<driver version> with the\n"
              "links libnvidia-ml.so.1 and libnvidia-ml.so, the finalized profile beside it (nvml-mock.yaml),\n"
              "the mock CUDA driver usr/lib64/libcuda.so.<driver version> with its links (when built),\n"
              "usr/bin/nvidia-smi, proc/driver/nvidia/version, dev/nvidiactl, dev/nvidia0..N-1,\n"
              "dev/nvidia-uvm, dev/nvidia-uvm-tools, a CDI spec, and the manifest .gpu-validator-mock.json.\n"
              "Re-running updates the root; a non-empty folder that is not a mock root is refused.\n"
              "The manifest is written first as an intent record: after an install that was killed,\n"
              "install finishes it and remove removes what it had made.\n"
              "\nOptions:\n"
              "  --root DIR               the driver root to lay out (required)\n"
              "  --profile NAME|FILE      built-in profile (see 'mock profiles') or a YAML file\n"
              "                           (default " GV_MOCK_DEFAULT_PROFILE ")\n"
              "  --gpus N                 number of GPUs, 1..64 (default: the profile's)\n"
              "  --node-name NAME         node name the GPU UUIDs derive from (default: the profile's, or\n"
              "                           the host name)\n"
              "  --cdi-dir DIR            where to write nvidia-mock.yaml (default DIR/etc/cdi)\n"
              "  --device-nodes=char|files  character devices (mknod, needs root; falls back to files when\n"
              "                           refused) or empty files (default: char as root, else files)\n"
              "\nWorkloads (docs/mock-driver-root.md \"Workloads\"; read with run --sysfs-root DIR/sys):\n"
              "  --workload container|vm-passthrough|vm-vgpu\n"
              "                           also lay out such a node: the GPUs' PCI functions bound to nvidia\n"
              "                           or vfio-pci (DIR/sys/bus/pci), loaded modules (DIR/sys/module);\n"
              "                           container: DIR/run/nvidia/validations/.driver-ctr-ready\n"
              "  --vgpu-shape mdev|sriov  vm-vgpu: mdev types and one mdev device per GPU (default), or\n"
              "                           %u SR-IOV VFs per GPU, all enabled, the first with a vGPU type\n"
              "  --gds                    GPUDirect Storage: module nvidia_fs, GDS_ENABLED: true\n"
              "  --gdrcopy                GDRCopy: module gdrdrv, GDRCOPY_ENABLED: true\n"
              "  --rdma                   GPUDirect RDMA: a Mellanox NIC bound to mlx5_core, modules mlx5_core\n"
              "                           and nvidia_peermem, GPU_DIRECT_RDMA_ENABLED: true, and the MOFED\n"
              "                           flag DIR/run/mellanox/drivers/.driver-ready\n"
              "                           (--gds, --gdrcopy, --rdma imply --workload container)\n"
              "  --cc                     the cc-manager's flag DIR/run/nvidia/validations/.cc-manager-ctr-ready\n"
              "  --omit-module NAME       leave kernel module NAME out of DIR/sys/module (a flag set, its\n"
              "                           module absent); repeatable\n"
              "  --dev-char-links         let a driver check create /dev/char/MAJ:MIN links to this root's\n"
              "                           character devices (recorded in the manifest); without it none is\n"
              "                           made: on a host with real GPUs they would point the real devices'\n"
              "                           links at the mock (mock remove removes them)\n"
              "  -h, --help               show this help\n"
              "\nEnvironment: GPU_VALIDATOR_MOCK_DIR names a folder holding libnvidia-ml.so.1 and\n"
              "nvidia-smi to copy instead of the built or installed ones.\n"
              "Exit codes: 0 success, 1 failure, 2 usage error or bad profile.\n",
              GV_MOCK_SRIOV_VFS);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator mock install --root /tmp/mock-root",
                "8 x A100-SXM4-40GB under /tmp/mock-root",
                "gpu-validator mock install --root /run/nvidia/driver --profile h100-sxm5-80gb --gpus 4 --cdi-dir /var/run/cdi",
                "a mock containerised driver where the validator looks for one, as the chart's mock pool does",
                NULL });
}

static void usage_remove(FILE *f)
{
        fputs("Usage: gpu-validator mock remove --root DIR\n"
              "\n"
              "Removes what 'mock install' created under DIR (as listed in DIR/.gpu-validator-mock.json):\n"
              "files, links and device nodes that still have the type install gave them, then the folders\n"
              "install created once they are empty, the manifest, and DIR itself when install created it;\n"
              "first, the /dev/char/MAJ:MIN links a driver check made into DIR (see install\n"
              "--dev-char-links). Nothing else is touched.\n"
              "\nOptions:\n"
              "  --root DIR            the mock driver root\n"
              "  --dev-char-dir DIR    a /dev/char folder to clean of links into the root, repeatable\n"
              "                        (default: /dev/char and /host-dev-char)\n"
              "  -h, --help            show this help\n"
              "Exit codes: 0 success, 1 failure, 2 usage error or not a mock root.\n",
              f);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator mock remove --root /tmp/mock-root",
                "remove the mock driver root installed there",
                NULL });
}

static void usage_profiles(FILE *f)
{
        fputs("Usage: gpu-validator mock profiles [--json|--report NAME|FILE [--gpus N] [--node-name NAME]]\n"
              "\n"
              "Lists the built-in GPU profiles.  With --json, prints the finalized profile (after --gpus and\n"
              "--node-name) as JSON in the profile schema (docs/mock-nvml.md): save it to FILE.json and\n"
              "'mock install --profile FILE.json' (or MOCK_NVML_CONFIG) reads it back.  With --report,\n"
              "prints one flat JSON document of what NVML will report: driver facts and every GPU's values\n"
              "in NVML units (for tests and scripts; not a profile).\n",
              f);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator mock profiles",
                "the built-in profile names",
                "gpu-validator mock profiles --report h100-sxm5-80gb --gpus 2",
                "what NVML will report for two H100s",
                NULL });
}

/* What `mock install`'s command line gives. */
typedef struct install_args {
        gv_mock_install_opts_t o;
        const char **omit; /* --omit-module values (borrowed from argv), NULL-terminated: at most one per argument */
        size_t nomit;
        bool shape_set;    /* --vgpu-shape was given */
} install_args_t;

enum { IO_ROOT = 256, IO_PROFILE, IO_GPUS, IO_NODE, IO_CDI, IO_NODES, IO_WORKLOAD, IO_SHAPE, IO_GDS, IO_GDRCOPY, IO_RDMA, IO_CC,
       IO_OMIT, IO_DEV_CHAR_LINKS };

/* One of the workload options (IO_WORKLOAD..IO_OMIT) into @a: GV_EXIT_OK, or the usage error's exit code. */
static int install_workload_opt(gv_cli_t *cli, int c, const char *arg, install_args_t *a)
{
        switch (c) {
        case IO_WORKLOAD:
                if (gv_mock_workload_parse(arg, &a->o.workload) < 0)
                        return gv_cli_usage_error(cli, "mock install",
                                                  "--workload %s: expected container, vm-passthrough or vm-vgpu", arg);
                break;
        case IO_SHAPE:
                if (strcmp(arg, "mdev") != 0 && strcmp(arg, "sriov") != 0)
                        return gv_cli_usage_error(cli, "mock install", "--vgpu-shape %s: expected mdev or sriov", arg);
                a->o.vgpu_shape = strcmp(arg, "sriov") == 0 ? GV_MOCK_VGPU_SRIOV : GV_MOCK_VGPU_MDEV;
                a->shape_set = true;
                break;
        case IO_GDS:
                a->o.gds = true;
                break;
        case IO_GDRCOPY:
                a->o.gdrcopy = true;
                break;
        case IO_RDMA:
                a->o.rdma = true;
                break;
        case IO_CC:
                a->o.cc = true;
                break;
        case IO_DEV_CHAR_LINKS:
                a->o.dev_char_links = true;
                break;
        default: /* IO_OMIT */
                a->omit[a->nomit++] = arg;
                break;
        }
        return GV_EXIT_OK;
}

/* One of the driver-root options (IO_ROOT..IO_NODES) into @o: GV_EXIT_OK, or the usage error's exit code. */
static int install_root_opt(gv_cli_t *cli, int c, const char *arg, gv_mock_install_opts_t *o)
{
        switch (c) {
        case IO_ROOT:
                o->root = arg;
                break;
        case IO_PROFILE:
                o->profile = arg;
                break;
        case IO_GPUS:
                if (gv_parse_uint(arg, &o->gpus) < 0 || o->gpus < GV_MOCK_MIN_GPUS || o->gpus > GV_MOCK_MAX_GPUS)
                        return gv_cli_usage_error(cli, "mock install", "--gpus %s: expected %u..%u", arg,
                                                  GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
                break;
        case IO_NODE:
                o->node_name = arg;
                break;
        case IO_CDI:
                o->cdi_dir = arg;
                break;
        default: /* IO_NODES */
                if (strcmp(arg, "char") == 0)
                        o->device_nodes = GV_MOCK_NODES_CHAR;
                else if (strcmp(arg, "files") == 0)
                        o->device_nodes = GV_MOCK_NODES_FILES;
                else
                        return gv_cli_usage_error(cli, "mock install", "--device-nodes=%s: expected char or files",
                                                  arg);
                break;
        }
        return GV_EXIT_OK;
}

/* `mock install`'s command line into @a: -1 to go on, or the exit code (--help, usage errors). */
static int install_parse(gv_cli_t *cli, int argc, char **argv, install_args_t *a)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, IO_ROOT },
                { "profile", required_argument, NULL, IO_PROFILE },
                { "gpus", required_argument, NULL, IO_GPUS },
                { "node-name", required_argument, NULL, IO_NODE },
                { "cdi-dir", required_argument, NULL, IO_CDI },
                { "device-nodes", required_argument, NULL, IO_NODES },
                { "workload", required_argument, NULL, IO_WORKLOAD },
                { "vgpu-shape", required_argument, NULL, IO_SHAPE },
                { "gds", no_argument, NULL, IO_GDS },
                { "gdrcopy", no_argument, NULL, IO_GDRCOPY },
                { "rdma", no_argument, NULL, IO_RDMA },
                { "cc", no_argument, NULL, IO_CC },
                { "omit-module", required_argument, NULL, IO_OMIT },
                { "dev-char-links", no_argument, NULL, IO_DEV_CHAR_LINKS },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c, stop_code = GV_EXIT_OK;
        while ((c = gv_cli_getopt(cli, "mock install", argc, argv, "h", opts, &stop_code)) != -1) {
                if (c == GV_GETOPT_STOP)
                        return stop_code;
                int code = c >= IO_ROOT && c <= IO_NODES      ? install_root_opt(cli, c, optarg, &a->o)
                           : c >= IO_WORKLOAD && c <= IO_DEV_CHAR_LINKS ? install_workload_opt(cli, c, optarg, a)
                           : c == 'h'                       ? (usage_install(stdout), GV_EXIT_OK)
                                                            : gv_cli_usage_error(cli, "mock install", "unknown option");
                if (code != GV_EXIT_OK || c == 'h')
                        return code;
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock install", "unexpected argument '%s'", argv[optind]);
        if (!a->o.root)
                return gv_cli_usage_error(cli, "mock install", "--root DIR is required");
        if (a->shape_set && a->o.workload != GV_MOCK_WORKLOAD_VM_VGPU)
                return gv_cli_usage_error(cli, "mock install", "--vgpu-shape applies to --workload vm-vgpu only");
        a->o.omit_modules = a->nomit ? a->omit : NULL;
        return -1;
}

static int cmd_install(gv_cli_t *cli, int argc, char **argv)
{
        _cleanup_free_ const char **omit = calloc((size_t) argc + 1, sizeof(*omit));
        if (!omit) {
                gv_cli_logf(cli, GV_LOG_ERROR, "mock", NULL, "out of memory");
                return GV_EXIT_FAILED;
        }
        install_args_t a = { .omit = omit };
        int code = install_parse(cli, argc, argv, &a);
        if (code >= 0)
                return code;
        gv_mock_install_opts_t o = a.o;

        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_artifacts_t art = { 0 };
        if (gv_mock_locate_artifacts(cli->exe_dir, gv_env("GPU_VALIDATOR_MOCK_DIR"), &art, &err) < 0)
                return gv_cli_fail(cli, "mock", &err);
        o.nvml_lib = art.nvml_lib;
        o.nvidia_smi = art.nvidia_smi;
        gv_mock_install_result_t res = { 0 };
        int r = gv_mock_install(&o, &res, &err);
        gv_mock_artifacts_clear(&art);
        if (r < 0)
                return gv_cli_fail(cli, "mock", &err);
        if (res.device_nodes_fallback)
                gv_cli_logf(cli, GV_LOG_WARN, "mock", NULL,
                            "cannot create character devices (%s); made plain files under %s/dev instead",
                            res.fallback_reason ? res.fallback_reason : "refused", res.root);
        /* the result, on stdout */
        printf("%s mock driver root %s: profile %s, %u GPU(s), driver %s, node %s, device nodes %s, CDI spec %s%s%s\n",
                    res.recovered ? "finished the interrupted install of" : res.updated ? "updated" : "installed", res.root, res.profile_name, res.gpu_count,
                    res.driver_version, res.node_name, gv_mock_nodes_name(res.device_nodes), res.cdi_spec,
                    res.workload ? ", workload " : "", res.workload ? res.workload : "");
        gv_mock_install_result_clear(&res);
        return GV_EXIT_OK;
}

/* The /dev/char folders `mock remove` cleans by default: the host's, and the operator's mount of it. */
static const char *const default_dev_char_dirs[] = { "/dev/char", "/host-dev-char", NULL };

/*
 * Remove the links into the root (spelled @root, and @abs when that differs) from each of @dirs
 * (NULL-terminated); their number in *n.  An exit code.
 */
static int remove_links(gv_cli_t *cli, const char *root, const char *abs, const char *const *dirs, unsigned *n)
{
        *n = 0;
        for (const char *const *d = dirs; *d; d++) {
                for (int i = 0; i < 2; i++) {
                        const char *r = i == 0 ? root : abs;
                        if (!r || (i == 1 && strcmp(abs, root) == 0))
                                continue;
                        unsigned k = 0;
                        _cleanup_error_ gv_error_t *err = NULL;
                        if (gv_mock_remove_dev_char_links(r, *d, &k, &err) < 0)
                                return gv_cli_fail(cli, "mock remove", &err);
                        *n += k;
                }
        }
        return GV_EXIT_OK;
}

static int cmd_remove(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "dev-char-dir", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *root = NULL;
        _cleanup_free_ const char **dirs = calloc((size_t) argc + 1, sizeof(*dirs));
        size_t ndirs = 0;
        if (!dirs)
                return gv_cli_usage_error(cli, "mock remove", "out of memory");
        int c, code = GV_EXIT_OK;
        while ((c = gv_cli_getopt(cli, "mock remove", argc, argv, "h", opts, &code)) != -1) {
                switch (c) {
                case GV_GETOPT_STOP:
                        return code;
                case 'r':
                        root = optarg;
                        break;
                case 'd':
                        dirs[ndirs++] = optarg;
                        break;
                case 'h':
                        usage_remove(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock remove", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock remove", "unexpected argument '%s'", argv[optind]);
        if (!root)
                return gv_cli_usage_error(cli, "mock remove", "--root DIR is required");
        _cleanup_free_ char *abs = realpath(root, NULL); /* before the root goes */
        _cleanup_error_ gv_error_t *err = NULL;
        unsigned removed = 0, kept = 0, links = 0;
        if (gv_mock_remove(root, &removed, &kept, &err) < 0)
                return gv_cli_fail(cli, "mock", &err);
        if ((code = remove_links(cli, root, abs, ndirs ? dirs : (const char **) default_dev_char_dirs, &links)) !=
            GV_EXIT_OK)
                return code;
        if (kept)
                gv_cli_logf(cli, GV_LOG_WARN, "mock", NULL,
                            "left %u entr%s in place (changed since install, or folders no longer empty)", kept,
                            kept == 1 ? "y" : "ies");
        printf("removed mock driver root %s (%u entries, %u /dev/char link%s into it)\n", root, removed, links,
               links == 1 ? "" : "s");
        return GV_EXIT_OK;
}

static int cmd_profiles(gv_cli_t *cli, int argc, char **argv)
{
        enum { O_JSON = 256, O_REPORT, O_GPUS, O_NODE };
        static const struct option opts[] = {
                { "json", required_argument, NULL, O_JSON },
                { "report", required_argument, NULL, O_REPORT },
                { "gpus", required_argument, NULL, O_GPUS },
                { "node-name", required_argument, NULL, O_NODE },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *json = NULL, *node = NULL;
        bool report = false;
        unsigned gpus = 0;
        int c, code = GV_EXIT_OK;
        while ((c = gv_cli_getopt(cli, "mock profiles", argc, argv, "h", opts, &code)) != -1) {
                switch (c) {
                case GV_GETOPT_STOP:
                        return code;
                case O_JSON:
                case O_REPORT:
                        if (json)
                                return gv_cli_usage_error(cli, "mock profiles", "give one of --json and --report");
                        json = optarg;
                        report = c == O_REPORT;
                        break;
                case O_GPUS:
                        if (gv_parse_uint(optarg, &gpus) < 0)
                                return gv_cli_usage_error(cli, "mock profiles", "--gpus %s: expected a number",
                                                          optarg);
                        break;
                case O_NODE:
                        node = optarg;
                        break;
                case 'h':
                        usage_profiles(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock profiles", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock profiles", "unexpected argument '%s'", argv[optind]);
        if (!json) {
                for (const char *const *n = gv_mock_profile_builtin_names(); n && *n; n++)
                        printf("%s\n", *n);
                return GV_EXIT_OK;
        }
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *text = NULL;
        if (gv_mock_profile_view(json, gpus, node, report ? GV_MOCK_PROFILE_VIEW_REPORT : GV_MOCK_PROFILE_VIEW_JSON,
                                 &text, &err) < 0)
                return gv_cli_fail(cli, "mock", &err);
        fputs(text, stdout);
        return GV_EXIT_OK;
}

int gv_cmd_mock(gv_cli_t *cli, int argc, char **argv)
{
        if (argc < 2) {
                usage_mock(stderr);
                return GV_EXIT_USAGE;
        }
        const char *sub = argv[1];
        if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
                usage_mock(stdout);
                return GV_EXIT_OK;
        }
        /* The subcommand's own getopt starts after its name. */
        optind = 0;
        if (strcmp(sub, "install") == 0)
                return cmd_install(cli, argc - 1, argv + 1);
        if (strcmp(sub, "remove") == 0)
                return cmd_remove(cli, argc - 1, argv + 1);
        if (strcmp(sub, "profiles") == 0)
                return cmd_profiles(cli, argc - 1, argv + 1);
        if (strcmp(sub, "set") == 0)
                return gv_cmd_mock_set(cli, argc - 1, argv + 1);
        return gv_cli_usage_error(cli, "mock", "unknown command '%s' (install, remove, profiles, set)", sub);
}
