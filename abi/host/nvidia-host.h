/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Facts of an NVIDIA GPU host that the validator reads and the mock lays out, defined once for
 * both (header only):
 *
 * - PCI ids, as sysfs shows them in bus/pci/devices/<address>/{vendor,class}: NVIDIA's vendor id
 *   and the two display-controller classes its GPUs report (the PCI-SIG class codes of the PCI
 *   Code and ID Assignment Specification, base class 03h; pci.ids "C 03"), and Mellanox's
 *   vendor id (the NICs of GPUDirect RDMA).  The same values as go-nvlib's nvpci package
 *   (PCINvidiaVendorID, PCIVgaControllerClass, PCI3dControllerClass), which NVIDIA's validator
 *   uses.
 * - The driver container's flag file: NVIDIA's driver container writes `.driver-ctr-ready` into
 *   the validations folder (/run/nvidia/validations) once the driver is loaded, with
 *   GDS_ENABLED, GDRCOPY_ENABLED and GPU_DIRECT_RDMA_ENABLED lines (gpu-operator's
 *   cmd/nvidia-validator/main.go; shared/reference/upstream-components.md).
 */
#ifndef GV_ABI_HOST_NVIDIA_HOST_H
#define GV_ABI_HOST_NVIDIA_HOST_H

#define GV_PCI_VENDOR_NVIDIA 0x10deU
#define GV_PCI_VENDOR_MELLANOX 0x15b3U

/* Base class and subclass (class >> 8): VGA-compatible and 3D display controllers. */
#define GV_PCI_CLASS_DISPLAY_VGA 0x0300U
#define GV_PCI_CLASS_DISPLAY_3D 0x0302U

/* The driver container's flag file, in the validations (status) folder. */
#define GV_DRIVER_CTR_READY_FILE ".driver-ctr-ready"

#endif
