/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU health for `gpu-validator watch` (watch-internal.h): the validated
 * driver's NVML kept loaded (nvml.h, gv_gpu_health_*), probed every
 * --gpu-health-interval seconds from the watcher's own loop.  What the probe
 * finds becomes a re-validation like a file change does: a critical Xid
 * (reason xid) or a GPU answering NVML_ERROR_GPU_IS_LOST (reason gpu-lost)
 * removes the chain's markers downstream first; while the chain is not
 * valid, a lost GPU that answers again brings the next attempt forward.
 *
 * Why polled, not a thread blocked in nvmlEventSetWait_v2 as NVIDIA's device
 * plugin does (internal/rm/health.go, a 5000 ms wait in a goroutine): the
 * watcher stays one thread, and the only cost is up to one interval of
 * latency (1 s by default).  The monitor is released whenever the driver's
 * files change, so that this process does not hold the device nodes while a
 * driver container unloads its modules.  docs/markers.md, "Re-validation".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "watch-internal.h"

#define CMD GV_WATCH_CMD

void gv_watch_gpus_release(watcher_t *wt)
{
        if (wt->health)
                gv_cli_logf(wt->cli, GV_LOG_DEBUG, CMD, NULL, "GPU health: NVML released until the next validation");
        gv_gpu_health_close(&wt->health);
        gv_node_state_clear(&wt->health_base);
        wt->wait_error = NVML_SUCCESS;
}

void gv_watch_gpus_arm(watcher_t *wt)
{
        const char *lib = wt->paths.lib;
        if (!wt->a->health_s || wt->root != GV_MARKER_DRIVER || !lib) {
                gv_watch_gpus_release(wt);
                return;
        }
        const char *have = gv_gpu_health_lib(wt->health);
        if (have && strcmp(have, lib) == 0)
                return;
        gv_watch_gpus_release(wt);
        _cleanup_error_ gv_error_t *err = NULL;
        gv_xid_filter_t f = { .ignore_all = wt->a->ignore_all_xids, .ignored = wt->a->ignored_xids,
                              .n_ignored = wt->a->n_ignored_xids };
        if (gv_gpu_health_open(lib, &f, &wt->health, &err) < 0) {
                gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, gv_reason_name(err->reason),
                            "GPU health: %s; the GPUs are not probed until the next validation", err->msg);
                return;
        }
        size_t n = 0;
        (void) gv_gpu_health_notes(wt->health, &n);
        gv_cli_logf(wt->cli, GV_LOG_INFO, CMD, NULL,
                    "GPU health: %zu GPU(s) probed every %u s, %zu registered for critical Xid events (%s)", n,
                    wt->a->health_s, gv_gpu_health_events(wt->health), lib);
        wt->next_probe_ms = gv_now_ms() + (int64_t) wt->a->health_s * 1000;
}

void gv_watch_gpus_files_changed(watcher_t *wt, const gv_node_state_t *now)
{
        gv_revalidation_reason_t reason;
        if (wt->health && !wt->valid && gv_reval_classify(&wt->health_base, now, &reason, NULL) &&
            reason != GV_REVAL_GENERATION_CHANGED)
                gv_watch_gpus_release(wt);
}

int64_t gv_watch_gpus_timeout(const watcher_t *wt)
{
        if (!wt->health)
                return -1;
        int64_t t = wt->next_probe_ms - gv_now_ms();
        return t > 0 ? t : 0;
}

/* The chain is valid and the probe found @p: invalidate for the strongest finding. */
static void on_fault(watcher_t *wt, const gv_gpu_probe_t *p, const gv_gpu_note_t *notes)
{
        _cleanup_free_ char *what = NULL;
        gv_revalidation_reason_t reason;
        if (p->lost >= 0) {
                const gv_gpu_note_t *g = &notes[p->lost];
                _cleanup_free_ char *name = gv_gpu_note_name(g);
                reason = GV_REVAL_GPU_LOST;
                if (name && asprintf(&what, "%s is lost (%s: NVML_ERROR_GPU_IS_LOST)", name, g->lost_call) < 0)
                        what = NULL;
        } else if (p->xid == GV_XID_FELL_OFF_THE_BUS) {
                /* the Xid that announces the loss, seen before NVML answers GPU_IS_LOST */
                _cleanup_free_ char *name = gv_gpu_note_name(&notes[p->xid_gpu]);
                reason = GV_REVAL_GPU_LOST;
                if (name && asprintf(&what, "%s fell off the bus", name) < 0)
                        what = NULL;
        } else {
                gv_gpu_note_t g = notes[p->xid_gpu];
                g.xid = 0; /* named after "reported" */
                _cleanup_free_ char *name = gv_gpu_note_name(&g);
                reason = GV_REVAL_XID;
                if (name && asprintf(&what, "%s reported critical Xid %llu", name, p->xid) < 0)
                        what = NULL;
        }
        gv_watch_invalidate(wt, reason, what ? what : "a GPU fault (out of memory naming it)");
}

void gv_watch_gpus_tick(watcher_t *wt)
{
        if (!wt->health)
                return;
        gv_gpu_probe_t p;
        gv_gpu_health_probe(wt->health, &p);
        wt->next_probe_ms = gv_now_ms() + (int64_t) wt->a->health_s * 1000;
        if (p.wait_error != wt->wait_error && p.wait_error != NVML_SUCCESS)
                gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, NULL, "GPU health: nvmlEventSetWait_v2: %s (%s); probing on",
                            gv_nvml_strerror(NULL, p.wait_error), gv_nvml_return_name(p.wait_error));
        wt->wait_error = p.wait_error;
        size_t n = 0;
        const gv_gpu_note_t *notes = gv_gpu_health_notes(wt->health, &n);
        if (wt->valid && (p.lost >= 0 || p.xid_gpu >= 0)) {
                on_fault(wt, &p, notes);
                return;
        }
        if (!wt->valid && p.xid_gpu >= 0)
                gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, "xid", "GPU %ld reported critical Xid %llu while not validated",
                            p.xid_gpu, p.xid);
        if (!wt->valid && p.lost_changed) {
                gv_cli_logf(wt->cli, GV_LOG_INFO, CMD, NULL, "GPU health: %s; re-validating as soon as allowed",
                            p.lost >= 0 ? "the set of lost GPUs changed" : "every GPU answers again");
                gv_watch_retry_soon(wt);
        }
}
