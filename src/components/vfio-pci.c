/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vfio-pci: on a vm-passthrough node every NVIDIA GPU (PF) is bound to
 * vfio-pci or nvgrace_gpu_vfio_pci, ready to be handed to a VM.  Writes
 * workload-type first; skipped for another workload config.  Upstream:
 * shared/reference/upstream-components.md ("vfio-pci").  Unlike upstream a
 * failure names every GPU that is not bound and what it is bound to, and
 * WITH_WAIT retries with the runner's capped backoff.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "sandbox.h"

#define COMPONENT "vfio-pci"

static bool vfio_driver(const char *d)
{
        return d && (strcmp(d, "vfio-pci") == 0 || strcmp(d, "nvgrace_gpu_vfio_pci") == 0);
}

static int validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store; /* the workload config was resolved by the runner (gv_component_t.workload) */
        int r;
        gv_pci_list_t gpus = { 0 };
        if ((r = gv_pci_list_gpus(gv_sysfs_root(&cfg->sandbox), &gpus, err)) < 0)
                return r;
        _cleanup_free_ char *bad = NULL, *bound = NULL;
        size_t nbad = 0, npf = 0, badlen = 0, boundlen = 0;
        _cleanup_fclose_ FILE *fb = open_memstream(&bad, &badlen);
        _cleanup_fclose_ FILE *fo = open_memstream(&bound, &boundlen);
        if (!fb || !fo) {
                gv_pci_list_clear(&gpus);
                return gv_error_oom(err);
        }
        for (size_t i = 0; i < gpus.n; i++) {
                const gv_pci_fn_t *g = &gpus.items[i];
                if (g->physfn)
                        continue; /* VFs are not passed through on their own (as go-nvlib) */
                npf++;
                fprintf(fo, "%s%s=%s", npf > 1 ? "," : "", g->address, g->driver ? g->driver : "none");
                if (vfio_driver(g->driver))
                        continue;
                fprintf(fb, "%s%s (device 0x%04x) is bound to %s", nbad ? "; " : "", g->address, g->device,
                        g->driver ? g->driver : "no driver");
                nbad++;
        }
        gv_pci_list_clear(&gpus);
        int cb = gv_memstream_close(TAKE_PTR(fb), &bad);
        if (gv_memstream_close(TAKE_PTR(fo), &bound) < 0 || cb < 0)
                return gv_error_oom(err);
        if (nbad)
                return gv_error_set(err, EAGAIN, GV_REASON_PCI_NOT_READY,
                                    "%zu of %zu GPUs not bound to vfio-pci or nvgrace_gpu_vfio_pci: %s", nbad, npf,
                                    bad);
        char count[32];
        snprintf(count, sizeof(count), "%zu", npf);
        if ((r = gv_result_fact(result, "GPU_COUNT", count, err)) < 0 ||
            (r = gv_result_fact(result, "PCI_DRIVERS", bound, err)) < 0)
                return r;
        if (npf == 0) {
                if (asprintf(&result->warning, "no NVIDIA GPU under %s/bus/pci/devices (passes, as upstream)",
                             gv_sysfs_root(&cfg->sandbox)) < 0)
                        result->warning = NULL;
        }
        gv_result_summary(result, "%zu GPU%s bound for pass-through (workload config vm-passthrough)", npf,
                          npf == 1 ? "" : "s");
        return 0;
}

GV_SANDBOX_COMPONENT(vfio_pci, COMPONENT, GV_MARKER_VFIO_PCI, "vm-passthrough", validate);
