/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator run: validate components in chain order, print each result
 * with its duration, then the status table.  With --mock, first lay out a
 * mock driver root and validate that.  Also the upstream drop-in mode
 * (no command, COMPONENT set).  This file holds the options and the order
 * of the steps; the selection and the run itself are in run-select.c and
 * run-chain.c (run-internal.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "common.h"
#include "mock-run.h"
#include "run-internal.h"
#include "mock/mock.h"

static void help(FILE *f)
{
        fprintf(f,
                "Usage: gpu-validator run [--components LIST] [--mock[=PROFILE]] [--wait] [--max-wait SECONDS]\n"
                "                         [OPTIONS]\n"
                "\n"
                "Validates the named components in chain order (driver -> toolkit -> cuda -> plugin) and\n"
                "publishes their readiness markers. Before a component is validated, every marker\n"
                "downstream of it and then its own are removed; a failed component leaves its marker\n"
                "removed. Prints each result with its duration, then the status table. The driver is\n"
                "followed by nvidia-fs, gdrcopy and nvidia-peermem when their flag in .driver-ctr-ready\n"
                "is true (as upstream's driver validation); the sandbox components write workload-type.\n"
                "\nOptions:\n"
                "  --components LIST        comma-separated components (COMPONENT for one; default:\n"
                "                           driver,toolkit,cuda,plugin, or driver,toolkit with --mock)\n"
                "  --mock[=PROFILE]         install a mock driver root (default profile a100-sxm4-40gb,\n"
                "                           8 GPUs) in a folder of its own and validate it; needs no GPU\n"
                "                           and no root; see `gpu-validator mock profiles`\n"
                "  --gpus N                 with --mock: number of mock GPUs (%u-%u)\n"
                "  --mock-dir DIR           with --mock: work folder (default $XDG_RUNTIME_DIR or /tmp,\n"
                "                           gpu-validator-mock-UID); holds driver-root/, validations/, cdi/\n"
                "  --mock-workload container|vm-passthrough|vm-vgpu\n"
                "                           with --mock: lay the root out as such a node, as `mock install\n"
                "                           --workload` (docs/mock-driver-root.md \"Workloads\"), and read\n"
                "                           sysfs under DRIVER_ROOT/sys; vm-*: the default workload config;\n"
                "                           vm-vgpu: the vGPU manager only in the mock root\n"
                "  --mock-vgpu-shape mdev|sriov  with --mock-workload vm-vgpu: its shape (default mdev)\n"
                "  --mock-gds, --mock-gdrcopy, --mock-rdma\n"
                "                           with --mock: GPUDirect Storage, GDRCopy, RDMA (the module and\n"
                "                           the driver container's flag; imply --mock-workload container)\n"
                "  --mock-cc                with --mock: the cc-manager container's flag\n"
                "                           With any --mock-workload/-gds/-gdrcopy/-rdma/-cc the status folder\n"
                "                           is DRIVER_ROOT/run/nvidia/validations (where the flags are) unless\n"
                "                           --output-dir; default components: container driver,toolkit,\n"
                "                           vm-passthrough vfio-pci, vm-vgpu vgpu-manager,vgpu-devices, and\n"
                "                           cc-manager with --mock-cc\n",
                GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
        gv_options_help_validation(f);
        fprintf(f,
                "\nComponents (chain order): mofed, driver, nvidia-fs, gdrcopy, nvidia-peermem, toolkit, cuda,\n"
                "plugin; sandbox: cc-manager, vfio-pci, vgpu-manager, vgpu-devices (docs/components.md).\n"
                "\nExit codes:\n"
                "  0 every component passed (or was skipped on purpose)\n"
                "  1 a component failed (the chain stops there)\n"
                "  2 usage or configuration error\n"
                "  3 --max-wait ran out\n"
                "  4 interrupted by SIGTERM/SIGINT\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator run --mock",
                "validate a mock GPU node (8 x A100-SXM4-40GB): no GPU and no root needed",
                "gpu-validator run --mock=h100-sxm5-80gb --gpus 4 --mock-dir /tmp/h100 -v",
                "another profile, in a folder of its own, with info logs on stderr",
                "gpu-validator run --components driver,toolkit --wait --max-wait 600",
                "validate this node's driver and toolkit, retrying for up to 10 minutes",
                "COMPONENT=driver WITH_WAIT=true gpu-validator",
                "the same for the driver only, as the GPU Operator's init container runs it",
                NULL });
}

typedef struct run_args {
        gv_options_t *o;
} run_args_t;

static int on_extra(void *userdata, int opt, const char *arg, gv_error_t **err)
{
        gv_options_t *o = ((run_args_t *) userdata)->o;
        unsigned n;
        switch (opt) {
        case GV_OPT_MOCK:
                free(o->mock_profile);
                o->mock_profile = strdup(arg && *arg ? arg : GV_MOCK_DEFAULT_PROFILE);
                return o->mock_profile ? 0 : gv_error_oom(err);
        case GV_OPT_GPUS:
                if (gv_parse_uint(arg, &n) < 0 || n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--gpus %s: expected %u to %u", arg,
                                            GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
                o->mock_gpus = n;
                return 0;
        case GV_OPT_MOCK_DIR:
                free(o->mock_dir);
                o->mock_dir = strdup(arg);
                return o->mock_dir ? 0 : gv_error_oom(err);
        case GV_OPT_MOCK_WORKLOAD:
        case GV_OPT_MOCK_VGPU_SHAPE:
        case GV_OPT_MOCK_GDS:
        case GV_OPT_MOCK_GDRCOPY:
        case GV_OPT_MOCK_RDMA:
        case GV_OPT_MOCK_CC:
                return gv_mock_run_option(o, opt, arg, err);
        default:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        }
}

/*
 * The checks on the parsed options that no single option can make, and the
 * --mock default components.  Returns 0, or the exit code with the message
 * printed.
 */
static int check_options(gv_cli_t *cli, int argc, char **argv, gv_options_t *o)
{
        if (optind < argc)
                return gv_cli_usage_error(cli, "run", "unexpected argument '%s'", argv[optind]);
        if (!o->mock_profile && (o->mock_gpus || o->mock_dir || gv_mock_run_has_workload(o)))
                return gv_cli_usage_error(cli, "run", "--gpus, --mock-dir and --mock-* only apply with --mock");
        if (o->mock_vgpu_shape_set && o->mock_workload != GV_MOCK_WORKLOAD_VM_VGPU)
                return gv_cli_usage_error(cli, "run", "--mock-vgpu-shape applies to --mock-workload vm-vgpu only");
        if (o->components && !o->components[0])
                return gv_cli_usage_error(cli, "run", "--components names no component");
        if (o->mock_profile && !o->components) {
                o->components = gv_split_list(gv_mock_run_default_components(o), ",");
                if (!o->components)
                        return GV_EXIT_FAILED;
        }
        return GV_EXIT_OK;
}

/* Selects the components, opens the store and runs the chain, then prints the status table. */
static int run(gv_cli_t *cli, gv_options_t *o, const gv_mock_run_t *mock)
{
        _cleanup_error_ gv_error_t *err = NULL;
        const gv_component_t *selected[32];
        size_t n_selected = 0;
        if (gv_run_select(o->components, o->cfg.assume_ready, selected, GV_ARRAY_SIZE(selected), &n_selected,
                          &err) < 0)
                return gv_cli_fail(cli, "run", &err);

        gv_store_t *store = NULL;
        if (gv_options_open_store(o, GV_STORE_CREATOR, &store, &err) < 0)
                return gv_cli_fail(cli, "run", &err);

        /* CLEANUP_ALL (upstream's --cleanup-all): every marker goes first, downstream first; the driver
         * container's .driver-ctr-ready and workload-type are not validation results and stay. */
        if (o->cleanup_all && gv_store_cleanup(store, &err) < 0) {
                gv_store_close(&store);
                return gv_cli_fail(cli, "run", &err);
        }
        FILE *out = stdout;
        if (o->mock_profile)
                gv_mock_run_print(mock, o, out);
        int code = gv_run_chain(selected, n_selected, &o->cfg, store, out);
        if (gv_cli_print_status(store, out, false, &err) < 0)
                gv_cli_fail(cli, "status", &err);
        gv_store_close(&store);
        if (o->mock_profile) {
                fputc('\n', out);
                gv_mock_run_print_next(mock, o, cli->invoked ? cli->invoked : cli->prog, out);
        }
        return code;
}

int gv_cmd_run(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option extra[] = {
                GV_VALIDATION_LONG_OPTIONS,
                { "components", required_argument, NULL, GV_OPT_COMPONENTS },
                { "mock", optional_argument, NULL, GV_OPT_MOCK },
                { "gpus", required_argument, NULL, GV_OPT_GPUS },
                { "mock-dir", required_argument, NULL, GV_OPT_MOCK_DIR },
                { "mock-workload", required_argument, NULL, GV_OPT_MOCK_WORKLOAD },
                { "mock-vgpu-shape", required_argument, NULL, GV_OPT_MOCK_VGPU_SHAPE },
                { "mock-gds", no_argument, NULL, GV_OPT_MOCK_GDS },
                { "mock-gdrcopy", no_argument, NULL, GV_OPT_MOCK_GDRCOPY },
                { "mock-rdma", no_argument, NULL, GV_OPT_MOCK_RDMA },
                { "mock-cc", no_argument, NULL, GV_OPT_MOCK_CC },
        };
        _cleanup_options_ gv_options_t o = { 0 };
        run_args_t ra = { .o = &o };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, "run", argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, &ra, help, &o,
                                       &code) < 0)
                return code;
        if ((code = check_options(cli, argc, argv, &o)) != GV_EXIT_OK)
                return code;

        _cleanup_error_ gv_error_t *err = NULL;
        if (!o.mock_profile && gv_options_check_driver_roots(&o, &err) < 0)
                return gv_cli_fail(cli, "run", &err);
        gv_mock_run_t mock = { 0 };
        if (o.mock_profile && gv_mock_run_prepare(cli, &o, &mock, &err) < 0)
                code = gv_cli_fail(cli, "mock", &err);
        else
                code = run(cli, &o, &mock);
        gv_mock_run_clear(&mock);
        return code;
}
