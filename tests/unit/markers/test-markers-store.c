/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The marker store: publish/invalidate/fail/cleanup ordering, content,
 * planted symlinks and folders, full disk, FR01, FR04, stale boot ids,
 * generation mismatches, and concurrent writers.
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "markers-test.h"

static void publish_chain(fixture_t *fx)
{
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        publish_ok(fx->s, GV_MARKER_CUDA, NULL);
        publish_ok(fx->s, GV_MARKER_PLUGIN, NULL);
        publish_ok(fx->s, GV_MARKER_NVIDIA_FS, NULL);
        publish_ok(fx->s, GV_MARKER_GDRCOPY, NULL);
        publish_ok(fx->s, GV_MARKER_NVIDIA_PEERMEM, NULL);
        publish_ok(fx->s, GV_MARKER_MOFED, NULL);
        publish_ok(fx->s, GV_MARKER_CC_MANAGER, NULL);
        publish_ok(fx->s, GV_MARKER_VFIO_PCI, NULL);
        publish_ok(fx->s, GV_MARKER_VGPU_MANAGER, NULL);
        publish_ok(fx->s, GV_MARKER_VGPU_DEVICES, NULL);
}

static void read_marker(fixture_t *fx, gv_marker_id_t id, gv_kvlist_t *l)
{
        _cleanup_free_ char *p = fx_path(fx, gv_marker_file(id));
        _cleanup_free_ char *text = read_text(p);
        assert_non_null(text);
        gv_error_t *e = NULL;
        assert_int_equal(gv_marker_parse(text, strlen(text), l, &e), 0);
}

static void test_publish_content(void **state)
{
        fixture_t *fx = *state;
        gv_kvlist_t facts = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_kvlist_set(&facts, "IS_HOST_DRIVER", "false", &e), 0);
        assert_int_equal(gv_kvlist_set(&facts, "NVIDIA_DRIVER_ROOT", "/run/nvidia/driver", &e), 0);
        assert_int_equal(gv_kvlist_set(&facts, "DRIVER_ROOT_CTR_PATH", "/driver-root", &e), 0);
        assert_int_equal(gv_kvlist_set(&facts, "DRIVER_VERSION", "590.48.01", &e), 0);
        assert_int_equal(gv_kvlist_set(&facts, "ODD", "a b'c$(x)", &e), 0);
        char dgen[GV_GENERATION_HEX_LEN + 1], tgen[GV_GENERATION_HEX_LEN + 1];
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, &facts, false, NULL, dgen, &e), 0);
        gv_kvlist_clear(&facts);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, dgen, tgen, &e), 0);
        assert_string_not_equal(dgen, tgen);

        gv_kvlist_t d = { 0 }, t = { 0 };
        read_marker(fx, GV_MARKER_DRIVER, &d);
        read_marker(fx, GV_MARKER_TOOLKIT, &t);
        /* Fixed keys first, in order, then the facts. */
        assert_string_equal(d.items[0].key, "VALIDATOR_VERSION");
        assert_string_equal(d.items[0].value, "9.9.9-test");
        assert_string_equal(d.items[1].key, "GENERATION");
        assert_string_equal(d.items[1].value, dgen);
        assert_string_equal(d.items[2].key, "BOOT_ID");
        assert_string_equal(d.items[2].value, BOOT_A);
        assert_string_equal(d.items[3].key, "VALIDATED_AT");
        const char *at = d.items[3].value;
        assert_int_equal(strlen(at), 20);
        assert_true(at[4] == '-' && at[7] == '-' && at[10] == 'T' && at[13] == ':' && at[16] == ':' && at[19] == 'Z');
        assert_null(gv_kvlist_get(&d, "DRIVER_GENERATION"));
        assert_string_equal(gv_kvlist_get(&d, "NVIDIA_DRIVER_ROOT"), "/run/nvidia/driver");
        assert_string_equal(gv_kvlist_get(&d, "ODD"), "a b'c$(x)");
        assert_string_equal(gv_kvlist_get(&t, "GENERATION"), tgen);
        assert_string_equal(gv_kvlist_get(&t, "DRIVER_GENERATION"), dgen);
        gv_kvlist_clear(&d);
        gv_kvlist_clear(&t);

        /* Mode 0644, regular file. */
        _cleanup_free_ char *p = fx_path(fx, "toolkit-ready");
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0644);

        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_READY);
        assert_null(mi.detail);
        assert_true(mi.mtime > 0);
        assert_string_equal(gv_kvlist_get(&mi.content, "GENERATION"), tgen);
        gv_marker_info_clear(&mi);
}

static void test_publish_full_chain(void **state)
{
        fixture_t *fx = *state;
        publish_chain(fx);
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                if (i == GV_MARKER_HOST_DRIVER || i == GV_MARKER_HOST_VGPU_MANAGER)
                        continue;
                assert_int_equal(state_of(fx->s, (gv_marker_id_t) i), GV_MARKER_READY);
        }
        assert_int_equal(state_of(fx->s, GV_MARKER_HOST_DRIVER), GV_MARKER_MISSING);
        assert_int_equal(state_of(fx->s, GV_MARKER_HOST_VGPU_MANAGER), GV_MARKER_MISSING);
        /* Each link records its parent's generation. */
        gv_kvlist_t c = { 0 }, t = { 0 }, p = { 0 };
        read_marker(fx, GV_MARKER_CUDA, &c);
        read_marker(fx, GV_MARKER_TOOLKIT, &t);
        read_marker(fx, GV_MARKER_PLUGIN, &p);
        assert_string_equal(gv_kvlist_get(&c, "TOOLKIT_GENERATION"), gv_kvlist_get(&t, "GENERATION"));
        assert_string_equal(gv_kvlist_get(&p, "CUDA_GENERATION"), gv_kvlist_get(&c, "GENERATION"));
        gv_kvlist_clear(&c);
        gv_kvlist_clear(&t);
        gv_kvlist_clear(&p);
}

static void test_publish_needs_ready_parent(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        char g[GV_GENERATION_HEX_LEN + 1] = "untouched";
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, NULL, g, &e), -ESTALE);
        assert_int_equal(e->reason, GV_REASON_DEPENDENCY);
        assert_non_null(strstr(e->msg, "driver-ready"));
        gv_error_free(&e);
        assert_string_equal(g, "untouched");
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));

        char dgen[GV_GENERATION_HEX_LEN + 1];
        publish_ok(fx->s, GV_MARKER_DRIVER, dgen);
        /* Validated against an older driver generation: refused, nothing written. */
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, "0123456789abcdef0123456789abcdef",
                                          NULL, &e),
                         -ESTALE);
        assert_int_equal(e->reason, GV_REASON_DEPENDENCY);
        assert_non_null(strstr(e->msg, "changed generation"));
        gv_error_free(&e);
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, dgen, NULL, &e), 0);

        /* cuda over a foreign toolkit-ready: refused. */
        _cleanup_free_ char *tp = fx_path(fx, "toolkit-ready");
        write_text(tp, "");
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_CUDA, NULL, false, NULL, NULL, &e), -ESTALE);
        assert_non_null(strstr(e->msg, "foreign"));
        gv_error_free(&e);
        assert_false(fx_exists(fx, GV_MARKER_CUDA));

        /* host-driver-ready is never published on its own. */
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_HOST_DRIVER, NULL, false, NULL, NULL, &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_INVALID, NULL, false, NULL, NULL, &e), -EINVAL);
        gv_error_free(&e);
}

static void test_publish_bad_facts(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        gv_kvlist_t facts = { 0 };
        assert_int_equal(gv_kvlist_set(&facts, "GENERATION", "x", &e), 0);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, &facts, false, NULL, NULL, &e), -EINVAL);
        assert_non_null(strstr(e->msg, "reserved"));
        gv_error_free(&e);
        gv_kvlist_clear(&facts);
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));

        /* A hand-built list with a bad key: refused, nothing written. */
        gv_kv_t item = { .key = (char *) "bad key", .value = (char *) "x" };
        gv_kvlist_t bad = { .n = 1, .items = &item };
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, &bad, false, NULL, NULL, &e), -EINVAL);
        gv_error_free(&e);
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));

        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        assert_int_equal(gv_kvlist_set(&facts, "DRIVER_GENERATION", "x", &e), 0);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, &facts, false, NULL, NULL, &e), -EINVAL);
        gv_error_free(&e);
        gv_kvlist_clear(&facts);
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
}

/* Names of the IN_DELETE events queued on @ifd, in order, joined by spaces (heap). */
static char *deleted_names(int ifd)
{
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        assert_non_null(f);
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (;;) {
                ssize_t n = read(ifd, buf, sizeof(buf));
                if (n <= 0)
                        break;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) (void *) p;
                        if ((ev->mask & IN_DELETE) && ev->len > 0 && ev->name[0] != '.')
                                fprintf(f, "%s%s", ftell(f) ? " " : "", ev->name);
                        p += sizeof(*ev) + ev->len;
                }
        }
        fclose(f);
        return out;
}

static void test_invalidate_order(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        /* host driver: host-driver-ready too; it must survive invalidate. */
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, true, NULL, NULL, &e), 0);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        publish_ok(fx->s, GV_MARKER_CUDA, NULL);
        publish_ok(fx->s, GV_MARKER_PLUGIN, NULL);
        publish_ok(fx->s, GV_MARKER_NVIDIA_FS, NULL);
        publish_ok(fx->s, GV_MARKER_GDRCOPY, NULL);
        publish_ok(fx->s, GV_MARKER_NVIDIA_PEERMEM, NULL);

        int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        assert_true(ifd >= 0);
        assert_true(inotify_add_watch(ifd, fx->dir, IN_DELETE) >= 0);
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
        _cleanup_free_ char *order = deleted_names(ifd);
        assert_string_equal(order, "plugin-ready cuda-ready toolkit-ready nvidia-peermem-ready gdrcopy-ready "
                                   "nvidia-fs-ready driver-ready");
        assert_true(fx_exists(fx, GV_MARKER_HOST_DRIVER));
        for (int i = 0; i < GV_MARKER__MAX; i++)
                if (i != GV_MARKER_HOST_DRIVER)
                        assert_false(fx_exists(fx, (gv_marker_id_t) i));

        /* Re-publish upstream first; invalidating toolkit leaves driver and its other dependants alone. */
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        publish_ok(fx->s, GV_MARKER_CUDA, NULL);
        publish_ok(fx->s, GV_MARKER_PLUGIN, NULL);
        publish_ok(fx->s, GV_MARKER_GDRCOPY, NULL);
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_TOOLKIT, &e), 0);
        _cleanup_free_ char *order2 = deleted_names(ifd);
        /* publish(driver) removed host-driver-ready (host_driver=false) before the invalidate. */
        assert_string_equal(order2, "host-driver-ready plugin-ready cuda-ready toolkit-ready");
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_READY);
        assert_int_equal(state_of(fx->s, GV_MARKER_GDRCOPY), GV_MARKER_READY);
        close(ifd);

        /* Missing files are fine. */
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_PLUGIN, &e), 0);
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_INVALID, &e), -EINVAL);
        gv_error_free(&e);
}

static void test_republish_parent_removes_dependants(void **state)
{
        fixture_t *fx = *state;
        publish_chain(fx);
        /* A writer that re-publishes driver without invalidating first must not orphan toolkit-ready. */
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_READY);
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
        assert_false(fx_exists(fx, GV_MARKER_PLUGIN));
        assert_false(fx_exists(fx, GV_MARKER_NVIDIA_FS));
}

static void test_host_driver_ready(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, true, NULL, NULL, &e), 0);
        _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
        _cleanup_free_ char *hp = fx_path(fx, "host-driver-ready");
        _cleanup_free_ char *dt = read_text(dp);
        _cleanup_free_ char *ht = read_text(hp);
        assert_non_null(dt);
        assert_non_null(ht);
        assert_string_equal(dt, ht);
        assert_int_equal(state_of(fx->s, GV_MARKER_HOST_DRIVER), GV_MARKER_READY);

        /* invalidate(driver) keeps it: no flicker for consumers that test its existence. */
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));
        assert_true(fx_exists(fx, GV_MARKER_HOST_DRIVER));
        /* Same outcome: replaced in place. */
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, true, NULL, NULL, &e), 0);
        assert_true(fx_exists(fx, GV_MARKER_HOST_DRIVER));
        /* Now a container driver: removed. */
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, false, NULL, NULL, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_HOST_DRIVER));
        assert_true(fx_exists(fx, GV_MARKER_DRIVER));
        /* fail(driver) removes both. */
        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, true, NULL, NULL, &e), 0);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        assert_int_equal(gv_store_fail(fx->s, GV_MARKER_DRIVER, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_HOST_DRIVER));
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
}

static void test_fail_removes_downstream(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_chain(fx);
        assert_int_equal(gv_store_fail(fx->s, GV_MARKER_CUDA, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_PLUGIN));
        assert_false(fx_exists(fx, GV_MARKER_CUDA));
        assert_true(fx_exists(fx, GV_MARKER_TOOLKIT));
        /* FR02: driver fails, every marker from driver-ready down goes; other chains stay. */
        assert_int_equal(gv_store_fail(fx->s, GV_MARKER_DRIVER, &e), 0);
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                gv_marker_id_t id = (gv_marker_id_t) i;
                bool driver_chain = id == GV_MARKER_HOST_DRIVER;
                for (gv_marker_id_t p = id; p != GV_MARKER_INVALID; p = gv_marker_parent(p))
                        driver_chain = driver_chain || p == GV_MARKER_DRIVER;
                assert_int_equal(fx_exists(fx, id), !driver_chain && id != GV_MARKER_HOST_VGPU_MANAGER);
        }
        /* the sandbox chain: vgpu-manager fails, vgpu-devices goes first, vfio-pci stays */
        assert_int_equal(gv_store_fail(fx->s, GV_MARKER_VGPU_MANAGER, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_VGPU_DEVICES));
        assert_false(fx_exists(fx, GV_MARKER_VGPU_MANAGER));
        assert_true(fx_exists(fx, GV_MARKER_VFIO_PCI));
}

static void test_symlink_planted(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        _cleanup_free_ char *victim = gv_path_join(fx->root, "victim");
        write_text(victim, "precious\n");
        _cleanup_free_ char *tp = fx_path(fx, "toolkit-ready");
        _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
        assert_int_equal(symlink(victim, tp), 0);

        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_FOREIGN);
        assert_non_null(strstr(mi.detail, "symbolic link"));
        gv_marker_info_clear(&mi);

        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        _cleanup_free_ char *v = read_text(victim);
        assert_string_equal(v, "precious\n");
        struct stat st;
        assert_int_equal(lstat(tp, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(state_of(fx->s, GV_MARKER_TOOLKIT), GV_MARKER_READY);

        /* A symlink at driver-ready is removed itself by invalidate; its target stays. */
        assert_int_equal(unlink(dp), 0);
        assert_int_equal(symlink(victim, dp), 0);
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_FOREIGN);
        assert_int_equal(state_of(fx->s, GV_MARKER_TOOLKIT), GV_MARKER_INCONSISTENT);
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
        assert_int_equal(lstat(dp, &st), -1);
        _cleanup_free_ char *v2 = read_text(victim);
        assert_string_equal(v2, "precious\n");

        /* A symlink at the lock file name: writers refuse, nothing followed. */
        _cleanup_free_ char *lp = fx_path(fx, ".gpu-validator.lock");
        unlink(lp);
        assert_int_equal(symlink(victim, lp), 0);
        assert_true(gv_store_publish(fx->s, GV_MARKER_DRIVER, NULL, false, NULL, NULL, &e) < 0);
        gv_error_free(&e);
        _cleanup_free_ char *v3 = read_text(victim);
        assert_string_equal(v3, "precious\n");
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));
}

/*
 * A FIFO, folder or symlink at the lock's name: publish is refused with
 * -ENOLCK and what to do, but removals (invalidate, fail, cleanup) still
 * remove every marker they own -- removal does not need the lock.
 */
static void test_lock_not_regular_still_removes(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        _cleanup_free_ char *lp = fx_path(fx, ".gpu-validator.lock");
        _cleanup_free_ char *victim = fx_path(fx, "victim-of-lock");
        for (int kind = 0; kind < 3; kind++) {
                publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
                publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
                publish_ok(fx->s, GV_MARKER_CUDA, NULL);
                unlink(lp);
                rmdir(lp);
                if (kind == 0)
                        assert_int_equal(mkfifo(lp, 0644), 0);
                else if (kind == 1)
                        assert_int_equal(mkdir(lp, 0755), 0);
                else
                        assert_int_equal(symlink(victim, lp), 0);

                /* fail: every marker downstream of the failure goes, and that is a success */
                assert_int_equal(gv_store_fail(fx->s, GV_MARKER_TOOLKIT, &e), 0);
                assert_null(e);
                assert_true(fx_exists(fx, GV_MARKER_DRIVER));
                assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
                assert_false(fx_exists(fx, GV_MARKER_CUDA));

                /* publish: refused, saying what sits there and what to do */
                assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, NULL, NULL, &e), -ENOLCK);
                assert_non_null(strstr(e->msg, kind == 0 ? "a FIFO" : kind == 1 ? "a folder" : "a symbolic link"));
                assert_non_null(strstr(e->msg, "not a regular file"));
                assert_non_null(strstr(e->msg, "remove it"));
                gv_error_free(&e);
                assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));

                /* invalidate: removes, then refuses (nothing could be published afterwards) */
                assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), -ENOLCK);
                assert_non_null(strstr(e->msg, "not a regular file"));
                gv_error_free(&e);
                assert_false(fx_exists(fx, GV_MARKER_DRIVER));

                /* cleanup: removes everything, then says a person must act */
                _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
                write_text(dp, "hand written\n");
                assert_int_equal(gv_store_cleanup(fx->s, &e), -ENOLCK);
                assert_non_null(strstr(e->msg, "every marker was removed"));
                gv_error_free(&e);
                assert_false(fx_exists(fx, GV_MARKER_DRIVER));

                struct stat st;
                assert_int_equal(lstat(victim, &st), -1); /* the symlink was never followed */
                unlink(lp);
                rmdir(lp);
        }
}

static void test_folder_planted(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        _cleanup_free_ char *tp = fx_path(fx, "toolkit-ready");
        assert_int_equal(mkdir(tp, 0755), 0);

        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_FOREIGN);
        assert_string_equal(mi.detail, "a folder");
        gv_marker_info_clear(&mi);

        assert_int_equal(gv_store_publish(fx->s, GV_MARKER_TOOLKIT, NULL, false, NULL, NULL, &e), -EISDIR);
        assert_int_equal(e->reason, GV_REASON_IO);
        gv_error_free(&e);
        /* invalidate reports the folder but still removes what it can. */
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), -EISDIR);
        assert_non_null(strstr(e->msg, "toolkit-ready"));
        gv_error_free(&e);
        assert_false(fx_exists(fx, GV_MARKER_DRIVER));
        assert_int_equal(gv_store_cleanup(fx->s, &e), -EISDIR);
        gv_error_free(&e);
        struct stat st;
        assert_int_equal(stat(tp, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
}

static void test_fr01_orphan_toolkit(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        /* Someone removed driver-ready (upstream 508): toolkit-ready alone. */
        _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
        assert_int_equal(unlink(dp), 0);
        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_INCONSISTENT);
        assert_non_null(strstr(mi.detail, "driver-ready is missing"));
        gv_marker_info_clear(&mi);
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_MISSING);
        /* The driver component's invalidate removes toolkit-ready first. */
        assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
        assert_false(fx_exists(fx, GV_MARKER_TOOLKIT));
}

static void test_fr04_foreign(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        static const struct {
                const char *content;
                const char *detail;
        } cases[] = {
                { "", "empty file" },
                { "hello world\n", "no valid content" },
                { "IS_HOST_DRIVER=true\nNVIDIA_DRIVER_ROOT=/\n", "no GENERATION" },
                { "GENERATION=xyz\nBOOT_ID=" BOOT_A "\n", "hex" },
                { "GENERATION=0123456789abcdef0123456789abcdef\n", "no BOOT_ID" },
                { "GENERATION=0123456789ABCDEF0123456789abcdef\nBOOT_ID=" BOOT_A "\n", "hex" },
                { "\x01\x02\xff", "no valid content" },
        };
        _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                write_text(dp, cases[i].content);
                gv_marker_info_t mi = { 0 };
                assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_DRIVER, &mi, &e), 0);
                assert_int_equal(mi.state, GV_MARKER_FOREIGN);
                if (!strstr(mi.detail, cases[i].detail))
                        fail_msg("case %zu: detail \"%s\" lacks \"%s\"", i, mi.detail, cases[i].detail);
                gv_marker_info_clear(&mi);
        }
        /* NVIDIA's validator's own markers say whose they are: driver-ready with its five keys, and
         * the empty files it writes for the others (cmd/nvidia-validator/main.go). */
        static const struct {
                const char *content;
                const char *detail;
        } upstream[] = {
                { "IS_HOST_DRIVER=true\nNVIDIA_DRIVER_ROOT=/\nDRIVER_ROOT_CTR_PATH=/host\nNVIDIA_DEV_ROOT=/\n"
                  "DEV_ROOT_CTR_PATH=/host\n",
                  "not gpu-validator's: NVIDIA's validator writes driver-ready so" },
                { "", "not gpu-validator's: NVIDIA's validator writes its markers empty, or someone by hand" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(upstream); i++) {
                write_text(dp, upstream[i].content);
                gv_marker_info_t mi = { 0 };
                assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_DRIVER, &mi, &e), 0);
                assert_int_equal(mi.state, GV_MARKER_FOREIGN);
                if (!strstr(mi.detail, upstream[i].detail))
                        fail_msg("upstream case %zu: detail \"%s\" lacks \"%s\"", i, mi.detail, upstream[i].detail);
                gv_marker_info_clear(&mi);
        }
        /* A valid driver and a touched toolkit-ready: toolkit is foreign, not ready. */
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        _cleanup_free_ char *tp = fx_path(fx, "toolkit-ready");
        write_text(tp, "");
        assert_int_equal(state_of(fx->s, GV_MARKER_TOOLKIT), GV_MARKER_FOREIGN);
        /* A toolkit-ready without DRIVER_GENERATION is foreign too. */
        char gen[GV_GENERATION_HEX_LEN + 1];
        assert_int_equal(gv_generation_new(gen), 0);
        _cleanup_free_ char *t = NULL;
        assert_true(asprintf(&t, "GENERATION=%s\nBOOT_ID=%s\n", gen, BOOT_A) > 0);
        write_text(tp, t);
        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_FOREIGN);
        assert_string_equal(mi.detail, "no DRIVER_GENERATION");
        gv_marker_info_clear(&mi);
        /* A FIFO is foreign and inspect does not block on it. */
        assert_int_equal(unlink(tp), 0);
        assert_int_equal(mkfifo(tp, 0644), 0);
        assert_int_equal(state_of(fx->s, GV_MARKER_TOOLKIT), GV_MARKER_FOREIGN);
}

static void test_stale_boot(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        /* The machine rebooted but the folder survived (not a tmpfs). */
        _cleanup_free_ char *boot_b = gv_path_join(fx->root, "boot_b");
        write_text(boot_b, BOOT_B "\n");
        gv_store_t *s2 = open_store_at(fx->dir, boot_b, false);
        assert_string_equal(gv_store_boot_id(s2), BOOT_B);
        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(s2, GV_MARKER_DRIVER, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_STALE);
        assert_non_null(strstr(mi.detail, BOOT_A));
        assert_string_equal(gv_kvlist_get(&mi.content, "BOOT_ID"), BOOT_A);
        gv_marker_info_clear(&mi);
        assert_int_equal(state_of(s2, GV_MARKER_TOOLKIT), GV_MARKER_STALE);
        /* A toolkit publisher in the new boot is refused. */
        assert_int_equal(gv_store_invalidate(s2, GV_MARKER_TOOLKIT, &e), 0);
        assert_int_equal(gv_store_publish(s2, GV_MARKER_TOOLKIT, NULL, false, NULL, NULL, &e), -ESTALE);
        assert_non_null(strstr(e->msg, "stale"));
        gv_error_free(&e);
        /* Re-validated driver in this boot: consistent again. */
        assert_int_equal(gv_store_invalidate(s2, GV_MARKER_DRIVER, &e), 0);
        publish_ok(s2, GV_MARKER_DRIVER, NULL);
        publish_ok(s2, GV_MARKER_TOOLKIT, NULL);
        assert_int_equal(state_of(s2, GV_MARKER_TOOLKIT), GV_MARKER_READY);
        /* ...and now the old store's boot sees them as stale. */
        assert_int_equal(state_of(fx->s, GV_MARKER_DRIVER), GV_MARKER_STALE);
        gv_store_close(&s2);
}

static void test_generation_mismatch(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        publish_ok(fx->s, GV_MARKER_CUDA, NULL);
        /* Rewrite toolkit-ready as if it had been validated against another driver. */
        gv_kvlist_t t = { 0 };
        read_marker(fx, GV_MARKER_TOOLKIT, &t);
        assert_int_equal(gv_kvlist_set(&t, "DRIVER_GENERATION", "ffffffffffffffffffffffffffffffff", &e), 0);
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_marker_encode(&t, &text, &e), 0);
        gv_kvlist_clear(&t);
        int dfd = open(fx->dir, O_RDONLY | O_DIRECTORY);
        assert_true(dfd >= 0);
        assert_int_equal(gv_atomic_write_at(dfd, "toolkit-ready", text, strlen(text), 0644, &e), 0);
        close(dfd);

        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_TOOLKIT, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_INCONSISTENT);
        assert_non_null(strstr(mi.detail, "DRIVER_GENERATION"));
        assert_non_null(strstr(mi.detail, "ffffffffffffffffffffffffffffffff"));
        gv_marker_info_clear(&mi);
        /* cuda's own link is fine but its chain is not. */
        assert_int_equal(gv_store_inspect(fx->s, GV_MARKER_CUDA, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_INCONSISTENT);
        assert_non_null(strstr(mi.detail, "toolkit-ready"));
        gv_marker_info_clear(&mi);
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

static void test_open(void **state)
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
        /* Bad boot id files. */
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

/*
 * Several writer processes race invalidate/publish on the chain while a
 * reader, holding the writer lock so that the folder is quiet, checks that
 * every present marker is READY (whole chain present, this boot, matching
 * generations).
 */
static void test_concurrent_writers(void **state)
{
        fixture_t *fx = *state;
        const gv_marker_id_t ids[] = { GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA, GV_MARKER_PLUGIN,
                                       GV_MARKER_GDRCOPY };
        pid_t pids[GV_ARRAY_SIZE(ids)];
        for (size_t w = 0; w < GV_ARRAY_SIZE(ids); w++) {
                pids[w] = fork();
                assert_true(pids[w] >= 0);
                if (pids[w] == 0) {
                        gv_store_t *s = NULL;
                        gv_error_t *e = NULL;
                        gv_store_options_t o = { .dir = fx->dir, .boot_id_path = fx->boot };
                        if (gv_store_open(&o, &s, &e) < 0)
                                _exit(2);
                        for (int i = 0; i < 150; i++) {
                                if (gv_store_invalidate(s, ids[w], &e) < 0)
                                        _exit(3);
                                int r = gv_store_publish(s, ids[w], NULL, i % 2 == 0, NULL, NULL, &e);
                                if (r < 0 && r != -ESTALE)
                                        _exit(4);
                                gv_error_free(&e);
                                if (i % 7 == 0 && gv_store_fail(s, ids[w], &e) < 0)
                                        _exit(5);
                        }
                        gv_store_close(&s);
                        _exit(0);
                }
        }
        _cleanup_free_ char *lockp = fx_path(fx, ".gpu-validator.lock");
        int checks = 0, running = (int) GV_ARRAY_SIZE(ids);
        while (running > 0) {
                int lfd = open(lockp, O_RDWR | O_CLOEXEC);
                assert_true(lfd >= 0);
                assert_int_equal(flock(lfd, LOCK_EX), 0);
                for (int i = 0; i < GV_MARKER__MAX; i++) {
                        gv_marker_state_t st = state_of(fx->s, (gv_marker_id_t) i);
                        if (st != GV_MARKER_MISSING && st != GV_MARKER_READY)
                                fail_msg("%s is %s while writers are quiet", gv_marker_file((gv_marker_id_t) i),
                                         gv_marker_state_name(st));
                }
                checks++;
                close(lfd);
                for (size_t w = 0; w < GV_ARRAY_SIZE(ids); w++) {
                        int status;
                        if (pids[w] > 0 && waitpid(pids[w], &status, WNOHANG) == pids[w]) {
                                assert_true(WIFEXITED(status));
                                assert_int_equal(WEXITSTATUS(status), 0);
                                pids[w] = 0;
                                running--;
                        }
                }
        }
        assert_true(checks > 0);
        /* No temp file left. */
        DIR *d = opendir(fx->dir);
        assert_non_null(d);
        struct dirent *de;
        while ((de = readdir(d)))
                assert_null(strstr(de->d_name, ".tmp-"));
        closedir(d);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_publish_content),
                T(test_publish_full_chain),
                T(test_publish_needs_ready_parent),
                T(test_publish_bad_facts),
                T(test_invalidate_order),
                T(test_republish_parent_removes_dependants),
                T(test_host_driver_ready),
                T(test_fail_removes_downstream),
                T(test_symlink_planted),
                T(test_lock_not_regular_still_removes),
                T(test_folder_planted),
                T(test_fr01_orphan_toolkit),
                T(test_fr04_foreign),
                T(test_stale_boot),
                T(test_generation_mismatch),
                T(test_full_disk),
                T(test_cleanup),
                T(test_open),
                T(test_folder_recreated),
                T(test_concurrent_writers),
        };
        return cmocka_run_group_tests_name("markers-store", tests, NULL, NULL);
}
