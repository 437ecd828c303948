/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metrics concern: a read-only Prometheus exporter for the readiness
 * markers (docs/metrics.md).
 *
 * Three layers, each usable alone:
 *   - gv_metrics_collect() reads the marker store and sysfs into a plain
 *     snapshot (no writes, no GPU initialisation: NVML facts come from
 *     driver-ready's content);
 *   - gv_metrics_render() turns a snapshot into Prometheus text exposition
 *     format 0.0.4 (pure, deterministic);
 *   - gv_exporter_* serve the rendered text over HTTP with libmicrohttpd,
 *     re-rendering only after inotify reports a change in the status folder
 *     (or after a bounded cache lifetime, for the sysfs PCI count).
 * Nothing here prints; events go through the gv_log_fn the CLI supplies.
 */
#ifndef GV_METRICS_METRICS_H
#define GV_METRICS_METRICS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/log.h"
#include "markers/markers.h"

#define GV_METRICS_DEFAULT_PORT 8000
#define GV_METRICS_DEFAULT_LISTEN ":8000"
#define GV_METRICS_PATH "/metrics"
#define GV_METRICS_DEFAULT_SYSFS_ROOT "/sys"
#define GV_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* How long a rendered page is served without any inotify event, in seconds (bounds PCI hot-plug lag). */
#define GV_METRICS_DEFAULT_CACHE_TTL_S 30u

/* Marker keys the exporter reads (written by the runner and components). */
#define GV_METRICS_KEY_VALIDATED_AT "VALIDATED_AT"                 /* RFC 3339 UTC */
#define GV_METRICS_KEY_DURATION "VALIDATION_DURATION_SECONDS"      /* decimal seconds, any marker */
#define GV_METRICS_KEY_GPU_COUNT "GPU_COUNT"                       /* driver-ready: NVML device count */
#define GV_METRICS_KEY_PLUGIN_DEVICES "DEVICE_PLUGIN_DEVICES"      /* plugin-ready: advertised GPUs */

/* ---- listen address ---- */

/* A parsed --listen value.  @host is a heap string, or NULL for "every address". */
typedef struct gv_listen_addr {
        char *host;    /* "127.0.0.1", "::1", "localhost"; brackets removed; NULL for ":PORT" */
        uint16_t port; /* 0 asks the kernel for a free port */
} gv_listen_addr_t;

/*
 * gv_metrics_parse_listen - parse a listen address: ":PORT" (every address,
 * IPv6 and IPv4), "HOST:PORT" (an IPv4 literal or a name) or "[IPV6]:PORT".
 * PORT is decimal 0..65535 (0: any free port).  An unbracketed IPv6 literal
 * ("::1:80") and a bare port ("8000") are refused as ambiguous.
 * @out is filled only on success; its host is owned by the caller
 * (gv_listen_addr_clear()).
 * Errors: -EINVAL with GV_REASON_CONFIG naming the value; -ENOMEM.
 */
int gv_metrics_parse_listen(const char *s, gv_listen_addr_t *out, gv_error_t **err);

/* Free @a's host and zero it.  Accepts an already cleared value. */
void gv_listen_addr_clear(gv_listen_addr_t *a);

/* ---- facts ---- */


/*
 * gv_metrics_parse_rfc3339 - parse "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)"
 * (also 't' and ' ' as separator, 'z') into seconds since the Unix epoch.
 * Returns 0 with *out set, or -EINVAL (no error object; *out untouched).
 */
int gv_metrics_parse_rfc3339(const char *s, double *out);

/* ---- re-validations (written by `gpu-validator watch`) ---- */

/* The counters file in the status folder: not a marker; `cleanup` leaves it. */
#define GV_REVALIDATIONS_FILE ".gpu-validator-revalidations"

/* Why `watch` re-validated the node (the `reason` label of gpu_validator_revalidations_total). */
typedef enum gv_revalidation_reason {
        GV_REVAL_DRIVER_CTR_RESTART = 0, /* .driver-ctr-ready removed or replaced: the driver container restarted */
        GV_REVAL_DEVICE_NODE_REMOVED,    /* an /dev/nvidia* node present at validation went away */
        GV_REVAL_DRIVER_ROOT_CHANGED,    /* the driver root's libnvidia-ml.so.1 went away or was replaced */
        GV_REVAL_GENERATION_CHANGED,     /* driver-ready removed or republished by someone else */
        GV_REVAL_GPU_LOST,               /* a GPU answers NVML_ERROR_GPU_IS_LOST (fell off the bus) */
        GV_REVAL_XID,                    /* a GPU reported a critical Xid (not an application error) */
        GV_REVAL__MAX
} gv_revalidation_reason_t;

/* "driver-container-restart", "device-node-removed", "driver-root-changed", "generation-changed"; static. */
const char *gv_revalidation_reason_name(gv_revalidation_reason_t r);

/* The counters: re-validations started per reason since the file was created (this boot: /run is tmpfs). */
typedef struct gv_revalidations {
        bool present; /* the file exists (a watcher ran on this node) */
        uint64_t count[GV_REVAL__MAX];
} gv_revalidations_t;

/*
 * gv_revalidations_parse - parse the file's text (KEY=count lines as
 * gv_marker_parse() reads them; keys DRIVER_CONTAINER_RESTART,
 * DEVICE_NODE_REMOVED, DRIVER_ROOT_CHANGED, GENERATION_CHANGED; unknown
 * keys are ignored, a missing key counts 0).  @out is set (present) only on
 * success.  Errors: -EINVAL with GV_REASON_CONFIG naming the line or key.
 */
int gv_revalidations_parse(const char *text, size_t len, gv_revalidations_t *out, gv_error_t **err);

/*
 * gv_revalidations_read - read GV_REVALIDATIONS_FILE in @dir (NULL: the
 * default status folder); an absent file gives all zeros, present false.
 * A symlink is refused.  Errors: as gv_read_file_at() and
 * gv_revalidations_parse().
 */
int gv_revalidations_read(const char *dir, gv_revalidations_t *out, gv_error_t **err);

/*
 * gv_revalidations_write - replace GV_REVALIDATIONS_FILE in @dir atomically
 * (gv_atomic_write_at(): a reader sees the old or the new counts, never a
 * half).  Errors: negative errno, GV_REASON_IO; -ENOMEM.
 */
int gv_revalidations_write(const char *dir, const gv_revalidations_t *c, gv_error_t **err);

/* What the exporter knows about one marker. */
typedef struct gv_metrics_marker {
        gv_marker_state_t state;
        bool have_validated_at; /* VALIDATED_AT parsed from a ready, stale or inconsistent marker */
        double validated_at;    /* seconds since the epoch */
        bool have_duration;     /* VALIDATION_DURATION_SECONDS present and a finite number >= 0 */
        double duration_s;      /* seconds */
} gv_metrics_marker_t;

/* Everything one page of metrics is rendered from.  Strings are borrowed. */
typedef struct gv_metrics_snapshot {
        const char *node;                             /* value of the `node` label */
        const char *version;                          /* gpu_validator_build_info{version} */
        gv_metrics_marker_t markers[GV_MARKER__MAX];  /* indexed by gv_marker_id_t */
        bool have_nvml_gpus;                          /* driver-ready is READY and has GPU_COUNT */
        unsigned long nvml_gpus;
        unsigned long plugin_devices;                 /* plugin-ready's DEVICE_PLUGIN_DEVICES when READY, else 0 */
        bool have_pci_gpus;                           /* the PCI bus could be scanned (src/pci/pci.h) */
        unsigned long pci_gpus;
        gv_revalidations_t revalidations;             /* present when `watch` wrote its counters file */
        double started_at;                            /* the exporter's start, Unix seconds (0: unknown) */
        double plugin_seen_at;                        /* Unix seconds of the last render that saw plugin-ready
                                                         ready with DEVICE_PLUGIN_DEVICES >= 1; 0: never */
} gv_metrics_snapshot_t;

/*
 * gv_metrics_snapshot_init - every marker missing, no facts; @node and
 * @version borrowed.
 */
void gv_metrics_snapshot_init(gv_metrics_snapshot_t *s, const char *node, const char *version);

/*
 * gv_metrics_collect - fill @s's markers and facts from @store (NULL: the
 * status folder does not exist, every marker is missing) and from the PCI
 * devices under @sysfs_root (NULL: not counted).  Calls only
 * gv_store_inspect(), which reads.  @s's node and version are kept.
 * Returns 0, or the negative errno of gv_store_inspect() with *err set
 * when the folder itself failed (the markers not yet inspected are left
 * missing, so @s is still renderable).  A PCI failure is not an error: the
 * pci series is left out.
 */
int gv_metrics_collect(gv_store_t *store, const char *sysfs_root, gv_metrics_snapshot_t *s, gv_error_t **err);

/*
 * gv_metrics_render - the Prometheus text exposition (format 0.0.4) of @s:
 * HELP and TYPE lines and the samples of every gauge in docs/metrics.md, in
 * a fixed order.  Label values are escaped (\\, \", \n).  *out is a
 * NUL-terminated heap string owned by the caller; *len (may be NULL) its
 * length in bytes.  Errors: -ENOMEM (GV_REASON_INTERNAL).
 */
int gv_metrics_render(const gv_metrics_snapshot_t *s, char **out, size_t *len, gv_error_t **err);

/* ---- the HTTP exporter ---- */

typedef struct gv_exporter gv_exporter_t;

/* Settings of an exporter; strings are copied by gv_exporter_new(). */
typedef struct gv_exporter_options {
        const gv_listen_addr_t *listen; /* NULL: every address, port 8000 */
        const char *output_dir;         /* NULL: GV_DEFAULT_OUTPUT_DIR */
        const char *boot_id_path;       /* NULL: GV_DEFAULT_BOOT_ID_PATH */
        const char *sysfs_root;         /* NULL: "/sys" */
        const char *node_name;          /* required: the `node` label */
        const char *version;            /* build_info version; NULL: GV_VERSION */
        unsigned cache_ttl_s;           /* 0: GV_METRICS_DEFAULT_CACHE_TTL_S */
        gv_log_fn log;                  /* may be NULL */
        void *log_userdata;
} gv_exporter_options_t;

/*
 * gv_exporter_new - bind and listen on the address (SO_REUSEADDR; ":PORT"
 * is dual-stack IPv6 with an IPv4 fallback) and set up libmicrohttpd in
 * external-epoll mode; does not serve until gv_exporter_run().  Opening
 * the status folder is deferred to the first scrape and retried on each
 * scrape while it is missing.
 * @out: heap object owned by the caller (gv_exporter_free()).
 * Errors: -EINVAL (GV_REASON_CONFIG) for a missing node name; the bind /
 * listen errno (EADDRINUSE, EACCES, ...) with GV_REASON_CONFIG naming the
 * address; -ENOMEM and libmicrohttpd start failures with GV_REASON_INTERNAL.
 */
int gv_exporter_new(const gv_exporter_options_t *opts, gv_exporter_t **out, gv_error_t **err);

/* Free the exporter: stop serving, close the socket, the store and the inotify watch.  Accepts NULL. */
void gv_exporter_free(gv_exporter_t **exp);

/* The address actually bound, for logs: "127.0.0.1:8000", "[::]:8000".  Owned by the exporter. */
const char *gv_exporter_address(const gv_exporter_t *exp);

/* The port actually bound (useful with port 0). */
uint16_t gv_exporter_port(const gv_exporter_t *exp);

/*
 * gv_exporter_run - serve GET/HEAD /metrics and /healthz (other paths 404,
 * other methods 405) until *@stop becomes non-zero, then return 0.  Single
 * threaded: poll() on libmicrohttpd's epoll fd and the inotify fd, waking
 * at least once a second to check @stop (a signal also interrupts poll()).
 * Errors: poll()/libmicrohttpd failures, negative errno, GV_REASON_INTERNAL.
 */
int gv_exporter_run(gv_exporter_t *exp, const volatile sig_atomic_t *stop, gv_error_t **err);

/* Number of /metrics responses served and of page renders so far (for tests and bench). */
uint64_t gv_exporter_scrapes(const gv_exporter_t *exp);
uint64_t gv_exporter_renders(const gv_exporter_t *exp);

#endif
