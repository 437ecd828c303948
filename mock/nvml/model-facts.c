// SPDX-License-Identifier: Apache-2.0
/*
 * Real facts of the GPU models the built-in profiles describe.  Sources, all
 * real `nvidia-smi -q -x` / `-q` / `--query-gpu` captures:
 *   [A40]  shared/cases/nvidia-smi/xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml and
 *          NVIDIA/k8s-test-infra tests/e2e/go/assertions/nvidiasmi/testdata/hardware/qx-a100.xml (570.148.08)
 *   [A80]  shared/cases/nvidia-smi/xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml
 *   [H100] k8s-test-infra qx-h100.xml (580.105.08); shared/cases q__nvidia-smi-q_h100-80gb-hbm3_mig-enabled_590.48.01.txt,
 *          csv__query-gpu_h100-80gb-hbm3_mig-enabled_590.48.01.csv
 *   [B200] k8s-test-infra qx-b200.xml (580.105.08)
 *   [GB200], [GB300] k8s-test-infra qx-gb200.xml, qx-gb300.xml (580.173.02, GPU 0 of 4)
 *   [L40S] k8s-test-infra qx-l40s.xml (595.91.07); shared/cases csv__query-gpu_l40s_under-load_595.80.csv
 *   [T4]   shared/cases/nvidia-smi/xml__tesla-t4_515.105.01.xml; k8s-test-infra qx-t4.xml (595.91.07)
 *   [H200] utkuozdemir/nvidia_gpu_exporter internal/captures/linux-x86_64__nvidia-h200__580.173.02.txt
 *          (idle -q, MIG disabled; used here for memory temperature, accounting buffer, JPEG/OFA only)
 * Hopper, Ada and Blackwell report temperatures against T.Limit and print no
 * absolute shutdown/slowdown thresholds in those captures: 0 (NOT_SUPPORTED)
 * here rather than an invented value.  The H200 (0x2335): its BAR1 follows the
 * power-of-two rule of gv_mock_bar1_mib() (262144 MiB, as [H200] prints), its link the H100's.
 * Memory bus widths are NVIDIA's datasheet figures (HBM2/HBM2e/HBM3: 1024 bits
 * a stack: A100 and H100 5, H200 6, B200 8 stacks; L40S 384, T4 256 bits GDDR).
 * Supported graphics clocks step down by 15 MHz (A100, H100, L40S, T4 lists)
 * or 7.5 MHz (B200: 1965, 1957, 1950, 1942, ...).
 * Memory temperature (NVML_FI_DEV_MEMORY_TEMP) is the HBM sensor of the idle
 * capture: A100-40GB 34 C (qx-a100, beside gpu_temp 33 C), A100-80GB 44 C [A80],
 * H100 37 C (qx-h100 GPU 0; 37-39 C over its 8 GPUs), H200 38 C [H200], B200 39 C
 * (qx-b200); the GDDR6 boards print memory_temp N/A (qx-l40s, qx-t4, [T4]).
 * accounting_mode_buffer_size is 4000 in every capture (A100 40/80GB, H100,
 * H200, B200, L40S, T4, also RTX A5000 and RTX 4090).  JPEG and OFA utilisation
 * are 0 % on an idle GPU with MIG off in qx-a100, qx-h100, [H200], qx-b200,
 * qx-l40s and qx-t4 (595.91.07); the A100-80GB
 * (same GA100 chip as qx-a100, its 7g profile has 1 JPEG and 1 OFA engine) is
 * taken to answer like it; N/A with MIG on ([A80], the H100 MIG -q capture).
 * PCI class 0x0302 (3D controller: pci_base_class 3, pci_sub_class 2) in qx-a100, qx-h100, qx-b200,
 * qx-gb200, qx-gb300, qx-l40s, qx-t4; the A100-80GB and H200 as their siblings (and the H200 C2C
 * and addressing mode as the H100: the same x86 HGX board; no capture prints them).
 * C2C mode: Disabled on the x86 HGX boards (qx-h100, qx-b200, the H100 MIG -q capture), Enabled on the
 * Grace boards (qx-gb200, qx-gb300), N/A without a C2C link (qx-a100, qx-l40s, qx-t4).
 * Addressing mode with MIG off on an open-module driver: HMM (qx-a100, qx-h100, qx-l40s, qx-t4), None
 * (qx-b200), ATS (qx-gb200, qx-gb300); libnvml-smi.c has the MIG and driver branch rules.
 * Module ids by minor number: qx-h100 7,5,6,8,1,3,4,2 (GPU 0 is 7 in the H100 MIG -q capture too);
 * qx-b200 6,8,7,5,2,4,3,1; qx-gb200 and qx-gb300 2,1,4,3; A100-40GB GPU 0 is 3 in [A40] (510.47.03, one
 * GPU of a VM; qx-a100's single GPU 0, another host, prints 7), A100-80GB minor 1 is 4 [A80].  The PCIe
 * cards (L40S, T4, RTX A5000, RTX 4090) print 1 from 535 (qx-l40s, qx-t4 on 595, the RTX captures),
 * the T4 0 on 515 [T4].
 * T.Limit (Hopper, Ada, Blackwell; the A100 and T4 print absolute thresholds and T.Limit N/A): the GPU
 * temperature plus the margin is the same on every GPU of a capture: H100 87 C (qx-h100 29 + 58, 30 + 56;
 * the H100 MIG -q 42 + 45), L40S 88 C (qx-l40s 29 + 59), B200 88 C (39 + 49), GB200 87 C (27 + 60),
 * GB300 87 C (38 + 49); shutdown/slowdown T.Limit -8/-2 C (H100), -5/-2 (L40S, GB200, GB300), -5/-3 (B200);
 * GPU max operating 0 C everywhere, memory max operating 0 C with HBM and N/A on the L40S.  The H200: no
 * capture, N/A.
 */
#include "mock/nvml/model-facts.h"

#include <stddef.h>
#include <stdlib.h>

/* The module_ids_n and module_ids[] of a baseboard whose GPUs (by minor number) have ids @... */
#define MODULES(...) sizeof((unsigned[]){ __VA_ARGS__ }) / sizeof(unsigned), { __VA_ARGS__ }
#define UNK GV_MOCK_MODULE_UNKNOWN
#define C2C_NONE GV_MOCK_C2C_NONE
#define C2C_OFF GV_MOCK_C2C_DISABLED
#define C2C_ON GV_MOCK_C2C_ENABLED
#define HMM GV_MOCK_ADDRESSING_HMM
#define ATS GV_MOCK_ADDRESSING_ATS
#define NONE GV_MOCK_ADDRESSING_NONE

static const gv_mock_model_facts_t facts[] = {
        /* A100-SXM4-40GB [A40]: BAR1 65536 MiB, gen 4 x16, 92/89/85/95 C, app clocks 1095/1215 MHz,
         * 640 remapper banks, inforom G506.0200.00.04 / OEM 2.0 / ECC 6.16 (qx-a100). */
        { 0x20B0, 65536, 4, 16, 4, 16, 92, 89, 85, 95, 1095, 1215, 3, 5120, 640, 30, "G506.0200.00.04", "2.0", "6.16", 34, 4000, 1, 0x0302, C2C_NONE, HMM, 0, MODULES(3), 0, 0, 0 },
        /* A100-SXM4-80GB [A80]: BAR1 131072 MiB, gen 4 x16, 92/89/85/95 C, app clocks 1275/1593 MHz. */
        { 0x20B2, 131072, 4, 16, 4, 16, 92, 89, 85, 95, 1275, 1593, 3, 5120, 0, 30, "G506.0212.00.01", "2.0", "6.16", 44, 4000, 1, 0x0302, C2C_NONE, HMM, 0, MODULES(UNK, 4), 0, 0, 0 },
        /* H100 80GB HBM3 [H100]: BAR1 131072 MiB, gen 5 x16, app clocks 1980/2619 MHz. */
        { 0x2330, 131072, 5, 16, 5, 16, 0, 0, 0, 0, 1980, 2619, 4, 5120, 2560, 30, "G520.0200.00.05", "2.1", "7.16", 37, 4000, 1, 0x0302, C2C_OFF, HMM, 0, MODULES(7, 5, 6, 8, 1, 3, 4, 2), 87, -8, -2 },
        /* H200: BAR1 by rule, PCIe gen 5 x16 and NVLink 4 like every Hopper SXM board; memory 38 C,
         * buffer 4000, JPEG/OFA 0 % from [H200]. */
        { 0x2335, 0, 5, 16, 5, 16, 0, 0, 0, 0, 0, 0, 4, 6144, 0, 30, NULL, NULL, NULL, 38, 4000, 1, 0x0302, C2C_OFF, HMM, 0, 0, { 0 }, 0, 0, 0 },
        /* B200 [B200]: BAR1 262144 MiB, gen 5 x16, app clocks 1965/3996 MHz. */
        { 0x2901, 262144, 5, 16, 5, 16, 0, 0, 0, 0, 1965, 3996, 5, 8192, 3840, 15, "G525.0220.00.03", "2.1", "7.16", 39, 4000, 1, 0x0302, C2C_OFF, NONE, 0, MODULES(6, 8, 7, 5, 2, 4, 3, 1), 88, -5, -3 },
        /* GB200 [GB200]: BAR1 262144 MiB, gen 5 x16 (max_link_gen; the device's own max is 6), app clocks
         * 2062/3996 MHz, 3968 remapper banks, clocks in 7.5 MHz steps, memory 27 C, JPEG/OFA 0 %.
         * NVLink 5 as every Blackwell part; bus width not in a capture: 0 (NOT_SUPPORTED). */
        { 0x2941, 262144, 5, 16, 5, 16, 0, 0, 0, 0, 2062, 3996, 5, 0, 3968, 15, "G548.0201.00.06", "2.1", "7.16", 27, 4000, 1, 0x0302, C2C_ON, ATS, 0, MODULES(2, 1, 4, 3), 87, -5, -2 },
        /* GB300 [GB300]: BAR1 524288 MiB, gen 6 x16, app clocks 2070/3996 MHz, 5952 remapper banks,
         * clocks in 7.5 MHz steps (2070, 2062, 2055, ...), memory 38 C, JPEG/OFA 0 %; bus width as GB200. */
        { 0x31C2, 524288, 6, 16, 6, 16, 0, 0, 0, 0, 2070, 3996, 5, 0, 5952, 15, "G548.0301.00.03", "2.1", "7.16", 38, 4000, 1, 0x0302, C2C_ON, ATS, 0, MODULES(2, 1, 4, 3), 87, -5, -2 },
        /* L40S [L40S]: BAR1 65536 MiB, gen 4 x16 (x8 trained in qx-l40s, x16 in the csv); app clocks deprecated. */
        { 0x26B9, 65536, 4, 16, 4, 16, 0, 0, 0, 0, 0, 0, 0, 384, 192, 30, "G133.0242.00.03", "2.1", "6.16", 0, 4000, 1, 0x0302, C2C_NONE, HMM, 1, 0, { 0 }, 88, -5, -2 },
        /* Tesla T4 [T4]: BAR1 256 MiB (no resizable BAR), gen 3 x16 (x8 trained), 96/93/85 C, no memory sensor,
         * app clocks 585/5001 MHz on 515. */
        { 0x1EB8, 256, 3, 16, 3, 16, 96, 93, 85, 0, 585, 5001, 0, 256, 0, 30, "G183.0200.00.02", "1.1", "5.0", 0, 4000, 1, 0x0302, C2C_NONE, HMM, 1, 0, { 0 }, 0, 0, 0 },
};

const gv_mock_model_facts_t *gv_mock_model_facts(unsigned pci_device_id)
{
        for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
                if (facts[i].pci_device_id == pci_device_id)
                        return &facts[i];
        return NULL;
}

unsigned long long gv_mock_bar1_mib(unsigned pci_device_id, unsigned long long memory_total_mib)
{
        const gv_mock_model_facts_t *f = gv_mock_model_facts(pci_device_id);
        if (f && f->bar1_mib)
                return f->bar1_mib;
        unsigned long long b = 256;
        while (b < memory_total_mib)
                b <<= 1;
        return b;
}

/*
 * The frame buffer the driver reserves (nvmlMemory_v2_t.reserved, nvidia-smi's
 * fb_memory_usage/reserved), by board and driver branch, as the captures print
 * it: A100-SXM4-40GB 605 MiB on 510.47.03 [A40]; A100-SXM4-80GB 869 MiB on
 * 535.54.03 (MIG enabled) [A80]; Tesla T4 388 MiB on 515.105.01 [T4]; H100 80GB
 * HBM3 480 MiB on 580.105.08 (qx-h100) and 479 MiB on 590.48.01 (the H100 MIG
 * --query-gpu capture); L40S 609 MiB on 595.91.07 (qx-l40s) and 595.80 (the
 * L40S --query-gpu capture).
 */
static const struct {
        unsigned pci_device_id, branch;
        unsigned long long reserved_mib;
} reserved_points[] = {
        { 0x20B0, 510, 605 }, { 0x20B2, 535, 869 }, { 0x1EB8, 515, 388 },
        { 0x2330, 580, 480 }, { 0x2330, 590, 479 }, { 0x26B9, 595, 609 },
};

unsigned long long gv_mock_reserved_mib(unsigned pci_device_id, const char *driver_version)
{
        unsigned branch = driver_version ? (unsigned) strtoul(driver_version, NULL, 10) : 0;
        if (branch == 0)
                branch = ~0u; /* an unknown version reads as the newest branch */
        unsigned long long best = 0, oldest = 0;
        unsigned best_branch = 0, oldest_branch = ~0u;
        for (size_t i = 0; i < sizeof(reserved_points) / sizeof(reserved_points[0]); i++) {
                if (reserved_points[i].pci_device_id != pci_device_id)
                        continue;
                unsigned b = reserved_points[i].branch;
                if (b <= branch && b >= best_branch) {
                        best_branch = b;
                        best = reserved_points[i].reserved_mib;
                }
                if (b < oldest_branch) {
                        oldest_branch = b;
                        oldest = reserved_points[i].reserved_mib;
                }
        }
        return best ? best : oldest;
}

/*
 * The memory clocks a board lists in SUPPORTED_CLOCKS, and for each the
 * highest graphics clock it pairs with (0: the board's max graphics clock);
 * every list runs down to the idle graphics clock in the model's step.
 * H100 80GB HBM3 (qx-h100): 2619 and 1593 MHz, each with 1980..345 MHz;
 * L40S (qx-l40s): 9001 MHz with 2520..210, 405 MHz with 405..210; Tesla T4 [T4]:
 * 5001 MHz with 1590..300, 405 MHz with 645..300.  A board not listed has one
 * memory clock, its max (A100 40/80GB, B200, GB200, GB300: every capture).
 */
static const struct {
        unsigned pci_device_id;
        unsigned n;
        unsigned mem_mhz[2], graphics_top_mhz[2];
} clock_lists[] = {
        { 0x2330, 2, { 2619, 1593 }, { 0, 0 } },
        { 0x26B9, 2, { 9001, 405 }, { 0, 405 } },
        { 0x1EB8, 2, { 5001, 405 }, { 0, 645 } },
};

unsigned gv_mock_supported_mem_clocks(unsigned pci_device_id, unsigned max_mem_mhz, unsigned out_mhz[2],
                                      unsigned graphics_top_mhz[2])
{
        for (size_t i = 0; i < sizeof(clock_lists) / sizeof(clock_lists[0]); i++)
                if (clock_lists[i].pci_device_id == pci_device_id && clock_lists[i].mem_mhz[0] == max_mem_mhz) {
                        for (unsigned k = 0; k < clock_lists[i].n; k++) {
                                out_mhz[k] = clock_lists[i].mem_mhz[k];
                                graphics_top_mhz[k] = clock_lists[i].graphics_top_mhz[k];
                        }
                        return clock_lists[i].n;
                }
        out_mhz[0] = max_mem_mhz;
        graphics_top_mhz[0] = 0;
        return 1;
}
