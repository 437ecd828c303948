/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the Kubernetes client: escaping, backoff, Retry-After, line splitting, base64. */
#include "k8s.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/digits.h"

char *gv_k8s_escape(const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t n = strlen(s);
        char *out = malloc(n * 3 + 1);
        if (!out)
                return NULL;
        char *p = out;
        for (const unsigned char *q = (const unsigned char *) s; *q; q++) {
                unsigned char ch = *q;
                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                    ch == '.' || ch == '_' || ch == '~') {
                        *p++ = (char) ch;
                } else {
                        *p++ = '%';
                        *p++ = hex[ch >> 4];
                        *p++ = hex[ch & 15];
                }
        }
        *p = '\0';
        return out;
}

char *gv_k8s_build_path(const char *prefix, ...)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        bool ok = fputs(prefix, f) >= 0;
        bool first = strchr(prefix, '?') == NULL;
        va_list ap;
        va_start(ap, prefix);
        for (;;) {
                /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): false positive: va_start(ap, prefix) is above, on every path */
                const char *k = va_arg(ap, const char *);
                if (!k)
                        break;
                const char *v = va_arg(ap, const char *);
                if (!v || !*v)
                        continue;
                _cleanup_free_ char *ev = gv_k8s_escape(v);
                if (!ev) {
                        ok = false;
                        continue;
                }
                if (fprintf(f, "%c%s=%s", first ? '?' : '&', k, ev) < 0)
                        ok = false;
                first = false;
        }
        va_end(ap);
        if (fclose(f) != 0)
                ok = false;
        if (!ok) {
                free(buf);
                return NULL;
        }
        return buf;
}

unsigned gv_k8s_backoff_ms(unsigned attempt, unsigned initial_ms, unsigned max_ms, uint32_t rnd)
{
        if (attempt == 0)
                attempt = 1;
        unsigned long long d = initial_ms ? initial_ms : 1;
        for (unsigned i = 1; i < attempt && d < max_ms; i++)
                d *= 2;
        if (d > max_ms)
                d = max_ms;
        unsigned long long half = d / 2;
        unsigned long long jitter = (d - half) * (unsigned long long) rnd / UINT32_MAX;
        return (unsigned) (half + jitter);
}

/* The index of the 3-letter name at @m in @names (case-sensitive, as RFC 9110 5.6.7 says), or -1. */
static int name_index(const char *m, const char *const *names, int n)
{
        for (int i = 0; i < n; i++)
                if (strncmp(m, names[i], 3) == 0)
                        return i;
        return -1;
}

/* Skip the literal @lit at *p; false when *p does not start with it. */
static bool skip_lit(const char **p, const char *lit)
{
        size_t n = strlen(lit);
        if (strncmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

/* IMF-fixdate (RFC 9110 5.6.7), "Sun, 06 Nov 1994 08:49:37 GMT": fixed-width digits, no
 * signs, and a day that exists in its month (timegm() would roll Feb 31 into March). */
static int parse_imf_fixdate(const char *p, time_t *out)
{
        static const char *const wdays[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
        static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
        int day, mon, year, hh, mm, ss;
        if (name_index(p, wdays, 7) < 0)
                return -EINVAL;
        p += 3;
        if (!skip_lit(&p, ", ") || !gv_fixed_digits(&p, 2, &day) || !skip_lit(&p, " ") ||
            (mon = name_index(p, months, 12)) < 0)
                return -EINVAL;
        p += 3;
        if (!skip_lit(&p, " ") || !gv_fixed_digits(&p, 4, &year) || !skip_lit(&p, " ") || !gv_fixed_digits(&p, 2, &hh) ||
            !skip_lit(&p, ":") || !gv_fixed_digits(&p, 2, &mm) || !skip_lit(&p, ":") || !gv_fixed_digits(&p, 2, &ss) ||
            !skip_lit(&p, " GMT"))
                return -EINVAL;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                p++;
        if (*p || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 || year < 1970)
                return -EINVAL;
        struct tm tm = { .tm_year = year - 1900, .tm_mon = mon, .tm_mday = day,
                         .tm_hour = hh, .tm_min = mm, .tm_sec = ss == 60 ? 59 : ss /* leap second */ };
        time_t t = timegm(&tm);
        if (t == (time_t) -1 || tm.tm_mday != day || tm.tm_mon != mon)
                return -EINVAL;
        *out = t + (ss == 60);
        return 0;
}

int gv_k8s_parse_retry_after(const char *value, time_t now, unsigned long *delay_ms)
{
        if (!value)
                return -EINVAL;
        while (*value == ' ' || *value == '\t')
                value++;
        if (*value >= '0' && *value <= '9') {
                char *end = NULL;
                errno = 0;
                unsigned long long s = strtoull(value, &end, 10);
                while (end && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
                        end++;
                if (errno || !end || *end)
                        return -EINVAL;
                if (s > ULONG_MAX / 1000)
                        s = ULONG_MAX / 1000;
                *delay_ms = (unsigned long) s * 1000UL;
                return 0;
        }
        time_t t;
        if (parse_imf_fixdate(value, &t) < 0)
                return -EINVAL;
        *delay_ms = t > now ? (unsigned long) (t - now) * 1000UL : 0;
        return 0;
}

int gv_k8s_http_errno(long code, const char *reason)
{
        if (code >= 200 && code < 300)
                return 0;
        switch (code) {
        case 400:
        case 422:
                return -EINVAL;
        case 401:
                return -EPERM;
        case 403:
                return -EACCES;
        case 404:
                return -ENOENT;
        case 409:
                return reason && strcmp(reason, "Conflict") == 0 ? -EBUSY : -EEXIST;
        case 410:
                return -ESTALE;
        case 429:
                return -EAGAIN;
        default:
                return -EIO;
        }
}

/* ---------------- line buffer ---------------- */

#define GV_K8S_DEFAULT_MAX_LINE (16u << 20)

void gv_k8s_linebuf_clear(gv_k8s_linebuf_t *lb)
{
        free(lb->buf);
        lb->buf = NULL;
        lb->len = lb->cap = 0;
}

static int deliver(char *line, size_t len, gv_k8s_line_fn fn, void *userdata)
{
        if (len > 0 && line[len - 1] == '\r')
                len--;
        line[len] = '\0';
        if (len == 0)
                return 0;
        return fn(userdata, line, len);
}

int gv_k8s_linebuf_feed(gv_k8s_linebuf_t *lb, const char *data, size_t len, gv_k8s_line_fn fn, void *userdata)
{
        size_t max = lb->max_line ? lb->max_line : GV_K8S_DEFAULT_MAX_LINE;
        while (len > 0) {
                const char *nl = memchr(data, '\n', len);
                size_t take = nl ? (size_t) (nl - data) : len;
                if (lb->len + take > max) {
                        lb->len = 0;
                        return -EMSGSIZE;
                }
                if (!GV_GREEDY_REALLOC(lb->buf, lb->cap, lb->len + take + 1))
                        return -ENOMEM;
                memcpy(lb->buf + lb->len, data, take);
                lb->len += take;
                if (!nl)
                        return 0;
                size_t l = lb->len;
                lb->len = 0;
                int r = deliver(lb->buf, l, fn, userdata);
                if (r != 0)
                        return r;
                data = nl + 1;
                len -= take + 1;
        }
        return 0;
}

/* ---------------- base64 ---------------- */

static int b64val(unsigned char ch)
{
        if (ch >= 'A' && ch <= 'Z')
                return ch - 'A';
        if (ch >= 'a' && ch <= 'z')
                return ch - 'a' + 26;
        if (ch >= '0' && ch <= '9')
                return ch - '0' + 52;
        if (ch == '+' || ch == '-')
                return 62;
        if (ch == '/' || ch == '_')
                return 63;
        return -1;
}

int gv_k8s_base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
        char *buf = malloc(len / 4 * 3 + 4);
        if (!buf)
                return -ENOMEM;
        size_t n = 0;
        unsigned acc = 0;
        int bits = 0;
        bool pad = false;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) in[i];
                if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
                        continue;
                if (ch == '=') {
                        pad = true;
                        continue;
                }
                int v = b64val(ch);
                if (v < 0 || pad) {
                        free(buf);
                        return -EINVAL;
                }
                acc = (acc << 6) | (unsigned) v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        buf[n++] = (char) ((acc >> bits) & 0xff);
                }
        }
        if (bits >= 6) { /* one stray character: not valid base64 */
                free(buf);
                return -EINVAL;
        }
        buf[n] = '\0';
        *out = buf;
        *out_len = n;
        return 0;
}

/* ---------------- watch events ---------------- */

static const char *const event_names[] = {
        [GV_K8S_EVENT_ADDED] = "ADDED",       [GV_K8S_EVENT_MODIFIED] = "MODIFIED", [GV_K8S_EVENT_DELETED] = "DELETED",
        [GV_K8S_EVENT_BOOKMARK] = "BOOKMARK", [GV_K8S_EVENT_ERROR] = "ERROR",       [GV_K8S_EVENT_SYNCED] = "SYNCED",
};

const char *gv_k8s_event_type_name(gv_k8s_event_type_t t)
{
        if ((unsigned) t >= GV_ARRAY_SIZE(event_names))
                return "UNKNOWN";
        return event_names[t];
}

int gv_k8s_watch_event_parse(const char *line, size_t len, gv_k8s_event_type_t *type, json_object **object,
                             gv_error_t **err)
{
        if (len > INT_MAX)
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event: line too long");
        json_tokener *tok = json_tokener_new_ex(64);
        if (!tok)
                return gv_error_oom(err);
        _cleanup_json_ json_object *root = json_tokener_parse_ex(tok, line, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        size_t used = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!root || jerr != json_tokener_success)
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event: invalid JSON: %s",
                                    json_tokener_error_desc(jerr == json_tokener_success ? json_tokener_continue : jerr));
        for (size_t i = used; i < len; i++)
                if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '\n')
                        return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event: trailing data after JSON");
        json_object *jt = NULL, *jo = NULL;
        if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "type", &jt) ||
            !json_object_is_type(jt, json_type_string))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event: no \"type\"");
        const char *ts = json_object_get_string(jt);
        int found = -1;
        for (int i = 0; i < (int) GV_K8S_EVENT_SYNCED; i++)
                if (strcmp(ts, event_names[i]) == 0)
                        found = i;
        if (found < 0)
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event: unknown type \"%.40s\"", ts);
        if (!json_object_object_get_ex(root, "object", &jo) || !json_object_is_type(jo, json_type_object))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "watch event %s: no \"object\"",
                                    event_names[found]);
        json_object_get(jo);
        *type = (gv_k8s_event_type_t) found;
        *object = jo;
        return 0;
}
