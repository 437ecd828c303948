/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state machine of gv_pod_run() (src/workload/podrun.h): the watch
 * context fed one event at a time (gv_pod_watch_event()) and the transition
 * out of the JUDGE state (gv_pod_run_next()), without an API server.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "workload/podrun.h"

static const char *const CUDA_INIT[] = { "cuda-validation", NULL };
static const char *const CUDA_MAIN[] = { "nvidia-cuda-validator", NULL };

#define SPEC                                                                                                     \
        "\"spec\":{\"initContainers\":[{\"name\":\"cuda-validation\",\"image\":\"reg/x:1\"}],"                    \
        "\"containers\":[{\"name\":\"nvidia-cuda-validator\",\"image\":\"reg/x:1\"}]}"

#define INIT_OK                                                                                                  \
        "\"initContainerStatuses\":[{\"name\":\"cuda-validation\",\"restartCount\":0,\"image\":\"reg/x:1\","     \
        "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]"

#define MD(uid, rv, extra) "\"metadata\":{\"name\":\"p\",\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\"" extra "}"

static const char POD_PENDING[] = "{" MD("u1", "10", "") "," SPEC ",\"status\":{\"phase\":\"Pending\"}}";

static const char POD_IMAGE_PULL[] =
        "{" MD("u1", "11", "") "," SPEC ",\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":"
        "\"cuda-validation\",\"image\":\"reg/x:1\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\","
        "\"message\":\"back-off pulling\"}}}]}}";

/* main container done, an injected sidecar still running (FR09) */
static const char POD_SIDECAR[] =
        "{" MD("u1", "12", "") "," SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":["
        "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
        "{\"name\":\"istio-proxy\",\"state\":{\"running\":{}}}]}}";

/* the main container killed (exit 137) while someone deletes the pod */
static const char POD_KILLED_TERMINATING[] =
        "{" MD("u1", "13", ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"") "," SPEC
        ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":[{\"name\":\"nvidia-cuda-validator\","
        "\"state\":{\"terminated\":{\"exitCode\":137,\"reason\":\"Error\"}}}]}}";

static const char POD_RUNNING_OLDER_UID[] =
        "{" MD("u0", "14", "") "," SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":["
        "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}}";

static const char POD_RUNNING[] =
        "{" MD("u1", "15", "") "," SPEC ",\"status\":{\"phase\":\"Running\"," INIT_OK ",\"containerStatuses\":["
        "{\"name\":\"nvidia-cuda-validator\",\"state\":{\"running\":{}}}]}}";

static gv_pod_watch_t watch_new(void)
{
        return (gv_pod_watch_t) { .name = "p", .uid = "u1", .init_names = CUDA_INIT, .names = CUDA_MAIN,
                                  .max_restarts = 3 };
}

/* Feed one event of @type with the pod in @text; returns the callback's "go on". */
static bool feed(gv_pod_watch_t *w, gv_k8s_event_type_t type, const char *text)
{
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        const char *rv = json_object_get_string(
                json_object_object_get(json_object_object_get(o, "metadata"), "resourceVersion"));
        gv_k8s_watch_event_t ev = { .type = type, .object = o, .resource_version = rv };
        bool go_on = gv_pod_watch_event(w, &ev);
        json_object_put(o);
        return go_on;
}

static void test_state_names(void **state)
{
        (void) state;
        assert_string_equal(gv_pod_run_state_name(GV_POD_RUN_PREPARE), "prepare");
        assert_string_equal(gv_pod_run_state_name(GV_POD_RUN_WATCH), "watch");
        assert_string_equal(gv_pod_run_state_name(GV_POD_RUN_DONE), "done");
        assert_string_equal(gv_pod_run_state_name(GV_POD_RUN__MAX), "unknown");
        for (int s = 0; s < GV_POD_RUN__MAX; s++)
                assert_string_not_equal(gv_pod_run_state_name((gv_pod_run_state_t) s), "unknown");
}

static void test_pending_keeps_watching_then_bound_is_pending(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        assert_true(feed(&w, GV_K8S_EVENT_MODIFIED, POD_PENDING));
        assert_false(w.decided);
        assert_string_equal(w.rv, "10");
        /* the watch ended on a bound with the deadline still ahead: the pending bound */
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_PENDING);
        /* the overall deadline */
        assert_int_equal(gv_pod_run_next(&w, 0, 3, false), GV_POD_RUN_TIMED_OUT);
        gv_pod_watch_clear(&w);
}

static void test_started_pod_at_a_bound_times_out(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        assert_true(feed(&w, GV_K8S_EVENT_MODIFIED, POD_RUNNING));
        assert_true(w.st.started);
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_TIMED_OUT);
        gv_pod_watch_clear(&w);
}

static void test_image_pull_failure_ends_watch_as_failed(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        assert_true(feed(&w, GV_K8S_EVENT_ADDED, POD_PENDING));
        assert_false(feed(&w, GV_K8S_EVENT_MODIFIED, POD_IMAGE_PULL));
        assert_true(w.decided);
        assert_int_equal(w.st.failure, GV_POD_FAIL_IMAGE_PULL);
        assert_string_equal(w.rv, "11");
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_FAILED);
        gv_pod_watch_clear(&w);
}

static void test_sidecar_running_after_main_done_succeeds(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        assert_false(feed(&w, GV_K8S_EVENT_MODIFIED, POD_SIDECAR));
        assert_true(w.decided);
        assert_int_equal(w.st.verdict, GV_POD_SUCCEEDED);
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_SUCCEEDED);
        gv_pod_watch_clear(&w);
}

static void test_deleted_externally_recreates_until_the_bound(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        /* containers killed by the deletion are no validation failure: keep watching for DELETED */
        assert_true(feed(&w, GV_K8S_EVENT_MODIFIED, POD_KILLED_TERMINATING));
        assert_true(w.terminating);
        assert_false(w.decided);
        assert_int_equal(w.st.verdict, GV_POD_FAILED);
        assert_false(feed(&w, GV_K8S_EVENT_DELETED, POD_KILLED_TERMINATING));
        assert_true(w.deleted);
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_BACKOFF);
        assert_int_equal(gv_pod_run_next(&w, 2, 3, true), GV_POD_RUN_BACKOFF);
        assert_int_equal(gv_pod_run_next(&w, 3, 3, true), GV_POD_RUN_GIVE_UP);
        /* deleted wins over a bound that passed meanwhile */
        assert_int_equal(gv_pod_run_next(&w, 0, 3, false), GV_POD_RUN_BACKOFF);
        gv_pod_watch_clear(&w);
}

static void test_older_pod_of_the_same_name_is_ignored(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        assert_true(feed(&w, GV_K8S_EVENT_DELETED, POD_RUNNING_OLDER_UID));
        assert_false(w.deleted);
        assert_true(feed(&w, GV_K8S_EVENT_MODIFIED, POD_RUNNING_OLDER_UID));
        assert_false(w.decided);
        assert_null(w.st.phase); /* not judged */
        assert_string_equal(w.rv, "14"); /* but its version is where the next round resumes */
        gv_pod_watch_clear(&w);
}

static void test_bookmark_only_moves_the_version(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        json_object *o = json_tokener_parse("{\"metadata\":{\"resourceVersion\":\"99\"}}");
        gv_k8s_watch_event_t ev = { .type = GV_K8S_EVENT_BOOKMARK, .object = o, .resource_version = "99" };
        assert_true(gv_pod_watch_event(&w, &ev));
        json_object_put(o);
        assert_string_equal(w.rv, "99");
        assert_false(w.decided);
        assert_false(w.deleted);
        gv_pod_watch_clear(&w);
}

static void test_classification_error_is_broken(void **state)
{
        (void) state;
        gv_pod_watch_t w = watch_new();
        json_object *notpod = json_object_new_array();
        assert_false(gv_pod_watch_judge(&w, notpod));
        json_object_put(notpod);
        assert_int_equal(w.error, -EINVAL);
        assert_non_null(w.err);
        /* an error wins over everything else */
        w.deleted = true;
        assert_int_equal(gv_pod_run_next(&w, 0, 3, true), GV_POD_RUN_BROKEN);
        gv_pod_watch_clear(&w);
        assert_null(w.err);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_state_names),
                cmocka_unit_test(test_pending_keeps_watching_then_bound_is_pending),
                cmocka_unit_test(test_started_pod_at_a_bound_times_out),
                cmocka_unit_test(test_image_pull_failure_ends_watch_as_failed),
                cmocka_unit_test(test_sidecar_running_after_main_done_succeeds),
                cmocka_unit_test(test_deleted_externally_recreates_until_the_bound),
                cmocka_unit_test(test_older_pod_of_the_same_name_is_ignored),
                cmocka_unit_test(test_bookmark_only_moves_the_version),
                cmocka_unit_test(test_classification_error_is_broken),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
