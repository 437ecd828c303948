/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the PTX reader of the mock libcuda (mock/cuda/ptx.h).  Any
 * input must give entries or -EINVAL; never a crash, a leak or an entry
 * count beyond the array.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "mock/cuda/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = fuzz_cstr(data, size);
        if (!text)
                return 0;
        gv_mock_ptx_entry_t entries[4];
        size_t n = 99;
        int r = gv_mock_ptx_parse(text, entries, 4, &n);
        if ((r != 0 && r != -EINVAL && r != -ENOMEM) || n > 4 || (r == 0 && n == 0))
                abort();
        for (size_t i = 0; r == 0 && i < n; i++)
                if (!entries[i].name[0] || strlen(entries[i].name) >= sizeof(entries[i].name))
                        abort();
        free(text);
        return 0;
}
