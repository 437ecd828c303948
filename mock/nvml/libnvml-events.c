/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: event sets: registered types, scheduled Xids and the Xid control file.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "mock/nvml/libnvml-internal.h"

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
                return mn_leave(NVML_ERROR_MEMORY);
        /* Only lines appended to the control file after this point are delivered. */
        s->ctl_offset = file_size(S.xid_file);
        s->next = S.sets;
        S.sets = s;
        *set = s;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
        DEVICE_QUERY(GPU_HANDLE, device, eventTypes, 0);
        *eventTypes = SUPPORTED_EVENTS;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
        DEVICE_QUERY(GPU_HANDLE, device, set, 0);
        if (!live_set(set))
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (eventTypes & ~(unsigned long long) SUPPORTED_EVENTS)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        set->mask[g] |= eventTypes;
        return mn_leave(NVML_SUCCESS);
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
                mn_debug("%s: ignoring line \"%.*s\" (expected \"<gpu> <xid>\")", S.xid_file, (int) (n - 1), line);
        }
}

static bool next_event(struct nvmlEventSet_st *set, nvmlEventData_t *data)
{
        gv_mock_faults_t *f = &S.profile->faults;
        long now = mn_ms_since(&S.init_time);
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
                unsigned k = 0; /* the file counts the node's GPUs: find the one this process sees */
                while (k < S.profile->device_count && S.host_index[k] != g)
                        k++;
                g = k;
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
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
                if (next_event(set, data))
                        return mn_leave(NVML_SUCCESS);
                pthread_mutex_unlock(&S.lock);
                long left = (long) timeoutms - mn_ms_since(&start);
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
                        return mn_leave(NVML_SUCCESS);
                }
        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlEventSetWait, nvmlEventSetWait_v2)
