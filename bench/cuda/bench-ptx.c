/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Figures of the mock libcuda's PTX interpreter (mock/cuda/ptx.h), on one
 * worker thread so they are per core:
 *
 *  - throughput in simple instructions a second: a kernel whose loop body is
 *    integer adds, xors, shifts and a multiply-add (hand-written PTX below),
 *    counted as thread-instructions; once as the interpreter runs it, once
 *    without its uniform and affine shortcuts (every instruction on rows);
 *  - each test kernel nvcc compiled (tests/unit/mock-cuda/kernels, the PTX
 *    file given as argument) against the same computation in plain C,
 *    both timed in CPU time of this thread, best of ROUNDS.
 *
 * Usage: bench-ptx [KERNELS.ptx] [ROUNDS]   (without the PTX file only the
 * throughput is measured; meson puts it in the build folder when nvcc is
 * installed: tests/unit/mock-cuda/kernels.ptx).  Prints figures only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock/cuda/ptx.h"

/* 8 simple instructions and a compare-and-branch per iteration, 256 iterations a thread. */
static const char simple_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry spin(.param .u64 out)\n{\n"
        " .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<3>;\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, 0;\n mov.u32 %r3, 7;\n"
        "LOOP:\n"
        " add.s32 %r3, %r3, %r1;\n xor.b32 %r4, %r3, 0x5bd1e995;\n shl.b32 %r5, %r4, 3;\n"
        " mad.lo.s32 %r3, %r5, 33, %r4;\n shr.u32 %r6, %r3, 7;\n and.b32 %r6, %r6, 1023;\n"
        " add.s32 %r3, %r3, %r6;\n add.s32 %r2, %r2, 1;\n"
        " setp.lt.u32 %p1, %r2, 256;\n @%p1 bra LOOP;\n"
        " ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n mul.wide.u32 %rd2, %r1, 4;\n"
        " add.s64 %rd1, %rd1, %rd2;\n st.global.u32 [%rd1], %r3;\n ret;\n}\n";

static double cpu_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool anywhere(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
        (void) ctx;
        (void) addr;
        *lo = 0;
        *hi = UINT64_MAX;
        return true;
}

/*
 * Runs @k over the grid; CPU seconds of the best of @rounds; *ops the thread-instructions of one run.
 * @plain: without the interpreter's uniform and affine shortcuts (gv_ptx_launch_t.plain).
 */
static double run_as(const gv_ptx_func_t *k, unsigned gx, unsigned gy, unsigned bx, unsigned by, const void *params,
                     int rounds, uint64_t *ops, bool plain)
{
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                gv_ptx_launch_t l = { .grid = { gx, gy, 1 }, .block = { bx, by, 1 }, .params = params,
                                      .range = anywhere, .workers = 1, .executed = ops, .plain = plain };
                char *msg = NULL;
                double t0 = cpu_s();
                gv_ptx_fault_t f = gv_ptx_run(k, &l, &msg);
                double t = cpu_s() - t0;
                if (f != GV_PTX_OK) {
                        fprintf(stderr, "bench-ptx: %s: %s\n", gv_ptx_func_name(k), msg ? msg : "fault");
                        exit(1);
                }
                free(msg);
                best = t < best ? t : best;
        }
        return best;
}

static double run(const gv_ptx_func_t *k, unsigned gx, unsigned gy, unsigned bx, unsigned by, const void *params,
                  int rounds, uint64_t *ops)
{
        return run_as(k, gx, gy, bx, by, params, rounds, ops, false);
}

static gv_ptx_module_t *load(const char *text, size_t len)
{
        gv_ptx_module_t *m = NULL;
        char *msg = NULL;
        if (gv_ptx_parse(text, len, &m, &msg) < 0) {
                fprintf(stderr, "bench-ptx: %s\n", msg ? msg : "out of memory");
                exit(1);
        }
        return m;
}

static void throughput(int rounds)
{
        gv_ptx_module_t *m = load(simple_ptx, sizeof(simple_ptx) - 1);
        enum { BLOCKS = 256, THREADS = 256 };
        uint32_t *out = calloc(BLOCKS * THREADS, sizeof(uint32_t));
        uint64_t ops = 0;
        void *p = out;
        /* the loop counter and its compare are uniform: the shortcuts run them once a block; without
         * them, every instruction on every thread's registers (the interpreter's raw rate) */
        for (int plain = 0; plain < 2; plain++) {
                double t = run_as(gv_ptx_entry(m, "spin"), BLOCKS, 1, THREADS, 1, &p, rounds, &ops, plain);
                printf("%-34s %12.0f M thread-instructions/s per core (%llu in %.1f ms)\n",
                       plain ? "  the same without shortcuts" : "simple integer instructions", (double) ops / t / 1e6,
                       (unsigned long long) ops, t * 1e3);
        }
        free(out);
        gv_ptx_free(m);
}

static void report(const char *name, double kernel, double c, uint64_t ops)
{
        printf("%-34s %9.2f ms interpreted %9.3f ms plain C %7.1fx  (%.0f M thread-instr/s)\n", name, kernel * 1e3,
               c * 1e3, kernel / c, (double) ops / kernel / 1e6);
}

/* C loops the compiler may not fold away: results go through a volatile sink. */
static volatile float sink_f;

static void bench_vector_add(const gv_ptx_module_t *m, int rounds)
{
        enum { N = 4 << 20 };
        float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *c = calloc(N, sizeof(float));
        for (int i = 0; i < N; i++) {
                a[i] = (float) (i % 8191);
                b[i] = 0.5f;
        }
        struct {
                float *a, *b, *c;
                int n;
        } p = { a, b, c, N };
        uint64_t ops = 0;
        double k = run(gv_ptx_entry(m, "vector_add"), N / 256, 1, 256, 1, &p, rounds, &ops);
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                double t0 = cpu_s();
                for (int i = 0; i < N; i++)
                        c[i] = a[i] + b[i];
                sink_f = c[N / 2];
                double t = cpu_s() - t0;
                best = t < best ? t : best;
        }
        report("vector_add, 4 Mi floats", k, best, ops);
        free(a);
        free(b);
        free(c);
}

static void bench_saxpy(const gv_ptx_module_t *m, int rounds)
{
        enum { N = 4 << 20 };
        float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++) {
                x[i] = (float) i;
                y[i] = 1.0f;
        }
        struct {
                int n;
                float alpha;
                float *x, *y;
        } p = { N, 2.0f, x, y };
        uint64_t ops = 0;
        double k = run(gv_ptx_entry(m, "saxpy"), 1024, 1, 256, 1, &p, rounds, &ops);
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                double t0 = cpu_s();
                for (int i = 0; i < N; i++)
                        y[i] = fmaf(2.0f, x[i], y[i]);
                sink_f = y[N / 3];
                double t = cpu_s() - t0;
                best = t < best ? t : best;
        }
        report("saxpy, 4 Mi floats (grid-stride)", k, best, ops);
        free(x);
        free(y);
}

static void bench_reduce(const gv_ptx_module_t *m, int rounds)
{
        enum { N = 1 << 20, B = 256 };
        double *in = malloc(N * sizeof(double)), *out = calloc(N / B, sizeof(double));
        for (int i = 0; i < N; i++)
                in[i] = (double) (i % 1000);
        struct {
                double *in, *out;
                unsigned n;
        } p = { in, out, N };
        uint64_t ops = 0;
        double k = run(gv_ptx_entry(m, "reduce_sum"), N / B, 1, B, 1, &p, rounds, &ops);
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                double t0 = cpu_s();
                for (int g = 0; g < N / B; g++) {
                        double part[B];
                        memcpy(part, in + g * B, sizeof(part));
                        for (int s = B / 2; s > 0; s >>= 1)
                                for (int t = 0; t < s; t++)
                                        part[t] += part[t + s];
                        out[g] = part[0];
                }
                sink_f = (float) out[1];
                double t = cpu_s() - t0;
                best = t < best ? t : best;
        }
        report("reduce_sum, 1 Mi doubles", k, best, ops);
        free(in);
        free(out);
}

static void bench_matmul(const gv_ptx_module_t *m, int rounds)
{
        enum { N = 256 };
        float *A = malloc(N * N * sizeof(float)), *Bm = malloc(N * N * sizeof(float)), *C = calloc(N * N, sizeof(float));
        for (int i = 0; i < N * N; i++) {
                A[i] = (float) (i % 7);
                Bm[i] = (float) (i % 5);
        }
        struct {
                float *a, *b, *c;
                int n;
        } p = { A, Bm, C, N };
        uint64_t ops = 0;
        double k = run(gv_ptx_entry(m, "matmul"), N / 16, N / 16, 16, 16, &p, rounds, &ops);
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                double t0 = cpu_s();
                for (int i = 0; i < N; i++)
                        for (int j = 0; j < N; j++) {
                                float acc = 0;
                                for (int q = 0; q < N; q++)
                                        acc = fmaf(A[i * N + q], Bm[q * N + j], acc);
                                C[i * N + j] = acc;
                        }
                sink_f = C[N + 1];
                double t = cpu_s() - t0;
                best = t < best ? t : best;
        }
        report("matmul, 256 x 256 floats", k, best, ops);
        free(A);
        free(Bm);
        free(C);
}

static void bench_histogram(const gv_ptx_module_t *m, int rounds)
{
        enum { N = 4 << 20 };
        unsigned char *data = malloc(N);
        unsigned bins[256], last = 0, cbins[256];
        int maxval = 0;
        for (int i = 0; i < N; i++)
                data[i] = (unsigned char) ((i * 2654435761u) >> 13);
        struct {
                unsigned char *d;
                unsigned n;
                unsigned *bins;
                int *maxval;
                unsigned *last;
        } p = { data, N, bins, &maxval, &last };
        memset(bins, 0, sizeof(bins));
        uint64_t ops = 0;
        double k = run(gv_ptx_entry(m, "histogram"), 64, 1, 256, 1, &p, 1, &ops); /* atomics accumulate: one run */
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
                double t0 = cpu_s();
                memset(cbins, 0, sizeof(cbins));
                for (int i = 0; i < N; i++)
                        cbins[data[i]]++;
                sink_f = (float) cbins[7];
                double t = cpu_s() - t0;
                best = t < best ? t : best;
        }
        report("histogram, 4 Mi bytes (atomics)", k, best, ops);
        free(data);
}

static char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                return NULL;
        char *buf = NULL;
        size_t cap = 0;
        *len = 0;
        for (size_t n; (cap - *len > 0 || (buf = realloc(buf, cap = cap * 2 + 65536))) &&
                       (n = fread(buf + *len, 1, cap - *len, f)) > 0;)
                *len += n;
        fclose(f);
        return buf;
}

int main(int argc, char **argv)
{
        int rounds = argc > 2 ? atoi(argv[2]) : 3;
        if (rounds < 1)
                rounds = 1;
        printf("PTX interpreter of the mock libcuda, one worker thread, CPU time, best of %d\n", rounds);
        throughput(rounds);
        if (argc < 2)
                return 0;
        size_t len = 0;
        char *text = slurp(argv[1], &len);
        if (!text) {
                fprintf(stderr, "bench-ptx: cannot read %s\n", argv[1]);
                return 1;
        }
        gv_ptx_module_t *m = load(text, len);
        bench_vector_add(m, rounds);
        bench_saxpy(m, rounds);
        bench_reduce(m, rounds);
        bench_matmul(m, rounds);
        bench_histogram(m, rounds);
        gv_ptx_free(m);
        free(text);
        return 0;
}
