/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for gv_revalidations_parse() (src/metrics/revalidations.c):
 * any input either fails with a config error and leaves the counters
 * untouched, or parses; what parses, written back as KEY=count lines, must
 * parse to the same counts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file's keys in enum order; the assertion below fails the build when a reason is added here
 * but not in the enum, or the other way round. */
static const char *const keys[] = { "DRIVER_CONTAINER_RESTART", "DEVICE_NODE_REMOVED", "DRIVER_ROOT_CHANGED",
                                    "GENERATION_CHANGED",       "GPU_LOST",            "XID" };
_Static_assert(sizeof(keys) / sizeof(keys[0]) == GV_REVAL__MAX, "one key per revalidation reason");

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_revalidations_t c = { .count = { 4242 } }, back = { 0 };
        gv_error_t *e = NULL;
        if (gv_revalidations_parse((const char *) data, size, &c, &e) < 0) {
                if (!e || !e->msg || (e->reason != GV_REASON_CONFIG && e->reason != GV_REASON_INTERNAL))
                        abort();
                if (c.present || c.count[0] != 4242)
                        abort();
                gv_error_free(&e);
                return 0;
        }
        if (!c.present)
                abort();
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                abort();
        for (int i = 0; i < GV_REVAL__MAX; i++)
                fprintf(f, "%s=%llu\n", keys[i], (unsigned long long) c.count[i]);
        if (fclose(f) != 0)
                abort();
        if (gv_revalidations_parse(text, len, &back, &e) < 0)
                abort();
        if (memcmp(back.count, c.count, sizeof(c.count)) != 0)
                abort();
        free(text);
        return 0;
}
