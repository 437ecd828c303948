/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver component with the project's mock libnvidia-ml.so.1
 * (mock/nvml, path in argv[1]) instead of the tiny test NVML: the same
 * in-process load, with the mock's own fault variables (docs/mock-nvml.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "components/component.h"
#include "nvml/nvml.h"
#include "components-test.h"

static const char *mock_lib;

typedef struct world {
        char *dir, *host, *ctr, *out;
        gv_config_t cfg;
        gv_result_t res;
        gv_error_t *err;
} world_t;

static int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        w->dir = th_tmpdir();
        w->host = th_path(w->dir, "host");
        w->ctr = th_path(w->dir, "ctr");
        w->out = th_path(w->dir, "out");
        th_write(w->host, "usr/bin/nvidia-smi", th_smi_stub, 0755);
        th_copy(mock_lib, w->host, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
        th_write(w->host, ".gpu-validator-mock.json", "{\"device_nodes\": \"files\"}", 0644);
        const char *nodes[] = { "dev/nvidiactl", "dev/nvidia-uvm", "dev/nvidia-uvm-tools", NULL };
        for (const char **n = nodes; *n; n++)
                th_write(w->host, *n, "", 0666);
        for (unsigned i = 0; i < 64; i++) {
                char rel[32];
                snprintf(rel, sizeof(rel), "dev/nvidia%u", i);
                th_write(w->host, rel, "", 0666);
        }
        setenv("MOCK_NVML_NUM_DEVICES", "2", 1);
        unsetenv("MOCK_NVML_INIT_ERROR");
        unsetenv("MOCK_NVML_LOST_GPUS");
        unsetenv("MOCK_NVML_CONFIG");
        w->cfg = (gv_config_t) {
                .output_dir = w->out,
                .driver.host_root = w->host,
                .driver.driver_install_dir = "/run/nvidia/driver",
                .driver.driver_install_dir_ctr_path = w->ctr,
                .driver.run_nvidia_smi = true,
        };
        *state = w;
        return 0;
}

static int teardown(void **state)
{
        world_t *w = *state;
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        th_rm_rf(w->dir);
        free(w->dir);
        free(w->host);
        free(w->ctr);
        free(w->out);
        free(w);
        unsetenv("MOCK_NVML_NUM_DEVICES");
        unsetenv("MOCK_NVML_INIT_ERROR");
        unsetenv("MOCK_NVML_LOST_GPUS");
        return 0;
}

static int validate(world_t *w)
{
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        return gv_component_find("driver")->validate(&w->cfg, NULL, &w->res, &w->err);
}

static void test_mock_nvml_host_driver(void **state)
{
        world_t *w = *state;
        if (validate(w) < 0)
                fail_msg("%s: %s", gv_reason_name(w->err->reason), w->err->msg);
        assert_string_equal(gv_kvlist_get(&w->res.facts, "IS_HOST_DRIVER"), "true");
        assert_string_equal(gv_kvlist_get(&w->res.facts, "GPU_COUNT"), "2");
        assert_string_equal(gv_kvlist_get(&w->res.facts, "DRIVER_VERSION"), "550.163.01");
        assert_non_null(strchr(gv_kvlist_get(&w->res.facts, "GPU_UUIDS"), ','));
        assert_non_null(gv_kvlist_get(&w->res.facts, "CUDA_DRIVER_VERSION"));
}

static void test_fr12_mock_nvml_no_permission(void **state)
{
        world_t *w = *state;
        setenv("MOCK_NVML_INIT_ERROR", "no-permission", 1);
        assert_true(validate(w) < 0);
        assert_int_equal(w->err->reason, GV_REASON_PERMISSION_DENIED);
        assert_non_null(strstr(w->err->msg, "SELinux"));
        setenv("MOCK_NVML_INIT_ERROR", "driver-not-loaded", 1);
        assert_true(validate(w) < 0);
        assert_int_equal(w->err->reason, GV_REASON_DRIVER_NOT_LOADED);
        setenv("MOCK_NVML_INIT_ERROR", "lib-rm-version-mismatch", 1);
        assert_true(validate(w) < 0);
        assert_int_equal(w->err->reason, GV_REASON_DRIVER_MISMATCH);
}

static void test_mock_nvml_lost_gpu(void **state)
{
        world_t *w = *state;
        setenv("MOCK_NVML_LOST_GPUS", "1", 1);
        assert_true(validate(w) < 0);
        if (w->err->reason != GV_REASON_GPU_LOST)
                fail_msg("%s: %s", gv_reason_name(w->err->reason), w->err->msg);
        assert_non_null(strstr(w->err->msg, "GPU 1"));
        /* Named by its bus id (from the PCI info of its handle), as the profile gives it. */
        assert_non_null(strstr(w->err->msg, "bus id 00000000:0F:00.0"));
        assert_null(strstr(w->err->msg, "unknown"));
}

/*
 * One table of NVML return texts serves the loader's fallback and the mock's
 * nvmlErrorString: they agree on every code, and the texts are NVIDIA's.
 */
static void test_one_nvml_error_table(void **state)
{
        (void) state;
        const char *const candidates[] = { mock_lib, NULL };
        gv_nvml_t *nvml = NULL;
        gv_error_t *err = NULL;
        if (gv_nvml_open(candidates, &nvml, &err) < 0)
                fail_msg("%s", err->msg);
        for (int c = 0; c <= 30; c++) {
                const char *mock_text = gv_nvml_strerror(nvml, (nvmlReturn_t) c);  /* the mock's nvmlErrorString */
                const char *built_in = gv_nvml_strerror(NULL, (nvmlReturn_t) c);   /* the loader's fallback */
                if (strcmp(mock_text, built_in) != 0)
                        fail_msg("code %d: mock says \"%s\", loader says \"%s\"", c, mock_text, built_in);
                assert_string_not_equal(built_in, "Unknown Error");
                assert_string_not_equal(gv_nvml_return_name((nvmlReturn_t) c), "NVML_ERROR_UNKNOWN");
        }
        assert_string_equal(gv_nvml_strerror(NULL, NVML_ERROR_FREQ_NOT_SUPPORTED),
                            "The requested frequency is not supported");
        assert_string_equal(gv_nvml_return_name(NVML_ERROR_FREQ_NOT_SUPPORTED), "NVML_ERROR_FREQ_NOT_SUPPORTED");
        assert_string_equal(gv_nvml_strerror(NULL, NVML_ERROR_INSUFFICIENT_RESOURCES),
                            "Ran out of critical resources, other than memory");
        assert_string_equal(gv_nvml_strerror(NULL, NVML_ERROR_UNKNOWN), "Unknown Error");
        assert_string_equal(gv_nvml_strerror(nvml, (nvmlReturn_t) 12345), "Unknown Error");
        assert_string_equal(gv_nvml_strerror(NULL, (nvmlReturn_t) 12345), "Unknown Error");
        gv_nvml_close(&nvml);
}

int main(int argc, char **argv)
{
        mock_lib = argc > 1 ? argv[1] : NULL;
        if (!mock_lib) {
                fprintf(stderr, "usage: %s <mock libnvidia-ml.so.1>\n", argv[0]);
                return 2;
        }
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
                T(test_mock_nvml_host_driver),
                T(test_fr12_mock_nvml_no_permission),
                T(test_mock_nvml_lost_gpu),
                cmocka_unit_test(test_one_nvml_error_table),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
