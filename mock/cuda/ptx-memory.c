/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX interpreter's memory instructions: ld, st, atom and red in the
 * global, const, shared, local, param and generic state spaces.  Every
 * access is checked: global addresses against the caller's allocations
 * (gv_ptx_launch_t.range, with the last range found cached), the windows
 * against their sizes, and the alignment against the access size (PTX ISA
 * reference, "Addresses as Operands": accesses are naturally aligned).
 */
#include <stdint.h>
#include <string.h>

#include "mock/cuda/ptx-exec-internal.h"

/* ------------------------------------------------------------------ */
/* memory                                                              */

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

/*
 * Scalar ld/st of 4 or 8 bytes in the global, const or shared space: the
 * common case, kept tight.  Each instruction remembers the allocation its
 * last access fell in (w->rlo/rhi by PC), so a kernel that reads two
 * buffers and writes a third checks each access with two compares.
 */
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
static bool memory_fast(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        const uint64_t *A = ROW(in->a);
        unsigned k = in->kind, sz = ptx_kind_bytes(k), space = in->space;
        uint64_t off = (uint64_t) in->off, lo, hi;
        uintptr_t base = 0;
        if (space == SP_SHARED) {
                base = (uintptr_t) w->shared;
                lo = 0;
                hi = w->shared_bytes;
        } else {
                lo = w->rlo[w->P];
                hi = w->rhi[w->P];
        }
#define FAST_PTR(a) ((a) >= lo && (a) + sz <= hi && !((a) & (sz - 1)) ? (uint8_t *) (base + (uintptr_t) (a)) : NULL)
#define SLOW_PTR(p, a)                                                                  \
        do {                                                                            \
                if (!((p) = mem(w, t, space, (a), sz)))                                 \
                        return false;                                                   \
                if (space != SP_SHARED) {                                               \
                        lo = w->rlo[w->P] = w->lo;                                      \
                        hi = w->rhi[w->P] = w->hi;                                      \
                }                                                                       \
        } while (0)
/* AT(p) - declares @p, thread t's byte at its address: the fast check, else the full one (which may fault). */
#define AT(p)                                                                           \
        uint64_t a_ = A[t] + off;                                                       \
        uint8_t *(p) = FAST_PTR(a_);                                                    \
        if (!(p))                                                                       \
                SLOW_PTR(p, a_)
        if (in->op == OP_LD) {
                uint64_t *D = ROW(in->d[0]);
                /* one loop per width and sign, so the loop body has no test but the address's */
                if (sz == 8) {
                        FOR({
                                AT(p);
                                memcpy(&D[t], p, 8);
                        });
                } else if (k == K_S32) {
                        FOR({
                                AT(p);
                                int32_t v;
                                memcpy(&v, p, 4);
                                D[t] = (uint64_t) (int64_t) v;
                        });
                } else {
                        FOR({
                                AT(p);
                                uint32_t v;
                                memcpy(&v, p, 4);
                                D[t] = v;
                        });
                }
        } else {
                const uint64_t *S = ROW(in->s[0]);
                FOR({
                        AT(p);
                        if (sz == 8) {
                                memcpy(p, &S[t], 8);
                        } else {
                                uint32_t v = (uint32_t) S[t];
                                memcpy(p, &v, 4);
                        }
                });
        }
#undef AT
#undef FAST_PTR
#undef SLOW_PTR
        return true;
}

/*
 * Where the bytes [lo, hi) of state space @space are on the host, when
 * they all lie in one allocation or window: the host address of @lo; NULL
 * when they do not (no fault recorded: the per-thread path finds it).
 */
static uint8_t *span(worker_t *w, unsigned space, uint64_t lo, uint64_t hi)
{
        if (space == SP_GENERIC) {
                static const struct {
                        uint64_t at;
                        unsigned space;
                } windows[] = { { GV_PTX_GEN_SHARED, SP_SHARED }, { GV_PTX_GEN_PARAM, SP_PARAM } };
                space = SP_GLOBAL;
                for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++)
                        if (lo - windows[i].at < GV_PTX_WINDOW && hi - windows[i].at <= GV_PTX_WINDOW) {
                                space = windows[i].space;
                                lo -= windows[i].at;
                                hi -= windows[i].at;
                        }
                if (space == SP_GLOBAL && hi > GV_PTX_GEN_SHARED)
                        return NULL; /* local (one window a thread), or across windows */
        }
        switch (space) {
        case SP_SHARED:
                return hi <= w->shared_bytes ? w->shared + lo : NULL;
        case SP_PARAM:
                return hi <= w->f->param_bytes ? (uint8_t *) w->g->l->params + lo : NULL;
        case SP_GLOBAL:
        case SP_CONST: {
                const gv_ptx_launch_t *l = w->g->l;
                uint64_t a, b;
                if (lo >= w->rlo[w->P] && hi <= w->rhi[w->P])
                        return (uint8_t *) (uintptr_t) lo;
                if (!l->range || !l->range(l->range_ctx, lo, &a, &b) || hi > b)
                        return NULL;
                w->rlo[w->P] = a;
                w->rhi[w->P] = b;
                return (uint8_t *) (uintptr_t) lo;
        }
        default:
                return NULL;
        }
}

/* Loads of thread t at host address at(t) = @b0 + @stride * t into @D, for the threads of @rs. */
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
static void load_affine(worker_t *w, const ptx_ins_t *in, runset_t rs, uintptr_t b0, uint64_t stride)
{
        uint64_t *D = ROW(in->d[0]);
        unsigned k = in->kind, sz = ptx_kind_bytes(k);
#define AT(t) ((const uint8_t *) (b0 + stride * (t)))
        if (!rs.list && stride == sz && (k == K_U32 || k == K_F32)) { /* contiguous: a loop the compiler vectorises */
                const uint8_t *p = AT(0);
                for (uint32_t t = 0; t < rs.cnt; t++) {
                        uint32_t v;
                        memcpy(&v, p + 4 * (size_t) t, 4);
                        D[t] = v;
                }
        } else if (!rs.list && stride == 8 && sz == 8) {
                memcpy(D, AT(0), 8 * (size_t) rs.cnt);
        } else if (sz == 8) {
                FOR(memcpy(&D[t], AT(t), 8));
        } else if (k == K_U32 || k == K_F32) {
                FOR({
                        uint32_t v;
                        memcpy(&v, AT(t), 4);
                        D[t] = v;
                });
        } else {
                FOR(D[t] = load(AT(t), k));
        }
#undef AT
}

/* Stores of thread t at host address @b0 + @stride * t from @S, for the threads of @rs (in thread order). */
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
static void store_affine(worker_t *w, const ptx_ins_t *in, runset_t rs, uintptr_t b0, uint64_t stride)
{
        const uint64_t *S = ROW(in->s[0]);
        unsigned k = in->kind, sz = ptx_kind_bytes(k);
#define AT(t) ((uint8_t *) (b0 + stride * (t)))
        if (!rs.list && stride == 4 && sz == 4) { /* contiguous: a loop the compiler vectorises */
                uint8_t *p = AT(0);
                for (uint32_t t = 0; t < rs.cnt; t++) {
                        uint32_t v = (uint32_t) S[t];
                        memcpy(p + 4 * (size_t) t, &v, 4);
                }
        } else if (!rs.list && stride == 8 && sz == 8) {
                memcpy(AT(0), S, 8 * (size_t) rs.cnt);
        } else {
                FOR(store(AT(t), k, S[t]));
        }
#undef AT
}

/*
 * Scalar ld / st whose address is affine across the block (uniform
 * included): the range its threads touch is checked once, against one
 * allocation or window, and the loop over the threads checks nothing.
 * Alignment holds for every thread when it holds for thread 0 and the
 * stride.  A load of a uniform address by every live thread reads once and
 * leaves a uniform value.  False when it does not apply, or the range is
 * not all valid: the per-thread path then runs @in and faults at the first
 * thread that reaches outside, as it would have.
 */
static bool memory_affine(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        const shape_t *h = &w->sh[in->a];
        unsigned sz = ptx_kind_bytes(in->kind);
        uint64_t stride = h->stride, a0 = h->base + (uint64_t) in->off;
        int64_t ss = (int64_t) stride;
        if (!h->affine || in->aux2 > 1 || ss > (1LL << 32) || ss < -(1LL << 32) || ((a0 | stride) & (sz - 1)))
                return false;
        /* the threads of @rs run in order: the first and the last touch the ends (|stride| * 1,023 < 2^42) */
        uint32_t first = rs.list ? rs.list[0] : 0, last = rs.list ? rs.list[rs.cnt - 1] : rs.cnt - 1;
        uint64_t af = a0 + stride * first, al = a0 + stride * last;
        uint64_t lo = ss < 0 ? al : af, hi = (ss < 0 ? af : al) + sz;
        if (hi <= lo)
                return false;
        uint8_t *p = span(w, in->space, lo, hi);
        if (!p)
                return false;
        uintptr_t b0 = (uintptr_t) p - (uintptr_t) lo + (uintptr_t) a0; /* thread 0's host address (modulo 2^64) */
        if (stride == sz && in->space != SP_SHARED && in->space != SP_PARAM) {
                /* a contiguous stream: the next block's part of it, ahead of time (a prefetch never faults) */
                uintptr_t next = (uintptr_t) p + (uintptr_t) (hi - lo);
                for (uint64_t at = 0; at < hi - lo; at += 64) {
                        if (in->op == OP_ST)
                                __builtin_prefetch((const void *) (next + at), 1);
                        else
                                __builtin_prefetch((const void *) (next + at), 0);
                }
        }
        if (in->op == OP_ST) {
                if (in->space == SP_PARAM || in->space == SP_CONST)
                        return false;
                if (w->sh[in->s[0]].lazy)
                        ptx_shape_fill(w, in->s[0]);
                store_affine(w, in, rs, b0, stride);
                return true;
        }
        if (stride == 0 && rs.cnt == w->nalive && in->d[0] >= 0) {
                ptx_shape_set(w, in->d[0], load(p, in->kind), 0);
                return true;
        }
        ptx_shape_written(w, in->d[0], rs);
        load_affine(w, in, rs, b0, stride);
        return true;
}

/* ld / st / atom / red; false on a fault. */
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
bool ptx_memory(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        if ((in->op == OP_LD || in->op == OP_ST) && rs.cnt && memory_affine(w, in, rs))
                return true;
        ptx_shape_rows(w, in, rs);
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
                                ROW(in->d[i])[t] = load(p + (size_t) i * sz, k);
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
                                store(p + (size_t) i * sz, k, ROW(in->s[i])[t]);
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
