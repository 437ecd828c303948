// SPDX-License-Identifier: Apache-2.0
/*
 * PTX reading for the mock libcuda (PTX ISA reference, "PTX module
 * directives" .version/.target/.address_size, "Kernel and function
 * directives" .entry).  Not a compiler: it splits the module into entries
 * and compares each body, statement by statement with whitespace collapsed
 * and the parameters numbered by position, with the kernels it can run.
 */
#include "mock/cuda/ptx.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT (16u << 20)

/*
 * The element-wise float add of gpu-validator cuda-check (src/cudacheck/ptx.c):
 * parameters (u64 a, u64 b, u64 c, u32 n), one thread per element i =
 * ctaid.x * ntid.x + tid.x, c[i] = a[i] + b[i] (add.rn) when i < n.  "$k" is
 * the k-th parameter.
 */
static const char *const vector_add_params[] = { ".u64", ".u64", ".u64", ".u32" };
static const char *const vector_add_body[] = {
        ".reg .pred %p<2>", ".reg .f32 %f<4>", ".reg .b32 %r<6>", ".reg .b64 %rd<11>",
        "ld.param.u64 %rd1, [$0]", "ld.param.u64 %rd2, [$1]", "ld.param.u64 %rd3, [$2]",
        "ld.param.u32 %r2, [$3]", "mov.u32 %r3, %ctaid.x", "mov.u32 %r4, %ntid.x", "mov.u32 %r5, %tid.x",
        "mad.lo.u32 %r1, %r3, %r4, %r5", "setp.ge.u32 %p1, %r1, %r2", "@%p1 bra DONE",
        "cvta.to.global.u64 %rd4, %rd1", "cvta.to.global.u64 %rd5, %rd2", "cvta.to.global.u64 %rd6, %rd3",
        "mul.wide.u32 %rd7, %r1, 4", "add.s64 %rd8, %rd4, %rd7", "add.s64 %rd9, %rd5, %rd7",
        "add.s64 %rd10, %rd6, %rd7", "ld.global.f32 %f1, [%rd8]", "ld.global.f32 %f2, [%rd9]",
        "add.rn.f32 %f3, %f1, %f2", "st.global.f32 [%rd10], %f3", "DONE: ret",
};
#define N_BODY (sizeof(vector_add_body) / sizeof(vector_add_body[0]))

/* Copies @s (n bytes) with comments removed and whitespace runs collapsed to one space. */
static char *normalise(const char *s, size_t n)
{
        char *out = malloc(n + 1);
        if (!out)
                return NULL;
        size_t k = 0;
        bool space = false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
                        while (i < n && s[i] != '\n')
                                i++;
                        space = true;
                        continue;
                }
                if (isspace((unsigned char) s[i])) {
                        space = true;
                        continue;
                }
                if (space && k > 0)
                        out[k++] = ' ';
                space = false;
                out[k++] = s[i];
        }
        out[k] = '\0';
        return out;
}

static char *trim(char *s)
{
        while (*s == ' ')
                s++;
        size_t n = strlen(s);
        while (n && s[n - 1] == ' ')
                s[--n] = '\0';
        return s;
}

/* A copy of @s with every whole-word occurrence of @name replaced by "$k"; NULL when out of memory. */
static char *number_param(const char *s, const char *name, int k)
{
        size_t len = strlen(name), n = strlen(s);
        char *out = malloc(2 * n + 3); /* each replacement of a name of 1+ bytes grows by at most 1 */
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < n;) {
                bool hit = len && strncmp(s + i, name, len) == 0 &&
                           (i == 0 || !(isalnum((unsigned char) s[i - 1]) || s[i - 1] == '_' || s[i - 1] == '%' || s[i - 1] == '.' ||
                                        s[i - 1] == '$')) &&
                           !(isalnum((unsigned char) s[i + len]) || s[i + len] == '_');
                if (hit) {
                        out[o++] = '$';
                        out[o++] = (char) ('0' + k);
                        i += len;
                } else {
                        out[o++] = s[i++];
                }
        }
        out[o] = '\0';
        return out;
}

/* Whether the entry with parameter list @params and body @body (both normalised, modifiable) is the vector add. */
static bool is_vector_add(char *params, char *body_in)
{
        /* parameters: ".param .u64 NAME, ..." */
        char *save = NULL;
        int k = 0;
        char *names[4] = { 0 };
        bool ok = true;
        for (char *p = strtok_r(params, ",", &save); p && ok; p = strtok_r(NULL, ",", &save), k++) {
                char type[16], name[64];
                ok = k < 4 && sscanf(trim(p), ".param %15s %63s", type, name) == 2 &&
                     strcmp(type, vector_add_params[k]) == 0;
                if (ok)
                        names[k] = strdup(name);
        }
        ok = ok && k == 4;
        for (int i = 0; i < 4 && ok; i++)
                ok = names[i] != NULL;
        char *body = ok ? strdup(body_in) : NULL;
        for (int i = 0; i < 4 && body; i++) {
                char *next = number_param(body, names[i], i);
                free(body);
                body = next;
        }
        for (int i = 0; i < 4; i++)
                free(names[i]);
        if (!body)
                return false;
        size_t i = 0;
        save = NULL;
        for (char *st = strtok_r(body, ";", &save); st; st = strtok_r(NULL, ";", &save)) {
                st = trim(st);
                if (!*st)
                        continue;
                if (i >= N_BODY || strcmp(st, vector_add_body[i]) != 0) {
                        free(body);
                        return false;
                }
                i++;
        }
        free(body);
        return i == N_BODY;
}

/* Fills @e from the entry whose name starts at @p; *next is where the search goes on. */
static int parse_entry(const char *p, gv_mock_ptx_entry_t *e, const char **next)
{
        while (*p == ' ')
                p++;
        size_t len = strcspn(p, " (");
        if (!len || len >= sizeof(e->name))
                return -EINVAL;
        memcpy(e->name, p, len);
        e->name[len] = '\0';
        const char *open = strchr(p, '('), *brace = strchr(p, '{');
        if (!brace)
                return -EINVAL;
        const char *close = open && open < brace ? strchr(open, ')') : NULL;
        if (open && open < brace && (!close || close > brace))
                return -EINVAL;
        int depth = 0;
        const char *end = brace;
        for (; *end; end++) {
                if (*end == '{')
                        depth++;
                else if (*end == '}' && --depth == 0)
                        break;
        }
        if (!*end)
                return -EINVAL;
        char *params = close ? strndup(open + 1, (size_t) (close - open - 1)) : strdup("");
        char *body = strndup(brace + 1, (size_t) (end - brace - 1));
        e->vector_add_f32 = params && body && is_vector_add(params, body);
        free(params);
        free(body);
        *next = end + 1;
        return 0;
}

int gv_mock_ptx_parse(const char *text, gv_mock_ptx_entry_t *out, size_t max, size_t *n)
{
        *n = 0;
        size_t len = strnlen(text, MAX_TEXT + 1);
        if (len > MAX_TEXT)
                return -EINVAL;
        char *s = normalise(text, len);
        if (!s)
                return -ENOMEM;
        int r = 0;
        const char *first = strstr(s, ".entry ");
        const char *version = strstr(s, ".version "), *target = strstr(s, ".target ");
        if (!first || !version || !target || version > first || target > first)
                r = -EINVAL;
        for (const char *p = first; r == 0 && p; p = strstr(p, ".entry ")) {
                if (*n >= max) {
                        r = -EINVAL;
                        break;
                }
                r = parse_entry(p + strlen(".entry "), &out[*n], &p);
                if (r == 0)
                        (*n)++;
        }
        free(s);
        return r;
}
