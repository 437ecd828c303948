/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: a GPU profile (mock/nvml/profile.h) parsed from memory, then
 * edited, finalized and written back.  Any input must give either a profile
 * or an error naming the input; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mock/nvml/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_mock_profile_t *p = NULL;
        gv_error_t *err = NULL;
        if (gv_mock_profile_load_memory("fuzz.yaml", (const char *) data, size, &p, &err) < 0) {
                if (!err || !err->msg || strncmp(err->msg, "fuzz.yaml", 9) != 0)
                        if (!err || err->reason != GV_REASON_INTERNAL)
                                abort();
                gv_error_free(&err);
                return 0;
        }
        if (gv_mock_profile_set_node_name(p, "fuzz-node", &err) == 0 && gv_mock_profile_finalize(p, &err) == 0) {
                char *y = NULL;
                if (gv_mock_profile_to_yaml(p, &y, &err) == 0) {
                        gv_mock_profile_t *q = NULL;
                        /* what we write we must read back */
                        if (gv_mock_profile_load_memory("written.yaml", y, strlen(y), &q, &err) < 0)
                                abort();
                        gv_mock_profile_free(&q);
                        free(y);
                }
                if (p->device_count < 64)
                        gv_mock_profile_set_gpu_count(p, p->device_count + 1, &err);
                gv_error_free(&err);
                gv_mock_profile_finalize(p, &err);
        }
        gv_error_free(&err);
        gv_mock_profile_free(&p);
        return 0;
}
