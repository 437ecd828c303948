/* SPDX-License-Identifier: Apache-2.0 */
/* Removing mock driver roots, and the removal helpers install rolls back with. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/root/root-internal.h"

static int remove_one(const char *root, const entry_t *e)
{
        _cleanup_free_ char *full = mr_full_path(root, e->path);
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
void mr_remove_entries(const char *root, elist_t *l, const char *spec, const char *spec2, unsigned *removed,
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
                                ok = mr_safe_relative(e->path) && !mr_parent_is_symlink(root, e->path);
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
 * and 16 hex digits) or mr_put_link() ("<base>.gv-tmp-<pid>") makes for @base.
 */
bool mr_is_temp_of(const char *name, const char *base)
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

/* A stream over a duplicate of the folder fd @dfd (which stays open); NULL with errno set. */
static DIR *opendir_dup(int dfd)
{
        int fd2 = dup(dfd);
        if (fd2 < 0)
                return NULL;
        DIR *d = fdopendir(fd2);
        if (!d) {
                int e = errno;
                close(fd2);
                errno = e;
        }
        return d;
}

/*
 * Removes the temporary files a killed install left beside @full (a file or
 * link it writes): only files and links named as mr_is_temp_of() says.  Returns
 * how many went.
 */
static unsigned sweep_temps_of(const char *full)
{
        const char *base;
        _cleanup_close_ int dfd = mr_open_parent(full, &base);
        if (dfd < 0)
                return 0;
        _cleanup_closedir_ DIR *d = opendir_dup(dfd);
        if (!d)
                return 0;
        unsigned n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (!mr_is_temp_of(de->d_name, base) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        n++;
        }
        return n;
}

/*
 * The temporary files of every file, link and node of @l and of the
 * manifest, under the same rules as mr_remove_entries() (outside the root only
 * beside the recorded CDI specs).
 */
unsigned mr_sweep_temps(const char *root, const elist_t *l, const char *spec, const char *spec2)
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
                } else if (!mr_safe_relative(e->path) || mr_parent_is_symlink(root, e->path)) {
                        continue;
                }
                _cleanup_free_ char *full = mr_full_path(root, e->path);
                if (full)
                        n += sweep_temps_of(full);
        }
        return n;
}

/* "<parent>/.<name>.gv-mock-install" for the root "<parent>/<name>" (heap; NULL when out of memory). */
char *mr_stage_path(const char *root)
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
int mr_stage_clean(const char *stage, gv_error_t **err)
{
        struct stat st;
        if (lstat(stage, &st) < 0) {
                if (errno == ENOENT)
                        return 0;
                return mr_io_error(err, errno, "inspect", stage);
        }
        if (!S_ISDIR(st.st_mode))
                return gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG, "%s is in the way of mock install and is not "
                                    "a folder it made; remove it", stage);
        _cleanup_close_ int dfd = open(stage, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return mr_io_error(err, errno, "open", stage);
        _cleanup_closedir_ DIR *d = opendir_dup(dfd);
        if (!d)
                return mr_io_error(err, errno, "list", stage);
        struct dirent *de;
        int r = 0;
        while (r == 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strcmp(de->d_name, GV_MOCK_MANIFEST_NAME) != 0 && !mr_is_temp_of(de->d_name, GV_MOCK_MANIFEST_NAME))
                        r = gv_error_set(err, ENOTEMPTY, GV_REASON_CONFIG,
                                         "%s, left by an interrupted mock install, holds %s, which install does not "
                                         "make; remove it by hand",
                                         stage, de->d_name);
                else if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT)
                        r = mr_io_error(err, errno, "remove", de->d_name);
        }
        if (r < 0)
                return r;
        if (rmdir(stage) < 0 && errno != ENOENT)
                return mr_io_error(err, errno, "remove", stage);
        return 1;
}

/*
 * A root without a manifest: what a killed install can leave there is the
 * manifest's temporary files (it was writing its intent record into an
 * empty root) -- remove those.  Returns how many went.
 */
unsigned mr_remove_manifest_temps(const char *root)
{
        _cleanup_free_ char *m = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        return m ? sweep_temps_of(m) : 0;
}

/* The folder `mock set` writes its runtime files in, beside the profile (mock/nvml/mock-set.c). */
#define RUNTIME_DIR "usr/lib64"

/*
 * Removes the runtime files `gpu-validator mock set` writes beside the root's
 * profile -- GV_MOCK_ROOT_STATE_NAME, GV_MOCK_ROOT_XID_NAME and the temporary
 * files of the state's atomic write -- so the folder they sit in can go.
 * Only when the manifest lists that folder and the profile in it, the folder
 * is reached without a link (O_NOFOLLOW, no symlinked parent), and each file
 * is a regular file (a link there is never followed nor removed).  Returns how
 * many went.
 */
static unsigned remove_runtime_files(const char *root, const elist_t *l)
{
        const entry_t *dir = mr_elist_find(l, RUNTIME_DIR);
        const entry_t *prof = mr_elist_find(l, RUNTIME_DIR "/" GV_MOCK_ROOT_PROFILE_NAME);
        if (!dir || dir->type != E_DIR || !prof || prof->type != E_FILE || mr_parent_is_symlink(root, RUNTIME_DIR))
                return 0;
        _cleanup_free_ char *full = gv_path_join(root, RUNTIME_DIR);
        if (!full)
                return 0;
        _cleanup_close_ int dfd = open(full, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return 0;
        _cleanup_closedir_ DIR *d = opendir_dup(dfd);
        if (!d)
                return 0;
        unsigned n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                bool known = strcmp(de->d_name, GV_MOCK_ROOT_STATE_NAME) == 0 ||
                             strcmp(de->d_name, GV_MOCK_ROOT_XID_NAME) == 0 ||
                             mr_is_temp_of(de->d_name, GV_MOCK_ROOT_STATE_NAME);
                if (!known || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        n++;
        }
        return n;
}

int gv_mock_remove(const char *root, unsigned *removed, unsigned *kept, gv_error_t **err)
{
        if (!root || !*root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no root given");
        _cleanup_free_ char *abs = mr_absolute(root);
        if (!abs)
                return gv_error_oom(err);
        while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
                abs[strlen(abs) - 1] = '\0';
        _cleanup_(mr_manifest_free) manifest_t m = { 0 };
        int r = mr_manifest_read(abs, &m, err);
        if (r == -ENOENT) {
                gv_error_free(err);
                /* what an install killed before its intent record was in place leaves */
                _cleanup_free_ char *stage = mr_stage_path(abs);
                int sr = stage ? mr_stage_clean(stage, err) : gv_error_oom(err);
                if (sr < 0)
                        return sr;
                unsigned temps = mr_remove_manifest_temps(abs);
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
        rm += mr_sweep_temps(abs, &m.entries, m.cdi_spec, m.previous_cdi_spec);
        rm += remove_runtime_files(abs, &m.entries);
        mr_remove_entries(abs, &m.entries, m.cdi_spec, m.previous_cdi_spec, &rm, &kp);
        _cleanup_free_ char *mpath = gv_path_join(abs, GV_MOCK_MANIFEST_NAME);
        if (mpath && unlink(mpath) < 0 && errno != ENOENT)
                return mr_io_error(err, errno, "remove", mpath);
        if (m.root_created) {
                if (rmdir(abs) == 0)
                        rm++;
                else if (errno != ENOENT)
                        kp++;
        }
        if (removed)
                *removed = rm;
        if (kept)
                *kept = kp;
        return 0;
}

int gv_mock_remove_dev_char_links(const char *root, const char *dir, unsigned *removed, gv_error_t **err)
{
        unsigned n = 0;
        if (removed)
                *removed = 0;
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d) {
                if (errno == ENOENT)
                        return 0;
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", dir, strerror(errno));
        }
        size_t rlen = strlen(root);
        while (rlen > 1 && root[rlen - 1] == '/')
                rlen--;
        struct dirent *de;
        while ((de = readdir(d))) {
                char target[4096];
                ssize_t l = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (l < 0)
                        continue; /* not a symbolic link */
                target[l] = '\0';
                if ((size_t) l <= rlen || strncmp(target, root, rlen) != 0 || target[rlen] != '/')
                        continue; /* points elsewhere: not ours */
                if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
                        return gv_error_set(err, errno, GV_REASON_IO, "%s/%s: %s", dir, de->d_name, strerror(errno));
                n++;
        }
        if (removed)
                *removed = n;
        return 0;
}
