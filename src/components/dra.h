/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DRA mode of the plugin component: on a node whose GPUs
 * are allocated through Dynamic Resource Allocation instead of the device
 * plugin, the plugin step checks that NVIDIA's DRA driver (driver name
 * gpu.nvidia.com) published this node's GPUs in ResourceSlices.
 *
 * Facts: the node label nvidia.com/gpu.deploy.dra-driver is the GPU
 * Operator's switch for the DRA kubelet plugin on a node
 * (shared/reference/upstream-components.md, "Labels": controllers/
 * state_manager.go:77-81); ResourceSlice fields (spec.driver, spec.nodeName,
 * spec.pool.{name,generation,resourceSliceCount}, spec.devices[] with
 * attributes, under .basic in v1beta1) from the Kubernetes API reference of
 * resource.k8s.io v1/v1beta2/v1beta1; device attributes "type" ("gpu",
 * "mig") and "uuid" / "parentUUID" as the NVIDIA DRA driver publishes them
 * (docs/components.md).
 */
#ifndef GV_COMPONENTS_DRA_H
#define GV_COMPONENTS_DRA_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "components/component.h"
#include "k8s/k8s.h"

/* The DRA driver whose ResourceSlices publish NVIDIA GPUs. */
#define GV_DRA_DRIVER "gpu.nvidia.com"
/* The node label that puts the plugin step in DRA mode (value "true"). */
#define GV_DRA_DEPLOY_LABEL "nvidia.com/gpu.deploy.dra-driver"
/* Largest ResourceSliceList text gv_dra_census_text() accepts, bytes (the client's body bound). */
#define GV_DRA_MAX_TEXT_BYTES ((size_t) GV_K8S_MAX_BODY_BYTES)

/* gv_dra_node_enabled - whether @node (a core/v1 Node) carries GV_DRA_DEPLOY_LABEL=true.  NULL: false. */
bool gv_dra_node_enabled(json_object *node);

/* What the ResourceSlices of one driver say about one node. */
typedef struct gv_dra_census {
        unsigned slices;       /* slices of the driver for the node, in the newest generation of their pool */
        unsigned stale;        /* of an older pool generation (the driver is replacing them): not counted */
        unsigned foreign;      /* of another driver or node, or without a node (the list ignored the selector) */
        unsigned devices;      /* devices in the counted slices */
        unsigned gpus;         /* of them: whole GPUs (attribute type "gpu", or no type) */
        unsigned migs;         /* of them: MIG devices (type "mig"); their parentUUID counts as published */
        char *incomplete_pool; /* heap: "<pool>: 1 of 2 slices" when a pool's newest generation has fewer
                                  slices than its resourceSliceCount, else NULL */
        char **uuids;          /* heap, NULL-terminated: the distinct GPU UUIDs published, in list order */
        size_t n_uuids;
        char *names;           /* heap: the counted slices' names, comma-separated ("" when none) */
} gv_dra_census_t;

/* gv_dra_census_clear - free what @c holds and zero it; accepts a zeroed census. */
void gv_dra_census_clear(gv_dra_census_t *c);

/*
 * gv_dra_census - count what @list (a ResourceSliceList of any served
 * version: items[].spec) publishes for @node from @driver.  Only the newest
 * pool generation counts (older slices are being replaced); device
 * attributes are read from .attributes (v1, v1beta2) or .basic.attributes
 * (v1beta1), under their short name or the driver-qualified one
 * ("uuid" or "gpu.nvidia.com/uuid").  @out must be zeroed; filled on success
 * only and then the caller's (gv_dra_census_clear()).  Pure.
 * Errors: -EBADMSG (GV_REASON_KUBERNETES) when @list is not an object, its
 * items not a list, an item not an object, or a counted slice's
 * spec.devices not a list, naming the item; -ENOMEM.
 */
int gv_dra_census(json_object *list, const char *node, const char *driver, gv_dra_census_t *out, gv_error_t **err);

/*
 * gv_dra_census_text - gv_dra_census() of a JSON text (@len bytes, need not
 * be NUL-terminated): the parser the fuzz target drives.  Errors: -EBADMSG
 * for text that is not JSON, -EFBIG beyond GV_DRA_MAX_TEXT_BYTES, then those
 * of gv_dra_census().
 */
int gv_dra_census_text(const char *data, size_t len, const char *node, const char *driver, gv_dra_census_t *out,
                       gv_error_t **err);

/*
 * gv_dra_missing - the GPUs of @nvml_uuids (comma-separated UUIDs, as
 * driver-ready's GPU_UUIDS) that @c does not publish: *missing (heap,
 * comma-separated, "" when none) and the count as return value (>= 0).
 * Empty entries are ignored.  Errors: -ENOMEM.  Pure.
 */
int gv_dra_missing(const gv_dra_census_t *c, const char *nvml_uuids, char **missing, gv_error_t **err);

/*
 * gv_dra_validate - the plugin step in DRA mode: list this node's
 * ResourceSlices of GV_DRA_DRIVER (gv_k8s_resource_slice_list(), v1 then
 * v1beta2 then v1beta1) until they publish every GPU that driver-ready's
 * GPU_UUIDS names (or, without UUIDs, at least GPU_COUNT GPUs, else one),
 * bounded by cfg->workload.capacity_wait_s (0: one look) with a capped backoff
 * (1 s doubling to 15 s, jittered, never past the bound).  On success
 * fills @res: MODE=dra, RESOURCE_API, RESOURCE_SLICES, DRA_DRIVER, DRA_GPUS
 * and the summary.  @store gives driver-ready; @client is borrowed.
 * Errors: -ETIMEDOUT with GV_REASON_DRA_DRIVER_NOT_READY (no complete slice
 * of the driver for the node: what the node's slices are instead) or
 * GV_REASON_DRA_GPUS_MISSING (naming the UUIDs missing); -ENOENT
 * GV_REASON_CONFIG when the API server serves no ResourceSlices; the
 * client's errors (403 when RBAC lacks list on resourceslices); -EINTR.
 */
int gv_dra_validate(const gv_config_t *cfg, gv_k8s_client_t *client, gv_store_t *store, gv_result_t *res,
                    gv_error_t **err);

#endif
