/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `run --mock`: lay out a mock driver root in a work folder of its own and
 * point the validation options at it, so the ordinary chain validates it.
 */
#ifndef GV_CLI_MOCK_RUN_H
#define GV_CLI_MOCK_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "mock/mock.h"
#include "options.h"

/* The files that make a work folder ours: its stamp and its lock (flock, held through the run). */
#define GV_MOCK_WORK_STAMP ".gpu-validator-mock-work"
#define GV_MOCK_WORK_LOCK ".gpu-validator-mock-work.lock"

typedef struct gv_mock_run {
        int lock_fd;       /* the work folder's lock, held until gv_mock_run_clear(); -1 or 0: none */
        bool created;      /* the work folder was created by a run --mock (its stamp says so) */
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
        char *sysfs_root;  /* heap: <root>/sys with a workload, else NULL */
        char *mofed_ready; /* heap: <root>/run/mellanox/drivers/.driver-ready with a workload, else NULL */
        char *no_host;     /* heap: <work>/no-host (an empty folder) with vm-vgpu, else NULL */
        char *workload;    /* heap: what install laid out ("vm-vgpu/sriov", "container+gds"), or NULL */
} gv_mock_run_t;

/*
 * gv_mock_run_option - one of run's --mock-workload, --mock-vgpu-shape,
 * --mock-gds, --mock-gdrcopy, --mock-rdma, --mock-cc (@opt: its GV_OPT_MOCK_*
 * id; @arg its value or NULL) into @o.  Returns 0, or -EINVAL with *err set
 * (GV_REASON_CONFIG) for an unknown workload or shape.
 */
int gv_mock_run_option(gv_options_t *o, int opt, const char *arg, gv_error_t **err);

/* gv_mock_run_has_workload - whether @o asks for a workload or a workload flag (--mock-workload, -gds, ..., -cc). */
bool gv_mock_run_has_workload(const gv_options_t *o);

/*
 * gv_mock_run_default_components - run --mock's components when none are
 * named, by workload (static string, a --components list): driver,toolkit
 * (none or container), vfio-pci (vm-passthrough), vgpu-manager,vgpu-devices
 * (vm-vgpu), with cc-manager added for --mock-cc.
 */
const char *gv_mock_run_default_components(const gv_options_t *o);

/*
 * gv_mock_run_prepare - create the work folder, install the mock driver root
 * (gv_mock_install), and point o->cfg at it: host root, driver install dir,
 * output dir (unless given), CDI folder, /dev/char folder, mock = true.
 * With a workload (gv_mock_run_has_workload()) install lays it out too, and
 * o->cfg also gets the sysfs root <root>/sys, the MOFED flag file in the root,
 * the status folder <root>/run/nvidia/validations (unless --output-dir), for
 * vm-passthrough / vm-vgpu that default workload config, and for vm-vgpu an
 * empty host root for the vGPU manager lookup (<work>/no-host).
 * Errors: GV_REASON_CONFIG for a bad profile, GV_REASON_IO for folders.
 */
int gv_mock_run_prepare(gv_cli_t *cli, gv_options_t *o, gv_mock_run_t *m, gv_error_t **err);

/* gv_mock_run_print - print on @f where the mock root is and what it holds (profile, GPUs, folders). */
void gv_mock_run_print(const gv_mock_run_t *m, const gv_options_t *o, FILE *f);

/*
 * gv_mock_run_print_next - print on @f the commands to go on with (status, wait, the root's
 * nvidia-smi, mock set, mock remove), each spelled with @prog as the user ran it; `rm -r` of the
 * work folder only when a run --mock created that folder.
 */
void gv_mock_run_print_next(const gv_mock_run_t *m, const gv_options_t *o, const char *prog, FILE *f);

/*
 * gv_mock_run_clear - free what @m holds and zero it; the mock root on disk
 * stays (`gpu-validator mock remove` removes it).  Accepts a zeroed @m.
 */
void gv_mock_run_clear(gv_mock_run_t *m);

#endif
