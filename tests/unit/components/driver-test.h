/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver component's test world (test-driver.c, test-driver-gpus.c): fake host and
 * container roots in a temp folder, a test NVML (fake-nvml.c, its path in argv[1]) and a
 * shell-script nvidia-smi whose exit code comes from FAKE_SMI_EXIT.
 */
#ifndef GV_TESTS_COMPONENTS_DRIVER_TEST_H
#define GV_TESTS_COMPONENTS_DRIVER_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "base/fileio.h"
#include "components/component.h"
#include "components-test.h"

static const char *fake_nvml_path;

/* One test's world. */
typedef struct world {
        char *dir;  /* temp folder holding everything */
        char *host; /* <dir>/host: HOST_ROOT */
        char *ctr;  /* <dir>/ctr: DRIVER_INSTALL_DIR_CTR_PATH */
        char *out;  /* <dir>/out: OUTPUT_DIR */
        char *devchar;
        char *sys;  /* <dir>/sys: the sysfs root (empty unless a test lays out PCI functions) */
        gv_config_t cfg;
        gv_result_t res;
        gv_error_t *err;
        th_log_t log;
} world_t;

static const char *const fake_env[] = { "FAKE_NVML_INIT_RC", "FAKE_NVML_COUNT", "FAKE_NVML_LOST_INDEX",
                                        "FAKE_NVML_MIG", "FAKE_NVML_INIT_LOG", "FAKE_SMI_EXIT", "FAKE_SMI_LOG",
                                        "FAKE_NVML_FABRIC",
                                        NULL };

static inline int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        assert_non_null(w);
        for (const char *const *e = fake_env; *e; e++)
                unsetenv(*e);
        w->dir = th_tmpdir();
        w->host = th_path(w->dir, "host");
        w->ctr = th_path(w->dir, "ctr");
        w->out = th_path(w->dir, "out");
        w->devchar = th_path(w->dir, "devchar");
        w->sys = th_path(w->dir, "sys");
        th_mkdirs(w->dir, "host");
        th_mkdirs(w->dir, "out");
        th_log_open(&w->log);
        w->cfg = (gv_config_t) {
                .output_dir = w->out,
                .driver.host_root = w->host,
                .driver.driver_install_dir = "/run/nvidia/driver",
                .driver.driver_install_dir_ctr_path = w->ctr,
                .driver.dev_char_dir = w->devchar,
                .sandbox.sysfs_root = w->sys,
                .sleep_interval_s = 0,
                .max_backoff_s = 0,
                .driver.dev_node_wait_s = 0,
                .driver.run_nvidia_smi = true,
                .workload.with_workload = true,
                .log = th_log_fn,
                .log_userdata = &w->log,
        };
        *state = w;
        return 0;
}

static inline int teardown(void **state)
{
        world_t *w = *state;
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        th_log_close(&w->log);
        th_rm_rf(w->dir);
        free(w->dir);
        free(w->host);
        free(w->ctr);
        free(w->out);
        free(w->devchar);
        free(w->sys);
        free(w);
        for (const char *const *e = fake_env; *e; e++)
                unsetenv(*e);
        return 0;
}

/* T(f): a driver test case @f, run between setup() and teardown(). */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/*
 * main()'s first step: the test NVML library is argv[1], else $GV_FAKE_NVML.  False, after a
 * usage line on stderr, when neither names one.
 */
static inline bool driver_test_args(int argc, char **argv)
{
        fake_nvml_path = argc > 1 ? argv[1] : getenv("GV_FAKE_NVML");
        if (!fake_nvml_path)
                fprintf(stderr, "usage: %s <path of the test NVML library>\n", argv[0]);
        return fake_nvml_path != NULL;
}

enum { NODES_FILES = 1, NODES_CHAR = 2, NO_SMI = 4, NO_MODULE = 8, NO_NODES = 16 };

/*
 * A driver root at @root: usr/bin/nvidia-smi, usr/lib64/libnvidia-ml.so.1,
 * sys/module/nvidia, and device nodes for @gpus GPUs (regular files with a
 * mock manifest, or character devices).  Returns false when char nodes
 * cannot be made (not root).
 */
static inline bool make_root(const char *root, unsigned gpus, int flags, const char *smi_dir, const char *lib_dir)
{
        char *rel = NULL;
        char count[16];
        snprintf(count, sizeof(count), "%u", gpus);
        setenv("FAKE_NVML_COUNT", count, 1); /* NVML sees as many GPUs as the root has nodes for */
        if (!(flags & NO_SMI)) {
                assert_true(asprintf(&rel, "%s/nvidia-smi", smi_dir ? smi_dir : "usr/bin") > 0);
                th_write(root, rel, th_smi_stub, 0755);
                free(rel);
        }
        assert_true(asprintf(&rel, "%s/libnvidia-ml.so.1", lib_dir ? lib_dir : "usr/lib64") > 0);
        th_copy(fake_nvml_path, root, rel);
        free(rel);
        if (!(flags & NO_MODULE))
                th_mkdirs(root, "sys/module/nvidia");
        if (flags & NO_NODES)
                return true;
        const char *names[] = { "dev/nvidiactl", "dev/nvidia-uvm", "dev/nvidia-uvm-tools" };
        if (flags & NODES_FILES) {
                th_write(root, ".gpu-validator-mock.json", "{\"profile\": \"a100\", \"device_nodes\": \"files\"}\n",
                         0644);
                for (size_t i = 0; i < 3; i++)
                        th_write(root, names[i], "", 0666);
                for (unsigned g = 0; g < gpus; g++) {
                        assert_true(asprintf(&rel, "dev/nvidia%u", g) > 0);
                        th_write(root, rel, "", 0666);
                        free(rel);
                }
                return true;
        }
        if (!th_mknod_char(root, "dev/nvidiactl", 195, 255) || !th_mknod_char(root, "dev/nvidia-uvm", 510, 0) ||
            !th_mknod_char(root, "dev/nvidia-uvm-tools", 510, 1))
                return false;
        for (unsigned g = 0; g < gpus; g++) {
                assert_true(asprintf(&rel, "dev/nvidia%u", g) > 0);
                bool ok = th_mknod_char(root, rel, 195, g);
                free(rel);
                if (!ok)
                        return false;
        }
        return true;
}

static inline int validate(world_t *w)
{
        gv_result_clear(&w->res);
        gv_error_free(&w->err);
        const gv_component_t *c = gv_component_find("driver");
        assert_non_null(c);
        int r = c->validate(&w->cfg, NULL, &w->res, &w->err);
        if (r < 0)
                assert_non_null(w->err);
        return r;
}

static inline void expect_fail(world_t *w, gv_reason_t reason)
{
        int r = validate(w);
        if (r >= 0 || w->err->reason != reason)
                fail_msg("expected %s, got r=%d %s: %s", gv_reason_name(reason), r,
                         w->err ? gv_reason_name(w->err->reason) : "-", w->err ? w->err->msg : "");
}

static inline void expect_ok(world_t *w)
{
        int r = validate(w);
        if (r < 0)
                fail_msg("validate failed: %s: %s", gv_reason_name(w->err->reason), w->err->msg);
}

static const char *fact(world_t *w, const char *key)
{
        const char *v = gv_kvlist_get(&w->res.facts, key);
        if (!v)
                fail_msg("fact %s missing", key);
        return v;
}

#endif
