/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the CDI spec reader (src/components/cdi.c) on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "components/cdi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_cdi_spec_t spec = { 0 };
        gv_error_t *err = NULL;
        if (gv_cdi_spec_parse((const char *) data, size, &spec, &err) == 0) {
                /* walk what came back so that a bad pointer shows up under ASan */
                size_t total = strlen(spec.kind);
                for (char **n = spec.nodes; n && *n; n++)
                        total += strlen(*n);
                for (size_t i = 0; i < spec.n_devices; i++) {
                        total += strlen(spec.devices[i].name);
                        for (char **n = spec.devices[i].nodes; n && *n; n++)
                                total += strlen(*n);
                        (void) gv_cdi_spec_device(&spec, spec.devices[i].name);
                }
                (void) total;
                gv_cdi_spec_clear(&spec);
        }
        gv_error_free(&err);
        return 0;
}
