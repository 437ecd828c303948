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
                "                           gpu-validator-mock-UID); holds driver-root/, validations/, cdi/\n",
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
                if (gv_parse_uint(arg, &n) < 0 || n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--gpus %s: expected %u to %u", arg,
                                            GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
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

/*
 * The registered components named in @names (driver, toolkit, cuda and plugin
 * when NULL), in chain order, each once however often it is named, into @out
 * (room for @cap).  An unknown name in @names or @cli_assumed is a usage
 * error; more registered components than @cap is an internal error, never an
 * overflow.
 */
static int select_components(gv_cli_t *cli, char **names, const char *const *cli_assumed,
                             const gv_component_t **out, size_t cap, size_t *n_out, gv_error_t **err)
{
        static const char *const default_names[] = { "driver", "toolkit", "cuda", "plugin", NULL };
        const gv_component_t *const *all = gv_components_all();
        size_t n = 0;
        for (char **name = names; name && *name; name++) {
                if (!gv_component_find(*name)) {
                        _cleanup_free_ char *known = NULL;
                        size_t klen = 0;
                        FILE *k = open_memstream(&known, &klen);
                        for (size_t i = 0; k && all[i]; i++)
                                fprintf(k, "%s%s", i ? ", " : "", all[i]->name);
                        (void) gv_memstream_close(k, &known);
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "unknown component '%s' (this build validates: %s)", *name,
                                            known ? known : "?");
                }
        }
        for (const char *const *a = cli_assumed; a && *a; a++)
                if (!gv_component_find(*a))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "--assume-ready / ASSUME_READY: unknown component '%s'", *a);
        if (!names)
                names = (char **) default_names;
        for (size_t i = 0; all[i]; i++) {
                bool wanted = false;
                for (char **name = names; name && *name && !wanted; name++)
                        wanted = strcmp(*name, all[i]->name) == 0;
                if (!wanted)
                        continue;
                if (n >= cap)
                        return gv_error_set(err, E2BIG, GV_REASON_INTERNAL,
                                            "more than %zu components selected; this build cannot run them", cap);
                out[n++] = all[i];
        }
        *n_out = n;
        (void) cli;
        return 0;
}

/* Whether @c was not asked for but follows one that was (gv_component_followers()). */
static bool is_follower(const gv_component_t *c, const gv_component_t *const *selected, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (selected[i] == c)
                        return false;
        return true;
}

/*
 * The run order: each selected component followed by its followers that were
 * not selected themselves (the driver's GPUDirect components, as upstream).
 */
static size_t expand_followers(const gv_component_t *const *selected, size_t n, const gv_component_t **out,
                               size_t cap)
{
        size_t k = 0;
        for (size_t i = 0; i < n && k < cap; i++) {
                out[k++] = selected[i];
                for (const gv_component_t *const *f = gv_component_followers(selected[i]); *f && k < cap; f++)
                        if (is_follower(*f, selected, n))
                                out[k++] = *f;
        }
        return k;
}

/* NOLINTNEXTLINE(readability-function-size): option parsing, the mock set-up and the run with its report; to be split in the architecture refactor */
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

        const gv_component_t *selected[32];
        size_t n_selected = 0;
        if (select_components(cli, o.components, o.cfg.assume_ready, selected, GV_ARRAY_SIZE(selected), &n_selected,
                              &err) < 0) {
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
        const gv_component_t *order[64];
        size_t n_order = expand_followers(selected, n_selected, order, GV_ARRAY_SIZE(order));
        for (size_t i = 0; i < n_order; i++) {
                gv_run_report_t rep = { 0 };
                bool follower = is_follower(order[i], selected, n_selected);
                int r = gv_component_run(order[i], &o.cfg, store, &rep);
                sum += rep.duration_s;
                if (follower && r == 0 && rep.skipped) {
                        gv_run_report_clear(&rep); /* flag off: upstream says nothing either */
                        continue;
                }
                const char *verdict = r < 0            ? "FAILED"
                                      : rep.skipped    ? "skipped"
                                      : rep.assumed    ? "assumed"
                                      : rep.warning    ? "ok (warning)"
                                                       : "ok";
                fprintf(out, "%-9s %-13s %7.3fs  %s%s%s\n", order[i]->name, verdict, rep.duration_s,
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
