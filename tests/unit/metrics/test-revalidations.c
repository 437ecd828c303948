/* SPDX-License-Identifier: Apache-2.0 */
/* The re-validation counters: the file's round trip, bad files, and the series they render. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "metrics/metrics.h"

static void test_names(void **unused)
{
        (void) unused;
        assert_string_equal(gv_revalidation_reason_name(GV_REVAL_DRIVER_CTR_RESTART), "driver-container-restart");
        assert_string_equal(gv_revalidation_reason_name(GV_REVAL_DEVICE_NODE_REMOVED), "device-node-removed");
        assert_string_equal(gv_revalidation_reason_name(GV_REVAL_DRIVER_ROOT_CHANGED), "driver-root-changed");
        assert_string_equal(gv_revalidation_reason_name(GV_REVAL_GENERATION_CHANGED), "generation-changed");
        assert_string_equal(gv_revalidation_reason_name(GV_REVAL__MAX), "unknown");
}

static void test_write_read_round_trip_and_absent_file(void **unused)
{
        (void) unused;
        char dir[] = "/tmp/gv-reval-XXXXXX";
        assert_non_null(mkdtemp(dir));
        gv_revalidations_t c = { .present = true, .count = { 3, 0, 1, 18446744073709551615ULL } };
        _cleanup_error_ gv_error_t *err = NULL;
        gv_revalidations_t got = { .present = true, .count = { 9 } };
        assert_int_equal(gv_revalidations_read(dir, &got, &err), 0); /* absent: zeros, not present */
        assert_false(got.present);
        assert_int_equal(got.count[0], 0);
        assert_int_equal(gv_revalidations_write(dir, &c, &err), 0);
        assert_int_equal(gv_revalidations_read(dir, &got, &err), 0);
        assert_true(got.present);
        assert_memory_equal(got.count, c.count, sizeof(c.count));
        _cleanup_free_ char *path = NULL;
        assert_true(asprintf(&path, "%s/%s", dir, GV_REVALIDATIONS_FILE) > 0);
        unlink(path);
        rmdir(dir);
}

static void test_parse(void **unused)
{
        (void) unused;
        gv_revalidations_t got = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        const char *ok = "# written by watch\nDEVICE_NODE_REMOVED=2\nFUTURE_REASON=7\n";
        assert_int_equal(gv_revalidations_parse(ok, strlen(ok), &got, &err), 0);
        assert_true(got.present);
        assert_int_equal(got.count[GV_REVAL_DEVICE_NODE_REMOVED], 2);
        assert_int_equal(got.count[GV_REVAL_DRIVER_CTR_RESTART], 0);
        static const char *const bad[] = { "DRIVER_CONTAINER_RESTART=-1\n", "DRIVER_CONTAINER_RESTART=1x\n",
                                           "DRIVER_CONTAINER_RESTART=\n", "junk\n",
                                           "GENERATION_CHANGED=99999999999999999999999\n" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                gv_revalidations_t keep = { .count = { 5 } };
                if (gv_revalidations_parse(bad[i], strlen(bad[i]), &keep, &err) != -EINVAL)
                        fail_msg("accepted '%s'", bad[i]);
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
                assert_int_equal(keep.count[0], 5); /* untouched */
                gv_error_free(&err);
        }
}

static void test_render_only_when_present(void **unused)
{
        (void) unused;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "node-a", "1.0");
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *page = NULL;
        assert_int_equal(gv_metrics_render(&s, &page, NULL, &err), 0);
        assert_null(strstr(page, "revalidations"));
        s.revalidations = (gv_revalidations_t) { .present = true, .count = { 2, 0, 0, 1 } };
        _cleanup_free_ char *page2 = NULL;
        assert_int_equal(gv_metrics_render(&s, &page2, NULL, &err), 0);
        assert_non_null(strstr(page2, "# TYPE gpu_validator_revalidations_total counter\n"));
        assert_non_null(strstr(page2, "gpu_validator_revalidations_total{node=\"node-a\",reason=\"driver-container-restart\"} 2\n"));
        assert_non_null(strstr(page2, "gpu_validator_revalidations_total{node=\"node-a\",reason=\"device-node-removed\"} 0\n"));
        assert_non_null(strstr(page2, "gpu_validator_revalidations_total{node=\"node-a\",reason=\"driver-root-changed\"} 0\n"));
        assert_non_null(strstr(page2, "gpu_validator_revalidations_total{node=\"node-a\",reason=\"generation-changed\"} 1\n"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_write_read_round_trip_and_absent_file),
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_render_only_when_present),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
