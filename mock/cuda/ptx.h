/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader of the mock libcuda: finds the .entry functions of a PTX
 * module and recognises the kernels the mock can run on the CPU.
 */
#ifndef GV_MOCK_CUDA_PTX_H
#define GV_MOCK_CUDA_PTX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gv_mock_ptx_entry {
        char name[128];       /* the .entry name */
        bool vector_add_f32;  /* the body is the element-wise float add (a, b, c, n) of cuda-check */
} gv_mock_ptx_entry_t;

/*
 * gv_mock_ptx_parse - read the NUL-terminated PTX @text: it must carry
 * .version, .target and at least one .entry with a balanced body.  Fills up
 * to @max entries into @out and their number into *n.  Returns 0, or
 * -EINVAL for text that is not such PTX (a cubin or fatbin, garbage,
 * more than @max entries, a name over 127 bytes).  Reads at most 16 MiB.
 */
int gv_mock_ptx_parse(const char *text, gv_mock_ptx_entry_t *out, size_t max, size_t *n);

#endif
