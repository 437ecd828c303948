/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CLI concern: option and environment parsing, logging, turning errors
 * into exit codes.  One file per subcommand (cmd_<name>.c), each exporting
 * gv_cmd_<name>() which returns the process exit code.  This is the only
 * layer that prints to the user.
 */
#ifndef GV_CLI_CLI_H
#define GV_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"
#include "components/component.h"

/* Exit codes, documented in --help and docs/errors.md. */
enum {
        GV_EXIT_OK = 0,          /* success, or skipped on purpose */
        GV_EXIT_FAILED = 1,      /* validation failed */
        GV_EXIT_USAGE = 2,       /* usage or configuration error */
        GV_EXIT_TIMEOUT = 3,     /* a bounded wait ran out */
        GV_EXIT_INTERRUPTED = 4, /* SIGTERM / SIGINT */
};

typedef enum gv_log_format { GV_LOG_FORMAT_TEXT, GV_LOG_FORMAT_JSON } gv_log_format_t;

/* Process-wide CLI state, created in main() and passed down; no globals. */
typedef struct gv_cli {
        const char *prog;           /* "gpu-validator" */
        const char *invoked;        /* how to spell this program in advice: argv[0] when it has a '/', else prog */
        char *exe_dir;              /* folder holding the running binary (heap), from /proc/self/exe */
        gv_log_format_t log_format; /* --log-format / LOG_FORMAT */
        gv_log_level_t min_level;   /* warning; -v info, -vv debug; --log-level / LOG_LEVEL */
        bool level_set;             /* min_level was chosen by -v, --log-level or LOG_LEVEL */
        const volatile sig_atomic_t *stop; /* set by the SIGTERM/SIGINT handler in main.c */
} gv_cli_t;

/*
 * gv_cli_exit_code_for - the exit code for a failure of class @reason:
 * GV_EXIT_USAGE (2) for GV_REASON_CONFIG, GV_EXIT_TIMEOUT (3) for
 * GV_REASON_TIMEOUT, GV_EXIT_INTERRUPTED (4) for GV_REASON_INTERRUPTED,
 * GV_EXIT_FAILED (1) for every other reason (documented in --help and
 * docs/errors.md).
 */
int gv_cli_exit_code_for(gv_reason_t reason);

/* gv_cli_exit_code - gv_cli_exit_code_for(@err's reason); GV_EXIT_FAILED when @err is NULL. */
int gv_cli_exit_code(const gv_error_t *err);

/*
 * gv_cli_log - a gv_log_fn (userdata = gv_cli_t *): one line on stderr with
 * time (RFC 3339 UTC), level, component, reason and message; as one JSON
 * object per line with --log-format=json.
 */
void gv_cli_log(void *cli, gv_log_level_t level, const char *component, const char *reason, const char *msg);

/* printf-style convenience around gv_cli_log(). */
void gv_cli_logf(gv_cli_t *cli, gv_log_level_t level, const char *component, const char *reason, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));

/*
 * gv_cli_fail - log @err (message, reason and the reason's hint) for
 * @component (may be NULL) and return its exit code.  Frees *err.
 */
int gv_cli_fail(gv_cli_t *cli, const char *component, gv_error_t **err);

/*
 * gv_cli_usage_error - print "gpu-validator CMD: MESSAGE" and a pointer to
 * --help on stderr (the one error format of every command, as gv_cli_fail()
 * prints too); returns GV_EXIT_USAGE.
 */
int gv_cli_usage_error(gv_cli_t *cli, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * gv_cli_set_log_level - set @cli's least level from @name (debug, info,
 * warning or warn, error; any case) and mark it chosen.  0, or -EINVAL for
 * another name (nothing changed).
 */
int gv_cli_set_log_level(gv_cli_t *cli, const char *name);

/* gv_cli_set_log_format - text or json into @cli.  0, or -EINVAL for another name. */
int gv_cli_set_log_format(gv_cli_t *cli, const char *name);

/* ---- values from flags and the upstream environment variables ---- */

/* The value of environment variable @name, or NULL when unset or empty. */
const char *gv_env(const char *name);

/* Parse "true/false/1/0/yes/no/on/off" (any case).  0 or -EINVAL. */
int gv_parse_bool(const char *s, bool *out);

/*
 * Parse a non-negative decimal integer that fits unsigned: digits only (no
 * sign, no white space).  0 or -EINVAL / -ERANGE; *out untouched on failure.
 */
int gv_parse_uint(const char *s, unsigned *out);

/*
 * gv_env_bool / gv_env_uint - if @name is set, parse it into *out; unset
 * leaves *out alone.  Errors: -EINVAL with GV_REASON_CONFIG naming the variable.
 */
int gv_env_bool(const char *name, bool *out, gv_error_t **err);
int gv_env_uint(const char *name, unsigned *out, gv_error_t **err);

/*
 * gv_cli_print_status - the status table (one row per marker: state, age,
 * key facts, detail) or, with @json, a JSON document, on @f.  Used by
 * `status` and at the end of `run`.  Returns 0 when every marker that is
 * present is ready, 1 otherwise, or a negative errno for the folder itself.
 */
int gv_cli_print_status(gv_store_t *store, FILE *f, bool json, gv_error_t **err);

/* ---- subcommands ---- */

/*
 * gv_cmd_<name> - the subcommand `gpu-validator <name>` with its own @argc /
 * @argv (argv[0] is the subcommand's name).  Prints its output on stdout
 * and its errors through gv_cli_log() on stderr, and returns the process
 * exit code that its --help documents (0 ok, 1 failed, 2 usage, 3 timeout,
 * 4 interrupted; cuda-check also 5).  Never calls exit().
 */
int gv_cmd_run(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_watch(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_wait(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_status(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_env(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_cleanup(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_mock(gv_cli_t *cli, int argc, char **argv);
/* gv_cmd_mock_set - `mock set` (cmd-mock-set.c); @argv[0] is "set". */
int gv_cmd_mock_set(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_render(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_metrics(gv_cli_t *cli, int argc, char **argv);
int gv_cmd_cuda_check(gv_cli_t *cli, int argc, char **argv);

#endif
