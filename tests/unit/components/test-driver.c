/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver component against fake roots: a test NVML (fake-nvml.c, path in
 * argv[1]) and a shell-script nvidia-smi whose exit code comes from
 * FAKE_SMI_EXIT.  Field reports FR02, FR03, FR05, FR06, FR12, FR13, FR14.
 * The NVSwitch fabric and the expected GPU count: test-driver-gpus.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>


#include "driver-test.h"

/* ---- host driver ---- */

static void test_host_driver_facts(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        expect_ok(w);
        assert_true(w->res.host_driver);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
        assert_string_equal(fact(w, "NVIDIA_DRIVER_ROOT"), w->host);
        assert_string_equal(fact(w, "DRIVER_ROOT_CTR_PATH"), "/host");
        assert_string_equal(fact(w, "NVIDIA_DEV_ROOT"), w->host);
        assert_string_equal(fact(w, "DEV_ROOT_CTR_PATH"), "/host");
        assert_string_equal(fact(w, "DRIVER_VERSION"), "550.163.01");
        assert_string_equal(fact(w, "CUDA_DRIVER_VERSION"), "12.4");
        assert_string_equal(fact(w, "GPU_COUNT"), "2");
        assert_string_equal(fact(w, "GPU_UUIDS"),
                            "GPU-00000000-0000-0000-0000-000000000000,GPU-00000000-0000-0000-0000-000000000001");
        assert_non_null(strstr(w->res.summary, "host driver 550.163.01, CUDA 12.4, 2 GPUs (NVIDIA A100-SXM4-40GB)"));
        /* upstream's key order comes first */
        assert_string_equal(w->res.facts.items[0].key, "IS_HOST_DRIVER");
        assert_string_equal(w->res.facts.items[4].key, "DEV_ROOT_CTR_PATH");
        assert_null(w->res.warning);
}

static void test_fr05_empty_driver_dir_keeps_host_driver(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        th_mkdirs(w->dir, "ctr"); /* leftover, empty */
        th_write(w->out, ".driver-ctr-ready", "", 0644);
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
        assert_string_equal(fact(w, "NVIDIA_DRIVER_ROOT"), w->host);
        /* an unrelated folder with a dev/ in it changes nothing either */
        th_mkdirs(w->ctr, "dev");
        th_write(w->ctr, "usr/bin/nvidia-smi", th_smi_stub, 0755);
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
        assert_string_equal(fact(w, "NVIDIA_DEV_ROOT"), w->host);
}

static void test_fr05_host_root_slash_shape(void **state)
{
        /* with HOST_ROOT=/ the facts say "/" (upstream): checked through the path helper */
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        char *with_slash = NULL;
        assert_true(asprintf(&with_slash, "%s/", w->host) > 0);
        w->cfg.driver.host_root = with_slash;
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
        w->cfg.driver.host_root = w->host;
        free(with_slash);
}

static void test_fr06_opt_nvidia_layout_found(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, "opt/nvidia/bin", "opt/nvidia/lib64");
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
}

static void test_fr06_talos_layout_found(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, "usr/local/bin", "usr/local/glibc/lib");
        expect_ok(w);
}

static void test_fr06_driver_root_lib64_bin(void **state)
{
        /* DRIVER_INSTALL_DIR pointing at an /opt/nvidia-style root: <root>/lib64, <root>/bin */
        world_t *w = *state;
        make_root(w->ctr, 1, NODES_FILES, "bin", "lib64");
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "false");
        assert_string_equal(fact(w, "NVIDIA_DRIVER_ROOT"), "/run/nvidia/driver");
        assert_string_equal(fact(w, "DRIVER_ROOT_CTR_PATH"), "/driver-root");
        assert_string_equal(fact(w, "NVIDIA_DEV_ROOT"), "/run/nvidia/driver");
        assert_string_equal(fact(w, "DEV_ROOT_CTR_PATH"), "/driver-root");
        assert_false(w->res.host_driver);
}

static void test_fr06_not_found_lists_paths_and_settings(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, "srv/nvidia/bin", "srv/nvidia/lib64");
        expect_fail(w, GV_REASON_LIBRARY_NOT_FOUND);
        assert_false(gv_reason_retryable(w->err->reason));
        const char *m = w->err->msg;
        char *p = NULL;
        assert_true(asprintf(&p, "%s/usr/lib64/libnvidia-ml.so.1", w->host) > 0);
        assert_non_null(strstr(m, p));
        free(p);
        assert_true(asprintf(&p, "%s/usr/local/bin/nvidia-smi", w->host) > 0);
        assert_non_null(strstr(m, p));
        free(p);
        assert_true(asprintf(&p, "%s/lib64/libnvidia-ml.so.1", w->ctr) > 0);
        assert_non_null(strstr(m, p));
        free(p);
        assert_non_null(strstr(m, "HOST_ROOT"));
        assert_non_null(strstr(m, "DRIVER_INSTALL_DIR"));
        assert_non_null(strstr(m, "--lib-search"));
        assert_non_null(strstr(m, "--bin-search"));

        /* the settings really change it */
        const char *libs[] = { "/srv/nvidia/lib64", NULL };
        const char *bins[] = { "/srv/nvidia/bin", NULL };
        w->cfg.driver.lib_search = libs;
        w->cfg.driver.bin_search = bins;
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");
}

static void test_fr06_no_endless_retry_with_wait(void **state)
{
        world_t *w = *state;
        gv_store_t *store = th_store_open(w->dir);
        w->cfg.output_dir = gv_store_dir(store);
        w->cfg.with_wait = true;
        w->cfg.max_wait_s = 0; /* unbounded: must still end at once */
        gv_run_report_t rep;
        int r = gv_component_run(gv_component_find("driver"), &w->cfg, store, &rep);
        assert_true(r < 0);
        assert_int_equal(rep.reason, GV_REASON_LIBRARY_NOT_FOUND);
        assert_int_equal(rep.attempts, 1);
        gv_run_report_clear(&rep);
        gv_store_close(&store);
}

static void test_symlinks_resolved_inside_root(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, "usr/lib/nvidia", "usr/lib64");
        /* absolute link: re-rooted under the host root */
        th_symlink("/usr/lib/nvidia/nvidia-smi", w->host, "usr/bin/nvidia-smi");
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "true");

        /* a link to a real-root file that is absent under the root is not followed out */
        world_t *w2 = w;
        th_rm_rf(w2->host);
        make_root(w2->host, 1, NODES_FILES | NO_SMI, NULL, NULL);
        th_symlink("/bin/sh", w2->host, "usr/bin/nvidia-smi");
        th_symlink("../../../../../../../../bin/sh", w2->host, "usr/sbin/nvidia-smi");
        expect_fail(w2, GV_REASON_LIBRARY_NOT_FOUND);
}

/* ---- container driver ---- */

static void test_container_driver_waits_for_driver_ctr_ready(void **state)
{
        world_t *w = *state;
        if (!make_root(w->ctr, 1, NODES_CHAR, NULL, NULL))
                skip();
        th_mkdirs(w->host, "sys/module/nvidia");
        expect_fail(w, GV_REASON_DRIVER_NOT_LOADED);
        assert_true(gv_reason_retryable(w->err->reason));
        assert_non_null(strstr(w->err->msg, ".driver-ctr-ready"));
        th_write(w->out, ".driver-ctr-ready", "GDS_ENABLED: false\n", 0644);
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "false");
        assert_string_equal(fact(w, "DRIVER_ROOT_CTR_PATH"), "/driver-root");
        assert_string_equal(fact(w, "NVIDIA_DEV_ROOT"), "/run/nvidia/driver");
}

static void test_container_driver_dev_root_falls_back_to_host(void **state)
{
        world_t *w = *state;
        make_root(w->ctr, 1, NO_NODES, NULL, NULL);
        th_write(w->ctr, ".gpu-validator-mock.json", "{\"device_nodes\":\"files\"}", 0644);
        make_root(w->host, 1, NODES_FILES | NO_SMI, NULL, "no/lib/here");
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "false");
        assert_string_equal(fact(w, "NVIDIA_DEV_ROOT"), w->host);
        assert_string_equal(fact(w, "DEV_ROOT_CTR_PATH"), "/host");
}

static void test_mock_root_skips_ctr_ready_and_module(void **state)
{
        world_t *w = *state;
        make_root(w->ctr, 2, NODES_FILES | NO_MODULE, NULL, NULL);
        expect_ok(w);
        assert_string_equal(fact(w, "IS_HOST_DRIVER"), "false");
        assert_non_null(strstr(w->res.summary, "mock root"));
}

static void test_mock_manifest_malformed_is_config_error(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        th_write(w->host, ".gpu-validator-mock.json", "{\"device_nodes\": 7}", 0644);
        expect_fail(w, GV_REASON_CONFIG);
        th_write(w->host, ".gpu-validator-mock.json", "{not json", 0644);
        expect_fail(w, GV_REASON_CONFIG);
}

/* ---- FR02 ---- */

static void test_fr02_no_library_no_module(void **state)
{
        world_t *w = *state;
        th_write(w->host, "usr/bin/nvidia-smi", th_smi_stub, 0755);
        expect_fail(w, GV_REASON_LIBRARY_NOT_FOUND);
        assert_non_null(strstr(w->err->msg, "kernel module is not loaded"));
}

static void test_fr02_library_without_module(void **state)
{
        world_t *w = *state;
        if (!make_root(w->host, 1, NODES_CHAR | NO_MODULE, NULL, NULL))
                skip();
        expect_fail(w, GV_REASON_DRIVER_NOT_LOADED);
        assert_non_null(strstr(w->err->msg, "/sys/module/nvidia"));
}

static void test_fr02_markers_removed_on_failure(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        gv_store_t *store = th_store_open(w->dir);
        w->cfg.output_dir = gv_store_dir(store);
        gv_run_report_t rep;
        assert_int_equal(gv_component_run(gv_component_find("driver"), &w->cfg, store, &rep), 0);
        gv_run_report_clear(&rep);
        assert_true(th_exists(w->dir, "out/driver-ready"));
        assert_true(th_exists(w->dir, "out/host-driver-ready"));
        /* the driver goes away */
        char *lib = th_path(w->host, "usr/lib64/libnvidia-ml.so.1");
        unlink(lib);
        free(lib);
        char *sys = th_path(w->host, "sys");
        th_rm_rf(sys);
        free(sys);
        assert_true(gv_component_run(gv_component_find("driver"), &w->cfg, store, &rep) < 0);
        assert_int_equal(rep.reason, GV_REASON_LIBRARY_NOT_FOUND);
        gv_run_report_clear(&rep);
        assert_false(th_exists(w->dir, "out/driver-ready"));
        assert_false(th_exists(w->dir, "out/host-driver-ready"));
        gv_store_close(&store);
}

/* ---- NVML faults ---- */

static void test_fr12_no_permission_is_distinct(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_INIT_RC", "4", 1);
        expect_fail(w, GV_REASON_PERMISSION_DENIED);
        assert_non_null(strstr(w->err->msg, "permission denied: check device node modes, SELinux, cgroup device rules"));
        assert_non_null(strstr(w->err->msg, "NVML_ERROR_NO_PERMISSION"));
        assert_false(gv_reason_retryable(w->err->reason));
        setenv("FAKE_NVML_INIT_RC", "9", 1);
        expect_fail(w, GV_REASON_DRIVER_NOT_LOADED);
        setenv("FAKE_NVML_INIT_RC", "18", 1);
        expect_fail(w, GV_REASON_DRIVER_MISMATCH);
        setenv("FAKE_NVML_INIT_RC", "999", 1);
        expect_fail(w, GV_REASON_NVML);
}

static void test_no_gpu(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_COUNT", "0", 1);
        expect_fail(w, GV_REASON_NO_GPU);
}

static void test_gpu_lost_names_index_and_bus_id(void **state)
{
        world_t *w = *state;
        make_root(w->host, 4, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_COUNT", "4", 1);
        setenv("FAKE_NVML_LOST_INDEX", "2", 1);
        expect_fail(w, GV_REASON_GPU_LOST);
        assert_non_null(strstr(w->err->msg, "GPU 2"));
        assert_non_null(strstr(w->err->msg, "00000000:12:00.0"));
}

static void test_fr14_mig_enabled_without_instances(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_MIG", "enabled-empty", 1);
        expect_fail(w, GV_REASON_MIG_NO_INSTANCES);
        assert_non_null(strstr(w->err->msg, "MIG is enabled but no"));
        setenv("FAKE_NVML_MIG", "enabled-3", 1);
        expect_ok(w);
        unsetenv("FAKE_NVML_MIG");
        expect_ok(w);
}

static void test_skip_gpu_init(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        char *log = th_path(w->dir, "init.log");
        setenv("FAKE_NVML_INIT_LOG", log, 1);
        setenv("FAKE_SMI_EXIT", "9", 1); /* nvidia-smi is not run */
        w->cfg.driver.skip_gpu_init = true;
        expect_ok(w);
        assert_non_null(strstr(w->res.summary, "GPU init skipped"));
        char *text = NULL;
        size_t len = 0;
        gv_error_t *e = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, log, false, 4096, &text, &len, &e), 0);
        assert_string_equal(text, "init-no-attach\n");
        free(text);
        free(log);
}

/* ---- FR13 nvidia-smi exit codes ---- */

static void smi_case(world_t *w, const char *code, bool strict, gv_reason_t want, bool want_warning)
{
        setenv("FAKE_SMI_EXIT", code, 1);
        w->cfg.driver.strict = strict;
        if (want == GV_REASON_NONE) {
                expect_ok(w);
                if (want_warning) {
                        assert_non_null(w->res.warning);
                        assert_non_null(strstr(w->res.warning, "14"));
                } else {
                        assert_null(w->res.warning);
                }
        } else {
                expect_fail(w, want);
                assert_non_null(strstr(w->err->msg, "nvidia-smi"));
                char *ex = NULL;
                assert_true(asprintf(&ex, "exited %s", code) > 0);
                assert_non_null(strstr(w->err->msg, ex));
                free(ex);
        }
}

static void test_fr13_exit_codes(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        char *smilog = th_path(w->dir, "smi.log");
        setenv("FAKE_SMI_LOG", smilog, 1);
        smi_case(w, "0", false, GV_REASON_NONE, false);
        smi_case(w, "0", true, GV_REASON_NONE, false);
        smi_case(w, "14", false, GV_REASON_NONE, true);
        smi_case(w, "14", true, GV_REASON_NVIDIA_SMI, false);
        smi_case(w, "9", false, GV_REASON_DRIVER_NOT_LOADED, false);
        smi_case(w, "9", true, GV_REASON_DRIVER_NOT_LOADED, false);
        smi_case(w, "12", false, GV_REASON_LIBRARY_NOT_FOUND, false);
        assert_non_null(strstr(w->err->msg, "wrong driver root"));
        smi_case(w, "12", true, GV_REASON_LIBRARY_NOT_FOUND, false);
        smi_case(w, "18", false, GV_REASON_DRIVER_MISMATCH, false);
        assert_non_null(strstr(w->err->msg, "reload"));
        smi_case(w, "18", true, GV_REASON_DRIVER_MISMATCH, false);
        smi_case(w, "3", false, GV_REASON_NVIDIA_SMI, false);
        /* the library folder was on LD_LIBRARY_PATH */
        char *text = NULL;
        size_t len = 0;
        gv_error_t *e = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, smilog, false, 1 << 20, &text, &len, &e), 0);
        char *want = NULL;
        assert_true(asprintf(&want, "LD_LIBRARY_PATH=%s/usr/lib64", w->host) > 0);
        assert_non_null(strstr(text, want));
        free(want);
        free(text);
        free(smilog);
}

static void test_fr13_policy_table(void **state)
{
        (void) state;
        bool warn = true;
        assert_int_equal(gv_nvidia_smi_exit_reason(0, false, &warn), GV_REASON_NONE);
        assert_false(warn);
        assert_int_equal(gv_nvidia_smi_exit_reason(14, false, &warn), GV_REASON_NONE);
        assert_true(warn);
        assert_int_equal(gv_nvidia_smi_exit_reason(14, true, &warn), GV_REASON_NVIDIA_SMI);
        assert_false(warn);
        assert_int_equal(gv_nvidia_smi_exit_reason(9, false, NULL), GV_REASON_DRIVER_NOT_LOADED);
        assert_true(gv_reason_retryable(gv_nvidia_smi_exit_reason(9, false, NULL)));
        assert_int_equal(gv_nvidia_smi_exit_reason(12, false, NULL), GV_REASON_LIBRARY_NOT_FOUND);
        assert_false(gv_reason_retryable(gv_nvidia_smi_exit_reason(12, false, NULL)));
        assert_int_equal(gv_nvidia_smi_exit_reason(18, false, NULL), GV_REASON_DRIVER_MISMATCH);
        assert_false(gv_reason_retryable(gv_nvidia_smi_exit_reason(18, false, NULL)));
        assert_int_equal(gv_nvidia_smi_exit_reason(-1, false, NULL), GV_REASON_NVIDIA_SMI);
        assert_int_equal(gv_nvidia_smi_exit_reason(255, false, NULL), GV_REASON_NVIDIA_SMI);
}

static void test_nvidia_smi_missing_in_container_root(void **state)
{
        world_t *w = *state;
        make_root(w->ctr, 1, NODES_FILES | NO_SMI, NULL, NULL);
        expect_fail(w, GV_REASON_LIBRARY_NOT_FOUND);
        assert_non_null(strstr(w->err->msg, "nvidia-smi not found"));
        w->cfg.driver.run_nvidia_smi = false;
        expect_ok(w);
}

/* ---- FR03 device nodes ---- */

static void test_fr03_missing_nodes_named(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        char *p = th_path(w->host, "dev/nvidia-uvm");
        unlink(p);
        free(p);
        p = th_path(w->host, "dev/nvidia-uvm-tools");
        unlink(p);
        free(p);
        p = th_path(w->host, "dev/nvidia1");
        unlink(p);
        free(p);
        w->cfg.driver.dev_node_wait_s = 1;
        expect_fail(w, GV_REASON_DEVICE_NODE_MISSING);
        assert_non_null(strstr(w->err->msg, "/dev/nvidia-uvm,"));
        assert_non_null(strstr(w->err->msg, "/dev/nvidia-uvm-tools"));
        assert_non_null(strstr(w->err->msg, "/dev/nvidia1"));
        assert_null(strstr(w->err->msg, "nvidiactl"));
        assert_non_null(strstr(w->err->msg, "1 s"));
}

typedef struct late {
        const char *root;
        unsigned delay_ms;
} late_t;

static void *create_late(void *arg)
{
        late_t *l = arg;
        usleep(l->delay_ms * 1000);
        char *p = th_path(l->root, "dev/nvidia-uvm");
        FILE *f = fopen(p, "w");
        if (f)
                fclose(f);
        free(p);
        usleep(50 * 1000);
        p = th_path(l->root, "dev/nvidia-uvm-tools");
        f = fopen(p, "w");
        if (f)
                fclose(f);
        free(p);
        return NULL;
}

static void test_fr03_late_nodes_are_waited_for(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        char *p = th_path(w->host, "dev/nvidia-uvm");
        unlink(p);
        free(p);
        p = th_path(w->host, "dev/nvidia-uvm-tools");
        unlink(p);
        free(p);
        w->cfg.driver.dev_node_wait_s = 10;
        late_t l = { .root = w->host, .delay_ms = 300 };
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, create_late, &l), 0);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        expect_ok(w);
        clock_gettime(CLOCK_MONOTONIC, &b);
        pthread_join(t, NULL);
        double s = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        assert_true(s >= 0.3);
        assert_true(s < 3.0); /* woke up promptly, not at the end of the bound */
        assert_non_null(strstr(w->log.buf, "waiting up to 10 s"));
}

static void test_fr03_wrong_type_rejected_unless_mock_files(void **state)
{
        world_t *w = *state;
        if (!make_root(w->host, 1, NODES_CHAR, NULL, NULL))
                skip();
        th_write(w->host, "dev/nvidia-uvm", "", 0666); /* a regular file where a char node belongs */
        expect_fail(w, GV_REASON_DEVICE_NODE_MISSING);
        assert_non_null(strstr(w->err->msg, "nvidia-uvm (not a character device)"));
}

static volatile sig_atomic_t stop_flag;

static void *set_stop(void *arg)
{
        (void) arg;
        usleep(200 * 1000);
        stop_flag = 1;
        return NULL;
}

static void test_fr03_wait_ends_promptly_on_stop(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        char *p = th_path(w->host, "dev/nvidia-uvm");
        unlink(p);
        free(p);
        stop_flag = 0;
        w->cfg.stop = &stop_flag;
        w->cfg.driver.dev_node_wait_s = 30;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, set_stop, NULL), 0);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        expect_fail(w, GV_REASON_INTERRUPTED);
        clock_gettime(CLOCK_MONOTONIC, &b);
        pthread_join(t, NULL);
        double s = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        assert_true(s < 1.5);
        w->cfg.stop = NULL;
}

static void test_dev_char_symlinks(void **state)
{
        world_t *w = *state;
        if (!make_root(w->host, 2, NODES_CHAR, NULL, NULL))
                skip();
        expect_ok(w);
        char target[4096];
        char *link = th_path(w->devchar, "195:1");
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        char *want = th_path(w->host, "dev/nvidia1");
        assert_string_equal(target, want);
        free(want);
        free(link);
        assert_true(th_exists(w->devchar, "195:255"));
        assert_true(th_exists(w->devchar, "510:0"));
        assert_true(th_exists(w->devchar, "510:1"));
        /* a second run keeps them; a wrong one is replaced */
        th_symlink("/wrong", w->devchar, "195:0");
        expect_ok(w);
        link = th_path(w->devchar, "195:0");
        n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        assert_null(strstr(target, "wrong"));
        free(link);
}

static void test_dev_char_symlinks_disabled_or_failing(void **state)
{
        world_t *w = *state;
        if (!make_root(w->host, 1, NODES_CHAR, NULL, NULL))
                skip();
        w->cfg.driver.disable_dev_char_symlinks = true;
        expect_ok(w);
        assert_false(th_exists(w->dir, "devchar"));
        /* an impossible folder is a warning, not a failure */
        w->cfg.driver.disable_dev_char_symlinks = false;
        th_write(w->dir, "devchar", "a file, not a folder", 0644);
        expect_ok(w);
        assert_non_null(strstr(w->log.buf, "cannot"));
}

static void test_mock_file_nodes_get_no_symlinks(void **state)
{
        world_t *w = *state;
        make_root(w->host, 1, NODES_FILES, NULL, NULL);
        expect_ok(w);
        assert_false(th_exists(w->dir, "devchar"));
}

static void test_default_search_lists(void **state)
{
        (void) state;
        const char *const *l = gv_driver_default_lib_search();
        const char *const *b = gv_driver_default_bin_search();
        const char *want_l[] = { "/", "/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                 "/lib64", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib",
                                 "/usr/local/nvidia/lib64", NULL };
        const char *want_b[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/lib/wsl/lib", "/opt/bin",
                                 "/usr/local/bin", NULL };
        for (const char **x = want_l; *x; x++) {
                bool found = false;
                for (const char *const *y = l; *y; y++)
                        found |= strcmp(*x, *y) == 0;
                if (!found)
                        fail_msg("%s not in the lib search list", *x);
        }
        for (const char **x = want_b; *x; x++) {
                bool found = false;
                for (const char *const *y = b; *y; y++)
                        found |= strcmp(*x, *y) == 0;
                if (!found)
                        fail_msg("%s not in the bin search list", *x);
        }
}

int main(int argc, char **argv)
{
        if (!driver_test_args(argc, argv))
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_host_driver_facts),
                T(test_fr05_empty_driver_dir_keeps_host_driver),
                T(test_fr05_host_root_slash_shape),
                T(test_fr06_opt_nvidia_layout_found),
                T(test_fr06_talos_layout_found),
                T(test_fr06_driver_root_lib64_bin),
                T(test_fr06_not_found_lists_paths_and_settings),
                T(test_fr06_no_endless_retry_with_wait),
                T(test_symlinks_resolved_inside_root),
                T(test_container_driver_waits_for_driver_ctr_ready),
                T(test_container_driver_dev_root_falls_back_to_host),
                T(test_mock_root_skips_ctr_ready_and_module),
                T(test_mock_manifest_malformed_is_config_error),
                T(test_fr02_no_library_no_module),
                T(test_fr02_library_without_module),
                T(test_fr02_markers_removed_on_failure),
                T(test_fr12_no_permission_is_distinct),
                T(test_no_gpu),
                T(test_gpu_lost_names_index_and_bus_id),
                T(test_fr14_mig_enabled_without_instances),
                T(test_skip_gpu_init),
                T(test_fr13_exit_codes),
                T(test_fr13_policy_table),
                T(test_nvidia_smi_missing_in_container_root),
                T(test_fr03_missing_nodes_named),
                T(test_fr03_late_nodes_are_waited_for),
                T(test_fr03_wrong_type_rejected_unless_mock_files),
                T(test_fr03_wait_ends_promptly_on_stop),
                T(test_dev_char_symlinks),
                T(test_dev_char_symlinks_disabled_or_failing),
                T(test_mock_file_nodes_get_no_symlinks),
                T(test_default_search_lists),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
