/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_store_wait(): returns when the chain becomes complete, times out with
 * a per-marker report otherwise, follows a folder that appears late or is
 * re-created.  Functional checks only; no timing assertions beyond "it
 * returned before a generous timeout".
 */
#include <pthread.h>
#include <time.h>

#include "markers-test.h"

typedef struct publisher {
        const char *dir;
        const char *boot;
        int delay_ms;
        bool mkdir_first; /* create the folder (and its parent) first */
        bool touch_only;  /* only `touch toolkit-ready` */
        gv_marker_id_t ids[4];
        size_t n;
        char gen[GV_GENERATION_HEX_LEN + 1]; /* generation of the last publication */
} publisher_t;

static void sleep_ms(int ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void *publisher_main(void *arg)
{
        publisher_t *p = arg;
        sleep_ms(p->delay_ms);
        gv_error_t *e = NULL;
        if (p->mkdir_first && gv_mkdir_p(p->dir, 0755, &e) < 0)
                return (void *) 1;
        if (p->touch_only) {
                _cleanup_free_ char *t = gv_path_join(p->dir, "toolkit-ready");
                int fd = open(t, O_WRONLY | O_CREAT, 0644);
                if (fd >= 0)
                        close(fd);
                return NULL;
        }
        gv_store_options_t o = { .dir = p->dir, .boot_id_path = p->boot };
        gv_store_t *s = NULL;
        if (gv_store_open(&o, &s, &e) < 0)
                return (void *) 2;
        for (size_t i = 0; i < p->n; i++) {
                if (gv_store_invalidate(s, p->ids[i], &e) < 0 ||
                    gv_store_publish(s, p->ids[i], NULL, false, NULL, p->gen, &e) < 0) {
                        gv_error_free(&e);
                        gv_store_close(&s);
                        return (void *) 3;
                }
                sleep_ms(p->delay_ms / 4);
        }
        gv_store_close(&s);
        return NULL;
}

static void test_wait_ready_now(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        char gen[GV_GENERATION_HEX_LEN + 1];
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publish_ok(fx->s, GV_MARKER_TOOLKIT, gen);
        gv_marker_info_t mi = { 0 };
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_TOOLKIT, 0, &mi, &e), 0);
        assert_int_equal(mi.state, GV_MARKER_READY);
        assert_string_equal(gv_kvlist_get(&mi.content, "GENERATION"), gen);
        gv_marker_info_clear(&mi);
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_DRIVER, 1000, NULL, &e), 0);
}

/*
 * Runs @fn(@p) in a thread while waiting up to 20 s for @id in @s, then checks that the thread
 * succeeded and that the wait returned the generation it published.
 */
static void wait_for_publisher(gv_store_t *s, gv_marker_id_t id, void *(*fn)(void *), publisher_t *p)
{
        gv_error_t *e = NULL;
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, fn, p), 0);
        gv_marker_info_t mi = { 0 };
        int r = gv_store_wait(s, id, 20000, &mi, &e);
        if (r < 0)
                fprintf(stderr, "# %s\n", e->msg);
        assert_int_equal(r, 0);
        void *ret = NULL;
        assert_int_equal(pthread_join(th, &ret), 0);
        assert_null(ret);
        assert_string_equal(gv_kvlist_get(&mi.content, "GENERATION"), p->gen);
        gv_marker_info_clear(&mi);
}

static void test_wait_chain_completes(void **state)
{
        fixture_t *fx = *state;
        publisher_t p = { .dir = fx->dir, .boot = fx->boot, .delay_ms = 50,
                          .ids = { GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA }, .n = 3 };
        wait_for_publisher(fx->s, GV_MARKER_CUDA, publisher_main, &p);
}

static void test_wait_timeout_reports_chain(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        gv_marker_info_t mi = { .state = GV_MARKER_FOREIGN };
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_CUDA, 100, &mi, &e), -ETIMEDOUT);
        assert_int_equal(mi.state, GV_MARKER_FOREIGN); /* untouched on failure */
        assert_int_equal(e->reason, GV_REASON_TIMEOUT);
        assert_non_null(strstr(e->msg, "cuda-ready not ready after 100 ms"));
        assert_non_null(strstr(e->msg, "driver-ready: ready"));
        assert_non_null(strstr(e->msg, "toolkit-ready: missing"));
        assert_non_null(strstr(e->msg, "cuda-ready: missing"));
        gv_error_free(&e);

        /* FR01: an orphan toolkit-ready never satisfies a wait. */
        publish_ok(fx->s, GV_MARKER_TOOLKIT, NULL);
        _cleanup_free_ char *dp = fx_path(fx, "driver-ready");
        assert_int_equal(unlink(dp), 0);
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_TOOLKIT, 50, NULL, &e), -ETIMEDOUT);
        assert_non_null(strstr(e->msg, "toolkit-ready: inconsistent (upstream driver-ready is missing"));
        gv_error_free(&e);
}

static void test_wait_ignores_touched_marker(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        publish_ok(fx->s, GV_MARKER_DRIVER, NULL);
        publisher_t p = { .dir = fx->dir, .boot = fx->boot, .delay_ms = 20, .touch_only = true };
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, publisher_main, &p), 0);
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_TOOLKIT, 300, NULL, &e), -ETIMEDOUT);
        gv_error_free(&e);
        assert_int_equal(pthread_join(th, NULL), 0);
        /* Once the touch surely happened, the report names it. */
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_TOOLKIT, 10, NULL, &e), -ETIMEDOUT);
        assert_non_null(strstr(e->msg, "toolkit-ready: foreign (empty file"));
        gv_error_free(&e);
}

static void test_wait_folder_appears(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        /* Two levels missing: the wait climbs to the nearest existing ancestor. */
        _cleanup_free_ char *late = gv_path_join(fx->root, "late/validations");
        gv_store_t *s = open_store_at(late, fx->boot, true);
        publisher_t p = { .dir = late, .boot = fx->boot, .delay_ms = 50, .mkdir_first = true,
                          .ids = { GV_MARKER_DRIVER, GV_MARKER_TOOLKIT }, .n = 2 };
        wait_for_publisher(s, GV_MARKER_TOOLKIT, publisher_main, &p);
        gv_store_close(&s);

        /* Never appears: timeout, and the message says the folder is missing. */
        _cleanup_free_ char *never = gv_path_join(fx->root, "never/validations");
        s = open_store_at(never, fx->boot, true);
        assert_int_equal(gv_store_wait(s, GV_MARKER_DRIVER, 50, NULL, &e), -ETIMEDOUT);
        assert_non_null(strstr(e->msg, "does not exist"));
        gv_error_free(&e);
        gv_store_close(&s);
}

static void *recreate_main(void *arg)
{
        publisher_t *p = arg;
        sleep_ms(p->delay_ms);
        /* Wipe the folder (as a node-level rm -rf of the hostPath would), then re-create and publish. */
        _cleanup_free_ char *lock = gv_path_join(p->dir, ".gpu-validator.lock");
        unlink(lock);
        if (rmdir(p->dir) < 0)
                return (void *) 1;
        sleep_ms(p->delay_ms);
        p->mkdir_first = true;
        p->delay_ms = 0;
        return publisher_main(p);
}

static void test_wait_folder_recreated(void **state)
{
        fixture_t *fx = *state;
        publisher_t p = { .dir = fx->dir, .boot = fx->boot, .delay_ms = 50, .ids = { GV_MARKER_DRIVER }, .n = 1 };
        wait_for_publisher(fx->s, GV_MARKER_DRIVER, recreate_main, &p);
}

/*
 * The waiter holds the folder open, so removing it sends no IN_DELETE_SELF
 * (the kernel sends it when the last reference goes): an empty folder that
 * is removed and re-created at once, or replaced by a rename, sends the old
 * watch nothing at all.  The wait must still follow the new folder.
 */
typedef struct replacer {
        publisher_t p;
        bool by_rename; /* build <dir>.new, publish there, rename it over the removed folder */
} replacer_t;

/*
 * The marker is published, then withdrawn after 3 s: a waiter that was not
 * woken by the publication (only re-checking at its 10 s deadline) finds it
 * gone and times out.
 */
static void *withdraw_later(publisher_t *p, void *ret)
{
        if (ret)
                return ret;
        sleep_ms(3000);
        _cleanup_free_ char *m = gv_path_join(p->dir, gv_marker_file(p->ids[0]));
        return unlink(m) < 0 ? (void *) 5 : NULL;
}

static void *replace_main(void *arg)
{
        replacer_t *r = arg;
        publisher_t *p = &r->p;
        sleep_ms(100); /* the waiter is in ppoll() by now */
        if (rmdir(p->dir) < 0)
                return (void *) 1;
        if (!r->by_rename) {
                if (mkdir(p->dir, 0755) < 0)
                        return (void *) 2;
                p->delay_ms = 0;
                return withdraw_later(p, publisher_main(p));
        }
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.new", p->dir) < 0 || mkdir(tmp, 0755) < 0)
                return (void *) 3;
        const char *final = p->dir;
        p->dir = tmp;
        p->delay_ms = 0;
        void *ret = publisher_main(p);
        p->dir = final;
        if (ret)
                return ret;
        _cleanup_free_ char *lock = gv_path_join(tmp, ".gpu-validator.lock");
        unlink(lock);
        return withdraw_later(p, rename(tmp, final) < 0 ? (void *) 4 : NULL);
}

static void test_wait_follows_folder_removed_while_open(void **state)
{
        fixture_t *fx = *state;
        for (int by_rename = 0; by_rename <= 1; by_rename++) {
                gv_error_t *e = NULL;
                /* An empty folder: not even the writer lock, so its removal sends no other event. */
                _cleanup_free_ char *lock = gv_path_join(fx->dir, ".gpu-validator.lock");
                assert_int_equal(gv_store_cleanup(fx->s, &e), 0);
                unlink(lock);
                replacer_t r = { .p = { .dir = fx->dir, .boot = fx->boot, .ids = { GV_MARKER_DRIVER }, .n = 1 },
                                 .by_rename = by_rename };
                pthread_t th;
                assert_int_equal(pthread_create(&th, NULL, replace_main, &r), 0);
                gv_marker_info_t mi = { 0 };
                int rc = gv_store_wait(fx->s, GV_MARKER_DRIVER, 10000, &mi, &e);
                void *ret = NULL;
                assert_int_equal(pthread_join(th, &ret), 0);
                assert_null(ret);
                if (rc < 0)
                        fail_msg("by_rename=%d: %s", by_rename, e->msg);
                assert_string_equal(gv_kvlist_get(&mi.content, "GENERATION"), r.p.gen);
                gv_marker_info_clear(&mi);
        }
}

static void test_wait_many_publications(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        /* Every publication wakes the waiter (functional: 50 rounds all return 0). */
        for (int i = 0; i < 50; i++) {
                assert_int_equal(gv_store_invalidate(fx->s, GV_MARKER_DRIVER, &e), 0);
                publisher_t p = { .dir = fx->dir, .boot = fx->boot, .delay_ms = i % 3,
                                  .ids = { GV_MARKER_DRIVER }, .n = 1 };
                wait_for_publisher(fx->s, GV_MARKER_DRIVER, publisher_main, &p);
        }
}

static void test_wait_bad_args(void **state)
{
        fixture_t *fx = *state;
        gv_error_t *e = NULL;
        assert_int_equal(gv_store_wait(fx->s, GV_MARKER_INVALID, 0, NULL, &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(gv_store_wait(NULL, GV_MARKER_DRIVER, 0, NULL, &e), -EINVAL);
        gv_error_free(&e);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_wait_ready_now),
                T(test_wait_chain_completes),
                T(test_wait_timeout_reports_chain),
                T(test_wait_ignores_touched_marker),
                T(test_wait_folder_appears),
                T(test_wait_folder_recreated),
                T(test_wait_follows_folder_removed_while_open),
                T(test_wait_many_publications),
                T(test_wait_bad_args),
        };
        return cmocka_run_group_tests_name("markers-wait", tests, NULL, NULL);
}
