/* SPDX-License-Identifier: Apache-2.0 */
/* The fatbin reader (see fatbin.h).  Every offset is checked against the container's size before it is read. */
#include "mock/cuda/fatbin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Offsets in an entry header. */
enum {
        E_KIND = 0x00,       /* u16 */
        E_HEADER = 0x04,     /* u32: bytes from the entry to its payload */
        E_PAYLOAD = 0x08,    /* u64: bytes of the payload (padded to 8) */
        E_COMPRESSED = 0x10, /* u32: bytes of the compressed payload, 0 when not compressed */
        E_ARCH = 0x1c,       /* u32: sm architecture (75, 80, ...) */
        E_FLAGS = 0x28,      /* u64 */
        E_RAW = 0x38,        /* u64: bytes of the decompressed payload */
        E_MIN = 0x40,        /* the smallest entry header */
};
#define FLAG_ZSTD 0x8000u
#define FLAG_LZ4 0x2000u

static uint64_t rd(const uint8_t *p, size_t bytes)
{
        uint64_t v = 0;
        memcpy(&v, p, bytes); /* little-endian hosts (x86-64, aarch64), as the format */
        return v;
}

bool gv_fatbin_is_container(const void *image, size_t len)
{
        return len >= 4 && rd(image, 4) == GV_FATBIN_MAGIC;
}

size_t gv_fatbin_size(const void *image, size_t len)
{
        const uint8_t *p = image;
        if (len < 16 || rd(p, 4) != GV_FATBIN_MAGIC || rd(p + 4, 2) != 1 || rd(p + 6, 2) != 16)
                return 0;
        uint64_t body = rd(p + 8, 8);
        if (body > GV_FATBIN_MAX)
                return 0;
        return 16 + (size_t) body;
}

static int fail(char **msg, int r, const char *fmt, unsigned long long v)
{
        if (asprintf(msg, fmt, v) < 0)
                *msg = NULL;
        return r;
}

/* The text of PTX entry @e (header at @p, payload @size bytes): decompressed when it is, NUL-terminated. */
static int entry_text(const uint8_t *p, size_t size, char **out, size_t *out_len, char **msg)
{
        const uint8_t *data = p + rd(p + E_HEADER, 4);
        uint64_t flags = rd(p + E_FLAGS, 8), csize = rd(p + E_COMPRESSED, 4), raw = rd(p + E_RAW, 8);
        if (flags & FLAG_LZ4)
                return fail(msg, -EINVAL, "fatbin: an LZ4-compressed PTX entry (flags 0x%llx); rebuild with CUDA 12.4 or later", flags);
        if (flags & FLAG_ZSTD) {
                if (csize > size || raw > GV_FATBIN_MAX)
                        return fail(msg, -EINVAL, "fatbin: compressed entry of %llu bytes does not fit", csize);
                char *t = malloc((size_t) raw + 1);
                if (!t)
                        return -ENOMEM;
                size_t got = ZSTD_decompress(t, (size_t) raw, data, (size_t) csize);
                if (ZSTD_isError(got) || got != raw) {
                        free(t);
                        return fail(msg, -EINVAL, "fatbin: a zstd-compressed PTX entry does not decompress (%llu bytes)", csize);
                }
                t[got] = '\0';
                *out = t;
                *out_len = strnlen(t, got);
                return 0;
        }
        size_t n = strnlen((const char *) data, size);
        char *t = malloc(n + 1);
        if (!t)
                return -ENOMEM;
        memcpy(t, data, n);
        t[n] = '\0';
        *out = t;
        *out_len = n;
        return 0;
}

int gv_fatbin_ptx(const void *image, size_t len, unsigned sm, char **ptx, size_t *ptx_len, char **msg)
{
        *msg = NULL;
        size_t total = gv_fatbin_size(image, len);
        if (!total || total > len)
                return fail(msg, -EINVAL, "fatbin: bad header (%llu bytes readable)", (unsigned long long) len);
        const uint8_t *base = image, *best = NULL;
        size_t best_size = 0;
        unsigned best_arch = 0, lowest_ptx = 0, elf = 0;
        for (size_t at = 16; at < total;) {
                const uint8_t *e = base + at;
                if (total - at < E_MIN)
                        return fail(msg, -EINVAL, "fatbin: truncated entry at offset %llu", (unsigned long long) at);
                uint64_t hsize = rd(e + E_HEADER, 4), psize = rd(e + E_PAYLOAD, 8);
                if (hsize < E_MIN || hsize > total - at || psize > total - at - hsize)
                        return fail(msg, -EINVAL, "fatbin: entry at offset %llu overruns the container",
                                    (unsigned long long) at);
                unsigned kind = (unsigned) rd(e + E_KIND, 2), arch = (unsigned) rd(e + E_ARCH, 4);
                if (kind == GV_FATBIN_PTX) {
                        if (arch <= sm && (!best || arch > best_arch)) {
                                best = e;
                                best_size = (size_t) psize;
                                best_arch = arch;
                        }
                        if (!lowest_ptx || arch < lowest_ptx)
                                lowest_ptx = arch;
                } else if (kind == GV_FATBIN_ELF) {
                        elf++;
                }
                at += (size_t) (hsize + psize);
        }
        if (best)
                return entry_text(best, best_size, ptx, ptx_len, msg);
        if (lowest_ptx)
                return fail(msg, -ENOENT, "fatbin: PTX only for sm_%llu and newer, above this GPU",
                            (unsigned long long) lowest_ptx);
        return fail(msg, -ENOENT,
                    "fatbin: %llu cubin(s) and no PTX; the mock runs PTX only (build with "
                    "-gencode arch=compute_XX,code=compute_XX)",
                    elf);
}
