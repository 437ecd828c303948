/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Round trip of `gpu-validator env` / `wait --print-env` (gv_cli_print_env())
 * through real POSIX shells: the printed lines are sourced with
 * `. file` by dash and by busybox sh, and every exported variable must come
 * back byte for byte (`printf %s "$VAR"`) and be exported (seen by a child's
 * `env -0`).  Shared by the libFuzzer target fuzz_env_print.c and the
 * random-value test test_env_shell.c.  Test code: aborts are the report.
 */
#ifndef GV_TESTS_ENV_ROUNDTRIP_H
#define GV_TESTS_ENV_ROUNDTRIP_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "markers/markers.h"

/* The shells (argv[0], argv[1] before "-c"); a missing one is skipped. */
static const char *const rt_shells[][2] = { { "dash", NULL }, { "busybox", "sh" } };
#define RT_N_SHELLS (sizeof(rt_shells) / sizeof(rt_shells[0]))

/* What every check prints besides the value under test: the five upstream keys and a later one. */
static const char *const rt_fixed[][2] = {
        { "IS_HOST_DRIVER", "false" },      { "NVIDIA_DRIVER_ROOT", "/run/nvidia/driver" },
        { "DRIVER_ROOT_CTR_PATH", "/driver-root" }, { "NVIDIA_DEV_ROOT", "/" },
        { "DEV_ROOT_CTR_PATH", "/host" },   { "VALIDATED_AT", "2026-01-01T00:00:00Z" },
};

/* Runs @argv (argv[0] an absolute path) with a bare environment; stdout into *out (heap, *len bytes). Returns the exit status or -1. */
static int rt_run(char *const argv[], char **out, size_t *len)
{
        int pfd[2];
        if (pipe(pfd) < 0)
                return -1;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                char *envp[] = { (char *) "PATH=/usr/bin:/bin", NULL };
                dup2(pfd[1], 1);
                close(pfd[0]);
                close(pfd[1]);
                execve(argv[0], argv, envp);
                _exit(127);
        }
        close(pfd[1]);
        size_t cap = 4096, n = 0;
        char *buf = malloc(cap);
        for (;;) {
                if (n == cap)
                        buf = realloc(buf, cap *= 2);
                if (!buf)
                        abort();
                ssize_t k = read(pfd[0], buf + n, cap - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        close(pfd[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        *out = buf;
        *len = n;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether the NUL-separated list @env (@len bytes) holds exactly "KEY=value". */
static bool rt_env_has(const char *env, size_t len, const char *key, const char *value)
{
        size_t kl = strlen(key), vl = strlen(value);
        for (size_t i = 0; i < len;) {
                const char *e = env + i;
                size_t el = strnlen(e, len - i);
                if (el == kl + 1 + vl && strncmp(e, key, kl) == 0 && e[kl] == '=' && memcmp(e + kl + 1, value, vl) == 0)
                        return true;
                i += el + 1;
        }
        return false;
}

/*
 * Prints DRIVER_VERSION=@value and GPU_UUIDS=@value (with the fixed keys)
 * with gv_cli_print_env(), sources the output in each shell and checks the
 * round trip.  Returns the number of shells that ran (0: none installed);
 * aborts, after printing the case, on any difference.
 */
static unsigned rt_check(const char *value)
{
        gv_marker_info_t info = { 0 };
        gv_error_t *err = NULL;
        for (size_t i = 0; i < sizeof(rt_fixed) / sizeof(rt_fixed[0]); i++)
                if (gv_kvlist_set(&info.content, rt_fixed[i][0], rt_fixed[i][1], &err) < 0)
                        abort();
        if (gv_kvlist_set(&info.content, "DRIVER_VERSION", value, &err) < 0 ||
            gv_kvlist_set(&info.content, "GPU_UUIDS", value, &err) < 0)
                abort();
        char path[] = "/tmp/gv-env-rt-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f)
                abort();
        if (gv_cli_print_env(&info, f, &err) < 0) {
                fprintf(stderr, "gv_cli_print_env failed: %s\n", err && err->msg ? err->msg : "?");
                abort();
        }
        if (fclose(f) != 0)
                abort();
        gv_kvlist_clear(&info.content);
        unsigned ran = 0;
        for (size_t s = 0; s < RT_N_SHELLS; s++) {
                char *argv[8];
                size_t a = 0;
                argv[a++] = (char *) "/usr/bin/env"; /* finds the shell on PATH */
                argv[a++] = (char *) rt_shells[s][0];
                if (rt_shells[s][1])
                        argv[a++] = (char *) rt_shells[s][1];
                argv[a++] = (char *) "-c";
                argv[a++] = (char *) ". \"$1\" || exit 90; printf %s \"$DRIVER_VERSION\"; printf '\\000'; "
                                     "exec /usr/bin/env -0";
                argv[a++] = (char *) "sh";
                argv[a++] = path;
                argv[a] = NULL;
                char *out = NULL;
                size_t len = 0;
                int rc = rt_run(argv, &out, &len);
                if (rc == 127) { /* shell not installed */
                        free(out);
                        continue;
                }
                ran++;
                size_t vl = strlen(value);
                bool ok = rc == 0 && len > vl && memcmp(out, value, vl) == 0 && out[vl] == '\0';
                const char *env = out + vl + 1;
                size_t el = ok ? len - vl - 1 : 0;
                ok = ok && rt_env_has(env, el, "DRIVER_VERSION", value) && rt_env_has(env, el, "GPU_UUIDS", value);
                for (size_t i = 0; ok && i < sizeof(rt_fixed) / sizeof(rt_fixed[0]); i++)
                        ok = rt_env_has(env, el, rt_fixed[i][0], rt_fixed[i][1]);
                if (!ok) {
                        fprintf(stderr, "%s%s%s: round trip failed (exit %d) for the value (%zu bytes):\n", rt_shells[s][0],
                                rt_shells[s][1] ? " " : "", rt_shells[s][1] ? rt_shells[s][1] : "", rc, vl);
                        for (size_t i = 0; i < vl; i++)
                                fprintf(stderr, "\\x%02x", (unsigned char) value[i]);
                        fprintf(stderr, "\nprinted:\n");
                        FILE *in = fopen(path, "r");
                        for (int ch; in && (ch = fgetc(in)) != EOF;)
                                fputc(ch, stderr);
                        if (in)
                                fclose(in);
                        unlink(path);
                        abort();
                }
                free(out);
        }
        unlink(path);
        return ran;
}

#endif
