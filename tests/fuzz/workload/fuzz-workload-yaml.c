/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: YAML text -> json-c (gv_yaml_parse).  Whatever parses must
 * also survive the emitter and read back as the same tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_doc_t *doc = NULL;
        gv_error_t *err = NULL;
        if (gv_yaml_parse((const char *) data, size, "fuzz", &doc, &err) < 0) {
                gv_error_free(&err);
                return 0;
        }
        json_object *root = gv_doc_root(doc);
        (void) gv_doc_line(doc, root);
        char *text = NULL;
        if (gv_yaml_emit(root, &text, &err) == 0) {
                gv_doc_t *again = NULL;
                if (gv_yaml_parse(text, strlen(text), "emitted", &again, &err) < 0)
                        abort(); /* we wrote something we cannot read */
                if (!json_object_equal(root, gv_doc_root(again)))
                        abort(); /* the round trip changed a value or a type */
                gv_doc_free(again);
                free(text);
        }
        gv_error_free(&err);
        gv_doc_free(doc);
        return 0;
}
