/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing of the exporter's listen address (":8000", "127.0.0.1:8000", "[::1]:8000"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "metrics.h"

static int parse_port(const char *p, uint16_t *out)
{
        if (!*p || strlen(p) > 5)
                return -EINVAL;
        unsigned long v = 0;
        for (const char *c = p; *c; c++) {
                if (*c < '0' || *c > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*c - '0');
        }
        if (v > 65535)
                return -ERANGE;
        *out = (uint16_t) v;
        return 0;
}

int gv_metrics_parse_listen(const char *s, gv_listen_addr_t *out, gv_error_t **err)
{
        if (!s || !*s)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "empty listen address (expected :PORT, HOST:PORT or [IPV6]:PORT)");

        _cleanup_free_ char *host = NULL;
        const char *port_str;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close == s + 1)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "listen address '%s': expected [IPV6]:PORT", s);
                if (close[1] != ':')
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "listen address '%s': expected ':PORT' after ']'", s);
                host = strndup(s + 1, (size_t) (close - s - 1));
                if (!host)
                        return gv_error_oom(err);
                if (strchr(host, '[') || strchr(host, ']'))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "listen address '%s': stray bracket", s);
                port_str = close + 2;
        } else {
                const char *colon = strrchr(s, ':');
                if (!colon)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "listen address '%s': no port (write :%s for every address)", s, s);
                if (memchr(s, ':', (size_t) (colon - s)))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "listen address '%s': an IPv6 address needs brackets, as in [::1]:8000", s);
                if (strchr(s, ']'))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "listen address '%s': stray bracket", s);
                if (colon != s) {
                        host = strndup(s, (size_t) (colon - s));
                        if (!host)
                                return gv_error_oom(err);
                }
                port_str = colon + 1;
        }

        uint16_t port;
        int r = parse_port(port_str, &port);
        if (r == -ERANGE)
                return gv_error_set(err, ERANGE, GV_REASON_CONFIG, "listen address '%s': port beyond 65535", s);
        if (r < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "listen address '%s': port '%s' is not a number from 0 to 65535", s, port_str);

        out->host = TAKE_PTR(host);
        out->port = port;
        return 0;
}

void gv_listen_addr_clear(gv_listen_addr_t *a)
{
        if (!a)
                return;
        free(a->host);
        a->host = NULL;
        a->port = 0;
}
