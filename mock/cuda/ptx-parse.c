/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader: lexer, module directives (.version, .target,
 * .address_size), variables, kernels and functions with their parameters,
 * register declarations and labels (PTX ISA reference, "Syntax", "State
 * Spaces, Types, and Variables", "Directives").  Instructions are decoded
 * by ptx-decode.c.  Every error names its line; nothing is read past @len.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/ptx-parse-internal.h"

/* Limits that keep a hostile module from costing more than a real one would. */
#define MAX_REGS_DECLARED (1u << 20)   /* registers declared in one function */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_VAR_BYTES (64ull << 10)    /* fuzz builds: small, so a run costs microseconds, not a 256 MiB calloc */
#else
#define MAX_VAR_BYTES (256ull << 20)   /* one variable */
#endif


/* ------------------------------------------------------------------ */
/* errors                                                              */

int ptx_perr(parser_t *ps, const char *fmt, ...)
{
        if (!ps->errored) {
                ps->errored = true;
                char *what = NULL;
                va_list ap;
                va_start(ap, fmt);
                if (vasprintf(&what, fmt, ap) < 0)
                        what = NULL;
                va_end(ap);
                if (!what || asprintf(&ps->msg, "line %u: %s", ps->tok.line, what) < 0)
                        ps->msg = NULL;
                free(what);
        }
        return -EINVAL;
}

int ptx_perr_oom(parser_t *ps)
{
        if (!ps->errored) {
                ps->errored = true;
                ps->msg = NULL;
        }
        return -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* lexer                                                               */

static bool id_start(int c)
{
        return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.';
}

static bool id_char(int c)
{
        return isalnum(c) || c == '_' || c == '$' || c == '.';
}

/* Skips blanks and comments; false at the end of the text. */
static bool skip_space(parser_t *ps)
{
        while (ps->p < ps->end) {
                char c = *ps->p;
                if (c == '\n') {
                        ps->line++;
                        ps->p++;
                } else if (isspace((unsigned char) c)) {
                        ps->p++;
                } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '/') {
                        while (ps->p < ps->end && *ps->p != '\n')
                                ps->p++;
                } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '*') {
                        ps->p += 2;
                        while (ps->p + 1 < ps->end && !(ps->p[0] == '*' && ps->p[1] == '/')) {
                                if (*ps->p == '\n')
                                        ps->line++;
                                ps->p++;
                        }
                        ps->p = ps->p + 1 < ps->end ? ps->p + 2 : ps->end;
                } else {
                        return true;
                }
        }
        return false;
}

void ptx_lex_next(parser_t *ps)
{
        tok_t *t = &ps->tok;
        if (!skip_space(ps) || (*ps->p == '\0')) {
                *t = (tok_t) { .type = T_EOF, .s = ps->end, .n = 0, .line = ps->line };
                return;
        }
        const char *s = ps->p;
        t->s = s;
        t->line = ps->line;
        unsigned char c = (unsigned char) *s;
        if (id_start(c)) {
                const char *q = s + 1;
                while (q < ps->end && id_char((unsigned char) *q))
                        q++;
                t->type = T_ID;
                t->n = (size_t) (q - s);
        } else if (isdigit(c)) {
                const char *q = s + 1;
                while (q < ps->end && (isalnum((unsigned char) *q) || *q == '.' ||
                                       ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E') &&
                                        !(s[0] == '0' && s + 1 < q && strchr("xXfFdD", s[1])))))
                        q++;
                t->type = T_NUM;
                t->n = (size_t) (q - s);
        } else if (c == '"') {
                const char *q = s + 1;
                while (q < ps->end && *q != '"' && *q != '\n')
                        q++;
                t->type = T_STR;
                t->n = (size_t) (q - s) + (q < ps->end && *q == '"');
        } else {
                t->type = T_PUNCT;
                t->n = 1;
        }
        ps->p = s + t->n;
}

bool ptx_tok_is(const parser_t *ps, const char *s)
{
        size_t n = strlen(s);
        return ps->tok.type == T_ID && ps->tok.n == n && memcmp(ps->tok.s, s, n) == 0;
}

bool ptx_tok_punct(const parser_t *ps, char c)
{
        return ps->tok.type == T_PUNCT && ps->tok.s[0] == c;
}

bool ptx_expect_punct(parser_t *ps, char c)
{
        if (!ptx_tok_punct(ps, c)) {
                ptx_perr(ps, "expected '%c' before '%.*s'", c, (int) (ps->tok.n > 40 ? 40 : ps->tok.n), ps->tok.s);
                return false;
        }
        ptx_lex_next(ps);
        return true;
}

char *ptx_tok_dup(parser_t *ps)
{
        char *s = strndup(ps->tok.s, ps->tok.n);
        if (!s)
                ptx_perr_oom(ps);
        return s;
}

bool ptx_parse_uint(parser_t *ps, uint64_t *v)
{
        if (ps->tok.type != T_NUM) {
                ptx_perr(ps, "expected a number");
                return false;
        }
        char buf[64];
        if (ps->tok.n >= sizeof(buf)) {
                ptx_perr(ps, "number too long");
                return false;
        }
        memcpy(buf, ps->tok.s, ps->tok.n);
        buf[ps->tok.n] = '\0';
        size_t n = ps->tok.n;
        if (n > 1 && (buf[n - 1] == 'U' || buf[n - 1] == 'u'))
                buf[n - 1] = '\0';
        char *e;
        errno = 0;
        unsigned long long x = strtoull(buf, &e, 0);
        if (*e || errno) {
                ptx_perr(ps, "'%s' is not an integer", buf);
                return false;
        }
        *v = x;
        ptx_lex_next(ps);
        return true;
}

/* ------------------------------------------------------------------ */
/* symbol tables                                                       */

static size_t hash(const char *s, size_t n)
{
        size_t h = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char) s[i]) * 1099511628211ull;
        return h;
}

struct symtab_entry *ptx_sym_find(const symtab_t *t, const char *name, size_t n)
{
        if (!t->cap)
                return NULL;
        for (size_t i = hash(name, n) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
                struct symtab_entry *e = &t->e[i];
                if (!e->name)
                        return NULL;
                if (strlen(e->name) == n && memcmp(e->name, name, n) == 0)
                        return e;
        }
}

int ptx_sym_add(symtab_t *t, const char *name, size_t n, int tag, int64_t value)
{
        if (2 * (t->n + 1) > t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 64;
                struct symtab_entry *e = calloc(cap, sizeof(*e));
                if (!e)
                        return -ENOMEM;
                for (size_t i = 0; i < t->cap; i++) {
                        if (!t->e[i].name)
                                continue;
                        size_t j = hash(t->e[i].name, strlen(t->e[i].name)) & (cap - 1);
                        while (e[j].name)
                                j = (j + 1) & (cap - 1);
                        e[j] = t->e[i];
                }
                free(t->e);
                t->e = e;
                t->cap = cap;
        }
        if (ptx_sym_find(t, name, n))
                return -EEXIST;
        size_t i = hash(name, n) & (t->cap - 1);
        while (t->e[i].name)
                i = (i + 1) & (t->cap - 1);
        if (!(t->e[i].name = strndup(name, n)))
                return -ENOMEM;
        t->e[i].tag = tag;
        t->e[i].value = value;
        t->n++;
        return 0;
}

void ptx_sym_free(symtab_t *t)
{
        for (size_t i = 0; i < t->cap; i++)
                free(t->e[i].name);
        free(t->e);
        *t = (symtab_t) { 0 };
}

/* ------------------------------------------------------------------ */
/* slots                                                               */

int32_t ptx_slot_const(parser_t *ps, uint64_t v)
{
        struct gv_ptx_func *f = ps->f;
        for (size_t i = f->n_const; i-- > 0 && i + 64 >= f->n_const;)
                if (f->const_val[i] == v)
                        return f->const_slot[i];
        if (!GV_GREEDY_REALLOC(f->const_val, ps->cap_const, f->n_const + 1) ||
            !GV_GREEDY_REALLOC(f->const_slot, ps->cap_const_slot, f->n_const + 1)) {
                ptx_perr_oom(ps);
                return -1;
        }
        f->const_val[f->n_const] = v;
        f->const_slot[f->n_const] = (int32_t) f->n_slots;
        f->n_const++;
        return (int32_t) f->n_slots++;
}

int32_t ptx_slot_special(parser_t *ps, ptx_sreg_t r)
{
        if (ps->special[r] >= 0)
                return ps->special[r];
        struct gv_ptx_func *f = ps->f;
        if (!GV_GREEDY_REALLOC(f->fill, ps->cap_fill, f->n_fill + 1)) {
                ptx_perr_oom(ps);
                return -1;
        }
        f->fill[f->n_fill++] = (ptx_fill_t) { .slot = (int32_t) f->n_slots, .what = (uint8_t) r };
        return ps->special[r] = (int32_t) f->n_slots++;
}

/* Whether @name (n bytes) is a register the function declared. */
static bool declared(const parser_t *ps, const char *name, size_t n)
{
        size_t k = n;
        while (k > 0 && isdigit((unsigned char) name[k - 1]))
                k--;
        if (k == n || n - k > 9 || (name[k] == '0' && n - k > 1))
                return false;
        unsigned long num = strtoul(name + k, NULL, 10);
        for (size_t i = 0; i < ps->n_fam; i++)
                if (strlen(ps->fam[i].prefix) == k && memcmp(ps->fam[i].prefix, name, k) == 0 &&
                    num < ps->fam[i].count)
                        return true;
        return false;
}

bool ptx_reg_known(const parser_t *ps, const char *name, size_t n)
{
        const struct symtab_entry *e = ptx_sym_find(&ps->locals, name, n);
        return e ? e->tag == SYM_REG : declared(ps, name, n);
}

int32_t ptx_slot_reg(parser_t *ps, const char *name, size_t n)
{
        struct symtab_entry *e = ptx_sym_find(&ps->locals, name, n);
        if (e && e->tag == SYM_REG)
                return (int32_t) e->value;
        if (e || !declared(ps, name, n)) {
                ptx_perr(ps, "'%.*s' is not a declared register", (int) (n > 40 ? 40 : n), name);
                return -1;
        }
        int32_t s = (int32_t) ps->f->n_slots;
        if (ptx_sym_add(&ps->locals, name, n, SYM_REG, s) < 0) {
                ptx_perr_oom(ps);
                return -1;
        }
        ps->f->n_slots++;
        return s;
}

int64_t ptx_shared_offset(parser_t *ps, size_t v)
{
        ptx_var_t *var = &ps->m->vars[v];
        /* a module `.shared` variable lives in the window of each function that uses it */
        char key[32];
        int kn = snprintf(key, sizeof(key), "\x01shared%zu", v);
        struct symtab_entry *e = ptx_sym_find(&ps->locals, key, (size_t) kn);
        if (e)
                return e->value;
        size_t a = var->align ? var->align : 1;
        uint64_t off = (ps->shared_cursor + a - 1) / a * a;
        if (var->external) /* placed after every static variable: known at launch */
                return -1;
        ps->shared_cursor = off + var->bytes;
        if (ptx_sym_add(&ps->locals, key, (size_t) kn, SYM_SHARED, (int64_t) off) < 0)
                return ptx_perr_oom(ps);
        return (int64_t) off;
}

/* ------------------------------------------------------------------ */
/* types and declarations                                              */

/* The kind a type directive (".u32", ".b64", ".f32", ".pred") names; K_NONE for none. */
static ptx_kind_t type_kind(const char *s, size_t n)
{
        static const struct {
                const char *name;
                ptx_kind_t k;
        } t[] = {
                { ".b8", K_U8 },   { ".b16", K_U16 }, { ".b32", K_U32 }, { ".b64", K_U64 }, { ".u8", K_U8 },
                { ".u16", K_U16 }, { ".u32", K_U32 }, { ".u64", K_U64 }, { ".s8", K_S8 },   { ".s16", K_S16 },
                { ".s32", K_S32 }, { ".s64", K_S64 }, { ".f32", K_F32 }, { ".f64", K_F64 }, { ".pred", K_PRED },
                { ".f16", K_F16 }, { ".f16x2", K_F16 }, { ".bf16", K_F16 }, { ".bf16x2", K_F16 }, { ".b128", K_F16 },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (strlen(t[i].name) == n && memcmp(t[i].name, s, n) == 0)
                        return t[i].k;
        return K_NONE;
}

/* Reads [.align N] [.v2|.v4] .type; *bytes gets the element size (times the vector width). */
int ptx_read_type(parser_t *ps, size_t *align, size_t *bytes)
{
        uint64_t v = 0, vec = 1;
        *align = 0;
        for (;;) {
                if (ptx_tok_is(ps, ".align")) {
                        ptx_lex_next(ps);
                        if (!ptx_parse_uint(ps, &v))
                                return -EINVAL;
                        if (v == 0 || v > 4096 || (v & (v - 1)))
                                return ptx_perr(ps, ".align %llu: expected a power of two up to 4096",
                                            (unsigned long long) v);
                        *align = (size_t) v;
                } else if (ptx_tok_is(ps, ".v2") || ptx_tok_is(ps, ".v4") || ptx_tok_is(ps, ".v8")) {
                        vec = (uint64_t) (ps->tok.s[2] - '0');
                        ptx_lex_next(ps);
                } else if (ptx_tok_is(ps, ".ptr") || ptx_tok_is(ps, ".global") || ptx_tok_is(ps, ".const") ||
                           ptx_tok_is(ps, ".shared") || ptx_tok_is(ps, ".local")) {
                        ptx_lex_next(ps); /* kernel parameter attributes (.ptr.global.align N) */
                } else {
                        break;
                }
        }
        if (ps->tok.type != T_ID)
                return ptx_perr(ps, "expected a type");
        ptx_kind_t k = type_kind(ps->tok.s, ps->tok.n);
        if (k == K_NONE)
                return ptx_perr(ps, "unknown type '%.*s'", (int) (ps->tok.n > 40 ? 40 : ps->tok.n), ps->tok.s);
        *bytes = ptx_kind_bytes(k) * (size_t) vec;
        if (ptx_tok_is(ps, ".f16x2") || ptx_tok_is(ps, ".bf16x2"))
                *bytes = 4 * (size_t) vec;
        if (ptx_tok_is(ps, ".b128"))
                *bytes = 16 * (size_t) vec;
        if (!*align)
                *align = *bytes ? *bytes : 1;
        ptx_lex_next(ps);
        return 0;
}

/* Reads `NAME [N][M]...` of a variable; *count = the product of the dimensions (1 without), 0 for `[]`. */
int ptx_read_dims(parser_t *ps, uint64_t *count, bool *open)
{
        *count = 1;
        *open = false;
        while (ptx_tok_punct(ps, '[')) {
                ptx_lex_next(ps);
                if (ptx_tok_punct(ps, ']')) {
                        *open = true;
                        *count = 0;
                        ptx_lex_next(ps);
                        continue;
                }
                uint64_t d;
                if (!ptx_parse_uint(ps, &d) || !ptx_expect_punct(ps, ']'))
                        return -EINVAL;
                if (d > MAX_VAR_BYTES || *count * d > MAX_VAR_BYTES)
                        return ptx_perr(ps, "array too large");
                *count *= d;
        }
        return 0;
}

int ptx_read_decl(parser_t *ps, const char *what, ptx_decl_t *d)
{
        *d = (ptx_decl_t) { .align = 1 };
        if (ptx_read_type(ps, &d->align, &d->elem) < 0)
                return -EINVAL;
        if (ps->tok.type != T_ID) {
                ptx_perr(ps, "expected %s", what);
                return -EINVAL; /* spelled out: callers then know d->name is set on success */
        }
        d->name = ps->tok;
        ptx_lex_next(ps);
        return ptx_read_dims(ps, &d->count, &d->open) < 0 ? -EINVAL : 0;
}

/* Reads an initializer `= v` or `= {v, v, ...}` (integers, 0f/0d floats, nested braces) into @data. */
static int read_init(parser_t *ps, uint8_t *data, size_t bytes, size_t elem)
{
        size_t at = 0;
        int depth = 0;
        do {
                if (ptx_tok_punct(ps, '{')) {
                        depth++;
                        ptx_lex_next(ps);
                        continue;
                }
                if (ptx_tok_punct(ps, '}')) {
                        depth--;
                        ptx_lex_next(ps);
                } else {
                        bool neg = ptx_tok_punct(ps, '-');
                        if (neg)
                                ptx_lex_next(ps);
                        uint64_t v = 0;
                        if (ps->tok.type == T_NUM && ps->tok.n > 2 && ps->tok.s[0] == '0' &&
                            strchr("fFdD", ps->tok.s[1])) {
                                char buf[24];
                                snprintf(buf, sizeof(buf), "%.*s", (int) (ps->tok.n - 2 > 20 ? 20 : ps->tok.n - 2),
                                         ps->tok.s + 2);
                                v = strtoull(buf, NULL, 16);
                                ptx_lex_next(ps);
                        } else if (ps->tok.type == T_ID) {
                                return ptx_perr(ps, "initializers naming symbols are not supported");
                        } else if (!ptx_parse_uint(ps, &v)) {
                                return -EINVAL;
                        }
                        if (neg)
                                v = (uint64_t) -(int64_t) v;
                        if (at + elem > bytes)
                                return ptx_perr(ps, "too many initializers");
                        memcpy(data + at, &v, elem); /* little-endian hosts only (x86-64, aarch64) */
                        at += elem;
                }
                if (depth > 0 && ptx_tok_punct(ps, ','))
                        ptx_lex_next(ps);
        } while (depth > 0 && !ps->errored && ps->tok.type != T_EOF);
        return ps->errored ? -EINVAL : 0;
}

/* A module-scope variable after its state space directive (.global/.const/.shared). */
int ptx_module_var(parser_t *ps, ptx_space_t space, bool external)
{
        ptx_decl_t d;
        if (ptx_read_decl(ps, "a variable name", &d) < 0)
                return -EINVAL;
        if (d.elem * d.count > MAX_VAR_BYTES)
                return ptx_perr(ps, "variable too large");
        ptx_var_t *vars = reallocarray(ps->m->vars, ps->m->n_vars + 1, sizeof(*vars));
        if (!vars)
                return ptx_perr_oom(ps);
        ps->m->vars = vars;
        ptx_var_t *v = &vars[ps->m->n_vars];
        *v = (ptx_var_t) { .space = (uint8_t) space, .bytes = d.elem * d.count, .align = d.align,
                           .external = d.open && space == SP_SHARED };
        if (!(v->name = strndup(d.name.s, d.name.n)))
                return ptx_perr_oom(ps);
        ps->m->n_vars++;
        if (space != SP_SHARED && !(v->data = calloc(1, v->bytes ? v->bytes : 1)))
                return ptx_perr_oom(ps);
        if (ptx_sym_add(&ps->globals, d.name.s, d.name.n, SYM_VAR, (int64_t) (ps->m->n_vars - 1)) < 0)
                return ptx_perr(ps, "'%.*s' defined twice", (int) d.name.n, d.name.s);
        (void) external;
        if (ptx_tok_punct(ps, '=')) {
                ptx_lex_next(ps);
                if (space == SP_SHARED)
                        return ptx_perr(ps, "a .shared variable cannot have an initializer");
                if (read_init(ps, v->data, v->bytes, d.elem > 8 ? 8 : d.elem) < 0)
                        return -EINVAL;
        }
        return ptx_expect_punct(ps, ';') ? 0 : -EINVAL;
}

/* `.reg [.v2] .type %r<6>, %x, ...;` inside a function. */
int ptx_reg_decl(parser_t *ps)
{
        size_t align, bytes;
        if (ptx_read_type(ps, &align, &bytes) < 0)
                return -EINVAL;
        for (;;) {
                if (ps->tok.type != T_ID)
                        return ptx_perr(ps, "expected a register name");
                tok_t name = ps->tok;
                ptx_lex_next(ps);
                uint64_t count = 0;
                if (ptx_tok_punct(ps, '<')) {
                        ptx_lex_next(ps);
                        if (!ptx_parse_uint(ps, &count) || !ptx_expect_punct(ps, '>'))
                                return -EINVAL;
                        if (count > MAX_REGS_DECLARED || ps->f->n_regs + count > MAX_REGS_DECLARED)
                                return ptx_perr(ps, "too many registers");
                        reg_family_t *fam = reallocarray(ps->fam, ps->n_fam + 1, sizeof(*fam));
                        if (!fam)
                                return ptx_perr_oom(ps);
                        ps->fam = fam;
                        if (!(fam[ps->n_fam].prefix = strndup(name.s, name.n)))
                                return ptx_perr_oom(ps);
                        fam[ps->n_fam++].count = (uint32_t) count;
                        ps->f->n_regs += (unsigned) count;
                } else {
                        /* a single register: its slot now (a redeclaration in an inner scope reuses it) */
                        struct symtab_entry *e = ptx_sym_find(&ps->locals, name.s, name.n);
                        if (!e) {
                                if (ptx_sym_add(&ps->locals, name.s, name.n, SYM_REG, (int64_t) ps->f->n_slots) < 0)
                                        return ptx_perr_oom(ps);
                                ps->f->n_slots++;
                                ps->f->n_regs++;
                        } else if (e->tag != SYM_REG) {
                                return ptx_perr(ps, "'%.*s' is not a register", (int) name.n, name.s);
                        }
                }
                if (!ptx_tok_punct(ps, ','))
                        break;
                ptx_lex_next(ps);
        }
        return ptx_expect_punct(ps, ';') ? 0 : -EINVAL;
}

/* `.local`/`.shared` variable inside a function: a window offset. */
int ptx_func_var(parser_t *ps, ptx_space_t space)
{
        ptx_decl_t d;
        if (ptx_read_decl(ps, "a variable name", &d) < 0)
                return -EINVAL;
        if (d.open)
                return ptx_perr(ps, "a function-scope variable needs a size");
        uint64_t bytes = d.elem * d.count;
        uint64_t *cursor = space == SP_SHARED ? &ps->shared_cursor : (uint64_t *) NULL;
        uint64_t local = ps->f->local_bytes;
        if (!cursor)
                cursor = &local;
        // NOLINTNEXTLINE(clang-analyzer-core.DivideZero): ptx_read_type() never leaves d.align 0
        uint64_t off = (*cursor + d.align - 1) / d.align * d.align;
        if (off + bytes > MAX_VAR_BYTES)
                return ptx_perr(ps, "variable too large");
        *cursor = off + bytes;
        ps->f->local_bytes = (size_t) local;
        if (ptx_sym_add(&ps->locals, d.name.s, d.name.n, space == SP_SHARED ? SYM_SHARED : SYM_LOCAL, (int64_t) off) < 0)
                return ptx_perr(ps, "'%.*s' defined twice", (int) d.name.n, d.name.s);
        return ptx_expect_punct(ps, ';') ? 0 : -EINVAL;
}
