/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_workload_fill() when json-c runs out of memory half way: linked with
 * -Wl,--wrap=json_object_array_add, so that adding an imagePullSecrets
 * entry ({"name": ...}) to its array fails as json-c does on ENOMEM
 * (returns -1, the value stays the caller's).  The fill must answer -ENOMEM
 * and free every object once (ASan/LeakSanitizer in the sanitizer build
 * report a double free or a leak; a double free can also abort here).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup-json.h"
#include "workload/workload.h"

int __real_json_object_array_add(json_object *arr, json_object *val);
int __wrap_json_object_array_add(json_object *arr, json_object *val);

/* Set by a test: fail the adds of a pull secret entry (an object whose only key is "name"). */
static bool fail_secret_add;
static unsigned failed_adds;

int __wrap_json_object_array_add(json_object *arr, json_object *val)
{
        json_object *name = NULL;
        if (fail_secret_add && json_object_is_type(val, json_type_object) && json_object_object_length(val) == 1 &&
            json_object_object_get_ex(val, "name", &name)) {
                failed_adds++;
                return -1;
        }
        return __real_json_object_array_add(arr, val);
}

static json_object *small_pod(void)
{
        json_object *pod = json_tokener_parse(
                "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
        assert_non_null(pod);
        return pod;
}

static const gv_workload_runtime_t runtime = {
        .node_name = "node-a",
        .namespace = "gpu-operator",
        .image_pull_secrets = "first, second",
};

static void test_secret_add_fails_cleanly(void **state)
{
        (void) state;
        _cleanup_json_ json_object *pod = small_pod();
        _cleanup_error_ gv_error_t *err = NULL;
        fail_secret_add = true;
        failed_adds = 0;
        int r = gv_workload_fill(pod, GV_WORKLOAD_CUDA, &runtime, &err);
        fail_secret_add = false;
        assert_int_equal(r, -ENOMEM);
        assert_int_equal(failed_adds, 1);
        assert_non_null(err);
        assert_string_equal(err->msg, "out of memory");
}

/* The same fill without the fault: both secrets land, so the fault above was on the path. */
static void test_secrets_filled(void **state)
{
        (void) state;
        _cleanup_json_ json_object *pod = small_pod();
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_workload_fill(pod, GV_WORKLOAD_CUDA, &runtime, &err), 0);
        json_object *spec = NULL, *list = NULL;
        assert_true(json_object_object_get_ex(pod, "spec", &spec));
        assert_true(json_object_object_get_ex(spec, "imagePullSecrets", &list));
        assert_int_equal(json_object_array_length(list), 2);
        json_object *name = NULL;
        assert_true(json_object_object_get_ex(json_object_array_get_idx(list, 1), "name", &name));
        assert_string_equal(json_object_get_string(name), "second");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_secrets_filled),
                cmocka_unit_test(test_secret_add_fails_cleanly),
        };
        cmocka_set_message_output(CM_OUTPUT_TAP);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
