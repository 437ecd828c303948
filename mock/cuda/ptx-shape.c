/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Uniform and affine values in the PTX interpreter.  Much of a kernel
 * computes the same value in every thread of a block (parameters, %ctaid,
 * %ntid, constants and what is made of them) or a value that grows by the
 * same step from thread to thread (%tid.x in a one-dimensional block, and
 * the indexes and addresses made of it: ctaid * ntid + tid, base + 4 * i).
 * The interpreter records such a slot as a shape, base + stride * t for
 * thread t (stride 0: uniform), and runs the instructions that keep the
 * shape without touching the row of 1,024 threads at most: it runs the
 * instruction itself on threads 0 and n - 1 only (the same code as on rows,
 * so the values are the same to the bit) and takes the stride from the
 * operation's algebra.  A row is written only when an instruction that
 * needs one reads the slot (ptx_shape_rows), and an affine address lets a
 * load or store check its whole range once (ptx-memory.c).
 *
 * Why the shapes are exact: an integer add, sub, mul.lo, mad.lo, shl, mov,
 * cvta or narrowing cvt of width w computes modulo 2^w, where an affine
 * source stays affine; the result, kept zero-extended in its 64-bit slot,
 * is affine in 64 bits unless it wraps past a multiple of 2^w between
 * thread 0 and thread n - 1, and such a wrap shows as a difference of a
 * nonzero multiple of 2^w (never 0 modulo 2^64, as n <= 1,024) between
 * the two ends and base + stride * (n - 1): the check every result passes.
 * A widening read (mul.wide, mad.wide, widening cvt) sign- or zero-extends
 * its source, which is affine only when it does not wrap at its own width;
 * the stride is bounded so that it wraps once at most, and the check of
 * the ends sees that once.  Anything else (floating point, setp, logic,
 * shifts right, a product of two affine values ...) runs on rows unless all
 * its sources are uniform, when one thread's result is every thread's.
 */
#include <stdint.h>

#include "mock/cuda/ptx-exec-internal.h"

void ptx_shape_fill(worker_t *w, int32_t s)
{
        shape_t *h = &w->sh[s];
        uint64_t *r = ROW(s), v = h->base, st = h->stride;
        uint32_t n = w->n;
        for (uint32_t t = 0; t < n; t++, v += st) /* an induction the compiler vectorises, unlike st * t */
                r[t] = v;
        h->lazy = false;
}

void ptx_shape_set(worker_t *w, int32_t s, uint64_t base, uint64_t stride)
{
        uint64_t *r = ROW(s);
        w->sh[s] = (shape_t) { .base = base, .stride = stride, .affine = true, .lazy = true };
        r[0] = base;
        r[w->n - 1] = base + stride * (w->n - 1);
}

void ptx_shape_written(worker_t *w, int32_t d, runset_t rs)
{
        if (d < 0)
                return;
        shape_t *h = &w->sh[d];
        if (h->lazy && rs.cnt != w->nalive) /* the live threads left out keep their values */
                ptx_shape_fill(w, d);
        h->affine = h->lazy = false;
}

void ptx_shape_rows(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        int32_t s[7], d[4];
        int ns = ptx_sources(in, s), nd = ptx_dests(in, d);
        for (int i = 0; i < ns; i++)
                if (w->sh[s[i]].lazy)
                        ptx_shape_fill(w, s[i]);
        for (int i = 0; i < nd; i++)
                ptx_shape_written(w, d[i], rs);
}

void ptx_shape_detect(worker_t *w, int32_t s)
{
        const uint64_t *r = ROW(s);
        uint64_t st = w->n > 1 ? r[1] - r[0] : 0;
        for (uint32_t t = 0; t < w->n; t++)
                if (r[t] != r[0] + st * t)
                        return;
        w->sh[s] = (shape_t) { .base = r[0], .stride = st, .affine = true };
}

/* The low @bits of @v, sign-extended. */
static int64_t sext(uint64_t v, unsigned bits)
{
        return bits >= 64 ? (int64_t) v : (int64_t) (v << (64 - bits)) >> (64 - bits);
}

/*
 * The stride of affine @x read as an integer of @bits (<= 32) bits, extended:
 * false when it could wrap more than once across the block.
 */
static bool read_stride(const worker_t *w, const shape_t *x, unsigned bits, int64_t *out)
{
        int64_t s = sext(x->stride, bits);
        uint64_t mag = s < 0 ? 0 - (uint64_t) s : (uint64_t) s;
        if (mag && w->n - 1 > ((1ull << bits) - 1) / mag)
                return false;
        *out = s;
        return true;
}

static bool integer_kind(unsigned k)
{
        return (k >= K_U8 && k <= K_S64);
}

/* The stride of a widening product of affine @a and @b (one of them uniform) read as @kind2, plus @c's. */
static bool wide_stride(const worker_t *w, const ptx_ins_t *in, const shape_t *a, const shape_t *b,
                        const shape_t *c, uint64_t *out)
{
        if (a->stride && b->stride)
                return false;
        const shape_t *x = a->stride ? a : b, *y = a->stride ? b : a;
        int64_t xs;
        if (!read_stride(w, x, 8 * ptx_kind_bytes(in->kind2), &xs))
                return false;
        /* |xs| < 2^32 and |y| < 2^32: the product is exact */
        *out = (uint64_t) xs * (uint64_t) sval(y->base, in->kind2) + (c ? c->stride : 0);
        return true;
}

/*
 * The stride of @in's result from the operation's algebra when its sources
 * are affine (not all uniform), as a 64-bit stride of the result's slot;
 * false when the operation does not keep values affine.
 */
static bool result_stride(const worker_t *w, const ptx_ins_t *in, uint64_t *out)
{
        const shape_t *a = &w->sh[in->a];
        const shape_t *b = in->b >= 0 ? &w->sh[in->b] : NULL, *c = in->c >= 0 ? &w->sh[in->c] : NULL;
        unsigned k = in->kind, bits = 8 * ptx_kind_bytes(k);
        bool integer = integer_kind(k);
        uint64_t s;
        int64_t xs;
        switch (in->op) {
        case OP_MOV:
        case OP_CVTA_TO:
        case OP_CVTA_FROM:
                if (!bits)
                        return false;
                s = a->stride;
                break;
        case OP_ADD:
        case OP_SUB:
                if (!integer || !b)
                        return false;
                s = in->op == OP_ADD ? a->stride + b->stride : a->stride - b->stride;
                break;
        case OP_MUL_LO:
        case OP_MAD_LO:
                if (!integer || !b || (a->stride && b->stride) || (in->op == OP_MAD_LO && !c))
                        return false;
                s = a->stride * b->base + b->stride * a->base + (in->op == OP_MAD_LO ? c->stride : 0);
                break;
        case OP_SHL:
                if (!integer || !b || b->stride)
                        return false;
                s = (uint32_t) b->base >= bits ? 0 : a->stride << (uint32_t) b->base;
                break;
        case OP_MUL_WIDE:
        case OP_MAD_WIDE:
                if (!b || (in->op == OP_MAD_WIDE && !c) || !wide_stride(w, in, a, b, in->op == OP_MAD_WIDE ? c : NULL, &s))
                        return false;
                bits *= 2; /* the kind is the sources' */
                break;
        case OP_CVT: {
                unsigned from = in->kind2, wf = 8 * ptx_kind_bytes(from);
                if (in->aux || in->aux2 || !integer || !integer_kind(from))
                        return false;
                if (wf >= bits) { /* narrowing: modulo 2^bits */
                        s = a->stride;
                        break;
                }
                if (!read_stride(w, a, wf, &xs))
                        return false;
                s = (uint64_t) xs;
                break;
        }
        default:
                return false;
        }
        *out = (uint64_t) sext(s, bits);
        return true;
}

/* @v as the comparison of kind @k reads it (signed or unsigned), exactly. */
static __int128 cmp_value(uint64_t v, unsigned k)
{
        return is_signed(k) ? (__int128) sval(v, k) : (__int128) trunc_kind(v, k);
}

/*
 * Whether setp @in compares an affine value with a uniform one in an order
 * (lt, le, gt, ge of an integer kind), any predicate it combines with
 * uniform: then the comparison is the same in every thread when it is the
 * same at threads 0 and n - 1, provided the affine value, read as the
 * comparison reads it, does not wrap across the block.  It does not when
 * its ends differ by exactly stride * (n - 1): each thread's value is the
 * exact base + stride * t less a multiple of 2^width that only grows with
 * t, so equal ends leave every thread the same multiple, and the values
 * run monotonically from one end to the other.
 */
static bool setp_ordered(const worker_t *w, const ptx_ins_t *in)
{
        const shape_t *a = &w->sh[in->a], *b = &w->sh[in->b];
        unsigned k = in->kind;
        if (!integer_kind(k) || in->aux < CMP_LT || in->aux > CMP_GE || (a->stride && b->stride))
                return false;
        if (in->aux2 != BOOL_NONE && w->sh[in->c].stride)
                return false;
        const shape_t *x = a->stride ? a : b;
        uint32_t last = w->n - 1;
        uint64_t end = x->base + x->stride * last;
        return cmp_value(end, k) - cmp_value(x->base, k) == (__int128) (int64_t) x->stride * last;
}

bool ptx_shape_alu(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        if (w->plain || rs.cnt == 0 || rs.cnt != w->nalive)
                return false;
        int32_t src[7];
        int ns = ptx_sources(in, src);
        bool uniform = true;
        for (int i = 0; i < ns; i++) {
                const shape_t *h = &w->sh[src[i]];
                if (!h->affine)
                        return false;
                uniform &= h->stride == 0;
        }
        uint64_t s = 0;
        bool flat = !uniform && in->op == OP_SETP; /* a uniform result of affine sources */
        if (flat ? !setp_ordered(w, in) : !uniform && (in->d[1] >= 0 || !result_stride(w, in, &s)))
                return false;
        /* the instruction itself on thread 0 (and n - 1), into the scratch rows */
        ptx_ins_t p = *in;
        p.guard = -1;
        for (int i = 0; i < 4; i++)
                if (in->d[i] >= 0)
                        p.d[i] = (int32_t) (w->probe + (size_t) i);
        uint32_t last = w->n - 1, ends[2] = { 0, last };
        runset_t two = { ends, uniform || last == 0 ? 1 : 2 };
        if (in->op == OP_SETP)
                ptx_setp(w, &p, two);
        else if (in->op == OP_PACK || in->op == OP_UNPACK)
                ptx_pack(w, &p, two);
        else if (!ptx_alu(w, &p, two))
                return false;
        for (int i = 0; i < 4 && !uniform; i++) {
                const uint64_t *r = ROW(p.d[i]);
                if (in->d[i] >= 0 && r[last] != r[0] + s * last)
                        return false; /* it wraps, or the comparison differs: rows */
        }
        for (int i = 0; i < 4; i++)
                if (in->d[i] >= 0)
                        ptx_shape_set(w, in->d[i], ROW(p.d[i])[0], s);
        return true;
}
