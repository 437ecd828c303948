/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the marker store tests: a scratch folder with a boot id file and an open store. */
#ifndef GV_TEST_MARKERS_HELPERS_H
#define GV_TEST_MARKERS_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "markers/markers.h"

#include "../scratch.h"

#define BOOT_A "0f3c2a4e-1111-4a5b-9c8d-aaaaaaaaaaaa"
#define BOOT_B "0f3c2a4e-2222-4a5b-9c8d-bbbbbbbbbbbb"

typedef struct fixture {
        char *root; /* scratch folder */
        char *dir;  /* root/validations, the store's folder */
        char *boot; /* root/boot_id holding BOOT_A */
        gv_store_t *s;
} fixture_t;

static inline char *fx_path(const fixture_t *fx, const char *name)
{
        char *p = gv_path_join(fx->dir, name);
        assert_non_null(p);
        return p;
}

static inline void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* Heap copy of a file's content, or NULL when it cannot be read. */
static inline char *read_text(const char *path)
{
        char *buf = NULL;
        gv_error_t *e = NULL;
        if (gv_read_file_at(AT_FDCWD, path, true, 1 << 20, &buf, NULL, &e) < 0) {
                gv_error_free(&e);
                return NULL;
        }
        return buf;
}

static inline bool fx_exists(const fixture_t *fx, gv_marker_id_t id)
{
        _cleanup_free_ char *p = fx_path(fx, gv_marker_file(id));
        struct stat st;
        return lstat(p, &st) == 0;
}

static inline gv_store_t *open_store_at(const char *dir, const char *boot, bool allow_missing)
{
        gv_store_options_t o = { .dir = dir, .boot_id_path = boot, .validator_version = "9.9.9-test",
                                 .allow_missing = allow_missing };
        gv_store_t *s = NULL;
        gv_error_t *e = NULL;
        int r = gv_store_open(&o, &s, &e);
        if (r < 0)
                fprintf(stderr, "# gv_store_open: %s\n", e->msg);
        gv_error_free(&e);
        assert_int_equal(r, 0);
        return s;
}

static inline int fx_setup(void **state)
{
        fixture_t *fx = calloc(1, sizeof(*fx));
        assert_non_null(fx);
        const char *tmp = getenv("TMPDIR");
        fx->root = gv_path_join(tmp && *tmp ? tmp : "/tmp", "gv-markers-XXXXXX");
        assert_non_null(mkdtemp(fx->root));
        fx->dir = gv_path_join(fx->root, "validations");
        fx->boot = gv_path_join(fx->root, "boot_id");
        assert_int_equal(mkdir(fx->dir, 0755), 0);
        write_text(fx->boot, BOOT_A "\n");
        fx->s = open_store_at(fx->dir, fx->boot, false);
        *state = fx;
        return 0;
}

static inline int fx_teardown(void **state)
{
        fixture_t *fx = *state;
        gv_store_close(&fx->s);
        scratch_rm_rf(fx->root);
        free(fx->root);
        free(fx->dir);
        free(fx->boot);
        free(fx);
        return 0;
}

/* Publish @id with no facts; asserts success; returns the generation in @gen (may be NULL). */
static inline void publish_ok(gv_store_t *s, gv_marker_id_t id, char *gen)
{
        gv_error_t *e = NULL;
        char g[GV_GENERATION_HEX_LEN + 1];
        int r = gv_store_publish(s, id, NULL, false, NULL, g, &e);
        if (r < 0)
                fprintf(stderr, "# publish %s: %s\n", gv_marker_file(id), e->msg);
        gv_error_free(&e);
        assert_int_equal(r, 0);
        if (gen)
                memcpy(gen, g, sizeof(g));
}

static inline gv_marker_state_t state_of(gv_store_t *s, gv_marker_id_t id)
{
        gv_marker_info_t mi = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_store_inspect(s, id, &mi, &e), 0);
        gv_marker_state_t st = mi.state;
        gv_marker_info_clear(&mi);
        return st;
}

/* Publish each marker of @ids, a list ending in GV_MARKER_INVALID, in order (as publish_ok()). */
static inline void publish_each(gv_store_t *s, const gv_marker_id_t *ids)
{
        for (; *ids != GV_MARKER_INVALID; ids++)
                publish_ok(s, *ids, NULL);
}

/* PUBLISH(store, GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, ...): publish_each() of the markers named. */
#define PUBLISH(s, ...) publish_each((s), (const gv_marker_id_t[]){ __VA_ARGS__, GV_MARKER_INVALID })

/* Publish every marker of the chain, upstream first. */
static inline void publish_chain(fixture_t *fx)
{
        PUBLISH(fx->s, GV_MARKER_DRIVER, GV_MARKER_TOOLKIT, GV_MARKER_CUDA, GV_MARKER_PLUGIN, GV_MARKER_NVIDIA_FS,
                GV_MARKER_GDRCOPY, GV_MARKER_NVIDIA_PEERMEM, GV_MARKER_MOFED, GV_MARKER_CC_MANAGER,
                GV_MARKER_VFIO_PCI, GV_MARKER_VGPU_MANAGER, GV_MARKER_VGPU_DEVICES);
}

#endif
