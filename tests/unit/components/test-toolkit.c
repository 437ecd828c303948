/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The toolkit component against a fake host root: CDI specs (the real
 * nvidia-ctk capture and our own), runtime configurations, and the
 * in-container nvidia-smi mode; driver-ready comes from a real store.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "components/component.h"
#include "components-test.h"

#define CAPTURE_UUID "GPU-520e01f2-cf30-6396-abef-e8e9a5233b0e"

typedef struct world {
        char *dir;
        char *host;
        gv_store_t *store;
        gv_config_t cfg;
        gv_result_t res;
        gv_error_t *err;
        char *old_path;
} world_t;

static void publish_driver(world_t *w, const char *count, const char *uuids)
{
        gv_kvlist_t facts = { 0 };
        assert_int_equal(gv_kvlist_set(&facts, "IS_HOST_DRIVER", "true", NULL), 0);
        assert_int_equal(gv_kvlist_set(&facts, "NVIDIA_DRIVER_ROOT", "/", NULL), 0);
        assert_int_equal(gv_kvlist_set(&facts, "GPU_COUNT", count, NULL), 0);
        if (uuids)
                assert_int_equal(gv_kvlist_set(&facts, "GPU_UUIDS", uuids, NULL), 0);
        char gen[GV_GENERATION_HEX_LEN + 1];
        gv_error_t *e = NULL;
        int r = gv_store_publish(w->store, GV_MARKER_DRIVER, &facts, true, NULL, gen, &e);
        if (r < 0)
                fail_msg("publish: %s", e->msg);
        gv_kvlist_clear(&facts);
}

static int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        w->dir = th_tmpdir();
        w->host = th_path(w->dir, "host");
        th_mkdirs(w->dir, "host");
        th_mkdirs(w->dir, "bin");
        w->store = th_store_open(w->dir);
        const char *p = getenv("PATH");
        w->old_path = strdup(p ? p : "/usr/bin:/bin");
        char *bin = th_path(w->dir, "bin");
        setenv("PATH", bin, 1); /* no nvidia-smi unless a test puts one there */
        free(bin);
        unsetenv("FAKE_SMI_EXIT");
        w->cfg = (gv_config_t) {
                .output_dir = gv_store_dir(w->store),
                .driver.host_root = w->host,
        };
        *state = w;
        return 0;
}

static int teardown(void **state)
{
        world_t *w = *state;
        setenv("PATH", w->old_path, 1);
        free(w->old_path);
        unsetenv("FAKE_SMI_EXIT");
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        gv_store_close(&w->store);
        th_rm_rf(w->dir);
        free(w->dir);
        free(w->host);
        free(w);
        return 0;
}

static int validate(world_t *w)
{
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        return gv_component_find("toolkit")->validate(&w->cfg, w->store, &w->res, &w->err);
}

static void expect_ok(world_t *w, const char *mode)
{
        if (validate(w) < 0)
                fail_msg("toolkit failed: %s: %s", gv_reason_name(w->err->reason), w->err->msg);
        assert_string_equal(gv_kvlist_get(&w->res.facts, "TOOLKIT_MODE"), mode);
}

static void expect_fail(world_t *w, gv_reason_t reason, const char *mention)
{
        if (validate(w) >= 0)
                fail_msg("toolkit unexpectedly ready");
        if (w->err->reason != reason)
                fail_msg("expected %s, got %s: %s", gv_reason_name(reason), gv_reason_name(w->err->reason),
                         w->err->msg);
        if (mention && !strstr(w->err->msg, mention))
                fail_msg("\"%s\" does not mention \"%s\"", w->err->msg, mention);
}

static void capture_nodes(world_t *w)
{
        const char *nodes[] = { "dev/nvidia-modeset", "dev/nvidia-uvm", "dev/nvidia-uvm-tools", "dev/nvidiactl",
                                "dev/nvidia0", "dev/dri/card1", "dev/dri/renderD128", NULL };
        for (const char **n = nodes; *n; n++)
                th_write(w->host, *n, "", 0666);
}

static bool install_capture(world_t *w, const char *dir)
{
        const char *shared = getenv("GV_SHARED_DIR");
        if (!shared)
                return false;
        char *src = NULL;
        assert_true(asprintf(&src, "%s/cases/nvidia-smi/cdi__nvidia-ctk-cdi-generate_1gpu_575.64.03_ctk-1.17.8.yaml",
                             shared) > 0);
        bool ok = access(src, R_OK) == 0;
        if (ok) {
                char *rel = NULL;
                assert_true(asprintf(&rel, "%s/nvidia.yaml", dir) > 0);
                th_copy(src, w->host, rel);
                free(rel);
        }
        free(src);
        return ok;
}

static void test_dependency_on_driver_ready(void **state)
{
        world_t *w = *state;
        expect_fail(w, GV_REASON_DEPENDENCY, "driver-ready is missing");
        /* a driver-ready without GPU facts (older writer) is refused with a reason */
        publish_driver(w, "", NULL);
        expect_fail(w, GV_REASON_DEPENDENCY, "GPU_COUNT");
}

static void test_cdi_real_capture(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", CAPTURE_UUID);
        if (!install_capture(w, "etc/cdi"))
                skip();
        capture_nodes(w);
        expect_ok(w, "cdi");
        assert_non_null(strstr(gv_kvlist_get(&w->res.facts, "TOOLKIT_SOURCE"), "etc/cdi/nvidia.yaml"));
        assert_non_null(strstr(w->res.summary, "CDI spec"));
}

static void test_cdi_missing_device_node_named(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", CAPTURE_UUID);
        if (!install_capture(w, "var/run/cdi"))
                skip();
        capture_nodes(w);
        char *p = th_path(w->host, "dev/dri/renderD128");
        unlink(p);
        free(p);
        expect_fail(w, GV_REASON_TOOLKIT, "/dev/dri/renderD128");
}

static void test_cdi_spec_not_naming_every_gpu(void **state)
{
        world_t *w = *state;
        publish_driver(w, "2", CAPTURE_UUID ",GPU-ffffffff-0000-0000-0000-000000000001");
        if (!install_capture(w, "etc/cdi"))
                skip();
        capture_nodes(w);
        expect_fail(w, GV_REASON_TOOLKIT, "devices not named: 1 GPU-ffffffff-0000-0000-0000-000000000001");
}

static void test_cdi_our_spec_split_over_files_and_json(void **state)
{
        world_t *w = *state;
        publish_driver(w, "2", "GPU-a,GPU-b");
        th_write(w->host, "etc/cdi/a.yaml",
                 "cdiVersion: 0.6.0\nkind: nvidia.com/gpu\n"
                 "devices:\n- name: '0'\n  containerEdits:\n    deviceNodes: [{path: /dev/nvidia0}]\n"
                 "- name: GPU-a\n  containerEdits:\n    deviceNodes: [{path: /dev/nvidia0}]\n"
                 "- name: all\n  containerEdits:\n    deviceNodes: [{path: /dev/nvidia0}, {path: /dev/nvidia1}]\n",
                 0644);
        th_write(w->host, "var/run/cdi/b.json",
                 "{\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"1\",\"containerEdits\":{\"deviceNodes\":"
                 "[{\"path\":\"/dev/nvidia1\",\"hostPath\":\"/run/nvidia/driver/dev/nvidia1\"}]}},"
                 "{\"name\":\"GPU-b\"}]}",
                 0644);
        th_write(w->host, "etc/cdi/other.yaml", "kind: example.com/fpga\ndevices: [{name: x}]\n", 0644);
        th_write(w->host, "etc/cdi/README", "not a spec", 0644);
        th_write(w->host, "dev/nvidia0", "", 0666);
        th_write(w->host, "dev/nvidia1", "", 0666);
        expect_fail(w, GV_REASON_TOOLKIT, "/run/nvidia/driver/dev/nvidia1"); /* hostPath is what must exist */
        th_write(w->host, "run/nvidia/driver/dev/nvidia1", "", 0666);
        expect_ok(w, "cdi");
}

static void test_cdi_invalid_spec_reported(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        th_write(w->host, "etc/cdi/broken.yaml", "kind: nvidia.com/gpu\ndevices: [\n", 0644);
        expect_fail(w, GV_REASON_TOOLKIT, "broken.yaml: invalid: YAML error");
}

static void test_runtime_containerd_configured(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        th_write(w->host, "etc/containerd/config.toml",
                 "version = 2\n"
                 "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
                 "  runtime_type = \"io.containerd.runc.v2\"\n"
                 "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
                 "    BinaryName = \"/usr/local/nvidia/toolkit/nvidia-container-runtime\"\n",
                 0644);
        /* the binary actually looked for, under the host root */
        expect_fail(w, GV_REASON_TOOLKIT,
                    "/usr/local/nvidia/toolkit/nvidia-container-runtime "
                    "(/usr/local/nvidia/toolkit/nvidia-container-runtime under the host root): absent");
        th_write(w->host, "usr/local/nvidia/toolkit/nvidia-container-runtime", "#!/bin/sh\n", 0755);
        expect_ok(w, "runtime");
        assert_non_null(strstr(gv_kvlist_get(&w->res.facts, "TOOLKIT_SOURCE"), "config.toml"));
}

static void test_runtime_commented_out_does_not_count(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        th_write(w->host, "usr/bin/nvidia-container-runtime", "#!/bin/sh\n", 0755);
        th_write(w->host, "etc/containerd/config.toml",
                 "version = 2\n# [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
                 "  #  BinaryName = \"/usr/bin/nvidia-container-runtime\"\n",
                 0644);
        expect_fail(w, GV_REASON_TOOLKIT, "no nvidia runtime configured");
}

static void test_runtime_docker_and_crio_dropin(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        th_write(w->host, "usr/bin/nvidia-container-runtime", "#!/bin/sh\n", 0755);
        th_write(w->host, "etc/docker/daemon.json",
                 "{\"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\", \"args\": []}}}\n", 0644);
        expect_ok(w, "runtime");
        char *p = th_path(w->host, "etc/docker/daemon.json");
        unlink(p);
        free(p);
        th_write(w->host, "etc/crio/crio.conf.d/99-nvidia.toml",
                 "[crio.runtime.runtimes.nvidia]\nruntime_path = \"/usr/bin/nvidia-container-runtime\"\n", 0644);
        expect_ok(w, "runtime");
        /* the runtime binary must be installed */
        p = th_path(w->host, "usr/bin/nvidia-container-runtime");
        unlink(p);
        free(p);
        expect_fail(w, GV_REASON_TOOLKIT, "99-nvidia.toml");
        /* explicit lists replace the defaults */
        static const char *const only_docker[] = { "/etc/docker/daemon.json", NULL };
        th_write(w->host, "usr/bin/nvidia-container-runtime", "#!/bin/sh\n", 0755);
        w->cfg.toolkit.runtime_configs = only_docker;
        expect_fail(w, GV_REASON_TOOLKIT, "no container runtime configuration found");
        w->cfg.toolkit.runtime_configs = NULL;
}

static void test_in_container_nvidia_smi(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        expect_fail(w, GV_REASON_TOOLKIT, "nvidia-smi in this container");
        th_write(w->dir, "bin/nvidia-smi", th_smi_stub, 0755);
        expect_ok(w, "container");
        setenv("FAKE_SMI_EXIT", "9", 1);
        expect_fail(w, GV_REASON_TOOLKIT, "exited 9");
        setenv("FAKE_SMI_EXIT", "14", 1);
        expect_ok(w, "container");
        assert_non_null(w->res.warning);
        /* with a CDI folder visible the in-container mode is not used */
        unsetenv("FAKE_SMI_EXIT");
        th_mkdirs(w->host, "etc/cdi");
        expect_fail(w, GV_REASON_TOOLKIT, "no *.yaml");
}

static void test_custom_cdi_dirs(void **state)
{
        world_t *w = *state;
        publish_driver(w, "1", "GPU-a");
        th_write(w->host, "srv/cdi/x.yml",
                 "kind: nvidia.com/gpu\ndevices: [{name: '0'}, {name: GPU-a}, {name: all}]\n", 0644);
        const char *dirs[] = { "/srv/cdi", NULL };
        w->cfg.toolkit.cdi_dirs = dirs;
        expect_ok(w, "cdi");
}

static void test_default_lists(void **state)
{
        (void) state;
        const char *const *c = gv_toolkit_default_cdi_dirs();
        assert_string_equal(c[0], "/etc/cdi");
        assert_string_equal(c[1], "/var/run/cdi");
        const char *const *r = gv_toolkit_default_runtime_configs();
        bool docker = false, containerd = false, crio = false;
        for (; *r; r++) {
                docker |= strcmp(*r, "/etc/docker/daemon.json") == 0;
                containerd |= strcmp(*r, "/etc/containerd/config.toml") == 0;
                crio |= strcmp(*r, "/etc/crio/crio.conf") == 0;
        }
        assert_true(docker && containerd && crio);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
                T(test_dependency_on_driver_ready),
                T(test_cdi_real_capture),
                T(test_cdi_missing_device_node_named),
                T(test_cdi_spec_not_naming_every_gpu),
                T(test_cdi_our_spec_split_over_files_and_json),
                T(test_cdi_invalid_spec_reported),
                T(test_runtime_containerd_configured),
                T(test_runtime_commented_out_does_not_count),
                T(test_runtime_docker_and_crio_dropin),
                T(test_in_container_nvidia_smi),
                T(test_custom_cdi_dirs),
                cmocka_unit_test(test_default_lists),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
