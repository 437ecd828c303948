/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for gv_metrics_parse_listen() (src/metrics/addr.c): any input
 * either fails with a config error and leaves the out-parameter untouched,
 * or parses; what parses, written back as :PORT, HOST:PORT or [IPV6]:PORT,
 * must parse to the same host and port.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;

        gv_listen_addr_t a = { .host = NULL, .port = 4242 }, back = { 0 };
        gv_error_t *e = NULL;
        if (gv_metrics_parse_listen(s, &a, &e) < 0) {
                if (!e || !e->msg || (e->reason != GV_REASON_CONFIG && e->reason != GV_REASON_INTERNAL))
                        abort();
                if (a.host || a.port != 4242)
                        abort();
                gv_error_free(&e);
                free(s);
                return 0;
        }
        if (a.host && (!*a.host || strchr(a.host, ']')))
                abort();
        char *text = NULL;
        int n;
        if (!a.host)
                n = asprintf(&text, ":%u", (unsigned) a.port);
        else if (strchr(a.host, ':'))
                n = asprintf(&text, "[%s]:%u", a.host, (unsigned) a.port);
        else
                n = asprintf(&text, "%s:%u", a.host, (unsigned) a.port);
        if (n < 0)
                abort();
        if (gv_metrics_parse_listen(text, &back, &e) < 0)
                abort();
        if (back.port != a.port || (!a.host != !back.host) || (a.host && strcmp(a.host, back.host) != 0))
                abort();
        free(text);
        gv_listen_addr_clear(&a);
        gv_listen_addr_clear(&back);
        free(s);
        return 0;
}
