/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fatbin reader of the mock libcuda: what nvcc embeds in a program and
 * writes with `-fatbin`.  A container is a 16-byte header (magic 0xBA55ED50,
 * version 1, header size 16, the size of what follows) and entries, each
 * with its own header (kind: 1 PTX, 2 ELF/cubin; the header's size; the
 * payload's size; the PTX ISA version; the sm architecture; flags, of which
 * 0x8000 marks a zstd-compressed payload, with the uncompressed size) and
 * its payload.  The layout is not documented by NVIDIA; it is the one
 * NVIDIA's nvcc 13 writes and the public fatbin readers (cuobjdump's
 * format as reverse-engineered by open tools) describe, checked field by
 * field against nvcc's output in tests/unit/mock-cuda.
 *
 * nvcc's host code points at a container through a wrapper (magic
 * 0x466243B1, version, pointer to the container, pointer to a file name);
 * cuModuleLoadData and cuModuleLoadFatBinary accept either.
 */
#ifndef GV_MOCK_CUDA_FATBIN_H
#define GV_MOCK_CUDA_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GV_FATBIN_MAGIC 0xBA55ED50u
#define GV_FATBIN_WRAPPER_MAGIC 0x466243B1u

/* Kinds of entries. */
enum { GV_FATBIN_PTX = 1, GV_FATBIN_ELF = 2 };

/* Upper bound of a container and of one decompressed PTX entry (bytes); small in fuzz builds. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define GV_FATBIN_MAX (1u << 20)
#else
#define GV_FATBIN_MAX (256u << 20)
#endif

/* gv_fatbin_is_container - whether @image (@len bytes readable) starts with a container's magic. */
bool gv_fatbin_is_container(const void *image, size_t len);

/*
 * gv_fatbin_size - the size of the container at @image (header included),
 * read from its header; 0 when @len bytes do not hold a valid header.
 */
size_t gv_fatbin_size(const void *image, size_t len);

/*
 * gv_fatbin_ptx - pick from the container at @image (@len bytes) the PTX a
 * driver for a GPU of sm number @sm (80 for compute capability 8.0) would
 * JIT-compile: the PTX entry of the highest architecture not above @sm.
 * On success *ptx is its text (heap, NUL-terminated, decompressed) and *len
 * its length.  Errors: -ENOENT when no entry fits (CUDA_ERROR_NO_BINARY_FOR_GPU:
 * only PTX for newer architectures, or only cubins, which the mock cannot
 * run), -EINVAL for a malformed container or payload, -ENOMEM.  *msg (heap)
 * says why in either error case.
 */
int gv_fatbin_ptx(const void *image, size_t len, unsigned sm, char **ptx, size_t *ptx_len, char **msg);

#endif
