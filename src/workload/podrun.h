/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod run as a state machine (podrun.c): its states, the watch context
 * that judges the events of one pod, and the pure transition taken when a
 * watch ends.  Private to src/workload and its unit tests; the public entry
 * is gv_pod_run() in lifecycle.h.  docs/workload-lifecycle.md draws it.
 */
#ifndef GV_WORKLOAD_PODRUN_H
#define GV_WORKLOAD_PODRUN_H

#include <stdbool.h>

#include "workload/lifecycle.h"

/*
 * The states of gv_pod_run().  Each has one function in podrun.c that does
 * its work and returns the next state; the run ends at GV_POD_RUN_DONE.
 */
typedef enum gv_pod_run_state {
        GV_POD_RUN_PREPARE,    /* check namespace and node, container names, label selector */
        GV_POD_RUN_DELETE_OLD, /* delete earlier pods of the kind on the node and wait until they are gone */
        GV_POD_RUN_BACKOFF,    /* the pod was deleted by someone else: wait the doubling backoff */
        GV_POD_RUN_CREATE,     /* create the pod and judge the created object */
        GV_POD_RUN_WATCH,      /* one watch round (re-entered until decided, deleted, a bound, an error) */
        GV_POD_RUN_JUDGE,      /* the watch ended: pick the outcome (gv_pod_run_next()) */
        GV_POD_RUN_SUCCEEDED,  /* every validation container exited 0 */
        GV_POD_RUN_FAILED,     /* the classifier named a failure; log tail added */
        GV_POD_RUN_PENDING,    /* never started by the kubelet within pending_timeout_s */
        GV_POD_RUN_TIMED_OUT,  /* not finished within timeout_s */
        GV_POD_RUN_BROKEN,     /* the classifier itself failed (out of memory) */
        GV_POD_RUN_GIVE_UP,    /* deleted by someone else once more than max_recreate allows */
        GV_POD_RUN_DELETE,     /* delete our pod (best effort, logged) */
        GV_POD_RUN_DONE,
        GV_POD_RUN__MAX
} gv_pod_run_state_t;

/* gv_pod_run_state_name - "prepare", "watch", ... for logs and tests; "unknown" out of range.  Static string. */
const char *gv_pod_run_state_name(gv_pod_run_state_t s);

/*
 * What the watch of one created pod has seen so far.  Fill the first five
 * fields (borrowed) and rv (owned), then hand it to gv_pod_watch_judge()
 * and, as userdata, to gv_k8s_pod_watch() with gv_pod_watch_event();
 * gv_pod_watch_clear() frees it.
 */
typedef struct gv_pod_watch {
        const char *name;               /* our pod's metadata.name */
        const char *uid;                /* its metadata.uid; events of another uid are an older pod */
        const char *const *init_names;  /* validation init containers (NULL-terminated) */
        const char *const *names;       /* validation containers (NULL-terminated) */
        unsigned max_restarts;          /* gv_pod_classify()'s crash-loop bound */
        gv_pod_status_t st;             /* last classification */
        char *rv;                       /* last resourceVersion seen (heap) */
        bool decided;                   /* SUCCEEDED, or FAILED while not terminating */
        bool deleted;                   /* DELETED event of our pod */
        bool terminating;               /* deletionTimestamp seen */
        int error;                      /* classification error (negative errno), 0 if none */
        gv_error_t *err;                /* its error */
} gv_pod_watch_t;

/* gv_pod_watch_clear - free the classification, rv and the error; accepts a zeroed context. */
void gv_pod_watch_clear(gv_pod_watch_t *w);

/*
 * gv_pod_watch_judge - classify one version of our pod into @w.  A pod with
 * a deletionTimestamp is terminating: a FAILED verdict then does not decide
 * (containers killed by someone else's deletion are no validation failure;
 * its DELETED event follows).  Returns false when the watch can end
 * (decided, or a classification error in w->error / w->err).
 */
bool gv_pod_watch_judge(gv_pod_watch_t *w, json_object *pod);

/*
 * gv_pod_watch_event - a gv_k8s_watch_fn over @userdata, a gv_pod_watch_t:
 * remembers each event's resourceVersion, ignores bookmarks, errors, other
 * pods and an older pod of the same name (another uid), marks DELETED of
 * ours, and judges the rest.  Returns false when the watch can end.
 */
bool gv_pod_watch_event(void *userdata, const gv_k8s_watch_event_t *ev);

/*
 * gv_pod_run_next - the transition out of GV_POD_RUN_JUDGE, a pure function
 * of what the watch saw (@w), which creation this was (0 = the first;
 * @max_recreate bounds the re-creations) and whether the overall deadline
 * is still ahead: BROKEN on a classification error, BACKOFF or GIVE_UP when
 * the pod was deleted, SUCCEEDED / FAILED when decided, else PENDING (not
 * started, deadline ahead: the pending bound passed) or TIMED_OUT.
 */
gv_pod_run_state_t gv_pod_run_next(const gv_pod_watch_t *w, unsigned creation, unsigned max_recreate,
                                   bool before_deadline);

#endif
