/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workloads of mock driver roots (`mock install --workload`, mock/mock.h,
 * docs/mock-driver-root.md "Workloads"): what a container, vm-passthrough or
 * vm-vgpu node (mdev or SR-IOV shape) and its GPUDirect options add to the
 * root, in the shapes the sandbox, vGPU and GPUDirect components read under
 * --sysfs-root <root>/sys (src/components/sandbox.h):
 *   sys/bus/pci/devices/<addr>/driver -> ../../drivers/<driver>, and
 *     sys/bus/pci/drivers/<driver>/<addr> -> ../../devices/<addr> (the kernel's
 *     two links of a bound function);
 *   SR-IOV: sriov_totalvfs, sriov_numvfs and virtfn<i> -> ../<vf> on the PF,
 *     each VF a PCI function of its own with physfn -> ../<pf>; VF i at routing
 *     id PF + 4 + i (first VF offset 4, stride 1: an A100 at 3b:00.0 has its
 *     VFs from 3b:00.4, NVIDIA vGPU user guide), the first VF with
 *     nvidia/current_vgpu_type set;
 *   mdev: mdev_supported_types/<type>/{name,device_api,available_instances},
 *     sys/class/mdev_bus/<addr> -> the GPU, one mdev device per GPU in the
 *     GPU's folder (<addr>/<uuid>/mdev_type -> its type) linked from
 *     sys/bus/mdev/devices/<uuid> (go-nvlib nvmdev's view);
 *   sys/module/<name>/{initstate,refcnt} for loaded modules ("live": what
 *     /sys/module shows for a loaded module);
 *   run/nvidia/validations/.driver-ctr-ready with upstream's three keys
 *     (assets/state-driver/0400_configmap.yaml, see
 *     shared/reference/upstream-components.md), .cc-manager-ctr-ready, and
 *     run/mellanox/drivers/.driver-ready (the MOFED container's flag).
 * The device folders under sys/bus/pci/devices are real folders (as
 * layout.c makes them), not links into sys/devices: remove never follows a
 * link, so everything here is recorded where it is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/host/nvidia-host.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/root/root-internal.h"

#define PCI_DEVS "sys/bus/pci/devices"
#define STATUS_DIR "run/nvidia/validations"
#define MOFED_DIR "run/mellanox/drivers"
#define CLASS_3D (GV_PCI_CLASS_DISPLAY_3D << 8) /* prog-if 0, as every captured GPU */
#define FIRST_VF_OFFSET 4u
/* The vGPU type the mock offers: an mdev type folder "nvidia-<id>"; the SR-IOV VF's current_vgpu_type is <id>. */
#define VGPU_TYPE_ID 256u
#define VGPU_TYPE_NAME "NVIDIA mock vGPU 4C"
/* The NIC of --rdma: Mellanox ConnectX-6 Dx (15b3:101d), an Ethernet controller (class 0x020000). */
#define NIC_VENDOR GV_PCI_VENDOR_MELLANOX
#define NIC_DEVICE 0x101du
#define NIC_CLASS 0x020000u

const char *gv_mock_workload_name(gv_mock_workload_t w)
{
        switch (w) {
        case GV_MOCK_WORKLOAD_CONTAINER:
                return "container";
        case GV_MOCK_WORKLOAD_VM_PASSTHROUGH:
                return "vm-passthrough";
        case GV_MOCK_WORKLOAD_VM_VGPU:
                return "vm-vgpu";
        default:
                return "none";
        }
}

int gv_mock_workload_parse(const char *s, gv_mock_workload_t *out)
{
        for (int w = GV_MOCK_WORKLOAD_CONTAINER; w <= GV_MOCK_WORKLOAD_VM_VGPU; w++)
                if (s && strcmp(s, gv_mock_workload_name((gv_mock_workload_t) w)) == 0) {
                        *out = (gv_mock_workload_t) w;
                        return 0;
                }
        return -EINVAL;
}

static bool gpudirect(const gv_mock_install_opts_t *o)
{
        return o->gds || o->gdrcopy || o->rdma;
}

/* The workload laid out: the one asked, or container when only GPUDirect flags are given. */
static gv_mock_workload_t effective(const gv_mock_install_opts_t *o)
{
        return o->workload == GV_MOCK_WORKLOAD_NONE && gpudirect(o) ? GV_MOCK_WORKLOAD_CONTAINER : o->workload;
}

static bool module_name_ok(const char *s)
{
        if (!s || !*s || strlen(s) > 64)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
                      *c == '-'))
                        return false;
        return true;
}

int mr_workload_check(const gv_mock_install_opts_t *o, gv_error_t **err)
{
        if (o->workload > GV_MOCK_WORKLOAD_VM_VGPU)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--workload: expected container, vm-passthrough "
                                                                    "or vm-vgpu");
        if (gpudirect(o) && effective(o) != GV_MOCK_WORKLOAD_CONTAINER)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--gds, --gdrcopy and --rdma need --workload "
                                    "container (the driver container writes their flags), not %s",
                                    gv_mock_workload_name(o->workload));
        if (o->vgpu_shape != GV_MOCK_VGPU_MDEV &&
            (o->vgpu_shape != GV_MOCK_VGPU_SRIOV || o->workload != GV_MOCK_WORKLOAD_VM_VGPU))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--vgpu-shape applies to --workload vm-vgpu only");
        for (const char *const *m = o->omit_modules; m && *m; m++)
                if (!module_name_ok(*m))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--omit-module %s: expected a kernel "
                                                                            "module name (letters, digits, _ and -)",
                                            *m);
        return 0;
}

int mr_workload_describe(const gv_mock_install_opts_t *o, char **out)
{
        *out = NULL;
        gv_mock_workload_t w = effective(o);
        if (w == GV_MOCK_WORKLOAD_NONE && !o->cc)
                return 0;
        char *s = NULL;
        if (asprintf(&s, "%s%s%s%s%s%s", w == GV_MOCK_WORKLOAD_NONE ? "" : gv_mock_workload_name(w),
                     w != GV_MOCK_WORKLOAD_VM_VGPU ? ""
                     : o->vgpu_shape == GV_MOCK_VGPU_SRIOV ? "/sriov"
                                                           : "/mdev",
                     o->gds ? "+gds" : "", o->gdrcopy ? "+gdrcopy" : "", o->rdma ? "+rdma" : "",
                     o->cc ? (w == GV_MOCK_WORKLOAD_NONE ? "cc" : "+cc") : "") < 0)
                return -ENOMEM;
        *out = s;
        return 0;
}

/* A PCI address; printed as the kernel names the device folder, "0000:3b:00.4". */
typedef struct pci_addr {
        unsigned dom, bus, dev, fn;
} pci_addr_t;

/* "dddd:bb:dd.f": 12 characters, the fields masked to their widths. */
typedef struct addr_text {
        char s[16];
} addr_text_t;

static addr_text_t addr_text(pci_addr_t a)
{
        addr_text_t t;
        snprintf(t.s, sizeof(t.s), "%04x:%02x:%02x.%x", a.dom & 0xffffu, a.bus & 0xffu, a.dev & 0x1fu, a.fn & 7u);
        return t;
}

static pci_addr_t gpu_addr(const gv_mock_device_t *d)
{
        return (pci_addr_t){ d->pci_domain & 0xffffu, d->pci_bus & 0xffu, d->pci_device & 0x1fu, 0 };
}

_Static_assert(GV_MOCK_SRIOV_VFS <= 8u - FIRST_VF_OFFSET, "the VFs take functions 4..7 of the PF's device");

/* VF @i (< 4) of the PF at @pf (function 0): routing id PF + FIRST_VF_OFFSET + i, functions 4..7 of its device. */
static pci_addr_t vf_addr(pci_addr_t pf, unsigned i)
{
        unsigned rid = (pf.dev << 3) + FIRST_VF_OFFSET + i;
        return (pci_addr_t){ pf.dom, pf.bus, (rid >> 3) & 0x1fu, rid & 7u };
}

/* What put_entryf() makes. */
typedef enum { ENTRY_TEXT, ENTRY_LINK, ENTRY_DIRS } entry_kind_t;

/* One entry whose path is printf(@fmt, ...): a small file holding @arg, mode 0444 (as sysfs
 * attributes read), a symlink pointing at @arg, or a folder with its parents (@arg unused). */
static int put_entryf(ictx_t *c, entry_kind_t kind, const char *arg, gv_error_t **err, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static int put_entryf(ictx_t *c, entry_kind_t kind, const char *arg, gv_error_t **err, const char *fmt, ...)
{
        _cleanup_free_ char *path = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (n < 0)
                return gv_error_oom(err);
        switch (kind) {
        case ENTRY_TEXT:
                return mr_put_file(c, path, arg, strlen(arg), 0444, err);
        case ENTRY_LINK:
                return mr_put_link(c, path, arg, err);
        case ENTRY_DIRS:
        default:
                return mr_ensure_dirs(c, path, err);
        }
}
#define put_textf(c, text, err, ...) put_entryf((c), ENTRY_TEXT, (text), (err), __VA_ARGS__)
#define put_linkf(c, target, err, ...) put_entryf((c), ENTRY_LINK, (target), (err), __VA_ARGS__)
#define ensure_dirsf(c, err, ...) put_entryf((c), ENTRY_DIRS, NULL, (err), __VA_ARGS__)

/* The files layout.c writes for a GPU's function, for a function it does not know (a VF, the NIC). */
static int pci_function(ictx_t *c, pci_addr_t a, unsigned vendor, unsigned device, unsigned subsys, unsigned cls,
                        gv_error_t **err)
{
        addr_text_t at = addr_text(a);
        int r = ensure_dirsf(c, err, PCI_DEVS "/%s", at.s);
        const struct {
                const char *name;
                unsigned digits; /* hex digits; 0: "-1" */
                unsigned value;
        } files[] = {
                { "vendor", 4, vendor },
                { "device", 4, device & 0xffffu },
                { "subsystem_vendor", 4, subsys & 0xffffu },
                { "subsystem_device", 4, (subsys >> 16) & 0xffffu },
                { "class", 6, cls },
                { "numa_node", 0, 0 }, /* no NUMA affinity */
        };
        for (size_t k = 0; r == 0 && k < GV_ARRAY_SIZE(files); k++) {
                char text[16];
                if (files[k].digits)
                        snprintf(text, sizeof(text), "0x%0*x\n", (int) files[k].digits, files[k].value);
                else
                        snprintf(text, sizeof(text), "-1\n");
                r = put_textf(c, text, err, PCI_DEVS "/%s/%s", at.s, files[k].name);
        }
        return r;
}

/* The kernel's two links of a function bound to @driver: <addr>/driver and drivers/<driver>/<addr>. */
static int bind(ictx_t *c, pci_addr_t a, const char *driver, gv_error_t **err)
{
        addr_text_t at = addr_text(a);
        _cleanup_free_ char *target = NULL, *back = NULL;
        if (asprintf(&target, "../../drivers/%s", driver) < 0 || asprintf(&back, "../../devices/%s", at.s) < 0)
                return gv_error_oom(err);
        int r;
        if ((r = ensure_dirsf(c, err, "sys/bus/pci/drivers/%s", driver)) < 0 ||
            (r = put_linkf(c, target, err, PCI_DEVS "/%s/driver", at.s)) < 0)
                return r;
        return put_linkf(c, back, err, "sys/bus/pci/drivers/%s/%s", driver, at.s);
}

static bool omitted(const gv_mock_install_opts_t *o, const char *name)
{
        for (const char *const *m = o->omit_modules; m && *m; m++)
                if (strcmp(*m, name) == 0)
                        return true;
        return false;
}

/* sys/module/<name> of each of @names (NULL-terminated) not in o->omit_modules: initstate "live", refcnt. */
static int modules(ictx_t *c, const gv_mock_install_opts_t *o, const char *const *names, gv_error_t **err)
{
        int r = 0;
        for (const char *const *n = names; r == 0 && *n; n++) {
                if (omitted(o, *n))
                        continue;
                if ((r = ensure_dirsf(c, err, "sys/module/%s", *n)) < 0 ||
                    (r = put_textf(c, "live\n", err, "sys/module/%s/initstate", *n)) < 0)
                        return r;
                r = put_textf(c, "1\n", err, "sys/module/%s/refcnt", *n);
        }
        return r;
}

/* Every GPU of @p bound to @driver. */
static int bind_gpus(ictx_t *c, const gv_mock_profile_t *p, const char *driver, gv_error_t **err)
{
        int r = 0;
        for (unsigned i = 0; r == 0 && i < p->device_count; i++)
                r = bind(c, gpu_addr(&p->devices[i]), driver, err);
        return r;
}

/* mdev shape, one GPU: an mdev parent (mdev_bus link, one type) with one mdev device of that type. */
static int mdev_gpu(ictx_t *c, pci_addr_t a, gv_error_t **err)
{
        addr_text_t at = addr_text(a);
        char uuid[40], type[32];
        /* "mdev" in hex, then the GPU's address: one stable UUID per GPU */
        snprintf(uuid, sizeof(uuid), "6d646576-%04x-4000-8000-%012x", a.dom, a.bus << 8 | a.dev << 3);
        snprintf(type, sizeof(type), "nvidia-%u", VGPU_TYPE_ID);
        _cleanup_free_ char *parent = NULL, *dev_target = NULL, *type_target = NULL;
        if (asprintf(&parent, "../../bus/pci/devices/%s", at.s) < 0 ||
            asprintf(&dev_target, "../../../bus/pci/devices/%s/%s", at.s, uuid) < 0 ||
            asprintf(&type_target, "../mdev_supported_types/%s", type) < 0)
                return gv_error_oom(err);
        int r;
        if ((r = ensure_dirsf(c, err, PCI_DEVS "/%s/mdev_supported_types/%s", at.s, type)) < 0 ||
            (r = put_textf(c, VGPU_TYPE_NAME "\n", err, PCI_DEVS "/%s/mdev_supported_types/%s/name", at.s, type)) < 0 ||
            (r = put_textf(c, "vfio-pci\n", err, PCI_DEVS "/%s/mdev_supported_types/%s/device_api", at.s, type)) < 0 ||
            (r = put_textf(c, "3\n", err, PCI_DEVS "/%s/mdev_supported_types/%s/available_instances", at.s, type)) < 0 ||
            (r = put_linkf(c, parent, err, "sys/class/mdev_bus/%s", at.s)) < 0 ||
            (r = ensure_dirsf(c, err, PCI_DEVS "/%s/%s", at.s, uuid)) < 0 ||
            (r = put_linkf(c, type_target, err, PCI_DEVS "/%s/%s/mdev_type", at.s, uuid)) < 0)
                return r;
        return put_linkf(c, dev_target, err, "sys/bus/mdev/devices/%s", uuid);
}

/* SR-IOV shape, one GPU: GV_MOCK_SRIOV_VFS VFs, all enabled, bound to nvidia, the first carrying a vGPU type. */
static int sriov_gpu(ictx_t *c, const gv_mock_device_t *d, gv_error_t **err)
{
        pci_addr_t pf = gpu_addr(d);
        addr_text_t pt = addr_text(pf);
        char count[16], vtype[16];
        snprintf(count, sizeof(count), "%u\n", GV_MOCK_SRIOV_VFS);
        snprintf(vtype, sizeof(vtype), "%u\n", VGPU_TYPE_ID);
        int r;
        if ((r = put_textf(c, count, err, PCI_DEVS "/%s/sriov_totalvfs", pt.s)) < 0 ||
            (r = put_textf(c, count, err, PCI_DEVS "/%s/sriov_numvfs", pt.s)) < 0)
                return r;
        _cleanup_free_ char *physfn = NULL;
        if (asprintf(&physfn, "../%s", pt.s) < 0)
                return gv_error_oom(err);
        for (unsigned i = 0; i < GV_MOCK_SRIOV_VFS; i++) {
                pci_addr_t vf = vf_addr(pf, i);
                addr_text_t vt = addr_text(vf);
                char virtfn[24];
                snprintf(virtfn, sizeof(virtfn), "../%s", vt.s);
                if ((r = pci_function(c, vf, GV_PCI_VENDOR_NVIDIA, d->pci_device_id, d->pci_subsystem_id, CLASS_3D, err)) < 0 ||
                    (r = put_linkf(c, physfn, err, PCI_DEVS "/%s/physfn", vt.s)) < 0 ||
                    (r = put_linkf(c, virtfn, err, PCI_DEVS "/%s/virtfn%u", pt.s, i)) < 0 ||
                    (r = bind(c, vf, "nvidia", err)) < 0 || (r = ensure_dirsf(c, err, PCI_DEVS "/%s/nvidia", vt.s)) < 0 ||
                    (r = put_textf(c, i == 0 ? vtype : "0\n", err, PCI_DEVS "/%s/nvidia/current_vgpu_type", vt.s)) < 0)
                        return r;
        }
        return 0;
}

/* A bus number of domain 0 that no GPU uses: the NIC's (64 GPUs at most leave one free). */
static pci_addr_t nic_addr(const gv_mock_profile_t *p)
{
        for (unsigned b = 0x01; b <= 0xff; b++) {
                bool used = false;
                for (unsigned i = 0; !used && i < p->device_count; i++)
                        used = (p->devices[i].pci_domain & 0xffffu) == 0 && (p->devices[i].pci_bus & 0xffu) == b;
                if (!used)
                        return (pci_addr_t){ 0, b, 0, 0 };
        }
        return (pci_addr_t){ 1, 0, 0, 0 };
}

/* The workload's bindings, vGPU layout and modules. */
static int lay_out_kind(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, gv_mock_workload_t w,
                        gv_error_t **err)
{
        static const char *const container_mods[] = { "nvidia", "nvidia_uvm", "nvidia_modeset", NULL };
        static const char *const passthrough_mods[] = { "vfio", "vfio_pci", NULL };
        static const char *const vgpu_mods[] = { "nvidia", "nvidia_vgpu_vfio", NULL };
        int r = 0;
        switch (w) {
        case GV_MOCK_WORKLOAD_CONTAINER:
                if ((r = bind_gpus(c, p, "nvidia", err)) < 0)
                        return r;
                return modules(c, o, container_mods, err);
        case GV_MOCK_WORKLOAD_VM_PASSTHROUGH:
                if ((r = bind_gpus(c, p, "vfio-pci", err)) < 0)
                        return r;
                return modules(c, o, passthrough_mods, err);
        case GV_MOCK_WORKLOAD_VM_VGPU:
                if ((r = bind_gpus(c, p, "nvidia", err)) < 0)
                        return r;
                if (o->vgpu_shape == GV_MOCK_VGPU_MDEV && ((r = mr_ensure_dirs(c, "sys/class/mdev_bus", err)) < 0 ||
                                                           (r = mr_ensure_dirs(c, "sys/bus/mdev/devices", err)) < 0))
                        return r;
                for (unsigned i = 0; r == 0 && i < p->device_count; i++)
                        r = o->vgpu_shape == GV_MOCK_VGPU_SRIOV ? sriov_gpu(c, &p->devices[i], err)
                                                                : mdev_gpu(c, gpu_addr(&p->devices[i]), err);
                return r < 0 ? r : modules(c, o, vgpu_mods, err);
        default:
                return 0;
        }
}

/* GPUDirect: modules, and for RDMA a Mellanox NIC bound to mlx5_core and the MOFED container's flag. */
static int lay_out_gpudirect(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, gv_error_t **err)
{
        static const char *const gds_mods[] = { "nvidia_fs", NULL };
        static const char *const gdrcopy_mods[] = { "gdrdrv", NULL };
        static const char *const rdma_mods[] = { "mlx5_core", "ib_core", "nvidia_peermem", NULL };
        int r;
        if ((o->gds && (r = modules(c, o, gds_mods, err)) < 0) || (o->gdrcopy && (r = modules(c, o, gdrcopy_mods, err)) < 0))
                return r;
        if (!o->rdma)
                return 0;
        pci_addr_t nic = nic_addr(p);
        if ((r = pci_function(c, nic, NIC_VENDOR, NIC_DEVICE, 0x001615b3u, NIC_CLASS, err)) < 0 ||
            (r = bind(c, nic, "mlx5_core", err)) < 0 || (r = modules(c, o, rdma_mods, err)) < 0 ||
            (r = mr_ensure_dirs(c, MOFED_DIR, err)) < 0)
                return r;
        return mr_put_file(c, MOFED_DIR "/.driver-ready", "", 0, 0644, err);
}

/* The status folder's flags: the driver container's .driver-ctr-ready (container workload) and the cc-manager's. */
static int lay_out_flags(ictx_t *c, const gv_mock_install_opts_t *o, gv_mock_workload_t w, gv_error_t **err)
{
        if (w != GV_MOCK_WORKLOAD_CONTAINER && !o->cc)
                return 0;
        int r = mr_ensure_dirs(c, STATUS_DIR, err);
        if (r == 0 && w == GV_MOCK_WORKLOAD_CONTAINER) {
                _cleanup_free_ char *text = NULL;
                if (asprintf(&text, "GDRCOPY_ENABLED: %s\nGDS_ENABLED: %s\nGPU_DIRECT_RDMA_ENABLED: %s\n",
                             o->gdrcopy ? "true" : "false", o->gds ? "true" : "false", o->rdma ? "true" : "false") < 0)
                        return gv_error_oom(err);
                r = mr_put_file(c, STATUS_DIR "/" GV_DRIVER_CTR_READY_FILE, text, strlen(text), 0644, err);
        }
        if (r == 0 && o->cc)
                r = mr_put_file(c, STATUS_DIR "/.cc-manager-ctr-ready", "", 0, 0644, err);
        return r;
}

int mr_lay_out_workload(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, gv_error_t **err)
{
        gv_mock_workload_t w = effective(o);
        int r;
        if ((r = lay_out_kind(c, o, p, w, err)) < 0 || (r = lay_out_gpudirect(c, o, p, err)) < 0)
                return r;
        return lay_out_flags(c, o, w, err);
}
