/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ld.so.cache for a mock driver root, written by us (no ldconfig run:
 * `ldconfig -r` chroots and needs root, and `ldconfig -C/-f` would record
 * host paths, while NVIDIA's container toolkit reads the cache of
 * <root>/etc/ld.so.cache as paths inside the root).
 *
 * Outside facts: glibc's "new" cache format (elf/cache.c, sysdeps/generic/
 * dl-cache.h, format "glibc-ld.so.cache" version "1.1"): a 48-byte header
 * (magic and version, nlibs, len_strings, an endianness flag byte, 3 pad
 * bytes, extension_offset, 3 unused words), then nlibs 24-byte entries
 * (int32 flags, uint32 key, uint32 value, uint32 osversion, uint64 hwcap),
 * then the string table; string offsets count from the start of the file.
 * Entries are sorted in descending _dl_cache_libcmp order (digits compared
 * as numbers), which ld.so's binary search expects.  Flags: FLAG_ELF_LIBC6
 * (3) | FLAG_X8664_LIB64 (0x0300) or FLAG_AARCH64_LIB64 (0x0a00).
 */
#ifndef GV_MOCKROOT_LDCACHE_H
#define GV_MOCKROOT_LDCACHE_H

#include <stddef.h>

/* One library: its soname ("libcuda.so.1") and absolute path inside the root ("/usr/lib64/libcuda.so.1"). */
typedef struct mr_ldcache_lib {
        const char *soname;
        const char *path;
} mr_ldcache_lib_t;

/*
 * mr_ldcache_build - the bytes of an ld.so.cache listing @libs (@n of them,
 * strings borrowed) for the machine this is built for.
 * @out: heap buffer (caller frees), @len: its size in bytes.
 * Errors: -ENOMEM; -EINVAL when @n exceeds 4096 or a string is empty.
 */
int mr_ldcache_build(const mr_ldcache_lib_t *libs, size_t n, char **out, size_t *len);

/* mr_ldcache_libcmp - glibc's _dl_cache_libcmp: <0, 0, >0 (runs of digits compare as numbers). */
int mr_ldcache_libcmp(const char *a, const char *b);

#endif
