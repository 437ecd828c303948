/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for gv_marker_parse(): any input either fails cleanly or
 * parses; what parses must encode, and the encoding must parse back to
 * the same list (keys, values, order).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "markers/markers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_kvlist_t l = { 0 }, back = { 0 };
        gv_error_t *e = NULL;
        if (gv_marker_parse((const char *) data, size, &l, &e) < 0) {
                if (!e || !e->msg || l.n != 0 || l.items)
                        abort();
                gv_error_free(&e);
                return 0;
        }
        char *text = NULL;
        if (gv_marker_encode(&l, &text, &e) < 0)
                abort();
        if (gv_marker_parse(text, strlen(text), &back, &e) < 0)
                abort();
        if (back.n != l.n)
                abort();
        for (size_t i = 0; i < l.n; i++)
                if (strcmp(l.items[i].key, back.items[i].key) != 0 ||
                    strcmp(l.items[i].value, back.items[i].value) != 0)
                        abort();
        /* Encoding is canonical: encoding the re-parsed list gives the same text. */
        char *again = NULL;
        if (gv_marker_encode(&back, &again, &e) < 0 || strcmp(text, again) != 0)
                abort();
        free(again);
        free(text);
        gv_kvlist_clear(&l);
        gv_kvlist_clear(&back);
        return 0;
}
