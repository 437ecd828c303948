/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growing arrays, in the style of systemd's src/basic/alloc-util.h: one overflow-checked
 * helper instead of a hand-written doubling realloc() loop at every call site.
 *
 *     size_t n = 0, cap = 0;
 *     item_t *v = NULL;
 *     ...
 *     if (!GV_GREEDY_REALLOC(v, cap, n + 1))
 *             return gv_error_oom(err);
 *     v[n++] = item;
 */
#ifndef GV_BASE_ALLOC_H
#define GV_BASE_ALLOC_H

#include <stddef.h>

/*
 * gv_greedy_realloc - make room for at least @need elements of @size bytes in the array *@p,
 * which has room for *@cap elements (0 for a NULL *@p).  When *@cap is smaller than @need the
 * array grows to the larger of @need and twice *@cap (and to at least 64 bytes), so that n
 * appends one at a time cost O(n) copies, as systemd's greedy_realloc().  New elements are not
 * initialised.  Returns the array (*@p, which may have moved), or NULL when @size is 0, when
 * @need * @size does not fit a size_t, or when memory runs out; then *@p and *@cap are
 * unchanged and the old array is still the caller's.
 */
void *gv_greedy_realloc(void **p, size_t *cap, size_t need, size_t size);

/* GV_GREEDY_REALLOC(array, cap, need) - gv_greedy_realloc() for a typed @array and its size_t @cap. */
#define GV_GREEDY_REALLOC(array, cap, need) \
        gv_greedy_realloc((void **) &(array), &(cap), (need), sizeof((array)[0]))

#endif
