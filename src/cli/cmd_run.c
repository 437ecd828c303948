/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator run: validate components in chain order, print each result
 * with its duration, then the status table.  With --mock, first lay out a
 * mock driver root and validate that.  Also the upstream drop-in mode
 * (no command, COMPONENT set).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "common.h"
#include "mock_run.h"

static void help(FILE *f)
{
        fprintf(f,
                "Usage: gpu-validator run [--components LIST] [--mock[=PROFILE]] [--wait] [--max-wait SECONDS]\n"
                "                         [OPTIONS]\n"
                "\n"
                "Validates the named components in chain order (driver -> toolkit -> cuda -> plugin) and\n"
                "publishes their readiness markers. Before a component is validated, every marker\n"
                "downstream of it and then its own are removed; a failed component leaves its marker\n"
                "removed. Prints each result with its duration, then the status table.\n"
                "\nOptions:\n"
                "  --components LIST        comma-separated components (COMPONENT for one; default:\n"
                "                           driver,toolkit,cuda,plugin, or driver,toolkit with --mock)\n"
                "  --mock[=PROFILE]         install a mock driver root (default profile a100-sxm4-40gb,\n"
                "                           8 GPUs) in a folder of its own and validate it; needs no GPU\n"
                "                           and no root; see `gpu-validator mock profiles`\n"
                "  --gpus N                 with --mock: number of mock GPUs (1-64)\n"
                "  --mock-dir DIR           with --mock: work folder (default $XDG_RUNTIME_DIR or /tmp,\n"
                "                           gpu-validator-mock-UID); holds driver-root/, validations/, cdi/\n");
        gv_options_help_validation(f);
        fprintf(f,
                "\nComponents: driver, toolkit, cuda, plugin.\n"
                "\nExit codes:\n"
                "  0 every component passed (or was skipped on purpose)\n"
                "  1 a component failed (the chain stops there)\n"
                "  2 usage or configuration error\n"
                "  3 --max-wait ran out\n"
                "  4 interrupted by SIGTERM/SIGINT\n");
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
                return o->mock_profile ? 0 : gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        case GV_OPT_GPUS:
                if (gv_parse_uint(arg, &n) < 0 || n < 1 || n > 64)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--gpus %s: expected 1 to 64", arg);
                o->mock_gpus = n;
                return 0;
        case GV_OPT_MOCK_DIR:
                free(o->mock_dir);
                o->mock_dir = strdup(arg);
                return o->mock_dir ? 0 : gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        default:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        }
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Resolve the requested component names into chain order; usage error on unknown names. */
static int select_components(gv_cli_t *cli, char **names, const gv_component_t **out, size_t *n_out,
                             gv_error_t **err)
{
        const gv_component_t *const *all = gv_components_all();
        size_t n = 0;
        for (char **name = names; name && *name; name++) {
                if (!gv_component_find(*name))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "unknown component '%s' (this build validates: driver, toolkit, cuda, "
                                            "plugin)",
                                            *name);
        }
        for (size_t i = 0; all[i]; i++) {
                bool wanted = names == NULL;
                for (char **name = names; name && *name && !wanted; name++)
                        wanted = strcmp(*name, all[i]->name) == 0;
                if (wanted)
                        out[n++] = all[i];
        }
        *n_out = n;
        (void) cli;
        return 0;
}

int gv_cmd_run(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option extra[] = {
                GV_VALIDATION_LONG_OPTIONS,
                { "components", required_argument, NULL, GV_OPT_COMPONENTS },
                { "mock", optional_argument, NULL, GV_OPT_MOCK },
                { "gpus", required_argument, NULL, GV_OPT_GPUS },
                { "mock-dir", required_argument, NULL, GV_OPT_MOCK_DIR },
        };
        gv_options_t o;
        run_args_t ra = { .o = &o };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, "run", argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, &ra, help, &o,
                                       &code) < 0) {
                gv_options_free(&o);
                return code;
        }
        if (optind < argc) {
                gv_options_free(&o);
                return gv_cli_usage_error(cli, "run", "unexpected argument '%s'", argv[optind]);
        }

        if (!o.mock_profile && (o.mock_gpus || o.mock_dir)) {
                gv_options_free(&o);
                return gv_cli_usage_error(cli, "run", "--gpus and --mock-dir only apply with --mock");
        }
        if (o.components && !o.components[0]) {
                gv_options_free(&o);
                return gv_cli_usage_error(cli, "run", "--components names no component");
        }

        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_run_t mock = { 0 };
        if (o.mock_profile) {
                if (!o.components) {
                        o.components = gv_split_list("driver,toolkit", ",");
                        if (!o.components) {
                                gv_options_free(&o);
                                return GV_EXIT_FAILED;
                        }
                }
                if (gv_mock_run_prepare(cli, &o, &mock, &err) < 0) {
                        code = gv_cli_fail(cli, "mock", &err);
                        gv_mock_run_clear(&mock);
                        gv_options_free(&o);
                        return code;
                }
        }

        const gv_component_t *selected[16];
        size_t n_selected = 0;
        if (select_components(cli, o.components, selected, &n_selected, &err) < 0) {
                gv_mock_run_clear(&mock);
                gv_options_free(&o);
                return gv_cli_fail(cli, "run", &err);
        }

        gv_store_t *store = NULL;
        if (gv_options_open_store(&o, GV_STORE_CREATOR, &store, &err) < 0) {
                gv_mock_run_clear(&mock);
                gv_options_free(&o);
                return gv_cli_fail(cli, "run", &err);
        }

        FILE *out = stdout;
        if (o.mock_profile)
                gv_mock_run_print(&mock, &o, out);
        double t0 = now_s(), sum = 0;
        for (size_t i = 0; i < n_selected; i++) {
                gv_run_report_t rep = { 0 };
                int r = gv_component_run(selected[i], &o.cfg, store, &rep);
                sum += rep.duration_s;
                const char *verdict = r < 0 ? "FAILED" : rep.skipped ? "skipped" : rep.warning ? "ok (warning)" : "ok";
                fprintf(out, "%-9s %-13s %7.3fs  %s%s%s\n", selected[i]->name, verdict, rep.duration_s,
                        r < 0 ? gv_reason_name(rep.reason) : "", r < 0 ? ": " : "",
                        rep.message ? rep.message : "");
                if (rep.warning)
                        fprintf(out, "%-9s %-13s %8s  %s\n", "", "", "", rep.warning);
                (void) fflush(out); /* the summary is for people; the markers are the result */
                if (r < 0) {
                        gv_error_t tmp = { .reason = rep.reason };
                        code = gv_cli_exit_code(&tmp);
                        const char *hint = gv_reason_hint(rep.reason);
                        if (hint)
                                fprintf(out, "%-9s %-13s %8s  hint: %s\n", "", "", "", hint);
                        gv_run_report_clear(&rep);
                        break;
                }
                gv_run_report_clear(&rep);
        }
        /* The components time themselves in whole milliseconds: never show a total below their sum. */
        double total = now_s() - t0;
        fprintf(out, "total     %-13s %7.3fs\n\n", code == GV_EXIT_OK ? "ok" : "FAILED", total > sum ? total : sum);
        if (gv_cli_print_status(store, out, false, &err) < 0)
                gv_cli_fail(cli, "status", &err);
        gv_store_close(&store);
        gv_mock_run_clear(&mock);
        gv_options_free(&o);
        return code;
}
