/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_proc_run(), the child-process runner behind the nvidia-smi check:
 * exit codes survive an inherited SIGCHLD=SIG_IGN and nothing the child
 * started outlives the check: not after a time-out, a stop, an exit 0 with
 * something left running, nor the validator killed; not in the process group,
 * nor after setsid(), nor an orphaned daemon.
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
#include <sys/wait.h>
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

/*
 * A "nvidia-smi" that starts @how (a shell command line, "&" added) writing the pid of what
 * must not outlive the check to @pidfile, waits for it to exist, then ends with @end (a shell
 * command: "exit 0", "sleep 300").
 */
static char *leaving_smi(const char *dir, const char *pidfile, const char *how, const char *end)
{
        char *body = NULL;
        assert_true(asprintf(&body,
                             "#!/bin/sh\n"
                             "%s &\n"
                             "while ! test -s '%s'; do sleep 0.01; done\n"
                             "echo ok\n"
                             "%s\n",
                             how, pidfile, end) > 0);
        char *p = script(dir, "smi", body);
        free(body);
        return p;
}

/* The ways out of gv_proc_run(), each of which must leave nothing behind. */
typedef enum way_out { EXITS_0, TIMES_OUT, STOPPED, VALIDATOR_KILLED } way_out_t;

/* gv_proc_run() of @prog ending by @way (not VALIDATOR_KILLED), its outcome checked. */
static void run_until(const char *prog, const char *pidfile, way_out_t way)
{
        const char *argv[] = { prog, NULL };
        gv_proc_result_t res = { 0 };
        gv_error_t *err = NULL;
        volatile sig_atomic_t stop = 0;
        stopper_t st = { .flag = &stop, .pidfile = pidfile };
        pthread_t t;
        if (way == STOPPED)
                assert_int_equal(pthread_create(&t, NULL, stop_later, &st), 0);
        int r = gv_proc_run(argv, NULL, NULL, way == TIMES_OUT ? 1500 : 60000, &stop, &res, &err);
        if (way == STOPPED) {
                pthread_join(t, NULL);
                assert_int_equal(r, -EINTR);
                assert_int_equal(err->reason, GV_REASON_INTERRUPTED);
                gv_error_free(&err);
                return;
        }
        assert_int_equal(r, 0);
        assert_int_equal(res.timed_out, way == TIMES_OUT);
        if (way == EXITS_0) {
                assert_int_equal(res.exit_code, 0);
                assert_string_equal(res.output, "ok\n");
        }
        gv_proc_result_clear(&res);
}

/*
 * Runs a leaving_smi(@how) that ends by @way and checks that what it left is gone: at once
 * (killed and reaped before gv_proc_run() returned, no zombie), or, the validator killed,
 * within 5 s.
 */
static void check_nothing_left(const char *how, way_out_t way)
{
        char *dir = th_tmpdir();
        char *pidfile = th_path(dir, "left.pid");
        char *cmd = NULL;
        assert_true(asprintf(&cmd, how, pidfile) > 0);
        char *prog = leaving_smi(dir, pidfile, cmd, way == EXITS_0 ? "exit 0" : "sleep 300");
        pid_t validator = way == VALIDATOR_KILLED ? fork() : 0;
        assert_true(validator >= 0);
        if (way != VALIDATOR_KILLED || validator == 0)
                run_until(prog, pidfile, way == VALIDATOR_KILLED ? TIMES_OUT : way);
        if (way == VALIDATOR_KILLED && validator == 0)
                _exit(0);
        pid_t left = read_pid(pidfile);
        assert_true(left > 0);
        if (way == VALIDATOR_KILLED) {
                kill(validator, SIGKILL);
                waitpid(validator, NULL, 0);
        }
        bool gone = way == VALIDATOR_KILLED ? wait_dead(left) : kill(left, 0) < 0 && errno == ESRCH;
        if (!gone)
                kill(left, SIGKILL);
        assert_true(gone);
        th_rm_rf(dir);
        free(prog);
        free(cmd);
        free(pidfile);
        free(dir);
}

/* A grandchild in nvidia-smi's own process group, still running when it exits 0. */
#define IN_GROUP "sh -c 'echo $$ > %s; exec sleep 300'"
/* A grandchild that left the process group with setsid (its own session). */
#define OWN_SESSION "setsid sh -c 'echo $$ > %s; exec sleep 300' < /dev/null"
/* A great-grandchild in its own session whose parent is gone (an orphan, a daemon). */
#define DAEMON "sh -c \"setsid sh -c 'echo \\$\\$ > %s; exec sleep 300' < /dev/null & exit 0\""

/* Each way out of ways[] (the test's state) leaves nothing: in the group, in its own session, a daemon. */
static way_out_t ways[] = { EXITS_0, TIMES_OUT, STOPPED, VALIDATOR_KILLED };

static void test_leaves_nothing(void **state)
{
        way_out_t way = *(const way_out_t *) *state;
        check_nothing_left(IN_GROUP, way);
        check_nothing_left(OWN_SESSION, way);
        check_nothing_left(DAEMON, way);
}

/* The reaper's fallback without /proc/PID/task/TID/children finds and kills every child. */
static void test_kill_children_by_scan(void **state)
{
        (void) state;
        pid_t kids[3];
        for (int i = 0; i < 3; i++) {
                kids[i] = fork();
                assert_true(kids[i] >= 0);
                if (kids[i] == 0) {
                        for (;;)
                                pause();
                }
        }
        gv_proc_kill_children_by_scan(getpid());
        for (int i = 0; i < 3; i++) {
                int st = 0;
                assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
                assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        }
}

int main(int argc, char **argv)
{
        (void) argc;
        (void) argv;
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exit_code_with_sigchld_ignored),
                /* the validator killed while the check runs: the reaper (PR_SET_PDEATHSIG) still sweeps */
                { "exit_0_leaves_nothing", test_leaves_nothing, NULL, NULL, &ways[0] },
                { "timeout_leaves_nothing", test_leaves_nothing, NULL, NULL, &ways[1] },
                { "stop_leaves_nothing", test_leaves_nothing, NULL, NULL, &ways[2] },
                { "validator_killed_leaves_nothing", test_leaves_nothing, NULL, NULL, &ways[3] },
                cmocka_unit_test(test_kill_children_by_scan),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
