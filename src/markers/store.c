/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The marker store: opening the folder, the writer lock, invalidate /
 * publish / fail / cleanup in the order that keeps the chain invariant
 * (docs/markers.md), and inspection.
 */
#include "markers.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"
#include "markers-internal.h"

#define LOCK_FILE ".gpu-validator.lock"

/* ---- small helpers ---- */

static bool generation_valid(const char *g)
{
        if (!g || strlen(g) != GV_GENERATION_HEX_LEN)
                return false;
        for (; *g; g++)
                if (!((*g >= '0' && *g <= '9') || (*g >= 'a' && *g <= 'f')))
                        return false;
        return true;
}

static char *rfc3339_now(void)
{
        struct timespec ts;
        struct tm tm;
        char *s = NULL;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (!gmtime_r(&ts.tv_sec, &tm))
                return NULL;
        if (asprintf(&s, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec) < 0)
                return NULL;
        return s;
}

static bool is_stray_temp(const char *name)
{
        if (name[0] != '.')
                return false;
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                const char *f = gv_marker_file((gv_marker_id_t) i);
                size_t fl = strlen(f);
                if (strncmp(name + 1, f, fl) == 0 && strncmp(name + 1 + fl, ".tmp-", 5) == 0)
                        return true;
        }
        return false;
}

/* Remove ".<marker>.tmp-*" files.  Best effort; returns the number removed or -errno. */
static int remove_stray_temps(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                int e = errno;
                close(fd);
                return -e;
        }
        int removed = 0, first = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!is_stray_temp(de->d_name))
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) == 0)
                        removed++;
                else if (errno != ENOENT && first == 0)
                        first = -errno;
        }
        return first < 0 ? first : removed;
}

/* What a non-regular file at the lock's name is, for the message. */
static const char *file_kind(mode_t mode)
{
        return S_ISDIR(mode)    ? "a folder"
               : S_ISLNK(mode)  ? "a symbolic link"
               : S_ISFIFO(mode) ? "a FIFO"
               : S_ISSOCK(mode) ? "a socket"
               : S_ISCHR(mode)  ? "a character device"
               : S_ISBLK(mode)  ? "a block device"
                                : "not a regular file";
}

/* The error for a lock file that is not a regular file: -ENOLCK, and what to do next. */
static int lock_not_regular(const gv_store_t *s, mode_t mode, gv_error_t **err)
{
        return gv_error_set(err, ENOLCK, GV_REASON_IO,
                            "%s/%s is %s, not a regular file: the writer lock cannot be taken, so nothing can be "
                            "published in this folder; remove it (rm -r '%s/%s') and run again -- gpu-validator "
                            "creates a fresh one",
                            s->dir, LOCK_FILE, file_kind(mode), s->dir, LOCK_FILE);
}

/*
 * Take the writer lock; returns the lock fd (close it to release) or -errno
 * with *err.  The lock file is opened with O_NOFOLLOW|O_NONBLOCK (a planted
 * symbolic link is never followed, a planted FIFO never blocks) and must be a
 * regular file: anything else is -ENOLCK with a message saying what to do.
 */
static int store_lock(gv_store_t *s, bool nonblock, gv_error_t **err)
{
        _cleanup_close_ int fd =
                openat(s->dirfd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
        if (fd < 0) {
                int e = errno;
                struct stat lst;
                if ((e == ELOOP || e == EISDIR || e == ENXIO || e == ETXTBSY) &&
                    fstatat(s->dirfd, LOCK_FILE, &lst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(lst.st_mode))
                        return lock_not_regular(s, lst.st_mode, err);
                return gv_error_set(err, e, GV_REASON_IO, "%s/%s: open writer lock: %s", s->dir, LOCK_FILE,
                                    strerror(e));
        }
        struct stat st;
        if (fstat(fd, &st) < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "%s/%s: stat: %s", s->dir, LOCK_FILE,
                                    strerror(errno));
        if (!S_ISREG(st.st_mode))
                return lock_not_regular(s, st.st_mode, err);
        while (flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0)) < 0) {
                if (errno == EINTR)
                        continue;
                return gv_error_set(err, errno, GV_REASON_IO, "%s/%s: lock: %s", s->dir, LOCK_FILE,
                                    strerror(errno));
        }
        return TAKE_FD(fd);
}

/*
 * The writer lock for a removal (invalidate, fail, cleanup): removal does not
 * need the lock to be trustworthy (docs/markers.md "Ordering and the
 * invariant"), so when it cannot be taken the removal goes on without it.
 * Returns the lock fd (>= 0), or -1 with *lock_err holding why there is none.
 */
static int removal_lock(gv_store_t *s, gv_error_t **lock_err)
{
        int fd = store_lock(s, false, lock_err);
        return fd < 0 ? -1 : fd;
}

/* unlink a marker; a missing one is fine, a folder at its name is an error. */
static int remove_marker(gv_store_t *s, gv_marker_id_t id, gv_error_t **err)
{
        const char *f = gv_marker_file(id);
        if (unlinkat(s->dirfd, f, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno == EISDIR || errno == EPERM) {
                struct stat st;
                if (fstatat(s->dirfd, f, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                        return gv_error_set(err, EISDIR, GV_REASON_IO,
                                            "%s/%s: a folder sits where a marker belongs; remove it", s->dir, f);
        }
        return gv_error_set(err, errno, GV_REASON_IO, "%s/%s: remove: %s", s->dir, f, strerror(errno));
}

/* Keeps the first error: later failures are counted but do not overwrite *err. */
static void keep_first(int *first, int r)
{
        if (r < 0 && *first == 0)
                *first = r;
}

/*
 * Remove every marker downstream of @id, the most downstream first (the enum
 * is in chain order, so walking it backwards is downstream-first).  Goes on
 * after a failure and returns the first one.
 */
static int remove_downstream(gv_store_t *s, gv_marker_id_t id, gv_error_t **err)
{
        int first = 0;
        for (int i = GV_MARKER__MAX - 1; i >= 0; i--)
                if (gv_marker_is_downstream((gv_marker_id_t) i, id))
                        keep_first(&first, remove_marker(s, (gv_marker_id_t) i, first ? NULL : err));
        return first;
}

/*
 * For a writer: attach to the folder, which must exist, and take the writer
 * lock.  Returns the lock's fd, or negative errno (-ENOENT with no folder).
 */
static int writer_lock(gv_store_t *s, gv_error_t **err)
{
        int r = gv_store_attach(s, err);
        if (r < 0)
                return r;
        if (r == 0)
                return gv_error_set(err, ENOENT, GV_REASON_IO, "%s: %s", s->dir, strerror(ENOENT));
        return store_lock(s, false, err);
}

/* ---- open / close ---- */

int gv_store_attach(gv_store_t *s, gv_error_t **err)
{
        if (s->dirfd >= 0) {
                /* A folder removed (and perhaps re-created) under us: attach again. */
                struct stat st;
                if (fstat(s->dirfd, &st) == 0 && st.st_nlink > 0)
                        return 1;
                close(s->dirfd);
                s->dirfd = -1;
        }
        if (s->create) {
                int r = gv_mkdir_p(s->dir, 0755, err);
                if (r < 0)
                        return r;
        }
        int fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                struct stat st;
                if (errno == ELOOP || (errno == ENOTDIR && lstat(s->dir, &st) == 0 && S_ISLNK(st.st_mode)))
                        return gv_error_set(err, ELOOP, GV_REASON_IO, "%s: is a symbolic link; refused", s->dir);
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", s->dir, strerror(errno));
        }
        s->dirfd = fd;
        return 1;
}

/* Whether @s is a UUID as the kernel writes it: 8-4-4-4-12 hex digits (either case). */
static bool boot_id_valid(const char *s)
{
        static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
        for (size_t i = 0; i < sizeof(shape) - 1; i++) {
                bool ok = shape[i] == '-' ? s[i] == '-' : isxdigit((unsigned char) s[i]) != 0;
                if (!ok)
                        return false;
        }
        return s[sizeof(shape) - 1] == '\0';
}

/*
 * The one rule for a boot id file, whichever command reads it: a UUID
 * (8-4-4-4-12 hex, as /proc/sys/kernel/random/boot_id holds), optionally
 * followed by white space (the kernel's newline).  Anything else -- a file
 * that is missing, unreadable or not a regular file included -- is a config
 * error (EINVAL, GV_REASON_CONFIG: exit 2) naming the file, so that no
 * command takes it for a missing status folder.
 */
static int read_boot_id(const char *path, char **out, gv_error_t **err)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_error_ gv_error_t *rerr = NULL;
        size_t len = 0;
        int r = gv_read_file_at(AT_FDCWD, path, false, 4096, &buf, &len, &rerr);
        if (r == -ENOMEM)
                return gv_error_oom(err);
        if (r < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "cannot read the boot id: %s (--boot-id-file must name a readable file "
                                    "holding a UUID, as %s does)",
                                    rerr ? rerr->msg : path, GV_DEFAULT_BOOT_ID_PATH);
        size_t n = len;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
                buf[--n] = '\0';
        if (strlen(buf) != n || !boot_id_valid(buf))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: not a boot id (expected a UUID, 8-4-4-4-12 hex digits, as in %s)", path,
                                    GV_DEFAULT_BOOT_ID_PATH);
        *out = TAKE_PTR(buf);
        return 0;
}

/*
 * Spell @dir without "." and ".." components, repeated or trailing slashes, in place
 * ("/x/link/./" -> "/x/link", "/x/link/sub/.." -> "/x/link"), so that the folder's own last
 * component is a name that O_NOFOLLOW judges: open() follows a symbolic link written "link/",
 * "link/." or "link/sub/..".  A ".." removes the component before it only when that component is
 * not itself a symbolic link (lstat()): "dir/symlink/.." names the parent of the link's target,
 * not "dir", and is refused (ELOOP, GV_REASON_IO).  A ".." at the start of a relative path stays;
 * "/.." is "/".  "/" and "." stay as they are.
 */
static int normalize_dir(char *dir, gv_error_t **err)
{
        bool absolute = dir[0] == '/';
        size_t n = absolute ? 1 : 0; /* length of the result, built in place (it only shrinks) */
        size_t leading_dotdots = 0;  /* relative ".." components at the start of the result */
        const char *p = dir;
        while (*p) {
                while (*p == '/')
                        p++;
                size_t len = strcspn(p, "/");
                if (len == 0 || (len == 1 && p[0] == '.')) {
                        p += len;
                        continue;
                }
                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        size_t base = absolute ? 1 : 0;
                        if (n > base + (leading_dotdots ? leading_dotdots * 3 - 1 : 0)) {
                                /* drop the last component, unless it is a symbolic link */
                                char saved = dir[n];
                                dir[n] = '\0';
                                struct stat st;
                                bool link = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode);
                                if (link)
                                        return gv_error_set(err, ELOOP, GV_REASON_IO,
                                                            "%s: '..' after the symbolic link %s; refused (name the "
                                                            "status folder without '..')", dir, dir);
                                dir[n] = saved;
                                while (n > base && dir[n - 1] != '/')
                                        n--;
                                if (n > base)
                                        n--; /* the slash before it */
                                p += len;
                                continue;
                        }
                        if (absolute) { /* "/.." is "/" */
                                p += len;
                                continue;
                        }
                        leading_dotdots++;
                }
                if (n > 0 && dir[n - 1] != '/')
                        dir[n++] = '/';
                memmove(dir + n, p, len);
                n += len;
                p += len;
        }
        if (n == 0)
                dir[n++] = '.';
        dir[n] = '\0';
        return 0;
}

int gv_store_open(const gv_store_options_t *opts, gv_store_t **out, gv_error_t **err)
{
        static const gv_store_options_t defaults = { 0 };
        if (!out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_store_open: NULL argument");
        if (!opts)
                opts = &defaults;

        _cleanup_free_ char *spelled = NULL;
        gv_store_t *s = calloc(1, sizeof(*s));
        if (!s)
                return gv_error_oom(err);
        s->dirfd = -1;
        s->create = opts->create;
        s->dir = strdup(opts->dir ? opts->dir : GV_DEFAULT_OUTPUT_DIR);
        s->version = strdup(opts->validator_version ? opts->validator_version : GV_VERSION);
        int r;
        if (!s->dir || !s->version) {
                r = gv_error_oom(err);
                goto fail;
        }
        /* the original spelling goes into the messages of a refusal */
        spelled = strdup(s->dir);
        if (!spelled) {
                r = gv_error_oom(err);
                goto fail;
        }
        r = normalize_dir(s->dir, err);
        if (r < 0) {
                gv_error_prefix(err, "%s", spelled);
                goto fail;
        }
        r = read_boot_id(opts->boot_id_path ? opts->boot_id_path : GV_DEFAULT_BOOT_ID_PATH, &s->boot_id, err);
        if (r < 0)
                goto fail;
        r = gv_store_attach(s, err);
        if (r < 0)
                goto fail;
        if (r == 0 && !opts->allow_missing) {
                r = gv_error_set(err, ENOENT, GV_REASON_IO, "%s: %s", s->dir, strerror(ENOENT));
                goto fail;
        }
        if (s->dirfd >= 0 && !opts->read_only) {
                /* Stray temp files of a crashed writer; only when no writer is at work right now. */
                int lock = store_lock(s, true, NULL);
                if (lock >= 0) {
                        remove_stray_temps(s->dirfd);
                        close(lock);
                }
        }
        *out = s;
        return 0;
fail:
        gv_store_close(&s);
        return r;
}

void gv_store_close(gv_store_t **store)
{
        if (!store || !*store)
                return;
        gv_store_t *s = *store;
        if (s->dirfd >= 0)
                close(s->dirfd);
        gv_dirwatch_close(&s->watch);
        free(s->dir);
        free(s->boot_id);
        free(s->version);
        free(s);
        *store = NULL;
}

const char *gv_store_dir(const gv_store_t *store)
{
        return store ? store->dir : NULL;
}

const char *gv_store_boot_id(const gv_store_t *store)
{
        return store ? store->boot_id : NULL;
}

/* ---- writers ---- */

int gv_store_invalidate(gv_store_t *store, gv_marker_id_t id, gv_error_t **err)
{
        if (!store || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "invalidate: bad store or marker id");
        int r = gv_store_attach(store, err);
        if (r <= 0)
                return r; /* no folder: nothing to remove */
        _cleanup_error_ gv_error_t *lock_err = NULL;
        _cleanup_close_ int lock = removal_lock(store, &lock_err);
        int first = remove_downstream(store, id, err);
        keep_first(&first, remove_marker(store, id, first ? NULL : err));
        if (first == 0 && lock < 0) {
                /* Removed; but no marker can be published here: say why now, before validating. */
                first = -lock_err->errnum;
                if (err) {
                        gv_error_free(err);
                        *err = TAKE_PTR(lock_err);
                }
        }
        return first;
}

int gv_store_fail(gv_store_t *store, gv_marker_id_t id, gv_error_t **err)
{
        if (!store || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "fail: bad store or marker id");
        int r = gv_store_attach(store, err);
        if (r <= 0)
                return r;
        /* Without the lock too: a failure's markers must go whatever sits at the lock's name. */
        _cleanup_error_ gv_error_t *lock_err = NULL;
        _cleanup_close_ int lock = removal_lock(store, &lock_err);
        int first = remove_downstream(store, id, err);
        keep_first(&first, remove_marker(store, id, first ? NULL : err));
        if (gv_marker_companion(id) != GV_MARKER_INVALID)
                keep_first(&first, remove_marker(store, gv_marker_companion(id), first ? NULL : err));
        return first;
}

int gv_store_cleanup(gv_store_t *store, gv_error_t **err)
{
        if (!store)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "cleanup: NULL store");
        int r = gv_store_attach(store, err);
        if (r <= 0)
                return r;
        _cleanup_error_ gv_error_t *lock_err = NULL;
        _cleanup_close_ int lock = removal_lock(store, &lock_err);
        int first = 0;
        for (int i = GV_MARKER__MAX - 1; i >= 0; i--)
                keep_first(&first, remove_marker(store, (gv_marker_id_t) i, first ? NULL : err));
        if (lock < 0) {
                /* Every marker removed, but temp files stay (a writer might own one) and a person must act. */
                if (first == 0) {
                        first = gv_error_set(err, lock_err->errnum, lock_err->reason,
                                             "every marker was removed, but %s", lock_err->msg);
                }
                return first;
        }
        r = remove_stray_temps(store->dirfd);
        if (r < 0 && first == 0)
                first = gv_error_set(err, r, GV_REASON_IO, "%s: remove temporary files: %s", store->dir,
                                     strerror(-r));
        return first;
}

static bool reserved_key(const char *k, gv_marker_id_t parent)
{
        return strcmp(k, "VALIDATOR_VERSION") == 0 || strcmp(k, "GENERATION") == 0 || strcmp(k, "BOOT_ID") == 0 ||
               strcmp(k, "VALIDATED_AT") == 0 ||
               (parent != GV_MARKER_INVALID && strcmp(k, gv_marker_generation_key(parent)) == 0);
}

int gv_store_publish(gv_store_t *store, gv_marker_id_t id, const gv_kvlist_t *facts, bool host_driver,
                     const char *expect_parent_generation, char generation_out[GV_GENERATION_HEX_LEN + 1],
                     gv_error_t **err)
{
        if (!store || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "publish: bad store or marker id");
        const char *file = gv_marker_file(id);
        if (gv_marker_companion_of(id) != GV_MARKER_INVALID)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "publish: %s is written with %s (host_driver=true)",
                                    file, gv_marker_file(gv_marker_companion_of(id)));
        gv_marker_id_t parent = gv_marker_parent(id);

        _cleanup_close_ int lock = writer_lock(store, err);
        if (lock < 0)
                return lock;

        /* Build the content first: nothing is touched when it is refused. */
        char gen[GV_GENERATION_HEX_LEN + 1];
        int r = gv_generation_new(gen);
        if (r < 0)
                return gv_error_set(err, r, GV_REASON_INTERNAL, "getrandom: %s", strerror(-r));
        _cleanup_free_ char *now = rfc3339_now();
        if (!now)
                return gv_error_oom(err);

        gv_kvlist_t l = { 0 };
        _cleanup_free_ char *text = NULL;
        if ((r = gv_kvlist_set(&l, "VALIDATOR_VERSION", store->version, err)) < 0 ||
            (r = gv_kvlist_set(&l, "GENERATION", gen, err)) < 0 ||
            (r = gv_kvlist_set(&l, "BOOT_ID", store->boot_id, err)) < 0 ||
            (r = gv_kvlist_set(&l, "VALIDATED_AT", now, err)) < 0)
                goto out;

        if (parent != GV_MARKER_INVALID) {
                gv_marker_info_t pi = { 0 };
                r = gv_store_inspect(store, parent, &pi, err);
                if (r < 0) {
                        gv_marker_info_clear(&pi);
                        goto out;
                }
                const char *pgen = gv_kvlist_get(&pi.content, "GENERATION");
                if (pi.state != GV_MARKER_READY)
                        r = gv_error_set(err, ESTALE, GV_REASON_DEPENDENCY, "%s: upstream %s is %s%s%s", file,
                                         gv_marker_file(parent), gv_marker_state_name(pi.state),
                                         pi.detail ? ": " : "", pi.detail ? pi.detail : "");
                else if (expect_parent_generation && strcmp(expect_parent_generation, pgen) != 0)
                        r = gv_error_set(err, ESTALE, GV_REASON_DEPENDENCY,
                                         "%s: upstream %s changed generation (validated against %s, now %s)", file,
                                         gv_marker_file(parent), expect_parent_generation, pgen);
                else
                        r = gv_kvlist_set(&l, gv_marker_generation_key(parent), pgen, err);
                gv_marker_info_clear(&pi);
                if (r < 0)
                        goto out;
        }
        for (size_t i = 0; facts && i < facts->n; i++) {
                const char *k = facts->items[i].key;
                if (k && reserved_key(k, parent)) {
                        r = gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "%s: fact key %s is reserved", file, k);
                        goto out;
                }
                r = gv_kvlist_set(&l, k, facts->items[i].value ? facts->items[i].value : "", err);
                if (r < 0) {
                        gv_error_prefix(err, "%s: fact", file);
                        goto out;
                }
        }
        r = gv_marker_encode(&l, &text, err);
        if (r < 0)
                goto out;

        /*
         * Dependants recorded the generation we are about to replace: they go
         * first, most downstream first (normally invalidate already did it).
         */
        r = remove_downstream(store, id, err);
        if (r < 0)
                goto out;
        if (gv_marker_companion(id) != GV_MARKER_INVALID) {
                if (host_driver)
                        r = gv_atomic_write_at(store->dirfd, gv_marker_file(gv_marker_companion(id)), text,
                                               strlen(text), 0644, err);
                else
                        r = remove_marker(store, gv_marker_companion(id), err);
                if (r < 0)
                        goto out;
        }
        r = gv_atomic_write_at(store->dirfd, file, text, strlen(text), 0644, err);
        if (r < 0) {
                gv_error_prefix(err, "%s", store->dir);
                goto out;
        }
        if (generation_out)
                memcpy(generation_out, gen, sizeof(gen));
out:
        gv_kvlist_clear(&l);
        return r;
}

/* ---- inspection ---- */

void gv_marker_info_clear(gv_marker_info_t *info)
{
        if (!info)
                return;
        free(info->detail);
        gv_kvlist_clear(&info->content);
        info->detail = NULL;
        info->state = GV_MARKER_MISSING;
        info->mtime = 0;
}

static int set_state(gv_marker_info_t *info, gv_marker_state_t state, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int set_state(gv_marker_info_t *info, gv_marker_state_t state, const char *fmt, ...)
{
        info->state = state;
        free(info->detail);
        info->detail = NULL;
        if (!fmt)
                return 0;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&info->detail, fmt, ap);
        va_end(ap);
        if (r < 0) {
                info->detail = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The verdict of an empty marker: upstream's validator writes all but driver-ready empty. */
#define EMPTY_FOREIGN                                                                                              \
        "empty file: not gpu-validator's: NVIDIA's validator writes its markers empty, or someone by hand (e.g. " \
        "touch); gpu-validator's next validation of the component replaces it"

/*
 * Judge one marker file on its own: MISSING, FOREIGN, STALE or READY (valid
 * content of this boot).  Never fails for the file itself; -errno for the folder.
 */
static int inspect_local(gv_store_t *s, gv_marker_id_t id, gv_marker_info_t *info, gv_error_t **err)
{
        const char *f = gv_marker_file(id);
        info->id = id;
        if (s->dirfd < 0)
                return set_state(info, GV_MARKER_MISSING, "folder %s does not exist", s->dir);

        struct stat st;
        if (fstatat(s->dirfd, f, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        return set_state(info, GV_MARKER_MISSING, "not present");
                return gv_error_set(err, errno, GV_REASON_IO, "%s/%s: %s", s->dir, f, strerror(errno));
        }
        info->mtime = st.st_mtime;
        if (S_ISLNK(st.st_mode))
                return set_state(info, GV_MARKER_FOREIGN, "a symbolic link (never followed)");
        if (S_ISDIR(st.st_mode))
                return set_state(info, GV_MARKER_FOREIGN, "a folder");
        if (!S_ISREG(st.st_mode))
                return set_state(info, GV_MARKER_FOREIGN, "not a regular file");
        if (st.st_size == 0)
                return set_state(info, GV_MARKER_FOREIGN, EMPTY_FOREIGN);

        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        size_t len = 0;
        int r = gv_read_file_at(s->dirfd, f, true, GV_MARKER_MAX_BYTES, &text, &len, &e);
        if (r == -ENOENT)
                return set_state(info, GV_MARKER_MISSING, "not present");
        if (r < 0)
                return set_state(info, GV_MARKER_FOREIGN, "cannot read: %s", e->msg);
        if (len == 0)
                return set_state(info, GV_MARKER_FOREIGN, EMPTY_FOREIGN);

        gv_kvlist_t l = { 0 };
        r = gv_marker_parse(text, len, &l, &e);
        if (r < 0)
                return set_state(info, GV_MARKER_FOREIGN, "no valid content: %s", e->msg);
        gv_kvlist_clear(&info->content);
        info->content = l;

        const char *gen = gv_kvlist_get(&l, "GENERATION");
        const char *boot = gv_kvlist_get(&l, "BOOT_ID");
        gv_marker_id_t parent = gv_marker_parent(id);
        if (!gen && id == GV_MARKER_DRIVER && gv_kvlist_get(&l, "IS_HOST_DRIVER") &&
            gv_kvlist_get(&l, "NVIDIA_DRIVER_ROOT"))
                return set_state(info, GV_MARKER_FOREIGN,
                                 "not gpu-validator's: NVIDIA's validator writes driver-ready so (its keys "
                                 "IS_HOST_DRIVER, NVIDIA_DRIVER_ROOT, ..., no GENERATION); gpu-validator's next driver "
                                 "validation replaces it");
        if (!gen)
                return set_state(info, GV_MARKER_FOREIGN, "no GENERATION: not written by gpu-validator");
        if (!generation_valid(gen))
                return set_state(info, GV_MARKER_FOREIGN, "GENERATION is not %d hex digits", GV_GENERATION_HEX_LEN);
        if (!boot)
                return set_state(info, GV_MARKER_FOREIGN, "no BOOT_ID");
        if (parent != GV_MARKER_INVALID && !gv_kvlist_get(&l, gv_marker_generation_key(parent)))
                return set_state(info, GV_MARKER_FOREIGN, "no %s", gv_marker_generation_key(parent));
        if (strcmp(boot, s->boot_id) != 0)
                return set_state(info, GV_MARKER_STALE, "written in boot %s; this boot is %s", boot, s->boot_id);
        return set_state(info, GV_MARKER_READY, NULL);
}

int gv_store_inspect(gv_store_t *store, gv_marker_id_t id, gv_marker_info_t *info, gv_error_t **err)
{
        if (!store || !info || !gv_marker_id_valid(id))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "inspect: bad store or marker id");
        int r = gv_store_attach(store, err);
        if (r < 0)
                return r;

        /*
         * The marker first, then its ancestors upward.  Writers keep the
         * invariant under the lock, so a child that was present when read
         * had its whole chain present then; reading a parent afterwards can
         * only make the verdict more cautious, never wrongly READY.
         */
        gv_marker_info_t self = { .id = id };
        r = inspect_local(store, id, &self, err);
        if (r < 0)
                goto fail;

        gv_marker_id_t child = id;
        const gv_kvlist_t *child_content = &self.content;
        gv_marker_info_t up[GV_MARKER__MAX] = { 0 };
        size_t nup = 0;
        for (gv_marker_id_t p = gv_marker_parent(id); self.state == GV_MARKER_READY && p != GV_MARKER_INVALID;
             p = gv_marker_parent(p)) {
                gv_marker_info_t *pi = &up[nup++];
                r = inspect_local(store, p, pi, err);
                if (r < 0)
                        break;
                const char *key = gv_marker_generation_key(p);
                const char *recorded = gv_kvlist_get(child_content, key);
                const char *actual = gv_kvlist_get(&pi->content, "GENERATION");
                if (pi->state != GV_MARKER_READY)
                        r = set_state(&self, GV_MARKER_INCONSISTENT, "upstream %s is %s%s%s%s", gv_marker_file(p),
                                      gv_marker_state_name(pi->state), pi->detail ? " (" : "",
                                      pi->detail ? pi->detail : "", pi->detail ? ")" : "");
                else if (!recorded || strcmp(recorded, actual) != 0)
                        r = set_state(&self, GV_MARKER_INCONSISTENT, "%s in %s differs from %s (recorded %s, found %s)",
                                      key, gv_marker_file(child), gv_marker_file(p), recorded ? recorded : "none",
                                      actual);
                if (r < 0)
                        break;
                child = p;
                child_content = &pi->content;
        }
        for (size_t i = 0; i < nup; i++)
                gv_marker_info_clear(&up[i]);
        if (r < 0)
                goto fail;
        *info = self;
        return 0;
fail:
        if (r == -ENOMEM)
                gv_error_oom(err);
        gv_marker_info_clear(&self);
        return r;
}

int gv_store_write_workload_type(gv_store_t *store, const char *config, gv_error_t **err)
{
        if (!store)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "workload-type: NULL store");
        if (!config || (strcmp(config, "container") != 0 && strcmp(config, "vm-passthrough") != 0 &&
                        strcmp(config, "vm-vgpu") != 0))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "workload-type: '%s' is not one of container, vm-passthrough, vm-vgpu",
                                    config ? config : "(null)");
        _cleanup_close_ int lock = writer_lock(store, err);
        if (lock < 0)
                return lock;
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "%s\n", config) < 0)
                return gv_error_oom(err);
        int r = gv_atomic_write_at(store->dirfd, "workload-type", text, strlen(text), 0644, err);
        if (r < 0)
                return gv_error_prefix(err, "%s", store->dir);
        return 0;
}
