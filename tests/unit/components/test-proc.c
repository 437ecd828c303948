/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_proc_run(), the child-process runner behind the nvidia-smi check:
 * exit codes survive an inherited SIGCHLD=SIG_IGN and nothing the child
 * started outlives a time-out or a stop.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "components/components-internal.h"
#include "components-test.h"

/* A shell script at <dir>/<name> with @body; heap path. */
static char *script(const char *dir, const char *name, const char *body)
{
        char *p = th_path(dir, name);
        th_write(dir, name, body, 0755);
        return p;
}

/* Whether @pid is gone or a zombie (killed, waiting for whoever reaps orphans). */
static bool pid_dead(pid_t pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "r");
        if (!f)
                return true;
        char buf[512] = "";
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

/* Waits up to 5 s for @pid to die. */
static bool wait_dead(pid_t pid)
{
        for (int i = 0; i < 500; i++) {
                if (pid_dead(pid))
                        return true;
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return false;
}

/* The pid the script wrote to @file, waiting up to 5 s for it. */
static pid_t read_pid(const char *file)
{
        for (int i = 0; i < 500; i++) {
                FILE *f = fopen(file, "r");
                if (f) {
                        int pid = 0;
                        int got = fscanf(f, "%d", &pid);
                        fclose(f);
                        if (got == 1 && pid > 0)
                                return (pid_t) pid;
                }
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return -1;
}

static void test_exit_code_with_sigchld_ignored(void **state)
{
        (void) state;
        char *dir = th_tmpdir();
        char *prog = script(dir, "smi", "#!/bin/sh\necho hello\nexit 12\n");
        const char *argv[] = { prog, NULL };
        gv_proc_result_t res = { 0 };
        gv_error_t *err = NULL;

        /* Default disposition: the exit code is read. */
        assert_int_equal(gv_proc_run(argv, NULL, NULL, 10000, NULL, &res, &err), 0);
        assert_int_equal(res.exit_code, 12);
        gv_proc_result_clear(&res);

        /*
         * SIGCHLD ignored (inherited from a container runtime or a shell): the
         * kernel reaps the child itself and waitpid() fails with ECHILD.  That
         * must be an error, never "exited 0".
         */
        struct sigaction ign = { .sa_handler = SIG_IGN }, old;
        assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
        int r = gv_proc_run(argv, NULL, NULL, 10000, NULL, &res, &err);
        sigaction(SIGCHLD, &old, NULL);
        assert_true(r < 0);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_NVIDIA_SMI);
        assert_non_null(strstr(err->msg, "waitpid"));
        gv_error_free(&err);
        gv_proc_result_clear(&res);

        /* Through the nvidia-smi check: never a pass. */
        gv_config_t cfg = { 0 };
        assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
        r = gv_nvidia_smi_check(&cfg, prog, NULL, NULL, NULL, &err);
        sigaction(SIGCHLD, &old, NULL);
        assert_true(r < 0);
        assert_non_null(err);
        gv_error_free(&err);

        th_rm_rf(dir);
        free(prog);
        free(dir);
}

/* A "nvidia-smi" that leaves a sleeping grandchild and then hangs itself. */
static char *hanging_smi(const char *dir, const char *pidfile)
{
        char *body = NULL;
        assert_true(asprintf(&body,
                             "#!/bin/sh\n"
                             "sleep 300 &\n"
                             "echo $! > '%s'\n"
                             "sleep 300\n",
                             pidfile) > 0);
        char *p = script(dir, "smi", body);
        free(body);
        return p;
}

static void test_timeout_kills_grandchildren(void **state)
{
        (void) state;
        char *dir = th_tmpdir();
        char *pidfile = th_path(dir, "grandchild.pid");
        char *prog = hanging_smi(dir, pidfile);
        const char *argv[] = { prog, NULL };
        gv_proc_result_t res = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_proc_run(argv, NULL, NULL, 1000, NULL, &res, &err), 0);
        assert_true(res.timed_out);
        pid_t grandchild = read_pid(pidfile);
        assert_true(grandchild > 0);
        bool dead = wait_dead(grandchild);
        if (!dead)
                kill(grandchild, SIGKILL);
        assert_true(dead);
        gv_proc_result_clear(&res);
        th_rm_rf(dir);
        free(prog);
        free(pidfile);
        free(dir);
}

typedef struct stopper {
        volatile sig_atomic_t *flag;
        const char *pidfile;
} stopper_t;

static void *stop_later(void *arg)
{
        stopper_t *s = arg;
        read_pid(s->pidfile); /* the grandchild exists */
        *s->flag = 1;
        return NULL;
}

static void test_stop_kills_grandchildren(void **state)
{
        (void) state;
        char *dir = th_tmpdir();
        char *pidfile = th_path(dir, "grandchild.pid");
        char *prog = hanging_smi(dir, pidfile);
        const char *argv[] = { prog, NULL };
        gv_proc_result_t res = { 0 };
        gv_error_t *err = NULL;
        volatile sig_atomic_t stop = 0;
        stopper_t st = { .flag = &stop, .pidfile = pidfile };
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, stop_later, &st), 0);
        int r = gv_proc_run(argv, NULL, NULL, 60000, &stop, &res, &err);
        pthread_join(t, NULL);
        assert_int_equal(r, -EINTR);
        assert_int_equal(err->reason, GV_REASON_INTERRUPTED);
        gv_error_free(&err);
        pid_t grandchild = read_pid(pidfile);
        assert_true(grandchild > 0);
        bool dead = wait_dead(grandchild);
        if (!dead)
                kill(grandchild, SIGKILL);
        assert_true(dead);
        th_rm_rf(dir);
        free(prog);
        free(pidfile);
        free(dir);
}

int main(int argc, char **argv)
{
        (void) argc;
        (void) argv;
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exit_code_with_sigchld_ignored),
                cmocka_unit_test(test_timeout_kills_grandchildren),
                cmocka_unit_test(test_stop_kills_grandchildren),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
