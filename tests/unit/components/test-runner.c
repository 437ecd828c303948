/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runner: marker protocol, retries and their backoff (FR17), non-retryable
 * failures ending at once (FR06, FR13), interruption, the component table.
 * Uses scripted components so that no driver is involved.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "components/component.h"
#include "components-test.h"

/* ---- backoff (FR17) ---- */

static void test_fr17_backoff_sequence(void **state)
{
        (void) state;
        /* SLEEP_INTERVAL_SECONDS=5, cap 60: 5 10 20 40 60 60 ... (no jitter) */
        const double want[] = { 5, 10, 20, 40, 60, 60, 60 };
        for (unsigned i = 0; i < 7; i++)
                assert_true(fabs(gv_backoff_delay_s(i + 1, 5, 60, 0.0) - want[i]) < 1e-9);
        /* jitter only shortens, by at most 20 %, so the cap holds */
        for (unsigned a = 1; a < 40; a++)
                for (double j = 0; j < 1; j += 0.125) {
                        double d = gv_backoff_delay_s(a, 5, 60, j);
                        double base = gv_backoff_delay_s(a, 5, 60, 0.0);
                        assert_true(d <= base + 1e-9);
                        assert_true(d >= 0.8 * base - 1e-9);
                        assert_true(d <= 60.0);
                }
        /* huge attempt numbers do not overflow */
        assert_true(fabs(gv_backoff_delay_s(100000, 5, 60, 0.0) - 60) < 1e-9);
        /* cap below the first step: constant first step */
        assert_true(fabs(gv_backoff_delay_s(3, 5, 1, 0.0) - 5) < 1e-9);
        /* 0 s first step never spins */
        assert_true(gv_backoff_delay_s(1, 0, 0, 0.0) >= 0.1 - 1e-9);
        /* out-of-range jitter is clamped */
        assert_true(gv_backoff_delay_s(1, 5, 60, -3) == 5.0);
        assert_true(gv_backoff_delay_s(1, 5, 60, 7) >= 4.0);
        assert_true(gv_backoff_delay_s(1, 5, 60, NAN) == 5.0);
}

/* ---- scripted components ---- */

typedef struct script {
        unsigned calls;
        unsigned fail_times;  /* fail this many times, then succeed */
        gv_reason_t reason;
        bool skip;
        bool set_stop;        /* set *stop during validate */
        unsigned seen_dev_node_wait_s[8]; /* cfg->driver.dev_node_wait_s handed to each call */
        struct timespec at[8];            /* when each call came (CLOCK_MONOTONIC) */
} script_t;

static script_t script;
static volatile sig_atomic_t stop_flag;

static int scripted_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        if (script.calls < 8) {
                script.seen_dev_node_wait_s[script.calls] = cfg->driver.dev_node_wait_s;
                clock_gettime(CLOCK_MONOTONIC, &script.at[script.calls]);
        }
        script.calls++;
        if (script.set_stop)
                stop_flag = 1;
        if (script.calls <= script.fail_times)
                return gv_error_set(err, EIO, script.reason, "scripted failure %u", script.calls);
        gv_result_t r = { 0 };
        r.skipped = script.skip;
        r.summary = strdup("scripted ok");
        assert_int_equal(gv_kvlist_set(&r.facts, "IS_HOST_DRIVER", "true", NULL), 0);
        r.host_driver = true;
        *result = r;
        return 0;
}

static const gv_component_t scripted_driver = {
        .name = "driver", .marker = GV_MARKER_DRIVER, .validate = scripted_validate,
};
static const gv_component_t scripted_toolkit = {
        .name = "toolkit", .marker = GV_MARKER_TOOLKIT, .validate = scripted_validate,
};

typedef struct world {
        char *dir;
        gv_store_t *store;
        gv_config_t cfg;
        th_log_t log;
        gv_run_report_t rep;
} world_t;

static int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        w->dir = th_tmpdir();
        w->store = th_store_open(w->dir);
        th_log_open(&w->log);
        memset(&script, 0, sizeof(script));
        stop_flag = 0;
        w->cfg = (gv_config_t) {
                .output_dir = gv_store_dir(w->store),
                .sleep_interval_s = 0, /* 0.1 s steps */
                .max_backoff_s = 0,
                .stop = &stop_flag,
                .log = th_log_fn,
                .log_userdata = &w->log,
        };
        *state = w;
        return 0;
}

static int teardown(void **state)
{
        world_t *w = *state;
        gv_run_report_clear(&w->rep);
        gv_store_close(&w->store);
        th_log_close(&w->log);
        th_rm_rf(w->dir);
        free(w->dir);
        free(w);
        return 0;
}

static gv_marker_state_t state_of(world_t *w, gv_marker_id_t id)
{
        gv_marker_info_t info = { 0 };
        assert_int_equal(gv_store_inspect(w->store, id, &info, NULL), 0);
        gv_marker_state_t s = info.state;
        gv_marker_info_clear(&info);
        return s;
}

static double secs_between(const struct timespec *a, const struct timespec *b)
{
        return (double) (b->tv_sec - a->tv_sec) + (double) (b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * FR17 schedule: a retry never sleeps past the --max-wait deadline; the last
 * attempt comes right at the deadline (runner.c clamps the backoff delay), and
 * each attempt's device-node wait is clamped to what the deadline leaves.
 * With a 5 s first step and a 1 s bound: attempts at t = 0 and t = 1 s, then
 * the timeout.  Without the clamp the second attempt would come after 4-5 s.
 */
static void test_fr17_schedule_within_max_wait(void **state)
{
        world_t *w = *state;
        w->cfg.with_wait = true;
        w->cfg.max_wait_s = 1;
        w->cfg.sleep_interval_s = 5;
        w->cfg.max_backoff_s = 60;
        w->cfg.driver.dev_node_wait_s = 30;
        script.fail_times = 1000;
        script.reason = GV_REASON_DEVICE_NODE_MISSING;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), -ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        assert_int_equal(w->rep.attempts, 2);
        assert_int_equal(script.calls, 2);
        double second = secs_between(&a, &script.at[1]);
        assert_true(second >= 0.95);
        assert_true(second < 1.5);
        assert_true(secs_between(&a, &b) < 1.6);
        assert_non_null(strstr(w->log.buf, "retrying in 1.0 s"));
        assert_int_equal(w->rep.reason, GV_REASON_TIMEOUT);
        assert_int_equal(w->rep.last_reason, GV_REASON_DEVICE_NODE_MISSING);
        /* the device-node wait never outlasts the deadline: 1 s left, then none */
        assert_int_equal(script.seen_dev_node_wait_s[0], 1);
        assert_true(script.seen_dev_node_wait_s[1] <= 1);
}

/* Without a deadline the configured device-node wait reaches the component untouched. */
static void test_dev_node_wait_unclamped_without_deadline(void **state)
{
        world_t *w = *state;
        w->cfg.driver.dev_node_wait_s = 30;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_int_equal(script.seen_dev_node_wait_s[0], 30);
        gv_run_report_clear(&w->rep);
        script.calls = 0;
        w->cfg.with_wait = true;
        w->cfg.max_wait_s = 0; /* --wait without a bound */
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_int_equal(script.seen_dev_node_wait_s[0], 30);
        gv_run_report_clear(&w->rep);
        script.calls = 0;
        w->cfg.max_wait_s = 600; /* a bound far away leaves the wait as configured */
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_int_equal(script.seen_dev_node_wait_s[0], 30);
}

static void test_success_publishes(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_int_equal(w->rep.status, 0);
        assert_int_equal(w->rep.attempts, 1);
        assert_string_equal(w->rep.message, "scripted ok");
        assert_int_equal(strlen(w->rep.generation), GV_GENERATION_HEX_LEN);
        assert_true(w->rep.duration_s >= 0);
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_READY);
        assert_true(th_exists(w->dir, "out/host-driver-ready"));
        assert_non_null(strstr(w->log.buf, "ready: scripted ok"));
}

static void test_failure_without_wait_removes_marker(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        gv_run_report_clear(&w->rep);
        assert_int_equal(gv_component_run(&scripted_toolkit, &w->cfg, w->store, &w->rep), 0);
        gv_run_report_clear(&w->rep);
        script.calls = 0;
        script.fail_times = 100;
        script.reason = GV_REASON_DRIVER_NOT_LOADED; /* retryable, but no --wait */
        assert_true(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep) < 0);
        assert_int_equal(w->rep.attempts, 1);
        assert_int_equal(w->rep.reason, GV_REASON_DRIVER_NOT_LOADED);
        assert_non_null(strstr(w->rep.message, "scripted failure 1"));
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_MISSING);
        assert_int_equal(state_of(w, GV_MARKER_TOOLKIT), GV_MARKER_MISSING);
        assert_false(th_exists(w->dir, "out/host-driver-ready"));
        /* the log names component and reason */
        assert_non_null(strstr(w->log.buf, "|driver|driver-not-loaded|attempt 1: scripted failure 1"));
}

static void test_retryable_failures_are_retried(void **state)
{
        world_t *w = *state;
        w->cfg.with_wait = true;
        script.fail_times = 3;
        script.reason = GV_REASON_DEVICE_NODE_MISSING;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_int_equal(w->rep.attempts, 4);
        assert_int_equal(script.calls, 4);
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_READY);
        assert_non_null(strstr(w->log.buf, "retrying in"));
}

static void test_non_retryable_ends_at_once_with_wait(void **state)
{
        world_t *w = *state;
        w->cfg.with_wait = true;
        const gv_reason_t no_retry[] = { GV_REASON_LIBRARY_NOT_FOUND, GV_REASON_PERMISSION_DENIED,
                                         GV_REASON_DRIVER_MISMATCH, GV_REASON_CONFIG };
        for (size_t i = 0; i < 4; i++) {
                script.calls = 0;
                script.fail_times = 100;
                script.reason = no_retry[i];
                gv_run_report_clear(&w->rep);
                assert_true(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep) < 0);
                assert_int_equal(w->rep.attempts, 1);
                assert_int_equal(w->rep.reason, no_retry[i]);
        }
}

static void test_fr17_max_wait_bounds_the_run(void **state)
{
        world_t *w = *state;
        w->cfg.with_wait = true;
        w->cfg.max_wait_s = 1;
        script.fail_times = 1000;
        script.reason = GV_REASON_DRIVER_NOT_LOADED;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), -ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        assert_true(s >= 0.95);
        assert_true(s < 1.6);
        assert_true(fabs(w->rep.duration_s - s) < 0.2);
        assert_int_equal(w->rep.reason, GV_REASON_TIMEOUT);
        assert_int_equal(w->rep.last_reason, GV_REASON_DRIVER_NOT_LOADED);
        assert_non_null(strstr(w->rep.message, "driver-not-loaded"));
        assert_true(w->rep.attempts >= 5 && w->rep.attempts <= 14); /* 0.1 s steps, jitter up to -20 % */
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_MISSING);
}

static void *stop_later(void *arg)
{
        (void) arg;
        usleep(250 * 1000);
        stop_flag = 1;
        return NULL;
}

static void test_interrupted_during_backoff(void **state)
{
        world_t *w = *state;
        w->cfg.with_wait = true;
        w->cfg.sleep_interval_s = 30; /* a long sleep that the stop request must cut short */
        w->cfg.max_backoff_s = 60;
        script.fail_times = 1000;
        script.reason = GV_REASON_DRIVER_NOT_LOADED;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, stop_later, NULL), 0);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_true(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep) < 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        pthread_join(t, NULL);
        double s = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        assert_true(s < 1.0);
        assert_int_equal(w->rep.reason, GV_REASON_INTERRUPTED);
        assert_int_equal(w->rep.attempts, 1);
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_MISSING);
}

static void test_interrupted_during_validate_publishes_nothing(void **state)
{
        world_t *w = *state;
        script.set_stop = true; /* validate succeeds but a stop arrived meanwhile */
        assert_true(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep) < 0);
        assert_int_equal(w->rep.reason, GV_REASON_INTERRUPTED);
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_MISSING);
}

static void test_stop_before_start(void **state)
{
        world_t *w = *state;
        stop_flag = 1;
        assert_true(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep) < 0);
        assert_int_equal(w->rep.reason, GV_REASON_INTERRUPTED);
        assert_int_equal(script.calls, 0);
}

static void test_dependency_not_ready(void **state)
{
        world_t *w = *state;
        assert_true(gv_component_run(&scripted_toolkit, &w->cfg, w->store, &w->rep) < 0);
        assert_int_equal(w->rep.reason, GV_REASON_DEPENDENCY);
        assert_non_null(strstr(w->rep.message, "driver-ready"));
        assert_int_equal(script.calls, 0); /* validate is not even tried */
}

static void test_dependant_records_parent_generation(void **state)
{
        world_t *w = *state;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        char gen[GV_GENERATION_HEX_LEN + 1];
        memcpy(gen, w->rep.generation, sizeof(gen));
        gv_run_report_clear(&w->rep);
        assert_int_equal(gv_component_run(&scripted_toolkit, &w->cfg, w->store, &w->rep), 0);
        gv_marker_info_t info = { 0 };
        assert_int_equal(gv_store_inspect(w->store, GV_MARKER_TOOLKIT, &info, NULL), 0);
        assert_int_equal(info.state, GV_MARKER_READY);
        assert_string_equal(gv_kvlist_get(&info.content, gv_marker_generation_key(GV_MARKER_DRIVER)), gen);
        gv_marker_info_clear(&info);
}

static void test_skip_writes_no_marker(void **state)
{
        world_t *w = *state;
        script.skip = true;
        assert_int_equal(gv_component_run(&scripted_driver, &w->cfg, w->store, &w->rep), 0);
        assert_true(w->rep.skipped);
        assert_int_equal(state_of(w, GV_MARKER_DRIVER), GV_MARKER_MISSING);
}

static void test_component_table(void **state)
{
        (void) state;
        const gv_component_t *const *all = gv_components_all();
        /* every upstream COMPONENT value but metrics, in chain order (upstream-components.md) */
        const char *names[] = { "mofed",   "driver", "nvidia-fs",  "gdrcopy",  "nvidia-peermem", "toolkit",
                                "cuda",    "plugin", "cc-manager", "vfio-pci", "vgpu-manager",   "vgpu-devices" };
        const gv_marker_id_t markers[] = { GV_MARKER_MOFED,        GV_MARKER_DRIVER,      GV_MARKER_NVIDIA_FS,
                                           GV_MARKER_GDRCOPY,      GV_MARKER_NVIDIA_PEERMEM, GV_MARKER_TOOLKIT,
                                           GV_MARKER_CUDA,         GV_MARKER_PLUGIN,      GV_MARKER_CC_MANAGER,
                                           GV_MARKER_VFIO_PCI,     GV_MARKER_VGPU_MANAGER, GV_MARKER_VGPU_DEVICES };
        for (size_t i = 0; i < (sizeof(names) / sizeof(names[0])); i++) {
                assert_non_null(all[i]);
                assert_string_equal(all[i]->name, names[i]);
                assert_int_equal(all[i]->marker, markers[i]);
                assert_ptr_equal(gv_component_find(names[i]), all[i]);
        }
        assert_null(all[(sizeof(names) / sizeof(names[0]))]);
        assert_null(gv_component_find("metrics"));
        assert_null(gv_component_find(NULL));
}

static void test_cuda_and_plugin_need_node(void **state)
{
        (void) state;
        /* cuda.c / plugin.c: without NODE_NAME (and OPERATOR_NAMESPACE) it is a config error, before any
         * API call; WITH_WORKLOAD=false publishes cuda-ready with no check (docs/workload-lifecycle.md) */
        gv_config_t cfg = { .workload.with_workload = true };
        gv_result_t res = { 0 };
        gv_error_t *err = NULL;
        assert_true(gv_component_find("cuda")->validate(&cfg, NULL, &res, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        gv_error_free(&err);
        cfg.workload.with_workload = false;
        assert_int_equal(gv_component_find("cuda")->validate(&cfg, NULL, &res, &err), 0);
        assert_non_null(strstr(res.summary, "WITH_WORKLOAD=false"));
        gv_result_clear(&res);
        assert_true(gv_component_find("plugin")->validate(&cfg, NULL, &res, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "NODE_NAME"));
        gv_error_free(&err);
}

static void test_clear_functions_accept_empty(void **state)
{
        (void) state;
        /* empty and NULL are accepted and stay zero */
        gv_result_t r = { 0 };
        gv_result_clear(&r);
        assert_null(r.summary);
        assert_int_equal(r.facts.n, 0);
        gv_result_clear(NULL);
        gv_run_report_t rep = { 0 };
        gv_run_report_clear(&rep);
        assert_null(rep.message);
        gv_run_report_clear(NULL);

        /* a filled result and report are freed (ASan would see a leak) and zeroed */
        r.summary = strdup("s");
        r.warning = strdup("w");
        r.skipped = true;
        r.host_driver = true;
        assert_int_equal(gv_kvlist_set(&r.facts, "K", "v", NULL), 0);
        assert_int_equal(r.facts.n, 1);
        gv_result_clear(&r);
        assert_null(r.summary);
        assert_null(r.warning);
        assert_null(r.facts.items);
        assert_int_equal(r.facts.n, 0);
        assert_false(r.skipped);
        assert_false(r.host_driver);

        rep.message = strdup("m");
        rep.warning = strdup("w");
        rep.attempts = 3;
        rep.status = -EIO;
        rep.reason = GV_REASON_IO;
        rep.generation[0] = 'a';
        gv_run_report_clear(&rep);
        assert_null(rep.message);
        assert_null(rep.warning);
        assert_int_equal(rep.attempts, 0);
        assert_int_equal(rep.status, 0);
        assert_int_equal(rep.reason, GV_REASON_NONE);
        assert_int_equal(rep.generation[0], '\0');
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fr17_backoff_sequence),
                T(test_success_publishes),
                T(test_failure_without_wait_removes_marker),
                T(test_retryable_failures_are_retried),
                T(test_non_retryable_ends_at_once_with_wait),
                T(test_fr17_max_wait_bounds_the_run),
                T(test_fr17_schedule_within_max_wait),
                T(test_dev_node_wait_unclamped_without_deadline),
                T(test_interrupted_during_backoff),
                T(test_interrupted_during_validate_publishes_nothing),
                T(test_stop_before_start),
                T(test_dependency_not_ready),
                T(test_dependant_records_parent_generation),
                T(test_skip_writes_no_marker),
                cmocka_unit_test(test_component_table),
                cmocka_unit_test(test_cuda_and_plugin_need_node),
                cmocka_unit_test(test_clear_functions_accept_empty),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
