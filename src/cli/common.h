/* SPDX-License-Identifier: Apache-2.0 */
/* Small pieces shared by the marker subcommands (wait, env, cleanup, status, run). */
#ifndef GV_CLI_COMMON_H
#define GV_CLI_COMMON_H

#include "cli.h"
#include "options.h"

/*
 * gv_cli_print_env - print driver-ready's documented keys from @info as
 * `export KEY=value` lines, quoted as markers are, for
 * `eval "$(gpu-validator env)"`.  Other keys are never exported.
 * Errors: GV_REASON_DEPENDENCY when one of the five upstream keys is missing;
 * GV_REASON_IO when @f cannot be written (a full disk, a closed pipe).
 */
int gv_cli_print_env(const gv_marker_info_t *info, FILE *f, gv_error_t **err);

#endif
