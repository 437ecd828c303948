/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pieces of `gpu-validator watch` (cmd-watch.c) that can be tested
 * alone: what the watcher looks at on the node (a gv_node_state_t read from
 * the status folder, the driver root and the device nodes), the verdict
 * "did the node change since it was validated, and why" (pure), and the
 * delay before the next re-validation attempt (pure).  docs/markers.md,
 * "Re-validation".
 */
#ifndef GV_CLI_REVALIDATE_H
#define GV_CLI_REVALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "metrics/metrics.h"

/* Bounds of the watcher's settings, in seconds (documented in --help and docs/deploy.md). */
#define GV_REVAL_BACKOFF_DEFAULT_S 2u       /* --revalidate-backoff: first delay after a change */
#define GV_REVAL_BACKOFF_MAX_S 600u
#define GV_REVAL_MAX_BACKOFF_DEFAULT_S 300u /* --revalidate-max-backoff: cap of the doubling */
#define GV_REVAL_MAX_BACKOFF_MIN_S 1u
#define GV_REVAL_MAX_BACKOFF_MAX_S 3600u
#define GV_REVAL_MIN_INTERVAL_DEFAULT_S 10u /* --revalidate-min-interval: between two chain starts */
#define GV_REVAL_MIN_INTERVAL_MAX_S 3600u
#define GV_REVAL_GPU_HEALTH_DEFAULT_S 1u    /* --gpu-health-interval: between two GPU probes; 0: off */
#define GV_REVAL_GPU_HEALTH_MAX_S 3600u

/* Identity of one file: a removed and re-created file has another (dev, ino) or mtime. */
typedef struct gv_file_id {
        bool present;
        uint64_t dev, ino;
        int64_t mtime_ns;
} gv_file_id_t;

/* What the watcher compares. */
typedef struct gv_node_state {
        gv_file_id_t ctr_flag;   /* <status folder>/.driver-ctr-ready (upstream's driver container flag) */
        gv_file_id_t driver_lib; /* libnvidia-ml.so.1 at the path found when validated (stat(): links followed) */
        char **dev_nodes;        /* heap NULL-terminated list of the nvidia* entries of <dev root>/dev, or NULL */
        char generation[GV_GENERATION_HEX_LEN + 1]; /* driver-ready's GENERATION while READY, else "" */
} gv_node_state_t;

/* Free @s's list and zero it; accepts a zeroed state. */
void gv_node_state_clear(gv_node_state_t *s);

/*
 * gv_reval_classify - whether the node changed between @base (read when the
 * chain was last validated) and @now, and the strongest reason: the driver
 * container flag removed or replaced (driver-container-restart), a device
 * node of @base absent from @now (device-node-removed; *@what names it), the
 * driver library gone or replaced (driver-root-changed), driver-ready gone
 * or with another GENERATION (generation-changed), in that order.  Things
 * that appeared (a flag or a node that @base did not have) are no change.
 * *@what (may be NULL) is set to a static text or a name borrowed from
 * @base.  Pure.
 */
bool gv_reval_classify(const gv_node_state_t *base, const gv_node_state_t *now, gv_revalidation_reason_t *reason,
                       const char **what);

/*
 * gv_reval_delay_ms - the wait before re-validation attempt @attempt (1 =
 * the first after the change), in ms: gv_backoff_delay_s(@attempt,
 * @first_s, @cap_s, @jitter) (capped exponential, doubling; a @first_s of
 * 0 is 100 ms), but never earlier than @min_interval_s after the previous
 * chain start (@since_last_ms ago; < 0: none yet).  Pure.
 */
int64_t gv_reval_delay_ms(unsigned attempt, unsigned first_s, unsigned cap_s, double jitter, unsigned min_interval_s,
                          int64_t since_last_ms);

/*
 * gv_reval_parse_xids - parse a list of Xids not to act on
 * (--gpu-health-ignore-xids, GPU_HEALTH_IGNORE_XIDS): "all", or whole
 * numbers 1..4294967295 separated by commas and/or spaces ("63,64"); empty
 * items are skipped, so "" is an empty list.  *@all is set for "all"; *@out
 * (heap, owned by the caller; NULL for an empty list) and *@n get the
 * numbers.  @what names the setting in the error.  Errors: -EINVAL
 * (GV_REASON_CONFIG) naming the item that is not a number; -ENOMEM.
 */
int gv_reval_parse_xids(const char *what, const char *s, bool *all, unsigned **out, size_t *n, gv_error_t **err);

/* Where the watcher looks on this node (heap strings, NULL when unknown). */
typedef struct gv_reval_paths {
        char *flag;     /* <status folder>/.driver-ctr-ready */
        char *dev_dir;  /* <dev root as mounted here>/dev */
        char *lib;      /* libnvidia-ml.so.1 under the driver root as mounted here */
        char *lib_dir;  /* its folder */
} gv_reval_paths_t;

/* Free @p's strings and zero it. */
void gv_reval_paths_clear(gv_reval_paths_t *p);

/*
 * gv_reval_paths_find - the paths to watch for @cfg, using driver-ready's
 * facts (@driver_ready, may be NULL: then the driver root is the container
 * root): DRIVER_ROOT_CTR_PATH "/host" means the host driver (the host root
 * as mounted here), anything else the driver container root
 * (DRIVER_INSTALL_DIR_CTR_PATH); DEV_ROOT_CTR_PATH says which of the two
 * holds /dev.  The library is looked for in cfg->driver.lib_search (or the
 * default list) under that root.  @out is filled only on success.
 * Errors: -ENOMEM (GV_REASON_INTERNAL).
 */
int gv_reval_paths_find(const gv_config_t *cfg, const gv_kvlist_t *driver_ready, gv_reval_paths_t *out,
                        gv_error_t **err);

/*
 * gv_reval_read_state - read @p and driver-ready's state from @store into
 * @out (cleared first).  Never fails for a missing file (it reads as
 * absent); errors: -ENOMEM (GV_REASON_INTERNAL), the folder errors of
 * gv_store_inspect().
 */
int gv_reval_read_state(gv_store_t *store, const gv_reval_paths_t *p, gv_node_state_t *out, gv_error_t **err);

#endif
