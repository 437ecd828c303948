/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ld.so.cache writer (see ldcache.h for the format's source).
 */
#include "mock/root/ldcache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAGIC "glibc-ld.so.cache"
#define CACHE_VERSION "1.1"
#define HEADER_SIZE 48u
#define ENTRY_SIZE 24u
#define MAX_LIBS 4096u
#define FLAG_ELF_LIBC6 0x0003
#if defined(__aarch64__)
#define FLAG_ARCH 0x0a00 /* FLAG_AARCH64_LIB64 */
#else
#define FLAG_ARCH 0x0300 /* FLAG_X8664_LIB64 */
#endif
/* cache_file_new_flags_endian_little / _big */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ENDIAN_FLAG 3u
#else
#define ENDIAN_FLAG 2u
#endif

static unsigned long long number(const char **s)
{
        unsigned long long v = 0;
        while (**s >= '0' && **s <= '9')
                v = v * 10 + (unsigned) (*(*s)++ - '0');
        return v;
}

int mr_ldcache_libcmp(const char *a, const char *b)
{
        while (*a) {
                bool da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';
                if (da && db) {
                        unsigned long long x = number(&a), y = number(&b);
                        if (x != y)
                                return x < y ? -1 : 1;
                } else if (da) {
                        return 1;
                } else if (db) {
                        return -1;
                } else {
                        if (*a != *b)
                                return (unsigned char) *a < (unsigned char) *b ? -1 : 1;
                        a++;
                        b++;
                }
        }
        return *b ? -1 : 0;
}

static int by_soname_desc(const void *x, const void *y)
{
        const mr_ldcache_lib_t *a = x, *b = y;
        return mr_ldcache_libcmp(b->soname, a->soname);
}

static void put32(char *p, uint32_t v)
{
        memcpy(p, &v, sizeof(v)); /* native byte order, as ld.so reads it */
}

int mr_ldcache_build(const mr_ldcache_lib_t *libs, size_t n, char **out, size_t *len)
{
        if (n > MAX_LIBS)
                return -EINVAL;
        size_t strings = 0;
        for (size_t i = 0; i < n; i++) {
                if (!libs[i].soname || !*libs[i].soname || !libs[i].path || !*libs[i].path)
                        return -EINVAL;
                strings += strlen(libs[i].soname) + 1 + strlen(libs[i].path) + 1;
        }
        mr_ldcache_lib_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        if (n)
                memcpy(sorted, libs, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), by_soname_desc);
        size_t table = HEADER_SIZE + n * ENTRY_SIZE, total = table + strings;
        char *buf = calloc(1, total);
        if (!buf) {
                free(sorted);
                return -ENOMEM;
        }
        /* The magic and version are fixed-size fields without a NUL (glibc's cache header). */
        memcpy(buf, CACHE_MAGIC, strlen(CACHE_MAGIC)); // NOLINT(bugprone-not-null-terminated-result)
        memcpy(buf + strlen(CACHE_MAGIC), CACHE_VERSION, // NOLINT(bugprone-not-null-terminated-result)
               strlen(CACHE_VERSION));
        put32(buf + 20, (uint32_t) n);
        put32(buf + 24, (uint32_t) strings);
        buf[28] = (char) ENDIAN_FLAG;
        /* extension_offset (32) and unused (36..47) stay 0: no extension */
        size_t s = table;
        for (size_t i = 0; i < n; i++) {
                char *e = buf + HEADER_SIZE + i * ENTRY_SIZE;
                size_t kl = strlen(sorted[i].soname) + 1, vl = strlen(sorted[i].path) + 1;
                put32(e, (uint32_t) (FLAG_ELF_LIBC6 | FLAG_ARCH));
                put32(e + 4, (uint32_t) s);
                memcpy(buf + s, sorted[i].soname, kl);
                s += kl;
                put32(e + 8, (uint32_t) s);
                memcpy(buf + s, sorted[i].path, vl);
                s += vl;
                /* osversion (12) and hwcap (16) stay 0 */
        }
        free(sorted);
        *out = buf;
        *len = total;
        return 0;
}
