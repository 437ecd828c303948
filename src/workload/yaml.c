/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML <-> json-c: a libyaml event parser that builds json-c trees and
 * remembers source lines, and a libyaml emitter for json-c trees.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/alloc.h"
#include "base/cleanup.h"
#include "workload.h"

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

struct line_entry {
        const json_object *node;
        unsigned line;
};

struct gv_doc {
        json_object *root;
        char *name;
        struct line_entry *lines;
        size_t n_lines, cap_lines;
};

struct frame {
        json_object *node; /* the collection being built (owned until attached) */
        bool is_map;
        char *key;         /* mapping: the key waiting for its value */
        unsigned key_line;
        unsigned line;     /* where the collection starts */
        char *anchor;      /* anchor to register when complete */
};

struct anchor {
        char *name;
        json_object *node; /* borrowed from the tree */
        unsigned depth;    /* nesting depth of the anchored subtree (1 for a scalar) */
};

struct parser_state {
        gv_doc_t *doc;
        struct frame stack[GV_YAML_MAX_DEPTH];
        unsigned depth;
        struct anchor *anchors;
        size_t n_anchors;
        size_t nodes;
        bool have_root;
        gv_error_t **err;
};

void gv_doc_free(gv_doc_t *doc)
{
        if (!doc)
                return;
        json_object_put(doc->root);
        free(doc->name);
        free(doc->lines);
        free(doc);
}

json_object *gv_doc_root(const gv_doc_t *doc)
{
        return doc ? doc->root : NULL;
}

const char *gv_doc_name(const gv_doc_t *doc)
{
        return doc && doc->name ? doc->name : "";
}

unsigned gv_doc_line(const gv_doc_t *doc, const json_object *node)
{
        if (!doc || !node)
                return 0;
        for (size_t i = doc->n_lines; i > 0; i--)
                if (doc->lines[i - 1].node == node)
                        return doc->lines[i - 1].line;
        return 0;
}

static int note_line(struct parser_state *st, const json_object *node, unsigned line)
{
        gv_doc_t *doc = st->doc;
        if (!node)
                return 0;
        if (!GV_GREEDY_REALLOC(doc->lines, doc->cap_lines, doc->n_lines + 1))
                return gv_error_oom(st->err);
        doc->lines[doc->n_lines++] = (struct line_entry){ node, line };
        return 0;
}

static int count_node(struct parser_state *st, unsigned line)
{
        if (++st->nodes > GV_YAML_MAX_NODES)
                return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: more than %d nodes (alias expansion?)",
                                    st->doc->name, line, GV_YAML_MAX_NODES);
        return 0;
}

/* ---- scalar resolution (YAML 1.2 core schema) ---- */

static bool is_one_of(const char *s, const char *const *words, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, words[i]) == 0)
                        return true;
        return false;
}

static bool is_null_word(const char *s)
{
        static const char *const w[] = { "", "~", "null", "Null", "NULL" };
        return is_one_of(s, w, GV_ARRAY_SIZE(w));
}

static int bool_word(const char *s)
{
        static const char *const t[] = { "true", "True", "TRUE" };
        static const char *const f[] = { "false", "False", "FALSE" };
        if (is_one_of(s, t, GV_ARRAY_SIZE(t)))
                return 1;
        if (is_one_of(s, f, GV_ARRAY_SIZE(f)))
                return 0;
        return -1;
}

static bool all_in(const char *s, const char *set)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!strchr(set, *s))
                        return false;
        return true;
}

#define DIGITS "0123456789"
#define HEXDIGITS "0123456789abcdefABCDEF"

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ ; base in *base, digits start in *digits. */
static bool looks_int(const char *s, int *base, const char **digits)
{
        if (s[0] == '0' && s[1] == 'o' && all_in(s + 2, "01234567")) {
                *base = 8;
                *digits = s + 2;
                return true;
        }
        if (s[0] == '0' && s[1] == 'x' && all_in(s + 2, HEXDIGITS)) {
                *base = 16;
                *digits = s + 2;
                return true;
        }
        const char *p = s + (*s == '-' || *s == '+');
        if (all_in(p, DIGITS)) {
                *base = 10;
                *digits = s;
                return true;
        }
        return false;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool looks_float(const char *s)
{
        const char *p = s + (*s == '-' || *s == '+');
        size_t lead = strspn(p, DIGITS);
        p += lead;
        if (*p == '.') {
                p++;
                size_t frac = strspn(p, DIGITS);
                if (!lead && !frac)
                        return false;
                p += frac;
        } else if (!lead) {
                return false;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                p += (*p == '-' || *p == '+');
                size_t exp = strspn(p, DIGITS);
                if (!exp)
                        return false;
                p += exp;
        }
        return *p == '\0';
}

typedef enum { SC_STRING, SC_NULL, SC_BOOL, SC_INT, SC_FLOAT } scalar_type_t;

static scalar_type_t classify_plain(const char *s)
{
        int base;
        const char *digits;
        if (is_null_word(s))
                return SC_NULL;
        if (bool_word(s) >= 0)
                return SC_BOOL;
        if (looks_int(s, &base, &digits))
                return SC_INT;
        if (looks_float(s))
                return SC_FLOAT;
        return SC_STRING;
}

/* Build the json value of a plain scalar of type @t; *out NULL for null. */
static int make_typed(struct parser_state *st, const char *s, scalar_type_t t, unsigned line, json_object **out)
{
        switch (t) {
        case SC_NULL:
                *out = NULL;
                return 0;
        case SC_BOOL:
                *out = json_object_new_boolean(bool_word(s) == 1);
                break;
        case SC_INT: {
                int base;
                const char *digits;
                looks_int(s, &base, &digits);
                errno = 0;
                char *end = NULL;
                long long v = strtoll(digits, &end, base);
                if (errno == ERANGE || *end)
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: integer out of range: %s",
                                            st->doc->name, line, s);
                *out = json_object_new_int64(v);
                break;
        }
        case SC_FLOAT: {
                char *end = NULL;
                double d = strtod(s, &end);
                *out = json_object_new_double_s(d, s);
                break;
        }
        default:
                *out = json_object_new_string(s);
                break;
        }
        if (!*out)
                return gv_error_oom(st->err);
        return 0;
}

static int scalar_value(struct parser_state *st, const yaml_event_t *ev, unsigned line, json_object **out)
{
        const char *s = (const char *) ev->data.scalar.value;
        size_t len = ev->data.scalar.length;
        const char *tag = (const char *) ev->data.scalar.tag;
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

        if (tag && strcmp(tag, "!") != 0 && strcmp(tag, YAML_TAG_PREFIX "str") != 0) {
                scalar_type_t want;
                if (strcmp(tag, YAML_TAG_PREFIX "int") == 0)
                        want = SC_INT;
                else if (strcmp(tag, YAML_TAG_PREFIX "float") == 0)
                        want = SC_FLOAT;
                else if (strcmp(tag, YAML_TAG_PREFIX "bool") == 0)
                        want = SC_BOOL;
                else if (strcmp(tag, YAML_TAG_PREFIX "null") == 0)
                        want = SC_NULL;
                else
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: unsupported tag %s",
                                            st->doc->name, line, tag);
                scalar_type_t got = strlen(s) == len ? classify_plain(s) : SC_STRING;
                if (got == SC_INT && want == SC_FLOAT)
                        got = SC_FLOAT;
                if (got != want)
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: '%s' is not a valid %s",
                                            st->doc->name, line, s, tag + strlen(YAML_TAG_PREFIX));
                return make_typed(st, s, want, line, out);
        }
        if (!tag && plain)
                return make_typed(st, s, classify_plain(s), line, out);
        *out = json_object_new_string_len(s, (int) (len > INT_MAX ? INT_MAX : len));
        if (!*out)
                return gv_error_oom(st->err);
        return 0;
}

/* ---- tree building ---- */

/* NOLINTNEXTLINE(misc-no-recursion): stops at the depth limit it is given (GV_YAML_MAX_DEPTH + 1) */
static unsigned subtree_depth(json_object *o, unsigned limit)
{
        unsigned best = 0;
        if (limit == 0)
                return 1;
        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, k, v) {
                        (void) k;
                        unsigned d = subtree_depth(v, limit - 1);
                        if (d > best)
                                best = d;
                }
        } else if (json_object_is_type(o, json_type_array)) {
                size_t n = json_object_array_length(o);
                for (size_t i = 0; i < n; i++) {
                        unsigned d = subtree_depth(json_object_array_get_idx(o, i), limit - 1);
                        if (d > best)
                                best = d;
                }
        }
        return best + 1;
}

/* NOLINTNEXTLINE(misc-no-recursion): recursion over a document whose depth the parser bounded (GV_YAML_MAX_DEPTH) */
static int copy_tree(struct parser_state *st, json_object *src, unsigned line, json_object **out)
{
        int r;
        json_object *dst = NULL;
        if ((r = count_node(st, line)) < 0)
                return r;
        switch (json_object_get_type(src)) {
        case json_type_null:
                *out = NULL;
                return 0;
        case json_type_object:
                dst = json_object_new_object();
                if (!dst)
                        break;
                json_object_object_foreach(src, k, v) {
                        json_object *c = NULL;
                        /* the key is a node too, as when the mapping is written out (on_event) */
                        if ((r = count_node(st, line)) < 0 || (r = copy_tree(st, v, line, &c)) < 0 ||
                            json_object_object_add(dst, k, c) < 0) {
                                json_object_put(c);
                                json_object_put(dst);
                                return r < 0 ? r : gv_error_oom(st->err);
                        }
                }
                break;
        case json_type_array: {
                dst = json_object_new_array();
                if (!dst)
                        break;
                size_t n = json_object_array_length(src);
                for (size_t i = 0; i < n; i++) {
                        json_object *c = NULL;
                        if ((r = copy_tree(st, json_object_array_get_idx(src, i), line, &c)) < 0 ||
                            json_object_array_add(dst, c) < 0) {
                                json_object_put(c);
                                json_object_put(dst);
                                return r < 0 ? r : gv_error_oom(st->err);
                        }
                }
                break;
        }
        default:
                if (json_object_deep_copy(src, &dst, NULL) < 0)
                        dst = NULL;
                break;
        }
        if (!dst)
                return gv_error_oom(st->err);
        if ((r = note_line(st, dst, line)) < 0) {
                json_object_put(dst);
                return r;
        }
        *out = dst;
        return 0;
}

static int remember_anchor(struct parser_state *st, const char *name, json_object *node)
{
        if (!name)
                return 0;
        struct anchor *n = realloc(st->anchors, (st->n_anchors + 1) * sizeof(*n));
        if (!n)
                return gv_error_oom(st->err);
        st->anchors = n;
        char *copy = strdup(name);
        if (!copy)
                return gv_error_oom(st->err);
        st->anchors[st->n_anchors++] = (struct anchor){ copy, node, subtree_depth(node, GV_YAML_MAX_DEPTH + 1) };
        return 0;
}

/* Hand a complete node (ownership included) to its parent, or make it the root. */
static int attach(struct parser_state *st, json_object *node, unsigned line)
{
        int r;
        if (st->depth == 0) {
                if (st->have_root) {
                        json_object_put(node);
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: more than one YAML document",
                                            st->doc->name, line);
                }
                st->doc->root = node;
                st->have_root = true;
                return note_line(st, node, line);
        }
        struct frame *f = &st->stack[st->depth - 1];
        if (!f->is_map) {
                if (json_object_array_add(f->node, node) < 0) {
                        json_object_put(node);
                        return gv_error_oom(st->err);
                }
                return note_line(st, node, line);
        }
        if (!f->key) {
                /* This node is a key (key_scalar() made it a string). */
                const char *k = node ? json_object_get_string(node) : "null";
                if (node && json_object_is_type(node, json_type_string) &&
                    strlen(k) != (size_t) json_object_get_string_len(node)) {
                        json_object_put(node);
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: a mapping key contains NUL",
                                            st->doc->name, line);
                }
                if (json_object_object_get_ex(f->node, k, NULL)) {
                        r = gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: duplicate key '%s'",
                                         st->doc->name, line, k);
                        json_object_put(node);
                        return r;
                }
                f->key = strdup(k);
                json_object_put(node);
                if (!f->key)
                        return gv_error_oom(st->err);
                f->key_line = line;
                return 0;
        }
        _cleanup_free_ char *key = TAKE_PTR(f->key);
        if (json_object_object_add(f->node, key, node) < 0) {
                json_object_put(node);
                return gv_error_oom(st->err);
        }
        return note_line(st, node, f->key_line);
}

/* The text of a scalar used as a key keeps its source spelling (e.g. `1.10`, `null`). */
static int key_scalar(struct parser_state *st, const yaml_event_t *ev, json_object **out)
{
        *out = json_object_new_string_len((const char *) ev->data.scalar.value, (int) ev->data.scalar.length);
        if (!*out)
                return gv_error_oom(st->err);
        return 0;
}

static bool expecting_key(const struct parser_state *st)
{
        return st->depth > 0 && st->stack[st->depth - 1].is_map && !st->stack[st->depth - 1].key;
}

static int on_event(struct parser_state *st, yaml_event_t *ev)
{
        unsigned line = (unsigned) ev->start_mark.line + 1;
        int r;

        switch (ev->type) {
        case YAML_SCALAR_EVENT: {
                json_object *v = NULL;
                if ((r = count_node(st, line)) < 0)
                        return r;
                r = expecting_key(st) ? key_scalar(st, ev, &v) : scalar_value(st, ev, line, &v);
                if (r < 0)
                        return r;
                if (ev->data.scalar.anchor && !expecting_key(st) &&
                    (r = remember_anchor(st, (const char *) ev->data.scalar.anchor, v)) < 0) {
                        json_object_put(v);
                        return r;
                }
                return attach(st, v, line);
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
                bool is_map = ev->type == YAML_MAPPING_START_EVENT;
                const char *tag = (const char *) (is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
                const char *anchor =
                        (const char *) (is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
                if (expecting_key(st))
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: a mapping key must be a scalar",
                                            st->doc->name, line);
                if (tag && strcmp(tag, is_map ? YAML_TAG_PREFIX "map" : YAML_TAG_PREFIX "seq") != 0)
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: unsupported tag %s",
                                            st->doc->name, line, tag);
                if (st->depth >= GV_YAML_MAX_DEPTH)
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: nested deeper than %d levels",
                                            st->doc->name, line, GV_YAML_MAX_DEPTH);
                if ((r = count_node(st, line)) < 0)
                        return r;
                json_object *n = is_map ? json_object_new_object() : json_object_new_array();
                char *a = anchor ? strdup(anchor) : NULL;
                if (!n || (anchor && !a)) {
                        json_object_put(n);
                        free(a);
                        return gv_error_oom(st->err);
                }
                st->stack[st->depth++] = (struct frame){ .node = n, .is_map = is_map, .line = line, .anchor = a };
                return 0;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
                struct frame f = st->stack[--st->depth];
                free(f.key);
                r = remember_anchor(st, f.anchor, f.node);
                free(f.anchor);
                if (r < 0) {
                        json_object_put(f.node);
                        return r;
                }
                return attach(st, f.node, f.line);
        }
        case YAML_ALIAS_EVENT: {
                const char *name = (const char *) ev->data.alias.anchor;
                if (expecting_key(st))
                        return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG,
                                            "%s:%u: an alias cannot be a mapping key", st->doc->name, line);
                for (size_t i = st->n_anchors; i > 0; i--) {
                        struct anchor *a = &st->anchors[i - 1];
                        if (strcmp(a->name, name) != 0)
                                continue;
                        if (st->depth + a->depth > GV_YAML_MAX_DEPTH)
                                return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG,
                                                    "%s:%u: alias *%s nests deeper than %d levels", st->doc->name,
                                                    line, name, GV_YAML_MAX_DEPTH);
                        json_object *c = NULL;
                        if ((r = copy_tree(st, a->node, line, &c)) < 0)
                                return r;
                        return attach(st, c, line);
                }
                return gv_error_set(st->err, EINVAL, GV_REASON_CONFIG, "%s:%u: unknown alias *%s", st->doc->name,
                                    line, name);
        }
        default:
                return 0;
        }
}

int gv_yaml_parse(const char *data, size_t len, const char *name, gv_doc_t **out, gv_error_t **err)
{
        struct parser_state st = { .err = err };
        yaml_parser_t parser;
        int r = 0;
        bool done = false;

        st.doc = calloc(1, sizeof(*st.doc));
        if (!st.doc || !(st.doc->name = strdup(name ? name : "<input>"))) {
                gv_doc_free(st.doc);
                return gv_error_oom(err);
        }
        if (!yaml_parser_initialize(&parser)) {
                gv_doc_free(st.doc);
                return gv_error_oom(err);
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, len);

        while (!done && r >= 0) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&parser, &ev)) {
                        const yaml_mark_t *m = parser.problem_mark.line || parser.problem_mark.column
                                                       ? &parser.problem_mark
                                                       : &parser.context_mark;
                        r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s:%zu:%zu: %s%s%s", st.doc->name,
                                         m->line + 1, m->column + 1, parser.problem ? parser.problem : "syntax error",
                                         parser.context ? " " : "", parser.context ? parser.context : "");
                        break;
                }
                done = ev.type == YAML_STREAM_END_EVENT;
                r = on_event(&st, &ev);
                yaml_event_delete(&ev);
        }
        yaml_parser_delete(&parser);

        while (st.depth > 0) {
                struct frame *f = &st.stack[--st.depth];
                json_object_put(f->node);
                free(f->key);
                free(f->anchor);
        }
        for (size_t i = 0; i < st.n_anchors; i++)
                free(st.anchors[i].name);
        free(st.anchors);

        if (r < 0) {
                gv_doc_free(st.doc);
                return r;
        }
        *out = st.doc;
        return 0;
}

/* ---- emitter ---- */

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
        FILE *f = data;
        return fwrite(buffer, 1, size, f) == size;
}

/* Whether a plain rendering of @s would be read back as something else than this string. */
static bool needs_quotes(const char *s, size_t len)
{
        /* Booleans and other specials of YAML 1.1 (kubectl, sigs.k8s.io/yaml), and 1.2 floats we keep as strings. */
        static const char *const yaml11[] = {
                "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
                "=", "<<", ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF", ".nan",
                ".NaN", ".NAN",
        };
        if (strlen(s) != len)
                return true;
        if (classify_plain(s) != SC_STRING || is_one_of(s, yaml11, GV_ARRAY_SIZE(yaml11)))
                return true;
        /*
         * Text that YAML 1.1 may read as a number or a date (octals 0777,
         * sexagesimals 1:20, 1_000, 0b101, 2001-12-14 21:59:43.10Z): quote
         * it when it starts like a number and has nothing but such
         * characters.  "500m" and "1Gi" stay plain.
         */
        const char *p = s + (*s == '-' || *s == '+');
        if (*p == '.')
                p++;
        return *p >= '0' && *p <= '9' && strspn(s, "0123456789_:.+-eEoOxXbBaAcCdDfFtTzZ ") == len;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t len, bool is_string)
{
        yaml_event_t ev;
        yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
        if (is_string) {
                if (needs_quotes(s, len))
                        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
                else if (memchr(s, '\n', len))
                        style = YAML_LITERAL_SCALAR_STYLE;
        } else {
                style = YAML_PLAIN_SCALAR_STYLE;
        }
        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) len, 1, 1, style))
                return -EILSEQ; /* libyaml refuses text that is not UTF-8 */
        return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
}

/* NOLINTNEXTLINE(misc-no-recursion): recursion over a JSON tree whose depth the parsers bounded */
static int emit_node(yaml_emitter_t *em, json_object *o, unsigned depth)
{
        yaml_event_t ev;
        int r;
        char num[32];

        if (depth > GV_YAML_MAX_DEPTH * 4)
                return -ELOOP;
        switch (json_object_get_type(o)) {
        case json_type_null:
                return emit_scalar(em, "null", 4, false);
        case json_type_boolean:
                return json_object_get_boolean(o) ? emit_scalar(em, "true", 4, false)
                                                  : emit_scalar(em, "false", 5, false);
        case json_type_int:
                snprintf(num, sizeof(num), "%" PRId64, json_object_get_int64(o));
                return emit_scalar(em, num, strlen(num), false);
        case json_type_double: {
                /* The source text when it reads back as a float, else a form that does. */
                const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
                if (classify_plain(t) == SC_FLOAT)
                        return emit_scalar(em, t, strlen(t), false);
                snprintf(num, sizeof(num), "%.17g", json_object_get_double(o));
                if (classify_plain(num) == SC_INT)
                        snprintf(num + strlen(num), sizeof(num) - strlen(num), ".0");
                else if (classify_plain(num) != SC_FLOAT)
                        return -EDOM; /* inf, nan: not representable in JSON either */
                return emit_scalar(em, num, strlen(num), false);
        }
        case json_type_string:
                return emit_scalar(em, json_object_get_string(o), (size_t) json_object_get_string_len(o), true);
        case json_type_array: {
                if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE))
                        return -ENOMEM;
                if (!yaml_emitter_emit(em, &ev))
                        return -EINVAL;
                size_t n = json_object_array_length(o);
                for (size_t i = 0; i < n; i++)
                        if ((r = emit_node(em, json_object_array_get_idx(o, i), depth + 1)) < 0)
                                return r;
                if (!yaml_sequence_end_event_initialize(&ev))
                        return -ENOMEM;
                return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
        }
        case json_type_object: {
                if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
                        return -ENOMEM;
                if (!yaml_emitter_emit(em, &ev))
                        return -EINVAL;
                json_object_object_foreach(o, k, v) {
                        if ((r = emit_scalar(em, k, strlen(k), true)) < 0 || (r = emit_node(em, v, depth + 1)) < 0)
                                return r;
                }
                if (!yaml_mapping_end_event_initialize(&ev))
                        return -ENOMEM;
                return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
        }
        }
        return -EINVAL;
}

int gv_yaml_emit(json_object *obj, char **out, gv_error_t **err)
{
        char *buf = NULL;
        size_t size = 0;
        yaml_emitter_t em;
        yaml_event_t ev;
        int r = 0;

        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return gv_error_oom(err);
        if (!yaml_emitter_initialize(&em)) {
                (void) fclose(f); /* nothing was written */
                free(buf);
                return gv_error_oom(err);
        }
        yaml_emitter_set_output(&em, write_handler, f);
        yaml_emitter_set_unicode(&em, 1);
        yaml_emitter_set_width(&em, -1);
        yaml_emitter_set_indent(&em, 2);

        if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(&em, &ev) ||
            !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) || !yaml_emitter_emit(&em, &ev))
                r = -EINVAL;
        if (r == 0)
                r = emit_node(&em, obj, 0);
        if (r == 0 && (!yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev) ||
                       !yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev) ||
                       !yaml_emitter_flush(&em)))
                r = -EINVAL;
        if (r < 0)
                r = gv_error_set(err, r, GV_REASON_INTERNAL, "emit YAML: %s",
                                 em.problem     ? em.problem
                                 : r == -ELOOP  ? "nested too deeply"
                                 : r == -EILSEQ ? "a string is not valid UTF-8"
                                 : r == -EDOM   ? "a number is infinite or not a number"
                                                : "failed");
        yaml_emitter_delete(&em);
        if (fclose(f) != 0 && r == 0)
                r = gv_error_oom(err);
        if (r < 0) {
                free(buf);
                return r;
        }
        *out = buf;
        return 0;
}
