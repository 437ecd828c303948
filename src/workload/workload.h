/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload concern: the cuda and plugin validation pods.
 *
 *   compiled-in default template  --(user override file: merge patch or
 *   whole manifest)-->  template  --(runtime values: node, namespace, image,
 *   tolerations, owner, GPU resource)-->  final Pod (json_object)
 *
 * plus the YAML <-> json-c conversion used for templates, override files and
 * `render`.  Pods are json-c objects shaped like the Kubernetes core/v1 Pod
 * (apiVersion v1, kind Pod, metadata, spec).  Nothing here prints or exits;
 * failures follow docs/errors.md (negative errno + gv_error_t, reason
 * GV_REASON_CONFIG for bad user input, GV_REASON_INTERNAL for bugs / memory).
 * See docs/workload-templates.md for the user-facing rules.
 *
 * The pod lifecycle (create, watch, judge, delete; lifecycle.c) will be
 * added on top of this header by the Kubernetes client work; its
 * declarations go in the section marked "Pod lifecycle" at the end.
 */
#ifndef GV_WORKLOAD_WORKLOAD_H
#define GV_WORKLOAD_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/error.h"

/* ======================================================================
 * YAML <-> json-c
 * ====================================================================== */

/* Upper bounds that keep hostile input cheap (billion laughs, deep nesting). */
#define GV_YAML_MAX_DEPTH 64      /* nesting of mappings/sequences */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define GV_YAML_MAX_NODES 100000  /* nodes created, aliases expanded included */
#else
/* Fuzz builds only: the same check with a smaller bound.  An alias bomb at 100,000 nodes costs
 * 200-370 ms a run under ASan, and libFuzzer keeps mutating such inputs, so fuzz-workload-yaml
 * fell to ~300 runs/s; at 4,096 the limit path is reached just as often, and faster. */
#define GV_YAML_MAX_NODES 4096
#endif

/*
 * A parsed YAML (or JSON) document: the json-c tree and the source line of
 * each node, so that errors can say "FILE:LINE: FIELD: ...".  Opaque; free
 * with gv_doc_free().
 */
typedef struct gv_doc gv_doc_t;

/*
 * gv_yaml_parse - parse one YAML 1.2 document (JSON is a subset) from
 * @data/@len into a json-c tree.
 *
 * Mappings become objects (keys in source order; keys must be scalars and
 * unique), sequences arrays.  Plain scalars resolve by the YAML 1.2 core
 * schema: null/Null/NULL/~/empty -> null, true/false (3 spellings) -> bool,
 * decimal/0o/0x integers -> int64 (out of range: error), decimal floats ->
 * double (original text kept for output); `.inf`/`.nan` and everything else
 * -> string.  Quoted and block scalars, and the tags `!` and `!!str`, are
 * always strings; `!!int`/`!!float`/`!!bool`/`!!null` must match their
 * value; other tags are refused.  Anchors and aliases are resolved by copy,
 * bounded by GV_YAML_MAX_NODES; nesting is bounded by GV_YAML_MAX_DEPTH.
 * More than one document is an error; an empty stream gives a null root.
 * @name names the source in messages ("override.yaml"); copied.
 * On success *out owns the document.  Errors: -EINVAL (GV_REASON_CONFIG)
 * with "NAME:LINE:COL: <libyaml's problem>" or "NAME:LINE: <problem>";
 * -ENOMEM (GV_REASON_INTERNAL).
 */
int gv_yaml_parse(const char *data, size_t len, const char *name, gv_doc_t **out, gv_error_t **err);

/* gv_doc_free - free a document and its tree; accepts NULL. */
void gv_doc_free(gv_doc_t *doc);

/* gv_doc_root - the document's root node, borrowed (NULL for an empty document or a null root). */
json_object *gv_doc_root(const gv_doc_t *doc);

/* gv_doc_name - the source name given to gv_yaml_parse(), borrowed. */
const char *gv_doc_name(const gv_doc_t *doc);

/*
 * gv_doc_line - the 1-based source line of @node: for a member of a
 * mapping the line of its key, otherwise the line where the node starts.
 * 0 when unknown (null values, nodes not from this document).
 */
unsigned gv_doc_line(const gv_doc_t *doc, const json_object *node);

/*
 * gv_yaml_emit - write @obj as a YAML document in block style into a heap
 * string *out (caller frees).  libyaml's emitter chooses the quoting; strings
 * that a YAML 1.2 or 1.1 reader would take for another type ("true", "yes",
 * "1.0", "~", "0777", "") are double-quoted.  Doubles keep their source text
 * where they have one.  Errors: -ENOMEM / -EINVAL (GV_REASON_INTERNAL).
 */
int gv_yaml_emit(json_object *obj, char **out, gv_error_t **err);

/* ======================================================================
 * JSON merge patch
 * ====================================================================== */

/*
 * gv_json_merge_patch - apply @patch to @target as RFC 7386 defines it and
 * return the result.  Consumes the caller's reference to @target (which may
 * be NULL for "absent"; it is changed in place when it is an object); @patch
 * is borrowed and never changed.  Returns the new target with one reference
 * owned by the caller (NULL for a JSON null result).  Out of memory leaves a
 * partial result; this function cannot otherwise fail.
 */
json_object *gv_json_merge_patch(json_object *target, json_object *patch);

/*
 * gv_workload_merge - merge patch of a Pod (@pod, changed in place, must be
 * an object) with the one exception documented in docs/workload-templates.md:
 * the arrays spec.containers and spec.initContainers merge by `name` (a
 * known name is merge-patched into that container, a new one is appended,
 * an entry with `$patch: delete` removes the container).  Entries without
 * a string name are refused.  @patch is borrowed.
 * Errors: -EINVAL (GV_REASON_CONFIG) naming the field.
 */
int gv_workload_merge(json_object *pod, json_object *patch, gv_error_t **err);

/* ======================================================================
 * Templates
 * ====================================================================== */

typedef enum gv_workload_kind {
        GV_WORKLOAD_CUDA,   /* cuda component: runs vectorAdd with all GPUs visible (CDI annotation) */
        GV_WORKLOAD_PLUGIN, /* plugin component: requests one GPU resource from the device plugin */
        GV_WORKLOAD__MAX
} gv_workload_kind_t;

/* The placeholder strings of upstream's manifests (cuda uses the first, plugin the second). */
#define GV_WORKLOAD_PLACEHOLDER "FILLED_BY_THE_VALIDATOR"
#define GV_WORKLOAD_PLACEHOLDER_SHORT "FILLED_BY_VALIDATOR"

/* Label key carrying the node name (or its compacted form) on every validation pod. */
#define GV_WORKLOAD_NODE_LABEL "nvidia.com/gpu-validator.node"

/* gv_workload_kind_name - "cuda" or "plugin" (the component and override section name); static. */
const char *gv_workload_kind_name(gv_workload_kind_t kind);

/* gv_workload_kind_from_name - "cuda"/"plugin" to a kind.  0 or -EINVAL (no error object). */
int gv_workload_kind_from_name(const char *name, gv_workload_kind_t *out);

/*
 * gv_workload_app_label - the value of label `app` on this kind's pods,
 * as upstream: "nvidia-cuda-validator" / "nvidia-device-plugin-validator". Static.
 */
const char *gv_workload_app_label(gv_workload_kind_t kind);

/* gv_workload_default_yaml - the compiled-in default template as YAML text (static). */
const char *gv_workload_default_yaml(gv_workload_kind_t kind);

/*
 * A user's override file, parsed and validated: per kind either nothing,
 * a merge patch, or a whole Pod manifest that replaces the default.
 * Opaque; free with gv_workload_overrides_free().
 */
typedef struct gv_workload_overrides gv_workload_overrides_t;

/*
 * gv_workload_overrides_parse - parse and validate override text (YAML or
 * JSON).  Accepted shapes: a mapping with sections `cuda:` and/or `plugin:`,
 * each a Pod merge patch (metadata, spec) or a whole Pod manifest (it has
 * apiVersion or kind); or the whole file a Pod manifest, which applies to
 * the kind its `app` label names, or to both kinds when it names neither.
 * Validation checks the types of the well-known Pod fields (labels and
 * annotations maps of strings, containers lists of mappings with a name,
 * resources mappings, tolerations lists, ...) and refuses fields the
 * validator owns (spec.nodeName, metadata.namespace and ownerReferences
 * unless a placeholder, a different `app` label, the node label).
 * @name is used in messages.  Errors: -EINVAL (GV_REASON_CONFIG) with
 * "NAME:LINE: FIELD: problem" for the first problem found; -ENOMEM.
 */
int gv_workload_overrides_parse(const char *data, size_t len, const char *name, gv_workload_overrides_t **out,
                                gv_error_t **err);

/*
 * gv_workload_overrides_load - read @path (at most 1 MiB, a regular file)
 * and gv_workload_overrides_parse() it.  Errors as there, or the read's
 * (GV_REASON_CONFIG, since the path is user configuration).
 */
int gv_workload_overrides_load(const char *path, gv_workload_overrides_t **out, gv_error_t **err);

/* gv_workload_overrides_free - accepts NULL. */
void gv_workload_overrides_free(gv_workload_overrides_t *ov);

/*
 * gv_workload_template - the template for @kind: the default, with @ov's
 * section for @kind (may be NULL) merged in by gv_workload_merge(), or
 * the user's whole manifest instead of the default.  The result must still
 * have a non-empty spec.containers with unique names (init and main
 * containers together).  *out is a new object owned by the caller
 * (json_object_put).  Errors: -EINVAL (GV_REASON_CONFIG), -ENOMEM.
 */
int gv_workload_template(gv_workload_kind_t kind, const gv_workload_overrides_t *ov, json_object **out,
                         gv_error_t **err);

/*
 * Values known only at run time.  Strings are borrowed; NULL (or "") means
 * not known.  Sources: NODE_NAME (Pod spec.nodeName of the validator, via
 * the downward API), OPERATOR_NAMESPACE (metadata.namespace), VALIDATOR_IMAGE,
 * VALIDATOR_IMAGE_PULL_POLICY, VALIDATOR_IMAGE_PULL_SECRETS (comma list of
 * Secret names), VALIDATOR_RUNTIME_CLASS; tolerations from the validator's
 * own Pod spec.tolerations; owner from its metadata.name / metadata.uid;
 * gpu_resource from Node status.allocatable (gv_workload_pick_gpu_resource()).
 */
typedef struct gv_workload_runtime {
        const char *node_name;          /* -> spec.nodeName and the node label (always wins) */
        const char *namespace;          /* -> metadata.namespace (always wins) */
        const char *image;              /* -> containers' image where absent or a placeholder */
        const char *image_pull_policy;  /* -> where absent or a placeholder; default IfNotPresent */
        const char *image_pull_secrets; /* comma list -> spec.imagePullSecrets when the template has none */
        const char *runtime_class;      /* -> spec.runtimeClassName when absent or a placeholder */
        json_object *tolerations;       /* array, borrowed; appended to the template's, duplicates skipped */
        const char *service_account;    /* the validator pod's spec.serviceAccountName -> spec.serviceAccountName
                                           where the template has a placeholder (the defaults do); when
                                           unknown, upstream's "nvidia-operator-validator" */
        const char *owner_name;         /* validator Pod name -> metadata.ownerReferences (always wins) */
        const char *owner_uid;          /* validator Pod uid; ownerReferences need both */
        const char *gpu_resource;       /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb": placeholder keys in limits */
        bool placeholders;              /* true (render): unknown values become "<node-name>" etc.;
                                           false: a missing node name / namespace / image is an error */
} gv_workload_runtime_t;

/*
 * gv_workload_fill - fill @pod (a template from gv_workload_template(),
 * changed in place) with @rt for @kind.  Fields the validator owns always
 * take the runtime value: metadata.namespace, spec.nodeName,
 * metadata.ownerReferences (kind Pod, apiVersion v1, controller false,
 * blockOwnerDeletion false; omitted when the owner is unknown), labels
 * `app` and GV_WORKLOAD_NODE_LABEL.  Others (image, pull policy, pull
 * secrets, runtime class) keep an explicit template value and take the
 * runtime one where the template has none or a placeholder.  Placeholder
 * keys in resources become @rt->gpu_resource; a plugin pod that requests
 * no nvidia.com/ resource gets one unit in its first init container (else
 * first container).  Any placeholder left after that is an error.
 * Errors: -EINVAL (GV_REASON_CONFIG) naming the field or the missing value.
 */
int gv_workload_fill(json_object *pod, gv_workload_kind_t kind, const gv_workload_runtime_t *rt, gv_error_t **err);

/*
 * gv_workload_pod - gv_workload_template() then gv_workload_fill(): the
 * final Pod, owned by the caller.  Errors as those two.
 */
int gv_workload_pod(gv_workload_kind_t kind, const gv_workload_overrides_t *ov, const gv_workload_runtime_t *rt,
                    json_object **out, gv_error_t **err);

/*
 * gv_workload_container_names - the names of @pod's spec.initContainers
 * (*init_names) and spec.containers (*names) as NULL-terminated heap string
 * arrays (free with gv_strv_freep / _cleanup_strv_free_).  The lifecycle
 * judges success by these: every one of them terminated with exit code 0
 * (Pod status.initContainerStatuses / containerStatuses[].state.terminated
 * .exitCode); containers that are not listed (injected sidecars) are ignored.
 * Either out pointer may be NULL.  Errors: -EINVAL (GV_REASON_CONFIG) when
 * a list or name is malformed, -ENOMEM.
 */
int gv_workload_container_names(json_object *pod, char ***init_names, char ***names, gv_error_t **err);

/*
 * gv_workload_node_label_value - the value of GV_WORKLOAD_NODE_LABEL for
 * @node_name (heap, caller frees; NULL when out of memory).  A node name
 * that is a valid label value (<= 63 characters, alphanumerics, '-', '_',
 * '.', alphanumeric at both ends) is used as it is; a longer one (node names
 * are DNS subdomains up to 253 characters) becomes its first 54 characters,
 * '-', and 8 hex digits of its FNV-1a hash.  Combine with the field
 * selector "spec.nodeName=<node>" to be exact.
 */
char *gv_workload_node_label_value(const char *node_name);

/*
 * gv_workload_label_selector - the Kubernetes label selector (LIST
 * ?labelSelector=) for this kind's validation pods on @node_name:
 * "app=<app label>,nvidia.com/gpu-validator.node=<label value>".  Heap,
 * caller frees; NULL when out of memory.
 */
char *gv_workload_label_selector(gv_workload_kind_t kind, const char *node_name);

/*
 * gv_workload_pick_gpu_resource - choose the resource the plugin pod
 * requests from a Node's status.allocatable (or status.capacity) object
 * @resources: the first (by name) `nvidia.com/mig-*` with a quantity >= 1,
 * as upstream prefers MIG resources; else `nvidia.com/gpu`; else the first
 * other `nvidia.com/gpu*` (e.g. nvidia.com/gpu.shared).  *out is a heap
 * string.  Errors: -ENOENT (GV_REASON_WORKLOAD) when none has a unit, -ENOMEM.
 */
int gv_workload_pick_gpu_resource(json_object *resources, char **out, gv_error_t **err);

/* ======================================================================
 * Pod lifecycle (lifecycle.c, to be added with the Kubernetes client)
 * ====================================================================== */

#endif
