/* SPDX-License-Identifier: Apache-2.0 */
#include "alloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* The least room a growth asks for, in bytes: small arrays do not grow one element at a time. */
#define GREEDY_MIN_BYTES 64

void *gv_greedy_realloc(void **p, size_t *cap, size_t need, size_t size)
{
        if (size == 0) {
                errno = EINVAL;
                return NULL;
        }
        if (!*p || need > *cap) {
                if (need > SIZE_MAX / size) {
                        errno = ENOMEM;
                        return NULL;
                }
                size_t n = *p && *cap <= SIZE_MAX / 2 ? *cap * 2 : 0;
                if (n < need)
                        n = need;
                if (n < GREEDY_MIN_BYTES / size)
                        n = GREEDY_MIN_BYTES / size;
                if (n > SIZE_MAX / size) /* twice the room overflows: ask for what is needed only */
                        n = need;
                if (n == 0) /* room for one, never a realloc() of 0 bytes */
                        n = 1;
                void *q = realloc(*p, n * size);
                if (!q)
                        return NULL;
                *p = q;
                *cap = n;
        }
        return *p;
}
