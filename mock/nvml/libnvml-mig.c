/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: MIG mode and devices, GPU and compute instances and their profiles.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/nvml/libnvml-internal.h"

/* ------------------------------------------------------------------ */
/* MIG                                                                 */

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
        DEVICE_QUERY(GPU_HANDLE, device, currentMode, 0);
        if (!pendingMode)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *currentMode = d->mig_mode_current;
        *pendingMode = d->mig_mode_pending;
        return mn_leave(NVML_SUCCESS);
}

static unsigned max_mig_devices(const gv_mock_device_t *d)
{
        if (!mn_mig_on(d))
                return 0;
        unsigned m = 0;
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].slice_count > m)
                        m = d->mig_profiles[i].slice_count;
        if (m < d->n_mig_devices)
                m = (unsigned) d->n_mig_devices;
        return m > MAXM ? MAXM : m;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        /* NVML: zero when MIG is not supported or not enabled. */
        *count = max_mig_devices(d);
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)
{
        DEVICE_QUERY(GPU_HANDLE, device, migDevice, 0);
        if (!d->mig_capable)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        if (!mn_mig_on(d) || index >= d->n_mig_devices)
                return mn_leave(NVML_ERROR_NOT_FOUND);
        *migDevice = &S.migs[g][index];
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
        DEVICE_QUERY(ANY_HANDLE, device, isMigDevice, 0);
        *isMigDevice = m >= 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
        DEVICE_QUERY(ANY_HANDLE, migDevice, device, 0);
        if (m < 0)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *device = &S.gpus[g];
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
        DEVICE_QUERY(ANY_HANDLE, device, id, 0);
        if (m < 0)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        *id = d->mig_devices[m].gi_id;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
        DEVICE_QUERY(ANY_HANDLE, device, id, 0);
        if (m < 0)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        *id = d->mig_devices[m].ci_id;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)
{
        DEVICE_QUERY(ANY_HANDLE, device, attributes, 0);
        if (m < 0)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* only a MIG device answers */
        const gv_mock_mig_device_t *md = &d->mig_devices[m];
        const gv_mock_mig_profile_t *mp = mn_mig_profile_of(d, md);
        memset(attributes, 0, sizeof(*attributes));
        attributes->multiprocessorCount = md->multiprocessor_count;
        attributes->sharedCopyEngineCount = mp ? mp->copy_engine_count : 0;
        attributes->sharedDecoderCount = mp ? mp->decoder_count : 0;
        attributes->sharedEncoderCount = mp ? mp->encoder_count : 0;
        attributes->sharedJpegCount = mp ? mp->jpeg_count : 0;
        attributes->sharedOfaCount = mp ? mp->ofa_count : 0;
        attributes->gpuInstanceSliceCount = mp ? mp->slice_count : 0;
        attributes->computeInstanceSliceCount = md->ci_slice_count;
        attributes->memorySizeMB = md->memory_mib;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t *info)
{
        DEVICE_QUERY(GPU_HANDLE, device, info, 0);
        if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        for (size_t i = 0; i < d->n_mig_profiles; i++) {
                const gv_mock_mig_profile_t *mp = &d->mig_profiles[i];
                if (mp->id != profile)
                        continue;
                memset(info, 0, sizeof(*info));
                info->id = mp->id;
                info->isP2pSupported = 0;
                info->sliceCount = mp->slice_count;
                info->instanceCount = mp->instance_count;
                info->multiprocessorCount = mp->multiprocessor_count;
                info->copyEngineCount = mp->copy_engine_count;
                info->decoderCount = mp->decoder_count;
                info->encoderCount = mp->encoder_count;
                info->jpegCount = mp->jpeg_count;
                info->ofaCount = mp->ofa_count;
                info->memorySizeMB = mp->memory_mib;
                return mn_leave(NVML_SUCCESS);
        }
        return mn_leave(NVML_ERROR_NOT_SUPPORTED);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance)
{
        DEVICE_QUERY(GPU_HANDLE, device, gpuInstance, 0);
        if (!d->mig_capable)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        for (size_t i = 0; mn_mig_on(d) && i < d->n_mig_devices; i++)
                if (d->mig_devices[i].gi_id == id) {
                        *gpuInstance = &S.gis[g][i];
                        return mn_leave(NVML_SUCCESS);
                }
        return mn_leave(NVML_ERROR_NOT_FOUND);
}

/* Resolves a GPU or compute instance handle to (gpu, MIG slot). */
nvmlReturn_t mn_resolve_instance(const void *h, const void *base, gv_mock_device_t **d, unsigned *gpu, int *slot)
{
        long s = mn_slot_of(h, base, (size_t) MAXG * MAXM, sizeof(S.gis[0][0]));
        if (s < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        *gpu = (unsigned) (s / MAXM);
        *slot = (int) (s % MAXM);
        *d = mn_gpu_at(*gpu);
        if (!*d || !mn_mig_on(*d) || (size_t) *slot >= (*d)->n_mig_devices)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (S.lost & (1ULL << *gpu))
                return NVML_ERROR_GPU_IS_LOST;
        return NVML_SUCCESS;
}

/*
 * INSTANCE_QUERY(h, base, out) - the preamble of an entry point taking a GPU
 * or compute instance handle @h into the array @base: BEGIN(), resolve it
 * (declares d, g and s) and refuse a NULL @out, or return the error code.
 */
#define INSTANCE_QUERY(h, base, out)                                                  \
        gv_mock_device_t *d;                                                          \
        unsigned g;                                                                   \
        int s;                                                                        \
        do {                                                                          \
                BEGIN();                                                              \
                nvmlReturn_t enter_r_ = mn_resolve_instance((h), (base), &d, &g, &s); \
                if (enter_r_ != NVML_SUCCESS)                                         \
                        return mn_leave(enter_r_);                                    \
                if (!(out))                                                           \
                        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);                 \
        } while (0)

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        const gv_mock_mig_device_t *md = &d->mig_devices[s];
        const gv_mock_mig_profile_t *mp = mn_mig_profile_of(d, md);
        memset(info, 0, sizeof(*info));
        info->device = &S.gpus[g];
        info->id = md->gi_id;
        info->profileId = mp ? mp->id : 0;
        info->placement.start = md->placement_start;
        info->placement.size = mp ? mp->slice_count : 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                                   nvmlComputeInstance_t *computeInstance)
{
        INSTANCE_QUERY(gpuInstance, S.gis, computeInstance);
        unsigned gi = d->mig_devices[s].gi_id;
        for (size_t m = 0; m < d->n_mig_devices; m++)
                if (d->mig_devices[m].gi_id == gi && d->mig_devices[m].ci_id == id) {
                        *computeInstance = &S.cis[g][m];
                        return mn_leave(NVML_SUCCESS);
                }
        return mn_leave(NVML_ERROR_NOT_FOUND);
}

/* NVML compute instance profile enum from a slice count (1, 2, 3, 4, 7, 8, 6 slices). */
static unsigned ci_profile_id(unsigned slices)
{
        static const unsigned by_slices[9] = { 0, 0x0, 0x1, 0x2, 0x3, 0, 0x6, 0x4, 0x5 };
        return slices < 9 ? by_slices[slices] : 0;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info)
{
        INSTANCE_QUERY(computeInstance, S.cis, info);
        const gv_mock_mig_device_t *md = &d->mig_devices[s];
        unsigned start = 0;
        size_t first = (size_t) s;
        for (size_t m = 0; m < (size_t) s; m++)
                if (d->mig_devices[m].gi_id == md->gi_id) {
                        start += d->mig_devices[m].ci_slice_count;
                        if (m < first)
                                first = m;
                }
        memset(info, 0, sizeof(*info));
        info->device = &S.gpus[g];
        info->gpuInstance = &S.gis[g][first];
        info->id = md->ci_id;
        info->profileId = ci_profile_id(md->ci_slice_count);
        info->placement.start = start;
        info->placement.size = md->ci_slice_count;
        return mn_leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* MIG profile info, versioned                                         */

static const gv_mock_mig_profile_t *gi_profile_by_id(const gv_mock_device_t *d, unsigned id)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].id == id)
                        return &d->mig_profiles[i];
        return NULL;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info)
{
        DEVICE_QUERY(GPU_HANDLE, device, info, 0);
        if (info->version != nvmlGpuInstanceProfileInfo_v2 && info->version != nvmlGpuInstanceProfileInfo_v3)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        const gv_mock_mig_profile_t *mp = gi_profile_by_id(d, profile);
        if (!mp)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        nvmlGpuInstanceProfileInfo_v3_t v3 = { 0 };
        v3.version = info->version;
        v3.id = mp->id;
        v3.sliceCount = mp->slice_count;
        v3.instanceCount = mp->instance_count;
        v3.multiprocessorCount = mp->multiprocessor_count;
        v3.copyEngineCount = mp->copy_engine_count;
        v3.decoderCount = mp->decoder_count;
        v3.encoderCount = mp->encoder_count;
        v3.jpegCount = mp->jpeg_count;
        v3.ofaCount = mp->ofa_count;
        v3.memorySizeMB = mp->memory_mib;
        snprintf(v3.name, sizeof(v3.name), "MIG %s", mp->name); /* nvidia-smi -L prints "MIG 1g.5gb" from it */
        if (info->version == nvmlGpuInstanceProfileInfo_v3) {
                memcpy(info, &v3, sizeof(v3));
                return mn_leave(NVML_SUCCESS);
        }
        nvmlGpuInstanceProfileInfo_v2_t v2 = { .version = v3.version,
                                               .id = v3.id,
                                               .isP2pSupported = 0,
                                               .sliceCount = v3.sliceCount,
                                               .instanceCount = v3.instanceCount,
                                               .multiprocessorCount = v3.multiprocessorCount,
                                               .copyEngineCount = v3.copyEngineCount,
                                               .decoderCount = v3.decoderCount,
                                               .encoderCount = v3.encoderCount,
                                               .jpegCount = v3.jpegCount,
                                               .ofaCount = v3.ofaCount,
                                               .memorySizeMB = v3.memorySizeMB };
        memcpy(v2.name, v3.name, sizeof(v2.name));
        *info = v2;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,
                                       unsigned int *count)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, 0);
        if (profileId >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (!d->mig_capable || !mn_mig_on(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        /* One handle per GPU instance of that profile: the MIG slot where the instance first appears. */
        unsigned n = 0;
        for (size_t i = 0; i < d->n_mig_devices; i++) {
                const gv_mock_mig_profile_t *mp = mn_mig_profile_of(d, &d->mig_devices[i]);
                bool first = true;
                for (size_t j = 0; j < i; j++)
                        first &= d->mig_devices[j].gi_id != d->mig_devices[i].gi_id;
                if (!first || !mp || mp->id != profileId)
                        continue;
                if (gpuInstances)
                        gpuInstances[n] = &S.gis[g][i];
                n++;
        }
        if (n && !gpuInstances)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *count = n;
        return mn_leave(NVML_SUCCESS);
}

/* Slices of NVML compute instance profile @profile (inverse of ci_profile_id), 0 when unknown. */
static unsigned ci_profile_slices(unsigned profile)
{
        static const unsigned slices[NVML_COMPUTE_INSTANCE_PROFILE_COUNT] = { 1, 2, 3, 4, 7, 8, 6, 1, 7 };
        return profile < NVML_COMPUTE_INSTANCE_PROFILE_COUNT ? slices[profile] : 0;
}

/*
 * Fills a compute instance profile of the GPU instance at MIG slot @s: a CI
 * profile fits when its slices divide into the GI's; SMs and memory split
 * evenly over the GI's compute slices, engines stay shared (MIG user guide).
 */
static nvmlReturn_t ci_profile_fill(const gv_mock_device_t *d, int s, unsigned profile, unsigned eng,
                                    nvmlComputeInstanceProfileInfo_v3_t *out)
{
        if (profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT || eng != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
                return NVML_ERROR_INVALID_ARGUMENT;
        const gv_mock_mig_profile_t *mp = mn_mig_profile_of(d, &d->mig_devices[s]);
        unsigned cs = ci_profile_slices(profile);
        if (!mp || profile == NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 ||
            profile == NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL || cs > mp->slice_count || !mp->slice_count)
                return NVML_ERROR_NOT_SUPPORTED;
        memset(out, 0, sizeof(*out));
        out->id = profile;
        out->sliceCount = cs;
        out->instanceCount = mp->slice_count / cs;
        out->multiprocessorCount = mp->multiprocessor_count * cs / mp->slice_count;
        out->sharedCopyEngineCount = mp->copy_engine_count;
        out->sharedDecoderCount = mp->decoder_count;
        out->sharedEncoderCount = mp->encoder_count;
        out->sharedJpegCount = mp->jpeg_count;
        out->sharedOfaCount = mp->ofa_count;
        if (cs == mp->slice_count)
                snprintf(out->name, sizeof(out->name), "MIG %s", mp->name);
        else
                snprintf(out->name, sizeof(out->name), "MIG %uc.%s", cs, mp->name);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances, unsigned int *count)
{
        INSTANCE_QUERY(gpuInstance, S.gis, count);
        if (profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        unsigned gi = d->mig_devices[s].gi_id, n = 0;
        for (size_t m = 0; m < d->n_mig_devices; m++) {
                const gv_mock_mig_device_t *md = &d->mig_devices[m];
                if (md->gi_id != gi || ci_profile_id(md->ci_slice_count) != profileId)
                        continue;
                if (computeInstances)
                        computeInstances[n] = &S.cis[g][m];
                n++;
        }
        if (n && !computeInstances)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        *count = n;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        nvmlComputeInstanceProfileInfo_v3_t v3;
        nvmlReturn_t r = ci_profile_fill(d, s, profile, engProfile, &v3);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        info->id = v3.id;
        info->sliceCount = v3.sliceCount;
        info->instanceCount = v3.instanceCount;
        info->multiprocessorCount = v3.multiprocessorCount;
        info->sharedCopyEngineCount = v3.sharedCopyEngineCount;
        info->sharedDecoderCount = v3.sharedDecoderCount;
        info->sharedEncoderCount = v3.sharedEncoderCount;
        info->sharedJpegCount = v3.sharedJpegCount;
        info->sharedOfaCount = v3.sharedOfaCount;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                           unsigned int engProfile,
                                                           nvmlComputeInstanceProfileInfo_v2_t *info)
{
        INSTANCE_QUERY(gpuInstance, S.gis, info);
        unsigned version = info->version;
        if (version != nvmlComputeInstanceProfileInfo_v2 && version != nvmlComputeInstanceProfileInfo_v3)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlComputeInstanceProfileInfo_v3_t v3;
        nvmlReturn_t r = ci_profile_fill(d, s, profile, engProfile, &v3);
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        v3.version = version;
        /* v2 is the first 136 bytes of v3. */
        memcpy(info, &v3, version == nvmlComputeInstanceProfileInfo_v3 ? sizeof(v3) : sizeof(*info));
        return mn_leave(NVML_SUCCESS);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlDeviceGetAttributes, nvmlDeviceGetAttributes_v2)
GV_MOCK_ALIAS(nvmlComputeInstanceGetInfo, nvmlComputeInstanceGetInfo_v2)
