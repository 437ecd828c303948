/* SPDX-License-Identifier: Apache-2.0 */
#include "mock-run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/mock.h"

void gv_mock_run_clear(gv_mock_run_t *m)
{
        free(m->work_dir);
        free(m->root);
        free(m->status_dir);
        free(m->cdi_dir);
        free(m->dev_char);
        free(m->profile);
        free(m->device_nodes);
        gv_strv_freep(&m->cdi_list);
        gv_strv_freep(&m->empty_list);
        free(m->sysfs_root);
        free(m->mofed_ready);
        free(m->no_host);
        free(m->workload);
        memset(m, 0, sizeof(*m));
}

int gv_mock_run_option(gv_options_t *o, int opt, const char *arg, gv_error_t **err)
{
        gv_mock_workload_t w;
        switch (opt) {
        case GV_OPT_MOCK_WORKLOAD:
                if (!arg || gv_mock_workload_parse(arg, &w) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "--mock-workload %s: expected container, vm-passthrough or vm-vgpu",
                                            arg ? arg : "");
                o->mock_workload = (int) w;
                return 0;
        case GV_OPT_MOCK_VGPU_SHAPE:
                if (!arg || (strcmp(arg, "mdev") != 0 && strcmp(arg, "sriov") != 0))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--mock-vgpu-shape %s: expected mdev or sriov",
                                            arg ? arg : "");
                o->mock_vgpu_shape = (int) (strcmp(arg, "sriov") == 0 ? GV_MOCK_VGPU_SRIOV : GV_MOCK_VGPU_MDEV);
                o->mock_vgpu_shape_set = true;
                return 0;
        case GV_OPT_MOCK_GDS:
                o->mock_gds = true;
                return 0;
        case GV_OPT_MOCK_GDRCOPY:
                o->mock_gdrcopy = true;
                return 0;
        case GV_OPT_MOCK_RDMA:
                o->mock_rdma = true;
                return 0;
        case GV_OPT_MOCK_CC:
                o->mock_cc = true;
                return 0;
        default:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        }
}

bool gv_mock_run_has_workload(const gv_options_t *o)
{
        return o->mock_workload != GV_MOCK_WORKLOAD_NONE || o->mock_vgpu_shape_set || o->mock_gds || o->mock_gdrcopy ||
               o->mock_rdma || o->mock_cc;
}

const char *gv_mock_run_default_components(const gv_options_t *o)
{
        switch ((gv_mock_workload_t) o->mock_workload) {
        case GV_MOCK_WORKLOAD_VM_PASSTHROUGH:
                return o->mock_cc ? "vfio-pci,cc-manager" : "vfio-pci";
        case GV_MOCK_WORKLOAD_VM_VGPU:
                return o->mock_cc ? "vgpu-manager,vgpu-devices,cc-manager" : "vgpu-manager,vgpu-devices";
        default:
                return o->mock_cc ? "driver,toolkit,cc-manager" : "driver,toolkit";
        }
}

static char *default_work_dir(void)
{
        char *s = NULL;
        const char *base = gv_env("XDG_RUNTIME_DIR");
        if (!base || access(base, W_OK) < 0)
                base = gv_env("TMPDIR");
        if (!base || access(base, W_OK) < 0)
                base = "/tmp";
        if (asprintf(&s, "%s/gpu-validator-mock-%u", base, (unsigned) getuid()) < 0)
                return NULL;
        return s;
}

static int make_dir(const char *path, gv_error_t **err)
{
        return gv_mkdir_p(path, 0755, err);
}

/*
 * The work folder sits in a shared place (/tmp) under a predictable name:
 * refuse one that another user could have planted or can change -- a
 * symlink, a folder owned by someone else, or one others may write to --
 * since the run loads a library from it and removes what its manifest lists.
 */
static int check_work_dir(const char *path, gv_error_t **err)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder %s: %s", path, strerror(errno));
        const char *why = S_ISLNK(st.st_mode)          ? "is a symbolic link"
                          : !S_ISDIR(st.st_mode)        ? "is not a folder"
                          : st.st_uid != geteuid()      ? "belongs to another user"
                          : (st.st_mode & (S_IWGRP | S_IWOTH)) ? "is writable by other users"
                                                               : NULL;
        if (why)
                return gv_error_set(err, EPERM, GV_REASON_CONFIG,
                                    "mock work folder %s %s; refusing to use it (remove it, or choose another with "
                                    "--mock-dir)",
                                    path, why);
        return 0;
}

/*
 * With a workload: sysfs and the MOFED flag in the root, the vm-* workload
 * config, and for vm-vgpu a host root without a vGPU manager (an empty folder
 * of ours), so the manager is found in the mock root, never on this machine.
 */
static int point_at_workload(gv_options_t *o, gv_mock_run_t *m, gv_error_t **err)
{
        gv_config_t *c = &o->cfg;
        m->sysfs_root = gv_path_join(m->root, "sys");
        m->mofed_ready = gv_path_join(m->root, "run/mellanox/drivers/.driver-ready");
        if (!m->sysfs_root || !m->mofed_ready)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        c->sysfs_root = m->sysfs_root;
        c->mofed_ready_file = m->mofed_ready;
        gv_mock_workload_t w = (gv_mock_workload_t) o->mock_workload;
        if (w == GV_MOCK_WORKLOAD_VM_PASSTHROUGH || w == GV_MOCK_WORKLOAD_VM_VGPU)
                c->default_workload_config = gv_mock_workload_name(w);
        if (w == GV_MOCK_WORKLOAD_VM_VGPU) {
                m->no_host = gv_path_join(m->work_dir, "no-host");
                if (!m->no_host)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (make_dir(m->no_host, err) < 0)
                        return gv_error_prefix(err, "mock work folder");
                c->host_root_ctr_path = m->no_host;
        }
        return 0;
}

int gv_mock_run_prepare(gv_cli_t *cli, gv_options_t *o, gv_mock_run_t *m, gv_error_t **err)
{
        memset(m, 0, sizeof(*m));
        _cleanup_free_ char *asked = o->mock_dir ? strdup(o->mock_dir) : default_work_dir();
        if (!asked)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        int r = make_dir(asked, err);
        if (r < 0)
                return gv_error_prefix(err, "mock work folder");
        if ((r = check_work_dir(asked, err)) < 0)
                return r;
        /* Absolute from here on: the paths go into markers and the CDI spec. */
        m->work_dir = realpath(asked, NULL);
        if (!m->work_dir)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder %s: %s", asked, strerror(errno));
        m->root = gv_path_join(m->work_dir, "driver-root");
        bool workload = gv_mock_run_has_workload(o);
        if (o->output_dir_set)
                m->status_dir = strdup(o->cfg.output_dir);
        else if (workload) /* where install writes the driver container's flags */
                m->status_dir = gv_path_join(m->root, "run/nvidia/validations");
        else
                m->status_dir = gv_path_join(m->work_dir, "validations");
        m->cdi_dir = gv_path_join(m->work_dir, "cdi");
        m->dev_char = gv_path_join(m->work_dir, "dev-char");
        m->cdi_list = calloc(2, sizeof(char *));
        m->empty_list = calloc(1, sizeof(char *));
        if (!m->root || !m->status_dir || !m->cdi_dir || !m->dev_char || !m->cdi_list ||
            !m->empty_list || !(m->cdi_list[0] = strdup(m->cdi_dir)))
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");

        if (make_dir(m->cdi_dir, err) < 0 || make_dir(m->dev_char, err) < 0)
                return gv_error_prefix(err, "mock work folder");

        _cleanup_(gv_mock_artifacts_clear) gv_mock_artifacts_t art = { 0 };
        r = gv_mock_locate_artifacts(cli->exe_dir, gv_env("GPU_VALIDATOR_MOCK_DIR"), &art, err);
        if (r < 0)
                return r;

        gv_mock_install_opts_t io = {
                .root = m->root,
                .profile = o->mock_profile,
                .gpus = o->mock_gpus,
                .node_name = o->cfg.node_name,
                .cdi_dir = m->cdi_dir,
                /* Plain files: validation needs no real character devices, and a
                 * world-openable 195:N node in a temporary folder is not wanted. */
                .device_nodes = GV_MOCK_NODES_FILES,
                .nvml_lib = art.nvml_lib,
                .nvidia_smi = art.nvidia_smi,
                .workload = (gv_mock_workload_t) o->mock_workload,
                .vgpu_shape = (gv_mock_vgpu_shape_t) o->mock_vgpu_shape,
                .gds = o->mock_gds,
                .gdrcopy = o->mock_gdrcopy,
                .rdma = o->mock_rdma,
                .cc = o->mock_cc,
        };
        _cleanup_(gv_mock_install_result_clear) gv_mock_install_result_t res = { 0 };
        r = gv_mock_install(&io, &res, err);
        if (r < 0)
                return gv_error_prefix(err, "mock install %s", m->root);
        if (res.recovered)
                gv_cli_logf(cli, GV_LOG_INFO, "mock", "", "finished the interrupted mock install in %s", m->root);
        if (res.device_nodes_fallback)
                gv_cli_logf(cli, GV_LOG_WARN, "mock", "", "mknod refused (%s): device nodes are plain files",
                            res.fallback_reason ? res.fallback_reason : "?");
        m->profile = strdup(res.profile_name ? res.profile_name : o->mock_profile);
        m->device_nodes = strdup(gv_mock_nodes_name(res.device_nodes));
        m->gpus = res.gpu_count;
        m->workload = res.workload ? strdup(res.workload) : NULL;
        if (!m->profile || !m->device_nodes || (res.workload && !m->workload))
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");

        /* Point the ordinary chain at the mock root: the mock root as the
         * containerised driver root (cfg.mock skips the host-driver probe, so a
         * real driver on this machine never takes part), folders of our own for
         * markers, CDI and /dev/char.  The host root stays "/": CDI folders and
         * the device paths in the CDI spec are host paths. */
        gv_config_t *c = &o->cfg;
        c->host_root = "/";
        c->host_root_ctr_path = NULL; /* not an operator pod's /host either */
        c->driver_install_dir = m->root;
        c->driver_install_dir_ctr_path = m->root;
        c->output_dir = m->status_dir;
        c->dev_char_dir = m->dev_char;
        c->cdi_dirs = (const char *const *) m->cdi_list;
        c->runtime_configs = (const char *const *) m->empty_list;
        c->mock = true;
        return workload ? point_at_workload(o, m, err) : 0;
}

void gv_mock_run_print(const gv_mock_run_t *m, const gv_options_t *o, FILE *f)
{
        fprintf(f,
                "mock driver root  %s\n"
                "  profile         %s, %u GPUs, device nodes: %s\n"
                "  workload        %s\n"
                "  status folder   %s\n"
                "  CDI spec folder %s\n"
                "  remove with     gpu-validator mock remove --root %s\n"
                "                  (the whole work folder: rm -r %s)\n\n",
                m->root, m->profile, m->gpus, m->device_nodes, m->workload ? m->workload : "none",
                o->cfg.output_dir, m->cdi_dir, m->root, m->work_dir);
}
