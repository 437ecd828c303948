/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The marker store's folder: opening (stray temp files, a missing folder, a
 * symlink or a file in its place, the boot id file), cleanup (what it removes
 * and keeps), a folder wiped and re-created under a long-lived store, and a
 * full disk.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "markers-test.h"

static void test_cleanup(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_chain(fx);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, true, NULL, NULL, &e), 0);
        _cleanup_free_ char *ctr = fx_path(fx, ".driver-ctr-ready");
        _cleanup_free_ char *wl = fx_path(fx, "workload-type");
        _cleanup_free_ char *tmp = fx_path(fx, ".cuda-ready.tmp-0123456789abcdef");
        _cleanup_free_ char *other = fx_path(fx, ".something-else");
        write_text(ctr, "GDS_ENABLED: false\n");
        write_text(wl, "container\n");
        write_text(tmp, "half");
        write_text(other, "keep");
        assert_int_equal(gv_store_cleanup(fx->s, &e), 0);
        for (int i = 0; i < GV_MARKER__MAX; i++)
                assert_false(fx_exists(fx, (gv_marker_id_t) i));
        struct stat st;
        assert_int_equal(stat(ctr, &st), 0);
        assert_int_equal(stat(wl, &st), 0);
        assert_int_equal(stat(other, &st), 0);
        assert_int_equal(stat(tmp, &st), -1);
        /* Twice is fine. */
        assert_int_equal(gv_store_cleanup(fx->s, &e), 0);
}

/* Opening: stray temp files go; a missing folder, a symlink or a file as the folder. */
static void test_open_folder(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        /* Stray temp files of a crashed writer go at open. */
        _cleanup_free_ char *tmp = fx_path(fx, ".driver-ready.tmp-feedfacefeedface");
        write_text(tmp, "GENERA");
        gv_store_t *s = open_store_at(fx->dir, fx->boot, false);
        struct stat st;
        assert_int_equal(stat(tmp, &st), -1);
        assert_string_equal(gv_store_dir(s), fx->dir);
        assert_string_equal(gv_store_boot_id(s), BOOT_A);
        gv_store_close(&s);
        gv_store_close(&s);

        /* Missing folder: ENOENT unless allowed (readers) or created (writers). */
        _cleanup_free_ char *missing = gv_path_join(fx->root, "a/b/validations");
        gv_store_options_t o = { .dir = missing, .boot_id_path = fx->boot };
        assert_int_equal(gv_store_open(&o, &s, &e), -ENOENT);
        assert_non_null(strstr(e->msg, missing));
        gv_error_free(&e);
        assert_null(s);
        o.allow_missing = true;
        assert_int_equal(gv_store_open(&o, &s, &e), 0);
        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_MISSING);
        assert_non_null(strstr(mi.detail, "does not exist"));
        gv_marker_info_clear(&mi);
        assert_int_equal(gv_store_invalidate(s, GV_MARKER_DRIVER, &e), 0);
        assert_int_equal(gv_store_publish(s, GV_MARKER_DRIVER, NULL, false, NULL, NULL, &e), -ENOENT);
        gv_error_free(&e);
        gv_store_close(&s);
        o.allow_missing = false;
        o.create = true;
        assert_int_equal(gv_store_open(&o, &s, &e), 0);
        publish_ok(s, GV_MARKER_DRIVER, NULL);
        gv_store_close(&s);

        /* A symlink as the folder is refused. */
        _cleanup_free_ char *link = gv_path_join(fx->root, "linked");
        assert_int_equal(symlink(fx->dir, link), 0);
        o = (gv_store_options_t) { .dir = link, .boot_id_path = fx->boot };
        assert_int_equal(gv_store_open(&o, &s, &e), -ELOOP);
        gv_error_free(&e);
        /* ... however it is spelled: a trailing slash or "/." must not make open() follow it. */
        static const char *const tails[] = { "/", "//", "/.", "/./", "/././/" };
        for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
                _cleanup_free_ char *spelled = NULL;
                assert_true(asprintf(&spelled, "%s%s", link, tails[i]) > 0);
                for (int create = 0; create <= 1; create++) {
                        o = (gv_store_options_t) { .dir = spelled, .boot_id_path = fx->boot, .create = create };
                        assert_int_equal(gv_store_open(&o, &s, &e), -ELOOP);
                        assert_non_null(strstr(e->msg, "symbolic link"));
                        assert_null(s);
                        gv_error_free(&e);
                }
        }
        /* A file as the folder. */
        o.dir = fx->boot;
        assert_int_equal(gv_store_open(&o, &s, &e), -ENOTDIR);
        gv_error_free(&e);
}

/* The boot id file: a UUID, 8-4-4-4-12 hex, trailing white space allowed; else a config error naming it. */
static void test_open_boot_id(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        gv_store_t *s = NULL;
        gv_store_options_t o;
        _cleanup_free_ char *empty = gv_path_join(fx->root, "empty_boot");
        write_text(empty, "\n");
        o = (gv_store_options_t) { .dir = fx->dir, .boot_id_path = empty };
        assert_int_equal(gv_store_open(&o, &s, &e), -EINVAL);
        gv_error_free(&e);
        /* One rule: a UUID, 8-4-4-4-12 hex, trailing white space allowed; else a config error naming the file. */
        static const char *const bad[] = {
                "garbage\n",
                "0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaa\n",   /* 11 hex digits at the end */
                "0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaaaa\n", /* 13 */
                "0f3c2a4e11114a5b9c8daaaaaaaaaaaa\n",     /* no dashes */
                "0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaag\n",
                " 0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaaa\n",
                "0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaaa\nsecond line\n",
                "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                write_text(empty, bad[i]);
                assert_int_equal(gv_store_open(&o, &s, &e), -EINVAL);
                assert_int_equal(e->reason, GV_REASON_CONFIG);
                assert_non_null(strstr(e->msg, empty));
                assert_non_null(strstr(e->msg, "not a boot id (expected a UUID"));
                assert_null(s);
                gv_error_free(&e);
        }
        static const char *const good[] = { "0F3C2A4E-1111-4A5B-9C8D-AAAAAAAAAAAA", BOOT_A " \r\n\n" };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                write_text(empty, good[i]);
                assert_int_equal(gv_store_open(&o, &s, &e), 0);
                assert_int_equal(strlen(gv_store_boot_id(s)), 36);
                gv_store_close(&s);
        }
        /* Missing or not a file: the same config error, never -ENOENT (which means "no folder"). */
        const char *const unreadable[] = { "/nonexistent/boot_id", fx->root };
        for (size_t i = 0; i < sizeof(unreadable) / sizeof(unreadable[0]); i++) {
                o.boot_id_path = unreadable[i];
                assert_int_equal(gv_store_open(&o, &s, &e), -EINVAL);
                assert_int_equal(e->reason, GV_REASON_CONFIG);
                assert_non_null(strstr(e->msg, "boot id"));
                assert_non_null(strstr(e->msg, unreadable[i]));
                gv_error_free(&e);
                assert_null(s);
        }
}

static void test_folder_recreated(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_chain(fx);
        /* The hostPath is wiped and re-created under a long-lived store. */
        assert_int_equal(gv_store_cleanup(fx->s, &e), 0);
        _cleanup_free_ char *lock = fx_path(fx, ".gpu-validator.lock");
        unlink(lock);
        assert_int_equal(rmdir(fx->dir), 0);
        assert_int_equal(mkdir(fx->dir, 0755), 0);
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        assert_true(fx_exists(fx, GV_MARKER_DRIVER));
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_READY);
}

/* In a child: returns 0 when the full-disk checks pass, else a step number. */
static int full_disk_child(const char *dir, const char *boot, bool tmpfs)
{
        gv_store_t *s = NULL;
        gv_error_t *e = NULL;
        gv_store_options_t o = { .dir = dir, .boot_id_path = boot };
        if (gv_store_open(&o, &s, &e) < 0)
                return 2;
        if (gv_store_publish(s, GV_MARKER_DRIVER, NULL, false, NULL, NULL, &e) < 0)
                return 3;
        char *before = NULL;
        _cleanup_free_ char *dp = gv_path_join(dir, "driver-ready");
        before = read_text(dp);
        if (!before)
                return 4;

        /* A large fact cannot fit. */
        size_t big = 1 << 20;
        char *v = malloc(big + 1);
        if (!v)
                return 5;
        memset(v, 'x', big);
        v[big] = '\0';
        gv_kvlist_t facts = { 0 };
        if (gv_kvlist_set(&facts, "BIG", v, &e) < 0)
                return 6;
        free(v);
        if (tmpfs) {
                /* Fill the rest of the tmpfs. */
                _cleanup_free_ char *fill = gv_path_join(dir, "filler");
                int fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                char blk[4096];
                memset(blk, 'f', sizeof(blk));
                while (fd >= 0 && write(fd, blk, sizeof(blk)) > 0)
                        ;
                if (fd >= 0)
                        close(fd);
        } else {
                signal(SIGXFSZ, SIG_IGN);
                struct rlimit rl = { .rlim_cur = 4096, .rlim_max = 4096 };
                if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                        return 7;
        }
        int r = gv_store_publish(s, GV_MARKER_DRIVER, &facts, false, NULL, NULL, &e);
        gv_kvlist_clear(&facts);
        if (r != (tmpfs ? -ENOSPC : -EFBIG)) {
                fprintf(stderr, "# publish gave %d: %s\n", r, e ? e->msg : "");
                return 8;
        }
        if (!e || e->reason != GV_REASON_IO)
                return 9;
        gv_error_free(&e);
        _cleanup_free_ char *after = read_text(dp);
        if (!after || strcmp(before, after) != 0)
                return 10;
        free(before);
        /* No temp file left behind. */
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (strstr(de->d_name, ".tmp-"))
                        return 11;
        if (d)
                closedir(d);
        gv_marker_info_t mi = { 0 };
        if (gv_store_inspect(s, GV_MARKER_DRIVER, &mi, &e) < 0 || mi.state != GV_MARKER_READY)
                return 12;
        gv_marker_info_clear(&mi);
        gv_store_close(&s);
        return 0;
}

static bool try_tmpfs(const char *dir)
{
        if (geteuid() != 0)
                return false;
        if (unshare(CLONE_NEWNS) < 0)
                return false;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return false;
        return mount("gv-test", dir, "tmpfs", 0, "size=64k,mode=0755") == 0;
}

static void test_full_disk(void **state)
{
        fixture_t *fx = *state;
        for (int pass = 0; pass < 2; pass++) {
                pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        bool tmpfs = pass == 0 && try_tmpfs(fx->dir);
                        if (pass == 0 && !tmpfs)
                                _exit(100); /* no tmpfs here: the RLIMIT_FSIZE pass covers it */
                        int rc = full_disk_child(fx->dir, fx->boot, tmpfs);
                        if (tmpfs)
                                umount2(fx->dir, MNT_DETACH);
                        _exit(rc);
                }
                int status = 0;
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) == 100) {
                        fprintf(stderr, "# no private tmpfs mount here; simulated with RLIMIT_FSIZE only\n");
                        continue;
                }
                if (WEXITSTATUS(status) != 0)
                        fail_msg("full disk check (%s) failed at step %d", pass == 0 ? "tmpfs" : "rlimit",
                                 WEXITSTATUS(status));
        }
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_cleanup),
                T(test_open_folder),
                T(test_open_boot_id),
                T(test_folder_recreated),
                T(test_full_disk),
        };
        return cmocka_run_group_tests_name("markers-open", tests, NULL, NULL);
}
