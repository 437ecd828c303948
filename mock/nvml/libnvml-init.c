/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: init/shutdown (profile selection, environment faults), error strings, system queries.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "abi/nvml/nvml-returns.h"
#include "mock/nvml/libnvml-internal.h"

#define PROFILE_BESIDE_LIBRARY "nvml-mock.yaml"

/* ------------------------------------------------------------------ */
/* init / shutdown                                                     */

static void anchor(void)
{
}

/* "<folder of this library>/nvml-mock.yaml" when that file exists, else NULL. */
static char *profile_beside_library(void)
{
        Dl_info info;
        if (!dladdr((void *) (uintptr_t) &anchor, &info) || !info.dli_fname)
                return NULL;
        const char *slash = strrchr(info.dli_fname, '/');
        char *path = NULL;
        if (slash) {
                if (asprintf(&path, "%.*s/%s", (int) (slash - info.dli_fname), info.dli_fname,
                             PROFILE_BESIDE_LIBRARY) < 0)
                        return NULL;
        } else if (!(path = strdup(PROFILE_BESIDE_LIBRARY))) {
                return NULL;
        }
        if (access(path, F_OK) != 0) {
                free(path);
                return NULL;
        }
        return path;
}

/* "0,3, 5" -> a mask with bits 0, 3 and 5; -EINVAL on anything else.  @s: non-NULL. */
static int parse_uint_list(const char *s, uint64_t *mask)
{
        uint64_t m = 0;
        while (*s) {
                char *end;
                errno = 0;
                unsigned long v = strtoul(s, &end, 10);
                if (errno || end == s || v >= MAXG)
                        return -EINVAL;
                m |= 1ULL << v;
                s = end;
                while (*s == ',' || *s == ' ')
                        s++;
        }
        *mask = m;
        return 0;
}

/* MOCK_NVML_XIDS="gpu:xid[:after_ms],..." appended to the profile's schedule. */
static int parse_env_xids(gv_mock_faults_t *f, const char *s)
{
        while (s && *s) {
                unsigned g, a = 0;
                unsigned long long x;
                int n = 0;
                if (sscanf(s, "%u:%llu%n", &g, &x, &n) != 2 || g >= MAXG)
                        return -EINVAL;
                s += n;
                if (*s == ':') {
                        if (sscanf(s, ":%u%n", &a, &n) != 1)
                                return -EINVAL;
                        s += n;
                }
                if (*s && *s != ',' && *s != ';')
                        return -EINVAL;
                if (*s)
                        s++;
                if (f->n_xids >= MAX_XIDS)
                        return -E2BIG;
                gv_mock_xid_t *nx = realloc(f->xids, (f->n_xids + 1) * sizeof(*nx));
                if (!nx)
                        return -ENOMEM;
                f->xids = nx;
                f->xids[f->n_xids++] = (gv_mock_xid_t) { .gpu = g, .xid = x, .after_ms = a };
        }
        return 0;
}

/*
 * The GPUs this process may see, as the driver shows them: in a container the
 * runtime creates /dev/nvidiactl and only the /dev/nvidia<minor> of the GPUs it
 * was given (NVIDIA's toolkit, a CDI spec), and NVML enumerates those alone,
 * renumbered from 0.  Where the device folder (MOCK_NVML_DEV_DIR, default /dev;
 * "" turns this off) has no nvidiactl, or names none of the profile's GPUs,
 * every GPU is seen (a mock root on a plain host).  Bit i: profile GPU i.
 */
static uint64_t visible_gpus(const gv_mock_profile_t *p, bool *container)
{
        *container = false;
        uint64_t all = p->device_count >= 64 ? ~0ULL : (1ULL << p->device_count) - 1, seen = 0;
        const char *env = getenv("MOCK_NVML_DEV_DIR");
        const char *dir = env ? env : "/dev";
        char path[PATH_MAX];
        if (!*dir || snprintf(path, sizeof(path), "%s/nvidiactl", dir) >= (int) sizeof(path) || access(path, F_OK) != 0)
                return all;
        *container = true;
        for (unsigned i = 0; i < p->device_count; i++) {
                int n = snprintf(path, sizeof(path), "%s/nvidia%u", dir, p->devices[i].minor_number);
                if (n > 0 && n < (int) sizeof(path) && access(path, F_OK) == 0)
                        seen |= 1ULL << i;
        }
        return seen ? seen : all;
}

/*
 * The MIG devices of the GPUs this process sees, as the driver shows them: in a
 * container given MIG devices the runtime creates nvidia-caps/nvidia-cap<minor>
 * for their GPU instance's and compute instance's access capability, and NVML
 * lists those MIG devices alone.  Only where <device folder>/nvidia-caps exists;
 * the minors are the driver's (docs/mock-driver-root.md "MIG").
 */
static int keep_visible_mig_devices(gv_mock_profile_t *p, gv_error_t **err)
{
        const char *env = getenv("MOCK_NVML_DEV_DIR");
        const char *dir = env ? env : "/dev";
        char path[PATH_MAX];
        struct stat st;
        if (!*dir || snprintf(path, sizeof(path), "%s/nvidia-caps", dir) >= (int) sizeof(path) ||
            stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
                return 0;
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                uint64_t keep = 0;
                for (size_t k = 0; k < d->n_mig_devices && k < 64; k++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[k];
                        if (m->gi_id >= 15 || m->ci_id >= 8)
                                continue; /* past the driver's range: no capability, never visible */
                        unsigned gi = 3u + d->minor_number * 135u + m->gi_id * 9u, ci = gi + 1u + m->ci_id;
                        char a[PATH_MAX], b[PATH_MAX];
                        int na = snprintf(a, sizeof(a), "%s/nvidia-cap%u", path, gi);
                        int nb = snprintf(b, sizeof(b), "%s/nvidia-cap%u", path, ci);
                        if (na > 0 && na < (int) sizeof(a) && nb > 0 && nb < (int) sizeof(b) && access(a, F_OK) == 0 &&
                            access(b, F_OK) == 0)
                                keep |= 1ULL << k;
                }
                uint64_t all = d->n_mig_devices >= 64 ? ~0ULL : (1ULL << d->n_mig_devices) - 1;
                int r;
                if (d->n_mig_devices && keep != all && (r = gv_mock_profile_keep_mig_devices(p, i, keep, err)) < 0)
                        return r;
        }
        return 0;
}

/* Loads and finalizes the profile the environment selects; NVML_SUCCESS or the init error. */
static nvmlReturn_t load_profile(void)
{
        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_profile_t *p = NULL;
        const char *cfg = getenv("MOCK_NVML_CONFIG");
        _cleanup_free_ char *beside = NULL;
        int r;
        if (cfg && *cfg) {
                r = gv_mock_profile_load_file(cfg, &p, &err);
        } else if ((beside = profile_beside_library())) {
                r = gv_mock_profile_load_file(beside, &p, &err);
        } else {
                r = gv_mock_profile_load_builtin(GV_MOCK_DEFAULT_PROFILE, &p, &err);
        }
        const char *n = getenv("MOCK_NVML_NUM_DEVICES");
        if (r >= 0 && n && *n) {
                char *end;
                unsigned long v = strtoul(n, &end, 10);
                if (*end || v > UINT_MAX)
                        r = gv_error_set(&err, EINVAL, GV_REASON_CONFIG, "MOCK_NVML_NUM_DEVICES=%s: expected 1..64", n);
                else
                        r = gv_mock_profile_set_gpu_count(p, (unsigned) v, &err);
                if (r < 0)
                        gv_error_prefix(&err, "MOCK_NVML_NUM_DEVICES");
        }
        const char *node = getenv("NODE_NAME");
        if (r >= 0 && node && *node)
                r = gv_mock_profile_set_node_name(p, node, &err);
        if (r >= 0)
                r = gv_mock_profile_finalize(p, &err);
        const char *lost = getenv("MOCK_NVML_LOST_GPUS");
        uint64_t lost_mask = 0;
        if (r >= 0 && lost && parse_uint_list(lost, &lost_mask) < 0)
                r = gv_error_set(&err, EINVAL, GV_REASON_CONFIG, "MOCK_NVML_LOST_GPUS=%s: expected GPU indexes like 2,5",
                                 lost);
        const char *xids = getenv("MOCK_NVML_XIDS");
        if (r >= 0 && xids && parse_env_xids(&p->faults, xids) < 0)
                r = gv_error_set(&err, EINVAL, GV_REASON_CONFIG,
                                 "MOCK_NVML_XIDS=%s: expected gpu:xid[:after_ms] separated by commas", xids);
        int fabric = -1;
        const char *fs = getenv("MOCK_NVML_FABRIC_STATE");
        if (r >= 0 && fs && *fs) {
                static const char *const names[] = { "not-supported", "not-started", "in-progress", "completed" };
                for (int i = 0; i < 4; i++)
                        if (strcasecmp(fs, names[i]) == 0)
                                fabric = i;
                if (fabric < 0)
                        r = gv_error_set(&err, EINVAL, GV_REASON_CONFIG,
                                         "MOCK_NVML_FABRIC_STATE=%s: expected not-started, in-progress or completed", fs);
        }
        bool container = false;
        uint64_t seen = r >= 0 ? visible_gpus(p, &container) : 0;
        unsigned full = r >= 0 ? p->device_count : 0, n_seen = 0;
        if (r >= 0) {
                p->faults.lost_gpus |= lost_mask; /* node indexes: follow their GPUs */
                lost_mask = 0;
                for (unsigned i = 0; i < full; i++)
                        if (seen & (1ULL << i))
                                S.host_index[n_seen++] = i;
                if (n_seen < full)
                        r = gv_mock_profile_keep_gpus(p, seen, &err);
                if (r >= 0 && container)
                        r = keep_visible_mig_devices(p, &err);
        }
        if (r < 0) {
                mn_debug("%s", err && err->msg ? err->msg : "profile error");
                gv_mock_profile_free(&p);
                return NVML_ERROR_UNKNOWN;
        }
        if (p->faults.init_error != NVML_SUCCESS) {
                nvmlReturn_t ir = (nvmlReturn_t) p->faults.init_error;
                mn_debug("profile %s: faults.init_error: returning %u", p->source, p->faults.init_error);
                gv_mock_profile_free(&p);
                return ir;
        }
        const char *xf = getenv("MOCK_NVML_XID_FILE");
        char *xid_file = xf && *xf                     ? strdup(xf)
                         : p->faults.xid_control_file ? strdup(p->faults.xid_control_file)
                                                      : mn_control_beside(p->source, GV_MOCK_ROOT_XID_NAME);
        S.profile = p;
        S.lost = p->faults.lost_gpus | lost_mask;
        S.fabric_override = fabric >= 0 ? fabric : p->faults.fabric_in_progress ? NVML_GPU_FABRIC_STATE_IN_PROGRESS : -1;
        free(S.xid_file);
        S.xid_file = xid_file;
        clock_gettime(CLOCK_MONOTONIC, &S.init_time);
        mn_control_open();
        mn_debug("loaded %s: %u GPU(s), driver %s", p->source, p->device_count, p->driver_version);
        if (n_seen < full)
                mn_debug("device nodes: %u of the node's %u GPU(s) visible", n_seen, full);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
        if (flags & ~(unsigned) (NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH))
                return NVML_ERROR_INVALID_ARGUMENT;
        pthread_mutex_lock(&S.lock);
        if (S.refcount) {
                S.refcount++;
                return mn_leave(NVML_SUCCESS);
        }
        const char *ie = getenv("MOCK_NVML_INIT_ERROR");
        unsigned code;
        if (ie && *ie) {
                if (gv_mock_parse_return_name(ie, &code) < 0) {
                        mn_debug("MOCK_NVML_INIT_ERROR=%s: expected driver-not-loaded, no-permission, "
                              "lib-rm-version-mismatch or an NVML return number", ie);
                        return mn_leave(NVML_ERROR_UNKNOWN);
                }
                if (code != NVML_SUCCESS) {
                        mn_debug("MOCK_NVML_INIT_ERROR: returning %u", code);
                        return mn_leave((nvmlReturn_t) code);
                }
        }
        nvmlReturn_t r = load_profile();
        if (r == NVML_SUCCESS)
                S.refcount = 1;
        return mn_leave(r);
}

nvmlReturn_t nvmlInit_v2(void)
{
        return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
        BEGIN();
        if (--S.refcount == 0) {
                mn_control_close();
                gv_mock_profile_free(&S.profile);
                while (S.sets) {
                        struct nvmlEventSet_st *n = S.sets->next;
                        free(S.sets);
                        S.sets = n;
                }
                free(S.xid_file);
                S.xid_file = NULL;
                S.lost = 0;
                S.fabric_override = -1;
        }
        return mn_leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* error strings (wording of NVML's nvmlErrorString)                   */

const char *nvmlErrorString(nvmlReturn_t result)
{
        return gv_nvml_return_text(result); /* the one table, shared with the loader */
}

/* ------------------------------------------------------------------ */
/* private export tables                                               */

/*
 * nvmlInternalGetExportTable() - NVIDIA's private table lookup: the real
 * libnvidia-ml.so.1 exports it beside nvml.h's API, and the real nvidia-smi and
 * GPU-sharing shims (HAMi-core, MANA) link against it.  The signature is the
 * one those public callers declare: (const void **table, const void *table_id),
 * the id a 16-byte UUID as in CUDA's cuGetExportTable.  No table's contents are
 * published, so the mock knows none: *@table is set to NULL and the answer is
 * INVALID_ARGUMENT for every id (cuGetExportTable's CUDA_ERROR_INVALID_VALUE
 * for an unknown id), and for a NULL @table or @table_id.  It reads nothing
 * else, so it answers the same before nvmlInit() and never crashes.
 */
nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *table_id)
{
        (void) table_id;
        if (table)
                *table = NULL;
        return NVML_ERROR_INVALID_ARGUMENT;
}

/* ------------------------------------------------------------------ */
/* system                                                              */

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
        BEGIN();
        return mn_leave(mn_copy_str(version, length, S.profile->driver_version));
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
        BEGIN();
        return mn_leave(mn_copy_str(version, length, S.profile->nvml_version ? S.profile->nvml_version : ""));
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
        BEGIN_OUT(cudaDriverVersion);
        *cudaDriverVersion = S.profile->cuda_driver_version;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
        return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlInit, nvmlInit_v2)
