/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the DRA ResourceSliceList census (src/components/dra.c) on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "components/dra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_dra_census_t c = { 0 };
        gv_error_t *err = NULL;
        if (gv_dra_census_text((const char *) data, size, "node-a", "gpu.nvidia.com", &c, &err) == 0) {
                /* walk what came back so that a bad pointer shows up under ASan */
                size_t total = strlen(c.names) + (c.incomplete_pool ? strlen(c.incomplete_pool) : 0);
                for (size_t i = 0; i < c.n_uuids; i++)
                        total += strlen(c.uuids[i]);
                char *missing = NULL;
                if (gv_dra_missing(&c, "GPU-a,GPU-b", &missing, &err) >= 0)
                        total += strlen(missing);
                free(missing);
                (void) total;
                gv_dra_census_clear(&c);
        }
        gv_error_free(&err);
        return 0;
}
