/* SPDX-License-Identifier: Apache-2.0 */
/* The CDI spec reader: the real nvidia-ctk capture, our own specs, JSON, and broken input. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "components/cdi.h"

static void parse_ok(const char *text, gv_cdi_spec_t *spec)
{
        gv_error_t *err = NULL;
        int r = gv_cdi_spec_parse(text, strlen(text), spec, &err);
        if (r < 0)
                fail_msg("parse failed: %s", err->msg);
}

static void parse_bad(const char *text, const char *want)
{
        gv_cdi_spec_t spec = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_cdi_spec_parse(text, strlen(text), &spec, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        if (!strstr(err->msg, want))
                fail_msg("error \"%s\" does not mention \"%s\"", err->msg, want);
        assert_null(spec.kind); /* untouched on failure */
        gv_error_free(&err);
}

static void test_real_capture(void **state)
{
        (void) state;
        const char *shared = getenv("GV_SHARED_DIR");
        if (!shared)
                skip();
        char *pattern = NULL;
        assert_true(asprintf(&pattern, "%s/cases/nvidia-smi/cdi__*.yaml", shared) > 0);
        glob_t g;
        int gr = glob(pattern, 0, NULL, &g);
        free(pattern);
        if (gr != 0)
                skip();
        for (size_t i = 0; i < g.gl_pathc; i++) {
                char *text = NULL;
                size_t len = 0;
                gv_error_t *err = NULL;
                assert_int_equal(gv_read_file_at(AT_FDCWD, g.gl_pathv[i], false, GV_CDI_SPEC_MAX_BYTES, &text, &len,
                                                 &err),
                                 0);
                gv_cdi_spec_t spec = { 0 };
                assert_int_equal(gv_cdi_spec_parse(text, len, &spec, &err), 0);
                assert_string_equal(spec.kind, "nvidia.com/gpu");
                assert_string_equal(spec.cdi_version, "0.5.0");
                assert_int_equal(spec.n_devices, 3);
                assert_non_null(gv_cdi_spec_device(&spec, "0"));
                assert_non_null(gv_cdi_spec_device(&spec, "GPU-520e01f2-cf30-6396-abef-e8e9a5233b0e"));
                const gv_cdi_device_t *all = gv_cdi_spec_device(&spec, "all");
                assert_non_null(all);
                assert_string_equal(all->nodes[0], "/dev/nvidia0");
                assert_string_equal(all->nodes[1], "/dev/dri/card1");
                assert_string_equal(all->nodes[2], "/dev/dri/renderD128");
                assert_null(all->nodes[3]);
                assert_null(gv_cdi_spec_device(&spec, "1"));
                const char *top[] = { "/dev/nvidia-modeset", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                      "/dev/nvidiactl", NULL };
                for (size_t k = 0; top[k]; k++)
                        assert_string_equal(spec.nodes[k], top[k]);
                assert_null(spec.nodes[4]);
                gv_cdi_spec_clear(&spec);
                free(text);
        }
        globfree(&g);
}

static void test_host_path_wins(void **state)
{
        (void) state;
        gv_cdi_spec_t spec = { 0 };
        parse_ok("cdiVersion: 0.6.0\nkind: nvidia.com/gpu\n"
                 "containerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n    hostPath: /run/nvidia/driver/dev/nvidiactl\n"
                 "devices:\n- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - {path: /dev/nvidia0}\n",
                 &spec);
        assert_string_equal(spec.nodes[0], "/run/nvidia/driver/dev/nvidiactl");
        assert_string_equal(spec.devices[0].nodes[0], "/dev/nvidia0");
        gv_cdi_spec_clear(&spec);
        gv_cdi_spec_clear(&spec); /* twice is fine */
}

static void test_json_spec(void **state)
{
        (void) state;
        gv_cdi_spec_t spec = { 0 };
        parse_ok("{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"all\","
                 "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\"}]}},{\"name\":\"0\"}],"
                 "\"containerEdits\":{}}",
                 &spec);
        assert_int_equal(spec.n_devices, 2);
        assert_string_equal(spec.devices[0].name, "all");
        assert_null(spec.devices[1].nodes[0]);
        assert_null(spec.nodes[0]);
        gv_cdi_spec_clear(&spec);
}

static void test_other_kind_and_no_devices(void **state)
{
        (void) state;
        gv_cdi_spec_t spec = { 0 };
        parse_ok("kind: vendor.com/device\ndevices: []\n", &spec);
        assert_string_equal(spec.kind, "vendor.com/device");
        assert_int_equal(spec.n_devices, 0);
        assert_null(spec.cdi_version);
        gv_cdi_spec_clear(&spec);
}

static void test_broken_specs(void **state)
{
        (void) state;
        parse_bad("", "empty document");
        parse_bad("- a\n- b\n", "must be a mapping");
        parse_bad("kind: nvidia.com/gpu\n", "no \"devices\"");
        parse_bad("devices: []\n", "no \"kind\"");
        parse_bad("kind: \"\"\ndevices: []\n", "kind is empty");
        parse_bad("kind: [a]\ndevices: []\n", "kind must be a string");
        parse_bad("kind: nvidia.com/gpu\ndevices: {a: b}\n", "devices must be a list");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- containerEdits: {}\n", "device without a name");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- 7\n", "devices item must be a mapping");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- name: '0'\n  containerEdits:\n    deviceNodes:\n    - path: dev/x\n",
                  "not absolute");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- name: '0'\n  containerEdits:\n    deviceNodes:\n"
                  "    - {path: /dev/x, hostPath: rel}\n",
                  "hostPath \"rel\" is not absolute");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- name: '0'\n  containerEdits:\n    deviceNodes: 3\n",
                  "deviceNodes must be a list");
        parse_bad("kind: nvidia.com/gpu\ndevices:\n- name: '0'\n  containerEdits: [1]\n",
                  "containerEdits must be a mapping");
        parse_bad("kind: nvidia.com/gpu\ndevices: [\n", "YAML error at line");
        parse_bad("kind: *nope\ndevices: []\n", "YAML error");
}

static void test_nul_and_size(void **state)
{
        (void) state;
        const char text[] = "kind: \"nvidia.com/\\0gpu\"\ndevices: []\n";
        gv_cdi_spec_t spec = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_cdi_spec_parse(text, sizeof(text) - 1, &spec, &err), -EINVAL);
        assert_non_null(strstr(err->msg, "NUL"));
        gv_error_free(&err);
        assert_int_equal(gv_cdi_spec_parse(text, GV_CDI_SPEC_MAX_BYTES + 1u, &spec, &err), -EFBIG);
        gv_error_free(&err);
}

static void test_aliases_are_fine(void **state)
{
        (void) state;
        gv_cdi_spec_t spec = { 0 };
        parse_ok("kind: nvidia.com/gpu\nx: &edits\n  deviceNodes:\n  - path: /dev/nvidia0\n"
                 "devices:\n- name: '0'\n  containerEdits: *edits\n- name: all\n  containerEdits: *edits\n",
                 &spec);
        assert_string_equal(spec.devices[1].nodes[0], "/dev/nvidia0");
        gv_cdi_spec_clear(&spec);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_real_capture),
                cmocka_unit_test(test_host_path_wins),
                cmocka_unit_test(test_json_spec),
                cmocka_unit_test(test_other_kind_and_no_devices),
                cmocka_unit_test(test_broken_specs),
                cmocka_unit_test(test_nul_and_size),
                cmocka_unit_test(test_aliases_are_fine),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
