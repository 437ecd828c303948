/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mock driver roots (see mockroot.h and docs/mock-driver-root.md).
 */
#include "mockroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"
#include "nvml/profile.h"

#define MANIFEST_KIND "gpu-validator-mock-root"
#define MANIFEST_VERSION 1
/* Largest artifact we copy (the mock library and nvidia-smi are far smaller). */
#define MAX_ARTIFACT_BYTES ((size_t) 256 * 1024 * 1024)
#define MAX_MANIFEST_BYTES ((size_t) 4 * 1024 * 1024)

typedef enum etype { E_DIR, E_FILE, E_LINK, E_CHAR } etype_t;

static const char *const etype_names[] = { "dir", "file", "link", "char" };

typedef struct entry {
        char *path; /* relative to the root, or absolute when outside it */
        etype_t type;
} entry_t;

typedef struct elist {
        entry_t *v;
        size_t n, cap;
} elist_t;

static void elist_free(elist_t *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].path);
        free(l->v);
        *l = (elist_t){ 0 };
}

static const entry_t *elist_find(const elist_t *l, const char *path)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].path, path) == 0)
                        return &l->v[i];
        return NULL;
}

static int elist_add(elist_t *l, const char *path, etype_t type)
{
        for (size_t i = 0; i < l->n; i++) {
                if (strcmp(l->v[i].path, path) == 0) {
                        l->v[i].type = type;
                        return 0;
                }
        }
        if (l->n == l->cap) {
                size_t nc = l->cap ? 2 * l->cap : 16;
                entry_t *nv = realloc(l->v, nc * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                l->v = nv;
                l->cap = nc;
        }
        char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        l->v[l->n++] = (entry_t){ .path = p, .type = type };
        return 0;
}

const char *gv_mock_nodes_name(gv_mock_nodes_t kind)
{
        switch (kind) {
        case GV_MOCK_NODES_CHAR:
                return "char";
        case GV_MOCK_NODES_FILES:
                return "files";
        default:
                return "default";
        }
}

/* ---- artifacts ---- */

void gv_mock_artifacts_clear(gv_mock_artifacts_t *a)
{
        if (!a)
                return;
        free(a->nvml_lib);
        free(a->nvidia_smi);
        *a = (gv_mock_artifacts_t){ 0 };
}

static bool is_file(const char *path)
{
        struct stat st;
        return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int gv_mock_locate_artifacts(const char *exe_dir, const char *override_dir, gv_mock_artifacts_t *out,
                             gv_error_t **err)
{
        struct place {
                const char *lib_dir, *lib_rel, *smi_rel;
        } places[3];
        size_t n = 0;
        if (override_dir && *override_dir)
                places[n++] = (struct place){ override_dir, "libnvidia-ml.so.1", "nvidia-smi" };
        if (exe_dir && *exe_dir) {
                places[n++] = (struct place){ exe_dir, "../../mock/nvml/libnvidia-ml.so.1",
                                                   "../../mock/smi/nvidia-smi" };
                places[n++] = (struct place){ exe_dir, "../lib/gpu-validator/libnvidia-ml.so.1",
                                                   "../lib/gpu-validator/nvidia-smi" };
        }
        char *tried = NULL;
        size_t tried_len = 0;
        _cleanup_fclose_ FILE *tf = open_memstream(&tried, &tried_len);
        if (!tf)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *lib = gv_path_join(places[i].lib_dir, places[i].lib_rel);
                _cleanup_free_ char *smi = gv_path_join(places[i].lib_dir, places[i].smi_rel);
                if (!lib || !smi)
                        break;
                if (is_file(lib) && is_file(smi)) {
                        _cleanup_free_ char *rl = realpath(lib, NULL);
                        _cleanup_free_ char *rs = realpath(smi, NULL);
                        if (!rl || !rs)
                                continue;
                        (void) fclose(TAKE_PTR(tf)); /* 'tried' is dropped */
                        free(tried);
                        out->nvml_lib = TAKE_PTR(rl);
                        out->nvidia_smi = TAKE_PTR(rs);
                        return 0;
                }
                fprintf(tf, "\n  %s + %s%s", lib, smi, i == 0 && override_dir ? " (GPU_VALIDATOR_MOCK_DIR)" : "");
        }
        if (fclose(TAKE_PTR(tf)) != 0) { /* out of memory: name no half list */
                free(tried);
                tried = NULL;
        }
        int r = gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                             "mock libnvidia-ml.so.1 and nvidia-smi not found (build them, or set "
                             "GPU_VALIDATOR_MOCK_DIR to a folder holding both); tried:%s",
                             tried && *tried ? tried : " (nowhere)");
        free(tried);
        return r;
}

/* ---- helpers ---- */

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
        *r = (gv_mock_install_result_t){ 0 };
}

/* Absolute form of @p (which need not exist), without "." / ".." resolution beyond realpath of its parent. */
static char *absolute(const char *p)
{
        if (p[0] == '/')
                return strdup(p);
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        if (!cwd)
                return NULL;
        return gv_path_join(cwd, p);
}

static char *full_path(const char *root, const char *path)
{
        return path[0] == '/' ? strdup(path) : gv_path_join(root, path);
}

/* Open the folder holding @full (O_DIRECTORY); *base points into @full at the last component. */
static int open_parent(const char *full, const char **base)
{
        const char *slash = strrchr(full, '/');
        if (!slash)
                return -EINVAL;
        *base = slash + 1;
        _cleanup_free_ char *dir = slash == full ? strdup("/") : strndup(full, (size_t) (slash - full));
        if (!dir)
                return -ENOMEM;
        int fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
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

/* A relative manifest path: no leading '/', no empty, "." or ".." component. */
static bool safe_relative(const char *p)
{
        if (!p || !*p || p[0] == '/')
                return false;
        const char *c = p;
        while (*c) {
                const char *e = strchr(c, '/');
                size_t len = e ? (size_t) (e - c) : strlen(c);
                if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!e)
                        break;
                c = e + 1;
        }
        return true;
}

/* Whether a folder between @root and @root/@rel (exclusive of the last component) is a symlink. */
static bool parent_is_symlink(const char *root, const char *rel)
{
        _cleanup_free_ char *copy = strdup(rel);
        if (!copy)
                return true;
        for (char *s = strchr(copy, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                _cleanup_free_ char *full = gv_path_join(root, copy);
                *s = '/';
                struct stat st;
                if (!full || (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode)))
                        return true;
        }
        return false;
}

/* ---- install context ---- */

typedef struct ictx {
        char *root;          /* absolute */
        elist_t now;         /* what the new manifest lists */
        elist_t fresh;       /* what this call created (rolled back on failure) */
        elist_t old;         /* what the previous manifest listed */
        bool root_created;
} ictx_t;

static void ictx_free(ictx_t *c)
{
        free(c->root);
        elist_free(&c->now);
        elist_free(&c->fresh);
        elist_free(&c->old);
}

static int io_error(gv_error_t **err, int e, const char *what, const char *path)
{
        return gv_error_set(err, e, GV_REASON_IO, "%s %s: %s", what, path, strerror(e < 0 ? -e : e));
}

/*
 * Make sure every folder of @path exists.  @path is relative to the root or
 * absolute; folders created now are recorded (now + fresh), folders an
 * earlier install created stay recorded.
 */
static int ensure_dirs(ictx_t *c, const char *path, gv_error_t **err)
{
        bool abs = path[0] == '/';
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        char *s = copy + (abs ? 1 : 0);
        for (;;) {
                char *slash = strchr(s, '/');
                if (slash)
                        *slash = '\0';
                _cleanup_free_ char *full = full_path(c->root, copy);
                if (!full)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                struct stat st;
                if (lstat(full, &st) == 0) {
                        if (!S_ISDIR(st.st_mode)) {
                                /* A symlinked folder is fine outside the root (/etc/cdi -> ...), not inside it. */
                                if (!(abs && stat(full, &st) == 0 && S_ISDIR(st.st_mode)))
                                        return gv_error_set(err, ENOTDIR, GV_REASON_CONFIG,
                                                            "%s exists and is not a folder", full);
                        }
                        const entry_t *o = elist_find(&c->old, copy);
                        if (o && o->type == E_DIR && elist_add(&c->now, copy, E_DIR) < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                } else if (errno == ENOENT) {
                        if (mkdir(full, 0755) < 0)
                                return io_error(err, errno, "create folder", full);
                        if (elist_add(&c->now, copy, E_DIR) < 0 || elist_add(&c->fresh, copy, E_DIR) < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                } else {
                        return io_error(err, errno, "inspect", full);
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
        if (elist_add(&c->now, path, type) < 0 || (!existed && elist_add(&c->fresh, path, type) < 0))
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        return 0;
}

static bool exists_l(const char *full)
{
        struct stat st;
        return lstat(full, &st) == 0;
}

/* Write a regular file atomically; @path relative to the root or absolute. */
static int put_file(ictx_t *c, const char *path, const void *data, size_t len, mode_t mode, gv_error_t **err)
{
        _cleanup_free_ char *full = full_path(c->root, path);
        if (!full)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        bool existed = exists_l(full) && elist_find(&c->old, path);
        const char *base;
        _cleanup_close_ int dfd = open_parent(full, &base);
        if (dfd < 0)
                return io_error(err, dfd, "open folder of", full);
        int r = gv_atomic_write_at(dfd, base, data, len, mode, err);
        if (r < 0)
                return gv_error_prefix(err, "write %s", full);
        /* The temporary file was created under the umask; give the final mode explicitly. */
        if (fchmodat(dfd, base, mode, 0) < 0)
                return io_error(err, errno, "chmod", full);
        return record(c, path, E_FILE, existed, err);
}

static int copy_file(ictx_t *c, const char *src, const char *path, mode_t mode, gv_error_t **err)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = gv_read_file_at(AT_FDCWD, src, false, MAX_ARTIFACT_BYTES, &data, &len, err);
        if (r < 0)
                return gv_error_prefix(err, "read %s", src);
        return put_file(c, path, data, len, mode, err);
}

/* A symlink @path -> @target, replaced atomically when it points elsewhere. */
static int put_link(ictx_t *c, const char *path, const char *target, gv_error_t **err)
{
        _cleanup_free_ char *full = full_path(c->root, path);
        if (!full)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        bool existed = exists_l(full) && elist_find(&c->old, path);
        char buf[4096];
        ssize_t n = readlink(full, buf, sizeof(buf) - 1);
        if (n >= 0) {
                buf[n] = '\0';
                if (strcmp(buf, target) == 0)
                        return record(c, path, E_LINK, existed, err);
        }
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.gv-tmp-%ld", full, (long) getpid()) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        (void) unlink(tmp);
        if (symlink(target, tmp) < 0)
                return io_error(err, errno, "create symlink", tmp);
        if (rename(tmp, full) < 0) {
                int e = errno;
                (void) unlink(tmp);
                return io_error(err, e, "rename symlink to", full);
        }
        return record(c, path, E_LINK, existed, err);
}

/*
 * A device node: a character device (mknod) when *kind is CHAR, else an
 * empty file.  EPERM/EACCES from mknod (user namespace, no CAP_MKNOD) switch
 * *kind to FILES and fill *why.
 */
static int put_node(ictx_t *c, const char *path, unsigned major_no, unsigned minor_no, gv_mock_nodes_t *kind,
                    char **why, gv_error_t **err)
{
        _cleanup_free_ char *full = full_path(c->root, path);
        if (!full)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if (*kind == GV_MOCK_NODES_CHAR) {
                bool existed = exists_l(full) && elist_find(&c->old, path);
                struct stat st;
                dev_t want = makedev(major_no, minor_no);
                if (lstat(full, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == want)
                        return record(c, path, E_CHAR, existed, err);
                if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(full) < 0)
                        return io_error(err, errno, "replace", full);
                if (mknod(full, S_IFCHR | 0666, want) == 0) {
                        (void) chmod(full, 0666);
                        return record(c, path, E_CHAR, existed, err);
                }
                if (errno != EPERM && errno != EACCES)
                        return io_error(err, errno, "mknod", full);
                *why = strdup(strerror(errno));
                *kind = GV_MOCK_NODES_FILES;
        }
        return put_file(c, path, "", 0, 0666, err);
}

static int remove_one(const char *root, const entry_t *e)
{
        _cleanup_free_ char *full = full_path(root, e->path);
        if (!full)
                return -ENOMEM;
        struct stat st;
        if (lstat(full, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        bool match = (e->type == E_FILE && S_ISREG(st.st_mode)) || (e->type == E_LINK && S_ISLNK(st.st_mode)) ||
                     (e->type == E_CHAR && S_ISCHR(st.st_mode)) || (e->type == E_DIR && S_ISDIR(st.st_mode));
        if (!match)
                return -EEXIST; /* changed type since install: leave it alone */
        if (e->type == E_DIR)
                return rmdir(full) < 0 ? -errno : 1;
        return unlink(full) < 0 ? -errno : 1;
}

/* The header line cdi_spec_text() writes; install and remove recognise our spec by it. */
#define CDI_SPEC_HEADER "# Written by `gpu-validator mock install` for a mock driver root"

/*
 * Whether @path is a CDI spec that mock install wrote: named
 * GV_MOCK_CDI_SPEC_NAME, a regular file (not a symlink), starting with our
 * header.  A file that is not (or no longer) ours is never removed.
 */
static bool ours_cdi_spec(const char *path)
{
        const char *base = strrchr(path, '/');
        if (!base || strcmp(base + 1, GV_MOCK_CDI_SPEC_NAME) != 0)
                return false;
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_read_file_at(AT_FDCWD, path, true, 1 << 20, &text, NULL, &e) < 0)
                return false;
        return strncmp(text, CDI_SPEC_HEADER, strlen(CDI_SPEC_HEADER)) == 0 ||
               strstr(text, "\n" CDI_SPEC_HEADER) != NULL;
}

static int depth_desc(const void *a, const void *b)
{
        const entry_t *x = a, *y = b;
        size_t lx = strlen(x->path), ly = strlen(y->path);
        return lx < ly ? 1 : lx > ly ? -1 : strcmp(x->path, y->path);
}

/* Remove files/links/nodes of @l, then its folders deepest first.  Counts into *removed / *kept. */
static void remove_entries(const char *root, elist_t *l, const char *cdi_spec, unsigned *removed, unsigned *kept)
{
        /* Judged once, before the spec itself goes in the first pass. */
        bool spec_ours = cdi_spec && ours_cdi_spec(cdi_spec);
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && l->n > 1)
                        qsort(l->v, l->n, sizeof(*l->v), depth_desc);
                for (size_t i = 0; i < l->n; i++) {
                        const entry_t *e = &l->v[i];
                        if ((pass == 0) == (e->type == E_DIR))
                                continue;
                        bool ok;
                        if (e->path[0] == '/') {
                                /*
                                 * Outside the root only the CDI spec and the (then empty)
                                 * folders above it -- and only a spec that is ours by name
                                 * and by content, so a hand-edited manifest cannot make
                                 * remove delete anything else.
                                 */
                                size_t len = strlen(e->path);
                                ok = spec_ours &&
                                     (strcmp(e->path, cdi_spec) == 0 ||
                                      (e->type == E_DIR && strncmp(cdi_spec, e->path, len) == 0 &&
                                       cdi_spec[len] == '/'));
                        } else {
                                ok = safe_relative(e->path) && !parent_is_symlink(root, e->path);
                        }
                        int r = ok ? remove_one(root, e) : -EPERM;
                        if (r > 0 && removed)
                                (*removed)++;
                        else if (r < 0 && kept)
                                (*kept)++;
                }
        }
}

/* ---- manifest ---- */

typedef struct manifest {
        char *profile, *profile_source, *node_name, *driver_version, *cdi_spec;
        unsigned gpu_count;
        gv_mock_nodes_t device_nodes;
        bool root_created;
        elist_t entries;
} manifest_t;

static void manifest_free(manifest_t *m)
{
        free(m->profile);
        free(m->profile_source);
        free(m->node_name);
        free(m->driver_version);
        free(m->cdi_spec);
        elist_free(&m->entries);
        *m = (manifest_t){ 0 };
}

static char *jstr(json_object *o, const char *key)
{
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return strdup(json_object_get_string(v));
}

/* Read <root>/.gpu-validator-mock.json.  -ENOENT when absent; -EINVAL (CONFIG) when malformed. */
static int manifest_read(const char *root, manifest_t *out, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        if (!path)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        _cleanup_free_ char *text = NULL;
        int r = gv_read_file_at(AT_FDCWD, path, true, MAX_MANIFEST_BYTES, &text, NULL, err);
        if (r < 0)
                return r;
        json_object *o = json_tokener_parse(text);
        if (!o)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: not valid JSON", path);
        manifest_t m = { 0 };
        json_object *v;
        int ret = 0;
        _cleanup_free_ char *kind = jstr(o, "kind");
        _cleanup_free_ char *nodes = jstr(o, "device_nodes");
        if (!kind || strcmp(kind, MANIFEST_KIND) != 0) {
                ret = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: kind: expected \"%s\"", path, MANIFEST_KIND);
                goto out;
        }
        m.profile = jstr(o, "profile");
        m.profile_source = jstr(o, "profile_source");
        m.node_name = jstr(o, "node_name");
        m.driver_version = jstr(o, "driver_version");
        m.cdi_spec = jstr(o, "cdi_spec");
        if (json_object_object_get_ex(o, "gpu_count", &v))
                m.gpu_count = (unsigned) json_object_get_int(v);
        if (json_object_object_get_ex(o, "root_created", &v))
                m.root_created = json_object_get_boolean(v);
        m.device_nodes = nodes && strcmp(nodes, "char") == 0    ? GV_MOCK_NODES_CHAR
                         : nodes && strcmp(nodes, "files") == 0 ? GV_MOCK_NODES_FILES
                                                                : GV_MOCK_NODES_DEFAULT;
        if (!json_object_object_get_ex(o, "entries", &v) || !json_object_is_type(v, json_type_array)) {
                ret = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: entries: expected an array", path);
                goto out;
        }
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_free_ char *p = jstr(e, "path");
                _cleanup_free_ char *t = jstr(e, "type");
                int type = -1;
                for (int k = 0; t && k < (int) GV_ARRAY_SIZE(etype_names); k++)
                        if (strcmp(t, etype_names[k]) == 0)
                                type = k;
                if (!p || !*p || type < 0) {
                        ret = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: entries[%zu]: expected path and type",
                                           path, i);
                        goto out;
                }
                if (elist_add(&m.entries, p, (etype_t) type) < 0) {
                        ret = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        goto out;
                }
        }
        *out = m;
        m = (manifest_t){ 0 };
out:
        manifest_free(&m);
        json_object_put(o);
        return ret;
}

static int manifest_write(const char *root, const manifest_t *m, gv_error_t **err)
{
        json_object *o = json_object_new_object();
        if (!o)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        json_object_object_add(o, "kind", json_object_new_string(MANIFEST_KIND));
        json_object_object_add(o, "version", json_object_new_int(MANIFEST_VERSION));
        json_object_object_add(o, "created_by", json_object_new_string("gpu-validator " GV_VERSION));
        json_object_object_add(o, "profile", json_object_new_string(m->profile ? m->profile : ""));
        json_object_object_add(o, "profile_source", json_object_new_string(m->profile_source ? m->profile_source : ""));
        json_object_object_add(o, "gpu_count", json_object_new_int((int) m->gpu_count));
        json_object_object_add(o, "node_name", json_object_new_string(m->node_name ? m->node_name : ""));
        json_object_object_add(o, "driver_version", json_object_new_string(m->driver_version ? m->driver_version : ""));
        json_object_object_add(o, "device_nodes", json_object_new_string(gv_mock_nodes_name(m->device_nodes)));
        json_object_object_add(o, "root_created", json_object_new_boolean(m->root_created));
        json_object_object_add(o, "cdi_spec", json_object_new_string(m->cdi_spec ? m->cdi_spec : ""));
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < m->entries.n; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "path", json_object_new_string(m->entries.v[i].path));
                json_object_object_add(e, "type", json_object_new_string(etype_names[m->entries.v[i].type]));
                json_object_array_add(arr, e);
        }
        json_object_object_add(o, "entries", arr);
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE);
        _cleanup_free_ char *data = NULL;
        int r;
        if (asprintf(&data, "%s\n", text) < 0) {
                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        } else {
                _cleanup_close_ int dfd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
                r = dfd < 0 ? io_error(err, errno, "open", root)
                            : gv_atomic_write_at(dfd, GV_MOCK_MANIFEST_NAME, data, strlen(data), 0644, err);
        }
        json_object_put(o);
        return r;
}

/* ---- detect ---- */

bool gv_mock_root_detect(const char *root, gv_mock_root_info_t *info)
{
        *info = (gv_mock_root_info_t){ 0 };
        if (!root)
                return false;
        manifest_t m = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        if (manifest_read(root, &m, &err) < 0)
                return false;
        info->is_mock = true;
        info->device_nodes = m.device_nodes;
        info->gpu_count = m.gpu_count;
        snprintf(info->driver_version, sizeof(info->driver_version), "%s", m.driver_version ? m.driver_version : "");
        snprintf(info->profile, sizeof(info->profile), "%s", m.profile ? m.profile : "");
        manifest_free(&m);
        return true;
}

/* ---- remove ---- */

int gv_mock_remove(const char *root, unsigned *removed, unsigned *kept, gv_error_t **err)
{
        if (!root || !*root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no root given");
        _cleanup_free_ char *abs = absolute(root);
        if (!abs)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        manifest_t m = { 0 };
        int r = manifest_read(abs, &m, err);
        if (r == -ENOENT)
                return gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                                    "%s: not a mock driver root (no %s); nothing removed", abs, GV_MOCK_MANIFEST_NAME);
        if (r < 0)
                return r;
        unsigned rm = 0, kp = 0;
        remove_entries(abs, &m.entries, m.cdi_spec, &rm, &kp);
        _cleanup_free_ char *mpath = gv_path_join(abs, GV_MOCK_MANIFEST_NAME);
        if (mpath && unlink(mpath) < 0 && errno != ENOENT) {
                r = io_error(err, errno, "remove", mpath);
                manifest_free(&m);
                return r;
        }
        if (m.root_created) {
                if (rmdir(abs) == 0)
                        rm++;
                else if (errno != ENOENT)
                        kp++;
        }
        manifest_free(&m);
        if (removed)
                *removed = rm;
        if (kept)
                *kept = kp;
        return 0;
}

/* ---- install ---- */

static bool is_profile_file(const char *p)
{
        size_t len = strlen(p);
        return strchr(p, '/') || (len > 5 && strcmp(p + len - 5, ".yaml") == 0) ||
               (len > 4 && strcmp(p + len - 4, ".yml") == 0);
}

/* A YAML double-quoted scalar. */
static void yq(FILE *f, const char *s)
{
        fputc('"', f);
        for (const char *c = s; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fputc('\\', f);
                fputc(*c, f);
        }
        fputc('"', f);
}

static void cdi_node(FILE *f, const char *indent, const char *root, const char *name)
{
        _cleanup_free_ char *host = NULL;
        if (asprintf(&host, "%s/dev/%s", root, name) < 0)
                host = NULL;
        fprintf(f, "%s- path: /dev/%s\n%s  hostPath: ", indent, name, indent);
        yq(f, host ? host : "");
        fputc('\n', f);
}

/* A minimal CDI spec in the shape of nvidia-ctk's (cdi__nvidia-ctk-cdi-generate_*.yaml). */
static char *cdi_spec_text(const char *root, const gv_mock_profile_t *p, const char *lib_name)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fputs("---\n" CDI_SPEC_HEADER "; see docs/mock-driver-root.md.\n"
              "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ncontainerEdits:\n  deviceNodes:\n",
              f);
        cdi_node(f, "  ", root, "nvidiactl");
        cdi_node(f, "  ", root, "nvidia-uvm");
        cdi_node(f, "  ", root, "nvidia-uvm-tools");
        fputs("  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n  mounts:\n", f);
        const char *mounts[][2] = { { "/usr/bin/nvidia-smi", "usr/bin/nvidia-smi" },
                                    { "/usr/lib64/libnvidia-ml.so.1", "usr/lib64/libnvidia-ml.so.1" } };
        for (size_t i = 0; i < GV_ARRAY_SIZE(mounts); i++) {
                _cleanup_free_ char *host = gv_path_join(root, mounts[i][1]);
                fprintf(f, "  - containerPath: %s\n    hostPath: ", mounts[i][0]);
                yq(f, host ? host : "");
                fputs("\n    options:\n    - ro\n    - nosuid\n    - nodev\n    - bind\n", f);
        }
        (void) lib_name;
        fputs("devices:\n", f);
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                _cleanup_free_ char *node = NULL;
                if (asprintf(&node, "nvidia%u", d->minor_number) < 0)
                        node = NULL;
                for (int by_uuid = 0; by_uuid < 2; by_uuid++) {
                        fputs("- containerEdits:\n    deviceNodes:\n", f);
                        cdi_node(f, "    ", root, node ? node : "nvidia0");
                        if (by_uuid)
                                fprintf(f, "  name: %s\n", d->uuid);
                        else
                                fprintf(f, "  name: \"%u\"\n", d->index);
                }
        }
        fputs("- containerEdits:\n    deviceNodes:\n", f);
        for (unsigned i = 0; i < p->device_count; i++) {
                _cleanup_free_ char *node = NULL;
                if (asprintf(&node, "nvidia%u", p->devices[i].minor_number) >= 0)
                        cdi_node(f, "    ", root, node);
        }
        fputs("  name: all\n", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* /proc/driver/nvidia/version in the proprietary module's format (proc__*_580.173.02.txt). */
static char *proc_version_text(const char *driver_version)
{
#if defined(__aarch64__)
        const char *arch = "aarch64";
#else
        const char *arch = "x86_64";
#endif
        char *s = NULL;
        /* A fixed build date keeps re-installs byte-identical. The real GCC line ends with a blank. */
        if (asprintf(&s,
                     "NVRM version: NVIDIA UNIX %s Kernel Module  %s  Thu Jan  1 00:00:00 UTC 2026\n"
                     "GCC version:  gcc version 12.2.0 (gpu-validator mock) \n",
                     arch, driver_version) < 0)
                return NULL;
        return s;
}

static int load_profile(const gv_mock_install_opts_t *o, gv_mock_profile_t **out, gv_error_t **err)
{
        const char *name = o->profile && *o->profile ? o->profile : GV_MOCK_DEFAULT_PROFILE;
        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        int r = is_profile_file(name) ? gv_mock_profile_load_file(name, &p, err)
                                      : gv_mock_profile_load_builtin(name, &p, err);
        if (r < 0) {
                if (err && *err && (*err)->reason == GV_REASON_IO)
                        (*err)->reason = GV_REASON_CONFIG; /* a profile file that cannot be read is a usage error */
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

/* Check the root: absent (created), empty, or a mock root (old manifest loaded). */
static int prepare_root(ictx_t *c, manifest_t *old, gv_error_t **err)
{
        struct stat st;
        if (lstat(c->root, &st) < 0) {
                if (errno != ENOENT)
                        return io_error(err, errno, "inspect", c->root);
                int r = gv_mkdir_p(c->root, 0755, err);
                if (r < 0)
                        return r;
                c->root_created = true;
                return 0;
        }
        if (!S_ISDIR(st.st_mode))
                return gv_error_set(err, ENOTDIR, GV_REASON_CONFIG, "%s exists and is not a folder", c->root);
        int r = manifest_read(c->root, old, err);
        if (r == 0) {
                c->root_created = old->root_created;
                for (size_t i = 0; i < old->entries.n; i++)
                        if (elist_add(&c->old, old->entries.v[i].path, old->entries.v[i].type) < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                return 1;
        }
        if (r != -ENOENT)
                return gv_error_prefix(err, "%s looks like a mock root but its manifest is unusable", c->root);
        gv_error_free(err);
        _cleanup_close_ int fd = open(c->root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return io_error(err, errno, "open", c->root);
        DIR *d = fdopendir(TAKE_FD(fd));
        if (!d)
                return io_error(err, errno, "list", c->root);
        bool empty = true;
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        empty = false;
                        break;
                }
        closedir(d);
        if (!empty)
                return gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG,
                                    "%s is not empty and is not a mock driver root (no %s); refusing to write into "
                                    "it. Choose an empty or new folder.",
                                    c->root, GV_MOCK_MANIFEST_NAME);
        return 0;
}

static int lay_out(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, const char *cdi_dir,
                   const char *profile_yaml, gv_mock_nodes_t *kind, char **why, char **cdi_spec, gv_error_t **err)
{
        int r;
        _cleanup_free_ char *lib = NULL, *proc = NULL;
        if (asprintf(&lib, "usr/lib64/libnvidia-ml.so.%s", p->driver_version) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if ((r = ensure_dirs(c, "usr/lib64", err)) < 0 || (r = ensure_dirs(c, "usr/bin", err)) < 0 ||
            (r = ensure_dirs(c, "proc/driver/nvidia", err)) < 0 || (r = ensure_dirs(c, "dev", err)) < 0)
                return r;
        if ((r = copy_file(c, o->nvml_lib, lib, 0755, err)) < 0)
                return r;
        if ((r = put_link(c, "usr/lib64/libnvidia-ml.so.1", lib + strlen("usr/lib64/"), err)) < 0 ||
            (r = put_link(c, "usr/lib64/libnvidia-ml.so", "libnvidia-ml.so.1", err)) < 0)
                return r;
        if ((r = put_file(c, "usr/lib64/" GV_MOCK_ROOT_PROFILE_NAME, profile_yaml, strlen(profile_yaml), 0644,
                          err)) < 0)
                return r;
        if ((r = copy_file(c, o->nvidia_smi, "usr/bin/nvidia-smi", 0755, err)) < 0)
                return r;
        proc = proc_version_text(p->driver_version);
        if (!proc)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if ((r = put_file(c, "proc/driver/nvidia/version", proc, strlen(proc), 0444, err)) < 0)
                return r;

        if ((r = put_node(c, "dev/nvidiactl", GV_MOCK_NVIDIA_MAJOR, GV_MOCK_NVIDIACTL_MINOR, kind, why, err)) < 0)
                return r;
        for (unsigned i = 0; i < p->device_count; i++) {
                _cleanup_free_ char *n = NULL;
                if (asprintf(&n, "dev/nvidia%u", p->devices[i].minor_number) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if ((r = put_node(c, n, GV_MOCK_NVIDIA_MAJOR, p->devices[i].minor_number, kind, why, err)) < 0)
                        return r;
        }
        if ((r = put_node(c, "dev/nvidia-uvm", GV_MOCK_UVM_MAJOR, 0, kind, why, err)) < 0 ||
            (r = put_node(c, "dev/nvidia-uvm-tools", GV_MOCK_UVM_MAJOR, 1, kind, why, err)) < 0)
                return r;
        /* Nodes made before a mknod refusal stay character devices; redo them as files for one kind. */
        if (*kind == GV_MOCK_NODES_FILES) {
                for (size_t i = 0; i < c->now.n; i++) {
                        if (c->now.v[i].type != E_CHAR)
                                continue;
                        _cleanup_free_ char *path = strdup(c->now.v[i].path);
                        if (!path)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        if ((r = put_file(c, path, "", 0, 0666, err)) < 0)
                                return r;
                }
        }

        /* CDI spec: inside the root it is recorded relative, outside absolute. */
        _cleanup_free_ char *spec_abs = gv_path_join(cdi_dir, GV_MOCK_CDI_SPEC_NAME);
        if (!spec_abs)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        size_t rl = strlen(c->root);
        bool inside = strncmp(cdi_dir, c->root, rl) == 0 && (cdi_dir[rl] == '/' || cdi_dir[rl] == '\0');
        const char *dir_rec = inside ? (cdi_dir[rl] == '/' ? cdi_dir + rl + 1 : "") : cdi_dir;
        const char *spec_rec = inside ? spec_abs + rl + 1 : spec_abs;
        if (*dir_rec && (r = ensure_dirs(c, dir_rec, err)) < 0)
                return r;
        _cleanup_free_ char *spec = cdi_spec_text(c->root, p, lib);
        if (!spec)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if ((r = put_file(c, spec_rec, spec, strlen(spec), 0644, err)) < 0)
                return r;
        *cdi_spec = TAKE_PTR(spec_abs);
        return 0;
}

/* NOLINTNEXTLINE(readability-function-size): the install steps in order, each with its error; to be split in the architecture refactor */
int gv_mock_install(const gv_mock_install_opts_t *o, gv_mock_install_result_t *out, gv_error_t **err)
{
        if (!o || !o->root || !*o->root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no root given");
        if (!o->nvml_lib || !o->nvidia_smi)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "the mock library and nvidia-smi to copy are not "
                                                                    "given (gv_mock_locate_artifacts())");
        if (o->gpus && (o->gpus < GV_MOCK_MIN_GPUS || o->gpus > GV_MOCK_MAX_GPUS))
                return gv_error_set(err, ERANGE, GV_REASON_CONFIG, "--gpus %u: expected %u..%u", o->gpus,
                                    GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);

        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        int r = load_profile(o, &p, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *yaml = NULL;
        if ((r = gv_mock_profile_to_yaml(p, &yaml, err)) < 0)
                return r;

        ictx_t c = { 0 };
        manifest_t old = { 0 };
        _cleanup_free_ char *cdi_dir = NULL, *cdi_spec = NULL, *why = NULL;
        c.root = absolute(o->root);
        if (!c.root) {
                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                goto out;
        }
        while (strlen(c.root) > 1 && c.root[strlen(c.root) - 1] == '/')
                c.root[strlen(c.root) - 1] = '\0';
        if (strcmp(c.root, "/") == 0) {
                r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "refusing to use / as a mock driver root");
                goto out;
        }
        cdi_dir = o->cdi_dir && *o->cdi_dir ? absolute(o->cdi_dir) : gv_path_join(c.root, "etc/cdi");
        if (!cdi_dir) {
                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                goto out;
        }
        int existed = prepare_root(&c, &old, err);
        if (existed < 0) {
                r = existed;
                goto out;
        }

        gv_mock_nodes_t kind = o->device_nodes;
        if (kind == GV_MOCK_NODES_DEFAULT)
                kind = geteuid() == 0 ? GV_MOCK_NODES_CHAR : GV_MOCK_NODES_FILES;
        gv_mock_nodes_t asked = kind;

        r = lay_out(&c, o, p, cdi_dir, yaml, &kind, &why, &cdi_spec, err);
        if (r == 0) {
                /* What the old manifest listed and the new layout lacks (fewer GPUs, other version). */
                elist_t stale = { 0 };
                for (size_t i = 0; i < c.old.n && r == 0; i++)
                        if (!elist_find(&c.now, c.old.v[i].path)) {
                                if (c.old.v[i].type == E_DIR) {
                                        _cleanup_free_ char *full = full_path(c.root, c.old.v[i].path);
                                        if (full && exists_l(full) && elist_add(&c.now, c.old.v[i].path, E_DIR) < 0)
                                                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                                } else if (elist_add(&stale, c.old.v[i].path, c.old.v[i].type) < 0) {
                                        r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                                }
                        }
                if (r == 0)
                        remove_entries(c.root, &stale, old.cdi_spec, NULL, NULL);
                elist_free(&stale);
        }
        if (r == 0) {
                manifest_t m = {
                        .profile = p->name ? p->name : p->source,
                        .profile_source = p->source,
                        .node_name = p->node_name,
                        .driver_version = p->driver_version,
                        .cdi_spec = cdi_spec,
                        .gpu_count = p->device_count,
                        .device_nodes = kind,
                        .root_created = c.root_created,
                        .entries = c.now,
                };
                r = manifest_write(c.root, &m, err);
        }
        if (r < 0) {
                /* Undo what this call created, and the root when this call made it. */
                remove_entries(c.root, &c.fresh, cdi_spec, NULL, NULL);
                if (c.root_created && existed == 0)
                        (void) rmdir(c.root);
                goto out;
        }

        gv_mock_install_result_t res = {
                .root = strdup(c.root),
                .cdi_spec = strdup(cdi_spec),
                .manifest = gv_path_join(c.root, GV_MOCK_MANIFEST_NAME),
                .profile_name = strdup(p->name ? p->name : p->source),
                .driver_version = strdup(p->driver_version),
                .node_name = strdup(p->node_name ? p->node_name : ""),
                .gpu_count = p->device_count,
                .device_nodes = kind,
                .device_nodes_fallback = asked == GV_MOCK_NODES_CHAR && kind == GV_MOCK_NODES_FILES,
                .fallback_reason = TAKE_PTR(why),
                .updated = existed == 1,
                .entries = (unsigned) c.now.n,
        };
        if (!res.root || !res.cdi_spec || !res.manifest || !res.profile_name || !res.driver_version ||
            !res.node_name) {
                gv_mock_install_result_clear(&res);
                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                goto out;
        }
        *out = res;
out:
        manifest_free(&old);
        ictx_free(&c);
        return r;
}
