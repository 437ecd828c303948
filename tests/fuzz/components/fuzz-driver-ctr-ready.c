/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the .driver-ctr-ready flag reader (src/components/sandbox.c) on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "components/sandbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const keys[] = { "GDS_ENABLED", "GDRCOPY_ENABLED", "GPU_DIRECT_RDMA_ENABLED", "" };
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                gv_error_t *err = NULL;
                int r = gv_driver_ctr_flag_parse((const char *) data, size, keys[i], ".driver-ctr-ready", &err);
                if (r < 0 && !err)
                        __builtin_trap(); /* every failure carries its message */
                if (r >= 0 && err)
                        __builtin_trap();
                gv_error_free(&err);
        }
        return 0;
}
