// SPDX-License-Identifier: Apache-2.0
/*
 * Kernels compiled by NVIDIA's nvcc (from PyPI, tools/nvcc.sh) run on the
 * mock libcuda.so.1: vector add, saxpy, a shared-memory reduction with
 * bar.sync, a tiled matrix multiply and an atomics histogram
 * (kernels/kernels.cu), each loaded as PTX text, as a fatbin with
 * zstd-compressed PTX and as one with plain PTX, each result compared with
 * the same computation in plain C.  Then what a real driver refuses (a
 * fatbin with only SASS, PTX for a newer GPU, a .version newer than the
 * driver's CUDA), cuGetProcAddress, streams and events, the error table, and
 * modules loaded from files.
 *
 * The library keeps process-wide state from cuInit on, as the real driver
 * does, so each case runs in a forked child with its own environment.
 * argv: libcuda.so.1, the fixture folder, then the nvcc outputs: PTX, zstd
 * fatbin, plain fatbin, SASS-only fatbin, sm_90 PTX fatbin.  Without nvcc
 * (tools/nvcc.sh not installed) the build passes no outputs and only the
 * hand-written case (module variables, dynamic shared memory, libraries) runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
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

#include "abi/cuda/cuda-loader.h"

static const char *lib_path, *fixtures, *ptx_path, *fatbin_zstd, *fatbin_plain, *fatbin_sass, *fatbin_sm90;

#define CHECK(cond)                                                                      \
        do {                                                                             \
                if (!(cond)) {                                                           \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        _exit(1);                                                        \
                }                                                                        \
        } while (0)
#define CHECK_EQ(a, b)                                                                   \
        do {                                                                             \
                long long a_ = (long long) (a), b_ = (long long) (b);                    \
                if (a_ != b_) {                                                          \
                        fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
                        _exit(1);                                                        \
                }                                                                        \
        } while (0)

/* The whole file @path, NUL-terminated (exits the child when it cannot). */
static char *slurp(const char *path)
{
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        CHECK(fseek(f, 0, SEEK_END) == 0);
        long n = ftell(f);
        CHECK(n >= 0);
        rewind(f);
        char *buf = calloc(1, (size_t) n + 1);
        CHECK(buf && fread(buf, 1, (size_t) n, f) == (size_t) n);
        fclose(f);
        return buf;
}

/* Runs @fn in a child whose mock NVML profile is @profile (a fixture file name); asserts it passed. */
static void in_child(void (*fn)(gv_cuda_t *), const char *profile)
{
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *path = NULL;
                CHECK(asprintf(&path, "%s/%s", fixtures, profile) > 0);
                setenv("MOCK_NVML_CONFIG", path, 1);
                unsetenv("NVIDIA_VISIBLE_DEVICES");
                unsetenv("CUDA_VISIBLE_DEVICES");
                gv_cuda_t *cu = NULL;
                gv_error_t *err = NULL;
                CHECK(gv_cuda_open(lib_path, NULL, &cu, &err) == 0);
                CHECK_EQ(cu->cuInit(0), CUDA_SUCCESS);
                CUcontext ctx;
                CHECK_EQ(cu->cuCtxCreate_v4(&ctx, NULL, 0, 0), CUDA_SUCCESS);
                fn(cu);
                CHECK_EQ(cu->cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
                _exit(0);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* Device buffer of @bytes holding @host (may be NULL: zeroed). */
static CUdeviceptr upload(gv_cuda_t *cu, const void *host, size_t bytes)
{
        CUdeviceptr d = 0;
        CHECK_EQ(cu->cuMemAlloc_v2(&d, bytes), CUDA_SUCCESS);
        if (host)
                CHECK_EQ(cu->cuMemcpyHtoD_v2(d, host, bytes), CUDA_SUCCESS);
        else
                CHECK_EQ(cu->cuMemsetD8_v2(d, 0, bytes), CUDA_SUCCESS);
        return d;
}

static CUfunction kernel(gv_cuda_t *cu, CUmodule m, const char *name)
{
        CUfunction f = NULL;
        CHECK_EQ(cu->cuModuleGetFunction(&f, m, name), CUDA_SUCCESS);
        return f;
}

static void launch(gv_cuda_t *cu, CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params)
{
        CHECK_EQ(cu->cuLaunchKernel(f, gx, gy, 1, bx, by, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxSynchronize(), CUDA_SUCCESS);
}

static void check_vector_add(gv_cuda_t *cu, CUmodule m)
{
        enum { N = 100003 };
        static float a[N], b[N], c[N];
        for (int i = 0; i < N; i++) {
                a[i] = (float) (i % 977) * 0.25f;
                b[i] = (float) (i % 131) - 60.0f;
        }
        CUdeviceptr da = upload(cu, a, sizeof(a)), db = upload(cu, b, sizeof(b)), dc = upload(cu, NULL, sizeof(c));
        int n = N;
        void *p[] = { &da, &db, &dc, &n };
        launch(cu, kernel(cu, m, "vector_add"), (N + 255) / 256, 1, 256, 1, p);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(c, dc, sizeof(c)), CUDA_SUCCESS);
        for (int i = 0; i < N; i++)
                CHECK(c[i] == a[i] + b[i]);
        cu->cuMemFree_v2(da);
        cu->cuMemFree_v2(db);
        cu->cuMemFree_v2(dc);
}

static void check_saxpy(gv_cuda_t *cu, CUmodule m)
{
        enum { N = 50000 };
        static float x[N], y[N], out[N];
        for (int i = 0; i < N; i++) {
                x[i] = (float) i / 7.0f;
                y[i] = 3.0f - (float) (i % 11);
        }
        CUdeviceptr dx = upload(cu, x, sizeof(x)), dy = upload(cu, y, sizeof(y));
        int n = N;
        float alpha = 1.75f;
        void *p[] = { &n, &alpha, &dx, &dy };
        /* fewer threads than elements: the grid-stride loop covers the rest */
        launch(cu, kernel(cu, m, "saxpy"), 13, 1, 128, 1, p);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(out, dy, sizeof(out)), CUDA_SUCCESS);
        for (int i = 0; i < N; i++)
                CHECK(out[i] == fmaf(alpha, x[i], y[i]));
        cu->cuMemFree_v2(dx);
        cu->cuMemFree_v2(dy);
}

static void check_reduce(gv_cuda_t *cu, CUmodule m)
{
        enum { N = 10000, B = 256, G = (N + B - 1) / B };
        static double in[N], out[G];
        for (int i = 0; i < N; i++)
                in[i] = (double) (i % 1000) * 0.5;
        CUdeviceptr din = upload(cu, in, sizeof(in)), dout = upload(cu, NULL, sizeof(out));
        unsigned n = N;
        void *p[] = { &din, &dout, &n };
        launch(cu, kernel(cu, m, "reduce_sum"), G, 1, B, 1, p);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(out, dout, sizeof(out)), CUDA_SUCCESS);
        for (int g = 0; g < G; g++) {
                /* the same tree as the kernel, so the sums agree to the last bit */
                double part[B];
                for (int t = 0; t < B; t++)
                        part[t] = g * B + t < N ? in[g * B + t] : 0.0;
                for (int s = B / 2; s > 0; s >>= 1)
                        for (int t = 0; t < s; t++)
                                part[t] += part[t + s];
                CHECK(out[g] == part[0]);
        }
        cu->cuMemFree_v2(din);
        cu->cuMemFree_v2(dout);
}

static void check_matmul(gv_cuda_t *cu, CUmodule m)
{
        enum { N = 70 }; /* not a multiple of the 16 x 16 tile */
        static float A[N * N], Bm[N * N], C[N * N];
        for (int i = 0; i < N * N; i++) {
                A[i] = (float) (i % 17) - 8.0f;
                Bm[i] = (float) (i % 13) * 0.5f;
        }
        CUdeviceptr da = upload(cu, A, sizeof(A)), db = upload(cu, Bm, sizeof(Bm)), dc = upload(cu, NULL, sizeof(C));
        int n = N;
        void *p[] = { &da, &db, &dc, &n };
        launch(cu, kernel(cu, m, "matmul"), (N + 15) / 16, (N + 15) / 16, 16, 16, p);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(C, dc, sizeof(C)), CUDA_SUCCESS);
        for (int r = 0; r < N; r++)
                for (int c = 0; c < N; c++) {
                        float acc = 0.0f;
                        for (int k = 0; k < N; k++)
                                acc = fmaf(A[r * N + k], Bm[k * N + c], acc);
                        CHECK(C[r * N + c] == acc); /* small integers and halves: exact in float */
                }
        cu->cuMemFree_v2(da);
        cu->cuMemFree_v2(db);
        cu->cuMemFree_v2(dc);
}

static void check_histogram(gv_cuda_t *cu, CUmodule m)
{
        enum { N = 70001 };
        static unsigned char data[N];
        unsigned want[256] = { 0 }, bins[256];
        int want_max = 0;
        for (int i = 0; i < N; i++) {
                data[i] = (unsigned char) ((i * 2654435761u) >> 13);
                want[data[i]]++;
                if (data[i] > want_max)
                        want_max = data[i];
        }
        CUdeviceptr dd = upload(cu, data, sizeof(data)), db = upload(cu, NULL, sizeof(bins));
        CUdeviceptr dmax = upload(cu, NULL, sizeof(int)), dlast = upload(cu, NULL, sizeof(unsigned));
        unsigned n = N;
        void *p[] = { &dd, &n, &db, &dmax, &dlast };
        launch(cu, kernel(cu, m, "histogram"), 7, 1, 192, 1, p);
        int maxval = 0;
        unsigned last = 0;
        CHECK_EQ(cu->cuMemcpyDtoH_v2(bins, db, sizeof(bins)), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(&maxval, dmax, sizeof(maxval)), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(&last, dlast, sizeof(last)), CUDA_SUCCESS);
        for (int b = 0; b < 256; b++)
                CHECK_EQ(bins[b], want[b]);
        CHECK_EQ(maxval, want_max);
        CHECK_EQ(last, N - 1);
}

static void run_all(gv_cuda_t *cu, CUmodule m)
{
        check_vector_add(cu, m);
        check_saxpy(cu, m);
        check_reduce(cu, m);
        check_matmul(cu, m);
        check_histogram(cu, m);
        CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
}

static void kernels_from_ptx(gv_cuda_t *cu)
{
        char *ptx = slurp(ptx_path);
        CUmodule m;
        CHECK_EQ(cu->cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
        run_all(cu, m);
        free(ptx);
}

static void kernels_from_fatbins(gv_cuda_t *cu)
{
        const char *files[] = { fatbin_zstd, fatbin_plain };
        for (size_t i = 0; i < 2; i++) {
                char *image = slurp(files[i]);
                CUmodule m;
                CHECK_EQ(cu->cuModuleLoadFatBinary(&m, image), CUDA_SUCCESS);
                run_all(cu, m);
                /* nvcc's wrapper around the same container, as a program's host code carries it */
                struct {
                        int magic, version;
                        const void *data, *file;
                } wrapper = { 0x466243b1, 1, image, NULL };
                CHECK_EQ(cu->cuModuleLoadData(&m, &wrapper), CUDA_SUCCESS);
                check_vector_add(cu, m);
                CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
                free(image);
        }
}

static void test_kernels_ptx(void **state)
{
        (void) state;
        in_child(kernels_from_ptx, "a100-cuda-13.5.yaml");
}

static void test_kernels_fatbin(void **state)
{
        (void) state;
        in_child(kernels_from_fatbins, "a100-cuda-13.5.yaml");
}

/* Loads @image with an error log; the result, and the log in @log. */
static CUresult load_logged(gv_cuda_t *cu, const void *image, char *log, size_t size)
{
        CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
        void *vals[] = { log, (void *) (uintptr_t) size };
        log[0] = '\0';
        CUmodule m = NULL;
        CUresult r = cu->cuModuleLoadDataEx(&m, image, 2, opts, vals);
        if (r == CUDA_SUCCESS)
                cu->cuModuleUnload(m);
        return r;
}

static void refusals_new_driver(gv_cuda_t *cu)
{
        char log[512];
        char *sass = slurp(fatbin_sass), *sm90 = slurp(fatbin_sm90);
        /* only SASS for sm_80: the mock has no PTX to run */
        CHECK_EQ(load_logged(cu, sass, log, sizeof(log)), CUDA_ERROR_NO_BINARY_FOR_GPU);
        CHECK(strstr(log, "PTX") != NULL);
        /* only PTX for sm_90 on a compute capability 8.0 GPU: nothing to JIT */
        CHECK_EQ(load_logged(cu, sm90, log, sizeof(log)), CUDA_ERROR_NO_BINARY_FOR_GPU);
        CHECK(strstr(log, "sm_90") != NULL);
        const char *body = ".visible .entry k()\n{\n ret;\n}\n";
        char text[256];
        snprintf(text, sizeof(text), ".version 8.0\n.target sm_90\n.address_size 64\n%s", body);
        CHECK_EQ(load_logged(cu, text, log, sizeof(log)), CUDA_ERROR_INVALID_PTX);
        CHECK(strstr(log, "sm_90") && strstr(log, "8.0"));
        snprintf(text, sizeof(text), ".version 8.0\n.target sm_100a\n.address_size 64\n%s", body);
        CHECK_EQ(load_logged(cu, text, log, sizeof(log)), CUDA_ERROR_INVALID_PTX);
        snprintf(text, sizeof(text), ".version 8.0\n.target sm_86a\n.address_size 64\n%s", body);
        CHECK_EQ(load_logged(cu, text, log, sizeof(log)), CUDA_ERROR_INVALID_PTX); /* `a`: that GPU only */
        snprintf(text, sizeof(text), ".version 8.0\n.target sm_80a\n.address_size 64\n%s", body);
        CHECK_EQ(load_logged(cu, text, log, sizeof(log)), CUDA_SUCCESS);
        snprintf(text, sizeof(text), ".version 99.9\n.target sm_50\n.address_size 64\n%s", body);
        CHECK_EQ(load_logged(cu, text, log, sizeof(log)), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        /* malformed PTX names its line */
        CHECK_EQ(load_logged(cu, ".version 8.0\n.target sm_50\n.entry k()\n{\n bogus %r1;\n}\n", log, sizeof(log)),
                 CUDA_ERROR_INVALID_PTX);
        CHECK(strstr(log, "line 5") != NULL);
        free(sass);
        free(sm90);
}

static void test_refusals(void **state)
{
        (void) state;
        in_child(refusals_new_driver, "a100-cuda-13.5.yaml");
}

/* On R470 (CUDA 11.4) nvcc 13.5's PTX (ISA 9.5) is refused as that driver refuses it. */
static void refusals_r470(gv_cuda_t *cu)
{
        char log[512];
        char *ptx = slurp(ptx_path), *zstd = slurp(fatbin_zstd);
        CHECK_EQ(load_logged(cu, ptx, log, sizeof(log)), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        CHECK(strstr(log, "9.5") && strstr(log, "11.4"));
        CHECK_EQ(load_logged(cu, zstd, log, sizeof(log)), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        const char *ok = ".version 7.4\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n";
        CHECK_EQ(load_logged(cu, ok, log, sizeof(log)), CUDA_SUCCESS);
        const char *new = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n";
        CHECK_EQ(load_logged(cu, new, log, sizeof(log)), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        free(ptx);
        free(zstd);
}

static void test_refusals_r470(void **state)
{
        (void) state;
        in_child(refusals_r470, "a100-r470.yaml");
}

typedef CUresult (*ctx_create_v4_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);

static void proc_address(gv_cuda_t *cu)
{
        void *p = NULL;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CHECK_EQ(cu->cuGetProcAddress_v2("cuCtxCreate", &p, 12050, 0, &st), CUDA_SUCCESS);
        CHECK_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
        void *v4 = dlsym(cu->handle, "cuCtxCreate_v4"), *v3 = dlsym(cu->handle, "cuCtxCreate_v3");
        void *v2 = dlsym(cu->handle, "cuCtxCreate_v2");
        CHECK(p == v4 && v4 && v3 && v2);
        CHECK_EQ(cu->cuGetProcAddress_v2("cuCtxCreate", &p, 11040, 0, &st), CUDA_SUCCESS);
        CHECK(p == v3);
        CHECK_EQ(cu->cuGetProcAddress_v2("cuCtxCreate", &p, 3020, 0, &st), CUDA_SUCCESS);
        CHECK(p == v2);
        CHECK_EQ(cu->cuGetProcAddress_v2("cuCtxCreate", &p, 3000, 0, &st), CUDA_ERROR_NOT_FOUND);
        CHECK_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
        CHECK_EQ(cu->cuGetProcAddress_v2("cuNoSuchThing", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
        CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        CHECK(p == NULL);
        CHECK_EQ(cu->cuGetProcAddress_v2("cuMemcpyHtoD", &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st),
                 CUDA_SUCCESS);
        CHECK(p == dlsym(cu->handle, "cuMemcpyHtoD_v2_ptds"));
        CHECK_EQ(cu->cuGetProcAddress_v2("cuMemcpyHtoD", &p, 13000, 0, &st), CUDA_SUCCESS);
        CHECK(p == dlsym(cu->handle, "cuMemcpyHtoD_v2"));
        CHECK_EQ(cu->cuGetProcAddress("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
                 CUDA_SUCCESS);
        CHECK(p == dlsym(cu->handle, "cuLaunchKernel_ptsz"));
        /* what it hands out works */
        CHECK_EQ(cu->cuGetProcAddress_v2("cuCtxCreate", &p, 13000, 0, &st), CUDA_SUCCESS);
        ctx_create_v4_fn create;
        memcpy(&create, &p, sizeof(create));
        CUcontext c;
        CHECK_EQ(create(&c, NULL, 0, 1), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxDestroy_v2(c), CUDA_SUCCESS);
}

static void test_proc_address(void **state)
{
        (void) state;
        in_child(proc_address, "a100-cuda-13.5.yaml");
}

/* Streams run their work in order; events time it; pinned host memory is one pointer on both sides. */
static void streams_events(gv_cuda_t *cu)
{
        char *ptx = slurp(ptx_path);
        CUmodule m;
        CHECK_EQ(cu->cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
        enum { N = 4096 };
        float *ha, *hb, *hc;
        CHECK_EQ(cu->cuMemHostAlloc((void **) &ha, N * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemAllocHost_v2((void **) &hb, N * sizeof(float)), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemAllocHost_v2((void **) &hc, N * sizeof(float)), CUDA_SUCCESS);
        for (int i = 0; i < N; i++) {
                ha[i] = (float) i;
                hb[i] = 1.0f;
        }
        CUstream s;
        CUevent e0, e1;
        CHECK_EQ(cu->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventCreate(&e0, CU_EVENT_DEFAULT), CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventCreate(&e1, CU_EVENT_DEFAULT), CUDA_SUCCESS);
        CUdeviceptr da, db, dc;
        CHECK_EQ(cu->cuMemAlloc_v2(&da, N * sizeof(float)), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemAlloc_v2(&db, N * sizeof(float)), CUDA_SUCCESS);
        /* the kernel writes straight into pinned host memory through its device pointer */
        CHECK_EQ(cu->cuMemHostGetDevicePointer_v2(&dc, hc, 0), CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventRecord(e0, s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemcpyHtoDAsync_v2(da, ha, N * sizeof(float), s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemcpyHtoDAsync_v2(db, hb, N * sizeof(float), s), CUDA_SUCCESS);
        int n = N;
        void *p[] = { &da, &db, &dc, &n };
        CHECK_EQ(cu->cuLaunchKernel(kernel(cu, m, "vector_add"), N / 128, 1, 1, 128, 1, 1, 0, s, p, NULL),
                 CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventRecord(e1, s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuStreamSynchronize(s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventSynchronize(e1), CUDA_SUCCESS);
        float ms = -1;
        CHECK_EQ(cu->cuEventElapsedTime_v2(&ms, e0, e1), CUDA_SUCCESS);
        CHECK(ms >= 0.0f && ms < 10000.0f);
        for (int i = 0; i < N; i++)
                CHECK(hc[i] == (float) i + 1.0f);
        CHECK_EQ(cu->cuMemsetD32Async(da, 0x3f800000u, N, s), CUDA_SUCCESS); /* 1.0f */
        CHECK_EQ(cu->cuMemcpyDtoHAsync_v2(hc, da, N * sizeof(float), s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuStreamQuery(s), CUDA_SUCCESS);
        CHECK(hc[N - 1] == 1.0f);
        size_t free_b = 0, total = 0;
        CHECK_EQ(cu->cuMemGetInfo_v2(&free_b, &total), CUDA_SUCCESS);
        CHECK(total == (size_t) 40960 << 20 && free_b == total - 2 * N * sizeof(float));
        CHECK_EQ(cu->cuStreamDestroy_v2(s), CUDA_SUCCESS);
        CHECK_EQ(cu->cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
        CHECK_EQ(cu->cuEventDestroy_v2(e0), CUDA_SUCCESS);
        CHECK_EQ(cu->cuEventDestroy_v2(e1), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemFreeHost(ha), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemFreeHost(hb), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemFreeHost(hc), CUDA_SUCCESS);
        CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
        free(ptx);
}

static void test_streams_events(void **state)
{
        (void) state;
        in_child(streams_events, "a100-cuda-13.5.yaml");
}

/* Every CUresult has a name and a text; every CUdevice_attribute an answer. */
static void errors_and_attributes(gv_cuda_t *cu)
{
        int named = 0;
        for (int code = 0; code < 1000; code++) {
                const char *name = NULL, *text = NULL;
                CUresult rn = cu->cuGetErrorName((CUresult) code, &name), rt = cu->cuGetErrorString((CUresult) code, &text);
                CHECK_EQ(rn, rt);
                if (rn == CUDA_SUCCESS) {
                        CHECK(name && text && strncmp(name, "CUDA_", 5) == 0 && *text);
                        named++;
                } else {
                        CHECK_EQ(rn, CUDA_ERROR_INVALID_VALUE);
                }
        }
        CHECK_EQ(named, 107); /* the 106 codes of CUDA 13.5's reference and CUDA_ERROR_INSUFFICIENT_DRIVER */
        for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
                int v = -7;
                CHECK_EQ(cu->cuDeviceGetAttribute(&v, (CUdevice_attribute) a, 0), CUDA_SUCCESS);
                CHECK(v != -7);
        }
        int v;
        CHECK_EQ(cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ(cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, 0), CUDA_SUCCESS);
        CHECK_EQ(v, CU_COMPUTEMODE_DEFAULT);
        CHECK_EQ(cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0), CUDA_SUCCESS);
        CHECK_EQ(v, 166912); /* compute capability 8.0: 163 KB */
        CHECK_EQ(cu->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1), CUDA_SUCCESS);
        CHECK_EQ(v, 108);
        char bus[32];
        CUdevice d = -1;
        CHECK_EQ(cu->cuDeviceGetPCIBusId(bus, sizeof(bus), 1), CUDA_SUCCESS);
        CHECK_EQ(cu->cuDeviceGetByPCIBusId(&d, bus), CUDA_SUCCESS);
        CHECK_EQ(d, 1);
        int peer = -1;
        CHECK_EQ(cu->cuDeviceCanAccessPeer(&peer, 0, 1), CUDA_SUCCESS);
        CHECK_EQ(peer, 1);
        CHECK_EQ(cu->cuDeviceCanAccessPeer(&peer, 1, 1), CUDA_SUCCESS);
        CHECK_EQ(peer, 0);
        CHECK_EQ(cu->cuDeviceCanAccessPeer(&peer, 0, 2), CUDA_ERROR_INVALID_DEVICE);
        /* occupancy: the largest block the shared memory allows, a grid of 2048 threads a multiprocessor */
        char *ptx = slurp(ptx_path);
        CUmodule m;
        CHECK_EQ(cu->cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
        int grid = 0, block = 0;
        CHECK_EQ(cu->cuOccupancyMaxPotentialBlockSize(&grid, &block, kernel(cu, m, "vector_add"), NULL, 0, 0),
                 CUDA_SUCCESS);
        CHECK_EQ(block, 1024);
        CHECK_EQ(grid, 108 * 2);
        CHECK_EQ(cu->cuOccupancyMaxPotentialBlockSize(&grid, &block, kernel(cu, m, "reduce_sum"), NULL, 150000, 256),
                 CUDA_SUCCESS); /* 8 KiB static + 150,000 bytes dynamic fit the 163 KiB of compute capability 8.0 */
        CHECK_EQ(block, 256);
        CHECK_EQ(cu->cuOccupancyMaxPotentialBlockSize(&grid, &block, kernel(cu, m, "reduce_sum"), NULL, 160000, 0),
                 CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
        free(ptx);
}

static void test_errors_and_attributes(void **state)
{
        (void) state;
        in_child(errors_and_attributes, "a100-cuda-13.5.yaml");
}

/*
 * Hand-written PTX (no nvcc needed): module variables (.global with an initializer the host reads
 * and writes through cuModuleGetGlobal, a .const table), dynamic shared memory (.extern .shared,
 * sized at launch), the parameter buffer of `extra`, and the cuLibrary calls.
 */
static const char globals_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".global .align 4 .u32 counter = 5;\n"
        ".const .align 4 .f32 table[4] = {0f3F800000, 0f40000000, 0f40400000, 0f40800000};\n"
        ".extern .shared .align 4 .b8 dyn[];\n"
        ".visible .entry scale(.param .u64 out, .param .u32 n)\n{\n"
        " .reg .pred %p<3>;\n .reg .b32 %r<10>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [n];\n mov.u32 %r2, %tid.x;\n"
        " and.b32 %r3, %r2, 3;\n mul.wide.u32 %rd2, %r3, 4;\n mov.u64 %rd3, table;\n add.s64 %rd4, %rd3, %rd2;\n"
        " ld.const.f32 %f1, [%rd4];\n"
        " mov.u32 %r4, dyn;\n shl.b32 %r5, %r2, 2;\n add.s32 %r6, %r4, %r5;\n st.shared.f32 [%r6], %f1;\n"
        " bar.sync 0;\n"
        " mov.u32 %r7, %ntid.x;\n sub.s32 %r8, %r7, 1;\n sub.s32 %r8, %r8, %r2;\n shl.b32 %r8, %r8, 2;\n"
        " add.s32 %r9, %r4, %r8;\n ld.shared.f32 %f2, [%r9];\n"
        " setp.ge.u32 %p1, %r2, %r1;\n @%p1 bra DONE;\n"
        " cvta.to.global.u64 %rd5, %rd1;\n mul.wide.u32 %rd6, %r2, 4;\n add.s64 %rd7, %rd5, %rd6;\n"
        " st.global.f32 [%rd7], %f2;\n"
        " atom.global.add.u32 %r9, [counter], 1;\n"
        "DONE:\n ret;\n}\n";

static void globals_and_libraries(gv_cuda_t *cu)
{
        CUlibrary lib;
        CHECK_EQ(cu->cuLibraryLoadData(&lib, globals_ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
        CUkernel k;
        CUfunction f;
        CHECK_EQ(cu->cuLibraryGetKernel(&k, lib, "scale"), CUDA_SUCCESS);
        CHECK_EQ(cu->cuKernelGetFunction(&f, k), CUDA_SUCCESS);
        CUdeviceptr counter;
        size_t bytes = 0;
        CHECK_EQ(cu->cuLibraryGetGlobal(&counter, &bytes, lib, "counter"), CUDA_SUCCESS);
        CHECK_EQ(bytes, 4);
        unsigned c = 0;
        CHECK_EQ(cu->cuMemcpyDtoH_v2(&c, counter, 4), CUDA_SUCCESS);
        CHECK_EQ(c, 5); /* the initializer */
        enum { T = 64 };
        float out[T];
        CUdeviceptr d = upload(cu, NULL, sizeof(out));
        /* the parameters through `extra`: one buffer laid out as the PTX declares them */
        struct {
                CUdeviceptr out;
                unsigned n;
                unsigned pad;
        } buf = { d, 40, 0 };
        size_t size = sizeof(buf);
        void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                          CU_LAUNCH_PARAM_END };
        int shared = 0;
        CHECK_EQ(cu->cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
        CHECK_EQ(shared, 0); /* all of it dynamic */
        CHECK_EQ(cu->cuLaunchKernel(f, 1, 1, 1, T, 1, 1, T * 4, NULL, NULL, extra), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxSynchronize(), CUDA_SUCCESS);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(out, d, sizeof(out)), CUDA_SUCCESS);
        for (int t = 0; t < 40; t++) /* thread t wrote what thread T-1-t stored: table[(T-1-t) % 4] */
                CHECK(out[t] == (float) ((T - 1 - t) % 4 + 1));
        CHECK(out[40] == 0.0f);
        CHECK_EQ(cu->cuMemcpyDtoH_v2(&c, counter, 4), CUDA_SUCCESS);
        CHECK_EQ(c, 5 + 40);
        /* too little dynamic shared memory: the last threads store past it, an illegal address */
        CHECK_EQ(cu->cuLaunchKernel(f, 1, 1, 1, T, 1, 1, 16, NULL, NULL, extra), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
        CHECK_EQ(cu->cuLibraryUnload(lib), CUDA_SUCCESS);
}

static void test_globals_and_libraries(void **state)
{
        (void) state;
        in_child(globals_and_libraries, "a100-cuda-13.5.yaml");
}

/* @text written to a new temporary file; its path (the caller unlinks and frees it). */
static char *temp_file(const char *text, size_t len)
{
        char *path = NULL;
        const char *dir = getenv("TMPDIR");
        CHECK(asprintf(&path, "%s/test-kernels-XXXXXX", dir && *dir ? dir : "/tmp") > 0);
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CHECK(write(fd, text, len) == (ssize_t) len);
        CHECK(close(fd) == 0);
        return path;
}

/*
 * cuModuleLoad and cuLibraryLoadFromFile read the file whole: PTX text, and (with nvcc) a fatbin,
 * binary with NUL bytes inside; a missing file is CUDA_ERROR_FILE_NOT_FOUND.
 */
static void modules_from_files(gv_cuda_t *cu)
{
        char *path = temp_file(globals_ptx, sizeof(globals_ptx) - 1);
        CUmodule m = NULL;
        CHECK_EQ(cu->cuModuleLoad(&m, path), CUDA_SUCCESS);
        CUfunction f = kernel(cu, m, "scale");
        CHECK(f != NULL);
        CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
        CUlibrary lib;
        CUkernel k;
        CHECK_EQ(cu->cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
        CHECK_EQ(cu->cuLibraryGetKernel(&k, lib, "scale"), CUDA_SUCCESS);
        CHECK_EQ(cu->cuLibraryUnload(lib), CUDA_SUCCESS);
        CHECK(unlink(path) == 0);
        CHECK_EQ(cu->cuModuleLoad(&m, path), CUDA_ERROR_FILE_NOT_FOUND);
        CHECK_EQ(cu->cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0), CUDA_ERROR_FILE_NOT_FOUND);
        CHECK_EQ(cu->cuModuleLoad(&m, NULL), CUDA_ERROR_INVALID_VALUE);
        free(path);
        if (fatbin_zstd) {
                CHECK_EQ(cu->cuModuleLoad(&m, fatbin_zstd), CUDA_SUCCESS);
                check_vector_add(cu, m);
                CHECK_EQ(cu->cuModuleUnload(m), CUDA_SUCCESS);
        }
}

static void test_modules_from_files(void **state)
{
        (void) state;
        in_child(modules_from_files, "a100-cuda-13.5.yaml");
}

/* The context queries: a context named or the current one; a context that is not live is CUDA_ERROR_INVALID_CONTEXT. */
static void context_queries(gv_cuda_t *cu)
{
        unsigned version = 0;
        CUdevice dev = -1;
        CHECK_EQ(cu->cuCtxGetApiVersion(NULL, &version), CUDA_SUCCESS);
        CHECK_EQ(version, 3020);
        CHECK_EQ(cu->cuCtxGetApiVersion(NULL, NULL), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ(cu->cuCtxGetDevice_v2(&dev, NULL), CUDA_SUCCESS);
        CHECK_EQ(dev, 0);
        CUcontext ctx = NULL;
        CHECK_EQ(cu->cuCtxCreate_v4(&ctx, NULL, 0, 1), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxGetDevice_v2(&dev, ctx), CUDA_SUCCESS);
        CHECK_EQ(dev, 1);
        version = 0;
        CHECK_EQ(cu->cuCtxGetApiVersion(ctx, &version), CUDA_SUCCESS);
        CHECK_EQ(version, 3020);
        CHECK_EQ(cu->cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
        CHECK_EQ(cu->cuCtxGetApiVersion(ctx, &version), CUDA_ERROR_INVALID_CONTEXT);
        CHECK_EQ(cu->cuCtxGetDevice_v2(&dev, ctx), CUDA_ERROR_INVALID_CONTEXT);
}

static void test_context_queries(void **state)
{
        (void) state;
        in_child(context_queries, "a100-cuda-13.5.yaml");
}

int main(int argc, char **argv)
{
        if (argc < 3)
                return 2;
        lib_path = argv[1];
        fixtures = argv[2];
        if (argc < 8) { /* without nvcc (tools/nvcc.sh install): the hand-written cases only */
                printf("# nvcc is not installed (tools/nvcc.sh install): the nvcc-built kernels are not tested\n");
                const struct CMUnitTest without_nvcc[] = { cmocka_unit_test(test_globals_and_libraries),
                                                           cmocka_unit_test(test_modules_from_files),
                                                           cmocka_unit_test(test_context_queries) };
                return cmocka_run_group_tests(without_nvcc, NULL, NULL);
        }
        ptx_path = argv[3];
        fatbin_zstd = argv[4];
        fatbin_plain = argv[5];
        fatbin_sass = argv[6];
        fatbin_sm90 = argv[7];
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernels_ptx),       cmocka_unit_test(test_kernels_fatbin),
                cmocka_unit_test(test_refusals),          cmocka_unit_test(test_refusals_r470),
                cmocka_unit_test(test_proc_address),      cmocka_unit_test(test_streams_events),
                cmocka_unit_test(test_errors_and_attributes), cmocka_unit_test(test_globals_and_libraries),
                cmocka_unit_test(test_modules_from_files),    cmocka_unit_test(test_context_queries),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
