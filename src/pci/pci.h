/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sysfs PCI scan: the one place that walks <sysfs>/bus/pci/devices, for the driver check,
 * the sandbox and GPUDirect components and the exporter.  Reads only, never touches a device.
 *
 * The rule, as go-nvlib's nvpci (which NVIDIA's validator uses) reads the bus:
 * - every entry of bus/pci/devices is a function; its `vendor` file names the vendor;
 * - an NVIDIA GPU is a function of vendor 0x10de whose `class` is a display controller, VGA
 *   (0x0300xx) or 3D (0x0302xx): the class is compared without its programming-interface byte;
 *   the audio, USB and serial functions and bridges of the same card are not GPUs;
 * - an entry whose `vendor` (or, for the vendor asked for, `class`) cannot be read or is not a
 *   hex number fails the scan, naming the file, rather than being passed over: a GPU hidden
 *   that way would be missed without a word; an entry whose device folder is gone (removed
 *   during the scan) is passed over;
 * - a missing bus/pci/devices folder fails the scan with ENOENT, or reads as a host without a
 *   PCI bus (an empty list) for the callers that ask so (GV_PCI_NO_BUS_EMPTY: the components,
 *   which also run on mock roots without one); the exporter leaves its PCI series out instead.
 * The ids are abi/host/nvidia-host.h's.
 */
#ifndef GV_PCI_PCI_H
#define GV_PCI_PCI_H

#include <stdbool.h>
#include <stddef.h>

#include "abi/host/nvidia-host.h"
#include "base/error.h"

/* One PCI function as sysfs shows it; the fields below `class` only with GV_PCI_DETAILS. */
typedef struct gv_pci_fn {
        char *address;        /* "0000:3b:00.0" (heap) */
        char *path;           /* "<sysfs>/bus/pci/devices/0000:3b:00.0" (heap) */
        unsigned vendor;      /* PCI vendor id */
        unsigned class;       /* 24-bit class code, 0x030200 */
        unsigned device;      /* PCI device id */
        char *driver;         /* basename of the bound driver, heap, NULL when none is bound */
        char *physfn;         /* for a VF: address of its PF (heap); NULL for a PF */
        long sriov_numvfs;    /* -1 when the file is absent (no SR-IOV) */
        long sriov_totalvfs;  /* -1 when absent */
        bool mdev_parent;     /* listed in <sysfs>/class/mdev_bus or has mdev_supported_types */
        size_t mdev_types;    /* entries of mdev_supported_types */
        char *vgpu_type;      /* VF: nvidia/current_vgpu_type when present and not "0" (heap), else NULL */
} gv_pci_fn_t;

typedef struct gv_pci_list {
        size_t n;
        gv_pci_fn_t *items;   /* heap, sorted by address */
} gv_pci_list_t;

/* What gv_pci_scan() keeps and reads. */
typedef enum gv_pci_scan_flags {
        GV_PCI_GPUS = 1 << 0,    /* only display controllers (VGA, 3D) of the vendor */
        GV_PCI_DETAILS = 1 << 1, /* also read device, driver, physfn, SR-IOV, mdev and vGPU fields */
        GV_PCI_NO_BUS_EMPTY = 1 << 2, /* no bus/pci/devices folder: an empty list, not -ENOENT */
} gv_pci_scan_flags_t;

/* Free what @l holds and zero it.  Accepts an already cleared list. */
void gv_pci_list_clear(gv_pci_list_t *l);

/*
 * gv_pci_scan - the functions of vendor @vendor under <@sysfs_root>/bus/pci/devices (only its
 * GPUs with GV_PCI_GPUS; with their details with GV_PCI_DETAILS), by the rule above, sorted by
 * address, into @out (the caller's; gv_pci_list_clear()).
 * Errors: an unreadable or malformed vendor/class file: -EIO with GV_REASON_IO naming the file;
 * the devices folder missing (without GV_PCI_NO_BUS_EMPTY) or unreadable: its errno,
 * GV_REASON_IO; -ENOMEM.  @out is untouched on error.
 */
int gv_pci_scan(const char *sysfs_root, unsigned vendor, unsigned flags, gv_pci_list_t *out, gv_error_t **err);

/* gv_pci_list_gpus - gv_pci_scan() of NVIDIA's GPUs with their details; no PCI bus is an empty list. */
int gv_pci_list_gpus(const char *sysfs_root, gv_pci_list_t *out, gv_error_t **err);

/*
 * gv_pci_count_gpus - how many NVIDIA GPUs gv_pci_scan() finds (PFs and VFs alike), reading
 * only vendor and class.  Returns the count (>= 0) or a negative errno with *err set, as
 * gv_pci_scan().
 */
int gv_pci_count_gpus(const char *sysfs_root, gv_error_t **err);

/* gv_pci_count_vendor - how many functions of @vendor gv_pci_scan() finds; 0 when it fails or there is no bus. */
size_t gv_pci_count_vendor(const char *sysfs_root, unsigned vendor);

/*
 * gv_sysfs_attr - the small sysfs file @dir/@name (links followed, as sysfs needs; at most
 * 4 KiB), its trailing blanks and newline cut.  Heap string (the caller frees it), or NULL
 * when it cannot be read.
 */
char *gv_sysfs_attr(const char *dir, const char *name);

#endif
