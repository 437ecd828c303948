/* SPDX-License-Identifier: Apache-2.0 */
/* Small pieces shared by the marker subcommands (wait, env, cleanup, status, run). */
#ifndef GV_CLI_COMMON_H
#define GV_CLI_COMMON_H

#include "cli.h"
#include "options.h"

/*
 * gv_cli_parse_store_command - parse argv for a command that takes the
 * store options plus @extra long options.  Each extra option is reported to
 * @on_extra (return 0, or a negative errno with *err set).  Positional
 * arguments are left at argv[optind..].  Returns -1 when the command should
 * exit with *exit_code (help printed, usage error), else 0.
 */
typedef int (*gv_extra_opt_fn)(void *userdata, int opt, const char *arg, gv_error_t **err);
int gv_cli_parse_store_command(gv_cli_t *cli, const char *cmd, int argc, char **argv,
                               const struct option *extra, size_t n_extra, gv_extra_opt_fn on_extra,
                               void *userdata, void (*help)(FILE *), gv_options_t *o, int *exit_code);

/*
 * gv_cli_print_env - print driver-ready's documented keys from @info as
 * `export KEY=value` lines, quoted as markers are, for
 * `eval "$(gpu-validator env)"`.  Other keys are never exported.
 * Errors: GV_REASON_DEPENDENCY when one of the five upstream keys is missing;
 * GV_REASON_IO when @f cannot be written (a full disk, a closed pipe).
 */
int gv_cli_print_env(const gv_marker_info_t *info, FILE *f, gv_error_t **err);

#endif
