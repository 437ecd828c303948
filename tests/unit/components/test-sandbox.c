/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the sandbox/GPUDirect helpers (src/components/sandbox.c):
 * the .driver-ctr-ready flag reader, module state, PCI enumeration under a
 * sysfs root, the workload config without a node, and workload-type.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "components/sandbox.h"
#include "components-test.h"

static int flag(const char *text, const char *key, gv_error_t **err)
{
        return gv_driver_ctr_flag_parse(text, strlen(text), key, "f", err);
}

static void test_ctr_flags(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        const char *upstream = "GDS_ENABLED: true\nGDRCOPY_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: True\n";
        assert_int_equal(flag(upstream, "GDS_ENABLED", &err), 1);
        assert_int_equal(flag(upstream, "GDRCOPY_ENABLED", &err), 0);
        assert_int_equal(flag(upstream, "GPU_DIRECT_RDMA_ENABLED", &err), 1);
        assert_int_equal(flag(upstream, "GDS", &err), 0); /* a prefix is not the key */
        assert_int_equal(flag("", "GDS_ENABLED", &err), 0);
        assert_null(err);
        assert_int_equal(flag("GDRCOPY_ENABLED: true\nGDS_ENABLED: maybe\n", "GDS_ENABLED", &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "f: line 2: GDS_ENABLED: 'maybe' is not true or false"));
        gv_error_free(&err);
        assert_int_equal(flag("GDS_ENABLED: [true\n", "GDS_ENABLED", &err), -EINVAL);
        assert_non_null(strstr(err->msg, "f: line"));
        gv_error_free(&err);
        assert_int_equal(flag("- a\n- b\n", "GDS_ENABLED", &err), -EINVAL);
        gv_error_free(&err);
        assert_int_equal(gv_driver_ctr_flag_parse("GDS_ENABLED: true\0", 18, "GDS_ENABLED", "f", &err), -EINVAL);
        gv_error_free(&err);
}

static void test_modules(void **state)
{
        (void) state;
        _cleanup_free_ char *root = th_tmpdir();
        th_write(root, "module/gdrdrv/initstate", "live\n", 0644);
        th_write(root, "module/nvidia_peermem/initstate", "coming\n", 0644);
        th_mkdirs(root, "module/nvidia_fs"); /* no initstate (built in): loaded */
        _cleanup_free_ char *d = NULL;
        assert_true(gv_module_loaded(root, "gdrdrv", NULL));
        assert_true(gv_module_loaded(root, "nvidia_fs", NULL));
        assert_false(gv_module_loaded(root, "nvidia_peermem", &d));
        assert_non_null(strstr(d, "initstate coming"));
        free(d);
        d = NULL;
        assert_false(gv_module_loaded(root, "mlx5_core", &d));
        assert_non_null(strstr(d, "is absent"));
        th_rm_rf(root);
}

static void add_fn(const char *root, const char *addr, const char *vendor, const char *cls)
{
        _cleanup_free_ char *dev = NULL, *v = NULL, *c = NULL, *link = NULL;
        assert_true(asprintf(&dev, "devices/pci0000:00/%s", addr) > 0);
        assert_true(asprintf(&v, "%s/vendor", dev) > 0);
        assert_true(asprintf(&c, "%s/class", dev) > 0);
        th_write(root, v, vendor, 0644);
        th_write(root, c, cls, 0644);
        assert_true(asprintf(&link, "bus/pci/devices/%s", addr) > 0);
        _cleanup_free_ char *target = NULL;
        assert_true(asprintf(&target, "../../../devices/pci0000:00/%s", addr) > 0);
        th_symlink(target, root, link);
}

static void test_pci_list(void **state)
{
        (void) state;
        _cleanup_free_ char *root = th_tmpdir();
        gv_pci_list_t l = { 0 };
        gv_error_t *err = NULL;
        assert_int_equal(gv_pci_list_gpus(root, &l, &err), 0); /* no bus folder: empty */
        assert_int_equal(l.n, 0);
        add_fn(root, "0000:86:00.0", "0x10de\n", "0x030200\n");
        add_fn(root, "0000:3b:00.0", "0x10de\n", "0x030000\n");
        add_fn(root, "0000:3b:00.4", "0x10de\n", "0x030200\n");
        add_fn(root, "0000:04:00.0", "0x10de\n", "0x068000\n"); /* NVSwitch: not a GPU */
        add_fn(root, "0000:05:00.0", "0x10de\n", "0x040300\n"); /* audio function */
        add_fn(root, "0000:5e:00.0", "0x15b3\n", "0x020000\n");
        th_symlink("../0000:3b:00.0", root, "devices/pci0000:00/0000:3b:00.4/physfn");
        th_write(root, "devices/pci0000:00/0000:3b:00.0/sriov_numvfs", "1\n", 0644);
        th_write(root, "devices/pci0000:00/0000:3b:00.0/sriov_totalvfs", "16\n", 0644);
        th_write(root, "devices/pci0000:00/0000:86:00.0/mdev_supported_types/nvidia-222/name", "GRID T4-1Q\n", 0644);
        th_mkdirs(root, "bus/pci/drivers/vfio-pci");
        th_symlink("../../../bus/pci/drivers/vfio-pci", root, "devices/pci0000:00/0000:86:00.0/driver");
        assert_int_equal(gv_pci_list_gpus(root, &l, &err), 0);
        assert_int_equal(l.n, 3);
        assert_string_equal(l.items[0].address, "0000:3b:00.0"); /* sorted */
        assert_null(l.items[0].physfn);
        assert_int_equal(l.items[0].sriov_numvfs, 1);
        assert_int_equal(l.items[0].sriov_totalvfs, 16);
        assert_false(l.items[0].mdev_parent);
        assert_null(l.items[0].driver);
        assert_string_equal(l.items[1].address, "0000:3b:00.4");
        assert_string_equal(l.items[1].physfn, "0000:3b:00.0");
        assert_int_equal(l.items[1].sriov_totalvfs, -1);
        assert_string_equal(l.items[2].address, "0000:86:00.0");
        assert_string_equal(l.items[2].driver, "vfio-pci");
        assert_true(l.items[2].mdev_parent);
        assert_int_equal(l.items[2].mdev_types, 1);
        gv_pci_list_clear(&l);
        assert_int_equal(gv_pci_count_vendor(root, GV_PCI_VENDOR_MELLANOX), 1);
        /* an unreadable vendor fails the enumeration, naming the file (as go-nvlib) */
        th_write(root, "devices/pci0000:00/0000:5e:00.0/vendor", "bogus\n", 0644);
        assert_int_equal(gv_pci_list_gpus(root, &l, &err), -EIO);
        assert_non_null(strstr(err->msg, "0000:5e:00.0/vendor"));
        gv_error_free(&err);
        th_rm_rf(root);
}

static void test_workload_config_without_node(void **state)
{
        (void) state;
        gv_config_t cfg = { 0 };
        const char *config = NULL, *source = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_workload_config(&cfg, "t", &config, &source, &err), 0);
        assert_string_equal(config, "vm-passthrough");
        assert_string_equal(source, "default");
        cfg.sandbox.default_workload_config = "vm-vgpu";
        assert_int_equal(gv_workload_config(&cfg, "t", &config, &source, &err), 0);
        assert_string_equal(config, "vm-vgpu");
        assert_string_equal(source, "DEFAULT_GPU_WORKLOAD_CONFIG");
        cfg.sandbox.default_workload_config = "VM-VGPU"; /* not allowed: upstream's default */
        assert_int_equal(gv_workload_config(&cfg, "t", &config, &source, &err), 0);
        assert_string_equal(config, "vm-passthrough");
}

static void test_workload_type_file(void **state)
{
        (void) state;
        _cleanup_free_ char *dir = th_tmpdir();
        gv_store_t *s = th_store_open(dir);
        gv_error_t *err = NULL;
        assert_int_equal(gv_store_write_workload_type(s, "vm-vgpu", &err), 0);
        _cleanup_free_ char *out = th_path(dir, "out");
        assert_true(th_exists(out, "workload-type"));
        assert_int_equal(gv_store_write_workload_type(s, "vm-typo", &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        gv_error_free(&err);
        assert_int_equal(gv_store_cleanup(s, &err), 0);
        assert_true(th_exists(out, "workload-type")); /* not a marker: cleanup leaves it */
        gv_store_close(&s);
        th_rm_rf(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ctr_flags),
                cmocka_unit_test(test_modules),
                cmocka_unit_test(test_pci_list),
                cmocka_unit_test(test_workload_config_without_node),
                cmocka_unit_test(test_workload_type_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
