/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/alloc.h: GV_GREEDY_REALLOC() grows to the larger of the need and twice the room, at
 * least 64 bytes, keeps what the array held, and refuses a size that overflows without
 * touching the array.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/alloc.h"
#include "base/cleanup.h"

static void test_grows_greedily_and_keeps_contents(void **state)
{
        (void) state;
        _cleanup_free_ int *v = NULL;
        size_t cap = 0;
        assert_non_null(GV_GREEDY_REALLOC(v, cap, 1));
        assert_int_equal(cap, 64 / sizeof(int)); /* the 64-byte floor */
        for (size_t i = 0; i < 1000; i++) {
                assert_non_null(GV_GREEDY_REALLOC(v, cap, i + 1));
                assert_true(cap >= i + 1);
                v[i] = (int) i;
        }
        for (size_t i = 0; i < 1000; i++)
                assert_int_equal(v[i], (int) i);
        /* room enough: no change */
        size_t before = cap;
        int *same = v;
        assert_ptr_equal(GV_GREEDY_REALLOC(v, cap, cap), same);
        assert_int_equal(cap, before);
        /* a need above twice the room is met exactly */
        assert_non_null(GV_GREEDY_REALLOC(v, cap, before * 3));
        assert_int_equal(cap, before * 3);
        assert_int_equal(v[999], 999);
}

static void test_overflow_leaves_the_array(void **state)
{
        (void) state;
        _cleanup_free_ char *p = NULL;
        size_t cap = 0;
        assert_non_null(GV_GREEDY_REALLOC(p, cap, 10));
        memcpy(p, "kept", 5);
        char *old = p;
        size_t old_cap = cap;
        struct big { char b[4096]; } *big = NULL;
        size_t big_cap = 0;
        errno = 0;
        assert_null(GV_GREEDY_REALLOC(big, big_cap, SIZE_MAX / 16));
        assert_int_equal(errno, ENOMEM);
        assert_null(big);
        assert_int_equal(big_cap, 0);
        assert_null(gv_greedy_realloc((void **) &p, &cap, SIZE_MAX, 2));
        assert_ptr_equal(p, old);
        assert_int_equal(cap, old_cap);
        assert_string_equal(p, "kept");
        assert_null(gv_greedy_realloc((void **) &p, &cap, 1, 0));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_grows_greedily_and_keeps_contents),
                cmocka_unit_test(test_overflow_leaves_the_array),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
