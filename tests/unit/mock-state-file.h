/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A test helper shared by the tests that drive the mock libnvidia-ml.so.1's
 * runtime state file (MOCK_NVML_STATE_FILE; docs/mock-nvml.md, Faults):
 * tests/unit/mock-nvml/test-faults.c and tests/unit/nvml/test-health.c.
 * Include after <cmocka.h>.
 */
#ifndef GV_TEST_MOCK_STATE_FILE_H
#define GV_TEST_MOCK_STATE_FILE_H

#include <stdio.h>
#include <unistd.h>

/* Replaces @path with @text the way `mock set` does (temporary file + rename), then lets 2 ms pass. */
static inline void th_replace_state(const char *path, const char *text)
{
        char tmp[256];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, path), 0);
        usleep(2000); /* the library looks at the file at most once a millisecond */
}

#endif
