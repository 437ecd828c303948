/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON merge patch (RFC 7386) and the Pod variant that merges the
 * container lists by name.
 */
#include <errno.h>
#include <string.h>

#include "base/cleanup.h"
#include "workload.h"

static json_object *copy_value(json_object *v)
{
        json_object *c = NULL;
        if (!v)
                return NULL;
        if (json_object_deep_copy(v, &c, NULL) < 0)
                return NULL;
        return c;
}

/* NOLINTNEXTLINE(misc-no-recursion): recursion over a JSON object whose depth the parsers bound */
json_object *gv_json_merge_patch(json_object *target, json_object *patch)
{
        if (!json_object_is_type(patch, json_type_object)) {
                json_object_put(target);
                return copy_value(patch);
        }
        if (!json_object_is_type(target, json_type_object)) {
                json_object_put(target);
                target = json_object_new_object();
                if (!target)
                        return NULL;
        }
        json_object_object_foreach(patch, key, value) {
                if (!value) {
                        json_object_object_del(target, key);
                        continue;
                }
                json_object *old = NULL;
                json_object_object_get_ex(target, key, &old);
                json_object *merged = gv_json_merge_patch(json_object_get(old), value);
                if (json_object_object_add(target, key, merged) < 0)
                        json_object_put(merged);
        }
        return target;
}

static const char *entry_name(json_object *entry)
{
        json_object *n = NULL;
        if (!json_object_is_type(entry, json_type_object) || !json_object_object_get_ex(entry, "name", &n) ||
            !json_object_is_type(n, json_type_string))
                return NULL;
        return json_object_get_string(n);
}

static bool is_delete_directive(json_object *entry)
{
        json_object *d = NULL;
        return json_object_object_get_ex(entry, "$patch", &d) && json_object_is_type(d, json_type_string) &&
               strcmp(json_object_get_string(d), "delete") == 0;
}

/* Merge the list @patch into @spec[@key] by container name. */
static int merge_by_name(json_object *spec, const char *key, json_object *patch, gv_error_t **err)
{
        json_object *list = NULL;
        if (!json_object_object_get_ex(spec, key, &list) || !json_object_is_type(list, json_type_array)) {
                list = json_object_new_array();
                if (!list || json_object_object_add(spec, key, list) < 0) {
                        json_object_put(list);
                        return gv_error_oom(err);
                }
        }
        size_t n = json_object_array_length(patch);
        for (size_t i = 0; i < n; i++) {
                json_object *entry = json_object_array_get_idx(patch, i);
                const char *name = entry_name(entry);
                if (!name)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "spec.%s[%zu]: expected a mapping with a name",
                                            key, i);
                size_t at = json_object_array_length(list), len = at;
                for (size_t j = 0; j < len; j++) {
                        const char *have = entry_name(json_object_array_get_idx(list, j));
                        if (have && strcmp(have, name) == 0) {
                                at = j;
                                break;
                        }
                }
                if (is_delete_directive(entry)) {
                        if (at < len)
                                json_object_array_del_idx(list, at, 1);
                        continue;
                }
                json_object *old = at < len ? json_object_get(json_object_array_get_idx(list, at)) : NULL;
                json_object *merged = gv_json_merge_patch(old, entry);
                if (!merged)
                        return gv_error_oom(err);
                json_object_object_del(merged, "$patch");
                int r = at < len ? json_object_array_put_idx(list, at, merged) : json_object_array_add(list, merged);
                if (r < 0) {
                        json_object_put(merged);
                        return gv_error_oom(err);
                }
        }
        return 0;
}

/* RFC 7386 for one member: @obj[@key] = MergePatch(@obj[@key], @value). */
static int merge_member(json_object *obj, const char *key, json_object *value)
{
        if (!value) {
                json_object_object_del(obj, key);
                return 0;
        }
        json_object *old = NULL;
        json_object_object_get_ex(obj, key, &old);
        json_object *merged = gv_json_merge_patch(json_object_get(old), value);
        if (!merged || json_object_object_add(obj, key, merged) < 0) {
                json_object_put(merged);
                return -ENOMEM;
        }
        return 0;
}

int gv_workload_merge(json_object *pod, json_object *patch, gv_error_t **err)
{
        if (!json_object_is_type(pod, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "merge: the pod is not an object");
        if (!json_object_is_type(patch, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "expected a mapping (a Pod merge patch)");

        json_object_object_foreach(patch, key, value) {
                if (strcmp(key, "spec") != 0 || !json_object_is_type(value, json_type_object)) {
                        if (merge_member(pod, key, value) < 0)
                                return gv_error_oom(err);
                        continue;
                }
                json_object *spec = NULL;
                if (!json_object_object_get_ex(pod, "spec", &spec) || !json_object_is_type(spec, json_type_object)) {
                        spec = json_object_new_object();
                        if (!spec || json_object_object_add(pod, "spec", spec) < 0) {
                                json_object_put(spec);
                                return gv_error_oom(err);
                        }
                }
                json_object_object_foreach(value, skey, svalue) {
                        if ((strcmp(skey, "containers") == 0 || strcmp(skey, "initContainers") == 0) &&
                            json_object_is_type(svalue, json_type_array)) {
                                int r = merge_by_name(spec, skey, svalue, err);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        if (merge_member(spec, skey, svalue) < 0)
                                return gv_error_oom(err);
                }
        }
        return 0;
}
