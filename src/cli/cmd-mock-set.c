/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator mock set`: change a mock root's GPUs (temperature,
 * utilisation, memory, power, clocks, processes, faults) while clients keep
 * its libnvidia-ml.so.1 loaded (mock/mock.h gv_mock_set, docs/mock-nvml.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "options.h"
#include "mock/mock.h"

static void usage_set(FILE *f)
{
        fputs("Usage: gpu-validator mock set --root DIR [--gpu all|INDEX|UUID] [--seed N] [--clear] [KEY=VALUE...]\n"
              "\n"
              "Changes GPUs of a mock driver root while clients (nvidia-smi, a device plugin, the validator)\n"
              "keep its libnvidia-ml.so.1 loaded: the library sees the change at its next call (it looks at most\n"
              "once a millisecond).  The changes are kept in DIR/usr/lib64/" GV_MOCK_ROOT_STATE_NAME " (replaced\n"
              "atomically); Xid events are appended to DIR/usr/lib64/" GV_MOCK_ROOT_XID_NAME " and reach\n"
              "nvmlEventSetWait callers.  'mock remove' removes both; --clear alone removes the first.\n"
              "\nSettings (on every selected GPU; repeatable, applied in order):\n"
              "  temperature_c=C            GPU temperature, 0..200 degrees C\n"
              "  utilization_gpu=P          utilisation in percent, 0..100 (also utilization_memory=P)\n"
              "  memory_used_mib=M          memory used (at most total minus reserved)\n"
              "  power_usage_w=W            power draw in watts (or power_usage_mw=MW)\n"
              "  clock_graphics_mhz=F       current clocks (also clock_sm_mhz=F)\n"
              "  clock_event_reasons=MASK   nvmlClocksEventReason bits added, within 0x1ff\n"
              "  ecc_corrected=N            ECC error counts (also ecc_uncorrected=N)\n"
              "  retired_pages=N            pages retired and pending (pre-Ampere; also remapped_rows=N, Ampere on)\n"
              "  nvlink=up|down             every NVLink active or inactive\n"
              "  lost=true|false            the GPU returns NVML_ERROR_GPU_IS_LOST (no Xid; see fault=)\n"
              "  process=PID:MIB[:NAME]     add a compute process (MIB counted in memory.used, NAME shown);\n"
              "                             processes=clear drops all processes\n"
              "  fault=NAME                 ecc-burst: counters rise, pending retired pages / remapped rows,\n"
              "                               Xid 48 then 63 (with --seed: 63 or 64)\n"
              "                             fell-off-the-bus: Xid 79, then every call on the GPU GPU_IS_LOST\n"
              "                             thermal-slowdown, power-slowdown: clock event reasons set, clocks\n"
              "                               drop to half the maximum (power: draw at the power limit)\n"
              "                             nvlink-down: every NVLink inactive\n"
              "\nOptions:\n"
              "  --root DIR      the mock driver root (made by 'mock install'; required)\n"
              "  --gpu SEL       all (default), a GPU index or a GPU UUID\n"
              "  --seed N        draw the faults' amounts (ECC counts, Xid 63/64, clock drop) from N:\n"
              "                  random but the same for the same N; without it they are fixed\n"
              "  --clear         first drop the runtime changes of the selected GPUs (alone: back to the profile)\n"
              "  -h, --help      show this help\n"
              "Exit codes: 0 success, 1 failure, 2 usage error, bad setting or not a mock root (nothing written).\n",
              f);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator mock set --root /tmp/mock-root --gpu 0 temperature_c=95 utilization_gpu=100",
                "GPU 0 hot and busy",
                "gpu-validator mock set --root /tmp/mock-root --gpu 1 process=4242:2048:python3",
                "a 2 GiB compute process named python3 on GPU 1",
                "gpu-validator mock set --root /tmp/mock-root --gpu 2 fault=fell-off-the-bus",
                "GPU 2 falls off the bus (Xid 79)",
                "gpu-validator mock set --root /tmp/mock-root --clear",
                "back to the profile",
                NULL });
}

/* "N" (decimal) to *out; -EINVAL otherwise. */
static int parse_seed(const char *s, unsigned long long *out)
{
        if (!*s || *s < '0' || *s > '9')
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end || errno)
                return -EINVAL;
        *out = v;
        return 0;
}

int gv_cmd_mock_set(gv_cli_t *cli, int argc, char **argv)
{
        enum { O_ROOT = 256, O_GPU, O_SEED, O_CLEAR };
        static const struct option opts[] = {
                { "root", required_argument, NULL, O_ROOT },
                { "gpu", required_argument, NULL, O_GPU },
                { "seed", required_argument, NULL, O_SEED },
                { "clear", no_argument, NULL, O_CLEAR },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        gv_mock_set_opts_t o = { 0 };
        int c, code = GV_EXIT_OK;
        while ((c = gv_cli_getopt(cli, "mock set", argc, argv, "h", opts, &code)) != -1) {
                switch (c) {
                case GV_GETOPT_STOP:
                        return code;
                case O_ROOT:
                        o.root = optarg;
                        break;
                case O_GPU:
                        o.gpu = optarg;
                        break;
                case O_SEED:
                        if (parse_seed(optarg, &o.seed) < 0)
                                return gv_cli_usage_error(cli, "mock set", "--seed %s: expected a whole number", optarg);
                        o.seeded = true;
                        break;
                case O_CLEAR:
                        o.clear = true;
                        break;
                case 'h':
                        usage_set(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock set", "unknown option");
                }
        }
        if (!o.root)
                return gv_cli_usage_error(cli, "mock set", "--root DIR is required");
        o.settings = (const char *const *) argv + optind;
        o.n_settings = (size_t) (argc - optind);
        if (!o.n_settings && !o.clear)
                return gv_cli_usage_error(cli, "mock set", "nothing to change: give KEY=VALUE settings or --clear");
        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_set_result_t res = { 0 };
        if (gv_mock_set(&o, &res, &err) < 0) {
                gv_mock_set_result_clear(&res);
                return gv_cli_fail(cli, "mock", &err);
        }
        if (res.removed) /* the result, on stdout */
                printf("no runtime change left: removed %s\n", res.state_file);
        else
                printf("changed %u GPU(s) in %s, %u Xid event(s)\n", res.gpus, res.state_file, res.xids);
        gv_mock_set_result_clear(&res);
        return GV_EXIT_OK;
}
