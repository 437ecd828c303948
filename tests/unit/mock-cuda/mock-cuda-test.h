/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared helpers of the mock libcuda tests.  Each case runs in a forked child
 * (the library keeps process-wide state from cuInit on), where a failed check
 * prints where and what, and exits the child with 1.
 */
#ifndef GV_TEST_MOCK_CUDA_H
#define GV_TEST_MOCK_CUDA_H

#include <stdio.h>
#include <unistd.h>

/* In the child: a false @cond prints and exits 1. */
#define CHECK(cond)                                                                      \
        do {                                                                             \
                if (!(cond)) {                                                           \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        _exit(1);                                                        \
                }                                                                        \
        } while (0)

/* In the child: @a and @b (as long long) differ: print both and exit 1. */
#define CHECK_EQ(a, b)                                                                   \
        do {                                                                             \
                long long a_ = (long long) (a), b_ = (long long) (b);                    \
                if (a_ != b_) {                                                          \
                        fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
                        _exit(1);                                                        \
                }                                                                        \
        } while (0)

#endif
