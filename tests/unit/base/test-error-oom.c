/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/error.c when memory runs out: gv_error_set() hands out the shared
 * read-only out-of-memory error (ENOMEM, GV_REASON_INTERNAL), which
 * gv_error_prefix() and gv_error_set_reason() leave as it is and
 * gv_error_free() only unhooks (a free() of it, or a write to it, would be
 * caught by ASan or crash on the read-only page).  calloc() fails on demand
 * through the linker's --wrap=calloc (tests/unit/base/meson.build).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static bool fail_calloc;

void *__wrap_calloc(size_t n, size_t size)
{
        if (fail_calloc)
                return NULL;
        return __real_calloc(n, size);
}

static void test_oom_error_is_shared_and_read_only(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        fail_calloc = true;
        assert_int_equal(gv_error_set(&err, EACCES, GV_REASON_IO, "open %s", "x"), -EACCES);
        fail_calloc = false;
        assert_non_null(err);
        assert_int_equal(err->errnum, ENOMEM);
        assert_int_equal(err->reason, GV_REASON_INTERNAL);
        assert_string_equal(err->msg, "out of memory");
        gv_error_t *first = err;

        /* context and a new class leave it alone: it is shared by every caller */
        assert_int_equal(gv_error_prefix(&err, "driver"), -ENOMEM);
        assert_string_equal(err->msg, "out of memory");
        gv_error_set_reason(&err, GV_REASON_CONFIG);
        assert_int_equal(err->reason, GV_REASON_INTERNAL);

        /* freeing only unhooks it; the next failure gets the same object, unchanged */
        gv_error_free(&err);
        assert_null(err);
        fail_calloc = true;
        gv_error_set(&err, EIO, GV_REASON_IO, "again");
        fail_calloc = false;
        assert_ptr_equal(err, first);
        assert_string_equal(err->msg, "out of memory");
        assert_int_equal(err->reason, GV_REASON_INTERNAL);
        gv_error_free(&err);
}

static void test_set_reason(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        gv_error_set(&err, ENOENT, GV_REASON_IO, "profile.yaml: no such file");
        gv_error_set_reason(&err, GV_REASON_CONFIG);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_int_equal(err->errnum, ENOENT);
        assert_string_equal(err->msg, "profile.yaml: no such file");
        gv_error_free(&err);
        /* no error, no slot: nothing happens */
        gv_error_set_reason(&err, GV_REASON_CONFIG);
        assert_null(err);
        gv_error_set_reason(NULL, GV_REASON_CONFIG);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_oom_error_is_shared_and_read_only),
                cmocka_unit_test(test_set_reason),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
