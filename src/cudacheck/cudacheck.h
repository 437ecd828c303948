/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudacheck: the program of the cuda validation pod (`gpu-validator
 * cuda-check`).  Loads the CUDA driver library (libcuda.so.1) with dlopen()
 * through a typed symbol table of our own declarations, and on each device
 * creates a context, JIT-loads a hand-written PTX vector-add kernel that is
 * embedded in the binary, runs it over a few million floats and verifies
 * every result.  Without a CUDA driver (the mock GPU backend) it checks what
 * NVML can tell: which devices the container sees, against
 * NVIDIA_VISIBLE_DEVICES and the expected count.
 *
 * Outside facts: the CUDA Driver API reference (docs.nvidia.com/cuda/
 * cuda-driver-api: "Error Handling", "Initialization", "Device Management",
 * "Context Management", "Module Management", "Memory Management",
 * "Execution Control") for every prototype, type and CUresult value used
 * here; the PTX ISA reference (docs.nvidia.com/cuda/parallel-thread-execution)
 * for the kernel text; the NVIDIA Container Toolkit documentation
 * ("Environment variables (OCI spec)") for NVIDIA_VISIBLE_DEVICES.  No
 * NVIDIA header is included or copied.
 *
 * Nothing here prints or exits; failures follow docs/errors.md.
 */
#ifndef GV_CUDACHECK_CUDACHECK_H
#define GV_CUDACHECK_CUDACHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "abi/cuda/cuda-loader.h"
#include "base/error.h"
#include "nvml/nvml.h"

/*
 * gv_cudacheck_required - the Driver API entry points cuda-check cannot do
 * without (NULL-terminated, for gv_cuda_open()); the others of the table
 * (cuGetErrorName, cuDriverGetVersion, cuModuleUnload) are used when present.
 */
extern const char *const gv_cudacheck_required[];

/*
 * gv_cudacheck_open - gv_cuda_open(@path, gv_cudacheck_required, ...): the
 * driver library with every entry point cuda-check needs.  Errors: as
 * gv_cuda_open() (abi/cuda/cuda-loader.h).
 */
int gv_cudacheck_open(const char *path, gv_cuda_t **out, gv_error_t **err);

/*
 * gv_cuda_error - fill *err from a failed Driver API call:
 * "<what>: <cuGetErrorString text> (<cuGetErrorName>, <code>)", with the
 * driver's own texts kept verbatim (our fallback names when it has none).
 * Reason: GV_REASON_DRIVER_NOT_LOADED for no device / stub library /
 * insufficient driver / not initialised, GV_REASON_WORKLOAD otherwise.
 * Returns a negative errno (-ENODEV for those driver classes, -ENOMEM for
 * out of memory, else -EIO).  An error constructor: @err comes first, as in
 * gv_error_set() (docs/errors.md).
 */
int gv_cuda_error(gv_error_t **err, const gv_cuda_t *cuda, CUresult res, const char *what);

/*
 * gv_cuda_init - cuInit(0), then the device count (cuDeviceGetCount) and, when
 * the library has cuDriverGetVersion, the driver's CUDA version (1000 *
 * major + 10 * minor; 0 when unknown).  Either out pointer may be NULL;
 * both are left alone on failure.  Errors: gv_cuda_error()'s.
 */
int gv_cuda_init(gv_cuda_t *cuda, int *device_count, int *driver_version, gv_error_t **err);

/*
 * gv_cuda_device_name - the name of device @ordinal (cuDeviceGet,
 * cuDeviceGetName) as a heap string in *out.  Errors: gv_cuda_error()'s.
 */
int gv_cuda_device_name(gv_cuda_t *cuda, int ordinal, char **out, gv_error_t **err);

/* ======================================================================
 * The vector-add kernel
 * ====================================================================== */

/* Name of the kernel's .entry in gv_cudacheck_ptx. */
#define GV_CUDACHECK_KERNEL "gv_vector_add"
/* Elements per run unless --elements says otherwise (4 Mi floats: 16 MiB per buffer, 48 MiB in all). */
#define GV_CUDACHECK_DEFAULT_ELEMENTS (4u << 20)
/* Upper bound of --elements: 256 Mi floats (1 GiB per buffer); the kernel's index is 32-bit. */
#define GV_CUDACHECK_MAX_ELEMENTS (256u << 20)
/* Threads per block of the launch. */
#define GV_CUDACHECK_BLOCK 256u

/*
 * gv_cudacheck_ptx - NUL-terminated PTX text of
 * `gv_vector_add(const float *a, const float *b, float *c, u32 n)`:
 * c[i] = a[i] + b[i] for i < n, one thread per element.  Hand-written PTX
 * ISA 6.0 for target sm_50 with 64-bit addresses, so every driver since
 * CUDA 9 JIT-compiles it for the GPU it has.  Constant data.
 */
extern const char gv_cudacheck_ptx[];

/* gv_cudacheck_bytes - bytes the three buffers take for @elements floats (host and device each). */
size_t gv_cudacheck_bytes(size_t elements);

/*
 * gv_cudacheck_fill - fill inputs @a and @b (each @n floats, caller's memory)
 * with the test pattern.  Every value and every sum is exact in float.
 */
void gv_cudacheck_fill(float *a, float *b, size_t n);

/*
 * gv_cudacheck_verify - compare @c (n floats) with a[i] + b[i] of the
 * pattern.  Returns the number of wrong elements; *first_bad (may be NULL)
 * gets the index of the first one (untouched when none is wrong).
 */
size_t gv_cudacheck_verify(const float *c, size_t n, size_t *first_bad);

/* Figures of one successful run. */
typedef struct gv_cudacheck_result {
        size_t elements;  /* floats per buffer */
        size_t bytes;     /* gv_cudacheck_bytes(elements) */
        double total_ms;  /* context, JIT load, allocation, copies, kernel, copy back, in milliseconds */
        double kernel_ms; /* launch to cuCtxSynchronize() return, milliseconds */
} gv_cudacheck_result_t;

/*
 * gv_cudacheck_vector_add - on device @ordinal: create a context, load
 * gv_cudacheck_ptx, allocate three buffers of @elements floats, copy the
 * pattern in, launch, synchronise, copy back and verify every element; all
 * device resources are released on every path.  @elements: 1 to
 * GV_CUDACHECK_MAX_ELEMENTS.  *out is filled on success only.
 * Errors: -EINVAL / GV_REASON_CONFIG for a bad @elements; gv_cuda_error()'s
 * for a failed call (prefixed with the step, e.g. "load PTX module");
 * -EIO / GV_REASON_WORKLOAD "N of M results wrong, first at index I: got X,
 * expected Y" when the kernel computed a wrong sum; -ENOMEM for host memory.
 */
int gv_cudacheck_vector_add(gv_cuda_t *cuda, int ordinal, size_t elements, gv_cudacheck_result_t *out,
                            gv_error_t **err);

/* ======================================================================
 * NVIDIA_VISIBLE_DEVICES and the NVML-only (mock backend) check
 * ====================================================================== */

typedef enum gv_visible_kind {
        GV_VISIBLE_UNSET, /* variable unset or empty: not a GPU container by the toolkit's rule */
        GV_VISIBLE_VOID,  /* "void": likewise */
        GV_VISIBLE_NONE,  /* "none": driver injected, no device */
        GV_VISIBLE_ALL,   /* "all" */
        GV_VISIBLE_LIST,  /* comma list of indexes, GPU-/MIG- UUIDs, or GPU:MIG index pairs */
} gv_visible_kind_t;

typedef struct gv_visible_devices {
        gv_visible_kind_t kind;
        char **ids;  /* LIST: NULL-terminated heap list of the entries (trimmed, duplicates dropped) */
        size_t n;    /* LIST: number of entries */
} gv_visible_devices_t;

/*
 * gv_visible_devices_parse - parse a NVIDIA_VISIBLE_DEVICES value (NULL is
 * unset).  Keywords are matched without regard to case; list items are
 * separated by commas, blanks around them are ignored, empty items are
 * skipped, and an item repeated is kept once.  An item is a decimal GPU
 * index, a UUID starting "GPU-" or "MIG-", or "G:M" (MIG device M of GPU G).
 * On success *out is filled and owns its list (gv_visible_devices_free()).
 * Errors: -EINVAL / GV_REASON_CONFIG naming the bad item; -ENOMEM.
 */
int gv_visible_devices_parse(const char *value, gv_visible_devices_t *out, gv_error_t **err);

/* gv_visible_devices_free - free the list and reset *v to UNSET; accepts a zeroed object. */
void gv_visible_devices_free(gv_visible_devices_t *v);

/*
 * gv_visible_devices_resolve - which of @n_devices devices (NVML index i
 * has UUID @uuids[i], may be NULL when unknown) the container should see.
 * ALL and UNSET: all of them; NONE and VOID: none; LIST: each item must name
 * a device (index < n_devices, a UUID equal to one, ignoring case, or G:M
 * with G < n_devices; a MIG- UUID cannot be resolved through this list and
 * is counted as one device without a check).  Two items naming the same
 * device count once.  *n_visible gets the count.
 * Errors: -ENODEV / GV_REASON_NO_GPU naming the first item that names no
 * device and what NVML has: "NVIDIA_VISIBLE_DEVICES names GPU 9, but NVML
 * reports 8 GPUs, indexes 0 to 7" (for a GPU- UUID, the UUIDs NVML reports).
 */
int gv_visible_devices_resolve(const gv_visible_devices_t *v, const char *const *uuids, size_t n_devices,
                               size_t *n_visible, gv_error_t **err);

/*
 * gv_visible_devices_select - as gv_visible_devices_resolve(), and when
 * @selected is not NULL (@n_devices entries, caller's memory) it is set to
 * which NVML devices the container sees: every one for ALL and UNSET, none
 * for NONE and VOID; for a LIST each device an index or GPU- UUID names, and
 * GPU G for a pair G:M (its MIG device lives there); a MIG- UUID marks none.
 * On failure @selected and *n_visible are left alone.  Errors: as
 * gv_visible_devices_resolve().
 */
int gv_visible_devices_select(const gv_visible_devices_t *v, const char *const *uuids, size_t n_devices,
                              bool *selected, size_t *n_visible, gv_error_t **err);

/* One device as NVML reports it. */
typedef struct gv_nvml_gpu {
        unsigned index; /* NVML index */
        char *name;     /* nvmlDeviceGetName (heap) */
        char *uuid;     /* nvmlDeviceGetUUID (heap) */
} gv_nvml_gpu_t;

/*
 * gv_cudacheck_nvml_gpus - nvmlInit_v2, then name and UUID of every device,
 * then nvmlShutdown.  *out receives a heap array of *n entries (free with
 * gv_nvml_gpus_free()); zero devices is success with *out NULL.
 * Errors: gv_nvml_error()'s, prefixed with the call.
 */
int gv_cudacheck_nvml_gpus(gv_nvml_t *nvml, gv_nvml_gpu_t **out, size_t *n, gv_error_t **err);

/* gv_nvml_gpus_free - free @n entries of @gpus and the array; accepts NULL. */
void gv_nvml_gpus_free(gv_nvml_gpu_t *gpus, size_t n);

#endif
