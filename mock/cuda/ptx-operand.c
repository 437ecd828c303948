/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader's operands (PTX ISA reference, "Instruction Operands"):
 * registers and special registers, immediates (integers, 0f/0d bit
 * patterns, decimals), symbol addresses (parameters, variables), addresses
 * `[base+offset]`, vectors `{a, b}`, `!p` and `p|q`; each becomes a slot of
 * the decoded form (ptx-internal.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/ptx-parse-internal.h"

static const char *const special_names[SR_COUNT] = {
        [SR_TID_X] = "%tid.x",           [SR_TID_Y] = "%tid.y",           [SR_TID_Z] = "%tid.z",
        [SR_NTID_X] = "%ntid.x",         [SR_NTID_Y] = "%ntid.y",         [SR_NTID_Z] = "%ntid.z",
        [SR_CTAID_X] = "%ctaid.x",       [SR_CTAID_Y] = "%ctaid.y",       [SR_CTAID_Z] = "%ctaid.z",
        [SR_NCTAID_X] = "%nctaid.x",     [SR_NCTAID_Y] = "%nctaid.y",     [SR_NCTAID_Z] = "%nctaid.z",
        [SR_LANEID] = "%laneid",         [SR_WARPID] = "%warpid",         [SR_NWARPID] = "%nwarpid",
        [SR_SMID] = "%smid",             [SR_NSMID] = "%nsmid",           [SR_GRIDID] = "%gridid",
        [SR_CLOCK] = "%clock",           [SR_CLOCK64] = "%clock64",       [SR_GLOBALTIMER] = "%globaltimer",
        [SR_DYN_SMEM] = "%dynamic_smem_size", [SR_TOTAL_SMEM] = "%total_smem_size", [SR_DYN_BASE] = NULL,
        [SR_LANEMASK_EQ] = "%lanemask_eq", [SR_LANEMASK_LT] = "%lanemask_lt", [SR_LANEMASK_LE] = "%lanemask_le",
        [SR_LANEMASK_GT] = "%lanemask_gt", [SR_LANEMASK_GE] = "%lanemask_ge",
};

/* ------------------------------------------------------------------ */
/* operands                                                            */

/* An identifier operand: special register, register, sink, or a symbol. */
int ptx_ident(parser_t *ps, opnd_t *o)
{
        tok_t t = ps->tok;
        ptx_lex_next(ps);
        if (eq(t.s, t.n, "_")) {
                *o = (opnd_t) { .type = O_REG, .slot = -1, .pair = -1 };
                return 0;
        }
        if (t.s[0] == '%') {
                for (int r = 0; r < SR_COUNT; r++)
                        if (special_names[r] && eq(t.s, t.n, special_names[r])) {
                                o->type = O_REG;
                                o->slot = ptx_slot_special(ps, (ptx_sreg_t) r);
                                return o->slot < 0 ? -EINVAL : 0;
                        }
        }
        if (t.s[0] == '%' || ptx_reg_known(ps, t.s, t.n)) {
                o->type = O_REG;
                o->slot = ptx_slot_reg(ps, t.s, t.n);
                return o->slot < 0 ? -EINVAL : 0;
        }
        o->type = O_SYM;
        o->text = t;
        return 0;
}

/* The address a symbol stands for, as a slot; -1 (error recorded) when it is none. */
static int32_t symbol_slot(parser_t *ps, const tok_t *t, ptx_space_t *space)
{
        struct symtab_entry *e = ptx_sym_find(&ps->locals, t->s, t->n);
        if (e && (e->tag == SYM_PARAM || e->tag == SYM_LOCAL || e->tag == SYM_SHARED)) {
                *space = e->tag == SYM_PARAM ? SP_PARAM : e->tag == SYM_LOCAL ? SP_LOCAL : SP_SHARED;
                return ptx_slot_const(ps, (uint64_t) e->value);
        }
        e = ptx_sym_find(&ps->globals, t->s, t->n);
        if (e && e->tag == SYM_VAR) {
                size_t v = (size_t) e->value;
                ptx_var_t *var = &ps->m->vars[v];
                *space = (ptx_space_t) var->space;
                if (var->space != SP_SHARED)
                        return ptx_slot_const(ps, (uint64_t) (uintptr_t) var->data);
                if (var->external)
                        return ptx_slot_special(ps, SR_DYN_BASE);
                int64_t off = ptx_shared_offset(ps, v);
                return off < 0 ? -1 : ptx_slot_const(ps, (uint64_t) off);
        }
        ptx_perr(ps, "'%.*s' is no register, parameter or variable", (int) (t->n > 40 ? 40 : t->n), t->s);
        return -1;
}

/* `[base]`, `[base+N]`, `[base-N]`, `[N]`. */
static int address(parser_t *ps, opnd_t *o)
{
        ptx_lex_next(ps); /* '[' */
        *o = (opnd_t) { .type = O_ADDR, .pair = -1 };
        if (ps->tok.type == T_NUM) {
                uint64_t v;
                if (!ptx_parse_uint(ps, &v))
                        return -EINVAL;
                o->slot = ptx_slot_const(ps, v);
        } else if (ps->tok.type == T_ID) {
                opnd_t b = { .pair = -1 };
                if (ptx_ident(ps, &b) < 0)
                        return -EINVAL;
                ptx_space_t sp;
                o->slot = b.type == O_REG ? b.slot : symbol_slot(ps, &b.text, &sp);
                if (o->slot < 0)
                        return ptx_perr(ps, "bad address");
        } else {
                return ptx_perr(ps, "bad address");
        }
        if (ptx_tok_punct(ps, '+') || ptx_tok_punct(ps, '-')) {
                bool neg = ptx_tok_punct(ps, '-');
                ptx_lex_next(ps);
                if (ptx_tok_punct(ps, '-')) {
                        neg = !neg;
                        ptx_lex_next(ps);
                }
                uint64_t v;
                if (!ptx_parse_uint(ps, &v))
                        return -EINVAL;
                o->off = neg ? -(int64_t) v : (int64_t) v;
        }
        return ptx_expect_punct(ps, ']') ? 0 : -EINVAL;
}

int ptx_operand(parser_t *ps, opnd_t *o)
{
        *o = (opnd_t) { .pair = -1 };
        if (ptx_tok_punct(ps, '['))
                return address(ps, o);
        if (ptx_tok_punct(ps, '{')) {
                ptx_lex_next(ps);
                o->type = O_VEC;
                while (!ptx_tok_punct(ps, '}')) {
                        opnd_t e = { .pair = -1 };
                        if (o->nvec >= 4 || ps->tok.type != T_ID || ptx_ident(ps, &e) < 0 || e.type != O_REG)
                                return ptx_perr(ps, "bad vector operand");
                        o->vec[o->nvec++] = e.slot;
                        if (ptx_tok_punct(ps, ','))
                                ptx_lex_next(ps);
                        else if (!ptx_tok_punct(ps, '}'))
                                return ptx_perr(ps, "bad vector operand");
                }
                ptx_lex_next(ps);
                return 0;
        }
        if (ptx_tok_punct(ps, '!')) {
                ptx_lex_next(ps);
                if (ps->tok.type != T_ID || ptx_ident(ps, o) < 0 || o->type != O_REG)
                        return ptx_perr(ps, "'!' must precede a predicate register");
                o->neg = true;
                return 0;
        }
        if (ptx_tok_punct(ps, '-') || ps->tok.type == T_NUM) {
                o->imm_neg = ptx_tok_punct(ps, '-');
                if (o->imm_neg)
                        ptx_lex_next(ps);
                if (ps->tok.type != T_NUM)
                        return ptx_perr(ps, "expected a number after '-'");
                o->type = O_IMM;
                o->text = ps->tok;
                ptx_lex_next(ps);
                return 0;
        }
        if (ps->tok.type == T_ID) {
                if (ptx_ident(ps, o) < 0)
                        return -EINVAL;
                if (ptx_tok_punct(ps, '|')) { /* setp's p|q */
                        ptx_lex_next(ps);
                        opnd_t q = { .pair = -1 };
                        if (ps->tok.type != T_ID || ptx_ident(ps, &q) < 0 || q.type != O_REG)
                                return ptx_perr(ps, "bad predicate pair");
                        o->pair = q.slot;
                }
                return 0;
        }
        return ptx_perr(ps, "unexpected '%.*s' in the operands", (int) ps->tok.n, ps->tok.s);
}

/* An immediate as a value of @k: integers wrap to the width, 0f/0d are bit patterns, decimals convert. */
static bool imm_value(parser_t *ps, const opnd_t *o, ptx_kind_t k, uint64_t *out)
{
        char buf[64];
        if (o->text.n >= sizeof(buf)) {
                ptx_perr(ps, "number too long");
                return false;
        }
        memcpy(buf, o->text.s, o->text.n);
        buf[o->text.n] = '\0';
        size_t n = o->text.n;
        bool fl = k == K_F32 || k == K_F64;
        double d = 0;
        uint64_t v = 0;
        char *e = NULL;
        if (n > 2 && buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F' || buf[1] == 'd' || buf[1] == 'D')) {
                bool is_f = buf[1] == 'f' || buf[1] == 'F';
                v = strtoull(buf + 2, &e, 16);
                if (*e || n != (is_f ? 10u : 18u)) {
                        ptx_perr(ps, "bad floating-point literal %s", buf);
                        return false;
                }
                if (is_f) {
                        float f;
                        uint32_t u = (uint32_t) v;
                        memcpy(&f, &u, 4);
                        d = f;
                } else {
                        memcpy(&d, &v, 8);
                }
                if ((k == K_F32 && is_f) || (k == K_F64 && !is_f)) {
                        if (o->imm_neg)
                                v ^= is_f ? 0x80000000ull : 0x8000000000000000ull;
                        *out = v;
                        return true;
                }
                if (!fl) {
                        ptx_perr(ps, "a floating-point literal where an integer is expected");
                        return false;
                }
        } else if (strpbrk(buf, ".eE") && !strpbrk(buf, "xX")) {
                d = strtod(buf, &e);
                if (*e || !fl) {
                        ptx_perr(ps, "bad number %s", buf);
                        return false;
                }
        } else {
                if (n > 1 && (buf[n - 1] == 'U' || buf[n - 1] == 'u'))
                        buf[--n] = '\0';
                errno = 0;
                v = buf[0] == '0' && n > 1 && (buf[1] == 'b' || buf[1] == 'B') ? strtoull(buf + 2, &e, 2)
                                                                            : strtoull(buf, &e, 0);
                if (*e || errno) {
                        ptx_perr(ps, "bad number %s", buf);
                        return false;
                }
                if (o->imm_neg)
                        v = (uint64_t) -(int64_t) v;
                d = o->imm_neg ? (double) (int64_t) v : (double) v;
        }
        if (fl) {
                if (o->imm_neg && d > 0)
                        d = -d;
                if (k == K_F32) {
                        float f = (float) d;
                        uint32_t u;
                        memcpy(&u, &f, 4);
                        v = u;
                } else {
                        memcpy(&v, &d, 8);
                }
        } else {
                unsigned bytes = ptx_kind_bytes(k);
                if (bytes && bytes < 8)
                        v &= (1ull << (8 * bytes)) - 1;
        }
        *out = v;
        return true;
}

/* A source operand as a slot: register, immediate (of kind @k) or symbol address. */
int32_t ptx_src(parser_t *ps, const opnd_t *o, ptx_kind_t k)
{
        uint64_t v;
        ptx_space_t sp;
        switch (o->type) {
        case O_REG:
                if (o->slot < 0)
                        ptx_perr(ps, "'_' is not a source");
                return o->slot;
        case O_IMM:
                return imm_value(ps, o, k, &v) ? ptx_slot_const(ps, v) : -1;
        case O_SYM:
                return symbol_slot(ps, &o->text, &sp);
        default:
                ptx_perr(ps, "expected a register or a value");
                return -1;
        }
}

int32_t ptx_dst_slot(parser_t *ps, int32_t slot)
{
        for (int r = 0; r < SR_COUNT && slot >= 0; r++)
                if (ps->special[r] == slot) {
                        ptx_perr(ps, "%s is a special register, read-only", special_names[r] ? special_names[r] : "it");
                        return -1;
                }
        return slot;
}

int32_t ptx_dst(parser_t *ps, const opnd_t *o)
{
        if (o->type != O_REG) {
                ptx_perr(ps, "expected a destination register");
                return -1;
        }
        return ptx_dst_slot(ps, o->slot);
}
