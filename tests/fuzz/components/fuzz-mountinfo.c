/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the mountinfo reader (src/components/mountinfo.c) on arbitrary bytes, with a mount
 * point from the input's first line and a fixed one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "components/components-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = strndup((const char *) data, size);
        if (!text)
                return 0;
        char *first = strndup(text, strcspn(text, "\n"));
        const char *points[] = { "/run/nvidia/driver", first ? first : "/", "/" };
        for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
                char *root = NULL;
                int r = gv_mountinfo_deleted(text, points[i], &root);
                if (r < 0 || r > 1 || (r == 1) != (root != NULL))
                        __builtin_trap(); /* 1 always names the deleted root, 0 never does */
                if (root && !strstr(root, "//deleted"))
                        __builtin_trap();
                free(root);
        }
        free(first);
        free(text);
        return 0;
}
