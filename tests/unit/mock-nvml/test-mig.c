/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MIG through the mock libnvidia-ml.so.1, loaded with dlopen() by path: the
 * MIG device slots of a GPU with MIG mode off, on without instances and on
 * with three instances (field report FR14), and compute instances that share
 * one GPU instance.
 * Usage: test-mock-nvml-mig <path to libnvidia-ml.so.1> <fixture folder>
 */
#include "mock-nvml-test.h"

static api_t api;

/* ---- FR14 MIG slots ---- */

static unsigned count_mig(api_t *a, nvmlDevice_t d, unsigned max)
{
        unsigned found = 0;
        for (unsigned i = 0; i < max; i++) {
                nvmlDevice_t m = NULL;
                nvmlReturn_t r = a->nvmlDeviceGetMigDeviceHandleByIndex(d, i, &m);
                if (r == NVML_SUCCESS)
                        found++;
                else
                        assert_int_equal(r, NVML_ERROR_NOT_FOUND);
        }
        return found;
}

static void test_fr14_mig_disabled(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0), m = NULL;
        unsigned cur, pend, max = 99;
        assert_int_equal(a->nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
        assert_int_equal(a->nvmlDeviceGetMaxMigDeviceCount(d, &max), NVML_SUCCESS);
        assert_int_equal(max, 0);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &m), NVML_ERROR_NOT_FOUND);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 6, &m), NVML_ERROR_NOT_FOUND);
        nvmlGpuInstance_t gi;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceById(d, 1, &gi), NVML_ERROR_NOT_FOUND);
        unsigned id;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceId(d, &id), NVML_ERROR_NOT_SUPPORTED);
        nvmlUtilization_t ut;
        assert_int_equal(a->nvmlDeviceGetUtilizationRates(d, &ut), NVML_SUCCESS);
}

static void test_fr14_mig_enabled_no_instances(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 1);
        unsigned cur, pend, max = 0;
        assert_int_equal(a->nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
        assert_int_equal(a->nvmlDeviceGetMaxMigDeviceCount(d, &max), NVML_SUCCESS);
        assert_int_equal(max, 7);
        assert_int_equal(count_mig(a, d, max), 0);
        nvmlUtilization_t ut;
        assert_int_equal(a->nvmlDeviceGetUtilizationRates(d, &ut), NVML_ERROR_NOT_SUPPORTED);
}

static void test_fr14_mig_three_instances(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 2), m = NULL, parent = NULL;
        unsigned max = 0, u;
        assert_int_equal(a->nvmlDeviceGetMaxMigDeviceCount(d, &max), NVML_SUCCESS);
        assert_int_equal(max, 7);
        assert_int_equal(count_mig(a, d, max), 3);
        for (unsigned i = 3; i < max + 3; i++)
                assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, i, &m), NVML_ERROR_NOT_FOUND);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 1000, &m), NVML_ERROR_NOT_FOUND);
        char gpu_uuid[96];
        assert_int_equal(a->nvmlDeviceGetUUID(d, gpu_uuid, sizeof(gpu_uuid)), NVML_SUCCESS);
        unsigned seen_gi = 0;
        for (unsigned i = 0; i < 3; i++) {
                char buf[96];
                assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, i, &m), NVML_SUCCESS);
                assert_int_equal(a->nvmlDeviceIsMigDeviceHandle(m, &u), NVML_SUCCESS);
                assert_int_equal(u, 1);
                assert_int_equal(a->nvmlDeviceGetDeviceHandleFromMigDeviceHandle(m, &parent), NVML_SUCCESS);
                assert_ptr_equal(parent, d);
                assert_int_equal(a->nvmlDeviceGetName(m, buf, sizeof(buf)), NVML_SUCCESS);
                assert_string_equal(buf, "NVIDIA A100-SXM4-40GB MIG 2g.10gb");
                assert_int_equal(a->nvmlDeviceGetUUID(m, buf, sizeof(buf)), NVML_SUCCESS);
                assert_true(uuid_shape(buf, "MIG-"));
                nvmlDevice_t again = NULL;
                assert_int_equal(a->nvmlDeviceGetHandleByUUID(buf, &again), NVML_SUCCESS);
                assert_ptr_equal(again, m);
                nvmlMemory_t mem;
                assert_int_equal(a->nvmlDeviceGetMemoryInfo(m, &mem), NVML_SUCCESS);
                assert_int_equal(mem.total, 9856ULL << 20);
                unsigned gi_id, ci_id;
                assert_int_equal(a->nvmlDeviceGetGpuInstanceId(m, &gi_id), NVML_SUCCESS);
                assert_int_equal(a->nvmlDeviceGetComputeInstanceId(m, &ci_id), NVML_SUCCESS);
                assert_int_equal(ci_id, 0);
                assert_false(seen_gi & (1u << gi_id));
                seen_gi |= 1u << gi_id;
                nvmlDeviceAttributes_t at;
                assert_int_equal(a->nvmlDeviceGetAttributes_v2(m, &at), NVML_SUCCESS);
                assert_int_equal(at.multiprocessorCount, 28);
                assert_int_equal(at.gpuInstanceSliceCount, 2);
                assert_int_equal(at.computeInstanceSliceCount, 2);
                assert_int_equal(at.memorySizeMB, 9856);
                nvmlGpuInstance_t gi = NULL;
                assert_int_equal(a->nvmlDeviceGetGpuInstanceById(d, gi_id, &gi), NVML_SUCCESS);
                nvmlGpuInstanceInfo_t gii;
                assert_int_equal(a->nvmlGpuInstanceGetInfo(gi, &gii), NVML_SUCCESS);
                assert_ptr_equal(gii.device, d);
                assert_int_equal(gii.id, gi_id);
                assert_int_equal(gii.profileId, NVML_GPU_INSTANCE_PROFILE_2_SLICE);
                assert_int_equal(gii.placement.start, i * 2);
                assert_int_equal(gii.placement.size, 2);
                nvmlComputeInstance_t ci = NULL;
                assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(gi, ci_id, &ci), NVML_SUCCESS);
                assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(gi, 5, &ci), NVML_ERROR_NOT_FOUND);
                assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(gi, ci_id, &ci), NVML_SUCCESS);
                nvmlComputeInstanceInfo_t cii;
                assert_int_equal(a->nvmlComputeInstanceGetInfo_v2(ci, &cii), NVML_SUCCESS);
                assert_ptr_equal(cii.device, d);
                assert_ptr_equal(cii.gpuInstance, gi);
                assert_int_equal(cii.id, ci_id);
                assert_int_equal(cii.placement.size, 2);
                /* MIG handles are not parents */
                assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(m, 0, &parent), NVML_ERROR_INVALID_ARGUMENT);
        }
        assert_int_equal(a->nvmlDeviceIsMigDeviceHandle(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        assert_int_equal(a->nvmlDeviceGetDeviceHandleFromMigDeviceHandle(d, &parent), NVML_ERROR_INVALID_ARGUMENT);
        nvmlGpuInstance_t gi;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceById(d, 40, &gi), NVML_ERROR_NOT_FOUND);
        nvmlDeviceAttributes_t at;
        assert_int_equal(a->nvmlDeviceGetAttributes_v2(d, &at), NVML_ERROR_NOT_SUPPORTED);
}

static void test_mig_compute_instances_share_a_gpu_instance(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "h200-ci.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0), m0, m1, m2;
        assert_int_equal(count_mig(a, d, 7), 5);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &m0), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 1, &m1), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 2, &m2), NVML_SUCCESS);
        char buf[96];
        assert_int_equal(a->nvmlDeviceGetName(m0, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "NVIDIA H200 MIG 1c.3g.71gb");
        assert_int_equal(a->nvmlDeviceGetName(m2, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "NVIDIA H200 MIG 2g.35gb");
        unsigned g0, g1, c0, c1;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceId(m0, &g0), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceId(m1, &g1), NVML_SUCCESS);
        assert_int_equal(g0, g1);
        assert_int_equal(a->nvmlDeviceGetComputeInstanceId(m0, &c0), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetComputeInstanceId(m1, &c1), NVML_SUCCESS);
        assert_int_not_equal(c0, c1);
        nvmlDeviceAttributes_t at;
        assert_int_equal(a->nvmlDeviceGetAttributes_v2(m1, &at), NVML_SUCCESS);
        assert_int_equal(at.computeInstanceSliceCount, 2);
        assert_int_equal(at.gpuInstanceSliceCount, 3);
        assert_int_equal(at.multiprocessorCount, 40);
        nvmlGpuInstance_t gi;
        nvmlComputeInstance_t ci;
        nvmlComputeInstanceInfo_t cii;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceById(d, g0, &gi), NVML_SUCCESS);
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(gi, c1, &ci), NVML_SUCCESS);
        assert_int_equal(a->nvmlComputeInstanceGetInfo_v2(ci, &cii), NVML_SUCCESS);
        assert_int_equal(cii.placement.start, 1);
        assert_int_equal(cii.placement.size, 2);
        assert_int_equal(cii.profileId, 1);
        nvmlGpuFabricInfo_t fi;
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(d, &fi), NVML_ERROR_NOT_SUPPORTED);
}

int main(int argc, char **argv)
{
        if (api_start(&api, argc, argv) != 0)
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_fr14_mig_disabled),
                T(test_fr14_mig_enabled_no_instances),
                T(test_fr14_mig_three_instances),
                T(test_mig_compute_instances_share_a_gpu_instance),
        };
        int r = cmocka_run_group_tests_name("mock-nvml-mig", tests, NULL, NULL);
        dlclose(api.dl);
        return r;
}
