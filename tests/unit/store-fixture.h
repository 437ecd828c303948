/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A marker store in a fresh temporary folder, for unit tests of the modules
 * that read markers (metrics, nodesignal).  Include after <cmocka.h>.
 * Boot id files: `boot` (this boot) and `boot2` (another boot).
 */
#ifndef GV_TESTS_UNIT_STORE_FIXTURE_H
#define GV_TESTS_UNIT_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "markers/markers.h"
#include "scratch.h"

typedef struct {
        char *root;     /* the temporary folder */
        char *dir;      /* status folder */
        char *boot;     /* boot id file */
        char *boot2;    /* another boot */
        gv_store_t *store;
} fixture_t;

/* Write @text to @path, failing the test on error. */
static inline void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* cmocka setup: a writable store under /tmp/<prefix>-XXXXXX. */
static inline int store_fixture_setup(void **state, const char *prefix)
{
        fixture_t *fx = calloc(1, sizeof(*fx));
        assert_non_null(fx);
        char *tmpl = NULL;
        assert_true(asprintf(&tmpl, "/tmp/%s-XXXXXX", prefix) > 0);
        assert_non_null(mkdtemp(tmpl));
        fx->root = tmpl;
        fx->dir = gv_path_join(fx->root, "validations");
        fx->boot = gv_path_join(fx->root, "boot_id");
        fx->boot2 = gv_path_join(fx->root, "boot_id2");
        write_file(fx->boot, "11111111-2222-3333-4444-555555555555\n");
        write_file(fx->boot2, "99999999-2222-3333-4444-555555555555\n");
        gv_store_options_t o = { .dir = fx->dir, .boot_id_path = fx->boot, .create = true };
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_store_open(&o, &fx->store, &err) < 0)
                fail_msg("store: %s", err->msg);
        *state = fx;
        return 0;
}

/* cmocka teardown: close the store and remove the folder (no symlink followed). */
static inline int store_fixture_teardown(void **state)
{
        fixture_t *fx = *state;
        gv_store_close(&fx->store);
        scratch_rm_rf(fx->root);
        free(fx->root);
        free(fx->dir);
        free(fx->boot);
        free(fx->boot2);
        free(fx);
        return 0;
}

#endif
