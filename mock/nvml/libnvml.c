/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: every entry point of GV_NVML_FUNCTIONS
 * (src/nvml/nvml-abi.h) answered from a GPU profile (profile.h).
 *
 * Semantics follow shared/reference/nvml-abi.md: reference-counted init,
 * UNINITIALIZED before init, INVALID_ARGUMENT for NULL out-pointers and bad
 * handles, INSUFFICIENT_SIZE for small buffers, NOT_FOUND for empty MIG slots.
 * Profile selection, faults and the Xid control file: docs/mock-nvml.md.
 *
 * All state lives in one struct guarded by one mutex, like real NVML's.
 * Handles point into fixed arrays of that struct, so a stale or foreign
 * handle is recognised by address and never dereferenced.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "abi/nvml/nvml-abi.h"
#include "mock/nvml/model-facts.h"
#include "abi/nvml/nvml-returns.h"
#include "mock/nvml/profile.h"

#define GV_EXPORT __attribute__((visibility("default")))

/* Prototypes generated from the ABI list: a definition that differs fails to compile. */
#define GV_MOCK_PROTO(name, params) GV_EXPORT nvmlReturn_t name params;
GV_NVML_FUNCTIONS(GV_MOCK_PROTO)
GV_NVML_MOCK_FUNCTIONS(GV_MOCK_PROTO)
#undef GV_MOCK_PROTO
GV_EXPORT const char *nvmlErrorString(nvmlReturn_t result);

/* The plain names are the same functions as the versioned ones. */
#define GV_MOCK_ALIAS(plain, versioned) \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'plain' is a declarator, not an expression */ \
        extern __typeof__(versioned) plain __attribute__((alias(#versioned), visibility("default")));
GV_NVML_ALIASES(GV_MOCK_ALIAS)
GV_NVML_MOCK_ALIASES(GV_MOCK_ALIAS)
#undef GV_MOCK_ALIAS

#define MAXG GV_MOCK_MAX_GPUS
#define MAXM GV_MOCK_MAX_MIG_DEVICES
#define MAX_XIDS 1024
#define PROFILE_BESIDE_LIBRARY "nvml-mock.yaml"
#define NO_ID 0xFFFFFFFFu
#define MIB (1024ULL * 1024ULL)

/* Handles are addresses in the arrays below; 8 bytes each so that a pointer into the middle is refused. */
struct nvmlDevice_st {
        uint64_t unused;
};
struct nvmlGpuInstance_st {
        uint64_t unused;
};
struct nvmlComputeInstance_st {
        uint64_t unused;
};
struct nvmlEventSet_st {
        struct nvmlEventSet_st *next;
        unsigned long long mask[MAXG];     /* registered event types per GPU */
        uint64_t delivered[MAX_XIDS / 64]; /* scheduled Xids already delivered to this set */
        off_t ctl_offset;                  /* bytes of the control file already consumed */
};

static struct mock_state {
        pthread_mutex_t lock;
        unsigned refcount;
        gv_mock_profile_t *profile;
        struct timespec init_time;
        uint64_t lost;               /* profile faults + MOCK_NVML_LOST_GPUS */
        int fabric_override;         /* -1 none, else NVML_GPU_FABRIC_STATE_* */
        char *xid_file;              /* MOCK_NVML_XID_FILE or faults.xid_control_file */
        struct nvmlEventSet_st *sets;
        struct nvmlDevice_st gpus[MAXG];
        struct nvmlDevice_st migs[MAXG][MAXM];
        struct nvmlGpuInstance_st gis[MAXG][MAXM];
        struct nvmlComputeInstance_st cis[MAXG][MAXM];
} S = { .lock = PTHREAD_MUTEX_INITIALIZER, .fabric_override = -1 };

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static nvmlReturn_t leave(nvmlReturn_t r)
{
        pthread_mutex_unlock(&S.lock);
        return r;
}

#define BEGIN()                                                  \
        do {                                                     \
                pthread_mutex_lock(&S.lock);                     \
                if (!S.refcount)                                 \
                        return leave(NVML_ERROR_UNINITIALIZED);  \
        } while (0)

static bool debug_on(void)
{
        const char *d = getenv("MOCK_NVML_DEBUG");
        return d && *d && strcmp(d, "0") != 0;
}

__attribute__((format(printf, 1, 2))) static void debug(const char *fmt, ...)
{
        if (!debug_on())
                return;
        va_list ap;
        va_start(ap, fmt);
        fputs("mock-nvml: ", stderr);
        /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): false positive: va_start(ap, fmt) is two lines above */
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

/* Index of @p in the array @base of @n elements, or -1. */
static long slot_of(const void *p, const void *base, size_t n, size_t size)
{
        uintptr_t a = (uintptr_t) p, b = (uintptr_t) base;
        if (a < b || a >= b + n * size || (a - b) % size)
                return -1;
        return (long) ((a - b) / size);
}

static gv_mock_device_t *gpu_at(unsigned i)
{
        return i < S.profile->device_count ? &S.profile->devices[i] : NULL;
}

static bool mig_on(const gv_mock_device_t *d)
{
        return d->mig_capable && d->mig_mode_current == NVML_DEVICE_MIG_ENABLE;
}

/*
 * Resolves a device handle: *gpu is the physical GPU index, *mig the MIG slot
 * or -1.  Bad handle: INVALID_ARGUMENT; lost GPU: GPU_IS_LOST.
 */
static nvmlReturn_t resolve(nvmlDevice_t h, unsigned *gpu, int *mig)
{
        long s = slot_of(h, S.gpus, MAXG, sizeof(S.gpus[0]));
        if (s >= 0) {
                *gpu = (unsigned) s;
                *mig = -1;
        } else {
                s = slot_of(h, S.migs, (size_t) MAXG * MAXM, sizeof(S.migs[0][0]));
                if (s < 0)
                        return NVML_ERROR_INVALID_ARGUMENT;
                *gpu = (unsigned) (s / MAXM);
                *mig = (int) (s % MAXM);
        }
        gv_mock_device_t *d = gpu_at(*gpu);
        if (!d)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (*mig >= 0 && (!mig_on(d) || (size_t) *mig >= d->n_mig_devices))
                return NVML_ERROR_INVALID_ARGUMENT;
        if (S.lost & (1ULL << *gpu))
                return NVML_ERROR_GPU_IS_LOST;
        return NVML_SUCCESS;
}

/* For queries only a physical GPU handle answers. */
static nvmlReturn_t resolve_physical(nvmlDevice_t h, gv_mock_device_t **d, unsigned *gpu)
{
        unsigned g;
        int m;
        nvmlReturn_t r = resolve(h, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (m >= 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        *d = gpu_at(g);
        if (gpu)
                *gpu = g;
        return NVML_SUCCESS;
}

static bool unsup(const gv_mock_device_t *d, uint32_t bit)
{
        return (d->unsupported & bit) != 0;
}

/*
 * The preamble of the entry points.  The macros below return from the entry
 * point on the first failed check, in this order: UNINITIALIZED before init,
 * then the handle (INVALID_ARGUMENT for a bad one, GPU_IS_LOST), then
 * INVALID_ARGUMENT for a NULL output, then NOT_SUPPORTED.  When they do not
 * return, S.lock is held: the entry point ends with `return leave(code)`.
 */

/* BEGIN_OUT(out) - BEGIN() and INVALID_ARGUMENT when @out is NULL. */
#define BEGIN_OUT(out)                                                   \
        do {                                                             \
                BEGIN();                                                 \
                if (!(out))                                              \
                        return leave(NVML_ERROR_INVALID_ARGUMENT);       \
        } while (0)

/* What a device query accepts as its handle. */
enum handle_kind {
        ANY_HANDLE, /* a GPU or a MIG device; a MIG device answers with its parent GPU's values */
        GPU_HANDLE, /* a physical GPU only: a MIG handle is INVALID_ARGUMENT */
};

/* @out for an entry point that checks its outputs itself. */
#define NO_OUT ((const void *) &S)

/*
 * enter_device - lock, check initialised, resolve @h as a @kind handle into
 * *d (the GPU, the parent GPU for a MIG handle), *gpu and *mig (the MIG slot
 * or -1), refuse a NULL @out, and answer NOT_SUPPORTED when @bit (0: none)
 * is marked unsupported on the GPU.  Returns NVML_SUCCESS with S.lock held,
 * or the error code with S.lock released.
 */
static nvmlReturn_t enter_device(nvmlDevice_t h, enum handle_kind kind, const void *out, uint32_t bit,
                                 gv_mock_device_t **d, unsigned *gpu, int *mig)
{
        pthread_mutex_lock(&S.lock);
        if (!S.refcount)
                return leave(NVML_ERROR_UNINITIALIZED);
        nvmlReturn_t r = resolve(h, gpu, mig);
        if (r != NVML_SUCCESS)
                return leave(r);
        if (kind == GPU_HANDLE && *mig >= 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!out)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *d = gpu_at(*gpu);
        if (bit && unsup(*d, bit))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return NVML_SUCCESS;
}

/*
 * DEVICE_QUERY(kind, h, out, bit) - enter_device() for a device entry point:
 * declares d, g and m, or returns the error code.
 */
#define DEVICE_QUERY(kind, h, out, bit)                                                       \
        gv_mock_device_t *d;                                                                  \
        unsigned g;                                                                           \
        int m;                                                                                \
        do {                                                                                  \
                nvmlReturn_t enter_r_ = enter_device((h), (kind), (out), (bit), &d, &g, &m);  \
                if (enter_r_ != NVML_SUCCESS)                                                 \
                        return enter_r_;                                                      \
        } while (0)

static nvmlReturn_t copy_str(char *buf, unsigned length, const char *s)
{
        if (!buf)
                return NVML_ERROR_INVALID_ARGUMENT;
        size_t n = strlen(s) + 1;
        if (n > length)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(buf, s, n);
        return NVML_SUCCESS;
}

static const gv_mock_mig_profile_t *mig_profile_of(const gv_mock_device_t *d, const gv_mock_mig_device_t *m)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (strcmp(d->mig_profiles[i].name, m->profile) == 0)
                        return &d->mig_profiles[i];
        return NULL;
}

static long ms_since(const struct timespec *t0)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long) (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

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
        if (r < 0) {
                debug("%s", err && err->msg ? err->msg : "profile error");
                gv_mock_profile_free(&p);
                return NVML_ERROR_UNKNOWN;
        }
        if (p->faults.init_error != NVML_SUCCESS) {
                nvmlReturn_t ir = (nvmlReturn_t) p->faults.init_error;
                debug("profile %s: faults.init_error: returning %u", p->source, p->faults.init_error);
                gv_mock_profile_free(&p);
                return ir;
        }
        const char *xf = getenv("MOCK_NVML_XID_FILE");
        char *xid_file = xf && *xf ? strdup(xf) : p->faults.xid_control_file ? strdup(p->faults.xid_control_file) : NULL;
        S.profile = p;
        S.lost = p->faults.lost_gpus | lost_mask;
        S.fabric_override = fabric >= 0 ? fabric : p->faults.fabric_in_progress ? NVML_GPU_FABRIC_STATE_IN_PROGRESS : -1;
        free(S.xid_file);
        S.xid_file = xid_file;
        clock_gettime(CLOCK_MONOTONIC, &S.init_time);
        debug("loaded %s: %u GPU(s), driver %s", p->source, p->device_count, p->driver_version);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
        if (flags & ~(unsigned) (NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH))
                return NVML_ERROR_INVALID_ARGUMENT;
        pthread_mutex_lock(&S.lock);
        if (S.refcount) {
                S.refcount++;
                return leave(NVML_SUCCESS);
        }
        const char *ie = getenv("MOCK_NVML_INIT_ERROR");
        unsigned code;
        if (ie && *ie) {
                if (gv_mock_parse_return_name(ie, &code) < 0) {
                        debug("MOCK_NVML_INIT_ERROR=%s: expected driver-not-loaded, no-permission, "
                              "lib-rm-version-mismatch or an NVML return number", ie);
                        return leave(NVML_ERROR_UNKNOWN);
                }
                if (code != NVML_SUCCESS) {
                        debug("MOCK_NVML_INIT_ERROR: returning %u", code);
                        return leave((nvmlReturn_t) code);
                }
        }
        nvmlReturn_t r = load_profile();
        if (r == NVML_SUCCESS)
                S.refcount = 1;
        return leave(r);
}

nvmlReturn_t nvmlInit_v2(void)
{
        return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
        BEGIN();
        if (--S.refcount == 0) {
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
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* error strings (wording of NVML's nvmlErrorString)                   */

const char *nvmlErrorString(nvmlReturn_t result)
{
        return gv_nvml_return_text(result); /* the one table, shared with the loader */
}

/* ------------------------------------------------------------------ */
/* system                                                              */

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
        BEGIN();
        return leave(copy_str(version, length, S.profile->driver_version));
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
        BEGIN();
        return leave(copy_str(version, length, S.profile->nvml_version ? S.profile->nvml_version : ""));
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
        BEGIN_OUT(cudaDriverVersion);
        *cudaDriverVersion = S.profile->cuda_driver_version;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
        return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* ------------------------------------------------------------------ */
/* enumeration and identity                                            */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
        BEGIN_OUT(deviceCount);
        *deviceCount = S.profile->device_count;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
        BEGIN();
        if (!device || index >= S.profile->device_count)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *device = &S.gpus[index];
        /* A lost GPU still hands out its handle; every call on it says GPU_IS_LOST. */
        return leave((S.lost & (1ULL << index)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
        BEGIN();
        if (!uuid || !device)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < S.profile->device_count; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                if (strcasecmp(d->uuid, uuid) == 0) {
                        *device = &S.gpus[i];
                        return leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                }
                for (size_t m = 0; mig_on(d) && m < d->n_mig_devices; m++)
                        if (d->mig_devices[m].uuid && strcasecmp(d->mig_devices[m].uuid, uuid) == 0) {
                                *device = &S.migs[i][m];
                                return leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                        }
        }
        return leave(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
        BEGIN();
        if (!pciBusId || !device)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned dom, bus, dev, fn = 0;
        int n = -1;
        if (sscanf(pciBusId, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) != 4 || n < 0 || pciBusId[n]) {
                n = -1;
                if (sscanf(pciBusId, "%x:%x.%x%n", &bus, &dev, &fn, &n) != 3 || n < 0 || pciBusId[n])
                        return leave(NVML_ERROR_INVALID_ARGUMENT);
                dom = 0;
        }
        for (unsigned i = 0; i < S.profile->device_count; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                if (d->pci_domain == dom && d->pci_bus == bus && d->pci_device == dev && fn == 0) {
                        *device = &S.gpus[i];
                        return leave((S.lost & (1ULL << i)) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS);
                }
        }
        return leave(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
        DEVICE_QUERY(ANY_HANDLE, device, NO_OUT, 0);
        if (m < 0)
                return leave(copy_str(name, length, d->name));
        const gv_mock_mig_device_t *md = &d->mig_devices[m];
        _cleanup_free_ char *s = NULL;
        if (asprintf(&s, "%s MIG %s", d->name, md->ci_profile ? md->ci_profile : md->profile) < 0)
                return leave(NVML_ERROR_MEMORY);
        return leave(copy_str(name, length, s));
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
        DEVICE_QUERY(ANY_HANDLE, device, NO_OUT, 0);
        return leave(copy_str(uuid, length, m < 0 ? d->uuid : d->mig_devices[m].uuid));
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
        DEVICE_QUERY(GPU_HANDLE, device, index, 0);
        *index = g;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
        DEVICE_QUERY(GPU_HANDLE, device, minorNumber, GV_MOCK_FIELD_MINOR_NUMBER);
        *minorNumber = d->minor_number;
        return leave(NVML_SUCCESS);
}

static void fill_pci(nvmlPciInfo_t *pci, unsigned domain, unsigned bus, unsigned dev, unsigned device_id,
                     unsigned subsystem)
{
        memset(pci, 0, sizeof(*pci));
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", domain & 0xffff, bus & 0xff,
                 dev & 0xff);
        snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", domain, bus & 0xff, dev & 0xff);
        pci->domain = domain;
        pci->bus = bus;
        pci->device = dev;
        pci->pciDeviceId = (device_id << 16) | 0x10DEu;
        pci->pciSubSystemId = subsystem;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        /*
         * As the real driver does, the PCI info of a lost GPU's handle still
         * answers, from the profile's bus id: it is how nvidia-smi and the
         * validator name the GPU that fell off the bus.
         */
        unsigned lg;
        int lm;
        pthread_mutex_lock(&S.lock);
        if (S.refcount && resolve(device, &lg, &lm) == NVML_ERROR_GPU_IS_LOST) {
                if (!pci)
                        return leave(NVML_ERROR_INVALID_ARGUMENT);
                const gv_mock_device_t *ld = gpu_at(lg);
                fill_pci(pci, ld->pci_domain, ld->pci_bus, ld->pci_device, ld->pci_device_id, ld->pci_subsystem_id);
                return leave(NVML_SUCCESS);
        }
        pthread_mutex_unlock(&S.lock);
        DEVICE_QUERY(ANY_HANDLE, device, pci, 0);
        fill_pci(pci, d->pci_domain, d->pci_bus, d->pci_device, d->pci_device_id, d->pci_subsystem_id);
        return leave(NVML_SUCCESS);
}

/* Total, reserved and used MiB of a GPU or MIG device. */
static void memory_of(const gv_mock_device_t *d, int m, unsigned long long *total, unsigned long long *reserved,
                      unsigned long long *used)
{
        if (m >= 0) {
                *total = d->mig_devices[m].memory_mib;
                *reserved = 0;
                *used = 0;
                for (size_t i = 0; i < d->n_processes; i++)
                        if (d->processes[i].gi_id == d->mig_devices[m].gi_id &&
                            d->processes[i].ci_id == d->mig_devices[m].ci_id)
                                *used += d->processes[i].used_memory_mib;
                if (*used > *total)
                        *used = *total;
                return;
        }
        *total = d->memory_total_mib;
        *reserved = d->memory_reserved_mib;
        *used = d->memory_used_mib;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, memory, 0);
        unsigned long long t, res, u;
        memory_of(d, m, &t, &res, &u);
        /* Version 1 counts the driver's reservation as used. */
        memory->total = t * MIB;
        memory->used = (u + res) * MIB;
        memory->free = (t - u - res) * MIB;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, memory, 0);
        if (memory->version != nvmlMemory_v2)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        unsigned long long t, res, u;
        memory_of(d, m, &t, &res, &u);
        memory->total = t * MIB;
        memory->reserved = res * MIB;
        memory->used = u * MIB;
        memory->free = (t - u - res) * MIB;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
        DEVICE_QUERY(ANY_HANDLE, device, major, 0);
        if (!minor)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *major = d->cuda_cc_major;
        *minor = d->cuda_cc_minor;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
        DEVICE_QUERY(ANY_HANDLE, device, arch, 0);
        *arch = d->architecture;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
        DEVICE_QUERY(ANY_HANDLE, device, type, 0);
        *type = (nvmlBrandType_t) d->brand;
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t string_field(nvmlDevice_t device, size_t off, uint32_t bit, char *buf, unsigned length)
{
        DEVICE_QUERY(ANY_HANDLE, device, buf, 0);
        const char *s = *(char *const *) ((const char *) d + off);
        if (unsup(d, bit) || !s)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(copy_str(buf, length, s));
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, serial), GV_MOCK_FIELD_SERIAL, serial, length);
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, vbios_version), GV_MOCK_FIELD_VBIOS, version, length);
}

nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber, unsigned int length)
{
        return string_field(device, offsetof(gv_mock_device_t, board_part_number), GV_MOCK_FIELD_BOARD_PART_NUMBER,
                            partNumber, length);
}

/* ------------------------------------------------------------------ */
/* MIG                                                                 */

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
        DEVICE_QUERY(GPU_HANDLE, device, currentMode, 0);
        if (!pendingMode)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *currentMode = d->mig_mode_current;
        *pendingMode = d->mig_mode_pending;
        return leave(NVML_SUCCESS);
}

static unsigned max_mig_devices(const gv_mock_device_t *d)
{
        if (!mig_on(d))
                return 0;
        unsigned m = 0;
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].slice_count > m)
                        m = d->mig_profiles[i].slice_count;
        if (m < d->n_mig_devices)
                m = (unsigned) d->n_mig_devices;
        return m > MAXM ? MAXM : m;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        /* NVML: zero when MIG is not supported or not enabled. */
        *count = max_mig_devices(d);
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)
{
        DEVICE_QUERY(GPU_HANDLE, device, migDevice, 0);
        if (!d->mig_capable)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        if (!mig_on(d) || index >= d->n_mig_devices)
                return leave(NVML_ERROR_NOT_FOUND);
        *migDevice = &S.migs[g][index];
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
        DEVICE_QUERY(ANY_HANDLE, device, isMigDevice, 0);
        *isMigDevice = m >= 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
        DEVICE_QUERY(ANY_HANDLE, migDevice, device, 0);
        if (m < 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *device = &S.gpus[g];
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
        DEVICE_QUERY(ANY_HANDLE, device, id, 0);
        if (m < 0)
                return leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        *id = d->mig_devices[m].gi_id;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
        DEVICE_QUERY(ANY_HANDLE, device, id, 0);
        if (m < 0)
                return leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        *id = d->mig_devices[m].ci_id;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)
{
        DEVICE_QUERY(ANY_HANDLE, device, attributes, 0);
        if (m < 0)
                return leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        const gv_mock_mig_device_t *md = &d->mig_devices[m];
        const gv_mock_mig_profile_t *mp = mig_profile_of(d, md);
        memset(attributes, 0, sizeof(*attributes));
        attributes->multiprocessorCount = md->multiprocessor_count;
        attributes->sharedCopyEngineCount = mp ? mp->copy_engine_count : 0;
        attributes->sharedDecoderCount = mp ? mp->decoder_count : 0;
        attributes->sharedEncoderCount = mp ? mp->encoder_count : 0;
        attributes->sharedJpegCount = mp ? mp->jpeg_count : 0;
        attributes->sharedOfaCount = mp ? mp->ofa_count : 0;
        attributes->gpuInstanceSliceCount = mp ? mp->slice_count : 0;
        attributes->computeInstanceSliceCount = md->ci_slice_count;
        attributes->memorySizeMB = md->memory_mib;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t *info)
{
        DEVICE_QUERY(GPU_HANDLE, device, info, 0);
        if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        for (size_t i = 0; i < d->n_mig_profiles; i++) {
                const gv_mock_mig_profile_t *mp = &d->mig_profiles[i];
                if (mp->id != profile)
                        continue;
                memset(info, 0, sizeof(*info));
                info->id = mp->id;
                info->isP2pSupported = 0;
                info->sliceCount = mp->slice_count;
                info->instanceCount = mp->instance_count;
                info->multiprocessorCount = mp->multiprocessor_count;
                info->copyEngineCount = mp->copy_engine_count;
                info->decoderCount = mp->decoder_count;
                info->encoderCount = mp->encoder_count;
                info->jpegCount = mp->jpeg_count;
                info->ofaCount = mp->ofa_count;
                info->memorySizeMB = mp->memory_mib;
                return leave(NVML_SUCCESS);
        }
        return leave(NVML_ERROR_NOT_SUPPORTED);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance)
{
        DEVICE_QUERY(GPU_HANDLE, device, gpuInstance, 0);
        if (!d->mig_capable)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        for (size_t i = 0; mig_on(d) && i < d->n_mig_devices; i++)
                if (d->mig_devices[i].gi_id == id) {
                        *gpuInstance = &S.gis[g][i];
                        return leave(NVML_SUCCESS);
                }
        return leave(NVML_ERROR_NOT_FOUND);
}

/* Resolves a GPU or compute instance handle to (gpu, MIG slot). */
static nvmlReturn_t resolve_instance(const void *h, const void *base, gv_mock_device_t **d, unsigned *gpu, int *slot)
{
        long s = slot_of(h, base, (size_t) MAXG * MAXM, sizeof(S.gis[0][0]));
        if (s < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        *gpu = (unsigned) (s / MAXM);
        *slot = (int) (s % MAXM);
        *d = gpu_at(*gpu);
        if (!*d || !mig_on(*d) || (size_t) *slot >= (*d)->n_mig_devices)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (S.lost & (1ULL << *gpu))
                return NVML_ERROR_GPU_IS_LOST;
        return NVML_SUCCESS;
}

/*
 * INSTANCE_QUERY(h, base, out) - the preamble of an entry point taking a GPU
 * or compute instance handle @h into the array @base: BEGIN(), resolve it
 * (declares d, g and s) and refuse a NULL @out, or return the error code.
 */
#define INSTANCE_QUERY(h, base, out)                                                  \
        gv_mock_device_t *d;                                                          \
        unsigned g;                                                                   \
        int s;                                                                        \
        do {                                                                          \
                BEGIN();                                                              \
                nvmlReturn_t enter_r_ = resolve_instance((h), (base), &d, &g, &s);    \
                if (enter_r_ != NVML_SUCCESS)                                         \
                        return leave(enter_r_);                                       \
                if (!(out))                                                           \
                        return leave(NVML_ERROR_INVALID_ARGUMENT);                    \
        } while (0)

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        const gv_mock_mig_device_t *md = &d->mig_devices[s];
        const gv_mock_mig_profile_t *mp = mig_profile_of(d, md);
        memset(info, 0, sizeof(*info));
        info->device = &S.gpus[g];
        info->id = md->gi_id;
        info->profileId = mp ? mp->id : 0;
        info->placement.start = md->placement_start;
        info->placement.size = mp ? mp->slice_count : 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                                   nvmlComputeInstance_t *computeInstance)
{
        INSTANCE_QUERY(gpuInstance, S.gis, computeInstance);
        unsigned gi = d->mig_devices[s].gi_id;
        for (size_t m = 0; m < d->n_mig_devices; m++)
                if (d->mig_devices[m].gi_id == gi && d->mig_devices[m].ci_id == id) {
                        *computeInstance = &S.cis[g][m];
                        return leave(NVML_SUCCESS);
                }
        return leave(NVML_ERROR_NOT_FOUND);
}

/* NVML compute instance profile enum from a slice count (1, 2, 3, 4, 7, 8, 6 slices). */
static unsigned ci_profile_id(unsigned slices)
{
        static const unsigned by_slices[9] = { 0, 0x0, 0x1, 0x2, 0x3, 0, 0x6, 0x4, 0x5 };
        return slices < 9 ? by_slices[slices] : 0;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info)
{
        INSTANCE_QUERY(computeInstance, S.cis, info);
        const gv_mock_mig_device_t *md = &d->mig_devices[s];
        unsigned start = 0;
        size_t first = (size_t) s;
        for (size_t m = 0; m < (size_t) s; m++)
                if (d->mig_devices[m].gi_id == md->gi_id) {
                        start += d->mig_devices[m].ci_slice_count;
                        if (m < first)
                                first = m;
                }
        memset(info, 0, sizeof(*info));
        info->device = &S.gpus[g];
        info->gpuInstance = &S.gis[g][first];
        info->id = md->ci_id;
        info->profileId = ci_profile_id(md->ci_slice_count);
        info->placement.start = start;
        info->placement.size = md->ci_slice_count;
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* fabric, topology, NVLink                                            */

/* The fabric state of @d, after MOCK_NVML_FABRIC_STATE; NOT_SUPPORTED when it has none. */
static nvmlReturn_t fabric_state(const gv_mock_device_t *d, unsigned char *state)
{
        if (unsup(d, GV_MOCK_FIELD_FABRIC) || d->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                return NVML_ERROR_NOT_SUPPORTED;
        if (S.fabric_override == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                return NVML_ERROR_NOT_SUPPORTED;
        *state = (unsigned char) (S.fabric_override > 0 ? S.fabric_override : (int) d->fabric_state);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device, gpuFabricInfo, 0);
        unsigned char st;
        nvmlReturn_t r = fabric_state(d, &st);
        if (r != NVML_SUCCESS)
                return leave(r);
        memset(gpuFabricInfo, 0, sizeof(*gpuFabricInfo));
        memcpy(gpuFabricInfo->clusterUuid, d->fabric_cluster_uuid, NVML_GPU_FABRIC_UUID_LEN);
        gpuFabricInfo->status = st == NVML_GPU_FABRIC_STATE_COMPLETED ? (nvmlReturn_t) d->fabric_status
                                                                      : NVML_ERROR_NOT_READY;
        gpuFabricInfo->cliqueId = d->fabric_clique_id;
        gpuFabricInfo->state = st;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
        BEGIN();
        gv_mock_device_t *d;
        unsigned char st;
        if (!gpuFabricInfo) {
                nvmlReturn_t r = resolve_physical(device, &d, NULL);
                return leave(r != NVML_SUCCESS ? r : NVML_ERROR_INVALID_ARGUMENT);
        }
        unsigned v = gpuFabricInfo->version;
        if (v != nvmlGpuFabricInfo_v2 && v != nvmlGpuFabricInfo_v3)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        /* Here the version is checked before the handle. */
        nvmlReturn_t r = resolve_physical(device, &d, NULL);
        if (r == NVML_SUCCESS)
                r = fabric_state(d, &st);
        if (r != NVML_SUCCESS)
                return leave(r);
        /* Write only as many bytes as the caller's version has. */
        nvmlGpuFabricInfo_v2_t *v2 = (nvmlGpuFabricInfo_v2_t *) (void *) gpuFabricInfo;
        memset(v2, 0, sizeof(*v2));
        v2->version = v;
        memcpy(v2->clusterUuid, d->fabric_cluster_uuid, NVML_GPU_FABRIC_UUID_LEN);
        v2->status = st == NVML_GPU_FABRIC_STATE_COMPLETED ? (nvmlReturn_t) d->fabric_status : NVML_ERROR_NOT_READY;
        v2->cliqueId = d->fabric_clique_id;
        v2->state = st;
        v2->healthMask = 0;
        if (v == nvmlGpuFabricInfo_v3)
                gpuFabricInfo->healthSummary = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device1, NO_OUT, 0);
        gv_mock_device_t *b;
        unsigned gb;
        nvmlReturn_t r = resolve_physical(device2, &b, &gb);
        if (r != NVML_SUCCESS)
                return leave(r);
        if (!pathInfo)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        /* HGX-like layout: pairs share a PCIe switch, halves a CPU socket. */
        if (g == gb)
                *pathInfo = NVML_TOPOLOGY_INTERNAL;
        else if (g / 2 == gb / 2)
                *pathInfo = NVML_TOPOLOGY_MULTIPLE;
        else if (g / 4 == gb / 4)
                *pathInfo = NVML_TOPOLOGY_NODE;
        else
                *pathInfo = NVML_TOPOLOGY_SYSTEM;
        return leave(NVML_SUCCESS);
}

/* INVALID_ARGUMENT for a link number NVML never has, NOT_SUPPORTED for a link @d lacks. */
static nvmlReturn_t nvlink_check(const gv_mock_device_t *d, unsigned link)
{
        if (link >= NVML_NVLINK_MAX_LINKS)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (unsup(d, GV_MOCK_FIELD_NVLINK) || link >= d->nvlink_count)
                return NVML_ERROR_NOT_SUPPORTED;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
        DEVICE_QUERY(GPU_HANDLE, device, isActive, 0);
        nvmlReturn_t r = nvlink_check(d, link);
        if (r != NVML_SUCCESS)
                return leave(r);
        *isActive = d->nvlink_active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
        DEVICE_QUERY(GPU_HANDLE, device, pci, 0);
        nvmlReturn_t r = nvlink_check(d, link);
        if (r != NVML_SUCCESS)
                return leave(r);
        /* The far end is an NVSwitch (PCI device 0x1AF1); links fan out over six switches. */
        fill_pci(pci, 0, 0x01 + link % 6, 0, 0x1AF1, 0x16A010DE);
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* events                                                              */

#define SUPPORTED_EVENTS                                                                                 \
        (nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError | nvmlEventTypePState |        \
         nvmlEventTypeXidCriticalError | nvmlEventTypeClock)

static bool live_set(const struct nvmlEventSet_st *set)
{
        for (const struct nvmlEventSet_st *s = S.sets; s; s = s->next)
                if (s == set)
                        return true;
        return false;
}

static off_t file_size(const char *path)
{
        struct stat st;
        if (!path || stat(path, &st) < 0)
                return 0;
        return st.st_size;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
        BEGIN_OUT(set);
        struct nvmlEventSet_st *s = calloc(1, sizeof(*s));
        if (!s)
                return leave(NVML_ERROR_MEMORY);
        /* Only lines appended to the control file after this point are delivered. */
        s->ctl_offset = file_size(S.xid_file);
        s->next = S.sets;
        S.sets = s;
        *set = s;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
        DEVICE_QUERY(GPU_HANDLE, device, eventTypes, 0);
        *eventTypes = SUPPORTED_EVENTS;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
        DEVICE_QUERY(GPU_HANDLE, device, set, 0);
        if (!live_set(set))
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (eventTypes & ~(unsigned long long) SUPPORTED_EVENTS)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        set->mask[g] |= eventTypes;
        return leave(NVML_SUCCESS);
}

/* Next line "<gpu> <xid>" of the control file past set->ctl_offset; true when one was read. */
static bool read_control_line(struct nvmlEventSet_st *set, unsigned *gpu, unsigned long long *xid)
{
        if (!S.xid_file)
                return false;
        for (;;) {
                _cleanup_fclose_ FILE *f = fopen(S.xid_file, "re");
                if (!f)
                        return false;
                struct stat st;
                if (fstat(fileno(f), &st) < 0)
                        return false;
                if (st.st_size < set->ctl_offset)
                        set->ctl_offset = 0; /* truncated: start over */
                if (st.st_size == set->ctl_offset || fseeko(f, set->ctl_offset, SEEK_SET) < 0)
                        return false;
                _cleanup_free_ char *line = NULL;
                size_t cap = 0;
                ssize_t n = getline(&line, &cap, f);
                if (n <= 0 || line[n - 1] != '\n')
                        return false; /* nothing, or a line still being written */
                set->ctl_offset += n;
                unsigned g;
                unsigned long long x;
                if (sscanf(line, "%u %llu", &g, &x) == 2) {
                        *gpu = g;
                        *xid = x;
                        return true;
                }
                debug("%s: ignoring line \"%.*s\" (expected \"<gpu> <xid>\")", S.xid_file, (int) (n - 1), line);
        }
}

static bool next_event(struct nvmlEventSet_st *set, nvmlEventData_t *data)
{
        gv_mock_faults_t *f = &S.profile->faults;
        long now = ms_since(&S.init_time);
        for (size_t i = 0; i < f->n_xids && i < MAX_XIDS; i++) {
                gv_mock_xid_t *x = &f->xids[i];
                if (set->delivered[i / 64] & (1ULL << (i % 64)))
                        continue;
                if ((long) x->after_ms > now || x->gpu >= S.profile->device_count ||
                    !(set->mask[x->gpu] & nvmlEventTypeXidCriticalError))
                        continue;
                set->delivered[i / 64] |= 1ULL << (i % 64);
                data->device = &S.gpus[x->gpu];
                data->eventType = nvmlEventTypeXidCriticalError;
                data->eventData = x->xid;
                data->gpuInstanceId = data->computeInstanceId = NO_ID;
                return true;
        }
        unsigned g;
        unsigned long long xid;
        while (read_control_line(set, &g, &xid)) {
                if (g >= S.profile->device_count || !(set->mask[g] & nvmlEventTypeXidCriticalError))
                        continue;
                data->device = &S.gpus[g];
                data->eventType = nvmlEventTypeXidCriticalError;
                data->eventData = xid;
                data->gpuInstanceId = data->computeInstanceId = NO_ID;
                return true;
        }
        return false;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                BEGIN();
                if (!set || !live_set(set) || !data)
                        return leave(NVML_ERROR_INVALID_ARGUMENT);
                if (next_event(set, data))
                        return leave(NVML_SUCCESS);
                pthread_mutex_unlock(&S.lock);
                long left = (long) timeoutms - ms_since(&start);
                if (left <= 0)
                        return NVML_ERROR_TIMEOUT;
                long step = left < 10 ? left : 10;
                struct timespec ts = { .tv_sec = 0, .tv_nsec = step * 1000000L };
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
        BEGIN();
        for (struct nvmlEventSet_st **p = &S.sets; *p; p = &(*p)->next)
                if (*p == set) {
                        *p = set->next;
                        free(set);
                        return leave(NVML_SUCCESS);
                }
        return leave(NVML_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ */
/* telemetry                                                           */

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
        DEVICE_QUERY(ANY_HANDLE, device, temp, GV_MOCK_FIELD_TEMPERATURE);
        if (sensorType != NVML_TEMPERATURE_GPU)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *temp = d->temperature_c;
        return leave(NVML_SUCCESS);
}

#define SCALAR_GETTER(fn, type, out, bit, expr)                               \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'type' is a type name, not an expression */ \
        nvmlReturn_t fn(nvmlDevice_t device, type *out)                       \
        {                                                                     \
                DEVICE_QUERY(ANY_HANDLE, device, out, bit);                   \
                /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'type' is a type name in a cast */ \
                *out = (type) (expr);                                         \
                return leave(NVML_SUCCESS);                                   \
        }

SCALAR_GETTER(nvmlDeviceGetPowerUsage, unsigned int, power, GV_MOCK_FIELD_POWER_USAGE, d->power_usage_mw)
SCALAR_GETTER(nvmlDeviceGetPowerManagementLimit, unsigned int, limit, GV_MOCK_FIELD_POWER_LIMIT, d->power_limit_mw)
SCALAR_GETTER(nvmlDeviceGetPowerManagementDefaultLimit, unsigned int, defaultLimit, GV_MOCK_FIELD_POWER_LIMIT,
              d->power_default_limit_mw)
SCALAR_GETTER(nvmlDeviceGetEnforcedPowerLimit, unsigned int, limit, GV_MOCK_FIELD_POWER_LIMIT, d->power_limit_mw)
SCALAR_GETTER(nvmlDeviceGetFanSpeed, unsigned int, speed, GV_MOCK_FIELD_FAN, d->fan_speed)
SCALAR_GETTER(nvmlDeviceGetPersistenceMode, nvmlEnableState_t, mode, GV_MOCK_FIELD_PERSISTENCE,
              d->persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED)
SCALAR_GETTER(nvmlDeviceGetComputeMode, nvmlComputeMode_t, mode, GV_MOCK_FIELD_COMPUTE_MODE, d->compute_mode)
SCALAR_GETTER(nvmlDeviceGetPerformanceState, nvmlPstates_t, pState, GV_MOCK_FIELD_PSTATE, d->pstate)
SCALAR_GETTER(nvmlDeviceGetDisplayMode, nvmlEnableState_t, display, GV_MOCK_FIELD_DISPLAY,
              d->display_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED)
SCALAR_GETTER(nvmlDeviceGetDisplayActive, nvmlEnableState_t, isActive, GV_MOCK_FIELD_DISPLAY,
              d->display_active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED)

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit,
                                                          unsigned int *maxLimit)
{
        DEVICE_QUERY(ANY_HANDLE, device, minLimit, GV_MOCK_FIELD_POWER_LIMIT);
        if (!maxLimit)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *minLimit = d->power_min_limit_mw;
        *maxLimit = d->power_max_limit_mw;
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t clock_query(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock, bool max)
{
        DEVICE_QUERY(ANY_HANDLE, device, clock, GV_MOCK_FIELD_CLOCKS);
        switch (type) {
        case NVML_CLOCK_GRAPHICS: *clock = max ? d->max_clock_graphics_mhz : d->clock_graphics_mhz; break;
        case NVML_CLOCK_SM: *clock = max ? d->max_clock_sm_mhz : d->clock_sm_mhz; break;
        case NVML_CLOCK_MEM: *clock = max ? d->max_clock_mem_mhz : d->clock_mem_mhz; break;
        case NVML_CLOCK_VIDEO: *clock = max ? d->max_clock_video_mhz : d->clock_video_mhz; break;
        default: return leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return clock_query(device, type, clock, false);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
        return clock_query(device, type, clock, true);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
        DEVICE_QUERY(ANY_HANDLE, device, utilization, GV_MOCK_FIELD_UTILIZATION);
        if (mig_on(d))
                return leave(NVML_ERROR_NOT_SUPPORTED); /* as on real MIG-enabled GPUs */
        utilization->gpu = d->utilization_gpu;
        utilization->memory = d->utilization_memory;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
        DEVICE_QUERY(ANY_HANDLE, device, current, GV_MOCK_FIELD_ECC);
        if (!pending)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *current = d->ecc_current ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        *pending = d->ecc_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return leave(NVML_SUCCESS);
}

/* Which process list a query reads. */
enum process_list {
        COMPUTE_PROCESSES,  /* the profile's processes: CUDA jobs */
        GRAPHICS_PROCESSES, /* none: profiles describe compute nodes */
        MPS_PROCESSES,      /* none: profiles run no MPS server */
};

/*
 * process_query - the body of the compute/graphics/MPS process queries.
 * @infos holds *infoCount entries of @entry bytes: sizeof(nvmlProcessInfo_v1_t)
 * for the plain names, sizeof(nvmlProcessInfo_t) for _v2/_v3.  A MIG handle
 * sees the processes of its GPU and compute instance only.
 */
static nvmlReturn_t process_query(nvmlDevice_t device, unsigned int *infoCount, void *infos, size_t entry,
                                  enum process_list list)
{
        DEVICE_QUERY(ANY_HANDLE, device, infoCount, GV_MOCK_FIELD_PROCESSES);
        unsigned n = 0;
        for (size_t i = 0; list == COMPUTE_PROCESSES && i < d->n_processes; i++) {
                const gv_mock_process_t *p = &d->processes[i];
                if (m >= 0 && (p->gi_id != d->mig_devices[m].gi_id || p->ci_id != d->mig_devices[m].ci_id))
                        continue;
                n++;
        }
        if (*infoCount < n) {
                *infoCount = n;
                return leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n && !infos)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned char *out = infos;
        for (size_t i = 0; list == COMPUTE_PROCESSES && i < d->n_processes; i++) {
                const gv_mock_process_t *p = &d->processes[i];
                if (m >= 0 && (p->gi_id != d->mig_devices[m].gi_id || p->ci_id != d->mig_devices[m].ci_id))
                        continue;
                nvmlProcessInfo_t e = { .pid = p->pid,
                                        .usedGpuMemory = p->used_memory_mib * MIB,
                                        .gpuInstanceId = p->gi_id,
                                        .computeInstanceId = p->ci_id };
                memcpy(out, &e, entry); /* v1 is the first 16 bytes of v2/v3 */
                out += entry;
        }
        *infoCount = n;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), COMPUTE_PROCESSES);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), COMPUTE_PROCESSES);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), GRAPHICS_PROCESSES);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), GRAPHICS_PROCESSES);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                        nvmlProcessInfo_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), MPS_PROCESSES);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v1_t *infos)
{
        return process_query(device, infoCount, infos, sizeof(*infos), MPS_PROCESSES);
}

/* ------------------------------------------------------------------ */
/* model facts (model-facts.c): BAR1, PCIe, thresholds, clocks, NVLink */

/* The model facts of @d, or NULL (then the queries below answer NOT_SUPPORTED). */
static const gv_mock_model_facts_t *facts_of(const gv_mock_device_t *d)
{
        return gv_mock_model_facts(d->pci_device_id);
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, bar1Memory, 0);
        unsigned long long total = gv_mock_bar1_mib(d->pci_device_id, d->memory_total_mib);
        if (m >= 0 && d->memory_total_mib) {
                /* A MIG device gets the share of the aperture its memory has of the GPU's (as "Shared BAR1 Memory"). */
                total = total * d->mig_devices[m].memory_mib / d->memory_total_mib;
        }
        /* The driver maps a few MiB of BAR1 for itself; an idle GPU shows ~1-5 MiB used in the captures. */
        unsigned long long used = total > 64 ? 1 : 0;
        bar1Memory->bar1Total = total * MIB;
        bar1Memory->bar1Used = used * MIB;
        bar1Memory->bar1Free = (total - used) * MIB;
        return leave(NVML_SUCCESS);
}

/* PCIe link facts: @what 0 max gen, 1 max width, 2 current gen, 3 current width. */
static nvmlReturn_t pcie_query(nvmlDevice_t device, unsigned int *out, int what)
{
        DEVICE_QUERY(GPU_HANDLE, device, out, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        if (!f)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        const unsigned v[4] = { f->pcie_gen_max, f->pcie_width_max, f->pcie_gen_cur, f->pcie_width_cur };
        *out = v[what];
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
        return pcie_query(device, maxLinkGen, 0);
}

nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGenDevice)
{
        return pcie_query(device, maxLinkGenDevice, 0);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
        return pcie_query(device, maxLinkWidth, 1);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
        return pcie_query(device, currLinkGen, 2);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
        return pcie_query(device, currLinkWidth, 3);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
        DEVICE_QUERY(GPU_HANDLE, device, value, 0);
        if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        /* KB/s over the last 20 ms: an idle mock GPU moves nothing. */
        *value = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int *temp)
{
        DEVICE_QUERY(GPU_HANDLE, device, temp, GV_MOCK_FIELD_TEMPERATURE);
        if (thresholdType >= NVML_TEMPERATURE_THRESHOLD_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        const gv_mock_model_facts_t *f = facts_of(d);
        unsigned v = 0;
        if (f) {
                switch (thresholdType) {
                case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: v = f->temp_shutdown_c; break;
                case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: v = f->temp_slowdown_c; break;
                case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: v = f->temp_mem_max_c; break;
                case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: v = f->temp_gpu_max_c; break;
                default: v = 0; break;
                }
        }
        if (!v)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *temp = v;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
        DEVICE_QUERY(GPU_HANDLE, device, clocksEventReasons, GV_MOCK_FIELD_CLOCKS);
        /* An idle GPU reports GpuIdle (0x1), a busy one none (csv captures: H100 idle 0x1, L40S under load 0x0). */
        *clocksEventReasons = d->utilization_gpu == 0 ? nvmlClocksEventReasonGpuIdle : nvmlClocksEventReasonNone;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                                         unsigned long long *supportedClocksThrottleReasons)
{
        DEVICE_QUERY(GPU_HANDLE, device, supportedClocksThrottleReasons, GV_MOCK_FIELD_CLOCKS);
        *supportedClocksThrottleReasons = GV_NVML_CLOCKS_EVENT_REASONS_SUPPORTED;
        return leave(NVML_SUCCESS);
}

static nvmlReturn_t app_clock_query(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, GV_MOCK_FIELD_CLOCKS);
        const gv_mock_model_facts_t *f = facts_of(d);
        unsigned v = 0;
        switch (clockType) {
        case NVML_CLOCK_GRAPHICS:
        case NVML_CLOCK_SM: v = f ? f->app_clock_graphics_mhz : 0; break;
        case NVML_CLOCK_MEM: v = f ? f->app_clock_mem_mhz : 0; break;
        case NVML_CLOCK_VIDEO: v = 0; break;
        default: return leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        if (!v)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *clockMHz = v;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        return app_clock_query(device, clockType, clockMHz);
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz)
{
        return app_clock_query(device, clockType, clockMHz);
}

static nvmlReturn_t codec_query(nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)
{
        DEVICE_QUERY(ANY_HANDLE, device, utilization, GV_MOCK_FIELD_UTILIZATION);
        if (!samplingPeriodUs)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (mig_on(d) && m < 0)
                return leave(NVML_ERROR_NOT_SUPPORTED); /* the H100 MIG csv capture: utilization.encoder [N/A] */
        *utilization = 0;
        *samplingPeriodUs = 167000; /* the driver's encoder/decoder sampling period */
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs);
}

/* nvmlDeviceGetPowerState is the deprecated name of the performance state query. */
SCALAR_GETTER(nvmlDeviceGetPowerState, nvmlPstates_t, pState, GV_MOCK_FIELD_PSTATE, d->pstate)

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
        DEVICE_QUERY(GPU_HANDLE, device, energy, GV_MOCK_FIELD_POWER_USAGE);
        if (d->architecture < NVML_DEVICE_ARCH_VOLTA)
                return leave(NVML_ERROR_NOT_SUPPORTED); /* Volta or newer (nvml.h) */
        /* mJ since the driver loaded: the profile's draw integrated since nvmlInit. */
        *energy = (unsigned long long) d->power_usage_mw * (unsigned long long) ms_since(&S.init_time) / 1000ULL;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores)
{
        DEVICE_QUERY(ANY_HANDLE, device, numCores, 0);
        /* FP32 cores per SM (NVIDIA architecture whitepapers): 64 on Volta, Turing and GA100, 128 on Ada and later. */
        unsigned per_sm = d->architecture >= NVML_DEVICE_ARCH_ADA && d->architecture != NVML_DEVICE_ARCH_UNKNOWN ? 128 : 64;
        unsigned sms = m >= 0 ? d->mig_devices[m].multiprocessor_count : d->multiprocessor_count;
        *numCores = sms * per_sm;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int *version)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        nvmlReturn_t r = nvlink_check(d, link);
        if (r == NVML_SUCCESS && (!f || !f->nvlink_version))
                r = NVML_ERROR_NOT_SUPPORTED;
        if (r != NVML_SUCCESS)
                return leave(r);
        *version = f->nvlink_version;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, nvmlNvLinkCapability_t capability,
                                           unsigned int *capResult)
{
        DEVICE_QUERY(GPU_HANDLE, device, capResult, 0);
        nvmlReturn_t r = nvlink_check(d, link);
        if (r == NVML_SUCCESS && capability >= NVML_NVLINK_CAP_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r != NVML_SUCCESS)
                return leave(r);
        /* GPU-to-GPU links through NVSwitches on an x86 host: peer access and atomics, no system memory over NVLink. */
        switch (capability) {
        case NVML_NVLINK_CAP_P2P_SUPPORTED:
        case NVML_NVLINK_CAP_P2P_ATOMICS:
        case NVML_NVLINK_CAP_VALID: *capResult = 1; break;
        default: *capResult = 0; break;
        }
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long *counterValue)
{
        DEVICE_QUERY(GPU_HANDLE, device, counterValue, 0);
        nvmlReturn_t r = nvlink_check(d, link);
        if (r == NVML_SUCCESS && counter >= NVML_NVLINK_ERROR_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r != NVML_SUCCESS)
                return leave(r);
        *counterValue = 0; /* healthy links */
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* MIG profile info, versioned                                         */

static const gv_mock_mig_profile_t *gi_profile_by_id(const gv_mock_device_t *d, unsigned id)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].id == id)
                        return &d->mig_profiles[i];
        return NULL;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info)
{
        DEVICE_QUERY(GPU_HANDLE, device, info, 0);
        if (info->version != nvmlGpuInstanceProfileInfo_v2 && info->version != nvmlGpuInstanceProfileInfo_v3)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        const gv_mock_mig_profile_t *mp = gi_profile_by_id(d, profile);
        if (!mp)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        nvmlGpuInstanceProfileInfo_v3_t v3 = { 0 };
        v3.version = info->version;
        v3.id = mp->id;
        v3.sliceCount = mp->slice_count;
        v3.instanceCount = mp->instance_count;
        v3.multiprocessorCount = mp->multiprocessor_count;
        v3.copyEngineCount = mp->copy_engine_count;
        v3.decoderCount = mp->decoder_count;
        v3.encoderCount = mp->encoder_count;
        v3.jpegCount = mp->jpeg_count;
        v3.ofaCount = mp->ofa_count;
        v3.memorySizeMB = mp->memory_mib;
        snprintf(v3.name, sizeof(v3.name), "MIG %s", mp->name); /* nvidia-smi -L prints "MIG 1g.5gb" from it */
        if (info->version == nvmlGpuInstanceProfileInfo_v3) {
                memcpy(info, &v3, sizeof(v3));
                return leave(NVML_SUCCESS);
        }
        nvmlGpuInstanceProfileInfo_v2_t v2 = { .version = v3.version,
                                               .id = v3.id,
                                               .isP2pSupported = 0,
                                               .sliceCount = v3.sliceCount,
                                               .instanceCount = v3.instanceCount,
                                               .multiprocessorCount = v3.multiprocessorCount,
                                               .copyEngineCount = v3.copyEngineCount,
                                               .decoderCount = v3.decoderCount,
                                               .encoderCount = v3.encoderCount,
                                               .jpegCount = v3.jpegCount,
                                               .ofaCount = v3.ofaCount,
                                               .memorySizeMB = v3.memorySizeMB };
        memcpy(v2.name, v3.name, sizeof(v2.name));
        *info = v2;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,
                                       unsigned int *count)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        if (profileId >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable || !mig_on(d))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        /* One handle per GPU instance of that profile: the MIG slot where the instance first appears. */
        unsigned n = 0;
        for (size_t i = 0; i < d->n_mig_devices; i++) {
                const gv_mock_mig_profile_t *mp = mig_profile_of(d, &d->mig_devices[i]);
                bool first = true;
                for (size_t j = 0; j < i; j++)
                        first &= d->mig_devices[j].gi_id != d->mig_devices[i].gi_id;
                if (!first || !mp || mp->id != profileId)
                        continue;
                if (gpuInstances)
                        gpuInstances[n] = &S.gis[g][i];
                n++;
        }
        if (n && !gpuInstances)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *count = n;
        return leave(NVML_SUCCESS);
}

/* Slices of NVML compute instance profile @profile (inverse of ci_profile_id), 0 when unknown. */
static unsigned ci_profile_slices(unsigned profile)
{
        static const unsigned slices[NVML_COMPUTE_INSTANCE_PROFILE_COUNT] = { 1, 2, 3, 4, 7, 8, 6, 1, 7 };
        return profile < NVML_COMPUTE_INSTANCE_PROFILE_COUNT ? slices[profile] : 0;
}

/*
 * Fills a compute instance profile of the GPU instance at MIG slot @s: a CI
 * profile fits when its slices divide into the GI's; SMs and memory split
 * evenly over the GI's compute slices, engines stay shared (MIG user guide).
 */
static nvmlReturn_t ci_profile_fill(const gv_mock_device_t *d, int s, unsigned profile, unsigned eng,
                                    nvmlComputeInstanceProfileInfo_v3_t *out)
{
        if (profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT || eng != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
                return NVML_ERROR_INVALID_ARGUMENT;
        const gv_mock_mig_profile_t *mp = mig_profile_of(d, &d->mig_devices[s]);
        unsigned cs = ci_profile_slices(profile);
        if (!mp || profile == NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 ||
            profile == NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL || cs > mp->slice_count || !mp->slice_count)
                return NVML_ERROR_NOT_SUPPORTED;
        memset(out, 0, sizeof(*out));
        out->id = profile;
        out->sliceCount = cs;
        out->instanceCount = mp->slice_count / cs;
        out->multiprocessorCount = mp->multiprocessor_count * cs / mp->slice_count;
        out->sharedCopyEngineCount = mp->copy_engine_count;
        out->sharedDecoderCount = mp->decoder_count;
        out->sharedEncoderCount = mp->encoder_count;
        out->sharedJpegCount = mp->jpeg_count;
        out->sharedOfaCount = mp->ofa_count;
        if (cs == mp->slice_count)
                snprintf(out->name, sizeof(out->name), "MIG %s", mp->name);
        else
                snprintf(out->name, sizeof(out->name), "MIG %uc.%s", cs, mp->name);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances, unsigned int *count)
{
        INSTANCE_QUERY(gpuInstance, S.gis, count);
        if (profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned gi = d->mig_devices[s].gi_id, n = 0;
        for (size_t m = 0; m < d->n_mig_devices; m++) {
                const gv_mock_mig_device_t *md = &d->mig_devices[m];
                if (md->gi_id != gi || ci_profile_id(md->ci_slice_count) != profileId)
                        continue;
                if (computeInstances)
                        computeInstances[n] = &S.cis[g][m];
                n++;
        }
        if (n && !computeInstances)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *count = n;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        nvmlComputeInstanceProfileInfo_v3_t v3;
        nvmlReturn_t r = ci_profile_fill(d, s, profile, engProfile, &v3);
        if (r != NVML_SUCCESS)
                return leave(r);
        info->id = v3.id;
        info->sliceCount = v3.sliceCount;
        info->instanceCount = v3.instanceCount;
        info->multiprocessorCount = v3.multiprocessorCount;
        info->sharedCopyEngineCount = v3.sharedCopyEngineCount;
        info->sharedDecoderCount = v3.sharedDecoderCount;
        info->sharedEncoderCount = v3.sharedEncoderCount;
        info->sharedJpegCount = v3.sharedJpegCount;
        info->sharedOfaCount = v3.sharedOfaCount;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                           unsigned int engProfile,
                                                           nvmlComputeInstanceProfileInfo_v2_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        unsigned version = info->version;
        if (version != nvmlComputeInstanceProfileInfo_v2 && version != nvmlComputeInstanceProfileInfo_v3)
                return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlComputeInstanceProfileInfo_v3_t v3;
        nvmlReturn_t r = ci_profile_fill(d, s, profile, engProfile, &v3);
        if (r != NVML_SUCCESS)
                return leave(r);
        v3.version = version;
        /* v2 is the first 136 bytes of v3. */
        memcpy(info, &v3, version == nvmlComputeInstanceProfileInfo_v3 ? sizeof(v3) : sizeof(*info));
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* clocks lists, ECC and memory health, inforom, codecs, topology      */

nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, GV_MOCK_FIELD_CLOCKS);
        /* The captures print the graphics boost clock only: the max graphics (SM) clock. */
        switch (clockType) {
        case NVML_CLOCK_GRAPHICS: *clockMHz = d->max_clock_graphics_mhz; break;
        case NVML_CLOCK_SM: *clockMHz = d->max_clock_sm_mhz; break;
        case NVML_CLOCK_MEM:
        case NVML_CLOCK_VIDEO: return leave(NVML_ERROR_NOT_SUPPORTED);
        default: return leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId,
                                unsigned int *clockMHz)
{
        switch (clockId) {
        case NVML_CLOCK_ID_CURRENT: return clock_query(device, clockType, clockMHz, false);
        case NVML_CLOCK_ID_APP_CLOCK_TARGET:
        case NVML_CLOCK_ID_APP_CLOCK_DEFAULT: return app_clock_query(device, clockType, clockMHz);
        case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX: return nvmlDeviceGetMaxCustomerBoostClock(device, clockType, clockMHz);
        default: break;
        }
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, 0);
        return leave(NVML_ERROR_INVALID_ARGUMENT);
}

/* Fills a count/array pair: INSUFFICIENT_SIZE with the count when @out holds fewer than @n. */
static nvmlReturn_t fill_list(unsigned *count, unsigned *out, const unsigned *values, unsigned n)
{
        if (*count < n) {
                *count = n;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        if (n && !out)
                return NVML_ERROR_INVALID_ARGUMENT;
        memcpy(out, values, n * sizeof(*out));
        *count = n;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int *count, unsigned int *clocksMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, GV_MOCK_FIELD_CLOCKS);
        /* HBM parts list one memory clock, the max (every datacenter capture). */
        const unsigned v[1] = { d->max_clock_mem_mhz };
        return leave(fill_list(count, clocksMHz, v, 1));
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                  unsigned int *count, unsigned int *clocksMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, GV_MOCK_FIELD_CLOCKS);
        if (memoryClockMHz != d->max_clock_mem_mhz)
                return leave(NVML_ERROR_NOT_FOUND);
        /* From the max graphics clock down to the idle one in the model's steps (A100: 1410..210, 81 values). */
        const gv_mock_model_facts_t *f = facts_of(d);
        unsigned step2 = f && f->clock_step_x2 ? f->clock_step_x2 : 30;
        unsigned top = d->max_clock_graphics_mhz, low = d->clock_graphics_mhz ? d->clock_graphics_mhz : 1;
        unsigned v[512], n = 0;
        for (unsigned k = 0; n < 512 && top * 2 >= low * 2 + k * step2; k++)
                v[n++] = top - (k * step2) / 2;
        return leave(fill_list(count, clocksMHz, v, n));
}

/* ECC counters exist when ECC is on: every counter of a healthy mock GPU is 0 (the captures' volatile counts). */
static nvmlReturn_t ecc_counter(const gv_mock_device_t *d, unsigned errorType, unsigned counterType)
{
        if (unsup(d, GV_MOCK_FIELD_ECC) || !d->ecc_current)
                return NVML_ERROR_NOT_SUPPORTED;
        if (errorType > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType > NVML_AGGREGATE_ECC)
                return NVML_ERROR_INVALID_ARGUMENT;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
        DEVICE_QUERY(GPU_HANDLE, device, eccCounts, 0);
        nvmlReturn_t r = ecc_counter(d, errorType, counterType);
        if (r == NVML_SUCCESS)
                *eccCounts = 0;
        return leave(r);
}

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                             nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType,
                                             unsigned long long *count)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        nvmlReturn_t r = ecc_counter(d, errorType, counterType);
        if (r == NVML_SUCCESS && locationType >= NVML_MEMORY_LOCATION_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r == NVML_SUCCESS)
                *count = 0;
        return leave(r);
}

/* Page retirement is the pre-Ampere scheme (T4: 0 pages, not pending); Ampere and later remap rows instead. */
static bool retires_pages(const gv_mock_device_t *d)
{
        return d->architecture < NVML_DEVICE_ARCH_AMPERE && d->ecc_current && !unsup(d, GV_MOCK_FIELD_ECC);
}

static bool remaps_rows(const gv_mock_device_t *d)
{
        return d->architecture >= NVML_DEVICE_ARCH_AMPERE && d->architecture != NVML_DEVICE_ARCH_UNKNOWN &&
               d->ecc_current && !unsup(d, GV_MOCK_FIELD_ECC);
}

nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                          unsigned long long *addresses, unsigned long long *timestamps)
{
        DEVICE_QUERY(GPU_HANDLE, device, pageCount, 0);
        if (cause >= NVML_PAGE_RETIREMENT_CAUSE_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!retires_pages(d))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        (void) addresses; /* no page is retired: nothing to write into either array */
        (void) timestamps;
        *pageCount = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
        return nvmlDeviceGetRetiredPages_v2(device, cause, pageCount, addresses, NULL);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending)
{
        DEVICE_QUERY(GPU_HANDLE, device, isPending, 0);
        if (!retires_pages(d))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *isPending = NVML_FEATURE_DISABLED;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
        DEVICE_QUERY(GPU_HANDLE, device, corrRows, 0);
        if (!uncRows || !isPending || !failureOccurred)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!remaps_rows(d))
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *corrRows = *uncRows = *isPending = *failureOccurred = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device, nvmlRowRemapperHistogramValues_t *values)
{
        DEVICE_QUERY(GPU_HANDLE, device, values, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        if (!remaps_rows(d) || !f || !f->remap_banks)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        /* Every bank still has its full remapping capacity (captures: "max N bank(s)", the rest 0). */
        *values = (nvmlRowRemapperHistogramValues_t){ .max = f->remap_banks };
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, nvmlInforomObject_t object, char *version,
                                         unsigned int length)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        const char *v = NULL;
        switch (object) {
        case NVML_INFOROM_OEM: v = f ? f->inforom_oem : NULL; break;
        case NVML_INFOROM_ECC: v = f ? f->inforom_ecc : NULL; break;
        case NVML_INFOROM_POWER:
        case NVML_INFOROM_DEN: v = NULL; break; /* "pwr_object N/A" in every capture */
        default: return leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        if (!v)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(copy_str(version, length, v));
}

nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char *version, unsigned int length)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        if (!f || !f->inforom_image)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        return leave(copy_str(version, length, f->inforom_image));
}

/* Encoder and frame-buffer-capture statistics: no session on a mock GPU (the captures: 0 / 0 / 0). */
nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
                                       unsigned int *averageLatency)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        if (!averageFps || !averageLatency)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        *sessionCount = *averageFps = *averageLatency = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderSessions(nvmlDevice_t device, unsigned int *sessionCount,
                                          nvmlEncoderSessionInfo_t *sessionInfos)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        (void) sessionInfos; /* no encoder session runs: nothing to write */
        *sessionCount = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFBCStats(nvmlDevice_t device, nvmlFBCStats_t *fbcStats)
{
        DEVICE_QUERY(ANY_HANDLE, device, fbcStats, 0);
        *fbcStats = (nvmlFBCStats_t){ 0 };
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFBCSessions(nvmlDevice_t device, unsigned int *sessionCount, nvmlFBCSessionInfo_t *sessionInfo)
{
        DEVICE_QUERY(ANY_HANDLE, device, sessionCount, 0);
        (void) sessionInfo; /* no frame-capture session runs: nothing to write */
        *sessionCount = 0;
        return leave(NVML_SUCCESS);
}

/* Accounting is off unless an administrator turns it on ("accounting_mode Disabled" in every capture). */
SCALAR_GETTER(nvmlDeviceGetAccountingMode, nvmlEnableState_t, mode, 0, NVML_FEATURE_DISABLED)
/* Power management is always on for these boards (deprecated query, nvml.h). */
SCALAR_GETTER(nvmlDeviceGetPowerManagementMode, nvmlEnableState_t, mode, GV_MOCK_FIELD_POWER_LIMIT, NVML_FEATURE_ENABLED)
/* Bare metal: no vGPU or pass-through layer is modelled. */
SCALAR_GETTER(nvmlDeviceGetVirtualizationMode, nvmlGpuVirtualizationMode_t, pVirtualMode, 0,
              NVML_GPU_VIRTUALIZATION_MODE_NONE)
SCALAR_GETTER(nvmlDeviceGetBusType, nvmlBusType_t, type, 0, NVML_BUS_TYPE_PCIE)
/* No PCIe replays on a healthy link. */
SCALAR_GETTER(nvmlDeviceGetPcieReplayCounter, unsigned int, value, 0, 0)
/* SXM and single-GPU PCIe boards: not a multi-GPU board. */
SCALAR_GETTER(nvmlDeviceGetMultiGpuBoard, unsigned int, multiGpuBool, 0, 0)
/* The mock topology: GPUs in groups of four per CPU socket (nvmlDeviceGetTopologyCommonAncestor), one NUMA node each. */
SCALAR_GETTER(nvmlDeviceGetNumaNodeId, unsigned int, node, 0, d->index / 4)

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
        DEVICE_QUERY(GPU_HANDLE, device, violTime, 0);
        if (perfPolicyType >= NVML_PERF_POLICY_COUNT)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        /* Never throttled (the H100 capture's clocks_event_reasons_counters are all 0). */
        violTime->referenceTime = (unsigned long long) now.tv_sec * 1000000ULL + (unsigned long long) now.tv_nsec / 1000ULL;
        violTime->violationTime = 0;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *busWidth)
{
        DEVICE_QUERY(GPU_HANDLE, device, busWidth, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        if (!f || !f->memory_bus_width)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *busWidth = f->memory_bus_width;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int *maxSpeed)
{
        DEVICE_QUERY(GPU_HANDLE, device, maxSpeed, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        if (!f || !f->pcie_gen_max || f->pcie_gen_max > 6)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        /* NVML_PCIE_LINK_MAX_SPEED_2500MBPS (1) .. _64000MBPS (6): one step per PCIe generation. */
        *maxSpeed = f->pcie_gen_max;
        return leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTopologyNearestGpus(nvmlDevice_t device, nvmlGpuTopologyLevel_t level, unsigned int *count,
                                              nvmlDevice_t *deviceArray)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        if (level != NVML_TOPOLOGY_INTERNAL && level != NVML_TOPOLOGY_SINGLE && level != NVML_TOPOLOGY_MULTIPLE &&
            level != NVML_TOPOLOGY_HOSTBRIDGE && level != NVML_TOPOLOGY_NODE && level != NVML_TOPOLOGY_SYSTEM)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        /* The GPUs at @level or nearer, in the layout of nvmlDeviceGetTopologyCommonAncestor. */
        unsigned n = 0;
        nvmlDevice_t found[MAXG] = { 0 };
        for (unsigned o = 0; o < S.profile->device_count; o++) {
                if (o == g)
                        continue;
                unsigned lv = o / 2 == g / 2 ? NVML_TOPOLOGY_MULTIPLE : o / 4 == g / 4 ? NVML_TOPOLOGY_NODE
                                                                                         : NVML_TOPOLOGY_SYSTEM;
                if (lv <= level)
                        found[n++] = &S.gpus[o];
        }
        if (*count < n) {
                *count = n;
                return leave(NVML_ERROR_INSUFFICIENT_SIZE);
        }
        if (n && !deviceArray)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < n; i++)
                deviceArray[i] = found[i];
        *count = n;
        return leave(NVML_SUCCESS);
}

/* Datacenter boards ship with ECC on: the default is enabled wherever ECC exists. */
SCALAR_GETTER(nvmlDeviceGetDefaultEccMode, nvmlEnableState_t, defaultMode, GV_MOCK_FIELD_ECC, NVML_FEATURE_ENABLED)
/* The board id nvidia-smi prints is bus << 8 | device (captures: bus 0x30 -> 0x3000, T4 at 00:1e -> 0x1e). */
SCALAR_GETTER(nvmlDeviceGetBoardId, unsigned int, boardId, 0, d->pci_bus << 8 | d->pci_device)

nvmlReturn_t nvmlDeviceGetPcieSpeed(nvmlDevice_t device, unsigned int *pcieSpeed)
{
        DEVICE_QUERY(GPU_HANDLE, device, pcieSpeed, 0);
        const gv_mock_model_facts_t *f = facts_of(d);
        /* The current link's transfer rate a lane, Mbps: 2500, 5000, 8000, 16000, 32000 for gen 1..5. */
        static const unsigned by_gen[] = { 0, 2500, 5000, 8000, 16000, 32000, 64000 };
        if (!f || !f->pcie_gen_cur || f->pcie_gen_cur > 6)
                return leave(NVML_ERROR_NOT_SUPPORTED);
        *pcieSpeed = by_gen[f->pcie_gen_cur];
        return leave(NVML_SUCCESS);
}

/*
 * CPU and memory affinity in the mock topology: one CPU socket (and NUMA
 * node) per group of four GPUs, the host's CPUs split evenly over the
 * sockets in order.  Fills @n words of @set (bit i: CPU or node i).
 */
static nvmlReturn_t affinity(const gv_mock_device_t *d, unsigned n, unsigned long *set, unsigned scope, bool cpus)
{
        if (!n || !set || (scope != NVML_AFFINITY_SCOPE_NODE && scope != NVML_AFFINITY_SCOPE_SOCKET))
                return NVML_ERROR_INVALID_ARGUMENT;
        unsigned sockets = (S.profile->device_count + 3) / 4, node = d->index / 4;
        long host = sysconf(_SC_NPROCESSORS_CONF);
        unsigned ncpu = host > 0 ? (unsigned) host : 1;
        unsigned first = node, last = node + 1; /* a range of CPUs or nodes */
        if (cpus) {
                unsigned per = ncpu / sockets ? ncpu / sockets : 1;
                first = node * per < ncpu ? node * per : 0;
                last = node + 1 == sockets || first + per > ncpu ? ncpu : first + per;
        }
        const unsigned bits = 8 * sizeof(unsigned long);
        memset(set, 0, n * sizeof(*set));
        for (unsigned i = first; i < last && i / bits < n; i++)
                set[i / bits] |= 1UL << (i % bits);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinityWithinScope(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet,
                                                 nvmlAffinityScope_t scope)
{
        DEVICE_QUERY(GPU_HANDLE, device, cpuSet, 0);
        return leave(affinity(d, cpuSetSize, cpuSet, scope, true));
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet)
{
        return nvmlDeviceGetCpuAffinityWithinScope(device, cpuSetSize, cpuSet, NVML_AFFINITY_SCOPE_NODE);
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet,
                                         nvmlAffinityScope_t scope)
{
        DEVICE_QUERY(GPU_HANDLE, device, nodeSet, 0);
        return leave(affinity(d, nodeSetSize, nodeSet, scope, false));
}

/* One field of nvmlDeviceGetFieldValues; sets v->nvmlReturn, valueType and value. */
static void field_value(const gv_mock_device_t *d, nvmlFieldValue_t *v)
{
        const gv_mock_model_facts_t *f = facts_of(d);
        nvmlReturn_t r = NVML_SUCCESS;
        bool ull = false;
        unsigned long long x = 0;
        switch (v->fieldId) {
        case NVML_FI_DEV_ECC_CURRENT: x = d->ecc_current; r = unsup(d, GV_MOCK_FIELD_ECC) ? NVML_ERROR_NOT_SUPPORTED : r; break;
        case NVML_FI_DEV_ECC_PENDING: x = d->ecc_pending; r = unsup(d, GV_MOCK_FIELD_ECC) ? NVML_ERROR_NOT_SUPPORTED : r; break;
        case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
        case NVML_FI_DEV_ECC_DBE_AGG_TOTAL: ull = true; r = ecc_counter(d, 0, 0); break;
        case NVML_FI_DEV_RETIRED_SBE:
        case NVML_FI_DEV_RETIRED_DBE:
        case NVML_FI_DEV_RETIRED_PENDING: ull = true; r = retires_pages(d) ? r : NVML_ERROR_NOT_SUPPORTED; break;
        case NVML_FI_DEV_REMAPPED_COR:
        case NVML_FI_DEV_REMAPPED_UNC:
        case NVML_FI_DEV_REMAPPED_PENDING:
        case NVML_FI_DEV_REMAPPED_FAILURE: r = remaps_rows(d) ? r : NVML_ERROR_NOT_SUPPORTED; break;
        case NVML_FI_DEV_PCIE_REPLAY_COUNTER: break;
        case NVML_FI_DEV_NVLINK_LINK_COUNT:
                x = d->nvlink_count;
                r = unsup(d, GV_MOCK_FIELD_NVLINK) || !f || !f->nvlink_version ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_POWER_AVERAGE:
        case NVML_FI_DEV_POWER_INSTANT:
                x = d->power_usage_mw;
                r = unsup(d, GV_MOCK_FIELD_POWER_USAGE) || v->scopeId != NVML_POWER_SCOPE_GPU ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
        case NVML_FI_DEV_ENERGY:
                ull = true;
                x = (unsigned long long) d->power_usage_mw * (unsigned long long) ms_since(&S.init_time) / 1000ULL;
                r = unsup(d, GV_MOCK_FIELD_POWER_USAGE) || d->architecture < NVML_DEVICE_ARCH_VOLTA ? NVML_ERROR_NOT_SUPPORTED : r;
                break;
        default: r = NVML_ERROR_NOT_SUPPORTED; break;
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        v->timestamp = (long long) now.tv_sec * 1000000LL + now.tv_nsec / 1000L;
        v->latencyUsec = 0;
        v->nvmlReturn = r;
        memset(&v->value, 0, sizeof(v->value));
        if (r != NVML_SUCCESS)
                return;
        v->valueType = ull ? NVML_VALUE_TYPE_UNSIGNED_LONG_LONG : NVML_VALUE_TYPE_UNSIGNED_INT;
        if (ull)
                v->value.ullVal = x;
        else
                v->value.uiVal = (unsigned) x;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
        DEVICE_QUERY(ANY_HANDLE, device, values, 0);
        if (valuesCount < 0)
                return leave(NVML_ERROR_INVALID_ARGUMENT);
        /* The common fields exporters read: ECC, retired pages, remapped rows, power, energy, NVLink count. */
        for (int i = 0; i < valuesCount; i++)
                field_value(d, &values[i]);
        return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* generated stubs: every other function of nvml-api.txt               */

#define STUB_BEGIN() BEGIN()
#define STUB_DEVICE(h)                                                        \
        do {                                                                  \
                unsigned stub_g_;                                             \
                int stub_m_;                                                  \
                nvmlReturn_t stub_r_ = resolve((h), &stub_g_, &stub_m_);      \
                if (stub_r_ != NVML_SUCCESS)                                  \
                        return leave(stub_r_);                                \
        } while (0)
#define STUB_INSTANCE(h, base)                                                          \
        do {                                                                            \
                gv_mock_device_t *stub_d_;                                              \
                unsigned stub_g_;                                                       \
                int stub_s_;                                                            \
                nvmlReturn_t stub_r_ = resolve_instance((h), (base), &stub_d_, &stub_g_, &stub_s_); \
                if (stub_r_ != NVML_SUCCESS)                                            \
                        return leave(stub_r_);                                          \
        } while (0)
#define STUB_GPU_INSTANCE(h) STUB_INSTANCE(h, S.gis)
#define STUB_COMPUTE_INSTANCE(h) STUB_INSTANCE(h, S.cis)
#define STUB_EVENT_SET(h)                                                     \
        do {                                                                  \
                if (!event_set_known(h))                                      \
                        return leave(NVML_ERROR_INVALID_ARGUMENT);            \
        } while (0)
#define STUB_POINTER(p)                                                       \
        do {                                                                  \
                if (!(p))                                                     \
                        return leave(NVML_ERROR_INVALID_ARGUMENT);            \
        } while (0)

__attribute__((unused)) static bool event_set_known(const struct nvmlEventSet_st *set)
{
        for (const struct nvmlEventSet_st *p = S.sets; p; p = p->next)
                if (p == set)
                        return true;
        return false;
}

#include "nvml-stubs.inc"
