/* SPDX-License-Identifier: Apache-2.0 */
/* `watch`'s pure parts: the verdict on a changed node and the delay before a re-validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/revalidate.h"

static char *nodes3[] = { "nvidia-uvm", "nvidia0", "nvidiactl", NULL };
static char *nodes2[] = { "nvidia-uvm", "nvidiactl", NULL };
static char *nodes4[] = { "nvidia-uvm", "nvidia0", "nvidia1", "nvidiactl", NULL };

static gv_node_state_t state(char **nodes)
{
        gv_node_state_t s = {
                .ctr_flag = { .present = true, .dev = 1, .ino = 10, .mtime_ns = 100 },
                .driver_lib = { .present = true, .dev = 2, .ino = 20, .mtime_ns = 200 },
                .dev_nodes = nodes,
        };
        memcpy(s.generation, "0123456789abcdef0123456789abcdef", GV_GENERATION_HEX_LEN + 1);
        return s;
}

static void expect_reason(const gv_node_state_t *base, const gv_node_state_t *now, gv_revalidation_reason_t want,
                          const char *what)
{
        gv_revalidation_reason_t r = GV_REVAL__MAX;
        const char *w = NULL;
        assert_true(gv_reval_classify(base, now, &r, &w));
        assert_int_equal(r, want);
        assert_string_equal(w, what);
}

static void test_same_node_is_no_change(void **unused)
{
        (void) unused;
        gv_node_state_t a = state(nodes3), b = state(nodes3);
        gv_revalidation_reason_t r = GV_REVAL__MAX;
        assert_false(gv_reval_classify(&a, &b, &r, NULL));
        assert_int_equal(r, GV_REVAL__MAX); /* untouched */
}

static void test_flag_removed_or_replaced_is_a_restart(void **unused)
{
        (void) unused;
        gv_node_state_t a = state(nodes3), b = state(nodes3);
        b.ctr_flag = (gv_file_id_t) { 0 };
        expect_reason(&a, &b, GV_REVAL_DRIVER_CTR_RESTART, ".driver-ctr-ready removed");
        b = state(nodes3);
        b.ctr_flag.ino = 11;
        expect_reason(&a, &b, GV_REVAL_DRIVER_CTR_RESTART, ".driver-ctr-ready replaced");
        b = state(nodes3);
        b.ctr_flag.mtime_ns = 101; /* rewritten in place */
        expect_reason(&a, &b, GV_REVAL_DRIVER_CTR_RESTART, ".driver-ctr-ready replaced");
        /* the strongest reason wins when everything changed at once */
        b = state(nodes2);
        b.ctr_flag = (gv_file_id_t) { 0 };
        b.driver_lib = (gv_file_id_t) { 0 };
        b.generation[0] = '\0';
        expect_reason(&a, &b, GV_REVAL_DRIVER_CTR_RESTART, ".driver-ctr-ready removed");
}

static void test_flag_appearing_is_no_change(void **unused)
{
        (void) unused;
        gv_node_state_t a = state(nodes3), b = state(nodes3);
        a.ctr_flag = (gv_file_id_t) { 0 }; /* a host driver: no flag when validated */
        gv_revalidation_reason_t r;
        assert_false(gv_reval_classify(&a, &b, &r, NULL));
}

static void test_device_nodes(void **unused)
{
        (void) unused;
        gv_node_state_t a = state(nodes3), b = state(nodes2);
        expect_reason(&a, &b, GV_REVAL_DEVICE_NODE_REMOVED, "nvidia0");
        b = state(NULL); /* the whole /dev folder gone */
        expect_reason(&a, &b, GV_REVAL_DEVICE_NODE_REMOVED, "nvidia-uvm");
        b = state(nodes4); /* a node that appeared is no change */
        gv_revalidation_reason_t r;
        assert_false(gv_reval_classify(&a, &b, &r, NULL));
}

static void test_library_and_generation(void **unused)
{
        (void) unused;
        gv_node_state_t a = state(nodes3), b = state(nodes3);
        b.driver_lib = (gv_file_id_t) { 0 };
        expect_reason(&a, &b, GV_REVAL_DRIVER_ROOT_CHANGED, "libnvidia-ml.so.1 removed");
        b = state(nodes3);
        b.driver_lib.dev = 3;
        expect_reason(&a, &b, GV_REVAL_DRIVER_ROOT_CHANGED, "libnvidia-ml.so.1 replaced");
        b = state(nodes3);
        b.generation[0] = '\0';
        expect_reason(&a, &b, GV_REVAL_GENERATION_CHANGED, "driver-ready no longer ready");
        b = state(nodes3);
        b.generation[31] = '0';
        expect_reason(&a, &b, GV_REVAL_GENERATION_CHANGED, "driver-ready republished");
        /* no generation when validated (a chain without the driver): never a generation change */
        a.generation[0] = '\0';
        gv_revalidation_reason_t r;
        assert_false(gv_reval_classify(&a, &b, &r, NULL));
}

static void test_delay_doubles_caps_and_respects_the_rate_limit(void **unused)
{
        (void) unused;
        /* no jitter: 2, 4, 8, 16, then the cap */
        assert_int_equal(gv_reval_delay_ms(1, 2, 10, 0, 0, -1), 2000);
        assert_int_equal(gv_reval_delay_ms(2, 2, 10, 0, 0, -1), 4000);
        assert_int_equal(gv_reval_delay_ms(3, 2, 10, 0, 0, -1), 8000);
        assert_int_equal(gv_reval_delay_ms(4, 2, 10, 0, 0, -1), 10000);
        assert_int_equal(gv_reval_delay_ms(60, 2, 10, 0, 0, -1), 10000);
        /* jitter only shortens, by at most 20 % */
        int64_t j = gv_reval_delay_ms(4, 2, 10, 0.999, 0, -1);
        assert_true(j >= 8000 && j <= 10000);
        /* first step 0 is 100 ms, never a spin */
        assert_int_equal(gv_reval_delay_ms(1, 0, 1, 0, 0, -1), 100);
        /* attempt 0 counts as the first */
        assert_int_equal(gv_reval_delay_ms(0, 2, 10, 0, 0, -1), 2000);
        /* the rate limit: 10 s between starts, the last 3 s ago: wait 7 s even though backoff says 2 */
        assert_int_equal(gv_reval_delay_ms(1, 2, 10, 0, 10, 3000), 7000);
        /* ... but the longer of the two */
        assert_int_equal(gv_reval_delay_ms(3, 2, 10, 0, 10, 9000), 8000);
        /* long ago: the backoff alone */
        assert_int_equal(gv_reval_delay_ms(1, 2, 10, 0, 10, 60000), 2000);
}

static void test_ignored_xids_parse(void **state)
{
        (void) state;
        bool all = true;
        unsigned *v = NULL;
        size_t n = 9;
        gv_error_t *err = NULL;
        assert_int_equal(gv_reval_parse_xids("X", "63,64", &all, &v, &n, &err), 0);
        assert_false(all);
        assert_int_equal(n, 2);
        assert_int_equal(v[0], 63);
        assert_int_equal(v[1], 64);
        free(v);
        /* spaces, repeated and trailing separators; the largest Xid */
        assert_int_equal(gv_reval_parse_xids("X", " 48 ,, 4294967295, ", &all, &v, &n, &err), 0);
        assert_int_equal(n, 2);
        assert_int_equal(v[1], 4294967295u);
        free(v);
        /* empty: an empty list, no allocation */
        assert_int_equal(gv_reval_parse_xids("X", "", &all, &v, &n, &err), 0);
        assert_null(v);
        assert_int_equal(n, 0);
        assert_int_equal(gv_reval_parse_xids("X", " , ", &all, &v, &n, &err), 0);
        assert_int_equal(n, 0);
        assert_int_equal(gv_reval_parse_xids("X", "all", &all, &v, &n, &err), 0);
        assert_true(all);
        assert_null(v);
        /* refused: names the item, nothing returned */
        const char *bad[] = { "63,x", "0", "-1", "4294967296", "all,63", "6 3a", "+5", NULL };
        for (const char **b = bad; *b; b++) {
                assert_int_equal(gv_reval_parse_xids("GPU_HEALTH_IGNORE_XIDS", *b, &all, &v, &n, &err), -EINVAL);
                assert_null(v);
                assert_int_equal(n, 0);
                assert_non_null(strstr(err->msg, "GPU_HEALTH_IGNORE_XIDS"));
                assert_non_null(strstr(err->msg, "is not an Xid"));
                gv_error_free(&err);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_same_node_is_no_change),
                cmocka_unit_test(test_flag_removed_or_replaced_is_a_restart),
                cmocka_unit_test(test_flag_appearing_is_no_change),
                cmocka_unit_test(test_device_nodes),
                cmocka_unit_test(test_library_and_generation),
                cmocka_unit_test(test_delay_doubles_caps_and_respects_the_rate_limit),
                cmocka_unit_test(test_ignored_xids_parse),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
