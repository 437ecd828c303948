/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mock driver roots (see mock/mock.h and docs/mock-driver-root.md).
 */
#include "mock/mock.h"

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

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"
#include "mock/nvml/profile.h"
#include "mock/root/ldcache.h"

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
        elist_t intent;      /* the intent record: the planned layout and the old entries */
        bool root_created;
        bool dry;            /* planning: record what would be made, change nothing */
        unsigned step;       /* changes made so far (for the test hook) */
        void (*hook)(void *data, unsigned step);
        void *hook_data;
        struct manifest *meta; /* what the manifest says besides entries (for rewriting the intent) */
} ictx_t;

static void ictx_free(ictx_t *c)
{
        free(c->root);
        elist_free(&c->now);
        elist_free(&c->fresh);
        elist_free(&c->old);
        elist_free(&c->intent);
}

/* Called before each change to the filesystem (the crash tests' hook). */
static void step(ictx_t *c)
{
        c->step++;
        if (c->hook)
                c->hook(c->hook_data, c->step);
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
                        if (!c->dry) {
                                step(c);
                                if (mkdir(full, 0755) < 0)
                                        return io_error(err, errno, "create folder", full);
                        }
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
        if (c->dry)
                return record(c, path, E_FILE, existed, err);
        const char *base;
        _cleanup_close_ int dfd = open_parent(full, &base);
        if (dfd < 0)
                return io_error(err, dfd, "open folder of", full);
        step(c);
        int r = gv_atomic_write_at(dfd, base, data, len, mode, err);
        if (r < 0)
                return gv_error_prefix(err, "write %s", full);
        /* The temporary file was created under the umask; give the final mode explicitly. */
        step(c);
        if (fchmodat(dfd, base, mode, 0) < 0)
                return io_error(err, errno, "chmod", full);
        return record(c, path, E_FILE, existed, err);
}

static int copy_file(ictx_t *c, const char *src, const char *path, mode_t mode, gv_error_t **err)
{
        if (c->dry)
                return put_file(c, path, "", 0, mode, err);
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
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        step(c);
        (void) unlink(tmp);
        if (symlink(target, tmp) < 0)
                return io_error(err, errno, "create symlink", tmp);
        step(c);
        if (rename(tmp, full) < 0) {
                int e = errno;
                (void) unlink(tmp);
                return io_error(err, e, "rename symlink to", full);
        }
        return record(c, path, E_LINK, existed, err);
}

static int intent_nodes_as_files(ictx_t *c, gv_error_t **err);

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
                if (c->dry)
                        return record(c, path, E_CHAR, existed, err);
                struct stat st;
                dev_t want = makedev(major_no, minor_no);
                if (lstat(full, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == want)
                        return record(c, path, E_CHAR, existed, err);
                if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode)) {
                        step(c);
                        if (unlink(full) < 0)
                                return io_error(err, errno, "replace", full);
                }
                step(c);
                if (mknod(full, S_IFCHR | 0666, want) == 0) {
                        (void) chmod(full, 0666);
                        return record(c, path, E_CHAR, existed, err);
                }
                if (errno != EPERM && errno != EACCES)
                        return io_error(err, errno, "mknod", full);
                *why = strdup(strerror(errno));
                *kind = GV_MOCK_NODES_FILES;
                /* the intent record must name the nodes as what they will be: files */
                int r = intent_nodes_as_files(c, err);
                if (r < 0)
                        return r;
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

/* What sits at a recorded CDI spec path outside the root. */
typedef enum spec_state { SPEC_FOREIGN, SPEC_OURS, SPEC_ABSENT } spec_state_t;

static spec_state_t spec_state(const char *spec)
{
        if (!spec || !*spec || spec[0] != '/')
                return SPEC_FOREIGN;
        const char *base = strrchr(spec, '/');
        if (strcmp(base + 1, GV_MOCK_CDI_SPEC_NAME) != 0)
                return SPEC_FOREIGN;
        struct stat st;
        if (lstat(spec, &st) < 0)
                return errno == ENOENT ? SPEC_ABSENT : SPEC_FOREIGN;
        return ours_cdi_spec(spec) ? SPEC_OURS : SPEC_FOREIGN;
}

/*
 * Whether the outside-the-root entry @e may go: the recorded CDI spec when it
 * is ours by name and by content, or one of the folders above it when the
 * spec there is ours or absent (install planned the folder and was stopped
 * before writing the spec; folders only go when empty).
 */
static bool outside_ok(const entry_t *e, const char *spec, spec_state_t st)
{
        if (!spec || st == SPEC_FOREIGN)
                return false;
        if (e->type != E_DIR)
                return st == SPEC_OURS && strcmp(e->path, spec) == 0;
        size_t len = strlen(e->path);
        return strncmp(spec, e->path, len) == 0 && spec[len] == '/';
}

/*
 * Remove files/links/nodes of @l, then its folders deepest first.  Outside
 * the root only @spec / @spec2 (the CDI specs the manifest records; NULL when
 * none) and their folders.  Counts into *removed / *kept.
 */
static void remove_entries(const char *root, elist_t *l, const char *spec, const char *spec2, unsigned *removed,
                           unsigned *kept)
{
        /* Judged once, before the spec itself goes in the first pass. */
        spec_state_t st1 = spec_state(spec), st2 = spec_state(spec2);
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
                                ok = outside_ok(e, spec, st1) || outside_ok(e, spec2, st2);
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

/*
 * Whether @name is a temporary file that gv_atomic_write_at() (".<base>.tmp-"
 * and 16 hex digits) or put_link() ("<base>.gv-tmp-<pid>") makes for @base.
 */
static bool is_temp_of(const char *name, const char *base)
{
        size_t bl = strlen(base);
        if (name[0] == '.' && strncmp(name + 1, base, bl) == 0 && strncmp(name + 1 + bl, ".tmp-", 5) == 0) {
                const char *h = name + 1 + bl + 5;
                return strlen(h) == 16 && strspn(h, "0123456789abcdef") == 16;
        }
        if (strncmp(name, base, bl) == 0 && strncmp(name + bl, ".gv-tmp-", 8) == 0) {
                const char *d = name + bl + 8;
                return *d && strspn(d, "0123456789") == strlen(d);
        }
        return false;
}

/*
 * Removes the temporary files a killed install left beside @full (a file or
 * link it writes): only files and links named as is_temp_of() says.  Returns
 * how many went.
 */
static unsigned sweep_temps_of(const char *full)
{
        const char *base;
        _cleanup_close_ int dfd = open_parent(full, &base);
        if (dfd < 0)
                return 0;
        int fd2 = dup(dfd);
        DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
        if (!d) {
                if (fd2 >= 0)
                        close(fd2);
                return 0;
        }
        unsigned n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (!is_temp_of(de->d_name, base) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        n++;
        }
        closedir(d);
        return n;
}

/*
 * The temporary files of every file, link and node of @l and of the
 * manifest, under the same rules as remove_entries() (outside the root only
 * beside the recorded CDI specs).
 */
static unsigned sweep_temps(const char *root, const elist_t *l, const char *spec, const char *spec2)
{
        unsigned n = 0;
        _cleanup_free_ char *m = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        if (m)
                n += sweep_temps_of(m);
        for (size_t i = 0; i < l->n; i++) {
                const entry_t *e = &l->v[i];
                if (e->type == E_DIR)
                        continue;
                if (e->path[0] == '/') {
                        if (!((spec && strcmp(e->path, spec) == 0) || (spec2 && strcmp(e->path, spec2) == 0)) ||
                            spec_state(e->path) == SPEC_FOREIGN)
                                continue;
                } else if (!safe_relative(e->path) || parent_is_symlink(root, e->path)) {
                        continue;
                }
                _cleanup_free_ char *full = full_path(root, e->path);
                if (full)
                        n += sweep_temps_of(full);
        }
        return n;
}

/* ---- manifest ---- */

typedef struct manifest {
        char *profile, *profile_source, *node_name, *driver_version, *cdi_spec;
        char *previous_cdi_spec; /* while installing: the spec the old manifest recorded, when another */
        unsigned gpu_count;
        gv_mock_nodes_t device_nodes;
        bool root_created;
        bool installing;         /* "state": "installing" -- an intent record, install not finished */
        elist_t entries;
} manifest_t;

static void manifest_free(manifest_t *m)
{
        free(m->profile);
        free(m->profile_source);
        free(m->node_name);
        free(m->driver_version);
        free(m->cdi_spec);
        free(m->previous_cdi_spec);
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
        _cleanup_free_ char *state = jstr(o, "state");
        if (!kind || strcmp(kind, MANIFEST_KIND) != 0) {
                ret = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: kind: expected \"%s\"", path, MANIFEST_KIND);
                goto out;
        }
        m.profile = jstr(o, "profile");
        m.profile_source = jstr(o, "profile_source");
        m.node_name = jstr(o, "node_name");
        m.driver_version = jstr(o, "driver_version");
        m.cdi_spec = jstr(o, "cdi_spec");
        m.previous_cdi_spec = jstr(o, "previous_cdi_spec");
        if (state && strcmp(state, "installing") != 0 && strcmp(state, "complete") != 0) {
                ret = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: state: expected \"installing\" or "
                                   "\"complete\"", path);
                goto out;
        }
        m.installing = state && strcmp(state, "installing") == 0;
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

/* Write @m as <root>/.gpu-validator-mock.json, atomically. */
static int manifest_write(const char *root, const manifest_t *m, gv_error_t **err)
{
        json_object *o = json_object_new_object();
        if (!o)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        json_object_object_add(o, "kind", json_object_new_string(MANIFEST_KIND));
        json_object_object_add(o, "version", json_object_new_int(MANIFEST_VERSION));
        json_object_object_add(o, "created_by", json_object_new_string("gpu-validator " GV_VERSION));
        json_object_object_add(o, "state", json_object_new_string(m->installing ? "installing" : "complete"));
        json_object_object_add(o, "profile", json_object_new_string(m->profile ? m->profile : ""));
        json_object_object_add(o, "profile_source", json_object_new_string(m->profile_source ? m->profile_source : ""));
        json_object_object_add(o, "gpu_count", json_object_new_int((int) m->gpu_count));
        json_object_object_add(o, "node_name", json_object_new_string(m->node_name ? m->node_name : ""));
        json_object_object_add(o, "driver_version", json_object_new_string(m->driver_version ? m->driver_version : ""));
        json_object_object_add(o, "device_nodes", json_object_new_string(gv_mock_nodes_name(m->device_nodes)));
        json_object_object_add(o, "root_created", json_object_new_boolean(m->root_created));
        json_object_object_add(o, "cdi_spec", json_object_new_string(m->cdi_spec ? m->cdi_spec : ""));
        if (m->previous_cdi_spec && *m->previous_cdi_spec)
                json_object_object_add(o, "previous_cdi_spec", json_object_new_string(m->previous_cdi_spec));
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
        if (m.installing) { /* an install that was stopped: not a usable root until install finishes */
                manifest_free(&m);
                return false;
        }
        info->is_mock = true;
        info->device_nodes = m.device_nodes;
        info->gpu_count = m.gpu_count;
        snprintf(info->driver_version, sizeof(info->driver_version), "%s", m.driver_version ? m.driver_version : "");
        snprintf(info->profile, sizeof(info->profile), "%s", m.profile ? m.profile : "");
        manifest_free(&m);
        return true;
}

/* The driver component's reader (gv_mock_manifest_probe()): at most this much, as it has always read. */
#define MAX_PROBE_BYTES ((size_t) 64 * 1024)

/* Parse @len bytes of @text as one JSON object (*out, a new reference); -EINVAL naming @path otherwise. */
static int parse_object(const char *path, const char *text, size_t len, json_object **out, gv_error_t **err)
{
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        _cleanup_json_ json_object *obj = json_tokener_parse_ex(tok, text, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!obj || jerr != json_tokener_success || !json_object_is_type(obj, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: not a JSON object (%s)", path,
                                    json_tokener_error_desc(jerr));
        *out = TAKE_PTR(obj);
        return 0;
}

int gv_mock_manifest_probe(const char *root, bool *files_ok, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        if (!path)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_read_file_at(AT_FDCWD, path, true, MAX_PROBE_BYTES, &text, &len, &e);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return gv_error_set(err, r, GV_REASON_CONFIG, "mock manifest: %s", e ? e->msg : strerror(-r));
        _cleanup_json_ json_object *obj = NULL;
        if ((r = parse_object(path, text, len, &obj, err)) < 0)
                return r;
        json_object *dn = NULL;
        bool files = false;
        if (json_object_object_get_ex(obj, "device_nodes", &dn)) {
                const char *v = json_object_is_type(dn, json_type_string) ? json_object_get_string(dn) : NULL;
                files = v && strcmp(v, "files") == 0;
                if (!files && (!v || strcmp(v, "char") != 0))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: \"device_nodes\" must be \"char\" or \"files\"", path);
        }
        *files_ok = files;
        return 1;
}

/* ---- staging folder: how install creates a root with its intent record already inside ---- */

/* "<parent>/.<name>.gv-mock-install" for the root "<parent>/<name>" (heap; NULL when out of memory). */
static char *stage_path(const char *root)
{
        const char *slash = strrchr(root, '/');
        char *s = NULL;
        if (!slash || asprintf(&s, "%.*s/.%s.gv-mock-install", (int) (slash - root), root, slash + 1) < 0)
                return NULL;
        return s;
}

/*
 * Removes the staging folder a killed install left (it holds at most the
 * manifest and its temporary files).  Returns 1 when one was removed, 0 when
 * there was none; -ENOTEMPTY (GV_REASON_CONFIG) when it holds anything else.
 */
static int stage_clean(const char *stage, gv_error_t **err)
{
        struct stat st;
        if (lstat(stage, &st) < 0) {
                if (errno == ENOENT)
                        return 0;
                return io_error(err, errno, "inspect", stage);
        }
        if (!S_ISDIR(st.st_mode))
                return gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG, "%s is in the way of mock install and is not "
                                    "a folder it made; remove it", stage);
        _cleanup_close_ int dfd = open(stage, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return io_error(err, errno, "open", stage);
        int fd2 = dup(dfd);
        DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
        if (!d) {
                if (fd2 >= 0)
                        close(fd2);
                return io_error(err, errno, "list", stage);
        }
        struct dirent *de;
        int r = 0;
        while (r == 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strcmp(de->d_name, GV_MOCK_MANIFEST_NAME) != 0 && !is_temp_of(de->d_name, GV_MOCK_MANIFEST_NAME))
                        r = gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG,
                                         "%s, left by an interrupted mock install, holds %s, which install does not "
                                         "make; remove it by hand",
                                         stage, de->d_name);
                else if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT)
                        r = io_error(err, errno, "remove", de->d_name);
        }
        closedir(d);
        if (r < 0)
                return r;
        if (rmdir(stage) < 0 && errno != ENOENT)
                return io_error(err, errno, "remove", stage);
        return 1;
}

/* ---- remove ---- */

/*
 * A root without a manifest: what a killed install can leave there is the
 * manifest's temporary files (it was writing its intent record into an
 * empty root) -- remove those.  Returns how many went.
 */
static unsigned remove_manifest_temps(const char *root)
{
        _cleanup_free_ char *m = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        return m ? sweep_temps_of(m) : 0;
}

int gv_mock_remove(const char *root, unsigned *removed, unsigned *kept, gv_error_t **err)
{
        if (!root || !*root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no root given");
        _cleanup_free_ char *abs = absolute(root);
        if (!abs)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
                abs[strlen(abs) - 1] = '\0';
        manifest_t m = { 0 };
        int r = manifest_read(abs, &m, err);
        if (r == -ENOENT) {
                gv_error_free(err);
                /* what an install killed before its intent record was in place leaves */
                _cleanup_free_ char *stage = stage_path(abs);
                int sr = stage ? stage_clean(stage, err) : gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (sr < 0)
                        return sr;
                unsigned temps = remove_manifest_temps(abs);
                if (sr == 0 && temps == 0)
                        return gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                                            "%s: not a mock driver root (no %s); nothing removed", abs,
                                            GV_MOCK_MANIFEST_NAME);
                gv_error_free(err);
                if (removed)
                        *removed = (unsigned) sr + temps;
                if (kept)
                        *kept = 0;
                return 0;
        }
        if (r < 0)
                return r;
        unsigned rm = 0, kp = 0;
        rm += sweep_temps(abs, &m.entries, m.cdi_spec, m.previous_cdi_spec);
        remove_entries(abs, &m.entries, m.cdi_spec, m.previous_cdi_spec, &rm, &kp);
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

/*
 * Decodes one UTF-8 sequence at @s into *cp; returns its length, or 0 for a
 * byte that does not start a valid sequence (overlong, surrogate, past
 * U+10FFFF, cut short).
 */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
        size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0)
                return 0;
        unsigned v = n == 1 ? s[0] : s[0] & (0x7F >> n);
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                v = (v << 6) | (s[i] & 0x3F);
        }
        static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
                return 0;
        *cp = v;
        return n;
}

/* Whether @s is valid UTF-8 (what a YAML stream must be; YAML 1.2 section 5.2). */
static bool valid_utf8(const char *s)
{
        unsigned cp;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_next(p, &cp);
                if (!n)
                        return false;
                p += n;
        }
        return true;
}

/*
 * @s (valid UTF-8) as a YAML double-quoted scalar: " and \ escaped, and every
 * character YAML does not allow raw (C0 and C1 controls, DEL, U+FEFF, U+FFFE,
 * U+FFFF; YAML 1.2 section 5.1 "c-printable") written as an escape, so that a
 * newline in a path reads back as a newline, not as the space a raw line
 * break in a quoted scalar folds into.
 */
static void yq(FILE *f, const char *s)
{
        fputc('"', f);
        unsigned cp = 0;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_next(p, &cp);
                if (!n) { /* callers check valid_utf8() first; never emit a byte YAML cannot read */
                        fputs("\\uFFFD", f);
                        p++;
                        continue;
                }
                if (cp == '"' || cp == '\\')
                        fprintf(f, "\\%c", (char) cp);
                else if (cp == '\n')
                        fputs("\\n", f);
                else if (cp == '\t')
                        fputs("\\t", f);
                else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
                        fprintf(f, "\\x%02X", cp);
                else if (cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF)
                        fprintf(f, "\\u%04X", cp);
                else
                        (void) fwrite(p, 1, n, f); /* the stream is checked where it is closed */
                p += n;
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
        int r = gv_mock_profile_is_path(name) ? gv_mock_profile_load_file(name, &p, err)
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

/*
 * Whether the folder @root holds nothing but (with @temps_ok) temporary files
 * of the manifest, which an install killed while writing its intent record
 * into an empty root leaves.  Returns 1 empty, 0 not, negative errno.
 */
static int root_is_empty(const char *root, bool temps_ok, gv_error_t **err)
{
        _cleanup_close_ int fd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return io_error(err, errno, "open", root);
        DIR *d = fdopendir(TAKE_FD(fd));
        if (!d)
                return io_error(err, errno, "list", root);
        bool empty = true;
        struct dirent *de;
        while (empty && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
                    !(temps_ok && is_temp_of(de->d_name, GV_MOCK_MANIFEST_NAME)))
                        empty = false;
        closedir(d);
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
                        return io_error(err, errno, "inspect", c->root);
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
        step(c);
        return manifest_write(dir, &m, err);
}

static int intent_nodes_as_files(ictx_t *c, gv_error_t **err)
{
        bool changed = false;
        for (size_t i = 0; i < c->intent.n; i++) {
                /* a character device an earlier install made stays listed as one until it is replaced */
                const entry_t *o = elist_find(&c->old, c->intent.v[i].path);
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
        if (c->root_created && !exists_l(c->root)) {
                _cleanup_free_ char *stage = stage_path(c->root);
                if (!stage)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                _cleanup_free_ char *parent = strndup(c->root, (size_t) (strrchr(c->root, '/') - c->root));
                if (!parent)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                int r;
                if (*parent && (r = gv_mkdir_p(parent, 0755, err)) < 0)
                        return r;
                step(c);
                if ((r = stage_clean(stage, err)) < 0)
                        return r;
                step(c);
                if (mkdir(stage, 0755) < 0)
                        return io_error(err, errno, "create folder", stage);
                if ((r = write_manifest(c, stage, &c->intent, true, err)) < 0) {
                        (void) stage_clean(stage, NULL);
                        return r;
                }
                step(c);
                if (rename(stage, c->root) < 0) {
                        r = io_error(err, errno, "rename to", c->root);
                        (void) stage_clean(stage, NULL);
                        return r;
                }
                return 0;
        }
        step(c);
        (void) remove_manifest_temps(c->root);
        return write_manifest(c, c->root, &c->intent, true, err);
}

/*
 * The mock libcuda.so.1 (mock/cuda), when built: found beside the mock
 * libnvidia-ml (an installed or GPU_VALIDATOR_MOCK_DIR folder) or in the
 * build tree's mock/cuda, and laid out as usr/lib64/libcuda.so.<driver
 * version> with its .so.1 and .so links, as the driver installs it.  Without
 * one the root has no libcuda and cuda-check takes its NVML-only path.
 */
static int install_libcuda(ictx_t *c, const char *nvml_lib, const char *driver_version, gv_error_t **err)
{
        const char *slash = strrchr(nvml_lib, '/');
        int dir_len = slash ? (int) (slash - nvml_lib) : 1;
        const char *dir = slash ? nvml_lib : ".";
        static const char *const rel[] = { "libcuda.so.1", "../cuda/libcuda.so.1" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(rel); i++) {
                _cleanup_free_ char *src = NULL, *lib = NULL;
                if (asprintf(&src, "%.*s/%s", dir_len, dir, rel[i]) < 0 ||
                    asprintf(&lib, "usr/lib64/libcuda.so.%s", driver_version) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (!is_file(src))
                        continue;
                int r;
                if ((r = copy_file(c, src, lib, 0755, err)) < 0 ||
                    (r = put_link(c, "usr/lib64/libcuda.so.1", lib + strlen("usr/lib64/"), err)) < 0 ||
                    (r = put_link(c, "usr/lib64/libcuda.so", "libcuda.so.1", err)) < 0)
                        return r;
                return 0;
        }
        return 0;
}

/* NVML_DEVICE_MIG_ENABLE */
#define MIG_ENABLED 1u
/*
 * MIG capability minors as the NVIDIA driver numbers them (nv-caps; MIG user
 * guide, "Device Nodes and Capabilities"): config 1, monitor 2, then per GPU
 * minor g, per GPU instance i (0..14) access = 3 + g * 135 + i * 9, and its
 * compute instance c (0..7) access = that + 1 + c.
 */
#define CAP_CONFIG_MINOR 1u
#define CAP_MONITOR_MINOR 2u
#define CAP_MAX_GI 15u
#define CAP_MAX_CI 8u
#define CAP_PER_GI (1u + CAP_MAX_CI)
#define CAP_PER_GPU (CAP_MAX_GI * CAP_PER_GI)

static unsigned cap_gi_minor(unsigned gpu, unsigned gi)
{
        return 3u + gpu * CAP_PER_GPU + gi * CAP_PER_GI;
}

static unsigned cap_ci_minor(unsigned gpu, unsigned gi, unsigned ci)
{
        return cap_gi_minor(gpu, gi) + 1u + ci;
}

static bool mig_on(const gv_mock_device_t *d)
{
        return d->mig_capable && d->mig_mode_current == MIG_ENABLED && d->n_mig_devices > 0;
}

/* /proc/driver/nvidia-caps/mig-minors: every possible capability of every GPU, as the driver lists them. */
static char *mig_minors_text(const gv_mock_profile_t *p)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fprintf(f, "config %u\nmonitor %u\n", CAP_CONFIG_MINOR, CAP_MONITOR_MINOR);
        for (unsigned i = 0; i < p->device_count; i++) {
                unsigned g = p->devices[i].minor_number;
                for (unsigned gi = 0; gi < CAP_MAX_GI; gi++) {
                        fprintf(f, "gpu%u/gi%u/access %u\n", g, gi, cap_gi_minor(g, gi));
                        for (unsigned ci = 0; ci < CAP_MAX_CI; ci++)
                                fprintf(f, "gpu%u/gi%u/ci%u/access %u\n", g, gi, ci, cap_ci_minor(g, gi, ci));
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/*
 * One capability: its /proc/driver/nvidia/capabilities/<rel> file
 * ("DeviceFileMinor: N", "DeviceFileMode: <decimal mode>", "DeviceFileModify: 1")
 * and its /dev/nvidia-caps/nvidia-cap<minor> node.
 */
static int put_cap(ictx_t *c, const char *rel, unsigned minor_no, unsigned mode, gv_mock_nodes_t *kind, char **why,
                   gv_error_t **err)
{
        _cleanup_free_ char *path = NULL, *text = NULL, *node = NULL;
        if (asprintf(&path, "proc/driver/nvidia/capabilities/%s", rel) < 0 ||
            asprintf(&text, "DeviceFileMinor: %u\nDeviceFileMode: %u\nDeviceFileModify: 1\n", minor_no, mode) < 0 ||
            asprintf(&node, "dev/nvidia-caps/nvidia-cap%u", minor_no) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        _cleanup_free_ char *dir = strndup(path, (size_t) (strrchr(path, '/') - path)); /* path holds a '/' */
        if (!dir)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        int r;
        if ((r = ensure_dirs(c, dir, err)) < 0 || (r = put_file(c, path, text, strlen(text), 0444, err)) < 0)
                return r;
        return put_node(c, node, GV_MOCK_CAPS_MAJOR, minor_no, kind, why, err);
}

/* Whether an earlier MIG device of @d (before index @k) is in the same GPU instance. */
static bool gi_seen(const gv_mock_device_t *d, size_t k)
{
        for (size_t j = 0; j < k; j++)
                if (d->mig_devices[j].gi_id == d->mig_devices[k].gi_id)
                        return true;
        return false;
}

/* What the driver exposes for MIG (docs/mock-driver-root.md "MIG"); nothing when no GPU has MIG on. */
static int lay_out_mig(ictx_t *c, const gv_mock_profile_t *p, gv_mock_nodes_t *kind, char **why, gv_error_t **err)
{
        bool any = false;
        for (unsigned i = 0; i < p->device_count; i++)
                any = any || mig_on(&p->devices[i]);
        if (!any)
                return 0;
        _cleanup_free_ char *minors = mig_minors_text(p);
        if (!minors)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        int r;
        if ((r = ensure_dirs(c, "proc/driver/nvidia-caps", err)) < 0 || (r = ensure_dirs(c, "dev/nvidia-caps", err)) < 0 ||
            (r = put_file(c, "proc/driver/nvidia-caps/mig-minors", minors, strlen(minors), 0444, err)) < 0 ||
            (r = put_cap(c, "mig/config", CAP_CONFIG_MINOR, 0400, kind, why, err)) < 0 ||
            (r = put_cap(c, "mig/monitor", CAP_MONITOR_MINOR, 0444, kind, why, err)) < 0)
                return r;
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                if (!mig_on(d))
                        continue;
                unsigned g = d->minor_number;
                for (size_t k = 0; k < d->n_mig_devices; k++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[k];
                        /* ids past the driver's range (the mock profile allows up to 63) have no capability */
                        if (m->gi_id >= CAP_MAX_GI || m->ci_id >= CAP_MAX_CI)
                                continue;
                        _cleanup_free_ char *gi = NULL, *ci = NULL;
                        if (asprintf(&gi, "gpu%u/mig/gi%u/access", g, m->gi_id) < 0 ||
                            asprintf(&ci, "gpu%u/mig/gi%u/ci%u/access", g, m->gi_id, m->ci_id) < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        if (!gi_seen(d, k) && (r = put_cap(c, gi, cap_gi_minor(g, m->gi_id), 0444, kind, why, err)) < 0)
                                return r;
                        if ((r = put_cap(c, ci, cap_ci_minor(g, m->gi_id, m->ci_id), 0444, kind, why, err)) < 0)
                                return r;
                }
        }
        return 0;
}

/* /proc/devices: the character majors tools look up by name (nvidia-frontend, nvidia-uvm, nvidia-caps). */
static char *proc_devices_text(void)
{
        char *s = NULL;
        if (asprintf(&s, "Character devices:\n%3u nvidia-frontend\n%3u nvidia-uvm\n%3u nvidia-caps\n\nBlock devices:\n",
                     GV_MOCK_NVIDIA_MAJOR, GV_MOCK_UVM_MAJOR, GV_MOCK_CAPS_MAJOR) < 0)
                return NULL;
        return s;
}

/*
 * sys/bus/pci/devices/<domain:bus:dev.fn>/ with the files tools read there:
 * vendor, device, subsystem_vendor, subsystem_device, class (3D controller
 * 0x030200), numa_node (-1: no NUMA affinity, as a single-node host says).
 */
static int lay_out_pci(ictx_t *c, const gv_mock_profile_t *p, gv_error_t **err)
{
        int r;
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                _cleanup_free_ char *dir = NULL;
                if (asprintf(&dir, "sys/bus/pci/devices/%04x:%02x:%02x.0", d->pci_domain & 0xffffu, d->pci_bus & 0xffu,
                             d->pci_device & 0x1fu) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if ((r = ensure_dirs(c, dir, err)) < 0)
                        return r;
                const struct {
                        const char *name;
                        int digits; /* hex digits; 0: "-1" */
                        unsigned value;
                } files[] = {
                        { "vendor", 4, 0x10deu },
                        { "device", 4, d->pci_device_id & 0xffffu },
                        { "subsystem_vendor", 4, d->pci_subsystem_id & 0xffffu },
                        { "subsystem_device", 4, (d->pci_subsystem_id >> 16) & 0xffffu },
                        { "class", 6, 0x030200u },
                        { "numa_node", 0, 0 }, /* no NUMA affinity */
                };
                for (size_t k = 0; k < GV_ARRAY_SIZE(files); k++) {
                        _cleanup_free_ char *f = gv_path_join(dir, files[k].name);
                        _cleanup_free_ char *text = NULL;
                        int n = files[k].digits ? asprintf(&text, "0x%0*x\n", files[k].digits, files[k].value)
                                                : asprintf(&text, "-1\n");
                        if (!f || n < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        if ((r = put_file(c, f, text, strlen(text), 0444, err)) < 0)
                                return r;
                }
        }
        return 0;
}

/*
 * etc/ld.so.conf (/usr/lib64) and etc/ld.so.cache listing the sonames the
 * root holds (libnvidia-ml.so.1, and libcuda.so.1 when installed) at their
 * paths inside the root, as `ldconfig -r <root>` would write it.
 */
static int lay_out_ldcache(ictx_t *c, gv_error_t **err)
{
        gv_ldcache_lib_t libs[2] = { { "libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1" } };
        size_t n = 1;
        if (elist_find(&c->now, "usr/lib64/libcuda.so.1"))
                libs[n++] = (gv_ldcache_lib_t){ "libcuda.so.1", "/usr/lib64/libcuda.so.1" };
        _cleanup_free_ char *cache = NULL;
        size_t len = 0;
        int r = gv_ldcache_build(libs, n, &cache, &len);
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_INTERNAL, "build ld.so.cache: %s", strerror(-r));
        static const char conf[] = "/usr/lib64\n";
        if ((r = ensure_dirs(c, "etc", err)) < 0 || (r = put_file(c, "etc/ld.so.conf", conf, strlen(conf), 0644, err)) < 0)
                return r;
        return put_file(c, "etc/ld.so.cache", cache, len, 0644, err);
}

/* What NVIDIA's container toolkit and device plugin read besides the libraries (items of docs/mock-driver-root.md). */
static int lay_out_extras(ictx_t *c, const gv_mock_profile_t *p, gv_mock_nodes_t *kind, char **why, gv_error_t **err)
{
        int r;
        _cleanup_free_ char *devices = proc_devices_text();
        if (!devices)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if ((r = put_node(c, "dev/nvidia-modeset", GV_MOCK_NVIDIA_MAJOR, GV_MOCK_MODESET_MINOR, kind, why, err)) < 0 ||
            (r = put_file(c, "proc/devices", devices, strlen(devices), 0444, err)) < 0 ||
            (r = lay_out_mig(c, p, kind, why, err)) < 0 || (r = lay_out_pci(c, p, err)) < 0)
                return r;
        return lay_out_ldcache(c, err);
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
            (r = put_link(c, "usr/lib64/libnvidia-ml.so", "libnvidia-ml.so.1", err)) < 0 ||
            (r = install_libcuda(c, o->nvml_lib, p->driver_version, err)) < 0)
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
            (r = put_node(c, "dev/nvidia-uvm-tools", GV_MOCK_UVM_MAJOR, 1, kind, why, err)) < 0 ||
            (r = lay_out_extras(c, p, kind, why, err)) < 0)
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

/*
 * Plans the layout: a dry run of lay_out() that records every folder, file,
 * link and node install will make, then the intent record c->intent: that
 * plan plus every entry of the old manifest (a killed update must still be
 * able to remove either).
 */
static int plan_layout(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, const char *cdi_dir,
                       const char *yaml, gv_mock_nodes_t kind, gv_error_t **err)
{
        _cleanup_free_ char *why = NULL, *spec = NULL;
        c->dry = true;
        int r = lay_out(c, o, p, cdi_dir, yaml, &kind, &why, &spec, err);
        c->dry = false;
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->now.n; i++)
                if (elist_add(&c->intent, c->now.v[i].path, c->now.v[i].type) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        for (size_t i = 0; i < c->old.n; i++)
                if (!elist_find(&c->intent, c->old.v[i].path) &&
                    elist_add(&c->intent, c->old.v[i].path, c->old.v[i].type) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        elist_free(&c->now);
        elist_free(&c->fresh);
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
                if (!elist_find(&c->now, c->old.v[i].path) &&
                    elist_add(&stale, c->old.v[i].path, c->old.v[i].type) < 0)
                        r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if (r == 0 && stale.n) {
                step(c);
                remove_entries(c->root, &stale, old->cdi_spec, old->previous_cdi_spec ? old->previous_cdi_spec : cdi_spec,
                               NULL, NULL);
        }
        for (size_t i = 0; i < stale.n && r == 0; i++) {
                if (stale.v[i].type != E_DIR)
                        continue;
                _cleanup_free_ char *full = full_path(c->root, stale.v[i].path);
                if (full && exists_l(full) && elist_add(&c->now, stale.v[i].path, E_DIR) < 0)
                        r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        elist_free(&stale);
        return r;
}

/*
 * Undoes a failed install: what this call created goes; the old manifest is
 * put back when there was one, else the intent record goes, and the root
 * when this call made it.
 */
static void roll_back(ictx_t *c, const manifest_t *old, int existed, bool started, const char *cdi_spec)
{
        remove_entries(c->root, &c->fresh, cdi_spec, old->cdi_spec, NULL, NULL);
        if (!started)
                return;
        (void) sweep_temps(c->root, &c->intent, cdi_spec, old->cdi_spec);
        if (existed == 1) {
                (void) manifest_write(c->root, old, NULL);
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
        char *r = *root = absolute(o->root);
        if (!r)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        while (strlen(r) > 1 && r[strlen(r) - 1] == '/')
                r[strlen(r) - 1] = '\0';
        if (strcmp(r, "/") == 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "refusing to use / as a mock driver root");
        if (!valid_utf8(r)) /* its paths go into the CDI spec, and YAML holds UTF-8 text only */
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: the root's path is not valid UTF-8, which the "
                                    "CDI spec (YAML) cannot hold; choose another folder", r);
        *cdi_dir = o->cdi_dir && *o->cdi_dir ? absolute(o->cdi_dir) : gv_path_join(r, "etc/cdi");
        if (!*cdi_dir)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        return 0;
}

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

        ictx_t c = { .hook = o->step_hook, .hook_data = o->step_data };
        manifest_t old = { 0 };
        _cleanup_free_ char *cdi_dir = NULL, *cdi_spec = NULL, *why = NULL, *spec_abs = NULL;
        int existed = 0;
        bool started = false;
        if ((r = resolve_paths(o, &c.root, &cdi_dir, err)) < 0)
                goto out;
        if ((existed = prepare_root(&c, &old, err)) < 0) {
                r = existed;
                goto out;
        }

        gv_mock_nodes_t kind = o->device_nodes;
        if (kind == GV_MOCK_NODES_DEFAULT)
                kind = geteuid() == 0 ? GV_MOCK_NODES_CHAR : GV_MOCK_NODES_FILES;
        gv_mock_nodes_t asked = kind;
        spec_abs = gv_path_join(cdi_dir, GV_MOCK_CDI_SPEC_NAME);
        if (!spec_abs) {
                r = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                goto out;
        }
        manifest_t meta = {
                .profile = p->name ? p->name : p->source,
                .profile_source = p->source,
                .node_name = p->node_name,
                .driver_version = p->driver_version,
                .cdi_spec = spec_abs,
                .previous_cdi_spec = old.cdi_spec && strcmp(old.cdi_spec, spec_abs) != 0 ? old.cdi_spec
                                                                                          : old.previous_cdi_spec,
                .gpu_count = p->device_count,
                .device_nodes = kind,
                .root_created = c.root_created,
        };
        c.meta = &meta;

        /* 1. the intent record, 2. the layout, 3. stale entries go, 4. the final manifest */
        if ((r = plan_layout(&c, o, p, cdi_dir, yaml, kind, err)) < 0)
                goto out;
        if ((r = start_install(&c, err)) < 0)
                goto out;
        started = true;
        (void) sweep_temps(c.root, &c.intent, spec_abs, meta.previous_cdi_spec);
        r = lay_out(&c, o, p, cdi_dir, yaml, &kind, &why, &cdi_spec, err);
        if (r == 0)
                r = drop_stale(&c, &old, cdi_spec, err);
        if (r == 0) {
                meta.device_nodes = kind;
                r = write_manifest(&c, c.root, &c.now, false, err);
        }
        if (r < 0) {
                roll_back(&c, &old, existed, started, cdi_spec ? cdi_spec : spec_abs);
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
                .updated = existed == 1 && !old.installing,
                .recovered = existed == 1 && old.installing,
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
