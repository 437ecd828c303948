/* SPDX-License-Identifier: Apache-2.0 */
/* JSON merge patch (RFC 7386, its Appendix A) and the name-merge of container lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workload/workload.h"

static json_object *j(const char *text)
{
        if (strcmp(text, "null") == 0)
                return NULL;
        json_object *o = json_tokener_parse(text);
        if (!o)
                fail_msg("bad JSON in test: %s", text);
        return o;
}

static void check_patch(const char *target, const char *patch, const char *want)
{
        json_object *p = j(patch), *w = j(want);
        json_object *res = gv_json_merge_patch(j(target), p);
        if (!json_object_equal(res, w))
                fail_msg("%s + %s: got %s, want %s", target, patch, json_object_to_json_string(res), want);
        json_object_put(res);
        json_object_put(p);
        json_object_put(w);
}

/* RFC 7386, Appendix A, every row. */
static void test_rfc7386_appendix_a(void **state)
{
        (void) state;
        static const char *const rows[][3] = {
                { "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
                { "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}" },
                { "{\"a\":\"b\"}", "{\"a\":null}", "{}" },
                { "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}" },
                { "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
                { "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}" },
                { "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}" },
                { "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}" },
                { "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]" },
                { "{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]" },
                { "{\"a\":\"foo\"}", "null", "null" },
                { "{\"a\":\"foo\"}", "\"bar\"", "\"bar\"" },
                { "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}" },
                { "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}" },
                { "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}" },
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                check_patch(rows[i][0], rows[i][1], rows[i][2]);
}

/* RFC 7386, section 3: the worked example. */
static void test_rfc7386_section3_example(void **state)
{
        (void) state;
        check_patch("{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
                    "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
                    "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\",\"author\":{\"familyName\":null},"
                    "\"tags\":[\"example\"]}",
                    "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
                    "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}");
}

static void test_patch_is_not_changed(void **state)
{
        (void) state;
        json_object *p = j("{\"a\":{\"b\":[1,{\"c\":null}]}}");
        json_object *before = NULL;
        json_object_deep_copy(p, &before, NULL);
        json_object *res = gv_json_merge_patch(j("{\"a\":{\"x\":1}}"), p);
        json_object *w = j("{\"a\":{\"x\":1,\"b\":[1,{\"c\":null}]}}");
        assert_true(json_object_equal(res, w));
        assert_true(json_object_equal(p, before));
        /* the result does not share nodes with the patch */
        json_object *b = NULL;
        json_object_object_get_ex(json_object_object_get(res, "a"), "b", &b);
        assert_ptr_not_equal(b, json_object_object_get(json_object_object_get(p, "a"), "b"));
        json_object_put(res);
        json_object_put(p);
        json_object_put(before);
        json_object_put(w);
}

static json_object *pod(void)
{
        return j("{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{"
                 "\"initContainers\":[{\"name\":\"init\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}],"
                 "\"containers\":[{\"name\":\"main\",\"image\":\"m\",\"args\":[\"a\"]},{\"name\":\"other\"}],"
                 "\"tolerations\":[{\"key\":\"k1\"}]}}");
}

static void check_pod_merge(const char *patch, const char *want)
{
        json_object *p = pod(), *pt = j(patch), *w = j(want);
        gv_error_t *err = NULL;
        assert_int_equal(gv_workload_merge(p, pt, &err), 0);
        if (!json_object_equal(p, w))
                fail_msg("got %s\nwant %s", json_object_to_json_string(p), want);
        json_object_put(p);
        json_object_put(pt);
        json_object_put(w);
}

static void test_containers_merge_by_name(void **state)
{
        (void) state;
        /* a known name is merge-patched, other containers stay, order stays */
        check_pod_merge(
                "{\"spec\":{\"initContainers\":[{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}],"
                "\"containers\":[{\"name\":\"main\",\"image\":\"new\",\"args\":null}]}}",
                "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{"
                "\"initContainers\":[{\"name\":\"init\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":\"1\"},"
                "\"requests\":{\"cpu\":\"1m\"}}}],"
                "\"containers\":[{\"name\":\"main\",\"image\":\"new\"},{\"name\":\"other\"}],"
                "\"tolerations\":[{\"key\":\"k1\"}]}}");
}

static void test_containers_new_name_appended(void **state)
{
        (void) state;
        check_pod_merge("{\"spec\":{\"containers\":[{\"name\":\"extra\",\"image\":\"e\",\"x\":null}]}}",
                        "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{"
                        "\"initContainers\":[{\"name\":\"init\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":"
                        "\"1\"}}}],\"containers\":[{\"name\":\"main\",\"image\":\"m\",\"args\":[\"a\"]},"
                        "{\"name\":\"other\"},{\"name\":\"extra\",\"image\":\"e\"}],"
                        "\"tolerations\":[{\"key\":\"k1\"}]}}");
}

static void test_containers_patch_delete(void **state)
{
        (void) state;
        check_pod_merge("{\"spec\":{\"containers\":[{\"name\":\"other\",\"$patch\":\"delete\"},"
                        "{\"name\":\"absent\",\"$patch\":\"delete\"}],\"initContainers\":[{\"name\":\"init\","
                        "\"$patch\":\"delete\"}]}}",
                        "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"initContainers\":[],"
                        "\"containers\":[{\"name\":\"main\",\"image\":\"m\",\"args\":[\"a\"]}],"
                        "\"tolerations\":[{\"key\":\"k1\"}]}}");
}

static void test_other_lists_replace(void **state)
{
        (void) state;
        /* tolerations follow RFC 7386: the list is replaced; metadata merges */
        check_pod_merge("{\"metadata\":{\"labels\":{\"t\":\"1\"}},\"spec\":{\"tolerations\":[{\"key\":\"k2\"}],"
                        "\"nodeSelector\":{\"a\":\"b\"}}}",
                        "{\"metadata\":{\"labels\":{\"app\":\"x\",\"t\":\"1\"}},\"spec\":{"
                        "\"initContainers\":[{\"name\":\"init\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":"
                        "\"1\"}}}],\"containers\":[{\"name\":\"main\",\"image\":\"m\",\"args\":[\"a\"]},"
                        "{\"name\":\"other\"}],\"tolerations\":[{\"key\":\"k2\"}],\"nodeSelector\":{\"a\":\"b\"}}}");
}

static void test_nameless_entry_refused(void **state)
{
        (void) state;
        json_object *p = pod(), *pt = j("{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}");
        gv_error_t *err = NULL;
        assert_true(gv_workload_merge(p, pt, &err) < 0);
        assert_string_equal(err->msg, "spec.containers[0]: expected a mapping with a name");
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        gv_error_free(&err);
        json_object_put(p);
        json_object_put(pt);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rfc7386_appendix_a),
                cmocka_unit_test(test_rfc7386_section3_example),
                cmocka_unit_test(test_patch_is_not_changed),
                cmocka_unit_test(test_containers_merge_by_name),
                cmocka_unit_test(test_containers_new_name_appended),
                cmocka_unit_test(test_containers_patch_delete),
                cmocka_unit_test(test_other_lists_replace),
                cmocka_unit_test(test_nameless_entry_refused),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
