/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pieces of `gpu-validator run` behind cmd-run.c (which parses the
 * options and sets up --mock): which components run, in which order
 * (run-select.c), and the run itself with its report lines (run-chain.c).
 */
#ifndef GV_CLI_RUN_H
#define GV_CLI_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/*
 * gv_run_select - the registered components named in @names (driver,
 * toolkit, cuda and plugin when NULL), in chain order, each once however
 * often it is named, into @out (room for @cap); their number in *n_out.
 * Errors: -EINVAL / GV_REASON_CONFIG for an unknown name in @names (the
 * message lists the known ones) or in @assumed (--assume-ready /
 * ASSUME_READY); -E2BIG / GV_REASON_INTERNAL when more than @cap are
 * selected (never an overflow).  *n_out is untouched on failure.
 */
int gv_run_select(char **names, const char *const *assumed, const gv_component_t **out, size_t cap,
                  size_t *n_out, gv_error_t **err);

/*
 * gv_run_is_follower - whether @c was not among the @n components in
 * @selected, so that it runs only as a follower of one that was
 * (gv_component_followers()).
 */
bool gv_run_is_follower(const gv_component_t *c, const gv_component_t *const *selected, size_t n);

/*
 * gv_run_order - the run order into @out (room for @cap; the rest is
 * dropped): each of the @n selected components followed by its followers
 * that were not selected themselves (the driver's GPUDirect components, as
 * upstream).  Returns the number written.
 */
size_t gv_run_order(const gv_component_t *const *selected, size_t n, const gv_component_t **out, size_t cap);

/*
 * gv_run_chain - validate the @n_selected components in @selected and their
 * followers in order with @cfg against @store, printing one line per result
 * with its duration in seconds (a failure with its reason, message and the
 * reason's hint) and a total line on @out; stops at the first failure.
 * A follower whose flag is off (skipped) prints nothing, as upstream.
 * Returns the exit code: GV_EXIT_OK, or gv_cli_exit_code_for() of the
 * failure's reason.
 */
int gv_run_chain(const gv_component_t *const *selected, size_t n_selected, const gv_config_t *cfg,
                 gv_store_t *store, FILE *out);

#endif
