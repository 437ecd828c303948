/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection of the mock libnvidia-ml.so.1 (docs/mock-nvml.md): init
 * errors, lost GPUs, fabric state, Xid events on a schedule and from the
 * control file, waited for the way the device plugin does (register Xid
 * events on every GPU, wait 5000 ms, TIMEOUT means keep waiting), and the
 * runtime state file of `mock set` (MOCK_NVML_STATE_FILE).
 * Usage: test-mock-nvml-faults <path to libnvidia-ml.so.1> <fixture folder>
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "mock-nvml-test.h"
#include "../mock-state-file.h"

static api_t api;

static long now_ms(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (long) t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static void test_init_error_from_environment(void **state)
{
        api_t *a = API(state);
        static const struct {
                const char *value;
                nvmlReturn_t expect;
        } t[] = {
                { "driver-not-loaded", NVML_ERROR_DRIVER_NOT_LOADED },
                { "no-permission", NVML_ERROR_NO_PERMISSION },
                { "lib-rm-version-mismatch", NVML_ERROR_LIB_RM_VERSION_MISMATCH },
                { "NVML_ERROR_DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED },
                { "18", NVML_ERROR_LIB_RM_VERSION_MISMATCH },
                { "bogus", NVML_ERROR_UNKNOWN },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                setenv("MOCK_NVML_INIT_ERROR", t[i].value, 1);
                assert_int_equal(a->nvmlInit_v2(), t[i].expect);
                assert_int_equal(a->nvmlInitWithFlags(0), t[i].expect);
                unsigned n;
                assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
                assert_int_equal(a->nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
        }
        setenv("MOCK_NVML_INIT_ERROR", "none", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
}

static void test_init_error_from_profile(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "init-error.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_ERROR_LIB_RM_VERSION_MISMATCH);
        assert_int_equal(a->nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

static void test_bad_profile_fails_init(void **state)
{
        api_t *a = API(state);
        setenv("MOCK_NVML_CONFIG", "/nonexistent/profile.yaml", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_ERROR_UNKNOWN);
        use_fixture(a, "mig-fr14.yaml");
        setenv("MOCK_NVML_NUM_DEVICES", "65", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_ERROR_UNKNOWN);
        setenv("MOCK_NVML_NUM_DEVICES", "64", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        unsigned n;
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 64);
        nvmlPciInfo_t pci;
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(gpu(a, 63), &pci), NVML_SUCCESS);
        assert_string_equal(pci.busId, "00000007:BD:00.0");
}

static void test_lost_gpu_from_environment(void **state)
{
        api_t *a = API(state);
        setenv("MOCK_NVML_LOST_GPUS", "2,5", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        unsigned n;
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 8);
        nvmlDevice_t d = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(2, &d), NVML_ERROR_GPU_IS_LOST);
        assert_non_null(d);
        char buf[96];
        unsigned u;
        nvmlMemory_t mem;
        assert_int_equal(a->nvmlDeviceGetName(d, buf, sizeof(buf)), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(a->nvmlDeviceGetUUID(d, buf, sizeof(buf)), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(a->nvmlDeviceGetMemoryInfo(d, &mem), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(a->nvmlDeviceGetIndex(d, &u), NVML_ERROR_GPU_IS_LOST);
        /* As the real driver: the PCI info of a lost GPU's handle still answers (its bus id names it). */
        nvmlPciInfo_t lost_pci, ok_pci;
        memset(&lost_pci, 0, sizeof(lost_pci));
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, &lost_pci), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
        nvmlDevice_t d3 = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(3, &d3), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d3, &ok_pci), NVML_SUCCESS);
        assert_int_equal(strlen(lost_pci.busId), 16);
        assert_string_not_equal(lost_pci.busId, ok_pci.busId);
        nvmlDevice_t by_bus = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByPciBusId_v2(lost_pci.busId, &by_bus), NVML_ERROR_GPU_IS_LOST);
        assert_ptr_equal(by_bus, d);
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(5, &d), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(3, &d), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetName(d, buf, sizeof(buf)), NVML_SUCCESS);
}

static void test_faults_from_profile(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "faults.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(1, &d), NVML_ERROR_GPU_IS_LOST);
        nvmlGpuFabricInfo_t fi;
        d = gpu(a, 0);
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(d, &fi), NVML_SUCCESS);
        assert_int_equal(fi.state, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
        assert_int_equal(fi.cliqueId, 7);
}

static void test_fabric_state_from_environment(void **state)
{
        api_t *a = API(state);
        const char *src = getenv("GV_SOURCE_DIR");
        if (!src)
                skip();
        char *p = NULL;
        assert_true(asprintf(&p, "%s/mock/profiles/h100-sxm5-80gb.yaml", src) > 0);
        setenv("MOCK_NVML_CONFIG", p, 1);
        free(p);
        setenv("MOCK_NVML_FABRIC_STATE", "in-progress", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlGpuFabricInfoV_t fv = { .version = nvmlGpuFabricInfo_v2 };
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfoV(gpu(a, 3), &fv), NVML_SUCCESS);
        assert_int_equal(fv.state, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        setenv("MOCK_NVML_FABRIC_STATE", "completed", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlGpuFabricInfo_t fi;
        assert_int_equal(a->nvmlDeviceGetGpuFabricInfo(gpu(a, 3), &fi), NVML_SUCCESS);
        assert_int_equal(fi.state, NVML_GPU_FABRIC_STATE_COMPLETED);
        assert_int_equal(fi.status, NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        setenv("MOCK_NVML_FABRIC_STATE", "sideways", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_ERROR_UNKNOWN);
}

/* The device plugin's health loop: register Xid events on every GPU of the set. */
static nvmlEventSet_t register_all(api_t *a)
{
        nvmlEventSet_t set = NULL;
        unsigned n = 0;
        assert_int_equal(a->nvmlEventSetCreate(&set), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        for (unsigned i = 0; i < n; i++) {
                nvmlDevice_t d = NULL;
                if (a->nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS)
                        continue;
                unsigned long long types = 0;
                assert_int_equal(a->nvmlDeviceGetSupportedEventTypes(d, &types), NVML_SUCCESS);
                assert_int_equal(a->nvmlDeviceRegisterEvents(d, types & nvmlEventTypeXidCriticalError, set),
                                 NVML_SUCCESS);
        }
        return set;
}

static void test_xid_scheduled_event(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "faults.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlEventSet_t set = register_all(a);
        nvmlEventData_t ev;
        long t0 = now_ms();
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
        long dt = now_ms() - t0;
        assert_true(dt < 2000);
        assert_int_equal(ev.eventType, nvmlEventTypeXidCriticalError);
        assert_int_equal(ev.eventData, 79);
        assert_ptr_equal(ev.device, gpu(a, 2));
        assert_int_equal(ev.gpuInstanceId, 0xFFFFFFFFu);
        /* delivered once; nothing else: TIMEOUT after about the timeout */
        t0 = now_ms();
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 150), NVML_ERROR_TIMEOUT);
        dt = now_ms() - t0;
        assert_true(dt >= 140 && dt < 1500);
        assert_int_equal(((nvmlEventSetWait_v2_fn) dlsym(a->dl, "nvmlEventSetWait"))(set, &ev, 0), NVML_ERROR_TIMEOUT);
        assert_int_equal(a->nvmlEventSetFree(set), NVML_SUCCESS);
        assert_int_equal(a->nvmlEventSetFree(set), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_xid_from_environment_schedule(void **state)
{
        api_t *a = API(state);
        setenv("MOCK_NVML_XIDS", "2:79:100,3:48", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlEventSet_t set = register_all(a);
        nvmlEventData_t ev;
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
        assert_int_equal(ev.eventData, 48);
        assert_ptr_equal(ev.device, gpu(a, 3));
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
        assert_int_equal(ev.eventData, 79);
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 50), NVML_ERROR_TIMEOUT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        setenv("MOCK_NVML_XIDS", "2-79", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_ERROR_UNKNOWN);
}

static void test_xid_not_registered_not_delivered(void **state)
{
        api_t *a = API(state);
        setenv("MOCK_NVML_XIDS", "1:79", 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlEventSet_t set = NULL;
        assert_int_equal(a->nvmlEventSetCreate(&set), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceRegisterEvents(gpu(a, 0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceRegisterEvents(gpu(a, 0), 1ULL << 40, set), NVML_ERROR_NOT_SUPPORTED);
        nvmlEventData_t ev;
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 100), NVML_ERROR_TIMEOUT);
}

struct writer {
        const char *path;
        const char *text;
        int delay_ms;
};

static void *write_later(void *arg)
{
        struct writer *w = arg;
        struct timespec ts = { .tv_sec = w->delay_ms / 1000, .tv_nsec = (w->delay_ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        FILE *f = fopen(w->path, "a");
        if (f) {
                fputs(w->text, f);
                fclose(f);
        }
        return NULL;
}

static void test_xid_control_file(void **state)
{
        api_t *a = API(state);
        char path[] = "/tmp/mock-nvml-xid-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "0 13\n", 5), 5); /* written before the set exists: not delivered */
        close(fd);
        setenv("MOCK_NVML_XID_FILE", path, 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlEventSet_t set = register_all(a);
        nvmlEventData_t ev;
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 100), NVML_ERROR_TIMEOUT);

        struct writer w = { .path = path, .text = "garbage line\n2 79\n", .delay_ms = 200 };
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, write_later, &w), 0);
        long t0 = now_ms();
        nvmlReturn_t r;
        while ((r = a->nvmlEventSetWait_v2(set, &ev, 5000)) == NVML_ERROR_TIMEOUT)
                ;
        long dt = now_ms() - t0;
        pthread_join(th, NULL);
        assert_int_equal(r, NVML_SUCCESS);
        assert_true(dt >= 150 && dt < 3000);
        assert_int_equal(ev.eventData, 79);
        assert_ptr_equal(ev.device, gpu(a, 2));
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 100), NVML_ERROR_TIMEOUT);

        /* a second set created now sees only later lines; GPU 9 does not exist and is skipped */
        nvmlEventSet_t set2 = register_all(a);
        w = (struct writer) { .path = path, .text = "9 79\n1 31\n", .delay_ms = 0 };
        write_later(&w);
        assert_int_equal(a->nvmlEventSetWait_v2(set2, &ev, 5000), NVML_SUCCESS);
        assert_int_equal(ev.eventData, 31);
        assert_int_equal(a->nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
        assert_int_equal(ev.eventData, 31);
        assert_int_equal(a->nvmlEventSetFree(set2), NVML_SUCCESS);
        unlink(path);
}

static void test_state_file_from_environment(void **state)
{
        api_t *a = API(state);
        char path[] = "/tmp/mock-nvml-state-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        th_replace_state(path, "1 temperature_c=70\n");
        setenv("MOCK_NVML_STATE_FILE", path, 1);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t g0 = gpu(a, 0), g1 = gpu(a, 1);
        unsigned t;
        assert_int_equal(a->nvmlDeviceGetTemperature(g1, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        assert_int_equal(t, 70);
        assert_int_equal(a->nvmlDeviceGetTemperature(g0, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        assert_int_equal(t, 33);

        /* A file that does not parse is ignored: the last good state stays. */
        th_replace_state(path, "1 temperature_c=abc\n");
        assert_int_equal(a->nvmlDeviceGetTemperature(g1, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        assert_int_equal(t, 70);

        /* A new state replaces the old one as a whole: GPU 1 is back at 33 before it is lost. */
        th_replace_state(path, "1 lost=true\n0 ecc_uncorrected=3\n");
        char name[96];
        assert_int_equal(a->nvmlDeviceGetName(g1, name, sizeof(name)), NVML_ERROR_GPU_IS_LOST);
        nvmlDevice_t h;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(1, &h), NVML_ERROR_GPU_IS_LOST);
        unsigned long long n;
        assert_int_equal(a->nvmlDeviceGetTotalEccErrors(g0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &n),
                         NVML_SUCCESS);
        assert_int_equal(n, 3);

        /* Removed (`mock set --clear`): the profile's values. */
        unlink(path);
        usleep(2000);
        assert_int_equal(a->nvmlDeviceGetTemperature(g1, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
        assert_int_equal(t, 33);
        assert_int_equal(a->nvmlDeviceGetTotalEccErrors(g0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &n),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
}

int main(int argc, char **argv)
{
        if (api_start(&api, argc, argv) != 0)
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_init_error_from_environment),
                T(test_init_error_from_profile),
                T(test_bad_profile_fails_init),
                T(test_lost_gpu_from_environment),
                T(test_faults_from_profile),
                T(test_fabric_state_from_environment),
                T(test_xid_scheduled_event),
                T(test_xid_from_environment_schedule),
                T(test_xid_not_registered_not_delivered),
                T(test_xid_control_file),
                T(test_state_file_from_environment),
        };
        int r = cmocka_run_group_tests_name("mock-nvml-faults", tests, NULL, NULL);
        dlclose(api.dl);
        return r;
}
