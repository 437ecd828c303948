/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ABI test of the mock libnvidia-ml.so.1, loaded with dlopen() by path:
 * exports, NEEDED entries, init reference counting (FR15), argument checks,
 * values of the default and fixture profiles.  MIG: test-mig.c.
 * Usage: test-mock-nvml-abi <path to libnvidia-ml.so.1> <fixture folder>
 */
#include "mock-nvml-test.h"

static api_t api;

/* ---- exports and linkage ---- */

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The exported set equals the declared set: every name of mock/nvml/nvml-api.txt plus nvmlErrorString and
 * nvmlInternalGetExportTable (gen-version-script.py's PRIVATE). */
static void test_exports_match_abi_list(void **state)
{
        api_t *a = API(state);
        const char *src = getenv("GV_SOURCE_DIR");
        assert_non_null(src);
        char *path = NULL;
        assert_true(asprintf(&path, "%s/mock/nvml/nvml-api.txt", src) > 0);
        FILE *t = fopen(path, "r");
        free(path);
        assert_non_null(t);
        char *expected[1024];
        size_t n = 0;
        char line[512];
        while (fgets(line, sizeof(line), t)) {
                char name[256], kinds[32];
                if (line[0] == '#' || sscanf(line, "%255s %31s", name, kinds) != 2)
                        continue;
                assert_true(n < 1022);
                expected[n++] = strdup(name);
        }
        fclose(t);
        expected[n++] = strdup("nvmlErrorString");
        expected[n++] = strdup("nvmlInternalGetExportTable");
        assert_true(n > 420); /* nvml.h API 13 (go-nvml v0.13.4-1) declares 427 functions besides nvmlErrorString */
        qsort(expected, n, sizeof(expected[0]), cmp_str);
        /* every modelled name is declared */
#define GV_T_DECLARED(name, params) assert_non_null(bsearch(&(const char *) { #name }, expected, n, sizeof(char *), cmp_str));
        GV_NVML_FUNCTIONS(GV_T_DECLARED)
        GV_NVML_MOCK_FUNCTIONS(GV_T_DECLARED)
#undef GV_T_DECLARED

        char *cmd = NULL;
        assert_true(asprintf(&cmd, "nm -D --defined-only '%s'", a->lib_path) > 0);
        FILE *p = popen(cmd, "r");
        free(cmd);
        assert_non_null(p);
        char *got[1024];
        size_t m = 0;
        while (fgets(line, sizeof(line), p)) {
                char addr[64], type[8], name[256];
                if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
                        continue;
                assert_true(m < 1024);
                got[m++] = strdup(name);
        }
        assert_int_equal(pclose(p), 0);
        qsort(got, m, sizeof(got[0]), cmp_str);
        for (size_t i = 0; i < m && i < n; i++)
                if (strcmp(got[i], expected[i]) != 0)
                        fail_msg("export %zu: got %s, expected %s", i, got[i], expected[i]);
        assert_int_equal(m, n);
        for (size_t i = 0; i < m; i++)
                free(got[i]);
        for (size_t i = 0; i < n; i++)
                free(expected[i]);
}

static void test_aliases_are_the_same_function(void **state)
{
        api_t *a = API(state);
#define GV_T_SAME(plain, versioned) \
        assert_ptr_equal(dlsym(a->dl, #plain), dlsym(a->dl, #versioned));
        GV_NVML_ALIASES(GV_T_SAME)
#undef GV_T_SAME
        assert_null(dlsym(a->dl, "gv_mock_profile_load_file"));
        assert_null(dlsym(a->dl, "yaml_parser_initialize"));
}

static void test_needed_is_libc_only(void **state)
{
        api_t *a = API(state);
        char *cmd = NULL;
        assert_true(asprintf(&cmd, "readelf -d '%s'", a->lib_path) > 0);
        FILE *p = popen(cmd, "r");
        free(cmd);
        assert_non_null(p);
        char line[512];
        int needed = 0, soname = 0;
        while (fgets(line, sizeof(line), p)) {
                char *lb = strchr(line, '['), *rb = lb ? strchr(lb, ']') : NULL;
                if (!lb || !rb)
                        continue;
                *rb = 0;
                if (strstr(line, "(NEEDED)")) {
                        needed++;
                        const char *ok[] = { "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                                             "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1" };
                        bool found = false;
                        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
                                found |= strcmp(lb + 1, ok[i]) == 0;
                        /* sanitizer builds add their runtimes */
                        found |= strncmp(lb + 1, "libasan.so", 10) == 0 || strncmp(lb + 1, "libubsan.so", 11) == 0;
                        if (!found)
                                fail_msg("unexpected NEEDED %s", lb + 1);
                }
                if (strstr(line, "(SONAME)")) {
                        soname++;
                        assert_string_equal(lb + 1, "libnvidia-ml.so.1");
                }
        }
        assert_int_equal(pclose(p), 0);
        assert_true(needed >= 1);
        assert_int_equal(soname, 1);
}

static void test_error_string_for_every_code(void **state)
{
        api_t *a = API(state);
        for (int c = 0; c <= 30; c++) {
                const char *s = a->nvmlErrorString((nvmlReturn_t) c);
                assert_non_null(s);
                assert_true(strlen(s) > 0);
                assert_string_not_equal(s, "Unknown Error");
        }
        assert_string_equal(a->nvmlErrorString(NVML_SUCCESS), "Success");
        assert_string_equal(a->nvmlErrorString(NVML_ERROR_UNKNOWN), "Unknown Error");
        assert_string_equal(a->nvmlErrorString((nvmlReturn_t) 12345), "Unknown Error");
        /* works before init */
        assert_string_equal(a->nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
}

/* ---- FR15 ---- */

static void test_fr15_count_before_init_uninitialized(void **state)
{
        api_t *a = API(state);
        unsigned n = 99;
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(n, 99);
        ((nvmlReturn_t(*)(unsigned *)) dlsym(a->dl, "nvmlDeviceGetCount"))(&n);
        assert_int_equal(((nvmlReturn_t(*)(unsigned *)) dlsym(a->dl, "nvmlDeviceGetCount"))(&n),
                         NVML_ERROR_UNINITIALIZED);
        char buf[80];
        int v;
        nvmlDevice_t d = NULL;
        nvmlEventSet_t set = NULL;
        nvmlEventData_t ev;
        assert_int_equal(a->nvmlSystemGetDriverVersion(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion(&v), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlDeviceGetHandleByUUID("GPU-x", &d), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlDeviceGetName(NULL, buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlEventSetCreate(&set), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlEventSetWait_v2(NULL, &ev, 1), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlEventSetFree(NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(NULL, 0, &d), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlGpuInstanceGetInfo(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlComputeInstanceGetInfo_v2(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlDeviceGetTemperature(NULL, NVML_TEMPERATURE_GPU, NULL), NVML_ERROR_UNINITIALIZED);
}

static void test_fr15_shutdown_without_init_uninitialized(void **state)
{
        api_t *a = API(state);
        assert_int_equal(a->nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

static void test_fr15_null_pointer_invalid_argument(void **state)
{
        api_t *a = API(state);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0);
        assert_int_equal(a->nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlSystemGetDriverVersion(NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlSystemGetNVMLVersion(NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetHandleByUUID(NULL, &d), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetHandleByPciBusId_v2(NULL, &d), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetName(d, NULL, 64), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetUUID(d, NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetIndex(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMinorNumber(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMemoryInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMemoryInfo_v2(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        int mj;
        assert_int_equal(a->nvmlDeviceGetCudaComputeCapability(d, &mj, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetArchitecture(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetBrand(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetSerial(d, NULL, 30), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetVbiosVersion(d, NULL, 32), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetBoardPartNumber(d, NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
        unsigned u;
        assert_int_equal(a->nvmlDeviceGetMigMode(d, &u, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMaxMigDeviceCount(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(d, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceIsMigDeviceHandle(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetDeviceHandleFromMigDeviceHandle(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceId(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetComputeInstanceId(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetAttributes_v2(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceById(d, 1, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlGpuInstanceGetInfo(NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(NULL, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlComputeInstanceGetInfo_v2(NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfoV(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetTopologyCommonAncestor(d, d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetNvLinkRemotePciInfo_v2(d, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlEventSetCreate(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetSupportedEventTypes(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlEventSetWait_v2(NULL, NULL, 1), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlEventSetFree(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPowerUsage(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimit(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPowerManagementDefaultLimit(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetEnforcedPowerLimit(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimitConstraints(d, &u, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetUtilizationRates(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetFanSpeed(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPersistenceMode(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetComputeMode(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        nvmlEnableState_t es;
        assert_int_equal(a->nvmlDeviceGetEccMode(d, &es, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPerformanceState(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetDisplayMode(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetDisplayActive(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_fr15_init_twice_shutdown_once_still_initialised(void **state)
{
        api_t *a = API(state);
        unsigned n = 0;
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlInitWithFlags(0), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 8);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(a->nvmlInitWithFlags(0x80), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS), NVML_SUCCESS);
}

/* ---- handles and buffers ---- */

static void test_bad_handles(void **state)
{
        api_t *a = API(state);
        char buf[96];
        int local;
        nvmlDevice_t bogus = (nvmlDevice_t) (void *) &local;
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d7 = gpu(a, 7), d0 = gpu(a, 0);
        assert_int_equal(a->nvmlDeviceGetName(NULL, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetName(bogus, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetName((nvmlDevice_t) ((char *) d0 + 1), buf, sizeof(buf)),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlGpuInstanceGetInfo((nvmlGpuInstance_t) (void *) &local, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlEventSetFree((nvmlEventSet_t) (void *) &local), NVML_ERROR_INVALID_ARGUMENT);
        nvmlDevice_t d = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(8, &d), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        /* after shutdown: UNINITIALIZED; after re-init with 2 GPUs, GPU 7's handle is invalid */
        assert_int_equal(a->nvmlDeviceGetName(d7, buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
        setenv("MOCK_NVML_NUM_DEVICES", "2", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetName(d7, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetName(d0, buf, sizeof(buf)), NVML_SUCCESS);
}

static void test_small_buffers_insufficient_size(void **state)
{
        api_t *a = API(state);
        char buf[96];
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0);
        assert_int_equal(a->nvmlSystemGetDriverVersion(buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlSystemGetDriverVersion(buf, 11), NVML_SUCCESS);
        assert_string_equal(buf, "550.163.01");
        assert_int_equal(a->nvmlSystemGetDriverVersion(buf, 10), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlSystemGetNVMLVersion(buf, 3), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetName(d, buf, 8), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetUUID(d, buf, 40), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetUUID(d, buf, 0), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetSerial(d, buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetVbiosVersion(d, buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(a->nvmlDeviceGetBoardPartNumber(d, buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
}

/* ---- values of the default profile (8 x A100-SXM4-40GB) ---- */

/* The built-in default profile (8 A100-SXM4-40GB): versions, names, UUIDs, indexes and PCI bus ids. */
static void test_default_profile_identity(void **state)
{
        api_t *a = API(state);
        setenv("NODE_NAME", "node-a", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        char buf[96], uuid0[96];
        int v;
        unsigned u;
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion(&v), NVML_SUCCESS);
        assert_int_equal(v, 12040);
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion_v2(&v), NVML_SUCCESS);
        assert_int_equal(a->nvmlSystemGetNVMLVersion(buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "12.550.163.01");
        nvmlDevice_t d = gpu(a, 0), d1 = gpu(a, 1), d4 = gpu(a, 4);
        assert_int_equal(a->nvmlDeviceGetName(d, buf, NVML_DEVICE_NAME_BUFFER_SIZE), NVML_SUCCESS);
        assert_string_equal(buf, "NVIDIA A100-SXM4-40GB");
        assert_int_equal(a->nvmlDeviceGetUUID(d, uuid0, sizeof(uuid0)), NVML_SUCCESS);
        assert_true(uuid_shape(uuid0, "GPU-"));
        assert_int_equal(a->nvmlDeviceGetUUID(d1, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_not_equal(buf, uuid0);
        nvmlDevice_t by = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByUUID(uuid0, &by), NVML_SUCCESS);
        assert_ptr_equal(by, d);
        assert_int_equal(a->nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &by),
                         NVML_ERROR_NOT_FOUND);
        assert_int_equal(a->nvmlDeviceGetIndex(d4, &u), NVML_SUCCESS);
        assert_int_equal(u, 4);
        assert_int_equal(a->nvmlDeviceGetMinorNumber(d4, &u), NVML_SUCCESS);
        assert_int_equal(u, 4);
        nvmlPciInfo_t pci;
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d1, &pci), NVML_SUCCESS);
        assert_string_equal(pci.busId, "00000000:0F:00.0");
        assert_string_equal(pci.busIdLegacy, "0000:0F:00.0");
        assert_int_equal(pci.pciDeviceId, 0x20B010DE);
        assert_int_equal(pci.bus, 0x0F);
        assert_int_equal(a->nvmlDeviceGetHandleByPciBusId_v2("0000:0F:00.0", &by), NVML_SUCCESS);
        assert_ptr_equal(by, d1);
        assert_int_equal(a->nvmlDeviceGetHandleByPciBusId_v2("00000000:0f:00.0", &by), NVML_SUCCESS);
        assert_ptr_equal(by, d1);
        assert_int_equal(a->nvmlDeviceGetHandleByPciBusId_v2("0000:FF:00.0", &by), NVML_ERROR_NOT_FOUND);
}

/* The default profile's memory, model, telemetry and modes, as the A100-SXM4-40GB captures show them. */
static void test_default_profile_memory_and_telemetry(void **state)
{
        api_t *a = API(state);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        char buf[96];
        int mj, mn;
        unsigned u, u2;
        nvmlDevice_t d = gpu(a, 0);
        nvmlMemory_t mem;
        assert_int_equal(a->nvmlDeviceGetMemoryInfo(d, &mem), NVML_SUCCESS);
        assert_int_equal(mem.total, 40960ULL << 20);
        assert_int_equal(mem.free + mem.used, mem.total);
        nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
        assert_int_equal(a->nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_SUCCESS);
        assert_int_equal(m2.total, 40960ULL << 20);
        assert_int_equal(m2.reserved, 605ULL << 20); /* the A100-SXM4-40GB capture (510.47.03): 605 MiB */
        assert_int_equal(m2.free + m2.used + m2.reserved, m2.total);
        m2.version = 1;
        assert_int_equal(a->nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(a->nvmlDeviceGetCudaComputeCapability(d, &mj, &mn), NVML_SUCCESS);
        assert_int_equal(mj * 10 + mn, 80);
        nvmlDeviceArchitecture_t arch;
        assert_int_equal(a->nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
        assert_int_equal(arch, NVML_DEVICE_ARCH_AMPERE);
        nvmlBrandType_t brand;
        assert_int_equal(a->nvmlDeviceGetBrand(d, &brand), NVML_SUCCESS);
        assert_int_equal(brand, NVML_BRAND_NVIDIA);
        assert_int_equal(a->nvmlDeviceGetSerial(d, buf, NVML_DEVICE_SERIAL_BUFFER_SIZE), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetVbiosVersion(d, buf, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE), NVML_SUCCESS);
        assert_string_equal(buf, "92.00.45.00.03");
        assert_int_equal(a->nvmlDeviceGetBoardPartNumber(d, buf, sizeof(buf)), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u), NVML_SUCCESS);
        assert_int_equal(u, 33);
        assert_int_equal(a->nvmlDeviceGetTemperature(d, (nvmlTemperatureSensors_t) 5, &u), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetPowerUsage(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 72000);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimit(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 400000);
        assert_int_equal(a->nvmlDeviceGetPowerManagementDefaultLimit(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 400000);
        assert_int_equal(a->nvmlDeviceGetEnforcedPowerLimit(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 400000);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimitConstraints(d, &u, &u2), NVML_SUCCESS);
        assert_int_equal(u, 100000);
        assert_int_equal(u2, 400000);
        assert_int_equal(a->nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &u), NVML_SUCCESS);
        assert_int_equal(u, 1215);
        assert_int_equal(a->nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_GRAPHICS, &u), NVML_SUCCESS);
        assert_int_equal(u, 1410);
        assert_int_equal(a->nvmlDeviceGetMaxClockInfo(d, (nvmlClockType_t) 9, &u), NVML_ERROR_INVALID_ARGUMENT);
        nvmlUtilization_t ut;
        assert_int_equal(a->nvmlDeviceGetUtilizationRates(d, &ut), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetFanSpeed(d, &u), NVML_ERROR_NOT_SUPPORTED);
        nvmlEnableState_t e1, e2;
        assert_int_equal(a->nvmlDeviceGetPersistenceMode(d, &e1), NVML_SUCCESS);
        assert_int_equal(e1, NVML_FEATURE_ENABLED);
        nvmlComputeMode_t cm;
        assert_int_equal(a->nvmlDeviceGetComputeMode(d, &cm), NVML_SUCCESS);
        assert_int_equal(cm, NVML_COMPUTEMODE_DEFAULT);
        assert_int_equal(a->nvmlDeviceGetEccMode(d, &e1, &e2), NVML_SUCCESS);
        assert_int_equal(e1, NVML_FEATURE_ENABLED);
        nvmlPstates_t ps;
        assert_int_equal(a->nvmlDeviceGetPerformanceState(d, &ps), NVML_SUCCESS);
        assert_int_equal(ps, 0);
        /* The A100 captures print display_mode Enabled, display_active Disabled. */
        assert_int_equal(a->nvmlDeviceGetDisplayMode(d, &e1), NVML_SUCCESS);
        assert_int_equal(e1, NVML_FEATURE_ENABLED);
        assert_int_equal(a->nvmlDeviceGetDisplayActive(d, &e1), NVML_SUCCESS);
        assert_int_equal(e1, NVML_FEATURE_DISABLED);
        unsigned cnt = 0;
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, NULL), NVML_SUCCESS);
        assert_int_equal(cnt, 0);
}

/* The default profile's NVLinks, topology, events and MIG profiles. */
static void test_default_profile_links_topology_and_mig_profiles(void **state)
{
        api_t *a = API(state);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0), d1 = gpu(a, 1), d2 = gpu(a, 2), d4 = gpu(a, 4);
        nvmlEnableState_t e1;
        nvmlPciInfo_t pci;
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, 11, &e1), NVML_SUCCESS);
        assert_int_equal(e1, NVML_FEATURE_ENABLED);
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, 12, &e1), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, NVML_NVLINK_MAX_LINKS, &e1), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetNvLinkRemotePciInfo_v2(d, 0, &pci), NVML_SUCCESS);
        assert_int_equal(pci.pciDeviceId & 0xffff, 0x10DE);
        nvmlGpuFabricInfo_t fi;
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(d, &fi), NVML_ERROR_NOT_SUPPORTED);
        nvmlGpuTopologyLevel_t lvl;
        assert_int_equal(a->nvmlDeviceGetTopologyCommonAncestor(d, d1, &lvl), NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_MULTIPLE);
        assert_int_equal(a->nvmlDeviceGetTopologyCommonAncestor(d, d2, &lvl), NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_NODE);
        assert_int_equal(a->nvmlDeviceGetTopologyCommonAncestor(d, d4, &lvl), NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_SYSTEM);
        unsigned long long ev;
        assert_int_equal(a->nvmlDeviceGetSupportedEventTypes(d, &ev), NVML_SUCCESS);
        assert_true(ev & nvmlEventTypeXidCriticalError);
        unsigned cur, pend;
        assert_int_equal(a->nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
        nvmlGpuInstanceProfileInfo_t pi;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &pi),
                         NVML_SUCCESS);
        assert_int_equal(pi.memorySizeMB, 4864);
        assert_int_equal(pi.instanceCount, 7);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_8_SLICE, &pi),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_COUNT, &pi),
                         NVML_ERROR_INVALID_ARGUMENT);
}

/* UUIDs derive from the node name: the same after a restart on one node, others on another node. */
static void test_default_profile_uuids_follow_the_node_name(void **state)
{
        api_t *a = API(state);
        char buf[96], uuid0[96];
        setenv("NODE_NAME", "node-a", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetUUID(gpu(a, 0), uuid0, sizeof(uuid0)), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetUUID(gpu(a, 0), buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, uuid0);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        setenv("NODE_NAME", "node-b", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetUUID(gpu(a, 0), buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_not_equal(buf, uuid0);
}

static void test_unsupported_fields_not_supported(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "unsupported.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0), d1 = gpu(a, 1);
        char buf[96];
        unsigned u, u2;
        nvmlEnableState_t e;
        nvmlComputeMode_t cm;
        nvmlPstates_t ps;
        nvmlUtilization_t ut;
        nvmlGpuFabricInfo_t fi;
        assert_int_equal(a->nvmlDeviceGetSerial(d, buf, sizeof(buf)), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetVbiosVersion(d, buf, sizeof(buf)), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetBoardPartNumber(d, buf, sizeof(buf)), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetMinorNumber(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPowerUsage(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimit(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPowerManagementDefaultLimit(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetEnforcedPowerLimit(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPowerManagementLimitConstraints(d, &u, &u2), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetUtilizationRates(d, &ut), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetFanSpeed(d, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPersistenceMode(d, &e), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetComputeMode(d, &cm), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetEccMode(d, &e, &e), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetPerformanceState(d, &ps), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetDisplayMode(d, &e), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetDisplayActive(d, &e), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, 0, &e), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(d, &fi), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetMigMode(d, &u, &u2), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetMaxMigDeviceCount(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        nvmlGpuInstanceProfileInfo_t pi;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, 0, &pi), NVML_ERROR_NOT_SUPPORTED);
        /* overrides: uuid, bus id, processes */
        assert_int_equal(a->nvmlDeviceGetUUID(d, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "GPU-11111111-2222-3333-4444-555555555555");
        nvmlPciInfo_t pci;
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
        assert_string_equal(pci.busId, "00000000:3B:00.0");
        unsigned n = 0;
        nvmlProcessInfo_t pr[4];
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 2);
        n = 1;
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, &n, pr), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 2);
        n = 4;
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d, &n, pr), NVML_SUCCESS);
        assert_int_equal(n, 2);
        assert_int_equal(pr[0].pid, 1234);
        assert_int_equal(pr[0].usedGpuMemory, 1024ULL << 20);
        assert_int_equal(pr[1].pid, 5678);
        assert_int_equal(a->nvmlDeviceGetComputeRunningProcesses_v3(d1, &n, pr), NVML_ERROR_NOT_SUPPORTED);
        int v;
        assert_int_equal(a->nvmlSystemGetCudaDriverVersion(&v), NVML_SUCCESS);
        assert_int_equal(v, 12040);
}

static void test_nvml_mock_schema_profile(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "nvml-mock-schema.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        unsigned n = 0, u;
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 2);
        nvmlDevice_t d = gpu(a, 1);
        char buf[96];
        assert_int_equal(a->nvmlDeviceGetUUID(d, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "GPU-12345678-1234-1234-1234-123456780001");
        nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
        assert_int_equal(a->nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_SUCCESS);
        assert_int_equal(m2.total, 40960ULL << 20);
        assert_int_equal(a->nvmlDeviceGetPowerUsage(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 72000);
        assert_int_equal(a->nvmlDeviceGetFanSpeed(d, &u), NVML_ERROR_NOT_SUPPORTED);
        nvmlEnableState_t e;
        assert_int_equal(a->nvmlDeviceGetNvLinkState(d, 11, &e), NVML_SUCCESS);
        nvmlPciInfo_t pci;
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
        assert_string_equal(pci.busId, "00000000:0F:00.0");
        assert_int_equal(pci.pciDeviceId, 0x20B010DE);
        nvmlGpuInstanceProfileInfo_t pi;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_7_SLICE, &pi),
                         NVML_SUCCESS);
        assert_int_equal(pi.sliceCount, 7);
}

static void test_every_builtin_profile_through_the_library(void **state)
{
        api_t *a = API(state);
        static const struct {
                const char *file, *name;
                unsigned arch;
                bool fan, mig, fabric;
        } t[] = {
                { "a100-sxm4-40gb.yaml", "NVIDIA A100-SXM4-40GB", NVML_DEVICE_ARCH_AMPERE, false, true, false },
                { "a100-sxm4-80gb.yaml", "NVIDIA A100-SXM4-80GB", NVML_DEVICE_ARCH_AMPERE, false, true, false },
                { "h100-sxm5-80gb.yaml", "NVIDIA H100 80GB HBM3", NVML_DEVICE_ARCH_HOPPER, false, true, true },
                { "h200.yaml", "NVIDIA H200", NVML_DEVICE_ARCH_HOPPER, false, true, true },
                { "l40s.yaml", "NVIDIA L40S", NVML_DEVICE_ARCH_ADA, false, false, false },
                { "t4.yaml", "Tesla T4", NVML_DEVICE_ARCH_TURING, false, false, false },
                { "b200.yaml", "NVIDIA B200", NVML_DEVICE_ARCH_BLACKWELL, false, true, true },
                { "gb200.yaml", "NVIDIA GB200", NVML_DEVICE_ARCH_BLACKWELL, false, true, true },
                { "gb300.yaml", "NVIDIA GB300", NVML_DEVICE_ARCH_BLACKWELL, false, true, true },
        };
        const char *src = getenv("GV_SOURCE_DIR");
        if (!src)
                skip();
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                char *p = NULL;
                assert_true(asprintf(&p, "%s/mock/profiles/%s", src, t[i].file) > 0);
                setenv("MOCK_NVML_CONFIG", p, 1);
                free(p);
                assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
                nvmlDevice_t d = gpu(a, 0);
                char buf[96];
                unsigned u, u2;
                nvmlDeviceArchitecture_t arch;
                assert_int_equal(a->nvmlDeviceGetName(d, buf, sizeof(buf)), NVML_SUCCESS);
                assert_string_equal(buf, t[i].name);
                assert_int_equal(a->nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
                assert_int_equal(arch, t[i].arch);
                assert_int_equal(a->nvmlDeviceGetFanSpeed(d, &u), t[i].fan ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
                assert_int_equal(a->nvmlDeviceGetMigMode(d, &u, &u2), t[i].mig ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
                nvmlGpuFabricInfoV_t fv = { .version = nvmlGpuFabricInfo_v3 };
                assert_int_equal(a->nvmlDeviceGetGpuFabricInfoV(d, &fv),
                                 t[i].fabric ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
                if (t[i].fabric)
                        assert_int_equal(fv.state, NVML_GPU_FABRIC_STATE_COMPLETED);
                fv.version = 7;
                assert_int_equal(a->nvmlDeviceGetGpuFabricInfoV(d, &fv), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
                assert_int_equal(a->nvmlDeviceGetPowerManagementLimit(d, &u), NVML_SUCCESS);
                assert_true(u >= 70000);
                assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        }
}

int main(int argc, char **argv)
{
        if (api_start(&api, argc, argv) != 0)
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_exports_match_abi_list),
                T(test_aliases_are_the_same_function),
                T(test_needed_is_libc_only),
                T(test_error_string_for_every_code),
                T(test_fr15_count_before_init_uninitialized),
                T(test_fr15_shutdown_without_init_uninitialized),
                T(test_fr15_null_pointer_invalid_argument),
                T(test_fr15_init_twice_shutdown_once_still_initialised),
                T(test_bad_handles),
                T(test_small_buffers_insufficient_size),
                T(test_default_profile_identity),
                T(test_default_profile_memory_and_telemetry),
                T(test_default_profile_links_topology_and_mig_profiles),
                T(test_default_profile_uuids_follow_the_node_name),
                T(test_unsupported_fields_not_supported),
                T(test_nvml_mock_schema_profile),
                T(test_every_builtin_profile_through_the_library),
        };
        int r = cmocka_run_group_tests_name("mock-nvml-abi", tests, NULL, NULL);
        dlclose(api.dl);
        return r;
}
