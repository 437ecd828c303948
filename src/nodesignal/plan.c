/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure part of the node-level signal: the verdict of the markers and the
 * plan (merge patches and event) that brings a Node as read in line with it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "nodesignal.h"


/* ---- verdict ---- */

void gv_nodesignal_verdict_clear(gv_nodesignal_verdict_t *v)
{
        if (!v)
                return;
        free(v->detail);
        free(v->failed_message);
        *v = (gv_nodesignal_verdict_t) { .validated = false, .last = GV_MARKER_INVALID,
                                         .failing = GV_MARKER_INVALID, .state = GV_MARKER_MISSING };
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

bool gv_nodesignal_verdict_equal(const gv_nodesignal_verdict_t *a, const gv_nodesignal_verdict_t *b)
{
        return a->validated == b->validated && a->last == b->last && a->failing == b->failing &&
               a->state == b->state && str_eq(a->detail, b->detail);
}

bool gv_nodesignal_progress_equal(const gv_nodesignal_verdict_t *a, const gv_nodesignal_verdict_t *b)
{
        return a->has_running == b->has_running && (!a->has_running || a->running == b->running) &&
               a->has_failed == b->has_failed &&
               (!a->has_failed || (a->failed == b->failed && a->failed_exit_code == b->failed_exit_code &&
                                   a->failed_restarts == b->failed_restarts &&
                                   str_eq(a->failed_message, b->failed_message)));
}

/* The chain root .. @last into @chain (root first); returns its length. */
static size_t chain_of(gv_marker_id_t last, gv_marker_id_t chain[GV_MARKER__MAX])
{
        gv_marker_id_t rev[GV_MARKER__MAX];
        size_t n = 0;
        for (gv_marker_id_t m = last; m != GV_MARKER_INVALID && n < GV_MARKER__MAX; m = gv_marker_parent(m))
                rev[n++] = m;
        for (size_t i = 0; i < n; i++)
                chain[i] = rev[n - 1 - i];
        return n;
}

int gv_nodesignal_judge(gv_store_t *store, gv_marker_id_t last, gv_nodesignal_verdict_t *out, gv_error_t **err)
{
        if (last < 0 || last >= GV_MARKER__MAX || last == GV_MARKER_HOST_DRIVER)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "judge: bad last component");
        gv_marker_id_t chain[GV_MARKER__MAX];
        size_t n = chain_of(last, chain);
        gv_nodesignal_verdict_t v = { .last = last, .failing = GV_MARKER_INVALID, .state = GV_MARKER_READY };
        if (!store) {
                v.failing = chain[0];
                v.state = GV_MARKER_MISSING;
                v.detail = strdup("the status folder does not exist");
                if (!v.detail)
                        return gv_error_oom(err);
                *out = v;
                return 0;
        }
        /*
         * The last marker decides (its READY covers the whole chain, judged in
         * one inspection); when it is not READY, the first marker from the
         * root that is not READY is the one to name.
         */
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(store, last, &info, err);
        if (r < 0)
                return r;
        if (info.state == GV_MARKER_READY) {
                gv_marker_info_clear(&info);
                v.validated = true;
                *out = v;
                return 0;
        }
        for (size_t i = 0; i + 1 < n; i++) { /* the ancestors, root first */
                gv_marker_info_t up = { 0 };
                r = gv_store_inspect(store, chain[i], &up, err);
                if (r < 0) {
                        gv_marker_info_clear(&info);
                        return r;
                }
                if (up.state != GV_MARKER_READY) {
                        v.failing = chain[i];
                        v.state = up.state;
                        v.detail = TAKE_PTR(up.detail);
                        gv_marker_info_clear(&up);
                        break;
                }
                gv_marker_info_clear(&up);
        }
        if (v.failing == GV_MARKER_INVALID) { /* every ancestor is READY: the last one itself */
                v.failing = last;
                v.state = info.state;
                v.detail = TAKE_PTR(info.detail);
        }
        gv_marker_info_clear(&info);
        *out = v;
        return 0;
}

/* "nvidia-fs" -> "NvidiaFs", "missing" -> "Missing", appended to @f. */
static void camel(FILE *f, const char *s)
{
        bool up = true;
        for (; *s; s++) {
                if (*s == '-' || *s == '_') {
                        up = true;
                        continue;
                }
                fputc(up ? toupper((unsigned char) *s) : *s, f);
                up = false;
        }
}

char *gv_nodesignal_failure_reason(const gv_nodesignal_verdict_t *v)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        const char *comp = gv_marker_component(v->failing);
        camel(f, comp ? comp : "Chain");
        camel(f, gv_marker_state_name(v->state));
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* "driver, toolkit, cuda and plugin" for the chain up to @last. */
static char *chain_words(gv_marker_id_t last)
{
        gv_marker_id_t chain[GV_MARKER__MAX];
        size_t n = chain_of(last, chain);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", gv_marker_component(chain[i]));
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* "toolkit-ready is missing (not present)" */
static char *why_not(const gv_nodesignal_verdict_t *v)
{
        char *s = NULL;
        if (asprintf(&s, "%s is %s%s%s%s", gv_marker_file(v->failing), gv_marker_state_name(v->state),
                     v->detail ? " (" : "", v->detail ? v->detail : "", v->detail ? ")" : "") < 0)
                return NULL;
        return s;
}

/* ---- JSON helpers ---- */

static json_object *get(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static const char *get_str(json_object *o, const char *key)
{
        json_object *v = get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Add @val (taken, also on failure) under @key; -ENOMEM when @val is NULL or the add fails. */
static int put(json_object *o, const char *key, json_object *val)
{
        if (!val)
                return -ENOMEM;
        if (json_object_object_add(o, key, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

static int put_str(json_object *o, const char *key, const char *s)
{
        return put(o, key, json_object_new_string(s));
}

static int append(json_object *arr, json_object *val)
{
        if (!val)
                return -ENOMEM;
        if (json_object_array_add(arr, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

/* Append a deep copy of @src to @arr; -ENOMEM. */
static int append_copy(json_object *arr, json_object *src)
{
        json_object *copy = NULL;
        if (json_object_deep_copy(src, &copy, NULL) < 0)
                return -ENOMEM;
        return append(arr, copy);
}

/* {"metadata":{"resourceVersion":rv}} */
static json_object *patch_with_rv(const char *rv)
{
        _cleanup_json_ json_object *p = json_object_new_object();
        json_object *md = json_object_new_object();
        if (!p || put(p, "metadata", md) < 0 || put_str(md, "resourceVersion", rv) < 0)
                return NULL;
        return TAKE_PTR(p);
}

/* The condition of @type in @conds (an array or NULL), or NULL; *idx its index. */
static json_object *find_condition(json_object *conds, const char *type, size_t *idx)
{
        if (!conds || !json_object_is_type(conds, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);
                if (str_eq(get_str(c, "type"), type)) {
                        *idx = i;
                        return c;
                }
        }
        return NULL;
}

static bool taint_matches(json_object *t, const gv_nodesignal_taint_t *want)
{
        return str_eq(get_str(t, "key"), want->key) && str_eq(get_str(t, "effect"), want->effect);
}

/* ---- phase ---- */

const char *gv_nodesignal_phase_name(gv_nodesignal_phase_t p)
{
        static const char *const names[] = {
                [GV_NODESIGNAL_UNKNOWN] = "unknown",
                [GV_NODESIGNAL_PENDING] = "pending",
                [GV_NODESIGNAL_VALIDATED] = "validated",
                [GV_NODESIGNAL_FAILED] = "failed",
        };
        return (unsigned) p < GV_ARRAY_SIZE(names) ? names[p] : "unknown";
}

/* Whether a False condition's @reason says "never validated yet". */
static bool pending_reason(const char *reason)
{
        if (!reason)
                return false;
        size_t n = strlen(reason), sn = strlen(GV_NODESIGNAL_REASON_VALIDATION_FAILED_SUFFIX);
        return strcmp(reason, GV_NODESIGNAL_REASON_VALIDATING) == 0 || strcmp(reason, GV_NODESIGNAL_REASON_PENDING) == 0 ||
               (n > sn && strcmp(reason + n - sn, GV_NODESIGNAL_REASON_VALIDATION_FAILED_SUFFIX) == 0);
}

gv_nodesignal_phase_t gv_nodesignal_node_phase(const gv_nodesignal_spec_t *spec, json_object *node,
                                               gv_nodesignal_phase_t memory)
{
        gv_nodesignal_phase_t fallback = memory != GV_NODESIGNAL_UNKNOWN ? memory : GV_NODESIGNAL_PENDING;
        if (spec->condition_type) {
                size_t idx = 0;
                json_object *c = find_condition(get(get(node, "status"), "conditions"), spec->condition_type, &idx);
                const char *status = get_str(c, "status");
                if (str_eq(status, "True"))
                        return GV_NODESIGNAL_VALIDATED;
                if (str_eq(status, "False"))
                        return pending_reason(get_str(c, "reason")) ? GV_NODESIGNAL_PENDING : GV_NODESIGNAL_FAILED;
                return fallback;
        }
        if (memory != GV_NODESIGNAL_UNKNOWN)
                return memory;
        if (spec->label_key) {
                const char *have = get_str(get(get(node, "metadata"), "labels"), spec->label_key);
                if (have && str_eq(have, spec->label_value ? spec->label_value : ""))
                        return GV_NODESIGNAL_VALIDATED;
        }
        return GV_NODESIGNAL_PENDING;
}

/* ---- plan ---- */

void gv_nodesignal_plan_clear(gv_nodesignal_plan_t *p)
{
        if (!p)
                return;
        if (p->status_patch)
                json_object_put(p->status_patch);
        if (p->node_patch)
                json_object_put(p->node_patch);
        free(p->event_message);
        free(p->condition_reason);
        free(p->condition_message);
        *p = (gv_nodesignal_plan_t) { 0 };
}

/* The status patch, or *out NULL when the condition is as wanted. */
static int plan_condition(const gv_nodesignal_spec_t *spec, json_object *node, const char *rv, const char *status,
                          const char *reason, const char *message, const char *now, json_object **out)
{
        *out = NULL;
        json_object *conds = get(get(node, "status"), "conditions");
        size_t idx = 0;
        json_object *cur = find_condition(conds, spec->condition_type, &idx);
        if (cur && str_eq(get_str(cur, "status"), status) && str_eq(get_str(cur, "reason"), reason) &&
            str_eq(get_str(cur, "message"), message))
                return 0;

        _cleanup_json_ json_object *c = json_object_new_object();
        if (!c)
                return -ENOMEM;
        const char *transition = cur && str_eq(get_str(cur, "status"), status) ? get_str(cur, "lastTransitionTime") : NULL;
        int r;
        if ((r = put_str(c, "type", spec->condition_type)) < 0 || (r = put_str(c, "status", status)) < 0 ||
            (r = put_str(c, "reason", reason)) < 0 || (r = put_str(c, "message", message)) < 0 ||
            (r = put_str(c, "lastHeartbeatTime", now)) < 0 ||
            (r = put_str(c, "lastTransitionTime", transition ? transition : now)) < 0)
                return r;

        _cleanup_json_ json_object *list = json_object_new_array();
        if (!list)
                return -ENOMEM;
        size_t n = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
        for (size_t i = 0; i < n; i++) {
                if (cur && i == idx) {
                        if ((r = append(list, TAKE_PTR(c))) < 0)
                                return r;
                        continue;
                }
                if ((r = append_copy(list, json_object_array_get_idx(conds, i))) < 0)
                        return r;
        }
        if (c && (r = append(list, TAKE_PTR(c))) < 0)
                return r;

        _cleanup_json_ json_object *p = patch_with_rv(rv);
        json_object *st = json_object_new_object();
        if (!p || put(p, "status", st) < 0 || put(st, "conditions", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        *out = TAKE_PTR(p);
        return 0;
}

/* The labels patch ({key: value}, or {key: null} to remove it), or *out NULL when the label is as wanted. */
static int plan_label(const gv_nodesignal_spec_t *spec, json_object *node, bool validated, json_object **out)
{
        *out = NULL;
        const char *want = spec->label_value ? spec->label_value : "";
        json_object *lv = get(get(get(node, "metadata"), "labels"), spec->label_key);
        const char *have = lv && json_object_is_type(lv, json_type_string) ? json_object_get_string(lv) : NULL;
        if (validated ? str_eq(have, want) : lv == NULL)
                return 0;
        _cleanup_json_ json_object *labels = json_object_new_object();
        if (!labels)
                return -ENOMEM;
        int r = validated ? put_str(labels, spec->label_key, want)
                          : json_object_object_add(labels, spec->label_key, NULL) < 0 ? -ENOMEM : 0;
        if (r < 0)
                return r;
        *out = TAKE_PTR(labels);
        return 0;
}

/* Append our taint ({key, value, effect}) to @taints. */
static int append_taint(json_object *taints, const gv_nodesignal_taint_t *taint)
{
        json_object *t = json_object_new_object();
        if (!t)
                return -ENOMEM;
        int r;
        if ((r = append(taints, t)) < 0 || (r = put_str(t, "key", taint->key)) < 0 ||
            (taint->value && (r = put_str(t, "value", taint->value)) < 0) || (r = put_str(t, "effect", taint->effect)) < 0)
                return r;
        return 0;
}

/*
 * The new spec.taints: 1 with *out the whole list (NULL, which removes
 * spec.taints, when it is empty), or 0 when the taint is as wanted.
 */
static int plan_taints(const gv_nodesignal_spec_t *spec, json_object *node, bool validated, json_object **out)
{
        *out = NULL;
        json_object *cur = get(get(node, "spec"), "taints");
        size_t n = cur && json_object_is_type(cur, json_type_array) ? json_object_array_length(cur) : 0;
        bool has = false;
        for (size_t i = 0; i < n; i++)
                has = has || taint_matches(json_object_array_get_idx(cur, i), spec->taint);
        if (validated != has) /* validated and not tainted, or not validated and tainted */
                return 0;
        _cleanup_json_ json_object *taints = json_object_new_array();
        if (!taints)
                return -ENOMEM;
        int r;
        for (size_t i = 0; i < n; i++) {
                json_object *t = json_object_array_get_idx(cur, i);
                if (validated && taint_matches(t, spec->taint))
                        continue;
                if ((r = append_copy(taints, t)) < 0)
                        return r;
        }
        if (!validated && (r = append_taint(taints, spec->taint)) < 0)
                return r;
        if (json_object_array_length(taints) > 0)
                *out = TAKE_PTR(taints);
        return 1;
}

/* The node patch (labels, taints), or *out NULL when both are as wanted. */
static int plan_node(const gv_nodesignal_spec_t *spec, json_object *node, const char *rv, bool validated,
                     json_object **out)
{
        *out = NULL;
        _cleanup_json_ json_object *labels = NULL, *taints = NULL;
        int r = spec->label_key ? plan_label(spec, node, validated, &labels) : 0;
        if (r < 0)
                return r;
        r = spec->taint ? plan_taints(spec, node, validated, &taints) : 0;
        if (r < 0)
                return r;
        bool set_taints = r == 1;
        if (!labels && !set_taints)
                return 0;
        _cleanup_json_ json_object *p = patch_with_rv(rv);
        if (!p)
                return -ENOMEM;
        if (labels) {
                json_object *md = get(p, "metadata");
                if (put(md, "labels", TAKE_PTR(labels)) < 0)
                        return -ENOMEM;
        }
        if (set_taints) {
                json_object *sp = json_object_new_object();
                if (put(p, "spec", sp) < 0 || json_object_object_add(sp, "taints", TAKE_PTR(taints)) < 0)
                        return -ENOMEM;
        }
        *out = TAKE_PTR(p);
        return 0;
}

/* Reason and message of a node never validated yet (heap; both NULL and -1 when out of memory). */
static int pending_texts(const gv_nodesignal_verdict_t *v, const char *comp, const char *why, char **reason,
                         char **message)
{
        *reason = *message = NULL;
        int r;
        if (v->has_failed) {
                const char *fc = gv_marker_component(v->failed);
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                if (!f)
                        return -1;
                camel(f, fc);
                fputs(GV_NODESIGNAL_REASON_VALIDATION_FAILED_SUFFIX, f);
                if (fclose(f) != 0) {
                        free(buf);
                        return -1;
                }
                *reason = buf;
                r = asprintf(message, "%s validation failed (exit code %d, %d restart%s)%s%s", fc, v->failed_exit_code,
                             v->failed_restarts, v->failed_restarts == 1 ? "" : "s", v->failed_message ? ": " : "",
                             v->failed_message ? v->failed_message : "");
        } else {
                *reason = strdup(GV_NODESIGNAL_REASON_VALIDATING);
                const char *now = v->has_running ? gv_marker_component(v->running) : comp;
                r = asprintf(message, "validating %s%s: %s", now, v->has_running ? " (in progress)" : "", why);
        }
        if (r < 0 || !*reason) {
                if (r >= 0)
                        free(*message);
                free(*reason);
                *reason = *message = NULL;
                return -1;
        }
        return 0;
}

int gv_nodesignal_plan(const gv_nodesignal_spec_t *spec, const gv_nodesignal_verdict_t *v, json_object *node,
                       gv_nodesignal_phase_t memory, const char *now, gv_nodesignal_plan_t *out, gv_error_t **err)
{
        *out = (gv_nodesignal_plan_t) { 0 };
        json_object *md = get(node, "metadata");
        const char *name = get_str(md, "name"), *rv = get_str(md, "resourceVersion");
        if (!name || !rv)
                return gv_error_set(err, EINVAL, GV_REASON_KUBERNETES,
                                    "the Node as read has no metadata.name or metadata.resourceVersion");

        gv_nodesignal_plan_t p = { .before = gv_nodesignal_node_phase(spec, node, memory) };
        if (v->validated)
                p.after = GV_NODESIGNAL_VALIDATED;
        else if (p.before == GV_NODESIGNAL_VALIDATED || p.before == GV_NODESIGNAL_FAILED)
                p.after = GV_NODESIGNAL_FAILED;
        else
                p.after = GV_NODESIGNAL_PENDING;

        _cleanup_free_ char *words = chain_words(v->last), *why = v->validated ? NULL : why_not(v);
        if (!words || (!v->validated && !why))
                return gv_error_oom(err);
        const char *comp = v->validated ? NULL : gv_marker_component(v->failing);
        int r = 0;
        switch (p.after) {
        case GV_NODESIGNAL_VALIDATED:
                p.condition_reason = strdup(GV_NODESIGNAL_REASON_VALIDATED);
                r = asprintf(&p.condition_message, "%s validated", words);
                break;
        case GV_NODESIGNAL_FAILED:
                p.condition_reason = gv_nodesignal_failure_reason(v);
                r = asprintf(&p.condition_message, "%s not validated: %s", comp, why);
                break;
        default:
                r = pending_texts(v, comp, why, &p.condition_reason, &p.condition_message);
                break;
        }
        if (r < 0)
                p.condition_message = NULL;
        if (!p.condition_reason || !p.condition_message) {
                gv_nodesignal_plan_clear(&p);
                return gv_error_oom(err);
        }

        if (spec->condition_type) {
                r = plan_condition(spec, node, rv, v->validated ? "True" : "False", p.condition_reason,
                                   p.condition_message, now, &p.status_patch);
                if (r < 0) {
                        gv_nodesignal_plan_clear(&p);
                        return gv_error_oom(err);
                }
        }
        r = plan_node(spec, node, rv, v->validated, &p.node_patch);
        if (r < 0) {
                gv_nodesignal_plan_clear(&p);
                return gv_error_oom(err);
        }

        /* The event of the transition. */
        r = 0;
        if (p.after == GV_NODESIGNAL_VALIDATED && p.before != GV_NODESIGNAL_VALIDATED) {
                size_t idx = 0;
                const char *was = spec->condition_type
                                          ? get_str(find_condition(get(get(node, "status"), "conditions"),
                                                                   spec->condition_type, &idx), "reason")
                                          : NULL;
                p.event_type = "Normal";
                if (p.before == GV_NODESIGNAL_FAILED) {
                        p.event_reason = GV_NODESIGNAL_EVENT_RECOVERED;
                        r = asprintf(&p.event_message, "GPU validation recovered on node %s: %s validated%s%s%s", name,
                                     words, was ? " (was " : "", was ? was : "", was ? ")" : "");
                } else {
                        p.event_reason = GV_NODESIGNAL_EVENT_SUCCEEDED;
                        r = asprintf(&p.event_message, "GPU validation succeeded on node %s: %s validated", name, words);
                }
        } else if (p.after == GV_NODESIGNAL_FAILED && p.before == GV_NODESIGNAL_VALIDATED) {
                p.event_type = "Warning";
                p.event_reason = GV_NODESIGNAL_EVENT_FAILED;
                r = asprintf(&p.event_message, "GPU validation failed on node %s: component %s, reason %s: %s", name,
                             comp, p.condition_reason, why);
        }
        if (r < 0) {
                p.event_message = NULL;
                gv_nodesignal_plan_clear(&p);
                return gv_error_oom(err);
        }
        *out = p;
        return 0;
}

/* ---- the validator's own pod ---- */

/* "driver-validation" -> GV_MARKER_DRIVER; GV_MARKER_INVALID for other names. */
static gv_marker_id_t component_of_container(const char *name)
{
        static const char suffix[] = "-validation";
        size_t n = name ? strlen(name) : 0, sn = sizeof(suffix) - 1;
        if (n <= sn || strcmp(name + n - sn, suffix) != 0)
                return GV_MARKER_INVALID;
        _cleanup_free_ char *comp = strndup(name, n - sn);
        return comp ? gv_marker_by_component(comp) : GV_MARKER_INVALID;
}

/* The last non-empty line of @text, at most 200 bytes (heap), or NULL. */
static char *last_line(const char *text)
{
        if (!text)
                return NULL;
        const char *end = text + strlen(text);
        while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
        const char *start = end;
        while (start > text && start[-1] != '\n')
                start--;
        if (end == start)
                return NULL;
        size_t n = (size_t) (end - start);
        return strndup(start, n > 200 ? 200 : n);
}

static int get_int(json_object *o, const char *key, int fallback)
{
        json_object *v = get(o, key);
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int(v) : fallback;
}

/* Whether init container @name of @pod is a native sidecar (restartPolicy Always). */
static bool is_sidecar(json_object *pod, const char *name)
{
        json_object *ics = get(get(pod, "spec"), "initContainers");
        size_t n = ics && json_object_is_type(ics, json_type_array) ? json_object_array_length(ics) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(ics, i);
                if (str_eq(get_str(c, "name"), name))
                        return str_eq(get_str(c, "restartPolicy"), "Always");
        }
        return false;
}

/* Record @comp as failed with the terminated state @t (may be NULL) and @restarts; -ENOMEM. */
static int set_failed(gv_nodesignal_verdict_t *v, gv_marker_id_t comp, json_object *t, int restarts,
                      const char *fallback_reason)
{
        v->has_failed = true;
        v->failed = comp;
        v->failed_exit_code = get_int(t, "exitCode", 0);
        v->failed_restarts = restarts;
        free(v->failed_message);
        const char *msg = get_str(t, "message"), *reason = get_str(t, "reason");
        v->failed_message = last_line(msg);
        if (!v->failed_message)
                v->failed_message = last_line(reason ? reason : fallback_reason);
        return 0;
}

int gv_nodesignal_pod_progress(json_object *pod, gv_nodesignal_verdict_t *v)
{
        v->has_running = v->has_failed = false;
        free(v->failed_message);
        v->failed_message = NULL;
        json_object *st = get(get(pod, "status"), "initContainerStatuses");
        size_t n = st && json_object_is_type(st, json_type_array) ? json_object_array_length(st) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *cs = json_object_array_get_idx(st, i);
                const char *name = get_str(cs, "name");
                gv_marker_id_t comp = component_of_container(name);
                if (comp == GV_MARKER_INVALID || is_sidecar(pod, name))
                        continue;
                json_object *state = get(cs, "state"), *last = get(get(cs, "lastState"), "terminated");
                json_object *term = get(state, "terminated"), *wait = get(state, "waiting");
                int restarts = get_int(cs, "restartCount", 0);
                if (term && get_int(term, "exitCode", 0) == 0)
                        continue; /* done */
                if (term)
                        return set_failed(v, comp, term, restarts, NULL);
                if (last && get_int(last, "exitCode", 0) != 0)
                        return set_failed(v, comp, last, restarts, get_str(wait, "reason"));
                v->has_running = true; /* running, or about to start */
                v->running = comp;
                return 0;
        }
        return 0;
}
