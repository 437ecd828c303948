// SPDX-License-Identifier: Apache-2.0
/*
 * The PTX interpreter's shortcuts (mock/cuda/ptx-shape.c: uniform and
 * affine values, one range check for a load or store whose address is
 * affine) against the interpreter without them (gv_ptx_launch_t.plain):
 * every kernel runs both ways and must leave the same bytes, the same fault
 * at the same line and address, and the same instruction count.
 *
 *  - random kernels: straight-line integer code (add, sub, mul, mad, shl,
 *    shr, logic, min/max, rem, mul.wide, mad.wide, cvt of every width,
 *    setp/selp, cvta), with guarded instructions and forward branches that
 *    split the block, over parameters that make 16- and 32-bit values wrap
 *    in the middle of a block, on blocks of 1 to 1,024 threads;
 *  - memory: a partial last block, a reversed index, a store of every
 *    thread to one address, a load of a uniform global address, shared
 *    memory through its own and the generic space, 8-, 16- and 64-bit
 *    accesses; each access one element past its allocation or window, and
 *    misaligned, must fault where the per-thread path faults.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mock/cuda/ptx.h"

/* ------------------------------------------------------------------ */
/* running a kernel both ways                                          */

/* The allocations a launch may touch (the range callback's view of device memory). */
typedef struct heap {
        uint8_t *buf[4];
        size_t bytes[4];
        size_t n;
        unsigned workers; /* run_both(): the shortcuts' run on this many workers (0: one) */
} heap_t;

static bool heap_range(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
        const heap_t *h = ctx;
        for (size_t i = 0; i < h->n; i++) {
                uint64_t b = (uint64_t) (uintptr_t) h->buf[i];
                if (addr >= b && addr < b + h->bytes[i]) {
                        *lo = b;
                        *hi = b + h->bytes[i];
                        return true;
                }
        }
        return false;
}

/* Bytes kept free around each buffer. */
#define GAP 1024

/* One way of running: the buffers after it, the fault, its message and the instruction count. */
typedef struct outcome {
        uint8_t *mem[4];
        gv_ptx_fault_t fault;
        char *msg;
        uint64_t executed;
} outcome_t;

/*
 * Runs entry @name of @ptx over grid x block with @init copied into fresh
 * buffers (@h's sizes), @params built by @make from the buffers' addresses.
 */
typedef void (*params_fn)(uint8_t *const buf[4], void *params, const void *arg);

static outcome_t run_once(const gv_ptx_func_t *f, const heap_t *init, const unsigned grid[3],
                          const unsigned block[3], params_fn make, const void *arg, bool plain, unsigned workers)
{
        outcome_t o = { 0 };
        heap_t h = { .n = init->n };
        uint8_t *arena[4];
        for (size_t i = 0; i < init->n; i++) { /* GAP bytes around each buffer: a fault address names one */
                h.bytes[i] = init->bytes[i];
                arena[i] = malloc(init->bytes[i] + 2 * GAP);
                assert_non_null(arena[i]);
                h.buf[i] = arena[i] + GAP;
                memcpy(h.buf[i], init->buf[i], init->bytes[i]);
        }
        gv_ptx_params_t pl = gv_ptx_func_params(f);
        uint8_t *params = calloc(1, pl.bytes + 8);
        assert_non_null(params);
        make(h.buf, params, arg);
        gv_ptx_launch_t l = { .grid = { grid[0], grid[1], grid[2] }, .block = { block[0], block[1], block[2] },
                              .params = params, .range = heap_range, .range_ctx = &h, .workers = workers,
                              .executed = &o.executed, .plain = plain };
        o.fault = gv_ptx_run(f, &l, &o.msg);
        free(params);
        for (size_t i = 0; i < h.n; i++) {
                /* addresses differ between the runs: the message's is made relative to its buffer */
                uint64_t b = (uint64_t) (uintptr_t) h.buf[i];
                char *at = o.msg ? strstr(o.msg, " at 0x") : NULL;
                unsigned long long a = at ? strtoull(at + 6, NULL, 16) : 0;
                if (at && a + GAP / 2 >= b && a < b + h.bytes[i] + GAP / 2)
                        snprintf(at, strlen(at) + 1, " at buf%zu%+lld", i, (long long) (a - b));
                o.mem[i] = malloc(h.bytes[i]);
                assert_non_null(o.mem[i]);
                memcpy(o.mem[i], h.buf[i], h.bytes[i]);
                free(arena[i]);
        }
        return o;
}

static void outcome_free(outcome_t *o, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(o->mem[i]);
        free(o->msg);
}

/* Runs both ways and asserts they agree; the shortcut's outcome is returned (the caller frees it). */
static outcome_t run_both(const char *ptx, const char *name, const heap_t *init, const unsigned grid[3],
                          const unsigned block[3], params_fn make, const void *arg)
{
        gv_ptx_module_t *m = NULL;
        char *err = NULL;
        if (gv_ptx_parse(ptx, strlen(ptx), &m, &err) != 0)
                fail_msg("parse: %s\n%s", err ? err : "?", ptx);
        const gv_ptx_func_t *f = gv_ptx_entry(m, name);
        assert_non_null(f);
        outcome_t ref = run_once(f, init, grid, block, make, arg, true, 1);
        outcome_t got = run_once(f, init, grid, block, make, arg, false, init->workers ? init->workers : 1);
        bool same = ref.fault == got.fault && ref.executed == got.executed &&
                    ((!ref.msg && !got.msg) || (ref.msg && got.msg && strcmp(ref.msg, got.msg) == 0));
        for (size_t i = 0; i < init->n && same; i++)
                for (size_t k = 0; k < init->bytes[i] && same; k++)
                        if (ref.mem[i][k] != got.mem[i][k]) {
                                print_error("buffer %zu byte %zu: plain %02x, shapes %02x\n", i, k, ref.mem[i][k],
                                            got.mem[i][k]);
                                same = false;
                        }
        if (!same) {
                fputs(ptx, stderr); /* whole: cmocka cuts its messages short */
                fail_msg("block %ux%ux%u grid %ux%ux%u: plain: fault %d '%s' %llu instructions; shapes: fault %d "
                         "'%s' %llu instructions\n%s",
                         block[0], block[1], block[2], grid[0], grid[1], grid[2], ref.fault,
                         ref.msg ? ref.msg : "", (unsigned long long) ref.executed, got.fault,
                         got.msg ? got.msg : "", (unsigned long long) got.executed, "(above)");
        }
        outcome_free(&ref, init->n);
        gv_ptx_free(m);
        free(err);
        return got;
}

/* ------------------------------------------------------------------ */
/* random integer kernels                                              */

typedef struct rng {
        uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
        r->s ^= r->s << 13;
        r->s ^= r->s >> 7;
        r->s ^= r->s << 17;
        return r->s;
}

static unsigned pick(rng_t *r, unsigned n)
{
        return (unsigned) (next(r) % n);
}

/* Immediates where the shortcuts' edges are: 0, 1, small, powers of two, around 2^15, 2^31, 2^32. */
static long long imm(rng_t *r)
{
        static const long long v[] = { 0,   1,     2,     3,      4,          7,          8,          31,
                                       32,  33,    -1,    -5,     255,        32767,      32768,      65535,
                                       4096, 1 << 20, 0x7fffffff, 0x80000000, 0xffffffff, 0x7ffffff0, 1000003 };
        return pick(r, 4) == 0 ? (long long) (next(r) & 0xffffffff) : v[pick(r, sizeof(v) / sizeof(v[0]))];
}

/* A buffer that grows by appends (the kernel's text). */
typedef struct text {
        char *s;
        size_t n, cap;
} text_t;

static void put(text_t *t, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (t->n + (size_t) k + 1 > t->cap) {
                t->cap = (t->n + (size_t) k + 1) * 2;
                t->s = realloc(t->s, t->cap);
                assert_non_null(t->s);
        }
        va_start(ap, fmt);
        vsnprintf(t->s + t->n, (size_t) k + 1, fmt, ap);
        va_end(ap);
        t->n += (size_t) k;
}

/* 32-bit registers the body may write: %r7 (the global index) and %r4 (tid) stay. */
static unsigned r32(rng_t *r)
{
        static const unsigned v[] = { 0, 1, 2, 3, 5, 6, 8, 9, 10, 11 };
        return v[pick(r, 10)];
}

/* A 32-bit source: a register or an immediate. */
static void src32(text_t *t, rng_t *r)
{
        if (pick(r, 3) == 0)
                put(t, "%lld", imm(r));
        else
                put(t, "%%r%u", pick(r, 12));
}

static void guard(text_t *t, rng_t *r)
{
        if (pick(r, 6) == 0)
                put(t, "@%s%%p%u ", pick(r, 2) ? "!" : "", pick(r, 3));
}

/* A setp: 32-bit mostly; 16- and 64-bit too (affine against uniform, wrapping or not). */
static void random_setp(text_t *t, rng_t *r)
{
        static const char *const cmp[] = { "lt", "ge", "eq", "ne", "gt", "le" };
        unsigned wd = pick(r, 4), p = pick(r, 3);
        const char *c = cmp[pick(r, 6)], *sg = pick(r, 2) ? "s" : "u";
        if (wd == 0) {
                put(t, "setp.%s.%s16 %%p%u, %%h%u, %u", c, sg, p, pick(r, 4), (unsigned) imm(r) & 0xffff);
        } else if (wd == 1) {
                put(t, "setp.%s.%s64 %%p%u, %%rd%u, ", c, sg, p, pick(r, 7));
                if (pick(r, 2))
                        put(t, "%%rd%u", pick(r, 7));
                else
                        put(t, "%lld", imm(r));
        } else {
                put(t, "setp.%s.%s32 %%p%u, %%r%u, ", c, sg, p, pick(r, 12));
                src32(t, r);
        }
}

/* One random instruction of the body. */
// NOLINTNEXTLINE(readability-function-size): one case per kind of instruction
static void instruction(text_t *t, rng_t *r)
{
        static const char *const ops2[] = { "add", "sub", "mul.lo", "min", "max", "and", "or", "xor" };
        static const char *const ty[] = { "s32", "u32" };
        guard(t, r);
        switch (pick(r, 16)) {
        case 0: case 1: case 2:
                put(t, "%s.%s %%r%u, %%r%u, ", ops2[pick(r, 8)], ty[pick(r, 2)], r32(r), pick(r, 12));
                src32(t, r);
                break;
        case 3: case 4:
                put(t, "mad.lo.%s %%r%u, %%r%u, ", ty[pick(r, 2)], r32(r), pick(r, 12));
                src32(t, r);
                put(t, ", %%r%u", pick(r, 12));
                break;
        case 5:
                put(t, "%s %%r%u, %%r%u, ", pick(r, 3) ? "shl.b32" : pick(r, 2) ? "shr.u32" : "shr.s32", r32(r),
                    pick(r, 12));
                if (pick(r, 4))
                        put(t, "%u", pick(r, 40));
                else
                        put(t, "%%r%u", pick(r, 12));
                break;
        case 6: case 7: {
                bool mad = pick(r, 2);
                put(t, "%s.wide.%s %%rd%u, %%r%u, ", mad ? "mad" : "mul", ty[pick(r, 2)], pick(r, 6), pick(r, 12));
                src32(t, r);
                if (mad)
                        put(t, ", %%rd%u", pick(r, 7));
                break;
        }
        case 8: {
                static const char *const cv[] = { "cvt.u64.u32 %%rd%u, %%r%u", "cvt.s64.s32 %%rd%u, %%r%u",
                                                  "cvt.u32.u64 %%r%u, %%rd%u", "cvt.s32.s64 %%r%u, %%rd%u" };
                unsigned k = pick(r, 4);
                if (k < 2)
                        put(t, cv[k], pick(r, 6), pick(r, 12));
                else
                        put(t, cv[k], r32(r), pick(r, 7));
                break;
        }
        case 9: {
                static const char *const cv[] = { "cvt.u16.u32 %%h%u, %%r%u", "cvt.s16.s32 %%h%u, %%r%u" };
                static const char *const back[] = { "cvt.u32.u16 %%r%u, %%h%u", "cvt.s32.s16 %%r%u, %%h%u",
                                                    "cvt.s64.s16 %%rd%u, %%h%u" };
                if (pick(r, 2))
                        put(t, cv[pick(r, 2)], pick(r, 4), pick(r, 12));
                else {
                        unsigned k = pick(r, 3);
                        put(t, back[k], k == 2 ? pick(r, 6) : r32(r), pick(r, 4));
                }
                break;
        }
        case 10:
                if (pick(r, 2))
                        put(t, "%s.u16 %%h%u, %%h%u, %u", pick(r, 2) ? "add" : "mul.lo", pick(r, 4), pick(r, 4),
                            (unsigned) imm(r) & 0xffff);
                else
                        put(t, "mul.wide.%s %%r%u, %%h%u, %%h%u", pick(r, 2) ? "u16" : "s16", r32(r), pick(r, 4),
                            pick(r, 4));
                break;
        case 11: {
                static const char *const ops64[] = { "add.s64", "sub.s64", "mul.lo.s64", "shl.b64" };
                unsigned k = pick(r, 4);
                put(t, "%s %%rd%u, %%rd%u, ", ops64[k], pick(r, 6), pick(r, 7));
                if (k == 3)
                        put(t, "%u", pick(r, 70));
                else if (pick(r, 2))
                        put(t, "%%rd%u", pick(r, 7));
                else
                        put(t, "%lld", imm(r));
                break;
        }
        case 12:
                random_setp(t, r);
                break;
        case 13:
                put(t, "selp.b32 %%r%u, %%r%u, ", r32(r), pick(r, 12));
                src32(t, r);
                put(t, ", %%p%u", pick(r, 3));
                break;
        case 14:
                if (pick(r, 2))
                        put(t, "rem.u32 %%r%u, %%r%u, %u", r32(r), pick(r, 12), 1 + pick(r, 100));
                else
                        put(t, "cvta.to.global.u64 %%rd%u, %%rd%u", pick(r, 6), pick(r, 7));
                break;
        default:
                put(t, "mov.u32 %%r%u, ", r32(r));
                src32(t, r);
                break;
        }
        put(t, ";\n");
}

/* The values a random kernel leaves, each stored to out[k * T + global index] as 64 bits. */
enum { N_R32 = 12, N_R64 = 7, N_R16 = 4, N_PRED = 3, N_VALUES = N_R32 + N_R64 + N_R16 + N_PRED };

static void prologue(text_t *t)
{
        put(t, ".version 7.0\n.target sm_50\n.address_size 64\n"
               ".visible .entry k(.param .u64 out, .param .u32 p0, .param .u32 p1, .param .u32 p2, .param .u32 p3)\n"
               "{\n .reg .pred %%p<4>;\n .reg .b16 %%h<4>;\n .reg .b32 %%r<12>;\n .reg .b64 %%rd<7>;\n"
               " .reg .b64 %%ea<3>;\n"
               " ld.param.u64 %%ea0, [out];\n ld.param.u32 %%r0, [p0];\n ld.param.u32 %%r1, [p1];\n"
               " ld.param.u32 %%r2, [p2];\n ld.param.u32 %%r3, [p3];\n"
               " mov.u32 %%r4, %%tid.x;\n mov.u32 %%r5, %%ctaid.x;\n mov.u32 %%r6, %%ntid.x;\n"
               " mov.u32 %%r8, %%tid.y;\n mov.u32 %%r9, %%ntid.y;\n mad.lo.u32 %%r10, %%r8, %%r6, %%r4;\n"
               " mul.lo.u32 %%r11, %%r6, %%r9;\n mad.lo.u32 %%r7, %%r5, %%r11, %%r10;\n"
               " add.u32 %%r8, %%r0, %%r4;\n sub.u32 %%r9, %%r1, %%r7;\n mul.lo.u32 %%r10, %%r2, %%r7;\n"
               " xor.b32 %%r11, %%r3, %%r4;\n"
               " cvt.u64.u32 %%rd0, %%r7;\n mul.wide.s32 %%rd1, %%r0, 8;\n mul.wide.u32 %%rd2, %%r7, 4;\n"
               " cvt.s64.s32 %%rd3, %%r8;\n mul.wide.s32 %%rd4, %%r9, -3;\n add.s64 %%rd5, %%rd2, %%rd1;\n"
               " mov.u64 %%rd6, 0x123456789;\n"
               " cvt.u16.u32 %%h0, %%r7;\n cvt.u16.u32 %%h1, %%r1;\n cvt.u16.u32 %%h2, %%r8;\n mov.u16 %%h3, 65535;\n"
               " setp.lt.u32 %%p0, %%r4, %%r0;\n setp.ge.s32 %%p1, %%r7, 5;\n setp.ne.u32 %%p2, %%r3, 0;\n");
}

/* Every register to out[k * @threads + global index]. */
static void epilogue(text_t *t, unsigned threads)
{
        size_t k = 0, step = (size_t) threads * 8;
        put(t, " mad.wide.u32 %%ea1, %%r7, 8, %%ea0;\n");
        for (unsigned i = 0; i < N_R32; i++, k++)
                put(t, " cvt.u64.u32 %%ea2, %%r%u;\n st.global.u64 [%%ea1+%zu], %%ea2;\n", i, k * step);
        for (unsigned i = 0; i < N_R64; i++, k++)
                put(t, " st.global.u64 [%%ea1+%zu], %%rd%u;\n", k * step, i);
        for (unsigned i = 0; i < N_R16; i++, k++)
                put(t, " cvt.u64.u16 %%ea2, %%h%u;\n st.global.u64 [%%ea1+%zu], %%ea2;\n", i, k * step);
        for (unsigned i = 0; i < N_PRED; i++, k++)
                put(t, " selp.u64 %%ea2, 1, 0, %%p%u;\n st.global.u64 [%%ea1+%zu], %%ea2;\n", i, k * step);
        put(t, " ret;\n}\n");
}

/* A random kernel of @len instructions, with forward branches that split the block now and then. */
static char *random_kernel(rng_t *r, unsigned len, unsigned threads)
{
        text_t t = { 0 };
        prologue(&t);
        unsigned open = 0, label = 0;
        for (unsigned i = 0; i < len; i++) {
                if (!open && pick(r, 8) == 0) {
                        /* against tid (splits the block), or two parameters (uniform) */
                        if (pick(r, 3))
                                put(&t, " setp.lt.u32 %%p3, %%r4, %u;\n", pick(r, 40));
                        else
                                put(&t, " setp.lt.u32 %%p3, %%r0, %%r1;\n");
                        put(&t, " @%s%%p3 bra L%u;\n", pick(r, 2) ? "!" : "", label);
                        open = 1 + pick(r, 4);
                }
                put(&t, " ");
                instruction(&t, r);
                if (open && --open == 0)
                        put(&t, "L%u:\n", label++);
        }
        if (open)
                put(&t, "L%u:\n", label);
        epilogue(&t, threads);
        return t.s;
}

typedef struct rparams {
        uint32_t p[4];
} rparams_t;

static void random_params(uint8_t *const buf[4], void *params, const void *arg)
{
        const rparams_t *rp = arg;
        uint64_t out = (uint64_t) (uintptr_t) buf[0];
        memcpy(params, &out, 8);
        memcpy((uint8_t *) params + 8, rp->p, sizeof(rp->p));
}

static const struct {
        unsigned grid, block[3];
} shapes_of_launch[] = {
        { 3, { 1, 1, 1 } },   { 2, { 7, 1, 1 } },   { 3, { 32, 1, 1 } }, { 2, { 100, 1, 1 } },
        { 2, { 256, 1, 1 } }, { 1, { 1024, 1, 1 } }, { 2, { 4, 3, 1 } },  { 2, { 16, 16, 1 } },
};

/* Random kernels, the seed from GV_PTX_SEED (default 1) and their number from GV_PTX_KERNELS (default 300). */
static void test_random_kernels(void **state)
{
        (void) state;
        const char *seed = getenv("GV_PTX_SEED"), *count = getenv("GV_PTX_KERNELS");
        rng_t r = { seed ? strtoull(seed, NULL, 0) | 1 : 0x9e3779b97f4a7c15ull };
        unsigned kernels = count ? (unsigned) strtoul(count, NULL, 0) : 300;
        for (unsigned i = 0; i < kernels; i++) {
                unsigned c = pick(&r, sizeof(shapes_of_launch) / sizeof(shapes_of_launch[0]));
                const unsigned *b = shapes_of_launch[c].block;
                unsigned grid[3] = { shapes_of_launch[c].grid, 1, 1 }, threads = grid[0] * b[0] * b[1] * b[2];
                char *ptx = random_kernel(&r, 10 + pick(&r, 50), threads);
                rparams_t rp;
                for (int k = 0; k < 4; k++)
                        rp.p[k] = (uint32_t) imm(&r);
                size_t bytes = (size_t) N_VALUES * threads * 8;
                heap_t init = { .n = 1, .bytes = { bytes } };
                init.buf[0] = calloc(1, bytes);
                assert_non_null(init.buf[0]);
                outcome_t o = run_both(ptx, "k", &init, grid, b, random_params, &rp);
                if (o.fault != GV_PTX_OK)
                        fail_msg("kernel %u: %s\n%s", i, o.msg ? o.msg : "fault", ptx);
                outcome_free(&o, 1);
                free(init.buf[0]);
                free(ptx);
        }
}

/* ------------------------------------------------------------------ */
/* memory                                                              */

/*
 * dst[i] = src[s * i + o] + 1 for i < n (s, o: parameters; s = -1,
 * o = n - 1 reverses), elements of @ty (u8, u16, u32, u64) in a register of
 * @reg bits; then every thread stores its index to tail[0] (one address)
 * and reads src[0] (one address) into tail[1 + i].
 */
static char *copy_kernel(const char *ty, unsigned size, unsigned reg)
{
        char *s = NULL;
        int r = asprintf(&s,
                         ".version 7.0\n.target sm_50\n.address_size 64\n"
                         ".visible .entry copy(.param .u64 src, .param .u64 dst, .param .u64 tail, .param .u32 n,"
                         " .param .u32 s, .param .u32 o)\n{\n"
                         " .reg .pred %%p<2>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<12>;\n .reg .b%u %%v<3>;\n"
                         " ld.param.u64 %%rd1, [src];\n ld.param.u64 %%rd2, [dst];\n ld.param.u64 %%rd3, [tail];\n"
                         " ld.param.u32 %%r1, [n];\n ld.param.u32 %%r2, [s];\n ld.param.u32 %%r3, [o];\n"
                         " mov.u32 %%r4, %%ctaid.x;\n mov.u32 %%r5, %%ntid.x;\n mov.u32 %%r6, %%tid.x;\n"
                         " mad.lo.s32 %%r0, %%r4, %%r5, %%r6;\n setp.ge.u32 %%p1, %%r0, %%r1;\n @%%p1 bra DONE;\n"
                         " mad.lo.s32 %%r7, %%r0, %%r2, %%r3;\n"
                         " cvta.to.global.u64 %%rd4, %%rd1;\n mul.wide.s32 %%rd5, %%r7, %u;\n add.s64 %%rd6, %%rd4, %%rd5;\n"
                         " ld.global.%s %%v0, [%%rd6];\n add.%s %%v1, %%v0, 1;\n"
                         " mul.wide.u32 %%rd7, %%r0, %u;\n add.s64 %%rd8, %%rd2, %%rd7;\n st.global.%s [%%rd8], %%v1;\n"
                         " cvt.u64.u32 %%rd9, %%r0;\n st.global.u64 [%%rd3], %%rd9;\n"
                         " ld.global.%s %%v2, [%%rd1];\n mul.wide.u32 %%rd10, %%r0, %u;\n add.s64 %%rd11, %%rd3, %%rd10;\n"
                         " st.global.%s [%%rd11+8], %%v2;\n"
                         "DONE:\n ret;\n}\n",
                         reg, size, ty, reg == 64 ? "u64" : reg == 16 ? "u16" : "u32", size, ty, ty, size, ty);
        assert_true(r > 0);
        return s;
}

typedef struct cparams {
        uint32_t n, s, o;
        int64_t src_shift; /* bytes added to the source pointer (misaligned) */
        size_t src_trim;   /* bytes the source's allocation lacks (its last element only partly inside) */
} cparams_t;

static void copy_params(uint8_t *const buf[4], void *params, const void *arg)
{
        const cparams_t *c = arg;
        uint64_t p[3] = { (uint64_t) (uintptr_t) buf[0] + (uint64_t) c->src_shift, (uint64_t) (uintptr_t) buf[1],
                          (uint64_t) (uintptr_t) buf[2] };
        memcpy(params, p, sizeof(p));
        memcpy((uint8_t *) params + 24, &c->n, 4);
        memcpy((uint8_t *) params + 28, &c->s, 4);
        memcpy((uint8_t *) params + 32, &c->o, 4);
}

/* Runs the copy kernel of @size-byte elements, @elements allocated, with @c; the fault. */
static gv_ptx_fault_t copy_case(unsigned size, unsigned block, size_t elements, const cparams_t *c,
                                uint64_t *first_out)
{
        static const char *const ty[] = { [1] = "u8", [2] = "u16", [4] = "u32", [8] = "u64" };
        char *ptx = copy_kernel(ty[size], size, size == 8 ? 64 : size == 2 ? 16 : 32);
        heap_t init = { .n = 3, .bytes = { elements * size - c->src_trim, elements * size, (elements + 1) * size + 8 } };
        for (size_t i = 0; i < 3; i++) {
                init.buf[i] = malloc(init.bytes[i]);
                assert_non_null(init.buf[i]);
                for (size_t k = 0; k < init.bytes[i]; k++)
                        init.buf[i][k] = (uint8_t) (k * 7 + i);
        }
        unsigned grid[3] = { (c->n + block - 1) / block, 1, 1 }, b[3] = { block, 1, 1 };
        outcome_t o = run_both(ptx, "copy", &init, grid, b, copy_params, c);
        gv_ptx_fault_t f = o.fault;
        if (first_out)
                memcpy(first_out, o.mem[1], 8);
        outcome_free(&o, 3);
        for (size_t i = 0; i < 3; i++)
                free(init.buf[i]);
        free(ptx);
        return f;
}

/* The copy kernel of @size-byte elements over 1,000 elements in blocks of @b with @c: its fault. */
#define COPY(...) copy_case(z, b, 1000, &(cparams_t) { __VA_ARGS__ }, NULL)

static void test_affine_memory(void **state)
{
        (void) state;
        static const unsigned sizes[] = { 1, 2, 4, 8 }, blocks[] = { 1, 33, 256 };
        const uint32_t last = 999, none = UINT32_MAX;
        for (size_t i = 0; i < 4; i++)
                for (size_t j = 0; j < 3; j++) {
                        unsigned z = sizes[i], b = blocks[j];
                        /* forwards, a partial last block; backwards (stride -1); every other one from the middle */
                        assert_int_equal(COPY(.n = 1000, .s = 1), GV_PTX_OK);
                        assert_int_equal(COPY(.n = 1000, .s = none, .o = last), GV_PTX_OK);
                        assert_int_equal(COPY(.n = 500, .s = 2, .o = 1), GV_PTX_OK);
                        /* one element past the source: the last thread's load faults (its address checked) */
                        assert_int_equal(COPY(.n = 1000, .s = 1, .o = 1), GV_PTX_ILLEGAL_ADDRESS);
                        /* backwards from one past the end: the first thread faults; one before the start */
                        assert_int_equal(COPY(.n = 1000, .s = none, .o = 1000), GV_PTX_ILLEGAL_ADDRESS);
                        assert_int_equal(COPY(.n = 1000, .s = 1, .o = none), GV_PTX_ILLEGAL_ADDRESS);
                        /* more threads than the destination holds (the source read at one address) */
                        assert_int_equal(COPY(.n = 1001), GV_PTX_ILLEGAL_ADDRESS);
                        if (z == 1)
                                continue;
                        /* the last element half outside its allocation; a source off its alignment */
                        assert_int_equal(COPY(.n = 1000, .s = 1, .src_trim = z / 2), GV_PTX_ILLEGAL_ADDRESS);
                        assert_int_equal(COPY(.n = 999, .s = 1, .src_shift = 1), GV_PTX_MISALIGNED);
                }
        /* the values themselves: dst[0] = src[0] + 1 for 4-byte elements, src bytes k * 7 */
        uint64_t first = 0;
        assert_int_equal(copy_case(4, 256, 1000, &(cparams_t) { .n = 1000, .s = 1 }, &first), GV_PTX_OK);
        assert_int_equal((uint32_t) first, 0x150e0700u + 1);
}

/*
 * Shared memory, affine offsets: part[t] = 3 t, then out[i] = part[ntid - 1 - t + k]
 * through the shared space and out[n + i] = part[t + k] through a generic
 * address (cvta), k a parameter that may reach past the 1,024 words.
 */
static const char shared_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry rev(.param .u64 out, .param .u32 k, .param .u32 n)\n{\n"
        " .shared .align 4 .b8 part[4096];\n"
        " .reg .b32 %r<12>;\n .reg .b64 %rd<12>;\n .reg .pred %p<2>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [k];\n ld.param.u32 %r9, [n];\n"
        " mov.u32 %r2, %tid.x;\n mov.u32 %r3, %ntid.x;\n mov.u32 %r4, %ctaid.x;\n"
        " mad.lo.s32 %r5, %r4, %r3, %r2;\n"
        " mov.u32 %r6, part;\n shl.b32 %r7, %r2, 2;\n add.s32 %r8, %r6, %r7;\n mul.lo.s32 %r10, %r2, 3;\n"
        " st.shared.u32 [%r8], %r10;\n bar.sync 0;\n"
        " sub.s32 %r11, %r3, %r2;\n add.s32 %r11, %r11, %r1;\n mad.lo.s32 %r11, %r11, 4, %r6;\n"
        " ld.shared.u32 %r10, [%r11+-4];\n"
        " mul.wide.u32 %rd2, %r5, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r10;\n"
        " mov.u64 %rd4, part;\n cvta.shared.u64 %rd5, %rd4;\n add.s32 %r7, %r2, %r1;\n"
        " mul.wide.u32 %rd6, %r7, 4;\n add.s64 %rd7, %rd5, %rd6;\n ld.u32 %r10, [%rd7];\n"
        " mul.wide.u32 %rd8, %r9, 4;\n add.s64 %rd9, %rd3, %rd8;\n st.global.u32 [%rd9], %r10;\n"
        " ret;\n}\n";

typedef struct sparams {
        uint32_t k, n;
} sparams_t;

static void shared_params(uint8_t *const buf[4], void *params, const void *arg)
{
        uint64_t out = (uint64_t) (uintptr_t) buf[0];
        memcpy(params, &out, 8);
        memcpy((uint8_t *) params + 8, arg, 8);
}

static gv_ptx_fault_t shared_case(unsigned block, unsigned grid, uint32_t k, uint32_t **out)
{
        uint32_t n = block * grid;
        heap_t init = { .n = 1, .bytes = { 2 * (size_t) n * 4 } };
        init.buf[0] = calloc(1, init.bytes[0]);
        assert_non_null(init.buf[0]);
        unsigned g[3] = { grid, 1, 1 }, b[3] = { block, 1, 1 };
        outcome_t o = run_both(shared_ptx, "rev", &init, g, b, shared_params, &(sparams_t) { k, n });
        *out = (uint32_t *) o.mem[0];
        free(o.msg);
        free(init.buf[0]);
        return o.fault;
}

static void test_affine_shared(void **state)
{
        (void) state;
        uint32_t *out;
        assert_int_equal(shared_case(256, 3, 0, &out), GV_PTX_OK);
        for (uint32_t i = 0; i < 3 * 256; i++) {
                assert_int_equal(out[i], 3 * (255 - i % 256));
                assert_int_equal(out[3 * 256 + i], 3 * (i % 256));
        }
        free(out);
        assert_int_equal(shared_case(1, 2, 0, &out), GV_PTX_OK);
        free(out);
        /* within the 4 KiB window, past what was written: zeros, no fault */
        assert_int_equal(shared_case(100, 2, 900, &out), GV_PTX_OK);
        assert_int_equal(out[0], 0);
        free(out);
        /* one word past the window: the last thread (its ld.shared, then its generic load) faults */
        assert_int_equal(shared_case(1024, 1, 1, &out), GV_PTX_ILLEGAL_ADDRESS);
        free(out);
        assert_int_equal(shared_case(1000, 1, 25, &out), GV_PTX_ILLEGAL_ADDRESS);
        free(out);
}

/*
 * The threads below k load a uniform address, a parameter and a sum of
 * uniform values while the others wait: those keep what they had.
 */
static const char keep_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry keep(.param .u64 out, .param .u32 k, .param .u32 q)\n{\n"
        " .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n .reg .pred %p<2>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [k];\n mov.u32 %r2, %tid.x;\n"
        " mov.u32 %r3, 7;\n mov.u32 %r4, 8;\n mov.u32 %r5, 9;\n mov.u32 %r6, %ntid.x;\n"
        " setp.ge.u32 %p1, %r2, %r1;\n @%p1 bra SKIP;\n"
        " ld.global.u32 %r3, [%rd1];\n ld.param.u32 %r4, [q];\n add.u32 %r5, %r6, %r1;\n"
        "SKIP:\n"
        " mul.wide.u32 %rd2, %r2, 12;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3+4], %r3;\n"
        " st.global.u32 [%rd3+8], %r4;\n st.global.u32 [%rd3+12], %r5;\n ret;\n}\n";

static void test_partial_uniform(void **state)
{
        (void) state;
        static const unsigned blocks[] = { 1, 2, 64, 1000 };
        for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
                unsigned b = blocks[i];
                heap_t init = { .n = 1, .bytes = { 12 * (size_t) b + 4 } };
                init.buf[0] = calloc(1, init.bytes[0]);
                assert_non_null(init.buf[0]);
                init.buf[0][0] = 42;
                sparams_t p = { b / 2 + (b == 1), 99 };
                unsigned g[3] = { 1, 1, 1 }, bl[3] = { b, 1, 1 };
                outcome_t o = run_both(keep_ptx, "keep", &init, g, bl, shared_params, &p);
                assert_int_equal(o.fault, GV_PTX_OK);
                uint32_t v[3];
                memcpy(v, o.mem[0] + 4 + 12 * (size_t) (b - 1), sizeof(v)); /* the last thread: not below k */
                if (b > 1) {
                        assert_int_equal(v[0], 7);
                        assert_int_equal(v[1], 8);
                        assert_int_equal(v[2], 9);
                }
                memcpy(v, o.mem[0] + 4, sizeof(v)); /* thread 0: below k */
                assert_int_equal(v[0], 42);
                assert_int_equal(v[1], 99);
                assert_int_equal(v[2], b + p.k);
                outcome_free(&o, 1);
                free(init.buf[0]);
        }
}

/*
 * Comparisons of an affine value with a uniform one, where the value,
 * read as the comparison reads it (signed), wraps in the middle of the
 * block and the two ends compare alike (threads 0 and 1,023 below the
 * bound, threads 255 or so above it): each thread's own answer, in 16,
 * 32 and 64 bits; and one that does not wrap, all alike.
 */
static const char wrap_ptx[] =
        ".version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry wrap(.param .u64 out)\n{\n"
        " .reg .pred %p<5>;\n .reg .b16 %h<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n"
        " add.u32 %r2, %r1, 0x7fffff00;\n setp.lt.s32 %p1, %r2, 0x7ffffff0;\n"
        " cvt.u16.u32 %h1, %r1;\n add.u16 %h1, %h1, 0x7f00;\n setp.lt.s16 %p2, %h1, 0x7ff0;\n"
        " cvt.u64.u32 %rd2, %r1;\n add.s64 %rd3, %rd2, 0x7fffffffffffff00;\n"
        " setp.lt.s64 %p3, %rd3, 0x7ffffffffffffff0;\n"
        " setp.ge.u32 %p4, %r2, 0x7ffffe00;\n"
        " mul.wide.u32 %rd4, %r1, 16;\n add.s64 %rd5, %rd1, %rd4;\n"
        " selp.u32 %r3, 1, 0, %p1;\n st.global.u32 [%rd5], %r3;\n"
        " selp.u32 %r4, 1, 0, %p2;\n st.global.u32 [%rd5+4], %r4;\n"
        " selp.u32 %r5, 1, 0, %p3;\n st.global.u32 [%rd5+8], %r5;\n"
        " selp.u32 %r6, 1, 0, %p4;\n st.global.u32 [%rd5+12], %r6;\n"
        " ret;\n}\n";

static void out_params(uint8_t *const buf[4], void *params, const void *arg)
{
        (void) arg;
        uint64_t out = (uint64_t) (uintptr_t) buf[0];
        memcpy(params, &out, 8);
}

static void test_compare_sign_wrap(void **state)
{
        (void) state;
        enum { N = 1024 };
        heap_t init = { .n = 1, .bytes = { 16 * N } };
        init.buf[0] = calloc(1, init.bytes[0]);
        assert_non_null(init.buf[0]);
        unsigned g[3] = { 1, 1, 1 }, bl[3] = { N, 1, 1 };
        outcome_t o = run_both(wrap_ptx, "wrap", &init, g, bl, out_params, NULL);
        assert_int_equal(o.fault, GV_PTX_OK);
        for (uint32_t t = 0; t < N; t++) {
                uint32_t v[4];
                memcpy(v, o.mem[0] + 16 * (size_t) t, sizeof(v));
                /* below the bound up to 0xef, above it to 0xff, then negative: below again */
                uint32_t below = t < 0xf0 || t >= 0x100;
                assert_int_equal(v[0], below);
                assert_int_equal(v[1], below);
                assert_int_equal(v[2], below);
                assert_int_equal(v[3], 1);
        }
        outcome_free(&o, 1);
        free(init.buf[0]);
}

/* Blocks over 3 workers, each taking runs of consecutive blocks (1,001: no multiple of a run), against 1. */
static void test_workers(void **state)
{
        (void) state;
        rng_t r = { 7 };
        unsigned grid[3] = { 1001, 1, 1 }, b[3] = { 32, 1, 1 }, threads = 1001 * 32;
        for (int i = 0; i < 3; i++) {
                char *ptx = random_kernel(&r, 30, threads);
                rparams_t rp = { { 5, 70000, 3, 0xffff } };
                heap_t init = { .n = 1, .bytes = { (size_t) N_VALUES * threads * 8 }, .workers = 3 };
                init.buf[0] = calloc(1, init.bytes[0]);
                assert_non_null(init.buf[0]);
                outcome_t o = run_both(ptx, "k", &init, grid, b, random_params, &rp);
                assert_int_equal(o.fault, GV_PTX_OK);
                outcome_free(&o, 1);
                free(init.buf[0]);
                free(ptx);
        }
}

/* A special register is read-only: writing one is malformed PTX, as ptxas says. */
static void test_special_registers_read_only(void **state)
{
        (void) state;
        static const char *const bad[] = {
                "mov.u32 %tid.x, 1;",
                "ld.param.v2.u32 {%r1, %ctaid.x}, [p];",
                "mov.b64 {%r1, %ntid.y}, %rd1;",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *ptx = NULL, *msg = NULL;
                assert_true(asprintf(&ptx, ".version 7.0\n.target sm_50\n.address_size 64\n"
                                           ".visible .entry k(.param .u64 p)\n{\n .reg .b32 %%r<2>;\n"
                                           " .reg .b64 %%rd<2>;\n %s\n ret;\n}\n", bad[i]) > 0);
                gv_ptx_module_t *m = NULL;
                assert_int_equal(gv_ptx_parse(ptx, strlen(ptx), &m, &msg), -EINVAL);
                assert_non_null(strstr(msg, "read-only"));
                free(msg);
                free(ptx);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_random_kernels),
                cmocka_unit_test(test_affine_memory),
                cmocka_unit_test(test_affine_shared),
                cmocka_unit_test(test_partial_uniform),
                cmocka_unit_test(test_compare_sign_wrap),
                cmocka_unit_test(test_workers),
                cmocka_unit_test(test_special_registers_read_only),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
