// SPDX-License-Identifier: Apache-2.0
/*
 * The mock libcuda.so.1 (mock/cuda): devices from the mock NVML profile,
 * visibility variables, the CPU vector add, refusal of unknown kernels and
 * bad PTX, memory checks, and the CUDA errors of NVML faults.  The library
 * keeps process-wide state from cuInit on, as the real driver does, so each
 * case runs in a forked child that loads it afresh with its own environment.
 * argv[1]: libcuda.so.1, argv[2]: the mock NVML fixture folder.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi/nvml/nvml-abi.h"
#include "mock-cuda-test.h"

static const char *lib_path, *fixtures;

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction;

typedef struct cu {
        void *dl;
        CUresult (*cuInit)(unsigned);
        CUresult (*cuDeviceGetCount)(int *);
        CUresult (*cuDeviceGet)(CUdevice *, int);
        CUresult (*cuDeviceGetName)(char *, int, CUdevice);
        CUresult (*cuDeviceGetUuid)(unsigned char *, CUdevice);
        CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
        CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
        CUresult (*cuDriverGetVersion)(int *);
        CUresult (*cuCtxCreate_v2)(CUcontext *, unsigned, CUdevice);
        CUresult (*cuCtxDestroy_v2)(CUcontext);
        CUresult (*cuCtxSynchronize)(void);
        CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
        CUresult (*cuCtxSetCurrent)(CUcontext);
        CUresult (*cuModuleLoadData)(CUmodule *, const void *);
        CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
        CUresult (*cuModuleUnload)(CUmodule);
        CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
        CUresult (*cuMemFree_v2)(CUdeviceptr);
        CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
        CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
        CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   void *, void **, void **);
        CUresult (*cuGetErrorName)(CUresult, const char **);
} cu_t;

static void load(cu_t *c)
{
        c->dl = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
        CHECK(c->dl != NULL);
#define SYM(name) CHECK((*(void **) &c->name = dlsym(c->dl, #name)) != NULL)
        SYM(cuInit);
        SYM(cuDeviceGetCount);
        SYM(cuDeviceGet);
        SYM(cuDeviceGetName);
        SYM(cuDeviceGetUuid);
        SYM(cuDeviceTotalMem_v2);
        SYM(cuDeviceGetAttribute);
        SYM(cuDriverGetVersion);
        SYM(cuCtxCreate_v2);
        SYM(cuCtxDestroy_v2);
        SYM(cuCtxSynchronize);
        SYM(cuDevicePrimaryCtxRetain);
        SYM(cuCtxSetCurrent);
        SYM(cuModuleLoadData);
        SYM(cuModuleGetFunction);
        SYM(cuModuleUnload);
        SYM(cuMemAlloc_v2);
        SYM(cuMemFree_v2);
        SYM(cuMemcpyHtoD_v2);
        SYM(cuMemcpyDtoH_v2);
        SYM(cuLaunchKernel);
        SYM(cuGetErrorName);
#undef SYM
}

/* Runs @fn in a child with the mock environment @env ("NAME=value" strings, NULL-terminated); asserts it passed. */
static void in_child(void (*fn)(cu_t *), const char *const *env)
{
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                static const char *const clear[] = { "MOCK_NVML_CONFIG", "MOCK_NVML_NUM_DEVICES", "MOCK_NVML_LOST_GPUS",
                                                     "MOCK_NVML_INIT_ERROR", "NVIDIA_VISIBLE_DEVICES",
                                                     "CUDA_VISIBLE_DEVICES" };
                for (size_t i = 0; i < sizeof(clear) / sizeof(clear[0]); i++)
                        unsetenv(clear[i]);
                for (size_t i = 0; env && env[i]; i++)
                        putenv((char *) env[i]);
                cu_t c;
                load(&c);
                fn(&c);
                _exit(0);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* The PTX of gpu-validator cuda-check's kernel, with other parameter names (the mock numbers them). */
static const char vector_add_ptx[] =
        ".version 6.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry gv_vector_add(\n .param .u64 x, .param .u64 y, .param .u64 z, .param .u32 count)\n{\n"
        " .reg .pred %p<2>;\n .reg .f32 %f<4>;\n .reg .b32 %r<6>;\n .reg .b64 %rd<11>;\n"
        " ld.param.u64 %rd1, [x];\n ld.param.u64 %rd2, [y];\n ld.param.u64 %rd3, [z];\n ld.param.u32 %r2, [count];\n"
        " mov.u32 %r3, %ctaid.x;\n mov.u32 %r4, %ntid.x;\n mov.u32 %r5, %tid.x;\n"
        " mad.lo.u32 %r1, %r3, %r4, %r5;\n setp.ge.u32 %p1, %r1, %r2;\n @%p1 bra DONE;\n"
        " cvta.to.global.u64 %rd4, %rd1;\n cvta.to.global.u64 %rd5, %rd2;\n cvta.to.global.u64 %rd6, %rd3;\n"
        " mul.wide.u32 %rd7, %r1, 4;\n add.s64 %rd8, %rd4, %rd7;\n add.s64 %rd9, %rd5, %rd7;\n"
        " add.s64 %rd10, %rd6, %rd7;\n ld.global.f32 %f1, [%rd8];\n ld.global.f32 %f2, [%rd9];\n"
        " add.rn.f32 %f3, %f1, %f2; // the sum\n st.global.f32 [%rd10], %f3;\nDONE:\n ret;\n}\n"
        ".visible .entry other(.param .u64 p)\n{\n .reg .b32 %m;\n activemask.b32 %m;\n ret;\n}\n";

static void devices_match_nvml(cu_t *c)
{
        CHECK_EQ(c->cuDeviceGetCount(&(int){ 0 }), 3); /* before cuInit: CUDA_ERROR_NOT_INITIALIZED */
        int v = 0;
        CHECK_EQ(c->cuDriverGetVersion(&v), 0);
        CHECK_EQ(v, 12040);
        CHECK_EQ(c->cuInit(0), 0);
        int n = 0;
        CHECK_EQ(c->cuDeviceGetCount(&n), 0);
        CHECK_EQ(n, 8); /* the built-in a100-sxm4-40gb: 8 GPUs */
        char name[128];
        CHECK_EQ(c->cuDeviceGetName(name, sizeof(name), 7), 0);
        CHECK(strcmp(name, "NVIDIA A100-SXM4-40GB") == 0);
        CHECK_EQ(c->cuDeviceGetName(name, sizeof(name), 8), 101); /* CUDA_ERROR_INVALID_DEVICE */
        size_t total = 0;
        CHECK_EQ(c->cuDeviceTotalMem_v2(&total, 0), 0);
        CHECK_EQ(total, 40960ULL << 20);
        int a = 0;
        CHECK_EQ(c->cuDeviceGetAttribute(&a, 75, 0), 0); /* compute capability major */
        CHECK_EQ(a, 8);
        CHECK_EQ(c->cuDeviceGetAttribute(&a, 16, 0), 0); /* SMs */
        CHECK_EQ(a, 108);
        CHECK_EQ(c->cuDeviceGetAttribute(&a, 99999, 0), 1);
        /* the UUID is NVML's */
        void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        CHECK(nv != NULL);
        nvmlInit_v2_fn init = (nvmlInit_v2_fn) (uintptr_t) dlsym(nv, "nvmlInit_v2");
        nvmlDeviceGetHandleByIndex_v2_fn by_index = (nvmlDeviceGetHandleByIndex_v2_fn) (uintptr_t) dlsym(nv, "nvmlDeviceGetHandleByIndex_v2");
        nvmlDeviceGetUUID_fn get_uuid = (nvmlDeviceGetUUID_fn) (uintptr_t) dlsym(nv, "nvmlDeviceGetUUID");
        CHECK(init && by_index && get_uuid);
        CHECK_EQ(init(), 0);
        nvmlDevice_t d;
        CHECK_EQ(by_index(3, &d), 0);
        char uuid[96];
        CHECK_EQ(get_uuid(d, uuid, sizeof(uuid)), 0);
        unsigned char u[16];
        CHECK_EQ(c->cuDeviceGetUuid(u, 3), 0);
        char hex[40];
        snprintf(hex, sizeof(hex), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        CHECK(strcmp(uuid + 4, hex) == 0);
}

static void test_devices_match_nvml(void **state)
{
        (void) state;
        in_child(devices_match_nvml, NULL);
}

static void vector_add(cu_t *c)
{
        CHECK_EQ(c->cuInit(0), 0);
        CUcontext ctx;
        CHECK_EQ(c->cuDevicePrimaryCtxRetain(&ctx, 0), 0);
        CHECK_EQ(c->cuCtxSetCurrent(ctx), 0);
        CUmodule m;
        CHECK_EQ(c->cuModuleLoadData(&m, vector_add_ptx), 0);
        CUfunction f, other;
        CHECK_EQ(c->cuModuleGetFunction(&f, m, "gv_vector_add"), 0);
        CHECK_EQ(c->cuModuleGetFunction(&other, m, "other"), 0);
        CHECK_EQ(c->cuModuleGetFunction(&other, m, "missing"), 500); /* CUDA_ERROR_NOT_FOUND */
        enum { N = 1000 };
        float a[N], b[N], out[N];
        for (int i = 0; i < N; i++) {
                a[i] = (float) i;
                b[i] = 0.5f;
                out[i] = -1.0f;
        }
        CUdeviceptr da, db, dc;
        CHECK_EQ(c->cuMemAlloc_v2(&da, sizeof(a)), 0);
        CHECK_EQ(c->cuMemAlloc_v2(&db, sizeof(b)), 0);
        CHECK_EQ(c->cuMemAlloc_v2(&dc, sizeof(out)), 0);
        CHECK_EQ(c->cuMemcpyHtoD_v2(da, a, sizeof(a)), 0);
        CHECK_EQ(c->cuMemcpyHtoD_v2(db, b, sizeof(b)), 0);
        CHECK_EQ(c->cuMemcpyHtoD_v2(dc, out, sizeof(out)), 0);
        CHECK_EQ(c->cuMemcpyHtoD_v2(da, a, sizeof(a) + 4), 1); /* past the allocation */
        unsigned n = N;
        void *params[] = { &da, &db, &dc, &n };
        /* 3 blocks of 256 threads cover 768 elements: the rest stays unwritten, as on a GPU */
        CHECK_EQ(c->cuLaunchKernel(f, 3, 1, 1, 256, 1, 1, 0, NULL, params, NULL), 0);
        CHECK_EQ(c->cuCtxSynchronize(), 0);
        CHECK_EQ(c->cuMemcpyDtoH_v2(out, dc, sizeof(out)), 0);
        CHECK(out[0] == 0.5f && out[767] == 767.5f && out[768] == -1.0f);
        CHECK_EQ(c->cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL), 0);
        CHECK_EQ(c->cuMemcpyDtoH_v2(out, dc, sizeof(out)), 0);
        CHECK(out[999] == 999.5f);
        /* a kernel with an instruction the interpreter does not run fails its launch, never a fake success */
        CHECK_EQ(c->cuLaunchKernel(other, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), 801); /* CUDA_ERROR_NOT_SUPPORTED */
        /* a buffer that is not device memory faults asynchronously: sticky CUDA_ERROR_ILLEGAL_ADDRESS */
        CUdeviceptr bogus = (CUdeviceptr) (uintptr_t) a;
        void *bad[] = { &bogus, &db, &dc, &n };
        CHECK_EQ(c->cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, bad, NULL), 0);
        CHECK_EQ(c->cuCtxSynchronize(), 700);
        CHECK_EQ(c->cuMemcpyDtoH_v2(out, dc, sizeof(out)), 700);
        CHECK_EQ(c->cuMemFree_v2(da), 0);
        CHECK_EQ(c->cuMemFree_v2(da), 1);
        CHECK_EQ(c->cuModuleUnload(m), 0);
        /* a cubin (no PTX to JIT), no .version, an unbalanced body */
        CHECK_EQ(c->cuModuleLoadData(&m, "\x7f" "ELF binary"), 700); /* the context is still poisoned */
        CUcontext fresh;
        CHECK_EQ(c->cuCtxCreate_v2(&fresh, 0, 1), 0);
        CHECK_EQ(c->cuModuleLoadData(&m, "\x7f" "ELF binary"), 209); /* CUDA_ERROR_NO_BINARY_FOR_GPU */
        CHECK_EQ(c->cuModuleLoadData(&m, ".target sm_50\n.entry k()\n{\nret;\n}\n"), 218);
        CHECK_EQ(c->cuModuleLoadData(&m, ".version 6.0\n.target sm_50\n.entry k()\n{\nret;\n"), 218);
        /* memory beyond the GPU's is CUDA_ERROR_OUT_OF_MEMORY */
        CUdeviceptr big;
        CHECK_EQ(c->cuMemAlloc_v2(&big, (size_t) 41000 << 20), 2);
        CHECK_EQ(c->cuCtxDestroy_v2(fresh), 0);
        const char *s = NULL;
        CHECK_EQ(c->cuGetErrorName(801, &s), 0);
        CHECK(strcmp(s, "CUDA_ERROR_NOT_SUPPORTED") == 0);
}

static void test_vector_add_and_refusals(void **state)
{
        (void) state;
        in_child(vector_add, NULL);
}

static int expect_count;

static void count_is(cu_t *c)
{
        CHECK_EQ(c->cuInit(0), 0);
        int n = -1;
        CHECK_EQ(c->cuDeviceGetCount(&n), 0);
        CHECK_EQ(n, expect_count);
}

static void test_visible_devices(void **state)
{
        (void) state;
        const char *const *cases[] = {
                (const char *const[]){ "NVIDIA_VISIBLE_DEVICES=0,3", NULL },
                (const char *const[]){ "NVIDIA_VISIBLE_DEVICES=none", NULL },
                (const char *const[]){ "CUDA_VISIBLE_DEVICES=5,1", NULL },
                (const char *const[]){ "CUDA_VISIBLE_DEVICES=1,99,2", NULL }, /* stops at 99 */
                (const char *const[]){ "NVIDIA_VISIBLE_DEVICES=2,4,6", "CUDA_VISIBLE_DEVICES=2", NULL },
        };
        const int counts[] = { 2, 0, 2, 1, 1 };
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
                expect_count = counts[i];
                in_child(count_is, cases[i]);
        }
}

static void mig_layout(cu_t *c)
{
        CHECK_EQ(c->cuInit(0), 0);
        int n = -1;
        CHECK_EQ(c->cuDeviceGetCount(&n), 0);
        CHECK_EQ(n, expect_count);
        if (n == 0)
                return;
        char name[128];
        CHECK_EQ(c->cuDeviceGetName(name, sizeof(name), n - 1), 0);
        CHECK(strstr(name, "MIG 2g.10gb") != NULL);
        size_t total = 0;
        CHECK_EQ(c->cuDeviceTotalMem_v2(&total, n - 1), 0);
        CHECK_EQ(total, 9856ULL << 20);
}

static void test_mig_devices(void **state)
{
        (void) state;
        char *cfg = NULL;
        assert_true(asprintf(&cfg, "MOCK_NVML_CONFIG=%s/mig-fr14.yaml", fixtures) > 0);
        /* GPU 0 full, GPU 1 MIG without instances, GPU 2 three MIG devices of which CUDA enumerates one */
        expect_count = 2;
        in_child(mig_layout, (const char *const[]){ cfg, NULL });
        expect_count = 1;
        in_child(mig_layout, (const char *const[]){ cfg, "NVIDIA_VISIBLE_DEVICES=2:2", NULL });
        expect_count = 0;
        in_child(mig_layout, (const char *const[]){ cfg, "NVIDIA_VISIBLE_DEVICES=1", NULL });
        free(cfg);
}

static CUresult expect_init;

static void init_fails(cu_t *c)
{
        CHECK_EQ(c->cuInit(0), expect_init);
        CHECK_EQ(c->cuDeviceGetCount(&(int){ 0 }), expect_init); /* every later call repeats it */
}

/*
 * Copy folding (mock/cuda/ptx-fold.c) must not change what a kernel computes: out[i] gets, per
 * thread, tid (a copy of a register written again after the copy), tid + 5 (that register),
 * 7 from a guarded copy taken by every thread, and the low 32 bits of a 64-bit register.
 */
static const char fold_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry fold(.param .u64 out)\n{\n"
        " .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd2, %rd1;\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %r1;\n add.u32 %r1, %r1, 5;\n"
        " setp.ge.u32 %p1, %r1, 0;\n mov.u32 %r3, 1;\n @%p1 mov.u32 %r3, 7;\n"
        " mov.b64 %rd3, 0x0000000900000004;\n cvt.u32.u64 %r4, %rd3;\n mov.u32 %r5, %r4;\n"
        " mul.wide.u32 %rd4, %r2, 16;\n add.s64 %rd5, %rd2, %rd4;\n"
        " st.global.u32 [%rd5], %r2;\n st.global.u32 [%rd5+4], %r1;\n st.global.u32 [%rd5+8], %r3;\n"
        " st.global.u32 [%rd5+12], %r5;\n ret;\n}\n";

static void fold(cu_t *c)
{
        CHECK_EQ(c->cuInit(0), 0);
        CUcontext ctx;
        CHECK_EQ(c->cuCtxCreate_v2(&ctx, 0, 0), 0);
        CUmodule m;
        CUfunction f;
        CHECK_EQ(c->cuModuleLoadData(&m, fold_ptx), 0);
        CHECK_EQ(c->cuModuleGetFunction(&f, m, "fold"), 0);
        CUdeviceptr d;
        unsigned out[64 * 4];
        CHECK_EQ(c->cuMemAlloc_v2(&d, sizeof(out)), 0);
        void *params[] = { &d };
        CHECK_EQ(c->cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL), 0);
        CHECK_EQ(c->cuMemcpyDtoH_v2(out, d, sizeof(out)), 0);
        for (unsigned t = 0; t < 64; t++) {
                CHECK_EQ(out[4 * t], t);
                CHECK_EQ(out[4 * t + 1], t + 5);
                CHECK_EQ(out[4 * t + 2], 7);
                CHECK_EQ(out[4 * t + 3], 4);
        }
}

static void test_copy_folding(void **state)
{
        (void) state;
        in_child(fold, NULL);
}

static void test_faults(void **state)
{
        (void) state;
        expect_init = 999; /* CUDA_ERROR_UNKNOWN after a GPU fell off the bus */
        in_child(init_fails, (const char *const[]){ "MOCK_NVML_LOST_GPUS=2", NULL });
        expect_init = 100; /* CUDA_ERROR_NO_DEVICE */
        in_child(init_fails, (const char *const[]){ "MOCK_NVML_INIT_ERROR=driver-not-loaded", NULL });
        expect_init = 803; /* CUDA_ERROR_SYSTEM_DRIVER_MISMATCH */
        in_child(init_fails, (const char *const[]){ "MOCK_NVML_INIT_ERROR=lib-rm-version-mismatch", NULL });
        /* a lost GPU the container does not see does not matter */
        expect_count = 1;
        in_child(count_is, (const char *const[]){ "MOCK_NVML_LOST_GPUS=2", "NVIDIA_VISIBLE_DEVICES=0", NULL });
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: %s <libcuda.so.1> <mock NVML fixture folder>\n", argv[0]);
                return 2;
        }
        lib_path = argv[1];
        fixtures = argv[2];
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_devices_match_nvml),
                cmocka_unit_test(test_vector_add_and_refusals),
                cmocka_unit_test(test_visible_devices),
                cmocka_unit_test(test_mig_devices),
                cmocka_unit_test(test_faults),
                cmocka_unit_test(test_copy_folding),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
