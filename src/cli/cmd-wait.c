/* SPDX-License-Identifier: Apache-2.0 */
/* gpu-validator wait COMPONENT: event-driven wait for a consistent chain. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/cleanup.h"
#include "common.h"

typedef struct wait_args {
        int64_t timeout_ms;
        bool print_env;
} wait_args_t;

static int on_extra(void *userdata, int opt, const char *arg, gv_error_t **err)
{
        wait_args_t *w = userdata;
        unsigned s;
        switch (opt) {
        case GV_OPT_TIMEOUT:
                if (gv_parse_uint(arg, &s) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--timeout %s: expected whole seconds", arg);
                w->timeout_ms = (int64_t) s * 1000;
                return 0;
        case GV_OPT_PRINT_ENV:
                w->print_env = true;
                return 0;
        default:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        }
}

static void help(FILE *f)
{
        fprintf(f, "Usage: gpu-validator wait COMPONENT [--timeout SECONDS] [--print-env] [OPTIONS]\n"
                   "\n"
                   "Exits 0 as soon as COMPONENT's marker (driver, toolkit, cuda, plugin, nvidia-fs, gdrcopy,\n"
                   "nvidia-peermem, or a marker file name such as toolkit-ready) and its whole upstream chain\n"
                   "are present, written during this boot, and carry matching generations. Event-driven\n"
                   "(inotify); only when no inotify instance can be had (fs.inotify.max_user_instances\n"
                   "used up) it looks every second instead, with a warning. A marker created by hand\n"
                   "(touch) never counts. An OUTPUT_DIR that does not exist yet is waited for (its parent\n"
                   "is watched until it appears).\n"
                   "\nOptions:\n"
                   "  --timeout SECONDS        give up after this long (default: wait forever; 0 checks once)\n"
                   "  --print-env              on success print driver-ready's variables as\n"
                   "                           `export KEY=value` lines for eval\n");
        gv_options_help_store(f);
        fprintf(f, "\nExit codes: 0 ready, 1 OUTPUT_DIR or the boot id file cannot be read (other than\n"
                   "OUTPUT_DIR not existing yet), 2 usage error or a boot id file that holds no UUID,\n"
                   "3 timed out (what is missing or inconsistent is logged), 4 interrupted.\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator wait toolkit --timeout 600",
                "block until driver-ready and toolkit-ready are valid, for at most 10 minutes",
                "eval \"$(gpu-validator wait driver --print-env)\"",
                "wait for the driver, then export driver-ready's variables in this shell",
                NULL });
}

/*
 * Wait until @id is ready and read driver-ready *of that chain* into @drv.
 * driver-ready is read after the wait, so a re-validation could replace or
 * remove it in between; but a driver re-validation removes every marker
 * downstream first, so when @id is ready with the same generation before
 * and after driver-ready was read, that driver-ready belongs to its chain.
 * Otherwise wait again, within the same overall @timeout_ms (< 0: forever).
 */
static int wait_with_driver(gv_store_t *store, gv_marker_id_t id, int64_t timeout_ms, gv_marker_info_t *info,
                            gv_marker_info_t *drv, gv_error_t **err)
{
        int64_t deadline = timeout_ms < 0 ? -1 : gv_now_ms() + timeout_ms;
        for (;;) {
                int64_t left = deadline < 0 ? -1 : deadline - gv_now_ms();
                int r = gv_store_wait(store, id, left < 0 && deadline >= 0 ? 0 : left, info, err);
                if (r < 0)
                        return r;
                gv_marker_info_t again = { 0 };
                if ((r = gv_store_inspect(store, GV_MARKER_DRIVER, drv, err)) < 0 ||
                    (r = gv_store_inspect(store, id, &again, err)) < 0) {
                        gv_marker_info_clear(&again);
                        return r;
                }
                const char *g0 = gv_kvlist_get(&info->content, "GENERATION");
                const char *g1 = gv_kvlist_get(&again.content, "GENERATION");
                bool same = drv->state == GV_MARKER_READY && again.state == GV_MARKER_READY && g0 && g1 &&
                            strcmp(g0, g1) == 0;
                gv_marker_info_clear(&again);
                if (same)
                        return 0;
                gv_marker_info_clear(info);
                gv_marker_info_clear(drv);
        }
}

int gv_cmd_wait(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option extra[] = {
                { "timeout", required_argument, NULL, GV_OPT_TIMEOUT },
                { "print-env", no_argument, NULL, GV_OPT_PRINT_ENV },
        };
        wait_args_t w = { .timeout_ms = -1 };
        _cleanup_(gv_options_free) gv_options_t o = { 0 };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, "wait", argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, &w, help, &o,
                                       &code) < 0)
                return code;
        if (optind + 1 != argc)
                return gv_cli_usage_error(cli, "wait", optind >= argc ? "which component? (driver, toolkit, cuda, plugin)"
                                                                      : "one component only");
        const char *what = argv[optind];
        gv_marker_id_t id = gv_marker_by_component(what);
        if (id == GV_MARKER_INVALID)
                id = gv_marker_by_file(what);
        if (id == GV_MARKER_INVALID)
                return gv_cli_usage_error(cli, "wait", "unknown component '%s'", what);

        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_(gv_store_close) gv_store_t *store = NULL;
        _cleanup_(gv_marker_info_clear) gv_marker_info_t info = { 0 };
        _cleanup_(gv_marker_info_clear) gv_marker_info_t drv = { 0 };
        /* The folder may not exist yet: gv_store_wait watches its parent then. */
        int r = gv_options_open_store(&o, GV_STORE_READER, &store, &err);
        const char *why = NULL;
        if (r >= 0 && (r = gv_store_watch(store, &why, &err)) == 1)
                gv_cli_logf(cli, GV_LOG_WARN, "wait", "io", "%s: no inotify (%s): looking at it every %d s instead",
                            gv_store_dir(store), why, GV_DIRWATCH_POLL_MS / 1000);
        if (r >= 0)
                r = w.print_env ? wait_with_driver(store, id, w.timeout_ms, &info, &drv, &err)
                                : gv_store_wait(store, id, w.timeout_ms, &info, &err);
        if (r >= 0 && w.print_env)
                r = gv_cli_print_env(&drv, stdout, &err);
        if (r < 0) {
                if (cli->stop && *cli->stop && err && err->reason != GV_REASON_TIMEOUT)
                        gv_error_set_reason(&err, GV_REASON_INTERRUPTED);
                code = gv_cli_fail(cli, "wait", &err);
        } else {
                gv_cli_logf(cli, GV_LOG_DEBUG, gv_marker_component(id), "", "%s is ready", gv_marker_file(id));
        }
        return code;
}
