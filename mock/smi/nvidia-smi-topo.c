/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi topo -m and nvidia-smi nvlink -s over NVML: the connection
 * matrix (NVLink counts, else the PCIe path of
 * nvmlDeviceGetTopologyCommonAncestor), each GPU's CPU and NUMA affinity and
 * the legend, tab separated with the header underlined as the real tool
 * writes it; and each GPU's links with their speed.  See
 * nvidia-smi-internal.h and docs/nvidia-smi.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

#define CPU_WORDS 16 /* 1024 CPUs */

/* Links of @g: how many active ones reach GPU @other directly (*direct), and how many reach no GPU (a switch). */
static void count_links(const smi_t *s, const gpu_info_t *g, const gpu_info_t *other, unsigned *direct,
                        unsigned *switched)
{
        *direct = *switched = 0;
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
                nvmlEnableState_t on = NVML_FEATURE_DISABLED;
                nvmlPciInfo_t remote;
                if (NV(s->nvml, nvmlDeviceGetNvLinkState, g->dev, l, &on) != NVML_SUCCESS ||
                    on != NVML_FEATURE_ENABLED ||
                    NV(s->nvml, nvmlDeviceGetNvLinkRemotePciInfo_v2, g->dev, l, &remote) != NVML_SUCCESS)
                        continue;
                bool gpu = false;
                for (size_t k = 0; k < s->n; k++)
                        gpu |= strcmp(remote.busId, s->gpus[k].pci.busId) == 0;
                if (other && strcmp(remote.busId, other->pci.busId) == 0)
                        (*direct)++;
                else if (!gpu)
                        (*switched)++;
        }
}

/* The matrix cell between two different GPUs: "NV12", else the PCIe path ("SYS", "NODE", "PHB", "PXB", "PIX"). */
static void cell(const smi_t *s, const gpu_info_t *a, const gpu_info_t *b, char *out, size_t len)
{
        unsigned direct, sa, sb, unused;
        count_links(s, a, b, &direct, &sa);
        count_links(s, b, NULL, &unused, &sb);
        if (direct || (sa && sb)) {
                snprintf(out, len, "NV%u", direct ? direct : sa < sb ? sa : sb);
                return;
        }
        nvmlGpuTopologyLevel_t lv = NVML_TOPOLOGY_SYSTEM;
        if (NV(s->nvml, nvmlDeviceGetTopologyCommonAncestor, a->dev, b->dev, &lv) != NVML_SUCCESS)
                lv = NVML_TOPOLOGY_SYSTEM;
        snprintf(out, len, "%s", lv <= NVML_TOPOLOGY_SINGLE ? "PIX" : lv == NVML_TOPOLOGY_MULTIPLE ? "PXB"
                                 : lv == NVML_TOPOLOGY_HOSTBRIDGE                               ? "PHB"
                                 : lv == NVML_TOPOLOGY_NODE                                     ? "NODE"
                                                                                                : "SYS");
}

#define WORD_BITS (8 * sizeof(unsigned long))

/* Whether CPU @c is in @set. */
static bool cpu_in(const unsigned long *set, size_t c)
{
        return (set[c / WORD_BITS] >> (c % WORD_BITS)) & 1UL;
}

/* @g's CPU affinity as ranges ("0-31,64-95"), or "N/A". */
static void cpu_affinity(const smi_t *s, const gpu_info_t *g, char *out, size_t len)
{
        unsigned long set[CPU_WORDS] = { 0 };
        snprintf(out, len, "N/A");
        if (NVX(s->nvml, nvmlDeviceGetCpuAffinity, g->dev, CPU_WORDS, set) != NVML_SUCCESS)
                return;
        size_t bits = (size_t) CPU_WORDS * WORD_BITS, n = 0;
        out[0] = '\0';
        for (size_t c = 0; c < bits; c++) {
                if (!cpu_in(set, c))
                        continue;
                size_t e = c;
                while (e + 1 < bits && cpu_in(set, e + 1))
                        e++;
                int w = e > c ? snprintf(out + n, len - n, "%s%zu-%zu", n ? "," : "", c, e)
                              : snprintf(out + n, len - n, "%s%zu", n ? "," : "", c);
                if (w < 0 || (size_t) w >= len - n)
                        break;
                n += (size_t) w;
                c = e;
        }
        if (!out[0])
                snprintf(out, len, "N/A");
}

int nvsmi_view_topo(smi_t *s)
{
        printf("\t\x1b[4m");
        for (size_t i = 0; i < s->n; i++)
                printf("GPU%u\t", s->gpus[i].index);
        printf("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n");
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *a = &s->gpus[i];
                printf("GPU%u\t", a->index);
                for (size_t j = 0; j < s->n; j++) {
                        char c[16] = " X ";
                        if (i != j)
                                cell(s, a, &s->gpus[j], c, sizeof(c));
                        printf("%s\t", c);
                }
                char cpus[256];
                cpu_affinity(s, a, cpus, sizeof(cpus));
                unsigned node = 0;
                bool have_node = NVX(s->nvml, nvmlDeviceGetNumaNodeId, a->dev, &node) == NVML_SUCCESS;
                if (have_node)
                        printf("%s\t%u\t\tN/A\n", cpus, node);
                else
                        printf("%s\tN/A\t\tN/A\n", cpus);
        }
        printf("\nLegend:\n\n"
               "  X    = Self\n"
               "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
               "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
               "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
               "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
               "  PIX  = Connection traversing at most a single PCIe bridge\n"
               "  NV#  = Connection traversing a bonded set of # NVLinks\n");
        return s->exit_code;
}

/* One link's speed per NVLink generation (GB/s, one direction), as the real `nvlink -s` prints them. */
static const char *link_speed(unsigned version)
{
        switch (version) {
        case 1:
                return "20 GB/s";
        case 2:
        case 3:
                return "25 GB/s";
        case 4:
                return "26.562 GB/s";
        default:
                return version >= 5 ? "50 GB/s" : NULL;
        }
}

int nvsmi_view_nvlink(smi_t *s)
{
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (!nvsmi_gpu_line(s, g))
                        continue;
                for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
                        nvmlEnableState_t on = NVML_FEATURE_DISABLED;
                        if (NV(s->nvml, nvmlDeviceGetNvLinkState, g->dev, l, &on) != NVML_SUCCESS)
                                break;
                        unsigned version = 0;
                        const char *speed = NVX(s->nvml, nvmlDeviceGetNvLinkVersion, g->dev, l, &version) ==
                                                            NVML_SUCCESS
                                                    ? link_speed(version)
                                                    : NULL;
                        if (on != NVML_FEATURE_ENABLED)
                                printf("\t Link %u: <inactive>\n", l);
                        else
                                printf("\t Link %u: %s\n", l, speed ? speed : "N/A");
                }
        }
        return s->exit_code;
}
