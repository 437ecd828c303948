/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parsing and checking of the signal's configuration values: label
 * "KEY=VALUE", taint "KEY[=VALUE]:EFFECT", condition types.  The syntax
 * rules are Kubernetes' (apimachinery validation: qualified names, label
 * values, taint effects).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "nodesignal.h"

static bool is_alnum(char c)
{
        return isascii((unsigned char) c) && isalnum((unsigned char) c);
}

/* 1-63 of [A-Za-z0-9._-], starting and ending alphanumeric (the name part of a qualified name). */
static bool name_part_valid(const char *s, size_t n)
{
        if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

/* A DNS-1123 subdomain: at most 253 of [a-z0-9.-], starting and ending alphanumeric (lowercase). */
static bool subdomain_valid(const char *s, size_t n)
{
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool lower_alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!lower_alnum && c != '-' && c != '.')
                        return false;
                if ((i == 0 || i == n - 1) && !lower_alnum)
                        return false;
        }
        return true;
}

static bool qualified_name_valid(const char *s, size_t n)
{
        const char *slash = memchr(s, '/', n);
        if (!slash)
                return name_part_valid(s, n);
        size_t plen = (size_t) (slash - s);
        return subdomain_valid(s, plen) && name_part_valid(slash + 1, n - plen - 1);
}

static bool label_value_valid(const char *s, size_t n)
{
        return n == 0 || name_part_valid(s, n);
}

bool gv_nodesignal_condition_type_valid(const char *s)
{
        return s && qualified_name_valid(s, strlen(s));
}

void gv_nodesignal_taint_clear(gv_nodesignal_taint_t *t)
{
        if (!t)
                return;
        free(t->key);
        free(t->value);
        free(t->effect);
        *t = (gv_nodesignal_taint_t) { 0 };
}

static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute" };

int gv_nodesignal_parse_taint(const char *s, gv_nodesignal_taint_t *out, gv_error_t **err)
{
        if (!s || !*s)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "empty taint: expected KEY[=VALUE]:EFFECT");
        const char *colon = strrchr(s, ':');
        if (!colon)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "taint '%s': no effect: expected KEY[=VALUE]:EFFECT, EFFECT one of NoSchedule, "
                                    "PreferNoSchedule, NoExecute", s);
        const char *effect = colon + 1;
        bool effect_ok = false;
        for (size_t i = 0; i < GV_ARRAY_SIZE(effects); i++)
                effect_ok = effect_ok || strcmp(effect, effects[i]) == 0;
        if (!effect_ok)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "taint '%s': effect '%s' is not NoSchedule, PreferNoSchedule or NoExecute", s, effect);
        size_t kvlen = (size_t) (colon - s);
        const char *eq = memchr(s, '=', kvlen);
        size_t klen = eq ? (size_t) (eq - s) : kvlen;
        if (!qualified_name_valid(s, klen))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "taint '%s': key '%.*s' is not a qualified name ([prefix/]name, name 1-63 of "
                                    "A-Za-z0-9._- starting and ending alphanumeric)", s, (int) klen, s);
        const char *val = eq ? eq + 1 : NULL;
        size_t vlen = eq ? kvlen - klen - 1 : 0;
        if (val && !label_value_valid(val, vlen))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "taint '%s': value '%.*s' is not a valid label value (at most 63 of A-Za-z0-9._- "
                                    "starting and ending alphanumeric)", s, (int) vlen, val);

        gv_nodesignal_taint_t t = {
                .key = strndup(s, klen),
                .value = val && vlen ? strndup(val, vlen) : NULL,
                .effect = strdup(effect),
        };
        if (!t.key || !t.effect || (val && vlen && !t.value)) {
                gv_nodesignal_taint_clear(&t);
                return gv_error_oom(err);
        }
        *out = t;
        return 0;
}

int gv_nodesignal_parse_label(const char *s, char **key, char **value, gv_error_t **err)
{
        const char *eq = s ? strchr(s, '=') : NULL;
        if (!eq)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "label '%s': expected KEY=VALUE", s ? s : "");
        size_t klen = (size_t) (eq - s);
        if (!qualified_name_valid(s, klen))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "label '%s': key '%.*s' is not a qualified name ([prefix/]name, name 1-63 of "
                                    "A-Za-z0-9._- starting and ending alphanumeric)", s, (int) klen, s);
        if (!label_value_valid(eq + 1, strlen(eq + 1)))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "label '%s': value '%s' is not a valid label value (at most 63 of A-Za-z0-9._- "
                                    "starting and ending alphanumeric)", s, eq + 1);
        _cleanup_free_ char *k = strndup(s, klen), *v = strdup(eq + 1);
        if (!k || !v)
                return gv_error_oom(err);
        *key = TAKE_PTR(k);
        *value = TAKE_PTR(v);
        return 0;
}
