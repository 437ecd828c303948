/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixed-width decimal fields, as in timestamps (RFC 3339 "2024-05-01",
 * IMF-fixdate "06 Nov 1994"): no sign, no blank, no fewer digits.
 */
#ifndef GV_BASE_DIGITS_H
#define GV_BASE_DIGITS_H

#include <stdbool.h>

/*
 * gv_fixed_digits - read exactly @n (1..9) ASCII digits at *@p into *@out and
 * advance *@p past them.  Returns false, with *@p and *@out untouched, when
 * any of the @n characters is not a digit (a NUL stops it there).
 */
bool gv_fixed_digits(const char **p, int n, int *out);

#endif
