/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Facts of real GPU models that the profile schema does not carry (yet):
 * BAR1 size, PCIe link, temperature thresholds, applications clocks, NVLink
 * version, memory temperature, accounting buffer, JPEG/OFA engines, PCI class,
 * C2C link, addressing mode, baseboard module ids.  Looked up by PCI device id; every value names its real capture
 * in model-facts.c.  A profile field for one of these, when added, wins.
 */
#ifndef GV_MOCK_NVML_MODEL_FACTS_H
#define GV_MOCK_NVML_MODEL_FACTS_H

/* What one GPU model reports.  0 in a field means the model reports NOT_SUPPORTED for it. */
typedef struct gv_mock_model_facts {
        unsigned pci_device_id;           /* 16-bit PCI device id, 0x20B0 */
        unsigned long long bar1_mib;      /* BAR1 aperture, MiB */
        unsigned pcie_gen_max, pcie_width_max;   /* link generation and lanes the GPU supports */
        unsigned pcie_gen_cur, pcie_width_cur;   /* as trained in the capture's server */
        unsigned temp_shutdown_c, temp_slowdown_c, temp_gpu_max_c, temp_mem_max_c;
        unsigned app_clock_graphics_mhz, app_clock_mem_mhz; /* applications = default applications clocks */
        unsigned nvlink_version;          /* nvmlDeviceGetNvLinkVersion: 3 Ampere, 4 Hopper, 5 Blackwell */
        unsigned memory_bus_width;        /* bits (NVIDIA datasheets) */
        unsigned remap_banks;             /* row remapper banks (histogram "max"); 0: none known */
        unsigned clock_step_x2;           /* twice the step of the supported graphics clocks list, MHz */
        const char *inforom_image, *inforom_oem, *inforom_ecc; /* NULL: not known */
        unsigned memory_temp_c;           /* HBM temperature of the idle capture, C (NVML_FI_DEV_MEMORY_TEMP); 0: N/A (GDDR) */
        unsigned accounting_buffer_size;  /* nvmlDeviceGetAccountingBufferSize: processes kept; 0: no capture */
        unsigned jpg_ofa;                 /* 1: JPEG/OFA utilisation answered (0 % idle) with MIG off; 0: N/A */
        unsigned pci_class;               /* PCI base << 8 | sub class (0x0302: 3D controller); 0: not known */
        unsigned c2c;                     /* GV_MOCK_C2C_*: nvmlDeviceGetC2cModeInfoV */
        unsigned addressing;              /* GV_MOCK_ADDRESSING_*: with MIG off on an open-module driver */
        unsigned module_id_pcie;          /* 1: a PCIe card (module id 1 from R535, 0 before) */
        unsigned module_ids_n;            /* how many GPUs (by minor number) module_ids[] knows */
        unsigned module_ids[8];           /* baseboard module id of GPU N; GV_MOCK_MODULE_UNKNOWN: not captured */
        int tlimit_c;                     /* GPU temperature at T.Limit 0 (margin = this - temperature); 0: no T.Limit */
        int tlimit_shutdown, tlimit_slowdown; /* T.Limit thresholds, C (GPU max operating: 0; memory max: 0 with HBM) */
} gv_mock_model_facts_t;

/* c2c: no C2C link (NOT_SUPPORTED, nvidia-smi N/A), a link that is off, a link in use. */
enum { GV_MOCK_C2C_NONE = 0, GV_MOCK_C2C_DISABLED = 1, GV_MOCK_C2C_ENABLED = 2 };
/* addressing: not known (NOT_SUPPORTED); else NVML_DEVICE_ADDRESSING_MODE_* + 1. */
enum { GV_MOCK_ADDRESSING_UNKNOWN = 0, GV_MOCK_ADDRESSING_NONE = 1, GV_MOCK_ADDRESSING_HMM = 2,
       GV_MOCK_ADDRESSING_ATS = 3 };
/* A module_ids[] entry no capture gives. */
#define GV_MOCK_MODULE_UNKNOWN 0xFFu

/*
 * gv_mock_model_facts - the facts of the model with PCI device id @pci_device_id,
 * or NULL when the table does not know it.  @memory_total_mib lets an unknown
 * datacenter part derive its BAR1 (see model-facts.c).  Static storage.
 */
const gv_mock_model_facts_t *gv_mock_model_facts(unsigned pci_device_id);

/*
 * gv_mock_bar1_mib - BAR1 size in MiB of a GPU with @pci_device_id and
 * @memory_total_mib of frame buffer: the table's value, else the smallest
 * power of two not below the frame buffer (the rule every resizable-BAR
 * datacenter capture in model-facts.c follows).
 */
unsigned long long gv_mock_bar1_mib(unsigned pci_device_id, unsigned long long memory_total_mib);

/*
 * gv_mock_reserved_mib - the frame buffer (MiB) the driver @driver_version
 * ("580.105.08") reserves on the board with @pci_device_id, as the captures of
 * that board print it: the capture of the newest branch not above the
 * driver's, else the oldest; 0 when no capture of the board gives it.  Used for
 * a profile that does not set memory_reserved_mib.
 */
unsigned long long gv_mock_reserved_mib(unsigned pci_device_id, const char *driver_version);

/*
 * gv_mock_supported_mem_clocks - the memory clocks (MHz, highest first) the
 * board lists in nvidia-smi's SUPPORTED_CLOCKS when its max memory clock is
 * @max_mem_mhz, into @out_mhz, with the highest graphics clock of each in
 * @graphics_top_mhz (0: the board's max); returns how many (1 or 2).
 */
unsigned gv_mock_supported_mem_clocks(unsigned pci_device_id, unsigned max_mem_mhz, unsigned out_mhz[2],
                                      unsigned graphics_top_mhz[2]);

#endif
