/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DRA slice census (src/components/dra.c): what a ResourceSliceList of
 * each served version publishes for one node and driver, pool generations and
 * completeness, MIG devices, the UUIDs missing, and broken lists.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "components/dra.h"

#define NODE "node-a"
#define DRV "gpu.nvidia.com"

/* A v1 device: type gpu with @uuid. */
#define GPU(name, uuid) \
        "{\"name\":\"" name "\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"" uuid "\"}}}"
/* A slice of @driver for @node in pool @pool at @gen of @count slices, with @devs (a JSON list body). */
#define SLICE(name, driver, node, pool, gen, count, devs)                                                      \
        "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"driver\":\"" driver "\",\"nodeName\":\"" node       \
        "\",\"pool\":{\"name\":\"" pool "\",\"generation\":" #gen ",\"resourceSliceCount\":" #count "},"      \
        "\"devices\":[" devs "]}}"
#define LIST(items) "{\"kind\":\"ResourceSliceList\",\"apiVersion\":\"resource.k8s.io/v1\",\"items\":[" items "]}"

static void census_ok(const char *text, gv_dra_census_t *c)
{
        gv_error_t *err = NULL;
        memset(c, 0, sizeof(*c));
        if (gv_dra_census_text(text, strlen(text), NODE, DRV, c, &err) < 0)
                fail_msg("census failed: %s", err->msg);
}

static void census_bad(const char *text, int want_r, const char *want)
{
        gv_dra_census_t c = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_dra_census_text(text, strlen(text), NODE, DRV, &c, &err), want_r);
        assert_non_null(err);
        if (!strstr(err->msg, want))
                fail_msg("error \"%s\" does not mention \"%s\"", err->msg, want);
        assert_null(c.names); /* untouched on failure */
        gv_error_free(&err);
}

static void test_v1_slice_of_this_node(void **state)
{
        (void) state;
        gv_dra_census_t c;
        census_ok(LIST(SLICE("node-a-gpu", DRV, NODE, NODE, 1, 1, GPU("gpu-0", "GPU-a") "," GPU("gpu-1", "GPU-b"))),
                  &c);
        assert_int_equal(c.slices, 1);
        assert_int_equal(c.devices, 2);
        assert_int_equal(c.gpus, 2);
        assert_int_equal(c.n_uuids, 2);
        assert_string_equal(c.uuids[0], "GPU-a");
        assert_string_equal(c.uuids[1], "GPU-b");
        assert_null(c.uuids[2]);
        assert_string_equal(c.names, "node-a-gpu");
        assert_null(c.incomplete_pool);
        gv_dra_census_clear(&c);
        assert_null(c.uuids);
}

static void test_v1beta1_basic_and_qualified_attributes(void **state)
{
        (void) state;
        gv_dra_census_t c;
        census_ok(LIST(SLICE("s", DRV, NODE, "p", 0, 1,
                             "{\"name\":\"gpu-0\",\"basic\":{\"attributes\":{\"type\":{\"string\":\"gpu\"},"
                             "\"uuid\":{\"string\":\"GPU-a\"}}}},"
                             "{\"name\":\"gpu-1\",\"attributes\":{\"gpu.nvidia.com/type\":{\"string\":\"gpu\"},"
                             "\"gpu.nvidia.com/uuid\":{\"string\":\"GPU-b\"}}}")),
                  &c);
        assert_int_equal(c.gpus, 2);
        assert_int_equal(c.n_uuids, 2);
        assert_string_equal(c.uuids[1], "GPU-b");
        gv_dra_census_clear(&c);
}

static void test_other_driver_node_and_unselected_slices_are_foreign(void **state)
{
        (void) state;
        gv_dra_census_t c;
        census_ok(LIST(SLICE("other-driver", "dra.net.example.com", NODE, NODE, 1, 1, GPU("gpu-0", "GPU-x")) ","
                       SLICE("other-node", DRV, "node-b", "node-b", 1, 1, GPU("gpu-0", "GPU-y")) ","
                       "{\"metadata\":{\"name\":\"all-nodes\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
                       "\"allNodes\":true,\"pool\":{\"name\":\"x\"}}}"),
                  &c);
        assert_int_equal(c.foreign, 3);
        assert_int_equal(c.slices, 0);
        assert_int_equal(c.n_uuids, 0);
        assert_string_equal(c.names, "");
        gv_dra_census_clear(&c);
}

static void test_newest_pool_generation_only_and_completeness(void **state)
{
        (void) state;
        gv_dra_census_t c;
        /* generation 1 lists both GPUs, generation 2 (being written: 1 of 2 slices) only one */
        census_ok(LIST(SLICE("old", DRV, NODE, "p", 1, 1, GPU("gpu-0", "GPU-a") "," GPU("gpu-1", "GPU-b")) ","
                       SLICE("new-0", DRV, NODE, "p", 2, 2, GPU("gpu-0", "GPU-a"))),
                  &c);
        assert_int_equal(c.stale, 1);
        assert_int_equal(c.slices, 1);
        assert_int_equal(c.n_uuids, 1);
        assert_string_equal(c.names, "new-0");
        assert_non_null(c.incomplete_pool);
        assert_string_equal(c.incomplete_pool, "pool p generation 2: 1 of 2 slices");
        gv_dra_census_clear(&c);
        /* complete: the second slice arrives; two pools are independent */
        census_ok(LIST(SLICE("new-0", DRV, NODE, "p", 2, 2, GPU("gpu-0", "GPU-a")) ","
                       SLICE("q-0", DRV, NODE, "q", 7, 1, GPU("gpu-2", "GPU-c")) ","
                       SLICE("new-1", DRV, NODE, "p", 2, 2, GPU("gpu-1", "GPU-b"))),
                  &c);
        assert_null(c.incomplete_pool);
        assert_int_equal(c.slices, 3);
        assert_int_equal(c.n_uuids, 3);
        assert_string_equal(c.names, "new-0,q-0,new-1");
        gv_dra_census_clear(&c);
}

static void test_mig_devices_publish_their_parent_once(void **state)
{
        (void) state;
        gv_dra_census_t c;
        census_ok(LIST(SLICE("s", DRV, NODE, NODE, 1, 1,
                             GPU("gpu-0", "GPU-a") ","
                             "{\"name\":\"gpu-1-mig-0\",\"attributes\":{\"type\":{\"string\":\"mig\"},"
                             "\"uuid\":{\"string\":\"MIG-1\"},\"parentUUID\":{\"string\":\"GPU-b\"}}},"
                             "{\"name\":\"gpu-1-mig-1\",\"attributes\":{\"type\":{\"string\":\"mig\"},"
                             "\"uuid\":{\"string\":\"MIG-2\"},\"parentUUID\":{\"string\":\"GPU-b\"}}},"
                             "{\"name\":\"untyped\",\"attributes\":{\"uuid\":{\"string\":\"GPU-c\"}}},"
                             "{\"name\":\"vfio-0\",\"attributes\":{\"type\":{\"string\":\"vfio\"},"
                             "\"uuid\":{\"string\":\"GPU-d\"}}},"
                             "{\"name\":\"dup\",\"attributes\":{\"uuid\":{\"string\":\"GPU-a\"}}}")),
                  &c);
        assert_int_equal(c.devices, 6);
        assert_int_equal(c.migs, 2);
        assert_int_equal(c.gpus, 3); /* gpu-0, untyped, dup */
        assert_int_equal(c.n_uuids, 3);
        assert_string_equal(c.uuids[0], "GPU-a");
        assert_string_equal(c.uuids[1], "GPU-b");
        assert_string_equal(c.uuids[2], "GPU-c");
        gv_dra_census_clear(&c);
}

static void test_missing_uuids(void **state)
{
        (void) state;
        gv_dra_census_t c;
        gv_error_t *err = NULL;
        census_ok(LIST(SLICE("s", DRV, NODE, NODE, 1, 1, GPU("gpu-0", "GPU-a") "," GPU("gpu-2", "GPU-c"))), &c);
        char *missing = NULL;
        assert_int_equal(gv_dra_missing(&c, "GPU-a,GPU-b,,GPU-c,GPU-d", &missing, &err), 2);
        assert_string_equal(missing, "GPU-b,GPU-d");
        free(missing);
        assert_int_equal(gv_dra_missing(&c, "GPU-c,GPU-a", &missing, &err), 0);
        assert_string_equal(missing, "");
        free(missing);
        assert_int_equal(gv_dra_missing(&c, NULL, &missing, &err), 0);
        free(missing);
        assert_null(err);
        gv_dra_census_clear(&c);
}

static void test_empty_lists_and_odd_names(void **state)
{
        (void) state;
        gv_dra_census_t c;
        census_ok("{\"kind\":\"ResourceSliceList\",\"items\":null}", &c);
        assert_int_equal(c.slices, 0);
        gv_dra_census_clear(&c);
        census_ok("{}", &c);
        gv_dra_census_clear(&c);
        /* a name that could not come from kube-apiserver is not copied into the marker value */
        census_ok(LIST(SLICE("Bad\\nName", DRV, NODE, NODE, 1, 1, "") "," SLICE("ok", DRV, NODE, "p2", 1, 1, "")),
                  &c);
        assert_string_equal(c.names, "?,ok");
        assert_int_equal(c.devices, 0);
        gv_dra_census_clear(&c);
}

static void test_broken_lists(void **state)
{
        (void) state;
        census_bad("", -EBADMSG, "not JSON");
        census_bad("{\"items\":[", -EBADMSG, "not JSON");
        census_bad("{} x", -EBADMSG, "not JSON");
        census_bad("[]", -EBADMSG, "not a JSON object");
        census_bad("{\"items\":{}}", -EBADMSG, "items is not a list");
        census_bad("{\"items\":[1]}", -EBADMSG, "item 0 is not an object");
        census_bad(LIST(SLICE("a", DRV, NODE, NODE, 1, 1, "") ",7"), -EBADMSG, "item 1 is not an object");
        census_bad("{\"items\":[{\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"node-a\",\"devices\":{}}}]}",
                   -EBADMSG, "item 0: spec.devices is not a list");
        census_bad(LIST(SLICE("a", DRV, NODE, NODE, 1, 1, "\"x\"")), -EBADMSG, "spec.devices[0] is not an object");
        /* a slice of another node may be as odd as it likes: it is not read */
        gv_dra_census_t c;
        census_ok("{\"items\":[{\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"x\",\"devices\":7}}]}", &c);
        assert_int_equal(c.foreign, 1);
        gv_dra_census_clear(&c);
        /* wrong types inside a counted device are just absent facts */
        census_ok(LIST(SLICE("a", DRV, NODE, NODE, 1, 1,
                             "{\"attributes\":{\"type\":{\"string\":7},\"uuid\":[]}},{\"attributes\":5}")),
                  &c);
        assert_int_equal(c.gpus, 2);
        assert_int_equal(c.n_uuids, 0);
        gv_dra_census_clear(&c);
        gv_error_t *err = NULL;
        assert_int_equal(gv_dra_census(NULL, NODE, DRV, &c, &err), -EBADMSG);
        gv_error_free(&err);
}

static void test_node_label(void **state)
{
        (void) state;
        const struct {
                const char *node;
                bool want;
        } cases[] = {
                { "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.dra-driver\":\"true\"}}}", true },
                { "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.dra-driver\":\"false\"}}}", false },
                { "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.dra-driver\":true}}}", false },
                { "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.deploy.dcgm-dra\":\"true\","
                  "\"nvidia.com/gpu.deploy.dra-validator\":\"true\"}}}", false },
                { "{\"metadata\":{}}", false },
                { "[]", false },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *o = json_tokener_parse(cases[i].node);
                assert_non_null(o);
                assert_int_equal(gv_dra_node_enabled(o), cases[i].want);
                json_object_put(o);
        }
        assert_false(gv_dra_node_enabled(NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_v1_slice_of_this_node),
                cmocka_unit_test(test_v1beta1_basic_and_qualified_attributes),
                cmocka_unit_test(test_other_driver_node_and_unselected_slices_are_foreign),
                cmocka_unit_test(test_newest_pool_generation_only_and_completeness),
                cmocka_unit_test(test_mig_devices_publish_their_parent_once),
                cmocka_unit_test(test_missing_uuids),
                cmocka_unit_test(test_empty_lists_and_odd_names),
                cmocka_unit_test(test_broken_lists),
                cmocka_unit_test(test_node_label),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
