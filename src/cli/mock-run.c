/* SPDX-License-Identifier: Apache-2.0 */
#include "mock-run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/mock.h"

void gv_mock_run_clear(gv_mock_run_t *m)
{
        if (m->lock_fd > 0)
                close(m->lock_fd); /* releases the work folder's lock */
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
                return gv_error_oom(err);
        c->sandbox.sysfs_root = m->sysfs_root;
        c->sandbox.mofed_ready_file = m->mofed_ready;
        gv_mock_workload_t w = (gv_mock_workload_t) o->mock_workload;
        if (w == GV_MOCK_WORKLOAD_VM_PASSTHROUGH || w == GV_MOCK_WORKLOAD_VM_VGPU)
                c->sandbox.default_workload_config = gv_mock_workload_name(w);
        if (w == GV_MOCK_WORKLOAD_VM_VGPU) {
                m->no_host = gv_path_join(m->work_dir, "no-host");
                if (!m->no_host)
                        return gv_error_oom(err);
                if (make_dir(m->no_host, err) < 0)
                        return gv_error_prefix(err, "mock work folder");
                c->driver.host_root_ctr_path = m->no_host;
        }
        return 0;
}

/* The names a work folder of ours holds (a folder with anything else is someone else's). */
static bool ours(const char *name)
{
        static const char *const names[] = { GV_MOCK_WORK_STAMP, GV_MOCK_WORK_LOCK, "driver-root", "validations",
                                              "cdi", "dev-char", "no-host" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        /* the stamp's temporary file while another run writes it (gv_atomic_write_at) */
        return strncmp(name, "." GV_MOCK_WORK_STAMP ".", strlen("." GV_MOCK_WORK_STAMP ".")) == 0;
}

/*
 * Whether @path may be used as a work folder: it holds our stamp, or nothing but what a work
 * folder holds (one from before the stamp: driver-root/ then must be a mock root).  A folder of
 * someone else's (--mock-dir ~) is refused, as `mock install --root` refuses one.
 */
static int check_work_contents(const char *path, gv_error_t **err)
{
        _cleanup_closedir_ DIR *d = opendir(path);
        if (!d)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder %s: %s", path, strerror(errno));
        const char *foreign = NULL;
        bool stamped = false, has_root = false;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                stamped |= strcmp(de->d_name, GV_MOCK_WORK_STAMP) == 0;
                has_root |= strcmp(de->d_name, "driver-root") == 0;
                if (!ours(de->d_name) && !foreign)
                        foreign = strdupa(de->d_name);
        }
        if (!stamped && !foreign && has_root) {
                _cleanup_free_ char *manifest = gv_path_join(path, "driver-root/" GV_MOCK_MANIFEST_NAME);
                if (!manifest)
                        return gv_error_oom(err);
                if (access(manifest, F_OK) < 0)
                        foreign = "driver-root";
        }
        if (stamped || !foreign)
                return 0;
        return gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG,
                            "mock work folder %s is not empty and is not one of gpu-validator's (it holds %s, and no "
                            "%s); refusing to write into it. Choose a new or empty folder with --mock-dir.",
                            path, foreign, GV_MOCK_WORK_STAMP);
}

/*
 * Take the work folder's lock (flock on GV_MOCK_WORK_LOCK, held until gv_mock_run_clear()), so
 * that two `run --mock` on one folder never install and validate at once: a second one says so
 * and waits.  SIGTERM/SIGINT end the wait (GV_REASON_INTERRUPTED).
 */
static int lock_work_dir(gv_cli_t *cli, gv_mock_run_t *m, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(m->work_dir, GV_MOCK_WORK_LOCK);
        if (!path)
                return gv_error_oom(err);
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder lock %s: %s", path, strerror(errno));
        m->lock_fd = fd;
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "mock work folder lock %s is not a regular file", path);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                return 0;
        if (errno != EWOULDBLOCK)
                return gv_error_set(err, errno, GV_REASON_IO, "lock %s: %s", path, strerror(errno));
        gv_cli_logf(cli, GV_LOG_WARN, "mock", "",
                    "another `gpu-validator run --mock` is using %s; waiting for it to finish (or give this one its "
                    "own folder with --mock-dir)", m->work_dir);
        while (flock(fd, LOCK_EX) < 0) {
                if (errno != EINTR)
                        return gv_error_set(err, errno, GV_REASON_IO, "lock %s: %s", path, strerror(errno));
                if (cli->stop && *cli->stop)
                        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED,
                                            "interrupted while waiting for the other run in %s", m->work_dir);
        }
        return 0;
}

/* The stamp that makes the folder ours, written once (under the lock); whether we created the folder. */
static int stamp_work_dir(gv_mock_run_t *m, bool created, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(m->work_dir, GV_MOCK_WORK_STAMP);
        if (!path)
                return gv_error_oom(err);
        _cleanup_free_ char *text = NULL;
        if (gv_read_file_at(AT_FDCWD, path, true, 4096, &text, NULL, err) == 0) {
                m->created = strstr(text, "created=yes") != NULL;
                return 0;
        }
        gv_error_free(err);
        m->created = created;
        const char *content = created ? "# gpu-validator run --mock work folder\ncreated=yes\n"
                                      : "# gpu-validator run --mock work folder\ncreated=no\n";
        _cleanup_close_ int dfd = open(m->work_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (dfd < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder %s: %s", m->work_dir, strerror(errno));
        return gv_atomic_write_at(dfd, GV_MOCK_WORK_STAMP, content, strlen(content), 0644, err);
}

int gv_mock_run_prepare(gv_cli_t *cli, gv_options_t *o, gv_mock_run_t *m, gv_error_t **err)
{
        memset(m, 0, sizeof(*m));
        m->lock_fd = -1;
        _cleanup_free_ char *asked = o->mock_dir ? strdup(o->mock_dir) : default_work_dir();
        if (!asked)
                return gv_error_oom(err);
        struct stat st;
        bool created = lstat(asked, &st) < 0 && errno == ENOENT;
        int r = make_dir(asked, err);
        if (r < 0)
                return gv_error_prefix(err, "mock work folder");
        if ((r = check_work_dir(asked, err)) < 0 || (r = check_work_contents(asked, err)) < 0)
                return r;
        /* Absolute from here on: the paths go into markers and the CDI spec. */
        m->work_dir = realpath(asked, NULL);
        if (!m->work_dir)
                return gv_error_set(err, errno, GV_REASON_IO, "mock work folder %s: %s", asked, strerror(errno));
        if ((r = lock_work_dir(cli, m, err)) < 0 || (r = stamp_work_dir(m, created, err)) < 0)
                return r;
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
                return gv_error_oom(err);

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
                .node_name = o->cfg.kube.node_name,
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
                return gv_error_oom(err);

        /* Point the ordinary chain at the mock root: the mock root as the
         * containerised driver root (cfg.mock skips the host-driver probe, so a
         * real driver on this machine never takes part), folders of our own for
         * markers, CDI and /dev/char.  The host root stays "/": CDI folders and
         * the device paths in the CDI spec are host paths. */
        gv_config_t *c = &o->cfg;
        c->driver.host_root = "/";
        c->driver.host_root_ctr_path = NULL; /* not an operator pod's /host either */
        c->driver.driver_install_dir = m->root;
        c->driver.driver_install_dir_ctr_path = m->root;
        c->output_dir = m->status_dir;
        c->driver.dev_char_dir = m->dev_char;
        c->toolkit.cdi_dirs = (const char *const *) m->cdi_list;
        c->toolkit.runtime_configs = (const char *const *) m->empty_list;
        c->driver.mock = true;
        return workload ? point_at_workload(o, m, err) : 0;
}

void gv_mock_run_print(const gv_mock_run_t *m, const gv_options_t *o, FILE *f)
{
        fprintf(f,
                "mock driver root  %s\n"
                "  profile         %s, %u GPUs, device nodes: %s\n"
                "  workload        %s\n"
                "  status folder   %s\n"
                "  CDI spec folder %s\n\n",
                m->root, m->profile, m->gpus, m->device_nodes, m->workload ? m->workload : "none",
                o->cfg.output_dir, m->cdi_dir);
}

void gv_mock_run_print_next(const gv_mock_run_t *m, const gv_options_t *o, const char *prog, FILE *f)
{
        const char *last = o->components && o->components[0] ? o->components[0] : "driver";
        for (char **c = o->components; c && *c; c++)
                last = *c;
        fprintf(f,
                "Next:\n"
                "  %s status --output-dir %s\n"
                "  %s wait %s --output-dir %s --timeout 10\n"
                "  %s/usr/bin/nvidia-smi   # the mock GPUs, as NVIDIA's tool shows them\n"
                "  %s mock set --root %s --gpu 0 temperature_c=95\n"
                "  %s mock remove --root %s\n",
                prog, o->cfg.output_dir, prog, last, o->cfg.output_dir, m->root, prog, m->root, prog, m->root);
        if (m->created)
                fprintf(f, "  rm -r %s   # the whole work folder, after mock remove\n", m->work_dir);
}
