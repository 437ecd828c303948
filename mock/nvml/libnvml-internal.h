/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1's internal state and helpers, shared by its
 * source files (one per NVML API area):
 *
 *   libnvml.c            the state, the handle helpers, the generated stubs
 *   libnvml-init.c       init/shutdown (profile selection, faults), error strings, system queries
 *   libnvml-device.c     enumeration, identity, memory, telemetry (power, clocks, utilisation, ECC mode)
 *   libnvml-processes.c  compute/graphics/MPS process lists (v1 and v2/v3 layouts)
 *   libnvml-mig.c        MIG mode, MIG devices, GPU and compute instances and their profiles
 *   libnvml-fabric.c     fabric state, topology common ancestor, NVLink state and remote PCI
 *   libnvml-events.c     event sets, scheduled Xids and the Xid control file
 *   libnvml-facts.c      model facts (model-facts.c): BAR1, PCIe, thresholds, clocks, codecs, NVLink
 *   libnvml-health.c     ECC counters, retired pages, remapped rows, inforom, sessions, affinity, field values
 *   libnvml-control.c    runtime changes: the state file of `mock set`, applied as an overlay
 *
 * Nothing here is exported: the library is built with hidden visibility and
 * the version script (gen-version-script.py) exports exactly nvml-api.txt.
 * The helpers its files share carry the library's prefix, mn_ (mock NVML);
 * the entry points carry NVIDIA's names.
 * Semantics: shared/reference/nvml-abi.md; profiles and faults: docs/mock-nvml.md.
 *
 * All state lives in one struct guarded by one mutex, like real NVML's.
 * Handles point into fixed arrays of that struct, so a stale or foreign
 * handle is recognised by address and never dereferenced.
 */
#ifndef GV_MOCK_NVML_LIBNVML_INTERNAL_H
#define GV_MOCK_NVML_LIBNVML_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "abi/nvml/nvml-abi.h"
#include "mock/nvml/libnvml-control.h"
#include "mock/nvml/model-facts.h"
#include "mock/nvml/profile.h"

#define GV_EXPORT __attribute__((visibility("default")))

/* Prototypes generated from the ABI list: a definition that differs fails to compile. */
#define GV_MOCK_PROTO(name, params) GV_EXPORT nvmlReturn_t name params;
GV_NVML_FUNCTIONS(GV_MOCK_PROTO)
GV_NVML_MOCK_FUNCTIONS(GV_MOCK_PROTO)
#undef GV_MOCK_PROTO
GV_EXPORT const char *nvmlErrorString(nvmlReturn_t result);
/* Not in nvml.h, exported by the real library (docs/mock-nvml.md, "Private entry points"). */
GV_EXPORT nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *table_id);

/*
 * GV_MOCK_ALIAS(plain, versioned) - export @plain as the same function as
 * @versioned (GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES of nvml-abi.h).  An
 * alias must sit in the file that defines @versioned; a missing one fails the
 * link against the version script and the ABI test.
 */
#define GV_MOCK_ALIAS(plain, versioned) \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'plain' is a declarator, not an expression */ \
        extern __typeof__(versioned) plain __attribute__((alias(#versioned), visibility("default")));

#define MAXG GV_MOCK_MAX_GPUS
#define MAXM GV_MOCK_MAX_MIG_DEVICES
#define MAX_XIDS 1024
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

/* The library's one state (libnvml.c), guarded by its lock. */
struct mock_state {
        pthread_mutex_t lock;
        unsigned refcount;
        gv_mock_profile_t *profile;
        struct timespec init_time;
        uint64_t lost;               /* profile faults + MOCK_NVML_LOST_GPUS */
        unsigned host_index[MAXG];   /* the node's index of each GPU this process sees (device nodes) */
        int fabric_override;         /* -1 none, else NVML_GPU_FABRIC_STATE_* */
        char *xid_file;              /* MOCK_NVML_XID_FILE or faults.xid_control_file */
        struct nvmlEventSet_st *sets;
        struct nvmlDevice_st gpus[MAXG];
        struct nvmlDevice_st migs[MAXG][MAXM];
        struct nvmlGpuInstance_st gis[MAXG][MAXM];
        struct nvmlComputeInstance_st cis[MAXG][MAXM];
        struct mock_control ctl;     /* runtime changes (`mock set`), libnvml-control.c */
};

/* The state, under the short name every entry point uses. */
extern struct mock_state mn_state;
#define S mn_state

/* ---- locking and handles (libnvml.c) ---- */

/* mn_leave - release S.lock and return @r: how every locked entry point returns. */
nvmlReturn_t mn_leave(nvmlReturn_t r);

/* BEGIN() - lock S; return UNINITIALIZED (unlocked) before nvmlInit; apply a changed runtime state. */
#define BEGIN()                                                     \
        do {                                                        \
                pthread_mutex_lock(&S.lock);                        \
                if (!S.refcount)                                    \
                        return mn_leave(NVML_ERROR_UNINITIALIZED);  \
                mn_control_refresh();                               \
        } while (0)

/* mn_debug - one "mock-nvml: " line on stderr when MOCK_NVML_DEBUG is set (and not "0"). */
__attribute__((format(printf, 1, 2))) void mn_debug(const char *fmt, ...);

/* mn_slot_of - index of @p in the array @base of @n elements of @size bytes, or -1 (also for a pointer into an element). */
long mn_slot_of(const void *p, const void *base, size_t n, size_t size);

/* mn_gpu_at - the profile's GPU @i, or NULL past the GPU count.  S.lock held, initialised. */
gv_mock_device_t *mn_gpu_at(unsigned i);

/* mn_mig_on - whether @d is MIG-capable with MIG mode enabled. */
bool mn_mig_on(const gv_mock_device_t *d);

/*
 * mn_resolve - a device handle to *gpu (the physical GPU index) and *mig (the
 * MIG slot, or -1).  INVALID_ARGUMENT for a bad handle, GPU_IS_LOST for a lost GPU.
 */
nvmlReturn_t mn_resolve(nvmlDevice_t h, unsigned *gpu, int *mig);

/* mn_resolve_physical - mn_resolve() for queries only a physical GPU answers: a MIG handle is INVALID_ARGUMENT. */
nvmlReturn_t mn_resolve_physical(nvmlDevice_t h, gv_mock_device_t **d, unsigned *gpu);

/* mn_unsup - whether the profile marks @bit (GV_MOCK_FIELD_*) unsupported on @d. */
bool mn_unsup(const gv_mock_device_t *d, uint32_t bit);

/*
 * The preamble of the entry points.  The macros below return from the entry
 * point on the first failed check, in this order: UNINITIALIZED before init,
 * then the handle (INVALID_ARGUMENT for a bad one, GPU_IS_LOST), then
 * INVALID_ARGUMENT for a NULL output, then NOT_SUPPORTED.  When they do not
 * return, S.lock is held: the entry point ends with `return mn_leave(code)`.
 */

/* BEGIN_OUT(out) - BEGIN() and INVALID_ARGUMENT when @out is NULL. */
#define BEGIN_OUT(out)                                                   \
        do {                                                             \
                BEGIN();                                                 \
                if (!(out))                                              \
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);    \
        } while (0)

/* What a device query accepts as its handle. */
enum handle_kind {
        ANY_HANDLE, /* a GPU or a MIG device; a MIG device answers with its parent GPU's values */
        GPU_HANDLE, /* a physical GPU only: a MIG handle is INVALID_ARGUMENT */
};

/* @out for an entry point that checks its outputs itself. */
#define NO_OUT ((const void *) &S)

/*
 * mn_enter_device - lock, check initialised, resolve @h as a @kind handle into
 * *d (the GPU, the parent GPU for a MIG handle), *gpu and *mig (the MIG slot
 * or -1), refuse a NULL @out, and answer NOT_SUPPORTED when @bit (0: none)
 * is marked unsupported on the GPU.  Returns NVML_SUCCESS with S.lock held,
 * or the error code with S.lock released.
 */
nvmlReturn_t mn_enter_device(nvmlDevice_t h, enum handle_kind kind, const void *out, uint32_t bit,
                          gv_mock_device_t **d, unsigned *gpu, int *mig);

/*
 * DEVICE_QUERY(kind, h, out, bit) - mn_enter_device() for a device entry point:
 * declares d, g and m, or returns the error code.
 */
#define DEVICE_QUERY(kind, h, out, bit)                                                         \
        gv_mock_device_t *d;                                                                    \
        unsigned g;                                                                             \
        int m;                                                                                  \
        do {                                                                                    \
                nvmlReturn_t enter_r_ = mn_enter_device((h), (kind), (out), (bit), &d, &g, &m); \
                if (enter_r_ != NVML_SUCCESS)                                                   \
                        return enter_r_;                                                        \
        } while (0)

/*
 * SCALAR_GETTER(fn, type, out, bit, expr) - defines entry point @fn(device,
 * type *out) answering (type) @expr for a GPU or MIG handle (d is the GPU),
 * NOT_SUPPORTED when the profile marks @bit unsupported.
 */
#define SCALAR_GETTER(fn, type, out, bit, expr)                               \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'type' is a type name, not an expression */ \
        nvmlReturn_t fn(nvmlDevice_t device, type *out)                       \
        {                                                                     \
                DEVICE_QUERY(ANY_HANDLE, device, out, bit);                   \
                /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'type' is a type name in a cast */ \
                *out = (type) (expr);                                         \
                return mn_leave(NVML_SUCCESS);                                \
        }

/*
 * FACT_GETTER(fn, kind, out, field) - defines entry point @fn(device,
 * unsigned int *out) answering the model fact @field (model-facts.h) for a
 * @kind handle; NOT_SUPPORTED when the model is unknown or the fact is 0.
 */
#define FACT_GETTER(fn, kind, out, field)                                     \
        /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'out' is a declarator, not an expression */ \
        nvmlReturn_t fn(nvmlDevice_t device, unsigned int *out)               \
        {                                                                     \
                DEVICE_QUERY((kind), device, out, 0);                         \
                const gv_mock_model_facts_t *f = mn_facts_of(d);              \
                if (!f || !f->field)                                          \
                        return mn_leave(NVML_ERROR_NOT_SUPPORTED);            \
                /* NOLINTNEXTLINE(bugprone-macro-parentheses): 'field' is a member name */ \
                *out = f->field;                                              \
                return mn_leave(NVML_SUCCESS);                                \
        }

/* mn_copy_str - @s into @buf of @length bytes: INVALID_ARGUMENT for NULL @buf, INSUFFICIENT_SIZE when it does not fit. */
nvmlReturn_t mn_copy_str(char *buf, unsigned length, const char *s);

/* mn_mig_profile_of - the MIG profile of @d that MIG device @m was created from, or NULL. */
const gv_mock_mig_profile_t *mn_mig_profile_of(const gv_mock_device_t *d, const gv_mock_mig_device_t *m);

/* mn_ms_since - milliseconds of CLOCK_MONOTONIC since @t0. */
long mn_ms_since(const struct timespec *t0);

/* ---- helpers of one area that another area uses ---- */

/* mn_driver_branch - the branch of the profile's driver version: 580 for "580.105.08" (0 when unparsable); S.lock held (libnvml-smi.c). */
unsigned mn_driver_branch(void);

/* mn_fill_pci - an nvmlPciInfo_t for @domain:@bus:@dev.0 with its ids and both bus id spellings (libnvml-device.c). */
void mn_fill_pci(nvmlPciInfo_t *pci, unsigned domain, unsigned bus, unsigned dev, unsigned device_id,
              unsigned subsystem);

/* mn_clock_query - current (@max false) or max clock @type of @device in MHz, locked and released (libnvml-device.c). */
nvmlReturn_t mn_clock_query(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock, bool max);

/*
 * mn_resolve_instance - a GPU (@base S.gis) or compute (@base S.cis) instance
 * handle to *d, *gpu and its MIG slot *slot; INVALID_ARGUMENT for a bad or
 * stale handle, GPU_IS_LOST for a lost GPU.  S.lock held (libnvml-mig.c).
 */
nvmlReturn_t mn_resolve_instance(const void *h, const void *base, gv_mock_device_t **d, unsigned *gpu, int *slot);

/* mn_nvlink_check - INVALID_ARGUMENT for a link number NVML never has, NOT_SUPPORTED for a link @d lacks (libnvml-fabric.c). */
nvmlReturn_t mn_nvlink_check(const gv_mock_device_t *d, unsigned link);

/* mn_facts_of - the model facts of @d, or NULL: the queries then answer NOT_SUPPORTED (libnvml-facts.c). */
const gv_mock_model_facts_t *mn_facts_of(const gv_mock_device_t *d);

#endif
