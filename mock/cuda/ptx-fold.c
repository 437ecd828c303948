/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Copy folding for the PTX interpreter: in a kernel without loops (every
 * branch goes forward, so every instruction runs at most once a thread), a
 * `mov` or an identity `cvta` (global and const addresses are host
 * addresses already) whose destination nothing else writes becomes a no-op,
 * and its readers read its source instead.  nvcc's PTX for simple kernels
 * is full of these (`mov.u32 %r3, %ctaid.x`, `cvta.to.global.u64 %rd4,
 * %rd1`); each costs a copy of a block's row of registers.  Kernels with a
 * backward branch are run as written.
 */
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/ptx-exec-internal.h"

/* Whether @in copies its source unchanged into a destination of the same width: a candidate. */
static bool is_copy(const ptx_ins_t *in)
{
        if (in->guard >= 0 || in->a < 0 || in->d[0] < 0)
                return false;
        if (in->op == OP_CVTA_TO || in->op == OP_CVTA_FROM)
                return (in->space == SP_GLOBAL || in->space == SP_CONST) && ptx_kind_bytes(in->kind) == 8;
        return in->op == OP_MOV;
}

static int32_t root(const int32_t *alias, int32_t s)
{
        while (s >= 0 && alias[s] != s)
                s = alias[s];
        return s;
}

ptx_ins_t *ptx_fold(const struct gv_ptx_func *f)
{
        if (f->n_code == 0)
                return NULL;
        for (size_t i = 0; i < f->n_code; i++)
                if (f->code[i].op == OP_BRA && f->code[i].target <= i)
                        return NULL; /* a loop: a register may hold several values a thread */
        size_t n = f->n_slots;
        int32_t *writes = calloc(n + 1, sizeof(int32_t)), *writer = calloc(n + 1, sizeof(int32_t));
        int32_t *alias = calloc(n + 1, sizeof(int32_t));
        ptx_ins_t *code = malloc(f->n_code * sizeof(*code));
        if (!writes || !writer || !alias || !code) {
                free(writes);
                free(writer);
                free(alias);
                free(code);
                return NULL;
        }
        memcpy(code, f->code, f->n_code * sizeof(*code));
        for (size_t i = 0; i < n; i++)
                alias[i] = (int32_t) i;
        for (size_t i = 0; i < f->n_code; i++) {
                int32_t d[4];
                int k = ptx_dests(&code[i], d);
                for (int j = 0; j < k; j++) {
                        writes[d[j]]++;
                        writer[d[j]] = (int32_t) i;
                }
        }
        for (size_t i = 0; i < f->n_code; i++) {
                ptx_ins_t *in = &code[i];
                if (!is_copy(in) || writes[in->d[0]] != 1)
                        continue;
                int32_t src = root(alias, in->a);
                /* the source holds one value by the time the copy runs: a constant or special
                 * register (never written), or written once, before the copy */
                bool settled = writes[src] == 0 || (writes[src] == 1 && (size_t) writer[src] < i);
                /* a narrowing mov keeps only the low bits: fold it only from a constant or special
                 * register, whose value the decoder made to the instruction's width */
                if (!settled || (in->op == OP_MOV && ptx_kind_bytes(in->kind) < 8 && writes[src] != 0))
                        continue;
                alias[in->d[0]] = src;
                in->op = OP_NOP;
        }
        for (size_t i = 0; i < f->n_code; i++) {
                ptx_ins_t *in = &code[i];
                in->a = root(alias, in->a);
                in->b = root(alias, in->b);
                in->c = root(alias, in->c);
                in->guard = root(alias, in->guard);
                for (int j = 0; j < 4; j++)
                        in->s[j] = root(alias, in->s[j]);
        }
        free(writes);
        free(writer);
        free(alias);
        return code;
}
