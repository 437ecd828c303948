/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gv_pod_classify() (JSON Pod in, verdict out), the node helpers and
 * gv_workload_pick_gpu_resource() (MIG first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "workload/lifecycle.h"

static const char *const CUDA_INIT[] = { "cuda-validation", NULL };
static const char *const CUDA_MAIN[] = { "nvidia-cuda-validator", NULL };

static json_object *parse(const char *text)
{
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        return o;
}

/* Classify @text with the cuda template's container names; the caller clears @st. */
static void classify(const char *text, gv_pod_status_t *st)
{
        json_object *pod = parse(text);
        gv_error_t *err = NULL;
        assert_int_equal(gv_pod_classify(pod, CUDA_INIT, CUDA_MAIN, 3, st, &err), 0);
        assert_null(err);
        json_object_put(pod);
}

#define SPEC                                                                                                     \
        "\"spec\":{\"initContainers\":[{\"name\":\"cuda-validation\",\"image\":\"reg/x:1\"}],"                    \
        "\"containers\":[{\"name\":\"nvidia-cuda-validator\",\"image\":\"reg/x:1\"}]}"

#define INIT_OK                                                                                                  \
        "\"initContainerStatuses\":[{\"name\":\"cuda-validation\",\"restartCount\":0,\"image\":\"reg/x:1\","     \
        "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]"

static void test_just_created_is_waiting(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{\"metadata\":{\"name\":\"p\"}," SPEC ",\"status\":{\"phase\":\"Pending\"}}", &st);
        assert_int_equal(st.verdict, GV_POD_WAITING);
        assert_int_equal(st.failure, GV_POD_FAIL_NONE);
        assert_false(st.started);
        assert_string_equal(st.phase, "Pending");
        gv_pod_status_clear(&st);
}

static void test_running_is_waiting_and_started(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"restartCount\":0,\"state\":{\"running\":{}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_WAITING);
        assert_true(st.started);
        gv_pod_status_clear(&st);
}

static void test_all_terminated_zero_succeeds(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Succeeded\"," INIT_OK ",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_SUCCEEDED);
        gv_pod_status_clear(&st);
}

static void test_success_with_sidecar_still_running(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":["
                 "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
                 "{\"name\":\"istio-proxy\",\"restartCount\":7,\"state\":{\"running\":{}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_SUCCEEDED);
        gv_pod_status_clear(&st);
}

static void test_failing_sidecar_is_ignored(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":["
                 "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"running\":{}}},"
                 "{\"name\":\"istio-proxy\",\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
                 "\"lastState\":{\"terminated\":{\"exitCode\":1}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_WAITING);
        gv_pod_status_clear(&st);
}

static void test_main_done_but_init_missing_is_waiting(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
                 "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_WAITING);
        gv_pod_status_clear(&st);
}

static void test_init_container_failed(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Failed\",\"initContainerStatuses\":[{\"name\":"
                 "\"cuda-validation\",\"image\":\"reg/x:1\",\"state\":{\"terminated\":{\"exitCode\":2,"
                 "\"reason\":\"Error\"}}}]}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_FAILED);
        assert_int_equal(st.failure, GV_POD_FAIL_INIT_CONTAINER);
        assert_true(st.init_container);
        assert_int_equal(st.exit_code, 2);
        assert_string_equal(st.container, "cuda-validation");
        assert_non_null(strstr(st.message, "init container cuda-validation exited with code 2"));
        gv_pod_status_clear(&st);
}

static void test_init_container_failed_restarting_under_onfailure(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":"
                 "\"cuda-validation\",\"restartCount\":1,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
                 "\"lastState\":{\"terminated\":{\"exitCode\":139}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_INIT_CONTAINER);
        assert_int_equal(st.exit_code, 139);
        assert_non_null(strstr(st.message, "CrashLoopBackOff"));
        gv_pod_status_clear(&st);
}

static void test_main_container_failed(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Failed\"," INIT_OK ",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":1}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_CONTAINER);
        assert_false(st.init_container);
        assert_int_equal(st.exit_code, 1);
        gv_pod_status_clear(&st);
}

static void test_unexpected_admission_error(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Failed\",\"reason\":\"UnexpectedAdmissionError\",\"message\":"
                 "\"Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, "
                 "Available: 0, which is unexpected\"}}",
                 &st);
        assert_int_equal(st.verdict, GV_POD_FAILED);
        assert_int_equal(st.failure, GV_POD_FAIL_ADMISSION);
        assert_non_null(strstr(st.message, "no free GPU"));
        assert_non_null(strstr(st.message, "Available: 0"));
        assert_string_equal(gv_pod_failure_name(st.failure), "admission-error");
        gv_pod_status_clear(&st);
}

static void test_image_pull_errors(void **state)
{
        (void) state;
        const char *reasons[] = { "ErrImagePull", "ImagePullBackOff", "InvalidImageName" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(reasons); i++) {
                _cleanup_free_ char *text = NULL;
                assert_true(asprintf(&text,
                                     "{" SPEC ",\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":"
                                     "\"cuda-validation\",\"image\":\"private.example.com/v:9\",\"state\":{\"waiting\":"
                                     "{\"reason\":\"%s\",\"message\":\"unauthorized\"}}}]}}",
                                     reasons[i]) > 0);
                gv_pod_status_t st = { 0 };
                classify(text, &st);
                assert_int_equal(st.failure, GV_POD_FAIL_IMAGE_PULL);
                assert_string_equal(st.image, "private.example.com/v:9");
                assert_non_null(strstr(st.message, reasons[i]));
                assert_non_null(strstr(st.message, "private.example.com/v:9"));
                gv_pod_status_clear(&st);
        }
}

static void test_image_from_spec_when_status_has_none(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\"}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_IMAGE_PULL);
        assert_string_equal(st.image, "reg/x:1");
        gv_pod_status_clear(&st);
}

static void test_unschedulable(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
                 "\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/3 nodes are available: "
                 "Insufficient nvidia.com/gpu\"}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_UNSCHEDULABLE);
        assert_non_null(strstr(st.message, "Insufficient nvidia.com/gpu"));
        gv_pod_status_clear(&st);
}

static void test_crash_loop_and_restart_bound(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"restartCount\":2,\"state\":{\"waiting\":{\"reason\":"
                 "\"CrashLoopBackOff\"}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_CRASH_LOOP);
        gv_pod_status_clear(&st);
        /* restarted with exit 0 each time (restartPolicy Always), more than the bound of 3 */
        classify("{" SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":[{\"name\":"
                 "\"nvidia-cuda-validator\",\"restartCount\":4,\"state\":{\"running\":{}},"
                 "\"lastState\":{\"terminated\":{\"exitCode\":0}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_CRASH_LOOP);
        assert_non_null(strstr(st.message, "restarted 4 times"));
        gv_pod_status_clear(&st);
}

static void test_create_container_error(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":"
                 "\"cuda-validation\",\"state\":{\"waiting\":{\"reason\":\"CreateContainerConfigError\","
                 "\"message\":\"secret \\\"x\\\" not found\"}}}]}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_CREATE_CONTAINER);
        gv_pod_status_clear(&st);
}

static void test_failed_phase_other_reason(void **state)
{
        (void) state;
        gv_pod_status_t st = { 0 };
        classify("{" SPEC ",\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"message\":\"low memory\"}}",
                 &st);
        assert_int_equal(st.failure, GV_POD_FAIL_POD_FAILED);
        assert_non_null(strstr(st.message, "Evicted: low memory"));
        gv_pod_status_clear(&st);
}

static void test_not_an_object(void **state)
{
        (void) state;
        gv_pod_status_t st = { .exit_code = 42 };
        gv_error_t *err = NULL;
        json_object *arr = parse("[1]");
        assert_int_equal(gv_pod_classify(arr, CUDA_INIT, CUDA_MAIN, 3, &st, &err), -EINVAL);
        assert_non_null(err);
        assert_int_equal(st.exit_code, 42); /* untouched */
        gv_error_free(&err);
        json_object_put(arr);
        assert_int_equal(gv_pod_classify(NULL, CUDA_INIT, CUDA_MAIN, 3, &st, NULL), -EINVAL);
}

/* ---- node helpers and the resource picker ---- */

static void test_node_devices_and_label(void **state)
{
        (void) state;
        json_object *n = parse("{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.device-plugin\":\"false\"}},"
                               "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"9\"},\"allocatable\":{\"cpu\":\"8\","
                               "\"nvidia.com/gpu\":\"2\",\"nvidia.com/mig-1g.5gb\":\"7\",\"nvidia.com/gpu.shared\":"
                               "\"4\",\"example.com/gpu\":\"5\",\"nvidia.com/gpu.bad\":\"1.5\"}}}");
        assert_true(gv_node_device_plugin_disabled(n));
        assert_int_equal(gv_node_gpu_devices(n), 2 + 7 + 4);
        json_object_put(n);
        n = parse("{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.device-plugin\":\"true\"}},"
                  "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"3\"}}}");
        assert_false(gv_node_device_plugin_disabled(n));
        assert_int_equal(gv_node_gpu_devices(n), 3); /* capacity when allocatable is absent */
        json_object_put(n);
        n = parse("{\"metadata\":{},\"status\":{}}");
        assert_int_equal(gv_node_gpu_devices(n), 0);
        assert_null(gv_node_gpu_resources(n));
        json_object_put(n);
        assert_int_equal(gv_node_gpu_devices(NULL), 0);
        assert_false(gv_node_device_plugin_disabled(NULL));
}

static void pick(const char *resources, const char *want)
{
        json_object *r = parse(resources);
        char *out = NULL;
        gv_error_t *err = NULL;
        int rc = gv_workload_pick_gpu_resource(r, &out, &err);
        if (want) {
                assert_int_equal(rc, 0);
                assert_string_equal(out, want);
        } else {
                assert_int_equal(rc, -ENOENT);
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_WORKLOAD);
        }
        free(out);
        gv_error_free(&err);
        json_object_put(r);
}

static void test_pick_mig_first(void **state)
{
        (void) state;
        pick("{\"nvidia.com/gpu\":\"1\",\"nvidia.com/mig-2g.10gb\":\"1\",\"nvidia.com/mig-1g.5gb\":\"3\"}",
             "nvidia.com/mig-1g.5gb");
        pick("{\"nvidia.com/gpu\":\"1\",\"nvidia.com/mig-1g.5gb\":\"0\",\"nvidia.com/mig-2g.10gb\":\"2\"}",
             "nvidia.com/mig-2g.10gb");
        pick("{\"nvidia.com/gpu.shared\":\"4\",\"nvidia.com/gpu\":\"2\"}", "nvidia.com/gpu");
        pick("{\"nvidia.com/gpu.shared\":\"4\",\"nvidia.com/gpu\":\"0\"}", "nvidia.com/gpu.shared");
        pick("{\"nvidia.com/gpu\":\"0\",\"cpu\":\"4\"}", NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_just_created_is_waiting),
                cmocka_unit_test(test_running_is_waiting_and_started),
                cmocka_unit_test(test_all_terminated_zero_succeeds),
                cmocka_unit_test(test_success_with_sidecar_still_running),
                cmocka_unit_test(test_failing_sidecar_is_ignored),
                cmocka_unit_test(test_main_done_but_init_missing_is_waiting),
                cmocka_unit_test(test_init_container_failed),
                cmocka_unit_test(test_init_container_failed_restarting_under_onfailure),
                cmocka_unit_test(test_main_container_failed),
                cmocka_unit_test(test_unexpected_admission_error),
                cmocka_unit_test(test_image_pull_errors),
                cmocka_unit_test(test_image_from_spec_when_status_has_none),
                cmocka_unit_test(test_unschedulable),
                cmocka_unit_test(test_crash_loop_and_restart_bound),
                cmocka_unit_test(test_create_container_error),
                cmocka_unit_test(test_failed_phase_other_reason),
                cmocka_unit_test(test_not_an_object),
                cmocka_unit_test(test_node_devices_and_label),
                cmocka_unit_test(test_pick_mig_first),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
