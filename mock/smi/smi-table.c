/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default table of our nvidia-smi (smi.h "default table"): its frame,
 * one GPU's rows, the MIG devices table and the Processes box, from
 * strings the caller formats.  Widths from the real captures named below
 * (shared/cases/nvidia-smi/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"

/* ---- default table; widths from table__nvidia-smi_l40s_with-process_580.126.09.txt ---- */

static const char table_rule[] =
        "+-----------------------------------------------------------------------------------------+\n";
static const char gpu_rule[] =
        "+-----------------------------------------+------------------------+----------------------+\n";
static const char mig_rule[] =
        "+------------------+----------------------------------+-----------+-----------------------+\n";

void smi_table_header(FILE *f, const char *timestamp, const char *driver_version, const char *cuda_version)
{
        /* The real first line pads the asctime-style date with 7 blanks. */
        fprintf(f, "%s       \n", timestamp);
        fputs(table_rule, f);
        fprintf(f, "| NVIDIA-SMI %-23sDriver Version: %-15sCUDA Version: %-9s|\n", driver_version, driver_version,
                cuda_version);
        fputs(gpu_rule, f);
        fputs("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
              "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
              "|                                         |                        |               MIG M. |\n"
              "|=========================================+========================+======================|\n",
              f);
}

/* @s shortened to @width characters with a trailing "..." when longer. */
static char *fit(const char *s, size_t width)
{
        if (!s)
                s = "";
        size_t len = strlen(s);
        if (len <= width)
                return strdup(s);
        char *r = malloc(width + 1);
        if (!r)
                return NULL;
        memcpy(r, s, width - 3);
        memcpy(r + width - 3, "...", 4);
        return r;
}

void smi_table_gpu(FILE *f, const smi_table_gpu_t *g)
{
        _cleanup_free_ char *name = fit(g->name, 29);
        fprintf(f, "|%4u  %-30s%3s  |%19s %3s |%21s |\n", g->index, name ? name : "", g->persistence, g->bus_id,
                g->disp_a, g->ecc);
        fprintf(f, "|%4s %5s %5s%16s / %5s |%11s / %9s |%8s%13s |\n", g->fan, g->temp, g->perf, g->pwr_usage,
                g->pwr_cap, g->mem_used, g->mem_total, g->gpu_util, g->compute_mode);
        fprintf(f, "|%41s|%24s|%21s |\n", "", "", g->mig_mode);
        fputs(gpu_rule, f);
}

/* Layout of the MIG table from table__nvidia-smi_h100-80gb-hbm3_mig-enabled_590.48.01.txt. */
void smi_table_mig(FILE *f, const smi_table_mig_t *m, size_t n)
{
        if (n == 0)
                return;
        fputs(table_rule, f);
        fputs("| MIG devices:                                                                            |\n", f);
        fputs(mig_rule, f);
        fputs("| GPU  GI  CI  MIG |              Shared Memory-Usage |        Vol|        Shared         |\n"
              "|      ID  ID  Dev |                Shared BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |\n"
              "|                  |                                  |        ECC|                       |\n"
              "|==================+==================================+===========+=======================|\n",
              f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "|%3u%5u%4u%4u  |%19s / %8s    |%3u%7s |%3u%4u%5u%5u%5u |\n", m[i].gpu, m[i].gi, m[i].ci,
                        m[i].dev, m[i].mem_used, m[i].mem_total, m[i].sm, m[i].ecc, m[i].ce, m[i].enc, m[i].dec,
                        m[i].ofa, m[i].jpg);
                fprintf(f, "|%18s|%19s / %8s    |%11s|%23s|\n", "", m[i].bar1_used, m[i].bar1_total, "", "");
                fputs(mig_rule, f);
        }
        fputs("\n", f);
}

void smi_table_processes(FILE *f, const smi_table_process_t *p, size_t n)
{
        fputs(table_rule, f);
        fputs("| Processes:                                                                              |\n"
              "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
              "|        ID   ID                                                               Usage      |\n"
              "|=========================================================================================|\n",
              f);
        if (n == 0)
                fputs("|  No running processes found                                                             |\n", f);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *name = fit(p[i].name, 36);
                fprintf(f, "|%5u%6s%5s%16u%7s   %-37s%9s |\n", p[i].gpu, p[i].gi, p[i].ci, p[i].pid, p[i].type,
                        name ? name : "", p[i].mem);
        }
        fputs(table_rule, f);
}


char *smi_mig_profile_name(const char *nvml_name, unsigned gi_slices, unsigned ci_slices,
                           unsigned long long memory_mib)
{
        const char *m = nvml_name ? strstr(nvml_name, " MIG ") : NULL;
        if (m && m[5])
                return strdup(m + 5);
        char *s = NULL;
        unsigned long long gb = (memory_mib + 1023) / 1024;
        int r;
        if (ci_slices && ci_slices < gi_slices)
                r = asprintf(&s, "%uc.%ug.%llugb", ci_slices, gi_slices, gb);
        else
                r = asprintf(&s, "%ug.%llugb", gi_slices, gb);
        return r < 0 ? NULL : s;
}

