/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mount-dependent defaults of the validation options (src/cli/options.c,
 * compiled in): HOST_ROOT_CTR_PATH follows upstream's /host and DEV_CHAR_DIR
 * upstream's /host-dev-char when those are folders and nothing was said
 * explicitly; gv_options_resolve_mounts() takes the two paths, so the test
 * points them into a temporary folder.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/options.h"

typedef struct fixture {
        char dir[64];
        char host[96];
        char dev_char[96];
} fixture_t;

static int setup(void **state)
{
        fixture_t *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        strcpy(f->dir, "/tmp/gv-options-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->host, sizeof(f->host), "%s/host", f->dir);
        snprintf(f->dev_char, sizeof(f->dev_char), "%s/host-dev-char", f->dir);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture_t *f = *state;
        rmdir(f->host);
        unlink(f->host);
        rmdir(f->dev_char);
        rmdir(f->dir);
        free(f);
        return 0;
}

static void test_operator_mounts_used(void **state)
{
        fixture_t *f = *state;
        assert_int_equal(mkdir(f->host, 0755), 0);
        assert_int_equal(mkdir(f->dev_char, 0755), 0);
        gv_config_t c = { .driver.host_root = "/" };
        gv_options_resolve_mounts(&c, f->host, f->dev_char);
        assert_string_equal(c.driver.host_root_ctr_path, f->host);
        assert_string_equal(c.driver.dev_char_dir, f->dev_char);

        gv_config_t unset = { 0 }; /* no HOST_ROOT at all reads as "/" */
        gv_options_resolve_mounts(&unset, f->host, f->dev_char);
        assert_string_equal(unset.driver.host_root_ctr_path, f->host);
}

static void test_no_mounts_plain_defaults(void **state)
{
        fixture_t *f = *state;
        gv_config_t c = { .driver.host_root = "/" };
        gv_options_resolve_mounts(&c, f->host, f->dev_char);
        assert_null(c.driver.host_root_ctr_path); /* the host root itself, as before */
        assert_string_equal(c.driver.dev_char_dir, "/dev/char");
}

static void test_files_are_not_folders(void **state)
{
        fixture_t *f = *state;
        FILE *fp = fopen(f->host, "w");
        assert_non_null(fp);
        assert_int_equal(fclose(fp), 0);
        gv_config_t c = { .driver.host_root = "/" };
        gv_options_resolve_mounts(&c, f->host, f->dev_char);
        assert_null(c.driver.host_root_ctr_path);
        assert_string_equal(c.driver.dev_char_dir, "/dev/char");
}

static void test_explicit_values_win(void **state)
{
        fixture_t *f = *state;
        assert_int_equal(mkdir(f->host, 0755), 0);
        assert_int_equal(mkdir(f->dev_char, 0755), 0);
        gv_config_t c = { .driver.host_root = "/", .driver.host_root_ctr_path = "/elsewhere", .driver.dev_char_dir = "/my/dev/char" };
        gv_options_resolve_mounts(&c, f->host, f->dev_char);
        assert_string_equal(c.driver.host_root_ctr_path, "/elsewhere");
        assert_string_equal(c.driver.dev_char_dir, "/my/dev/char");

        gv_config_t empty = { .driver.host_root = "/", .driver.host_root_ctr_path = "" }; /* HOST_ROOT_CTR_PATH= */
        gv_options_resolve_mounts(&empty, f->host, f->dev_char);
        assert_string_equal(empty.driver.host_root_ctr_path, "");

        gv_config_t other = { .driver.host_root = "/mnt/host" }; /* a host root of its own: not upstream's case */
        gv_options_resolve_mounts(&other, f->host, f->dev_char);
        assert_null(other.driver.host_root_ctr_path);
        assert_string_equal(other.driver.dev_char_dir, f->dev_char);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_operator_mounts_used, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_mounts_plain_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files_are_not_folders, setup, teardown),
                cmocka_unit_test_setup_teardown(test_explicit_values_win, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
