/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: NVIDIA_VISIBLE_DEVICES as cuda-check reads it (gv_visible_devices_parse(),
 * then gv_visible_devices_select() against 4 GPUs).  Checks: every failure carries its
 * message and a success none; a list holds n trimmed, non-empty, distinct items and ends in
 * NULL; selection counts no more devices than the list names, and on failure leaves the
 * caller's selection and count alone.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "cudacheck/cudacheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_list(const gv_visible_devices_t *v)
{
        if (!v->ids || v->n == 0 || v->ids[v->n])
                __builtin_trap();
        for (size_t i = 0; i < v->n; i++) {
                size_t len = strlen(v->ids[i]);
                if (len == 0 || strchr(v->ids[i], ',') || strchr(" \t", v->ids[i][0]) ||
                    strchr(" \t", v->ids[i][len - 1]))
                        __builtin_trap(); /* empty, untrimmed or still holding a separator */
                for (size_t j = 0; j < i; j++)
                        if (strcmp(v->ids[i], v->ids[j]) == 0)
                                __builtin_trap(); /* a duplicate kept */
        }
}

static void check_select(const gv_visible_devices_t *v)
{
        static const char *const uuids[] = { "GPU-00000000-0000-0000-0000-000000000000",
                                             "GPU-11111111-1111-1111-1111-111111111111", NULL,
                                             "GPU-33333333-3333-3333-3333-333333333333" };
        bool selected[4] = { true, false, true, false };
        size_t n_visible = 99;
        gv_error_t *err = NULL;
        int r = gv_visible_devices_select(v, uuids, 4, selected, &n_visible, &err);
        if (r < 0) {
                if (!err || n_visible != 99 || !selected[0] || selected[1] || !selected[2] || selected[3])
                        __builtin_trap(); /* no message, or the caller's values changed */
        } else if (err || (v->kind == GV_VISIBLE_LIST && n_visible > v->n) || n_visible > 4 + v->n) {
                __builtin_trap();
        }
        gv_error_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        gv_visible_devices_t v = { 0 };
        gv_error_t *err = NULL;
        int r = gv_visible_devices_parse(s, &v, &err);
        if ((r < 0) != (err != NULL))
                __builtin_trap();
        if (r == 0) {
                if (v.kind == GV_VISIBLE_LIST)
                        check_list(&v);
                else if (v.ids || v.n)
                        __builtin_trap();
                check_select(&v);
        }
        gv_error_free(&err);
        gv_visible_devices_free(&v);
        free(s);
        return 0;
}
