/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1: the queries behind nvidia-smi's newer `-q` rows (GSP firmware
 * version, module id, PCI class codes, addressing mode, C2C mode, PDI, T.Limit margin, confidential computing memory, SRAM ECC
 * status, repair status, capabilities), answered from the model
 * facts (model-facts.c, which cites the real captures) and the profile.  Each queries a physical
 * GPU: a MIG handle is INVALID_ARGUMENT.  State, handles and helpers: libnvml-internal.h.
 */
#include <assert.h>
#include <stdbool.h>
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "abi/host/nvidia-host.h"
#include "mock/nvml/libnvml-internal.h"

unsigned mn_driver_branch(void)
{
        const char *v = S.profile->driver_version;
        return v ? (unsigned) strtoul(v, NULL, 10) : 0;
}

/*
 * nvmlDeviceGetGspFirmwareVersion: the GSP firmware ships with the driver, and every capture
 * (Turing T4 on 515 to Blackwell on 580) prints the driver version; before Turing there is no GSP.
 * @version holds NVML_GSP_FIRMWARE_VERSION_BUF_SIZE bytes (nvml.h).
 */
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device, char *version)
{
        DEVICE_QUERY(GPU_HANDLE, device, version, 0);
        (void) g;
        (void) m;
        if (d->architecture < NVML_DEVICE_ARCH_TURING || d->architecture == NVML_DEVICE_ARCH_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        return mn_leave(mn_copy_str(version, NVML_GSP_FIRMWARE_VERSION_BUF_SIZE, S.profile->driver_version));
}

/*
 * nvmlDeviceGetModuleId: the GPU's module on its baseboard, by minor number (model-facts.c lists
 * the captured boards); a PCIe card prints 1 from R535 and 0 before.  NOT_SUPPORTED where no
 * capture gives the GPU's id.
 */
nvmlReturn_t nvmlDeviceGetModuleId(nvmlDevice_t device, unsigned int *moduleId)
{
        DEVICE_QUERY(GPU_HANDLE, device, moduleId, 0);
        (void) g;
        (void) m;
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (f && f->module_id_pcie) {
                *moduleId = mn_driver_branch() >= 535 ? 1 : 0;
                return mn_leave(NVML_SUCCESS);
        }
        if (!f || d->minor_number >= f->module_ids_n || f->module_ids[d->minor_number] == GV_MOCK_MODULE_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *moduleId = f->module_ids[d->minor_number];
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetPciInfoExt: nvmlDeviceGetPciInfo's facts and the PCI class codes ("for all
 * products", nvml.h): the model's, else 0x0302 (3D controller, what every captured model prints).
 */
nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t *pci)
{
        DEVICE_QUERY(GPU_HANDLE, device, pci, 0);
        (void) g;
        (void) m;
        if (pci->version != nvmlPciInfoExt_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlPciInfo_t p;
        mn_fill_pci(&p, d->pci_domain, d->pci_bus, d->pci_device, d->pci_device_id, d->pci_subsystem_id);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        unsigned cls = f && f->pci_class ? f->pci_class : GV_PCI_CLASS_DISPLAY_3D;
        pci->domain = p.domain;
        pci->bus = p.bus;
        pci->device = p.device;
        pci->pciDeviceId = p.pciDeviceId;
        pci->pciSubSystemId = p.pciSubSystemId;
        pci->baseClass = cls >> 8;
        pci->subClass = cls & 0xFF;
        static_assert(sizeof(pci->busId) == sizeof(p.busId), "bus id buffers of nvmlPciInfo_t and nvmlPciInfoExt_t");
        memcpy(pci->busId, p.busId, sizeof(pci->busId));
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetAddressingMode: the model's mode with MIG off on a driver of R560 or later (the
 * open kernel modules, which HMM needs, are the default install from R560); None with MIG on
 * (A100-80GB on 535, H100 on 590 captures) and before R560 (A100-80GB and RTX 4090 on 535).
 * Turing and later (nvml.h); NOT_SUPPORTED for a model no capture gives.
 */
nvmlReturn_t nvmlDeviceGetAddressingMode(nvmlDevice_t device, nvmlDeviceAddressingMode_t *mode)
{
        DEVICE_QUERY(GPU_HANDLE, device, mode, 0);
        (void) g;
        (void) m;
        if (mode->version != nvmlDeviceAddressingMode_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || f->addressing == GV_MOCK_ADDRESSING_UNKNOWN || d->architecture < NVML_DEVICE_ARCH_TURING ||
            d->architecture == NVML_DEVICE_ARCH_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        if (mn_mig_on(d) || mn_driver_branch() < 560)
                mode->value = NVML_DEVICE_ADDRESSING_MODE_NONE;
        else
                mode->value = f->addressing - 1;
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetC2cModeInfoV: whether the GPU's chip-to-chip link to a Grace CPU is in use:
 * enabled on GB200/GB300, disabled on the x86 Hopper/Blackwell boards; NOT_SUPPORTED without
 * a C2C link (A100, L40S, T4) or for a model no capture gives.
 */
nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device, nvmlC2cModeInfo_v1_t *c2cModeInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device, c2cModeInfo, 0);
        (void) g;
        (void) m;
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || f->c2c == GV_MOCK_C2C_NONE)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        c2cModeInfo->isC2cEnabled = f->c2c == GV_MOCK_C2C_ENABLED;
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetPdi: the GPU's 64-bit PDI, Pascal and later (nvml.h).  The mock numbers its GPUs
 * 1, 2, ... in enumeration order, as k8s-test-infra's captures print them (qx-h100, qx-gb200,
 * qx-gb300, qx-l40s, qx-t4; a real PDI is an opaque 64-bit number).
 */
nvmlReturn_t nvmlDeviceGetPdi(nvmlDevice_t device, nvmlPdi_t *pdi)
{
        DEVICE_QUERY(GPU_HANDLE, device, pdi, 0);
        (void) m;
        if (pdi->version != nvmlPdi_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (d->architecture < NVML_DEVICE_ARCH_PASCAL || d->architecture == NVML_DEVICE_ARCH_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        pdi->value = (unsigned long long) g + 1;
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetMarginTemperature: the distance in C from the GPU temperature to the T.Limit 0 of the
 * model (model-facts.c: H100 87 C, so 58 C at the capture's 29 C); NOT_SUPPORTED on the models that print
 * T.Limit N/A (A100, T4) or no capture gives (H200).
 */
nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device, nvmlMarginTemperature_t *marginTempInfo)
{
        DEVICE_QUERY(GPU_HANDLE, device, marginTempInfo, 0);
        (void) g;
        (void) m;
        if (marginTempInfo->version != nvmlMarginTemperature_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        const gv_mock_model_facts_t *f = mn_facts_of(d);
        if (!f || !f->tlimit_c || mn_unsup(d, GV_MOCK_FIELD_TEMPERATURE))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        marginTempInfo->marginTemperature = f->tlimit_c - (int) d->temperature_c;
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetConfComputeProtectedMemoryUsage: confidential computing is off on the mock's GPUs, and
 * every capture with the row (A100-80GB, H100, B200, GB200, L40S, T4, RTX) prints 0 MiB total, used, free.
 */
nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device, nvmlMemory_t *memory)
{
        DEVICE_QUERY(GPU_HANDLE, device, memory, 0);
        (void) d;
        (void) g;
        (void) m;
        *memory = (nvmlMemory_t){ 0 };
        return mn_leave(NVML_SUCCESS);
}

/* Whether @d has ECC on and is Ampere or later (the SRAM ECC split and the repair status). */
static bool ampere_ecc(const gv_mock_device_t *d)
{
        return d->architecture >= NVML_DEVICE_ARCH_AMPERE && d->architecture != NVML_DEVICE_ARCH_UNKNOWN &&
               d->ecc_current && !mn_unsup(d, GV_MOCK_FIELD_ECC);
}

/*
 * nvmlDeviceGetSramEccErrorStatus: Ampere and later with ECC on (nvml.h); a healthy GPU's counts are all 0 and
 * the threshold is not exceeded, as in every capture (A100 570, H100, B200, GB200, GB300, L40S; H100 MIG 590).
 */
nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device, nvmlEccSramErrorStatus_t *status)
{
        DEVICE_QUERY(GPU_HANDLE, device, status, 0);
        (void) g;
        (void) m;
        if (status->version != nvmlEccSramErrorStatus_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (!ampere_ecc(d))
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        *status = (nvmlEccSramErrorStatus_t){ .version = nvmlEccSramErrorStatus_v1 };
        return mn_leave(NVML_SUCCESS);
}

/* nvmlDeviceGetRepairStatus: Ampere and later (nvml.h): no channel or TPC repair pending ("No" in every capture). */
nvmlReturn_t nvmlDeviceGetRepairStatus(nvmlDevice_t device, nvmlRepairStatus_t *repairStatus)
{
        DEVICE_QUERY(GPU_HANDLE, device, repairStatus, 0);
        (void) g;
        (void) m;
        if (repairStatus->version != nvmlRepairStatus_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        if (d->architecture < NVML_DEVICE_ARCH_AMPERE || d->architecture == NVML_DEVICE_ARCH_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        repairStatus->bChannelRepairPending = 0;
        repairStatus->bTpcRepairPending = 0;
        return mn_leave(NVML_SUCCESS);
}

/*
 * nvmlDeviceGetUnrepairableMemoryFlag_v1: Hopper and later (nvml.h): no unrepairable memory ("No" in qx-gb200,
 * qx-gb300 and the H100 MIG -q; N/A on the L40S and RTX A5000).
 */
nvmlReturn_t nvmlDeviceGetUnrepairableMemoryFlag_v1(nvmlDevice_t device,
                                                    nvmlUnrepairableMemoryStatus_v1_t *unrepairableMemoryStatus)
{
        DEVICE_QUERY(GPU_HANDLE, device, unrepairableMemoryStatus, 0);
        (void) g;
        (void) m;
        if (d->architecture < NVML_DEVICE_ARCH_HOPPER || d->architecture == NVML_DEVICE_ARCH_UNKNOWN)
                return mn_leave(NVML_ERROR_NOT_SUPPORTED);
        unrepairableMemoryStatus->bUnrepairableMemory = 0;
        return mn_leave(NVML_SUCCESS);
}

/* nvmlDeviceGetCapabilities: no extended GPU memory (EGM "disabled" in every capture, GB200 and GB300 included). */
nvmlReturn_t nvmlDeviceGetCapabilities(nvmlDevice_t device, nvmlDeviceCapabilities_t *caps)
{
        DEVICE_QUERY(GPU_HANDLE, device, caps, 0);
        (void) d;
        (void) g;
        (void) m;
        if (caps->version != nvmlDeviceCapabilities_v1)
                return mn_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        caps->capMask = 0;
        return mn_leave(NVML_SUCCESS);
}
