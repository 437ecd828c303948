/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU profile model (mock/nvml/profile.h): built-in profiles, editing,
 * finalizing, writing, and errors that name file, line and field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "mock/nvml/profile.h"

static void test_every_builtin_loads_and_finalizes(void **state)
{
        const char *const *names = gv_mock_profile_builtin_names();
        size_t n = 0;
        for (; names[n]; n++) {
                gv_mock_profile_t *p = NULL;
                _cleanup_error_ gv_error_t *err = NULL;
                int r = gv_mock_profile_load_builtin(names[n], &p, &err);
                if (r < 0)
                        fail_msg("%s: %s", names[n], err->msg);
                assert_int_equal(gv_mock_profile_set_node_name(p, "node-1", &err), 0);
                assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
                assert_true(p->device_count >= 1);
                assert_non_null(p->driver_version);
                assert_true(p->cuda_driver_version >= 12000);
                for (unsigned i = 0; i < p->device_count; i++) {
                        const gv_mock_device_t *d = gv_mock_profile_device(p, i);
                        assert_non_null(d);
                        assert_int_equal(d->index, i);
                        assert_int_equal(strlen(d->uuid), 40);
                        assert_int_equal(strlen(d->pci_bus_id), 16);
                        assert_true(d->memory_total_mib > 0);
                        assert_true(d->power_limit_mw >= 70000);
                }
                assert_null(gv_mock_profile_device(p, p->device_count));
                assert_non_null(gv_mock_profile_builtin_yaml(names[n]));
                gv_mock_profile_free(&p);
                assert_null(p);
        }
        assert_int_equal(n, 9);   /* a100 x2, b200, gb200, gb300, h100, h200, l40s, t4 */
}

static void test_builtin_aliases_and_unknown(void **state)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_builtin("a100", &p, &err), 0);
        assert_string_equal(p->devices[0].name, "NVIDIA A100-SXM4-40GB");
        gv_mock_profile_free(&p);
        assert_int_equal(gv_mock_profile_load_builtin("h100", &p, &err), 0);
        assert_string_equal(p->devices[0].name, "NVIDIA H100 80GB HBM3");
        gv_mock_profile_free(&p);
        assert_ptr_equal(gv_mock_profile_builtin_yaml("a100"), gv_mock_profile_builtin_yaml("a100-sxm4-40gb"));
        assert_null(gv_mock_profile_builtin_yaml("v100"));
        assert_int_equal(gv_mock_profile_load_builtin("v100", &p, &err), -ENOENT);
        assert_null(p);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "v100"));
        assert_non_null(strstr(err->msg, "h200"));
}

static void test_gpu_count_and_node_name(void **state)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_builtin("h200", &p, &err), 0);
        assert_int_equal(gv_mock_profile_set_gpu_count(p, 0, &err), -ERANGE);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_int_equal(gv_mock_profile_set_gpu_count(p, 65, &err), -ERANGE);
        assert_int_equal(gv_mock_profile_set_gpu_count(p, 64, &err), 0);
        assert_int_equal(gv_mock_profile_set_node_name(p, "node-a", &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_int_equal(p->device_count, 64);
        assert_string_equal(p->devices[63].name, "NVIDIA H200");
        assert_string_equal(p->devices[8].pci_bus_id, "00000001:07:00.0");
        char *u0 = strdup(p->devices[0].uuid);
        assert_int_equal(gv_mock_profile_set_gpu_count(p, 1, &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_int_equal(p->device_count, 1);
        assert_string_equal(p->devices[0].uuid, u0);
        gv_mock_profile_free(&p);

        /* deterministic: another load with the same node name gives the same UUID */
        assert_int_equal(gv_mock_profile_load_builtin("h200", &p, &err), 0);
        assert_int_equal(gv_mock_profile_set_node_name(p, "node-a", &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_string_equal(p->devices[0].uuid, u0);
        gv_mock_profile_free(&p);
        assert_int_equal(gv_mock_profile_load_builtin("h200", &p, &err), 0);
        assert_int_equal(gv_mock_profile_set_node_name(p, "node-b", &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_string_not_equal(p->devices[0].uuid, u0);
        gv_mock_profile_free(&p);
        free(u0);
}

static void test_node_name_control_characters(void **state)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_builtin("h200", &p, &err), 0);
        assert_int_equal(gv_mock_profile_set_node_name(p, "node-a", &err), 0);
        assert_int_equal(gv_mock_profile_set_node_name(p, "node\nGPU 0: fake", &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_string_equal(err->msg, "node name: contains a control character (0x0a at offset 4)");
        gv_error_free(&err);
        assert_int_equal(gv_mock_profile_set_node_name(p, "tab\there", &err), -EINVAL);
        gv_error_free(&err);
        /* the name before stays */
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_string_equal(p->node_name, "node-a");
        gv_mock_profile_free(&p);
}

/* One serial for every GPU (under gpu:) becomes one serial per GPU; devices[] still wins. */
static void test_serials_distinct_per_gpu(void **state)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        static const char text[] = "driver: {version: \"1\", cuda_version: 12040}\n"
                                   "gpu_count: 3\n"
                                   "gpu: {name: x, memory_mib: 10, serial: \"1650000000000\"}\n"
                                   "devices:\n  - {index: 2, serial: \"42\"}\n";
        assert_int_equal(gv_mock_profile_load_memory("s.yaml", text, strlen(text), &p, &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_string_equal(p->devices[0].serial, "1650000000000");
        assert_string_equal(p->devices[1].serial, "1650000000001");
        assert_string_equal(p->devices[2].serial, "42");
        /* GPUs added later get theirs the same way */
        assert_int_equal(gv_mock_profile_set_gpu_count(p, 5, &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_string_equal(p->devices[4].serial, "1650000000004");
        gv_mock_profile_free(&p);

        /* leading zeros keep their width; a serial that is no number gets -INDEX */
        static const char text2[] = "driver: {version: \"1\", cuda_version: 12040}\n"
                                    "gpu_count: 2\ngpu: {name: x, memory_mib: 10, serial: \"0009\"}\n";
        assert_int_equal(gv_mock_profile_load_memory("s.yaml", text2, strlen(text2), &p, &err), 0);
        assert_string_equal(p->devices[1].serial, "0010");
        gv_mock_profile_free(&p);
        static const char text3[] = "driver: {version: \"1\", cuda_version: 12040}\n"
                                    "gpu_count: 2\ngpu: {name: x, memory_mib: 10, serial: \"SN-A\"}\n";
        assert_int_equal(gv_mock_profile_load_memory("s.yaml", text3, strlen(text3), &p, &err), 0);
        assert_string_equal(p->devices[0].serial, "SN-A");
        assert_string_equal(p->devices[1].serial, "SN-A-1");
        gv_mock_profile_free(&p);

        /* every built-in profile: no two GPUs share a serial, and the same load gives the same serials */
        for (const char *const *n = gv_mock_profile_builtin_names(); *n; n++) {
                gv_mock_profile_t *q = NULL;
                assert_int_equal(gv_mock_profile_load_builtin(*n, &p, &err), 0);
                assert_int_equal(gv_mock_profile_load_builtin(*n, &q, &err), 0);
                for (unsigned i = 0; i < p->device_count; i++) {
                        if (!p->devices[i].serial)
                                continue;
                        assert_string_equal(p->devices[i].serial, q->devices[i].serial);
                        for (unsigned j = 0; j < i; j++)
                                if (p->devices[j].serial && strcmp(p->devices[j].serial, p->devices[i].serial) == 0)
                                        fail_msg("%s: GPUs %u and %u share serial %s", *n, j, i, p->devices[i].serial);
                }
                gv_mock_profile_free(&p);
                gv_mock_profile_free(&q);
        }
}

static void test_to_yaml_round_trip(void **state)
{
        const char *src = getenv("GV_SOURCE_DIR");
        char *fixture = NULL;
        assert_true(asprintf(&fixture, "%s/tests/unit/mock-nvml/profiles/h200-ci.yaml", src ? src : ".") > 0);
        const char *inputs[] = { "builtin", fixture };
        for (size_t k = 0; k < 2; k++) {
                gv_mock_profile_t *p = NULL, *q = NULL;
                _cleanup_error_ gv_error_t *err = NULL;
                _cleanup_free_ char *y = NULL, *y2 = NULL;
                if (k == 0)
                        assert_int_equal(gv_mock_profile_load_builtin("a100-sxm4-80gb", &p, &err), 0);
                else if (gv_mock_profile_load_file(inputs[k], &p, &err) < 0)
                        fail_msg("%s", err->msg);
                assert_int_equal(gv_mock_profile_to_yaml(p, &y, &err), -EINVAL); /* not finalized */
                assert_int_equal(gv_mock_profile_set_gpu_count(p, 3, &err), 0);
                assert_int_equal(gv_mock_profile_set_node_name(p, "round-trip", &err), 0);
                assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
                assert_int_equal(gv_mock_profile_to_yaml(p, &y, &err), 0);
                if (gv_mock_profile_load_memory("written.yaml", y, strlen(y), &q, &err) < 0)
                        fail_msg("%s\n%s", err->msg, y);
                assert_int_equal(gv_mock_profile_finalize(q, &err), 0);
                assert_int_equal(q->device_count, 3);
                assert_string_equal(q->node_name, "round-trip");
                for (unsigned i = 0; i < 3; i++) {
                        assert_string_equal(q->devices[i].uuid, p->devices[i].uuid);
                        assert_string_equal(q->devices[i].pci_bus_id, p->devices[i].pci_bus_id);
                        assert_int_equal(q->devices[i].n_mig_devices, p->devices[i].n_mig_devices);
                        for (size_t m = 0; m < q->devices[i].n_mig_devices; m++)
                                assert_string_equal(q->devices[i].mig_devices[m].uuid, p->devices[i].mig_devices[m].uuid);
                        assert_int_equal(q->devices[i].unsupported, p->devices[i].unsupported);
                        assert_int_equal(q->devices[i].power_limit_mw, p->devices[i].power_limit_mw);
                }
                assert_int_equal(gv_mock_profile_to_yaml(q, &y2, &err), 0);
                /* growing the written profile uses its template */
                assert_int_equal(gv_mock_profile_set_gpu_count(q, 5, &err), 0);
                assert_int_equal(gv_mock_profile_finalize(q, &err), 0);
                gv_mock_profile_free(&p);
                gv_mock_profile_free(&q);
        }
        free(fixture);
}

/* A minimal valid profile with one line replaced. */
static const char *const good_lines[] = {
        "driver:\n",                          /* 1 */
        "  version: \"550.163.01\"\n",        /* 2 */
        "  cuda_version: \"12.4\"\n",         /* 3 */
        "gpu_count: 4\n",                     /* 4 */
        "gpu:\n",                             /* 5 */
        "  name: \"NVIDIA A100-SXM4-40GB\"\n", /* 6 */
        "  memory_mib: 40960\n",              /* 7 */
        "devices:\n",                         /* 8 */
        "  - index: 3\n",                     /* 9 */
        "    memory_mib: 40960\n",            /* 10 */
};

static char *profile_with(size_t line, const char *replacement)
{
        char *s = NULL;
        size_t sz = 0;
        FILE *f = open_memstream(&s, &sz);
        for (size_t i = 0; i < sizeof(good_lines) / sizeof(good_lines[0]); i++)
                fputs(i + 1 == line ? replacement : good_lines[i], f);
        fclose(f);
        return s;
}

static void expect_error(const char *text, const char *needle)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        int r = gv_mock_profile_load_memory("profile.yaml", text, strlen(text), &p, &err);
        if (r >= 0)
                r = gv_mock_profile_finalize(p, &err);
        if (r >= 0)
                fail_msg("no error for:\n%s", text);
        gv_mock_profile_free(&p);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        if (!strstr(err->msg, needle))
                fail_msg("error \"%s\" lacks \"%s\"", err->msg, needle);
}

static void test_bad_profiles_name_file_line_field(void **state)
{
        _cleanup_free_ char *good = profile_with(0, NULL);
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_memory("profile.yaml", good, strlen(good), &p, &err), 0);
        gv_mock_profile_free(&p);

        static const struct {
                size_t line;
                const char *replacement, *needle;
        } t[] = {
                { 10, "    memory_mib: lots\n", "profile.yaml:10: devices[0].memory_mib: expected an integer" },
                { 7, "  memory_mib: [1]\n", "profile.yaml:7: gpu.memory_mib: expected an integer" },
                { 7, "  memory_mb: 40960\n", "profile.yaml:7: gpu.memory_mb: unknown field" },
                { 6, "  nam: \"x\"\n", "profile.yaml:6: gpu.nam: unknown field" },
                { 4, "gpu_count: 0\n", "profile.yaml:4: gpu_count: 0: expected 1 to 64" },
                { 4, "gpu_count: 65\n", "profile.yaml:4: gpu_count: 65: expected 1 to 64" },
                { 4, "gpu_count: -1\n", "profile.yaml:4: gpu_count: -1: expected 1 to 64" },
                { 4, "gpu_count: 99999999999999999999\n",
                  "profile.yaml:4: gpu_count: 99999999999999999999: expected 1 to 64" },
                { 4, "gpu_count: 18446744073709551620\n", "gpu_count: 18446744073709551620: expected 1 to 64" },
                { 4, "gpu_count: \"4\"\n", "profile.yaml:4: gpu_count: 4: expected 1 to 64" },
                { 4, "gpu_count: [4]\n", "profile.yaml:4: gpu_count: expected 1 to 64" },
                { 4, "gpu_count: 1.5\n", "profile.yaml:4: gpu_count: 1.5: expected 1 to 64" },
                /* control characters would split log lines and `nvidia-smi -L` lines */
                { 6, "  name: \"NVIDIA A100\\nGPU 9: fake\"\n",
                  "profile.yaml:6: gpu.name: contains a control character (0x0a at offset 11)" },
                { 6, "  name: \"NVIDIA\\tA100\"\n", "profile.yaml:6: gpu.name: contains a control character (0x09" },
                { 10, "    serial: \"1650000000000\\r\"\n",
                  "profile.yaml:10: devices[0].serial: contains a control character (0x0d" },
                { 10, "    uuid: \"GPU-11111111-2222-3333-4444-555555555555\\x1b\"\n",
                  "profile.yaml:10: devices[0].uuid: contains a control character (0x1b" },
                { 10, "    name: \"A100\\x7f\"\n",
                  "profile.yaml:10: devices[0].name: contains a control character (0x7f" },
                { 4, "node_name: \"node\\nb\"\n", "profile.yaml:4: node_name: contains a control character (0x0a" },
                { 4, "gpu_count: 2\n", "profile.yaml:4: gpu_count: 2, but devices lists GPU 3" },
                { 2, "  versio: \"550\"\n", "profile.yaml:2: driver.versio: unknown field" },
                { 3, "  cuda_version: twelve\n", "profile.yaml:3: driver.cuda_version: expected a CUDA version" },
                { 9, "  - index: 64\n", "profile.yaml:9: devices[0].index: 64 is out of range" },
                { 10, "    uuid: GPU-1\n", "profile.yaml:10: devices[0].uuid: expected GPU-" },
                { 10, "    pci_bus_id: 07:00\n", "profile.yaml:10: devices[0].pci_bus_id: expected a PCI bus id" },
                { 10, "    pstate: P99\n", "profile.yaml:10: devices[0].pstate: expected P0..P15" },
                { 10, "    power: {limit_w: -3}\n", "profile.yaml:10: devices[0].power.limit_w: -3 is out of range" },
                { 10, "    mig: {mode: maybe}\n", "profile.yaml:10: devices[0].mig.mode: expected a boolean" },
                { 10, "    mig: {mode: enabled, devices: [1g.5gb]}\n",
                  "devices[3].mig.mode: MIG enabled on a GPU without MIG profiles" },
                { 10, "    unsupported: [fans]\n", "profile.yaml:10: devices[0].unsupported: unknown field name \"fans\"" },
                { 10, "    memory_mib: [unclosed\n", "profile.yaml:" },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                _cleanup_free_ char *s = profile_with(t[i].line, t[i].replacement);
                expect_error(s, t[i].needle);
        }
        expect_error("driver: {version: \"1\", cuda_version: 12040}\n", "profile.yaml:1: gpu: required field missing");
        expect_error("driver: {cuda_version: 12040}\ngpu: {name: x, memory_mib: 1}\n",
                     "profile.yaml:1: driver.version: required field missing");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu:\n  name: x\n",
                     "profile.yaml:3: gpu.memory_mib: required field missing");
        expect_error("gpu: {name: x, memory_mib: 1}\n", "profile.yaml:1: driver: required field missing");
        expect_error("driver: {version: \"1\", cuda_version: 12040\n", "profile.yaml:2: (yaml):");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: [1, 2]\n",
                     "profile.yaml:2: gpu: expected a mapping");
        expect_error("- 1\n- 2\n", "profile.yaml:1: (root): expected a mapping");
        expect_error("", "profile.yaml:1: (root): empty document");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "devices:\n  - {index: 0, uuid: \"GPU-11111111-2222-3333-4444-555555555555\"}\n"
                     "  - {index: 1, uuid: \"GPU-11111111-2222-3333-4444-555555555555\"}\n",
                     "devices[1].uuid: GPU-11111111-2222-3333-4444-555555555555 is also GPU 0's");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\n"
                     "gpu: {name: x, memory_mib: 10, mig: {mode: enabled, profiles: [{name: 4g.20gb, slices: 4}, "
                     "{name: 7g.40gb, slices: 7}], devices: [4g.20gb, 4g.20gb]}}\n",
                     "the layout needs 8 slices, the GPU has 7");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\n"
                     "gpu: {name: x, memory_mib: 10, mig: {mode: enabled, profiles: [{name: 1g.5gb}], devices: [2g.10gb]}}\n",
                     "unknown GPU instance profile \"2g.10gb\"");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "faults: {init_error: sometimes}\n",
                     "profile.yaml:3: faults.init_error: expected none, driver-not-loaded");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "faults:\n  xids:\n    - {gpu: 1}\n",
                     "profile.yaml:5: faults.xids[0].xid: required field missing");
}

/*
 * GPU and compute instance ids are bounded so that the
 * 64-bit id sets of finalize never shift by 64 or more (undefined behaviour),
 * and never reach NVML's 0xFFFFFFFF "not on a MIG device".
 */
static void test_instance_ids_bounded(void **state)
{
        (void) state;
        static const char *const head = "driver: {version: \"1\", cuda_version: 12040}\n"
                                        "gpu: {name: x, memory_mib: 10, mig: {mode: enabled, profiles: [{name: 1g.5gb, "
                                        "slices: 1, instances: 7}, {name: 7g.40gb, slices: 7}], devices: [";
        static const struct {
                const char *dev, *needle;
        } t[] = {
                { "{profile: 1g.5gb, gi_id: 64}", "profile.yaml:2: gpu.mig.devices[0].gi_id: 64 is out of range (at most 63)" },
                { "{profile: 1g.5gb, gpu_instance_id: 4294967295}", "gpu_instance_id: 4294967295 is out of range (at most 63)" },
                { "{profile: 1g.5gb, ci_id: 64}", "profile.yaml:2: gpu.mig.devices[0].ci_id: 64 is out of range (at most 63)" },
                { "{profile: 1g.5gb, compute_instance_id: 100}", "compute_instance_id: 100 is out of range (at most 63)" },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                _cleanup_free_ char *s = NULL;
                assert_true(asprintf(&s, "%s%s]}}\n", head, t[i].dev) > 0);
                expect_error(s, t[i].needle);
        }
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "devices:\n  - processes:\n      - {pid: 1, gi_id: 64, ci_id: 0}\n",
                     "profile.yaml:5: devices[0].processes[0].gi_id: 64 is out of range (at most 63)");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "devices:\n  - processes:\n      - {pid: 1, gi_id: 1, ci_id: 64}\n",
                     "devices[0].processes[0].ci_id: 64 is out of range (at most 63)");

        /* the largest ids are accepted, finalize and read back */
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *ok = NULL;
        assert_true(asprintf(&ok, "%s{profile: 1g.5gb, gi_id: 63, ci_id: 63}, {profile: 1g.5gb, gi_id: 63}, 1g.5gb]}}\n",
                             head) > 0);
        assert_int_equal(gv_mock_profile_load_memory("profile.yaml", ok, strlen(ok), &p, &err), 0);
        assert_int_equal(gv_mock_profile_finalize(p, &err), 0);
        assert_int_equal(p->devices[0].mig_devices[0].gi_id, 63);
        assert_int_equal(p->devices[0].mig_devices[0].ci_id, 63);
        /* the next compute instance of GI 63 would be 64: it takes the lowest free id instead */
        assert_int_equal(p->devices[0].mig_devices[1].gi_id, 63);
        assert_int_equal(p->devices[0].mig_devices[1].ci_id, 0);
        assert_true(p->devices[0].mig_devices[2].gi_id < 63);
        _cleanup_free_ char *y = NULL;
        assert_int_equal(gv_mock_profile_to_yaml(p, &y, &err), 0);
        gv_mock_profile_free(&p);
        assert_int_equal(gv_mock_profile_load_memory("written.yaml", y, strlen(y), &p, &err), 0);
        gv_mock_profile_free(&p);
}

/* A key given twice is refused with file:line, in YAML and in JSON. */
static void test_duplicate_keys_refused(void **state)
{
        (void) state;
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu_count: 2\ngpu: {name: x, memory_mib: 10}\n"
                     "gpu_count: 3\n",
                     "profile.yaml:4: gpu_count: duplicate key (first on line 2)");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu:\n  name: x\n  memory_mib: 10\n  name: y\n",
                     "profile.yaml:5: name: duplicate key (first on line 3)");
        expect_error("driver: {version: \"1\", cuda_version: 12040}\ngpu: {name: x, memory_mib: 10}\n"
                     "devices:\n  - {index: 0, temperature_c: 30, temperature_c: 40}\n",
                     "profile.yaml:4: temperature_c: duplicate key (first on line 4)");
        expect_error("{\n  \"driver\": {\"version\": \"1\", \"cuda_version\": 12040},\n"
                     "  \"gpu\": {\"name\": \"x\", \"memory_mib\": 10},\n"
                     "  \"driver\": {\"version\": \"2\", \"cuda_version\": 12040}\n}\n",
                     "profile.yaml:4: driver: duplicate key (first on line 2)");
        /* the nvml-mock schema too */
        expect_error("system: {driver_version: \"1\", cuda_version: \"12.4\"}\n"
                     "device_defaults: {name: x, memory: {total_bytes: 1073741824}, name: y}\n",
                     "profile.yaml:2: name: duplicate key (first on line 2)");
}

static void test_missing_file_and_file_errors(void **state)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_file("/nonexistent/x.yaml", &p, &err), -ENOENT);
        assert_null(p);
        gv_error_free(&err);
        char path[] = "/tmp/mock-profile-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char *text = "driver:\n  version: \"550.163.01\"\n  cuda_version: 12040\ngpu:\n  name: x\n  memory_mib: ten\n";
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        assert_int_equal(gv_mock_profile_load_file(path, &p, &err), -EINVAL);
        char *want = NULL;
        assert_true(asprintf(&want, "%s:6: gpu.memory_mib: expected an integer", path) > 0);
        assert_string_equal(err->msg, want);
        free(want);
        unlink(path);
}

static void test_parse_return_name(void **state)
{
        unsigned v = 77;
        assert_int_equal(gv_mock_parse_return_name("driver-not-loaded", &v), 0);
        assert_int_equal(v, 9);
        assert_int_equal(gv_mock_parse_return_name("NVML_ERROR_NO_PERMISSION", &v), 0);
        assert_int_equal(v, 4);
        assert_int_equal(gv_mock_parse_return_name("lib_rm_version_mismatch", &v), 0);
        assert_int_equal(v, 18);
        assert_int_equal(gv_mock_parse_return_name("999", &v), 0);
        assert_int_equal(v, 999);
        assert_int_equal(gv_mock_parse_return_name("31", &v), -EINVAL);
        assert_int_equal(gv_mock_parse_return_name("", &v), -EINVAL);
        assert_int_equal(v, 999);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_builtin_loads_and_finalizes),
                cmocka_unit_test(test_builtin_aliases_and_unknown),
                cmocka_unit_test(test_gpu_count_and_node_name),
                cmocka_unit_test(test_node_name_control_characters),
                cmocka_unit_test(test_serials_distinct_per_gpu),
                cmocka_unit_test(test_to_yaml_round_trip),
                cmocka_unit_test(test_bad_profiles_name_file_line_field),
                cmocka_unit_test(test_instance_ids_bounded),
                cmocka_unit_test(test_duplicate_keys_refused),
                cmocka_unit_test(test_missing_file_and_file_errors),
                cmocka_unit_test(test_parse_return_name),
        };
        return cmocka_run_group_tests_name("mock-nvml-profile", tests, NULL, NULL);
}
