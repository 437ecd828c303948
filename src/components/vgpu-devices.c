/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vgpu-devices: on a vm-vgpu node at least one vGPU device exists on an
 * NVIDIA GPU, in either shape:
 *   - mdev: an entry of <sysfs>/bus/mdev/devices whose parent folder is an
 *     NVIDIA GPU (PF or VF), with an mdev_type;
 *   - SR-IOV with vendor-specific VFIO (no /sys/bus/mdev, gpu-operator
 *     #2594): a VF of an NVIDIA GPU whose nvidia/current_vgpu_type is set.
 * Unlike upstream, a missing /sys/bus/mdev is not an error by itself, and
 * WITH_WAIT retries with the capped backoff.  Depends on vgpu-manager-ready.
 * Upstream: shared/reference/upstream-components.md ("vgpu-devices").
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "sandbox.h"

#define COMPONENT "vgpu-devices"

static bool is_gpu(const gv_pci_list_t *gpus, const char *address)
{
        for (size_t i = 0; i < gpus->n; i++)
                if (strcmp(gpus->items[i].address, address) == 0)
                        return true;
        return false;
}

/* Count the mdev devices: those on NVIDIA GPUs (*@nvidia) and all of them (*@total). */
static int count_mdevs(const char *sysfs, const gv_pci_list_t *gpus, size_t *nvidia, size_t *total, FILE *list)
{
        *nvidia = *total = 0;
        _cleanup_free_ char *dir = gv_path_join(sysfs, "bus/mdev/devices");
        if (!dir)
                return -ENOMEM;
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                (*total)++;
                _cleanup_free_ char *p = gv_path_join(dir, e->d_name);
                _cleanup_free_ char *real = p ? realpath(p, NULL) : NULL;
                _cleanup_free_ char *type = NULL;
                if (!real)
                        continue;
                char *slash = strrchr(real, '/');
                if (!slash)
                        continue;
                *slash = '\0';
                const char *parent = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
                if (!is_gpu(gpus, parent))
                        continue;
                *slash = '/';
                _cleanup_free_ char *tp = gv_path_join(real, "mdev_type/name");
                if (!tp || gv_read_file_at(AT_FDCWD, tp, false, 256, &type, NULL, NULL) < 0) {
                        _cleanup_free_ char *tl = gv_path_join(real, "mdev_type");
                        char buf[PATH_MAX];
                        ssize_t n = tl ? readlink(tl, buf, sizeof(buf) - 1) : -1;
                        if (n <= 0)
                                continue; /* no type: not a usable vGPU (as go-nvlib) */
                        buf[n] = '\0';
                        type = strdup(strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf);
                }
                if (type)
                        type[strcspn(type, "\n")] = '\0';
                *slash = '\0';
                fprintf(list, "%s%s@%s(%s)", *nvidia ? "," : "", e->d_name, parent, type ? type : "?");
                (*nvidia)++;
        }
        return 0;
}

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store; /* the workload config was resolved by the runner (gv_component_t.workload) */
        int r;
        const char *sysfs = gv_sysfs_root(&cfg->sandbox);
        gv_pci_list_t gpus = { 0 };
        if ((r = gv_pci_list_gpus(sysfs, &gpus, err)) < 0)
                return r;
        _cleanup_free_ char *devices = NULL;
        size_t dlen = 0, nmdev = 0, total = 0, nvf = 0, nvf_typed = 0;
        FILE *list = open_memstream(&devices, &dlen);
        if (!list) {
                gv_pci_list_clear(&gpus);
                return gv_error_oom(err);
        }
        r = count_mdevs(sysfs, &gpus, &nmdev, &total, list);
        for (size_t i = 0; r >= 0 && i < gpus.n; i++) {
                const gv_pci_fn_t *f = &gpus.items[i];
                if (!f->physfn)
                        continue;
                nvf++;
                if (f->vgpu_type) {
                        fprintf(list, "%s%s(type %s)", nmdev + nvf_typed ? "," : "", f->address, f->vgpu_type);
                        nvf_typed++;
                }
        }
        size_t npf = gpus.n - nvf;
        gv_pci_list_clear(&gpus);
        if (gv_memstream_close(list, &devices) < 0 && r >= 0)
                r = -ENOMEM;
        if (r == -ENOMEM)
                return gv_error_oom(err);
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_IO, "%s/bus/mdev/devices: %s", sysfs, strerror(-r));
        size_t n = nmdev + nvf_typed;
        if (n == 0)
                return gv_error_set(err, EAGAIN, GV_REASON_PCI_NOT_READY,
                                    "no vGPU device on the %zu NVIDIA GPU%s: %zu mdev device%s under "
                                    "%s/bus/mdev/devices, none on an NVIDIA GPU with a type; %zu VF%s, none with "
                                    "nvidia/current_vgpu_type set",
                                    npf, npf == 1 ? "" : "s", total, total == 1 ? "" : "s", sysfs, nvf,
                                    nvf == 1 ? "" : "s");
        char count[32];
        snprintf(count, sizeof(count), "%zu", n);
        if ((r = gv_result_fact(result, "VGPU_DEVICE_COUNT", count, err)) < 0 ||
            (r = gv_result_fact(result, "VGPU_DEVICES", devices, err)) < 0)
                return r;
        gv_result_summary(result, "%zu vGPU device%s (%zu mdev, %zu SR-IOV VF)", n, n == 1 ? "" : "s", nmdev,
                     nvf_typed);
        return 0;
}

GV_SANDBOX_COMPONENT(vgpu_devices, COMPONENT, GV_MARKER_VGPU_DEVICES, "vm-vgpu", validate);
