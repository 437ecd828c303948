/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the runtime state file of `mock set` (mock/nvml/mock-state.h),
 * parsed from memory and written back.  Any input must give either a state
 * or an error naming the input; what is written must read back to the same
 * state and the same text; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mock/nvml/mock-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_mock_state_t *s = NULL;
        gv_error_t *err = NULL;
        if (gv_mock_state_parse("fuzz.state", (const char *) data, size, &s, &err) < 0) {
                if (!err || !err->msg || strncmp(err->msg, "fuzz.state", 10) != 0)
                        if (!err || err->reason != GV_REASON_INTERNAL)
                                abort();
                gv_error_free(&err);
                return 0;
        }
        char *text = NULL, *again = NULL;
        gv_mock_state_t *q = NULL;
        if (gv_mock_state_write(s, &text, &err) == 0) {
                /* what we write we must read back, to the same text */
                if (gv_mock_state_parse("written.state", text, strlen(text), &q, &err) < 0)
                        abort();
                if (gv_mock_state_write(q, &again, &err) < 0 || strcmp(text, again) != 0)
                        abort();
        }
        gv_error_free(&err);
        free(again);
        free(text);
        free(q);
        free(s);
        return 0;
}
