/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/cleanup.h (the _cleanup_ helpers run at scope exit, TAKE_PTR /
 * TAKE_FD hand ownership on, GV_DEFINE_CLEANUP, _cleanup_closedir_),
 * base/cleanup-json.h (_cleanup_json_ drops one reference),
 * base/clock.h (gv_now_ms / gv_now_ns, gv_sleep_ms and its stop flag)
 * and base/log.h (gv_logf hands one event to the sink, NULL reason as
 * "", no sink is fine).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <signal.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"

static bool fd_open(int fd)
{
        return fcntl(fd, F_GETFD) >= 0;
}

static void test_cleanup_close_at_scope_exit(void **state)
{
        (void) state;
        int seen;
        {
                _cleanup_close_ int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                seen = fd;
                assert_true(fd_open(seen));
        }
        assert_false(fd_open(seen));
        /* -1 is left alone, and errno survives the cleanup */
        {
                _cleanup_close_ int fd = -1;
                (void) fd;
                errno = EAGAIN;
        }
        assert_int_equal(errno, EAGAIN);
        {
                _cleanup_close_ int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                errno = ENOENT;
        }
        assert_int_equal(errno, ENOENT);
}

static int take_fd_out(void)
{
        _cleanup_close_ int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        int taken = TAKE_FD(fd);
        assert_int_equal(fd, -1);
        return taken;
}

static void test_take_fd(void **state)
{
        (void) state;
        int fd = take_fd_out();
        assert_true(fd_open(fd)); /* not closed by the scope it left */
        close(fd);
}

static char *take_ptr_out(char **seen)
{
        _cleanup_free_ char *p = strdup("kept");
        *seen = p;
        char *out = TAKE_PTR(p);
        assert_null(p);
        return out;
}

static void test_take_ptr(void **state)
{
        (void) state;
        char *seen = NULL;
        char *p = take_ptr_out(&seen);
        assert_ptr_equal(p, seen);
        assert_string_equal(p, "kept"); /* ASan would call this a use after free without TAKE_PTR */
        free(p);
        /* TAKE_PTR keeps the pointer's type */
        int *ip = malloc(sizeof(*ip));
        *ip = 5;
        int *moved = TAKE_PTR(ip);
        assert_null(ip);
        assert_int_equal(*moved, 5);
        free(moved);
}

static void test_cleanup_free_strv_error_fclose(void **state)
{
        (void) state;
        /* these free at scope exit: ASan/LeakSanitizer reports a leak if they do not */
        {
                _cleanup_free_ char *p = strdup("x");
                _cleanup_free_ char *null = NULL;
                (void) p;
                (void) null;
        }
        {
                _cleanup_strv_free_ char **v = calloc(3, sizeof(char *));
                v[0] = strdup("a");
                v[1] = strdup("b");
                _cleanup_strv_free_ char **none = NULL;
                (void) none;
        }
        gv_error_t *escaped = NULL;
        {
                _cleanup_error_ gv_error_t *err = NULL;
                gv_error_set(&err, EIO, GV_REASON_IO, "x");
                escaped = err;
                assert_non_null(escaped);
        }
        {
                _cleanup_error_ gv_error_t *err = NULL;
                gv_error_set(&err, EIO, GV_REASON_IO, "y");
                escaped = TAKE_PTR(err);
        }
        assert_string_equal(escaped->msg, "y");
        gv_error_free(&escaped);
        int fd = -1;
        {
                _cleanup_fclose_ FILE *f = fopen("/dev/null", "re");
                assert_non_null(f);
                fd = fileno(f);
                assert_true(fd_open(fd));
                _cleanup_fclose_ FILE *none = NULL;
                (void) none;
        }
        assert_false(fd_open(fd));
}

static void test_array_size(void **state)
{
        (void) state;
        int a[7];
        const char *s[] = { "a", "b", "c" };
        assert_int_equal(GV_ARRAY_SIZE(a), 7);
        assert_int_equal(GV_ARRAY_SIZE(s), 3);
}

/* ---- log ---- */

typedef struct sink {
        unsigned calls;
        void *userdata;
        gv_log_level_t level;
        char component[32];
        char reason[32];
        char msg[128];
} sink_t;

static void sink_fn(void *userdata, gv_log_level_t level, const char *component, const char *reason,
                    const char *msg)
{
        sink_t *s = userdata;
        s->calls++;
        s->userdata = userdata;
        s->level = level;
        assert_non_null(component);
        assert_non_null(reason);
        assert_non_null(msg);
        snprintf(s->component, sizeof(s->component), "%s", component);
        snprintf(s->reason, sizeof(s->reason), "%s", reason);
        snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

static void vlog(sink_t *s, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        gv_vlogf(sink_fn, s, GV_LOG_DEBUG, "cuda", NULL, fmt, ap);
        va_end(ap);
}

static void test_logf(void **state)
{
        (void) state;
        sink_t s = { 0 };
        gv_logf(sink_fn, &s, GV_LOG_WARN, "driver", gv_reason_name(GV_REASON_NO_GPU), "%u GPU%s", 0u, "s");
        assert_int_equal(s.calls, 1);
        assert_ptr_equal(s.userdata, &s);
        assert_int_equal(s.level, GV_LOG_WARN);
        assert_string_equal(s.component, "driver");
        assert_string_equal(s.reason, "no-gpu");
        assert_string_equal(s.msg, "0 GPUs");
        /* a NULL reason reaches the sink as "" (progress messages) */
        gv_logf(sink_fn, &s, GV_LOG_INFO, "toolkit", NULL, "ready");
        assert_int_equal(s.calls, 2);
        assert_string_equal(s.reason, "");
        assert_string_equal(s.msg, "ready");
        vlog(&s, "%s-%d", "v", 2);
        assert_int_equal(s.calls, 3);
        assert_int_equal(s.level, GV_LOG_DEBUG);
        assert_string_equal(s.component, "cuda");
        assert_string_equal(s.msg, "v-2");
        /* no sink: nothing happens, nothing crashes */
        gv_logf(NULL, &s, GV_LOG_ERROR, "driver", "io", "dropped %d", 1);
        assert_int_equal(s.calls, 3);
}

/* A type of our own for GV_DEFINE_CLEANUP: counts the calls of its free function. */
typedef struct counted {
        int *freed;
} counted_t;

static int counted_free(counted_t *c)
{
        (*c->freed)++;
        free(c);
        return -1; /* a result the cleanup must drop */
}

GV_DEFINE_CLEANUP(counted_t *, counted_free)

static void test_define_cleanup(void **state)
{
        (void) state;
        int freed = 0;
        {
                _cleanup_(counted_freep) counted_t *c = calloc(1, sizeof(*c));
                assert_non_null(c);
                c->freed = &freed;
                _cleanup_(counted_freep) counted_t *none = NULL; /* NULL: the free function is not called */
                (void) none;
        }
        assert_int_equal(freed, 1);
        counted_t *kept = NULL;
        {
                _cleanup_(counted_freep) counted_t *c = calloc(1, sizeof(*c));
                assert_non_null(c);
                c->freed = &freed;
                kept = TAKE_PTR(c);
        }
        assert_int_equal(freed, 1); /* taken: not freed at scope exit */
        counted_free(kept);
        assert_int_equal(freed, 2);
}

static void test_cleanup_closedir(void **state)
{
        (void) state;
        int fd = -1;
        {
                _cleanup_closedir_ DIR *d = opendir("/");
                assert_non_null(d);
                fd = dirfd(d);
                assert_true(fd_open(fd));
                _cleanup_closedir_ DIR *none = NULL;
                (void) none;
        }
        assert_false(fd_open(fd));
}

static void test_cleanup_json(void **state)
{
        (void) state;
        json_object *o = json_object_new_object();
        assert_non_null(o);
        {
                _cleanup_json_ json_object *ref = json_object_get(o); /* a second reference */
                _cleanup_json_ json_object *none = NULL;
                (void) ref;
                (void) none;
        }
        /* exactly one reference was dropped: this put is the last one */
        assert_int_equal(json_object_put(o), 1);
}

static void test_clock(void **state)
{
        (void) state;
        int64_t ns0 = gv_now_ns(), ms0 = gv_now_ms();
        assert_true(ns0 > 0);
        assert_true(ms0 >= ns0 / 1000000);
        assert_true(gv_now_ns() >= ns0); /* monotonic */

        /* a sleep lasts at least its time (a lower bound only: no speed assertion) */
        int64_t t0 = gv_now_ms();
        assert_int_equal(gv_sleep_ms(30, NULL), 0);
        assert_true(gv_now_ms() - t0 >= 30);

        /* zero and negative times return at once with 0 */
        assert_int_equal(gv_sleep_ms(0, NULL), 0);
        assert_int_equal(gv_sleep_ms(-5, NULL), 0);

        /* a stop flag already set: -EINTR before any sleeping */
        volatile sig_atomic_t stop = 1;
        t0 = gv_now_ms();
        assert_int_equal(gv_sleep_ms(5000, &stop), -EINTR);
        assert_true(gv_now_ms() - t0 < 5000);
        /* a clear flag does not stop the sleep */
        stop = 0;
        assert_int_equal(gv_sleep_ms(10, &stop), 0);
}

/* SIGALRM sets the stop flag of test_sleep_stopped_midway. */
static volatile sig_atomic_t alarm_stop;

static void on_alarm(int sig)
{
        (void) sig;
        alarm_stop = 1;
}

static void test_sleep_stopped_midway(void **state)
{
        (void) state;
        struct sigaction sa = { .sa_handler = on_alarm };
        assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
        alarm_stop = 0;
        alarm(1);
        /* a 10 s sleep that the flag set after a second ends with -EINTR */
        assert_int_equal(gv_sleep_ms(10000, &alarm_stop), -EINTR);
        assert_int_equal(alarm_stop, 1);
        signal(SIGALRM, SIG_DFL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cleanup_close_at_scope_exit),
                cmocka_unit_test(test_take_fd),
                cmocka_unit_test(test_take_ptr),
                cmocka_unit_test(test_cleanup_free_strv_error_fclose),
                cmocka_unit_test(test_array_size),
                cmocka_unit_test(test_logf),
                cmocka_unit_test(test_define_cleanup),
                cmocka_unit_test(test_cleanup_closedir),
                cmocka_unit_test(test_cleanup_json),
                cmocka_unit_test(test_clock),
                cmocka_unit_test(test_sleep_stopped_midway),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
