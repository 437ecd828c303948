/* SPDX-License-Identifier: Apache-2.0 */
/* Installing (and updating) mock driver roots, with the intent record that makes a killed install recoverable. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/sysmacros.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/root/root-internal.h"

void gv_mock_install_result_clear(gv_mock_install_result_t *r)
{
        if (!r)
                return;
        free(r->root);
        free(r->cdi_spec);
        free(r->manifest);
        free(r->profile_name);
        free(r->driver_version);
        free(r->node_name);
        free(r->fallback_reason);
        free(r->workload);
        *r = (gv_mock_install_result_t){ 0 };
}

/* Safe characters for a path component taken from a profile (driver version). */
static bool safe_component(const char *s)
{
        if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      *c == '.' || *c == '-' || *c == '_'))
                        return false;
        return true;
}

static void ictx_free(ictx_t *c)
{
        free(c->root);
        mr_elist_free(&c->now);
        mr_elist_free(&c->fresh);
        mr_elist_free(&c->old);
        mr_elist_free(&c->intent);
}

/* Called before each change to the filesystem (the crash tests' hook). */
void mr_step(ictx_t *c)
{
        c->step++;
        if (c->hook)
                c->hook(c->hook_data, c->step);
}

/*
 * Make sure every folder of @path exists.  @path is relative to the root or
 * absolute; folders created now are recorded (now + fresh), folders an
 * earlier install created stay recorded.
 */
int mr_ensure_dirs(ictx_t *c, const char *path, gv_error_t **err)
{
        bool abs = path[0] == '/';
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return gv_error_oom(err);
        char *s = copy + (abs ? 1 : 0);
        for (;;) {
                char *slash = strchr(s, '/');
                if (slash)
                        *slash = '\0';
                _cleanup_free_ char *full = mr_full_path(c->root, copy);
                if (!full)
                        return gv_error_oom(err);
                struct stat st;
                if (lstat(full, &st) == 0) {
                        if (!S_ISDIR(st.st_mode)) {
                                /* A symlinked folder is fine outside the root (/etc/cdi -> ...), not inside it. */
                                if (!(abs && stat(full, &st) == 0 && S_ISDIR(st.st_mode)))
                                        return gv_error_set(err, ENOTDIR, GV_REASON_CONFIG,
                                                            "%s exists and is not a folder", full);
                        }
                        const entry_t *o = mr_elist_find(&c->old, copy);
                        if (o && o->type == E_DIR && mr_elist_add(&c->now, copy, E_DIR) < 0)
                                return gv_error_oom(err);
                } else if (errno == ENOENT) {
                        if (!c->dry) {
                                mr_step(c);
                                if (mkdir(full, 0755) < 0)
                                        return mr_io_error(err, errno, "create folder", full);
                        }
                        if (mr_elist_add(&c->now, copy, E_DIR) < 0 || mr_elist_add(&c->fresh, copy, E_DIR) < 0)
                                return gv_error_oom(err);
                } else {
                        return mr_io_error(err, errno, "inspect", full);
                }
                if (!slash)
                        break;
                *slash = '/';
                s = slash + 1;
        }
        return 0;
}

static int record(ictx_t *c, const char *path, etype_t type, bool existed, gv_error_t **err)
{
        if (mr_elist_add(&c->now, path, type) < 0 || (!existed && mr_elist_add(&c->fresh, path, type) < 0))
                return gv_error_oom(err);
        return 0;
}

/* Write a regular file atomically; @path relative to the root or absolute. */
int mr_put_file(ictx_t *c, const char *path, const void *data, size_t len, mode_t mode, gv_error_t **err)
{
        _cleanup_free_ char *full = mr_full_path(c->root, path);
        if (!full)
                return gv_error_oom(err);
        bool existed = mr_exists_l(full) && mr_elist_find(&c->old, path);
        if (c->dry)
                return record(c, path, E_FILE, existed, err);
        const char *base;
        _cleanup_close_ int dfd = mr_open_parent(full, &base);
        if (dfd < 0)
                return mr_io_error(err, dfd, "open folder of", full);
        mr_step(c);
        int r = gv_atomic_write_at(dfd, base, data, len, mode, err);
        if (r < 0)
                return gv_error_prefix(err, "write %s", full);
        /* The temporary file was created under the umask; give the final mode explicitly. */
        mr_step(c);
        if (fchmodat(dfd, base, mode, 0) < 0)
                return mr_io_error(err, errno, "chmod", full);
        return record(c, path, E_FILE, existed, err);
}

int mr_copy_file(ictx_t *c, const char *src, const char *path, mode_t mode, gv_error_t **err)
{
        if (c->dry)
                return mr_put_file(c, path, "", 0, mode, err);
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = gv_read_file_at(AT_FDCWD, src, false, MAX_ARTIFACT_BYTES, &data, &len, err);
        if (r < 0)
                return gv_error_prefix(err, "read %s", src);
        return mr_put_file(c, path, data, len, mode, err);
}

/* A symlink @path -> @target, replaced atomically when it points elsewhere. */
int mr_put_link(ictx_t *c, const char *path, const char *target, gv_error_t **err)
{
        _cleanup_free_ char *full = mr_full_path(c->root, path);
        if (!full)
                return gv_error_oom(err);
        bool existed = mr_exists_l(full) && mr_elist_find(&c->old, path);
        if (c->dry)
                return record(c, path, E_LINK, existed, err);
        char buf[4096];
        ssize_t n = readlink(full, buf, sizeof(buf) - 1);
        if (n >= 0) {
                buf[n] = '\0';
                if (strcmp(buf, target) == 0)
                        return record(c, path, E_LINK, existed, err);
        }
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.gv-tmp-%ld", full, (long) getpid()) < 0)
                return gv_error_oom(err);
        mr_step(c);
        (void) unlink(tmp);
        if (symlink(target, tmp) < 0)
                return mr_io_error(err, errno, "create symlink", tmp);
        mr_step(c);
        if (rename(tmp, full) < 0) {
                int e = errno;
                (void) unlink(tmp);
                return mr_io_error(err, e, "rename symlink to", full);
        }
        return record(c, path, E_LINK, existed, err);
}

static int intent_nodes_as_files(ictx_t *c, gv_error_t **err);

/*
 * A device node: a character device (mknod) when *kind is CHAR, else an
 * empty file.  EPERM/EACCES from mknod (user namespace, no CAP_MKNOD) switch
 * *kind to FILES and fill *why.
 */
int mr_put_node(ictx_t *c, const char *path, unsigned major_no, unsigned minor_no, gv_mock_nodes_t *kind,
                char **why, gv_error_t **err)
{
        _cleanup_free_ char *full = mr_full_path(c->root, path);
        if (!full)
                return gv_error_oom(err);
        if (*kind == GV_MOCK_NODES_CHAR) {
                bool existed = mr_exists_l(full) && mr_elist_find(&c->old, path);
                if (c->dry)
                        return record(c, path, E_CHAR, existed, err);
                struct stat st;
                dev_t want = makedev(major_no, minor_no);
                if (lstat(full, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == want)
                        return record(c, path, E_CHAR, existed, err);
                if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode)) {
                        mr_step(c);
                        if (unlink(full) < 0)
                                return mr_io_error(err, errno, "replace", full);
                }
                mr_step(c);
                if (mknod(full, S_IFCHR | 0666, want) == 0) {
                        (void) chmod(full, 0666);
                        return record(c, path, E_CHAR, existed, err);
                }
                if (errno != EPERM && errno != EACCES)
                        return mr_io_error(err, errno, "mknod", full);
                *why = strdup(strerror(errno));
                *kind = GV_MOCK_NODES_FILES;
                /* the intent record must name the nodes as what they will be: files */
                int r = intent_nodes_as_files(c, err);
                if (r < 0)
                        return r;
        }
        return mr_put_file(c, path, "", 0, 0666, err);
}

static int load_profile(const gv_mock_install_opts_t *o, gv_mock_profile_t **out, gv_error_t **err)
{
        const char *name = o->profile && *o->profile ? o->profile : GV_MOCK_DEFAULT_PROFILE;
        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        int r = gv_mock_profile_is_path(name) ? gv_mock_profile_load_file(name, &p, err)
                                      : gv_mock_profile_load_builtin(name, &p, err);
        if (r < 0) {
                if (err && *err && (*err)->reason == GV_REASON_IO)
                        gv_error_set_reason(err, GV_REASON_CONFIG); /* a profile file that cannot be read is a usage error */
                return r;
        }
        if (o->gpus && (r = gv_mock_profile_set_gpu_count(p, o->gpus, err)) < 0)
                return r;
        if (o->node_name && *o->node_name && (r = gv_mock_profile_set_node_name(p, o->node_name, err)) < 0)
                return r;
        if ((r = gv_mock_profile_finalize(p, err)) < 0)
                return r;
        if (!safe_component(p->driver_version))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: driver version \"%s\" is not usable in a "
                                    "file name", p->source ? p->source : name, p->driver_version ? p->driver_version : "");
        *out = TAKE_PTR(p);
        return 0;
}

/*
 * Whether the folder @root holds nothing but (with @temps_ok) temporary files
 * of the manifest, which an install killed while writing its intent record
 * into an empty root leaves.  Returns 1 empty, 0 not, negative errno.
 */
static int root_is_empty(const char *root, bool temps_ok, gv_error_t **err)
{
        _cleanup_close_ int fd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return mr_io_error(err, errno, "open", root);
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d)
                return mr_io_error(err, errno, "list", root);
        (void) TAKE_FD(fd); /* the stream owns it now */
        bool empty = true;
        struct dirent *de;
        while (empty && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
                    !(temps_ok && mr_is_temp_of(de->d_name, GV_MOCK_MANIFEST_NAME)))
                        empty = false;
        return empty ? 1 : 0;
}

/*
 * Check the root: absent (to be created: returns 0, c->root_created), empty
 * (returns 0), or a mock root, finished or not (returns 1, old manifest in
 * *old, its entries in c->old).
 */
static int prepare_root(ictx_t *c, manifest_t *old, gv_error_t **err)
{
        struct stat st;
        if (lstat(c->root, &st) < 0) {
                if (errno != ENOENT)
                        return mr_io_error(err, errno, "inspect", c->root);
                c->root_created = true;
                return 0;
        }
        if (!S_ISDIR(st.st_mode))
                return gv_error_set(err, ENOTDIR, GV_REASON_CONFIG, "%s exists and is not a folder", c->root);
        int r = mr_manifest_read(c->root, old, err);
        if (r == 0) {
                c->root_created = old->root_created;
                for (size_t i = 0; i < old->entries.n; i++)
                        if (mr_elist_add(&c->old, old->entries.v[i].path, old->entries.v[i].type) < 0)
                                return gv_error_oom(err);
                return 1;
        }
        if (r != -ENOENT)
                return gv_error_prefix(err, "%s looks like a mock root but its manifest is unusable", c->root);
        gv_error_free(err);
        r = root_is_empty(c->root, true, err);
        if (r < 0)
                return r;
        if (r == 0)
                return gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG,
                                    "%s is not empty and is not a mock driver root (no %s); refusing to write into "
                                    "it. Choose an empty or new folder.",
                                    c->root, GV_MOCK_MANIFEST_NAME);
        return 0;
}

/*
 * Writes the manifest of @c into @dir: the intent record (state
 * "installing", @entries = everything the install may make or the old
 * manifest listed) or the final one.
 */
static int write_manifest(ictx_t *c, const char *dir, const elist_t *entries, bool installing, gv_error_t **err)
{
        manifest_t m = *c->meta;
        m.entries = *entries;
        m.installing = installing;
        if (!installing)
                m.previous_cdi_spec = NULL;
        mr_step(c);
        return mr_manifest_write(dir, &m, err);
}

static int intent_nodes_as_files(ictx_t *c, gv_error_t **err)
{
        bool changed = false;
        for (size_t i = 0; i < c->intent.n; i++) {
                /* a character device an earlier install made stays listed as one until it is replaced */
                const entry_t *o = mr_elist_find(&c->old, c->intent.v[i].path);
                if (c->intent.v[i].type == E_CHAR && !(o && o->type == E_CHAR)) {
                        c->intent.v[i].type = E_FILE;
                        changed = true;
                }
        }
        c->meta->device_nodes = GV_MOCK_NODES_FILES;
        return changed ? write_manifest(c, c->root, &c->intent, true, err) : 0;
}

/*
 * Puts the intent record in place before anything else: for a new root, a
 * staging folder beside it gets the manifest and is renamed to the root (so
 * the root never exists without its record); otherwise the manifest is
 * written into the root.  Leftovers of a killed install (a staging folder,
 * temporary files) are removed first.
 */
static int start_install(ictx_t *c, gv_error_t **err)
{
        if (c->root_created && !mr_exists_l(c->root)) {
                _cleanup_free_ char *stage = mr_stage_path(c->root);
                if (!stage)
                        return gv_error_oom(err);
                _cleanup_free_ char *parent = strndup(c->root, (size_t) (strrchr(c->root, '/') - c->root));
                if (!parent)
                        return gv_error_oom(err);
                int r;
                if (*parent && (r = gv_mkdir_p(parent, 0755, err)) < 0)
                        return r;
                mr_step(c);
                if ((r = mr_stage_clean(stage, err)) < 0)
                        return r;
                mr_step(c);
                if (mkdir(stage, 0755) < 0)
                        return mr_io_error(err, errno, "create folder", stage);
                if ((r = write_manifest(c, stage, &c->intent, true, err)) < 0) {
                        (void) mr_stage_clean(stage, NULL);
                        return r;
                }
                mr_step(c);
                if (rename(stage, c->root) < 0) {
                        r = mr_io_error(err, errno, "rename to", c->root);
                        (void) mr_stage_clean(stage, NULL);
                        return r;
                }
                return 0;
        }
        mr_step(c);
        (void) mr_remove_manifest_temps(c->root);
        return write_manifest(c, c->root, &c->intent, true, err);
}

/*
 * Plans the layout: a dry run of mr_lay_out() that records every folder, file,
 * link and node install will make, then the intent record c->intent: that
 * plan plus every entry of the old manifest (a killed update must still be
 * able to remove either).
 */
static int plan_layout(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, const char *cdi_dir,
                       const char *yaml, gv_mock_nodes_t kind, gv_error_t **err)
{
        _cleanup_free_ char *why = NULL, *spec = NULL;
        c->dry = true;
        int r = mr_lay_out(c, o, p, cdi_dir, yaml, &kind, &why, &spec, err);
        c->dry = false;
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->now.n; i++)
                if (mr_elist_add(&c->intent, c->now.v[i].path, c->now.v[i].type) < 0)
                        return gv_error_oom(err);
        for (size_t i = 0; i < c->old.n; i++)
                if (!mr_elist_find(&c->intent, c->old.v[i].path) &&
                    mr_elist_add(&c->intent, c->old.v[i].path, c->old.v[i].type) < 0)
                        return gv_error_oom(err);
        mr_elist_free(&c->now);
        mr_elist_free(&c->fresh);
        return 0;
}

/*
 * After the layout is in place: what the old manifest listed and the new
 * layout lacks goes, folders too when empty (a folder that stays, holding
 * something else, stays listed so remove still tries it).
 */
static int drop_stale(ictx_t *c, const manifest_t *old, const char *cdi_spec, gv_error_t **err)
{
        elist_t stale = { 0 };
        int r = 0;
        for (size_t i = 0; i < c->old.n && r == 0; i++)
                if (!mr_elist_find(&c->now, c->old.v[i].path) &&
                    mr_elist_add(&stale, c->old.v[i].path, c->old.v[i].type) < 0)
                        r = gv_error_oom(err);
        if (r == 0 && stale.n) {
                mr_step(c);
                mr_remove_entries(c->root, &stale, old->cdi_spec, old->previous_cdi_spec ? old->previous_cdi_spec : cdi_spec,
                                  NULL, NULL);
        }
        for (size_t i = 0; i < stale.n && r == 0; i++) {
                if (stale.v[i].type != E_DIR)
                        continue;
                _cleanup_free_ char *full = mr_full_path(c->root, stale.v[i].path);
                if (full && mr_exists_l(full) && mr_elist_add(&c->now, stale.v[i].path, E_DIR) < 0)
                        r = gv_error_oom(err);
        }
        mr_elist_free(&stale);
        return r;
}

/*
 * Undoes an install that failed after its intent record was in place: what
 * this call created goes; the old manifest is put back when there was one,
 * else the intent record goes, and the root when this call made it.
 */
static void roll_back(ictx_t *c, const manifest_t *old, int existed, const char *cdi_spec)
{
        mr_remove_entries(c->root, &c->fresh, cdi_spec, old->cdi_spec, NULL, NULL);
        (void) mr_sweep_temps(c->root, &c->intent, cdi_spec, old->cdi_spec);
        if (existed == 1) {
                (void) mr_manifest_write(c->root, old, NULL);
                return;
        }
        _cleanup_free_ char *mpath = gv_path_join(c->root, GV_MOCK_MANIFEST_NAME);
        if (mpath)
                (void) unlink(mpath);
        if (c->root_created)
                (void) rmdir(c->root);
}

/* The absolute root (no trailing '/', not "/", UTF-8) and CDI folder of @o, heap strings. */
static int resolve_paths(const gv_mock_install_opts_t *o, char **root, char **cdi_dir, gv_error_t **err)
{
        char *r = *root = mr_absolute(o->root);
        if (!r)
                return gv_error_oom(err);
        while (strlen(r) > 1 && r[strlen(r) - 1] == '/')
                r[strlen(r) - 1] = '\0';
        if (strcmp(r, "/") == 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "refusing to use / as a mock driver root");
        if (!mr_valid_utf8(r)) /* its paths go into the CDI spec, and YAML holds UTF-8 text only */
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: the root's path is not valid UTF-8, which the "
                                    "CDI spec (YAML) cannot hold; choose another folder", r);
        *cdi_dir = o->cdi_dir && *o->cdi_dir ? mr_absolute(o->cdi_dir) : gv_path_join(r, "etc/cdi");
        if (!*cdi_dir)
                return gv_error_oom(err);
        return 0;
}

/* The checks gv_mock_install() makes before it touches anything. */
static int check_opts(const gv_mock_install_opts_t *o, gv_error_t **err)
{
        if (!o || !o->root || !*o->root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no root given");
        if (!o->nvml_lib || !o->nvidia_smi)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "the mock library and nvidia-smi to copy are not "
                                                                    "given (gv_mock_locate_artifacts())");
        if (o->gpus && (o->gpus < GV_MOCK_MIN_GPUS || o->gpus > GV_MOCK_MAX_GPUS))
                return gv_error_set(err, ERANGE, GV_REASON_CONFIG, "--gpus %u: expected %u..%u", o->gpus,
                                    GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
        return mr_workload_check(o, err);
}

/* What one install works with besides the install context. */
typedef struct install_run {
        const gv_mock_install_opts_t *o;
        const gv_mock_profile_t *p;
        const char *yaml;        /* the finalized profile as written beside the library */
        char *cdi_dir;           /* absolute (heap) */
        char *spec_abs;          /* <cdi_dir>/GV_MOCK_CDI_SPEC_NAME (heap) */
        char *cdi_spec;          /* the spec lay_out() wrote (heap) */
        char *why;               /* why mknod() was refused (heap), or NULL */
        char *workload;          /* mr_workload_describe() (heap), or NULL */
        manifest_t old;          /* the previous manifest, when there was one */
        int existed;             /* 1: the root held a manifest (prepare_root()) */
        gv_mock_nodes_t asked;   /* the kind of device nodes asked for (DEFAULT resolved) */
        gv_mock_nodes_t kind;    /* the kind made */
} install_run_t;

static void install_run_clear(install_run_t *run)
{
        free(run->cdi_dir);
        free(run->spec_abs);
        free(run->cdi_spec);
        free(run->why);
        free(run->workload);
        mr_manifest_free(&run->old);
}

/*
 * The steps of an install once the root is checked: 1. the intent record,
 * 2. the layout, 3. stale entries go, 4. the final manifest.  A failure
 * after the intent record is in place is rolled back.
 */
static int run_steps(ictx_t *c, install_run_t *run, manifest_t *meta, gv_error_t **err)
{
        int r = plan_layout(c, run->o, run->p, run->cdi_dir, run->yaml, run->kind, err);
        if (r < 0)
                return r;
        if ((r = start_install(c, err)) < 0)
                return r;
        (void) mr_sweep_temps(c->root, &c->intent, run->spec_abs, meta->previous_cdi_spec);
        r = mr_lay_out(c, run->o, run->p, run->cdi_dir, run->yaml, &run->kind, &run->why, &run->cdi_spec, err);
        if (r == 0)
                r = drop_stale(c, &run->old, run->cdi_spec, err);
        if (r == 0) {
                meta->device_nodes = run->kind;
                r = write_manifest(c, c->root, &c->now, false, err);
        }
        if (r < 0)
                roll_back(c, &run->old, run->existed, run->cdi_spec ? run->cdi_spec : run->spec_abs);
        return r;
}

/* What a finished install reports (*out, heap strings); -ENOMEM. */
static int fill_result(const ictx_t *c, install_run_t *run, gv_mock_install_result_t *out, gv_error_t **err)
{
        const gv_mock_profile_t *p = run->p;
        char *why = TAKE_PTR(run->why); /* the result owns it from here, and the workload text too */
        char *workload = TAKE_PTR(run->workload);
        gv_mock_install_result_t res = {
                .root = strdup(c->root),
                .cdi_spec = strdup(run->cdi_spec),
                .manifest = gv_path_join(c->root, GV_MOCK_MANIFEST_NAME),
                .profile_name = strdup(p->name ? p->name : p->source),
                .driver_version = strdup(p->driver_version),
                .node_name = strdup(p->node_name ? p->node_name : ""),
                .gpu_count = p->device_count,
                .device_nodes = run->kind,
                .device_nodes_fallback = run->asked == GV_MOCK_NODES_CHAR && run->kind == GV_MOCK_NODES_FILES,
                .fallback_reason = why,
                .updated = run->existed == 1 && !run->old.installing,
                .recovered = run->existed == 1 && run->old.installing,
                .entries = (unsigned) c->now.n,
                .workload = workload,
        };
        if (!res.root || !res.cdi_spec || !res.manifest || !res.profile_name || !res.driver_version ||
            !res.node_name) {
                gv_mock_install_result_clear(&res);
                return gv_error_oom(err);
        }
        *out = res;
        return 0;
}

int gv_mock_install(const gv_mock_install_opts_t *o, gv_mock_install_result_t *out, gv_error_t **err)
{
        int r = check_opts(o, err);
        if (r < 0)
                return r;
        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        if ((r = load_profile(o, &p, err)) < 0)
                return r;
        _cleanup_free_ char *yaml = NULL;
        if ((r = gv_mock_profile_to_yaml(p, &yaml, err)) < 0)
                return r;

        _cleanup_(ictx_free) ictx_t c = { .hook = o->step_hook, .hook_data = o->step_data };
        _cleanup_(install_run_clear) install_run_t run = { .o = o, .p = p, .yaml = yaml };
        if ((r = resolve_paths(o, &c.root, &run.cdi_dir, err)) < 0)
                return r;
        if ((run.existed = prepare_root(&c, &run.old, err)) < 0)
                return run.existed;

        run.kind = o->device_nodes;
        if (run.kind == GV_MOCK_NODES_DEFAULT)
                run.kind = geteuid() == 0 ? GV_MOCK_NODES_CHAR : GV_MOCK_NODES_FILES;
        run.asked = run.kind;
        run.spec_abs = gv_path_join(run.cdi_dir, GV_MOCK_CDI_SPEC_NAME);
        if (!run.spec_abs)
                return gv_error_oom(err);
        if (mr_workload_describe(o, &run.workload) < 0)
                return gv_error_oom(err);
        const manifest_t *old = &run.old;
        manifest_t meta = {
                .profile = p->name ? p->name : p->source,
                .profile_source = p->source,
                .node_name = p->node_name,
                .driver_version = p->driver_version,
                .cdi_spec = run.spec_abs,
                .previous_cdi_spec = old->cdi_spec && strcmp(old->cdi_spec, run.spec_abs) != 0 ? old->cdi_spec
                                                                                                : old->previous_cdi_spec,
                .gpu_count = p->device_count,
                .device_nodes = run.kind,
                .root_created = c.root_created,
                .dev_char_links = o->dev_char_links,
                .workload = run.workload,
        };
        c.meta = &meta;
        if ((r = run_steps(&c, &run, &meta, err)) < 0)
                return r;
        return fill_result(&c, &run, out, err);
}
