/* SPDX-License-Identifier: Apache-2.0 */
/* NVML return codes as our failure classes and errors (see nvml.h). */
#include "nvml/nvml.h"

#include <errno.h>
#include <stdio.h>

gv_reason_t gv_nvml_reason(nvmlReturn_t ret)
{
        switch (ret) {
        case NVML_SUCCESS:
                return GV_REASON_NONE;
        case NVML_ERROR_NO_PERMISSION:
                return GV_REASON_PERMISSION_DENIED;
        case NVML_ERROR_DRIVER_NOT_LOADED:
                return GV_REASON_DRIVER_NOT_LOADED;
        case NVML_ERROR_LIBRARY_NOT_FOUND:
        case NVML_ERROR_FUNCTION_NOT_FOUND:
                return GV_REASON_LIBRARY_NOT_FOUND;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                return GV_REASON_DRIVER_MISMATCH;
        case NVML_ERROR_GPU_IS_LOST:
                return GV_REASON_GPU_LOST;
        case NVML_ERROR_GPU_NOT_FOUND:
                return GV_REASON_NO_GPU;
        case NVML_ERROR_TIMEOUT:
                return GV_REASON_TIMEOUT;
        default:
                return GV_REASON_NVML;
        }
}

int gv_nvml_error(gv_error_t **err, const gv_nvml_t *nvml, nvmlReturn_t ret, const char *what)
{
        int e = ret == NVML_ERROR_NO_PERMISSION ? EACCES : EIO;
        return gv_error_set(err, e, gv_nvml_reason(ret), "%s: %s (%s, %d)", what, gv_nvml_strerror(nvml, ret),
                            gv_nvml_return_name(ret), (int) ret);
}

bool gv_nvml_same_bus_id(const char *a, const char *b)
{
        unsigned d1, b1, s1, f1, d2, b2, s2, f2;
        if (!a || !b || sscanf(a, "%x:%x:%x.%x", &d1, &b1, &s1, &f1) != 4 ||
            sscanf(b, "%x:%x:%x.%x", &d2, &b2, &s2, &f2) != 4)
                return false;
        return d1 == d2 && b1 == b2 && s1 == s2 && f1 == f2;
}
