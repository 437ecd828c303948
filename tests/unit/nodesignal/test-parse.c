/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing of the signal's values: taints, labels, condition types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "nodesignal/nodesignal.h"

static void test_taint_ok(void **state)
{
        (void) state;
        gv_nodesignal_taint_t t = { 0 };
        assert_int_equal(gv_nodesignal_parse_taint("nvidia.com/gpu.not-validated:NoSchedule", &t, NULL), 0);
        assert_string_equal(t.key, "nvidia.com/gpu.not-validated");
        assert_null(t.value);
        assert_string_equal(t.effect, "NoSchedule");
        gv_nodesignal_taint_clear(&t);
        assert_null(t.key);

        assert_int_equal(gv_nodesignal_parse_taint("gpu=absent:NoExecute", &t, NULL), 0);
        assert_string_equal(t.key, "gpu");
        assert_string_equal(t.value, "absent");
        assert_string_equal(t.effect, "NoExecute");
        gv_nodesignal_taint_clear(&t);

        assert_int_equal(gv_nodesignal_parse_taint("k=:PreferNoSchedule", &t, NULL), 0);
        assert_null(t.value); /* an empty value is no value */
        assert_string_equal(t.effect, "PreferNoSchedule");
        gv_nodesignal_taint_clear(&t);
        gv_nodesignal_taint_clear(NULL);
}

static void test_taint_bad(void **state)
{
        (void) state;
        static const char *const bad[] = {
                "", "key", "key:", "key:noschedule", ":NoSchedule", "-key:NoSchedule", "key-:NoSchedule",
                "Upper.Case/key:NoSchedule", "a/b/c:NoSchedule", "k=v v:NoSchedule", "k=-v:NoSchedule",
                "k=0123456789012345678901234567890123456789012345678901234567890123:NoSchedule",
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                gv_nodesignal_taint_t t = { .key = NULL };
                _cleanup_error_ gv_error_t *err = NULL;
                int r = gv_nodesignal_parse_taint(bad[i], &t, &err);
                if (r != -EINVAL)
                        fail_msg("taint '%s' accepted (%d)", bad[i], r);
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
                assert_null(t.key); /* untouched */
        }
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_nodesignal_parse_taint("key:Never", NULL, &err), -EINVAL);
        assert_non_null(strstr(err->msg, "effect 'Never'"));
}

static void test_label(void **state)
{
        (void) state;
        _cleanup_free_ char *k = NULL, *v = NULL;
        assert_int_equal(gv_nodesignal_parse_label("nvidia.com/gpu.validated=true", &k, &v, NULL), 0);
        assert_string_equal(k, "nvidia.com/gpu.validated");
        assert_string_equal(v, "true");
        free(k);
        free(v);
        k = v = NULL;
        assert_int_equal(gv_nodesignal_parse_label("validated=", &k, &v, NULL), 0);
        assert_string_equal(v, "");

        static const char *const bad[] = { "novalue", "=v", "k=v w", "k=v_", "x y=z", "UPPER.example/k=v" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                char *k2 = NULL, *v2 = NULL;
                _cleanup_error_ gv_error_t *err = NULL;
                if (gv_nodesignal_parse_label(bad[i], &k2, &v2, &err) != -EINVAL)
                        fail_msg("label '%s' accepted", bad[i]);
                assert_null(k2);
                assert_null(v2);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
        }
}

static void test_condition_type(void **state)
{
        (void) state;
        assert_true(gv_nodesignal_condition_type_valid("GPUValidated"));
        assert_true(gv_nodesignal_condition_type_valid("example.com/GPUValidated"));
        assert_false(gv_nodesignal_condition_type_valid(NULL));
        assert_false(gv_nodesignal_condition_type_valid(""));
        assert_false(gv_nodesignal_condition_type_valid("GPU Validated"));
        assert_false(gv_nodesignal_condition_type_valid("/GPUValidated"));
        assert_false(gv_nodesignal_condition_type_valid("GPUValidated/"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_taint_ok),
                cmocka_unit_test(test_taint_bad),
                cmocka_unit_test(test_label),
                cmocka_unit_test(test_condition_type),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
