/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of src/markers; not part of the module's API. */
#ifndef GV_MARKERS_INTERNAL_H
#define GV_MARKERS_INTERNAL_H

#include <stdbool.h>

#include "markers.h"

#define GV_MARKER_MAX_BYTES ((size_t) 64 * 1024)

struct gv_store {
        char *dir;      /* folder path as given */
        char *boot_id;  /* this boot's id, trimmed */
        char *version;  /* VALIDATOR_VERSION */
        int dirfd;      /* O_DIRECTORY|O_NOFOLLOW fd, or -1 while the folder does not exist (allow_missing) */
        bool create;
        /*
         * gv_store_wait()'s folder watch, kept between waits: closing an
         * inotify fd waits for an RCU grace period (milliseconds), which would
         * otherwise be added to every wait's latency.  NULL until the first wait.
         */
        gv_dirwatch_t *watch;
};

/* Whether @id names a marker (0 <= id < GV_MARKER__MAX). */
bool gv_marker_id_valid(gv_marker_id_t id);

/* Whether @ancestor is a strict ancestor of @id in the chain. */
bool gv_marker_is_downstream(gv_marker_id_t id, gv_marker_id_t ancestor);

/*
 * (Re)open the store's folder if it is not open yet.  Returns 1 when open,
 * 0 when it does not exist (store->dirfd stays -1), negative errno with *err.
 */
int gv_store_attach(gv_store_t *store, gv_error_t **err);

#endif
