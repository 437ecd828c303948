/* SPDX-License-Identifier: Apache-2.0 */
/* gpu-validator env: driver-ready's variables for eval. */
#include <errno.h>
#include <stdio.h>

#include "base/cleanup.h"
#include "common.h"

static void help(FILE *f)
{
        fprintf(f, "Usage: eval \"$(gpu-validator env [OPTIONS])\"\n"
                   "\n"
                   "Prints driver-ready's variables (IS_HOST_DRIVER, NVIDIA_DRIVER_ROOT, DRIVER_ROOT_CTR_PATH,\n"
                   "NVIDIA_DEV_ROOT, DEV_ROOT_CTR_PATH, DRIVER_VERSION, ...) as `export KEY=value` lines,\n"
                   "quoted for sh. Fails, printing nothing, unless driver-ready is ready for this boot.\n"
                   "\nOptions:\n");
        gv_options_help_store(f);
        fprintf(f, "\nExit codes: 0 printed, 1 driver-ready missing, stale or foreign, 2 usage error.\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "eval \"$(gpu-validator env)\"",
                "export IS_HOST_DRIVER, NVIDIA_DRIVER_ROOT, ... from a valid driver-ready",
                "gpu-validator env --output-dir /tmp/gpu-validator-mock-0/validations",
                "print them for a `run --mock`",
                NULL });
}

int gv_cmd_env(gv_cli_t *cli, int argc, char **argv)
{
        _cleanup_options_ gv_options_t o = { 0 };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_only(cli, "env", argc, argv, help, &o, &code) < 0)
                return code;
        _cleanup_error_ gv_error_t *err = NULL;
        gv_store_t *store = NULL;
        gv_marker_info_t info = { 0 };
        int r = gv_options_open_store(&o, GV_STORE_READER, &store, &err);
        if (r >= 0)
                r = gv_store_inspect(store, GV_MARKER_DRIVER, &info, &err);
        if (r >= 0 && info.state != GV_MARKER_READY)
                r = gv_error_set(&err, ESTALE, GV_REASON_DEPENDENCY, "driver-ready is %s%s%s",
                                 gv_marker_state_name(info.state), info.detail ? ": " : "",
                                 info.detail ? info.detail : "");
        if (r >= 0)
                r = gv_cli_print_env(&info, stdout, &err);
        if (r < 0)
                code = gv_cli_fail(cli, "env", &err);
        gv_marker_info_clear(&info);
        gv_store_close(&store);
        return code;
}
