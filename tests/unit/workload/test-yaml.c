/* SPDX-License-Identifier: Apache-2.0 */
/* YAML <-> json-c: scalar typing, lines, aliases and their bounds, emitter quoting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "workload/workload.h"

static gv_doc_t *parse_ok(const char *text)
{
        gv_doc_t *doc = NULL;
        gv_error_t *err = NULL;
        int r = gv_yaml_parse(text, strlen(text), "t.yaml", &doc, &err);
        if (r < 0)
                fail_msg("parse failed: %s", err ? err->msg : "?");
        return doc;
}

static char *parse_err(const char *text)
{
        gv_doc_t *doc = NULL;
        gv_error_t *err = NULL;
        int r = gv_yaml_parse(text, strlen(text), "t.yaml", &doc, &err);
        assert_true(r < 0);
        assert_null(doc);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        char *msg = strdup(err->msg);
        gv_error_free(&err);
        return msg;
}

static json_object *get(json_object *o, const char *k)
{
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(o, k, &v));
        return v;
}

static void test_scalar_typing_core_schema(void **state)
{
        (void) state;
        gv_doc_t *doc = parse_ok("n1: null\nn2: ~\nn3:\nn4: NULL\n"
                                 "b1: true\nb2: False\nb3: TRUE\n"
                                 "i1: 42\ni2: -7\ni3: 0o17\ni4: 0x1F\ni5: 007\n"
                                 "f1: 1.5\nf2: .5\nf3: 1e3\nf4: -2.5E-1\n"
                                 "s1: yes\ns2: 'true'\ns3: \"42\"\ns4: 1.2.3\ns5: .inf\ns6: on\ns7: 500m\n"
                                 "s8: !!str 12\ns9: ! 12\ns10: |\n  line\n");
        json_object *r = gv_doc_root(doc);
        for (const char *const *k = (const char *const[]){ "n1", "n2", "n3", "n4", NULL }; *k; k++)
                assert_null(get(r, *k));
        assert_true(json_object_is_type(get(r, "b1"), json_type_boolean));
        assert_true(json_object_get_boolean(get(r, "b1")));
        assert_false(json_object_get_boolean(get(r, "b2")));
        assert_true(json_object_get_boolean(get(r, "b3")));
        assert_int_equal(json_object_get_int64(get(r, "i1")), 42);
        assert_int_equal(json_object_get_int64(get(r, "i2")), -7);
        assert_int_equal(json_object_get_int64(get(r, "i3")), 15);
        assert_int_equal(json_object_get_int64(get(r, "i4")), 31);
        assert_int_equal(json_object_get_int64(get(r, "i5")), 7);
        assert_true(json_object_is_type(get(r, "i1"), json_type_int));
        assert_true(json_object_is_type(get(r, "f1"), json_type_double));
        assert_true(json_object_get_double(get(r, "f2")) == 0.5);
        assert_true(json_object_get_double(get(r, "f3")) == 1000.0);
        assert_true(json_object_get_double(get(r, "f4")) == -0.25);
        /* the source text is kept for output */
        assert_string_equal(json_object_to_json_string(get(r, "f3")), "1e3");
        const char *strings[][2] = { { "s1", "yes" }, { "s2", "true" },  { "s3", "42" },  { "s4", "1.2.3" },
                                     { "s5", ".inf" }, { "s6", "on" },   { "s7", "500m" }, { "s8", "12" },
                                     { "s9", "12" },   { "s10", "line\n" } };
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
                json_object *v = get(r, strings[i][0]);
                assert_true(json_object_is_type(v, json_type_string));
                assert_string_equal(json_object_get_string(v), strings[i][1]);
        }
        gv_doc_free(doc);
}

static void test_json_input(void **state)
{
        (void) state;
        gv_doc_t *doc = parse_ok("{\"a\":1,\"b\":[true,null,\"x\\/y\\u00e9\"],\"c\":{\"d\":\"1\"}}");
        json_object *r = gv_doc_root(doc);
        assert_int_equal(json_object_get_int(get(r, "a")), 1);
        json_object *b = get(r, "b");
        assert_int_equal(json_object_array_length(b), 3);
        assert_null(json_object_array_get_idx(b, 1));
        assert_string_equal(json_object_get_string(json_object_array_get_idx(b, 2)), "x/y\xc3\xa9");
        assert_true(json_object_is_type(get(get(r, "c"), "d"), json_type_string));
        gv_doc_free(doc);
}

static void test_lines(void **state)
{
        (void) state;
        gv_doc_t *doc = parse_ok("# comment\n"
                                 "spec:\n"               /* 2 */
                                 "  containers:\n"       /* 3 */
                                 "  - name: a\n"         /* 4 */
                                 "    resources: 5\n"    /* 5 */
                                 "  - name: b\n");       /* 6 */
        json_object *spec = get(gv_doc_root(doc), "spec");
        assert_int_equal(gv_doc_line(doc, spec), 2);
        json_object *ctrs = get(spec, "containers");
        assert_int_equal(gv_doc_line(doc, ctrs), 3);
        assert_int_equal(gv_doc_line(doc, json_object_array_get_idx(ctrs, 0)), 4);
        assert_int_equal(gv_doc_line(doc, get(json_object_array_get_idx(ctrs, 0), "resources")), 5);
        assert_int_equal(gv_doc_line(doc, json_object_array_get_idx(ctrs, 1)), 6);
        assert_int_equal(gv_doc_line(doc, NULL), 0);
        assert_string_equal(gv_doc_name(doc), "t.yaml");
        gv_doc_free(doc);
}

static void test_empty_document(void **state)
{
        (void) state;
        gv_doc_t *doc = parse_ok("");
        assert_null(gv_doc_root(doc));
        gv_doc_free(doc);
        doc = parse_ok("# only a comment\n---\n");
        assert_null(gv_doc_root(doc));
        gv_doc_free(doc);
}

static void test_aliases_resolved(void **state)
{
        (void) state;
        gv_doc_t *doc = parse_ok("base: &r {cpu: 1, memory: 1Gi}\nuse: *r\nlist: [&s x, *s]\n");
        json_object *r = gv_doc_root(doc);
        assert_true(json_object_equal(get(r, "base"), get(r, "use")));
        assert_ptr_not_equal(get(r, "base"), get(r, "use"));
        assert_string_equal(json_object_get_string(json_object_array_get_idx(get(r, "list"), 1)), "x");
        gv_doc_free(doc);
}

static void test_billion_laughs_refused(void **state)
{
        (void) state;
        _cleanup_free_ char *msg = parse_err("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                                             "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                             "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                                             "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                                             "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                             "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                                             "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n");
        assert_non_null(strstr(msg, "nodes"));
        assert_non_null(strstr(msg, "t.yaml:"));
}

/* "a: &a {k0: 0, ..., k9: 0}" then "b: [*a x @n]": 21 nodes for a (map, 10 keys, 10 values) and
 * 21 for each alias, as if written out.  Heap text; the caller frees it. */
static char *aliased_maps(unsigned n)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        assert_non_null(f);
        fputs("a: &a {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9}\nb: [", f);
        for (unsigned i = 0; i < n; i++)
                fputs(i ? ", *a" : "*a", f);
        fputs("]\n", f);
        assert_int_equal(fclose(f), 0);
        return text;
}

/* Found by fuzz-workload-yaml: an alias counted its mapping's values but not its keys, so a
 * document accepted through aliases could be refused once written out plainly (the emitter's
 * output, `render`, could not be read back).  Both forms now count the same nodes. */
static void test_alias_counts_keys(void **state)
{
        (void) state;
        unsigned over = GV_YAML_MAX_NODES / 21 + 1;  /* 21 nodes an alias: over the bound */
        unsigned under = GV_YAML_MAX_NODES / 21 - 2; /* plus a, b and their keys: under it */
        _cleanup_free_ char *big = aliased_maps(over);
        _cleanup_free_ char *msg = parse_err(big);
        assert_non_null(strstr(msg, "nodes"));
        _cleanup_free_ char *small = aliased_maps(under);
        gv_doc_t *doc = parse_ok(small);
        char *plain = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_yaml_emit(gv_doc_root(doc), &plain, &err), 0);
        gv_doc_t *again = parse_ok(plain);
        assert_true(json_object_equal(gv_doc_root(doc), gv_doc_root(again)));
        gv_doc_free(again);
        gv_doc_free(doc);
        free(plain);
}

static void test_depth_bounded(void **state)
{
        (void) state;
        char deep[GV_YAML_MAX_DEPTH * 2 + 8];
        size_t n = 0;
        for (int i = 0; i < GV_YAML_MAX_DEPTH + 1; i++)
                deep[n++] = '[';
        deep[n] = '\0';
        _cleanup_free_ char *msg = parse_err(deep);
        assert_non_null(strstr(msg, "nested deeper"));
        /* Aliases cannot be used to nest deeper either. */
        _cleanup_free_ char *chain = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&chain, &len);
        fprintf(f, "a0: &a0 [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n");
        for (int i = 1; i < 5; i++)
                fprintf(f, "a%d: &a%d [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a%d]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", i, i, i - 1);
        fclose(f);
        _cleanup_free_ char *msg2 = parse_err(chain);
        assert_non_null(strstr(msg2, "deeper"));
}

static void test_errors_have_lines(void **state)
{
        (void) state;
        _cleanup_free_ char *m1 = parse_err("a: 1\nb: [1, 2\n");
        assert_non_null(strstr(m1, "t.yaml:"));
        _cleanup_free_ char *m2 = parse_err("a: 1\na: 2\n");
        assert_string_equal(m2, "t.yaml:2: duplicate key 'a'");
        _cleanup_free_ char *m3 = parse_err("a: 1\n---\nb: 2\n");
        assert_non_null(strstr(m3, "more than one YAML document"));
        _cleanup_free_ char *m4 = parse_err("x: *nope\n");
        assert_non_null(strstr(m4, "unknown alias"));
        _cleanup_free_ char *m5 = parse_err("x: !!binary abc\n");
        assert_non_null(strstr(m5, "unsupported tag"));
        _cleanup_free_ char *m6 = parse_err("x: !!int abc\n");
        assert_non_null(strstr(m6, "not a valid int"));
        _cleanup_free_ char *m7 = parse_err("x: 99999999999999999999\n");
        assert_non_null(strstr(m7, "out of range"));
        _cleanup_free_ char *m8 = parse_err("? [a]\n: 1\n");
        assert_non_null(strstr(m8, "key must be a scalar"));
}

static void test_emit_roundtrip_and_quoting(void **state)
{
        (void) state;
        json_object *o = json_tokener_parse(
                "{\"s\": {\"t\": \"true\", \"y\": \"yes\", \"n\": \"1.0\", \"e\": \"\", \"z\": \"0777\","
                " \"nul\": \"null\", \"tilde\": \"~\", \"on\": \"On\", \"colon\": \"a: b\", \"hash\": \"# x\","
                " \"dash\": \"- x\", \"ml\": \"line1\\nline2\\n\", \"plain\": \"nvidia-cuda-validator\","
                " \"v\": \"1.2.3\", \"q\": \"500m\", \"inf\": \".inf\"},"
                " \"i\": 3, \"d\": 0.5, \"b\": false, \"nothing\": null, \"list\": [1, \"2\", {\"k\": []}],"
                " \"empty\": {}}");
        assert_non_null(o);
        _cleanup_free_ char *y = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_yaml_emit(o, &y, &err), 0);
        /* type-ambiguous strings are double-quoted, ordinary ones are plain */
        assert_non_null(strstr(y, "t: \"true\""));
        assert_non_null(strstr(y, "\"y\": \"yes\""));
        assert_non_null(strstr(y, "\"n\": \"1.0\""));
        assert_non_null(strstr(y, "e: \"\""));
        assert_non_null(strstr(y, "z: \"0777\""));
        assert_non_null(strstr(y, "\"on\": \"On\""));
        assert_non_null(strstr(y, "plain: nvidia-cuda-validator\n"));
        assert_non_null(strstr(y, "ml: |"));
        assert_non_null(strstr(y, "i: 3\n"));
        assert_non_null(strstr(y, "b: false\n"));
        gv_doc_t *doc = parse_ok(y);
        assert_true(json_object_equal(o, gv_doc_root(doc)));
        gv_doc_free(doc);
        json_object_put(o);
}

static void test_emit_refuses_bad_utf8(void **state)
{
        (void) state;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "k", json_object_new_string("\xff\xfe"));
        char *y = NULL;
        gv_error_t *err = NULL;
        assert_true(gv_yaml_emit(o, &y, &err) < 0);
        assert_null(y);
        assert_non_null(strstr(err->msg, "UTF-8"));
        gv_error_free(&err);
        json_object_put(o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_scalar_typing_core_schema),
                cmocka_unit_test(test_json_input),
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_empty_document),
                cmocka_unit_test(test_aliases_resolved),
                cmocka_unit_test(test_alias_counts_keys),
                cmocka_unit_test(test_billion_laughs_refused),
                cmocka_unit_test(test_depth_bounded),
                cmocka_unit_test(test_errors_have_lines),
                cmocka_unit_test(test_emit_roundtrip_and_quoting),
                cmocka_unit_test(test_emit_refuses_bad_utf8),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
