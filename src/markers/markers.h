/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Marker store: the readiness markers under OUTPUT_DIR (default
 * /run/nvidia/validations), their chain, their content, and the ordering
 * protocol that keeps the chain consistent at every instant
 * (docs/markers.md).  No CLI code, no printing, no exit().
 */
#ifndef GV_MARKERS_MARKERS_H
#define GV_MARKERS_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"

#define GV_DEFAULT_OUTPUT_DIR "/run/nvidia/validations"
#define GV_DEFAULT_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define GV_GENERATION_HEX_LEN 32 /* 128 bits */

/* Every marker, in chain order (upstream first).  Names: upstream-compat.md. */
typedef enum gv_marker_id {
        GV_MARKER_DRIVER = 0,        /* driver-ready */
        GV_MARKER_HOST_DRIVER,       /* host-driver-ready: companion of driver-ready for a host driver */
        GV_MARKER_NVIDIA_FS,         /* nvidia-fs-ready, depends on driver */
        GV_MARKER_GDRCOPY,           /* gdrcopy-ready, depends on driver */
        GV_MARKER_NVIDIA_PEERMEM,    /* nvidia-peermem-ready, depends on driver */
        GV_MARKER_TOOLKIT,           /* toolkit-ready, depends on driver */
        GV_MARKER_CUDA,              /* cuda-ready, depends on toolkit */
        GV_MARKER_PLUGIN,            /* plugin-ready, depends on cuda */
        GV_MARKER__MAX,
        GV_MARKER_INVALID = -1
} gv_marker_id_t;

/* What `status` and `wait` say about one marker. */
typedef enum gv_marker_state {
        GV_MARKER_READY = 0,     /* valid content, this boot, upstream chain consistent */
        GV_MARKER_MISSING,       /* no file */
        GV_MARKER_STALE,         /* valid content from another boot */
        GV_MARKER_INCONSISTENT,  /* an upstream marker is missing, not ready, or has another generation */
        GV_MARKER_FOREIGN,       /* present but no valid content (touch, hand-written, a symlink, a folder) */
} gv_marker_state_t;

/* Static names: "driver-ready", "driver", "ready". */
const char *gv_marker_file(gv_marker_id_t id);
const char *gv_marker_component(gv_marker_id_t id);
const char *gv_marker_state_name(gv_marker_state_t state);

/* The marker file of a component name ("driver" -> GV_MARKER_DRIVER); GV_MARKER_INVALID if unknown. */
gv_marker_id_t gv_marker_by_component(const char *component);

/* The marker id of a file name ("toolkit-ready"); GV_MARKER_INVALID if unknown. */
gv_marker_id_t gv_marker_by_file(const char *file);

/*
 * The one marker @id depends on directly, or GV_MARKER_INVALID for driver-ready
 * and host-driver-ready (the root of the chain).
 */
gv_marker_id_t gv_marker_parent(gv_marker_id_t id);

/* Key under which a dependant records the parent's generation: "DRIVER_GENERATION". Static. */
const char *gv_marker_generation_key(gv_marker_id_t id);

/* ---- content: ordered KEY=value lines ---- */

typedef struct gv_kv {
        char *key;   /* [A-Z_][A-Z0-9_]* */
        char *value; /* any bytes but NUL */
} gv_kv_t;

typedef struct gv_kvlist {
        size_t n;
        gv_kv_t *items; /* heap array of n items, each key/value heap */
} gv_kvlist_t;

/* Free the items of @l (not @l itself) and zero it. */
void gv_kvlist_clear(gv_kvlist_t *l);

/*
 * Set @key to @value, replacing an existing entry in place or appending.
 * Copies both.  Errors: -EINVAL (GV_REASON_CONFIG) for a key that is not
 * [A-Z_][A-Z0-9_]*; -ENOMEM.
 */
int gv_kvlist_set(gv_kvlist_t *l, const char *key, const char *value, gv_error_t **err);

/* The value of @key or NULL; the string is owned by the list. */
const char *gv_kvlist_get(const gv_kvlist_t *l, const char *key);

/*
 * gv_marker_encode - render @l as shell-sourceable "KEY=value\n" lines.
 * A value made only of A-Za-z0-9_./:@+=- (and not empty) is written bare;
 * any other value is single-quoted, each ' written as '\'' , so that
 * `. file` in sh yields the exact bytes.  *out is a heap string owned by the
 * caller.  Errors: -EINVAL for a bad key, -ENOMEM.
 */
int gv_marker_encode(const gv_kvlist_t *l, char **out, gv_error_t **err);

/*
 * gv_marker_parse - parse what gv_marker_encode() writes (and the bare
 * KEY=value lines that upstream writes).  Blank lines and lines starting
 * with '#' are skipped.  Anything else (a line without '=', a bad key, an
 * unterminated quote, shell syntax we do not write such as $ or `) is an
 * error naming the line number.  @out must be empty; on failure it stays
 * empty.  Errors: -EINVAL with GV_REASON_CONFIG.
 */
int gv_marker_parse(const char *text, size_t len, gv_kvlist_t *out, gv_error_t **err);

/* ---- the store ---- */

typedef struct gv_store gv_store_t;

typedef struct gv_store_options {
        const char *dir;          /* OUTPUT_DIR; NULL means GV_DEFAULT_OUTPUT_DIR */
        const char *boot_id_path; /* NULL means GV_DEFAULT_BOOT_ID_PATH */
        bool create;              /* create the folder (and parents) if missing */
        const char *validator_version; /* VALIDATOR_VERSION written into markers */
} gv_store_options_t;

/*
 * gv_store_open - open the status folder (O_DIRECTORY, symlink at the last
 * component refused) and read the boot id.  Stray temporary files of a
 * crashed writer (".<marker>.tmp-*") are removed when the folder is writable.
 * @out: heap object owned by the caller (gv_store_close()).
 * Errors: -ENOENT / -ENOTDIR / -EACCES with GV_REASON_IO naming the folder.
 */
int gv_store_open(const gv_store_options_t *opts, gv_store_t **out, gv_error_t **err);
void gv_store_close(gv_store_t **store);

/* The folder path and boot id of an open store; owned by the store. */
const char *gv_store_dir(const gv_store_t *store);
const char *gv_store_boot_id(const gv_store_t *store);

/*
 * gv_store_invalidate - before validating @id: under the store's writer lock,
 * remove every marker downstream of @id, the most downstream first, then
 * @id's own.  host-driver-ready is not removed here (see docs/markers.md: it
 * is replaced in place or removed by gv_store_publish()/gv_store_fail()), so
 * older consumers never see it flicker during a re-validation with the same
 * outcome.  A missing file is fine; a folder planted at a marker's name is
 * an error.  Errors: negative errno, GV_REASON_IO.
 */
int gv_store_invalidate(gv_store_t *store, gv_marker_id_t id, gv_error_t **err);

/*
 * gv_store_fail - @id failed (or was interrupted): make sure its marker and
 * every downstream marker are gone; for GV_MARKER_DRIVER also remove
 * host-driver-ready.  Errors as gv_store_invalidate().
 */
int gv_store_fail(gv_store_t *store, gv_marker_id_t id, gv_error_t **err);

/*
 * gv_store_publish - write @id's marker atomically, under the writer lock.
 * Adds VALIDATOR_VERSION, GENERATION (fresh, 128 random bits, hex),
 * BOOT_ID, VALIDATED_AT (RFC 3339 UTC) and, for a marker with a parent, the
 * parent's generation under gv_marker_generation_key(parent), after
 * checking that the parent is READY and (when @expect_parent_generation is
 * not NULL) still has that generation.  @facts are written after those
 * keys (e.g. the five upstream driver-ready keys).
 * For GV_MARKER_DRIVER with host_driver true, host-driver-ready is written
 * first with the same content; with host_driver false it is removed first.
 * @generation_out (may be NULL) receives the new generation, 33 bytes.
 * Errors: -ESTALE with GV_REASON_DEPENDENCY when the parent is not ready or
 * changed generation (nothing written); -ENOSPC and other IO errors with
 * GV_REASON_IO (nothing half-written).
 */
int gv_store_publish(gv_store_t *store, gv_marker_id_t id, const gv_kvlist_t *facts, bool host_driver,
                     const char *expect_parent_generation, char generation_out[GV_GENERATION_HEX_LEN + 1],
                     gv_error_t **err);

/* One marker as `status` sees it. */
typedef struct gv_marker_info {
        gv_marker_id_t id;
        gv_marker_state_t state;
        char *detail;        /* heap: why it is not ready ("DRIVER_GENERATION differs from driver-ready"), or NULL */
        time_t mtime;        /* file modification time, 0 when missing */
        gv_kvlist_t content; /* parsed content (empty unless it parsed) */
} gv_marker_info_t;

void gv_marker_info_clear(gv_marker_info_t *info);

/*
 * gv_store_inspect - the state of one marker, judged with its whole upstream
 * chain (a marker is READY only when every ancestor is READY and each
 * recorded generation matches).  Never fails for a missing or foreign file;
 * errors are for the folder itself (negative errno).  @info is filled and
 * owned by the caller (gv_marker_info_clear()).
 */
int gv_store_inspect(gv_store_t *store, gv_marker_id_t id, gv_marker_info_t *info, gv_error_t **err);

/*
 * gv_store_wait - block until @id is READY (0), or @timeout_ms passes
 * (-ETIMEDOUT, GV_REASON_TIMEOUT, message says what is missing or
 * inconsistent).  Event-driven with inotify on the folder (create, moved-to,
 * delete, close-write), re-checking the whole chain after each event
 * batch; no polling.  timeout_ms < 0 waits forever.  On success @info (may
 * be NULL) is filled with the marker's content.
 */
int gv_store_wait(gv_store_t *store, gv_marker_id_t id, int64_t timeout_ms, gv_marker_info_t *info,
                  gv_error_t **err);

/*
 * gv_store_cleanup - remove every marker, downstream first, plus stray
 * temporary files; for preStop.  Files we do not own (.driver-ctr-ready,
 * workload-type) are left alone.  Errors: negative errno, GV_REASON_IO.
 */
int gv_store_cleanup(gv_store_t *store, gv_error_t **err);

/* Fresh 128-bit generation as 32 lowercase hex digits into @out (33 bytes). 0 or -errno. */
int gv_generation_new(char out[GV_GENERATION_HEX_LEN + 1]);

#endif
