/* SPDX-License-Identifier: Apache-2.0 */
/* Prometheus text exposition format 0.0.4 of a snapshot.  Pure: no I/O but the memory stream. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "metrics.h"

/* The upstream readiness gauges and the marker each one follows. */
static const struct {
        const char *name;
        gv_marker_id_t marker;
        const char *help;
} upstream_ready[] = {
        { "gpu_operator_node_driver_ready", GV_MARKER_DRIVER,
          "1 when driver-ready is valid for this boot and consistent, else 0 (upstream-compatible)" },
        { "gpu_operator_node_toolkit_ready", GV_MARKER_TOOLKIT,
          "1 when toolkit-ready is valid for this boot and consistent with its chain, else 0 (upstream-compatible)" },
        { "gpu_operator_node_cuda_ready", GV_MARKER_CUDA,
          "1 when cuda-ready is valid for this boot and consistent with its chain, else 0 (upstream-compatible)" },
        { "gpu_operator_node_plugin_ready", GV_MARKER_PLUGIN,
          "1 when plugin-ready is valid for this boot and consistent with its chain, else 0 (upstream-compatible)" },
};

static const gv_marker_state_t all_states[] = {
        GV_MARKER_READY, GV_MARKER_MISSING, GV_MARKER_STALE, GV_MARKER_INCONSISTENT, GV_MARKER_FOREIGN,
};

/* Markers that stand for a component (host-driver-ready and host-vgpu-manager-ready are companions, not ones). */
static bool is_component(gv_marker_id_t id)
{
        return gv_marker_companion_of(id) == GV_MARKER_INVALID;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void label_value(FILE *f, const char *v)
{
        fputc('"', f);
        for (const char *c = v ? v : ""; *c; c++) {
                if (*c == '\\')
                        fputs("\\\\", f);
                else if (*c == '"')
                        fputs("\\\"", f);
                else if (*c == '\n')
                        fputs("\\n", f);
                else
                        fputc(*c, f);
        }
        fputc('"', f);
}

static void value(FILE *f, double v)
{
        if (isnan(v))
                fputs("NaN", f);
        else if (isinf(v))
                fputs(v > 0 ? "+Inf" : "-Inf", f);
        else if (v == floor(v) && fabs(v) < 9007199254740992.0)
                fprintf(f, "%.0f", v);
        else
                fprintf(f, "%.15g", v);
}

/*
 * One sample: name{node="..."[,k="v"]...} value.  @kv is a NULL-terminated
 * list of label names and values, alternating; may be NULL.
 */
static void sample(FILE *f, const gv_metrics_snapshot_t *s, const char *name, const char *const *kv, double v)
{
        fprintf(f, "%s{node=", name);
        label_value(f, s->node);
        for (size_t i = 0; kv && kv[i] && kv[i + 1]; i += 2) {
                fprintf(f, ",%s=", kv[i]);
                label_value(f, kv[i + 1]);
        }
        fputs("} ", f);
        value(f, v);
        fputc('\n', f);
}

static double ready(const gv_metrics_snapshot_t *s, gv_marker_id_t id)
{
        return s->markers[id].state == GV_MARKER_READY ? 1 : 0;
}

static void render_upstream(FILE *f, const gv_metrics_snapshot_t *s)
{
        family(f, "gpu_operator_node_metrics_ready_ts_seconds", "gauge",
               "Unix time the metrics exporter started (upstream-compatible)");
        sample(f, s, "gpu_operator_node_metrics_ready_ts_seconds", NULL, s->started_at);

        for (size_t i = 0; i < GV_ARRAY_SIZE(upstream_ready); i++) {
                family(f, upstream_ready[i].name, "gauge", upstream_ready[i].help);
                sample(f, s, upstream_ready[i].name, NULL, ready(s, upstream_ready[i].marker));
        }

        family(f, "gpu_operator_node_driver_validation", "gauge",
               "1 when the last driver validation succeeded and its marker is still valid, else 0 (upstream-compatible)");
        sample(f, s, "gpu_operator_node_driver_validation", NULL, ready(s, GV_MARKER_DRIVER));

        const gv_metrics_marker_t *drv = &s->markers[GV_MARKER_DRIVER];
        family(f, "gpu_operator_node_driver_validation_last_success_ts_seconds", "gauge",
               "Unix time of the last successful driver validation (driver-ready VALIDATED_AT), 0 when unknown "
               "(upstream-compatible)");
        sample(f, s, "gpu_operator_node_driver_validation_last_success_ts_seconds", NULL,
               drv->have_validated_at ? drv->validated_at : 0);

        /* Declared untyped: a gauge named *_total fails promtool's lint; the names are upstream's. */
        family(f, "gpu_operator_node_device_plugin_devices_total", "untyped",
               "GPUs advertised by the device plugin as recorded in plugin-ready, 0 when not ready or unknown "
               "(upstream-compatible)");
        sample(f, s, "gpu_operator_node_device_plugin_devices_total", NULL,
               s->markers[GV_MARKER_PLUGIN].state == GV_MARKER_READY ? (double) s->plugin_devices : 0);

        family(f, "gpu_operator_node_device_plugin_validation_last_success_ts_seconds", "gauge",
               "Unix time GPUs were last seen advertised by the device plugin (plugin-ready ready with "
               "DEVICE_PLUGIN_DEVICES >= 1), 0 when never since the exporter started (upstream-compatible)");
        sample(f, s, "gpu_operator_node_device_plugin_validation_last_success_ts_seconds", NULL, s->plugin_seen_at);

        family(f, "gpu_operator_nvidia_pci_devices_total", "untyped",
               "NVIDIA GPUs (VGA or 3D controller functions) on the PCI bus, 0 when sysfs is unreadable "
               "(upstream-compatible)");
        sample(f, s, "gpu_operator_nvidia_pci_devices_total", NULL, s->have_pci_gpus ? (double) s->pci_gpus : 0);
}

static void render_ours(FILE *f, const gv_metrics_snapshot_t *s)
{
        family(f, "gpu_validator_component_ready", "gauge",
               "1 when the component's marker is valid for this boot and consistent with its whole chain, else 0");
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                if (!is_component(i))
                        continue;
                const char *kv[] = { "component", gv_marker_component(i), NULL };
                sample(f, s, "gpu_validator_component_ready", kv, ready(s, i));
        }

        family(f, "gpu_validator_marker_state", "gauge",
               "1 for the marker's current state (ready, missing, stale, inconsistent, foreign), 0 for the others");
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                for (size_t j = 0; j < GV_ARRAY_SIZE(all_states); j++) {
                        const char *kv[] = { "marker", gv_marker_file(i), "state",
                                             gv_marker_state_name(all_states[j]), NULL };
                        sample(f, s, "gpu_validator_marker_state", kv,
                               s->markers[i].state == all_states[j] ? 1 : 0);
                }
        }

        family(f, "gpu_validator_last_success_timestamp_seconds", "gauge",
               "Unix time the component last validated successfully (its marker's VALIDATED_AT); absent when unknown");
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                if (!is_component(i) || !s->markers[i].have_validated_at)
                        continue;
                const char *kv[] = { "component", gv_marker_component(i), NULL };
                sample(f, s, "gpu_validator_last_success_timestamp_seconds", kv, s->markers[i].validated_at);
        }

        family(f, "gpu_validator_validation_duration_seconds", "gauge",
               "How long the component's last successful validation took (VALIDATION_DURATION_SECONDS); absent when "
               "unknown");
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                if (!is_component(i) || !s->markers[i].have_duration)
                        continue;
                const char *kv[] = { "component", gv_marker_component(i), NULL };
                sample(f, s, "gpu_validator_validation_duration_seconds", kv, s->markers[i].duration_s);
        }

        family(f, "gpu_validator_gpus", "gauge",
               "GPUs seen by source: nvml (driver-ready GPU_COUNT, while driver-ready is ready) and pci (sysfs)");
        if (s->have_nvml_gpus) {
                const char *kv[] = { "source", "nvml", NULL };
                sample(f, s, "gpu_validator_gpus", kv, (double) s->nvml_gpus);
        }
        if (s->have_pci_gpus) {
                const char *kv[] = { "source", "pci", NULL };
                sample(f, s, "gpu_validator_gpus", kv, (double) s->pci_gpus);
        }

        if (s->revalidations.present) {
                family(f, "gpu_validator_revalidations_total", "counter",
                       "Re-validations started by `gpu-validator watch` after the node changed, by reason");
                for (int i = 0; i < GV_REVAL__MAX; i++) {
                        const char *kv[] = { "reason", gv_revalidation_reason_name(i), NULL };
                        sample(f, s, "gpu_validator_revalidations_total", kv, (double) s->revalidations.count[i]);
                }
        }

        family(f, "gpu_validator_build_info", "gauge", "Always 1; the version label names the running gpu-validator");
        const char *kv[] = { "version", s->version ? s->version : "unknown", NULL };
        sample(f, s, "gpu_validator_build_info", kv, 1);
}

int gv_metrics_render(const gv_metrics_snapshot_t *s, char **out, size_t *len, gv_error_t **err)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return gv_error_set(err, errno, GV_REASON_INTERNAL, "open_memstream: %s", strerror(errno));
        render_upstream(f, s);
        render_ours(f, s);
        bool failed = ferror(f);
        if (fclose(f) != 0 || failed) {
                free(buf);
                gv_error_oom(err);
                return gv_error_prefix(err, "rendering metrics");
        }
        *out = buf;
        if (len)
                *len = size;
        return 0;
}
