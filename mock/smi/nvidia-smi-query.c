/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi -q and -q -x: the header leaves, then each GPU's element
 * written from the table of fields by smi_emit_gpu() (smi-emit.c).  See
 * nvidia-smi-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

/*
 * -d names (nvidia-smi(1) "-d, --display": MEMORY, UTILIZATION, ECC, TEMPERATURE, POWER, CLOCK,
 * COMPUTE, PIDS, PERFORMANCE, SUPPORTED_CLOCKS, PAGE_RETIREMENT, ACCOUNTING, ENCODER_STATS,
 * SUPPORTED_GPU_TARGET_TEMP, VOLTAGE, FBC_STATS, ROW_REMAPPER, RESET_STATUS, GSP_FIRMWARE_VERSION,
 * POWER_PROFILES, POWER_SMOOTHING) and the top-level `-q -x` elements each one shows.
 */
static const struct {
        const char *name;
        const char *sections[8];
} displays[] = {
        { "MEMORY", { "fb_memory_usage", "bar1_memory_usage", "cc_protected_memory_usage" } },
        { "UTILIZATION", { "utilization" } },
        { "ECC", { "ecc_mode", "ecc_errors" } },
        { "TEMPERATURE", { "temperature" } },
        { "POWER", { "power_readings", "gpu_power_readings", "module_power_readings", "gpu_memory_power_readings" } },
        { "CLOCK", { "clocks", "applications_clocks", "default_applications_clocks", "deferred_clocks", "max_clocks",
                     "max_customer_boost_clocks", "clock_policy" } },
        { "COMPUTE", { "compute_mode" } },
        { "PIDS", { "processes" } },
        { "PERFORMANCE", { "performance_state", "clocks_event_reasons", "clocks_throttle_reasons",
                           "clocks_event_reasons_counters" } },
        { "SUPPORTED_CLOCKS", { "supported_clocks" } },
        { "PAGE_RETIREMENT", { "retired_pages" } },
        { "ACCOUNTING", { "accounting_mode", "accounting_mode_buffer_size", "accounted_processes" } },
        { "ENCODER_STATS", { "encoder_stats" } },
        { "SUPPORTED_GPU_TARGET_TEMP", { "supported_gpu_target_temp" } },
        { "VOLTAGE", { "voltage" } },
        { "FBC_STATS", { "fbc_stats" } },
        { "ROW_REMAPPER", { "remapped_rows" } },
        { "RESET_STATUS", { "gpu_reset_status" } },
        { "GSP_FIRMWARE_VERSION", { "gsp_firmware_version" } },
        { "POWER_PROFILES", { "power_profiles" } },
        { "POWER_SMOOTHING", { "power_smoothing" } },
};

/* The top-level sections of the -d list @display into @out (room for @cap, NULL-terminated); -1 for an unknown name. */
static int display_sections(const char *display, const char **out, size_t cap)
{
        size_t n = 0;
        for (const char *p = display; p;) {
                _cleanup_free_ char *tok = NULL;
                if (smi_next_token(&p, &tok) < 0)
                        return -1;
                size_t k = 0;
                while (k < GV_ARRAY_SIZE(displays) && strcasecmp(displays[k].name, tok) != 0)
                        k++;
                if (k == GV_ARRAY_SIZE(displays))
                        return -1;
                for (size_t j = 0; j < GV_ARRAY_SIZE(displays[k].sections) && displays[k].sections[j]; j++)
                        if (n + 1 < cap)
                                out[n++] = displays[k].sections[j];
        }
        out[n] = NULL;
        return 0;
}

int nvsmi_view_query(smi_t *s, bool xml, const char *display)
{
        const char *only[64];
        if (display && display_sections(display, only, GV_ARRAY_SIZE(only)) < 0) {
                printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
                return SMI_EXIT_INVALID_ARG;
        }
        smi_emit_t e = { .f = stdout, .xml = xml, .branch = smi_driver_branch(s->driver_version),
                         .only = display ? only : NULL };
        _cleanup_free_ char *ts = nvsmi_now_text(false);
        smi_emit_begin(&e);
        smi_emit_leaf(&e, "timestamp", "Timestamp", "%s", ts ? ts : "N/A");
        smi_emit_leaf(&e, "driver_version", "Driver Version", "%s", s->driver_version);
        smi_emit_leaf(&e, "cuda_version", "CUDA Version", "%s", s->cuda_version);
        if (!xml)
                smi_emit_blank(&e);
        smi_emit_leaf(&e, "attached_gpus", "Attached GPUs", "%u", s->count);
        for (size_t i = 0; i < s->n; i++) {
                if (s->gpus[i].lost) {
                        nvsmi_report_lost(s, &s->gpus[i]);
                        continue;
                }
                smi_src_t src = nvsmi_src(s, &s->gpus[i], "");
                smi_emit_gpu(&e, &src);
        }
        smi_emit_end(&e);
        return s->exit_code;
}
