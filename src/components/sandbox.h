/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the sandbox, vGPU and GPUDirect components share (private to
 * src/components; defined in sandbox.c): the sysfs root (its PCI bus is read
 * through src/pci), loaded kernel modules, one node label, the workload
 * config and the flags of .driver-ctr-ready.  Upstream facts: shared/reference/upstream-components.md
 * (go-nvlib nvpci/nvmdev, cmd/nvidia-validator/main.go).
 */
#ifndef GV_COMPONENTS_SANDBOX_H
#define GV_COMPONENTS_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "components-internal.h"
#include "pci/pci.h"

/* The sysfs root of @sb: sb->sysfs_root or "/sys". */
const char *gv_sysfs_root(const gv_sandbox_config_t *sb);

/*
 * gv_module_loaded - whether the kernel module @name is loaded: the folder
 * <@sysfs_root>/module/<name> exists and its initstate, when present, is
 * "live".  *@detail (may be NULL): heap text of what was found, for messages.
 */
bool gv_module_loaded(const char *sysfs_root, const char *name, char **detail);

/*
 * gv_node_label - the value of label @key on cfg->kube.node_name, read through
 * the Kubernetes API (configuration as for cuda/plugin).  *@value: heap
 * string or NULL when the node does not carry the label.  Returns 1 when the
 * node was read, 0 when no node name is set (nothing asked, *@value NULL),
 * or a negative errno with *err (GV_REASON_CONFIG / GV_REASON_KUBERNETES).
 */
int gv_node_label(const gv_config_t *cfg, const char *component, const char *key, char **value, gv_error_t **err);

/*
 * gv_workload_config - upstream's workload config for this node: the label
 * nvidia.com/gpu.workload.config when it holds container, vm-passthrough or
 * vm-vgpu, else cfg->sandbox.default_workload_config when valid, else
 * vm-passthrough.  *@config: static string; *@source (may be NULL): static
 * "label", "DEFAULT_GPU_WORKLOAD_CONFIG" or "default".  Errors as
 * gv_node_label().
 */
int gv_workload_config(const gv_config_t *cfg, const char *component, const char **config, const char **source,
                       gv_error_t **err);

/*
 * gv_sandbox_begin - the common start of vfio-pci, vgpu-manager and
 * vgpu-devices: resolve the workload config, write `workload-type`, and
 * say whether @want is the config (1) or not (0, @result marked skipped
 * with a summary).  Negative errno with *err on failure.
 */
int gv_sandbox_begin(const gv_config_t *cfg, gv_store_t *store, const char *component, const char *want,
                     gv_result_t *result, const char **config, gv_error_t **err);

/*
 * gv_driver_ctr_flag - whether @key is true in <cfg->output_dir>/.driver-ctr-ready
 * (YAML "KEY: bool" written by the driver container's startup probe).
 * Returns 1 true, 0 false / absent key / absent file (*@file_present says
 * which, may be NULL), negative errno with *err (GV_REASON_CONFIG naming
 * the line) when the file does not parse.
 */
int gv_driver_ctr_flag(const gv_config_t *cfg, const char *key, bool *file_present, gv_error_t **err);

/*
 * gv_driver_ctr_flag_parse - the value of @key in the .driver-ctr-ready text
 * @text (@len bytes, NUL bytes allowed; YAML "KEY: bool" lines, empty text
 * allowed).  @file names it in messages.  Returns 1 true, 0 false or absent,
 * or -EINVAL with *err (GV_REASON_CONFIG naming the line) when the text is
 * not a YAML mapping or the value is not true/false (any case).
 */
int gv_driver_ctr_flag_parse(const char *text, size_t len, const char *key, const char *file, gv_error_t **err);

/*
 * gv_gpudirect_validate - shared body of nvidia-fs, gdrcopy and
 * nvidia-peermem: skipped unless @flag is true in .driver-ctr-ready; then
 * ready when @module is loaded (GV_REASON_MODULE_NOT_LOADED otherwise).
 */
int gv_gpudirect_validate(const gv_config_t *cfg, const char *component, const char *flag, const char *module,
                          gv_result_t *result, gv_error_t **err);

/*
 * GV_GPUDIRECT_COMPONENT - define the GPUDirect component `gv_component_<sym>`
 * named @cname with marker @cmarker: gv_gpudirect_validate() for the driver
 * container's flag @flag and the kernel module @module.
 */
#define GV_GPUDIRECT_COMPONENT(sym, cname, cmarker, flag, module)                                         \
        static int validate_##sym(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result,           \
                                  gv_error_t **err)                                                         \
        {                                                                                                   \
                (void) store;                                                                               \
                return gv_gpudirect_validate(cfg, (cname), (flag), (module), result, err);                  \
        }                                                                                                   \
        GV_COMPONENT(sym, cname, cmarker, validate_##sym)

/* Set a marker fact; -ENOMEM / -EINVAL with *err. */
int gv_result_fact(gv_result_t *r, const char *key, const char *value, gv_error_t **err);

#endif
