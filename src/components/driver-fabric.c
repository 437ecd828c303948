/* SPDX-License-Identifier: Apache-2.0 */
/* The NVSwitch fabric part of the driver check (driver-internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "driver-internal.h"

nvmlReturn_t gv_driver_fabric_query(const gv_nvml_t *nvml, nvmlDevice_t dev, gpu_info_t *g)
{
        nvmlReturn_t ret = NVML_ERROR_NOT_SUPPORTED;
        if (nvml->nvmlDeviceGetGpuFabricInfoV) {
                nvmlGpuFabricInfoV_t v;
                memset(&v, 0, sizeof(v));
                v.version = nvmlGpuFabricInfo_v3;
                ret = nvml->nvmlDeviceGetGpuFabricInfoV(dev, &v);
                if (ret == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
                        memset(&v, 0, sizeof(v));
                        v.version = nvmlGpuFabricInfo_v2;
                        ret = nvml->nvmlDeviceGetGpuFabricInfoV(dev, &v);
                }
                if (ret == NVML_SUCCESS) {
                        g->fabric_state = v.state;
                        g->fabric_status = v.status;
                        return ret;
                }
                if (ret != NVML_ERROR_FUNCTION_NOT_FOUND && ret != NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
                        return ret;
        }
        if (nvml->nvmlDeviceGetGpuFabricInfo) {
                nvmlGpuFabricInfo_t v;
                memset(&v, 0, sizeof(v));
                ret = nvml->nvmlDeviceGetGpuFabricInfo(dev, &v);
                if (ret == NVML_SUCCESS) {
                        g->fabric_state = v.state;
                        g->fabric_status = v.status;
                }
        }
        return ret == NVML_ERROR_FUNCTION_NOT_FOUND ? NVML_ERROR_NOT_SUPPORTED : ret;
}

static const char *fabric_state_name(unsigned char state)
{
        switch (state) {
        case NVML_GPU_FABRIC_STATE_NOT_STARTED:
                return "NOT_STARTED";
        case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
                return "IN_PROGRESS";
        case NVML_GPU_FABRIC_STATE_COMPLETED:
                return "COMPLETED";
        default:
                return "UNKNOWN";
        }
}

int gv_driver_fabric_check(const gv_nvml_t *nvml, const nvml_facts_t *f, gv_error_t **err)
{
        char *msg = NULL;
        size_t mlen = 0;
        FILE *mf = open_memstream(&msg, &mlen);
        if (!mf)
                return gv_error_oom(err);
        unsigned bad = 0, fabric = 0;
        for (unsigned i = 0; i < f->count; i++) {
                const gpu_info_t *g = &f->gpus[i];
                if (!g->fabric)
                        continue;
                fabric++;
                bool done = g->fabric_state == NVML_GPU_FABRIC_STATE_COMPLETED;
                if (done && g->fabric_status == NVML_SUCCESS)
                        continue;
                fprintf(mf, "\n  GPU %u (bus id %s): state %s, status %s", i, *g->bus_id ? g->bus_id : "unknown",
                        fabric_state_name(g->fabric_state),
                        done ? gv_nvml_strerror(nvml, g->fabric_status) : "N/A");
                if (done)
                        fprintf(mf, " (%s, %d): fabric training failed", gv_nvml_return_name(g->fabric_status),
                                (int) g->fabric_status);
                bad++;
        }
        if (gv_memstream_close(mf, &msg) < 0)
                return gv_error_oom(err);
        int r = 0;
        if (bad)
                r = gv_error_set(err, EAGAIN, GV_REASON_FABRIC_NOT_READY,
                                 "NVSwitch fabric not ready on %u of %u fabric GPU(s):%s", bad, fabric, msg ? msg : "");
        free(msg);
        return r;
}
