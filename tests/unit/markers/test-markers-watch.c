/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_dirwatch: changes in the folder, time-outs, a folder removed,
 * re-created or replaced (re-armed, the next change still seen), a folder
 * that appears late, the stop flag, and the polling fallback.  Functional
 * checks only: no timing assertions beyond "it returned".
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "base/clock.h"
#include "markers-test.h"

#define LONG_MS 30000 /* a time-out that a passing test never reaches */

static gv_dirwatch_t *open_watch(const char *dir, bool markers_only)
{
        gv_dirwatch_options_t o = { .markers_only = markers_only };
        gv_dirwatch_t *w = NULL;
        gv_error_t *e = NULL;
        assert_int_equal(gv_dirwatch_open(dir, &o, &w, &e), 0);
        assert_non_null(w);
        return w;
}

static int next(gv_dirwatch_t *w, int64_t ms)
{
        gv_error_t *e = NULL;
        int r = gv_dirwatch_next(w, ms, NULL, &e);
        if (r < 0)
                fprintf(stderr, "# gv_dirwatch_next: %s\n", e->msg);
        gv_error_free(&e);
        return r;
}

/* The next result that is not "nothing yet", waiting at most LONG_MS. */
static int next_news(gv_dirwatch_t *w)
{
        return next(w, LONG_MS);
}

static void touch_in(const char *dir, const char *name)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        write_text(p, "x\n");
}

static void test_create_is_a_change(void **state)
{
        fixture_t *fx = *state;
        gv_dirwatch_t *w = open_watch(fx->dir, false);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_WATCHING);
        assert_null(gv_dirwatch_error(w));
        assert_true(gv_dirwatch_fd(w) >= 0);
        assert_int_equal(next(w, 0), GV_DIRWATCH_TIMEOUT);
        touch_in(fx->dir, "anything");
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        assert_int_equal(next(w, 0), GV_DIRWATCH_TIMEOUT); /* the batch was read whole */
        gv_dirwatch_close(&w);
        assert_null(w);
        gv_dirwatch_close(&w); /* an empty slot is fine */
}

static void test_rename_into_folder_is_a_change(void **state)
{
        fixture_t *fx = *state;
        gv_dirwatch_t *w = open_watch(fx->dir, true);
        /* A writer's temporary file does not count with markers_only... */
        _cleanup_free_ char *tmp = gv_path_join(fx->dir, ".toolkit-ready.tmp-1");
        _cleanup_free_ char *dst = gv_path_join(fx->dir, "toolkit-ready");
        write_text(tmp, "A=1\n");
        assert_int_equal(next(w, 200), GV_DIRWATCH_TIMEOUT);
        /* ...its rename to a marker's name does. */
        assert_int_equal(rename(tmp, dst), 0);
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        /* A file renamed in from elsewhere too. */
        _cleanup_free_ char *outside = gv_path_join(fx->root, "cuda-ready");
        _cleanup_free_ char *inside = gv_path_join(fx->dir, "cuda-ready");
        write_text(outside, "A=1\n");
        assert_int_equal(rename(outside, inside), 0);
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        gv_dirwatch_close(&w);
}

static void test_timeout_without_event(void **state)
{
        fixture_t *fx = *state;
        gv_dirwatch_t *w = open_watch(fx->dir, false);
        assert_int_equal(next(w, 50), GV_DIRWATCH_TIMEOUT);
        /* Something outside the folder (in its parent, another name) is no news. */
        touch_in(fx->root, "other");
        assert_int_equal(next(w, 100), GV_DIRWATCH_TIMEOUT);
        gv_dirwatch_close(&w);
}

static void test_folder_deleted_and_recreated(void **state)
{
        fixture_t *fx = *state;
        gv_store_close(&fx->s); /* nothing holds the folder but the test's own fd below */
        gv_dirwatch_t *w = open_watch(fx->dir, true);
        scratch_rm_rf(fx->dir);
        assert_int_equal(next_news(w), GV_DIRWATCH_REARMED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_MISSING);
        assert_int_equal(mkdir(fx->dir, 0755), 0);
        assert_int_equal(next_news(w), GV_DIRWATCH_REARMED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_WATCHING);
        /* The watch is on the new folder: its changes are seen. */
        touch_in(fx->dir, "driver-ready");
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        gv_dirwatch_close(&w);
}

static void test_empty_folder_replaced_while_held_open(void **state)
{
        fixture_t *fx = *state;
        /* Held open (as the store holds its folder): its own watch hears nothing of the replacement. */
        _cleanup_free_ char *held = gv_path_join(fx->root, "held");
        _cleanup_free_ char *fresh = gv_path_join(fx->root, "fresh");
        assert_int_equal(mkdir(held, 0755), 0);
        _cleanup_close_ int fd = open(held, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        gv_dirwatch_t *w = open_watch(held, true);
        assert_int_equal(mkdir(fresh, 0755), 0);
        assert_int_equal(rename(fresh, held), 0);
        assert_int_equal(next_news(w), GV_DIRWATCH_REARMED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_WATCHING);
        touch_in(held, "plugin-ready");
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        gv_dirwatch_close(&w);
}

static void test_folder_appears_late(void **state)
{
        fixture_t *fx = *state;
        _cleanup_free_ char *deep = gv_path_join(fx->root, "a/b/validations");
        _cleanup_free_ char *a = gv_path_join(fx->root, "a");
        gv_dirwatch_t *w = open_watch(deep, true);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_MISSING);
        assert_null(gv_dirwatch_error(w));
        /* A file next to the missing path is no news. */
        touch_in(fx->root, "unrelated");
        assert_int_equal(next(w, 100), GV_DIRWATCH_TIMEOUT);
        /* A step on the way: the watch moves down, the folder is still missing: nothing to read. */
        assert_int_equal(mkdir(a, 0755), 0);
        assert_int_equal(next(w, 200), GV_DIRWATCH_TIMEOUT);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_MISSING);
        gv_error_t *e = NULL;
        assert_int_equal(gv_mkdir_p(deep, 0755, &e), 0);
        assert_int_equal(next_news(w), GV_DIRWATCH_REARMED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_WATCHING);
        touch_in(deep, "cuda-ready");
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        gv_dirwatch_close(&w);
}

typedef struct stopper {
        volatile sig_atomic_t *flag;
        int delay_ms;
} stopper_t;

static void *stop_later(void *arg)
{
        stopper_t *s = arg;
        struct timespec ts = { .tv_sec = 0, .tv_nsec = (long) s->delay_ms * 1000000L };
        nanosleep(&ts, NULL);
        *s->flag = 1;
        return NULL;
}

static void stop_case(gv_dirwatch_t *w)
{
        volatile sig_atomic_t stop = 1;
        gv_error_t *e = NULL;
        assert_int_equal(gv_dirwatch_next(w, LONG_MS, &stop, &e), -EINTR);
        assert_int_equal(e->reason, GV_REASON_INTERRUPTED);
        gv_error_free(&e);
        /* Set while waiting (no event comes): the wait ends long before its time-out. */
        stop = 0;
        stopper_t s = { .flag = &stop, .delay_ms = 100 };
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, stop_later, &s), 0);
        int64_t t0 = gv_now_ms();
        assert_int_equal(gv_dirwatch_next(w, LONG_MS, &stop, &e), -EINTR);
        assert_true(gv_now_ms() - t0 < LONG_MS);
        gv_error_free(&e);
        pthread_join(t, NULL);
}

static void test_stop_flag(void **state)
{
        fixture_t *fx = *state;
        gv_dirwatch_t *w = open_watch(fx->dir, false);
        stop_case(w);
        gv_dirwatch_close(&w);
        gv_dirwatch_options_t o = { .no_inotify = true };
        assert_int_equal(gv_dirwatch_open(fx->dir, &o, &w, NULL), 0);
        stop_case(w);
        gv_dirwatch_close(&w);
}

static void test_polling_fallback(void **state)
{
        fixture_t *fx = *state;
        gv_dirwatch_options_t o = { .no_inotify = true, .poll_interval_ms = 20 };
        gv_dirwatch_t *w = NULL;
        assert_int_equal(gv_dirwatch_open(fx->dir, &o, &w, NULL), 0);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_POLLING);
        assert_int_equal(gv_dirwatch_fd(w), -1);
        assert_non_null(gv_dirwatch_error(w));
        assert_non_null(strstr(gv_dirwatch_error(w)->msg, "inotify: "));
        /* Every interval (even with no time-out) says "read again"; no event is ever claimed. */
        assert_int_equal(next(w, -1), GV_DIRWATCH_POLLED);
        touch_in(fx->dir, "driver-ready");
        assert_int_equal(next(w, LONG_MS), GV_DIRWATCH_POLLED);
        assert_int_equal(next(w, 0), GV_DIRWATCH_POLLED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_POLLING);
        gv_dirwatch_close(&w);
}

static void test_unwatchable_then_watchable(void **state)
{
        fixture_t *fx = *state;
        _cleanup_free_ char *file = gv_path_join(fx->root, "not-a-folder");
        write_text(file, "x\n");
        gv_dirwatch_options_t o = { .poll_interval_ms = 20 };
        gv_dirwatch_t *w = NULL;
        assert_int_equal(gv_dirwatch_open(file, &o, &w, NULL), 0);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_UNWATCHED);
        assert_non_null(gv_dirwatch_error(w));
        assert_int_equal(gv_dirwatch_error(w)->errnum, ENOTDIR);
        assert_non_null(strstr(gv_dirwatch_error(w)->msg, ": inotify: "));
        assert_int_equal(next(w, 50), GV_DIRWATCH_POLLED);
        /* Once it can be watched, the next call arms it and says so. */
        assert_int_equal(unlink(file), 0);
        assert_int_equal(mkdir(file, 0755), 0);
        assert_int_equal(next(w, 50), GV_DIRWATCH_REARMED);
        assert_int_equal(gv_dirwatch_state(w), GV_DIRWATCH_WATCHING);
        assert_null(gv_dirwatch_error(w));
        touch_in(file, "x");
        assert_int_equal(next_news(w), GV_DIRWATCH_CHANGED);
        gv_dirwatch_close(&w);
}

static void test_bad_args(void **state)
{
        (void) state;
        gv_dirwatch_t *w = NULL;
        gv_error_t *e = NULL;
        assert_int_equal(gv_dirwatch_open("", NULL, &w, &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(gv_dirwatch_open(NULL, NULL, &w, &e), -EINVAL);
        gv_error_free(&e);
        assert_null(w);
        assert_int_equal(gv_dirwatch_next(NULL, 0, NULL, &e), -EINVAL);
        gv_error_free(&e);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_create_is_a_change),
                T(test_rename_into_folder_is_a_change),
                T(test_timeout_without_event),
                T(test_folder_deleted_and_recreated),
                T(test_empty_folder_replaced_while_held_open),
                T(test_folder_appears_late),
                T(test_stop_flag),
                T(test_polling_fallback),
                T(test_unwatchable_then_watchable),
                T(test_bad_args),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
