/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Walking a profile's YAML document (libyaml's document API, so every node
 * carries its line): typed getters that report "<source>:<line>: <field>:
 * <problem>" (profile-internal.h).
 */
#include <errno.h>
#include <math.h> /* isfinite (a macro; no libm needed) */
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "abi/nvml/nvml-abi.h"
#include "base/cleanup.h"
#include "mock/nvml/profile-internal.h"

/* ------------------------------------------------------------------ */
/* YAML walking                                                        */

yaml_node_t *mp_ynode(pctx_t *c, int id)
{
        return yaml_document_get_node(c->doc, id);
}

unsigned long mp_yline(const yaml_node_t *n)
{
        return n ? (unsigned long) n->start_mark.line + 1 : 0;
}

/* "<source>:<line>: <prefix>.<key>: <message>" */
__attribute__((format(printf, 5, 6))) int mp_perr(pctx_t *c, const yaml_node_t *n, const char *prefix,
                                                      const char *key, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return gv_error_oom(c->err);
        const char *sep = (prefix && *prefix && key && *key) ? "." : "";
        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s:%lu: %s%s%s: %s", c->source, mp_yline(n),
                            prefix ? prefix : "", sep, key ? key : "", msg);
}

const char *mp_scalar(const yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        return (const char *) n->data.scalar.value;
}

bool mp_is_na(const yaml_node_t *n)
{
        const char *s = mp_scalar(n);
        if (!s)
                return false;
        return strcasecmp(s, "N/A") == 0 || strcasecmp(s, "[N/A]") == 0 || strcasecmp(s, "not-supported") == 0 ||
               strcasecmp(s, "not_supported") == 0 || strcasecmp(s, "unsupported") == 0;
}

bool mp_is_null(const yaml_node_t *n)
{
        const char *s = mp_scalar(n);
        if (!s)
                return false;
        if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        return *s == 0 || strcmp(s, "~") == 0 || strcasecmp(s, "null") == 0;
}

yaml_node_t *mp_map_get(pctx_t *c, yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const char *k = mp_scalar(mp_ynode(c, p->key));
                if (k && strcmp(k, key) == 0)
                        return mp_ynode(c, p->value);
        }
        return NULL;
}

int mp_want_map(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key)
{
        if (!n || n->type != YAML_MAPPING_NODE)
                return mp_perr(c, n, prefix, key, "expected a mapping");
        return 0;
}

int mp_want_seq(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key)
{
        if (!n || n->type != YAML_SEQUENCE_NODE)
                return mp_perr(c, n, prefix, key, "expected a list");
        return 0;
}

int mp_get_ull(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned long long max,
                   unsigned long long *out)
{
        const char *s = mp_scalar(n);
        if (!s || !*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                goto bad;
        if (*s == '-' || *s == '+' || *s == ' ')
                goto bad;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno == ERANGE || v > max)
                return mp_perr(c, n, prefix, key, "%s is out of range (at most %llu)", s, max);
        if (errno || !end || *end)
                goto bad;
        *out = v;
        return 0;
bad:
        return mp_perr(c, n, prefix, key, "expected an integer");
}

int mp_get_uint(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned max, unsigned *out)
{
        unsigned long long v = 0;
        int r = mp_get_ull(c, n, prefix, key, max, &v);
        if (r < 0)
                return r;
        *out = (unsigned) v;
        return 0;
}

static int get_double(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, double max, double *out)
{
        const char *s = mp_scalar(n);
        if (!s || !*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return mp_perr(c, n, prefix, key, "expected a number");
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || !end || *end || !isfinite(v))
                return mp_perr(c, n, prefix, key, "expected a number");
        if (v < 0 || v > max)
                return mp_perr(c, n, prefix, key, "%s is out of range (0..%g)", s, max);
        *out = v;
        return 0;
}

int mp_get_bool(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool *out)
{
        const char *s = mp_scalar(n);
        static const char *const yes[] = { "true", "yes", "on", "enabled", "enable", "1" };
        static const char *const no[] = { "false", "no", "off", "disabled", "disable", "0" };
        if (s) {
                for (size_t i = 0; i < GV_ARRAY_SIZE(yes); i++)
                        if (strcasecmp(s, yes[i]) == 0) {
                                *out = true;
                                return 0;
                        }
                for (size_t i = 0; i < GV_ARRAY_SIZE(no); i++)
                        if (strcasecmp(s, no[i]) == 0) {
                                *out = false;
                                return 0;
                        }
        }
        return mp_perr(c, n, prefix, key, "expected a boolean (true/false, enabled/disabled)");
}

/* A string value; numbers are accepted as their text. */
int mp_get_str(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, char **out)
{
        const char *s = mp_scalar(n);
        if (!s)
                return mp_perr(c, n, prefix, key, "expected a string");
        if (strlen(s) > 255)
                return mp_perr(c, n, prefix, key, "longer than 255 characters");
        /* Names, UUIDs, serials and versions end up in log lines and `nvidia-smi -L` lines. */
        for (const char *q = s; *q; q++)
                if ((unsigned char) *q < 0x20 || *q == 0x7f)
                        return mp_perr(c, n, prefix, key, "contains a control character (0x%02x at offset %zu)",
                                       (unsigned) (unsigned char) *q, (size_t) (q - s));
        char *d = strdup(s);
        if (!d)
                return gv_error_oom(c->err);
        free(*out);
        *out = d;
        return 0;
}

/* Milliwatts from "<key>_w" (watts, may be fractional) or "<key>_mw". */
int mp_get_mw(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool watts, unsigned *out)
{
        if (watts) {
                double w = 0;
                int r = get_double(c, n, prefix, key, 100000.0, &w);
                if (r < 0)
                        return r;
                *out = (unsigned) (w * 1000.0 + 0.5);
                return 0;
        }
        return mp_get_uint(c, n, prefix, key, 100000000u, out);
}

void mp_set_supported(gv_mock_device_t *d, uint32_t bit, bool supported)
{
        if (supported)
                d->unsupported &= ~bit;
        else
                d->unsupported |= bit;
}

/*
 * A field that may be "N/A": when @v is N/A, marks @bit unsupported and
 * returns true (nothing left to parse); otherwise returns false after marking
 * @bit supported when @mark_supported.
 */
bool mp_na_field(gv_mock_device_t *d, const yaml_node_t *v, uint32_t bit, bool mark_supported)
{
        if (mp_is_na(v)) {
                mp_set_supported(d, bit, false);
                return true;
        }
        if (mark_supported)
                mp_set_supported(d, bit, true);
        return false;
}

/* Parses "%08X:%02X:%02X.0" or "%04X:%02X:%02X.0" into a canonical 8-digit form. */
int mp_parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, char **canon)
{
        unsigned a, b, d, f;
        int n = -1;
        if (sscanf(s, "%x:%x:%x.%x%n", &a, &b, &d, &f, &n) != 4 || n < 0 || s[n] != 0)
                return -EINVAL;
        if (b > 0xff || d > 0x1f || f > 7)
                return -EINVAL;
        if (canon && asprintf(canon, "%08X:%02X:%02X.0", a, b, d) < 0)
                return -ENOMEM;
        *dom = a;
        *bus = b;
        *dev = d;
        return 0;
}

bool mp_valid_uuid(const char *s, const char *prefix)
{
        size_t pl = strlen(prefix);
        if (strncmp(s, prefix, pl) != 0)
                return false;
        s += pl;
        static const unsigned groups[] = { 8, 4, 4, 4, 12 };
        for (size_t g = 0; g < 5; g++) {
                for (unsigned i = 0; i < groups[g]; i++, s++)
                        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
                                return false;
                if (g < 4 && *s++ != '-')
                        return false;
        }
        return *s == 0;
}

/* Calls @cb for each pair of @map; the prefix passed on is "<prefix>" (keys are separate). */
int mp_for_each_pair(pctx_t *c, yaml_node_t *map, const char *prefix, map_cb cb, void *data)
{
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = mp_ynode(c, p->key), *v = mp_ynode(c, p->value);
                const char *ks = mp_scalar(k);
                if (!ks)
                        return mp_perr(c, k, prefix, "", "keys must be strings");
                if (!v)
                        return mp_perr(c, k, prefix, ks, "missing value");
                int r = cb(c, prefix, ks, v, data);
                if (r < 0)
                        return r;
        }
        return 0;
}

int mp_unknown_key(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key)
{
        if (c->lenient)
                return 0;
        return mp_perr(c, v, prefix, key, "unknown field");
}

char *mp_join(const char *prefix, const char *key)
{
        char *s = NULL;
        if (asprintf(&s, "%s%s%s", prefix, *prefix ? "." : "", key) < 0)
                return NULL;
        return s;
}

yaml_node_t *mp_seq_item(pctx_t *c, yaml_node_t *v, const char *base, size_t i, char **ip)
{
        if (asprintf(ip, "%s[%zu]", base, i) < 0) {
                *ip = NULL;
                return NULL;
        }
        return mp_ynode(c, v->data.sequence.items.start[i]);
}
