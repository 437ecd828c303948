/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi -q and -q -x: the header leaves, then each GPU's element
 * written from the table of fields by smi_emit_gpu() (smi-emit.c).  See
 * nvidia-smi-internal.h.
 */
#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

int nvsmi_view_query(smi_t *s, bool xml)
{
        smi_emit_t e = { .f = stdout, .xml = xml, .branch = smi_driver_branch(s->driver_version) };
        _cleanup_free_ char *ts = nvsmi_now_text(false);
        smi_emit_begin(&e);
        smi_emit_leaf(&e, "timestamp", "Timestamp", "%s", ts ? ts : "N/A");
        smi_emit_leaf(&e, "driver_version", "Driver Version", "%s", s->driver_version);
        smi_emit_leaf(&e, "cuda_version", "CUDA Version", "%s", s->cuda_version);
        if (!xml)
                smi_emit_blank(&e);
        smi_emit_leaf(&e, "attached_gpus", "Attached GPUs", "%u", s->count);
        for (size_t i = 0; i < s->n; i++) {
                if (s->gpus[i].lost) {
                        nvsmi_report_lost(s, &s->gpus[i]);
                        continue;
                }
                smi_src_t src = nvsmi_src(s, &s->gpus[i], "");
                smi_emit_gpu(&e, &src);
        }
        smi_emit_end(&e);
        return s->exit_code;
}
