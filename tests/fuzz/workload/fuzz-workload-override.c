/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: override files.  Validated overrides go through template,
 * fill, emit and the lifecycle helpers; any mapping is also merged into a
 * default template and filled without validation, which must not crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use_pod(json_object *pod)
{
        gv_error_t *err = NULL;
        char *text = NULL;
        if (gv_yaml_emit(pod, &text, &err) == 0)
                free(text);
        gv_error_free(&err);
        char **init = NULL, **names = NULL;
        if (gv_workload_container_names(pod, &init, &names, &err) == 0) {
                gv_strv_freep(&init);
                gv_strv_freep(&names);
        }
        gv_error_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_error_t *err = NULL;
        json_object *tol = json_tokener_parse("[{\"operator\":\"Exists\"}]");
        const gv_workload_runtime_t rts[] = {
                { .placeholders = true },
                { .node_name = "node-a", .namespace = "ns", .image = "img", .image_pull_secrets = "a,,b",
                  .runtime_class = "nvidia", .tolerations = tol, .owner_name = "v", .owner_uid = "u",
                  .gpu_resource = "nvidia.com/gpu" },
        };

        gv_workload_overrides_t *ov = NULL;
        if (gv_workload_overrides_parse((const char *) data, size, "fuzz", &ov, &err) == 0) {
                for (int k = 0; k < GV_WORKLOAD__MAX; k++)
                        for (size_t i = 0; i < sizeof(rts) / sizeof(rts[0]); i++) {
                                json_object *pod = NULL;
                                if (gv_workload_pod((gv_workload_kind_t) k, ov, &rts[i], &pod, &err) == 0) {
                                        use_pod(pod);
                                        json_object_put(pod);
                                }
                                gv_error_free(&err);
                        }
                gv_workload_overrides_free(ov);
        }
        gv_error_free(&err);

        /* Unvalidated: merge any mapping into the default, then fill. */
        gv_doc_t *doc = NULL;
        if (gv_yaml_parse((const char *) data, size, "fuzz", &doc, &err) == 0) {
                json_object *pod = NULL;
                if (gv_workload_template(GV_WORKLOAD_PLUGIN, NULL, &pod, &err) == 0) {
                        if (gv_workload_merge(pod, gv_doc_root(doc), &err) == 0 &&
                            gv_workload_fill(pod, GV_WORKLOAD_PLUGIN, &rts[1], &err) == 0)
                                use_pod(pod);
                        json_object_put(pod);
                }
                /* and RFC 7386 with the document as both target and patch */
                json_object *copy = NULL;
                if (json_object_deep_copy(gv_doc_root(doc), &copy, NULL) == 0 || !gv_doc_root(doc))
                        json_object_put(gv_json_merge_patch(copy, gv_doc_root(doc)));
                gv_doc_free(doc);
        }
        gv_error_free(&err);
        json_object_put(tol);
        return 0;
}
