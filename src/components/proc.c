/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Child processes for the components (nvidia-smi): fork/exec with captured
 * output, a timeout and prompt cancellation, and nvidia-smi's exit-code policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/process.h"
#include "components-internal.h"

extern char **environ;

#define GV_PROC_OUTPUT_MAX ((size_t) 64 * 1024)
#define GV_SMI_TIMEOUT_MS ((int64_t) 30 * 1000)

void gv_proc_result_clear(gv_proc_result_t *r)
{
        if (!r)
                return;
        free(r->output);
        *r = (gv_proc_result_t) { 0 };
}

gv_reason_t gv_nvidia_smi_exit_reason(int exit_code, bool strict, bool *warning)
{
        if (warning)
                *warning = false;
        switch (exit_code) {
        case 0:
                return GV_REASON_NONE;
        case 14: /* infoROM is corrupted: the table is valid, the GPU usable */
                if (strict)
                        return GV_REASON_NVIDIA_SMI;
                if (warning)
                        *warning = true;
                return GV_REASON_NONE;
        case 9:
                return GV_REASON_DRIVER_NOT_LOADED;
        case 12:
                return GV_REASON_LIBRARY_NOT_FOUND;
        case 18:
                return GV_REASON_DRIVER_MISMATCH;
        default:
                return GV_REASON_NVIDIA_SMI;
        }
}

/* Find @name in PATH; heap path or NULL. */
static char *path_lookup(const char *name)
{
        const char *path = getenv("PATH");
        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return NULL;
        char *save = NULL;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                char *cand = gv_path_join(*dir ? dir : ".", name);
                if (!cand)
                        return NULL;
                struct stat st;
                if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
                        return cand;
                free(cand);
        }
        return NULL;
}

/* A copy of environ with LD_LIBRARY_PATH=<lib>[:old]; heap array of heap strings. */
static char **child_env(const char *ld_library_path)
{
        size_t n = 0;
        while (environ && environ[n])
                n++;
        char **env = calloc(n + 2, sizeof(*env));
        if (!env)
                return NULL;
        size_t k = 0;
        const char *old = NULL;
        for (size_t i = 0; i < n; i++) {
                if (ld_library_path && strncmp(environ[i], "LD_LIBRARY_PATH=", 16) == 0) {
                        old = environ[i] + 16;
                        continue;
                }
                if (!(env[k++] = strdup(environ[i])))
                        goto oom;
        }
        if (ld_library_path) {
                int r = old && *old ? asprintf(&env[k], "LD_LIBRARY_PATH=%s:%s", ld_library_path, old)
                                    : asprintf(&env[k], "LD_LIBRARY_PATH=%s", ld_library_path);
                if (r < 0) {
                        env[k] = NULL;
                        goto oom;
                }
                k++;
        }
        env[k] = NULL;
        return env;
oom:
        gv_strv_freep(&env);
        return NULL;
}

/* Append up to what GV_PROC_OUTPUT_MAX still allows of @chunk to @mem. */
static void keep_output(FILE *mem, size_t *kept, const char *chunk, size_t n)
{
        size_t take = *kept + n > GV_PROC_OUTPUT_MAX ? GV_PROC_OUTPUT_MAX - *kept : n;
        (void) fwrite(chunk, 1, take, mem); /* checked by ferror() before the text is used */
        *kept += take;
}

/* What the program's process needs after the reaper's fork(). */
typedef struct exec_ctx {
        const char *prog;
        const char *const *argv;
        char **env;
        int wfd;
        const char *chroot_dir;
} exec_ctx_t;

/* The program's process (under gv_proc_reaper()): async-signal-safe calls only; never returns. */
static void exec_program(void *arg)
{
        const exec_ctx_t *c = arg;
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
                dup2(devnull, 0);
        dup2(c->wfd, 1);
        dup2(c->wfd, 2);
        if (c->chroot_dir && (chroot(c->chroot_dir) < 0 || chdir("/") < 0))
                _exit(127);
        execve(c->prog, (char *const *) c->argv, c->env);
        _exit(127);
}

/*
 * Forks the reaper (gv_proc_reaper()) that runs the program of @ctx: its pid, or -errno.  Until
 * the caller reaps it, every way out sends it SIGTERM, and it kills and reaps all the program
 * started before it exits.  SIGCHLD and SIGTERM stay blocked from the fork on in it (it takes
 * them with sigwaitinfo()); here only until the fork is done.
 */
static pid_t start_reaper(exec_ctx_t *ctx)
{
        sigset_t block, old_mask;
        sigemptyset(&block);
        sigaddset(&block, SIGCHLD);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old_mask);
        pid_t validator = getpid();
        pid_t pid = fork();
        if (pid == 0)
                gv_proc_reaper(validator, &old_mask, ctx->wfd, exec_program, ctx);
        int fork_errno = errno;
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        return pid < 0 ? -fork_errno : pid;
}

/* How the child ended: fills @res from the waitpid() @status (or the time-out). */
static void set_outcome(gv_proc_result_t *res, bool timed_out, int status)
{
        if (timed_out) {
                res->exit_code = -1;
                res->term_signal = SIGKILL;
        } else if (WIFEXITED(status)) {
                res->exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
                res->exit_code = -1;
                res->term_signal = WTERMSIG(status);
        } else {
                res->exit_code = -1;
        }
}

int gv_proc_run(const char *const *argv, const char *ld_library_path, const char *chroot_dir, int64_t timeout_ms,
                const volatile sig_atomic_t *stop, gv_proc_result_t *out, gv_error_t **err)
{
        if (!argv || !argv[0])
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "no program to run");
        _cleanup_free_ char *prog = NULL;
        if (strchr(argv[0], '/') || chroot_dir)
                prog = strdup(argv[0]);
        else if (!(prog = path_lookup(argv[0])))
                return gv_error_set(err, ENOENT, GV_REASON_NVIDIA_SMI, "%s: not found in PATH", argv[0]);
        if (!prog)
                return gv_error_oom(err);
        _cleanup_strv_free_ char **env = child_env(ld_library_path);
        if (!env)
                return gv_error_oom(err);

        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return gv_error_set(err, errno, GV_REASON_NVIDIA_SMI, "pipe: %s", strerror(errno));
        _cleanup_close_ int rfd = fds[0];
        int wfd = fds[1];
        exec_ctx_t ctx = { .prog = prog, .argv = argv, .env = env, .wfd = wfd, .chroot_dir = chroot_dir };

        _cleanup_pid_term_ pid_t pid = start_reaper(&ctx);
        if (pid < 0) {
                close(wfd);
                return gv_error_set(err, (int) -pid, GV_REASON_NVIDIA_SMI, "fork: %s", strerror((int) -pid));
        }
        /* Also here, so that the group exists before any kill(-pid). */
        setpgid(pid, pid);
        close(wfd);

        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        _cleanup_fclose_ FILE *mem = open_memstream(&buf, &len);
        if (!mem)
                return gv_error_oom(err);
        size_t kept = 0;
        bool eof = false, timed_out = false;
        int status = 0;
        int64_t deadline = gv_now_ms() + timeout_ms;
        for (;;) {
                if (stop && *stop)
                        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s: interrupted", argv[0]);
                if (gv_now_ms() >= deadline) {
                        timed_out = true;
                        gv_pid_term_and_reap(&pid, GV_PID_TERM_GRACE_MS);
                        break;
                }
                if (!eof) {
                        struct pollfd p = { .fd = rfd, .events = POLLIN };
                        int pr = poll(&p, 1, 100);
                        if (pr > 0) {
                                char chunk[4096];
                                ssize_t n = read(rfd, chunk, sizeof(chunk));
                                if (n > 0)
                                        keep_output(mem, &kept, chunk, (size_t) n);
                                else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                                        eof = true;
                        }
                }
                pid_t w = waitpid(pid, &status, eof ? 0 : WNOHANG);
                if (w == pid) {
                        (void) TAKE_PID(pid); /* reaped */
                        /* drain what is already there; a grandchild may keep the pipe open */
                        int fl = fcntl(rfd, F_GETFL);
                        if (fl >= 0)
                                fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
                        char chunk[4096];
                        ssize_t n;
                        while (!eof && (n = read(rfd, chunk, sizeof(chunk))) > 0)
                                keep_output(mem, &kept, chunk, (size_t) n);
                        break;
                }
                if (w < 0 && errno != EINTR) {
                        /*
                         * The exit status is lost (ECHILD: SIGCHLD is ignored, so the
                         * kernel reaped the child).  Never read that as exit 0.
                         */
                        int e = errno;
                        return gv_error_set(err, e, GV_REASON_NVIDIA_SMI,
                                            "%s: waitpid: %s; its exit status is unknown (is SIGCHLD ignored?)",
                                            argv[0], strerror(e));
                }
        }
        /* A write or the last flush that failed (out of memory) leaves a truncated output: never judge that. */
        bool mem_ok = !ferror(mem);
        if (fclose(TAKE_PTR(mem)) != 0 || !mem_ok || !buf)
                return gv_error_oom(err);
        gv_proc_result_t res = { .output = TAKE_PTR(buf), .timed_out = timed_out };
        set_outcome(&res, timed_out, status);
        *out = res;
        return 0;
}

/* The last @max_lines lines of @s (a pointer into it), without the final newline run. */
static const char *tail_lines(const char *s, size_t len, unsigned max_lines, int *outlen)
{
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
                len--;
        size_t start = len;
        unsigned lines = 0;
        while (start > 0) {
                if (s[start - 1] == '\n' && ++lines >= max_lines)
                        break;
                start--;
        }
        if (len - start > 2000)
                start = len - 2000;
        *outlen = (int) (len - start);
        return s + start;
}

int gv_nvidia_smi_check(const gv_config_t *cfg, const char *smi, const char *lib_dir, const char *chroot_dir,
                        char **warning, gv_error_t **err)
{
        const char *argv[] = { smi, NULL };
        gv_proc_result_t res = { 0 };
        int r = gv_proc_run(argv, lib_dir, chroot_dir, GV_SMI_TIMEOUT_MS, cfg->stop, &res, err);
        if (r < 0)
                return r;
        int tl = 0;
        const char *tail = tail_lines(res.output, strlen(res.output), 5, &tl);
        if (res.timed_out) {
                r = gv_error_set(err, ETIMEDOUT, GV_REASON_NVIDIA_SMI, "%s did not finish within %d s; output: %.*s",
                                 smi, (int) (GV_SMI_TIMEOUT_MS / 1000), tl, tail);
                gv_proc_result_clear(&res);
                return r;
        }
        if (res.term_signal) {
                r = gv_error_set(err, EIO, GV_REASON_NVIDIA_SMI, "%s was killed by signal %d; output: %.*s", smi,
                                 res.term_signal, tl, tail);
                gv_proc_result_clear(&res);
                return r;
        }
        bool warn = false;
        gv_reason_t reason = gv_nvidia_smi_exit_reason(res.exit_code, cfg->driver.strict, &warn);
        if (reason == GV_REASON_NONE) {
                if (warn && warning) {
                        if (asprintf(warning,
                                     "%s exited 14 (infoROM warning) but printed a valid table; ready with a "
                                     "warning (strict mode makes this a failure): %.*s",
                                     smi, tl, tail) < 0)
                                *warning = NULL;
                }
                gv_proc_result_clear(&res);
                return 0;
        }
        const char *what;
        switch (res.exit_code) {
        case 9:
                what = "the NVIDIA kernel module is not loaded";
                break;
        case 12:
                what = "NVML library not found: wrong driver root?";
                break;
        case 14:
                what = "infoROM warning, a failure in strict mode";
                break;
        case 18:
                what = "driver/library version mismatch: the driver needs a reload";
                break;
        case 127:
                what = "could not be executed";
                break;
        default:
                what = "failed";
                break;
        }
        r = gv_error_set(err, EIO, reason, "%s exited %d (%s); output: %.*s", smi, res.exit_code, what, tl, tail);
        gv_proc_result_clear(&res);
        return r;
}
