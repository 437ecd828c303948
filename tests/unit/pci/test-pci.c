/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sysfs PCI scan (src/pci/pci.h) on fake sysfs trees: which functions are NVIDIA GPUs (the
 * class without its programming interface), what fails the scan (an unreadable vendor or class,
 * naming the file) and what does not (an entry that went away, a missing bus).  The details the
 * sandbox components read are tested in tests/unit/components/test-sandbox.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "pci/pci.h"

#include "../scratch.h"

typedef struct {
        char *root; /* fake sysfs root */
} fixture_t;

static void write_text(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/*
 * One PCI function as real sysfs has it: the folder under devices/pci0000:00
 * and a symlink to it in bus/pci/devices.  @vendor / @class NULL: file absent.
 */
static void add_function(fixture_t *fx, const char *bdf, const char *vendor, const char *class)
{
        _cleanup_free_ char *real = NULL, *link = NULL, *target = NULL;
        assert_true(asprintf(&real, "%s/devices/pci0000:00/%s", fx->root, bdf) > 0);
        assert_true(asprintf(&link, "%s/bus/pci/devices/%s", fx->root, bdf) > 0);
        assert_true(asprintf(&target, "../../../devices/pci0000:00/%s", bdf) > 0);
        assert_int_equal(gv_mkdir_p(real, 0755, NULL), 0);
        if (vendor)
                write_text(real, "vendor", vendor);
        if (class)
                write_text(real, "class", class);
        assert_int_equal(symlink(target, link), 0);
}

static int setup(void **state)
{
        fixture_t *fx = calloc(1, sizeof(*fx));
        char tmpl[] = "/tmp/gv-pci-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        fx->root = strdup(tmpl);
        _cleanup_free_ char *bus = gv_path_join(fx->root, "bus/pci/devices");
        assert_int_equal(gv_mkdir_p(bus, 0755, NULL), 0);
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        fixture_t *fx = *state;
        scratch_rm_rf(fx->root);
        free(fx->root);
        free(fx);
        return 0;
}

static int count(fixture_t *fx)
{
        _cleanup_error_ gv_error_t *err = NULL;
        int n = gv_pci_count_gpus(fx->root, &err);
        if (n < 0)
                fail_msg("count failed: %s", err ? err->msg : "?");
        assert_null(err);
        return n;
}

static void test_empty_bus(void **state)
{
        assert_int_equal(count(*state), 0);
}

/* A Turing card has four functions; only its VGA function is a GPU. */
static void test_turing_four_functions_count_one(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:01:00.0", "0x10de\n", "0x030000\n"); /* VGA */
        add_function(fx, "0000:01:00.1", "0x10de\n", "0x040300\n"); /* HD audio */
        add_function(fx, "0000:01:00.2", "0x10de\n", "0x0c0330\n"); /* USB 3 xHCI */
        add_function(fx, "0000:01:00.3", "0x10de\n", "0x0c8000\n"); /* USB-C UCSI serial bus */
        assert_int_equal(count(fx), 1);
}

static void test_nvidia_bridge_counts_zero(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:02:00.0", "0x10de\n", "0x060400\n"); /* PCI bridge (NVSwitch/PLX) */
        add_function(fx, "0000:02:01.0", "0x10de\n", "0x068000\n"); /* other bridge */
        assert_int_equal(count(fx), 0);
}

static void test_3d_controller_counts_one(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:3b:00.0", "0x10de\n", "0x030200\n"); /* data-centre GPU */
        assert_int_equal(count(fx), 1);
}

static void test_mixed_node(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:00:02.0", "0x8086\n", "0x030000\n"); /* Intel iGPU: not NVIDIA */
        add_function(fx, "0000:03:00.0", "0x1002\n", "0x030000\n"); /* AMD */
        add_function(fx, "0000:17:00.0", "0x10de\n", "0x030200\n");
        add_function(fx, "0000:31:00.0", "0x10de\n", "0x030200\n");
        add_function(fx, "0000:b1:00.0", "0x10de\n", "0x030000\n");
        add_function(fx, "0000:b1:00.1", "0x10de\n", "0x040300\n");
        add_function(fx, "0000:c0:00.0", "0x10de\n", "0x030100\n"); /* XGA: not counted */
        add_function(fx, "0000:c1:00.0", "0x10de\n", "0x038000\n"); /* other display: not counted */
        assert_int_equal(count(fx), 3);
}

/* An unreadable or malformed vendor or class fails the scan, naming the file, as go-nvlib's nvpci. */
static void expect_failure(fixture_t *fx, const char *file)
{
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_pci_count_gpus(fx->root, &err), -EIO);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_IO);
        if (!strstr(err->msg, file))
                fail_msg("%s does not name %s", err->msg, file);
}

static void test_unreadable_vendor_fails(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:17:00.0", "0x10de\n", "0x030200\n");
        add_function(fx, "0000:05:00.0", NULL, "0x030000\n");
        expect_failure(fx, "0000:05:00.0/vendor");
}

static void test_malformed_vendor_fails(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:06:00.0", "garbage\n", "0x030000\n");
        expect_failure(fx, "0000:06:00.0/vendor");
}

static void test_unreadable_class_fails(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:04:00.0", "0x10de\n", NULL);
        expect_failure(fx, "0000:04:00.0/class");
}

static void test_malformed_class_fails(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:07:00.0", "0x10de\n", "0x0302zz\n");
        expect_failure(fx, "0000:07:00.0/class");
}

/* Another vendor's class is none of the scan's business; an entry that went away is passed over. */
static void test_other_vendor_class_and_vanished_entry(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:03:00.0", "0x8086\n", NULL);          /* not NVIDIA: class unread */
        add_function(fx, "0000:08:00.0", "0x10de", "0x030000");      /* no newline: fine */
        _cleanup_free_ char *dangling = NULL;
        assert_true(asprintf(&dangling, "%s/bus/pci/devices/0000:09:00.0", fx->root) > 0);
        assert_int_equal(symlink("../../../devices/nowhere", dangling), 0);
        assert_int_equal(count(fx), 1);
}

/* No bus/pci/devices: -ENOENT naming the folder, or an empty list when the caller asks so. */
static void test_missing_bus(void **state)
{
        fixture_t *fx = *state;
        _cleanup_free_ char *nowhere = gv_path_join(fx->root, "no-such-sysfs");
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_pci_count_gpus(nowhere, &err), -ENOENT);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_IO);
        assert_non_null(strstr(err->msg, "bus/pci/devices"));
        _cleanup_(gv_pci_list_clear) gv_pci_list_t l = { .n = 99 };
        assert_int_equal(gv_pci_list_gpus(nowhere, &l, NULL), 0);
        assert_int_equal(l.n, 0);
        assert_int_equal(gv_pci_count_vendor(nowhere, GV_PCI_VENDOR_MELLANOX), 0);
}

/* The list: sorted by address, class and vendor kept, details only when asked. */
static void test_scan_list(void **state)
{
        fixture_t *fx = *state;
        add_function(fx, "0000:b1:00.0", "0x10de\n", "0x030000\n");
        add_function(fx, "0000:17:00.0", "0x10de\n", "0x030200\n");
        add_function(fx, "0000:17:00.1", "0x10de\n", "0x040300\n");
        _cleanup_(gv_pci_list_clear) gv_pci_list_t l = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_pci_scan(fx->root, GV_PCI_VENDOR_NVIDIA, 0, &l, &err), 0);
        assert_int_equal(l.n, 3);
        assert_string_equal(l.items[0].address, "0000:17:00.0");
        assert_string_equal(l.items[1].address, "0000:17:00.1");
        assert_int_equal(l.items[1].class, 0x040300);
        assert_int_equal(l.items[2].vendor, GV_PCI_VENDOR_NVIDIA);
        assert_null(l.items[0].driver);
        assert_int_equal(l.items[0].sriov_numvfs, -1);
        gv_pci_list_clear(&l);
        assert_int_equal(gv_pci_list_gpus(fx->root, &l, &err), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(gv_pci_count_vendor(fx->root, GV_PCI_VENDOR_MELLANOX), 0);
        assert_int_equal(gv_pci_count_vendor(fx->root, GV_PCI_VENDOR_NVIDIA), 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_empty_bus, setup, teardown),
                cmocka_unit_test_setup_teardown(test_turing_four_functions_count_one, setup, teardown),
                cmocka_unit_test_setup_teardown(test_nvidia_bridge_counts_zero, setup, teardown),
                cmocka_unit_test_setup_teardown(test_3d_controller_counts_one, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mixed_node, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable_vendor_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_malformed_vendor_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable_class_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_malformed_class_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_other_vendor_class_and_vanished_entry, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_bus, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_list, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
