/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bench of the mock libnvidia-ml.so.1: dlopen + nvmlInit_v2 + enumerate the
 * GPUs (name, UUID, PCI info, memory) + nvmlShutdown, repeated; prints the
 * time per round and the peak RSS (getrusage).  Asserts nothing.
 * Usage: bench-mock-nvml [path to libnvidia-ml.so.1] [rounds]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "abi/nvml/nvml-abi.h"

static double now_s(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        const char *lib = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
        int rounds = argc > 2 ? atoi(argv[2]) : 200;
        if (rounds < 1)
                rounds = 1;
        double t0 = now_s(), first = 0;
        unsigned gpus = 0;
        for (int r = 0; r < rounds; r++) {
                double ts = now_s();
                void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
                if (!h) {
                        fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
                        return 1;
                }
                nvmlInit_v2_fn init = (nvmlInit_v2_fn) dlsym(h, "nvmlInit_v2");
                nvmlShutdown_fn shutdown = (nvmlShutdown_fn) dlsym(h, "nvmlShutdown");
                nvmlDeviceGetCount_v2_fn count = (nvmlDeviceGetCount_v2_fn) dlsym(h, "nvmlDeviceGetCount_v2");
                nvmlDeviceGetHandleByIndex_v2_fn by_index =
                        (nvmlDeviceGetHandleByIndex_v2_fn) dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
                nvmlDeviceGetName_fn name = (nvmlDeviceGetName_fn) dlsym(h, "nvmlDeviceGetName");
                nvmlDeviceGetUUID_fn uuid = (nvmlDeviceGetUUID_fn) dlsym(h, "nvmlDeviceGetUUID");
                nvmlDeviceGetPciInfo_v3_fn pci = (nvmlDeviceGetPciInfo_v3_fn) dlsym(h, "nvmlDeviceGetPciInfo_v3");
                nvmlDeviceGetMemoryInfo_fn mem = (nvmlDeviceGetMemoryInfo_fn) dlsym(h, "nvmlDeviceGetMemoryInfo");
                if (!init || !shutdown || !count || !by_index || !name || !uuid || !pci || !mem) {
                        fprintf(stderr, "%s: missing symbols\n", lib);
                        return 1;
                }
                if (init() != NVML_SUCCESS) {
                        fprintf(stderr, "nvmlInit_v2 failed\n");
                        return 1;
                }
                count(&gpus);
                for (unsigned i = 0; i < gpus; i++) {
                        nvmlDevice_t d;
                        char n[NVML_DEVICE_NAME_V2_BUFFER_SIZE], u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
                        nvmlPciInfo_t p;
                        nvmlMemory_t m;
                        if (by_index(i, &d) != NVML_SUCCESS || name(d, n, sizeof(n)) != NVML_SUCCESS ||
                            uuid(d, u, sizeof(u)) != NVML_SUCCESS || pci(d, &p) != NVML_SUCCESS ||
                            mem(d, &m) != NVML_SUCCESS) {
                                fprintf(stderr, "GPU %u: query failed\n", i);
                                return 1;
                        }
                }
                shutdown();
                dlclose(h);
                if (r == 0)
                        first = now_s() - ts;
        }
        double total = now_s() - t0;
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("mock-nvml: %u GPUs, first round %.3f ms, mean %.3f ms over %d rounds, peak RSS %ld KiB\n", gpus,
               first * 1e3, total * 1e3 / rounds, rounds, ru.ru_maxrss);
        return 0;
}
