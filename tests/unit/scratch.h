/* SPDX-License-Identifier: Apache-2.0 */
/* Scratch folders of the unit tests: removing a temporary tree. */
#ifndef GV_TESTS_UNIT_SCRATCH_H
#define GV_TESTS_UNIT_SCRATCH_H

#include <ftw.h>
#include <stdio.h>

static inline int scratch_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        remove(path);
        return 0;
}

/* Remove the temporary tree @path, depth first, following no symlink; NULL or a missing tree is a no-op. */
static inline void scratch_rm_rf(const char *path)
{
        if (path)
                nftw(path, scratch_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
