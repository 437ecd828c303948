/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The project's error convention (see docs/errors.md).
 *
 * A function that can fail returns an int: 0 (or a non-negative count) on
 * success, a negative errno value on failure.  When it fails it also fills an
 * error object through its last parameter, `gv_error_t **err`, with a message
 * and a reason class.  Each caller on the way up may prefix context with
 * gv_error_prefix() ("driver: load NVML: <path>: cannot open ...").  Only the
 * CLI prints an error and turns it into an exit code.  Out-parameters stay
 * untouched on failure.
 */
#ifndef GV_BASE_ERROR_H
#define GV_BASE_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

/*
 * Named failure classes.  Their names (gv_reason_name()) appear in logs,
 * `status`, metrics and Kubernetes events, so they never change once
 * released.
 */
typedef enum gv_reason {
        GV_REASON_NONE = 0,
        GV_REASON_INTERNAL,              /* a bug or an out-of-memory */
        GV_REASON_IO,                    /* a file or folder operation failed */
        GV_REASON_CONFIG,                /* bad option, environment value or input file */
        GV_REASON_TIMEOUT,               /* a bounded wait ran out */
        GV_REASON_INTERRUPTED,           /* SIGTERM/SIGINT while validating */
        GV_REASON_LIBRARY_NOT_FOUND,     /* libnvidia-ml.so.1 / nvidia-smi not under the driver root */
        GV_REASON_DRIVER_NOT_LOADED,     /* NVML_ERROR_DRIVER_NOT_LOADED, no /sys/module/nvidia */
        GV_REASON_PERMISSION_DENIED,     /* NVML_ERROR_NO_PERMISSION, EACCES on device nodes */
        GV_REASON_DRIVER_MISMATCH,       /* NVML_ERROR_LIB_RM_VERSION_MISMATCH, nvidia-smi exit 18 */
        GV_REASON_GPU_LOST,              /* NVML_ERROR_GPU_IS_LOST */
        GV_REASON_NO_GPU,                /* NVML sees zero devices */
        GV_REASON_DEVICE_NODE_MISSING,   /* /dev/nvidia* absent after the bounded wait */
        GV_REASON_MIG_NO_INSTANCES,      /* MIG enabled but no GPU instance */
        GV_REASON_NVML,                  /* any other NVML error */
        GV_REASON_NVIDIA_SMI,            /* nvidia-smi failed in another way */
        GV_REASON_DEPENDENCY,            /* an upstream marker is missing or invalid */
        GV_REASON_TOOLKIT,               /* no CDI spec / runtime configuration for NVIDIA */
        GV_REASON_KUBERNETES,            /* API server unreachable or refused */
        GV_REASON_WORKLOAD,              /* validation pod failed */
        GV_REASON_NOT_IMPLEMENTED,
        GV_REASON_PCI_NOT_READY,         /* a GPU's PCI function is not as the workload config needs
                                            (bound driver, SR-IOV VFs, mdev types/devices) */
        GV_REASON_MODULE_NOT_LOADED,     /* a kernel module (nvidia_fs, gdrdrv, nvidia_peermem, mlx5_core) is absent */
        GV_REASON_FABRIC_NOT_READY,      /* an NVSwitch GPU's fabric state is not COMPLETED with SUCCESS */
        GV_REASON_GPU_MISSING,           /* NVML sees fewer GPUs than expected (--expected-gpus or the PCI bus) */
        GV_REASON_DRA_DRIVER_NOT_READY,  /* DRA mode: no complete ResourceSlice of gpu.nvidia.com for this node */
        GV_REASON_DRA_GPUS_MISSING,      /* DRA mode: the driver's ResourceSlices publish fewer GPUs than NVML sees */
        GV_REASON_MOUNT_DELETED,         /* a driver root is a mount whose source was deleted on the host */
        GV_REASON__MAX
} gv_reason_t;

/* The error object.  Owned by whoever holds the pointer; free with gv_error_free(). */
typedef struct gv_error {
        int errnum;          /* positive errno value (EIO when none fits) */
        gv_reason_t reason;  /* failure class */
        char *msg;           /* heap string, never NULL once set */
} gv_error_t;

/*
 * gv_error_set - fill *err (if err is not NULL) with a formatted message.
 * @err: where to store the new error; an error already there is replaced.
 * @errnum: positive or negative errno value; 0 becomes EIO.
 * @reason: the failure class.
 * Returns -abs(errnum) so that callers can write `return gv_error_set(...)`.
 * If memory runs out, *err points to a shared read-only out-of-memory error
 * (ENOMEM, GV_REASON_INTERNAL) that gv_error_free() leaves alone; change an
 * error's reason only through gv_error_set_reason(), never by assignment.
 */
int gv_error_set(gv_error_t **err, int errnum, gv_reason_t reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/*
 * gv_error_oom - fill *err with the out-of-memory error (ENOMEM, GV_REASON_INTERNAL, "out of
 * memory"), for the caller whose allocation just failed; as systemd's log_oom(), but returning
 * the error instead of logging it.  Returns -ENOMEM, so `return gv_error_oom(err);`.  The error
 * is a heap one that gv_error_prefix() can give context to, or, when even that allocation fails,
 * the shared read-only one gv_error_set() falls back to.
 */
int gv_error_oom(gv_error_t **err);

/* As gv_error_set() with a va_list. */
int gv_error_setv(gv_error_t **err, int errnum, gv_reason_t reason, const char *fmt, va_list ap);

/*
 * gv_error_prefix - prepend "<formatted context>: " to the message of *err.
 * Does nothing when err or *err is NULL.  Returns -(*err)->errnum, or -EIO.
 */
int gv_error_prefix(gv_error_t **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* gv_error_free - free *err and set it to NULL; accepts NULL and an empty slot. */
void gv_error_free(gv_error_t **err);

/*
 * gv_error_set_reason - reclassify *err (an I/O error that is the user's
 * input, say) as @reason.  Does nothing when err or *err is NULL, or when *err
 * is the shared out-of-memory error (it stays GV_REASON_INTERNAL).
 */
void gv_error_set_reason(gv_error_t **err, gv_reason_t reason);

#if defined(__clang_analyzer__) && !defined(GV_ERROR_IMPLEMENTATION)
/*
 * For the static analyser only (clang-tidy's clang-analyzer-* checks, never a
 * compiled build): tell the path-sensitive engine what the functions above
 * guarantee, that they return a negative value.  Without this it follows
 * `return gv_error_set(...)` as if it might return >= 0, takes the success
 * branch in the caller with the out-parameters unset, and reports false leaks
 * and NULL dereferences through `_cleanup_` variables.
 */
static inline int gv_error_negative_(int r)
{
        if (r >= 0)
                __builtin_unreachable();
        return r;
}
#define gv_error_set(...) gv_error_negative_(gv_error_set(__VA_ARGS__))
#define gv_error_setv(...) gv_error_negative_(gv_error_setv(__VA_ARGS__))
#define gv_error_prefix(...) gv_error_negative_(gv_error_prefix(__VA_ARGS__))
#define gv_error_oom(...) gv_error_negative_(gv_error_oom(__VA_ARGS__))
#endif

/* gv_reason_name - the stable kebab-case name of a reason ("library-not-found"). Static string. */
const char *gv_reason_name(gv_reason_t reason);

/*
 * gv_reason_hint - a sentence telling a person what to do next about this
 * failure class, or NULL when there is nothing general to say.  Static string.
 */
const char *gv_reason_hint(gv_reason_t reason);

/* gv_reason_retryable - whether waiting and trying again can make this failure go away. */
bool gv_reason_retryable(gv_reason_t reason);

#endif
