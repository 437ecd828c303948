/* SPDX-License-Identifier: Apache-2.0 */
#include "components-test.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"

#include "../scratch.h"

const char th_smi_stub[] = "#!/bin/sh\n"
                           "echo '| NVIDIA-SMI 550.163.01   Driver Version: 550.163.01   CUDA Version: 12.4 |'\n"
                           "if [ -n \"$FAKE_SMI_LOG\" ]; then echo \"LD_LIBRARY_PATH=$LD_LIBRARY_PATH\" >> \"$FAKE_SMI_LOG\"; fi\n"
                           "exit ${FAKE_SMI_EXIT:-0}\n";

char *th_tmpdir(void)
{
        const char *base = getenv("TMPDIR");
        char *t = NULL;
        assert_true(asprintf(&t, "%s/gv-comp-XXXXXX", base && *base ? base : "/tmp") > 0);
        assert_non_null(mkdtemp(t));
        return t;
}

char *th_path(const char *root, const char *rel)
{
        char *p = gv_path_join(root, rel);
        assert_non_null(p);
        return p;
}

void th_mkdirs(const char *root, const char *rel)
{
        char *p = th_path(root, rel);
        gv_error_t *e = NULL;
        assert_int_equal(gv_mkdir_p(p, 0755, &e), 0);
        free(p);
}

static void mkparent(const char *path)
{
        char *d = strdup(path);
        assert_non_null(d);
        char *s = strrchr(d, '/');
        if (s && s != d) {
                *s = '\0';
                gv_error_t *e = NULL;
                assert_int_equal(gv_mkdir_p(d, 0755, &e), 0);
        }
        free(d);
}

void th_write(const char *root, const char *rel, const char *content, mode_t mode)
{
        char *p = th_path(root, rel);
        mkparent(p);
        unlink(p);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(gv_write_all(fd, content, strlen(content)), 0);
        fchmod(fd, mode);
        close(fd);
        free(p);
}

void th_copy(const char *src, const char *root, const char *rel)
{
        char *data = NULL;
        size_t len = 0;
        gv_error_t *e = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, src, false, 64u << 20, &data, &len, &e), 0);
        char *p = th_path(root, rel);
        mkparent(p);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        assert_true(fd >= 0);
        assert_int_equal(gv_write_all(fd, data, len), 0);
        close(fd);
        free(p);
        free(data);
}

void th_symlink(const char *target, const char *root, const char *rel)
{
        char *p = th_path(root, rel);
        mkparent(p);
        unlink(p);
        assert_int_equal(symlink(target, p), 0);
        free(p);
}

bool th_mknod_char(const char *root, const char *rel, unsigned maj, unsigned min)
{
        char *p = th_path(root, rel);
        mkparent(p);
        unlink(p);
        int r = mknod(p, S_IFCHR | 0666, makedev(maj, min));
        free(p);
        return r == 0;
}

void th_rm_rf(const char *path)
{
        scratch_rm_rf(path);
}

bool th_exists(const char *root, const char *rel)
{
        char *p = th_path(root, rel);
        struct stat st;
        bool r = lstat(p, &st) == 0;
        free(p);
        return r;
}

void th_log_open(th_log_t *l)
{
        l->buf = NULL;
        l->len = 0;
        l->f = open_memstream(&l->buf, &l->len);
        assert_non_null(l->f);
}

void th_log_close(th_log_t *l)
{
        if (l->f)
                fclose(l->f);
        l->f = NULL;
        free(l->buf);
        l->buf = NULL;
}

void th_log_fn(void *userdata, gv_log_level_t level, const char *component, const char *reason, const char *msg)
{
        th_log_t *l = userdata;
        fprintf(l->f, "%d|%s|%s|%s\n", (int) level, component, reason, msg);
        fflush(l->f);
}

gv_store_t *th_store_open(const char *dir)
{
        th_write(dir, "boot_id", "3f1e2d4c-0000-4000-8000-000000000001\n", 0644);
        char *out = th_path(dir, "out");
        char *boot = th_path(dir, "boot_id");
        gv_store_options_t o = { .dir = out, .boot_id_path = boot, .create = true };
        gv_store_t *s = NULL;
        gv_error_t *e = NULL;
        int r = gv_store_open(&o, &s, &e);
        if (r < 0)
                fprintf(stderr, "# store open: %s\n", e ? e->msg : "?");
        assert_int_equal(r, 0);
        free(out);
        free(boot);
        return s;
}
