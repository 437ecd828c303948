/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The life of one validation pod (cuda, plugin) on top of the Kubernetes
 * client (k8s/k8s.h) and the templates (workload.h):
 *
 *   delete earlier pods of this kind on this node and wait until they are
 *   gone -> create the pod -> WATCH it (never poll) -> judge every change
 *   with gv_pod_classify() -> on deletion by someone else, re-create with
 *   backoff (bounded) -> delete the pod at the end, whatever happened.
 *
 * Plus the node helpers of the plugin component (GPU devices allocatable,
 * the device-plugin deploy label).  See docs/workload-lifecycle.md.
 *
 * Conventions (docs/errors.md): 0 or a negative errno with *err set.
 * Validation-pod failures carry GV_REASON_WORKLOAD, a wait that ran out
 * GV_REASON_TIMEOUT, API failures GV_REASON_KUBERNETES (as the client sets
 * them).  Nothing here prints; progress goes to the caller's log function.
 */
#ifndef GV_WORKLOAD_LIFECYCLE_H
#define GV_WORKLOAD_LIFECYCLE_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>

#include "base/error.h"
#include "k8s/k8s.h"
#include "workload/workload.h"

/* ======================================================================
 * Pod-status classifier (pure: JSON pod in, verdict out)
 * ====================================================================== */

typedef enum gv_pod_verdict {
        GV_POD_WAITING = 0, /* not finished yet: keep watching */
        GV_POD_SUCCEEDED,   /* every template container terminated with exit code 0 */
        GV_POD_FAILED,      /* a failure that waiting will not cure (see gv_pod_failure_t) */
} gv_pod_verdict_t;

/* Why a pod failed; each has its own message. */
typedef enum gv_pod_failure {
        GV_POD_FAIL_NONE = 0,
        GV_POD_FAIL_INIT_CONTAINER,   /* an init container terminated with a non-zero exit code */
        GV_POD_FAIL_CONTAINER,        /* a container terminated with a non-zero exit code */
        GV_POD_FAIL_ADMISSION,        /* status.reason UnexpectedAdmissionError (no free GPU) */
        GV_POD_FAIL_IMAGE_PULL,       /* waiting ErrImagePull / ImagePullBackOff / InvalidImageName / ErrImageNeverPull */
        GV_POD_FAIL_UNSCHEDULABLE,    /* condition PodScheduled False, reason Unschedulable */
        GV_POD_FAIL_CRASH_LOOP,       /* waiting CrashLoopBackOff, or restartCount over the bound */
        GV_POD_FAIL_CREATE_CONTAINER, /* waiting CreateContainerConfigError / CreateContainerError / RunContainerError */
        GV_POD_FAIL_POD_FAILED,       /* phase Failed for another reason (Evicted, OutOf<resource>, ...) */
        GV_POD_FAIL_PENDING_TOO_LONG, /* set by the lifecycle, never by the classifier */
        GV_POD_FAIL__MAX
} gv_pod_failure_t;

/* gv_pod_failure_name - stable short name ("init-container-failed", "admission-error", ...). Static. */
const char *gv_pod_failure_name(gv_pod_failure_t f);

/* Result of gv_pod_classify(); strings are heap-owned (gv_pod_status_clear()). */
typedef struct gv_pod_status {
        gv_pod_verdict_t verdict;
        gv_pod_failure_t failure;  /* GV_POD_FAIL_NONE unless verdict is GV_POD_FAILED */
        char *container;           /* the container concerned (status name), or NULL */
        bool init_container;       /* @container is an init container */
        int exit_code;             /* its exit code for *_CONTAINER failures, else 0 */
        char *image;               /* its image (containerStatuses[].image, else spec), or NULL */
        char *message;             /* one line saying what happened; set for FAILED, else progress (may be NULL) */
        bool started;              /* some container (of the template or not) has run or runs: the kubelet took the pod */
        char *phase;               /* status.phase, or "" when absent (heap) */
} gv_pod_status_t;

/* gv_pod_status_clear - free the strings and zero the struct; accepts NULL. */
void gv_pod_status_clear(gv_pod_status_t *s);

/*
 * gv_pod_classify - judge one Pod object (core/v1: status.phase,
 * status.reason/message, status.conditions[type=PodScheduled],
 * status.initContainerStatuses[] / containerStatuses[]: name, image,
 * restartCount, state.{waiting,running,terminated}, lastState.terminated).
 *
 * @init_names / @names: the init containers and containers the template
 * defines (gv_workload_container_names()); only they count: a container the
 * template did not define (an injected sidecar) is ignored, so a pod
 * whose validation containers all terminated with exit code 0 succeeds
 * while its sidecar still runs.  Phase Succeeded also counts as success.
 * Failures, first match wins: UnexpectedAdmissionError; a template
 * container (init first) terminated non-zero now or last time
 * (state/lastState.terminated.exitCode); image pull errors; create-container
 * errors; CrashLoopBackOff or restartCount > @max_restarts; PodScheduled
 * False/Unschedulable; phase Failed.  Anything else is GV_POD_WAITING.
 * @out is filled on success (caller clears); untouched on failure.
 * Errors: -EINVAL (GV_REASON_KUBERNETES) when @pod is not an object; -ENOMEM.
 */
int gv_pod_classify(json_object *pod, const char *const *init_names, const char *const *names,
                    unsigned max_restarts, gv_pod_status_t *out, gv_error_t **err);

/* ======================================================================
 * Node helpers (plugin component)
 * ====================================================================== */

/* The label that disables the device plugin on a node and its "off" value. */
#define GV_DEVICE_PLUGIN_DEPLOY_LABEL "nvidia.com/gpu.deploy.device-plugin"

/*
 * gv_node_device_plugin_disabled - whether @node (a core/v1 Node) carries
 * metadata.labels["nvidia.com/gpu.deploy.device-plugin"] == "false".
 */
bool gv_node_device_plugin_disabled(json_object *node);

/*
 * gv_node_gpu_devices - the sum of the integer quantities of every
 * `nvidia.com/gpu*` and `nvidia.com/mig-*` resource in the Node's
 * status.allocatable (status.capacity when allocatable is absent), i.e.
 * the devices the device plugin advertises.  Quantities that are not
 * plain non-negative integers count as 0.  Returns the count (0 when none
 * or @node is malformed); never fails.
 */
unsigned long gv_node_gpu_devices(json_object *node);

/*
 * gv_node_gpu_resources - borrowed status.allocatable of @node (or
 * status.capacity when allocatable is absent), for
 * gv_workload_pick_gpu_resource(); NULL when neither is an object.
 */
json_object *gv_node_gpu_resources(json_object *node);

/* ======================================================================
 * Lifecycle
 * ====================================================================== */

/* Bounds and collaborators; zero fields take the defaults in brackets. */
typedef struct gv_pod_run_options {
        gv_workload_kind_t kind;        /* which component's pods (label selector) */
        const char *namespace;          /* where the pod lives (OPERATOR_NAMESPACE); required */
        const char *node_name;          /* this node (NODE_NAME); required */
        unsigned timeout_s;             /* one overall bound for the pod, old pods' deletion included, seconds [300] */
        unsigned pending_timeout_s;     /* a pod the kubelet has not started after this long fails, seconds [120,
                                           at most timeout_s] */
        unsigned max_restarts;          /* restartCount above this is a crash loop [3] */
        unsigned max_recreate;          /* re-creations after deletion by someone else [3] */
        unsigned recreate_backoff_ms;   /* first backoff before a re-creation, doubled each time [1000] */
        unsigned log_tail_lines;        /* log lines of a failed container kept in the message [20] */
        const volatile sig_atomic_t *stop; /* SIGTERM/SIGINT: give up promptly (-EINTR), still delete the pod */
        gv_log_fn log;                  /* may be NULL; reason "" */
        void *log_userdata;
        const char *log_component;      /* component name of the log lines (borrowed) */
} gv_pod_run_options_t;

/* What a finished run learned (heap strings; gv_pod_run_result_clear()). */
typedef struct gv_pod_run_result {
        char *pod_name;        /* the last pod created (metadata.name), or NULL */
        unsigned creations;    /* pods created (1 + re-creations) */
        double duration_s;     /* wall time, seconds */
} gv_pod_run_result_t;

/* gv_pod_run_result_clear - free and zero; accepts NULL. */
void gv_pod_run_result_clear(gv_pod_run_result_t *r);

/*
 * gv_workload_delete_old - delete every pod of @opts->kind on
 * @opts->node_name in @opts->namespace (LIST with the label selector of
 * gv_workload_label_selector() and fieldSelector spec.nodeName), then WATCH
 * from the list's resourceVersion until all of them are gone or
 * @timeout_s passes.  Returns the number of pods deleted, or a negative
 * errno: -ETIMEDOUT (GV_REASON_TIMEOUT) naming the pods still there, API errors.
 */
int gv_workload_delete_old(gv_k8s_client_t *c, const gv_pod_run_options_t *opts, unsigned timeout_s,
                           gv_error_t **err);

/*
 * gv_pod_run - the whole life of one validation pod: gv_workload_delete_old(),
 * create @pod (a filled Pod from gv_workload_pod(), borrowed, not changed),
 * watch it until gv_pod_classify() says SUCCEEDED or FAILED, the pending
 * bound or the overall bound passes; re-create it (after a doubling backoff)
 * when someone else deletes it, at most @opts->max_recreate times; delete
 * it at the end in every case.  For a failed container the last
 * log_tail_lines lines of its log (pods/log?tailLines=) are added to the
 * message when they can be read.  Written as a state machine (podrun.h,
 * docs/workload-lifecycle.md).
 * @result (may be NULL) is filled in every case (caller clears).
 * Errors: GV_REASON_WORKLOAD with the gv_pod_failure_t's message (the pod
 * failed, or was deleted too often); GV_REASON_TIMEOUT (-ETIMEDOUT) at the
 * overall bound, naming the phase and the containers not finished;
 * GV_REASON_INTERRUPTED on stop; API errors (GV_REASON_KUBERNETES);
 * GV_REASON_CONFIG when @pod's container lists are malformed.
 */
int gv_pod_run(gv_k8s_client_t *c, json_object *pod, const gv_pod_run_options_t *opts,
               gv_pod_run_result_t *result, gv_error_t **err);

/*
 * Everything gv_workload_validate() needs besides the client; strings borrowed.
 */
typedef struct gv_workload_job {
        gv_pod_run_options_t run;       /* kind, namespace, node, bounds, log */
        const char *template_path;      /* override file (WORKLOAD_TEMPLATE), or NULL */
        const char *image;              /* VALIDATOR_IMAGE */
        const char *image_pull_policy;  /* VALIDATOR_IMAGE_PULL_POLICY */
        const char *image_pull_secrets; /* VALIDATOR_IMAGE_PULL_SECRETS (comma list) */
        const char *runtime_class;      /* VALIDATOR_RUNTIME_CLASS */
        const char *validator_pod_name; /* the validator's own pod (VALIDATOR_POD_NAME): tolerations and owner */
        const char *validator_pod_uid;  /* its metadata.uid when known (VALIDATOR_POD_UID) */
        const char *gpu_resource;       /* plugin: the resource to request (gv_workload_pick_gpu_resource()) */
} gv_workload_job_t;

/*
 * gv_workload_validate - load the override file, read the validator's own
 * Pod (GET; spec.tolerations are copied, metadata.name/uid become the owner
 * reference; when it cannot be read a warning is logged and the pod goes
 * without them), render the pod (gv_workload_pod()) and gv_pod_run() it.
 * Errors: those of the steps (GV_REASON_CONFIG for the template).
 */
int gv_workload_validate(gv_k8s_client_t *c, const gv_workload_job_t *job, gv_pod_run_result_t *result,
                         gv_error_t **err);

#endif
