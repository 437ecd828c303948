/* SPDX-License-Identifier: Apache-2.0 */
/* gv_fixed_digits(): exactly n digits, nothing moved on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/digits.h"

static void test_reads_exactly_n(void **state)
{
        (void) state;
        const char *s = "20240501", *p = s;
        int v = -1;
        assert_true(gv_fixed_digits(&p, 4, &v));
        assert_int_equal(v, 2024);
        assert_ptr_equal(p, s + 4);
        assert_true(gv_fixed_digits(&p, 2, &v));
        assert_int_equal(v, 5);
        assert_true(gv_fixed_digits(&p, 2, &v));
        assert_int_equal(v, 1);
        assert_int_equal(*p, '\0');
}

static void test_refuses_short_signed_blank(void **state)
{
        (void) state;
        static const char *const bad[] = { "7", "-1", "+1", " 1", "1 ", "1a", "", "\xd9\xa1\xd9\xa2" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const char *p = bad[i];
                int v = 42;
                assert_false(gv_fixed_digits(&p, 2, &v));
                assert_ptr_equal(p, bad[i]); /* nothing consumed */
                assert_int_equal(v, 42);     /* nothing stored */
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reads_exactly_n),
                cmocka_unit_test(test_refuses_short_signed_blank),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
