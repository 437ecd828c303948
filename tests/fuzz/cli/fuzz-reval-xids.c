/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for gv_reval_parse_xids() (src/cli/revalidate.c, compiled into
 * the target): the list of Xids `watch` does not act on
 * (--gpu-health-ignore-xids, GPU_HEALTH_IGNORE_XIDS).
 *   - success: "all" alone sets *all and returns no list; otherwise every
 *     item (between commas, spaces, tabs) is 1 to 10 digits of a value 1 to
 *     UINT_MAX, the list holds them in order and nothing else;
 *   - failure: -EINVAL (or -ENOMEM) with an error, no list, *n 0.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "revalidate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The model: 1 when @s is a valid list (its numbers in @want, *@count of them), 2 for "all", 0 otherwise. */
static int model(const char *s, unsigned *want, size_t max, size_t *count)
{
        static const char seps[] = ", \t";
        size_t n = 0, items = 0;
        bool all = false, bad = false;
        for (const char *p = s + strspn(s, seps); *p; p += strspn(p, seps)) {
                size_t len = strcspn(p, seps);
                items++;
                if (len == 3 && strncmp(p, "all", 3) == 0) {
                        all = true;
                } else {
                        unsigned long long v = 0;
                        bool ok = len <= 10;
                        for (size_t i = 0; i < len && ok; i++) {
                                ok = p[i] >= '0' && p[i] <= '9';
                                v = v * 10 + (unsigned) (p[i] - '0');
                        }
                        if (!ok || v == 0 || v > UINT_MAX)
                                bad = true;
                        else if (n < max)
                                want[n++] = (unsigned) v;
                }
                p += len;
        }
        *count = n;
        if (all && items == 1)
                return 2;
        return bad || all ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        size_t max = strlen(s) / 2 + 1, want_n = 0;
        unsigned *want = calloc(max, sizeof(*want));
        if (!want) {
                free(s);
                return 0;
        }
        int m = model(s, want, max, &want_n);
        bool all = false;
        unsigned *got = NULL;
        size_t n = 99;
        gv_error_t *err = NULL;
        int r = gv_reval_parse_xids("X", s, &all, &got, &n, &err);
        if (r == -ENOMEM) {
                /* out of memory: nothing to compare */
        } else if (m == 0) {
                if (r != -EINVAL || !err || got || n != 0 || all)
                        abort();
        } else if (r != 0 || err || all != (m == 2) || n != (m == 2 ? 0 : want_n) ||
                   (n && memcmp(got, want, n * sizeof(*got)) != 0) || (!n && got)) {
                abort();
        }
        gv_error_free(&err);
        free(got);
        free(want);
        free(s);
        return 0;
}
