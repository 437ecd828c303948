/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The verdict of a real marker store in a temporary folder, and the plans
 * (merge patches, events) for Nodes as read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "nodesignal/nodesignal.h"
#include "../store-fixture.h"

static int setup(void **state)
{
        return store_fixture_setup(state, "gv-nodesignal");
}

#define teardown store_fixture_teardown

#define NOW "2026-03-01T12:00:00Z"
#define EARLIER "2026-02-01T00:00:00Z"

/* ---- helpers ---- */



static json_object *parse(const char *text)
{
        json_object *o = json_tokener_parse(text);
        if (!o)
                fail_msg("bad JSON in test: %s", text);
        return o;
}

/* The JSON text of @o, sorted keys are not needed: json-c keeps insertion order. */
static const char *text(json_object *o)
{
        return o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "null";
}

static json_object *at(json_object *o, const char *k1, const char *k2)
{
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, k1, &v))
                return NULL;
        if (k2 && !json_object_object_get_ex(v, k2, &v))
                return NULL;
        return v;
}

static const char *str_at(json_object *o, const char *k1, const char *k2)
{
        json_object *v = at(o, k1, k2);
        return v ? json_object_get_string(v) : NULL;
}

static gv_nodesignal_verdict_t validated(void)
{
        return (gv_nodesignal_verdict_t) { .validated = true, .last = GV_MARKER_PLUGIN, .failing = GV_MARKER_INVALID,
                                           .state = GV_MARKER_READY };
}

static gv_nodesignal_verdict_t failing(gv_marker_id_t id, gv_marker_state_t st, const char *detail)
{
        return (gv_nodesignal_verdict_t) { .validated = false, .last = GV_MARKER_PLUGIN, .failing = id, .state = st,
                                           .detail = (char *) detail };
}

static const gv_nodesignal_taint_t TAINT = { .key = "nvidia.com/gpu.not-validated", .value = NULL,
                                             .effect = "NoSchedule" };

static gv_nodesignal_spec_t full_spec(void)
{
        return (gv_nodesignal_spec_t) { .condition_type = "GPUValidated", .label_key = "nvidia.com/gpu.validated",
                                        .label_value = "true", .taint = &TAINT };
}

#define BARE_NODE                                                                                           \
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\",\"uid\":\"u1\",\"resourceVersion\":\"7\"," \
        "\"labels\":{\"a\":\"b\"}},\"spec\":{\"taints\":[{\"key\":\"nvidia.com/gpu.not-validated\",\"effect\":\"NoSchedule\"}," \
        "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"}]},\"status\":{\"conditions\":[" \
        "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"ok\"}]}}"

/* A node that already agrees with a validated verdict under full_spec(). */
#define VALIDATED_NODE                                                                                       \
        "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"9\",\"labels\":{\"a\":\"b\","        \
        "\"nvidia.com/gpu.validated\":\"true\"}},\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\","      \
        "\"effect\":\"NoExecute\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"         \
        "{\"type\":\"GPUValidated\",\"status\":\"True\",\"reason\":\"ValidationSucceeded\","                         \
        "\"message\":\"driver, toolkit, cuda and plugin validated\",\"lastTransitionTime\":\"" EARLIER "\","         \
        "\"lastHeartbeatTime\":\"" EARLIER "\"}]}}"

/* ---- plan ---- */

static void test_pending_node(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse(BARE_NODE);
        gv_nodesignal_verdict_t v = failing(GV_MARKER_DRIVER, GV_MARKER_MISSING, "not present");
        gv_nodesignal_plan_t p;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_int_equal(p.before, GV_NODESIGNAL_PENDING);
        assert_int_equal(p.after, GV_NODESIGNAL_PENDING);
        assert_string_equal(p.condition_reason, "Validating");
        assert_string_equal(p.condition_message, "validating driver: driver-ready is missing (not present)");
        assert_null(p.event_reason);
        assert_null(p.node_patch); /* tainted, not labelled: as wanted */
        assert_non_null(p.status_patch);
        assert_string_equal(text(p.status_patch),
                            "{\"metadata\":{\"resourceVersion\":\"7\"},\"status\":{\"conditions\":["
                            "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"ok\"},"
                            "{\"type\":\"GPUValidated\",\"status\":\"False\",\"reason\":\"Validating\","
                            "\"message\":\"validating driver: driver-ready is missing (not present)\","
                            "\"lastHeartbeatTime\":\"" NOW "\",\"lastTransitionTime\":\"" NOW "\"}]}}");
        gv_nodesignal_plan_clear(&p);
        json_object_put(node);
}

/* The validator's own pod says which component runs, or which failed and why. */
#define POD_SPEC                                                                                                   \
        "\"spec\":{\"initContainers\":[{\"name\":\"node-status\",\"restartPolicy\":\"Always\"},"                \
        "{\"name\":\"driver-validation\"},{\"name\":\"toolkit-validation\"},{\"name\":\"cuda-validation\"}]}"

static void test_pod_progress(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse(BARE_NODE);
        gv_nodesignal_verdict_t v = failing(GV_MARKER_TOOLKIT, GV_MARKER_MISSING, "not present");
        gv_nodesignal_plan_t p;

        /* driver done, toolkit running: the sidecar itself (running) is skipped. */
        json_object *pod = parse("{" POD_SPEC ",\"status\":{\"initContainerStatuses\":["
                                 "{\"name\":\"node-status\",\"state\":{\"running\":{}}},"
                                 "{\"name\":\"driver-validation\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
                                 "{\"name\":\"toolkit-validation\",\"state\":{\"running\":{}}},"
                                 "{\"name\":\"cuda-validation\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}");
        assert_int_equal(gv_nodesignal_pod_progress(pod, &v), 0);
        assert_true(v.has_running);
        assert_false(v.has_failed);
        assert_int_equal(v.running, GV_MARKER_TOOLKIT);
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_string_equal(p.condition_reason, "Validating");
        assert_string_equal(p.condition_message, "validating toolkit (in progress): toolkit-ready is missing (not present)");
        assert_int_equal(p.after, GV_NODESIGNAL_PENDING);
        gv_nodesignal_plan_clear(&p);
        json_object_put(pod);

        /* toolkit failed and waits in CrashLoopBackOff: the last line of its termination message. */
        pod = parse("{" POD_SPEC ",\"status\":{\"initContainerStatuses\":["
                    "{\"name\":\"driver-validation\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
                    "{\"name\":\"toolkit-validation\",\"restartCount\":3,"
                    "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
                    "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\","
                    "\"message\":\"info: toolkit: looking\\nerror: toolkit: no CDI spec names GPU 0\\n\\n\"}}}]}}");
        assert_int_equal(gv_nodesignal_pod_progress(pod, &v), 0);
        assert_false(v.has_running);
        assert_true(v.has_failed);
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_string_equal(p.condition_reason, "ToolkitValidationFailed");
        assert_string_equal(p.condition_message,
                            "toolkit validation failed (exit code 1, 3 restarts): error: toolkit: no CDI spec names GPU 0");
        assert_int_equal(p.after, GV_NODESIGNAL_PENDING);
        assert_null(p.event_reason);
        /* Such a Node reads as pending (never validated), so the first success is "Succeeded". */
        json_object *patched = parse(BARE_NODE);
        json_object *conds = at(at(p.status_patch, "status", NULL), "conditions", NULL);
        json_object_object_add(at(patched, "status", NULL), "conditions", json_object_get(conds));
        assert_int_equal(gv_nodesignal_node_phase(&spec, patched, GV_NODESIGNAL_UNKNOWN), GV_NODESIGNAL_PENDING);
        json_object_put(patched);
        gv_nodesignal_plan_clear(&p);
        json_object_put(pod);

        /* A plain failed init container (terminated, not yet restarted): its reason when no message. */
        pod = parse("{" POD_SPEC ",\"status\":{\"initContainerStatuses\":["
                    "{\"name\":\"driver-validation\",\"state\":{\"terminated\":{\"exitCode\":3,\"reason\":\"Error\"}}}]}}");
        assert_int_equal(gv_nodesignal_pod_progress(pod, &v), 0);
        assert_true(v.has_failed);
        assert_int_equal(v.failed, GV_MARKER_DRIVER);
        assert_int_equal(v.failed_exit_code, 3);
        assert_string_equal(v.failed_message, "Error");
        json_object_put(pod);
        /* No status at all: nothing known. */
        pod = parse("{" POD_SPEC "}");
        assert_int_equal(gv_nodesignal_pod_progress(pod, &v), 0);
        assert_false(v.has_running || v.has_failed);
        assert_null(v.failed_message);
        json_object_put(pod);
        free(v.failed_message); /* detail is a literal here: not gv_nodesignal_verdict_clear() */
        json_object_put(node);
}

static void test_first_success(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse(BARE_NODE);
        gv_nodesignal_verdict_t v = validated();
        gv_nodesignal_plan_t p;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_int_equal(p.before, GV_NODESIGNAL_PENDING);
        assert_int_equal(p.after, GV_NODESIGNAL_VALIDATED);
        assert_string_equal(p.condition_reason, "ValidationSucceeded");
        assert_string_equal(p.condition_message, "driver, toolkit, cuda and plugin validated");
        assert_string_equal(p.event_reason, "GPUValidationSucceeded");
        assert_string_equal(p.event_type, "Normal");
        assert_string_equal(p.event_message, "GPU validation succeeded on node n1: driver, toolkit, cuda and plugin validated");
        /* label set, start-up taint removed, the other taint kept, resourceVersion as a precondition */
        assert_string_equal(text(p.node_patch),
                            "{\"metadata\":{\"resourceVersion\":\"7\",\"labels\":{\"nvidia.com/gpu.validated\":\"true\"}},"
                            "\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"}]}}");
        json_object *c = json_object_array_get_idx(at(at(p.status_patch, "status", NULL), "conditions", NULL), 1);
        assert_string_equal(str_at(c, "status", NULL), "True");
        gv_nodesignal_plan_clear(&p);
        json_object_put(node);
}

static void test_agreeing_node_no_patch(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse(VALIDATED_NODE);
        gv_nodesignal_verdict_t v = validated();
        gv_nodesignal_plan_t p;
        for (int mem = GV_NODESIGNAL_UNKNOWN; mem <= GV_NODESIGNAL_FAILED; mem++) {
                assert_int_equal(gv_nodesignal_plan(&spec, &v, node, (gv_nodesignal_phase_t) mem, NOW, &p, NULL), 0);
                assert_null(p.status_patch);
                assert_null(p.node_patch);
                assert_null(p.event_reason);
                assert_int_equal(p.before, GV_NODESIGNAL_VALIDATED);
                gv_nodesignal_plan_clear(&p);
        }
        json_object_put(node);
}

static void test_failure_after_success(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse(VALIDATED_NODE);
        gv_nodesignal_verdict_t v = failing(GV_MARKER_TOOLKIT, GV_MARKER_MISSING, "not present");
        gv_nodesignal_plan_t p;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_int_equal(p.before, GV_NODESIGNAL_VALIDATED);
        assert_int_equal(p.after, GV_NODESIGNAL_FAILED);
        assert_string_equal(p.condition_reason, "ToolkitMissing");
        assert_string_equal(p.condition_message, "toolkit not validated: toolkit-ready is missing (not present)");
        assert_string_equal(p.event_type, "Warning");
        assert_string_equal(p.event_reason, "GPUValidationFailed");
        assert_string_equal(p.event_message,
                            "GPU validation failed on node n1: component toolkit, reason ToolkitMissing: toolkit-ready is "
                            "missing (not present)");
        /* label removed (null), start-up taint appended after the others */
        assert_string_equal(text(p.node_patch),
                            "{\"metadata\":{\"resourceVersion\":\"9\",\"labels\":{\"nvidia.com/gpu.validated\":null}},"
                            "\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"},"
                            "{\"key\":\"nvidia.com/gpu.not-validated\",\"effect\":\"NoSchedule\"}]}}");
        /* the condition keeps its place; the status changed, so lastTransitionTime is now */
        json_object *conds = at(at(p.status_patch, "status", NULL), "conditions", NULL);
        assert_int_equal(json_object_array_length(conds), 2);
        json_object *c = json_object_array_get_idx(conds, 1);
        assert_string_equal(str_at(c, "type", NULL), "GPUValidated");
        assert_string_equal(str_at(c, "status", NULL), "False");
        assert_string_equal(str_at(c, "lastTransitionTime", NULL), NOW);
        gv_nodesignal_plan_clear(&p);

        /* Same status, other message: lastTransitionTime kept. */
        json_object *failed = parse("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"3\"},\"status\":{\"conditions\":["
                                    "{\"type\":\"GPUValidated\",\"status\":\"False\",\"reason\":\"DriverMissing\","
                                    "\"message\":\"x\",\"lastTransitionTime\":\"" EARLIER "\"}]}}");
        assert_int_equal(gv_nodesignal_plan(&spec, &v, failed, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_int_equal(p.before, GV_NODESIGNAL_FAILED);
        assert_int_equal(p.after, GV_NODESIGNAL_FAILED);
        assert_null(p.event_reason); /* still failed: no second event */
        c = json_object_array_get_idx(at(at(p.status_patch, "status", NULL), "conditions", NULL), 0);
        assert_string_equal(str_at(c, "lastTransitionTime", NULL), EARLIER);
        assert_string_equal(str_at(c, "reason", NULL), "ToolkitMissing");
        gv_nodesignal_plan_clear(&p);

        /* Recovery from there. */
        v = validated();
        assert_int_equal(gv_nodesignal_plan(&spec, &v, failed, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_string_equal(p.event_reason, "GPUValidationRecovered");
        assert_string_equal(p.event_message, "GPU validation recovered on node n1: driver, toolkit, cuda and plugin "
                                             "validated (was DriverMissing)");
        gv_nodesignal_plan_clear(&p);
        json_object_put(failed);
        json_object_put(node);
}

static void test_without_condition_memory(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = { .label_key = "l", .label_value = "" };
        json_object *node = parse("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"1\"}}");
        gv_nodesignal_verdict_t v = validated();
        gv_nodesignal_plan_t p;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_null(p.status_patch);
        assert_string_equal(text(p.node_patch), "{\"metadata\":{\"resourceVersion\":\"1\",\"labels\":{\"l\":\"\"}}}");
        assert_string_equal(p.event_reason, "GPUValidationSucceeded");
        gv_nodesignal_plan_clear(&p);

        /* the label present says validated when nothing is remembered; memory wins otherwise */
        json_object *labelled = parse("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"2\",\"labels\":{\"l\":\"\"}}}");
        assert_int_equal(gv_nodesignal_node_phase(&spec, labelled, GV_NODESIGNAL_UNKNOWN), GV_NODESIGNAL_VALIDATED);
        assert_int_equal(gv_nodesignal_node_phase(&spec, labelled, GV_NODESIGNAL_FAILED), GV_NODESIGNAL_FAILED);
        v = failing(GV_MARKER_CUDA, GV_MARKER_INCONSISTENT, NULL);
        assert_int_equal(gv_nodesignal_plan(&spec, &v, labelled, GV_NODESIGNAL_VALIDATED, NOW, &p, NULL), 0);
        assert_string_equal(p.event_reason, "GPUValidationFailed");
        assert_string_equal(p.condition_reason, "CudaInconsistent");
        assert_string_equal(text(p.node_patch), "{\"metadata\":{\"resourceVersion\":\"2\",\"labels\":{\"l\":null}}}");
        gv_nodesignal_plan_clear(&p);
        json_object_put(labelled);
        json_object_put(node);
}

static void test_taint_only_last_taint_removed(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = { .taint = &TAINT };
        json_object *node = parse("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"4\"},\"spec\":{\"taints\":["
                                  "{\"key\":\"nvidia.com/gpu.not-validated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}}");
        gv_nodesignal_verdict_t v = validated();
        gv_nodesignal_plan_t p;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_string_equal(text(p.node_patch), "{\"metadata\":{\"resourceVersion\":\"4\"},\"spec\":{\"taints\":null}}");
        gv_nodesignal_plan_clear(&p);
        /* same key, other effect: not ours, so ours is added */
        json_object *other = parse("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"5\"},\"spec\":{\"taints\":["
                                   "{\"key\":\"nvidia.com/gpu.not-validated\",\"effect\":\"NoExecute\"}]}}");
        v = failing(GV_MARKER_DRIVER, GV_MARKER_FOREIGN, "empty file");
        assert_int_equal(gv_nodesignal_plan(&spec, &v, other, GV_NODESIGNAL_UNKNOWN, NOW, &p, NULL), 0);
        assert_int_equal(json_object_array_length(at(at(p.node_patch, "spec", NULL), "taints", NULL)), 2);
        gv_nodesignal_plan_clear(&p);
        json_object_put(other);
        json_object_put(node);
}

static void test_bad_node(void **state)
{
        (void) state;
        gv_nodesignal_spec_t spec = full_spec();
        json_object *node = parse("{\"metadata\":{\"name\":\"n1\"}}");
        gv_nodesignal_verdict_t v = validated();
        gv_nodesignal_plan_t p;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, NOW, &p, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_null(p.status_patch);
        json_object_put(node);
}

static void test_failure_reason_names(void **state)
{
        (void) state;
        struct { gv_marker_id_t id; gv_marker_state_t st; const char *want; } cases[] = {
                { GV_MARKER_DRIVER, GV_MARKER_MISSING, "DriverMissing" },
                { GV_MARKER_NVIDIA_FS, GV_MARKER_STALE, "NvidiaFsStale" },
                { GV_MARKER_NVIDIA_PEERMEM, GV_MARKER_FOREIGN, "NvidiaPeermemForeign" },
                { GV_MARKER_PLUGIN, GV_MARKER_INCONSISTENT, "PluginInconsistent" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                gv_nodesignal_verdict_t v = failing(cases[i].id, cases[i].st, NULL);
                _cleanup_free_ char *r = gv_nodesignal_failure_reason(&v);
                assert_string_equal(r, cases[i].want);
        }
}

/* ---- judge against a real store ---- */




static void publish(fixture_t *fx, gv_marker_id_t id)
{
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_store_publish(fx->store, id, NULL, false, NULL, NULL, &err) < 0)
                fail_msg("publish %s: %s", gv_marker_file(id), err->msg);
}

static void judge(gv_store_t *store, gv_marker_id_t last, gv_nodesignal_verdict_t *v)
{
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_nodesignal_judge(store, last, v, &err) < 0)
                fail_msg("judge: %s", err->msg);
}

static void test_judge(void **state)
{
        fixture_t *fx = *state;
        gv_nodesignal_verdict_t v, w;
        judge(NULL, GV_MARKER_PLUGIN, &v);
        assert_false(v.validated);
        assert_int_equal(v.failing, GV_MARKER_DRIVER);
        gv_nodesignal_verdict_clear(&v);

        judge(fx->store, GV_MARKER_PLUGIN, &v);
        assert_false(v.validated);
        assert_int_equal(v.failing, GV_MARKER_DRIVER);
        assert_int_equal(v.state, GV_MARKER_MISSING);
        assert_string_equal(v.detail, "not present");
        gv_nodesignal_verdict_clear(&v);

        publish(fx, GV_MARKER_DRIVER);
        publish(fx, GV_MARKER_TOOLKIT);
        judge(fx->store, GV_MARKER_PLUGIN, &v);
        assert_int_equal(v.failing, GV_MARKER_CUDA);
        gv_nodesignal_verdict_clear(&v);
        judge(fx->store, GV_MARKER_TOOLKIT, &v);
        assert_true(v.validated);
        assert_int_equal(v.failing, GV_MARKER_INVALID);
        gv_nodesignal_verdict_clear(&v);

        publish(fx, GV_MARKER_CUDA);
        publish(fx, GV_MARKER_PLUGIN);
        judge(fx->store, GV_MARKER_PLUGIN, &v);
        assert_true(v.validated);
        judge(fx->store, GV_MARKER_PLUGIN, &w);
        assert_true(gv_nodesignal_verdict_equal(&v, &w));
        gv_nodesignal_verdict_clear(&v);
        gv_nodesignal_verdict_clear(&w);

        /* toolkit-ready removed by hand: toolkit is named, not what lies downstream */
        _cleanup_free_ char *tk = gv_path_join(fx->dir, "toolkit-ready");
        assert_int_equal(unlink(tk), 0);
        judge(fx->store, GV_MARKER_PLUGIN, &v);
        assert_false(v.validated);
        assert_int_equal(v.failing, GV_MARKER_TOOLKIT);
        assert_int_equal(v.state, GV_MARKER_MISSING);
        judge(fx->store, GV_MARKER_DRIVER, &w);
        assert_true(w.validated);
        assert_false(gv_nodesignal_verdict_equal(&v, &w));
        gv_nodesignal_verdict_clear(&v);
        gv_nodesignal_verdict_clear(&w);

        /* another boot: the driver is stale */
        gv_store_options_t o = { .dir = fx->dir, .boot_id_path = fx->boot2, .read_only = true };
        gv_store_t *other = NULL;
        assert_int_equal(gv_store_open(&o, &other, NULL), 0);
        judge(other, GV_MARKER_PLUGIN, &v);
        assert_int_equal(v.failing, GV_MARKER_DRIVER);
        assert_int_equal(v.state, GV_MARKER_STALE);
        assert_non_null(strstr(v.detail, "boot"));
        gv_nodesignal_verdict_clear(&v);
        gv_store_close(&other);

        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_nodesignal_judge(fx->store, GV_MARKER_HOST_DRIVER, &v, &err), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pending_node),
                cmocka_unit_test(test_pod_progress),
                cmocka_unit_test(test_first_success),
                cmocka_unit_test(test_agreeing_node_no_patch),
                cmocka_unit_test(test_failure_after_success),
                cmocka_unit_test(test_without_condition_memory),
                cmocka_unit_test(test_taint_only_last_taint_removed),
                cmocka_unit_test(test_bad_node),
                cmocka_unit_test(test_failure_reason_names),
                cmocka_unit_test_setup_teardown(test_judge, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
