/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi --query-compute-apps=..., -pm and -r.  The compute apps CSV has
 * the real tool's fields (--help-query-compute-apps: timestamp, gpu_name,
 * gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name or name,
 * used_gpu_memory or used_memory) and header ("pid, process_name,
 * used_memory [MiB]": a field keeps the name it was asked by).  -pm and -r
 * change the GPU: as a user who is not root they are refused with the real
 * tool's words ("Unable to set persistence mode for GPU 00000000:07:00.0:
 * Insufficient Permissions"; "The following GPUs could not be reset:" with
 * "  GPU 00000000:07:00.0: Insufficient Permissions"; exit 4).  As root, -r
 * of a GPU with processes is refused as the real tool refuses it ("In use by
 * another client", exit 255); otherwise the mock has nothing to change, and
 * says so (exit 2).
 * See nvidia-smi-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

typedef enum app_field { AF_TIMESTAMP, AF_GPU_NAME, AF_GPU_BUS_ID, AF_GPU_SERIAL, AF_GPU_UUID, AF_PID, AF_NAME,
                         AF_MEMORY } app_field_t;

static const struct {
        const char *name;
        const char *alias;
        app_field_t f;
} app_fields[] = {
        { "timestamp", NULL, AF_TIMESTAMP },       { "gpu_name", NULL, AF_GPU_NAME },
        { "gpu_bus_id", NULL, AF_GPU_BUS_ID },     { "gpu_serial", NULL, AF_GPU_SERIAL },
        { "gpu_uuid", NULL, AF_GPU_UUID },         { "pid", NULL, AF_PID },
        { "process_name", "name", AF_NAME },       { "used_gpu_memory", "used_memory", AF_MEMORY },
};

/* The asked fields (*ids, *names as asked); the number, or -1 with *bad naming an unknown one. */
static int parse_fields(const char *fields, app_field_t *ids, char **names, size_t cap, char **bad)
{
        size_t n = 0;
        for (const char *p = fields; p && n < cap;) {
                char *tok = NULL;
                if (smi_next_token(&p, &tok) < 0)
                        return -1;
                size_t k = 0;
                while (k < GV_ARRAY_SIZE(app_fields) && strcmp(app_fields[k].name, tok) != 0 &&
                       !(app_fields[k].alias && strcmp(app_fields[k].alias, tok) == 0))
                        k++;
                if (k == GV_ARRAY_SIZE(app_fields)) {
                        *bad = tok;
                        return -1;
                }
                ids[n] = app_fields[k].f;
                names[n++] = tok;
        }
        return (int) n;
}

/* One cell of process @p on GPU @g. */
static char *app_cell(const smi_t *s, const gpu_info_t *g, const nvmlProcessInfo_t *p, app_field_t f, bool units,
                      const char *ts)
{
        static const smi_field_id_t gpu_field[] = {
                [AF_GPU_NAME] = SMI_F_NAME, [AF_GPU_BUS_ID] = SMI_F_PCI_BUS_ID, [AF_GPU_SERIAL] = SMI_F_SERIAL,
                [AF_GPU_UUID] = SMI_F_UUID,
        };
        char *out = NULL;
        switch (f) {
        case AF_TIMESTAMP:
                return strdup(ts ? ts : "");
        case AF_PID:
                return asprintf(&out, "%u", p->pid) < 0 ? NULL : out;
        case AF_NAME:
                return smi_process_name(s->nvml, p->pid);
        case AF_MEMORY:
                return asprintf(&out, "%llu%s", p->usedGpuMemory / (1024ULL * 1024ULL), units ? " MiB" : "") < 0 ? NULL
                                                                                                                 : out;
        default: {
                smi_src_t src = nvsmi_src(s, g, ts ? ts : "");
                smi_value_t v;
                smi_field_get(gpu_field[f], &src, &v);
                return strdup(v.ret == NVML_SUCCESS ? v.text : smi_unavailable_text(v.ret));
        }
        }
}

/* The header (when @header) and a row per compute process of the selected GPUs. */
static void print_apps(const smi_t *s, const app_field_t *ids, const char *const *names, int n, bool header,
                       bool units)
{
        for (int i = 0; header && i < n; i++)
                printf("%s%s%s", names[i], ids[i] == AF_MEMORY && units ? " [MiB]" : "", i + 1 < n ? ", " : "\n");
        _cleanup_free_ char *ts = nvsmi_now_text(true);
        for (size_t gi = 0; gi < s->n; gi++) {
                const gpu_info_t *g = &s->gpus[gi];
                for (unsigned k = 0; !g->lost && k < g->n_procs; k++)
                        for (int i = 0; i < n; i++) {
                                _cleanup_free_ char *c = app_cell(s, g, &g->procs[k], ids[i], units, ts);
                                printf("%s%s", c ? c : "", i + 1 < n ? ", " : "\n");
                        }
        }
}

int nvsmi_view_compute_apps(smi_t *s, const char *fields, const char *format, bool header_ok)
{
        bool header = true, units = true;
        _cleanup_free_ char *bad = NULL;
        switch (smi_format_parse(format, &header, &units, &bad)) {
        case SMI_PARSE_OK:
                break;
        case SMI_PARSE_BAD_FORMAT:
                printf("\"%s\" is not a valid format option.\n\n", bad ? bad : "");
                return SMI_EXIT_INVALID_ARG;
        default:
                printf("Format must be specified when querying.  Please run 'nvidia-smi --help-query-compute-apps' "
                       "for help.\n\n");
                return SMI_EXIT_INVALID_ARG;
        }
        app_field_t ids[32];
        char *names[32] = { 0 };
        int n = parse_fields(fields, ids, names, GV_ARRAY_SIZE(ids), &bad);
        if (n > 0)
                print_apps(s, ids, (const char *const *) names, n, header && header_ok, units);
        else
                printf("Field \"%s\" is not a valid field to query.\n\n", bad ? bad : "");
        for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++)
                free(names[i]);
        return n > 0 ? s->exit_code : SMI_EXIT_INVALID_ARG;
}

/* The bus id of @g as the real tool writes it in these messages ("00000000:07:00.0"). */
static const char *bus_id(const gpu_info_t *g)
{
        return g->pci_ret == NVML_SUCCESS ? g->pci.busId : "N/A";
}

int nvsmi_set_persistence(smi_t *s, const char *mode)
{
        bool on;
        if (strcmp(mode, "1") == 0 || strcasecmp(mode, "ENABLED") == 0)
                on = true;
        else if (strcmp(mode, "0") == 0 || strcasecmp(mode, "DISABLED") == 0)
                on = false;
        else {
                printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
                return SMI_EXIT_INVALID_ARG;
        }
        int rc = SMI_EXIT_OK;
        for (size_t i = 0; i < s->n && rc == SMI_EXIT_OK; i++) {
                const gpu_info_t *g = &s->gpus[i];
                nvmlEnableState_t cur = NVML_FEATURE_DISABLED;
                if (NV(s->nvml, nvmlDeviceGetPersistenceMode, g->dev, &cur) == NVML_SUCCESS &&
                    (cur == NVML_FEATURE_ENABLED) == on) {
                        printf("Persistence mode is already %s for GPU %s.\n", on ? "Enabled" : "Disabled", bus_id(g));
                        continue;
                }
                if (geteuid() != 0) {
                        printf("Unable to set persistence mode for GPU %s: Insufficient Permissions\n"
                               "Terminating early due to previous errors.\n",
                               bus_id(g));
                        return SMI_EXIT_NO_PERMISSION;
                }
                printf("Persistence mode for GPU %s: not modelled by gpu-validator's nvidia-smi (the mock NVML "
                       "keeps its profile's mode; docs/nvidia-smi.md).\n",
                       bus_id(g));
                rc = SMI_EXIT_INVALID_ARG;
        }
        if (rc == SMI_EXIT_OK)
                printf("All done.\n");
        return rc;
}

int nvsmi_reset(smi_t *s)
{
        bool root = geteuid() == 0;
        unsigned busy = 0, idle = 0;
        for (size_t i = 0; i < s->n; i++) {
                busy += root && s->gpus[i].n_procs;
                idle += root && !s->gpus[i].n_procs;
        }
        if (!root || busy) {
                printf("The following GPUs could not be reset:\n");
                for (size_t i = 0; i < s->n; i++)
                        if (!root || s->gpus[i].n_procs)
                                printf("  GPU %s: %s\n", bus_id(&s->gpus[i]),
                                       root ? "In use by another client" : "Insufficient Permissions");
        }
        if (busy)
                printf("\n%u device%s currently being used by one or more other processes (e.g. Fabric Manager, CUDA "
                       "application, graphics application such as an X server, or a monitoring application such as "
                       "another instance of nvidia-smi). Please first kill all processes using this device and all "
                       "compute applications running in the system.\n",
                       busy, busy == 1 ? " is" : "s are");
        for (size_t i = 0; i < s->n && !busy; i++)
                if (root)
                        printf("GPU reset of %s: not modelled by gpu-validator's nvidia-smi (`gpu-validator mock set "
                               "--clear` brings a mock GPU back to its profile).\n",
                               bus_id(&s->gpus[i]));
        if (!root)
                return SMI_EXIT_NO_PERMISSION;
        return busy ? SMI_EXIT_OTHER : SMI_EXIT_INVALID_ARG;
}
