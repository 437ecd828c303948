/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the watch stream parser: gv_k8s_linebuf_feed() splitting the
 * input at chunk boundaries taken from its first byte, and each line through
 * gv_k8s_watch_event_parse().
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "k8s/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(void *ud, char *line, size_t len)
{
        size_t *count = ud;
        if (strlen(line) != len)
                return 0; /* an embedded NUL: the JSON parser stops there, fine */
        gv_k8s_event_type_t t;
        json_object *o = NULL;
        gv_error_t *err = NULL;
        if (gv_k8s_watch_event_parse(line, len, &t, &o, &err) == 0) {
                if (!o || (unsigned) t >= (unsigned) GV_K8S_EVENT_SYNCED)
                        __builtin_trap();
                (void) gv_k8s_event_type_name(t);
                json_object_put(o);
        } else if (!err) {
                __builtin_trap();
        }
        gv_error_free(&err);
        (*count)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        size_t chunk = (size_t) data[0] % 17 + 1, count = 0;
        gv_k8s_linebuf_t lb = { .max_line = 4096 };
        for (size_t off = 1; off < size; off += chunk) {
                size_t n = size - off < chunk ? size - off : chunk;
                int r = gv_k8s_linebuf_feed(&lb, (const char *) data + off, n, on_line, &count);
                if (r != 0 && r != -EMSGSIZE)
                        __builtin_trap();
        }
        gv_k8s_linebuf_clear(&lb);
        return 0;
}
