/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `run`'s component selection (src/cli/run-select.c, compiled in): the
 * named components in chain order, each once; the default four; unknown
 * names (also in --assume-ready) as config errors that list the known ones;
 * the room limit as an internal error, never an overflow; and the run order
 * with the driver's GPUDirect followers that were not named themselves.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/run-internal.h"

static size_t select_names(char **names, const char *const *assumed, const gv_component_t **out, size_t cap,
                           gv_error_t **err)
{
        size_t n = 999;
        int r = gv_run_select(names, assumed, out, cap, &n, err);
        if (r < 0) {
                assert_int_equal(n, 999); /* untouched on failure */
                return (size_t) r;
        }
        return n;
}

static void test_chain_order_once_each(void **state)
{
        (void) state;
        char *names[] = { "plugin", "driver", "plugin", "toolkit", NULL };
        const gv_component_t *out[32];
        gv_error_t *err = NULL;
        assert_int_equal(select_names(names, NULL, out, 32, &err), 3);
        assert_null(err);
        assert_string_equal(out[0]->name, "driver");
        assert_string_equal(out[1]->name, "toolkit");
        assert_string_equal(out[2]->name, "plugin");
}

static void test_default_four(void **state)
{
        (void) state;
        const gv_component_t *out[32];
        gv_error_t *err = NULL;
        assert_int_equal(select_names(NULL, NULL, out, 32, &err), 4);
        const char *want[] = { "driver", "toolkit", "cuda", "plugin" };
        for (size_t i = 0; i < 4; i++)
                assert_string_equal(out[i]->name, want[i]);
}

static void test_unknown_names(void **state)
{
        (void) state;
        char *names[] = { "driver", "drvier", NULL };
        const gv_component_t *out[32];
        gv_error_t *err = NULL;
        assert_int_equal((int) select_names(names, NULL, out, 32, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "unknown component 'drvier'"));
        assert_non_null(strstr(err->msg, "driver, ")); /* lists the known ones */
        assert_non_null(strstr(err->msg, "vgpu-devices"));
        gv_error_free(&err);

        const char *assumed[] = { "driver", "no-such", NULL };
        assert_int_equal((int) select_names(NULL, assumed, out, 32, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "--assume-ready / ASSUME_READY: unknown component 'no-such'"));
        gv_error_free(&err);
}

static void test_room_limit(void **state)
{
        (void) state;
        const gv_component_t *out[2] = { NULL, NULL };
        gv_error_t *err = NULL;
        assert_int_equal((int) select_names(NULL, NULL, out, 2, &err), -E2BIG);
        assert_int_equal(err->reason, GV_REASON_INTERNAL);
        gv_error_free(&err);
}

static void test_order_with_followers(void **state)
{
        (void) state;
        const gv_component_t *driver = gv_component_find("driver");
        const gv_component_t *gdrcopy = gv_component_find("gdrcopy");
        const gv_component_t *toolkit = gv_component_find("toolkit");
        assert_non_null(driver);
        assert_non_null(gdrcopy);
        size_t n_followers = 0;
        for (const gv_component_t *const *f = gv_component_followers(driver); *f; f++)
                n_followers++;
        assert_true(n_followers >= 3); /* nvidia-fs, gdrcopy, nvidia-peermem */

        const gv_component_t *selected[] = { driver, toolkit };
        const gv_component_t *order[16];
        size_t n = gv_run_order(selected, 2, order, 16);
        assert_int_equal(n, 2 + n_followers);
        assert_ptr_equal(order[0], driver);
        assert_ptr_equal(order[n - 1], toolkit);
        for (size_t i = 1; i + 1 < n; i++)
                assert_true(gv_run_is_follower(order[i], selected, 2));
        assert_false(gv_run_is_follower(driver, selected, 2));

        /* a follower named itself runs where the chain puts it, not again after the driver */
        const gv_component_t *with_gdrcopy[] = { driver, gdrcopy };
        n = gv_run_order(with_gdrcopy, 2, order, 16);
        assert_int_equal(n, 2 + n_followers - 1);
        size_t seen = 0;
        for (size_t i = 0; i < n; i++)
                seen += order[i] == gdrcopy;
        assert_int_equal(seen, 1);
        assert_false(gv_run_is_follower(gdrcopy, with_gdrcopy, 2));

        /* no room: cut, never an overflow */
        assert_int_equal(gv_run_order(selected, 2, order, 1), 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_chain_order_once_each),
                cmocka_unit_test(test_default_four),
                cmocka_unit_test(test_unknown_names),
                cmocka_unit_test(test_room_limit),
                cmocka_unit_test(test_order_with_followers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
