/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/process.h: a `_cleanup_pid_` child is killed with its process group and reaped when its
 * scope ends (no zombie, no grandchild left running); TAKE_PID() leaves nothing to do; a
 * `_cleanup_pid_term_` child gets SIGTERM first and SIGKILL only after the grace time.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/process.h"

/* A child leading its own process group, with a grandchild in it; both sleep. *grandchild is its pid. */
static pid_t spawn_sleepers(pid_t *grandchild)
{
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                setpgid(0, 0);
                pid_t g = fork();
                if (g == 0) {
                        pause();
                        _exit(0);
                }
                (void) write(fds[1], &g, sizeof(g));
                pause();
                _exit(0);
        }
        setpgid(pid, pid);
        close(fds[1]);
        assert_int_equal(read(fds[0], grandchild, sizeof(*grandchild)), (ssize_t) sizeof(*grandchild));
        close(fds[0]);
        return pid;
}

/* Whether @pid is gone, or a zombie waiting for init, within two seconds. */
static bool dies_soon(pid_t pid)
{
        for (int i = 0; i < 200; i++) {
                if (kill(pid, 0) < 0 && errno == ESRCH)
                        return true;
                char path[64], st = '?';
                snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
                FILE *f = fopen(path, "r");
                if (f) {
                        int n = fscanf(f, "%*d %*s %c", &st);
                        fclose(f);
                        if (n == 1 && st == 'Z')
                                return true;
                }
                usleep(10000);
        }
        return false;
}

static void test_scope_exit_kills_and_reaps(void **state)
{
        (void) state;
        pid_t child, grandchild;
        {
                _cleanup_pid_ pid_t pid = spawn_sleepers(&grandchild);
                child = pid;
        }
        /* reaped: no such child any more */
        errno = 0;
        assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        /* the grandchild got SIGKILL with its group (init may take a moment to reap it) */
        assert_true(dies_soon(grandchild));
}

static void test_take_pid_leaves_the_child(void **state)
{
        (void) state;
        pid_t child, grandchild;
        {
                _cleanup_pid_ pid_t pid = spawn_sleepers(&grandchild);
                child = TAKE_PID(pid);
                assert_int_equal(pid, 0);
        }
        assert_int_equal(kill(child, 0), 0); /* still running: ours to end */
        pid_t p = child;
        gv_pid_kill_and_reap(&p);
        assert_int_equal(p, 0);
        assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
        /* nothing to do for 0 or a negative pid */
        p = 0;
        gv_pid_kill_and_reap(&p);
        p = -1;
        gv_pid_kill_and_reap(&p);
        assert_int_equal(p, -1);
}

/* A child that ends on SIGTERM with exit 7 (@obeys), or ignores it; ready when it returns. */
static pid_t spawn_term(bool obeys)
{
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                signal(SIGTERM, obeys ? SIG_DFL : SIG_IGN);
                (void) write(fds[1], "r", 1);
                for (;;)
                        pause();
        }
        close(fds[1]);
        char c;
        assert_int_equal(read(fds[0], &c, 1), 1);
        close(fds[0]);
        return pid;
}

static void test_term_then_kill(void **state)
{
        (void) state;
        /* a child that ends on SIGTERM is reaped at once */
        pid_t p = spawn_term(true), child = p;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        gv_pid_term_and_reap(&p, 5000);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_int_equal(p, 0);
        assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
        assert_true(t1.tv_sec - t0.tv_sec < 4);
        /* one that ignores it gets SIGKILL after the grace time, and is reaped */
        p = spawn_term(false);
        child = p;
        gv_pid_term_and_reap(&p, 200);
        assert_int_equal(p, 0);
        errno = 0;
        assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        /* the scope form */
        {
                _cleanup_pid_term_ pid_t q = spawn_term(true);
                child = q;
        }
        assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_scope_exit_kills_and_reaps),
                cmocka_unit_test(test_take_pid_leaves_the_child),
                cmocka_unit_test(test_term_then_kill),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
