/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cc-manager: the confidential-computing manager has set the node's CC
 * mode.  When the node's label nvidia.com/cc.capable is not "true" there is
 * nothing to wait for and the marker is written at once (CC_CAPABLE=false,
 * as upstream); otherwise ready when the cc-manager container's flag
 * <OUTPUT_DIR>/.cc-manager-ctr-ready exists (upstream hard-codes
 * /run/nvidia/validations, the default OUTPUT_DIR).  Without a node name
 * the label cannot be read and the flag is required.  Upstream:
 * shared/reference/upstream-components.md ("cc-manager").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "sandbox.h"

#define COMPONENT "cc-manager"

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        _cleanup_free_ char *capable = NULL;
        int r = gv_node_label(cfg, COMPONENT, "nvidia.com/cc.capable", &capable, err);
        if (r < 0)
                return r;
        if (r == 1 && (!capable || strcmp(capable, "true") != 0)) {
                if ((r = gv_result_fact(result, "CC_CAPABLE", "false", err)) < 0)
                        return r;
                gv_result_summary(result, "node %s is not labelled nvidia.com/cc.capable=true: nothing to set",
                             cfg->kube.node_name);
                return 0;
        }
        _cleanup_free_ char *flag = gv_path_join(cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR,
                                                 ".cc-manager-ctr-ready");
        if (!flag)
                return gv_error_oom(err);
        struct stat st;
        if (stat(flag, &st) < 0)
                return gv_error_set(err, errno, GV_REASON_DEPENDENCY, "%s: %s (the cc-manager has not set the CC mode%s)",
                                    flag, strerror(errno), r == 0 ? "; no node name, so nvidia.com/cc.capable was not read" : "");
        if ((r = gv_result_fact(result, "CC_CAPABLE", "true", err)) < 0)
                return r;
        gv_result_summary(result, "cc-manager ready (%s)", flag);
        return 0;
}

GV_COMPONENT(cc_manager, COMPONENT, GV_MARKER_CC_MANAGER, validate);
