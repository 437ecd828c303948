/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vgpu-manager: on a vm-vgpu node the NVIDIA vGPU manager is loaded (its
 * nvidia-smi runs, host-installed or from the vGPU manager container) and
 * every NVIDIA GPU is ready to carry vGPUs, in either shape:
 *   - mdev: the GPU (or one of its VFs) is an mdev parent
 *     (<sysfs>/class/mdev_bus/<address> or mdev_supported_types);
 *   - SR-IOV: sriov_numvfs == sriov_totalvfs > 0 (vendor-specific VFIO,
 *     no mdev at all, gpu-operator #2594).
 * A GPU that advertises sriov_totalvfs but is an mdev parent (a T4) is ready
 * as mdev: no wait for VFs that never come (gpu-operator #2365).  Upstream
 * accepts one mdev parent for the whole node; here every GPU must be ready
 * and a failure names each GPU and what it found.  Writes workload-type;
 * skipped unless vm-vgpu.  A host-installed manager also writes
 * host-vgpu-manager-ready (the companion marker).  Upstream:
 * shared/reference/upstream-components.md ("vgpu-manager").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "sandbox.h"

#define COMPONENT "vgpu-manager"

/* Where upstream looks for a host-installed nvidia-smi (main.go:251-258). */
static const char *const host_bin_dirs[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/lib/wsl/lib", "/opt/bin",
                                             NULL };
static const char *const ctr_bin_dirs[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin", NULL };

static const char *host_root_of(const gv_config_t *cfg)
{
        if (cfg->driver.host_root_ctr_path && *cfg->driver.host_root_ctr_path)
                return cfg->driver.host_root_ctr_path;
        return cfg->driver.host_root && *cfg->driver.host_root ? cfg->driver.host_root : "/";
}

static const char *driver_root_of(const gv_config_t *cfg)
{
        if (cfg->driver.driver_install_dir_ctr_path && *cfg->driver.driver_install_dir_ctr_path)
                return cfg->driver.driver_install_dir_ctr_path;
        return cfg->driver.driver_install_dir && *cfg->driver.driver_install_dir ? cfg->driver.driver_install_dir : "/run/nvidia/driver";
}

/* Step 1: find the manager's nvidia-smi (host first) and run it. */
static int manager_check(const gv_config_t *cfg, bool *host, gv_result_t *result, gv_error_t **err)
{
        _cleanup_free_ char *smi = NULL, *tried = NULL;
        size_t tlen = 0;
        _cleanup_fclose_ FILE *t = open_memstream(&tried, &tlen);
        if (!t)
                return gv_error_oom(err);
        *host = gv_root_find(host_root_of(cfg), host_bin_dirs, "nvidia-smi", &smi, NULL, t) == 0;
        if (!*host && gv_root_find(driver_root_of(cfg), ctr_bin_dirs, "nvidia-smi", &smi, NULL, t) < 0) {
                (void) gv_memstream_close(TAKE_PTR(t), &tried); /* NULL when cut short: "" below */
                return gv_error_set(err, ENOENT, GV_REASON_DRIVER_NOT_LOADED,
                                    "vGPU manager not found: no nvidia-smi on the host nor in the manager "
                                    "container's root; tried:%s",
                                    tried ? tried : "");
        }
        if (cfg->driver.run_nvidia_smi) {
                /* as upstream (chroot <root> nvidia-smi) when we may; else run it in place */
                const char *root = *host ? host_root_of(cfg) : driver_root_of(cfg);
                size_t rl = strlen(root);
                while (rl > 1 && root[rl - 1] == '/')
                        rl--;
                bool in_root = rl > 1 && strncmp(smi, root, rl) == 0 && smi[rl] == '/';
                _cleanup_free_ char *chroot_dir = in_root && geteuid() == 0 ? strndup(root, rl) : NULL;
                _cleanup_free_ char *sh = NULL;
                if (chroot_dir && gv_root_resolve(chroot_dir, "/bin/sh", &sh, NULL) < 0) {
                        free(chroot_dir); /* a root without a shell is not one to chroot into (as driver.c) */
                        chroot_dir = NULL;
                }
                int r = gv_nvidia_smi_check(cfg, chroot_dir ? smi + rl : smi, NULL, chroot_dir, &result->warning, err);
                if (r < 0)
                        return gv_error_prefix(err, "vGPU manager %s", smi);
        }
        return gv_result_fact(result, "NVIDIA_SMI", smi, err);
}

/* Whether @pf (or one of its VFs in @all) is ready for vGPUs; *@shape: "mdev" or "sriov". */
static bool gpu_ready(const gv_pci_list_t *all, const gv_pci_fn_t *pf, const char **shape)
{
        for (size_t i = 0; i < all->n; i++)
                if (all->items[i].physfn && strcmp(all->items[i].physfn, pf->address) == 0 &&
                    all->items[i].mdev_parent)
                        pf = pf->mdev_parent ? pf : &all->items[i]; /* a VF is an mdev parent */
        if (pf->mdev_parent) {
                *shape = "mdev";
                return true;
        }
        if (pf->sriov_totalvfs > 0 && pf->sriov_numvfs == pf->sriov_totalvfs) {
                *shape = "sriov";
                return true;
        }
        return false;
}

/* What a GPU that is not ready shows, for the failure message. */
static void describe(const gv_pci_fn_t *pf, FILE *why)
{
        fprintf(why, "%s (device 0x%04x, driver %s): ", pf->address, pf->device, pf->driver ? pf->driver : "none");
        if (pf->sriov_totalvfs > 0)
                fprintf(why, "sriov_numvfs %ld of sriov_totalvfs %ld", pf->sriov_numvfs < 0 ? 0 : pf->sriov_numvfs,
                        pf->sriov_totalvfs);
        else
                fprintf(why, "no SR-IOV");
        fprintf(why, ", not an mdev parent (%zu mdev types, no VF in mdev_bus)", pf->mdev_types);
}

/* Step 2: every GPU PF ready in one of the two shapes. */
static int parents_check(const gv_config_t *cfg, gv_result_t *result, gv_error_t **err)
{
        gv_pci_list_t gpus = { 0 };
        int r = gv_pci_list_gpus(gv_sysfs_root(&cfg->sandbox), &gpus, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *why = NULL;
        size_t wlen = 0, npf = 0, nbad = 0, nmdev = 0, nsriov = 0;
        _cleanup_fclose_ FILE *w = open_memstream(&why, &wlen);
        if (!w) {
                gv_pci_list_clear(&gpus);
                return gv_error_oom(err);
        }
        for (size_t i = 0; i < gpus.n; i++) {
                const gv_pci_fn_t *pf = &gpus.items[i];
                if (pf->physfn)
                        continue;
                npf++;
                const char *shape = NULL;
                if (gpu_ready(&gpus, pf, &shape)) {
                        *(strcmp(shape, "mdev") == 0 ? &nmdev : &nsriov) += 1;
                        continue;
                }
                if (nbad++)
                        fputs("; ", w);
                describe(pf, w);
        }
        gv_pci_list_clear(&gpus);
        if (gv_memstream_close(TAKE_PTR(w), &why) < 0)
                return gv_error_oom(err);
        if (npf == 0)
                return gv_error_set(err, ENOENT, GV_REASON_PCI_NOT_READY, "no NVIDIA GPU under %s/bus/pci/devices",
                                    gv_sysfs_root(&cfg->sandbox));
        if (nbad)
                return gv_error_set(err, EAGAIN, GV_REASON_PCI_NOT_READY, "%zu of %zu GPUs not ready for vGPU: %s",
                                    nbad, npf, why);
        const char *shape = nmdev && nsriov ? "mixed" : nmdev ? "mdev" : "sriov";
        char count[32];
        snprintf(count, sizeof(count), "%zu", npf);
        if ((r = gv_result_fact(result, "VGPU_SHAPE", shape, err)) < 0)
                return r;
        return gv_result_fact(result, "GPU_COUNT", count, err);
}

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store; /* the workload config was resolved by the runner (gv_component_t.workload) */
        int r;
        bool host = false;
        if ((r = manager_check(cfg, &host, result, err)) < 0)
                return r;
        if ((r = parents_check(cfg, result, err)) < 0)
                return r;
        result->host_driver = host;
        if ((r = gv_result_fact(result, "IS_HOST_VGPU_MANAGER", host ? "true" : "false", err)) < 0)
                return r;
        const char *shape = gv_kvlist_get(&result->facts, "VGPU_SHAPE");
        const char *count = gv_kvlist_get(&result->facts, "GPU_COUNT");
        if (asprintf(&result->summary, "%s vGPU manager; %s GPU%s ready (%s)", host ? "host" : "container", count,
                     strcmp(count, "1") == 0 ? "" : "s", shape) < 0)
                result->summary = NULL;
        return 0;
}

GV_SANDBOX_COMPONENT(vgpu_manager, COMPONENT, GV_MARKER_VGPU_MANAGER, "vm-vgpu", validate);
