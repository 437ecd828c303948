/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the kubeconfig parser (gv_k8s_config_from_kubeconfig_data). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "k8s/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gv_k8s_config_t *cfg = NULL;
        gv_error_t *err = NULL;
        /* Current context, then a named one, so both lookups are exercised. */
        if (gv_k8s_config_from_kubeconfig_data((const char *) data, size, "fuzz", "/base", NULL, &cfg, &err) == 0) {
                if (!cfg->server || !cfg->source)
                        __builtin_trap();
                gv_k8s_config_free(cfg);
        } else if (!err || !err->msg) {
                __builtin_trap();
        }
        gv_error_free(&err);
        cfg = NULL;
        if (gv_k8s_config_from_kubeconfig_data((const char *) data, size, "fuzz", NULL, "a", &cfg, &err) == 0)
                gv_k8s_config_free(cfg);
        gv_error_free(&err);
        return 0;
}
