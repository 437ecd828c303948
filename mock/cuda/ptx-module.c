/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader's module level: the module directives (.version, .target,
 * .address_size, .file, .section), kernels and functions with their
 * parameters, bodies and labels, and the queries of ptx.h on the result
 * (PTX ISA reference, "Directives": "PTX Module Directives", "Kernel and
 * Function Directives", "Performance-Tuning Directives").
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/ptx-parse-internal.h"

#define MAX_FUNCS 4096

/* ------------------------------------------------------------------ */
/* functions                                                           */

/* `( .param .type name, ... )`: the entry's parameter layout (natural alignment, as the ABI lays it out). */
static int param_list(parser_t *ps, bool record)
{
        if (!ptx_expect_punct(ps, '('))
                return -EINVAL;
        struct gv_ptx_func *f = ps->f;
        while (!ptx_tok_punct(ps, ')')) {
                if (!ptx_tok_is(ps, ".param") && !ptx_tok_is(ps, ".reg"))
                        return ptx_perr(ps, "expected .param");
                ptx_lex_next(ps);
                ptx_decl_t d;
                if (ptx_read_decl(ps, "a parameter name", &d) < 0)
                        return -EINVAL;
                if (!d.align)
                        d.align = 1;
                if (record) {
                        size_t off = (f->param_bytes + d.align - 1) / d.align * d.align, n = f->n_param;
                        if (off + d.elem * d.count > 32768)
                                return ptx_perr(ps, "parameters larger than 32 KiB");
                        char **names = reallocarray(f->param_name, n + 1, sizeof(char *));
                        if (names)
                                f->param_name = names;
                        size_t *offs = reallocarray(f->param_off, n + 1, sizeof(size_t));
                        if (offs)
                                f->param_off = offs;
                        size_t *sizes = reallocarray(f->param_size, n + 1, sizeof(size_t));
                        if (sizes)
                                f->param_size = sizes;
                        if (!names || !offs || !sizes || !(names[n] = strndup(d.name.s, d.name.n)))
                                return ptx_perr_oom(ps);
                        offs[n] = off;
                        sizes[n] = d.elem * d.count;
                        f->n_param++;
                        f->param_bytes = off + d.elem * d.count;
                        if (ptx_sym_add(&ps->locals, d.name.s, d.name.n, SYM_PARAM, (int64_t) off) < 0)
                                return ptx_perr(ps, "parameter '%.*s' twice", (int) d.name.n, d.name.s);
                }
                if (ptx_tok_punct(ps, ','))
                        ptx_lex_next(ps);
                else if (!ptx_tok_punct(ps, ')'))
                        return ptx_perr(ps, "expected ',' or ')' in the parameter list");
        }
        ptx_lex_next(ps);
        return 0;
}

/* Performance directives between the parameters and the body (.maxntid 256, 1, 1 ...): read and ignored. */
static int perf_directives(parser_t *ps)
{
        while (ptx_tok_is(ps, ".maxntid") || ptx_tok_is(ps, ".reqntid") || ptx_tok_is(ps, ".minnctapersm") ||
               ptx_tok_is(ps, ".maxnctapersm") || ptx_tok_is(ps, ".maxnreg") || ptx_tok_is(ps, ".noreturn") ||
               ptx_tok_is(ps, ".pragma") || ptx_tok_is(ps, ".explicitcluster") || ptx_tok_is(ps, ".reqnctapercluster") ||
               ptx_tok_is(ps, ".maxclusterrank") || ptx_tok_is(ps, ".blocksareclusters")) {
                bool pragma = ptx_tok_is(ps, ".pragma");
                ptx_lex_next(ps);
                while (ps->tok.type == T_NUM || ps->tok.type == T_STR || ptx_tok_punct(ps, ',')) {
                        if (ps->tok.type == T_NUM) {
                                uint64_t v;
                                if (!ptx_parse_uint(ps, &v))
                                        return -EINVAL;
                        } else {
                                ptx_lex_next(ps);
                        }
                }
                if (pragma && !ptx_expect_punct(ps, ';'))
                        return -EINVAL;
        }
        return 0;
}

/* Resolves the branches to labels defined after them. */
static int resolve_fixups(parser_t *ps)
{
        for (size_t i = 0; i < ps->n_fix; i++) {
                fixup_t *x = &ps->fix[i];
                struct symtab_entry *e = ptx_sym_find(&ps->locals, x->label, strlen(x->label));
                if (!e || e->tag != SYM_LABEL) {
                        ps->tok.line = x->line;
                        return ptx_perr(ps, "branch to '%s', which is no label of this function", x->label);
                }
                ps->f->code[x->ins].target = (uint32_t) e->value;
        }
        return 0;
}

/* One statement of a function body (the current token is its first). */
static int body_statement(parser_t *ps, int *depth)
{
        if (ptx_tok_punct(ps, '{')) {
                (*depth)++;
                ptx_lex_next(ps);
                return 0;
        }
        if (ptx_tok_punct(ps, '}')) {
                (*depth)--;
                ptx_lex_next(ps);
                return 0;
        }
        if (ptx_tok_is(ps, ".reg")) {
                ptx_lex_next(ps);
                return ptx_reg_decl(ps);
        }
        if (ptx_tok_is(ps, ".local") || ptx_tok_is(ps, ".shared")) {
                ptx_space_t sp = ptx_tok_is(ps, ".local") ? SP_LOCAL : SP_SHARED;
                ptx_lex_next(ps);
                return ptx_func_var(ps, sp);
        }
        if (ptx_tok_is(ps, ".loc") || ptx_tok_is(ps, ".pragma") || ptx_tok_is(ps, ".param") || ptx_tok_is(ps, ".maxnreg")) {
                /* debug lines, pragmas and call parameters: up to the end of the line or the ';' */
                bool semi = !ptx_tok_is(ps, ".loc");
                uint32_t line = ps->tok.line;
                ptx_lex_next(ps);
                while (ps->tok.type != T_EOF && (semi ? !ptx_tok_punct(ps, ';') : ps->tok.line == line))
                        ptx_lex_next(ps);
                if (semi && ptx_tok_punct(ps, ';'))
                        ptx_lex_next(ps);
                return 0;
        }
        if (ps->tok.type == T_ID && ps->tok.s[0] != '.' && ps->p < ps->end) {
                /* a label: NAME ':' */
                const char *q = ps->p;
                while (q < ps->end && (*q == ' ' || *q == '\t'))
                        q++;
                if (q < ps->end && *q == ':') {
                        tok_t name = ps->tok;
                        if (ptx_sym_add(&ps->locals, name.s, name.n, SYM_LABEL, (int64_t) ps->f->n_code) < 0)
                                return ptx_perr(ps, "label '%.*s' defined twice", (int) name.n, name.s);
                        ptx_lex_next(ps);
                        ptx_lex_next(ps);
                        return 0;
                }
        }
        return ptx_parse_instruction(ps);
}

static void func_free(struct gv_ptx_func *f)
{
        if (!f)
                return;
        free(f->name);
        free(f->code);
        free(f->const_slot);
        free(f->const_val);
        free(f->fill);
        for (size_t i = 0; i < f->n_param; i++)
                free(f->param_name[i]);
        free(f->param_name);
        free(f->param_off);
        free(f->param_size);
        free(f->unsupported);
        free(f);
}

/* Clears the per-function parser state. */
static void end_function(parser_t *ps)
{
        ptx_sym_free(&ps->locals);
        for (size_t i = 0; i < ps->n_fam; i++)
                free(ps->fam[i].prefix);
        free(ps->fam);
        ps->fam = NULL;
        ps->n_fam = 0;
        for (size_t i = 0; i < ps->n_fix; i++)
                free(ps->fix[i].label);
        free(ps->fix);
        ps->fix = NULL;
        ps->n_fix = ps->cap_fix = ps->cap_code = ps->cap_const = ps->cap_const_slot = ps->cap_fill = 0;
        ps->shared_cursor = 0;
        for (size_t i = 0; i < SR_COUNT; i++)
                ps->special[i] = -1;
        ps->f = NULL;
}

/* `.entry`/`.func` after the directive. */
static int function(parser_t *ps, bool entry)
{
        if (ps->m->n_funcs >= MAX_FUNCS)
                return ptx_perr(ps, "too many functions");
        struct gv_ptx_func *f = calloc(1, sizeof(*f));
        struct gv_ptx_func **funcs = reallocarray(ps->m->funcs, ps->m->n_funcs + 1, sizeof(struct gv_ptx_func *));
        if (!f || !funcs) {
                free(f);
                return ptx_perr_oom(ps);
        }
        ps->m->funcs = funcs;
        funcs[ps->m->n_funcs++] = f;
        ps->f = f;
        f->entry = entry;
        if (!entry && ptx_tok_punct(ps, '(') && param_list(ps, false) < 0) /* return value */
                return -EINVAL;
        if (ps->tok.type != T_ID)
                return ptx_perr(ps, "expected a function name");
        if (!(f->name = ptx_tok_dup(ps)))
                return -ENOMEM;
        ptx_lex_next(ps);
        if (ptx_tok_punct(ps, '(') && param_list(ps, true) < 0)
                return -EINVAL;
        if (perf_directives(ps) < 0)
                return -EINVAL;
        if (ptx_tok_punct(ps, ';')) { /* a declaration (.extern .func, a prototype) */
                ptx_lex_next(ps);
                return 0;
        }
        if (!ptx_tok_punct(ps, '{'))
                return ptx_perr(ps, "expected '{' to open the body of %s", f->name);
        ptx_lex_next(ps);
        int depth = 1;
        while (depth > 0 && !ps->errored) {
                if (ps->tok.type == T_EOF)
                        return ptx_perr(ps, "the body of %s is not closed", f->name);
                if (body_statement(ps, &depth) < 0)
                        return -EINVAL;
        }
        if (ps->errored || resolve_fixups(ps) < 0)
                return -EINVAL;
        /* a function that runs off its end returns */
        if (!GV_GREEDY_REALLOC(f->code, ps->cap_code, f->n_code + 1))
                return ptx_perr_oom(ps);
        f->code[f->n_code++] = (ptx_ins_t) { .op = OP_EXIT, .guard = -1, .line = ps->tok.line };
        f->shared_static = (size_t) ((ps->shared_cursor + 15) / 16 * 16);
        return 0;
}

/* ------------------------------------------------------------------ */
/* module                                                              */

/* `.version X.Y`. */
static int version_directive(parser_t *ps)
{
        unsigned major, minor;
        char buf[16];
        if (ps->tok.type != T_NUM || ps->tok.n >= sizeof(buf))
                return ptx_perr(ps, ".version: expected MAJOR.MINOR");
        memcpy(buf, ps->tok.s, ps->tok.n);
        buf[ps->tok.n] = '\0';
        int used = 0;
        if (sscanf(buf, "%2u.%2u%n", &major, &minor, &used) != 2 || (size_t) used != ps->tok.n || minor > 9)
                return ptx_perr(ps, ".version %s: expected MAJOR.MINOR", buf);
        ps->m->version = 10 * major + minor;
        ptx_lex_next(ps);
        return 0;
}

/* `.target sm_NN[a|f] [, texmode_..., debug, map_f64_to_f32]`. */
static int target_directive(parser_t *ps)
{
        for (bool first = true;; first = false) {
                if (ps->tok.type != T_ID)
                        return ptx_perr(ps, ".target: expected a target name");
                if (ps->tok.n > 3 && memcmp(ps->tok.s, "sm_", 3) == 0) {
                        size_t i = 3;
                        unsigned v = 0;
                        while (i < ps->tok.n && isdigit((unsigned char) ps->tok.s[i]) && v < 10000)
                                v = v * 10 + (unsigned) (ps->tok.s[i++] - '0');
                        // NOLINTNEXTLINE(bugprone-narrowing-conversions): '\0' is a char value
                        char sfx = i < ps->tok.n ? ps->tok.s[i] : '\0';
                        if (i == 3 || (i < ps->tok.n && (i + 1 != ps->tok.n || (sfx != 'a' && sfx != 'f'))))
                                return ptx_perr(ps, ".target %.*s: not a target", (int) ps->tok.n, ps->tok.s);
                        ps->m->target = v;
                        ps->m->suffix = sfx;
                } else if (first) {
                        return ptx_perr(ps, ".target %.*s: not a GPU target", (int) (ps->tok.n > 40 ? 40 : ps->tok.n),
                                    ps->tok.s);
                }
                ptx_lex_next(ps);
                if (!ptx_tok_punct(ps, ','))
                        return 0;
                ptx_lex_next(ps);
        }
}

/* Skips a balanced `{ ... }` (a debug .section). */
static int skip_braces(parser_t *ps)
{
        if (!ptx_expect_punct(ps, '{'))
                return -EINVAL;
        for (int depth = 1; depth > 0; ptx_lex_next(ps)) {
                if (ps->tok.type == T_EOF)
                        return ptx_perr(ps, "section not closed");
                if (ptx_tok_punct(ps, '{'))
                        depth++;
                else if (ptx_tok_punct(ps, '}'))
                        depth--;
        }
        return 0;
}

static int module_statement(parser_t *ps, bool *external)
{
        if (ptx_tok_is(ps, ".version")) {
                ptx_lex_next(ps);
                return version_directive(ps);
        }
        if (ptx_tok_is(ps, ".target")) {
                ptx_lex_next(ps);
                return target_directive(ps);
        }
        if (ptx_tok_is(ps, ".address_size")) {
                ptx_lex_next(ps);
                uint64_t v;
                if (!ptx_parse_uint(ps, &v))
                        return -EINVAL;
                return v == 64 ? 0 : ptx_perr(ps, ".address_size %llu: only 64-bit addresses are supported",
                                          (unsigned long long) v);
        }
        if (ptx_tok_is(ps, ".visible") || ptx_tok_is(ps, ".weak") || ptx_tok_is(ps, ".common") || ptx_tok_is(ps, ".extern")) {
                *external = ptx_tok_is(ps, ".extern");
                ptx_lex_next(ps);
                return 0;
        }
        if (ptx_tok_is(ps, ".file") || ptx_tok_is(ps, ".pragma")) {
                uint32_t line = ps->tok.line;
                ptx_lex_next(ps);
                while (ps->tok.type != T_EOF && ps->tok.line == line && !ptx_tok_punct(ps, ';'))
                        ptx_lex_next(ps);
                if (ptx_tok_punct(ps, ';'))
                        ptx_lex_next(ps);
                return 0;
        }
        if (ptx_tok_is(ps, ".section")) {
                ptx_lex_next(ps);
                if (ps->tok.type == T_ID)
                        ptx_lex_next(ps);
                return skip_braces(ps);
        }
        if (ptx_tok_is(ps, ".global") || ptx_tok_is(ps, ".const") || ptx_tok_is(ps, ".shared")) {
                ptx_space_t sp = ptx_tok_is(ps, ".global") ? SP_GLOBAL : ptx_tok_is(ps, ".const") ? SP_CONST : SP_SHARED;
                ptx_lex_next(ps);
                int r = ptx_module_var(ps, sp, *external);
                *external = false;
                return r;
        }
        if (ptx_tok_is(ps, ".entry") || ptx_tok_is(ps, ".func")) {
                bool entry = ptx_tok_is(ps, ".entry");
                ptx_lex_next(ps);
                int r = function(ps, entry);
                end_function(ps);
                *external = false;
                return r;
        }
        return ptx_perr(ps, "unexpected '%.*s' at module scope", (int) (ps->tok.n > 40 ? 40 : ps->tok.n), ps->tok.s);
}

int gv_ptx_parse(const char *text, size_t len, gv_ptx_module_t **out, char **msg)
{
        *msg = NULL;
        if (len > GV_PTX_MAX_TEXT) {
                *msg = strdup("PTX text larger than 64 MiB");
                return -EINVAL;
        }
        parser_t ps = { .p = text, .end = text + len, .line = 1 };
        for (size_t i = 0; i < SR_COUNT; i++)
                ps.special[i] = -1;
        if (!(ps.m = calloc(1, sizeof(*ps.m))))
                return -ENOMEM;
        ptx_lex_next(&ps);
        bool external = false, seen_version = false, seen_target = false;
        int r = 0;
        while (r == 0 && ps.tok.type != T_EOF) {
                if (!seen_version && !ptx_tok_is(&ps, ".version")) {
                        r = ptx_perr(&ps, "the module must start with .version");
                        break;
                }
                seen_version = true;
                bool is_target = ptx_tok_is(&ps, ".target");
                if (!seen_target && !is_target && !ptx_tok_is(&ps, ".version")) {
                        r = ptx_perr(&ps, ".target must follow .version");
                        break;
                }
                seen_target |= is_target;
                r = module_statement(&ps, &external);
        }
        if (r == 0 && !ps.errored && !seen_target)
                r = ptx_perr(&ps, "no .target directive");
        end_function(&ps);
        ptx_sym_free(&ps.globals);
        if (r < 0 || ps.errored) {
                gv_ptx_free(ps.m);
                if (!ps.msg)
                        return -ENOMEM;
                *msg = ps.msg;
                return -EINVAL;
        }
        *out = ps.m;
        return 0;
}

void gv_ptx_free(gv_ptx_module_t *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n_funcs; i++)
                func_free(m->funcs[i]);
        free(m->funcs);
        for (size_t i = 0; i < m->n_vars; i++) {
                free(m->vars[i].name);
                free(m->vars[i].data);
        }
        free(m->vars);
        free(m);
}

/* ------------------------------------------------------------------ */
/* queries                                                             */

unsigned gv_ptx_version(const gv_ptx_module_t *m)
{
        return m->version;
}

unsigned gv_ptx_target(const gv_ptx_module_t *m)
{
        return m->target;
}

char gv_ptx_target_suffix(const gv_ptx_module_t *m)
{
        return m->suffix;
}

int gv_ptx_isa_cuda(unsigned isa)
{
        /* PTX ISA reference, "Release Notes": the CUDA release that introduced each ISA version. */
        static const struct {
                unsigned isa;
                int cuda;
        } t[] = {
                { 10, 1000 },  { 11, 1010 },  { 12, 2000 },  { 13, 2010 },  { 14, 2020 },  { 20, 3000 },
                { 21, 3010 },  { 22, 3020 },  { 23, 4000 },  { 30, 4010 },  { 31, 5000 },  { 32, 5050 },
                { 40, 6000 },  { 41, 6050 },  { 42, 7000 },  { 43, 7050 },  { 50, 8000 },  { 60, 9000 },
                { 61, 9010 },  { 62, 9020 },  { 63, 10000 }, { 64, 10010 }, { 65, 10020 }, { 70, 11000 },
                { 71, 11010 }, { 72, 11020 }, { 73, 11030 }, { 74, 11040 }, { 75, 11050 }, { 76, 11060 },
                { 77, 11070 }, { 78, 11080 }, { 80, 12000 }, { 81, 12010 }, { 82, 12020 }, { 83, 12030 },
                { 84, 12040 }, { 85, 12050 }, { 86, 12070 }, { 87, 12080 }, { 88, 12090 }, { 90, 13000 },
                { 91, 13010 }, { 92, 13020 }, { 93, 13030 }, { 94, 13040 }, { 95, 13050 },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (t[i].isa == isa)
                        return t[i].cuda;
        return 0;
}

const gv_ptx_func_t *gv_ptx_entry(const gv_ptx_module_t *m, const char *name)
{
        for (size_t i = 0; i < m->n_funcs; i++)
                if (m->funcs[i]->entry && m->funcs[i]->code && strcmp(m->funcs[i]->name, name) == 0)
                        return m->funcs[i];
        return NULL;
}

size_t gv_ptx_entry_count(const gv_ptx_module_t *m)
{
        size_t n = 0;
        for (size_t i = 0; i < m->n_funcs; i++)
                n += m->funcs[i]->entry && m->funcs[i]->code;
        return n;
}

const gv_ptx_func_t *gv_ptx_entry_at(const gv_ptx_module_t *m, size_t k)
{
        for (size_t i = 0; i < m->n_funcs; i++)
                if (m->funcs[i]->entry && m->funcs[i]->code && k-- == 0)
                        return m->funcs[i];
        return NULL;
}

const char *gv_ptx_func_name(const gv_ptx_func_t *f)
{
        return f->name;
}

bool gv_ptx_global(const gv_ptx_module_t *m, const char *name, void **addr, size_t *bytes)
{
        for (size_t i = 0; i < m->n_vars; i++)
                if (m->vars[i].data && strcmp(m->vars[i].name, name) == 0) {
                        *addr = m->vars[i].data;
                        *bytes = m->vars[i].bytes;
                        return true;
                }
        return false;
}

size_t gv_ptx_global_count(const gv_ptx_module_t *m)
{
        return m->n_vars;
}

void gv_ptx_global_at(const gv_ptx_module_t *m, size_t i, void **addr, size_t *bytes)
{
        *addr = m->vars[i].data;
        *bytes = m->vars[i].data ? m->vars[i].bytes : 0;
}

gv_ptx_params_t gv_ptx_func_params(const gv_ptx_func_t *f)
{
        return (gv_ptx_params_t) { .count = f->n_param, .offset = f->param_off, .size = f->param_size,
                                   .bytes = f->param_bytes };
}

size_t gv_ptx_func_shared(const gv_ptx_func_t *f)
{
        return f->shared_static;
}

size_t gv_ptx_func_local(const gv_ptx_func_t *f)
{
        return f->local_bytes;
}

unsigned gv_ptx_func_registers(const gv_ptx_func_t *f)
{
        return f->n_regs;
}

char *gv_ptx_unsupported(const gv_ptx_func_t *f)
{
        return f->unsupported ? strdup(f->unsupported) : NULL;
}
