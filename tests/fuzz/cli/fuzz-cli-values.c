/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for the CLI's value parsers, which live in the executable's
 * sources (src/cli/cli.c and src/cli/options.c are compiled into this
 * target): gv_split_list(), gv_parse_bool() and gv_parse_uint().
 *   - a list has no empty item and no separator inside an item, and its items
 *     are the input's characters other than separators, in order;
 *   - a bool parses only from one of the documented words;
 *   - an unsigned parses exactly from 1 to 10 decimal digits whose value fits
 *     (no sign, no white space), and out-parameters stay untouched on failure.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../fuzz-input.h"
#include "base/cleanup.h"
#include "cli.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_list(const char *s, const char *seps)
{
        char **v = gv_split_list(s, seps);
        if (!v)
                return; /* out of memory */
        const char *p = s;
        for (size_t i = 0; v[i]; i++) {
                if (!*v[i] || strpbrk(v[i], seps))
                        abort();
                p += strspn(p, seps);
                size_t len = strlen(v[i]);
                if (strncmp(p, v[i], len) != 0)
                        abort();
                p += len;
        }
        if (p[strspn(p, seps)] != '\0')
                abort(); /* an item was dropped */
        gv_strv_freep(&v);
}

static void fuzz_bool(const char *s)
{
        static const char *const words[] = { "true", "1", "yes", "on", "y", "t",
                                             "false", "0", "no", "off", "n", "f" };
        bool b = false;
        int r = gv_parse_bool(s, &b);
        bool known = false;
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                known = known || strcasecmp(s, words[i]) == 0;
        if ((r == 0) != known || (r < 0 && r != -EINVAL))
                abort();
}

static void fuzz_uint(const char *s)
{
        unsigned u = 777;
        int r = gv_parse_uint(s, &u);
        size_t digits = strspn(s, "0123456789");
        bool numeric = digits > 0 && s[digits] == '\0';
        if (!numeric) {
                if (r != -EINVAL && r != -ERANGE)
                        abort();
                if (u != 777)
                        abort();
                return;
        }
        /* the value, computed here without strtoul */
        unsigned long long v = 0;
        bool fits = true;
        for (size_t i = 0; i < digits && fits; i++) {
                v = v * 10 + (unsigned long long) (s[i] - '0');
                fits = v <= UINT_MAX;
        }
        if (fits ? (r != 0 || u != v) : (r != -ERANGE || u != 777))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        fuzz_list(s, ":,");
        fuzz_list(s, ",");
        fuzz_bool(s);
        fuzz_uint(s);
        free(s);
        return 0;
}
