/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mofed: the Mellanox OFED driver GPUDirect RDMA needs is ready.  Validates
 * only when GPU_DIRECT_RDMA_ENABLED=true and the node has a Mellanox NIC:
 * the label feature.node.kubernetes.io/pci-15b3.present=true (read when a
 * node name is set, as upstream), else a PCI function of vendor 0x15b3 under
 * the sysfs root.  Then, with USE_HOST_MOFED=true, the mlx5_core module is
 * loaded (<sysfs>/module/mlx5_core); otherwise the MOFED driver container's
 * flag (/run/mellanox/drivers/.driver-ready, --mofed-ready-file) exists.
 * Upstream: shared/reference/upstream-components.md ("mofed").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "sandbox.h"

#define COMPONENT "mofed"
#define MOFED_READY_FILE "/run/mellanox/drivers/.driver-ready"

static int skip(gv_result_t *result, const char *why)
{
        result->skipped = true;
        result->summary = strdup(why);
        return 0;
}

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        if (!cfg->sandbox.gpu_direct_rdma_enabled)
                return skip(result, "GPU_DIRECT_RDMA_ENABLED is not true: nothing to validate");
        _cleanup_free_ char *present = NULL;
        int r = gv_node_label(cfg, COMPONENT, "feature.node.kubernetes.io/pci-15b3.present", &present, err);
        if (r < 0)
                return r;
        if (r == 1 && (!present || strcmp(present, "true") != 0))
                return skip(result, "node is not labelled feature.node.kubernetes.io/pci-15b3.present=true (no "
                                    "Mellanox NIC): nothing to validate");
        if (r == 0 && gv_pci_count_vendor(gv_sysfs_root(&cfg->sandbox), GV_PCI_VENDOR_MELLANOX) == 0)
                return skip(result, "no Mellanox (0x15b3) PCI function under the sysfs root: nothing to validate");
        if (cfg->sandbox.use_host_mofed) {
                _cleanup_free_ char *detail = NULL;
                if (!gv_module_loaded(gv_sysfs_root(&cfg->sandbox), "mlx5_core", &detail))
                        return gv_error_set(err, ENOENT, GV_REASON_MODULE_NOT_LOADED,
                                            "USE_HOST_MOFED=true but kernel module mlx5_core is not loaded (%s)",
                                            detail ? detail : "absent");
                if ((r = gv_result_fact(result, "USE_HOST_MOFED", "true", err)) < 0)
                        return r;
                result->summary = strdup("host MOFED: mlx5_core loaded");
                return 0;
        }
        const char *flag = cfg->sandbox.mofed_ready_file && *cfg->sandbox.mofed_ready_file ? cfg->sandbox.mofed_ready_file : MOFED_READY_FILE;
        struct stat st;
        if (stat(flag, &st) < 0)
                return gv_error_set(err, errno, GV_REASON_DEPENDENCY, "%s: %s (the MOFED driver container is not ready)",
                                    flag, strerror(errno));
        if ((r = gv_result_fact(result, "USE_HOST_MOFED", "false", err)) < 0)
                return r;
        gv_result_summary(result, "MOFED driver container ready (%s)", flag);
        return 0;
}

GV_COMPONENT(mofed, COMPONENT, GV_MARKER_MOFED, validate);
