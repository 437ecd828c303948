/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi: finding the library, selecting the GPUs (-i), gathering what
 * the views need beyond single values (MIG devices, processes), lost GPUs,
 * and -L.  See nvidia-smi-internal.h.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/smi/nvidia-smi-internal.h"

/* ---- library lookup ---- */

static char *self_dir(void)
{
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        if (!self)
                return NULL;
        return strdup(dirname(self));
}

int nvsmi_open_library(gv_nvml_t **out)
{
        _cleanup_free_ char *dir = self_dir();
        _cleanup_free_ char *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
        const char *cands[6];
        size_t n = 0;
        if (dir) {
                c1 = gv_path_join(dir, "../lib64/libnvidia-ml.so.1");
                c2 = gv_path_join(dir, "../lib/libnvidia-ml.so.1");
                c3 = gv_path_join(dir, "../lib/x86_64-linux-gnu/libnvidia-ml.so.1");
                c4 = gv_path_join(dir, "../nvml/libnvidia-ml.so.1"); /* build tree: build/mock/{smi,nvml} */
                const char *all[] = { c1, c2, c3, c4 };
                for (size_t i = 0; i < GV_ARRAY_SIZE(all); i++)
                        if (all[i])
                                cands[n++] = all[i];
        }
        cands[n++] = "libnvidia-ml.so.1";
        cands[n] = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        return gv_nvml_open(cands, out, &err);
}

/* ---- gathering ---- */

static void free_gpu(gpu_info_t *g)
{
        for (size_t i = 0; i < g->n_mig; i++)
                free(g->migs[i].profile);
        free(g->migs);
        free(g->procs);
}

static bool is_lost(nvmlReturn_t r)
{
        return r == NVML_ERROR_GPU_IS_LOST;
}

static void collect_migs(const gv_nvml_t *n, gpu_info_t *g)
{
        unsigned max = 0;
        if (NV(n, nvmlDeviceGetMaxMigDeviceCount, g->dev, &max) != NVML_SUCCESS || max == 0)
                return;
        g->migs = calloc(max, sizeof(*g->migs));
        if (!g->migs)
                return;
        for (unsigned i = 0; i < max; i++) {
                nvmlDevice_t h;
                if (NV(n, nvmlDeviceGetMigDeviceHandleByIndex, g->dev, i, &h) != NVML_SUCCESS)
                        continue; /* NOT_FOUND: an empty slot */
                smi_mig_t *m = &g->migs[g->n_mig];
                m->h = h;
                m->dev = (unsigned) g->n_mig;
                m->gi_ret = NV(n, nvmlDeviceGetGpuInstanceId, h, &m->gi);
                m->ci_ret = NV(n, nvmlDeviceGetComputeInstanceId, h, &m->ci);
                if (NV(n, nvmlDeviceGetName, h, m->name, sizeof(m->name)) != NVML_SUCCESS)
                        m->name[0] = '\0';
                m->uuid_ret = NV(n, nvmlDeviceGetUUID, h, m->uuid, sizeof(m->uuid));
                m->attr_ret = NV(n, nvmlDeviceGetAttributes_v2, h, &m->attr);
                m->mem_ret = NV(n, nvmlDeviceGetMemoryInfo, h, &m->mem);
                if (m->mem_ret != NVML_SUCCESS && m->attr_ret == NVML_SUCCESS) {
                        m->mem.total = m->attr.memorySizeMB * 1024ULL * 1024ULL;
                        m->mem.used = 0;
                        m->mem.free = m->mem.total;
                        m->mem_ret = NVML_SUCCESS;
                }
                m->profile = smi_mig_profile_name(m->name, m->attr.gpuInstanceSliceCount,
                                                  m->attr.computeInstanceSliceCount, m->attr.memorySizeMB);
                g->n_mig++;
        }
}

/* Fields whose GPU_IS_LOST marks the GPU lost (the calls the real tool makes first). */
static const smi_field_id_t lost_probes[] = {
        SMI_F_NAME, SMI_F_UUID, SMI_F_PCI_BUS_ID, SMI_F_SERIAL, SMI_F_MEMORY_TOTAL,
        SMI_F_UTILIZATION_GPU, SMI_F_TEMPERATURE_GPU, SMI_F_POWER_DRAW, SMI_F_MIG_MODE_CURRENT,
};

/* The compute processes: the count first, then the list (INSUFFICIENT_SIZE is the count answer). */
static void collect_processes(const gv_nvml_t *n, gpu_info_t *g)
{
        unsigned cnt = 0;
        nvmlReturn_t r = NV(n, nvmlDeviceGetComputeRunningProcesses_v3, g->dev, &cnt, NULL);
        if (r != NVML_ERROR_INSUFFICIENT_SIZE || cnt == 0)
                return;
        cnt += 4;
        g->procs = calloc(cnt, sizeof(*g->procs));
        if (!g->procs)
                return;
        r = NV(n, nvmlDeviceGetComputeRunningProcesses_v3, g->dev, &cnt, g->procs);
        g->n_procs = r == NVML_SUCCESS ? cnt : 0;
}

/* One GPU: its PCI info (which names it even when lost), whether it is lost, its MIG devices and processes. */
static void collect(const smi_t *s, gpu_info_t *g)
{
        const gv_nvml_t *n = s->nvml;
        if (!g->dev)
                return;
        g->pci_ret = NV(n, nvmlDeviceGetPciInfo_v3, g->dev, &g->pci);
        if (g->lost)
                return;
        smi_src_t src = nvsmi_src(s, g, "");
        smi_value_t v;
        for (size_t i = 0; i < GV_ARRAY_SIZE(lost_probes) && !g->lost; i++) {
                smi_field_get(lost_probes[i], &src, &v);
                g->lost = is_lost(v.ret);
        }
        if (g->lost)
                return;
        smi_field_get(SMI_F_MIG_MODE_CURRENT, &src, &v);
        g->mig = v.ret == NVML_SUCCESS && v.num == NVML_DEVICE_MIG_ENABLE;
        collect_processes(n, g);
        if (g->mig)
                collect_migs(n, g);
}

void nvsmi_gather(smi_t *s)
{
        for (size_t i = 0; i < s->n; i++) {
                gpu_info_t *g = &s->gpus[i];
                free_gpu(g); /* again: a monitor gathers each sample */
                g->migs = NULL;
                g->n_mig = 0;
                g->procs = NULL;
                g->n_procs = 0;
                collect(s, g);
        }
}

void nvsmi_free_gpus(smi_t *s)
{
        for (size_t i = 0; i < s->n; i++)
                free_gpu(&s->gpus[i]);
        free(s->gpus);
        s->gpus = NULL;
        s->n = 0;
}

smi_src_t nvsmi_src(const smi_t *s, const gpu_info_t *g, const char *timestamp)
{
        return (smi_src_t){
                .nvml = s->nvml,
                .dev = g->dev,
                .index = g->index,
                .count = s->count,
                .driver_version = s->driver_version,
                .timestamp = timestamp,
                .migs = g->migs,
                .n_migs = g->n_mig,
                .procs = g->procs,
                .n_procs = g->n_procs,
        };
}

bool nvsmi_gpu_line(smi_t *s, const gpu_info_t *g)
{
        if (g->lost) {
                nvsmi_report_lost(s, g);
                return false;
        }
        smi_src_t src = nvsmi_src(s, g, "");
        smi_value_t name, uuid;
        smi_field_get(SMI_F_NAME, &src, &name);
        smi_field_get(SMI_F_UUID, &src, &uuid);
        printf("GPU %u: %s (UUID: %s)\n", g->index, name.ret == NVML_SUCCESS ? name.text : "N/A",
               uuid.ret == NVML_SUCCESS ? uuid.text : "N/A");
        return true;
}

int nvsmi_list_gpus(smi_t *s)
{
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (!nvsmi_gpu_line(s, g))
                        continue;
                /* Format of L__nvidia-smi-L_*.txt: MIG children indented, profile name in 11 columns. */
                for (size_t m = 0; m < g->n_mig; m++) {
                        const smi_mig_t *mi = &g->migs[m];
                        printf("  MIG %-11s Device %2u: (UUID: %s)\n", mi->profile ? mi->profile : "N/A", mi->dev,
                               mi->uuid_ret == NVML_SUCCESS ? mi->uuid : "N/A");
                }
        }
        return s->exit_code;
}

/* "0000:07:00.0"-style id for messages about a GPU, or its index when NVML cannot say. */
static char *lost_id(const gpu_info_t *g)
{
        char *s = NULL;
        /* NVML answers the PCI info of a lost GPU; its index only when even that fails. */
        bool have_bus = g->pci_ret == NVML_SUCCESS && g->pci.busIdLegacy[0] != '\0';
        int r = have_bus ? asprintf(&s, "%s", g->pci.busIdLegacy) : asprintf(&s, " %u", g->index);
        return r < 0 ? NULL : s;
}

/* Real wording for a GPU that fell off the bus; also sets the exit code to 15. */
void nvsmi_report_lost(smi_t *s, const gpu_info_t *g)
{
        _cleanup_free_ char *id = lost_id(g);
        printf("Unable to determine the device handle for GPU%s: GPU is lost.  Reboot the system to recover "
               "this GPU\n",
               id ? id : "");
        s->exit_code = SMI_EXIT_GPU_LOST;
}

/* ---- selection (-i) ---- */

/*
 * @dev: the handle, NULL when NVML gave none; @lost: NVML said GPU_IS_LOST
 * when handing it out (the handle then still answers its PCI info).
 */
static int add_gpu(smi_t *s, nvmlDevice_t dev, unsigned index, bool lost)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->gpus[i].index == index)
                        return 0;
        gpu_info_t *ng = realloc(s->gpus, (s->n + 1) * sizeof(*ng));
        if (!ng)
                return -ENOMEM;
        s->gpus = ng;
        memset(&s->gpus[s->n], 0, sizeof(s->gpus[s->n]));
        s->gpus[s->n].dev = dev;
        s->gpus[s->n].index = index;
        s->gpus[s->n].lost = lost || !dev;
        s->n++;
        return 0;
}

static int select_one(smi_t *s, const char *id)
{
        const gv_nvml_t *n = s->nvml;
        nvmlDevice_t dev = NULL;
        unsigned index = 0;
        nvmlReturn_t r;
        if (*id && strspn(id, "0123456789") == strlen(id)) {
                unsigned long v = strtoul(id, NULL, 10);
                if (v >= s->count)
                        return -ENOENT;
                index = (unsigned) v;
                r = n->nvmlDeviceGetHandleByIndex_v2(index, &dev);
                if (r != NVML_SUCCESS && !is_lost(r))
                        return -ENOENT;
                return add_gpu(s, dev, index, is_lost(r));
        }
        if (strncmp(id, "GPU-", 4) == 0)
                r = NV(n, nvmlDeviceGetHandleByUUID, id, &dev);
        else if (strchr(id, ':'))
                r = NV(n, nvmlDeviceGetHandleByPciBusId_v2, id, &dev);
        else
                return -EINVAL;
        if (is_lost(r) && dev) {
                /* A lost GPU answers no index: find its handle among the indexed ones. */
                for (unsigned i = 0; i < s->count; i++) {
                        nvmlDevice_t h = NULL;
                        nvmlReturn_t hr = n->nvmlDeviceGetHandleByIndex_v2(i, &h);
                        if ((hr == NVML_SUCCESS || is_lost(hr)) && h == dev)
                                return add_gpu(s, dev, i, true);
                }
                return -ENOENT;
        }
        if (r != NVML_SUCCESS)
                return -ENOENT;
        if (NV(n, nvmlDeviceGetIndex, dev, &index) != NVML_SUCCESS)
                return -ENOENT;
        return add_gpu(s, dev, index, false);
}

int nvsmi_select_gpus(smi_t *s, const char *ids)
{
        if (!ids) {
                for (unsigned i = 0; i < s->count; i++) {
                        nvmlDevice_t dev = NULL;
                        nvmlReturn_t r = s->nvml->nvmlDeviceGetHandleByIndex_v2(i, &dev);
                        if (r != NVML_SUCCESS && !is_lost(r))
                                dev = NULL; /* reported as lost / unreachable when used */
                        if (add_gpu(s, dev, i, r != NVML_SUCCESS) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        _cleanup_free_ char *copy = strdup(ids);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                while (*tok == ' ')
                        tok++;
                int r = select_one(s, tok);
                if (r < 0)
                        return r;
        }
        return s->n ? 0 : -ENOENT;
}

char *nvsmi_now_text(bool csv)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        localtime_r(&ts.tv_sec, &tm);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        /* asctime-like "Tue Dec 30 09:46:54 2025" (table, -q) or "2026/07/03 08:33:53.415" (CSV). */
        static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
        static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
        if (csv)
                fprintf(f, "%04d/%02d/%02d %02d:%02d:%02d.%03ld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                        tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
        else
                fprintf(f, "%s %s %2d %02d:%02d:%02d %d", days[tm.tm_wday % 7], months[tm.tm_mon % 12], tm.tm_mday,
                        tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}
