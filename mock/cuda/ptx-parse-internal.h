/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader's own parts, shared by its lexer and declarations
 * (ptx-parse.c) and its instruction decoder (ptx-decode.c).  The functions
 * the files share carry the PTX reader's internal prefix, ptx_ (its interface
 * in ptx.h: gv_ptx_).
 */
#ifndef GV_MOCK_CUDA_PTX_PARSE_INTERNAL_H
#define GV_MOCK_CUDA_PTX_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "mock/cuda/ptx-internal.h"

typedef enum tok_type { T_EOF, T_ID, T_NUM, T_STR, T_PUNCT } tok_type_t;

typedef struct tok {
        tok_type_t type;
        const char *s;
        size_t n;
        uint32_t line;
} tok_t;

/* A string-keyed table (open addressing): value and a small tag per name. */
typedef struct symtab {
        struct symtab_entry {
                char *name;
                int64_t value;
                int tag;
        } *e;
        size_t cap, n;
} symtab_t;

/* Symbol tags. */
enum { SYM_REG, SYM_PARAM, SYM_LABEL, SYM_SHARED, SYM_LOCAL, SYM_VAR, SYM_FUNC };

/* A register family `%r<N>` (names %r0 .. %r<N-1>). */
typedef struct reg_family {
        char *prefix;
        uint32_t count;
} reg_family_t;

/* A pending branch to a label defined later. */
typedef struct fixup {
        size_t ins;
        char *label;
        uint32_t line;
} fixup_t;

typedef struct parser {
        const char *p, *end;
        uint32_t line;
        tok_t tok;          /* current token */
        char *msg;          /* first error, heap */
        gv_ptx_module_t *m;
        symtab_t globals;   /* module variables and functions */
        /* the function being read */
        struct gv_ptx_func *f;
        symtab_t locals;    /* registers, params, labels, function variables */
        reg_family_t *fam;
        size_t n_fam;
        fixup_t *fix;
        size_t n_fix;
        size_t cap_code, cap_const, cap_const_slot, cap_fill, cap_fix; /* room in f->code, ..., fix */
        uint64_t shared_cursor; /* bytes of the function's shared window so far */
        int32_t special[SR_COUNT]; /* slot of each special register, -1 */
        bool errored;
} parser_t;

/* Lexer and errors (ptx-parse.c). */
void ptx_lex_next(parser_t *ps);
bool ptx_tok_is(const parser_t *ps, const char *s);
bool ptx_tok_punct(const parser_t *ps, char c);
bool ptx_expect_punct(parser_t *ps, char c);
/* ptx_perr - record the first error "line N: ..." (later ones are dropped); returns -EINVAL. */
int ptx_perr(parser_t *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ptx_perr_oom(parser_t *ps);
/* ptx_tok_dup - the current token as a heap string; NULL on OOM (recorded). */
char *ptx_tok_dup(parser_t *ps);
/* ptx_parse_uint - the current T_NUM as an unsigned integer; false (error recorded) when it is none. */
bool ptx_parse_uint(parser_t *ps, uint64_t *v);

/* Symbol tables (ptx-parse.c). */
struct symtab_entry *ptx_sym_find(const symtab_t *t, const char *name, size_t n);
int ptx_sym_add(symtab_t *t, const char *name, size_t n, int tag, int64_t value);
void ptx_sym_free(symtab_t *t);

/* Slots (ptx-parse.c). */
int32_t ptx_slot_const(parser_t *ps, uint64_t v);
int32_t ptx_slot_special(parser_t *ps, ptx_sreg_t r);
/* ptx_slot_reg - the slot of register @name (n bytes): declared, or -1 (error recorded). */
int32_t ptx_slot_reg(parser_t *ps, const char *name, size_t n);
/* ptx_reg_known - whether @name (n bytes) is a register of the current function. */
bool ptx_reg_known(const parser_t *ps, const char *name, size_t n);
/* ptx_shared_offset - the offset of the module shared variable @v in the current function's window. */
int64_t ptx_shared_offset(parser_t *ps, size_t v);

/* Declarations (ptx-parse.c). */
/* ptx_read_type - [.align N] [.v2|.v4] .type: the alignment and the element's bytes (times the vector width). */
int ptx_read_type(parser_t *ps, size_t *align, size_t *bytes);
/* ptx_read_dims - the `[N][M]...` after a name: the product (1 without), 0 and *open for `[]`. */
int ptx_read_dims(parser_t *ps, uint64_t *count, bool *open);

/* A declaration's type, name and dimensions (ptx_read_decl). */
typedef struct ptx_decl {
        size_t align, elem; /* bytes: the alignment, one element (times the vector width) */
        tok_t name;
        uint64_t count;     /* elements: the product of the dimensions, 1 without */
        bool open;          /* the last dimension is `[]` (count 0) */
} ptx_decl_t;
/*
 * ptx_read_decl - what follows a state space or .param: [.align N] [.vN] .type, the name (@what
 * says what it names in the error "expected @what") and its dimensions.  -EINVAL, the error recorded.
 */
int ptx_read_decl(parser_t *ps, const char *what, ptx_decl_t *d);
/* ptx_module_var - a module-scope .global/.const/.shared variable after its state space directive. */
int ptx_module_var(parser_t *ps, ptx_space_t space, bool external);
/* ptx_reg_decl - `.reg .type names;` after `.reg`. */
int ptx_reg_decl(parser_t *ps);
/* ptx_func_var - a function-scope .local/.shared variable after its state space directive. */
int ptx_func_var(parser_t *ps, ptx_space_t space);

/* An operand as written. */
typedef enum { O_NONE, O_REG, O_IMM, O_ADDR, O_VEC, O_SYM } otype_t;

typedef struct opnd {
        otype_t type;
        int32_t slot;        /* O_REG; O_ADDR base; -1 for the sink `_` */
        bool neg;            /* `!p` */
        tok_t text;          /* O_IMM: the literal (sign in imm_neg); O_SYM: the name */
        bool imm_neg;
        int64_t off;         /* O_ADDR */
        int nvec;
        int32_t vec[4];      /* O_VEC */
        int32_t pair;        /* `p|q`: q's slot, else -1 */
} opnd_t;

#define MAX_OPS 6

/* Operands (ptx-operand.c). */
/* ptx_ident - an identifier operand at the current token: special register, register, sink `_`, or a symbol. */
int ptx_ident(parser_t *ps, opnd_t *o);
/* ptx_operand - one operand at the current token. */
int ptx_operand(parser_t *ps, opnd_t *o);
/* ptx_src - a source operand as a slot (an immediate as a value of kind @k); -1 with the error recorded. */
int32_t ptx_src(parser_t *ps, const opnd_t *o, ptx_kind_t k);
/* ptx_dst - a destination register's slot; -1 with the error recorded. */
int32_t ptx_dst(parser_t *ps, const opnd_t *o);
/* ptx_dst_slot - @slot as a destination: -1 with the error recorded for a special register (read-only). */
int32_t ptx_dst_slot(parser_t *ps, int32_t slot);

/* eq - whether the @n bytes at @s are the string @lit. */
static inline bool eq(const char *s, size_t n, const char *lit)
{
        return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* ptx_parse_instruction - decode one instruction statement at the current token into ps->f (ptx-decode.c). */
int ptx_parse_instruction(parser_t *ps);

#endif
