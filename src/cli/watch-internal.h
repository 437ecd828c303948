/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The watcher of `gpu-validator watch`, shared by its two files: cmd-watch.c
 * (options, the loop, the node's files through inotify, the chain runs) and
 * watch-gpus.c (the GPU health monitor: critical Xid events and the
 * GPU_IS_LOST probe through NVML).  docs/markers.md, "Re-validation".
 */
#ifndef GV_CLI_WATCH_INTERNAL_H
#define GV_CLI_WATCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "nvml/nvml.h"
#include "revalidate.h"
#include "run-internal.h"

#define GV_WATCH_CMD "watch"
#define GV_WATCH_N_WATCHES 3 /* the status folder, <dev root>/dev, the driver library's folder */

/* The watcher's settings (flags and environment). */
typedef struct watch_args {
        gv_options_t *o;
        unsigned first_s, cap_s, min_interval_s;
        unsigned health_s;        /* --gpu-health-interval: seconds between GPU probes; 0: no GPU health */
        bool ignore_all_xids;     /* --gpu-health-ignore-xids all */
        unsigned *ignored_xids;   /* heap; more Xids to skip */
        size_t n_ignored_xids;
} watch_args_t;

/* Everything the watcher holds. */
typedef struct watcher {
        gv_cli_t *cli;
        gv_options_t *o;
        const watch_args_t *a;
        const gv_component_t *selected[32];
        size_t n_selected;
        gv_marker_id_t root;  /* invalidated on a change: driver-ready when the driver is in the chain */
        gv_marker_id_t last;  /* the chain is valid when this marker is READY */
        gv_store_t *store;
        gv_reval_paths_t paths;
        gv_dirwatch_t *w[GV_WATCH_N_WATCHES];
        gv_node_state_t base; /* while valid: the node as validated */
        gv_node_state_t seen; /* while not valid: the node as last read (a difference brings the retry forward) */
        bool valid;
        unsigned attempt;      /* chain runs since the chain was last valid */
        int64_t last_start_ms; /* start of the last chain run, -1: none */
        int64_t next_ms;       /* while not valid: when to run the chain next */
        gv_revalidations_t counts;
        gv_revalidation_reason_t pending; /* counted when its re-run starts; GV_REVAL__MAX: none */
        uint64_t seed;         /* the backoff jitter's xorshift64* state */
        gv_gpu_health_t *health;     /* the GPU health monitor, or NULL (watch-gpus.c) */
        gv_node_state_t health_base; /* while not valid with the monitor kept: the node files it belongs to */
        int64_t next_probe_ms;       /* when to probe the GPUs next (while health is set) */
        nvmlReturn_t wait_error;     /* the last event-wait failure logged, NVML_SUCCESS: none */
} watcher_t;

/* cmd-watch.c: the node changed (@reason, @what): count it, remove the chain's markers, plan the re-run. */
void gv_watch_invalidate(watcher_t *wt, gv_revalidation_reason_t reason, const char *what);

/* cmd-watch.c: while not valid, run the chain as soon as the rate limit allows (the node may be back). */
void gv_watch_retry_soon(watcher_t *wt);

/*
 * watch-gpus.c: after a successful validation, (re)open the GPU health
 * monitor on the validated driver's libnvidia-ml.so.1 (kept when it is
 * already open on that library), unless --gpu-health-interval is 0, the
 * driver is not in the chain, or no library was found.  A monitor that
 * cannot open is logged and tried again after the next validation.
 */
void gv_watch_gpus_arm(watcher_t *wt);

/*
 * watch-gpus.c: close the monitor (nvmlShutdown, dlclose), so that nothing
 * of this process keeps the driver's device nodes open while the driver
 * goes (a driver container restart must be able to unload the modules).
 */
void gv_watch_gpus_release(watcher_t *wt);

/*
 * watch-gpus.c: a file change seen while not valid (@now): release the
 * monitor when the driver it belongs to changed (anything but driver-ready's
 * generation).
 */
void gv_watch_gpus_files_changed(watcher_t *wt, const gv_node_state_t *now);

/*
 * watch-gpus.c: probe the GPUs when due and react: while valid, a lost GPU
 * invalidates (gpu-lost) and so does a critical Xid (xid); while not valid,
 * a change in which GPUs are lost brings the next attempt forward.  Then
 * plans the next probe.
 */
void gv_watch_gpus_tick(watcher_t *wt);

/* watch-gpus.c: ms until the next probe is due (0: now), or -1 without a monitor. */
int64_t gv_watch_gpus_timeout(const watcher_t *wt);

#endif
