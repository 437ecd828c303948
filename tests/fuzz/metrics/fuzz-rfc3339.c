/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the RFC 3339 time stamps the exporter reads from a marker's VALIDATED_AT
 * (gv_metrics_parse_rfc3339()).  Checks: only 0 or -EINVAL; a refusal leaves the value
 * alone; an accepted value is finite, and its whole seconds, written again as
 * "YYYY-MM-DDTHH:MM:SSZ", read back as the same number; and an accepted plain UTC stamp
 * names that instant's own fields (no 31 Feb rolled into March).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fuzz-input.h"
#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(double v)
{
        time_t t = (time_t) floor(v);
        struct tm tm;
        char again[64];
        if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
                return;
        snprintf(again, sizeof(again), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        double w = -1.0;
        if (gv_metrics_parse_rfc3339(again, &w) != 0 || w != (double) t)
                __builtin_trap(); /* we accept a time we would not read back written plainly */
}

/* @s ("YYYY-MM-DDTHH:MM:SSZ", no fraction, no offset, no leap second) was read as @v. */
static void check_fields(const char *s, double v)
{
        if (strlen(s) != 20 || (s[19] != 'Z' && s[19] != 'z') || strncmp(s + 17, "60", 2) == 0)
                return;
        time_t t = (time_t) v;
        struct tm tm;
        char again[64];
        if (!gmtime_r(&t, &tm))
                return;
        snprintf(again, sizeof(again), "%04d-%02d-%02d%c%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, s[10], tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (strncmp(again, s, 19) != 0)
                __builtin_trap(); /* we accept a date that is not the one we read */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        double v = 12345.5;
        int r = gv_metrics_parse_rfc3339(s, &v);
        if (r != 0 && r != -EINVAL)
                __builtin_trap();
        if (r < 0 && v != 12345.5)
                __builtin_trap(); /* a refusal changed the value */
        if (r == 0) {
                if (!isfinite(v))
                        __builtin_trap();
                check_round_trip(v);
                check_fields(s, v);
        }
        free(s);
        return 0;
}
