/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: every entry point of GV_NVML_FUNCTIONS
 * (abi/nvml/nvml-abi.h) answered from a GPU profile (mock/nvml/profile.h).
 *
 * Semantics follow shared/reference/nvml-abi.md: reference-counted init,
 * UNINITIALIZED before init, INVALID_ARGUMENT for NULL out-pointers and bad
 * handles, INSUFFICIENT_SIZE for small buffers, NOT_FOUND for empty MIG slots.
 * Profile selection, faults and the Xid control file: docs/mock-nvml.md.
 *
 * This file holds the state, the locking and handle helpers and the
 * generated NOT_SUPPORTED stubs; each NVML API area has its own file
 * (the list: libnvml-internal.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock/nvml/libnvml-internal.h"

struct mock_state mn_state = { .lock = PTHREAD_MUTEX_INITIALIZER, .fabric_override = -1 };

/* ------------------------------------------------------------------ */
/* helpers                                                             */

nvmlReturn_t mn_leave(nvmlReturn_t r)
{
        pthread_mutex_unlock(&S.lock);
        return r;
}

static bool debug_on(void)
{
        const char *d = getenv("MOCK_NVML_DEBUG");
        return d && *d && strcmp(d, "0") != 0;
}

__attribute__((format(printf, 1, 2))) void mn_debug(const char *fmt, ...)
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

long mn_slot_of(const void *p, const void *base, size_t n, size_t size)
{
        uintptr_t a = (uintptr_t) p, b = (uintptr_t) base;
        if (a < b || a >= b + n * size || (a - b) % size)
                return -1;
        return (long) ((a - b) / size);
}

gv_mock_device_t *mn_gpu_at(unsigned i)
{
        return i < S.profile->device_count ? &S.profile->devices[i] : NULL;
}

bool mn_mig_on(const gv_mock_device_t *d)
{
        return d->mig_capable && d->mig_mode_current == NVML_DEVICE_MIG_ENABLE;
}

nvmlReturn_t mn_resolve(nvmlDevice_t h, unsigned *gpu, int *mig)
{
        long s = mn_slot_of(h, S.gpus, MAXG, sizeof(S.gpus[0]));
        if (s >= 0) {
                *gpu = (unsigned) s;
                *mig = -1;
        } else {
                s = mn_slot_of(h, S.migs, (size_t) MAXG * MAXM, sizeof(S.migs[0][0]));
                if (s < 0)
                        return NVML_ERROR_INVALID_ARGUMENT;
                *gpu = (unsigned) (s / MAXM);
                *mig = (int) (s % MAXM);
        }
        gv_mock_device_t *d = mn_gpu_at(*gpu);
        if (!d)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (*mig >= 0 && (!mn_mig_on(d) || (size_t) *mig >= d->n_mig_devices))
                return NVML_ERROR_INVALID_ARGUMENT;
        if (S.lost & (1ULL << *gpu))
                return NVML_ERROR_GPU_IS_LOST;
        return NVML_SUCCESS;
}

/* For queries only a physical GPU handle answers. */
nvmlReturn_t mn_resolve_physical(nvmlDevice_t h, gv_mock_device_t **d, unsigned *gpu)
{
        unsigned g;
        int m;
        nvmlReturn_t r = mn_resolve(h, &g, &m);
        if (r != NVML_SUCCESS)
                return r;
        if (m >= 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        *d = mn_gpu_at(g);
        if (gpu)
                *gpu = g;
        return NVML_SUCCESS;
}

bool mn_unsup(const gv_mock_device_t *d, uint32_t bit)
{
        return (d->unsupported & bit) != 0;
}

nvmlReturn_t mn_enter_device(nvmlDevice_t h, enum handle_kind kind, const void *out, uint32_t bit,
                                 gv_mock_device_t **d, unsigned *gpu, int *mig)
{
        pthread_mutex_lock(&S.lock);
        if (!S.refcount)
                return mn_leave(NVML_ERROR_UNINITIALIZED);
        mn_control_refresh();
        nvmlReturn_t r = mn_resolve(h, gpu, mig);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        if (kind == GPU_HANDLE && *mig >= 0)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!out)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *d = mn_gpu_at(*gpu);
        if (bit && mn_unsup(*d, bit))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        return NVML_SUCCESS;
}

nvmlReturn_t mn_copy_str(char *buf, unsigned length, const char *s)
{
        if (!buf)
                return NVML_ERROR_INVALID_ARGUMENT;
        size_t n = strlen(s) + 1;
        if (n > length)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(buf, s, n);
        return NVML_SUCCESS;
}

const gv_mock_mig_profile_t *mn_mig_profile_of(const gv_mock_device_t *d, const gv_mock_mig_device_t *m)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (strcmp(d->mig_profiles[i].name, m->profile) == 0)
                        return &d->mig_profiles[i];
        return NULL;
}

long mn_ms_since(const struct timespec *t0)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long) (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* ------------------------------------------------------------------ */
/* generated stubs: every other function of nvml-api.txt               */

#define STUB_BEGIN() BEGIN()
#define STUB_DEVICE(h)                                                        \
        do {                                                                  \
                unsigned stub_g_;                                             \
                int stub_m_;                                                  \
                nvmlReturn_t stub_r_ = mn_resolve((h), &stub_g_, &stub_m_);   \
                if (stub_r_ != NVML_SUCCESS)                                  \
                        return mn_leave(stub_r_);                             \
        } while (0)
#define STUB_INSTANCE(h, base)                                                          \
        do {                                                                            \
                gv_mock_device_t *stub_d_;                                              \
                unsigned stub_g_;                                                       \
                int stub_s_;                                                            \
                nvmlReturn_t stub_r_ = mn_resolve_instance((h), (base), &stub_d_, &stub_g_, &stub_s_); \
                if (stub_r_ != NVML_SUCCESS)                                            \
                        return mn_leave(stub_r_);                                       \
        } while (0)
#define STUB_GPU_INSTANCE(h) STUB_INSTANCE(h, S.gis)
#define STUB_COMPUTE_INSTANCE(h) STUB_INSTANCE(h, S.cis)
#define STUB_EVENT_SET(h)                                                     \
        do {                                                                  \
                if (!event_set_known(h))                                      \
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);         \
        } while (0)
#define STUB_POINTER(p)                                                       \
        do {                                                                  \
                if (!(p))                                                     \
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);         \
        } while (0)

__attribute__((unused)) static bool event_set_known(const struct nvmlEventSet_st *set)
{
        for (const struct nvmlEventSet_st *p = S.sets; p; p = p->next)
                if (p == set)
                        return true;
        return false;
}

#include "nvml-stubs.inc"

