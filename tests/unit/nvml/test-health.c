/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU health monitor (src/nvml/health.c) with the project's mock
 * libnvidia-ml.so.1 (path in argv[1]): Xid events appended to the mock's Xid
 * control file, GPUs lost and back through its state file (what `mock set`
 * writes; docs/mock-nvml.md, Faults), and the pure helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nvml/nvml.h"
#include "../mock-state-file.h"

static const char *mock_lib;

typedef struct world {
        char dir[64];
        char xid[96], state[96];
        gv_gpu_health_t *h;
} world_t;

static void append(const char *path, const char *text)
{
        FILE *f = fopen(path, "a");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
        world_t *w = calloc(1, sizeof(*w));
        snprintf(w->dir, sizeof(w->dir), "/tmp/gv-health-XXXXXX");
        assert_non_null(mkdtemp(w->dir));
        snprintf(w->xid, sizeof(w->xid), "%s/xid", w->dir);
        snprintf(w->state, sizeof(w->state), "%s/state", w->dir);
        append(w->xid, "");
        setenv("MOCK_NVML_NUM_DEVICES", "3", 1);
        setenv("MOCK_NVML_XID_FILE", w->xid, 1);
        setenv("MOCK_NVML_STATE_FILE", w->state, 1);
        setenv("MOCK_NVML_DEV_DIR", "", 1);
        unsetenv("MOCK_NVML_LOST_GPUS");
        unsetenv("MOCK_NVML_CONFIG");
        unsetenv("MOCK_NVML_INIT_ERROR");
        *state = w;
        return 0;
}

static int teardown(void **state)
{
        world_t *w = *state;
        gv_gpu_health_close(&w->h);
        unlink(w->xid);
        unlink(w->state);
        rmdir(w->dir);
        free(w);
        return 0;
}

static void open_monitor(world_t *w, const gv_xid_filter_t *f)
{
        gv_error_t *err = NULL;
        int r = gv_gpu_health_open(mock_lib, f, &w->h, &err);
        if (r < 0)
                fail_msg("gv_gpu_health_open: %s", err->msg);
        assert_non_null(w->h);
        assert_string_equal(gv_gpu_health_lib(w->h), mock_lib);
}

static void test_identities_and_a_quiet_probe(void **state)
{
        world_t *w = *state;
        open_monitor(w, NULL);
        size_t n = 0;
        const gv_gpu_note_t *g = gv_gpu_health_notes(w->h, &n);
        assert_int_equal(n, 3);
        assert_int_equal(gv_gpu_health_events(w->h), 3);
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(g[i].index, i);
                assert_memory_equal(g[i].uuid, "GPU-", 4);
                assert_memory_equal(g[i].bus_id, "00000000:", 9);
                assert_false(g[i].lost);
                assert_int_equal(g[i].xid, 0);
        }
        gv_gpu_probe_t p;
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, -1);
        assert_false(p.lost_changed);
        assert_int_equal(p.xid_gpu, -1);
        assert_int_equal(p.n_xids, 0);
        assert_int_equal(p.wait_error, NVML_SUCCESS);
}

static void test_xids_application_errors_skipped(void **state)
{
        world_t *w = *state;
        open_monitor(w, NULL);
        append(w->xid, "1 13\n2 31\n0 109\n");
        gv_gpu_probe_t p;
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.xid_gpu, -1);
        assert_int_equal(p.n_skipped, 3);
        append(w->xid, "2 48\n1 13\n1 94\n");
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.xid_gpu, 2);
        assert_int_equal(p.xid, 48);
        assert_int_equal(p.n_xids, 2);
        assert_int_equal(p.n_skipped, 1);
        size_t n = 0;
        const gv_gpu_note_t *g = gv_gpu_health_notes(w->h, &n);
        assert_int_equal(g[2].xid, 48);
        assert_int_equal(g[1].xid, 94);
        assert_int_equal(g[0].xid, 0);
        /* taken once: the next probe is quiet */
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.xid_gpu, -1);
        assert_int_equal(p.n_xids, 0);
}

static void test_filter(void **state)
{
        world_t *w = *state;
        const unsigned more[] = { 63, 64 };
        gv_xid_filter_t f = { .ignored = more, .n_ignored = 2 };
        open_monitor(w, &f);
        append(w->xid, "0 63\n0 64\n");
        gv_gpu_probe_t p;
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.xid_gpu, -1);
        assert_int_equal(p.n_skipped, 2);
        append(w->xid, "0 79\n");
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.xid_gpu, 0);
        assert_int_equal(p.xid, 79);

        assert_false(gv_xid_is_critical(NULL, 13));
        assert_true(gv_xid_is_critical(NULL, 79));
        gv_xid_filter_t all = { .ignore_all = true };
        assert_false(gv_xid_is_critical(&all, 79));
        assert_true(gv_xid_is_critical(&f, 48));
        assert_false(gv_xid_is_critical(&f, 64));
}

static void test_lost_and_back(void **state)
{
        world_t *w = *state;
        open_monitor(w, NULL);
        /* what `mock set --gpu 1 fault=fell-off-the-bus` writes: Xid 79 first, then the GPU lost */
        append(w->xid, "1 79\n");
        th_replace_state(w->state, "1 lost=true\n");
        gv_gpu_probe_t p;
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, 1);
        assert_true(p.lost_changed);
        assert_int_equal(p.xid_gpu, 1);
        assert_int_equal(p.xid, 79);
        size_t n = 0;
        const gv_gpu_note_t *g = gv_gpu_health_notes(w->h, &n);
        assert_true(g[1].lost);
        assert_string_equal(g[1].lost_call, "nvmlDeviceGetHandleByIndex_v2");
        assert_memory_equal(g[1].uuid, "GPU-", 4); /* read at open, while it answered */
        char *name = gv_gpu_note_name(&g[1]);
        assert_non_null(name);
        char want[256];
        snprintf(want, sizeof(want), "GPU 1 (%s, bus id %s, Xid 79)", g[1].uuid, g[1].bus_id);
        assert_string_equal(name, want);
        free(name);
        /* still lost: no change */
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, 1);
        assert_false(p.lost_changed);
        /* a second GPU lost: a change */
        th_replace_state(w->state, "1 lost=true\n2 lost=true\n");
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, 1);
        assert_true(p.lost_changed);
        /* cleared (`mock set --clear`): every GPU answers, the Xid of the loss is forgotten */
        unlink(w->state);
        usleep(2000);
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, -1);
        assert_true(p.lost_changed);
        g = gv_gpu_health_notes(w->h, &n);
        assert_false(g[1].lost);
        assert_null(g[1].lost_call);
        assert_int_equal(g[1].xid, 0);
}

static void test_lost_at_open(void **state)
{
        world_t *w = *state;
        th_replace_state(w->state, "2 lost=true\n");
        open_monitor(w, NULL);
        size_t n = 0;
        const gv_gpu_note_t *g = gv_gpu_health_notes(w->h, &n);
        assert_true(g[2].lost);
        assert_string_equal(g[2].uuid, "");           /* unreadable once lost */
        assert_memory_equal(g[2].bus_id, "00000000:", 9); /* the PCI info still answers */
        assert_int_equal(gv_gpu_health_events(w->h), 2); /* a lost GPU is not registered */
        gv_gpu_probe_t p;
        gv_gpu_health_probe(w->h, &p);
        assert_int_equal(p.lost, 2);
        assert_false(p.lost_changed);
}

static void test_open_errors(void **state)
{
        world_t *w = *state;
        gv_error_t *err = NULL;
        assert_true(gv_gpu_health_open("/nonexistent/libnvidia-ml.so.1", NULL, &w->h, &err) < 0);
        assert_null(w->h);
        assert_int_equal(err->reason, GV_REASON_LIBRARY_NOT_FOUND);
        gv_error_free(&err);
        setenv("MOCK_NVML_INIT_ERROR", "driver-not-loaded", 1);
        assert_int_equal(gv_gpu_health_open(mock_lib, NULL, &w->h, &err), -EIO);
        assert_null(w->h);
        assert_int_equal(err->reason, GV_REASON_DRIVER_NOT_LOADED);
        assert_non_null(strstr(err->msg, "nvmlInit_v2"));
        gv_error_free(&err);
        unsetenv("MOCK_NVML_INIT_ERROR");
        /* NULL is accepted everywhere */
        gv_gpu_probe_t p;
        gv_gpu_health_probe(NULL, &p);
        assert_int_equal(p.lost, -1);
        size_t n = 7;
        assert_null(gv_gpu_health_notes(NULL, &n));
        assert_int_equal(n, 0);
        gv_gpu_health_close(NULL);
}

static void test_note_find_and_name(void **state)
{
        (void) state;
        gv_gpu_note_t notes[2] = {
                { .index = 0, .uuid = "GPU-a", .bus_id = "00000000:0B:00.0" },
                { .index = 1, .uuid = "GPU-b", .bus_id = "00000000:0C:00.0", .xid = 48 },
        };
        /* by bus id in any spelling, before the index */
        assert_ptr_equal(gv_gpu_note_find(notes, 2, 0, "0000:0c:00.0"), &notes[1]);
        assert_ptr_equal(gv_gpu_note_find(notes, 2, 1, "00000000:0B:00.0"), &notes[0]);
        /* a bus id no note has: not the index's note either (another GPU) */
        assert_null(gv_gpu_note_find(notes, 2, 1, "00000000:0D:00.0"));
        /* no bus id: the index */
        assert_ptr_equal(gv_gpu_note_find(notes, 2, 1, NULL), &notes[1]);
        assert_ptr_equal(gv_gpu_note_find(notes, 2, 0, ""), &notes[0]);
        assert_null(gv_gpu_note_find(notes, 2, 5, NULL));
        assert_null(gv_gpu_note_find(NULL, 0, 0, NULL));

        char *s = gv_gpu_note_name(&notes[1]);
        assert_string_equal(s, "GPU 1 (GPU-b, bus id 00000000:0C:00.0, Xid 48)");
        free(s);
        gv_gpu_note_t bare = { .index = 3 };
        s = gv_gpu_note_name(&bare);
        assert_string_equal(s, "GPU 3");
        free(s);
        gv_gpu_note_t bus = { .index = 2, .bus_id = "00000000:0D:00.0", .xid = 79 };
        s = gv_gpu_note_name(&bus);
        assert_string_equal(s, "GPU 2 (bus id 00000000:0D:00.0, Xid 79)");
        free(s);
        gv_gpu_note_t uuid = { .index = 2, .uuid = "GPU-c" };
        s = gv_gpu_note_name(&uuid);
        assert_string_equal(s, "GPU 2 (GPU-c)");
        free(s);

        assert_true(gv_nvml_same_bus_id("00000000:3B:00.0", "0000:3b:00.0"));
        assert_false(gv_nvml_same_bus_id("00000000:3B:00.0", "0000:3c:00.0"));
        assert_false(gv_nvml_same_bus_id("garbage", "0000:3c:00.0"));
        assert_false(gv_nvml_same_bus_id(NULL, "0000:3c:00.0"));
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: %s MOCK_LIBNVIDIA_ML\n", argv[0]);
                return 2;
        }
        mock_lib = argv[1];
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_identities_and_a_quiet_probe, setup, teardown),
                cmocka_unit_test_setup_teardown(test_xids_application_errors_skipped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lost_and_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lost_at_open, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
                cmocka_unit_test(test_note_find_and_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
