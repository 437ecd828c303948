/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The product's view of NVML: the contract's typed dlopen binding
 * (abi/nvml/nvml-loader.h: gv_nvml_open/close/strerror) plus the mapping of
 * NVML return codes to our failure classes and errors, and the GPU health
 * monitor of `gpu-validator watch` (health.c: critical Xid events and a
 * per-GPU probe for GPU_IS_LOST).  Used by the driver component,
 * cuda-check and the watcher; the mock (mock/) uses only the binding.
 */
#ifndef GV_NVML_NVML_H
#define GV_NVML_NVML_H

#include <stdbool.h>
#include <stddef.h>

#include "abi/nvml/nvml-loader.h"
#include "base/error.h"

/* gv_nvml_reason - map an NVML return code to our failure class (NVML_ERROR_NO_PERMISSION, 4, is permission-denied, not driver-not-loaded). */
gv_reason_t gv_nvml_reason(nvmlReturn_t ret);

/*
 * gv_nvml_error - fill *err from an NVML failure: "<what>: <library text> (<NAME>, <code>)",
 * reason from gv_nvml_reason().  Returns a negative errno (EIO, EACCES for NO_PERMISSION).
 */
int gv_nvml_error(gv_error_t **err, const gv_nvml_t *nvml, nvmlReturn_t ret, const char *what);

/*
 * gv_nvml_same_bus_id - whether two PCI addresses name the same function,
 * whatever the spelling: NVML's "00000000:3B:00.0" (nvmlPciInfo_t.busId),
 * its legacy "0000:3B:00.0" and sysfs's "0000:3b:00.0".  False when either
 * does not parse.  Pure.
 */
bool gv_nvml_same_bus_id(const char *a, const char *b);

/* ---- GPU health (health.c) ---- */

/*
 * What the health monitor knows of one GPU: its identity, read when the
 * monitor was opened (while the GPU answered), and what it saw since.
 */
typedef struct gv_gpu_note {
        unsigned index;                                  /* in NVML's enumeration */
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];      /* "GPU-..."; "" when unknown */
        char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* nvmlPciInfo_t.busId; "" when unknown */
        unsigned long long xid;                          /* the last critical Xid seen on it; 0: none */
        bool lost;                                       /* the last probe got NVML_ERROR_GPU_IS_LOST */
        const char *lost_call;                           /* which call said so (static), while lost */
} gv_gpu_note_t;

/*
 * gv_gpu_note_find - the note of the GPU with PCI address @bus_id (when both
 * it and the note's are known), else of NVML index @index; NULL when
 * @notes (@n of them, may be NULL) has none.  Pure; the result points into
 * @notes.
 */
const gv_gpu_note_t *gv_gpu_note_find(const gv_gpu_note_t *notes, size_t n, unsigned index, const char *bus_id);

/*
 * gv_gpu_note_name - "GPU 2 (GPU-8e7c..., bus id 00000000:12:00.0, Xid 79)":
 * the parts that are known (no UUID, bus id or Xid: left out).  Heap string
 * owned by the caller; NULL when out of memory.
 */
char *gv_gpu_note_name(const gv_gpu_note_t *g);

/*
 * Xid numbers that say an application failed, not the GPU (NVIDIA's Xid
 * catalogue, https://docs.nvidia.com/deploy/xid-errors/): 13 graphics engine
 * exception, 31 GPU memory page fault, 43 GPU stopped processing, 45
 * preemptive cleanup, 68 video processor exception, 109 context switch
 * timeout.  The list NVIDIA's device plugin skips (k8s-device-plugin
 * internal/rm/health.go, applicationErrorXids, v0.19.3); the health monitor
 * skips them too.
 */
#define GV_XID_APPLICATION_ERRORS 13u, 31u, 43u, 45u, 68u, 109u

/* Xid 79, "GPU has fallen off the bus" (NVIDIA's Xid catalogue): NVML answers GPU_IS_LOST after it. */
#define GV_XID_FELL_OFF_THE_BUS 79u

/* Which Xid events the monitor acts on. */
typedef struct gv_xid_filter {
        bool ignore_all;          /* act on no Xid (the GPU_IS_LOST probe still runs) */
        const unsigned *ignored;  /* more Xids to skip besides GV_XID_APPLICATION_ERRORS (borrowed) */
        size_t n_ignored;
} gv_xid_filter_t;

/* gv_xid_is_critical - whether @filter (may be NULL: only the application errors skipped) acts on Xid @xid.  Pure. */
bool gv_xid_is_critical(const gv_xid_filter_t *filter, unsigned long long xid);

/* The monitor (opaque). */
typedef struct gv_gpu_health gv_gpu_health_t;

/*
 * gv_gpu_health_open - load the libnvidia-ml.so.1 at @lib (gv_nvml_open),
 * nvmlInit_v2, read each GPU's identity (nvmlDeviceGetHandleByIndex_v2,
 * nvmlDeviceGetPciInfo_v3, nvmlDeviceGetUUID) and register every GPU that
 * supports it for nvmlEventTypeXidCriticalError in one event set
 * (nvmlEventSetCreate, nvmlDeviceGetSupportedEventTypes,
 * nvmlDeviceRegisterEvents: NVML API reference, "Event Handling Methods",
 * https://docs.nvidia.com/deploy/nvml-api/group__nvmlEvents.html; what
 * NVIDIA's device plugin does in internal/rm/health.go).  A library without
 * the event functions, or a GPU without Xid events, is probed only.
 * The monitor keeps NVML initialised (and so the device nodes open) until
 * gv_gpu_health_close().  @filter is copied.  *@out: owned by the caller.
 * Errors: those of gv_nvml_open(); nvmlInit_v2 and nvmlDeviceGetCount_v2
 * failures through gv_nvml_error(); -ENOMEM.
 */
int gv_gpu_health_open(const char *lib, const gv_xid_filter_t *filter, gv_gpu_health_t **out, gv_error_t **err);

/* What one probe found. */
typedef struct gv_gpu_probe {
        long lost;               /* index of the first GPU lost now; -1: none */
        bool lost_changed;       /* the set of lost GPUs differs from the previous probe's (or the open's) */
        long xid_gpu;            /* index of the first GPU with a new critical Xid; -1: none */
        unsigned long long xid;  /* that Xid */
        unsigned n_xids;         /* critical Xid events taken by this probe */
        unsigned n_skipped;      /* Xid events skipped (application errors, the filter, other devices) */
        nvmlReturn_t wait_error; /* nvmlEventSetWait_v2's failure other than TIMEOUT; NVML_SUCCESS: none */
} gv_gpu_probe_t;

/*
 * gv_gpu_health_probe - one look at the GPUs, without blocking: take every
 * pending event of the set (nvmlEventSetWait_v2 with a 0 ms timeout, at
 * most 256 a call; an Xid on a GPU is recorded in its note unless
 * gv_xid_is_critical() says skip), then ask each GPU
 * nvmlDeviceGetHandleByIndex_v2 and nvmlDeviceGetUUID: NVML answers
 * NVML_ERROR_GPU_IS_LOST "if the target GPU has fallen off the bus or is
 * otherwise inaccessible" (NVML API reference, "Device Queries").  A GPU
 * answering again is no longer lost (its Xid is forgotten).  Costs 2 NVML
 * calls a GPU plus one an event.  Never fails: what NVML says is in @out and
 * the notes.
 */
void gv_gpu_health_probe(gv_gpu_health_t *h, gv_gpu_probe_t *out);

/* gv_gpu_health_notes - the notes of @h's GPUs (*@n of them), valid until the next probe or close; NULL for a NULL @h. */
const gv_gpu_note_t *gv_gpu_health_notes(const gv_gpu_health_t *h, size_t *n);

/* gv_gpu_health_events - how many GPUs are registered for Xid events (0: probe only). */
size_t gv_gpu_health_events(const gv_gpu_health_t *h);

/* gv_gpu_health_lib - the library path @h loaded (borrowed). */
const char *gv_gpu_health_lib(const gv_gpu_health_t *h);

/* gv_gpu_health_close - free the event set, nvmlShutdown, dlclose, free; sets *@h to NULL; accepts NULL. */
void gv_gpu_health_close(gv_gpu_health_t **h);

#endif
