/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX interpreter: runs a decoded kernel (ptx-internal.h) over a grid.
 *
 * A thread block runs in lockstep, as one wide SIMT group: each instruction
 * is applied to every thread at the lowest program counter among the live
 * threads before the next instruction runs ("min-PC" scheduling).  Threads
 * that diverge wait at their own PC and join again when the group reaches
 * it, so structured code reconverges where a GPU reconverges, and
 * `bar.sync` holds by construction: every live thread arrives at it
 * together.  Registers are stored slot-major (one row of N threads per
 * slot), so the loop of one instruction over the block is a tight, often
 * vectorised, loop.  Blocks are spread over worker threads; atomics on
 * global memory are host atomics.
 *
 * Every load, store and atomic is checked: global addresses against the
 * caller's allocations (gv_ptx_launch_t.range), shared, local and param
 * offsets against their windows, and alignment against the access size
 * (PTX ISA reference, "Addresses as Operands": accesses must be naturally
 * aligned).  A fault stops the grid and is reported, never a host crash.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mock/cuda/ptx-internal.h"

/* State of one launch, shared by its workers. */
typedef struct grid {
        const struct gv_ptx_func *f;
        const gv_ptx_launch_t *l;
        uint64_t blocks;
        _Atomic uint64_t next;     /* the next block to run */
        atomic_bool stop;          /* a worker faulted */
        pthread_mutex_t lock;      /* guards the fault fields */
        gv_ptx_fault_t fault;
        uint32_t fault_line;
        uint64_t fault_addr;
        _Atomic uint64_t executed; /* thread-instructions */
} grid_t;

/* One worker: a block's registers and windows, reused for each block it runs. */
typedef struct worker {
        grid_t *g;
        const struct gv_ptx_func *f;
        const ptx_ins_t *code;
        uint32_t n;                /* threads per block */
        size_t sink;               /* the slot `_` writes to */
        uint64_t *R;               /* (n_slots + 1) rows of n */
        uint32_t *pc, *act, *tmp;
        uint8_t *alive;
        uint32_t nact, nalive, P, next_wait;
        bool dense;
        uint8_t *shared;
        size_t shared_bytes;
        uint8_t *local;
        size_t local_bytes;
        uint64_t lo, hi;           /* the last global range that checked out */
        gv_ptx_fault_t fault;
        uint64_t fault_addr;
        uint64_t executed;
} worker_t;

static inline float f32(uint64_t v)
{
        union {
                uint32_t u;
                float f;
        } x = { .u = (uint32_t) v };
        return x.f;
}

static inline uint64_t of32(float f)
{
        union {
                float f;
                uint32_t u;
        } x = { .f = f };
        return x.u;
}

static inline double f64(uint64_t v)
{
        union {
                uint64_t u;
                double d;
        } x = { .u = v };
        return x.d;
}

static inline uint64_t of64(double d)
{
        union {
                double d;
                uint64_t u;
        } x = { .d = d };
        return x.u;
}

/* The value of @v as kind @k, widened to 64 bits (sign for signed kinds). */
static inline int64_t sval(uint64_t v, unsigned k)
{
        switch (k) {
        case K_S8: return (int8_t) v;
        case K_S16: return (int16_t) v;
        case K_S32: return (int32_t) v;
        case K_U8: return (uint8_t) v;
        case K_U16: return (uint16_t) v;
        case K_U32: return (uint32_t) v;
        default: return (int64_t) v;
        }
}

/* @v truncated to the width of @k (the register invariant: zero-extended). */
static inline uint64_t trunc_kind(uint64_t v, unsigned k)
{
        switch (ptx_kind_bytes(k)) {
        case 1: return (uint8_t) v;
        case 2: return (uint16_t) v;
        case 4: return (uint32_t) v;
        default: return v;
        }
}

static inline bool is_signed(unsigned k)
{
        return k == K_S8 || k == K_S16 || k == K_S32 || k == K_S64;
}

/* ------------------------------------------------------------------ */
/* memory                                                              */

static void fault(worker_t *w, gv_ptx_fault_t why, uint64_t addr)
{
        if (!w->fault) {
                w->fault = why;
                w->fault_addr = addr;
        }
}

/* Host address of @bytes at global address @a, or NULL (fault recorded). */
static uint8_t *global_ptr(worker_t *w, uint64_t a, unsigned bytes)
{
        if (a >= w->lo && a + bytes <= w->hi && a + bytes > a)
                return (uint8_t *) (uintptr_t) a;
        uint64_t lo, hi;
        const gv_ptx_launch_t *l = w->g->l;
        if (a + bytes > a && l->range && l->range(l->range_ctx, a, &lo, &hi) && a + bytes <= hi) {
                w->lo = lo;
                w->hi = hi;
                return (uint8_t *) (uintptr_t) a;
        }
        fault(w, GV_PTX_ILLEGAL_ADDRESS, a);
        return NULL;
}

/* Host address of @bytes at @a in state space @space for thread @t, or NULL (fault recorded). */
static inline uint8_t *mem(worker_t *w, uint32_t t, unsigned space, uint64_t a, unsigned bytes)
{
        if (a & (bytes - 1)) {
                fault(w, GV_PTX_MISALIGNED, a);
                return NULL;
        }
        if (space == SP_GENERIC) {
                if (a - GV_PTX_GEN_SHARED < GV_PTX_WINDOW) {
                        space = SP_SHARED;
                        a -= GV_PTX_GEN_SHARED;
                } else if (a - GV_PTX_GEN_LOCAL < GV_PTX_WINDOW) {
                        space = SP_LOCAL;
                        a -= GV_PTX_GEN_LOCAL;
                } else if (a - GV_PTX_GEN_PARAM < GV_PTX_WINDOW) {
                        space = SP_PARAM;
                        a -= GV_PTX_GEN_PARAM;
                } else {
                        space = SP_GLOBAL;
                }
        }
        switch (space) {
        case SP_SHARED:
                if (a < w->shared_bytes && bytes <= w->shared_bytes - a)
                        return w->shared + a;
                break;
        case SP_LOCAL:
                if (a < w->local_bytes && bytes <= w->local_bytes - a)
                        return w->local + (size_t) t * w->local_bytes + a;
                break;
        case SP_PARAM:
                if (a < w->f->param_bytes && bytes <= w->f->param_bytes - a)
                        return (uint8_t *) w->g->l->params + a;
                break;
        default:
                return global_ptr(w, a, bytes);
        }
        fault(w, GV_PTX_ILLEGAL_ADDRESS, a);
        return NULL;
}

static inline uint64_t load(const uint8_t *p, unsigned k)
{
        switch (k) {
        case K_U8: return *p;
        case K_S8: return (uint64_t) (int64_t) (int8_t) *p;
        case K_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
        case K_S16: { int16_t v; memcpy(&v, p, 2); return (uint64_t) (int64_t) v; }
        case K_U32: case K_F32: { uint32_t v; memcpy(&v, p, 4); return v; }
        case K_S32: { int32_t v; memcpy(&v, p, 4); return (uint64_t) (int64_t) v; }
        default: { uint64_t v; memcpy(&v, p, 8); return v; }
        }
}

static inline void store(uint8_t *p, unsigned k, uint64_t v)
{
        switch (ptx_kind_bytes(k)) {
        case 1: *p = (uint8_t) v; break;
        case 2: { uint16_t x = (uint16_t) v; memcpy(p, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t) v; memcpy(p, &x, 4); break; }
        default: memcpy(p, &v, 8); break;
        }
}

/* One atomic read-modify-write at @p (kind @k): returns the old value. */
static uint64_t atomic_rmw(uint8_t *p, const ptx_ins_t *in, uint64_t b, uint64_t c)
{
        unsigned k = in->kind, op = in->aux;
        bool wide = ptx_kind_bytes(k) == 8;
        uint64_t old = wide ? __atomic_load_n((uint64_t *) (void *) p, __ATOMIC_RELAXED)
                            : __atomic_load_n((uint32_t *) (void *) p, __ATOMIC_RELAXED);
        for (;;) {
                uint64_t nv;
                switch (op) {
                case AT_ADD:
                        nv = k == K_F32 ? of32(f32(old) + f32(b)) : k == K_F64 ? of64(f64(old) + f64(b)) : old + b;
                        break;
                case AT_MIN:
                case AT_MAX: {
                        bool less = k == K_F32   ? f32(b) < f32(old)
                                    : k == K_F64 ? f64(b) < f64(old)
                                    : is_signed(k) ? sval(b, k) < sval(old, k)
                                                   : trunc_kind(b, k) < trunc_kind(old, k);
                        nv = (op == AT_MIN) == less ? b : old;
                        break;
                }
                case AT_INC: nv = trunc_kind(old, k) >= trunc_kind(b, k) ? 0 : old + 1; break;
                case AT_DEC: nv = trunc_kind(old, k) == 0 || trunc_kind(old, k) > trunc_kind(b, k) ? b : old - 1; break;
                case AT_AND: nv = old & b; break;
                case AT_OR: nv = old | b; break;
                case AT_XOR: nv = old ^ b; break;
                case AT_EXCH: nv = b; break;
                default: /* AT_CAS */
                        nv = trunc_kind(old, k) == trunc_kind(b, k) ? c : old;
                        break;
                }
                bool done = wide ? __atomic_compare_exchange_n((uint64_t *) (void *) p, &old, nv, false,
                                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED)
                                 : __atomic_compare_exchange_n((uint32_t *) (void *) p, &(uint32_t) { (uint32_t) old },
                                                               (uint32_t) nv, false, __ATOMIC_RELAXED,
                                                               __ATOMIC_RELAXED);
                if (done)
                        return trunc_kind(old, k);
                old = wide ? __atomic_load_n((uint64_t *) (void *) p, __ATOMIC_RELAXED)
                           : __atomic_load_n((uint32_t *) (void *) p, __ATOMIC_RELAXED);
        }
}

/* cvt: @v of kind @from to kind @to with rounding @rnd and saturation @sat (PTX ISA "cvt"). */
static uint64_t convert(uint64_t v, unsigned to, unsigned from, unsigned rnd, bool sat)
{
        bool fto = to == K_F32 || to == K_F64, ffrom = from == K_F32 || from == K_F64;
        if (ffrom) {
                double d = from == K_F32 ? (double) f32(v) : f64(v);
                switch (rnd) {
                case RND_N: d = fto && to == from ? nearbyint(d) : d; break;
                case RND_Z: d = trunc(d); break;
                case RND_M: d = floor(d); break;
                case RND_P: d = ceil(d); break;
                default: break;
                }
                if (fto) {
                        if (sat)
                                d = isnan(d) ? 0 : d < 0 ? 0 : d > 1 ? 1 : d;
                        return to == K_F32 ? of32((float) d) : of64(d);
                }
                if (rnd == RND_N || rnd == RND_NONE)
                        d = nearbyint(d);
                /* float to integer saturates to the destination range; NaN is 0 */
                if (isnan(d))
                        return 0;
                unsigned bits = 8 * ptx_kind_bytes(to);
                if (is_signed(to)) {
                        double lo = -ldexp(1, (int) bits - 1), hi = ldexp(1, (int) bits - 1) - 1;
                        int64_t x = d <= lo ? (int64_t) lo : d >= hi ? (bits == 64 ? INT64_MAX : (int64_t) hi) : (int64_t) d;
                        return trunc_kind((uint64_t) x, to);
                }
                double hi = ldexp(1, (int) bits) - 1;
                uint64_t x = d <= 0 ? 0 : d >= hi ? (bits == 64 ? UINT64_MAX : (uint64_t) hi) : (uint64_t) d;
                return x;
        }
        int64_t s = sval(v, from);
        if (fto) {
                double d = is_signed(from) ? (double) s : (double) (uint64_t) s;
                if (from == K_U64)
                        d = (double) v;
                if (to == K_F32)
                        return of32(is_signed(from) ? (float) s : from == K_U64 ? (float) v : (float) (uint64_t) s);
                return of64(d);
        }
        if (sat) {
                unsigned bits = 8 * ptx_kind_bytes(to);
                if (is_signed(to)) {
                        int64_t lo = bits == 64 ? INT64_MIN : -(1ll << (bits - 1));
                        int64_t hi = bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
                        if (!is_signed(from) && (uint64_t) s > (uint64_t) hi)
                                s = hi;
                        else if (is_signed(from))
                                s = s < lo ? lo : s > hi ? hi : s;
                } else {
                        uint64_t hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
                        if (is_signed(from) && s < 0)
                                s = 0;
                        else if ((uint64_t) s > hi)
                                s = (int64_t) hi;
                }
        }
        return trunc_kind((uint64_t) s, to);
}

/* ------------------------------------------------------------------ */
/* the threads an instruction applies to                               */

typedef struct runset {
        const uint32_t *list; /* NULL: threads 0 .. cnt-1 */
        uint32_t cnt;
} runset_t;

static inline runset_t runset(worker_t *w, const ptx_ins_t *in)
{
        if (in->guard < 0)
                return w->dense ? (runset_t) { NULL, w->n } : (runset_t) { w->act, w->nact };
        const uint64_t *G = w->R + (size_t) in->guard * w->n;
        uint32_t k = 0;
        uint64_t neg = in->gneg;
        for (uint32_t i = 0; i < w->nact; i++) {
                uint32_t t = w->act[i];
                w->tmp[k] = t;
                k += (uint32_t) ((G[t] & 1) ^ neg);
        }
        return (runset_t) { w->tmp, k };
}

#define FOR(...)                                                                               \
        do {                                                                                   \
                if (!rs.list) {                                                                \
                        for (uint32_t t = 0; t < rs.cnt; t++) {                                \
                                __VA_ARGS__;                                                   \
                        }                                                                      \
                } else {                                                                       \
                        for (uint32_t k_ = 0; k_ < rs.cnt; k_++) {                             \
                                uint32_t t = rs.list[k_];                                      \
                                __VA_ARGS__;                                                          \
                        }                                                                      \
                }                                                                              \
        } while (0)

#define ROW(s) (w->R + (size_t) ((s) < 0 ? w->sink : (size_t) (s)) * w->n)
#define KEY(op, k) ((unsigned) (op) << 4 | (unsigned) (k))

/* Integer operations of every width, unsigned and signed alike (add, sub, mul.lo, logic, shl). */
#define INT_ANY(OP, E)                                                                          \
        case KEY(OP, K_U16):                                                                    \
        case KEY(OP, K_S16): FOR(D[t] = (uint16_t) (E)); break;                                 \
        case KEY(OP, K_U32):                                                                    \
        case KEY(OP, K_S32): FOR(D[t] = (uint32_t) (E)); break;                                 \
        case KEY(OP, K_U64):                                                                    \
        case KEY(OP, K_S64): FOR(D[t] = (uint64_t) (E))
/* Integer operations where the sign matters: E sees a, b of type T. */
#define INT_SIGNED(OP, E)                                                                       \
        case KEY(OP, K_U16): FOR({ uint16_t a = (uint16_t) A[t], b = (uint16_t) B[t]; D[t] = (uint16_t) (E); }); break; \
        case KEY(OP, K_S16): FOR({ int16_t a = (int16_t) A[t], b = (int16_t) B[t]; D[t] = (uint16_t) (E); }); break; \
        case KEY(OP, K_U32): FOR({ uint32_t a = (uint32_t) A[t], b = (uint32_t) B[t]; D[t] = (uint32_t) (E); }); break; \
        case KEY(OP, K_S32): FOR({ int32_t a = (int32_t) A[t], b = (int32_t) B[t]; D[t] = (uint32_t) (E); }); break; \
        case KEY(OP, K_U64): FOR({ uint64_t a = A[t], b = B[t]; D[t] = (uint64_t) (E); }); break; \
        case KEY(OP, K_S64): FOR({ int64_t a = (int64_t) A[t], b = (int64_t) B[t]; D[t] = (uint64_t) (E); })
#define F32_OP(OP, E) case KEY(OP, K_F32): FOR({ float a = f32(A[t]), b = f32(B[t]); (void) b; D[t] = of32(E); })
#define F64_OP(OP, E) case KEY(OP, K_F64): FOR({ double a = f64(A[t]), b = f64(B[t]); (void) b; D[t] = of64(E); })

/*
 * Division and remainder: by zero all ones (unsigned) or -1 (signed) and the dividend; the overflowing
 * MIN / -1 wraps to MIN with remainder 0 (no host trap).
 */
#define DIV_REM(KU, KS, UT, ST)                                                                 \
        case KEY(OP_DIV, KU): FOR({ UT a = (UT) A[t], b = (UT) B[t]; D[t] = b ? (UT) (a / b) : (UT) ~(UT) 0; }); break; \
        case KEY(OP_REM, KU): FOR({ UT a = (UT) A[t], b = (UT) B[t]; D[t] = b ? (UT) (a % b) : a; }); break; \
        case KEY(OP_DIV, KS):                                                                   \
                FOR({ ST a = (ST) A[t], b = (ST) B[t];                                          \
                      D[t] = (UT) (b == 0 ? (UT) ~(UT) 0 : b == -1 ? (UT) (0 - (UT) a) : (UT) (a / b)); }); \
                break;                                                                          \
        case KEY(OP_REM, KS):                                                                   \
                FOR({ ST a = (ST) A[t], b = (ST) B[t]; D[t] = (UT) (b == 0 ? (UT) a : b == -1 ? 0 : (UT) (a % b)); })

/* Shift by @b clamped to the width (PTX: larger shifts give 0, or the sign for shr.s). */
#define SHIFT_CLAMP(bits) ((uint32_t) B[t] > (bits) - 1 ? (bits) - 1 : (uint32_t) B[t])

/* Two-source arithmetic; false when @in is not one of these. */
// NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): the dispatch table of the interpreter, one case per operation and kind
static bool alu2(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        uint64_t *D = ROW(in->d[0]);
        const uint64_t *A = ROW(in->a), *B = ROW(in->b);
        switch (KEY(in->op, in->kind)) {
                INT_ANY(OP_ADD, A[t] + B[t]); break;
                INT_ANY(OP_SUB, A[t] - B[t]); break;
                INT_ANY(OP_MUL_LO, A[t] * B[t]); break;
                INT_ANY(OP_AND, A[t] & B[t]); break;
                INT_ANY(OP_OR, A[t] | B[t]); break;
                INT_ANY(OP_XOR, A[t] ^ B[t]); break;
                case KEY(OP_AND, K_PRED): FOR(D[t] = A[t] & B[t] & 1); break;
                case KEY(OP_OR, K_PRED): FOR(D[t] = (A[t] | B[t]) & 1); break;
                case KEY(OP_XOR, K_PRED): FOR(D[t] = (A[t] ^ B[t]) & 1); break;
                case KEY(OP_SHL, K_U16): case KEY(OP_SHL, K_S16):
                        FOR(D[t] = (uint32_t) B[t] > 15 ? 0 : (uint16_t) (A[t] << B[t])); break;
                case KEY(OP_SHL, K_U32): case KEY(OP_SHL, K_S32):
                        FOR(D[t] = (uint32_t) B[t] > 31 ? 0 : (uint32_t) (A[t] << B[t])); break;
                case KEY(OP_SHL, K_U64): case KEY(OP_SHL, K_S64):
                        FOR(D[t] = (uint32_t) B[t] > 63 ? 0 : A[t] << B[t]); break;
                case KEY(OP_SHR, K_U16): FOR(D[t] = (uint32_t) B[t] > 15 ? 0 : (uint16_t) A[t] >> B[t]); break;
                case KEY(OP_SHR, K_U32): FOR(D[t] = (uint32_t) B[t] > 31 ? 0 : (uint32_t) A[t] >> B[t]); break;
                case KEY(OP_SHR, K_U64): FOR(D[t] = (uint32_t) B[t] > 63 ? 0 : A[t] >> B[t]); break;
                case KEY(OP_SHR, K_S16): FOR(D[t] = (uint16_t) ((int16_t) A[t] >> SHIFT_CLAMP(16))); break;
                case KEY(OP_SHR, K_S32): FOR(D[t] = (uint32_t) ((int32_t) A[t] >> SHIFT_CLAMP(32))); break;
                case KEY(OP_SHR, K_S64): FOR(D[t] = (uint64_t) ((int64_t) A[t] >> SHIFT_CLAMP(64))); break;
                INT_SIGNED(OP_MIN, a < b ? a : b); break;
                INT_SIGNED(OP_MAX, a > b ? a : b); break;
                /* division by zero: all ones (unsigned) or -1 (signed); the overflowing MIN / -1: MIN */
                DIV_REM(K_U16, K_S16, uint16_t, int16_t); break;
                DIV_REM(K_U32, K_S32, uint32_t, int32_t); break;
                DIV_REM(K_U64, K_S64, uint64_t, int64_t); break;
        case KEY(OP_MUL_HI, K_U16): FOR(D[t] = (uint16_t) (((uint32_t) (uint16_t) A[t] * (uint16_t) B[t]) >> 16)); break;
        case KEY(OP_MUL_HI, K_S16): FOR(D[t] = (uint16_t) (((int32_t) (int16_t) A[t] * (int16_t) B[t]) >> 16)); break;
        case KEY(OP_MUL_HI, K_U32): FOR(D[t] = (uint32_t) (((uint64_t) (uint32_t) A[t] * (uint32_t) B[t]) >> 32)); break;
        case KEY(OP_MUL_HI, K_S32): FOR(D[t] = (uint32_t) (((int64_t) (int32_t) A[t] * (int32_t) B[t]) >> 32)); break;
        case KEY(OP_MUL_HI, K_U64): FOR(D[t] = (uint64_t) (((unsigned __int128) A[t] * B[t]) >> 64)); break;
        case KEY(OP_MUL_HI, K_S64): FOR(D[t] = (uint64_t) (((__int128) (int64_t) A[t] * (int64_t) B[t]) >> 64)); break;
                F32_OP(OP_ADD, a + b); break;
                F32_OP(OP_SUB, a - b); break;
                F32_OP(OP_MUL_LO, a * b); break;
                F32_OP(OP_DIV, a / b); break;
                F32_OP(OP_MIN, fminf(a, b)); break;
                F32_OP(OP_MAX, fmaxf(a, b)); break;
                F32_OP(OP_COPYSIGN, copysignf(b, a)); break;
                F64_OP(OP_ADD, a + b); break;
                F64_OP(OP_SUB, a - b); break;
                F64_OP(OP_MUL_LO, a * b); break;
                F64_OP(OP_DIV, a / b); break;
                F64_OP(OP_MIN, fmin(a, b)); break;
                F64_OP(OP_MAX, fmax(a, b)); break;
                F64_OP(OP_COPYSIGN, copysign(b, a)); break;
        case KEY(OP_MUL_WIDE, K_U16): FOR(D[t] = (uint32_t) ((uint16_t) A[t] * (uint32_t) (uint16_t) B[t])); break;
        case KEY(OP_MUL_WIDE, K_S16): FOR(D[t] = (uint32_t) ((int32_t) (int16_t) A[t] * (int16_t) B[t])); break;
        case KEY(OP_MUL_WIDE, K_U32): FOR(D[t] = (uint64_t) (uint32_t) A[t] * (uint32_t) B[t]); break;
        case KEY(OP_MUL_WIDE, K_S32): FOR(D[t] = (uint64_t) ((int64_t) (int32_t) A[t] * (int32_t) B[t])); break;
        default: return false;
        }
        return true;
}

/* Three-source arithmetic, selection and bit fields; false when @in is none of these. */
// NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): the dispatch table of the interpreter, one case per operation and kind
static bool alu3(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        uint64_t *D = ROW(in->d[0]);
        const uint64_t *A = ROW(in->a), *B = ROW(in->b), *C = ROW(in->c);
        switch (KEY(in->op, in->kind)) {
                INT_ANY(OP_MAD_LO, A[t] * B[t] + C[t]); break;
        case KEY(OP_MAD_WIDE, K_U16): FOR(D[t] = (uint32_t) ((uint16_t) A[t] * (uint32_t) (uint16_t) B[t] + (uint32_t) C[t])); break;
        case KEY(OP_MAD_WIDE, K_S16): FOR(D[t] = (uint32_t) ((int32_t) (int16_t) A[t] * (int16_t) B[t] + (int32_t) C[t])); break;
        case KEY(OP_MAD_WIDE, K_U32): FOR(D[t] = (uint64_t) (uint32_t) A[t] * (uint32_t) B[t] + C[t]); break;
        case KEY(OP_MAD_WIDE, K_S32): FOR(D[t] = (uint64_t) ((int64_t) (int32_t) A[t] * (int32_t) B[t] + (int64_t) C[t])); break;
        case KEY(OP_MAD_HI, K_U32): FOR(D[t] = (uint32_t) ((((uint64_t) (uint32_t) A[t] * (uint32_t) B[t]) >> 32) + C[t])); break;
        case KEY(OP_MAD_HI, K_S32): FOR(D[t] = (uint32_t) ((((int64_t) (int32_t) A[t] * (int32_t) B[t]) >> 32) + (int32_t) C[t])); break;
        case KEY(OP_MAD_HI, K_U64): FOR(D[t] = (uint64_t) (((unsigned __int128) A[t] * B[t]) >> 64) + C[t]); break;
        case KEY(OP_MAD_HI, K_S64): FOR(D[t] = (uint64_t) ((((__int128) (int64_t) A[t] * (int64_t) B[t]) >> 64) + (int64_t) C[t])); break;
        case KEY(OP_FMA, K_F32): FOR(D[t] = of32(fmaf(f32(A[t]), f32(B[t]), f32(C[t])))); break;
        case KEY(OP_FMA, K_F64): FOR(D[t] = of64(fma(f64(A[t]), f64(B[t]), f64(C[t])))); break;
        default:
                if (in->op == OP_SELP) {
                        uint64_t neg = in->cneg;
                        FOR(D[t] = ((C[t] & 1) ^ neg) ? A[t] : B[t]);
                } else if (in->op == OP_BFE) {
                        unsigned bits = 8 * ptx_kind_bytes(in->kind);
                        bool sg = is_signed(in->kind);
                        FOR({
                                uint32_t pos = (uint8_t) B[t], len = (uint8_t) C[t];
                                uint64_t v = trunc_kind(A[t], in->kind);
                                uint64_t r = pos >= bits ? 0 : v >> pos;
                                if (len < 64)
                                        r &= (1ull << len) - 1;
                                uint32_t top = pos + len - 1 < bits ? pos + len - 1 : bits - 1;
                                if (sg && len && ((v >> top) & 1) && len < 64)
                                        r |= ~0ull << len;
                                D[t] = len == 0 ? (sg && ((v >> (bits - 1)) & 1) && pos >= bits ? ~0ull : 0) : r;
                                D[t] = trunc_kind(D[t], in->kind);
                        });
                } else if (in->op == OP_BFI) {
                        const uint64_t *E = ROW(in->s[0]);
                        unsigned bits = 8 * ptx_kind_bytes(in->kind);
                        FOR({
                                uint32_t pos = (uint8_t) C[t], len = (uint8_t) E[t];
                                uint64_t mask = len >= 64 ? ~0ull : ((1ull << len) - 1);
                                uint64_t r = B[t];
                                if (pos < bits)
                                        r = (r & ~(mask << pos)) | ((A[t] & mask) << pos);
                                D[t] = trunc_kind(r, in->kind);
                        });
                } else if (in->op == OP_PRMT) {
                        FOR({
                                uint64_t bytes = (uint32_t) A[t] | (uint64_t) (uint32_t) B[t] << 32, r = 0;
                                for (int i = 0; i < 4; i++) {
                                        unsigned sel = (unsigned) (C[t] >> (4 * i)) & 0xF;
                                        uint64_t byte = (bytes >> (8 * (sel & 7))) & 0xFF;
                                        if (sel & 8)
                                                byte = (byte & 0x80) ? 0xFF : 0;
                                        r |= byte << (8 * i);
                                }
                                D[t] = (uint32_t) r;
                        });
                } else {
                        return false;
                }
        }
        return true;
}

/* One-source operations, moves and conversions; false when @in is none of these. */
// NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): the dispatch table of the interpreter, one case per operation and kind
static bool alu1(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        uint64_t *D = ROW(in->d[0]);
        const uint64_t *A = ROW(in->a);
        unsigned k = in->kind;
        switch (in->op) {
        case OP_MOV:
                if (ptx_kind_bytes(k) == 4)
                        FOR(D[t] = (uint32_t) A[t]);
                else if (ptx_kind_bytes(k) == 8)
                        FOR(D[t] = A[t]);
                else
                        FOR(D[t] = trunc_kind(A[t], k));
                return true;
        case OP_CVT: {
                unsigned from = in->kind2, rnd = in->aux;
                bool sat = in->aux2;
                if (k == K_F32 && from == K_F32 && !rnd && !sat)
                        FOR(D[t] = (uint32_t) A[t]);
                else if ((k == K_U64 || k == K_S64) && from == K_U32)
                        FOR(D[t] = (uint32_t) A[t]);
                else if ((k == K_U64 || k == K_S64) && from == K_S32)
                        FOR(D[t] = (uint64_t) (int64_t) (int32_t) A[t]);
                else
                        FOR(D[t] = convert(A[t], k, from, rnd, sat));
                return true;
        }
        case OP_CVTA_FROM:
        case OP_CVTA_TO: {
                uint64_t base = in->space == SP_SHARED  ? GV_PTX_GEN_SHARED
                                : in->space == SP_LOCAL ? GV_PTX_GEN_LOCAL
                                : in->space == SP_PARAM ? GV_PTX_GEN_PARAM
                                                        : 0;
                if (base == 0 && ptx_kind_bytes(k) == 8)
                        FOR(D[t] = A[t]);
                else if (in->op == OP_CVTA_TO)
                        FOR(D[t] = trunc_kind(A[t] - base, k));
                else
                        FOR(D[t] = trunc_kind(A[t], k) + base);
                return true;
        }
        default: break;
        }
        if (k == K_F32) {
                switch (in->op) {
                case OP_NEG: FOR(D[t] = of32(-f32(A[t]))); return true;
                case OP_ABS: FOR(D[t] = of32(fabsf(f32(A[t])))); return true;
                case OP_SQRT: FOR(D[t] = of32(sqrtf(f32(A[t])))); return true;
                case OP_RSQRT: FOR(D[t] = of32(1.0f / sqrtf(f32(A[t])))); return true;
                case OP_RCP: FOR(D[t] = of32(1.0f / f32(A[t]))); return true;
                case OP_SIN: FOR(D[t] = of32(sinf(f32(A[t])))); return true;
                case OP_COS: FOR(D[t] = of32(cosf(f32(A[t])))); return true;
                case OP_EX2: FOR(D[t] = of32(exp2f(f32(A[t])))); return true;
                case OP_LG2: FOR(D[t] = of32(log2f(f32(A[t])))); return true;
                case OP_TANH: FOR(D[t] = of32(tanhf(f32(A[t])))); return true;
                default: return false;
                }
        }
        if (k == K_F64) {
                switch (in->op) {
                case OP_NEG: FOR(D[t] = of64(-f64(A[t]))); return true;
                case OP_ABS: FOR(D[t] = of64(fabs(f64(A[t])))); return true;
                case OP_SQRT: FOR(D[t] = of64(sqrt(f64(A[t])))); return true;
                case OP_RSQRT: FOR(D[t] = of64(1.0 / sqrt(f64(A[t])))); return true;
                case OP_RCP: FOR(D[t] = of64(1.0 / f64(A[t]))); return true;
                default: return false;
                }
        }
        unsigned bits = 8 * ptx_kind_bytes(k);
        switch (in->op) {
        case OP_NEG: FOR(D[t] = trunc_kind(0 - A[t], k)); return true;
        case OP_ABS: FOR({ int64_t v = sval(A[t], k); D[t] = trunc_kind((uint64_t) (v < 0 ? -v : v), k); }); return true;
        case OP_NOT: FOR(D[t] = trunc_kind(~A[t], k)); return true;
        case OP_CNOT: FOR(D[t] = trunc_kind(A[t], k) == 0); return true;
        case OP_POPC: FOR(D[t] = (uint32_t) __builtin_popcountll(trunc_kind(A[t], k))); return true;
        case OP_CLZ:
                FOR({
                        uint64_t v = trunc_kind(A[t], k);
                        D[t] = v ? (uint32_t) (__builtin_clzll(v) - (64 - (int) bits)) : bits;
                });
                return true;
        case OP_BREV:
                FOR({
                        uint64_t v = trunc_kind(A[t], k), r = 0;
                        for (unsigned i = 0; i < bits; i++)
                                r |= ((v >> i) & 1) << (bits - 1 - i);
                        D[t] = r;
                });
                return true;
        default: return false;
        }
}

/* setp: compare, combine with c, write p (and !p to q). */
static void setp(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        uint64_t *P = ROW(in->d[0]), *Q = in->d[1] >= 0 ? ROW(in->d[1]) : NULL;
        const uint64_t *A = ROW(in->a), *B = ROW(in->b);
        unsigned k = in->kind, cmp = in->aux;
        if (cmp == CMP_LT && (k == K_S32))
                FOR(P[t] = (int32_t) A[t] < (int32_t) B[t]);
        else if (cmp == CMP_GE && k == K_S32)
                FOR(P[t] = (int32_t) A[t] >= (int32_t) B[t]);
        else if (cmp == CMP_LT && k == K_U32)
                FOR(P[t] = (uint32_t) A[t] < (uint32_t) B[t]);
        else if (cmp == CMP_GE && k == K_U32)
                FOR(P[t] = (uint32_t) A[t] >= (uint32_t) B[t]);
        else if (k == K_F32 || k == K_F64)
                FOR({
                        double a = k == K_F32 ? f32(A[t]) : f64(A[t]), b = k == K_F32 ? f32(B[t]) : f64(B[t]);
                        bool un = isnan(a) || isnan(b), r;
                        switch (cmp) {
                        case CMP_EQ: r = !un && a == b; break;
                        case CMP_NE: r = !un && a != b; break;
                        case CMP_LT: r = !un && a < b; break;
                        case CMP_LE: r = !un && a <= b; break;
                        case CMP_GT: r = !un && a > b; break;
                        case CMP_GE: r = !un && a >= b; break;
                        case CMP_EQU: r = un || a == b; break;
                        case CMP_NEU: r = un || a != b; break;
                        case CMP_LTU: r = un || a < b; break;
                        case CMP_LEU: r = un || a <= b; break;
                        case CMP_GTU: r = un || a > b; break;
                        case CMP_GEU: r = un || a >= b; break;
                        case CMP_NUM: r = !un; break;
                        default: r = un; break;
                        }
                        P[t] = r;
                });
        else
                FOR({
                        bool sg = is_signed(k);
                        int64_t sa = sval(A[t], k), sb = sval(B[t], k);
                        uint64_t ua = trunc_kind(A[t], k), ub = trunc_kind(B[t], k);
                        bool lt = sg ? sa < sb : ua < ub, e = ua == ub, r;
                        switch (cmp) {
                        case CMP_EQ: r = e; break;
                        case CMP_NE: r = !e; break;
                        case CMP_LT: r = lt; break;
                        case CMP_LE: r = lt || e; break;
                        case CMP_GT: r = !lt && !e; break;
                        default: r = !lt; break;
                        }
                        P[t] = r;
                });
        if (in->aux2 != BOOL_NONE) {
                const uint64_t *C = ROW(in->c);
                uint64_t neg = in->cneg, op = in->aux2;
                FOR({
                        uint64_t c = (C[t] & 1) ^ neg, p = P[t];
                        P[t] = op == BOOL_AND ? p & c : op == BOOL_OR ? p | c : p ^ c;
                        if (Q)
                                Q[t] = op == BOOL_AND ? (p ^ 1) & c : op == BOOL_OR ? (p ^ 1) | c : (p ^ 1) ^ c;
                });
        } else if (Q) {
                FOR(Q[t] = !P[t]);
        }
}

/* mov.b64 d, {a, b} and mov.b64 {a, b}, d (and the 4-part forms). */
static void pack(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        unsigned parts = in->aux2, width = 8 * ptx_kind_bytes(in->kind) / parts;
        uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
        if (in->op == OP_PACK) {
                uint64_t *D = ROW(in->d[0]);
                FOR({
                        uint64_t v = 0;
                        for (unsigned i = 0; i < parts; i++)
                                v |= (ROW(in->s[i])[t] & mask) << (i * width);
                        D[t] = v;
                });
        } else {
                const uint64_t *A = ROW(in->a);
                FOR({
                        uint64_t v = A[t];
                        for (unsigned i = 0; i < parts; i++)
                                ROW(in->d[i])[t] = (v >> (i * width)) & mask;
                });
        }
}

/* The host address of a scalar access of @sz bytes at @a in the global or shared window: the fast check. */
static inline uint8_t *fast_ptr(const worker_t *w, unsigned space, uint64_t a, unsigned sz)
{
        if (a & (sz - 1))
                return NULL;
        if (space == SP_SHARED)
                return a < w->shared_bytes && sz <= w->shared_bytes - a ? w->shared + a : NULL;
        return a >= w->lo && a + sz <= w->hi && a + sz > a ? (uint8_t *) (uintptr_t) a : NULL;
}

/* Scalar ld/st of 4 or 8 bytes in the global, const or shared space: the common case, kept tight. */
static bool memory_fast(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        const uint64_t *A = ROW(in->a);
        unsigned k = in->kind, sz = ptx_kind_bytes(k), space = in->space;
        uint64_t off = (uint64_t) in->off;
        if (in->op == OP_LD) {
                uint64_t *D = ROW(in->d[0]);
                FOR({
                        uint64_t a = A[t] + off;
                        uint8_t *p = fast_ptr(w, space, a, sz);
                        if (!p && !(p = mem(w, t, space, a, sz)))
                                return false;
                        if (sz == 8) {
                                memcpy(&D[t], p, 8);
                        } else {
                                uint32_t v;
                                memcpy(&v, p, 4);
                                D[t] = k == K_S32 ? (uint64_t) (int64_t) (int32_t) v : v;
                        }
                });
        } else {
                const uint64_t *S = ROW(in->s[0]);
                FOR({
                        uint64_t a = A[t] + off;
                        uint8_t *p = fast_ptr(w, space, a, sz);
                        if (!p && !(p = mem(w, t, space, a, sz)))
                                return false;
                        if (sz == 8) {
                                memcpy(p, &S[t], 8);
                        } else {
                                uint32_t v = (uint32_t) S[t];
                                memcpy(p, &v, 4);
                        }
                });
        }
        return true;
}

/* ld / st / atom / red; false on a fault. */
static bool memory(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        if (in->op == OP_LD && in->space == SP_PARAM && in->aux2 <= 1 && in->a >= 0 && rs.cnt) {
                /* a kernel parameter: every thread reads the same bytes when the address is uniform */
                const uint64_t *A = ROW(in->a);
                uint32_t t0 = rs.list ? rs.list[0] : 0;
                const uint8_t *p = mem(w, t0, SP_PARAM, A[t0] + (uint64_t) in->off, ptx_kind_bytes(in->kind));
                if (!p)
                        return false;
                uint64_t v = load(p, in->kind), a0 = A[t0];
                uint64_t *D = ROW(in->d[0]);
                bool uniform = true;
                FOR(uniform &= A[t] == a0);
                if (uniform) {
                        FOR(D[t] = v);
                        return true;
                }
        }
        if ((in->op == OP_LD || in->op == OP_ST) && in->aux2 <= 1 &&
            (in->space == SP_GLOBAL || in->space == SP_CONST || in->space == SP_SHARED) &&
            ptx_kind_bytes(in->kind) >= 4)
                return memory_fast(w, in, rs);
        const uint64_t *A = ROW(in->a);
        unsigned k = in->kind, sz = ptx_kind_bytes(k), vec = in->aux2 ? in->aux2 : 1;
        int64_t off = in->off;
        if (in->op == OP_LD) {
                FOR({
                        const uint8_t *p = mem(w, t, in->space, A[t] + (uint64_t) off, sz * vec);
                        if (!p)
                                return false;
                        for (unsigned i = 0; i < vec; i++)
                                ROW(in->d[i])[t] = load(p + i * sz, k);
                });
        } else if (in->op == OP_ST) {
                if (in->space == SP_PARAM) {
                        fault(w, GV_PTX_ILLEGAL_ADDRESS, 0);
                        return false;
                }
                FOR({
                        uint8_t *p = mem(w, t, in->space, A[t] + (uint64_t) off, sz * vec);
                        if (!p)
                                return false;
                        for (unsigned i = 0; i < vec; i++)
                                store(p + i * sz, k, ROW(in->s[i])[t]);
                });
        } else {
                const uint64_t *B = ROW(in->b), *C = ROW(in->c);
                uint64_t *D = ROW(in->d[0]);
                FOR({
                        uint8_t *p = mem(w, t, in->space, A[t] + (uint64_t) off, sz);
                        if (!p)
                                return false;
                        if (sz < 4) {
                                fault(w, GV_PTX_ILLEGAL_ADDRESS, A[t]);
                                return false;
                        }
                        D[t] = atomic_rmw(p, in, B[t], C[t]);
                });
        }
        return true;
}

/* ------------------------------------------------------------------ */
/* scheduling                                                          */

/* Picks the lowest PC among the live threads as the next group (the active threads' pc[] must be current). */
static void resched(worker_t *w)
{
        uint32_t lo = UINT32_MAX, next = UINT32_MAX;
        for (uint32_t t = 0; t < w->n; t++) {
                if (!w->alive[t])
                        continue;
                uint32_t p = w->pc[t];
                if (p < lo) {
                        next = lo;
                        lo = p;
                } else if (p > lo && p < next) {
                        next = p;
                }
        }
        w->nact = 0;
        for (uint32_t t = 0; t < w->n; t++)
                if (w->alive[t] && w->pc[t] == lo)
                        w->act[w->nact++] = t;
        w->P = lo;
        w->next_wait = next;
        w->dense = w->nact == w->n;
}

/* Writes P into the pc of every active thread (before a resched). */
static void settle(worker_t *w, uint32_t pc)
{
        for (uint32_t i = 0; i < w->nact; i++)
                w->pc[w->act[i]] = pc;
}

static void branch(worker_t *w, const ptx_ins_t *in)
{
        uint32_t target = in->target;
        if (in->guard >= 0) {
                const uint64_t *G = ROW(in->guard);
                uint64_t neg = in->gneg;
                uint32_t taken = 0;
                for (uint32_t i = 0; i < w->nact; i++) {
                        uint32_t t = w->act[i];
                        bool tk = (G[t] & 1) ^ neg;
                        w->pc[t] = tk ? target : w->P + 1;
                        taken += tk;
                }
                if (taken != 0 && taken != w->nact) {
                        resched(w);
                        return;
                }
                if (taken == 0)
                        target = w->P + 1;
        }
        if (target < w->next_wait) {
                w->P = target;
                return;
        }
        settle(w, target);
        resched(w);
}

/* ret / exit: the threads it applies to are done; false when the block is. */
static bool finish(worker_t *w, runset_t rs)
{
        FOR({
                w->alive[t] = 0;
                w->nalive--;
        });
        if (w->nalive == 0)
                return false;
        settle(w, w->P + 1); /* the dead ones are skipped by resched() */
        resched(w);
        return true;
}

/* Runs the block whose registers and windows are set up; false on a fault. */
static bool run_block(worker_t *w)
{
        w->P = 0;
        w->nact = w->nalive = w->n;
        w->dense = true;
        w->next_wait = UINT32_MAX;
        for (uint32_t t = 0; t < w->n; t++) {
                w->act[t] = t;
                w->alive[t] = 1;
        }
        uint64_t executed = 0;
        for (;;) {
                const ptx_ins_t *in = &w->code[w->P];
                runset_t rs = runset(w, in);
                executed += rs.cnt;
                bool ok = true;
                switch (in->op) {
                case OP_BRA:
                        branch(w, in);
                        continue;
                case OP_EXIT:
                        if (!finish(w, rs)) {
                                w->executed += executed;
                                return true;
                        }
                        continue;
                case OP_NOP:
                case OP_BAR:
                        break;
                case OP_TRAP:
                        if (rs.cnt)
                                fault(w, GV_PTX_TRAP, 0);
                        ok = !rs.cnt;
                        break;
                case OP_UNSUPPORTED:
                        fault(w, GV_PTX_UNSUPPORTED, 0);
                        ok = false;
                        break;
                case OP_SETP:
                        setp(w, in, rs);
                        break;
                case OP_PACK:
                case OP_UNPACK:
                        pack(w, in, rs);
                        break;
                case OP_LD:
                case OP_ST:
                case OP_ATOM:
                case OP_RED:
                        ok = memory(w, in, rs);
                        break;
                default:
                        ok = alu2(w, in, rs) || alu3(w, in, rs) || alu1(w, in, rs);
                        if (!ok)
                                fault(w, GV_PTX_UNSUPPORTED, 0);
                        break;
                }
                if (!ok) {
                        w->executed += executed;
                        return false;
                }
                if (++w->P >= w->next_wait) {
                        settle(w, w->P);
                        resched(w);
                }
        }
}

/* ------------------------------------------------------------------ */
/* grid                                                                */

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Fills every thread's row of @slot with @v. */
static void fill_row(worker_t *w, int32_t slot, uint64_t v)
{
        uint64_t *r = ROW(slot);
        for (uint32_t t = 0; t < w->n; t++)
                r[t] = v;
}

/* The value of special register @r for thread @t of block @b (b: x, y, z). */
static uint64_t special(const worker_t *w, unsigned r, uint32_t t, const uint64_t b[3])
{
        const gv_ptx_launch_t *l = w->g->l;
        uint32_t bx = l->block[0], by = l->block[1], lane = t % 32;
        switch (r) {
        case SR_TID_X: return t % bx;
        case SR_TID_Y: return (t / bx) % by;
        case SR_TID_Z: return t / (bx * by);
        case SR_NTID_X: case SR_NTID_Y: case SR_NTID_Z: return l->block[r - SR_NTID_X];
        case SR_CTAID_X: case SR_CTAID_Y: case SR_CTAID_Z: return b[r - SR_CTAID_X];
        case SR_NCTAID_X: case SR_NCTAID_Y: case SR_NCTAID_Z: return l->grid[r - SR_NCTAID_X];
        case SR_LANEID: return lane;
        case SR_WARPID: return t / 32;
        case SR_NWARPID: return (w->n + 31) / 32;
        case SR_NSMID: return 1;
        case SR_CLOCK: return (uint32_t) now_ns();
        case SR_CLOCK64: case SR_GLOBALTIMER: return now_ns();
        case SR_DYN_SMEM: return l->dynamic_shared;
        case SR_TOTAL_SMEM: return w->shared_bytes;
        case SR_DYN_BASE: return w->f->shared_static;
        case SR_LANEMASK_EQ: return 1u << lane;
        case SR_LANEMASK_LT: return (1u << lane) - 1;
        case SR_LANEMASK_LE: return (uint32_t) ((2ull << lane) - 1);
        case SR_LANEMASK_GT: return (uint32_t) ~((2ull << lane) - 1);
        case SR_LANEMASK_GE: return (uint32_t) ~((1u << lane) - 1);
        default: return 0; /* %smid, %gridid */
        }
}

/* Whether special register @r changes from block to block. */
static bool per_block(unsigned r)
{
        return r == SR_CTAID_X || r == SR_CTAID_Y || r == SR_CTAID_Z || r == SR_CLOCK || r == SR_CLOCK64 ||
               r == SR_GLOBALTIMER;
}

static void fill_specials(worker_t *w, const uint64_t b[3], bool block_only)
{
        for (size_t i = 0; i < w->f->n_fill; i++) {
                const ptx_fill_t *fl = &w->f->fill[i];
                if (block_only != per_block(fl->what))
                        continue;
                uint64_t *r = ROW(fl->slot);
                for (uint32_t t = 0; t < w->n; t++)
                        r[t] = special(w, fl->what, t, b);
        }
}

static void worker_free(worker_t *w)
{
        free(w->R);
        free(w->pc);
        free(w->act);
        free(w->tmp);
        free(w->alive);
        free(w->shared);
        free(w->local);
}

/* Allocates a worker's block state; false on OOM. */
static bool worker_init(worker_t *w, grid_t *g)
{
        const gv_ptx_launch_t *l = g->l;
        *w = (worker_t) { .g = g, .f = g->f, .code = g->f->code, .lo = 1, .hi = 0 };
        w->n = l->block[0] * l->block[1] * l->block[2];
        w->sink = g->f->n_slots;
        w->shared_bytes = g->f->shared_static + l->dynamic_shared;
        w->local_bytes = (g->f->local_bytes + 15) / 16 * 16;
        w->R = calloc((g->f->n_slots + 1) * (size_t) w->n, sizeof(uint64_t));
        w->pc = calloc(w->n, sizeof(uint32_t));
        w->act = calloc(w->n, sizeof(uint32_t));
        w->tmp = calloc(w->n, sizeof(uint32_t));
        w->alive = calloc(w->n, 1);
        w->shared = calloc(w->shared_bytes ? w->shared_bytes : 1, 1);
        w->local = calloc(w->local_bytes ? w->local_bytes * w->n : 1, 1);
        if (!w->R || !w->pc || !w->act || !w->tmp || !w->alive || !w->shared || !w->local) {
                worker_free(w);
                return false;
        }
        for (size_t i = 0; i < g->f->n_const; i++)
                fill_row(w, g->f->const_slot[i], g->f->const_val[i]);
        fill_specials(w, (const uint64_t[3]) { 0, 0, 0 }, false);
        return true;
}

static void report(grid_t *g, worker_t *w)
{
        pthread_mutex_lock(&g->lock);
        if (!g->fault) {
                g->fault = w->fault;
                g->fault_line = w->code[w->P].line;
                g->fault_addr = w->fault_addr;
        }
        pthread_mutex_unlock(&g->lock);
        atomic_store(&g->stop, true);
}

static void *work(void *arg)
{
        grid_t *g = arg;
        worker_t w;
        if (!worker_init(&w, g)) {
                pthread_mutex_lock(&g->lock);
                if (!g->fault)
                        g->fault = GV_PTX_NO_MEMORY;
                pthread_mutex_unlock(&g->lock);
                atomic_store(&g->stop, true);
                return NULL;
        }
        const gv_ptx_launch_t *l = g->l;
        for (;;) {
                uint64_t id = atomic_fetch_add(&g->next, 1);
                if (id >= g->blocks || atomic_load(&g->stop))
                        break;
                uint64_t b[3] = { id % l->grid[0], (id / l->grid[0]) % l->grid[1],
                                  id / ((uint64_t) l->grid[0] * l->grid[1]) };
                fill_specials(&w, b, true);
                if (w.shared_bytes)
                        memset(w.shared, 0, w.shared_bytes);
                if (!run_block(&w)) {
                        report(g, &w);
                        break;
                }
        }
        atomic_fetch_add(&g->executed, w.executed);
        worker_free(&w);
        return NULL;
}

static const char *fault_text(gv_ptx_fault_t f)
{
        switch (f) {
        case GV_PTX_ILLEGAL_ADDRESS: return "illegal address";
        case GV_PTX_MISALIGNED: return "misaligned address";
        case GV_PTX_TRAP: return "trap";
        case GV_PTX_UNSUPPORTED: return "instruction not supported";
        case GV_PTX_NO_MEMORY: return "out of host memory";
        default: return "ok";
        }
}

gv_ptx_fault_t gv_ptx_run(const gv_ptx_func_t *f, const gv_ptx_launch_t *l, char **msg)
{
        if (msg)
                *msg = NULL;
        if (f->unsupported) {
                if (msg)
                        *msg = strdup(f->unsupported);
                return GV_PTX_UNSUPPORTED;
        }
        grid_t g = { .f = f, .l = l, .lock = PTHREAD_MUTEX_INITIALIZER,
                     .blocks = (uint64_t) l->grid[0] * l->grid[1] * l->grid[2] };
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t n = l->workers ? l->workers : (cpus > 0 ? (uint64_t) cpus : 1);
        if (n > g.blocks)
                n = g.blocks;
        if (n > 64)
                n = 64;
        pthread_t tid[64];
        uint64_t started = 0;
        for (uint64_t i = 1; i < n; i++) /* the caller's thread is worker 0 */
                if (pthread_create(&tid[started], NULL, work, &g) == 0)
                        started++;
        work(&g);
        for (uint64_t i = 0; i < started; i++)
                pthread_join(tid[i], NULL);
        pthread_mutex_destroy(&g.lock);
        if (l->executed)
                *l->executed = atomic_load(&g.executed);
        if (g.fault && msg) {
                bool at = g.fault == GV_PTX_ILLEGAL_ADDRESS || g.fault == GV_PTX_MISALIGNED;
                int r = at ? asprintf(msg, "line %u: %s at 0x%llx", g.fault_line, fault_text(g.fault),
                                      (unsigned long long) g.fault_addr)
                           : asprintf(msg, "line %u: %s", g.fault_line, fault_text(g.fault));
                if (r < 0)
                        *msg = NULL;
        }
        return g.fault;
}
