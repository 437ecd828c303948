/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX instruction decoder: one statement `[@[!]p] opcode.mods operands;`
 * into a ptx_ins_t (PTX ISA reference, "Instruction Set": integer, floating
 * point, comparison and selection, logic and shift, data movement and
 * conversion, control flow, parallel synchronization and communication).
 * An opcode the interpreter does not run becomes OP_UNSUPPORTED, recorded
 * with its line, never a wrong instruction.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/ptx-parse-internal.h"

/* The modifiers of an opcode (".global", ".u32", ".rn", ...). */
typedef struct mods {
        ptx_kind_t k[3];
        int nk;
        int space;           /* ptx_space_t, -1 unset */
        int cmp;             /* ptx_cmp_t, -1 */
        int rnd;             /* RND_* */
        int atom;            /* ptx_atom_t, -1 */
        int bop;             /* BOOL_* */
        int vec;             /* 1, 2, 4 */
        bool lo, hi, wide, sat, to, approx, shiftamt, carry, unknown;
        tok_t bad;           /* the first modifier not understood */
} mods_t;


/* ------------------------------------------------------------------ */
/* modifiers                                                           */

static void mod_one(mods_t *m, const char *s, size_t n)
{
        static const char *const spaces[] = { [SP_GLOBAL] = ".global", [SP_CONST] = ".const",
                                              [SP_SHARED] = ".shared", [SP_LOCAL] = ".local",
                                              [SP_PARAM] = ".param" };
        static const char *const cmps[] = { ".eq",  ".ne",  ".lt",  ".le",  ".gt",  ".ge",  ".equ",
                                            ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan" };
        static const char *const unsigned_cmps[] = { ".lo", ".ls", ".hi", ".hs" };
        static const int unsigned_cmp_of[] = { CMP_LT, CMP_LE, CMP_GT, CMP_GE };
        static const char *const atoms[] = { ".add", ".min", ".max", ".inc", ".dec",
                                             ".and", ".or",  ".xor", ".exch", ".cas" };
        static const char *const ignored[] = {
                ".ftz", ".nc", ".volatile", ".relaxed", ".acquire", ".release", ".acq_rel", ".weak", ".sc",
                ".cta", ".gpu", ".sys", ".cluster", ".uni", ".sync", ".aligned", ".full", ".ca", ".cg", ".cs",
                ".lu", ".cv", ".wb", ".wt", ".noftz", ".NaN", ".relu", ".xorsign", ".abs", ".mmio", ".unified",
        };
        for (int i = 0; i < (int) (sizeof(spaces) / sizeof(spaces[0])); i++)
                if (spaces[i] && eq(s, n, spaces[i])) {
                        m->space = i;
                        return;
                }
        for (int i = 0; i < (int) (sizeof(cmps) / sizeof(cmps[0])); i++)
                if (eq(s, n, cmps[i])) {
                        m->cmp = i;
                        return;
                }
        if (memchr(s, ':', n)) /* cache and eviction hints (.L2::128B, .L1::no_allocate) */
                return;
        for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
                if (eq(s, n, ignored[i]))
                        return;
        if (eq(s, n, ".lo") || eq(s, n, ".hi") || eq(s, n, ".ls") || eq(s, n, ".hs")) {
                /* .lo/.hi: mul/mad halves; as comparisons .lo/.ls/.hi/.hs (unsigned): both recorded */
                for (int i = 0; i < 4; i++)
                        if (eq(s, n, unsigned_cmps[i]))
                                m->cmp = unsigned_cmp_of[i];
                m->lo |= eq(s, n, ".lo");
                m->hi |= eq(s, n, ".hi");
                return;
        }
        for (int i = 0; i < (int) (sizeof(atoms) / sizeof(atoms[0])); i++)
                if (eq(s, n, atoms[i])) {
                        m->atom = i;
                        if (i == AT_AND || i == AT_OR || i == AT_XOR)
                                m->bop = i == AT_AND ? BOOL_AND : i == AT_OR ? BOOL_OR : BOOL_XOR;
                        return;
                }
        {
                static const char *const types[] = { ".b8",  ".b16", ".b32", ".b64", ".u8",  ".u16", ".u32",
                                                     ".u64", ".s8",  ".s16", ".s32", ".s64", ".f32", ".f64",
                                                     ".pred", ".f16", ".f16x2", ".bf16", ".bf16x2", ".b128",
                                                     ".tf32", ".e4m3", ".e5m2" };
                static const ptx_kind_t kinds[] = { K_U8,  K_U16, K_U32, K_U64, K_U8,  K_U16, K_U32, K_U64,
                                                    K_S8,  K_S16, K_S32, K_S64, K_F32, K_F64, K_PRED, K_F16,
                                                    K_F16, K_F16, K_F16, K_F16, K_F16, K_F16, K_F16 };
                for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                        if (eq(s, n, types[i])) {
                                if (m->nk < 3)
                                        m->k[m->nk++] = kinds[i];
                                return;
                        }
        }
        if (eq(s, n, ".rn") || eq(s, n, ".rni")) {
                m->rnd = RND_N;
        } else if (eq(s, n, ".rz") || eq(s, n, ".rzi")) {
                m->rnd = RND_Z;
        } else if (eq(s, n, ".rm") || eq(s, n, ".rmi")) {
                m->rnd = RND_M;
        } else if (eq(s, n, ".rp") || eq(s, n, ".rpi")) {
                m->rnd = RND_P;
        } else if (eq(s, n, ".wide")) {
                m->wide = true;
        } else if (eq(s, n, ".sat")) {
                m->sat = true;
        } else if (eq(s, n, ".to")) {
                m->to = true;
        } else if (eq(s, n, ".approx")) {
                m->approx = true;
        } else if (eq(s, n, ".shiftamt")) {
                m->shiftamt = true;
        } else if (eq(s, n, ".cc")) {
                m->carry = true;
        } else if (eq(s, n, ".v2") || eq(s, n, ".v4")) {
                m->vec = s[2] - '0';
        } else if (!m->unknown) {
                m->unknown = true;
                m->bad = (tok_t) { .s = s, .n = n };
        }
}

/* Splits "ld.global.f32" into its base ("ld", *base_n) and modifiers. */
static void split_opcode(const tok_t *t, size_t *base_n, mods_t *m)
{
        *m = (mods_t) { .space = -1, .cmp = -1, .atom = -1, .vec = 1 };
        const char *s = t->s, *e = t->s + t->n;
        const char *dot = memchr(s, '.', t->n);
        *base_n = dot ? (size_t) (dot - s) : t->n;
        for (const char *p = dot; p && p < e;) {
                const char *q = memchr(p + 1, '.', (size_t) (e - p - 1));
                const char *end = q ? q : e;
                mod_one(m, p, (size_t) (end - p));
                p = q;
        }
}

/* ------------------------------------------------------------------ */
/* instructions                                                        */

/* Appends @in to the function's code; its index, or -1 on OOM. */
static long emit(parser_t *ps, const ptx_ins_t *in)
{
        struct gv_ptx_func *f = ps->f;
        if (!GV_GREEDY_REALLOC(f->code, ps->cap_code, f->n_code + 1))
                return ptx_perr_oom(ps);
        f->code[f->n_code] = *in;
        return (long) f->n_code++;
}

/* Records the first instruction the interpreter cannot run and emits OP_UNSUPPORTED. */
static int unsupported(parser_t *ps, ptx_ins_t *in, const tok_t *op, const char *why)
{
        if (!ps->f->unsupported &&
            asprintf(&ps->f->unsupported, "line %u: %.*s: %s", in->line, (int) (op->n > 60 ? 60 : op->n), op->s,
                     why) < 0)
                ps->f->unsupported = NULL;
        in->op = OP_UNSUPPORTED;
        return emit(ps, in) < 0 ? -ENOMEM : 0;
}

/* The kind an integer mul.wide / mad.wide produces from @k. */
static ptx_kind_t widened(ptx_kind_t k)
{
        switch (k) {
        case K_U16: return K_U32;
        case K_U32: return K_U64;
        case K_S16: return K_S32;
        case K_S32: return K_S64;
        default: return K_NONE;
        }
}

static bool is_float(ptx_kind_t k)
{
        return k == K_F32 || k == K_F64;
}

/* Operations by opcode: the arithmetic and logic ones that take (d, a[, b[, c]]) of one kind. */
static const struct {
        const char *name;
        uint8_t op, nsrc;
} simple[] = {
        { "add", OP_ADD, 2 },   { "sub", OP_SUB, 2 },     { "div", OP_DIV, 2 },     { "rem", OP_REM, 2 },
        { "min", OP_MIN, 2 },   { "max", OP_MAX, 2 },     { "and", OP_AND, 2 },     { "or", OP_OR, 2 },
        { "xor", OP_XOR, 2 },   { "shl", OP_SHL, 2 },     { "shr", OP_SHR, 2 },     { "copysign", OP_COPYSIGN, 2 },
        { "fma", OP_FMA, 3 },   { "selp", OP_SELP, 3 },   { "bfe", OP_BFE, 3 },     { "prmt", OP_PRMT, 3 },
        { "neg", OP_NEG, 1 },   { "abs", OP_ABS, 1 },     { "not", OP_NOT, 1 },     { "cnot", OP_CNOT, 1 },
        { "popc", OP_POPC, 1 }, { "clz", OP_CLZ, 1 },     { "brev", OP_BREV, 1 },   { "sqrt", OP_SQRT, 1 },
        { "rsqrt", OP_RSQRT, 1 }, { "rcp", OP_RCP, 1 },   { "sin", OP_SIN, 1 },     { "cos", OP_COS, 1 },
        { "ex2", OP_EX2, 1 },   { "lg2", OP_LG2, 1 },     { "tanh", OP_TANH, 1 },   { "bfi", OP_BFI, 4 },
};

/* Opcodes that change nothing the interpreter models. */
static const char *const nops[] = { "membar", "fence", "nanosleep", "pmevent", "prefetch", "prefetchu",
                                    "discard", "applypriority", "griddepcontrol" };

/* Decodes the simple operations; 1 when @base was none of them. */
static int decode_simple(parser_t *ps, ptx_ins_t *in, const tok_t *op, size_t bn, const mods_t *m,
                         const opnd_t *o, int no)
{
        size_t i = 0;
        while (i < sizeof(simple) / sizeof(simple[0]) && !eq(op->s, bn, simple[i].name))
                i++;
        if (i == sizeof(simple) / sizeof(simple[0]))
                return 1;
        if (m->nk != 1 || no != simple[i].nsrc + 1)
                return ptx_perr(ps, "%.*s: expected one type and %u operands", (int) bn, op->s, simple[i].nsrc + 1);
        in->op = simple[i].op;
        in->kind = (uint8_t) m->k[0];
        if (m->k[0] == K_F16 || (in->op == OP_FMA && !is_float(m->k[0])))
                return unsupported(ps, in, op, "this type is not supported by the mock's PTX interpreter");
        if (in->op == OP_SELP || in->op == OP_BFE || in->op == OP_PRMT || in->op == OP_BFI) {
                /* selp c, bfe b c, bfi c d, prmt c: 32-bit operands of their own kinds */
                ptx_kind_t kb = in->op == OP_SELP ? K_PRED : K_U32;
                in->d[0] = ptx_dst(ps, &o[0]);
                in->a = ptx_src(ps, &o[1], m->k[0]);
                in->b = ptx_src(ps, &o[2], in->op == OP_SELP || in->op == OP_BFI ? m->k[0] : K_U32);
                in->c = ptx_src(ps, &o[3], in->op == OP_SELP ? kb : K_U32);
                in->cneg = o[3].neg;
                if (in->op == OP_BFI)
                        in->s[0] = ptx_src(ps, &o[4], K_U32);
                if (in->op == OP_PRMT && m->unknown)
                        return unsupported(ps, in, op, "prmt modes are not supported by the mock's PTX interpreter");
                return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
        }
        bool shift = in->op == OP_SHL || in->op == OP_SHR;
        in->d[0] = ptx_dst(ps, &o[0]);
        in->a = ptx_src(ps, &o[1], m->k[0]);
        if (simple[i].nsrc >= 2)
                in->b = ptx_src(ps, &o[2], shift ? K_U32 : m->k[0]);
        if (simple[i].nsrc >= 3)
                in->c = ptx_src(ps, &o[3], m->k[0]);
        if (in->kind == K_PRED && in->op == OP_NOT)
                in->op = OP_CNOT;
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

/* mul / mad with .lo .hi .wide (integers) or a rounding (floats). */
static int decode_mul(parser_t *ps, ptx_ins_t *in, const tok_t *op, bool mad, const mods_t *m, const opnd_t *o,
                      int no)
{
        if (m->nk != 1 || no != (mad ? 4 : 3))
                return ptx_perr(ps, "%s: expected one type and %d operands", mad ? "mad" : "mul", mad ? 4 : 3);
        ptx_kind_t k = m->k[0];
        if (k == K_F16)
                return unsupported(ps, in, op, "this type is not supported by the mock's PTX interpreter");
        if (is_float(k)) {
                in->op = mad ? OP_FMA : OP_MUL_LO;
        } else if (m->wide) {
                if (widened(k) == K_NONE)
                        return ptx_perr(ps, ".wide takes 16- or 32-bit operands");
                in->op = mad ? OP_MAD_WIDE : OP_MUL_WIDE;
        } else if (m->hi) {
                in->op = mad ? OP_MAD_HI : OP_MUL_HI;
        } else {
                in->op = mad ? OP_MAD_LO : OP_MUL_LO;
        }
        if (m->carry)
                return unsupported(ps, in, op, "carry (.cc) is not supported by the mock's PTX interpreter");
        in->kind = (uint8_t) k;
        in->kind2 = (uint8_t) k;
        ptx_kind_t wide = in->op == OP_MUL_WIDE || in->op == OP_MAD_WIDE ? widened(k) : k;
        in->d[0] = ptx_dst(ps, &o[0]);
        in->a = ptx_src(ps, &o[1], k);
        in->b = ptx_src(ps, &o[2], k);
        if (mad)
                in->c = ptx_src(ps, &o[3], wide);
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

static int decode_setp(parser_t *ps, ptx_ins_t *in, const mods_t *m, const opnd_t *o, int no)
{
        if (m->nk != 1 || m->cmp < 0 || (no != 3 && no != 4))
                return ptx_perr(ps, "setp: expected a comparison, a type and 3 or 4 operands");
        in->op = OP_SETP;
        in->kind = (uint8_t) m->k[0];
        in->aux = (uint8_t) m->cmp;
        in->aux2 = (uint8_t) (no == 4 ? m->bop : BOOL_NONE);
        if (no == 4 && m->bop == BOOL_NONE)
                return ptx_perr(ps, "setp with 4 operands needs .and, .or or .xor");
        in->d[0] = ptx_dst(ps, &o[0]);
        in->d[1] = ptx_dst_slot(ps, o[0].pair);
        in->a = ptx_src(ps, &o[1], m->k[0]);
        in->b = ptx_src(ps, &o[2], m->k[0]);
        if (no == 4) {
                in->c = ptx_src(ps, &o[3], K_PRED);
                in->cneg = o[3].neg;
        }
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

static int decode_mov(parser_t *ps, ptx_ins_t *in, const mods_t *m, const opnd_t *o, int no)
{
        if (m->nk != 1 || no != 2)
                return ptx_perr(ps, "mov: expected one type and 2 operands");
        in->kind = (uint8_t) m->k[0];
        if (o[0].type == O_VEC || o[1].type == O_VEC) {
                const opnd_t *v = o[0].type == O_VEC ? &o[0] : &o[1];
                unsigned bytes = ptx_kind_bytes(m->k[0]);
                if ((v->nvec != 2 && v->nvec != 4) || bytes < 4 || (bytes * 8) % (unsigned) v->nvec)
                        return ptx_perr(ps, "mov: bad vector");
                in->op = o[0].type == O_VEC ? OP_UNPACK : OP_PACK;
                in->aux2 = (uint8_t) v->nvec;
                for (int i = 0; i < v->nvec; i++) {
                        if (in->op == OP_UNPACK)
                                in->d[i] = ptx_dst_slot(ps, v->vec[i]);
                        else if ((in->s[i] = v->vec[i]) < 0)
                                return ptx_perr(ps, "'_' is not a source");
                }
                if (in->op == OP_UNPACK)
                        in->a = ptx_src(ps, &o[1], m->k[0]);
                else
                        in->d[0] = ptx_dst(ps, &o[0]);
        } else {
                in->op = OP_MOV;
                in->d[0] = ptx_dst(ps, &o[0]);
                in->a = ptx_src(ps, &o[1], m->k[0]);
        }
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

static int decode_cvt(parser_t *ps, ptx_ins_t *in, const tok_t *op, const mods_t *m, const opnd_t *o, int no)
{
        if (m->nk != 2 || no != 2)
                return ptx_perr(ps, "cvt: expected two types and 2 operands");
        in->op = OP_CVT;
        in->kind = (uint8_t) m->k[0];
        in->kind2 = (uint8_t) m->k[1];
        in->aux = (uint8_t) m->rnd;
        in->aux2 = m->sat;
        if (m->k[0] == K_F16 || m->k[1] == K_F16 || m->k[0] == K_PRED || m->k[1] == K_PRED)
                return unsupported(ps, in, op, "this conversion is not supported by the mock's PTX interpreter");
        in->d[0] = ptx_dst(ps, &o[0]);
        in->a = ptx_src(ps, &o[1], m->k[1]);
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

static int decode_cvta(parser_t *ps, ptx_ins_t *in, const mods_t *m, const opnd_t *o, int no)
{
        if (no != 2 || m->space < 0 || m->nk != 1)
                return ptx_perr(ps, "cvta: expected a state space, a size and 2 operands");
        in->op = m->to ? OP_CVTA_TO : OP_CVTA_FROM;
        in->space = (uint8_t) m->space;
        in->kind = (uint8_t) m->k[0];
        in->d[0] = ptx_dst(ps, &o[0]);
        in->a = ptx_src(ps, &o[1], m->k[0]);
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

/* atom / red after their common checks: the operation, the space, the operands. */
static int decode_atomic(parser_t *ps, ptx_ins_t *in, const tok_t *op, size_t bn, bool red, const mods_t *m,
                         const opnd_t *o, int no)
{
        if (m->atom < 0 || m->vec != 1)
                return ptx_perr(ps, "%.*s: expected an operation (.add, .cas, ...)", (int) bn, op->s);
        if (ptx_kind_bytes(m->k[0]) < 4)
                return unsupported(ps, in, op, "8- and 16-bit atomics are not supported by the mock's PTX interpreter");
        in->aux = (uint8_t) m->atom;
        if (in->space != SP_GLOBAL && in->space != SP_SHARED && in->space != SP_GENERIC)
                return ptx_perr(ps, "atomics work on global and shared memory");
        bool f = is_float(m->k[0]);
        if (f && m->atom != AT_ADD && m->atom != AT_EXCH && m->atom != AT_MIN && m->atom != AT_MAX)
                return ptx_perr(ps, "this atomic operation takes no floating-point type");
        int want = (red ? 2 : 3) + (m->atom == AT_CAS);
        if (no != want)
                return ptx_perr(ps, "%.*s: expected %d operands", (int) bn, op->s, want);
        int i = 0;
        if (!red)
                in->d[0] = ptx_dst(ps, &o[i++]);
        if (o[i].type != O_ADDR)
                return ptx_perr(ps, "expected an address");
        in->a = o[i].slot;
        in->off = o[i++].off;
        in->b = ptx_src(ps, &o[i++], m->k[0]);
        if (m->atom == AT_CAS)
                in->c = ptx_src(ps, &o[i], m->k[0]);
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

/* ld / ldu / st / atom / red. */
static int decode_memory(parser_t *ps, ptx_ins_t *in, const tok_t *op, size_t bn, const mods_t *m,
                         const opnd_t *o, int no)
{
        bool ld = eq(op->s, bn, "ld") || eq(op->s, bn, "ldu"), st = eq(op->s, bn, "st");
        bool red = eq(op->s, bn, "red");
        in->op = ld ? OP_LD : st ? OP_ST : red ? OP_RED : OP_ATOM;
        in->space = (uint8_t) (m->space < 0 ? SP_GENERIC : m->space);
        if (m->nk != 1)
                return ptx_perr(ps, "%.*s: expected one type", (int) bn, op->s);
        in->kind = (uint8_t) m->k[0];
        in->aux2 = (uint8_t) m->vec;
        if (m->k[0] == K_F16 || m->k[0] == K_PRED)
                return unsupported(ps, in, op, "this type is not supported by the mock's PTX interpreter");
        if (!ld && !st)
                return decode_atomic(ps, in, op, bn, red, m, o, no);
        if (no != 2 || o[ld ? 1 : 0].type != O_ADDR)
                return ptx_perr(ps, "%.*s: expected a register and an address", (int) bn, op->s);
        if (st && in->space == SP_CONST)
                return ptx_perr(ps, "st to the const space");
        const opnd_t *val = &o[ld ? 0 : 1], *addr = &o[ld ? 1 : 0];
        in->a = addr->slot;
        in->off = addr->off;
        int n = m->vec;
        if ((val->type == O_VEC) != (n > 1) || (n > 1 && val->nvec != n))
                return ptx_perr(ps, "%.*s: the value does not match the vector width", (int) bn, op->s);
        for (int i = 0; i < n; i++) {
                if (ld) {
                        in->d[i] = n > 1 ? ptx_dst_slot(ps, val->vec[i]) : ptx_dst(ps, val);
                } else if (n > 1) {
                        if ((in->s[i] = val->vec[i]) < 0)
                                return ptx_perr(ps, "'_' is not a source");
                } else {
                        in->s[0] = ptx_src(ps, val, m->k[0]);
                }
        }
        return ps->errored ? -EINVAL : (emit(ps, in) < 0 ? -ENOMEM : 0);
}

static int decode_branch(parser_t *ps, ptx_ins_t *in, const opnd_t *o, int no)
{
        if (no != 1 || o[0].type != O_SYM)
                return ptx_perr(ps, "bra: expected a label");
        in->op = OP_BRA;
        struct symtab_entry *e = ptx_sym_find(&ps->locals, o[0].text.s, o[0].text.n);
        long at = emit(ps, in);
        if (at < 0)
                return -ENOMEM;
        if (e && e->tag == SYM_LABEL) {
                ps->f->code[at].target = (uint32_t) e->value;
                return 0;
        }
        if (!GV_GREEDY_REALLOC(ps->fix, ps->cap_fix, ps->n_fix + 1))
                return ptx_perr_oom(ps);
        fixup_t *fx = ps->fix;
        fx[ps->n_fix] = (fixup_t) { .ins = (size_t) at, .line = in->line };
        if (!(fx[ps->n_fix].label = strndup(o[0].text.s, o[0].text.n)))
                return ptx_perr_oom(ps);
        ps->n_fix++;
        return 0;
}

/* Reads `[@[!]p]` and the opcode; false (error recorded) when the statement has neither. */
static bool read_head(parser_t *ps, ptx_ins_t *in, tok_t *op)
{
        *in = (ptx_ins_t) { .guard = -1, .d = { -1, -1, -1, -1 }, .a = -1, .b = -1, .c = -1,
                            .s = { -1, -1, -1, -1 }, .line = ps->tok.line };
        if (ptx_tok_punct(ps, '@')) {
                ptx_lex_next(ps);
                if (ptx_tok_punct(ps, '!')) {
                        in->gneg = 1;
                        ptx_lex_next(ps);
                }
                opnd_t g = { .pair = -1 };
                if (ps->tok.type != T_ID || ptx_ident(ps, &g) < 0 || g.type != O_REG || g.slot < 0) {
                        ptx_perr(ps, "bad guard predicate");
                        return false;
                }
                in->guard = g.slot;
        }
        if (ps->tok.type != T_ID || ps->tok.s[0] == '.' || ps->tok.s[0] == '%') {
                ptx_perr(ps, "expected an instruction, found '%.*s'", (int) (ps->tok.n > 40 ? 40 : ps->tok.n), ps->tok.s);
                return false;
        }
        *op = ps->tok;
        ptx_lex_next(ps);
        return true;
}

int ptx_parse_instruction(parser_t *ps)
{
        ptx_ins_t in;
        tok_t op;
        if (!read_head(ps, &in, &op))
                return -EINVAL;
        opnd_t o[MAX_OPS];
        int no = 0;
        while (!ptx_tok_punct(ps, ';')) {
                if (ps->tok.type == T_EOF || no == MAX_OPS)
                        return ptx_perr(ps, "expected ';' after the operands of %.*s", (int) op.n, op.s);
                if (ptx_operand(ps, &o[no++]) < 0)
                        return -EINVAL;
                if (ptx_tok_punct(ps, ','))
                        ptx_lex_next(ps);
                else if (!ptx_tok_punct(ps, ';'))
                        return ptx_perr(ps, "expected ',' or ';' after an operand of %.*s", (int) op.n, op.s);
        }
        ptx_lex_next(ps);
        size_t bn;
        mods_t m;
        split_opcode(&op, &bn, &m);
        for (size_t i = 0; i < sizeof(nops) / sizeof(nops[0]); i++)
                if (eq(op.s, bn, nops[i]))
                        return emit(ps, &in) < 0 ? -ENOMEM : 0; /* OP_NOP */
        if (eq(op.s, bn, "ret") || eq(op.s, bn, "exit")) {
                in.op = OP_EXIT;
                return emit(ps, &in) < 0 ? -ENOMEM : 0;
        }
        if (eq(op.s, bn, "bra"))
                return decode_branch(ps, &in, o, no);
        if ((eq(op.s, bn, "bar") || eq(op.s, bn, "barrier")) && !m.unknown && m.atom < 0) {
                in.op = OP_BAR; /* blocks run in lockstep: every live thread is at the barrier together */
                return emit(ps, &in) < 0 ? -ENOMEM : 0;
        }
        if (eq(op.s, bn, "trap") || eq(op.s, bn, "brkpt")) {
                in.op = OP_TRAP;
                return emit(ps, &in) < 0 ? -ENOMEM : 0;
        }
        if (m.unknown)
                return unsupported(ps, &in, &op, "a modifier the mock's PTX interpreter does not know");
        int r = decode_simple(ps, &in, &op, bn, &m, o, no);
        if (r <= 0)
                return r;
        if (eq(op.s, bn, "mul") || eq(op.s, bn, "mad"))
                return decode_mul(ps, &in, &op, eq(op.s, bn, "mad"), &m, o, no);
        if (eq(op.s, bn, "setp"))
                return decode_setp(ps, &in, &m, o, no);
        if (eq(op.s, bn, "mov"))
                return decode_mov(ps, &in, &m, o, no);
        if (eq(op.s, bn, "cvt"))
                return decode_cvt(ps, &in, &op, &m, o, no);
        if (eq(op.s, bn, "cvta"))
                return decode_cvta(ps, &in, &m, o, no);
        if (eq(op.s, bn, "ld") || eq(op.s, bn, "ldu") || eq(op.s, bn, "st") || eq(op.s, bn, "atom") ||
            eq(op.s, bn, "red"))
                return decode_memory(ps, &in, &op, bn, &m, o, no);
        return unsupported(ps, &in, &op, "not an instruction the mock's PTX interpreter runs");
}
