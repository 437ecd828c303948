/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi --query-gpu=... --format=csv: each cell is its row's getter
 * (smi-fields.c) formatted by smi_csv_row() (smi.c).  See nvidia-smi-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

int nvsmi_view_csv(smi_t *s, const smi_query_t *q)
{
        _cleanup_free_ char *ts = nvsmi_now_text(true);
        if (q->header) {
                _cleanup_free_ char *h = smi_csv_header(q);
                if (!h)
                        return SMI_EXIT_OTHER;
                printf("%s\n", h);
        }
        _cleanup_free_ smi_value_t *vals = calloc(q->n, sizeof(*vals));
        if (!vals)
                return SMI_EXIT_OTHER;
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (g->lost) {
                        nvsmi_report_lost(s, g);
                        continue;
                }
                smi_src_t src = nvsmi_src(s, g, ts ? ts : "");
                for (size_t f = 0; f < q->n; f++) {
                        smi_field_read(q->fields[f], &src, &vals[f]);
                        /* A library without the entry point is shown as not available, as for NOT_SUPPORTED. */
                        if (vals[f].ret == NVML_ERROR_FUNCTION_NOT_FOUND)
                                vals[f].ret = NVML_ERROR_NOT_SUPPORTED;
                }
                _cleanup_free_ char *row = smi_csv_row(q, vals);
                if (!row)
                        return SMI_EXIT_OTHER;
                printf("%s\n", row);
        }
        return s->exit_code;
}
