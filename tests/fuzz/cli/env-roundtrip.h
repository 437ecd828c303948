/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Round trip of `gpu-validator env` / `wait --print-env` (gv_cli_print_env())
 * through real POSIX shells: the printed lines are sourced with
 * `. file` by dash and by busybox sh, and every exported variable must come
 * back byte for byte (`printf %s "$VAR"`) and be exported (seen by a child's
 * `env -0`).  Shared by the libFuzzer target fuzz-env-print.c and the
 * random-value test test-env-shell.c.  Test code: aborts are the report.
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

/* Whether @c may stand unquoted in an assignment word and mean itself (never $ ` " \ ' ~ * ? [ blanks ...). */
static bool rt_bare_char(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '/' || c == ':' || c == '@' || c == '+' || c == '=' || c == '-';
}

/*
 * The in-process reference reader: what a POSIX shell (XCU 2.2 quoting, 2.3
 * token recognition) makes of the printed text, for the only shapes a correct
 * printer writes: lines `export NAME=WORD`, each ended by a newline, WORD a
 * run of bare characters, single-quoted parts (every byte but ' literal, a
 * newline included) and backslash escapes of one byte other than a newline.
 * Anything else -- an unquoted blank, $, `, ", ~, a backslash-newline, a
 * quote left open, a missing newline -- is reported, since a shell would read
 * it otherwise.  Returns the number of lines, or -1 with *@why set; the
 * values (heap) go to @vals, the names to @names (at most @cap of each).
 */
static int rt_reference_read(const char *t, size_t len, char *names[], char *vals[], int cap, const char **why)
{
        int n = 0;
        size_t i = 0;
        while (i < len) {
                if (n == cap || len - i < 7 || memcmp(t + i, "export ", 7) != 0)
                        return *why = "a line that is not `export NAME=...`", -1;
                i += 7;
                size_t k = i;
                while (i < len && (t[i] == '_' || (t[i] >= 'A' && t[i] <= 'Z') || (i > k && t[i] >= '0' && t[i] <= '9')))
                        i++;
                if (i == k || i >= len || t[i] != '=')
                        return *why = "no NAME= after export", -1;
                names[n] = strndup(t + k, i - k);
                char *v = malloc(len - i + 1);
                if (!names[n] || !v)
                        abort();
                size_t vl = 0;
                for (i++;;) {
                        if (i >= len)
                                return free(v), *why = "the last line has no newline", -1;
                        unsigned char c = (unsigned char) t[i];
                        if (c == '\n') {
                                i++;
                                break;
                        }
                        if (c == '\'') {
                                const char *end = memchr(t + i + 1, '\'', len - i - 1);
                                if (!end)
                                        return free(v), *why = "a single quote left open", -1;
                                memcpy(v + vl, t + i + 1, (size_t) (end - t - i - 1));
                                vl += (size_t) (end - t - i - 1);
                                i = (size_t) (end - t) + 1;
                        } else if (c == '\\') {
                                if (i + 1 >= len || t[i + 1] == '\n')
                                        return free(v), *why = "a backslash at the end of a line", -1;
                                v[vl++] = t[i + 1];
                                i += 2;
                        } else if (rt_bare_char(c)) {
                                v[vl++] = (char) c;
                                i++;
                        } else {
                                return free(v), *why = "an unquoted character a shell would interpret", -1;
                        }
                }
                v[vl] = '\0';
                vals[n++] = v;
        }
        return n;
}

/* Aborts, after printing @value and the printed @text (@len bytes), with @what; removes @path if not NULL. */
static void rt_fail(const char *what, const char *value, const char *text, size_t len, const char *path)
{
        size_t vl = strlen(value);
        fprintf(stderr, "%s for the value (%zu bytes):\n", what, vl);
        for (size_t i = 0; i < vl; i++)
                fprintf(stderr, "\\x%02x", (unsigned char) value[i]);
        fprintf(stderr, "\nprinted:\n");
        fwrite(text, 1, len, stderr);
        if (path)
                unlink(path);
        abort();
}

/* Checks the printed @text (@len bytes) with rt_reference_read(): every key once, each value back byte for byte. */
static void rt_check_reference(const char *value, const char *text, size_t len)
{
        char *names[32] = { 0 }, *vals[32] = { 0 };
        const char *why = NULL;
        int n = rt_reference_read(text, len, names, vals, 32, &why);
        if (n < 0)
                rt_fail(why, value, text, len, NULL);
        size_t want = sizeof(rt_fixed) / sizeof(rt_fixed[0]) + 2;
        bool ok = (size_t) n == want;
        for (int i = 0; ok && i < n; i++) {
                const char *expect = strcmp(names[i], "DRIVER_VERSION") == 0 || strcmp(names[i], "GPU_UUIDS") == 0 ? value : NULL;
                for (size_t f = 0; !expect && f < sizeof(rt_fixed) / sizeof(rt_fixed[0]); f++)
                        if (strcmp(names[i], rt_fixed[f][0]) == 0)
                                expect = rt_fixed[f][1];
                ok = expect && strcmp(vals[i], expect) == 0;
                for (int j = 0; ok && j < i; j++)
                        ok = strcmp(names[i], names[j]) != 0;
        }
        if (!ok)
                rt_fail("the reference reader got other keys or values", value, text, len, NULL);
        for (int i = 0; i < n; i++) {
                free(names[i]);
                free(vals[i]);
        }
}

/*
 * Prints DRIVER_VERSION=@value and GPU_UUIDS=@value (with the fixed keys)
 * with gv_cli_print_env(), checks the text with the reference reader and,
 * when @shells, sources it in each shell and checks the round trip there.
 * Returns the number of shells that ran (0: none installed, or !@shells);
 * aborts, after printing the case, on any difference.
 */
static unsigned rt_check_with(const char *value, bool shells)
{
        gv_marker_info_t info = { 0 };
        gv_error_t *err = NULL;
        for (size_t i = 0; i < sizeof(rt_fixed) / sizeof(rt_fixed[0]); i++)
                if (gv_kvlist_set(&info.content, rt_fixed[i][0], rt_fixed[i][1], &err) < 0)
                        abort();
        if (gv_kvlist_set(&info.content, "DRIVER_VERSION", value, &err) < 0 ||
            gv_kvlist_set(&info.content, "GPU_UUIDS", value, &err) < 0)
                abort();
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                abort();
        if (gv_cli_print_env(&info, f, &err) < 0) {
                fprintf(stderr, "gv_cli_print_env failed: %s\n", err && err->msg ? err->msg : "?");
                abort();
        }
        if (fclose(f) != 0)
                abort();
        gv_kvlist_clear(&info.content);
        rt_check_reference(value, text, len);
        unsigned ran = 0;
        char path[] = "/tmp/gv-env-rt-XXXXXX";
        if (shells) {
                int fd = mkstemp(path);
                if (fd < 0 || write(fd, text, len) != (ssize_t) len || close(fd) != 0)
                        abort();
        }
        for (size_t s = 0; shells && s < RT_N_SHELLS; s++) {
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
                size_t out_len = 0;
                int rc = rt_run(argv, &out, &out_len);
                if (rc == 127) { /* shell not installed */
                        free(out);
                        continue;
                }
                ran++;
                size_t vl = strlen(value);
                bool ok = rc == 0 && out_len > vl && memcmp(out, value, vl) == 0 && out[vl] == '\0';
                const char *env = out + vl + 1;
                size_t el = ok ? out_len - vl - 1 : 0;
                ok = ok && rt_env_has(env, el, "DRIVER_VERSION", value) && rt_env_has(env, el, "GPU_UUIDS", value);
                for (size_t i = 0; ok && i < sizeof(rt_fixed) / sizeof(rt_fixed[0]); i++)
                        ok = rt_env_has(env, el, rt_fixed[i][0], rt_fixed[i][1]);
                if (!ok) {
                        char what[96];
                        snprintf(what, sizeof(what), "%s%s%s: round trip failed (exit %d)", rt_shells[s][0],
                                 rt_shells[s][1] ? " " : "", rt_shells[s][1] ? rt_shells[s][1] : "", rc);
                        rt_fail(what, value, text, len, path);
                }
                free(out);
        }
        if (shells)
                unlink(path);
        free(text);
        return ran;
}

/* rt_check_with(@value, true): the reference reader and every installed shell. */
static inline unsigned rt_check(const char *value)
{
        return rt_check_with(value, true);
}

#endif
