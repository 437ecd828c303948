/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bench of the mock libnvidia-ml.so.1, per call: every nvmlDeviceGet* query
 * of mock/nvml/nvml-api.txt whose arguments are the device handle, plain
 * values and pointers (the same zeroed-argument calls as
 * tests/unit/mock-nvml/test-exports.c, so each one is safe under ASan) is
 * called on every GPU handle and, with MIG on, on every MIG device handle,
 * @rounds times after one uncounted warm-up round.  Prints the init time, the mean time per call over all
 * calls, the five slowest queries (their fastest round) and the peak RSS (getrusage).  Asserts
 * nothing.  The layout comes from the environment as for any client
 * (MOCK_NVML_NUM_DEVICES, MOCK_NVML_CONFIG); tools/bench.sh runs it on 64
 * GPUs and on bench/nvml/a100-64x7-mig.yaml (64 GPUs x 7 MIG devices).
 *
 * Usage: bench-mock-nvml-sweep <libnvidia-ml.so.1> <nvml-api.txt> [rounds]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "abi/nvml/nvml-abi.h"

#define MAX_FN 1024
#define MAX_ARGS 6
#define BUF_BYTES 65536 /* as test-exports.c: larger than any NVML struct or list with zero counts */

typedef struct query {
        char name[96];
        char kinds[MAX_ARGS + 1];
        void *sym;
        double seconds; /* summed over every call */
        double best;    /* the fastest round's time a call: robust to preemption on a shared machine */
        unsigned long calls, ok;
} query_t;

typedef nvmlReturn_t (*fn1)(uintptr_t);
typedef nvmlReturn_t (*fn2)(uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn3)(uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn4)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn5)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn6)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

static double now_s(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* Whether the query takes a device first and then only values and pointers. */
static int device_only(const char *name, const char *kinds)
{
        if (strncmp(name, "nvmlDeviceGet", 13) != 0 || kinds[0] != 'd')
                return 0;
        return strspn(kinds + 1, "ilpo") == strlen(kinds + 1);
}

/* Reads the device-handle queries of @path that @dl exports into @q; returns how many. */
static size_t load(const char *path, void *dl, query_t *q)
{
        FILE *t = fopen(path, "r");
        if (!t) {
                perror(path);
                return 0;
        }
        char line[512];
        size_t n = 0;
        while (fgets(line, sizeof(line), t) && n < MAX_FN) {
                query_t *f = &q[n];
                memset(f, 0, sizeof(*f));
                if (line[0] == '#' || sscanf(line, "%95s %6s", f->name, f->kinds) != 2)
                        continue;
                if (!device_only(f->name, f->kinds) || !(f->sym = dlsym(dl, f->name)))
                        continue;
                n++;
        }
        fclose(t);
        return n;
}

/* One call of @f on @dev with zeroed buffers in @bufs (a count before a pointer: 256). */
static nvmlReturn_t call(const query_t *f, nvmlDevice_t dev, void *const *bufs)
{
        uintptr_t v[MAX_ARGS] = { 0 };
        size_t k = strlen(f->kinds);
        for (size_t i = 0; i < k; i++) {
                switch (f->kinds[i]) {
                case 'd': v[i] = (uintptr_t) dev; break;
                case 'i': v[i] = i > 0 && f->kinds[i - 1] == 'p' ? 256 : 0; break;
                case 'l': v[i] = 0; break;
                default: memset(bufs[i], 0, 64); v[i] = (uintptr_t) bufs[i]; break;
                }
        }
        void *s = f->sym;
        switch (k) {
        case 1: return ((fn1) s)(v[0]);
        case 2: return ((fn2) s)(v[0], v[1]);
        case 3: return ((fn3) s)(v[0], v[1], v[2]);
        case 4: return ((fn4) s)(v[0], v[1], v[2], v[3]);
        case 5: return ((fn5) s)(v[0], v[1], v[2], v[3], v[4]);
        default: return ((fn6) s)(v[0], v[1], v[2], v[3], v[4], v[5]);
        }
}

static void reset(query_t *q, size_t n)
{
        for (size_t i = 0; i < n; i++)
                q[i].seconds = q[i].best = 0, q[i].calls = q[i].ok = 0;
}

static int slower(const void *a, const void *b)
{
        const query_t *x = a, *y = b;
        return (x->best < y->best) - (x->best > y->best);
}

/* Every query on every handle of @devs, timed per query. */
static void sweep(query_t *q, size_t n, const nvmlDevice_t *devs, size_t n_devs, void *const *bufs)
{
        for (size_t i = 0; i < n; i++) {
                double t0 = now_s();
                unsigned long ok = 0;
                for (size_t d = 0; d < n_devs; d++)
                        ok += call(&q[i], devs[d], bufs) == NVML_SUCCESS;
                double dt = now_s() - t0;
                q[i].seconds += dt;
                if (q[i].best == 0 || dt / (double) n_devs < q[i].best)
                        q[i].best = dt / (double) n_devs;
                q[i].calls += n_devs;
                q[i].ok += ok;
        }
}

/* The MIG device handles of the @n_gpus GPUs in @devs into @migs (room for 8 a GPU); returns how many. */
static size_t collect_mig(const nvmlDevice_t *devs, size_t n_gpus, nvmlDeviceGetMaxMigDeviceCount_fn max_mig,
                          nvmlDeviceGetMigDeviceHandleByIndex_fn mig_by_index, nvmlDevice_t *migs)
{
        size_t n = 0;
        for (size_t g = 0; g < n_gpus; g++) {
                unsigned max = 0;
                if (max_mig(devs[g], &max) != NVML_SUCCESS)
                        continue;
                for (unsigned k = 0; k < max && k < 8; k++)
                        if (mig_by_index(devs[g], k, &migs[n]) == NVML_SUCCESS)
                                n++;
        }
        return n;
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: %s <libnvidia-ml.so.1> <nvml-api.txt> [rounds]\n", argv[0]);
                return 2;
        }
        int rounds = argc > 3 ? atoi(argv[3]) : 20;
        if (rounds < 1)
                rounds = 1;
        void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
                return 1;
        }
        static query_t q[MAX_FN];
        size_t n = load(argv[2], dl, q);
        nvmlInit_v2_fn init = (nvmlInit_v2_fn) dlsym(dl, "nvmlInit_v2");
        nvmlShutdown_fn shutdown = (nvmlShutdown_fn) dlsym(dl, "nvmlShutdown");
        nvmlDeviceGetCount_v2_fn count = (nvmlDeviceGetCount_v2_fn) dlsym(dl, "nvmlDeviceGetCount_v2");
        nvmlDeviceGetHandleByIndex_v2_fn by_index =
                (nvmlDeviceGetHandleByIndex_v2_fn) dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
        nvmlDeviceGetMaxMigDeviceCount_fn max_mig =
                (nvmlDeviceGetMaxMigDeviceCount_fn) dlsym(dl, "nvmlDeviceGetMaxMigDeviceCount");
        nvmlDeviceGetMigDeviceHandleByIndex_fn mig_by_index =
                (nvmlDeviceGetMigDeviceHandleByIndex_fn) dlsym(dl, "nvmlDeviceGetMigDeviceHandleByIndex");
        if (!n || !init || !shutdown || !count || !by_index || !max_mig || !mig_by_index) {
                fprintf(stderr, "%s: no queries or missing symbols\n", argv[1]);
                return 1;
        }
        double t0 = now_s();
        if (init() != NVML_SUCCESS) {
                fprintf(stderr, "nvmlInit_v2 failed\n");
                return 1;
        }
        double init_s = now_s() - t0;
        unsigned gpus = 0;
        count(&gpus);
        nvmlDevice_t *devs = calloc((size_t) gpus * 9 + 1, sizeof(*devs));
        size_t n_gpus = 0, n_mig = 0;
        for (unsigned i = 0; devs && i < gpus; i++)
                if (by_index(i, &devs[n_gpus]) == NVML_SUCCESS)
                        n_gpus++;
        nvmlDevice_t *migs = devs + n_gpus;
        if (devs)
                n_mig = collect_mig(devs, n_gpus, max_mig, mig_by_index, migs);
        void *bufs[MAX_ARGS];
        for (size_t i = 0; i < MAX_ARGS; i++)
                bufs[i] = calloc(1, BUF_BYTES);
        if (!devs || !bufs[MAX_ARGS - 1]) {
                fprintf(stderr, "out of memory\n");
                return 1;
        }
        sweep(q, n, devs, n_gpus, bufs); /* warm-up round (first-touch page faults), not counted */
        reset(q, n);
        double ts = now_s();
        for (int r = 0; r < rounds; r++)
                sweep(q, n, devs, n_gpus, bufs);
        double gpu_s = now_s() - ts;
        unsigned long gpu_calls = 0, gpu_ok = 0;
        for (size_t i = 0; i < n; i++) {
                gpu_calls += q[i].calls;
                gpu_ok += q[i].ok;
        }
        printf("mock-nvml sweep: %zu device queries, %zu GPUs, %zu MIG devices, init %.3f ms\n", n, n_gpus, n_mig,
               init_s * 1e3);
        printf("  GPU handles: %lu calls (%lu SUCCESS), %.3f us a call, %.2f ms a sweep of every query on every GPU\n",
               gpu_calls, gpu_ok, gpu_s * 1e6 / (double) gpu_calls, gpu_s * 1e3 / rounds);
        if (n_mig) {
                sweep(q, n, migs, n_mig, bufs);
                reset(q, n);
                ts = now_s();
                for (int r = 0; r < rounds; r++)
                        sweep(q, n, migs, n_mig, bufs);
                double mig_s = now_s() - ts;
                unsigned long mig_calls = 0, mig_ok = 0;
                for (size_t i = 0; i < n; i++) {
                        mig_calls += q[i].calls;
                        mig_ok += q[i].ok;
                }
                printf("  MIG handles: %lu calls (%lu SUCCESS), %.3f us a call, %.2f ms a sweep on every MIG device\n",
                       mig_calls, mig_ok, mig_s * 1e6 / (double) mig_calls, mig_s * 1e3 / rounds);
        }
        qsort(q, n, sizeof(*q), slower);
        printf("  slowest (%s handles, best round):", n_mig ? "MIG" : "GPU");
        for (size_t i = 0; i < 5 && i < n; i++)
                printf(" %s %.2f us%s", q[i].name + 13, q[i].best * 1e6, i < 4 ? "," : "\n");
        shutdown();
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("  peak RSS %ld KiB (%d rounds)\n", ru.ru_maxrss, rounds);
        for (size_t i = 0; i < MAX_ARGS; i++)
                free(bufs[i]);
        free(devs);
        dlclose(dl);
        return 0;
}
