/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for gv_nodesignal_pod_progress() (src/nodesignal/plan.c): the
 * validator's own Pod as the API server sends it, any JSON.  At most one of
 * running / failed is known; a failed component has a message of at most 200
 * bytes without a newline (a Node condition message); the plan made from the
 * result never fails but for memory.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nodesignal/nodesignal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return 0;
        json_object *pod = json_tokener_parse_ex(tok, (const char *) data, (int) (size > 1000000 ? 1000000 : size));
        json_tokener_free(tok);
        gv_nodesignal_verdict_t v = { 0 };
        gv_nodesignal_verdict_clear(&v);
        v.last = GV_MARKER_PLUGIN;
        v.failing = GV_MARKER_DRIVER;
        if (gv_nodesignal_pod_progress(pod, &v) < 0) {
                json_object_put(pod);
                gv_nodesignal_verdict_clear(&v);
                return 0;
        }
        if (v.has_running && v.has_failed)
                abort();
        if (v.failed_message && (!v.has_failed || strlen(v.failed_message) > 200 || strchr(v.failed_message, '\n') ||
                                 !*v.failed_message))
                abort();
        if ((v.has_running && (v.running < 0 || v.running >= GV_MARKER__MAX)) ||
            (v.has_failed && (v.failed < 0 || v.failed >= GV_MARKER__MAX)))
                abort();
        json_object *node = json_tokener_parse("{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"1\"}}");
        gv_nodesignal_spec_t spec = { .condition_type = "GPUValidated" };
        gv_nodesignal_plan_t p;
        gv_error_t *e = NULL;
        if (gv_nodesignal_plan(&spec, &v, node, GV_NODESIGNAL_UNKNOWN, "2026-01-01T00:00:00Z", &p, &e) < 0) {
                if (!e || e->errnum != ENOMEM)
                        abort();
                gv_error_free(&e);
        } else {
                if (!p.condition_reason || !gv_nodesignal_condition_type_valid(p.condition_reason))
                        abort();
                gv_nodesignal_plan_clear(&p);
        }
        json_object_put(node);
        json_object_put(pod);
        gv_nodesignal_verdict_clear(&v);
        return 0;
}
