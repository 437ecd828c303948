/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for the node-signal configuration parsers (src/nodesignal/parse.c):
 * gv_nodesignal_parse_taint(), gv_nodesignal_parse_label() and
 * gv_nodesignal_condition_type_valid(), all on the same input.  A failure
 * must leave an error with reason config (or internal, out of memory) and
 * the out-parameters untouched; what parses must have a valid key, and the
 * value written back in kubectl's syntax must parse to the same thing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "nodesignal/nodesignal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool str_eq(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_failure(int r, gv_error_t **e)
{
        if (r >= 0)
                abort();
        if (!*e || !(*e)->msg || ((*e)->reason != GV_REASON_CONFIG && (*e)->reason != GV_REASON_INTERNAL))
                abort();
        gv_error_free(e);
}

static void fuzz_taint(const char *s)
{
        gv_nodesignal_taint_t t = { 0 }, back = { 0 };
        gv_error_t *e = NULL;
        int r = gv_nodesignal_parse_taint(s, &t, &e);
        if (r < 0) {
                check_failure(r, &e);
                if (t.key || t.value || t.effect)
                        abort();
                return;
        }
        if (!gv_nodesignal_condition_type_valid(t.key) || !t.effect)
                abort();
        if (strcmp(t.effect, "NoSchedule") != 0 && strcmp(t.effect, "PreferNoSchedule") != 0 &&
            strcmp(t.effect, "NoExecute") != 0)
                abort();
        if (t.value && !*t.value)
                abort(); /* an empty value is reported as no value */
        char *text = NULL;
        if (asprintf(&text, "%s%s%s:%s", t.key, t.value ? "=" : "", t.value ? t.value : "", t.effect) < 0)
                abort();
        if (gv_nodesignal_parse_taint(text, &back, &e) < 0)
                abort();
        if (!str_eq(t.key, back.key) || !str_eq(t.value, back.value) || !str_eq(t.effect, back.effect))
                abort();
        free(text);
        gv_nodesignal_taint_clear(&t);
        gv_nodesignal_taint_clear(&back);
}

static void fuzz_label(const char *s)
{
        char *key = NULL, *value = NULL, *key2 = NULL, *value2 = NULL;
        gv_error_t *e = NULL;
        int r = gv_nodesignal_parse_label(s, &key, &value, &e);
        if (r < 0) {
                check_failure(r, &e);
                if (key || value)
                        abort();
                return;
        }
        if (!key || !value || !gv_nodesignal_condition_type_valid(key))
                abort();
        char *text = NULL;
        if (asprintf(&text, "%s=%s", key, value) < 0)
                abort();
        if (strcmp(text, s) != 0) /* a label is taken verbatim */
                abort();
        if (gv_nodesignal_parse_label(text, &key2, &value2, &e) < 0 || strcmp(key, key2) != 0 ||
            strcmp(value, value2) != 0)
                abort();
        free(text);
        free(key);
        free(value);
        free(key2);
        free(value2);
}

static void fuzz_condition(const char *s)
{
        if (!gv_nodesignal_condition_type_valid(s))
                return;
        /* a valid condition type is a valid label key and a valid taint key */
        char *text = NULL;
        if (asprintf(&text, "%s=v:NoSchedule", s) < 0)
                abort();
        gv_nodesignal_taint_t t = { 0 };
        gv_error_t *e = NULL;
        if (gv_nodesignal_parse_taint(text, &t, &e) < 0 || strcmp(t.key, s) != 0)
                abort();
        gv_nodesignal_taint_clear(&t);
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_cstr(data, size);
        if (!s)
                return 0;
        fuzz_taint(s);
        fuzz_label(s);
        fuzz_condition(s);
        free(s);
        return 0;
}
