/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudacheck: the embedded PTX text, the test pattern, NVIDIA_VISIBLE_DEVICES
 * parsing and resolution, and the whole vector-add path against a fake CUDA
 * driver (fake_cuda.c, built as libcuda.so.1; its path is argv[1]).
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

#include <cmocka.h>

#include "base/cleanup.h"
#include "cudacheck/cudacheck.h"

/* The fake driver's path, from argv[1]; constant after main() sets it up. */
static const char *fake_path(void)
{
        const char *p = getenv("GV_TEST_FAKE_CUDA");
        assert_non_null(p);
        return p;
}

/* ---- PTX ---- */

static void test_ptx_header(void **state)
{
        (void) state;
        const char *p = gv_cudacheck_ptx;
        assert_non_null(strstr(p, "\n.version 6.0\n"));
        assert_non_null(strstr(p, "\n.target sm_50\n"));
        assert_non_null(strstr(p, "\n.address_size 64\n"));
        /* Directives come before the entry, in this order. */
        assert_true(strstr(p, ".version") < strstr(p, ".target"));
        assert_true(strstr(p, ".target") < strstr(p, ".address_size"));
        assert_true(strstr(p, ".address_size") < strstr(p, ".entry"));
        assert_non_null(strstr(p, ".visible .entry " GV_CUDACHECK_KERNEL "(\n"));
}

static void test_ptx_body(void **state)
{
        (void) state;
        const char *p = gv_cudacheck_ptx;
        size_t len = strlen(p);
        assert_true(len > 200 && len < 4096);
        assert_int_equal(p[len - 1], '\n');
        int depth = 0, max_depth = 0, parens = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) p[i];
                assert_true(ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f)); /* plain ASCII */
                depth += ch == '{';
                depth -= ch == '}';
                parens += ch == '(';
                parens -= ch == ')';
                assert_true(depth >= 0 && parens >= 0);
                if (depth > max_depth)
                        max_depth = depth;
        }
        assert_int_equal(depth, 0);
        assert_int_equal(parens, 0);
        assert_int_equal(max_depth, 1);
        /* Four parameters: three 64-bit pointers and the 32-bit count, in that order. */
        const char *a = strstr(p, ".param .u64 p_a"), *b = strstr(p, ".param .u64 p_b");
        const char *c = strstr(p, ".param .u64 p_c"), *n = strstr(p, ".param .u32 p_n");
        assert_true(a && b && c && n && a < b && b < c && c < n);
        /* The operations that make it a bounds-checked vector add. */
        static const char *const must[] = { "setp.ge.u32", "@%p1 bra DONE;", "ld.global.f32 %f1",
                                            "ld.global.f32 %f2", "add.rn.f32 %f3, %f1, %f2;",
                                            "st.global.f32 [%rd10], %f3;", "DONE:\n\tret;\n}" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(must); i++)
                assert_non_null(strstr(p, must[i]));
}

/* Every register used is within the declared ranges (%r<6> declares %r0..%r5). */
static void test_ptx_registers(void **state)
{
        (void) state;
        static const struct {
                const char *prefix;
                int declared;
        } regs[] = { { "%p", 2 }, { "%f", 4 }, { "%r", 6 }, { "%rd", 11 } };
        const char *body = strstr(gv_cudacheck_ptx, "{");
        assert_non_null(body);
        for (const char *q = body; (q = strchr(q, '%')) != NULL; q++) {
                if (q[-1] == '<' || strncmp(q, "%ctaid", 6) == 0 || strncmp(q, "%ntid", 5) == 0 ||
                    strncmp(q, "%tid", 4) == 0)
                        continue;
                /* Longest prefix first: %rd before %r. */
                int which = strncmp(q, "%rd", 3) == 0 ? 3 : strncmp(q, "%r", 2) == 0 ? 2
                          : strncmp(q, "%f", 2) == 0  ? 1
                          : strncmp(q, "%p", 2) == 0  ? 0
                                                      : -1;
                assert_true(which >= 0);
                const char *digits = q + strlen(regs[which].prefix);
                if (*digits == '<')
                        continue; /* the declaration itself */
                assert_true(*digits >= '0' && *digits <= '9');
                assert_true(atoi(digits) < regs[which].declared);
        }
}

/* ---- pattern ---- */

static void test_pattern(void **state)
{
        (void) state;
        size_t n = 100000, first = 7;
        float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *c = malloc(n * sizeof(float));
        assert_true(a && b && c);
        gv_cudacheck_fill(a, b, n);
        for (size_t i = 0; i < n; i++)
                c[i] = a[i] + b[i];
        assert_int_equal(gv_cudacheck_verify(c, n, &first), 0);
        assert_int_equal(first, 7); /* untouched */
        /* Neighbours differ, so a kernel that shifts indexes is caught. */
        assert_true(c[1] != c[0] && c[2] != c[1]);
        c[4242] = c[4243];
        c[n - 1] = NAN;
        assert_int_equal(gv_cudacheck_verify(c, n, &first), 2);
        assert_int_equal(first, 4242);
        assert_int_equal(gv_cudacheck_verify(c, n, NULL), 2);
        assert_int_equal(gv_cudacheck_bytes(GV_CUDACHECK_DEFAULT_ELEMENTS), 48u << 20);
        free(a);
        free(b);
        free(c);
}

/* ---- NVIDIA_VISIBLE_DEVICES ---- */

static void parse_ok(const char *value, gv_visible_kind_t kind, size_t n)
{
        gv_error_t *err = NULL;
        gv_visible_devices_t v = { 0 };
        assert_int_equal(gv_visible_devices_parse(value, &v, &err), 0);
        assert_null(err);
        assert_int_equal(v.kind, kind);
        assert_int_equal(v.n, n);
        if (kind == GV_VISIBLE_LIST) {
                assert_non_null(v.ids);
                assert_null(v.ids[n]);
        } else {
                assert_null(v.ids);
        }
        gv_visible_devices_free(&v);
        assert_int_equal(v.kind, GV_VISIBLE_UNSET);
}

static void test_visible_parse(void **state)
{
        (void) state;
        parse_ok(NULL, GV_VISIBLE_UNSET, 0);
        parse_ok("", GV_VISIBLE_UNSET, 0);
        parse_ok("  ", GV_VISIBLE_UNSET, 0);
        parse_ok(" , ,", GV_VISIBLE_UNSET, 0);
        parse_ok("all", GV_VISIBLE_ALL, 0);
        parse_ok(" ALL ", GV_VISIBLE_ALL, 0);
        parse_ok("none", GV_VISIBLE_NONE, 0);
        parse_ok("void", GV_VISIBLE_VOID, 0);
        parse_ok("0", GV_VISIBLE_LIST, 1);
        parse_ok("0,1,2", GV_VISIBLE_LIST, 3);
        parse_ok("0, 1,,2 ,", GV_VISIBLE_LIST, 3);
        parse_ok("1,1,1", GV_VISIBLE_LIST, 1);
        parse_ok("GPU-8d4b5c3e-1f2a-4b6c-9d0e-123456789abc", GV_VISIBLE_LIST, 1);
        parse_ok("GPU-ABC,gpu-abc", GV_VISIBLE_LIST, 1);
        parse_ok("MIG-5b0f1c2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d,0:1,0:2", GV_VISIBLE_LIST, 3);

        gv_visible_devices_t v = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_visible_devices_parse(" 3 ,GPU-aa ", &v, &err), 0);
        assert_string_equal(v.ids[0], "3");
        assert_string_equal(v.ids[1], "GPU-aa");
        gv_visible_devices_free(&v);

        static const char *const bad[] = { "foo", "1,x", "-1", "GPU-", "GPU-xyz!", "1:", ":1", "1:2:3",
                                           "all,0", "0x1", "1 2" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                v = (gv_visible_devices_t) { .kind = GV_VISIBLE_ALL };
                assert_int_equal(gv_visible_devices_parse(bad[i], &v, &err), -EINVAL);
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
                assert_non_null(strstr(err->msg, "NVIDIA_VISIBLE_DEVICES"));
                assert_int_equal(v.kind, GV_VISIBLE_ALL); /* untouched on failure */
                gv_error_free(&err);
        }
}

static size_t resolve(const char *value, size_t n_devices, int want_ret)
{
        static const char *const uuids[] = { "GPU-aaaa-0000", "GPU-bbbb-1111", "GPU-cccc-2222", NULL };
        gv_error_t *err = NULL;
        gv_visible_devices_t v = { 0 };
        assert_int_equal(gv_visible_devices_parse(value, &v, &err), 0);
        size_t n = 12345;
        int r = gv_visible_devices_resolve(&v, uuids, n_devices, &n, &err);
        assert_int_equal(r, want_ret);
        if (r < 0) {
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_NO_GPU);
                assert_int_equal(n, 12345);
                gv_error_free(&err);
        }
        gv_visible_devices_free(&v);
        return n;
}

static void test_visible_resolve(void **state)
{
        (void) state;
        assert_int_equal(resolve(NULL, 3, 0), 3);
        assert_int_equal(resolve("all", 3, 0), 3);
        assert_int_equal(resolve("all", 0, 0), 0);
        assert_int_equal(resolve("none", 3, 0), 0);
        assert_int_equal(resolve("void", 3, 0), 0);
        assert_int_equal(resolve("0,2", 3, 0), 2);
        assert_int_equal(resolve("GPU-BBBB-1111", 3, 0), 1);
        assert_int_equal(resolve("1,GPU-bbbb-1111", 3, 0), 1); /* the same device twice */
        assert_int_equal(resolve("0:0,0:1,0", 3, 0), 3);
        assert_int_equal(resolve("MIG-1234", 3, 0), 1);
        resolve("3", 3, -ENODEV);
        resolve("0,GPU-dddd-3333", 3, -ENODEV);
        resolve("5:0", 3, -ENODEV);
        resolve("0", 0, -ENODEV);
}

/* gv_visible_devices_select() on 4 devices: @want is the selection as "1010" (NVML order). */
static void select_ok(const char *value, const char *want, size_t want_n)
{
        static const char *const uuids[] = { "GPU-aaaa-0000", "GPU-bbbb-1111", "GPU-cccc-2222", "GPU-dddd-3333", NULL };
        gv_error_t *err = NULL;
        gv_visible_devices_t v = { 0 };
        assert_int_equal(gv_visible_devices_parse(value, &v, &err), 0);
        bool sel[4];
        size_t n = 99;
        assert_int_equal(gv_visible_devices_select(&v, uuids, 4, sel, &n, &err), 0);
        assert_int_equal(n, want_n);
        char got[5] = { 0 };
        for (size_t i = 0; i < 4; i++)
                got[i] = sel[i] ? '1' : '0';
        assert_string_equal(got, want);
        gv_visible_devices_free(&v);
}

/* The error for @value on @n devices: out-parameters untouched, reason no-gpu, message @want. */
static void select_fails(const char *value, size_t n_devices, const char *want)
{
        static const char *const uuids[] = { "GPU-aaaa-0000", "GPU-bbbb-1111", NULL };
        gv_error_t *err = NULL;
        gv_visible_devices_t v = { 0 };
        assert_int_equal(gv_visible_devices_parse(value, &v, &err), 0);
        bool sel[2] = { true, false };
        size_t n = 99;
        assert_int_equal(gv_visible_devices_select(&v, uuids, n_devices, sel, &n, &err), -ENODEV);
        assert_int_equal(n, 99);
        assert_true(sel[0] && !sel[1]);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_NO_GPU);
        assert_string_equal(err->msg, want);
        gv_error_free(&err);
        gv_visible_devices_free(&v);
}

static void test_visible_select(void **state)
{
        (void) state;
        select_ok(NULL, "1111", 4);
        select_ok("all", "1111", 4);
        select_ok("none", "0000", 0);
        select_ok("void", "0000", 0);
        select_ok("0,1", "1100", 2);
        select_ok("3,GPU-BBBB-1111", "0101", 2);
        select_ok("2:0,2:1", "0010", 2);    /* two MIG devices of GPU 2 */
        select_ok("MIG-1234,0", "1000", 2); /* a MIG UUID counts, marks nothing */
        select_fails("9", 2, "NVIDIA_VISIBLE_DEVICES names GPU 9, but NVML reports 2 GPUs, indexes 0 to 1");
        select_fails("0,1", 1, "NVIDIA_VISIBLE_DEVICES names GPU 1, but NVML reports 1 GPU, index 0");
        select_fails("0", 0, "NVIDIA_VISIBLE_DEVICES names GPU 0, but NVML reports no GPU");
        select_fails("4:1", 2, "NVIDIA_VISIBLE_DEVICES names MIG device 4:1, but NVML reports 2 GPUs, indexes 0 to 1");
        select_fails("GPU-eeee", 2, "NVIDIA_VISIBLE_DEVICES names GPU-eeee, but none of the 2 GPU(s) NVML reports "
                                    "has that UUID (NVML has 0: GPU-aaaa-0000, 1: GPU-bbbb-1111)");
}

/* ---- the vector add against the fake driver ---- */

static int live_allocations(gv_cuda_t *cuda)
{
        int (*fn)(void) = NULL;
        void *sym = dlsym(cuda->handle, "fake_cuda_live_allocations");
        assert_non_null(sym);
        memcpy(&fn, &sym, sizeof(fn));
        return fn();
}

static void test_open_errors(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        gv_cuda_t *cuda = (gv_cuda_t *) 0x1;
        assert_int_equal(gv_cudacheck_open("/nonexistent/libcuda.so.1", &cuda, &err), -ENOENT);
        assert_int_equal(err->reason, GV_REASON_LIBRARY_NOT_FOUND);
        assert_non_null(strstr(err->msg, "/nonexistent/libcuda.so.1"));
        assert_ptr_equal(cuda, (gv_cuda_t *) 0x1);
        gv_error_free(&err);
        /* A library that is not a CUDA driver. */
        assert_int_equal(gv_cudacheck_open("libm.so.6", &cuda, &err), -ENOSYS);
        assert_non_null(strstr(err->msg, "required symbol cuInit is missing"));
        gv_error_free(&err);
        gv_cuda_close(NULL);
}

static void test_vector_add_ok(void **state)
{
        (void) state;
        unsetenv("FAKE_CUDA_MODE");
        unsetenv("FAKE_CUDA_FAIL_DEVICE");
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        gv_error_t *err = NULL;
        gv_cuda_t *cuda = NULL;
        assert_int_equal(gv_cudacheck_open(fake_path(), &cuda, &err), 0);
        assert_non_null(cuda->cuGetErrorName);
        assert_non_null(cuda->cuModuleUnload);
        int count = -1, version = -1;
        assert_int_equal(gv_cuda_init(cuda, &count, &version, &err), 0);
        assert_int_equal(count, 2);
        assert_int_equal(version, 12040);
        char *name = NULL;
        assert_int_equal(gv_cuda_device_name(cuda, 1, &name, &err), 0);
        assert_string_equal(name, "Fake GPU 1");
        free(name);
        gv_cudacheck_result_t res = { 0 };
        assert_int_equal(gv_cudacheck_vector_add(cuda, 0, GV_CUDACHECK_DEFAULT_ELEMENTS, &res, &err), 0);
        assert_null(err);
        assert_int_equal(res.elements, GV_CUDACHECK_DEFAULT_ELEMENTS);
        assert_int_equal(res.bytes, 48u << 20);
        assert_true(res.total_ms >= res.kernel_ms && res.kernel_ms >= 0);
        /* A count that is not a multiple of the block size: the last block is partial. */
        assert_int_equal(gv_cudacheck_vector_add(cuda, 1, 1000, &res, &err), 0);
        assert_int_equal(res.elements, 1000);
        assert_int_equal(live_allocations(cuda), 0);
        /* Bad arguments. */
        res.elements = 77;
        assert_int_equal(gv_cudacheck_vector_add(cuda, 0, 0, &res, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        gv_error_free(&err);
        assert_int_equal(gv_cudacheck_vector_add(cuda, 0, (size_t) GV_CUDACHECK_MAX_ELEMENTS + 1, &res, &err),
                         -EINVAL);
        gv_error_free(&err);
        assert_int_equal(gv_cudacheck_vector_add(cuda, 2, 1000, &res, &err), -EIO);
        assert_non_null(strstr(err->msg, "cuDeviceGet: invalid device ordinal (CUDA_ERROR_INVALID_DEVICE, 101)"));
        gv_error_free(&err);
        assert_int_equal(res.elements, 77); /* untouched on failure */
        gv_cuda_close(&cuda);
        assert_null(cuda);
}

/* Each fault mode: the error text, its reason, and no device memory left behind. */
static void test_vector_add_faults(void **state)
{
        (void) state;
        static const struct {
                const char *mode;
                int ret;
                gv_reason_t reason;
                const char *text;
        } cases[] = {
                { "wrong", -EIO, GV_REASON_WORKLOAD, "1 of 1000 results wrong, first at index 500: got " },
                { "skip-last", -EIO, GV_REASON_WORKLOAD, "1 of 1000 results wrong, first at index 999: got " },
                { "launch-fail", -EIO, GV_REASON_WORKLOAD,
                  "launch kernel (cuLaunchKernel): fake: unspecified launch failure (CUDA_ERROR_LAUNCH_FAILED, 719)" },
                { "oom", -ENOMEM, GV_REASON_WORKLOAD,
                  "allocate device memory (cuMemAlloc_v2): out of memory (CUDA_ERROR_OUT_OF_MEMORY, 2)" },
                { "bad-ptx", -EIO, GV_REASON_WORKLOAD,
                  "load PTX module (cuModuleLoadData): fake: a PTX JIT compilation failed (CUDA_ERROR_INVALID_PTX, 218)" },
        };
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        unsetenv("FAKE_CUDA_FAIL_DEVICE");
        gv_error_t *err = NULL;
        gv_cuda_t *cuda = NULL;
        unsetenv("FAKE_CUDA_MODE");
        assert_int_equal(gv_cudacheck_open(fake_path(), &cuda, &err), 0);
        assert_int_equal(gv_cuda_init(cuda, NULL, NULL, &err), 0);
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                setenv("FAKE_CUDA_MODE", cases[i].mode, 1);
                gv_cudacheck_result_t res = { 0 };
                int r = gv_cudacheck_vector_add(cuda, 0, 1000, &res, &err);
                if (r != cases[i].ret || !err || !strstr(err->msg, cases[i].text))
                        fail_msg("mode %s: got %d '%s'", cases[i].mode, r, err ? err->msg : "(no error)");
                assert_int_equal(err->reason, cases[i].reason);
                assert_int_equal(res.elements, 0);
                assert_int_equal(live_allocations(cuda), 0);
                gv_error_free(&err);
        }
        /* A fault on device 1 only leaves device 0 passing. */
        setenv("FAKE_CUDA_MODE", "wrong", 1);
        setenv("FAKE_CUDA_FAIL_DEVICE", "1", 1);
        gv_cudacheck_result_t res = { 0 };
        assert_int_equal(gv_cudacheck_vector_add(cuda, 0, 1000, &res, &err), 0);
        assert_int_equal(gv_cudacheck_vector_add(cuda, 1, 1000, &res, &err), -EIO);
        gv_error_free(&err);
        unsetenv("FAKE_CUDA_MODE");
        unsetenv("FAKE_CUDA_FAIL_DEVICE");
        gv_cuda_close(&cuda);
}

static void test_init_failure(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        gv_cuda_t *cuda = NULL;
        assert_int_equal(gv_cudacheck_open(fake_path(), &cuda, &err), 0);
        setenv("FAKE_CUDA_MODE", "stub", 1);
        int count = -7;
        assert_int_equal(gv_cuda_init(cuda, &count, NULL, &err), -ENODEV);
        assert_int_equal(err->reason, GV_REASON_DRIVER_NOT_LOADED);
        assert_string_equal(err->msg, "cuInit: fake: CUDA driver is a stub library (CUDA_ERROR_STUB_LIBRARY, 34)");
        assert_int_equal(count, -7);
        gv_error_free(&err);
        /* A code the driver has no text for and we have no name for. */
        assert_int_equal(gv_cuda_error(&err, cuda, (CUresult) 4242, "x"), -EIO);
        assert_string_equal(err->msg, "x: unknown error (CUDA_ERROR, 4242)");
        gv_error_free(&err);
        /* Without a library at all, our own texts. */
        assert_int_equal(gv_cuda_error(&err, NULL, CUDA_ERROR_NO_DEVICE, "cuInit"), -ENODEV);
        assert_string_equal(err->msg, "cuInit: no CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE, 100)");
        gv_error_free(&err);
        unsetenv("FAKE_CUDA_MODE");
        gv_cuda_close(&cuda);
}

int main(int argc, char **argv)
{
        if (argc > 1)
                setenv("GV_TEST_FAKE_CUDA", argv[1], 1);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ptx_header),      cmocka_unit_test(test_ptx_body),
                cmocka_unit_test(test_ptx_registers),   cmocka_unit_test(test_pattern),
                cmocka_unit_test(test_visible_parse),   cmocka_unit_test(test_visible_resolve),
                cmocka_unit_test(test_visible_select),
                cmocka_unit_test(test_open_errors),     cmocka_unit_test(test_vector_add_ok),
                cmocka_unit_test(test_vector_add_faults), cmocka_unit_test(test_init_failure),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
