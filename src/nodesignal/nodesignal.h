/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node-level signal (docs/metrics.md, "Node-level signal"): the
 * readiness markers mirrored onto this node's Node object in the Kubernetes
 * API, opt-in:
 *   - a Node condition (status.conditions[type=GPUValidated by default]),
 *   - a label present while the node is validated,
 *   - a start-up taint absent while the node is validated,
 *   - an Event on the Node for each failure, recovery and first success.
 *
 * Three layers, each usable alone:
 *   - gv_nodesignal_judge() reads the marker store into a verdict (reads only);
 *   - gv_nodesignal_plan() turns a verdict and the Node as read into the
 *     merge patches that are needed (none when nothing differs) and the event
 *     of the transition (pure, deterministic: the time is passed in);
 *   - gv_nodesignal_new()/_run() watch the status folder with inotify and
 *     apply the plans to the API server with optimistic concurrency
 *     (metadata.resourceVersion, a 409 re-reads the Node) and a capped
 *     backoff, on a thread of the caller's choosing.
 *
 * Conventions (docs/errors.md): functions return 0 or a negative errno and
 * fill `gv_error_t **err`; nothing here prints: log lines go to the gv_log_fn
 * the caller supplies.  JSON objects are json-c objects; "owned" means the
 * caller drops them with json_object_put().
 */
#ifndef GV_NODESIGNAL_NODESIGNAL_H
#define GV_NODESIGNAL_NODESIGNAL_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/log.h"
#include "k8s/k8s.h"
#include "markers/markers.h"

/* Default Node condition type (Node.status.conditions[].type). */
#define GV_NODESIGNAL_DEFAULT_CONDITION "GPUValidated"

/* Node.status.conditions[].reason of our condition when it is True. */
#define GV_NODESIGNAL_REASON_VALIDATED "ValidationSucceeded"
/* ... when it is False and the node was never validated since the condition appeared: validation in
 * progress (the message names the component), or "<Component>ValidationFailed" when this pod's init
 * container of that component failed (gv_nodesignal_pod_progress()). */
#define GV_NODESIGNAL_REASON_VALIDATING "Validating"
#define GV_NODESIGNAL_REASON_VALIDATION_FAILED_SUFFIX "ValidationFailed"
/* The pending reason of earlier versions, still read as pending. */
#define GV_NODESIGNAL_REASON_PENDING "ValidationPending"
/* When False after a validation: <Component><State>, e.g. "ToolkitMissing" (gv_nodesignal_failure_reason()). */

/* Event.reason values (CamelCase words a person can search for: kubectl get events --field-selector reason=...). */
#define GV_NODESIGNAL_EVENT_FAILED "GPUValidationFailed"       /* type Warning: validated -> not validated */
#define GV_NODESIGNAL_EVENT_RECOVERED "GPUValidationRecovered" /* type Normal: failed -> validated */
#define GV_NODESIGNAL_EVENT_SUCCEEDED "GPUValidationSucceeded" /* type Normal: pending -> validated (first time) */
/* Event.source.component and reportingComponent; reportingInstance is "gpu-validator-<node>". */
#define GV_NODESIGNAL_EVENT_SOURCE "gpu-validator"
/* Event.action of every node-signal Event. */
#define GV_NODESIGNAL_EVENT_ACTION "Validate"

/* ---- configuration values ---- */

/* A taint (Node.spec.taints[]: key, value, effect). */
typedef struct gv_nodesignal_taint {
        char *key;    /* qualified name: [prefix/]name */
        char *value;  /* may be NULL (no value) */
        char *effect; /* "NoSchedule", "PreferNoSchedule" or "NoExecute" */
} gv_nodesignal_taint_t;

/* Free @t's strings and zero it; accepts NULL and a cleared taint. */
void gv_nodesignal_taint_clear(gv_nodesignal_taint_t *t);

/*
 * gv_nodesignal_parse_taint - parse "KEY[=VALUE]:EFFECT" (kubectl taint's
 * syntax), e.g. "nvidia.com/gpu.not-validated:NoSchedule".  KEY is a
 * Kubernetes qualified name (an optional DNS-subdomain prefix and '/', then
 * 1-63 of [A-Za-z0-9._-] starting and ending alphanumeric), VALUE a label
 * value, EFFECT NoSchedule, PreferNoSchedule or NoExecute.  @out is filled
 * only on success (caller clears it).
 * Errors: -EINVAL with GV_REASON_CONFIG naming what is wrong; -ENOMEM.
 */
int gv_nodesignal_parse_taint(const char *s, gv_nodesignal_taint_t *out, gv_error_t **err);

/*
 * gv_nodesignal_parse_label - parse "KEY=VALUE" (Node.metadata.labels):
 * KEY a qualified name as above, VALUE empty or 1-63 of [A-Za-z0-9._-]
 * starting and ending alphanumeric.  *key and *value are heap strings owned
 * by the caller, set only on success.
 * Errors: -EINVAL with GV_REASON_CONFIG; -ENOMEM.
 */
int gv_nodesignal_parse_label(const char *s, char **key, char **value, gv_error_t **err);

/*
 * gv_nodesignal_condition_type_valid - whether @s may be a condition type:
 * a qualified name as above (e.g. "GPUValidated", "example.com/GPUValidated").
 */
bool gv_nodesignal_condition_type_valid(const char *s);

/* What to manage on the Node.  Strings are borrowed. */
typedef struct gv_nodesignal_spec {
        const char *condition_type;         /* Node.status.conditions[].type, NULL: no condition */
        const char *label_key;              /* Node.metadata.labels key, NULL: no label */
        const char *label_value;            /* its value while validated ("" allowed) */
        const gv_nodesignal_taint_t *taint; /* Node.spec.taints[] entry while not validated, NULL: none */
} gv_nodesignal_spec_t;

/* ---- verdict: the markers ---- */

/* What the markers say about the chain up to the last component. */
typedef struct gv_nodesignal_verdict {
        bool validated;          /* the last component's marker is READY (so is its whole chain) */
        gv_marker_id_t last;     /* the last component */
        gv_marker_id_t failing;  /* the most upstream marker of the chain that is not READY; INVALID when validated */
        gv_marker_state_t state; /* failing's state (READY when validated) */
        char *detail;            /* heap: why failing is not READY (gv_marker_info_t.detail), or NULL */
        /* From the validator's own pod (gv_nodesignal_pod_progress()); zero when unknown: */
        bool has_running, has_failed;
        gv_marker_id_t running;  /* with has_running: the component whose init container runs now */
        gv_marker_id_t failed;   /* with has_failed: the component whose init container failed */
        int failed_exit_code;    /* its last exit code */
        int failed_restarts;     /* its restartCount */
        char *failed_message;    /* heap: the last line of its termination message, or its reason; or NULL */
} gv_nodesignal_verdict_t;

/* Free @v's strings and reset it to "not validated, nothing known"; accepts NULL. */
void gv_nodesignal_verdict_clear(gv_nodesignal_verdict_t *v);

/* Whether two verdicts say the same about the markers (validated, failing, state and detail; the pod's
 * progress fields are not compared: they are read at each sync). */
bool gv_nodesignal_verdict_equal(const gv_nodesignal_verdict_t *a, const gv_nodesignal_verdict_t *b);

/* Whether two verdicts say the same about the validator's pod (the progress fields: which init
 * container runs, which failed, its exit code, restarts and message). */
bool gv_nodesignal_progress_equal(const gv_nodesignal_verdict_t *a, const gv_nodesignal_verdict_t *b);

/*
 * gv_nodesignal_pod_progress - read the validator's own Pod (core/v1, as
 * read) into @v's running / failed fields: the init containers named
 * "<component>-validation" in order (a native sidecar, restartPolicy Always,
 * is skipped); the first that has not exited 0 is the one in progress
 * (running, or waiting to start), or the failed one when it terminated with
 * a non-zero exit code or waits in CrashLoopBackOff after one (its
 * lastState.terminated: exit code, and the last non-empty line of the
 * termination message, which FallbackToLogsOnError fills from the log; else
 * the reason).  Pure.  Returns 0, or -ENOMEM (@v then has no progress).
 */
int gv_nodesignal_pod_progress(json_object *pod, gv_nodesignal_verdict_t *v);

/*
 * gv_nodesignal_judge - the verdict for the chain root .. @last (e.g.
 * driver -> toolkit -> cuda -> plugin), each marker judged by
 * gv_store_inspect() (reads only, takes no lock).  @store NULL means the
 * status folder is not there: the root is MISSING.  @out is overwritten (not
 * freed first) and owned by the caller (gv_nodesignal_verdict_clear()).
 * Errors: those of gv_store_inspect() for the folder itself (@out untouched);
 * -EINVAL (GV_REASON_INTERNAL) for a bad @last.
 */
int gv_nodesignal_judge(gv_store_t *store, gv_marker_id_t last, gv_nodesignal_verdict_t *out, gv_error_t **err);

/*
 * gv_nodesignal_failure_reason - the condition reason for a verdict that is
 * not validated: CamelCase component and state, "DriverMissing",
 * "ToolkitInconsistent", "NvidiaFsStale".  Heap string (caller frees), NULL
 * when out of memory.
 */
char *gv_nodesignal_failure_reason(const gv_nodesignal_verdict_t *v);

/* ---- plan: the Node ---- */

/* Where the node stands, as far as the signal is concerned. */
typedef enum gv_nodesignal_phase {
        GV_NODESIGNAL_UNKNOWN = 0, /* nothing known yet (memory only) */
        GV_NODESIGNAL_PENDING,     /* never validated since the signal appeared */
        GV_NODESIGNAL_VALIDATED,   /* validated */
        GV_NODESIGNAL_FAILED,      /* was validated, is not any more */
} gv_nodesignal_phase_t;

/* "unknown", "pending", "validated", "failed". Static. */
const char *gv_nodesignal_phase_name(gv_nodesignal_phase_t p);

/*
 * gv_nodesignal_node_phase - what @node (a core/v1 Node as read) says:
 * with a condition type, from Node.status.conditions[type] (True:
 * VALIDATED; False with reason Validating, ValidationPending or
 * <Component>ValidationFailed: PENDING; other False: FAILED; absent or Unknown: @memory, or PENDING when @memory is UNKNOWN);
 * without one, @memory when known, else VALIDATED when the label is there
 * with its value, else PENDING.
 */
gv_nodesignal_phase_t gv_nodesignal_node_phase(const gv_nodesignal_spec_t *spec, json_object *node,
                                               gv_nodesignal_phase_t memory);

/* What to do to the Node for one verdict. */
typedef struct gv_nodesignal_plan {
        json_object *status_patch; /* owned merge patch for /nodes/NAME/status, NULL: condition as wanted */
        json_object *node_patch;   /* owned merge patch for /nodes/NAME (labels, taints), NULL: nothing */
        gv_nodesignal_phase_t before; /* gv_nodesignal_node_phase() of the Node as read */
        gv_nodesignal_phase_t after;  /* the phase once the patches are applied */
        const char *event_type;    /* "Normal" / "Warning" (static), NULL: no event for this transition */
        const char *event_reason;  /* GV_NODESIGNAL_EVENT_* (static), NULL: no event */
        char *event_message;       /* heap, NULL: no event */
        char *condition_reason;    /* heap: the wanted Node.status.conditions[].reason */
        char *condition_message;   /* heap: the wanted Node.status.conditions[].message */
} gv_nodesignal_plan_t;

/* Free what @p owns and zero it; accepts NULL. */
void gv_nodesignal_plan_clear(gv_nodesignal_plan_t *p);

/*
 * gv_nodesignal_plan - compare the Node as read with what @v asks for.
 * Wanted: the condition True (reason ValidationSucceeded) when validated,
 * else False with, while never validated, reason Validating (message
 * "validating <component>[ (in progress)]: <why>") or, when the pod says its
 * init container failed, <Component>ValidationFailed (message "<component>
 * validation failed (exit code N, R restarts): <last line>"); after a
 * validation, <Component><State> with a message naming the component and why; the
 * label present (with its value) exactly while validated; the taint (matched
 * by key and effect) absent exactly while validated.
 * Only what differs is patched (no patch at all when nothing does; the
 * condition compares type, status, reason and message).  Each patch carries
 * metadata.resourceVersion of @node (a precondition: the API server answers
 * 409 Conflict when the Node changed since).  Lists are sent whole, as a merge
 * patch replaces them: status.conditions keeps every other condition as read,
 * and lastTransitionTime stays as read unless the status changes (then @now);
 * lastHeartbeatTime is @now.  spec.taints keeps every other taint as read.
 * The event is that of the transition before -> after: Warning
 * GPUValidationFailed (validated -> failed), Normal GPUValidationRecovered
 * (failed -> validated), Normal GPUValidationSucceeded (pending -> validated),
 * with the node, the component and the reason in the message.
 * @node: the Node as read (borrowed).  @memory: the phase last applied by this
 * process (GV_NODESIGNAL_UNKNOWN at start).  @now: RFC 3339 UTC time.
 * @out is overwritten (not freed first); on failure it is left zeroed.
 * Errors: -EINVAL (GV_REASON_KUBERNETES) for a Node without metadata.name or
 * resourceVersion; -ENOMEM.
 */
int gv_nodesignal_plan(const gv_nodesignal_spec_t *spec, const gv_nodesignal_verdict_t *v, json_object *node,
                       gv_nodesignal_phase_t memory, const char *now, gv_nodesignal_plan_t *out, gv_error_t **err);

/* ---- the running signal ---- */

/* Settings of a running signal; strings are copied by gv_nodesignal_new(). */
typedef struct gv_nodesignal_options {
        gv_nodesignal_spec_t spec;      /* what to manage; at least one of condition, label, taint */
        const char *node_name;          /* required: the Node (metadata.name) */
        const char *event_namespace;    /* namespace of the Events: NULL or "default", or "kube-system" (the
                                           only two kube-apiserver accepts for an Event about a Node) */
        const char *pod_name;           /* the validator's own Pod, NULL: none; while not validated it is read
                                           at each sync and every progress_s (gv_nodesignal_pod_progress()) */
        const char *pod_namespace;      /* its namespace; NULL: the client configuration's */
        unsigned progress_s;            /* with a pod, re-read it this often while not validated, seconds [5];
                                           the Node is read and patched only when it says something new */
        gv_marker_id_t last;            /* the last component; GV_MARKER_INVALID means plugin */
        const char *output_dir;         /* NULL: GV_DEFAULT_OUTPUT_DIR */
        const char *boot_id_path;       /* NULL: GV_DEFAULT_BOOT_ID_PATH */
        unsigned backoff_initial_ms;    /* first delay after a failed sync, milliseconds [1000] */
        unsigned backoff_max_ms;        /* cap of the delay, milliseconds [30000] */
        unsigned resync_s;              /* re-read the Node this often to undo outside edits, seconds [300] */
        unsigned settle_ms;             /* quiet time after a marker change before a sync, milliseconds [100] */
        unsigned request_timeout_s;     /* per-request limit of the client, seconds [15] */
        const volatile sig_atomic_t *stop; /* when non-zero, requests end and gv_nodesignal_run() returns */
        gv_log_fn log;                  /* may be NULL */
        void *log_userdata;
} gv_nodesignal_options_t;

typedef struct gv_nodesignal gv_nodesignal_t;

/*
 * gv_nodesignal_new - set up a signal: a Kubernetes client on @cfg (taken,
 * also on failure) with bounded per-request retries, a read-only marker
 * store (a missing folder is not an error) and an inotify instance.
 * Nothing is sent before gv_nodesignal_run().
 * @out: heap object owned by the caller (gv_nodesignal_free()).
 * Errors: -EINVAL (GV_REASON_CONFIG) for a missing node name, an empty
 * spec, a bad last component or an Event namespace other than default and
 * kube-system; those of gv_k8s_client_new() and
 * gv_store_open(); -ENOMEM.
 */
int gv_nodesignal_new(const gv_nodesignal_options_t *opts, gv_k8s_config_t *cfg, gv_nodesignal_t **out,
                      gv_error_t **err);

/* Free the signal (client, store, inotify) and set *ns to NULL; accepts NULL and an empty slot. */
void gv_nodesignal_free(gv_nodesignal_t **ns);

/*
 * gv_nodesignal_sync - one round: judge the markers, GET the Node, apply
 * the plan (the patch that gates scheduling first: on success the condition
 * and label before the taint is removed, on failure the taint before the
 * condition), re-planning from each answer; a 409 Conflict re-reads the
 * Node (at most 5 times), then emit the transition's event (best effort: a
 * failed POST is logged, not retried here).
 * Returns 0 when the Node agrees with the markers; 1 when it already did
 * and nothing was written.  Errors: those of the client (GV_REASON_KUBERNETES,
 * -EBUSY after too many conflicts), of gv_nodesignal_judge().
 */
int gv_nodesignal_sync(gv_nodesignal_t *ns, gv_error_t **err);

/*
 * gv_nodesignal_run - until *stop: converge at start, then after every
 * change in the status folder (inotify; the folder is re-watched when it
 * appears or is re-created) and every resync_s; a failed sync is retried
 * after a jittered exponential backoff capped at backoff_max_ms, and marker
 * changes meanwhile are folded into the next try.  Failures are logged
 * (warning), never returned: the API server may be down for a while.
 * poll() wakes at least once a second to check *stop.
 * Returns 0 when stopped; a negative errno (GV_REASON_INTERNAL) only when
 * poll() itself fails.
 */
int gv_nodesignal_run(gv_nodesignal_t *ns, gv_error_t **err);

/* Number of syncs that wrote something, and of failed syncs, so far (for tests and logs). */
uint64_t gv_nodesignal_writes(const gv_nodesignal_t *ns);
uint64_t gv_nodesignal_failures(const gv_nodesignal_t *ns);

#endif
