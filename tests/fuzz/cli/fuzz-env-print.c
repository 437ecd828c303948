/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: `gpu-validator env` / `wait --print-env` (gv_cli_print_env())
 * must print any value so that a POSIX shell sourcing the output gets the
 * same bytes back, with every variable exported.  The input, with its NUL
 * bytes dropped, is the value.  Every input is read back by the in-process
 * reference reader (env-roundtrip.h, POSIX quoting rules); the real shells
 * (dash, busybox sh: two processes each, about 16 inputs a second) check
 * every input of the corpus test and, under libFuzzer, one input in 4096
 * chosen by a hash of the value (all of them with GV_FUZZ_ENV_SHELLS=all),
 * so that a long run reaches millions of executions.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env-roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the real shells check @value too (see the header comment). */
static bool with_shells(const char *value)
{
#ifdef GV_LIBFUZZER
        const char *all = getenv("GV_FUZZ_ENV_SHELLS");
        if (all && strcmp(all, "all") == 0)
                return true;
        uint32_t h = 2166136261u; /* FNV-1a: deterministic, as libFuzzer wants */
        for (const char *p = value; *p; p++)
                h = (h ^ (unsigned char) *p) * 16777619u;
        return (h & 4095u) == 0;
#else
        (void) value;
        return true;
#endif
}

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
        rt_check_with(value, with_shells(value));
        free(value);
        return 0;
}
