/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program linked against the mock libnvidia-ml.so.1 (not dlopen()ed) that
 * calls nvmlInternalGetExportTable, the real library's private entry point
 * outside nvml.h (the real nvidia-smi and GPU-sharing shims link against it;
 * before, such a program failed to load: "undefined symbol").  The mock knows no
 * table: every id, and a NULL argument, answers INVALID_ARGUMENT with the table
 * pointer cleared, before and after nvmlInit, and nothing crashes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "abi/nvml/nvml-abi.h"

/* Linked directly: these resolve at load time against the mock library. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *table_id);

/* Table ids as callers pass them: 16-byte UUIDs (the first is CUDA's CU_ETID_ToolsRuntimeCallbackHooks). */
static const uint8_t ids[][16] = {
        {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
        {0},
        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
};

static void check_every_id(void)
{
        static const int canary = 42;
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                const void *table = &canary;
                assert_int_equal(nvmlInternalGetExportTable(&table, ids[i]), NVML_ERROR_INVALID_ARGUMENT);
                assert_null(table);
        }
        const void *table = &canary;
        assert_int_equal(nvmlInternalGetExportTable(&table, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_null(table);
        assert_int_equal(nvmlInternalGetExportTable(NULL, ids[0]), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(nvmlInternalGetExportTable(NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_unknown_ids_before_init(void **state)
{
        (void) state;
        check_every_id();
}

static void test_unknown_ids_after_init(void **state)
{
        (void) state;
        assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
        check_every_id();
        assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
        check_every_id();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unknown_ids_before_init),
                cmocka_unit_test(test_unknown_ids_after_init),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
