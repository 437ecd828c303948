/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the fuzz targets whose parser reads a C string. */
#ifndef GV_FUZZ_INPUT_H
#define GV_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * fuzz_cstr - the @size bytes at @data as a NUL-terminated heap string (an
 * embedded NUL ends it early, as it would for any C caller).  NULL when out
 * of memory (the target then skips the input).  The caller frees it.
 */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);
        if (!s)
                return NULL;
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

#endif
