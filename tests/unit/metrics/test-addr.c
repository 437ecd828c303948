/* SPDX-License-Identifier: Apache-2.0 */
/* gv_metrics_parse_listen: every accepted form and every refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "base/cleanup.h"
#include "metrics/metrics.h"

static void accepts(const char *s, const char *host, unsigned port)
{
        gv_listen_addr_t a = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        int r = gv_metrics_parse_listen(s, &a, &err);
        if (r != 0)
                fail_msg("'%s' refused: %s", s, err ? err->msg : "?");
        if (host)
                assert_string_equal(a.host, host);
        else
                assert_null(a.host);
        assert_int_equal(a.port, port);
        gv_listen_addr_clear(&a);
        assert_null(a.host);
}

static void refuses(const char *s)
{
        gv_listen_addr_t a = { .host = NULL, .port = 4242 };
        _cleanup_error_ gv_error_t *err = NULL;
        int r = gv_metrics_parse_listen(s, &a, &err);
        if (r >= 0)
                fail_msg("'%s' accepted", s ? s : "(null)");
        assert_true(r == -EINVAL || r == -ERANGE);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(err->msg);
        /* out-parameter untouched on failure */
        assert_null(a.host);
        assert_int_equal(a.port, 4242);
}

static void test_accepted_forms(void **state)
{
        (void) state;
        accepts(":8000", NULL, 8000);
        accepts(":0", NULL, 0);
        accepts(":65535", NULL, 65535);
        accepts("127.0.0.1:9400", "127.0.0.1", 9400);
        accepts("0.0.0.0:80", "0.0.0.0", 80);
        accepts("localhost:8000", "localhost", 8000);
        accepts("[::1]:8000", "::1", 8000);
        accepts("[::]:1", "::", 1);
        accepts("[fe80::1%eth0]:8000", "fe80::1%eth0", 8000);
        accepts(":08000", NULL, 8000);
}

static void test_refused_forms(void **state)
{
        (void) state;
        refuses(NULL);
        refuses("");
        refuses("8000");           /* bare port: ambiguous, write :8000 */
        refuses(":");              /* no port */
        refuses("127.0.0.1:");     /* no port */
        refuses(":65536");         /* out of range */
        refuses(":99999");
        refuses(":008000");       /* more than 5 digits */
        refuses(":-1");
        refuses(":+80");
        refuses(": 80");
        refuses(":80x");
        refuses(":0x50");
        refuses("::1:8000");       /* IPv6 without brackets */
        refuses("[::1]");          /* no port */
        refuses("[::1]8000");      /* no colon after bracket */
        refuses("[::1:8000");      /* unterminated */
        refuses("[]:8000");        /* empty host */
        refuses("host]:80");
        refuses("[[::1]]:80");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accepted_forms),
                cmocka_unit_test(test_refused_forms),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
