/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small Kubernetes API client: configuration (in-cluster service account
 * or kubeconfig), JSON requests with bounded retries, watches, and the few
 * typed calls the workload and plugin components need (pods, nodes, events,
 * pod logs, ResourceSlices).  See docs/kubernetes.md.
 *
 * Conventions (docs/errors.md): functions return 0 (or a count) or a
 * negative errno and fill `gv_error_t **err` (reason GV_REASON_KUBERNETES
 * unless noted).  JSON objects are json-c objects; "owned" means the caller
 * drops them with json_object_put().  Nothing here prints: log lines go to
 * the gv_log_fn (base/log.h) the caller supplies.  The bearer token and client key
 * never appear in a log line or an error message.
 *
 * A gv_k8s_client_t is not thread-safe; use one per thread.  No environment
 * variable is read by this module: the CLI reads KUBECONFIG,
 * KUBERNETES_SERVICE_HOST/PORT and HOME and passes them in gv_k8s_env_t.
 */
#ifndef GV_K8S_K8S_H
#define GV_K8S_K8S_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"
#include "base/log.h"

/* Default folder of the mounted service-account token, CA and namespace
 * (Kubernetes docs "Accessing the Kubernetes API from a Pod"). */
/* Longest response body read, bytes (a misbehaving server must not make us
 * hold 50 MB); a larger one fails with -EMSGSIZE naming the request. */
#define GV_K8S_MAX_BODY_BYTES (16u << 20)
/* Longest watch event (one line of the stream), bytes; a larger one ends the
 * watch with -EMSGSIZE.  A Node or Pod is a few KiB; 2 MiB leaves room for
 * the biggest objects gpu-validator watches. */
#define GV_K8S_MAX_WATCH_EVENT_BYTES (2u << 20)
/* A CA together with insecure-skip-tls-verify is refused with kubectl's words
 * (client-go transport, tlsConfigFor()). */
#define GV_K8S_ERR_INSECURE_WITH_CA "specifying a root certificates file with the insecure flag is not allowed"
#define GV_K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* ------------------------------------------------------------------ */
/* Process-wide setup                                                  */
/* ------------------------------------------------------------------ */

/*
 * gv_k8s_global_init - initialise libcurl (curl_global_init(CURL_GLOBAL_DEFAULT)).
 * Call once from the main thread before any other thread starts and before
 * the first client is made; pair with gv_k8s_global_cleanup() at exit.
 * Errors: -EIO (GV_REASON_INTERNAL) with curl's error text.
 */
int gv_k8s_global_init(gv_error_t **err);

/* gv_k8s_global_cleanup - curl_global_cleanup(); once, after every client is freed. */
void gv_k8s_global_cleanup(void);

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/*
 * Where and how to reach the API server.  All strings are heap-owned by the
 * struct (gv_k8s_config_free()).  Blobs (the *_data fields) are the decoded
 * PEM bytes, not base64.
 */
typedef struct gv_k8s_config {
        char *server;                 /* "https://10.0.0.1:443", no trailing slash */
        char *ca_file;                /* certificate-authority / ca.crt path, or NULL */
        char *ca_data;                /* certificate-authority-data (decoded PEM), or NULL */
        size_t ca_data_len;
        bool insecure_skip_tls_verify;/* only when the kubeconfig cluster says so */
        char *token;                  /* users[].user.token (static), or NULL */
        char *token_file;             /* users[].user.tokenFile or the SA token; re-read when its mtime changes */
        char *client_cert_file;       /* users[].user.client-certificate, or NULL */
        char *client_cert_data;       /* users[].user.client-certificate-data (decoded), or NULL */
        size_t client_cert_data_len;
        char *client_key_file;        /* users[].user.client-key, or NULL */
        char *client_key_data;        /* users[].user.client-key-data (decoded), or NULL */
        size_t client_key_data_len;
        char *namespace;              /* contexts[].context.namespace or the SA namespace file, or NULL */
        char *source;                 /* for messages: "kubeconfig /root/.kube/config (context kind)" / "in-cluster" */
} gv_k8s_config_t;

/* gv_k8s_config_free - free a configuration and everything it owns; accepts NULL. */
void gv_k8s_config_free(gv_k8s_config_t *cfg);

/*
 * gv_k8s_config_from_kubeconfig_data - parse a kubeconfig document
 * (clientcmd v1 Config: current-context, clusters[].cluster.{server,
 * certificate-authority[-data], insecure-skip-tls-verify}, contexts[].context.
 * {cluster,user,namespace}, users[].user.{token,tokenFile,client-certificate[-data],
 * client-key[-data]}).
 * @data/@len: the YAML (or JSON) text, need not be NUL-terminated.
 * @name: file name used in error messages ("kubeconfig <name>: <field>: ...").
 * @base_dir: folder against which relative file paths are resolved (the
 *   kubeconfig's folder, as kubectl does), or NULL to keep them as written.
 * @context: context to use, or NULL for current-context.
 * @out: receives a new configuration (caller frees) on success only.
 * Errors: -EINVAL (GV_REASON_CONFIG) naming the file and the field, with
 * libyaml's problem text for broken YAML; -ENOTSUP for exec/auth-provider
 * users and basic auth.
 */
int gv_k8s_config_from_kubeconfig_data(const char *data, size_t len, const char *name, const char *base_dir,
                                       const char *context, gv_k8s_config_t **out, gv_error_t **err);

/*
 * gv_k8s_config_from_kubeconfig - read the kubeconfig at @path (at most
 * 4 MiB) and parse it as gv_k8s_config_from_kubeconfig_data() with the
 * file's folder as base.  Errors: -ENOENT etc. from reading (GV_REASON_CONFIG),
 * or those of the parser.
 */
int gv_k8s_config_from_kubeconfig(const char *path, const char *context, gv_k8s_config_t **out, gv_error_t **err);

/*
 * gv_k8s_config_in_cluster - the configuration of a pod's service account
 * (Kubernetes docs "Accessing the Kubernetes API from a Pod"):
 * server https://@host:@port (an IPv6 @host is bracketed), CA <sa_dir>/ca.crt,
 * token file <sa_dir>/token (re-read when it changes: projected tokens
 * rotate), namespace from <sa_dir>/namespace when present.
 * @host, @port: the values of KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT.
 * @sa_dir: the service-account folder, NULL for GV_K8S_SA_DIR.
 * Errors: -ENOENT (GV_REASON_CONFIG) when @host/@port are empty or the token is absent.
 */
int gv_k8s_config_in_cluster(const char *host, const char *port, const char *sa_dir, gv_k8s_config_t **out,
                             gv_error_t **err);

/* Inputs to gv_k8s_config_load(), taken from flags and the environment by the CLI.
 * Every field may be NULL or "". Strings are borrowed. */
typedef struct gv_k8s_env {
        const char *kubeconfig;   /* --kubeconfig, else $KUBECONFIG (first entry of a ':' list is used) */
        const char *context;      /* --context, or NULL for current-context */
        const char *service_host; /* $KUBERNETES_SERVICE_HOST */
        const char *service_port; /* $KUBERNETES_SERVICE_PORT */
        const char *sa_dir;       /* NULL: GV_K8S_SA_DIR */
        const char *home;         /* $HOME, for ~/.kube/config */
} gv_k8s_env_t;

/*
 * gv_k8s_config_load - pick the configuration, in this order:
 * 1. @env->kubeconfig when set (an error in it is final, no fallback);
 * 2. in-cluster when service_host and service_port are set;
 * 3. <home>/.kube/config when it exists.
 * Errors: those of the chosen source; -ENOENT (GV_REASON_CONFIG) listing what
 * was tried when none applies.
 */
int gv_k8s_config_load(const gv_k8s_env_t *env, gv_k8s_config_t **out, gv_error_t **err);

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

/* Client options; zero fields take the defaults in brackets. */
typedef struct gv_k8s_options {
        unsigned timeout_s;         /* per-request time limit, seconds [30] */
        unsigned connect_timeout_s; /* TCP+TLS connect limit, seconds [10] */
        unsigned max_attempts;      /* attempts per request, first included [5] */
        unsigned max_retry_s;       /* no retry starts later than this after the first attempt, seconds [60] */
        unsigned backoff_initial_ms;/* first backoff step, doubled each retry [250] */
        unsigned backoff_max_ms;    /* cap of one backoff step, also caps Retry-After [30000] */
        const char *user_agent;     /* [gpu-validator/<version>] (copied) */
        const volatile sig_atomic_t *stop; /* when it becomes non-zero, requests and waits end with -EINTR */
        gv_log_fn log;              /* may be NULL; one line per call, never a credential; reason "" */
        void *log_userdata;
        const char *log_component;  /* component name of the log lines (borrowed; outlives the client) */
} gv_k8s_options_t;

typedef struct gv_k8s_client gv_k8s_client_t;

/*
 * gv_k8s_client_new - make a client.  Takes ownership of @cfg (also on
 * failure).  @opts may be NULL for the defaults; it is copied.
 * Errors: -ENOMEM, -EIO when curl cannot make a handle (GV_REASON_INTERNAL).
 */
int gv_k8s_client_new(gv_k8s_config_t *cfg, const gv_k8s_options_t *opts, gv_k8s_client_t **out, gv_error_t **err);

/* gv_k8s_client_free - close connections and free the client; accepts NULL. */
void gv_k8s_client_free(gv_k8s_client_t *c);

/* gv_k8s_client_config - the client's configuration (borrowed, read-only). */
const gv_k8s_config_t *gv_k8s_client_config(const gv_k8s_client_t *c);

/* Request bodies' content types. */
typedef enum gv_k8s_patch_type {
        GV_K8S_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
        GV_K8S_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
        GV_K8S_PATCH_JSON,      /* application/json-patch+json (RFC 6902), body is an array */
} gv_k8s_patch_type_t;

/*
 * gv_k8s_request - one API call with retries.
 * @method: "GET", "POST", "PUT", "PATCH" or "DELETE".
 * @path: absolute API path with query, already escaped ("/api/v1/nodes/n1").
 * @content_type: body type, NULL for application/json.
 * @body: request body (borrowed), or NULL.
 * @out: receives the parsed response (owned) on 2xx; may be NULL.  A
 *   non-JSON 2xx body (pod logs) is returned as a json string object.
 * @http_status: receives the last HTTP status (0 when none); may be NULL.
 * Retries: 429, 5xx (502/503/504 only for POST, which is not idempotent)
 * and connection failures (for POST only when the connection was never
 * made), up to max_attempts and max_retry_s, after a jittered capped
 * exponential backoff, or after Retry-After when the server sent one (capped
 * at backoff_max_ms).  A 401 when the token comes from a file re-reads it once.
 * Errors (message: "<METHOD> <url>: <code> <text>: <Status.message> (reason <Status.reason>)"):
 * 400/422 -EINVAL, 401 -EPERM, 403 -EACCES, 404 -ENOENT, 409 AlreadyExists
 * -EEXIST, 409 Conflict -EBUSY, 410 Gone -ESTALE, 429 -EAGAIN, other 4xx/5xx
 * -EIO; refused -ECONNREFUSED, time-outs -ETIMEDOUT, other transport errors
 * -EHOSTUNREACH with curl's text; a stop request -EINTR (GV_REASON_INTERRUPTED).
 */
int gv_k8s_request(gv_k8s_client_t *c, const char *method, const char *path, const char *content_type,
                   json_object *body, json_object **out, long *http_status, gv_error_t **err);

/* gv_k8s_get - GET @path; see gv_k8s_request(). */
int gv_k8s_get(gv_k8s_client_t *c, const char *path, json_object **out, gv_error_t **err);
/* gv_k8s_post - POST @body (JSON) to @path; see gv_k8s_request(). */
int gv_k8s_post(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err);
/* gv_k8s_put - PUT @body (JSON) to @path; see gv_k8s_request(). */
int gv_k8s_put(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err);
/* gv_k8s_patch - PATCH @path with @patch of type @type; see gv_k8s_request(). */
int gv_k8s_patch(gv_k8s_client_t *c, const char *path, gv_k8s_patch_type_t type, json_object *patch,
                 json_object **out, gv_error_t **err);
/* gv_k8s_delete - DELETE @path with an optional DeleteOptions @body; see gv_k8s_request(). */
int gv_k8s_delete(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err);

/* ------------------------------------------------------------------ */
/* Watches                                                             */
/* ------------------------------------------------------------------ */

/* Watch event types (Kubernetes API concepts, "Efficient detection of changes"). */
typedef enum gv_k8s_event_type {
        GV_K8S_EVENT_ADDED,
        GV_K8S_EVENT_MODIFIED,
        GV_K8S_EVENT_DELETED,
        GV_K8S_EVENT_BOOKMARK,
        GV_K8S_EVENT_ERROR,   /* object is a metav1.Status */
        GV_K8S_EVENT_SYNCED,  /* not from the API: a (re-)list was delivered in full; object NULL */
} gv_k8s_event_type_t;

/* gv_k8s_event_type_name - "ADDED", ..., "SYNCED". Static string. */
const char *gv_k8s_event_type_name(gv_k8s_event_type_t t);

/* One event.  Everything is borrowed and valid only during the callback
 * (json_object_get() the object to keep it). */
typedef struct gv_k8s_watch_event {
        gv_k8s_event_type_t type;
        json_object *object;          /* the object (pod, node, Status); NULL for SYNCED */
        const char *resource_version; /* object's metadata.resourceVersion, or "" */
        bool from_list;               /* delivered from a LIST (initial or after 410), as ADDED */
} gv_k8s_watch_event_t;

/* Event callback: return true to go on watching, false to end the watch (return 0). */
typedef bool (*gv_k8s_watch_fn)(void *userdata, const gv_k8s_watch_event_t *ev);

/* What to watch. Strings are borrowed. */
typedef struct gv_k8s_watch_spec {
        const char *path;             /* collection path: "/api/v1/namespaces/ns/pods", "/api/v1/nodes" */
        const char *label_selector;   /* "app=x,b=c" or NULL */
        const char *field_selector;   /* "spec.nodeName=n1" / "metadata.name=n1" or NULL */
        const char *resource_version; /* start after this version; NULL or "" lists first */
        unsigned timeout_s;           /* overall deadline, seconds (0: 300) */
        unsigned max_failures;        /* consecutive failed (re)connects before giving up [5] */
} gv_k8s_watch_spec_t;

/*
 * gv_k8s_watch - list-then-watch with resume.
 * Without a starting resourceVersion the collection is listed first and each
 * item delivered as ADDED (from_list), then SYNCED.  Then
 * GET <path>?watch=1&resourceVersion=<rv>&allowWatchBookmarks=true streams
 * newline-delimited JSON events; the resourceVersion of every event
 * (bookmarks too) is tracked.  A dropped or server-closed stream is resumed
 * from the last version (after a backoff when it failed); a 410 Gone (HTTP
 * status or an ERROR event with code 410) re-lists (items as ADDED, then
 * SYNCED) and resumes from the list's version.  Other ERROR events are
 * delivered to @cb and the watch resumes.
 * Returns 0 when @cb returned false; -ETIMEDOUT (GV_REASON_TIMEOUT) at the
 * deadline; -EINTR (GV_REASON_INTERRUPTED) on stop; else the error of the
 * last failed attempt after max_failures consecutive failures (or a
 * non-retryable one such as 403/404 at once).
 */
int gv_k8s_watch(gv_k8s_client_t *c, const gv_k8s_watch_spec_t *spec, gv_k8s_watch_fn cb, void *userdata,
                 gv_error_t **err);

/* ------------------------------------------------------------------ */
/* Typed calls (core/v1)                                               */
/* ------------------------------------------------------------------ */

/* gv_k8s_pod_get - GET /api/v1/namespaces/@ns/pods/@name; *out owned. -ENOENT when absent. */
int gv_k8s_pod_get(gv_k8s_client_t *c, const char *ns, const char *name, json_object **out, gv_error_t **err);

/*
 * gv_k8s_pod_list - LIST pods in @ns with optional @label_selector
 * ("app=nvidia-cuda-validator") and @node_name (fieldSelector
 * spec.nodeName=<node>).  *out is the PodList (owned; .items is the array).
 */
int gv_k8s_pod_list(gv_k8s_client_t *c, const char *ns, const char *label_selector, const char *node_name,
                    json_object **out, gv_error_t **err);

/* gv_k8s_pod_create - POST @pod to /api/v1/namespaces/@ns/pods; *out is the created pod
 * (owned; metadata.name is filled when generateName was used). -EEXIST when the name is taken. */
int gv_k8s_pod_create(gv_k8s_client_t *c, const char *ns, json_object *pod, json_object **out, gv_error_t **err);

/* gv_k8s_pod_delete - DELETE the pod; @grace_period_s < 0 keeps the pod's own
 * (DeleteOptions.gracePeriodSeconds otherwise).  -ENOENT when already gone. */
int gv_k8s_pod_delete(gv_k8s_client_t *c, const char *ns, const char *name, int grace_period_s, gv_error_t **err);

/* gv_k8s_pod_watch - gv_k8s_watch() on pods of @ns with @label_selector and
 * @node_name (spec.nodeName), from @resource_version (NULL: list first),
 * for at most @timeout_s seconds. */
int gv_k8s_pod_watch(gv_k8s_client_t *c, const char *ns, const char *label_selector, const char *node_name,
                     const char *resource_version, unsigned timeout_s, gv_k8s_watch_fn cb, void *userdata,
                     gv_error_t **err);

/*
 * gv_k8s_pod_log - GET /api/v1/namespaces/@ns/pods/@name/log?container=@container&tailLines=@tail_lines
 * (@container NULL: the pod's only container; @tail_lines 0: all).  *out is
 * the log text (heap, caller frees), at most 64 MiB.
 */
int gv_k8s_pod_log(gv_k8s_client_t *c, const char *ns, const char *name, const char *container,
                   unsigned tail_lines, char **out, gv_error_t **err);

/* gv_k8s_node_get - GET /api/v1/nodes/@name; *out owned.  -ENOENT when absent. */
int gv_k8s_node_get(gv_k8s_client_t *c, const char *name, json_object **out, gv_error_t **err);

/* gv_k8s_node_watch - gv_k8s_watch() on /api/v1/nodes with fieldSelector
 * metadata.name=@name, from @resource_version (NULL: list first). */
int gv_k8s_node_watch(gv_k8s_client_t *c, const char *name, const char *resource_version, unsigned timeout_s,
                      gv_k8s_watch_fn cb, void *userdata, gv_error_t **err);

/*
 * gv_k8s_node_patch - merge-patch (RFC 7386) the node, e.g.
 * {"metadata":{"labels":{"k":"v"}}}; with @status, the status subresource
 * (/api/v1/nodes/<name>/status, for status.conditions; note a merge patch
 * replaces the whole conditions list, so send it complete, or use
 * gv_k8s_patch() with GV_K8S_PATCH_STRATEGIC, which merges by type).
 * *out (may be NULL) is the patched node.
 */
int gv_k8s_node_patch(gv_k8s_client_t *c, const char *name, bool status, json_object *patch, json_object **out,
                      gv_error_t **err);

/* What an Event says (strings borrowed). */
typedef struct gv_k8s_event {
        const char *type;      /* "Normal" or "Warning"; NULL: Normal */
        const char *reason;    /* required: a CamelCase word (kubectl get events --field-selector reason=...) */
        const char *message;   /* free text; NULL: "" */
        const char *action;    /* required with eventTime: what was done, CamelCase ("Validate"), <= 128 */
        const char *component; /* reportingComponent and source.component, a qualified name; NULL: gpu-validator */
        const char *instance;  /* reportingInstance (<= 128), e.g. "gpu-validator-<node>"; NULL: the component */
} gv_k8s_event_t;

/*
 * gv_k8s_event_create - POST a core/v1 Event about @involved (a pod or node
 * object: kind, name, namespace, uid, apiVersion are copied into
 * involvedObject) to /api/v1/namespaces/@ns/events.  @ns NULL: the involved
 * object's namespace, or "default" for a cluster-scoped one such as a Node
 * (kube-apiserver accepts an Event about a Node only in "default" or
 * "kube-system": pkg/apis/core/validation ValidateEventCreate).  The Event
 * is new-style: eventTime (MicroTime, microseconds), reportingComponent,
 * reportingInstance and action, as events.k8s.io/v1 recorders write it, with
 * firstTimestamp/lastTimestamp/count/source kept for older readers.
 * Name: <involved name>.<hex time>.
 * Errors: -EINVAL (GV_REASON_INTERNAL) without a reason or action; those of
 * gv_k8s_post() (a 422 Invalid names the field); -ENOMEM.
 */
int gv_k8s_event_create(gv_k8s_client_t *c, const char *ns, json_object *involved, const gv_k8s_event_t *ev,
                        gv_error_t **err);

/* ------------------------------------------------------------------ */
/* Typed calls (resource.k8s.io, Dynamic Resource Allocation)          */
/* ------------------------------------------------------------------ */

/* The resource.k8s.io versions gv_k8s_resource_slice_list() tries, newest
 * first: "v1" (Kubernetes 1.34), "v1beta2" (1.33), "v1beta1" (1.32).
 * NULL-terminated static table. */
const char *const *gv_k8s_resource_versions(void);

/*
 * gv_k8s_resource_slice_list - LIST cluster-scoped ResourceSlices,
 * GET /apis/resource.k8s.io/<version>/resourceslices with fieldSelector
 * spec.nodeName=@node_name,spec.driver=@driver (each left out when NULL or
 * ""; kube-apiserver supports both fields for ResourceSlices).  Tries the
 * versions of gv_k8s_resource_versions() in order, starting at *@version when
 * it names one (the version a previous call found; may be NULL or point to
 * NULL), and moves to the next on 404 (a version the server does not serve).
 * On success *out is the ResourceSliceList (owned; .items is the array) and
 * *@version (when @version is not NULL) the version that answered (static).
 * Errors: -ENOENT (GV_REASON_KUBERNETES) when every version answered 404,
 * naming them; the first other error of gv_k8s_get() as it is (403 -EACCES
 * when RBAC does not allow list on resourceslices).
 */
int gv_k8s_resource_slice_list(gv_k8s_client_t *c, const char *node_name, const char *driver, const char **version,
                               json_object **out, gv_error_t **err);

/* ------------------------------------------------------------------ */
/* Helpers (exposed for tests and callers that build their own paths)  */
/* ------------------------------------------------------------------ */

/* gv_k8s_escape - percent-encode @s for a path segment or query value
 * (RFC 3986 unreserved characters kept).  Heap string, NULL when out of memory. */
char *gv_k8s_escape(const char *s);

/*
 * gv_k8s_build_path - "<prefix>?k1=v1&k2=v2..." from NULL-terminated
 * key/value pairs; pairs whose value is NULL or "" are left out; values are
 * escaped, keys and @prefix are not.  Heap string, NULL when out of memory.
 * Example: gv_k8s_build_path("/api/v1/pods", "labelSelector", "app=x", NULL).
 */
char *gv_k8s_build_path(const char *prefix, ...) __attribute__((sentinel));

/*
 * gv_k8s_backoff_ms - the delay before retry number @attempt (1 = first
 * retry): min(@max_ms, @initial_ms * 2^(attempt-1)), then "equal jitter":
 * half of it fixed, the other half scaled by @rnd / UINT32_MAX.  Milliseconds.
 */
unsigned gv_k8s_backoff_ms(unsigned attempt, unsigned initial_ms, unsigned max_ms, uint32_t rnd);

/*
 * gv_k8s_parse_retry_after - parse a Retry-After header value (RFC 9110
 * 10.2.3): delay-seconds or an IMF-fixdate (5.6.7: fixed-width digits,
 * case-sensitive names, a day that exists), relative to @now.  Stores the
 * delay in milliseconds (0 for a date in the past; huge delay-seconds are
 * capped at ULONG_MAX / 1000 s).  Returns 0, or -EINVAL for anything else,
 * *delay_ms untouched.  Sets no error object.
 */
int gv_k8s_parse_retry_after(const char *value, time_t now, unsigned long *delay_ms);

/* gv_k8s_http_errno - the negative errno for HTTP status @code and the
 * Status reason @reason (may be NULL); 0 for 2xx. See gv_k8s_request(). */
int gv_k8s_http_errno(long code, const char *reason);

/* Splits a byte stream into lines ('\n'-terminated; a trailing '\r' is kept
 * off).  Zero-initialise, set max_line (0: 16 MiB), free with gv_k8s_linebuf_clear(). */
typedef struct gv_k8s_linebuf {
        char *buf;
        size_t len, cap;
        size_t max_line; /* longest accepted line, bytes */
} gv_k8s_linebuf_t;

/* Line callback: @line is NUL-terminated (len excludes the NUL), borrowed.
 * Return 0 to go on, a negative errno to stop feeding (returned as is), or 1
 * to stop without an error (gv_k8s_linebuf_feed() then returns 1). */
typedef int (*gv_k8s_line_fn)(void *userdata, char *line, size_t len);

/*
 * gv_k8s_linebuf_feed - append @len bytes and call @fn for each complete
 * line; the partial tail is kept for the next call.  Empty lines are skipped.
 * Errors: -EMSGSIZE when a line grows past max_line (the buffer is then
 * emptied), -ENOMEM, or what @fn returned.  Sets no error object.
 */
int gv_k8s_linebuf_feed(gv_k8s_linebuf_t *lb, const char *data, size_t len, gv_k8s_line_fn fn, void *userdata);

/* gv_k8s_linebuf_clear - free the buffer and forget the partial line. */
void gv_k8s_linebuf_clear(gv_k8s_linebuf_t *lb);

/*
 * gv_k8s_watch_event_parse - parse one watch line {"type":T,"object":{...}}
 * (metav1.WatchEvent).  On success *type is set and *object receives the
 * object (owned).  Errors: -EBADMSG (GV_REASON_KUBERNETES) for invalid JSON,
 * an unknown type, or a missing object.
 */
int gv_k8s_watch_event_parse(const char *line, size_t len, gv_k8s_event_type_t *type, json_object **object,
                             gv_error_t **err);

/* gv_k8s_base64_decode - decode standard base64 (whitespace ignored, padding
 * optional). *out is heap (NUL-terminated for convenience), *out_len its
 * length.  Returns 0 or -EINVAL / -ENOMEM; sets no error object. */
int gv_k8s_base64_decode(const char *in, size_t len, char **out, size_t *out_len);

#endif
