/* SPDX-License-Identifier: Apache-2.0 */
/* Small pieces shared by the marker subcommands (wait, env, cleanup, status, run). */
#ifndef GV_CLI_COMMON_H
#define GV_CLI_COMMON_H

#include "cli.h"
#include "options.h"

/*
 * gv_extra_opt_fn - handles one of a command's own options (@opt, the
 * getopt_long value, with @arg or NULL).  Returns 0, or a negative errno with
 * *err set (its reason decides the exit code).
 */
typedef int (*gv_extra_opt_fn)(void *userdata, int opt, const char *arg, gv_error_t **err);

/*
 * gv_cli_parse_store_command - fill @o for command @cmd from the environment
 * and argv: the store options (--output-dir, --boot-id-file), --help, and
 * the @n_extra long options in @extra, each of which (when not a shared
 * validation option) goes to @on_extra with @userdata.  Positional arguments
 * are left at argv[optind..].  @o is taken zeroed (`= { 0 }`) and must be
 * freed with gv_options_free() whatever the result.
 * Returns 0 when the command should go on.  Otherwise the command ends with
 * *exit_code, the message already printed, and the result says why:
 * -ECANCELED after --help (exit code 0), -EINVAL for a usage error (2),
 * -ENOMEM when memory ran out (1), or the negative errno of the failed
 * environment variable or option (its reason's exit code).
 */
int gv_cli_parse_store_command(gv_cli_t *cli, const char *cmd, int argc, char **argv,
                               const struct option *extra, size_t n_extra, gv_extra_opt_fn on_extra,
                               void *userdata, void (*help)(FILE *), gv_options_t *o, int *exit_code);

/*
 * gv_cli_parse_store_only - gv_cli_parse_store_command() for a command that
 * takes only the store options and no positional argument (`env`,
 * `cleanup`): a positional argument is a usage error (-EINVAL, exit code 2).
 * Returns and fills *exit_code as gv_cli_parse_store_command().
 */
int gv_cli_parse_store_only(gv_cli_t *cli, const char *cmd, int argc, char **argv, void (*help)(FILE *),
                            gv_options_t *o, int *exit_code);

/*
 * gv_cli_print_env - print driver-ready's documented keys from @info as
 * `export KEY=value` lines, quoted as markers are, for
 * `eval "$(gpu-validator env)"`.  Other keys are never exported.
 * Errors: GV_REASON_DEPENDENCY when one of the five upstream keys is missing;
 * GV_REASON_IO when @f cannot be written (a full disk, a closed pipe).
 */
int gv_cli_print_env(const gv_marker_info_t *info, FILE *f, gv_error_t **err);

#endif
