/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX interpreter's arithmetic, logic, comparison, move and conversion
 * instructions (PTX ISA reference, "Integer Arithmetic", "Floating-Point",
 * "Comparison and Selection", "Logic and Shift", "Data Movement and
 * Conversion": cvt).  Each runs over the threads of the block it applies to
 * (FOR, ptx-exec-internal.h); every integer result keeps to its width.
 */
#include <math.h>
#include <stdint.h>

#include "mock/cuda/ptx-exec-internal.h"

/* cvt from a float kind: round as asked, then to a float or (saturating, NaN to 0) an integer kind. */
static uint64_t convert_float(uint64_t v, unsigned to, unsigned from, unsigned rnd, bool sat)
{
        bool fto = to == K_F32 || to == K_F64;
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
        if (isnan(d))
                return 0;
        unsigned bits = 8 * ptx_kind_bytes(to);
        if (is_signed(to)) {
                double lo = -ldexp(1, (int) bits - 1), hi = ldexp(1, (int) bits - 1) - 1;
                int64_t x = d <= lo ? (int64_t) lo : d >= hi ? (bits == 64 ? INT64_MAX : (int64_t) hi) : (int64_t) d;
                return trunc_kind((uint64_t) x, to);
        }
        double hi = ldexp(1, (int) bits) - 1;
        return d <= 0 ? 0 : d >= hi ? (bits == 64 ? UINT64_MAX : (uint64_t) hi) : (uint64_t) d;
}

/* An integer @s (of kind @from) clamped to the range of integer kind @to (cvt.sat). */
static int64_t saturate(int64_t s, unsigned to, unsigned from)
{
        unsigned bits = 8 * ptx_kind_bytes(to);
        if (is_signed(to)) {
                int64_t lo = bits == 64 ? INT64_MIN : -(1LL << (bits - 1));
                int64_t hi = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
                if (!is_signed(from))
                        return (uint64_t) s > (uint64_t) hi ? hi : s;
                return s < lo ? lo : s > hi ? hi : s;
        }
        uint64_t hi = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
        if (is_signed(from) && s < 0)
                return 0;
        return (uint64_t) s > hi ? (int64_t) hi : s;
}

/* cvt: @v of kind @from to kind @to with rounding @rnd and saturation @sat (PTX ISA "cvt"). */
static uint64_t convert(uint64_t v, unsigned to, unsigned from, unsigned rnd, bool sat)
{
        if (from == K_F32 || from == K_F64)
                return convert_float(v, to, from, rnd, sat);
        int64_t s = sval(v, from);
        if (to == K_F32)
                return of32(is_signed(from) ? (float) s : (float) (uint64_t) s);
        if (to == K_F64)
                return of64(is_signed(from) ? (double) s : (double) (uint64_t) s);
        return trunc_kind((uint64_t) (sat ? saturate(s, to, from) : s), to);
}

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
        case KEY(OP_MAD_WIDE, K_S16): FOR(D[t] = (uint32_t) ((int32_t) (int16_t) A[t] * (int16_t) B[t]) + (uint32_t) C[t]); break;
        case KEY(OP_MAD_WIDE, K_U32): FOR(D[t] = (uint64_t) (uint32_t) A[t] * (uint32_t) B[t] + C[t]); break;
        case KEY(OP_MAD_WIDE, K_S32): FOR(D[t] = (uint64_t) ((int64_t) (int32_t) A[t] * (int32_t) B[t]) + C[t]); break;
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
        case OP_ABS: FOR({ int64_t v = sval(A[t], k); D[t] = trunc_kind(v < 0 ? 0 - (uint64_t) v : (uint64_t) v, k); }); return true;
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
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
void ptx_setp(worker_t *w, const ptx_ins_t *in, runset_t rs)
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
// NOLINTNEXTLINE(readability-function-cognitive-complexity): FOR() expands each body into a dense and a sparse loop
void ptx_pack(worker_t *w, const ptx_ins_t *in, runset_t rs)
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

bool ptx_alu(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        return alu2(w, in, rs) || alu3(w, in, rs) || alu1(w, in, rs);
}
