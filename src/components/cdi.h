/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict reader for the parts of a CDI (Container Device Interface) spec
 * that the toolkit check needs: cdiVersion, kind, the device names and the
 * device nodes each names.  Facts about the format come from the CDI
 * specification (github.com/cncf-tags/container-device-interface,
 * SPEC.md) and from the real capture in
 * shared/cases/nvidia-smi/cdi__nvidia-ctk-cdi-generate_*.yaml.  YAML and JSON
 * specs are both read with libyaml (JSON is YAML flow syntax).
 */
#ifndef GV_COMPONENTS_CDI_H
#define GV_COMPONENTS_CDI_H

#include <stddef.h>

#include "base/error.h"

/* Largest spec file accepted, bytes. */
#define GV_CDI_SPEC_MAX_BYTES ((size_t) 8 * 1024 * 1024)

typedef struct gv_cdi_device {
        char *name;   /* "0", "GPU-<uuid>", "all" (heap) */
        char **nodes; /* NULL-terminated heap list: each deviceNode's hostPath, or path when absent */
} gv_cdi_device_t;

typedef struct gv_cdi_spec {
        char *cdi_version;        /* heap, may be NULL when the spec has none */
        char *kind;               /* "nvidia.com/gpu" (heap) */
        char **nodes;             /* top-level containerEdits.deviceNodes, NULL-terminated heap list */
        size_t n_devices;
        gv_cdi_device_t *devices; /* heap array of n_devices */
} gv_cdi_spec_t;

/*
 * gv_cdi_spec_parse - parse one spec (the first YAML document of @data,
 * @len bytes, not necessarily NUL-terminated).  Requires a mapping with a
 * non-empty `kind` scalar and a `devices` sequence whose items are mappings
 * with a non-empty `name`; deviceNodes items need an absolute `path`
 * (`hostPath`, when present, must be absolute too).  Unknown keys are
 * ignored.  @out must be zeroed; it is filled only on success and then owned
 * by the caller (gv_cdi_spec_clear()).
 * Errors: -EINVAL with GV_REASON_CONFIG and libyaml's problem text or the
 * offending key with its line; -EFBIG beyond GV_CDI_SPEC_MAX_BYTES; -ENOMEM.
 */
int gv_cdi_spec_parse(const char *data, size_t len, gv_cdi_spec_t *out, gv_error_t **err);

/* Free everything @s holds and zero it.  Accepts a zeroed spec. */
void gv_cdi_spec_clear(gv_cdi_spec_t *s);

/* The device called @name in @s, or NULL. */
const gv_cdi_device_t *gv_cdi_spec_device(const gv_cdi_spec_t *s, const char *name);

#endif
