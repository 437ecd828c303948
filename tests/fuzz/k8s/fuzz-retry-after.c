/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the Retry-After header value (gv_k8s_parse_retry_after(), RFC 9110
 * 10.2.3), which an API server or a proxy in front of it sends.  Checks: only 0 or
 * -EINVAL; a refusal leaves the delay alone; a later "now" never gives a longer delay;
 * and an accepted IMF-fixdate, written again the way RFC 9110 5.6.7 writes it, says the
 * same day and time as the input and reads back as the same instant.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fuzz-input.h"
#include "k8s/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { SENTINEL = 4242 };
static const time_t LATER = 784111770; /* Sun, 06 Nov 1994 08:49:30 GMT */

/* @p was accepted as an IMF-fixdate at @ms_at_epoch: written again, everything after the day
 * name must be what @p says (fixed-width fields, no sign, no day rolled into the next month). */
static void check_imf_round_trip(const char *p, unsigned long ms_at_epoch)
{
        time_t t = (time_t) (ms_at_epoch / 1000UL);
        struct tm tm;
        char again[64];
        if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 || strstr(p, ":60 GMT"))
                return; /* a leap second is written as the next second */
        if (strftime(again, sizeof(again), "%a, %d %b %Y %H:%M:%S GMT", &tm) != 29)
                __builtin_trap();
        if (strlen(p) < 29 || memcmp(again + 3, p + 3, 26) != 0)
                __builtin_trap(); /* we accept a date that is not the one we read */
        unsigned long ms = SENTINEL;
        if (gv_k8s_parse_retry_after(again, 0, &ms) != 0 || ms != ms_at_epoch)
                __builtin_trap(); /* we would not read our own writing back */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        unsigned long at0 = SENTINEL, later = SENTINEL;
        int r0 = gv_k8s_parse_retry_after(s, 0, &at0);
        int r1 = gv_k8s_parse_retry_after(s, LATER, &later);
        if ((r0 != 0 && r0 != -EINVAL) || r0 != r1)
                __builtin_trap();
        if (r0 < 0 && (at0 != SENTINEL || later != SENTINEL))
                __builtin_trap(); /* a refusal changed the delay */
        if (r0 == 0 && later > at0)
                __builtin_trap(); /* a later now, a longer wait */
        const char *p = s + strspn(s, " \t");
        if (r0 == 0 && !(*p >= '0' && *p <= '9'))
                check_imf_round_trip(p, at0);
        free(s);
        return 0;
}
