/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver component's GPU checks against fake roots (driver-test.h): every NVSwitch GPU's
 * fabric trained, and as many GPUs in NVML as expected (--expected-gpus, else the PCI bus).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver-test.h"

static void test_fabric_in_progress_names_each_gpu(void **state)
{
        world_t *w = *state;
        make_root(w->host, 4, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_FABRIC", "3:0,2,3:0,1", 1);
        expect_fail(w, GV_REASON_FABRIC_NOT_READY);
        assert_true(gv_reason_retryable(GV_REASON_FABRIC_NOT_READY)); /* --wait waits for the fabric manager */
        assert_non_null(strstr(w->err->msg, "2 of 4 fabric GPU(s)"));
        assert_non_null(strstr(w->err->msg, "GPU 1 (bus id 00000000:11:00.0): state IN_PROGRESS"));
        assert_non_null(strstr(w->err->msg, "GPU 3 (bus id 00000000:13:00.0): state NOT_STARTED"));
        assert_null(strstr(w->err->msg, "GPU 0 "));
        assert_null(strstr(w->err->msg, "GPU 2 "));
}

static void test_fabric_completed_or_absent_passes(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_FABRIC", "3:0", 1); /* HGX: trained */
        expect_ok(w);
        setenv("FAKE_NVML_FABRIC", "none", 1); /* PCIe card: NOT_SUPPORTED */
        expect_ok(w);
        setenv("FAKE_NVML_FABRIC", "0", 1); /* state NOT_SUPPORTED answered with SUCCESS */
        expect_ok(w);
        unsetenv("FAKE_NVML_FABRIC"); /* a library without fabric info at all */
        expect_ok(w);
}

static void test_fabric_completed_with_error_fails(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        setenv("FAKE_NVML_FABRIC", "3:0,3:999", 1);
        expect_fail(w, GV_REASON_FABRIC_NOT_READY);
        assert_non_null(strstr(w->err->msg, "GPU 1 (bus id 00000000:11:00.0): state COMPLETED, status "));
        assert_non_null(strstr(w->err->msg, "NVML_ERROR_UNKNOWN, 999"));
        assert_non_null(strstr(w->err->msg, "failed"));
        assert_null(strstr(w->err->msg, "GPU 0 "));
}

/* One PCI function under <sys>/bus/pci/devices/@addr. */
static void pci_fn(world_t *w, const char *addr, const char *vendor, const char *cls, const char *physfn)
{
        char *rel = NULL;
        assert_true(asprintf(&rel, "bus/pci/devices/%s/vendor", addr) > 0);
        th_write(w->sys, rel, vendor, 0644);
        free(rel);
        assert_true(asprintf(&rel, "bus/pci/devices/%s/class", addr) > 0);
        th_write(w->sys, rel, cls, 0644);
        free(rel);
        if (physfn) {
                assert_true(asprintf(&rel, "bus/pci/devices/%s/physfn", addr) > 0);
                char *target = NULL;
                assert_true(asprintf(&target, "../%s", physfn) > 0);
                th_symlink(target, w->sys, rel);
                free(target);
                free(rel);
        }
}

static void test_gpu_missing_from_nvml_present_on_pci(void **state)
{
        world_t *w = *state;
        make_root(w->host, 3, NODES_FILES, NULL, NULL);
        pci_fn(w, "0000:10:00.0", "0x10de\n", "0x030200\n", NULL);
        pci_fn(w, "0000:11:00.0", "0x10de\n", "0x030000\n", NULL);
        pci_fn(w, "0000:12:00.0", "0x10de\n", "0x030200\n", NULL);
        pci_fn(w, "0000:12:00.1", "0x10de\n", "0x040300\n", NULL);           /* its audio function */
        pci_fn(w, "0000:12:00.4", "0x10de\n", "0x030200\n", "0000:12:00.0"); /* an SR-IOV VF */
        pci_fn(w, "0000:20:00.0", "0x15b3\n", "0x020000\n", NULL);           /* a NIC */
        setenv("FAKE_NVML_COUNT", "2", 1); /* NVML: 0000:10 and 0000:11; 0000:12 fell off */
        expect_fail(w, GV_REASON_GPU_MISSING);
        assert_false(gv_reason_retryable(GV_REASON_GPU_MISSING));
        assert_non_null(strstr(w->err->msg, "NVML sees 2 GPU(s), 3 expected"));
        assert_non_null(strstr(w->err->msg, "3 NVIDIA GPU(s) under"));
        assert_non_null(strstr(w->err->msg, "not seen by NVML: 0000:12:00.0"));
        assert_null(strstr(w->err->msg, "0000:10:00.0"));
        assert_null(strstr(w->err->msg, "12:00.4"));
        setenv("FAKE_NVML_COUNT", "3", 1);
        expect_ok(w);
        assert_string_equal(fact(w, "GPU_COUNT"), "3");
}

static void test_expected_gpus_higher_than_nvml(void **state)
{
        world_t *w = *state;
        make_root(w->host, 2, NODES_FILES, NULL, NULL);
        w->cfg.driver.expected_gpus = 3;
        expect_fail(w, GV_REASON_GPU_MISSING);
        assert_non_null(strstr(w->err->msg, "NVML sees 2 GPU(s), 3 expected (--expected-gpus / EXPECTED_GPU_COUNT)"));
        w->cfg.driver.expected_gpus = 2;
        expect_ok(w);
        /* a mock root under the default /sys: the machine's own PCI bus does not count */
        w->cfg.driver.expected_gpus = 0;
        w->cfg.sandbox.sysfs_root = "/sys";
        expect_ok(w);
}

int main(int argc, char **argv)
{
        if (!driver_test_args(argc, argv))
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_fabric_in_progress_names_each_gpu),
                T(test_fabric_completed_or_absent_passes),
                T(test_fabric_completed_with_error_fails),
                T(test_gpu_missing_from_nvml_present_on_pci),
                T(test_expected_gpus_higher_than_nvml),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
