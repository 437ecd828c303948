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
#include <signal.h>
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
        GV_MARKER_MOFED,             /* mofed-ready: the MOFED driver (GPUDirect RDMA), no parent */
        GV_MARKER_CC_MANAGER,        /* cc-manager-ready: confidential computing mode set, no parent */
        GV_MARKER_VFIO_PCI,          /* vfio-pci-ready: GPUs bound for pass-through (vm-passthrough), no parent */
        GV_MARKER_VGPU_MANAGER,      /* vgpu-manager-ready: vGPU manager loaded (vm-vgpu), no parent */
        GV_MARKER_HOST_VGPU_MANAGER, /* host-vgpu-manager-ready: companion of vgpu-manager-ready for a host manager */
        GV_MARKER_VGPU_DEVICES,      /* vgpu-devices-ready, depends on vgpu-manager */
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

/* Whether @key is a valid marker key: [A-Z_][A-Z0-9_]*. */
bool gv_marker_key_valid(const char *key);

/* The marker id of a file name ("toolkit-ready"); GV_MARKER_INVALID if unknown. */
gv_marker_id_t gv_marker_by_file(const char *file);

/*
 * The one marker @id depends on directly, or GV_MARKER_INVALID for driver-ready
 * and host-driver-ready (the root of the chain).
 */
gv_marker_id_t gv_marker_parent(gv_marker_id_t id);

/*
 * The marker that @id is the companion of (GV_MARKER_DRIVER for
 * host-driver-ready, GV_MARKER_VGPU_MANAGER for host-vgpu-manager-ready),
 * else GV_MARKER_INVALID; and the reverse: the companion of @id, or
 * GV_MARKER_INVALID.  A companion is written with its marker (same content)
 * when the component was found installed on the host, and never published
 * on its own (docs/markers.md).
 */
gv_marker_id_t gv_marker_companion_of(gv_marker_id_t id);
gv_marker_id_t gv_marker_companion(gv_marker_id_t id);

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
        const char *validator_version; /* VALIDATOR_VERSION written into markers; NULL means GV_VERSION */
        /*
         * Readers only (status, wait): a folder that does not exist yet is not
         * an error.  gv_store_open() succeeds, gv_store_inspect() says MISSING,
         * gv_store_wait() watches the nearest existing parent until the folder
         * appears, and the store attaches to it then.  Ignored with @create.
         */
        bool allow_missing;
        /*
         * Readers that must not write at all (metrics, status, wait): no lock
         * file is created and no stray temporary file is removed at open.
         * The writer functions must not be called on such a store.
         */
        bool read_only;
} gv_store_options_t;

/*
 * gv_store_open - open the status folder (O_DIRECTORY, symlink at the last
 * component refused) and read the boot id.  Stray temporary files of a
 * crashed writer (".<marker>.tmp-*") are removed when the folder is writable
 * and no writer holds the lock at that moment.  With opts->create the folder
 * and its parents are made (0755); with opts->allow_missing a missing folder
 * is not an error (see gv_store_options_t).  @opts may be NULL (defaults).
 * @out: heap object owned by the caller (gv_store_close()).  A store is used
 * by one thread at a time; use one store per thread.
 * Trailing "/" and "/." are dropped from the folder path first, so that a
 * symlink spelled "link/" is refused like "link".
 * Errors: -ENOENT / -ENOTDIR / -EACCES with GV_REASON_IO naming the folder
 * (-ELOOP when it is a symlink); -EINVAL (GV_REASON_CONFIG, naming the file)
 * when the boot id file cannot be read (missing, unreadable, not a regular
 * file) or holds anything but a UUID (8-4-4-4-12 hex digits, trailing white
 * space allowed) -- the same rule for every command.
 */
int gv_store_open(const gv_store_options_t *opts, gv_store_t **out, gv_error_t **err);
/* Close and free *store (folder fd, inotify fd) and set it to NULL; accepts NULL and an empty slot. */
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
 * an error.  When the writer lock cannot be taken (-ENOLCK: something other
 * than a regular file sits at .gpu-validator.lock) the markers are removed
 * without it and the lock's error is returned, since nothing could be
 * published afterwards.  Errors: negative errno, GV_REASON_IO.
 */
int gv_store_invalidate(gv_store_t *store, gv_marker_id_t id, gv_error_t **err);

/*
 * gv_store_fail - @id failed (or was interrupted): make sure its marker and
 * every downstream marker are gone; for GV_MARKER_DRIVER also remove
 * host-driver-ready.  Removes them even when the writer lock cannot be
 * taken (removal does not need it: docs/markers.md), and then succeeds.
 * Errors: a marker that could not be removed: negative errno, GV_REASON_IO.
 */
int gv_store_fail(gv_store_t *store, gv_marker_id_t id, gv_error_t **err);

/*
 * gv_store_publish - write @id's marker atomically, under the writer lock.
 * Adds VALIDATOR_VERSION, GENERATION (fresh, 128 random bits, hex),
 * BOOT_ID, VALIDATED_AT (RFC 3339 UTC) and, for a marker with a parent, the
 * parent's generation under gv_marker_generation_key(parent), after
 * checking that the parent is READY and (when @expect_parent_generation is
 * not NULL) still has that generation.  @facts are written after those
 * keys (e.g. the five upstream driver-ready keys); a fact may not use one of
 * those reserved keys (-EINVAL).  Markers downstream of @id that are still
 * present (the caller skipped gv_store_invalidate()) are removed, most
 * downstream first, before @id is replaced, so they never record a
 * generation that is gone.
 * For GV_MARKER_DRIVER with host_driver true, host-driver-ready is written
 * first with the same content; with host_driver false it is removed first.
 * @host_driver is ignored for other markers; GV_MARKER_HOST_DRIVER itself
 * cannot be published (-EINVAL).
 * @generation_out (may be NULL) receives the new generation, 33 bytes.
 * Errors: -ESTALE with GV_REASON_DEPENDENCY when the parent is not ready or
 * changed generation (nothing written); -ENOLCK (GV_REASON_IO, saying what
 * to do) when something other than a regular file sits at the writer lock's
 * name; -ENOSPC and other IO errors with GV_REASON_IO (nothing half-written).
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

/* Free @info's detail and content (not @info itself); state becomes MISSING, mtime 0. Accepts NULL. */
void gv_marker_info_clear(gv_marker_info_t *info);

/*
 * gv_store_inspect - the state of one marker, judged with its whole upstream
 * chain (a marker is READY only when every ancestor is READY and each
 * recorded generation matches).  Never fails for a missing or foreign file;
 * errors are for the folder itself (negative errno).  @info is overwritten
 * (not freed first) and owned by the caller (gv_marker_info_clear()).
 * Takes no lock: the marker is read before its ancestors, so a READY
 * verdict means the chain was complete when the marker was read.
 */
int gv_store_inspect(gv_store_t *store, gv_marker_id_t id, gv_marker_info_t *info, gv_error_t **err);

/*
 * gv_store_wait - block until @id is READY (0), or @timeout_ms passes
 * (-ETIMEDOUT, GV_REASON_TIMEOUT, message lists each marker of the chain,
 * root first, with its state and why: "driver-ready: ready; toolkit-ready:
 * missing (not present)").  Event-driven with inotify on the folder
 * (create, moved-to, delete, moved-from, close-write, attrib), re-checking
 * the whole chain after each event batch; ppoll() with the time left.
 * Without an inotify instance (gv_store_watch() says so) it opens the
 * folder again and re-checks every GV_DIRWATCH_POLL_MS instead.  While the folder does not exist (a store opened with
 * allow_missing) its nearest existing parent is watched until it appears,
 * within the same timeout; a folder removed and re-created during the wait
 * is followed.  timeout_ms < 0 waits forever.  A signal whose handler runs
 * ends the wait: -EINTR, GV_REASON_INTERRUPTED.  On success @info (may be
 * NULL) is filled with the marker's content (caller clears it); on failure
 * it is untouched.  The inotify instance is kept in the store for the next
 * wait (closing one costs milliseconds) and closed by gv_store_close().
 */
int gv_store_wait(gv_store_t *store, gv_marker_id_t id, int64_t timeout_ms, gv_marker_info_t *info,
                  gv_error_t **err);

/*
 * gv_store_watch - make the folder watch of gv_store_wait() now (the first
 * wait makes it otherwise) and say how waits will go: 0 event-driven
 * (inotify), 1 polling every GV_DIRWATCH_POLL_MS because no inotify
 * instance could be had (the per-user limit fs.inotify.max_user_instances
 * used up, EMFILE); *why (may be NULL) is then set to the reason
 * ("inotify: Too many open files"), owned by the store.
 * Errors: -ENOMEM, -EINVAL (GV_REASON_INTERNAL).
 */
int gv_store_watch(gv_store_t *store, const char **why, gv_error_t **err);

/*
 * gv_store_cleanup - remove every marker, downstream first, plus stray
 * temporary files; for preStop.  Files we do not own (.driver-ctr-ready,
 * workload-type) are left alone.  When the writer lock cannot be taken,
 * every marker is still removed (temp files stay) and the lock's error is
 * returned ("every marker was removed, but ...").  Errors: negative errno,
 * GV_REASON_IO.
 */
int gv_store_cleanup(gv_store_t *store, gv_error_t **err);

/*
 * gv_store_write_workload_type - write the `workload-type` file (upstream's
 * sandbox consumers read it: "<config>\n") atomically into the folder,
 * under the writer lock.  @config must be one of container, vm-passthrough,
 * vm-vgpu (-EINVAL, GV_REASON_CONFIG otherwise).  The file is not a marker:
 * cleanup leaves it.  Source: shared/reference/upstream-components.md
 * ("vfio-pci").  Errors: negative errno, GV_REASON_IO.
 */
int gv_store_write_workload_type(gv_store_t *store, const char *config, gv_error_t **err);

/* ---- watching a folder ---- */

/*
 * gv_dirwatch: the one folder watcher of the project (docs/markers.md,
 * "Watching the folder"), for the status folder and any other folder (the
 * driver's <driver root>/dev).  inotify on the folder and on its parent for
 * the folder's name; while the folder does not exist, on its nearest
 * existing ancestor until it appears.  When the folder is removed, moved or
 * replaced (IN_DELETE_SELF, IN_MOVE_SELF, IN_IGNORED, or its name removed,
 * created or moved in the parent), the watch re-arms itself and the caller
 * is told (GV_DIRWATCH_REARMED): it must then read everything again, and
 * re-open any descriptor it holds on the folder.  Without inotify (the
 * per-user instance limit reached, a kernel without it) it falls back to
 * polling: gv_dirwatch_next() returns GV_DIRWATCH_POLLED every
 * poll interval (GV_DIRWATCH_POLL_MS unless set).  One thread at a time.
 */
typedef struct gv_dirwatch gv_dirwatch_t;

#define GV_DIRWATCH_POLL_MS 1000 /* default poll interval without inotify, in ms */

typedef struct gv_dirwatch_options {
        /* Only events naming a marker file (gv_marker_by_file()) or the folder itself count as a change. */
        bool markers_only;
        /* Poll interval in ms when the folder cannot be watched; 0 means GV_DIRWATCH_POLL_MS. */
        int poll_interval_ms;
        /* Never use inotify (poll only): for tests, and file systems where inotify says nothing (NFS). */
        bool no_inotify;
} gv_dirwatch_options_t;

typedef enum gv_dirwatch_state {
        GV_DIRWATCH_WATCHING = 0, /* the folder (and its parent) are watched */
        GV_DIRWATCH_MISSING,      /* no folder: its nearest existing ancestor is watched for it to appear */
        GV_DIRWATCH_UNWATCHED,    /* arming failed (gv_dirwatch_error()); each gv_dirwatch_next() tries again */
        GV_DIRWATCH_POLLING,      /* no inotify instance (gv_dirwatch_error()); polling for good */
} gv_dirwatch_state_t;

/* What gv_dirwatch_next() saw; a larger value is the stronger news. */
typedef enum gv_dirwatch_result {
        GV_DIRWATCH_TIMEOUT = 0, /* nothing that counts within the time */
        GV_DIRWATCH_CHANGED,     /* an entry of the folder changed (created, removed, renamed, written, attributes) */
        GV_DIRWATCH_POLLED,      /* no watch: the poll interval passed; read everything again */
        GV_DIRWATCH_REARMED,     /* the folder appeared, went or was replaced (or events were lost): the
                                    watch was re-armed (see gv_dirwatch_state()); read everything again */
} gv_dirwatch_result_t;

/*
 * gv_dirwatch_open - start watching @dir (trailing slashes dropped; a
 * symlink at the last component is not followed, and cannot be watched).
 * A folder that does not exist, or cannot be watched, or no inotify at all
 * is not an error: see gv_dirwatch_state().  @opts may be NULL (defaults).
 * @out: heap object owned by the caller (gv_dirwatch_close()).
 * Errors: -EINVAL (NULL or empty @dir), -ENOMEM; GV_REASON_INTERNAL.
 */
int gv_dirwatch_open(const char *dir, const gv_dirwatch_options_t *opts, gv_dirwatch_t **out, gv_error_t **err);

/*
 * gv_dirwatch_next - wait up to @timeout_ms (< 0: forever; 0: only what is
 * pending) for the next event that counts, reading the whole batch of
 * pending events.  Returns a gv_dirwatch_result_t (>= 0).  Without a watch
 * (UNWATCHED, POLLING) it sleeps min(@timeout_ms, poll interval) and returns
 * GV_DIRWATCH_POLLED, or GV_DIRWATCH_REARMED when arming now succeeds.  An
 * ancestor's event that brings no folder is not reported.  With @stop (may
 * be NULL), *@stop is looked at least every 100 ms and a signal that
 * interrupts the wait is ignored unless *@stop is set; without @stop a
 * signal whose handler runs ends the wait.
 * Errors: -EINTR (GV_REASON_INTERRUPTED, "interrupted by a signal") when
 * stopped or interrupted; other negative errno (GV_REASON_IO) when ppoll()
 * or read() fails.
 */
int gv_dirwatch_next(gv_dirwatch_t *w, int64_t timeout_ms, const volatile sig_atomic_t *stop, gv_error_t **err);

/* The watch's state now (see gv_dirwatch_state_t). */
gv_dirwatch_state_t gv_dirwatch_state(const gv_dirwatch_t *w);

/*
 * Why the folder is not watched: "inotify: <strerror>" (POLLING) or
 * "<path>: inotify: <strerror>" (UNWATCHED), with its errnum; NULL while
 * WATCHING or MISSING.  Owned by the watch; valid until its next call.
 */
const gv_error_t *gv_dirwatch_error(const gv_dirwatch_t *w);

/*
 * The inotify descriptor, readable when gv_dirwatch_next(w, 0, ...) has
 * something to read: for a caller's own poll() loop.  -1 while POLLING.
 * Owned by the watch.
 */
int gv_dirwatch_fd(const gv_dirwatch_t *w);

/* Stop watching and free *w, setting it to NULL; accepts NULL and an empty slot. */
void gv_dirwatch_close(gv_dirwatch_t **w);

/* Fresh 128-bit generation as 32 lowercase hex digits into @out (33 bytes). 0 or -errno. */
int gv_generation_new(char out[GV_GENERATION_HEX_LEN + 1]);

#endif
