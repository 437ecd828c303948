/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The product's view of NVML: the contract's typed dlopen binding
 * (abi/nvml/nvml-loader.h: gv_nvml_open/close/strerror) plus the mapping of
 * NVML return codes to our failure classes and errors.  Used by the driver
 * component and cuda-check; the mock (mock/) uses only the binding.
 */
#ifndef GV_NVML_NVML_H
#define GV_NVML_NVML_H

#include "abi/nvml/nvml-loader.h"
#include "base/error.h"

/* gv_nvml_reason - map an NVML return code to our failure class (NVML_ERROR_NO_PERMISSION, 4, is permission-denied, not driver-not-loaded). */
gv_reason_t gv_nvml_reason(nvmlReturn_t ret);

/*
 * gv_nvml_error - fill *err from an NVML failure: "<what>: <library text> (<NAME>, <code>)",
 * reason from gv_nvml_reason().  Returns a negative errno (EIO, EACCES for NO_PERMISSION).
 */
int gv_nvml_error(gv_error_t **err, const gv_nvml_t *nvml, nvmlReturn_t ret, const char *what);

#endif
