/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the override checks (overrides.c), the templates (template.c) and
 * the run-time fill (fill.c) share.  Private to src/workload.
 */
#ifndef GV_WORKLOAD_TEMPLATE_INTERNAL_H
#define GV_WORKLOAD_TEMPLATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "workload.h"

/* A parsed override file: one section per kind. */
struct gv_workload_overrides {
        gv_doc_t *doc;
        json_object *section[GV_WORKLOAD__MAX]; /* borrowed from doc; NULL: none */
        bool manifest[GV_WORKLOAD__MAX];         /* section is a whole Pod that replaces the default */
};

/* Whether @s is GV_WORKLOAD_PLACEHOLDER or its short form. */
static inline bool gv_workload_is_placeholder_str(const char *s)
{
        return strcmp(s, GV_WORKLOAD_PLACEHOLDER) == 0 || strcmp(s, GV_WORKLOAD_PLACEHOLDER_SHORT) == 0;
}

/* Whether @v is a string that is a placeholder. */
static inline bool gv_workload_is_placeholder(json_object *v)
{
        return json_object_is_type(v, json_type_string) && gv_workload_is_placeholder_str(json_object_get_string(v));
}

/* Whether @s is one of the @n strings of @list. */
static inline bool gv_workload_in_list(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, list[i]) == 0)
                        return true;
        return false;
}

#endif
