/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small json-c and string helpers shared by the lifecycle files of
 * src/workload (classify.c, podrun.c, lifecycle.c).  Private to the folder.
 */
#ifndef GV_WORKLOAD_INTERNAL_H
#define GV_WORKLOAD_INTERNAL_H

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "base/error.h"

/* Member @key of object @o (borrowed), or NULL when @o is no object or has no such member. */
static inline json_object *jget(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

/* String member @key of @o (borrowed), or NULL when absent or not a string. */
static inline const char *jstr(json_object *o, const char *key)
{
        json_object *v = jget(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Both non-NULL and equal. */
static inline bool streq(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

#endif
