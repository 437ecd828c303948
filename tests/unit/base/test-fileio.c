/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/fileio.h: atomic replace (planted symlink, FIFO, folder, no
 * temporary left behind), reads that refuse symlinks, FIFOs and oversize
 * files, path joining, mkdir -p, gv_write_all, gv_fsync_dir and
 * gv_memstream_close.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/fileio.h"

typedef struct world {
        char *dir;
        int dfd;
} world_t;

static void rm_rf(const char *path)
{
        char *cmd = NULL;
        assert_true(asprintf(&cmd, "rm -rf '%s'", path) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
}

static int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        const char *tmp = getenv("TMPDIR");
        assert_true(asprintf(&w->dir, "%s/gv-base-XXXXXX", tmp && *tmp ? tmp : "/tmp") > 0);
        assert_non_null(mkdtemp(w->dir));
        w->dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(w->dfd >= 0);
        *state = w;
        return 0;
}

static int teardown(void **state)
{
        world_t *w = *state;
        close(w->dfd);
        rm_rf(w->dir);
        free(w->dir);
        free(w);
        return 0;
}

/* The number of folder entries (besides . and ..) and whether one starts with '.'. */
static unsigned entries(world_t *w, bool *hidden)
{
        DIR *d = opendir(w->dir);
        assert_non_null(d);
        unsigned n = 0;
        *hidden = false;
        for (struct dirent *e; (e = readdir(d));) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                n++;
                if (e->d_name[0] == '.')
                        *hidden = true;
        }
        closedir(d);
        return n;
}

static char *slurp(world_t *w, const char *name)
{
        char *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, name, true, 1 << 20, &out, NULL, &err), 0);
        return out;
}

static void test_atomic_write_creates_and_replaces(void **state)
{
        world_t *w = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        mode_t old_umask = umask(022);
        int r = gv_atomic_write_at(w->dfd, "m", "one\n", 4, 0666, &err);
        umask(old_umask);
        assert_int_equal(r, 0);
        assert_null(err);
        _cleanup_free_ char *a = slurp(w, "m");
        assert_string_equal(a, "one\n");
        struct stat st;
        assert_int_equal(fstatat(w->dfd, "m", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_mode & 07777, 0666); /* fchmod: the umask does not narrow it */
        assert_int_equal(gv_atomic_write_at(w->dfd, "m", "two", 3, 0644, &err), 0);
        _cleanup_free_ char *b = slurp(w, "m");
        assert_string_equal(b, "two");
        /* an empty file is a valid content */
        assert_int_equal(gv_atomic_write_at(w->dfd, "e", "", 0, 0644, &err), 0);
        _cleanup_free_ char *c = slurp(w, "e");
        assert_string_equal(c, "");
        bool hidden;
        assert_int_equal(entries(w, &hidden), 2);
        assert_false(hidden); /* no temporary file left */
}

static void test_atomic_write_replaces_planted_symlink(void **state)
{
        world_t *w = *state;
        /* a symlink at the name, pointing at a victim file: the link is replaced, the victim untouched */
        assert_int_equal(gv_atomic_write_at(w->dfd, "victim", "keep", 4, 0644, NULL), 0);
        assert_int_equal(symlinkat("victim", w->dfd, "m"), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_atomic_write_at(w->dfd, "m", "new", 3, 0644, &err), 0);
        struct stat st;
        assert_int_equal(fstatat(w->dfd, "m", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        _cleanup_free_ char *v = slurp(w, "victim");
        assert_string_equal(v, "keep");
        _cleanup_free_ char *m = slurp(w, "m");
        assert_string_equal(m, "new");
        /* a dangling link is replaced as well, and its target never created */
        assert_int_equal(symlinkat("nowhere", w->dfd, "d"), 0);
        assert_int_equal(gv_atomic_write_at(w->dfd, "d", "x", 1, 0644, &err), 0);
        assert_int_equal(faccessat(w->dfd, "nowhere", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
}

static void test_atomic_write_replaces_fifo_without_opening_it(void **state)
{
        world_t *w = *state;
        /* opening a FIFO for writing would block forever with no reader */
        assert_int_equal(mkfifoat(w->dfd, "m", 0644), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_atomic_write_at(w->dfd, "m", "ok", 2, 0644, &err), 0);
        struct stat st;
        assert_int_equal(fstatat(w->dfd, "m", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
}

static void test_atomic_write_refuses_folder(void **state)
{
        world_t *w = *state;
        assert_int_equal(mkdirat(w->dfd, "m", 0755), 0);
        assert_int_equal(mkdirat(w->dfd, "m/inside", 0755), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_atomic_write_at(w->dfd, "m", "x", 1, 0644, &err), -EISDIR);
        assert_int_equal(err->reason, GV_REASON_IO);
        assert_non_null(strstr(err->msg, "m: a folder"));
        /* the folder and its content stay; no temporary file is left */
        struct stat st;
        assert_int_equal(fstatat(w->dfd, "m/inside", &st, 0), 0);
        bool hidden;
        assert_int_equal(entries(w, &hidden), 1);
        assert_false(hidden);
}

static void test_atomic_write_failure_leaves_old_content(void **state)
{
        world_t *w = *state;
        /* a 240-byte name fits, its temporary name (".<name>.tmp-<16 hex>") does not: the write
         * fails before anything changes, as root too */
        char name[241];
        memset(name, 'n', 240);
        name[240] = '\0';
        assert_int_equal(gv_atomic_write_at(w->dfd, name, "old", 3, 0644, NULL), -ENAMETOOLONG);
        int fd = openat(w->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(gv_write_all(fd, "old", 3), 0);
        close(fd);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_atomic_write_at(w->dfd, name, "new", 3, 0644, &err), -ENAMETOOLONG);
        assert_int_equal(err->reason, GV_REASON_IO);
        assert_non_null(strstr(err->msg, ": create temporary file: "));
        _cleanup_free_ char *m = slurp(w, name);
        assert_string_equal(m, "old");
        bool hidden;
        assert_int_equal(entries(w, &hidden), 1);
        assert_false(hidden);
        /* without write permission on the folder (not as root, who may write anyway) */
        if (geteuid() != 0) {
                assert_int_equal(gv_atomic_write_at(w->dfd, "short", "old", 3, 0644, NULL), 0);
                assert_int_equal(fchmod(w->dfd, 0555), 0);
                int r = gv_atomic_write_at(w->dfd, "short", "new", 3, 0644, &err);
                assert_int_equal(fchmod(w->dfd, 0755), 0);
                assert_int_equal(r, -EACCES);
                free(m);
                m = slurp(w, "short");
                assert_string_equal(m, "old");
        }
}

static void test_read_file(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_atomic_write_at(w->dfd, "f", "abc\0def", 7, 0644, NULL), 0);
        char *out = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "f", true, 100, &out, &len, &err), 0);
        assert_int_equal(len, 7);
        assert_memory_equal(out, "abc\0def", 8); /* NUL-terminated after the content */
        free(out);
        /* by path with AT_FDCWD, len optional */
        _cleanup_free_ char *path = gv_path_join(w->dir, "f");
        out = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, path, false, 100, &out, NULL, &err), 0);
        assert_memory_equal(out, "abc", 4);
        free(out);
}

static void test_read_file_large_grows(void **state)
{
        world_t *w = *state;
        size_t n = 3 * 4096 + 17; /* across several buffer doublings */
        _cleanup_free_ char *big = malloc(n);
        for (size_t i = 0; i < n; i++)
                big[i] = (char) ('a' + i % 26);
        assert_int_equal(gv_atomic_write_at(w->dfd, "big", big, n, 0644, NULL), 0);
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        assert_int_equal(gv_read_file_at(w->dfd, "big", true, n, &out, &len, NULL), 0);
        assert_int_equal(len, n);
        assert_memory_equal(out, big, n);
        /* one byte over the limit is refused */
        _cleanup_error_ gv_error_t *err = NULL;
        char *none = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "big", true, n - 1, &none, NULL, &err), -EFBIG);
        assert_null(none);
        assert_non_null(strstr(err->msg, "larger than"));
}

static void test_read_file_limit_small(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_atomic_write_at(w->dfd, "f", "12345", 5, 0644, NULL), 0);
        char *out = (char *) "untouched";
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "f", true, 4, &out, NULL, &err), -EFBIG);
        assert_string_equal(out, "untouched"); /* out-parameters stay untouched on failure */
        assert_int_equal(err->errnum, EFBIG);
        _cleanup_free_ char *ok = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "f", true, 5, &ok, NULL, NULL), 0);
        assert_string_equal(ok, "12345");
}

static void test_read_file_refuses_symlink_with_nofollow(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_atomic_write_at(w->dfd, "target", "secret", 6, 0644, NULL), 0);
        assert_int_equal(symlinkat("target", w->dfd, "link"), 0);
        char *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "link", true, 100, &out, NULL, &err), -ELOOP);
        assert_null(out);
        assert_non_null(strstr(err->msg, "link: is a symbolic link; refused"));
        /* without nofollow the link is followed */
        assert_int_equal(gv_read_file_at(w->dfd, "link", false, 100, &out, NULL, &err), 0);
        assert_string_equal(out, "secret");
        free(out);
}

static void test_read_file_refuses_fifo_without_blocking(void **state)
{
        world_t *w = *state;
        /* no writer: a blocking open would hang the test (meson's timeout would tell) */
        assert_int_equal(mkfifoat(w->dfd, "fifo", 0644), 0);
        char *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "fifo", true, 100, &out, NULL, &err), -EINVAL);
        assert_null(out);
        assert_non_null(strstr(err->msg, "fifo: not a regular file"));
        /* a folder is not a regular file either */
        assert_int_equal(gv_read_file_at(w->dfd, ".", true, 100, &out, NULL, &err), -EINVAL);
}

static void test_read_file_missing(void **state)
{
        world_t *w = *state;
        char *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(w->dfd, "absent", true, 100, &out, NULL, &err), -ENOENT);
        assert_null(out);
        assert_int_equal(err->reason, GV_REASON_IO);
        assert_non_null(strstr(err->msg, "absent: "));
}

static void test_path_join(void **state)
{
        (void) state;
        static const char *const cases[][3] = {
                { "a", "b", "a/b" },       { "a/", "b", "a/b" },     { "a//", "/b", "a/b" },
                { "/", "b", "/b" },        { "/", "/b", "/b" },      { "", "b", "/b" },
                { "a", "", "a" },          { "/a/b/", "c/d", "/a/b/c/d" },
                { "/", "", "/" },          { "a", "b/", "a/b/" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                _cleanup_free_ char *p = gv_path_join(cases[i][0], cases[i][1]);
                assert_non_null(p);
                assert_string_equal(p, cases[i][2]);
        }
}

static void test_mkdir_p(void **state)
{
        world_t *w = *state;
        _cleanup_free_ char *deep = gv_path_join(w->dir, "x/y/z");
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mkdir_p(deep, 0755, &err), 0);
        struct stat st;
        assert_int_equal(stat(deep, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        /* again: already there is fine */
        assert_int_equal(gv_mkdir_p(deep, 0755, &err), 0);
        /* a file in the way is refused */
        assert_int_equal(gv_atomic_write_at(w->dfd, "file", "f", 1, 0644, NULL), 0);
        _cleanup_free_ char *blocked = gv_path_join(w->dir, "file/sub");
        assert_true(gv_mkdir_p(blocked, 0755, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_IO);
        _cleanup_free_ char *file = gv_path_join(w->dir, "file");
        assert_int_equal(gv_mkdir_p(file, 0755, &err), -ENOTDIR);
        assert_non_null(strstr(err->msg, "not a folder"));
}

static void test_write_all_and_fsync_dir(void **state)
{
        world_t *w = *state;
        int fd = openat(w->dfd, "w", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(gv_write_all(fd, "hello", 5), 0);
        assert_int_equal(gv_write_all(fd, "", 0), 0);
        close(fd);
        _cleanup_free_ char *out = slurp(w, "w");
        assert_string_equal(out, "hello");
        /* a closed descriptor: the errno comes back negative */
        assert_int_equal(gv_write_all(fd, "x", 1), -EBADF);
        int rd = openat(w->dfd, "w", O_RDONLY | O_CLOEXEC);
        assert_int_equal(gv_write_all(rd, "x", 1), -EBADF);
        close(rd);
        assert_int_equal(gv_fsync_dir(w->dfd), 0);
        assert_int_equal(gv_fsync_dir(-1), -EBADF);
}

static void test_memstream_close(void **state)
{
        (void) state;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        assert_non_null(f);
        fprintf(f, "%s=%d", "GPU_COUNT", 8);
        assert_int_equal(gv_memstream_close(f, &buf), 0);
        assert_non_null(buf);
        assert_string_equal(buf, "GPU_COUNT=8");
        free(buf);

        /* nothing written: an empty string, not NULL */
        buf = NULL;
        f = open_memstream(&buf, &size);
        assert_int_equal(gv_memstream_close(f, &buf), 0);
        assert_string_equal(buf, "");
        free(buf);

        /* no stream (open_memstream failed): -ENOMEM, the buffer freed and NULL */
        buf = strdup("stale");
        assert_int_equal(gv_memstream_close(NULL, &buf), -ENOMEM);
        assert_null(buf);
        buf = NULL;
        assert_int_equal(gv_memstream_close(NULL, &buf), -ENOMEM);
        assert_null(buf);
}

static char *vfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *vfmt(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = gv_vasprintf(fmt, ap);
        va_end(ap);
        return s;
}

static void test_vasprintf(void **state)
{
        (void) state;
        char *s = vfmt("%s %u GPU%s", "host", 8u, "s");
        assert_non_null(s);
        assert_string_equal(s, "host 8 GPUs");
        free(s);
        s = vfmt("%s", "");
        assert_non_null(s);
        assert_string_equal(s, "");
        free(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
                T(test_atomic_write_creates_and_replaces),
                T(test_atomic_write_replaces_planted_symlink),
                T(test_atomic_write_replaces_fifo_without_opening_it),
                T(test_atomic_write_refuses_folder),
                T(test_atomic_write_failure_leaves_old_content),
                T(test_read_file),
                T(test_read_file_large_grows),
                T(test_read_file_limit_small),
                T(test_read_file_refuses_symlink_with_nofollow),
                T(test_read_file_refuses_fifo_without_blocking),
                T(test_read_file_missing),
                cmocka_unit_test(test_path_join),
                T(test_mkdir_p),
                T(test_write_all_and_fsync_dir),
                cmocka_unit_test(test_memstream_close),
                cmocka_unit_test(test_vasprintf),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
