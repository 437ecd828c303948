/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU health monitor of `gpu-validator watch` (nvml.h): NVML kept
 * initialised, one event set registered for critical Xid events on every
 * GPU, and a cheap per-GPU probe for NVML_ERROR_GPU_IS_LOST.  Nothing here
 * blocks: the watcher calls gv_gpu_health_probe() from its own loop, so no
 * thread shares NVML with the validation it runs in the same process (NVML
 * is reference counted: the driver check's nvmlInit/nvmlShutdown pair
 * leaves the monitor's initialisation in place).  docs/markers.md,
 * "Re-validation", GPU health.
 */
#include "nvml/nvml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

/* Events taken by one probe at most: a storm of Xids cannot hold the watcher's loop. */
#define MAX_EVENTS_PER_PROBE 256u

struct gv_gpu_health {
        gv_nvml_t *nvml;
        bool initialised;     /* nvmlInit_v2 succeeded: nvmlShutdown owed */
        nvmlEventSet_t set;   /* NULL: no event set (the library lacks it, or no GPU supports Xid events) */
        size_t n_events;      /* GPUs registered for Xid events */
        size_t n;
        gv_gpu_note_t *notes; /* n */
        nvmlDevice_t *handles; /* n; the handles read at open (what event data names) */
        gv_xid_filter_t filter; /* its ignored list is owned_ignored */
        unsigned *owned_ignored;
};

static const unsigned application_xids[] = { GV_XID_APPLICATION_ERRORS };

bool gv_xid_is_critical(const gv_xid_filter_t *filter, unsigned long long xid)
{
        for (size_t i = 0; i < sizeof(application_xids) / sizeof(application_xids[0]); i++)
                if (xid == application_xids[i])
                        return false;
        if (!filter)
                return true;
        if (filter->ignore_all)
                return false;
        for (size_t i = 0; i < filter->n_ignored; i++)
                if (filter->ignored && xid == filter->ignored[i])
                        return false;
        return true;
}

const gv_gpu_note_t *gv_gpu_note_find(const gv_gpu_note_t *notes, size_t n, unsigned index, const char *bus_id)
{
        if (!notes)
                return NULL;
        if (bus_id && *bus_id) {
                for (size_t i = 0; i < n; i++)
                        if (notes[i].bus_id[0] && gv_nvml_same_bus_id(notes[i].bus_id, bus_id))
                                return &notes[i];
        }
        for (size_t i = 0; i < n; i++)
                if (notes[i].index == index && (!bus_id || !*bus_id || !notes[i].bus_id[0]))
                        return &notes[i];
        return NULL;
}

char *gv_gpu_note_name(const gv_gpu_note_t *g)
{
        char *s = NULL, xid[32] = "";
        if (g->xid)
                snprintf(xid, sizeof(xid), "Xid %llu", g->xid);
        const char *parts[3] = { g->uuid, g->bus_id[0] ? "bus id " : "", xid };
        bool any = g->uuid[0] || g->bus_id[0] || xid[0];
        int r = asprintf(&s, "GPU %u%s%s%s%s%s%s%s%s", g->index, any ? " (" : "", parts[0],
                         g->uuid[0] && (g->bus_id[0] || xid[0]) ? ", " : "", parts[1], g->bus_id,
                         g->bus_id[0] && xid[0] ? ", " : "", parts[2], any ? ")" : "");
        return r < 0 ? NULL : s;
}

/* The identity of GPU @i into its note and handle; a GPU lost already is noted as such. */
static void read_identity(gv_gpu_health_t *h, unsigned i)
{
        gv_nvml_t *nvml = h->nvml;
        gv_gpu_note_t *g = &h->notes[i];
        nvmlDevice_t dev = NULL;
        g->index = i;
        nvmlReturn_t ret = nvml->nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (ret == NVML_ERROR_GPU_IS_LOST) {
                g->lost = true;
                g->lost_call = "nvmlDeviceGetHandleByIndex_v2";
        }
        if (!dev)
                return;
        h->handles[i] = dev;
        if (nvml->nvmlDeviceGetPciInfo_v3) {
                /* NVML answers the PCI info of a lost GPU's handle too: the bus id names it. */
                nvmlPciInfo_t pci;
                memset(&pci, 0, sizeof(pci));
                if (nvml->nvmlDeviceGetPciInfo_v3(dev, &pci) == NVML_SUCCESS)
                        snprintf(g->bus_id, sizeof(g->bus_id), "%.*s", (int) sizeof(pci.busId), pci.busId);
        }
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
        if (ret == NVML_SUCCESS && nvml->nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)) == NVML_SUCCESS) {
                uuid[sizeof(uuid) - 1] = '\0';
                snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
        }
}

/* Register GPU @i for critical Xid events when it supports them (device plugin: an unsupported GPU is "too old"). */
static void register_xids(gv_gpu_health_t *h, unsigned i)
{
        gv_nvml_t *nvml = h->nvml;
        unsigned long long supported = 0;
        if (!h->set || !nvml->nvmlDeviceGetSupportedEventTypes || !nvml->nvmlDeviceRegisterEvents ||
            !h->handles[i] || h->notes[i].lost ||
            nvml->nvmlDeviceGetSupportedEventTypes(h->handles[i], &supported) != NVML_SUCCESS ||
            !(supported & nvmlEventTypeXidCriticalError))
                return;
        if (nvml->nvmlDeviceRegisterEvents(h->handles[i], nvmlEventTypeXidCriticalError, h->set) == NVML_SUCCESS)
                h->n_events++;
}

static bool have_events(const gv_nvml_t *nvml)
{
        return nvml->nvmlEventSetCreate && nvml->nvmlEventSetWait_v2 && nvml->nvmlEventSetFree &&
               nvml->nvmlDeviceGetSupportedEventTypes && nvml->nvmlDeviceRegisterEvents;
}

static int copy_filter(gv_gpu_health_t *h, const gv_xid_filter_t *filter)
{
        if (!filter)
                return 0;
        h->filter.ignore_all = filter->ignore_all;
        if (filter->n_ignored && filter->ignored) {
                h->owned_ignored = calloc(filter->n_ignored, sizeof(*h->owned_ignored));
                if (!h->owned_ignored)
                        return -ENOMEM;
                memcpy(h->owned_ignored, filter->ignored, filter->n_ignored * sizeof(*h->owned_ignored));
                h->filter.ignored = h->owned_ignored;
                h->filter.n_ignored = filter->n_ignored;
        }
        return 0;
}

int gv_gpu_health_open(const char *lib, const gv_xid_filter_t *filter, gv_gpu_health_t **out, gv_error_t **err)
{
        _cleanup_(gv_gpu_health_close) gv_gpu_health_t *h = calloc(1, sizeof(*h));
        if (!h || copy_filter(h, filter) < 0)
                return gv_error_oom(err);
        const char *candidates[] = { lib, NULL };
        int r = gv_nvml_open(candidates, &h->nvml, err);
        if (r < 0)
                return r;
        nvmlReturn_t ret = h->nvml->nvmlInit_v2();
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, h->nvml, ret, "nvmlInit_v2");
        h->initialised = true;
        unsigned count = 0;
        ret = h->nvml->nvmlDeviceGetCount_v2(&count);
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, h->nvml, ret, "nvmlDeviceGetCount_v2");
        if (count > 4096)
                return gv_error_set(err, ERANGE, GV_REASON_NVML, "NVML reports an implausible %u GPUs", count);
        h->n = count;
        h->notes = calloc(count ? count : 1, sizeof(*h->notes));
        h->handles = calloc(count ? count : 1, sizeof(nvmlDevice_t));
        if (!h->notes || !h->handles)
                return gv_error_oom(err);
        if (have_events(h->nvml) && h->nvml->nvmlEventSetCreate(&h->set) != NVML_SUCCESS)
                h->set = NULL;
        for (unsigned i = 0; i < count; i++) {
                read_identity(h, i);
                register_xids(h, i);
        }
        if (h->set && !h->n_events) {
                (void) h->nvml->nvmlEventSetFree(h->set);
                h->set = NULL;
        }
        *out = TAKE_PTR(h);
        return 0;
}

/* The note index of the GPU an event names (its handle as read at open); -1 when none matches. */
static long gpu_of(const gv_gpu_health_t *h, nvmlDevice_t dev)
{
        for (size_t i = 0; i < h->n; i++)
                if (h->handles[i] && h->handles[i] == dev)
                        return (long) i;
        return -1;
}

/* Take the pending events: record each critical Xid on its GPU. */
static void take_events(gv_gpu_health_t *h, gv_gpu_probe_t *out)
{
        for (unsigned k = 0; h->set && k < MAX_EVENTS_PER_PROBE; k++) {
                nvmlEventData_t e;
                memset(&e, 0, sizeof(e));
                nvmlReturn_t ret = h->nvml->nvmlEventSetWait_v2(h->set, &e, 0);
                if (ret == NVML_ERROR_TIMEOUT)
                        return;
                if (ret != NVML_SUCCESS) {
                        /* GPU_IS_LOST here: the per-GPU probe that follows finds which GPU */
                        out->wait_error = ret;
                        return;
                }
                long g = gpu_of(h, e.device);
                if (e.eventType != nvmlEventTypeXidCriticalError || g < 0 || !gv_xid_is_critical(&h->filter, e.eventData)) {
                        out->n_skipped++;
                        continue;
                }
                h->notes[g].xid = e.eventData;
                out->n_xids++;
                if (out->xid_gpu < 0) {
                        out->xid_gpu = g;
                        out->xid = e.eventData;
                }
        }
}

/* NVML_ERROR_GPU_IS_LOST from GPU @i's cheap queries: the call that said so, or NULL while it answers. */
static const char *probe_gpu(const gv_gpu_health_t *h, unsigned i)
{
        nvmlDevice_t dev = NULL;
        nvmlReturn_t ret = h->nvml->nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (ret == NVML_ERROR_GPU_IS_LOST)
                return "nvmlDeviceGetHandleByIndex_v2";
        if (ret != NVML_SUCCESS || !dev)
                return NULL;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        if (h->nvml->nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)) == NVML_ERROR_GPU_IS_LOST)
                return "nvmlDeviceGetUUID";
        return NULL;
}

void gv_gpu_health_probe(gv_gpu_health_t *h, gv_gpu_probe_t *out)
{
        *out = (gv_gpu_probe_t) { .lost = -1, .xid_gpu = -1, .wait_error = NVML_SUCCESS };
        if (!h)
                return;
        take_events(h, out);
        for (size_t i = 0; i < h->n; i++) {
                gv_gpu_note_t *g = &h->notes[i];
                const char *call = probe_gpu(h, (unsigned) i);
                if ((call != NULL) != g->lost)
                        out->lost_changed = true;
                if (!call && g->lost)
                        g->xid = 0; /* it answers again: what it reported belongs to the loss */
                g->lost = call != NULL;
                g->lost_call = call;
                if (call && out->lost < 0)
                        out->lost = (long) i;
        }
}

const gv_gpu_note_t *gv_gpu_health_notes(const gv_gpu_health_t *h, size_t *n)
{
        *n = h ? h->n : 0;
        return h ? h->notes : NULL;
}

size_t gv_gpu_health_events(const gv_gpu_health_t *h)
{
        return h ? h->n_events : 0;
}

const char *gv_gpu_health_lib(const gv_gpu_health_t *h)
{
        return h && h->nvml ? h->nvml->path : NULL;
}

void gv_gpu_health_close(gv_gpu_health_t **hp)
{
        gv_gpu_health_t *h = hp ? *hp : NULL;
        if (!h)
                return;
        if (h->set)
                (void) h->nvml->nvmlEventSetFree(h->set);
        if (h->initialised)
                (void) h->nvml->nvmlShutdown();
        gv_nvml_close(&h->nvml);
        free(h->notes);
        free(h->handles);
        free(h->owned_ignored);
        free(h);
        *hp = NULL;
}
