/* SPDX-License-Identifier: Apache-2.0 */
#include "digits.h"

bool gv_fixed_digits(const char **p, int n, int *out)
{
        int v = 0;
        for (int i = 0; i < n; i++) {
                char c = (*p)[i];
                if (c < '0' || c > '9')
                        return false;
                v = v * 10 + (c - '0');
        }
        *p += n;
        *out = v;
        return true;
}
