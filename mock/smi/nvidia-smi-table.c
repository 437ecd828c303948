/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi's default table view: the cells come from the table of fields
 * (smi-fields.c) in the table's short spellings ("39C", "104W", "P0"), the
 * frame and widths from smi-table.c.  See nvidia-smi-internal.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
        char *s = NULL;
        va_list ap;
        va_start(ap, f);
        int r = vasprintf(&s, f, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

static const char *na(const char *s)
{
        return s ? s : "N/A";
}

static unsigned long long mib(unsigned long long bytes)
{
        return bytes / (1024ULL * 1024ULL);
}

/* How a number cell is spelled in the table. */
enum cell_kind { CELL_PERCENT, CELL_CELSIUS, CELL_PSTATE, CELL_WATTS, CELL_MIB };

/* The cell of field @id ("30%", "39C", "P0", "104W" rounded, "803MiB"), "N/A" when unavailable; heap string. */
static char *cell(const smi_src_t *src, smi_field_id_t id, enum cell_kind kind)
{
        smi_value_t v;
        smi_field_get(id, src, &v);
        if (v.ret != NVML_SUCCESS || (kind == CELL_PSTATE && v.num >= NVML_PSTATE_UNKNOWN))
                return strdup("N/A");
        switch (kind) {
        case CELL_PERCENT:
                return fmt("%llu%%", v.num);
        case CELL_CELSIUS:
                return fmt("%lluC", v.num);
        case CELL_PSTATE:
                return fmt("P%llu", v.num);
        case CELL_WATTS:
                return fmt("%lluW", (v.num + 500) / 1000);
        default:
                return fmt("%lluMiB", v.num);
        }
}

/* "On" / "Off" for an enabled-style field, "N/A" when unavailable. */
static const char *on_off(const smi_src_t *src, smi_field_id_t id)
{
        smi_value_t v;
        smi_field_get(id, src, &v);
        return v.ret != NVML_SUCCESS ? "N/A" : v.num ? "On" : "Off";
}

/* The table's short compute mode names. */
static const char *compute_mode_cell(const smi_src_t *src)
{
        smi_value_t v;
        smi_field_get(SMI_F_COMPUTE_MODE, src, &v);
        if (v.ret != NVML_SUCCESS)
                return "N/A";
        switch (v.num) {
        case NVML_COMPUTEMODE_DEFAULT:
                return "Default";
        case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
                return "E. Thread";
        case NVML_COMPUTEMODE_PROHIBITED:
                return "Prohibited";
        case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
                return "E. Process";
        default:
                return "N/A";
        }
}

/* Volatile Uncorr. ECC: error count (0, none injected), "On" under MIG, N/A without ECC. */
static const char *ecc_cell(const smi_src_t *src, bool mig)
{
        smi_value_t v;
        smi_field_get(SMI_F_ECC_MODE_CURRENT, src, &v);
        if (v.ret != NVML_SUCCESS || v.num != NVML_FEATURE_ENABLED)
                return "N/A";
        return mig ? "On" : "0";
}

/* The three lines of one GPU. */
static void table_gpu(const smi_t *s, const gpu_info_t *g)
{
        smi_src_t src = nvsmi_src(s, g, "");
        smi_value_t name, bus, mig_mode;
        smi_field_get(SMI_F_NAME, &src, &name);
        smi_field_get(SMI_F_PCI_BUS_ID, &src, &bus);
        smi_field_get(SMI_F_MIG_MODE_CURRENT, &src, &mig_mode);
        _cleanup_free_ char *fan = cell(&src, SMI_F_FAN_SPEED, CELL_PERCENT);
        _cleanup_free_ char *temp = cell(&src, SMI_F_TEMPERATURE_GPU, CELL_CELSIUS);
        _cleanup_free_ char *perf = cell(&src, SMI_F_PSTATE, CELL_PSTATE);
        _cleanup_free_ char *pw = cell(&src, SMI_F_POWER_DRAW, CELL_WATTS);
        _cleanup_free_ char *cap = cell(&src, SMI_F_POWER_LIMIT, CELL_WATTS);
        _cleanup_free_ char *mu = cell(&src, SMI_F_MEMORY_USED, CELL_MIB);
        _cleanup_free_ char *mt = cell(&src, SMI_F_MEMORY_TOTAL, CELL_MIB);
        /* GPU-Util is N/A under MIG, as in the real table. */
        _cleanup_free_ char *util = g->mig ? strdup("N/A") : cell(&src, SMI_F_UTILIZATION_GPU, CELL_PERCENT);
        smi_table_gpu_t row = {
                .index = g->index,
                .name = name.ret == NVML_SUCCESS ? name.text : "N/A",
                .persistence = on_off(&src, SMI_F_PERSISTENCE_MODE),
                .bus_id = bus.ret == NVML_SUCCESS ? bus.text : "N/A",
                .disp_a = on_off(&src, SMI_F_DISPLAY_ACTIVE),
                .ecc = ecc_cell(&src, g->mig),
                .fan = na(fan),
                .temp = na(temp),
                .perf = na(perf),
                .pwr_usage = na(pw),
                .pwr_cap = na(cap),
                .mem_used = na(mu),
                .mem_total = na(mt),
                .gpu_util = na(util),
                .compute_mode = compute_mode_cell(&src),
                .mig_mode = mig_mode.ret != NVML_SUCCESS ? "N/A" : g->mig ? "Enabled" : "Disabled",
        };
        smi_table_gpu(stdout, &row);
}

/* The "MIG devices:" table of every shown GPU (nothing when none has MIG devices). */
static int table_migs(const smi_t *s, size_t n_mig)
{
        if (n_mig == 0)
                return 0;
        _cleanup_free_ smi_table_mig_t *rows = calloc(n_mig, sizeof(*rows));
        _cleanup_strv_free_ char **strs = calloc(n_mig * 2 + 1, sizeof(char *));
        if (!rows || !strs)
                return -1;
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                for (size_t m = 0; !g->lost && m < g->n_mig; m++, k++) {
                        const smi_mig_t *mi = &g->migs[m];
                        bool mem = mi->mem_ret == NVML_SUCCESS;
                        strs[2 * k] = mem ? fmt("%lluMiB", mib(mi->mem.used)) : strdup("N/A");
                        strs[2 * k + 1] = mem ? fmt("%lluMiB", mib(mi->mem.total)) : strdup("N/A");
                        rows[k] = (smi_table_mig_t){
                                .gpu = g->index,
                                .gi = mi->gi,
                                .ci = mi->ci,
                                .dev = mi->dev,
                                .mem_used = na(strs[2 * k]),
                                .mem_total = na(strs[2 * k + 1]),
                                .bar1_used = "N/A", /* BAR1 is not in our NVML subset */
                                .bar1_total = "N/A",
                                .sm = mi->attr.multiprocessorCount,
                                .ecc = "0",
                                .ce = mi->attr.sharedCopyEngineCount,
                                .enc = mi->attr.sharedEncoderCount,
                                .dec = mi->attr.sharedDecoderCount,
                                .ofa = mi->attr.sharedOfaCount,
                                .jpg = mi->attr.sharedJpegCount,
                        };
                }
        }
        smi_table_mig(stdout, rows, k);
        return 0;
}

/* "N/A" for NVML's "no instance" id, else the id; heap string. */
static char *instance_id(unsigned id)
{
        return id == 0xFFFFFFFFu ? strdup("N/A") : fmt("%u", id);
}

/* The Processes box of every shown GPU. */
static void table_processes(const smi_t *s, size_t n_proc)
{
        _cleanup_free_ smi_table_process_t *procs = n_proc ? calloc(n_proc, sizeof(*procs)) : NULL;
        _cleanup_strv_free_ char **pstr = n_proc ? calloc(n_proc * 4 + 1, sizeof(char *)) : NULL;
        size_t k = 0;
        for (size_t i = 0; procs && pstr && i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                for (unsigned j = 0; !g->lost && j < g->n_procs; j++, k++) {
                        const nvmlProcessInfo_t *pi = &g->procs[j];
                        pstr[4 * k] = instance_id(pi->gpuInstanceId);
                        pstr[4 * k + 1] = instance_id(pi->computeInstanceId);
                        pstr[4 * k + 2] = smi_process_name(s->nvml, pi->pid);
                        pstr[4 * k + 3] = fmt("%lluMiB", mib(pi->usedGpuMemory));
                        procs[k] = (smi_table_process_t){
                                .gpu = g->index,
                                .gi = na(pstr[4 * k]),
                                .ci = na(pstr[4 * k + 1]),
                                .pid = pi->pid,
                                .type = "C",
                                .name = na(pstr[4 * k + 2]),
                                .mem = na(pstr[4 * k + 3]),
                        };
                }
        }
        smi_table_processes(stdout, procs, k);
}

int nvsmi_view_table(smi_t *s)
{
        _cleanup_free_ char *ts = nvsmi_now_text(false);
        for (size_t i = 0; i < s->n; i++)
                if (s->gpus[i].lost)
                        nvsmi_report_lost(s, &s->gpus[i]);
        smi_table_header(stdout, na(ts), s->driver_version, s->cuda_version);
        size_t n_mig = 0, n_proc = 0;
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (g->lost)
                        continue;
                n_mig += g->n_mig;
                n_proc += g->n_procs;
                table_gpu(s, g);
        }
        fputs("\n", stdout);
        if (table_migs(s, n_mig) < 0)
                return SMI_EXIT_OTHER;
        table_processes(s, n_proc);
        return s->exit_code;
}
