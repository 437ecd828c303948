/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: queries answered from the model facts (model-facts.c) and the clock lists.
 * State, handles and helpers: libnvml-internal.h.
 */
#include <stdint.h>
#include <string.h>

#include "mock/nvml/libnvml-internal.h"

/* ------------------------------------------------------------------ */
/* model facts (model-facts.c): BAR1, PCIe, thresholds, clocks, NVLink */

/* The model facts of @d, or NULL (then the queries below answer NOT_SUPPORTED). */
const gv_mock_model_facts_t *mn_facts_of(const gv_mock_device_t *d)
{
        return gv_mock_model_facts(d->pci_device_id);
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
        DEVICE_QUERY(ANY_HANDLE, device, bar1Memory, 0);
        unsigned long long total = gv_mock_bar1_mib(d->pci_device_id, d->memory_total_mib);
        /* The driver maps a few MiB of BAR1 for itself; an idle GPU shows ~1-5 MiB used in the captures. */
        unsigned long long used = total > 64 ? 1 : 0;
        if (m >= 0 && d->architecture == NVML_DEVICE_ARCH_AMPERE) {
                /* An Ampere MIG device shows a 32767 MiB window, none of it used, whatever its size: the
                 * A100-SXM4-40GB 3g.20gb (510.47.03) and A100-SXM4-80GB 1g.20gb (535.54.03) captures. */
                total = 32767;
                used = 0;
        } else if (m >= 0 && d->memory_total_mib) {
                /* Hopper and later: the share of the aperture its memory has of the GPU's ("Shared BAR1
                 * Memory" of the H100 MIG -q capture, 590.48.01: 3g.40gb 24739 MiB of 131072, 0 used). */
                total = total * d->mig_devices[m].memory_mib / d->memory_total_mib;
                used = 0;
        }
        bar1Memory->bar1Total = total * MIB;
        bar1Memory->bar1Used = used * MIB;
        bar1Memory->bar1Free = (total - used) * MIB;
        return mn_leave(NVML_SUCCESS);
}

/* PCIe link facts: @what 0 max gen, 1 max width, 2 current gen, 3 current width. */
static nvmlReturn_t pcie_query(nvmlDevice_t device, unsigned int *out, int what)
{
        DEVICE_QUERY(GPU_HANDLE, device, out, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        const unsigned v[4] = { f->pcie_gen_max, f->pcie_width_max, f->pcie_gen_cur, f->pcie_width_cur };
        *out = v[what];
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
        return pcie_query(device, maxLinkGen, 0);
}

nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGenDevice)
{
        return pcie_query(device, maxLinkGenDevice, 0);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
        return pcie_query(device, maxLinkWidth, 1);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
        return pcie_query(device, currLinkGen, 2);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
        return pcie_query(device, currLinkWidth, 3);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
        DEVICE_QUERY(GPU_HANDLE, device, value, 0);
        if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        /* KB/s over the last 20 ms: an idle mock GPU moves nothing. */
        *value = 0;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int *temp)
{
        DEVICE_QUERY(GPU_HANDLE, device, temp, GV_MOCK_FIELD_TEMPERATURE);
        if (thresholdType >= NVML_TEMPERATURE_THRESHOLD_COUNT)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        unsigned v = 0;
        if (f) {
                switch (thresholdType) {
                case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: v = f->temp_shutdown_c; break;
                case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: v = f->temp_slowdown_c; break;
                case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: v = f->temp_mem_max_c; break;
                case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: v = f->temp_gpu_max_c; break;
                default: v = 0; break;
                }
        }
        if (!v)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *temp = v;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
        DEVICE_QUERY(GPU_HANDLE, device, clocksEventReasons, GV_MOCK_FIELD_CLOCKS);
        /* An idle GPU reports GpuIdle (0x1), a busy one none (csv captures: H100 idle 0x1, L40S under load 0x0). */
        *clocksEventReasons = (d->utilization_gpu == 0 ? nvmlClocksEventReasonGpuIdle : nvmlClocksEventReasonNone) |
                              mn_control_gpu(g)->clock_event_reasons; /* slowdowns of `mock set` */
        return mn_leave(NVML_SUCCESS);
}

/* nvmlDeviceGetSupportedClocksThrottleReasons is the same function under its older name (alias below). */
nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device, unsigned long long *supportedClocksEventReasons)
{
        DEVICE_QUERY(GPU_HANDLE, device, supportedClocksEventReasons, GV_MOCK_FIELD_CLOCKS);
        *supportedClocksEventReasons = GV_NVML_CLOCKS_EVENT_REASONS_SUPPORTED;
        return mn_leave(NVML_SUCCESS);
}

/* Processes the accounting buffer keeps: 4000 in every capture. */
FACT_GETTER(nvmlDeviceGetAccountingBufferSize, ANY_HANDLE, bufferSize, accounting_buffer_size)

static nvmlReturn_t app_clock_query(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, GV_MOCK_FIELD_CLOCKS);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        unsigned v = 0;
        switch (clockType) {
        case NVML_CLOCK_GRAPHICS:
        case NVML_CLOCK_SM: v = f ? f->app_clock_graphics_mhz : 0; break;
        case NVML_CLOCK_MEM: v = f ? f->app_clock_mem_mhz : 0; break;
        case NVML_CLOCK_VIDEO: v = 0; break;
        default: return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        /* R590 deprecates applications clocks on every model: the H100 (590.48.01), RTX A5000 (590.44.01), L40S and
         * T4 (595) captures print "Requested functionality has been deprecated"; 580 and before still answer. */
        if (mn_driver_branch() >= 590)
                return mn_leave(NVML_ERROR_DEPRECATED);
        if (!v)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *clockMHz = v;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        return app_clock_query(device, clockType, clockMHz);
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz)
{
        return app_clock_query(device, clockType, clockMHz);
}

/* The video and image engines of the utilisation queries. */
enum engine {
        ENGINE_CODEC, /* encoder and decoder: every model */
        ENGINE_JPG,   /* NVJPG: models whose facts say so; a MIG device with a JPEG engine */
        ENGINE_OFA,   /* optical flow: the same */
};

/* Whether @d (MIG slot @m, or -1) answers the utilisation of @engine. */
static bool has_engine(const gv_mock_device_t *d, int m, enum engine engine)
{
        if (engine == ENGINE_CODEC)
                return true;
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || !f->jpg_ofa)
                return false;
        if (m < 0)
                return true;
        const gv_mock_mig_profile_t *p = mn_mig_profile_of(d, &d->mig_devices[m]);
        return p && (engine == ENGINE_JPG ? p->jpeg_count : p->ofa_count) > 0;
}

static nvmlReturn_t codec_query(nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs,
                                enum engine engine)
{
        DEVICE_QUERY(ANY_HANDLE, device, utilization, GV_MOCK_FIELD_UTILIZATION);
        if (!samplingPeriodUs)
                return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        if (mn_mig_on(d) && m < 0)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* the H100 MIG captures: encoder, jpeg, ofa N/A */
        if (!has_engine(d, m, engine))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *utilization = 0;
        *samplingPeriodUs = 167000; /* the driver's encoder/decoder sampling period */
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs, ENGINE_CODEC);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs, ENGINE_CODEC);
}

nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs, ENGINE_JPG);
}

nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)
{
        return codec_query(device, utilization, samplingPeriodUs, ENGINE_OFA);
}

/* nvmlDeviceGetPowerState is the deprecated name of the performance state query. */
SCALAR_GETTER(nvmlDeviceGetPowerState, nvmlPstates_t, pState, GV_MOCK_FIELD_PSTATE, d->pstate)

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
        DEVICE_QUERY(GPU_HANDLE, device, energy, GV_MOCK_FIELD_POWER_USAGE);
        if (d->architecture < NVML_DEVICE_ARCH_VOLTA)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED); /* Volta or newer (nvml.h) */
        /* mJ since the driver loaded: the profile's draw integrated since nvmlInit. */
        *energy = (unsigned long long) d->power_usage_mw * (unsigned long long) mn_ms_since(&S.init_time) / 1000ULL;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores)
{
        DEVICE_QUERY(ANY_HANDLE, device, numCores, 0);
        /* FP32 cores per SM (NVIDIA architecture whitepapers): 64 on Volta, Turing and GA100, 128 on Ada and later. */
        unsigned per_sm = d->architecture >= NVML_DEVICE_ARCH_ADA && d->architecture != NVML_DEVICE_ARCH_UNKNOWN ? 128 : 64;
        unsigned sms = m >= 0 ? d->mig_devices[m].multiprocessor_count : d->multiprocessor_count;
        *numCores = sms * per_sm;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int *version)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        nvmlReturn_t r = mn_nvlink_check(d, link);
        if (r == NVML_SUCCESS && (!f || !f->nvlink_version))
                r = NVML_ERROR_NOT_SUPPORTED;
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        *version = f->nvlink_version;
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, nvmlNvLinkCapability_t capability,
                                           unsigned int *capResult)
{
        DEVICE_QUERY(GPU_HANDLE, device, capResult, 0);
        nvmlReturn_t r = mn_nvlink_check(d, link);
        if (r == NVML_SUCCESS && capability >= NVML_NVLINK_CAP_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        /* GPU-to-GPU links through NVSwitches on an x86 host: peer access and atomics, no system memory over NVLink. */
        switch (capability) {
        case NVML_NVLINK_CAP_P2P_SUPPORTED:
        case NVML_NVLINK_CAP_P2P_ATOMICS:
        case NVML_NVLINK_CAP_VALID: *capResult = 1; break;
        default: *capResult = 0; break;
        }
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long *counterValue)
{
        DEVICE_QUERY(GPU_HANDLE, device, counterValue, 0);
        nvmlReturn_t r = mn_nvlink_check(d, link);
        if (r == NVML_SUCCESS && counter >= NVML_NVLINK_ERROR_COUNT)
                r = NVML_ERROR_INVALID_ARGUMENT;
        if (r != NVML_SUCCESS)
                return mn_leave(r);
        *counterValue = 0; /* healthy links */
        return mn_leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* clocks lists, ECC and memory health, inforom, codecs, topology      */

nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, GV_MOCK_FIELD_CLOCKS);
        /* The captures print the graphics boost clock only: the max graphics (SM) clock. */
        switch (clockType) {
        case NVML_CLOCK_GRAPHICS: *clockMHz = d->max_clock_graphics_mhz; break;
        case NVML_CLOCK_SM: *clockMHz = d->max_clock_sm_mhz; break;
        case NVML_CLOCK_MEM:
        case NVML_CLOCK_VIDEO: return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        default: return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
        }
        return mn_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId,
                                unsigned int *clockMHz)
{
        switch (clockId) {
        case NVML_CLOCK_ID_CURRENT: return mn_clock_query(device, clockType, clockMHz, false);
        case NVML_CLOCK_ID_APP_CLOCK_TARGET:
        case NVML_CLOCK_ID_APP_CLOCK_DEFAULT: return app_clock_query(device, clockType, clockMHz);
        case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX: return nvmlDeviceGetMaxCustomerBoostClock(device, clockType, clockMHz);
        default: break;
        }
        DEVICE_QUERY(GPU_HANDLE, device, clockMHz, 0);
        return mn_leave(NVML_ERROR_INVALID_ARGUMENT);
}

/* Fills a count/array pair: INSUFFICIENT_SIZE with the count when @out holds fewer than @n. */
static nvmlReturn_t fill_list(unsigned *count, unsigned *out, const unsigned *values, unsigned n)
{
        if (*count < n) {
                *count = n;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        if (n && !out)
                return NVML_ERROR_INVALID_ARGUMENT;
        memcpy(out, values, n * sizeof(*out));
        *count = n;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int *count, unsigned int *clocksMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, GV_MOCK_FIELD_CLOCKS);
        /* HBM parts list one memory clock, the max; the H100 and the GDDR boards two (model-facts.c). */
        unsigned v[2], top[2];
        unsigned n = gv_mock_supported_mem_clocks(d->pci_device_id, d->max_clock_mem_mhz, v, top);
        return mn_leave(fill_list(count, clocksMHz, v, n));
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                  unsigned int *count, unsigned int *clocksMHz)
{
        DEVICE_QUERY(GPU_HANDLE, device, count, GV_MOCK_FIELD_CLOCKS);
        unsigned mem[2], tops[2], k = 0;
        unsigned n_mem = gv_mock_supported_mem_clocks(d->pci_device_id, d->max_clock_mem_mhz, mem, tops);
        while (k < n_mem && mem[k] != memoryClockMHz)
                k++;
        if (k == n_mem)
                return mn_leave(NVML_ERROR_NOT_FOUND);
        /* From the top graphics clock of that memory clock down to the idle one in the model's steps
         * (A100: 1410..210, 81 values). */
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        unsigned step2 = f && f->clock_step_x2 ? f->clock_step_x2 : 30;
        unsigned top = tops[k] ? tops[k] : d->max_clock_graphics_mhz, low = d->clock_graphics_mhz ? d->clock_graphics_mhz : 1;
        unsigned v[512], n = 0;
        for (unsigned i = 0; n < 512 && top * 2 >= low * 2 + i * step2; i++)
                v[n++] = top - (i * step2) / 2;
        return mn_leave(fill_list(count, clocksMHz, v, n));
}

/*
 * The Linux interrupt number of the GPU, as the driver's
 * /proc/driver/nvidia/gpus/<bus id>/information prints it ("IRQ:").  Every
 * Linux GPU has one (NVIDIA's README "Using the /proc File System Interface":
 * that file gives "model name, IRQ, BIOS version" of each GPU), so the query
 * is answered on every model.  The number is the host's, not the GPU model's:
 * a DGX Station's information files (V100, GPUs at 07:00.0, 08:00.0, ...)
 * print 144, 145, 146, ... in GPU order, one MSI vector each; the mock gives
 * the same sequence by enumeration index.  No A100 capture of the file was
 * found, so no A100-specific number is claimed.
 */
nvmlReturn_t nvmlDeviceGetIrqNum(nvmlDevice_t device, unsigned int *irqNum)
{
        DEVICE_QUERY(GPU_HANDLE, device, irqNum, 0);
        *irqNum = 144 + d->index;
        return mn_leave(NVML_SUCCESS);
}

/* NVML_MAX_GPU_PERF_PSTATES (nvml.h): the longest list the query returns. */
enum { MAX_GPU_PERF_PSTATES = 16 };

/*
 * The P-states the GPU supports.  A P-state is a memory clock level
 * (sasha0552/nvidia-pstated #2: "the performance state is actually the memory
 * clock"; #6: V100 and P100 have P0 only), and the HBM datacenter parts list
 * one memory clock (nvmlDeviceGetSupportedMemoryClocks above, every
 * SUPPORTED_CLOCKS capture: A100 1215 MHz) and run at P0 even idle (qx-a100,
 * [A80], qx-h100, qx-b200: idle at P0 with 210 MHz graphics).  So a GPU whose
 * profile idles at P0 answers {P0}.  The GDDR boards (T4, L40S) idle at P8 and
 * list several memory clocks, whose P-states no capture here names: they stay
 * NOT_SUPPORTED rather than get an invented list.  @size is in bytes (nvml.h);
 * unused entries are NVML_PSTATE_UNKNOWN.
 */
nvmlReturn_t nvmlDeviceGetSupportedPerformanceStates(nvmlDevice_t device, nvmlPstates_t *pstates, unsigned int size)
{
        DEVICE_QUERY(GPU_HANDLE, device, pstates, GV_MOCK_FIELD_PSTATE);
        if (d->pstate != NVML_PSTATE_0)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        unsigned n = size / (unsigned) sizeof(*pstates);
        if (n < 1)
                return mn_leave(NVML_ERROR_INSUFFICIENT_SIZE);
        if (n > MAX_GPU_PERF_PSTATES)
                n = MAX_GPU_PERF_PSTATES;
        pstates[0] = NVML_PSTATE_0;
        for (unsigned i = 1; i < n; i++)
                pstates[i] = NVML_PSTATE_UNKNOWN;
        return mn_leave(NVML_SUCCESS);
}

/* FNV-1a over @s into @h (32 bits). */
static uint32_t fnv1a(uint32_t h, const char *s)
{
        for (; s && *s; s++)
                h = (h ^ (unsigned char) *s) * 16777619u;
        return h;
}

/*
 * The checksum of the configuration in the infoROM: "for all products with an
 * inforom"; it "takes into account configuration stored in PWR and ECC infoROM
 * objects" and "can change ... when user changes configuration (e.g.
 * disable/enable ECC)" (nvml.h).  Every model whose captures print an infoROM
 * image version (model-facts.c) answers; one without stays NOT_SUPPORTED
 * (nvml.h: "if the device does not have an infoROM").  The real value is an
 * opaque 32-bit number no capture prints; the mock's is an FNV-1a hash of what
 * the doc says it covers (image, ECC object, ECC mode, power limit), so two
 * GPUs configured alike answer alike and toggling ECC or the limit changes it.
 */
nvmlReturn_t nvmlDeviceGetInforomConfigurationChecksum(nvmlDevice_t device, unsigned int *checksum)
{
        DEVICE_QUERY(GPU_HANDLE, device, checksum, 0);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || !f->inforom_image)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        uint32_t h = fnv1a(2166136261u, f->inforom_image);
        h = fnv1a(h, f->inforom_ecc);
        h = fnv1a(h, d->ecc_current ? "ecc:1" : "ecc:0");
        h ^= d->power_limit_mw;
        h *= 16777619u;
        *checksum = h;
        return mn_leave(NVML_SUCCESS);
}

/* Plain names of the versions above (nvml-abi.h GV_NVML_ALIASES / GV_NVML_MOCK_ALIASES). */
GV_MOCK_ALIAS(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlDeviceGetCurrentClocksEventReasons)
GV_MOCK_ALIAS(nvmlDeviceGetSupportedClocksThrottleReasons, nvmlDeviceGetSupportedClocksEventReasons)
