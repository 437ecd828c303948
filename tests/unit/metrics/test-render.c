/* SPDX-License-Identifier: Apache-2.0 */
/* gv_metrics_render: exact lines for every marker in every state, and the facts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "metrics/metrics.h"
#include "metrics-test.h"

static const gv_marker_state_t states[] = {
        GV_MARKER_READY, GV_MARKER_MISSING, GV_MARKER_STALE, GV_MARKER_INCONSISTENT, GV_MARKER_FOREIGN,
};

static char *render(const gv_metrics_snapshot_t *s)
{
        char *out = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_metrics_render(s, &out, &len, &err), 0);
        assert_null(err);
        assert_non_null(out);
        assert_int_equal(strlen(out), len);
        return out;
}

static void expect_line(const char *page, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void expect_line(const char *page, const char *fmt, ...)
{
        _cleanup_free_ char *line = NULL;
        va_list ap;
        va_start(ap, fmt);
        assert_true(vasprintf(&line, fmt, ap) > 0);
        va_end(ap);
        if (!has_line(page, line))
                fail_msg("line missing: %s\n--- page ---\n%s", line, page);
}

static void expect_no_prefix(const char *page, const char *prefix)
{
        if (count_prefix(page, prefix) != 0)
                fail_msg("unexpected line starting with %s\n--- page ---\n%s", prefix, page);
}

/* Every marker missing, nothing known: the whole page, byte for byte. */
static void test_golden_all_missing(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "node-a", "1.2.3");
        _cleanup_free_ char *page = render(&s);

        _cleanup_free_ char *expected = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&expected, &size);
        fputs("# HELP gpu_operator_node_metrics_ready_ts_seconds Unix time the metrics exporter started (upstream-compatible)\n"
              "# TYPE gpu_operator_node_metrics_ready_ts_seconds gauge\n"
              "gpu_operator_node_metrics_ready_ts_seconds{node=\"node-a\"} 0\n",
              f);
        static const char *const up[] = { "driver", "toolkit", "cuda", "plugin" };
        for (size_t i = 0; i < 4; i++) {
                fprintf(f, "# HELP gpu_operator_node_%s_ready 1 when %s-ready is valid for this boot and consistent%s, else 0 (upstream-compatible)\n",
                        up[i], up[i], i == 0 ? "" : " with its chain");
                fprintf(f, "# TYPE gpu_operator_node_%s_ready gauge\n", up[i]);
                fprintf(f, "gpu_operator_node_%s_ready{node=\"node-a\"} 0\n", up[i]);
        }
        fputs("# HELP gpu_operator_node_driver_validation 1 when the last driver validation succeeded and its marker is still valid, else 0 (upstream-compatible)\n"
              "# TYPE gpu_operator_node_driver_validation gauge\n"
              "gpu_operator_node_driver_validation{node=\"node-a\"} 0\n"
              "# HELP gpu_operator_node_driver_validation_last_success_ts_seconds Unix time of the last successful driver validation (driver-ready VALIDATED_AT), 0 when unknown (upstream-compatible)\n"
              "# TYPE gpu_operator_node_driver_validation_last_success_ts_seconds gauge\n"
              "gpu_operator_node_driver_validation_last_success_ts_seconds{node=\"node-a\"} 0\n"
              "# HELP gpu_operator_node_device_plugin_devices_total GPUs advertised by the device plugin as recorded in plugin-ready, 0 when not ready or unknown (upstream-compatible)\n"
              "# TYPE gpu_operator_node_device_plugin_devices_total untyped\n"
              "gpu_operator_node_device_plugin_devices_total{node=\"node-a\"} 0\n"
              "# HELP gpu_operator_node_device_plugin_validation_last_success_ts_seconds Unix time GPUs were last seen advertised by the device plugin (plugin-ready ready with DEVICE_PLUGIN_DEVICES >= 1), 0 when never since the exporter started (upstream-compatible)\n"
              "# TYPE gpu_operator_node_device_plugin_validation_last_success_ts_seconds gauge\n"
              "gpu_operator_node_device_plugin_validation_last_success_ts_seconds{node=\"node-a\"} 0\n"
              "# HELP gpu_operator_nvidia_pci_devices_total NVIDIA GPUs (VGA or 3D controller functions) on the PCI bus, 0 when sysfs is unreadable (upstream-compatible)\n"
              "# TYPE gpu_operator_nvidia_pci_devices_total untyped\n"
              "gpu_operator_nvidia_pci_devices_total{node=\"node-a\"} 0\n"
              "# HELP gpu_validator_component_ready 1 when the component's marker is valid for this boot and consistent with its whole chain, else 0\n"
              "# TYPE gpu_validator_component_ready gauge\n",
              f);
        static const char *const comps[] = { "driver", "nvidia-fs", "gdrcopy", "nvidia-peermem", "toolkit", "cuda", "plugin",
                                             "mofed", "cc-manager", "vfio-pci", "vgpu-manager", "vgpu-devices" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(comps); i++)
                fprintf(f, "gpu_validator_component_ready{node=\"node-a\",component=\"%s\"} 0\n", comps[i]);
        fputs("# HELP gpu_validator_marker_state 1 for the marker's current state (ready, missing, stale, inconsistent, foreign), 0 for the others\n"
              "# TYPE gpu_validator_marker_state gauge\n",
              f);
        static const char *const files[] = { "driver-ready", "host-driver-ready", "nvidia-fs-ready", "gdrcopy-ready",
                                             "nvidia-peermem-ready", "toolkit-ready", "cuda-ready", "plugin-ready",
                                             "mofed-ready", "cc-manager-ready", "vfio-pci-ready", "vgpu-manager-ready",
                                             "host-vgpu-manager-ready", "vgpu-devices-ready" };
        static const char *const st[] = { "ready", "missing", "stale", "inconsistent", "foreign" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(files); i++)
                for (size_t j = 0; j < 5; j++)
                        fprintf(f, "gpu_validator_marker_state{node=\"node-a\",marker=\"%s\",state=\"%s\"} %d\n", files[i],
                                st[j], j == 1);
        fputs("# HELP gpu_validator_last_success_timestamp_seconds Unix time the component last validated successfully (its marker's VALIDATED_AT); absent when unknown\n"
              "# TYPE gpu_validator_last_success_timestamp_seconds gauge\n"
              "# HELP gpu_validator_validation_duration_seconds How long the component's last successful validation took (VALIDATION_DURATION_SECONDS); absent when unknown\n"
              "# TYPE gpu_validator_validation_duration_seconds gauge\n"
              "# HELP gpu_validator_gpus GPUs seen by source: nvml (driver-ready GPU_COUNT, while driver-ready is ready) and pci (sysfs)\n"
              "# TYPE gpu_validator_gpus gauge\n"
              "# HELP gpu_validator_build_info Always 1; the version label names the running gpu-validator\n"
              "# TYPE gpu_validator_build_info gauge\n"
              "gpu_validator_build_info{node=\"node-a\",version=\"1.2.3\"} 1\n",
              f);
        fclose(f);
        assert_string_equal(page, expected);
}

/* Each marker in each state: exactly one state series is 1, and the readiness gauges follow READY only. */
static void test_each_marker_each_state(void **state)
{
        (void) state;
        for (int id = 0; id < GV_MARKER__MAX; id++) {
                for (size_t k = 0; k < GV_ARRAY_SIZE(states); k++) {
                        gv_metrics_snapshot_t s;
                        gv_metrics_snapshot_init(&s, "n1", "v");
                        s.markers[id].state = states[k];
                        _cleanup_free_ char *page = render(&s);
                        const char *file = gv_marker_file(id);
                        for (size_t j = 0; j < GV_ARRAY_SIZE(states); j++)
                                expect_line(page, "gpu_validator_marker_state{node=\"n1\",marker=\"%s\",state=\"%s\"} %d",
                                            file, gv_marker_state_name(states[j]), j == k ? 1 : 0);
                        /* every other marker stays missing */
                        for (int other = 0; other < GV_MARKER__MAX; other++)
                                if (other != id)
                                        expect_line(page,
                                                    "gpu_validator_marker_state{node=\"n1\",marker=\"%s\",state=\"missing\"} 1",
                                                    gv_marker_file(other));
                        assert_int_equal(count_prefix(page, "gpu_validator_marker_state{"), GV_MARKER__MAX * 5);

                        int ready = states[k] == GV_MARKER_READY;
                        if (gv_marker_companion_of(id) != GV_MARKER_INVALID) {
                                char prefix[160];
                                snprintf(prefix, sizeof(prefix),
                                         "gpu_validator_component_ready{node=\"n1\",component=\"%s\"}",
                                         gv_marker_component(id));
                                expect_no_prefix(page, prefix);
                        }
                        else
                                expect_line(page, "gpu_validator_component_ready{node=\"n1\",component=\"%s\"} %d",
                                            gv_marker_component(id), ready);
                        assert_int_equal(count_prefix(page, "gpu_validator_component_ready{"), GV_MARKER__MAX - 2);

                        expect_line(page, "gpu_operator_node_driver_ready{node=\"n1\"} %d", id == GV_MARKER_DRIVER && ready);
                        expect_line(page, "gpu_operator_node_driver_validation{node=\"n1\"} %d",
                                    id == GV_MARKER_DRIVER && ready);
                        expect_line(page, "gpu_operator_node_toolkit_ready{node=\"n1\"} %d", id == GV_MARKER_TOOLKIT && ready);
                        expect_line(page, "gpu_operator_node_cuda_ready{node=\"n1\"} %d", id == GV_MARKER_CUDA && ready);
                        expect_line(page, "gpu_operator_node_plugin_ready{node=\"n1\"} %d", id == GV_MARKER_PLUGIN && ready);
                }
        }
}

static void test_timestamps_and_durations(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "n1", "v");
        s.markers[GV_MARKER_DRIVER] = (gv_metrics_marker_t) { .state = GV_MARKER_READY, .have_validated_at = true,
                                                               .validated_at = 1767225600, .have_duration = true,
                                                               .duration_s = 2.5 };
        s.markers[GV_MARKER_TOOLKIT] = (gv_metrics_marker_t) { .state = GV_MARKER_STALE, .have_validated_at = true,
                                                                .validated_at = 1767225600.125 };
        s.markers[GV_MARKER_CUDA] = (gv_metrics_marker_t) { .state = GV_MARKER_INCONSISTENT, .have_duration = true,
                                                             .duration_s = 0 };
        s.markers[GV_MARKER_HOST_DRIVER] = (gv_metrics_marker_t) { .state = GV_MARKER_READY, .have_validated_at = true,
                                                                    .validated_at = 1 };
        _cleanup_free_ char *page = render(&s);
        expect_line(page, "gpu_operator_node_driver_validation_last_success_ts_seconds{node=\"n1\"} 1767225600");
        expect_line(page, "gpu_validator_last_success_timestamp_seconds{node=\"n1\",component=\"driver\"} 1767225600");
        expect_line(page, "gpu_validator_last_success_timestamp_seconds{node=\"n1\",component=\"toolkit\"} 1767225600.125");
        assert_int_equal(count_prefix(page, "gpu_validator_last_success_timestamp_seconds{"), 2);
        expect_line(page, "gpu_validator_validation_duration_seconds{node=\"n1\",component=\"driver\"} 2.5");
        expect_line(page, "gpu_validator_validation_duration_seconds{node=\"n1\",component=\"cuda\"} 0");
        assert_int_equal(count_prefix(page, "gpu_validator_validation_duration_seconds{"), 2);
}

static void test_gpu_counts(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "n1", "v");
        _cleanup_free_ char *none = render(&s);
        assert_int_equal(count_prefix(none, "gpu_validator_gpus{"), 0);
        expect_line(none, "gpu_operator_nvidia_pci_devices_total{node=\"n1\"} 0");

        s.have_nvml_gpus = true;
        s.nvml_gpus = 8;
        s.have_pci_gpus = true;
        s.pci_gpus = 7;
        _cleanup_free_ char *page = render(&s);
        expect_line(page, "gpu_validator_gpus{node=\"n1\",source=\"nvml\"} 8");
        expect_line(page, "gpu_validator_gpus{node=\"n1\",source=\"pci\"} 7");
        expect_line(page, "gpu_operator_nvidia_pci_devices_total{node=\"n1\"} 7");
}

static void test_plugin_devices_only_when_ready(void **state)
{
        (void) state;
        for (size_t k = 0; k < GV_ARRAY_SIZE(states); k++) {
                gv_metrics_snapshot_t s;
                gv_metrics_snapshot_init(&s, "n1", "v");
                s.markers[GV_MARKER_PLUGIN].state = states[k];
                s.plugin_devices = 4;
                _cleanup_free_ char *page = render(&s);
                expect_line(page, "gpu_operator_node_device_plugin_devices_total{node=\"n1\"} %d",
                            states[k] == GV_MARKER_READY ? 4 : 0);
        }
}

static void test_label_escaping(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "we\"ird\\no\nde", "1.0\"x");
        _cleanup_free_ char *page = render(&s);
        expect_line(page, "gpu_operator_node_driver_ready{node=\"we\\\"ird\\\\no\\nde\"} 0");
        expect_line(page, "gpu_validator_build_info{node=\"we\\\"ird\\\\no\\nde\",version=\"1.0\\\"x\"} 1");
}

/* Every sample line belongs to a family announced just before by HELP and TYPE. */
static void test_help_and_type_for_every_family(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        gv_metrics_snapshot_init(&s, "n1", "v");
        s.have_nvml_gpus = s.have_pci_gpus = true;
        for (int i = 0; i < GV_MARKER__MAX; i++)
                s.markers[i] = (gv_metrics_marker_t) { .state = GV_MARKER_READY, .have_validated_at = true,
                                                       .validated_at = 5, .have_duration = true, .duration_s = 1 };
        _cleanup_free_ char *page = render(&s);
        char family[128] = "";
        int helps = 0, types = 0;
        for (char *line = page; *line;) {
                char *nl = strchr(line, '\n');
                assert_non_null(nl); /* every line ends with a newline */
                *nl = '\0';
                if (strncmp(line, "# HELP ", 7) == 0) {
                        helps++;
                        size_t n = strcspn(line + 7, " ");
                        assert_true(n < sizeof(family));
                        memcpy(family, line + 7, n);
                        family[n] = '\0';
                } else if (strncmp(line, "# TYPE ", 7) == 0) {
                        types++;
                        assert_int_equal(strncmp(line + 7, family, strlen(family)), 0);
                } else {
                        size_t n = strcspn(line, "{ ");
                        assert_int_equal(n, strlen(family));
                        assert_int_equal(strncmp(line, family, n), 0);
                }
                line = nl + 1;
        }
        assert_int_equal(helps, 16);
        assert_int_equal(types, 16);
}

static void test_rfc3339(void **state)
{
        (void) state;
        double t = -1;
        assert_int_equal(gv_metrics_parse_rfc3339("1970-01-01T00:00:00Z", &t), 0);
        assert_true(t == 0);
        assert_int_equal(gv_metrics_parse_rfc3339("2026-01-01T00:00:00Z", &t), 0);
        assert_true(t == 1767225600);
        assert_int_equal(gv_metrics_parse_rfc3339("2026-01-01T00:00:00.25Z", &t), 0);
        assert_true(fabs(t - 1767225600.25) < 1e-6);
        assert_int_equal(gv_metrics_parse_rfc3339("2026-01-01T02:00:00+02:00", &t), 0);
        assert_true(t == 1767225600);
        assert_int_equal(gv_metrics_parse_rfc3339("2025-12-31t19:00:00-05:00", &t), 0);
        assert_true(t == 1767225600);
        assert_int_equal(gv_metrics_parse_rfc3339("2016-12-31T23:59:60Z", &t), 0); /* leap second */
        assert_true(t == 1483228800);
        assert_int_equal(gv_metrics_parse_rfc3339("2024-02-29T12:00:00Z", &t), 0);

        t = 42;
        static const char *const bad[] = {
                "", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00Z", "2026-13-01T00:00:00Z",
                "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00.Z",
                "2026-01-01T00:00:00Zjunk", "2026-01-01T00:00:00+0200", "26-01-01T00:00:00Z", "now",
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                if (gv_metrics_parse_rfc3339(bad[i], &t) != -EINVAL)
                        fail_msg("accepted '%s'", bad[i]);
        }
        assert_int_equal(gv_metrics_parse_rfc3339(NULL, &t), -EINVAL);
        assert_true(t == 42);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_golden_all_missing),
                cmocka_unit_test(test_each_marker_each_state),
                cmocka_unit_test(test_timestamps_and_durations),
                cmocka_unit_test(test_gpu_counts),
                cmocka_unit_test(test_plugin_devices_only_when_ready),
                cmocka_unit_test(test_label_escaping),
                cmocka_unit_test(test_help_and_type_for_every_family),
                cmocka_unit_test(test_rfc3339),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
