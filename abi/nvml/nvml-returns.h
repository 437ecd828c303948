/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one table of NVML return codes, with their names and nvmlErrorString()
 * texts, shared by the NVML loader (abi/nvml/nvml-loader.c: its fallback
 * when a library has no text) and the mock library (mock/nvml: its
 * nvmlErrorString), so that the two can never disagree.  Part of the NVML ABI contract next to
 * nvml-abi.h; header-only (static inline), so neither side links the other.
 *
 * Codes: shared/reference/nvml-abi.md "nvmlReturn_t".  Texts: the wording
 * of NVIDIA's nvmlErrorString() as returned by libnvidia-ml and carried in
 * NVIDIA's Python bindings (nvidia-ml-py); note that nvml.h's comment for
 * NVML_ERROR_FREQ_NOT_SUPPORTED repeats INSUFFICIENT_RESOURCES' sentence,
 * but the library's text is "The requested frequency is not supported".
 */
#ifndef GV_NVML_RETURNS_H
#define GV_NVML_RETURNS_H

#include "abi/nvml/nvml-abi.h"

/* X(code, name, text) for every nvmlReturn_t value. */
#define GV_NVML_RETURNS(X)                                                                                    \
        X(NVML_SUCCESS, "Success")                                                                            \
        X(NVML_ERROR_UNINITIALIZED, "Uninitialized")                                                          \
        X(NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument")                                                    \
        X(NVML_ERROR_NOT_SUPPORTED, "Not Supported")                                                          \
        X(NVML_ERROR_NO_PERMISSION, "Insufficient Permissions")                                               \
        X(NVML_ERROR_ALREADY_INITIALIZED, "Already Initialized")                                              \
        X(NVML_ERROR_NOT_FOUND, "Not Found")                                                                  \
        X(NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size")                                                  \
        X(NVML_ERROR_INSUFFICIENT_POWER, "Insufficient External Power")                                       \
        X(NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded")                                                  \
        X(NVML_ERROR_TIMEOUT, "Timeout")                                                                      \
        X(NVML_ERROR_IRQ_ISSUE, "Interrupt Request Issue")                                                    \
        X(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")                                      \
        X(NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found")                                                \
        X(NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM")                                                  \
        X(NVML_ERROR_GPU_IS_LOST, "GPU is lost")                                                              \
        X(NVML_ERROR_RESET_REQUIRED, "GPU requires restart")                                                  \
        X(NVML_ERROR_OPERATING_SYSTEM, "The operating system has blocked the request.")                       \
        X(NVML_ERROR_LIB_RM_VERSION_MISMATCH, "RM has detected an NVML/RM version mismatch.")                 \
        X(NVML_ERROR_IN_USE, "In use by another client")                                                      \
        X(NVML_ERROR_MEMORY, "Insufficient Memory")                                                           \
        X(NVML_ERROR_NO_DATA, "No data")                                                                      \
        X(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED,                                                                  \
          "The requested vgpu operation is not available on target device, because ECC is enabled")          \
        X(NVML_ERROR_INSUFFICIENT_RESOURCES, "Ran out of critical resources, other than memory")              \
        X(NVML_ERROR_FREQ_NOT_SUPPORTED, "The requested frequency is not supported")                          \
        X(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "The provided version is invalid/unsupported")                \
        X(NVML_ERROR_DEPRECATED, "The requested functionality has been deprecated")                           \
        X(NVML_ERROR_NOT_READY, "The system is not ready for the request")                                    \
        X(NVML_ERROR_GPU_NOT_FOUND, "No GPUs were found")                                                     \
        X(NVML_ERROR_INVALID_STATE, "Resource not in correct state to perform requested operation")           \
        X(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "Reset type is not supported")                                 \
        X(NVML_ERROR_UNKNOWN, "Unknown Error")

/*
 * gv_nvml_return_text - nvmlErrorString()'s text for @ret; "Unknown Error"
 * for a code not in the table.  Static string, never NULL.
 */
static inline const char *gv_nvml_return_text(nvmlReturn_t ret)
{
        switch (ret) {
#define GV_NVML_RETURN_TEXT_CASE(code, text) \
        case code:                           \
                return text;
                GV_NVML_RETURNS(GV_NVML_RETURN_TEXT_CASE)
#undef GV_NVML_RETURN_TEXT_CASE
        }
        return "Unknown Error";
}

/*
 * gv_nvml_return_code_name - the enumerator's name ("NVML_ERROR_GPU_IS_LOST");
 * "NVML_ERROR_UNKNOWN" for a code not in the table.  Static string, never NULL.
 */
static inline const char *gv_nvml_return_code_name(nvmlReturn_t ret)
{
        switch (ret) {
#define GV_NVML_RETURN_NAME_CASE(code, text) \
        case code:                           \
                return #code;
                GV_NVML_RETURNS(GV_NVML_RETURN_NAME_CASE)
#undef GV_NVML_RETURN_NAME_CASE
        }
        return "NVML_ERROR_UNKNOWN";
}

#endif
