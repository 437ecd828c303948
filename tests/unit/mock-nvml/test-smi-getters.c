/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock NVML queries behind nvidia-smi's newer -q rows (mock/nvml/libnvml-smi.c): GSP firmware
 * version, module id, PCI class codes, addressing mode, C2C mode, PDI; and the row remapper under
 * MIG.  Expected values are the real captures' (mock/nvml/model-facts.c cites them).
 */
#include "mock-nvml-test.h"

#include <unistd.h>

static api_t api;

/*
 * Points MOCK_NVML_CONFIG at a copy of built-in profile @file on driver @driver, with MIG enabled and
 * two instances of @mig_profile when it is not NULL.  Skips the test without GV_SOURCE_DIR.
 */
static void use_builtin(const char *file, const char *driver, const char *mig_profile)
{
        const char *src = getenv("GV_SOURCE_DIR");
        if (!src)
                skip();
        char *path = NULL, *text = NULL, *out = NULL;
        assert_true(asprintf(&path, "%s/mock/profiles/%s", src, file) > 0);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t cap = 1 << 16;
        text = calloc(1, cap);
        assert_non_null(text);
        size_t n = fread(text, 1, cap - 1, f);
        fclose(f);
        assert_true(n > 0 && n < cap - 1);
        /* the driver version line ("  version: "550.163.01""), then MIG mode and devices */
        char *v = strstr(text, "version: \"");
        assert_non_null(v);
        char *end = strchr(v + 10, '"');
        assert_non_null(end);
        *v = '\0';
        const char *rest = end + 1;
        char *mig_text = NULL;
        if (mig_profile) {
                char *mode = strstr(rest, "mode: disabled"), *dev = strstr(rest, "devices: []");
                assert_non_null(mode);
                assert_non_null(dev);
                *mode = '\0';
                *dev = '\0';
                assert_true(asprintf(&mig_text, "%smode: enabled%sdevices: [{profile: %s}, {profile: %s}]%s", rest,
                                     mode + strlen("mode: disabled"), mig_profile, mig_profile,
                                     dev + strlen("devices: []")) > 0);
                rest = mig_text;
        }
        assert_true(asprintf(&out, "%sversion: \"%s\"%s", text, driver, rest) > 0);
        char tmpl[] = "/tmp/gv-smi-getters-XXXXXX";
        int fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, out, strlen(out)), (ssize_t) strlen(out));
        close(fd);
        setenv("MOCK_NVML_CONFIG", tmpl, 1);
        assert_int_equal(api.nvmlInit_v2(), NVML_SUCCESS);
        unlink(tmpl); /* read at init */
        free(path);
        free(text);
        free(out);
        free(mig_text);
}

/* The first MIG device of GPU 0 (the profile has MIG on). */
static nvmlDevice_t mig0(api_t *a)
{
        nvmlDevice_t m = NULL;
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(gpu(a, 0), 0, &m), NVML_SUCCESS);
        return m;
}

static void test_gsp_firmware_version(void **state)
{
        api_t *a = API(state);
        static const char *const files[] = { "a100-sxm4-40gb.yaml", "h100-sxm5-80gb.yaml", "l40s.yaml", "t4.yaml",
                                             "gb200.yaml" };
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                use_builtin(files[i], "580.105.08", NULL);
                char buf[NVML_GSP_FIRMWARE_VERSION_BUF_SIZE] = "";
                /* every capture, T4 (Turing) to GB200: the driver version */
                assert_int_equal(a->nvmlDeviceGetGspFirmwareVersion(gpu(a, 0), buf), NVML_SUCCESS);
                assert_string_equal(buf, "580.105.08");
                assert_int_equal(a->nvmlDeviceGetGspFirmwareVersion(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
                assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        }
        use_builtin("a100-sxm4-40gb.yaml", "510.47.03", "3g.20gb");
        char buf[NVML_GSP_FIRMWARE_VERSION_BUF_SIZE] = "";
        assert_int_equal(a->nvmlDeviceGetGspFirmwareVersion(gpu(a, 0), buf), NVML_SUCCESS);
        assert_string_equal(buf, "510.47.03");
        assert_int_equal(a->nvmlDeviceGetGspFirmwareVersion(mig0(a), buf), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_module_id(void **state)
{
        api_t *a = API(state);
        unsigned id = 99;
        /* qx-h100: by minor number */
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", NULL);
        static const unsigned h100[] = { 7, 5, 6, 8, 1, 3, 4, 2 };
        for (unsigned i = 0; i < 8; i++) {
                assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, i), &id), NVML_SUCCESS);
                assert_int_equal(id, h100[i]);
        }
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        /* gb200: 2, 1, 4, 3 */
        use_builtin("gb200.yaml", "580.173.02", NULL);
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 1), &id), NVML_SUCCESS);
        assert_int_equal(id, 1);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        /* PCIe cards: 1 from 535 (qx-l40s, qx-t4 on 595), 0 before (the T4 on 515) */
        use_builtin("l40s.yaml", "595.91.07", NULL);
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 0), &id), NVML_SUCCESS);
        assert_int_equal(id, 1);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("t4.yaml", "515.105.01", NULL);
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 0), &id), NVML_SUCCESS);
        assert_int_equal(id, 0);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        /* A100-80GB: minor 1 is 4; GPU 0 is in no capture; under MIG the handle is refused */
        use_builtin("a100-sxm4-80gb.yaml", "535.54.03", "3g.40gb");
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 1), &id), NVML_SUCCESS);
        assert_int_equal(id, 4);
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 0), &id), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetModuleId(mig0(a), &id), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        /* H200: no capture gives its module ids */
        use_builtin("h200.yaml", "580.105.08", NULL);
        assert_int_equal(a->nvmlDeviceGetModuleId(gpu(a, 0), &id), NVML_ERROR_NOT_SUPPORTED);
}

static void test_pci_info_ext(void **state)
{
        api_t *a = API(state);
        static const char *const files[] = { "a100-sxm4-80gb.yaml", "b200.yaml", "h200.yaml", "l40s.yaml", "t4.yaml" };
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                use_builtin(files[i], "580.105.08", NULL);
                nvmlDevice_t d = gpu(a, 0);
                nvmlPciInfo_t p;
                assert_int_equal(a->nvmlDeviceGetPciInfo_v3(d, &p), NVML_SUCCESS);
                nvmlPciInfoExt_t x = { .version = nvmlPciInfoExt_v1 };
                assert_int_equal(a->nvmlDeviceGetPciInfoExt(d, &x), NVML_SUCCESS);
                /* 3D controller: pci_base_class 3, pci_sub_class 2 in every capture */
                assert_int_equal(x.baseClass, 0x03);
                assert_int_equal(x.subClass, 0x02);
                assert_int_equal(x.pciDeviceId, p.pciDeviceId);
                assert_int_equal(x.pciSubSystemId, p.pciSubSystemId);
                assert_int_equal(x.bus, p.bus);
                assert_string_equal(x.busId, p.busId);
                x.version = nvmlPciInfoExt_v1 + 1;
                assert_int_equal(a->nvmlDeviceGetPciInfoExt(d, &x), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
                assert_int_equal(a->nvmlDeviceGetPciInfoExt(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
                assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        }
        use_builtin("a100-sxm4-40gb.yaml", "570.148.08", "3g.20gb");
        nvmlPciInfoExt_t x = { .version = nvmlPciInfoExt_v1 };
        assert_int_equal(a->nvmlDeviceGetPciInfoExt(mig0(a), &x), NVML_ERROR_INVALID_ARGUMENT);
}

/* The addressing mode of GPU 0 of @file on @driver (MIG @mig), or the error code when not NVML_SUCCESS. */
static unsigned addressing(api_t *a, const char *file, const char *driver, const char *mig)
{
        use_builtin(file, driver, mig);
        nvmlDeviceAddressingMode_t m = { .version = nvmlDeviceAddressingMode_v1, .value = 77 };
        nvmlReturn_t r = a->nvmlDeviceGetAddressingMode(gpu(a, 0), &m);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        return r == NVML_SUCCESS ? m.value : 1000U + (unsigned) r;
}

static void test_addressing_mode(void **state)
{
        api_t *a = API(state);
        /* HMM: qx-h100 (580), qx-l40s and qx-t4 (595), qx-a100 (570); None: qx-b200; ATS: qx-gb200/gb300 */
        assert_int_equal(addressing(a, "h100-sxm5-80gb.yaml", "580.105.08", NULL), NVML_DEVICE_ADDRESSING_MODE_HMM);
        assert_int_equal(addressing(a, "l40s.yaml", "595.91.07", NULL), NVML_DEVICE_ADDRESSING_MODE_HMM);
        assert_int_equal(addressing(a, "t4.yaml", "595.91.07", NULL), NVML_DEVICE_ADDRESSING_MODE_HMM);
        assert_int_equal(addressing(a, "a100-sxm4-40gb.yaml", "570.148.08", NULL), NVML_DEVICE_ADDRESSING_MODE_HMM);
        assert_int_equal(addressing(a, "b200.yaml", "580.105.08", NULL), NVML_DEVICE_ADDRESSING_MODE_NONE);
        assert_int_equal(addressing(a, "gb200.yaml", "580.173.02", NULL), NVML_DEVICE_ADDRESSING_MODE_ATS);
        assert_int_equal(addressing(a, "gb300.yaml", "580.173.02", NULL), NVML_DEVICE_ADDRESSING_MODE_ATS);
        /* None with MIG on (H100 590 -q, A100-80GB 535) and before R560 */
        assert_int_equal(addressing(a, "h100-sxm5-80gb.yaml", "590.48.01", "3g.40gb"), NVML_DEVICE_ADDRESSING_MODE_NONE);
        assert_int_equal(addressing(a, "a100-sxm4-80gb.yaml", "535.54.03", "3g.40gb"), NVML_DEVICE_ADDRESSING_MODE_NONE);
        assert_int_equal(addressing(a, "l40s.yaml", "550.163.01", NULL), NVML_DEVICE_ADDRESSING_MODE_NONE);
        /* version word and MIG handle */
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", "3g.40gb");
        nvmlDeviceAddressingMode_t m = { .version = 1 };
        assert_int_equal(a->nvmlDeviceGetAddressingMode(gpu(a, 0), &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        m.version = nvmlDeviceAddressingMode_v1;
        assert_int_equal(a->nvmlDeviceGetAddressingMode(mig0(a), &m), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetAddressingMode(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_c2c_mode(void **state)
{
        api_t *a = API(state);
        static const struct {
                const char *file;
                nvmlReturn_t r;
                unsigned enabled;
        } t[] = {
                { "h100-sxm5-80gb.yaml", NVML_SUCCESS, 0 },  /* qx-h100: Disabled */
                { "b200.yaml", NVML_SUCCESS, 0 },            /* qx-b200: Disabled */
                { "gb200.yaml", NVML_SUCCESS, 1 },           /* qx-gb200: Enabled */
                { "gb300.yaml", NVML_SUCCESS, 1 },           /* qx-gb300: Enabled */
                { "a100-sxm4-40gb.yaml", NVML_ERROR_NOT_SUPPORTED, 0 }, /* qx-a100: N/A */
                { "l40s.yaml", NVML_ERROR_NOT_SUPPORTED, 0 },           /* qx-l40s: N/A */
                { "t4.yaml", NVML_ERROR_NOT_SUPPORTED, 0 },             /* qx-t4: N/A */
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                use_builtin(t[i].file, "580.173.02", NULL);
                nvmlC2cModeInfo_v1_t c = { .isC2cEnabled = 9 };
                assert_int_equal(a->nvmlDeviceGetC2cModeInfoV(gpu(a, 0), &c), t[i].r);
                if (t[i].r == NVML_SUCCESS)
                        assert_int_equal(c.isC2cEnabled, t[i].enabled);
                assert_int_equal(a->nvmlDeviceGetC2cModeInfoV(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
                assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        }
        use_builtin("b200.yaml", "580.105.08", "1g.23gb");
        nvmlC2cModeInfo_v1_t c;
        assert_int_equal(a->nvmlDeviceGetC2cModeInfoV(mig0(a), &c), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_pdi(void **state)
{
        api_t *a = API(state);
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", NULL);
        for (unsigned i = 0; i < 8; i++) {
                nvmlPdi_t p = { .version = nvmlPdi_v1 };
                assert_int_equal(a->nvmlDeviceGetPdi(gpu(a, i), &p), NVML_SUCCESS);
                assert_int_equal(p.value, i + 1ULL); /* qx-h100: 0x...01 to 0x...08 */
        }
        nvmlPdi_t p = { .version = nvmlPdi_v1 - 1 };
        assert_int_equal(a->nvmlDeviceGetPdi(gpu(a, 0), &p), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(a->nvmlDeviceGetPdi(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("h100-sxm5-80gb.yaml", "590.48.01", "3g.40gb");
        p.version = nvmlPdi_v1;
        assert_int_equal(a->nvmlDeviceGetPdi(mig0(a), &p), NVML_ERROR_INVALID_ARGUMENT);
}

/* The real A100 (510, 535) and H100 (590) MIG captures print Remapped Rows N/A; without MIG they count rows. */
static void test_remapped_rows_not_with_mig(void **state)
{
        api_t *a = API(state);
        unsigned c, u, p, f;
        nvmlRowRemapperHistogramValues_t h;
        use_builtin("a100-sxm4-40gb.yaml", "510.47.03", "3g.20gb");
        assert_int_equal(a->nvmlDeviceGetRemappedRows(gpu(a, 0), &c, &u, &p, &f), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetRowRemapperHistogram(gpu(a, 0), &h), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("l40s.yaml", "595.91.07", NULL);
        assert_int_equal(a->nvmlDeviceGetRemappedRows(gpu(a, 0), &c, &u, &p, &f), NVML_SUCCESS);
        /* qx-l40s: inactive remappings 0 (NVML_FI_DEV_REMAPPED_ROWS_{COR,UNC}_INACTIVE) */
        nvmlFieldValue_t v[2] = { { .fieldId = NVML_FI_DEV_REMAPPED_ROWS_COR_INACTIVE },
                                  { .fieldId = NVML_FI_DEV_REMAPPED_ROWS_UNC_INACTIVE } };
        v[0].value.uiVal = v[1].value.uiVal = 5;
        assert_int_equal(a->nvmlDeviceGetFieldValues(gpu(a, 0), 2, v), NVML_SUCCESS);
        for (int i = 0; i < 2; i++) {
                assert_int_equal(v[i].nvmlReturn, NVML_SUCCESS);
                assert_int_equal(v[i].value.uiVal, 0);
        }
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("t4.yaml", "595.91.07", NULL); /* Turing retires pages: no row remapper */
        assert_int_equal(a->nvmlDeviceGetFieldValues(gpu(a, 0), 2, v), NVML_SUCCESS);
        assert_int_equal(v[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
}

/* The T.Limit thresholds of GPU 0 of @file (fields 193..196, signed C) into @t, their returns into @r. */
static void tlimits(api_t *a, const char *file, int t[4], nvmlReturn_t r[4])
{
        use_builtin(file, "580.105.08", NULL);
        nvmlFieldValue_t v[4] = { { .fieldId = NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT },
                                  { .fieldId = NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT },
                                  { .fieldId = NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT },
                                  { .fieldId = NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT } };
        assert_int_equal(a->nvmlDeviceGetFieldValues(gpu(a, 0), 4, v), NVML_SUCCESS);
        for (int i = 0; i < 4; i++) {
                r[i] = v[i].nvmlReturn;
                t[i] = r[i] == NVML_SUCCESS ? v[i].value.siVal : 999;
                if (r[i] == NVML_SUCCESS)
                        assert_int_equal(v[i].valueType, NVML_VALUE_TYPE_SIGNED_INT);
        }
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

static void test_tlimit(void **state)
{
        api_t *a = API(state);
        int t[4];
        nvmlReturn_t r[4];
        /* qx-h100: -8, -2, 0, 0 C; qx-b200: -5, -3, 0, 0; qx-l40s: -5, -2, 0, N/A (GDDR) */
        tlimits(a, "h100-sxm5-80gb.yaml", t, r);
        assert_int_equal(t[0], -8);
        assert_int_equal(t[1], -2);
        assert_int_equal(t[2], 0);
        assert_int_equal(t[3], 0);
        tlimits(a, "b200.yaml", t, r);
        assert_int_equal(t[0], -5);
        assert_int_equal(t[1], -3);
        tlimits(a, "l40s.yaml", t, r);
        assert_int_equal(t[0], -5);
        assert_int_equal(t[1], -2);
        assert_int_equal(t[2], 0);
        assert_int_equal(r[3], NVML_ERROR_NOT_SUPPORTED);
        /* the A100 prints absolute thresholds and T.Limit N/A */
        tlimits(a, "a100-sxm4-40gb.yaml", t, r);
        for (int i = 0; i < 4; i++)
                assert_int_equal(r[i], NVML_ERROR_NOT_SUPPORTED);
        /* margin: 87 C (H100) - the profile's 32 C */
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", "3g.40gb");
        unsigned temp = 0;
        assert_int_equal(a->nvmlDeviceGetTemperature(gpu(a, 0), NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
        nvmlMarginTemperature_t mt = { .version = nvmlMarginTemperature_v1 };
        assert_int_equal(a->nvmlDeviceGetMarginTemperature(gpu(a, 0), &mt), NVML_SUCCESS);
        assert_int_equal(mt.marginTemperature, 87 - (int) temp);
        assert_int_equal(a->nvmlDeviceGetMarginTemperature(mig0(a), &mt), NVML_ERROR_INVALID_ARGUMENT);
        mt.version = 1;
        assert_int_equal(a->nvmlDeviceGetMarginTemperature(gpu(a, 0), &mt), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(a->nvmlDeviceGetMarginTemperature(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("t4.yaml", "515.105.01", NULL);
        mt.version = nvmlMarginTemperature_v1;
        assert_int_equal(a->nvmlDeviceGetMarginTemperature(gpu(a, 0), &mt), NVML_ERROR_NOT_SUPPORTED);
}

/* Confidential computing off: 0 MiB protected memory (every capture); the recovery and reset fields say nothing to
 * do; the HW slowdown counters 0 ns (qx-h100, qx-l40s). */
static void test_cc_memory_recovery_and_counters(void **state)
{
        api_t *a = API(state);
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", "3g.40gb");
        nvmlMemory_t mem = { .total = 1, .used = 2, .free = 3 };
        assert_int_equal(a->nvmlDeviceGetConfComputeProtectedMemoryUsage(gpu(a, 0), &mem), NVML_SUCCESS);
        assert_true(mem.total == 0 && mem.used == 0 && mem.free == 0);
        assert_int_equal(a->nvmlDeviceGetConfComputeProtectedMemoryUsage(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlDeviceGetConfComputeProtectedMemoryUsage(mig0(a), &mem), NVML_ERROR_INVALID_ARGUMENT);
        nvmlFieldValue_t v[5] = { { .fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION },
                                  { .fieldId = NVML_FI_DEV_RESET_STATUS },
                                  { .fieldId = NVML_FI_DEV_DRAIN_AND_RESET_STATUS },
                                  { .fieldId = NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN },
                                  { .fieldId = NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN } };
        for (int i = 0; i < 5; i++)
                v[i].value.ullVal = 77;
        assert_int_equal(a->nvmlDeviceGetFieldValues(gpu(a, 0), 5, v), NVML_SUCCESS);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(v[i].nvmlReturn, NVML_SUCCESS);
                assert_true(v[i].valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG ? v[i].value.ullVal == 0
                                                                                 : v[i].value.uiVal == 0);
        }
        assert_int_equal(v[0].value.uiVal, NVML_GPU_RECOVERY_ACTION_NONE);
}

/* R590 deprecates applications clocks (H100 590 -q, L40S and T4 595 captures); 580 and before answer them. */
static void test_applications_clocks_deprecated_from_590(void **state)
{
        api_t *a = API(state);
        unsigned mhz = 0;
        use_builtin("h100-sxm5-80gb.yaml", "580.105.08", NULL);
        assert_int_equal(a->nvmlDeviceGetApplicationsClock(gpu(a, 0), NVML_CLOCK_GRAPHICS, &mhz), NVML_SUCCESS);
        assert_int_equal(mhz, 1980);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("h100-sxm5-80gb.yaml", "590.48.01", NULL);
        assert_int_equal(a->nvmlDeviceGetApplicationsClock(gpu(a, 0), NVML_CLOCK_GRAPHICS, &mhz), NVML_ERROR_DEPRECATED);
        assert_int_equal(a->nvmlDeviceGetDefaultApplicationsClock(gpu(a, 0), NVML_CLOCK_MEM, &mhz),
                         NVML_ERROR_DEPRECATED);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("t4.yaml", "515.105.01", NULL);
        assert_int_equal(a->nvmlDeviceGetApplicationsClock(gpu(a, 0), NVML_CLOCK_MEM, &mhz), NVML_SUCCESS);
        assert_int_equal(mhz, 5001);
}

/* SRAM ECC split and sources, repair status (Ampere and later), unrepairable memory (Hopper and later): all clear. */
static void test_sram_ecc_and_repair(void **state)
{
        api_t *a = API(state);
        use_builtin("l40s.yaml", "595.91.07", NULL);
        nvmlEccSramErrorStatus_t st;
        memset(&st, 0xff, sizeof(st));
        st.version = nvmlEccSramErrorStatus_v1;
        assert_int_equal(a->nvmlDeviceGetSramEccErrorStatus(gpu(a, 0), &st), NVML_SUCCESS);
        assert_true(st.volatileUncParity == 0 && st.aggregateUncSecDed == 0 && st.aggregateUncBucketOther == 0 &&
                    st.bThresholdExceeded == 0);
        st.version = nvmlEccSramErrorStatus_v1 - 8;
        assert_int_equal(a->nvmlDeviceGetSramEccErrorStatus(gpu(a, 0), &st), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlRepairStatus_t rs = { .version = nvmlRepairStatus_v1, .bChannelRepairPending = 5, .bTpcRepairPending = 5 };
        assert_int_equal(a->nvmlDeviceGetRepairStatus(gpu(a, 0), &rs), NVML_SUCCESS);
        assert_true(rs.bChannelRepairPending == 0 && rs.bTpcRepairPending == 0);
        rs.version = 2;
        assert_int_equal(a->nvmlDeviceGetRepairStatus(gpu(a, 0), &rs), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlUnrepairableMemoryStatus_v1_t u = { 5 };
        assert_int_equal(a->nvmlDeviceGetUnrepairableMemoryFlag_v1(gpu(a, 0), &u), NVML_ERROR_NOT_SUPPORTED); /* Ada */
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("h100-sxm5-80gb.yaml", "590.48.01", "3g.40gb");
        assert_int_equal(a->nvmlDeviceGetUnrepairableMemoryFlag_v1(gpu(a, 0), &u), NVML_SUCCESS);
        assert_int_equal(u.bUnrepairableMemory, 0);
        assert_int_equal(a->nvmlDeviceGetUnrepairableMemoryFlag_v1(mig0(a), &u), NVML_ERROR_INVALID_ARGUMENT);
        st.version = nvmlEccSramErrorStatus_v1;
        assert_int_equal(a->nvmlDeviceGetSramEccErrorStatus(mig0(a), &st), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("t4.yaml", "595.91.07", NULL); /* Turing: neither */
        st.version = nvmlEccSramErrorStatus_v1;
        rs.version = nvmlRepairStatus_v1;
        assert_int_equal(a->nvmlDeviceGetSramEccErrorStatus(gpu(a, 0), &st), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetRepairStatus(gpu(a, 0), &rs), NVML_ERROR_NOT_SUPPORTED);
}

/* Volatile ECC counts with MIG on: the GPU's N/A on 510 and 0 on 535; a MIG device's volatile SRAM count 0 on both
 * (the A100 MIG captures), its aggregate NOT_SUPPORTED. */
static void test_volatile_ecc_under_mig(void **state)
{
        api_t *a = API(state);
        unsigned long long n = 9;
        use_builtin("a100-sxm4-40gb.yaml", "510.47.03", "3g.20gb");
        assert_int_equal(a->nvmlDeviceGetMemoryErrorCounter(gpu(a, 0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                            NVML_VOLATILE_ECC, 7 /* NVML_MEMORY_LOCATION_SRAM */, &n),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetMemoryErrorCounter(gpu(a, 0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                            NVML_AGGREGATE_ECC, 7 /* NVML_MEMORY_LOCATION_SRAM */, &n),
                         NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetMemoryErrorCounter(mig0(a), NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                            NVML_VOLATILE_ECC, 7 /* NVML_MEMORY_LOCATION_SRAM */, &n),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        assert_int_equal(a->nvmlDeviceGetMemoryErrorCounter(mig0(a), NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                            NVML_AGGREGATE_ECC, 7 /* NVML_MEMORY_LOCATION_SRAM */, &n),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        use_builtin("a100-sxm4-80gb.yaml", "535.54.03", "3g.40gb");
        n = 9;
        assert_int_equal(a->nvmlDeviceGetMemoryErrorCounter(gpu(a, 0), NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                                            NVML_VOLATILE_ECC, 7 /* NVML_MEMORY_LOCATION_SRAM */, &n),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
}

/* No extended GPU memory: EGM "disabled" in every capture. */
static void test_capabilities(void **state)
{
        api_t *a = API(state);
        use_builtin("gb200.yaml", "580.173.02", NULL);
        nvmlDeviceCapabilities_t c = { .version = nvmlDeviceCapabilities_v1, .capMask = 0xff };
        assert_int_equal(a->nvmlDeviceGetCapabilities(gpu(a, 0), &c), NVML_SUCCESS);
        assert_int_equal(c.capMask & NVML_DEV_CAP_EGM, 0);
        c.version = 3;
        assert_int_equal(a->nvmlDeviceGetCapabilities(gpu(a, 0), &c), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(a->nvmlDeviceGetCapabilities(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
        if (api_start(&api, argc, argv) != 0)
                return 2;
        const struct CMUnitTest tests[] = {
                T(test_gsp_firmware_version), T(test_module_id), T(test_pci_info_ext), T(test_addressing_mode),
                T(test_c2c_mode),             T(test_pdi),       T(test_remapped_rows_not_with_mig), T(test_tlimit), T(test_cc_memory_recovery_and_counters), T(test_applications_clocks_deprecated_from_590), T(test_sram_ecc_and_repair), T(test_volatile_ecc_under_mig), T(test_capabilities),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
