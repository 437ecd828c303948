/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Our nvidia-smi: a subset of NVIDIA's tool written over NVML through the
 * project's dlopen loader (src/nvml/nvml.h), so it runs on the mock
 * libnvidia-ml.so.1 and on a real driver alike.  Output formats follow the
 * real captures in shared/cases/nvidia-smi/; see docs/nvidia-smi.md.
 *
 * It needs no environment variable: the library is looked for beside the
 * executable (../lib64, ../lib, ../lib/x86_64-linux-gnu, and ../nvml in the
 * build tree) and then through the system search.
 *
 * Like the real tool it writes errors to stdout and exits with the NVML
 * return code of a fatal error (9 driver not loaded, 12 library not found,
 * 18 driver/library mismatch, 4 no permission, 15 GPU lost, 6 no device).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "abi/nvml/nvml-loader.h"
#include "mock/smi/smi.h"

/* nvidia-smi's documented return codes (nvidia-smi(1) "RETURN VALUE"). */
enum {
        SMI_EXIT_OK = 0,
        SMI_EXIT_INVALID_ARG = 2,
        SMI_EXIT_NO_PERMISSION = 4,
        SMI_EXIT_NOT_FOUND = 6,
        SMI_EXIT_DRIVER_NOT_LOADED = 9,
        SMI_EXIT_LIBRARY_NOT_FOUND = 12,
        SMI_EXIT_GPU_LOST = 15,
        SMI_EXIT_MISMATCH = 18,
        SMI_EXIT_OTHER = 255,
};

/* Call an optional NVML entry point; a symbol the library lacks reads as FUNCTION_NOT_FOUND. */
#define NV(n, fn, ...) ((n)->fn ? (n)->fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

typedef struct num {
        nvmlReturn_t ret;
        unsigned long long v;
} num_t;

typedef struct mig_info {
        nvmlDevice_t h;
        unsigned dev;             /* position among the GPU's MIG devices */
        unsigned gi, ci;
        nvmlReturn_t gi_ret, ci_ret;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvmlReturn_t uuid_ret;
        nvmlReturn_t attr_ret;
        nvmlDeviceAttributes_t attr;
        nvmlReturn_t mem_ret;
        nvmlMemory_t mem;
        char *profile;            /* "1g.5gb" (heap) */
} mig_info_t;

/* Everything one GPU reports, gathered once and shared by every output mode. */
typedef struct gpu_info {
        nvmlDevice_t dev;
        unsigned index;
        bool lost;
        nvmlReturn_t name_ret, uuid_ret, serial_ret, vbios_ret, part_ret, pci_ret, mem_ret, util_ret, ecc_ret,
                mig_ret, cc_ret, fabric_ret, procs_ret, constraints_ret;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE];
        char vbios[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE];
        char part[NVML_DEVICE_PART_NUMBER_BUFFER_SIZE];
        nvmlPciInfo_t pci;
        unsigned long long mem_total, mem_reserved, mem_used, mem_free; /* bytes */
        nvmlUtilization_t util;
        nvmlEnableState_t ecc_cur, ecc_pend;
        unsigned mig_cur, mig_pend;
        int cc_major, cc_minor;
        nvmlGpuFabricInfo_t fabric;
        unsigned min_limit, max_limit;
        num_t minor, temp, power, power_limit, enforced_limit, default_limit, fan, persistence, compute_mode, pstate,
                display_mode, display_active, arch, brand;
        num_t clocks[4], max_clocks[4]; /* nvmlClockType_t order */
        size_t n_mig;
        mig_info_t *migs;
        unsigned n_procs;
        nvmlProcessInfo_t *procs;
} gpu_info_t;

typedef struct smi {
        gv_nvml_t *nvml;
        char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        char nvml_version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
        char cuda_version[32];
        unsigned count;          /* devices NVML reports */
        size_t n;                /* selected GPUs */
        gpu_info_t *gpus;
        int exit_code;           /* 15 once a lost GPU was reported */
} smi_t;

static void usage(FILE *f)
{
        fputs("NVIDIA System Management Interface -- gpu-validator's nvidia-smi (a subset, over NVML)\n"
              "\n"
              "nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...\n"
              "\n"
              "    -h,   --help                Print usage information and exit.\n"
              "          --version             Print version information and exit.\n"
              "    -L,   --list-gpus           Display a list of GPUs connected to the system.\n"
              "    -q,   --query               Display GPU or Unit info.\n"
              "    -x,   --xml-format          Produce XML output (with -q).\n"
              "    -i,   --id=                 Target a specific GPU: index, UUID or PCI bus id;\n"
              "                                a comma separated list selects several.\n"
              "    --query-gpu=                Information about GPU, comma separated.\n"
              "    --format=                   csv, optionally with noheader and nounits.\n"
              "\n"
              "Supported --query-gpu fields:\n",
              f);
        size_t n;
        const smi_field_def_t *defs = smi_fields(&n);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "    %s", defs[i].name);
                for (size_t a = 0; a < GV_ARRAY_SIZE(defs[i].aliases) && defs[i].aliases[a]; a++)
                        fprintf(f, " (or %s)", defs[i].aliases[a]);
                fputc('\n', f);
        }
        fputs("\nReturn codes: 0 success, 2 invalid argument, 4 no permission, 6 no such GPU,\n"
              "9 driver not loaded, 12 NVML library not found, 15 GPU lost, 18 driver/library mismatch.\n",
              f);
}

/* ---- library lookup ---- */

static char *self_dir(void)
{
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        if (!self)
                return NULL;
        return strdup(dirname(self));
}

static int open_library(gv_nvml_t **out)
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

/* Store a call's result and the value it wrote; the call runs before the value is read. */
#define GET_NUM(out, var, call)                 \
        do {                                    \
                nvmlReturn_t r_ = (call);       \
                (out)->ret = r_;                \
                (out)->v = (unsigned long long) (var); \
        } while (0)

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
                mig_info_t *m = &g->migs[g->n_mig];
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

/* NOLINTNEXTLINE(readability-function-cognitive-complexity): one NVML query per field with its N/A fallbacks; to be split in the architecture refactor */
static void collect(const gv_nvml_t *n, gpu_info_t *g)
{
        unsigned u = 0;
        g->name_ret = NV(n, nvmlDeviceGetName, g->dev, g->name, sizeof(g->name));
        g->uuid_ret = NV(n, nvmlDeviceGetUUID, g->dev, g->uuid, sizeof(g->uuid));
        g->pci_ret = NV(n, nvmlDeviceGetPciInfo_v3, g->dev, &g->pci);
        if (is_lost(g->name_ret) || is_lost(g->uuid_ret) || is_lost(g->pci_ret)) {
                g->lost = true;
                return;
        }
        g->serial_ret = NV(n, nvmlDeviceGetSerial, g->dev, g->serial, sizeof(g->serial));
        g->vbios_ret = NV(n, nvmlDeviceGetVbiosVersion, g->dev, g->vbios, sizeof(g->vbios));
        g->part_ret = NV(n, nvmlDeviceGetBoardPartNumber, g->dev, g->part, sizeof(g->part));

        nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
        g->mem_ret = NV(n, nvmlDeviceGetMemoryInfo_v2, g->dev, &m2);
        if (g->mem_ret == NVML_SUCCESS) {
                g->mem_total = m2.total;
                g->mem_reserved = m2.reserved;
                g->mem_used = m2.used;
                g->mem_free = m2.free;
        } else {
                nvmlMemory_t m1;
                g->mem_ret = NV(n, nvmlDeviceGetMemoryInfo, g->dev, &m1);
                if (g->mem_ret == NVML_SUCCESS) {
                        g->mem_total = m1.total;
                        g->mem_used = m1.used;
                        g->mem_free = m1.free;
                }
        }
        g->util_ret = NV(n, nvmlDeviceGetUtilizationRates, g->dev, &g->util);
        g->ecc_ret = NV(n, nvmlDeviceGetEccMode, g->dev, &g->ecc_cur, &g->ecc_pend);
        g->mig_ret = NV(n, nvmlDeviceGetMigMode, g->dev, &g->mig_cur, &g->mig_pend);
        g->cc_ret = NV(n, nvmlDeviceGetCudaComputeCapability, g->dev, &g->cc_major, &g->cc_minor);
        g->fabric_ret = NV(n, nvmlDeviceGetGpuFabricInfo, g->dev, &g->fabric);
        g->constraints_ret = NV(n, nvmlDeviceGetPowerManagementLimitConstraints, g->dev, &g->min_limit,
                                &g->max_limit);

        GET_NUM(&g->minor, u, NV(n, nvmlDeviceGetMinorNumber, g->dev, &u));
        GET_NUM(&g->temp, u, NV(n, nvmlDeviceGetTemperature, g->dev, NVML_TEMPERATURE_GPU, &u));
        GET_NUM(&g->power, u, NV(n, nvmlDeviceGetPowerUsage, g->dev, &u));
        GET_NUM(&g->power_limit, u, NV(n, nvmlDeviceGetPowerManagementLimit, g->dev, &u));
        GET_NUM(&g->enforced_limit, u, NV(n, nvmlDeviceGetEnforcedPowerLimit, g->dev, &u));
        GET_NUM(&g->default_limit, u, NV(n, nvmlDeviceGetPowerManagementDefaultLimit, g->dev, &u));
        GET_NUM(&g->fan, u, NV(n, nvmlDeviceGetFanSpeed, g->dev, &u));
        for (unsigned c = 0; c < 4; c++) {
                GET_NUM(&g->clocks[c], u, NV(n, nvmlDeviceGetClockInfo, g->dev, (nvmlClockType_t) c, &u));
                GET_NUM(&g->max_clocks[c], u, NV(n, nvmlDeviceGetMaxClockInfo, g->dev, (nvmlClockType_t) c, &u));
        }
        nvmlEnableState_t es = NVML_FEATURE_DISABLED;
        GET_NUM(&g->persistence, es, NV(n, nvmlDeviceGetPersistenceMode, g->dev, &es));
        GET_NUM(&g->display_mode, es, NV(n, nvmlDeviceGetDisplayMode, g->dev, &es));
        GET_NUM(&g->display_active, es, NV(n, nvmlDeviceGetDisplayActive, g->dev, &es));
        nvmlComputeMode_t cm = NVML_COMPUTEMODE_DEFAULT;
        GET_NUM(&g->compute_mode, cm, NV(n, nvmlDeviceGetComputeMode, g->dev, &cm));
        nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
        GET_NUM(&g->pstate, ps, NV(n, nvmlDeviceGetPerformanceState, g->dev, &ps));
        nvmlDeviceArchitecture_t arch = NVML_DEVICE_ARCH_UNKNOWN;
        GET_NUM(&g->arch, arch, NV(n, nvmlDeviceGetArchitecture, g->dev, &arch));
        nvmlBrandType_t brand = NVML_BRAND_UNKNOWN;
        GET_NUM(&g->brand, brand, NV(n, nvmlDeviceGetBrand, g->dev, &brand));

        /* Processes: ask for the count first, then the list (INSUFFICIENT_SIZE is the count answer). */
        unsigned cnt = 0;
        g->procs_ret = NV(n, nvmlDeviceGetComputeRunningProcesses_v3, g->dev, &cnt, NULL);
        if (g->procs_ret == NVML_ERROR_INSUFFICIENT_SIZE && cnt > 0) {
                cnt += 4;
                g->procs = calloc(cnt, sizeof(*g->procs));
                if (g->procs) {
                        g->procs_ret = NV(n, nvmlDeviceGetComputeRunningProcesses_v3, g->dev, &cnt, g->procs);
                        g->n_procs = g->procs_ret == NVML_SUCCESS ? cnt : 0;
                }
        }
        if (g->mig_ret == NVML_SUCCESS && g->mig_cur == NVML_DEVICE_MIG_ENABLE)
                collect_migs(n, g);

        nvmlReturn_t all[] = { g->serial_ret, g->mem_ret, g->util_ret, g->temp.ret, g->power.ret, g->mig_ret };
        for (size_t i = 0; i < GV_ARRAY_SIZE(all); i++)
                if (is_lost(all[i]))
                        g->lost = true;
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
static void report_lost(smi_t *s, const gpu_info_t *g)
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

static int select_gpus(smi_t *s, const char *ids)
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

/* ---- text helpers ---- */

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

static char *now_text(bool csv)
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

static const char *brand_name(unsigned long long b)
{
        static const char *const names[] = {
                "Unknown", "Quadro", "Tesla", "NVS", "GRID", "GeForce", "Titan", "NVIDIA Virtual Applications",
                "NVIDIA Virtual PC", "NVIDIA Virtual Compute Server", "NVIDIA RTX Virtual Workstation",
                "NVIDIA Cloud Gaming", "Quadro RTX", "NVIDIA RTX", "NVIDIA", "GeForce RTX", "Titan RTX",
        };
        return b < GV_ARRAY_SIZE(names) ? names[b] : "Unknown";
}

static const char *arch_name(unsigned long long a)
{
        switch (a) {
        case NVML_DEVICE_ARCH_KEPLER:
                return "Kepler";
        case NVML_DEVICE_ARCH_MAXWELL:
                return "Maxwell";
        case NVML_DEVICE_ARCH_PASCAL:
                return "Pascal";
        case NVML_DEVICE_ARCH_VOLTA:
                return "Volta";
        case NVML_DEVICE_ARCH_TURING:
                return "Turing";
        case NVML_DEVICE_ARCH_AMPERE:
                return "Ampere";
        case NVML_DEVICE_ARCH_ADA:
                return "Ada Lovelace";
        case NVML_DEVICE_ARCH_HOPPER:
                return "Hopper";
        case NVML_DEVICE_ARCH_BLACKWELL:
                return "Blackwell";
        case NVML_DEVICE_ARCH_RUBIN:
                return "Rubin";
        default:
                return "Unknown";
        }
}

static const char *compute_mode_table(unsigned long long m)
{
        switch (m) {
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

static unsigned long long mib(unsigned long long bytes)
{
        return bytes / (1024ULL * 1024ULL);
}

/* Process name as the real tool shows it: argv[0] from /proc/PID/cmdline, else "N/A". */
static char *process_name(unsigned pid)
{
        _cleanup_free_ char *path = fmt("/proc/%u/cmdline", pid);
        if (!path)
                return NULL;
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return strdup("N/A");
        char *line = NULL;
        size_t cap = 0;
        ssize_t n = getdelim(&line, &cap, '\0', f);
        if (n <= 0 || !line[0]) {
                free(line);
                return strdup("N/A");
        }
        return line;
}

/* ---- -L ---- */

static void list_gpus(smi_t *s)
{
        for (size_t i = 0; i < s->n; i++) {
                gpu_info_t *g = &s->gpus[i];
                if (g->lost) {
                        report_lost(s, g);
                        continue;
                }
                /* Format of L__nvidia-smi-L_*.txt: MIG children indented, profile name in 11 columns. */
                printf("GPU %u: %s (UUID: %s)\n", g->index, g->name_ret == NVML_SUCCESS ? g->name : "N/A",
                       g->uuid_ret == NVML_SUCCESS ? g->uuid : "N/A");
                for (size_t m = 0; m < g->n_mig; m++) {
                        const mig_info_t *mi = &g->migs[m];
                        printf("  MIG %-11s Device %2u: (UUID: %s)\n", mi->profile ? mi->profile : "N/A", mi->dev,
                               mi->uuid_ret == NVML_SUCCESS ? mi->uuid : "N/A");
                }
        }
}

/* ---- --query-gpu ---- */

/* NOLINTNEXTLINE(readability-function-size): one case per --query-gpu field; to be split in the architecture refactor */
static smi_value_t field_value(const smi_t *s, const gpu_info_t *g, smi_field_id_t id, const char *timestamp)
{
        smi_value_t v = { .ret = NVML_SUCCESS };
#define NUMV(n_)                               \
        do {                                   \
                v.ret = (n_).ret;              \
                v.num = (n_).v;                \
        } while (0)
        switch (id) {
        case SMI_F_TIMESTAMP:
                v.str = timestamp;
                break;
        case SMI_F_DRIVER_VERSION:
                v.str = s->driver_version;
                break;
        case SMI_F_COUNT:
                v.num = s->count;
                break;
        case SMI_F_INDEX:
                v.num = g->index;
                break;
        case SMI_F_NAME:
                v.ret = g->name_ret;
                v.str = g->name;
                break;
        case SMI_F_SERIAL:
                v.ret = g->serial_ret;
                v.str = g->serial;
                break;
        case SMI_F_UUID:
                v.ret = g->uuid_ret;
                v.str = g->uuid;
                break;
        case SMI_F_PCI_BUS_ID:
                v.ret = g->pci_ret;
                v.str = g->pci.busId;
                break;
        case SMI_F_PCI_DOMAIN:
                v.ret = g->pci_ret;
                v.num = g->pci.domain;
                break;
        case SMI_F_PCI_BUS:
                v.ret = g->pci_ret;
                v.num = g->pci.bus;
                break;
        case SMI_F_PCI_DEVICE:
                v.ret = g->pci_ret;
                v.num = g->pci.device;
                break;
        case SMI_F_PCI_DEVICE_ID:
                v.ret = g->pci_ret;
                v.num = g->pci.pciDeviceId;
                break;
        case SMI_F_PCI_SUB_DEVICE_ID:
                v.ret = g->pci_ret;
                v.num = g->pci.pciSubSystemId;
                break;
        case SMI_F_DISPLAY_MODE:
                NUMV(g->display_mode);
                break;
        case SMI_F_DISPLAY_ACTIVE:
                NUMV(g->display_active);
                break;
        case SMI_F_PERSISTENCE_MODE:
                NUMV(g->persistence);
                break;
        case SMI_F_VBIOS_VERSION:
                v.ret = g->vbios_ret;
                v.str = g->vbios;
                break;
        case SMI_F_FAN_SPEED:
                NUMV(g->fan);
                break;
        case SMI_F_PSTATE:
                NUMV(g->pstate);
                break;
        case SMI_F_MEMORY_TOTAL:
                v.ret = g->mem_ret;
                v.num = mib(g->mem_total);
                break;
        case SMI_F_MEMORY_RESERVED:
                v.ret = g->mem_ret;
                v.num = mib(g->mem_reserved);
                break;
        case SMI_F_MEMORY_USED:
                v.ret = g->mem_ret;
                v.num = mib(g->mem_used);
                break;
        case SMI_F_MEMORY_FREE:
                v.ret = g->mem_ret;
                v.num = mib(g->mem_free);
                break;
        case SMI_F_COMPUTE_MODE:
                NUMV(g->compute_mode);
                break;
        case SMI_F_COMPUTE_CAP:
                v.ret = g->cc_ret;
                v.num = (unsigned long long) g->cc_major;
                v.num2 = g->cc_minor;
                break;
        case SMI_F_UTILIZATION_GPU:
                v.ret = g->util_ret;
                v.num = g->util.gpu;
                break;
        case SMI_F_UTILIZATION_MEMORY:
                v.ret = g->util_ret;
                v.num = g->util.memory;
                break;
        case SMI_F_ECC_MODE_CURRENT:
                v.ret = g->ecc_ret;
                v.num = g->ecc_cur;
                break;
        case SMI_F_ECC_MODE_PENDING:
                v.ret = g->ecc_ret;
                v.num = g->ecc_pend;
                break;
        case SMI_F_TEMPERATURE_GPU:
                NUMV(g->temp);
                break;
        case SMI_F_TEMPERATURE_MEMORY:
                /* Memory temperature needs NVML field values, which our NVML subset does not have. */
                v.ret = NVML_ERROR_NOT_SUPPORTED;
                break;
        case SMI_F_POWER_DRAW:
        case SMI_F_POWER_DRAW_AVERAGE:
        case SMI_F_POWER_DRAW_INSTANT:
                NUMV(g->power);
                break;
        case SMI_F_POWER_LIMIT:
                NUMV(g->power_limit);
                break;
        case SMI_F_ENFORCED_POWER_LIMIT:
                NUMV(g->enforced_limit);
                break;
        case SMI_F_POWER_DEFAULT_LIMIT:
                NUMV(g->default_limit);
                break;
        case SMI_F_POWER_MIN_LIMIT:
                v.ret = g->constraints_ret;
                v.num = g->min_limit;
                break;
        case SMI_F_POWER_MAX_LIMIT:
                v.ret = g->constraints_ret;
                v.num = g->max_limit;
                break;
        case SMI_F_CLOCKS_GR:
                NUMV(g->clocks[NVML_CLOCK_GRAPHICS]);
                break;
        case SMI_F_CLOCKS_SM:
                NUMV(g->clocks[NVML_CLOCK_SM]);
                break;
        case SMI_F_CLOCKS_MEM:
                NUMV(g->clocks[NVML_CLOCK_MEM]);
                break;
        case SMI_F_CLOCKS_VIDEO:
                NUMV(g->clocks[NVML_CLOCK_VIDEO]);
                break;
        case SMI_F_CLOCKS_MAX_GR:
                NUMV(g->max_clocks[NVML_CLOCK_GRAPHICS]);
                break;
        case SMI_F_CLOCKS_MAX_SM:
                NUMV(g->max_clocks[NVML_CLOCK_SM]);
                break;
        case SMI_F_CLOCKS_MAX_MEM:
                NUMV(g->max_clocks[NVML_CLOCK_MEM]);
                break;
        case SMI_F_MIG_MODE_CURRENT:
                v.ret = g->mig_ret;
                v.num = g->mig_cur;
                break;
        case SMI_F_MIG_MODE_PENDING:
                v.ret = g->mig_ret;
                v.num = g->mig_pend;
                break;
        default:
                v.ret = NVML_ERROR_UNKNOWN;
        }
#undef NUMV
        /* A library without the entry point is shown as not available, as for NOT_SUPPORTED. */
        if (v.ret == NVML_ERROR_FUNCTION_NOT_FOUND)
                v.ret = NVML_ERROR_NOT_SUPPORTED;
        return v;
}

static int do_query_gpu(smi_t *s, const smi_query_t *q)
{
        _cleanup_free_ char *ts = now_text(true);
        if (q->header) {
                _cleanup_free_ char *h = smi_csv_header(q);
                if (!h)
                        return SMI_EXIT_OTHER;
                printf("%s\n", h);
        }
        _cleanup_free_ smi_value_t *vals = calloc(q->n, sizeof(*vals));
        if (!vals)
                return SMI_EXIT_OTHER;
        for (size_t i = 0; i < s->n; i++) {
                gpu_info_t *g = &s->gpus[i];
                if (g->lost) {
                        report_lost(s, g);
                        continue;
                }
                for (size_t f = 0; f < q->n; f++)
                        vals[f] = field_value(s, g, q->fields[f]->id, ts ? ts : "");
                _cleanup_free_ char *row = smi_csv_row(q, vals);
                if (!row)
                        return SMI_EXIT_OTHER;
                printf("%s\n", row);
        }
        return s->exit_code;
}

/* ---- -q / -q -x ---- */

/* A leaf whose value is NVML-dependent: "N/A" when the call failed. */
static void leaf_num(smi_emit_t *e, const char *xml, const char *label, const num_t *n, const char *unit)
{
        if (n->ret != NVML_SUCCESS)
                smi_emit_leaf(e, xml, label, "N/A");
        else
                smi_emit_leaf(e, xml, label, "%llu%s%s", n->v, unit ? " " : "", unit ? unit : "");
}

static void leaf_watts(smi_emit_t *e, const char *xml, const char *label, nvmlReturn_t r, unsigned long long mw)
{
        if (r != NVML_SUCCESS)
                smi_emit_leaf(e, xml, label, "N/A");
        else
                smi_emit_leaf(e, xml, label, "%.2f W", (double) mw / 1000.0);
}

static void leaf_enabled(smi_emit_t *e, const char *xml, const char *label, nvmlReturn_t r, unsigned long long v)
{
        smi_emit_leaf(e, xml, label, "%s", r != NVML_SUCCESS ? "N/A" : v ? "Enabled" : "Disabled");
}

static void leaf_str(smi_emit_t *e, const char *xml, const char *label, nvmlReturn_t r, const char *v)
{
        smi_emit_leaf(e, xml, label, "%s", r == NVML_SUCCESS ? v : "N/A");
}

static void emit_memory(smi_emit_t *e, const char *xml, const char *label, nvmlReturn_t r, unsigned long long total,
                        unsigned long long reserved, unsigned long long used, unsigned long long freeb)
{
        smi_emit_open(e, xml, label, NULL, NULL);
        if (r != NVML_SUCCESS) {
                smi_emit_leaf(e, "total", "Total", "N/A");
                smi_emit_leaf(e, "reserved", "Reserved", "N/A");
                smi_emit_leaf(e, "used", "Used", "N/A");
                smi_emit_leaf(e, "free", "Free", "N/A");
        } else {
                smi_emit_leaf(e, "total", "Total", "%llu MiB", mib(total));
                smi_emit_leaf(e, "reserved", "Reserved", "%llu MiB", mib(reserved));
                smi_emit_leaf(e, "used", "Used", "%llu MiB", mib(used));
                smi_emit_leaf(e, "free", "Free", "%llu MiB", mib(freeb));
        }
        smi_emit_close(e, xml);
}

static void emit_mig_devices(smi_emit_t *e, const gpu_info_t *g)
{
        if (e->xml)
                smi_emit_open(e, "mig_devices", "MIG Devices", NULL, NULL);
        if (g->n_mig == 0)
                smi_emit_text(e, "None", false);
        for (size_t i = 0; i < g->n_mig; i++) {
                const mig_info_t *m = &g->migs[i];
                smi_emit_open(e, "mig_device", "MIG Device", NULL, NULL);
                smi_emit_leaf(e, "index", "Index", "%u", m->dev);
                leaf_num(e, "gpu_instance_id", "GPU Instance ID", &(num_t){ m->gi_ret, m->gi }, NULL);
                leaf_num(e, "compute_instance_id", "Compute Instance ID", &(num_t){ m->ci_ret, m->ci }, NULL);
                smi_emit_open(e, "device_attributes", "Device Attributes", NULL, NULL);
                smi_emit_open(e, "shared", "Shared", NULL, NULL);
                const nvmlDeviceAttributes_t *a = &m->attr;
                nvmlReturn_t r = m->attr_ret;
                leaf_num(e, "multiprocessor_count", "Multiprocessor count", &(num_t){ r, a->multiprocessorCount }, NULL);
                leaf_num(e, "copy_engine_count", "Copy Engine count", &(num_t){ r, a->sharedCopyEngineCount }, NULL);
                leaf_num(e, "encoder_count", "Encoder count", &(num_t){ r, a->sharedEncoderCount }, NULL);
                leaf_num(e, "decoder_count", "Decoder count", &(num_t){ r, a->sharedDecoderCount }, NULL);
                leaf_num(e, "ofa_count", "OFA count", &(num_t){ r, a->sharedOfaCount }, NULL);
                leaf_num(e, "jpg_count", "JPG count", &(num_t){ r, a->sharedJpegCount }, NULL);
                smi_emit_close(e, "shared");
                smi_emit_close(e, "device_attributes");
                emit_memory(e, "fb_memory_usage", "Shared FB Memory Usage", m->mem_ret, m->mem.total, 0, m->mem.used,
                            m->mem.free);
                smi_emit_close(e, "mig_device");
        }
        if (e->xml)
                smi_emit_close(e, "mig_devices");
}

static const char *fabric_state_name(unsigned s)
{
        switch (s) {
        case NVML_GPU_FABRIC_STATE_NOT_STARTED:
                return "Not Started";
        case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
                return "In Progress";
        case NVML_GPU_FABRIC_STATE_COMPLETED:
                return "Completed";
        default:
                return "N/A";
        }
}

/* NOLINTNEXTLINE(readability-function-size): one block per section of nvidia-smi -q; to be split in the architecture refactor */
static void emit_gpu(smi_t *s, smi_emit_t *e, const gpu_info_t *g)
{
        const gv_nvml_t *n = s->nvml;
        smi_emit_open(e, "gpu", "GPU", "id", g->pci.busId);
        leaf_str(e, "product_name", "Product Name", g->name_ret, g->name);
        leaf_str(e, "product_brand", "Product Brand", g->brand.ret, brand_name(g->brand.v));
        leaf_str(e, "product_architecture", "Product Architecture", g->arch.ret, arch_name(g->arch.v));
        leaf_enabled(e, "display_mode", "Display Mode", g->display_mode.ret, g->display_mode.v);
        leaf_enabled(e, "display_active", "Display Active", g->display_active.ret, g->display_active.v);
        leaf_enabled(e, "persistence_mode", "Persistence Mode", g->persistence.ret, g->persistence.v);
        smi_emit_open(e, "mig_mode", "MIG Mode", NULL, NULL);
        leaf_enabled(e, "current_mig", "Current", g->mig_ret, g->mig_cur);
        leaf_enabled(e, "pending_mig", "Pending", g->mig_ret, g->mig_pend);
        smi_emit_close(e, "mig_mode");
        emit_mig_devices(e, g);
        leaf_str(e, "serial", "Serial Number", g->serial_ret, g->serial);
        leaf_str(e, "uuid", "GPU UUID", g->uuid_ret, g->uuid);
        leaf_num(e, "minor_number", "Minor Number", &g->minor, NULL);
        leaf_str(e, "vbios_version", "VBIOS Version", g->vbios_ret, g->vbios);
        leaf_str(e, "board_part_number", "Board Part Number", g->part_ret, g->part);

        /* PCI: XML writes bare hex (xml__*), -q writes 0x-prefixed (q__*). */
        const nvmlPciInfo_t *p = &g->pci;
        smi_emit_open(e, "pci", "PCI", NULL, NULL);
        smi_emit_leaf(e, "pci_bus", "Bus", e->xml ? "%02X" : "0x%02X", p->bus);
        smi_emit_leaf(e, "pci_device", "Device", e->xml ? "%02X" : "0x%02X", p->device);
        smi_emit_leaf(e, "pci_domain", "Domain", e->xml ? "%04X" : "0x%04X", p->domain);
        smi_emit_leaf(e, "pci_device_id", "Device Id", e->xml ? "%08X" : "0x%08X", p->pciDeviceId);
        smi_emit_leaf(e, "pci_bus_id", "Bus Id", "%s", p->busId);
        smi_emit_leaf(e, "pci_sub_system_id", "Sub System Id", e->xml ? "%08X" : "0x%08X", p->pciSubSystemId);
        smi_emit_close(e, "pci");

        leaf_num(e, "fan_speed", "Fan Speed", &g->fan, "%");
        if (g->pstate.ret != NVML_SUCCESS || g->pstate.v >= NVML_PSTATE_UNKNOWN)
                smi_emit_leaf(e, "performance_state", "Performance State", "%s",
                              g->pstate.ret != NVML_SUCCESS ? "N/A" : "Unknown");
        else
                smi_emit_leaf(e, "performance_state", "Performance State", "P%llu", g->pstate.v);
        emit_memory(e, "fb_memory_usage", "FB Memory Usage", g->mem_ret, g->mem_total, g->mem_reserved, g->mem_used,
                    g->mem_free);
        leaf_str(e, "compute_mode", "Compute Mode", g->compute_mode.ret, smi_compute_mode_name(g->compute_mode.v));

        smi_emit_open(e, "utilization", "Utilization", NULL, NULL);
        leaf_num(e, "gpu_util", "GPU", &(num_t){ g->util_ret, g->util.gpu }, "%");
        leaf_num(e, "memory_util", "Memory", &(num_t){ g->util_ret, g->util.memory }, "%");
        smi_emit_close(e, "utilization");

        smi_emit_open(e, "ecc_mode", "ECC Mode", NULL, NULL);
        leaf_enabled(e, "current_ecc", "Current", g->ecc_ret, g->ecc_cur);
        leaf_enabled(e, "pending_ecc", "Pending", g->ecc_ret, g->ecc_pend);
        smi_emit_close(e, "ecc_mode");

        smi_emit_open(e, "temperature", "Temperature", NULL, NULL);
        leaf_num(e, "gpu_temp", "GPU Current Temp", &g->temp, "C");
        smi_emit_close(e, "temperature");

        smi_emit_open(e, "gpu_power_readings", "GPU Power Readings", NULL, NULL);
        leaf_watts(e, "average_power_draw", "Average Power Draw", g->power.ret, g->power.v);
        leaf_watts(e, "instant_power_draw", "Instantaneous Power Draw", g->power.ret, g->power.v);
        leaf_watts(e, "current_power_limit", "Current Power Limit", g->power_limit.ret, g->power_limit.v);
        leaf_watts(e, "default_power_limit", "Default Power Limit", g->default_limit.ret, g->default_limit.v);
        leaf_watts(e, "min_power_limit", "Min Power Limit", g->constraints_ret, g->min_limit);
        leaf_watts(e, "max_power_limit", "Max Power Limit", g->constraints_ret, g->max_limit);
        smi_emit_close(e, "gpu_power_readings");

        static const struct {
                const char *xml, *label;
        } clk[4] = { { "graphics_clock", "Graphics" }, { "sm_clock", "SM" }, { "mem_clock", "Memory" },
                     { "video_clock", "Video" } };
        smi_emit_open(e, "clocks", "Clocks", NULL, NULL);
        for (int c = 0; c < 4; c++)
                leaf_num(e, clk[c].xml, clk[c].label, &g->clocks[c], "MHz");
        smi_emit_close(e, "clocks");
        smi_emit_open(e, "max_clocks", "Max Clocks", NULL, NULL);
        for (int c = 0; c < 4; c++)
                leaf_num(e, clk[c].xml, clk[c].label, &g->max_clocks[c], "MHz");
        smi_emit_close(e, "max_clocks");

        smi_emit_open(e, "fabric", "Fabric", NULL, NULL);
        bool fab = g->fabric_ret == NVML_SUCCESS && g->fabric.state != NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
        smi_emit_leaf(e, "state", "State", "%s", fab ? fabric_state_name(g->fabric.state) : "N/A");
        if (fab && g->fabric.state == NVML_GPU_FABRIC_STATE_COMPLETED)
                smi_emit_leaf(e, "status", "Status", "%s",
                              g->fabric.status == NVML_SUCCESS ? "Success" : gv_nvml_strerror(n, g->fabric.status));
        else
                smi_emit_leaf(e, "status", "Status", "N/A");
        if (fab) {
                const unsigned char *u = g->fabric.clusterUuid;
                smi_emit_leaf(e, "cliqueId", "CliqueId", "%u", g->fabric.cliqueId);
                smi_emit_leaf(e, "clusterUuid", "ClusterUUID",
                              "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                              u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                              u[15]);
        } else {
                smi_emit_leaf(e, "cliqueId", "CliqueId", "N/A");
                smi_emit_leaf(e, "clusterUuid", "ClusterUUID", "N/A");
        }
        smi_emit_close(e, "fabric");

        if (!e->xml && g->n_procs == 0) {
                smi_emit_leaf(e, "processes", "Processes", "None");
        } else {
                smi_emit_open(e, "processes", "Processes", NULL, NULL);
                for (unsigned i = 0; i < g->n_procs; i++) {
                        const nvmlProcessInfo_t *pi = &g->procs[i];
                        _cleanup_free_ char *pname = process_name(pi->pid);
                        smi_emit_open(e, "process_info", "Process ID", NULL, NULL);
                        if (pi->gpuInstanceId == 0xFFFFFFFFu)
                                smi_emit_leaf(e, "gpu_instance_id", "GPU instance ID", "N/A");
                        else
                                smi_emit_leaf(e, "gpu_instance_id", "GPU instance ID", "%u", pi->gpuInstanceId);
                        if (pi->computeInstanceId == 0xFFFFFFFFu)
                                smi_emit_leaf(e, "compute_instance_id", "Compute instance ID", "N/A");
                        else
                                smi_emit_leaf(e, "compute_instance_id", "Compute instance ID", "%u",
                                              pi->computeInstanceId);
                        smi_emit_leaf(e, "pid", "Process ID", "%u", pi->pid);
                        smi_emit_leaf(e, "type", "Type", "C");
                        smi_emit_leaf(e, "process_name", "Name", "%s", na(pname));
                        smi_emit_leaf(e, "used_memory", "Used GPU Memory", "%llu MiB", mib(pi->usedGpuMemory));
                        smi_emit_close(e, "process_info");
                }
                smi_emit_close(e, "processes");
        }
        smi_emit_close(e, "gpu");
        smi_emit_blank(e);
}

static int query_full(smi_t *s, bool xml)
{
        smi_emit_t e = { .f = stdout, .xml = xml };
        _cleanup_free_ char *ts = now_text(false);
        smi_emit_begin(&e);
        smi_emit_leaf(&e, "timestamp", "Timestamp", "%s", na(ts));
        smi_emit_leaf(&e, "driver_version", "Driver Version", "%s", s->driver_version);
        smi_emit_leaf(&e, "cuda_version", "CUDA Version", "%s", s->cuda_version);
        if (!xml)
                smi_emit_blank(&e);
        smi_emit_leaf(&e, "attached_gpus", "Attached GPUs", "%u", s->count);
        for (size_t i = 0; i < s->n; i++) {
                if (s->gpus[i].lost) {
                        report_lost(s, &s->gpus[i]);
                        continue;
                }
                emit_gpu(s, &e, &s->gpus[i]);
        }
        smi_emit_end(&e);
        return s->exit_code;
}

/* ---- default table ---- */

static char *watts_text(const num_t *n)
{
        return n->ret == NVML_SUCCESS ? fmt("%lluW", (n->v + 500) / 1000) : strdup("N/A");
}

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): the default table, one block per nvidia-smi row; to be split in the architecture refactor */
static int table(smi_t *s)
{
        _cleanup_free_ char *ts = now_text(false);
        for (size_t i = 0; i < s->n; i++)
                if (s->gpus[i].lost)
                        report_lost(s, &s->gpus[i]);
        smi_table_header(stdout, na(ts), s->driver_version, s->cuda_version);

        size_t n_mig = 0, n_proc = 0;
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (g->lost)
                        continue;
                bool mig = g->mig_ret == NVML_SUCCESS && g->mig_cur == NVML_DEVICE_MIG_ENABLE;
                n_mig += g->n_mig;
                n_proc += g->n_procs;
                _cleanup_free_ char *fan = g->fan.ret == NVML_SUCCESS ? fmt("%llu%%", g->fan.v) : strdup("N/A");
                _cleanup_free_ char *temp = g->temp.ret == NVML_SUCCESS ? fmt("%lluC", g->temp.v) : strdup("N/A");
                _cleanup_free_ char *perf = g->pstate.ret == NVML_SUCCESS && g->pstate.v < NVML_PSTATE_UNKNOWN
                                                    ? fmt("P%llu", g->pstate.v)
                                                    : strdup("N/A");
                _cleanup_free_ char *pw = watts_text(&g->power);
                _cleanup_free_ char *cap = watts_text(&g->power_limit);
                _cleanup_free_ char *mu = g->mem_ret == NVML_SUCCESS ? fmt("%lluMiB", mib(g->mem_used)) : strdup("N/A");
                _cleanup_free_ char *mt = g->mem_ret == NVML_SUCCESS ? fmt("%lluMiB", mib(g->mem_total)) : strdup("N/A");
                _cleanup_free_ char *util = g->util_ret == NVML_SUCCESS && !mig ? fmt("%u%%", g->util.gpu)
                                                                                 : strdup("N/A");
                /* Volatile Uncorr. ECC: error count (0, none injected), "On" under MIG, N/A without ECC. */
                const char *ecc = g->ecc_ret != NVML_SUCCESS || g->ecc_cur != NVML_FEATURE_ENABLED ? "N/A"
                                  : mig                                                           ? "On"
                                                                                                  : "0";
                smi_table_gpu_t row = {
                        .index = g->index,
                        .name = g->name_ret == NVML_SUCCESS ? g->name : "N/A",
                        .persistence = g->persistence.ret != NVML_SUCCESS ? "N/A" : g->persistence.v ? "On" : "Off",
                        .bus_id = g->pci_ret == NVML_SUCCESS ? g->pci.busId : "N/A",
                        .disp_a = g->display_active.ret != NVML_SUCCESS ? "N/A"
                                  : g->display_active.v                 ? "On"
                                                                        : "Off",
                        .ecc = ecc,
                        .fan = na(fan),
                        .temp = na(temp),
                        .perf = na(perf),
                        .pwr_usage = na(pw),
                        .pwr_cap = na(cap),
                        .mem_used = na(mu),
                        .mem_total = na(mt),
                        .gpu_util = na(util),
                        .compute_mode = g->compute_mode.ret == NVML_SUCCESS ? compute_mode_table(g->compute_mode.v)
                                                                            : "N/A",
                        .mig_mode = g->mig_ret != NVML_SUCCESS ? "N/A" : mig ? "Enabled" : "Disabled",
                };
                smi_table_gpu(stdout, &row);
        }
        fputs("\n", stdout);

        if (n_mig) {
                _cleanup_free_ smi_table_mig_t *rows = calloc(n_mig, sizeof(*rows));
                _cleanup_strv_free_ char **strs = calloc(n_mig * 2 + 1, sizeof(char *));
                if (!rows || !strs)
                        return SMI_EXIT_OTHER;
                size_t k = 0;
                for (size_t i = 0; i < s->n; i++) {
                        const gpu_info_t *g = &s->gpus[i];
                        if (g->lost)
                                continue;
                        for (size_t m = 0; m < g->n_mig; m++, k++) {
                                const mig_info_t *mi = &g->migs[m];
                                strs[2 * k] = mi->mem_ret == NVML_SUCCESS ? fmt("%lluMiB", mib(mi->mem.used))
                                                                          : strdup("N/A");
                                strs[2 * k + 1] = mi->mem_ret == NVML_SUCCESS ? fmt("%lluMiB", mib(mi->mem.total))
                                                                              : strdup("N/A");
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
        }

        _cleanup_free_ smi_table_process_t *procs = n_proc ? calloc(n_proc, sizeof(*procs)) : NULL;
        _cleanup_strv_free_ char **pstr = n_proc ? calloc(n_proc * 4 + 1, sizeof(char *)) : NULL;
        size_t k = 0;
        if (n_proc && procs && pstr) {
                for (size_t i = 0; i < s->n; i++) {
                        const gpu_info_t *g = &s->gpus[i];
                        if (g->lost)
                                continue;
                        for (unsigned j = 0; j < g->n_procs; j++, k++) {
                                const nvmlProcessInfo_t *pi = &g->procs[j];
                                pstr[4 * k] = pi->gpuInstanceId == 0xFFFFFFFFu ? strdup("N/A")
                                                                                : fmt("%u", pi->gpuInstanceId);
                                pstr[4 * k + 1] = pi->computeInstanceId == 0xFFFFFFFFu
                                                          ? strdup("N/A")
                                                          : fmt("%u", pi->computeInstanceId);
                                pstr[4 * k + 2] = process_name(pi->pid);
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
        }
        smi_table_processes(stdout, procs, k);
        return s->exit_code;
}

/* ---- init ---- */

static int init_failed(const gv_nvml_t *n, nvmlReturn_t r)
{
        switch (r) {
        case NVML_ERROR_DRIVER_NOT_LOADED:
                printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
                       "that the latest NVIDIA driver is installed and running.\n\n");
                return SMI_EXIT_DRIVER_NOT_LOADED;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                printf("Failed to initialize NVML: Driver/library version mismatch\n");
                return SMI_EXIT_MISMATCH;
        case NVML_ERROR_NO_PERMISSION:
                printf("Failed to initialize NVML: Insufficient Permissions\n");
                return SMI_EXIT_NO_PERMISSION;
        case NVML_ERROR_LIBRARY_NOT_FOUND:
                printf("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the "
                       "NVIDIA Display Driver is properly installed and present in your system.\n"
                       "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n");
                return SMI_EXIT_LIBRARY_NOT_FOUND;
        default:
                printf("Failed to initialize NVML: %s\n", gv_nvml_strerror(n, r));
                return (int) r > 0 && (int) r < 255 ? (int) r : SMI_EXIT_OTHER;
        }
}

static int print_version(smi_t *s)
{
        printf("NVIDIA-SMI version  : %s\n", s->driver_version);
        printf("NVML version        : %s\n", s->nvml_version[0] ? s->nvml_version : "N/A");
        printf("DRIVER version      : %s\n", s->driver_version);
        printf("CUDA Version        : %s\n", s->cuda_version);
        return SMI_EXIT_OK;
}

enum { OPT_QUERY_GPU = 256, OPT_FORMAT, OPT_VERSION };

static int invalid_args(void)
{
        printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
        return SMI_EXIT_INVALID_ARG;
}

/* NOLINTNEXTLINE(readability-function-size): option parsing and dispatch of nvidia-smi's command line; to be split in the architecture refactor */
int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "list-gpus", no_argument, NULL, 'L' },
                { "query", no_argument, NULL, 'q' },
                { "xml-format", no_argument, NULL, 'x' },
                { "id", required_argument, NULL, 'i' },
                { "query-gpu", required_argument, NULL, OPT_QUERY_GPU },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        bool list = false, query = false, xml = false, version = false;
        const char *ids = NULL, *query_gpu = NULL, *format = NULL;
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "hLqxi:", opts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        return SMI_EXIT_OK;
                case 'L':
                        list = true;
                        break;
                case 'q':
                        query = true;
                        break;
                case 'x':
                        xml = true;
                        break;
                case 'i':
                        ids = optarg;
                        break;
                case OPT_QUERY_GPU:
                        query_gpu = optarg;
                        break;
                case OPT_FORMAT:
                        format = optarg;
                        break;
                case OPT_VERSION:
                        version = true;
                        break;
                default:
                        return invalid_args();
                }
        }
        if (optind < argc || (xml && !query) || (list + query + (query_gpu != NULL) > 1))
                return invalid_args();

        smi_query_t q = { 0 };
        if (query_gpu) {
                _cleanup_free_ char *bad = NULL;
                switch (smi_query_parse(query_gpu, format, &q, &bad)) {
                case SMI_PARSE_OK:
                        break;
                case SMI_PARSE_BAD_FIELD:
                        printf("Field \"%s\" is not a valid field to query.\n\n", bad ? bad : "");
                        return SMI_EXIT_INVALID_ARG;
                case SMI_PARSE_BAD_FORMAT:
                        printf("\"%s\" is not a valid format option.\n\n", bad ? bad : "");
                        return SMI_EXIT_INVALID_ARG;
                case SMI_PARSE_NO_FORMAT:
                        printf("Format must be specified when querying.  Please run 'nvidia-smi "
                               "--help-query-gpu' for help.\n\n");
                        return SMI_EXIT_INVALID_ARG;
                case SMI_PARSE_EMPTY:
                        printf("No fields given to --query-gpu.\n\n");
                        return SMI_EXIT_INVALID_ARG;
                default:
                        return SMI_EXIT_OTHER;
                }
        }

        smi_t s = { 0 };
        if (open_library(&s.nvml) < 0) {
                smi_query_free(&q);
                return init_failed(NULL, NVML_ERROR_LIBRARY_NOT_FOUND);
        }
        int rc;
        nvmlReturn_t r = s.nvml->nvmlInit_v2();
        if (r != NVML_SUCCESS) {
                rc = init_failed(s.nvml, r);
                goto out_close;
        }
        if (s.nvml->nvmlSystemGetDriverVersion(s.driver_version, sizeof(s.driver_version)) != NVML_SUCCESS)
                snprintf(s.driver_version, sizeof(s.driver_version), "N/A");
        if (NV(s.nvml, nvmlSystemGetNVMLVersion, s.nvml_version, sizeof(s.nvml_version)) != NVML_SUCCESS)
                s.nvml_version[0] = '\0';
        int cuda = 0;
        if (NV(s.nvml, nvmlSystemGetCudaDriverVersion_v2, &cuda) == NVML_SUCCESS ||
            NV(s.nvml, nvmlSystemGetCudaDriverVersion, &cuda) == NVML_SUCCESS)
                snprintf(s.cuda_version, sizeof(s.cuda_version), "%d.%d", cuda / 1000, (cuda % 1000) / 10);
        else
                snprintf(s.cuda_version, sizeof(s.cuda_version), "N/A");

        if (version) {
                rc = print_version(&s);
                goto out_shutdown;
        }

        r = s.nvml->nvmlDeviceGetCount_v2(&s.count);
        if (r != NVML_SUCCESS) {
                rc = init_failed(s.nvml, r);
                goto out_shutdown;
        }
        if (s.count == 0) {
                printf("No devices were found\n");
                rc = SMI_EXIT_NOT_FOUND;
                goto out_shutdown;
        }
        int sr = select_gpus(&s, ids);
        if (sr == -ENOMEM) {
                rc = SMI_EXIT_OTHER;
                goto out_free;
        }
        if (sr < 0) {
                printf("No devices were found\n");
                rc = SMI_EXIT_NOT_FOUND;
                goto out_free;
        }
        for (size_t i = 0; i < s.n; i++) {
                gpu_info_t *g = &s.gpus[i];
                if (g->lost && g->dev) /* lost at its handle: only its PCI info (bus id) answers */
                        g->pci_ret = NV(s.nvml, nvmlDeviceGetPciInfo_v3, g->dev, &g->pci);
                else if (!g->lost)
                        collect(s.nvml, g);
        }

        if (list)
                rc = (list_gpus(&s), s.exit_code);
        else if (query_gpu)
                rc = do_query_gpu(&s, &q);
        else if (query)
                rc = query_full(&s, xml);
        else
                rc = table(&s);

out_free:
        for (size_t i = 0; i < s.n; i++)
                free_gpu(&s.gpus[i]);
        free(s.gpus);
out_shutdown:
        s.nvml->nvmlShutdown();
out_close:
        gv_nvml_close(&s.nvml);
        smi_query_free(&q);
        (void) fflush(stdout); /* exit() flushes again; the exit code is the real one's, whatever the output did */
        return rc;
}
