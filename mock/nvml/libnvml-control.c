/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: runtime control.  `gpu-validator mock set`
 * replaces the state file (mock-state.h) atomically; entry points look at
 * it with one stat() at most every GV_MOCK_CONTROL_CHECK_NS (1 ms;
 * mn_control_refresh() from BEGIN / mn_enter_device) and, when its identity (device, inode, size, mtime, ctime) changed, reads it,
 * puts the profile's values back and applies the new overlay.  No thread, no
 * watch descriptor: nothing outlives nvmlShutdown.  State, handles and
 * helpers: libnvml-internal.h.
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

#define C (S.ctl)

char *mn_control_beside(const char *profile_source, const char *name)
{
        if (!profile_source || strncmp(profile_source, "builtin:", 8) == 0)
                return NULL;
        const char *slash = strrchr(profile_source, '/');
        char *path = NULL;
        if (slash) {
                if (asprintf(&path, "%.*s/%s", (int) (slash - profile_source), profile_source, name) < 0)
                        return NULL;
                return path;
        }
        return strdup(name);
}

const gv_mock_gpu_state_t *mn_control_gpu(unsigned g)
{
        static const gv_mock_gpu_state_t none; /* read-only: the answer when nothing is set */
        if (!C.state || g >= GV_MOCK_MAX_GPUS || g >= S.profile->device_count)
                return &none;
        return &C.state->gpus[S.host_index[g]]; /* the state file counts the node's GPUs */
}

/* Every GPU back to the profile's values; the overlay's process lists freed. */
static void restore(void)
{
        for (unsigned i = 0; i < S.profile->device_count && i < GV_MOCK_MAX_GPUS; i++) {
                gv_mock_device_t *d = &S.profile->devices[i];
                const struct mock_control_base *b = &C.base[i];
                d->temperature_c = b->temperature_c;
                d->power_usage_mw = b->power_usage_mw;
                d->utilization_gpu = b->utilization_gpu;
                d->utilization_memory = b->utilization_memory;
                d->clock_graphics_mhz = b->clock_graphics_mhz;
                d->clock_sm_mhz = b->clock_sm_mhz;
                d->memory_used_mib = b->memory_used_mib;
                d->nvlink_active = b->nvlink_active;
                d->n_processes = b->n_processes;
                d->processes = b->processes;
                free(C.processes[i]);
                C.processes[i] = NULL;
        }
        S.lost = C.base_lost;
}

/*
 * GPU @d's memory.used as processes come and go: @gone MiB of cleared processes freed,
 * @added MiB of added ones taken (never past what the GPU has), as a real process's
 * allocations show in the device's used memory.
 */
static void account_memory(gv_mock_device_t *d, unsigned long long gone, unsigned long long added)
{
        unsigned long long room = d->memory_total_mib > d->memory_reserved_mib ?
                                          d->memory_total_mib - d->memory_reserved_mib :
                                          0;
        unsigned long long used = d->memory_used_mib > gone ? d->memory_used_mib - gone : 0;
        if (used > room)
                used = room;
        d->memory_used_mib = added < room - used ? used + added : room;
}

/* The process list of GPU @d under @g: the profile's (unless cleared) and the added ones. */
static void apply_processes(unsigned i, gv_mock_device_t *d, const gv_mock_gpu_state_t *g)
{
        bool clear = g->set & GV_MOCK_SET_PROCESSES_CLEAR;
        if (!clear && !g->n_processes)
                return;
        unsigned long long gone = 0, added = 0;
        for (size_t k = 0; clear && k < d->n_processes; k++)
                gone += d->processes[k].used_memory_mib;
        for (unsigned k = 0; k < g->n_processes; k++)
                added += g->processes[k].used_memory_mib;
        account_memory(d, gone, added);
        size_t keep = clear ? 0 : d->n_processes;
        size_t n = keep + g->n_processes;
        if (!n) {
                d->processes = NULL;
                d->n_processes = 0;
                return;
        }
        gv_mock_process_t *list = calloc(n, sizeof(*list));
        if (!list) {
                mn_debug("runtime state: out of memory for the processes of GPU %u", i);
                return;
        }
        if (keep)
                memcpy(list, d->processes, keep * sizeof(*list));
        for (unsigned k = 0; k < g->n_processes; k++) {
                const gv_mock_state_process_t *p = &g->processes[k];
                list[keep + k] = (gv_mock_process_t){ .pid = p->pid, .name = p->name[0] ? (char *) p->name : NULL,
                                                      .used_memory_mib = p->used_memory_mib, .gi_id = NO_ID,
                                                      .ci_id = NO_ID };
        }
        C.processes[i] = list;
        d->processes = list;
        d->n_processes = n;
}

static void apply(void)
{
        for (unsigned i = 0; i < S.profile->device_count && i < GV_MOCK_MAX_GPUS; i++) {
                gv_mock_device_t *d = &S.profile->devices[i];
                const gv_mock_gpu_state_t *g = &C.state->gpus[S.host_index[i]];
                if (g->set & GV_MOCK_SET_TEMPERATURE)
                        d->temperature_c = g->temperature_c;
                if (g->set & GV_MOCK_SET_POWER_USAGE)
                        d->power_usage_mw = g->power_usage_mw;
                if (g->set & GV_MOCK_SET_UTIL_GPU)
                        d->utilization_gpu = g->utilization_gpu;
                if (g->set & GV_MOCK_SET_UTIL_MEMORY)
                        d->utilization_memory = g->utilization_memory;
                if (g->set & GV_MOCK_SET_CLOCK_GRAPHICS)
                        d->clock_graphics_mhz = g->clock_graphics_mhz;
                if (g->set & GV_MOCK_SET_CLOCK_SM)
                        d->clock_sm_mhz = g->clock_sm_mhz;
                if (g->set & GV_MOCK_SET_MEMORY_USED) { /* never past what the GPU has */
                        unsigned long long room = d->memory_total_mib - d->memory_reserved_mib;
                        d->memory_used_mib = g->memory_used_mib < room ? g->memory_used_mib : room;
                }
                if (g->set & GV_MOCK_SET_NVLINK)
                        d->nvlink_active = !g->nvlink_down;
                if ((g->set & GV_MOCK_SET_LOST) && g->lost)
                        S.lost |= 1ULL << i;
                apply_processes(i, d, g);
        }
}

/* Reads the open state file @fd (@st its fstat) into a new state, or NULL (logged). */
static gv_mock_state_t *read_state(int fd, const struct stat *st)
{
        if (st->st_size < 0 || (unsigned long long) st->st_size > (unsigned long long) GV_MOCK_STATE_MAX_BYTES) {
                mn_debug("%s: larger than %zu bytes; ignored", C.path, GV_MOCK_STATE_MAX_BYTES);
                return NULL;
        }
        size_t want = (size_t) st->st_size;
        _cleanup_free_ char *text = malloc(want + 1);
        if (!text)
                return NULL;
        size_t got = 0;
        while (got < want) {
                ssize_t n = read(fd, text + got, want - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_state_t *s = NULL;
        if (gv_mock_state_parse(C.path, text, got, &s, &err) < 0) {
                mn_debug("%s; the runtime state stays as it was", err && err->msg ? err->msg : "runtime state: error");
                return NULL;
        }
        return s;
}

static bool same_file(const struct stat *st)
{
        return C.seen && st->st_dev == C.dev && st->st_ino == C.ino && st->st_size == C.size &&
               st->st_mtim.tv_sec == C.mtime.tv_sec && st->st_mtim.tv_nsec == C.mtime.tv_nsec &&
               st->st_ctim.tv_sec == C.ctime.tv_sec && st->st_ctim.tv_nsec == C.ctime.tv_nsec;
}

void mn_control_refresh(void)
{
        if (!C.path)
                return;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ns = (long long) (now.tv_sec - C.checked_at.tv_sec) * 1000000000LL +
                       (now.tv_nsec - C.checked_at.tv_nsec);
        if (C.checked && ns >= 0 && ns < GV_MOCK_CONTROL_CHECK_NS)
                return;
        C.checked = true;
        C.checked_at = now;
        struct stat st;
        if (stat(C.path, &st) < 0) {
                if (!C.seen)
                        return;
                /* Removed (`mock set --clear`): back to the profile. */
                C.seen = false;
                restore();
                free(C.state);
                C.state = NULL;
                mn_debug("%s: removed; back to the profile's values", C.path);
                return;
        }
        if (same_file(&st))
                return;
        _cleanup_close_ int fd = open(C.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return;
        C.seen = true;
        C.dev = st.st_dev;
        C.ino = st.st_ino;
        C.size = st.st_size;
        C.mtime = st.st_mtim;
        C.ctime = st.st_ctim;
        gv_mock_state_t *next = read_state(fd, &st);
        if (!next)
                return;
        restore();
        free(C.state);
        C.state = next;
        apply();
        mn_debug("%s: runtime state applied", C.path);
}

void mn_control_open(void)
{
        const char *env = getenv("MOCK_NVML_STATE_FILE");
        C.path = env && *env ? strdup(env) : mn_control_beside(S.profile->source, GV_MOCK_ROOT_STATE_NAME);
        C.seen = false;
        C.checked = false;
        C.state = NULL;
        C.base_lost = S.lost;
        for (unsigned i = 0; i < S.profile->device_count && i < GV_MOCK_MAX_GPUS; i++) {
                const gv_mock_device_t *d = &S.profile->devices[i];
                C.base[i] = (struct mock_control_base){
                        .temperature_c = d->temperature_c,
                        .power_usage_mw = d->power_usage_mw,
                        .utilization_gpu = d->utilization_gpu,
                        .utilization_memory = d->utilization_memory,
                        .clock_graphics_mhz = d->clock_graphics_mhz,
                        .clock_sm_mhz = d->clock_sm_mhz,
                        .memory_used_mib = d->memory_used_mib,
                        .nvlink_active = d->nvlink_active,
                        .n_processes = d->n_processes,
                        .processes = d->processes,
                };
                C.processes[i] = NULL;
        }
        mn_control_refresh();
}

void mn_control_close(void)
{
        if (S.profile)
                restore();
        free(C.state);
        C.state = NULL;
        free(C.path);
        C.path = NULL;
        C.seen = false;
        C.checked = false;
}
