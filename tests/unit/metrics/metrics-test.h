/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the metrics unit tests. */
#ifndef GV_TESTS_METRICS_TESTUTIL_H
#define GV_TESTS_METRICS_TESTUTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether @text has @line as one whole line. */
static inline bool has_line(const char *text, const char *line)
{
        size_t n = strlen(line);
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                if (len == n && memcmp(p, line, n) == 0)
                        return true;
                p = nl ? nl + 1 : NULL;
        }
        return false;
}

/* Number of lines of @text that start with @prefix. */
static inline int count_prefix(const char *text, const char *prefix)
{
        int c = 0;
        size_t n = strlen(prefix);
        for (const char *p = text; p && *p;) {
                if (strncmp(p, prefix, n) == 0)
                        c++;
                const char *nl = strchr(p, '\n');
                p = nl ? nl + 1 : NULL;
        }
        return c;
}

#endif
