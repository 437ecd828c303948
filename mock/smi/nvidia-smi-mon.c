/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi dmon and pmon over NVML: the real tool's two header lines (the
 * R535+ columns, with jpg and ofa), then a sample per GPU (dmon) or per
 * process (pmon, "-" rows for a GPU without one) every -d seconds, -c times.
 * A value NVML does not give reads "-", as in the real tool.  Layouts from
 * NVIDIA's nvidia-smi documentation and users' transcripts of the real tool.
 * See nvidia-smi-internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

#define MAX_PROC_SAMPLES 64

/* @v as a cell when @r succeeded, else "-". */
static const char *num(char *buf, size_t len, nvmlReturn_t r, unsigned long long v)
{
        if (r != NVML_SUCCESS)
                return "-";
        snprintf(buf, len, "%llu", v);
        return buf;
}

static void dmon_row(const smi_t *s, const gpu_info_t *g)
{
        char b[11][24];
        unsigned mw = 0, temp = 0, enc = 0, dec = 0, jpg = 0, ofa = 0, period = 0, mclk = 0, pclk = 0;
        nvmlUtilization_t u = { 0 };
        /* every call first: an argument list has no order of evaluation */
        nvmlReturn_t ru = NV(s->nvml, nvmlDeviceGetUtilizationRates, g->dev, &u);
        nvmlReturn_t rp = NV(s->nvml, nvmlDeviceGetPowerUsage, g->dev, &mw);
        nvmlReturn_t rt = NV(s->nvml, nvmlDeviceGetTemperature, g->dev, NVML_TEMPERATURE_GPU, &temp);
        nvmlReturn_t re = NVX(s->nvml, nvmlDeviceGetEncoderUtilization, g->dev, &enc, &period);
        nvmlReturn_t rd = NVX(s->nvml, nvmlDeviceGetDecoderUtilization, g->dev, &dec, &period);
        nvmlReturn_t rj = NVX(s->nvml, nvmlDeviceGetJpgUtilization, g->dev, &jpg, &period);
        nvmlReturn_t ro = NVX(s->nvml, nvmlDeviceGetOfaUtilization, g->dev, &ofa, &period);
        nvmlReturn_t rm = NV(s->nvml, nvmlDeviceGetClockInfo, g->dev, NVML_CLOCK_MEM, &mclk);
        nvmlReturn_t rg = NV(s->nvml, nvmlDeviceGetClockInfo, g->dev, NVML_CLOCK_GRAPHICS, &pclk);
        printf("%5u%7s%7s%7s%7s%7s%7s%7s%7s%7s%7s%7s \n", g->index, num(b[0], 24, rp, mw / 1000),
               num(b[1], 24, rt, temp), "-", num(b[3], 24, ru, u.gpu), num(b[4], 24, ru, u.memory),
               num(b[5], 24, re, enc), num(b[6], 24, rd, dec), num(b[7], 24, rj, jpg), num(b[8], 24, ro, ofa),
               num(b[9], 24, rm, mclk), num(b[10], 24, rg, pclk));
}

/* The utilisation sample of process @pid among @n samples, or NULL. */
static const nvmlProcessUtilizationSample_t *sample_of(const nvmlProcessUtilizationSample_t *smp, unsigned n,
                                                       unsigned pid)
{
        for (unsigned i = 0; i < n; i++)
                if (smp[i].pid == pid)
                        return &smp[i];
        return NULL;
}

static void pmon_rows(const smi_t *s, const gpu_info_t *g)
{
        nvmlProcessUtilizationSample_t smp[MAX_PROC_SAMPLES];
        unsigned n = MAX_PROC_SAMPLES;
        if (NVX(s->nvml, nvmlDeviceGetProcessUtilization, g->dev, smp, &n, 0) != NVML_SUCCESS)
                n = 0;
        if (!g->n_procs) {
                printf("%5u%11s%6s%7s%7s%7s%7s%7s%7s    %-15s\n", g->index, "-", "-", "-", "-", "-", "-", "-", "-",
                       "-");
                return;
        }
        for (unsigned i = 0; i < g->n_procs; i++) {
                const nvmlProcessInfo_t *p = &g->procs[i];
                const nvmlProcessUtilizationSample_t *u = sample_of(smp, n, p->pid);
                char pid[16], sm[16], mem[16];
                snprintf(pid, sizeof(pid), "%u", p->pid);
                _cleanup_free_ char *name = smi_process_name(s->nvml, p->pid);
                printf("%5u%11s%6s%7s%7s%7s%7s%7s%7s    %-15s\n", g->index, pid, "C",
                       num(sm, sizeof(sm), u ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND, u ? u->smUtil : 0),
                       num(mem, sizeof(mem), u ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND, u ? u->memUtil : 0), "-", "-",
                       "-", "-", name ? name : "-");
        }
}

int nvsmi_view_monitor(smi_t *s, bool pmon, unsigned count, unsigned delay_s)
{
        if (pmon)
                printf("# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command \n"
                       "# Idx           #    C/G      %%      %%      %%      %%      %%      %%    name \n");
        else
                printf("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk \n"
                       "# Idx      W      C      C      %%      %%      %%      %%      %%      %%    MHz    MHz \n");
        for (unsigned k = 0; count == 0 || k < count; k++) {
                if (k) {
                        struct timespec ts = { .tv_sec = delay_s };
                        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
                        }
                        nvsmi_gather(s); /* the processes of now */
                }
                for (size_t i = 0; i < s->n; i++) {
                        const gpu_info_t *g = &s->gpus[i];
                        if (g->lost)
                                nvsmi_report_lost(s, g);
                        else if (pmon)
                                pmon_rows(s, g);
                        else
                                dmon_row(s, g);
                }
                (void) fflush(stdout);
        }
        return s->exit_code;
}
