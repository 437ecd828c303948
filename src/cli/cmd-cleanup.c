/* SPDX-License-Identifier: Apache-2.0 */
/* gpu-validator cleanup: remove every marker, downstream first (preStop). */
#include <errno.h>
#include <stdio.h>

#include "base/cleanup.h"
#include "common.h"

static void help(FILE *f)
{
        fprintf(f, "Usage: gpu-validator cleanup [OPTIONS]\n"
                   "\n"
                   "Removes every readiness marker in OUTPUT_DIR, the most downstream first\n"
                   "(plugin, cuda, toolkit, ..., driver), plus temporary files of crashed writers.\n"
                   "Files owned by others (.driver-ctr-ready, workload-type) stay. Meant for the\n"
                   "validator pod's preStop hook; a missing folder is not an error.\n"
                   "\nOptions:\n");
        gv_options_help_store(f);
        fprintf(f, "\nExit codes: 0 done, 1 a marker could not be removed (or every marker was removed but\n"
                   "the writer lock .gpu-validator.lock is not a regular file: remove it), 2 usage or\n"
                   "configuration error (an unreadable boot id file included).\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator cleanup",
                "remove every marker in /run/nvidia/validations, downstream first (a preStop hook)",
                "gpu-validator cleanup --output-dir /tmp/gpu-validator-mock-0/validations",
                "the same for a `run --mock` status folder",
                NULL });
}

int gv_cmd_cleanup(gv_cli_t *cli, int argc, char **argv)
{
        _cleanup_options_ gv_options_t o = { 0 };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_only(cli, "cleanup", argc, argv, help, &o, &code) < 0)
                return code;
        _cleanup_error_ gv_error_t *err = NULL;
        gv_store_t *store = NULL;
        int r = gv_options_open_store(&o, GV_STORE_WRITER, &store, &err);
        if (r == -ENOENT) {
                gv_cli_logf(cli, GV_LOG_INFO, "cleanup", "", "%s does not exist; nothing to remove", o.cfg.output_dir);
                return GV_EXIT_OK;
        }
        if (r >= 0)
                r = gv_store_cleanup(store, &err);
        if (r < 0)
                code = gv_cli_fail(cli, "cleanup", &err);
        else
                gv_cli_logf(cli, GV_LOG_INFO, "cleanup", "", "removed every marker in %s", o.cfg.output_dir);
        gv_store_close(&store);
        return code;
}
