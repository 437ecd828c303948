/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The marker store: publish/invalidate/fail ordering, content, planted
 * symlinks and folders, FR01, FR04, stale boot ids, generation mismatches,
 * and concurrent writers.  Opening, cleanup, a re-created folder and a full
 * disk: test-markers-open.c.
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
        PUBLISH(fx->s, GV_MARKER_TOOLKIT, GV_MARKER_CUDA, GV_MARKER_PLUGIN, GV_MARKER_NVIDIA_FS, GV_MARKER_GDRCOPY,
                GV_MARKER_NVIDIA_PEERMEM);

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
        PUBLISH(fx->s, GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA, GV_MARKER_PLUGIN, GV_MARKER_GDRCOPY);
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
                PUBLISH(fx->s, GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA);
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
        PUBLISH(fx->s, GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA);
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
                T(test_concurrent_writers),
        };
        return cmocka_run_group_tests_name("markers-store", tests, NULL, NULL);
}
