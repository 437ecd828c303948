/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reaper between gv_proc_run() and the program it runs (nvidia-smi):
 * nothing the program starts outlives the check.  A process group is not
 * enough -- a grandchild can call setsid(), a daemon can double-fork -- so
 * the reaper is a child subreaper (PR_SET_CHILD_SUBREAPER): every orphan
 * below it becomes its child.  When the program ends, or on SIGTERM (the
 * validator's time-out or stop, or the validator gone: PR_SET_PDEATHSIG),
 * it kills every process left below it and reaps each before it exits with
 * the program's status.  It runs right after fork() in a validator that may
 * have threads: async-signal-safe calls only (no malloc, no stdio).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "components-internal.h"

/* The decimal @n (> 0) into @buf (room for 12) at its end; the first digit. */
static char *digits(char *buf, size_t len, long n)
{
        char *p = buf + len;
        *--p = '\0';
        do
                *--p = (char) ('0' + n % 10);
        while ((n /= 10) > 0 && p > buf);
        return p;
}

/* "/proc/@a/@b/..." (NULL-ended parts) into @out (room for @len); false when it does not fit. */
static bool proc_path(char *out, size_t len, const char *const *parts)
{
        size_t n = 0;
        for (const char *const *p = parts; *p; p++)
                for (const char *c = *p; *c; c++) {
                        if (n + 1 >= len)
                                return false;
                        out[n++] = *c;
                }
        out[n] = '\0';
        return true;
}

/* SIGKILL to each pid (whitespace separated) the file at @path lists; -1 when it cannot be read. */
static int kill_listed(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        char buf[512];
        long pid = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] >= '0' && buf[i] <= '9') {
                                pid = pid * 10 + (buf[i] - '0');
                                continue;
                        }
                        if (pid > 0)
                                (void) kill((pid_t) pid, SIGKILL);
                        pid = 0;
                }
        if (pid > 0)
                (void) kill((pid_t) pid, SIGKILL);
        close(fd);
        return n < 0 ? -1 : 0;
}

/* The decimal number @c starts with (0 when it starts with none). */
static long leading_number(const char *c)
{
        long v = 0;
        for (; *c >= '0' && *c <= '9'; c++)
                v = v * 10 + (*c - '0');
        return v;
}

/* The parent pid field of /proc/@pid/stat ("pid (comm) state ppid ..."), or -1. */
static long ppid_of(const char *pid)
{
        char path[64];
        if (!proc_path(path, sizeof(path), (const char *const[]) { "/proc/", pid, "/stat", NULL }))
                return -1;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        char buf[512];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        const char *rp = NULL; /* the comm may hold ')': the last one ends it */
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == ')')
                        rp = buf + i;
        if (!rp || rp + 4 >= buf + n)
                return -1;
        return leading_number(rp + 4);
}

void gv_proc_kill_children_by_scan(pid_t self)
{
        int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        char buf[4096];
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
                for (long off = 0; off < n;) {
                        const struct dirent64 *d = (const struct dirent64 *) (void *) (buf + off);
                        off += d->d_reclen;
                        if (d->d_name[0] < '1' || d->d_name[0] > '9')
                                continue;
                        if (ppid_of(d->d_name) == (long) self)
                                (void) kill((pid_t) leading_number(d->d_name), SIGKILL);
                }
        close(fd);
}

/* Kills and reaps every process below the reaper, orphans re-parented to it on the way, until none is left. */
static void sweep(void)
{
        pid_t self = getpid();
        char num[16], path[96];
        const char *id = digits(num, sizeof(num), (long) self);
        bool have_list = proc_path(path, sizeof(path), (const char *const[]) { "/proc/", id, "/task/", id, "/children", NULL });
        for (;;) {
                if (!have_list || kill_listed(path) < 0)
                        gv_proc_kill_children_by_scan(self);
                /* One of the killed ends; its children are ours before it can be reaped: list again. */
                pid_t w = waitpid(-1, NULL, 0);
                if (w < 0 && errno == ECHILD)
                        break;
        }
}

/* Ends the reaper as the program ended (@status): its exit code, or its signal (no core). */
static _Noreturn void end_as(int status)
{
        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
        struct rlimit no_core = { 0, 0 };
        (void) setrlimit(RLIMIT_CORE, &no_core);
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        (void) sigaction(sig, &dfl, NULL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        (void) sigprocmask(SIG_UNBLOCK, &one, NULL);
        (void) kill(getpid(), sig);
        _exit(128 + sig);
}

void gv_proc_reaper(pid_t validator, const sigset_t *program_mask, int close_fd, void (*exec_program)(void *arg),
                    void *arg)
{
        setpgid(0, 0); /* its own group: a time-out's SIGKILL fallback reaches what stayed in it */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigaddset(&set, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &set, NULL); /* already blocked by gv_proc_run(): taken by sigwaitinfo() */
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        (void) sigaction(SIGCHLD, &dfl, NULL); /* an inherited SIG_IGN would reap the program unseen */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != validator) /* the validator died before the line above */
                _exit(128 + SIGTERM);
        pid_t child = fork();
        if (child < 0)
                _exit(127);
        if (child == 0) {
                (void) sigprocmask(SIG_SETMASK, program_mask, NULL);
                exec_program(arg);
                _exit(127);
        }
        if (close_fd >= 0)
                close(close_fd); /* the output pipe's end: the program's, not the reaper's */
        int status = 0;
        bool done = false;
        while (!done) {
                siginfo_t si;
                int sig = sigwaitinfo(&set, &si);
                if (sig == SIGTERM)
                        break;
                int st;
                pid_t w;
                while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                        if (w == child) {
                                status = st;
                                done = true;
                        }
        }
        sweep();
        if (!done)
                _exit(128 + SIGTERM);
        end_as(status);
}
