/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From an error to what the user sees (docs/errors.md "Exit codes"): the
 * reason class picks the exit code (2 config, 3 timeout, 4 interrupted,
 * else 1), and gv_cli_fail() logs the prefixed message with its reason name
 * and the reason's hint, then frees the error.  src/cli/cli.c is compiled in
 * (it needs only base/ and json-c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "cli/cli.h"

static int code_for(gv_reason_t reason)
{
        gv_error_t e = { .errnum = EIO, .reason = reason, .msg = (char *) "x" };
        return gv_cli_exit_code(&e);
}

static void test_exit_code_per_reason(void **state)
{
        (void) state;
        assert_int_equal(GV_EXIT_OK, 0);
        assert_int_equal(code_for(GV_REASON_CONFIG), 2);
        assert_int_equal(code_for(GV_REASON_TIMEOUT), 3);
        assert_int_equal(code_for(GV_REASON_INTERRUPTED), 4);
        for (int r = 0; r < GV_REASON__MAX; r++) {
                if (r == GV_REASON_CONFIG || r == GV_REASON_TIMEOUT || r == GV_REASON_INTERRUPTED)
                        continue;
                assert_int_equal(code_for((gv_reason_t) r), 1); /* validation failed */
        }
        assert_int_equal(gv_cli_exit_code(NULL), 1);
}

/* Run gv_cli_fail() with stderr captured; returns the exit code, *out the text (heap). */
static int fail_captured(gv_cli_t *cli, const char *component, gv_error_t **err, char **out)
{
        char path[] = "/tmp/gv-base-stderr-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        fflush(stderr);
        int saved = dup(STDERR_FILENO);
        assert_true(saved >= 0);
        assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        int code = gv_cli_fail(cli, component, err);
        fflush(stderr);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        off_t n = lseek(fd, 0, SEEK_END);
        assert_true(n >= 0);
        *out = calloc(1, (size_t) n + 1);
        assert_int_equal(pread(fd, *out, (size_t) n, 0), n);
        close(fd);
        return code;
}

static void test_fail_logs_message_reason_and_hint(void **state)
{
        (void) state;
        gv_cli_t cli = { .prog = "gpu-validator", .log_format = GV_LOG_FORMAT_TEXT, .min_level = GV_LOG_DEBUG };
        gv_error_t *err = NULL;
        gv_error_set(&err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "%s: cannot open", "/lib/libnvidia-ml.so.1");
        gv_error_prefix(&err, "load NVML");
        _cleanup_free_ char *text = NULL;
        assert_int_equal(fail_captured(&cli, "driver", &err, &text), 1);
        assert_null(err); /* freed */
        /* the one error format: "gpu-validator CMD: REASON: MESSAGE", then the hint */
        assert_non_null(strstr(text, "gpu-validator driver: library-not-found: load NVML: /lib/libnvidia-ml.so.1: "
                                     "cannot open\n"));
        assert_non_null(strstr(text, "\ngpu-validator driver: hint: wrong driver root? set DRIVER_INSTALL_DIR"));

        /* a config error: exit 2, its hint points at --help */
        gv_error_set(&err, EINVAL, GV_REASON_CONFIG, "WITH_WAIT: not a boolean");
        _cleanup_free_ char *text2 = NULL;
        assert_int_equal(fail_captured(&cli, NULL, &err, &text2), 2);
        assert_non_null(strstr(text2, "config: WITH_WAIT: not a boolean\n"));
        assert_non_null(strstr(text2, "see --help"));

        /* a reason without a hint prints one line only */
        gv_error_set(&err, EINTR, GV_REASON_INTERRUPTED, "interrupted");
        _cleanup_free_ char *text3 = NULL;
        assert_int_equal(fail_captured(&cli, "toolkit", &err, &text3), 4);
        assert_non_null(strstr(text3, "toolkit: interrupted: interrupted\n"));
        assert_null(strstr(text3, "hint"));
        assert_ptr_equal(strchr(text3, '\n'), text3 + strlen(text3) - 1);

        /* no error at all: still a failure, said as an internal one */
        _cleanup_free_ char *text4 = NULL;
        assert_int_equal(fail_captured(&cli, "cuda", &err, &text4), 1);
        assert_non_null(strstr(text4, "cuda: internal: failed without an error message"));
}

static void test_fail_json(void **state)
{
        (void) state;
        gv_cli_t cli = { .prog = "gpu-validator", .log_format = GV_LOG_FORMAT_JSON, .min_level = GV_LOG_INFO };
        gv_error_t *err = NULL;
        gv_error_set(&err, ETIMEDOUT, GV_REASON_TIMEOUT, "not ready after 5 s");
        _cleanup_free_ char *text = NULL;
        assert_int_equal(fail_captured(&cli, "plugin", &err, &text), 3);
        assert_non_null(strstr(text, "\"level\":\"error\",\"component\":\"plugin\",\"reason\":\"timeout\","
                                     "\"msg\":\"not ready after 5 s\"}\n"));
        assert_non_null(strstr(text, "\"msg\":\"hint: raise --max-wait"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exit_code_per_reason),
                cmocka_unit_test(test_fail_logs_message_reason_and_hint),
                cmocka_unit_test(test_fail_json),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
