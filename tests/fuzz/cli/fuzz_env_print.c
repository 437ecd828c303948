/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: `gpu-validator env` / `wait --print-env` (gv_cli_print_env())
 * must print any value so that a POSIX shell sourcing the output gets the
 * same bytes back, with every variable exported (env-roundtrip.h: dash and
 * busybox sh).  The input, with its NUL bytes dropped, is the value.
 */
#include <stddef.h>
#include <stdint.h>

#include "env-roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 8192)
                return 0;
        char *value = malloc(size + 1);
        if (!value)
                return 0;
        size_t n = 0;
        for (size_t i = 0; i < size; i++)
                if (data[i])
                        value[n++] = (char) data[i];
        value[n] = '\0';
        rt_check(value);
        free(value);
        return 0;
}
