/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `run --mock`: lay out a mock driver root in a work folder of its own and
 * point the validation options at it, so the ordinary chain validates it.
 */
#ifndef GV_CLI_MOCK_RUN_H
#define GV_CLI_MOCK_RUN_H

#include <stdio.h>

#include "cli.h"
#include "mock/mock.h"
#include "options.h"

typedef struct gv_mock_run {
        char *work_dir;    /* heap: the folder holding everything below */
        char *root;        /* heap: <work>/driver-root, the mock driver root */
        char *status_dir;  /* heap: <work>/validations unless --output-dir was given */
        char *cdi_dir;     /* heap: <work>/cdi */
        char *dev_char;    /* heap: <work>/dev-char */
        char *profile;     /* heap: profile name as installed */
        unsigned gpus;
        char *device_nodes; /* heap: "char" or "files" */
        char **cdi_list;   /* heap list {cdi_dir, NULL} handed to cfg.cdi_dirs */
        char **empty_list; /* heap list {NULL} handed to cfg.runtime_configs */
} gv_mock_run_t;

/*
 * gv_mock_run_prepare - create the work folder, install the mock driver root
 * (gv_mock_install), and point o->cfg at it: host root, driver install dir,
 * output dir (unless given), CDI folder, /dev/char folder, mock = true.
 * Errors: GV_REASON_CONFIG for a bad profile, GV_REASON_IO for folders.
 */
int gv_mock_run_prepare(gv_cli_t *cli, gv_options_t *o, gv_mock_run_t *m, gv_error_t **err);

/* gv_mock_run_print - print on @f where the mock root is and what it holds (profile, GPUs, folders). */
void gv_mock_run_print(const gv_mock_run_t *m, const gv_options_t *o, FILE *f);

/*
 * gv_mock_run_clear - free what @m holds and zero it; the mock root on disk
 * stays (`gpu-validator mock remove` removes it).  Accepts a zeroed @m.
 */
void gv_mock_run_clear(gv_mock_run_t *m);

#endif
