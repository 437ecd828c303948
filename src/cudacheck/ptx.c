/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vector-add kernel as PTX text, written by hand from the PTX ISA
 * reference (docs.nvidia.com/cuda/parallel-thread-execution: ".version",
 * ".target", ".address_size", ".entry", "ld.param", "mad.lo", "setp",
 * "cvta.to.global", "mul.wide", "ld.global", "add.rn.f32", "st.global").
 * ISA 6.0 / sm_50 is old enough that every current driver JIT-compiles it
 * for whatever GPU it drives.  add.rn keeps the sum exact (no contraction).
 */
#include "cudacheck.h"

#include <string.h>

const char gv_cudacheck_ptx[] =
        "//\n"
        "// gpu-validator cuda-check: c[i] = a[i] + b[i], one thread per element\n"
        "//\n"
        ".version 6.0\n"
        ".target sm_50\n"
        ".address_size 64\n"
        "\n"
        ".visible .entry " GV_CUDACHECK_KERNEL "(\n"
        "\t.param .u64 p_a,\n"
        "\t.param .u64 p_b,\n"
        "\t.param .u64 p_c,\n"
        "\t.param .u32 p_n\n"
        ")\n"
        "{\n"
        "\t.reg .pred %p<2>;\n"
        "\t.reg .f32 %f<4>;\n"
        "\t.reg .b32 %r<6>;\n"
        "\t.reg .b64 %rd<11>;\n"
        "\n"
        "\tld.param.u64 %rd1, [p_a];\n"
        "\tld.param.u64 %rd2, [p_b];\n"
        "\tld.param.u64 %rd3, [p_c];\n"
        "\tld.param.u32 %r2, [p_n];\n"
        "\tmov.u32 %r3, %ctaid.x;\n"
        "\tmov.u32 %r4, %ntid.x;\n"
        "\tmov.u32 %r5, %tid.x;\n"
        "\tmad.lo.u32 %r1, %r3, %r4, %r5;\n"
        "\tsetp.ge.u32 %p1, %r1, %r2;\n"
        "\t@%p1 bra DONE;\n"
        "\tcvta.to.global.u64 %rd4, %rd1;\n"
        "\tcvta.to.global.u64 %rd5, %rd2;\n"
        "\tcvta.to.global.u64 %rd6, %rd3;\n"
        "\tmul.wide.u32 %rd7, %r1, 4;\n"
        "\tadd.s64 %rd8, %rd4, %rd7;\n"
        "\tadd.s64 %rd9, %rd5, %rd7;\n"
        "\tadd.s64 %rd10, %rd6, %rd7;\n"
        "\tld.global.f32 %f1, [%rd8];\n"
        "\tld.global.f32 %f2, [%rd9];\n"
        "\tadd.rn.f32 %f3, %f1, %f2;\n"
        "\tst.global.f32 [%rd10], %f3;\n"
        "DONE:\n"
        "\tret;\n"
        "}\n";

size_t gv_cudacheck_bytes(size_t elements)
{
        return 3 * elements * sizeof(float);
}

/*
 * The pattern: a[i] = i mod 8191, b[i] = 2 * (i mod 4093) + 0.5.  Both stay
 * below 2^13, so every value and sum is exact in a float, and neighbouring
 * elements differ (a kernel that writes the wrong index is caught).
 */
static float pattern_a(size_t i)
{
        return (float) (i % 8191u);
}

static float pattern_b(size_t i)
{
        return (float) (2u * (i % 4093u)) + 0.5f;
}

void gv_cudacheck_fill(float *a, float *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                a[i] = pattern_a(i);
                b[i] = pattern_b(i);
        }
}

size_t gv_cudacheck_verify(const float *c, size_t n, size_t *first_bad)
{
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
                float want = pattern_a(i) + pattern_b(i);
                /* Exact comparison: the pattern is exact, so any difference is a fault. */
                /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison,cert-exp42-c,cert-flp37-c): bitwise on purpose: the pattern is exact, any differing bit (a NaN, -0.0) is a fault */
                if (memcmp(&c[i], &want, sizeof(want)) != 0) {
                        if (bad == 0 && first_bad)
                                *first_bad = i;
                        bad++;
                }
        }
        return bad;
}
