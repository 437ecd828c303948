/* SPDX-License-Identifier: Apache-2.0 */
#define GV_ERROR_IMPLEMENTATION /* the definitions below, not the analyser's wrappers */
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The error handed out when memory runs out while building one: read-only
 * (never written, never freed: gv_error_free(), gv_error_prefix() and
 * gv_error_set_reason() recognise it), so it is no mutable global.  Its type
 * has a `char *msg` for the heap messages of every other error; this one
 * points at a string literal that nobody writes either.
 */
static const gv_error_t oom_error = { .errnum = ENOMEM, .reason = GV_REASON_INTERNAL, .msg = (char *) "out of memory" };

/* The out-of-memory error as the mutable pointer type that *err holds; see oom_error. */
static gv_error_t *oom(void)
{
        return (gv_error_t *) &oom_error; /* never written, see above */
}

static const struct {
        const char *name;
        const char *hint;
        bool retryable;
} reasons[GV_REASON__MAX] = {
        [GV_REASON_NONE] = { "none", NULL, false },
        [GV_REASON_INTERNAL] = { "internal", "this is a bug in gpu-validator; please report it with the log", false },
        [GV_REASON_IO] = { "io", "check that the folder exists, is writable and that the disk is not full", true },
        [GV_REASON_CONFIG] = { "config", "fix the option, environment variable or file named above; see --help", false },
        [GV_REASON_TIMEOUT] = { "timeout", "raise --max-wait / --timeout, or look at why the condition never held", true },
        [GV_REASON_INTERRUPTED] = { "interrupted", NULL, true },
        [GV_REASON_LIBRARY_NOT_FOUND] = { "library-not-found",
                "wrong driver root? set DRIVER_INSTALL_DIR / HOST_ROOT or --lib-search / --bin-search", false },
        [GV_REASON_DRIVER_NOT_LOADED] = { "driver-not-loaded",
                "the NVIDIA kernel module is not loaded yet; wait for the driver container or run modprobe nvidia", true },
        [GV_REASON_PERMISSION_DENIED] = { "permission-denied",
                "permission denied: check device node modes, SELinux, cgroup device rules", false },
        [GV_REASON_DRIVER_MISMATCH] = { "driver-library-mismatch",
                "the loaded kernel module and the user-space library differ; reload the driver or reboot the node", false },
        [GV_REASON_GPU_LOST] = { "gpu-lost", "a GPU fell off the bus; drain the node and reset or replace the GPU", false },
        [GV_REASON_NO_GPU] = { "no-gpu", "NVML sees no GPU; check the PCI devices and dmesg", true },
        [GV_REASON_DEVICE_NODE_MISSING] = { "device-node-missing",
                "a /dev/nvidia* node is missing; check nvidia-modprobe / nvidia-persistenced or the driver container", true },
        [GV_REASON_MIG_NO_INSTANCES] = { "mig-no-instances",
                "MIG is enabled but no GPU instance exists; apply a MIG layout (nvidia-mig-parted) or disable MIG", false },
        [GV_REASON_NVML] = { "nvml-error", NULL, true },
        [GV_REASON_NVIDIA_SMI] = { "nvidia-smi-failed", NULL, true },
        [GV_REASON_DEPENDENCY] = { "dependency-not-ready", "validate the upstream component first", true },
        [GV_REASON_TOOLKIT] = { "toolkit-not-configured",
                "generate a CDI spec (nvidia-ctk cdi generate) or configure the NVIDIA container runtime", true },
        [GV_REASON_KUBERNETES] = { "kubernetes-api", "check the API server address, credentials and RBAC", true },
        [GV_REASON_WORKLOAD] = { "workload-failed", NULL, true },
        [GV_REASON_NOT_IMPLEMENTED] = { "not-implemented", NULL, false },
        [GV_REASON_PCI_NOT_READY] = { "pci-not-ready",
                "a GPU's PCI function is not ready for the workload config: check its bound driver, sriov_numvfs "
                "and mdev devices under /sys/bus/pci/devices (vfio-manager, vgpu-manager, vgpu-device-manager)", true },
        [GV_REASON_MODULE_NOT_LOADED] = { "module-not-loaded",
                "the kernel module named above is not loaded; check the driver container (GDS_ENABLED, "
                "GDRCOPY_ENABLED, GPU_DIRECT_RDMA_ENABLED) or the MOFED driver", true },
        [GV_REASON_FABRIC_NOT_READY] = { "fabric-not-ready",
                "the NVSwitch fabric of the GPUs named above is not trained: check that nvidia-fabricmanager runs "
                "and its log (CUDA fails with 'system not yet initialized' until it is)", true },
        [GV_REASON_GPU_MISSING] = { "gpu-missing",
                "NVML sees fewer GPUs than expected: a GPU fell off the bus or its driver failed to bind; check "
                "dmesg (Xid 79, RmInitAdapter), drain the node and reset or replace the GPU", false },
        [GV_REASON_DRA_DRIVER_NOT_READY] = { "dra-driver-not-ready",
                "the node is in DRA mode but the NVIDIA DRA driver (gpu.nvidia.com) has not published its "
                "ResourceSlices for it: check the nvidia-dra-driver-gpu kubelet plugin pod on this node and its log", true },
        [GV_REASON_DRA_GPUS_MISSING] = { "dra-gpus-missing",
                "the NVIDIA DRA driver's ResourceSlices list fewer GPUs than NVML sees: check the kubelet plugin's "
                "log and its GPU selection (the GPUs named above are not allocatable)", true },
        [GV_REASON_MOUNT_DELETED] = { "mount-source-deleted",
                "the folder this container mounted was removed on the host (the driver container was replaced); "
                "its mount never comes back: restart this pod to mount the new one", false },
};

const char *gv_reason_name(gv_reason_t reason)
{
        if ((unsigned) reason >= GV_REASON__MAX || !reasons[reason].name)
                return "unknown";
        return reasons[reason].name;
}

const char *gv_reason_hint(gv_reason_t reason)
{
        if ((unsigned) reason >= GV_REASON__MAX)
                return NULL;
        return reasons[reason].hint;
}

bool gv_reason_retryable(gv_reason_t reason)
{
        if ((unsigned) reason >= GV_REASON__MAX)
                return false;
        return reasons[reason].retryable;
}

static int norm_errnum(int errnum)
{
        if (errnum < 0)
                errnum = -errnum;
        return errnum == 0 ? EIO : errnum;
}

int gv_error_setv(gv_error_t **err, int errnum, gv_reason_t reason, const char *fmt, va_list ap)
{
        errnum = norm_errnum(errnum);
        if (!err)
                return -errnum;
        gv_error_free(err);

        gv_error_t *e = calloc(1, sizeof(*e));
        char *msg = NULL;
        if (!e || vasprintf(&msg, fmt, ap) < 0) {
                free(e);
                *err = oom();
                return -errnum;
        }
        e->errnum = errnum;
        e->reason = reason;
        e->msg = msg;
        *err = e;
        return -errnum;
}

int gv_error_set(gv_error_t **err, int errnum, gv_reason_t reason, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = gv_error_setv(err, errnum, reason, fmt, ap);
        va_end(ap);
        return r;
}

int gv_error_oom(gv_error_t **err)
{
        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
}

int gv_error_prefix(gv_error_t **err, const char *fmt, ...)
{
        if (!err || !*err)
                return -EIO;
        gv_error_t *e = *err;
        if (e == oom())
                return -e->errnum;

        char *ctx = NULL, *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&ctx, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -e->errnum;
        if (asprintf(&msg, "%s: %s", ctx, e->msg) < 0) {
                free(ctx);
                return -e->errnum;
        }
        free(ctx);
        free(e->msg);
        e->msg = msg;
        return -e->errnum;
}

void gv_error_free(gv_error_t **err)
{
        if (!err || !*err)
                return;
        if (*err != oom()) {
                free((*err)->msg);
                free(*err);
        }
        *err = NULL;
}

void gv_error_set_reason(gv_error_t **err, gv_reason_t reason)
{
        if (err && *err && *err != oom())
                (*err)->reason = reason;
}
