/* SPDX-License-Identifier: Apache-2.0 */
/* gv_metrics_collect against a real marker store in a temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "metrics/metrics.h"
#include "metrics-test.h"
#include "../store-fixture.h"

static int setup(void **state)
{
        return store_fixture_setup(state, "gv-collect");
}

#define teardown store_fixture_teardown





static void publish(fixture_t *fx, gv_marker_id_t id, const char *const *kv)
{
        gv_kvlist_t facts = { 0 };
        for (size_t i = 0; kv && kv[i]; i += 2)
                assert_int_equal(gv_kvlist_set(&facts, kv[i], kv[i + 1], NULL), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_store_publish(fx->store, id, &facts, false, NULL, NULL, &err) < 0)
                fail_msg("publish %s: %s", gv_marker_file(id), err->msg);
        gv_kvlist_clear(&facts);
}

static void collect(gv_store_t *store, const char *sysfs, gv_metrics_snapshot_t *s)
{
        gv_metrics_snapshot_init(s, "n1", "v");
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_metrics_collect(store, sysfs, s, &err) < 0)
                fail_msg("collect: %s", err->msg);
}

static void publish_chain(fixture_t *fx)
{
        static const char *const driver[] = { "GPU_COUNT", "4", "VALIDATION_DURATION_SECONDS", "1.5", NULL };
        static const char *const plugin[] = { "DEVICE_PLUGIN_DEVICES", "4", NULL };
        publish(fx, GV_MARKER_DRIVER, driver);
        publish(fx, GV_MARKER_TOOLKIT, NULL);
        publish(fx, GV_MARKER_CUDA, NULL);
        publish(fx, GV_MARKER_PLUGIN, plugin);
}

static void test_no_store_all_missing(void **state)
{
        (void) state;
        gv_metrics_snapshot_t s;
        collect(NULL, NULL, &s);
        for (int i = 0; i < GV_MARKER__MAX; i++)
                assert_int_equal(s.markers[i].state, GV_MARKER_MISSING);
        assert_false(s.have_nvml_gpus);
        assert_false(s.have_pci_gpus);
        assert_string_equal(s.node, "n1");
}

static void test_empty_folder_all_missing(void **state)
{
        fixture_t *fx = *state;
        gv_metrics_snapshot_t s;
        collect(fx->store, NULL, &s);
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                assert_int_equal(s.markers[i].state, GV_MARKER_MISSING);
                assert_false(s.markers[i].have_validated_at);
        }
}

static void test_ready_chain_and_facts(void **state)
{
        fixture_t *fx = *state;
        time_t before = time(NULL);
        publish_chain(fx);
        gv_metrics_snapshot_t s;
        collect(fx->store, NULL, &s);
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                bool published = i == GV_MARKER_DRIVER || i == GV_MARKER_TOOLKIT || i == GV_MARKER_CUDA ||
                                 i == GV_MARKER_PLUGIN;
                assert_int_equal(s.markers[i].state, published ? GV_MARKER_READY : GV_MARKER_MISSING);
                assert_int_equal(s.markers[i].have_validated_at, published);
                if (published) {
                        assert_true(s.markers[i].validated_at >= (double) before - 1);
                        assert_true(s.markers[i].validated_at <= (double) time(NULL) + 1);
                }
        }
        assert_true(s.have_nvml_gpus);
        assert_int_equal(s.nvml_gpus, 4);
        assert_int_equal(s.plugin_devices, 4);
        assert_true(s.markers[GV_MARKER_DRIVER].have_duration);
        assert_true(s.markers[GV_MARKER_DRIVER].duration_s == 1.5);
        assert_false(s.markers[GV_MARKER_TOOLKIT].have_duration);
}

static void test_stale_other_boot(void **state)
{
        fixture_t *fx = *state;
        publish_chain(fx);
        gv_store_t *other = NULL;
        gv_store_options_t o = { .dir = fx->dir, .boot_id_path = fx->boot2 };
        assert_int_equal(gv_store_open(&o, &other, NULL), 0);
        gv_metrics_snapshot_t s;
        collect(other, NULL, &s);
        gv_store_close(&other);
        assert_int_equal(s.markers[GV_MARKER_DRIVER].state, GV_MARKER_STALE);
        assert_true(s.markers[GV_MARKER_DRIVER].have_validated_at); /* the last success is still known */
        assert_false(s.have_nvml_gpus);                              /* but its GPU count is not current */
        assert_int_equal(s.plugin_devices, 0);
        assert_int_not_equal(s.markers[GV_MARKER_PLUGIN].state, GV_MARKER_READY);
}

static void test_inconsistent_and_foreign(void **state)
{
        fixture_t *fx = *state;
        publish_chain(fx);
        publish(fx, GV_MARKER_DRIVER, NULL); /* driver re-validated alone: new generation */
        _cleanup_free_ char *touched = gv_path_join(fx->dir, "gdrcopy-ready");
        write_file(touched, ""); /* touch */
        gv_metrics_snapshot_t s;
        collect(fx->store, NULL, &s);
        assert_int_equal(s.markers[GV_MARKER_DRIVER].state, GV_MARKER_READY);
        assert_false(s.have_nvml_gpus); /* the new driver-ready has no GPU_COUNT */
        /* gv_store_publish(driver) removes downstream first: they are missing, not inconsistent */
        assert_int_equal(s.markers[GV_MARKER_GDRCOPY].state, GV_MARKER_FOREIGN);
        assert_false(s.markers[GV_MARKER_GDRCOPY].have_validated_at);
}

static void test_hand_edited_generation_is_inconsistent(void **state)
{
        fixture_t *fx = *state;
        publish_chain(fx);
        /* rewrite toolkit-ready with another DRIVER_GENERATION, as a racing old writer would leave it */
        _cleanup_free_ char *path = gv_path_join(fx->dir, "toolkit-ready");
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, path, true, 65536, &text, NULL, NULL), 0);
        char *g = strstr(text, "DRIVER_GENERATION=");
        assert_non_null(g);
        g += strlen("DRIVER_GENERATION=");
        *g = *g == '0' ? '1' : '0';
        write_file(path, text);
        gv_metrics_snapshot_t s;
        collect(fx->store, NULL, &s);
        assert_int_equal(s.markers[GV_MARKER_TOOLKIT].state, GV_MARKER_INCONSISTENT);
        assert_true(s.markers[GV_MARKER_TOOLKIT].have_validated_at);
        assert_int_equal(s.markers[GV_MARKER_CUDA].state, GV_MARKER_INCONSISTENT);
        assert_int_equal(s.markers[GV_MARKER_PLUGIN].state, GV_MARKER_INCONSISTENT);
        assert_int_equal(s.plugin_devices, 0);
}

static void test_pci_counted_from_sysfs_root(void **state)
{
        fixture_t *fx = *state;
        _cleanup_free_ char *dev = gv_path_join(fx->root, "sys/bus/pci/devices/0000:01:00.0");
        assert_int_equal(gv_mkdir_p(dev, 0755, NULL), 0);
        _cleanup_free_ char *vendor = gv_path_join(dev, "vendor"), *class = gv_path_join(dev, "class");
        write_file(vendor, "0x10de\n");
        write_file(class, "0x030200\n");
        _cleanup_free_ char *sys = gv_path_join(fx->root, "sys");
        gv_metrics_snapshot_t s;
        collect(fx->store, sys, &s);
        assert_true(s.have_pci_gpus);
        assert_int_equal(s.pci_gpus, 1);
        _cleanup_free_ char *nosys = gv_path_join(fx->root, "nosys");
        collect(fx->store, nosys, &s);
        assert_false(s.have_pci_gpus);
}

/* The watcher's counters file is read beside the markers; a bad one leaves the series out, the page whole. */
static void test_revalidation_counters(void **state)
{
        fixture_t *fx = *state;
        gv_metrics_snapshot_t s;
        collect(fx->store, NULL, &s);
        assert_false(s.revalidations.present);
        gv_revalidations_t c = { .present = true, .count = { 1, 2, 3, 4 } };
        assert_int_equal(gv_revalidations_write(fx->dir, &c, NULL), 0);
        collect(fx->store, NULL, &s);
        assert_true(s.revalidations.present);
        assert_int_equal(s.revalidations.count[GV_REVAL_GENERATION_CHANGED], 4);
        _cleanup_free_ char *path = NULL;
        assert_true(asprintf(&path, "%s/%s", fx->dir, GV_REVALIDATIONS_FILE) > 0);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("DRIVER_CONTAINER_RESTART=many\n", f);
        fclose(f);
        collect(fx->store, NULL, &s);
        assert_false(s.revalidations.present);
        assert_int_equal(s.markers[GV_MARKER_DRIVER].state, GV_MARKER_MISSING);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_no_store_all_missing),
                cmocka_unit_test_setup_teardown(test_empty_folder_all_missing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_ready_chain_and_facts, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_other_boot, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inconsistent_and_foreign, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hand_edited_generation_is_inconsistent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pci_counted_from_sysfs_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_revalidation_counters, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
