/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver component: find the driver (host or container, upstream's
 * rule), load its NVML in-process and check every GPU, optionally run its
 * nvidia-smi (its exit-code policy: gv_nvidia_smi_exit_reason()), wait for
 * the device nodes, which may appear seconds after the driver loads, check the
 * kernel module (markers must not outlive a removed driver), create /dev/char symlinks, and describe the result in
 * driver-ready's upstream keys.  See docs/components.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/host/nvidia-host.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "components-internal.h"
#include "driver-internal.h"
#include "mock/mock.h"
#include "nvml/nvml.h"
#include "sandbox.h"

#define COMPONENT "driver"

/* upstream's lib list, then ours: drivers installed under /opt/nvidia, Talos (/usr/local/glibc/lib), GKE (/usr/local/nvidia) */
static const char *const default_lib_search[] = {
        "/",
        "/usr/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/lib64",
        "/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/lib",
        "/usr/lib",
        "/usr/local/nvidia/lib64",
        "/usr/local/glibc/lib",
        "/usr/local/lib",
        "/opt/nvidia/lib64",
        "/opt/nvidia/lib",
        "/usr/lib/wsl/lib",
        NULL,
};

/* upstream's bin list (host and container lists merged), then ours */
static const char *const default_bin_search[] = {
        "/usr/bin",
        "/usr/sbin",
        "/bin",
        "/sbin",
        "/usr/lib/wsl/lib",
        "/opt/bin",
        "/usr/local/bin",
        "/usr/local/nvidia/bin",
        "/opt/nvidia/bin",
        "/",
        NULL,
};

const char *const *gv_driver_default_lib_search(void)
{
        return default_lib_search;
}

const char *const *gv_driver_default_bin_search(void)
{
        return default_bin_search;
}

const char *gv_driver_host_root_here(const gv_driver_config_t *d)
{
        if (d->host_root_ctr_path && *d->host_root_ctr_path)
                return d->host_root_ctr_path;
        return d->host_root && *d->host_root ? d->host_root : "/";
}

/* The host root as the host sees it (HOST_ROOT), for driver-ready. */
static const char *host_root_view(const gv_config_t *cfg)
{
        return cfg->driver.host_root && *cfg->driver.host_root ? cfg->driver.host_root : "/";
}

const char *gv_driver_ctr_root_here(const gv_driver_config_t *d)
{
        if (d->driver_install_dir_ctr_path && *d->driver_install_dir_ctr_path)
                return d->driver_install_dir_ctr_path;
        if (d->driver_install_dir && *d->driver_install_dir)
                return d->driver_install_dir;
        return "/run/nvidia/driver";
}

/* Where the driver is. */
typedef struct driver_loc {
        bool host;
        const char *root; /* as seen from here: host_root or the container driver root (borrowed) */
        char *lib;        /* libnvidia-ml.so.1 (resolved, host path as seen from here) */
        char *lib_dir;
        char *smi;        /* nvidia-smi or NULL */
        char *smi_dir;
        char *smi_tried;  /* where nvidia-smi was looked for (for the error when it is needed) */
        bool mock;        /* a mock root (manifest present, or cfg->driver.mock) */
        bool files_ok;    /* the mock's device nodes are regular files */
        bool dev_char_links; /* a mock root whose install asked for /dev/char links (mock install --dev-char-links) */
} driver_loc_t;

static void driver_loc_clear(driver_loc_t *l)
{
        free(l->lib);
        free(l->lib_dir);
        free(l->smi);
        free(l->smi_dir);
        free(l->smi_tried);
        *l = (driver_loc_t) { 0 };
}

static bool is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <root>/<rel> is a folder (resolved inside the root). */
static bool root_is_dir(const char *root, const char *rel)
{
        _cleanup_free_ char *p = NULL;
        return gv_root_resolve(root, rel, &p, NULL) == 0 && is_dir(p);
}

/* A short note for a missing library: is the kernel module there at all (a removed driver)? "" when it is or for a mock. */
static const char *module_note(const gv_config_t *cfg)
{
        _cleanup_free_ char *p = NULL;
        if (cfg->driver.mock)
                return "";
        if (gv_root_resolve(gv_driver_host_root_here(&cfg->driver), "/sys/module/nvidia", &p, NULL) == 0 && is_dir(p))
                return "";
        return "\nthe NVIDIA kernel module is not loaded either (no /sys/module/nvidia under the host root)";
}

/*
 * Decide host or container driver (upstream's order; the container root only
 * counts when it actually holds the library, so an empty leftover
 * /run/nvidia/driver on a host-driver node changes nothing) and find the files.
 */
static int driver_not_found(const gv_config_t *cfg, const char *host, const char *ctr, const char *tried,
                            gv_error_t **err);

static int locate_driver(const gv_config_t *cfg, driver_loc_t *out, gv_error_t **err)
{
        const char *const *libs = cfg->driver.lib_search ? cfg->driver.lib_search : default_lib_search;
        const char *const *bins = cfg->driver.bin_search ? cfg->driver.bin_search : default_bin_search;
        const char *host = gv_driver_host_root_here(&cfg->driver);
        const char *ctr = gv_driver_ctr_root_here(&cfg->driver);

        char *tried = NULL, *smi_tried = NULL;
        size_t tried_len = 0, smi_tried_len = 0;
        _cleanup_free_ char *tried_keep = NULL;
        FILE *tf = open_memstream(&tried, &tried_len);
        if (!tf)
                return gv_error_oom(err);
        driver_loc_t loc = { 0 };

        /*
         * 1. host driver: nvidia-smi and libnvidia-ml.so.1 under the host root.
         * `run --mock` validates its mock root as a containerised driver and
         * never looks at the host, so a real driver on the machine cannot
         * take part.
         */
        char *hsmi = NULL, *hsmi_dir = NULL, *hlib = NULL, *hlib_dir = NULL;
        int rs = -ENOENT, rl = -ENOENT;
        if (!cfg->driver.mock) {
                rs = gv_root_find(host, bins, "nvidia-smi", &hsmi, &hsmi_dir, tf);
                rl = gv_root_find(host, libs, "libnvidia-ml.so.1", &hlib, &hlib_dir, tf);
        }
        if (rs == 0 && rl == 0) {
                loc = (driver_loc_t) { .host = true, .root = host, .lib = hlib, .lib_dir = hlib_dir, .smi = hsmi,
                                       .smi_dir = hsmi_dir };
                (void) fclose(tf); /* 'tried' is dropped */
                free(tried);
                *out = loc;
                return 0;
        }
        free(hsmi);
        free(hsmi_dir);
        free(hlib);
        free(hlib_dir);
        if (rs == -ENOMEM || rl == -ENOMEM) {
                (void) fclose(tf); /* 'tried' is dropped */
                free(tried);
                return gv_error_oom(err);
        }

        /* 2. container driver: only when its root really holds the library */
        char *clib = NULL, *clib_dir = NULL;
        int rc = -ENOENT;
        if (strcmp(ctr, host) != 0)
                rc = gv_root_find(ctr, libs, "libnvidia-ml.so.1", &clib, &clib_dir, tf);
        if (gv_memstream_close(tf, &tried) < 0 || rc == -ENOMEM) {
                free(tried);
                free(clib);
                free(clib_dir);
                return gv_error_oom(err);
        }
        tried_keep = tried;
        if (rc == 0) {
                loc = (driver_loc_t) { .host = false, .root = ctr, .lib = clib, .lib_dir = clib_dir };
                FILE *sf = open_memstream(&smi_tried, &smi_tried_len);
                if (!sf) {
                        driver_loc_clear(&loc);
                        return gv_error_oom(err);
                }
                (void) gv_root_find(ctr, bins, "nvidia-smi", &loc.smi, &loc.smi_dir, sf);
                if (gv_memstream_close(sf, &smi_tried) < 0) {
                        driver_loc_clear(&loc);
                        return gv_error_oom(err);
                }
                loc.smi_tried = smi_tried;
                *out = loc;
                return 0;
        }
        return driver_not_found(cfg, host, ctr, tried_keep, err);
}

/*
 * No driver anywhere.  Upstream waits for the driver container: until it has
 * written .driver-ctr-ready, an empty driver root (the folder the DaemonSet
 * mounts, so it exists) means "not yet", which --wait retries (bounded by
 * --max-wait).  Once the driver container says it is up, or for a mock root,
 * the roots are wrong and retrying cannot help: the error lists every path
 * @tried and the setting to change.
 */
static int driver_not_found(const gv_config_t *cfg, const char *host, const char *ctr, const char *tried,
                            gv_error_t **err)
{
        /* A driver root whose mount source was deleted stays empty: waiting cannot help. */
        _cleanup_free_ char *gone = NULL;
        if (gv_mount_source_deleted(ctr, &gone) > 0)
                return gv_error_set(err, ENOENT, GV_REASON_MOUNT_DELETED,
                                    "DRIVER_INSTALL_DIR_CTR_PATH=%s: mount source deleted (mountinfo shows its root "
                                    "as %s): the driver container's folder was removed on the host after this "
                                    "container started, so it stays empty here",
                                    ctr, gone);
        _cleanup_free_ char *flag = gv_path_join(cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR,
                                                 GV_DRIVER_CTR_READY_FILE);
        _cleanup_free_ char *manifest = gv_path_join(ctr, GV_MOCK_MANIFEST_NAME);
        if (!flag || !manifest)
                return gv_error_oom(err);
        if (!cfg->driver.mock && is_dir(ctr) && access(flag, F_OK) < 0 && access(manifest, F_OK) < 0)
                return gv_error_set(err, ENOENT, GV_REASON_DRIVER_NOT_LOADED,
                                    "no NVIDIA driver yet: no host driver under HOST_ROOT=%s, and the driver "
                                    "container has not signalled readiness (%s absent) nor installed "
                                    "libnvidia-ml.so.1 under DRIVER_INSTALL_DIR(_CTR_PATH)=%s; tried:%s%s\n"
                                    "if the driver is elsewhere, change HOST_ROOT, DRIVER_INSTALL_DIR / "
                                    "DRIVER_INSTALL_DIR_CTR_PATH, or the search lists with --lib-search / --bin-search",
                                    host, flag, ctr, tried ? tried : "", module_note(cfg));
        return gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND,
                            "no NVIDIA driver found: no host driver (nvidia-smi and libnvidia-ml.so.1) under "
                            "HOST_ROOT=%s and no libnvidia-ml.so.1 under the driver container root "
                            "DRIVER_INSTALL_DIR(_CTR_PATH)=%s; tried:%s%s\n"
                            "change HOST_ROOT, DRIVER_INSTALL_DIR / DRIVER_INSTALL_DIR_CTR_PATH, or the search "
                            "lists with --lib-search / --bin-search",
                            host, ctr, tried ? tried : "", module_note(cfg));
}

static void nvml_facts_clear(nvml_facts_t *f)
{
        free(f->minors);
        free(f->uuids);
        free(f->gpus);
        *f = (nvml_facts_t) { 0 };
}

/*
 * A per-device NVML failure: GPU_IS_LOST names the GPU's index and bus id (gpu-lost), and, when
 * `watch`'s health monitor knew the GPU (cfg->driver.gpu_notes), its UUID (unreadable once the GPU
 * is lost) and the last critical Xid it reported.
 */
static int device_error(gv_error_t **err, const gv_config_t *cfg, const gv_nvml_t *nvml, nvmlReturn_t ret,
                        unsigned index, const char *bus_id, const char *what)
{
        const gv_gpu_note_t *known = ret == NVML_ERROR_GPU_IS_LOST ? gv_gpu_note_find(cfg->driver.gpu_notes,
                                                                                      cfg->driver.n_gpu_notes,
                                                                                      index, bus_id)
                                                                   : NULL;
        if (known) {
                gv_gpu_note_t g = *known;
                g.index = index;
                if (bus_id && *bus_id)
                        snprintf(g.bus_id, sizeof(g.bus_id), "%s", bus_id);
                _cleanup_free_ char *name = gv_gpu_note_name(&g);
                if (!name)
                        return gv_error_oom(err);
                return gv_error_set(err, EIO, GV_REASON_GPU_LOST, "%s is lost: %s: %s (%s, %d)", name, what,
                                    gv_nvml_strerror(nvml, ret), gv_nvml_return_name(ret), (int) ret);
        }
        if (ret == NVML_ERROR_GPU_IS_LOST)
                return gv_error_set(err, EIO, GV_REASON_GPU_LOST, "GPU %u (bus id %s) is lost: %s: %s (%s, %d)",
                                    index, bus_id && *bus_id ? bus_id : "unknown", what,
                                    gv_nvml_strerror(nvml, ret), gv_nvml_return_name(ret), (int) ret);
        gv_nvml_error(err, nvml, ret, what);
        return gv_error_prefix(err, "GPU %u (bus id %s)", index, bus_id && *bus_id ? bus_id : "unknown");
}

static int check_device(const gv_config_t *cfg, gv_nvml_t *nvml, unsigned i, nvml_facts_t *f, FILE *uuids,
                        gv_error_t **err)
{
        nvmlDevice_t dev = NULL;
        char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1] = "";
        nvmlReturn_t hret = nvml->nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (hret != NVML_SUCCESS && !(hret == NVML_ERROR_GPU_IS_LOST && dev))
                return device_error(err, cfg, nvml, hret, i, NULL, "nvmlDeviceGetHandleByIndex_v2");
        nvmlReturn_t ret = NVML_SUCCESS;
        if (nvml->nvmlDeviceGetPciInfo_v3) {
                /* NVML answers the PCI info of a lost GPU's handle: its bus id names the GPU. */
                nvmlPciInfo_t pci;
                memset(&pci, 0, sizeof(pci));
                ret = nvml->nvmlDeviceGetPciInfo_v3(dev, &pci);
                if (ret == NVML_SUCCESS)
                        snprintf(bus_id, sizeof(bus_id), "%.*s", (int) sizeof(pci.busId), pci.busId);
                else if (hret == NVML_SUCCESS && ret != NVML_ERROR_NOT_SUPPORTED)
                        return device_error(err, cfg, nvml, ret, i, NULL, "nvmlDeviceGetPciInfo_v3");
        }
        if (hret != NVML_SUCCESS)
                return device_error(err, cfg, nvml, hret, i, bus_id, "nvmlDeviceGetHandleByIndex_v2");
        gpu_info_t *g = &f->gpus[i];
        snprintf(g->bus_id, sizeof(g->bus_id), "%s", bus_id);
        ret = gv_driver_fabric_query(nvml, dev, g);
        if (ret == NVML_SUCCESS)
                g->fabric = g->fabric_state != NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
        else if (ret != NVML_ERROR_NOT_SUPPORTED) /* NOT_SUPPORTED: not a fabric GPU (PCIe cards) */
                return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetGpuFabricInfo");
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
        ret = nvml->nvmlDeviceGetName(dev, name, sizeof(name));
        if (ret != NVML_SUCCESS)
                return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetName");
        name[sizeof(name) - 1] = '\0';
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
        ret = nvml->nvmlDeviceGetUUID(dev, uuid, sizeof(uuid));
        if (ret != NVML_SUCCESS)
                return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetUUID");
        uuid[sizeof(uuid) - 1] = '\0';
        if (i == 0)
                snprintf(f->first_name, sizeof(f->first_name), "%s", name);
        fprintf(uuids, "%s%s", i ? "," : "", uuid);

        unsigned minor = i;
        if (nvml->nvmlDeviceGetMinorNumber) {
                unsigned m = 0;
                ret = nvml->nvmlDeviceGetMinorNumber(dev, &m);
                if (ret == NVML_SUCCESS)
                        minor = m;
                else if (ret == NVML_ERROR_GPU_IS_LOST)
                        return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetMinorNumber");
        }
        f->minors[i] = minor;

        /* MIG enabled with no GPU instance is not a usable GPU */
        if (nvml->nvmlDeviceGetMigMode) {
                unsigned cur = 0, pend = 0;
                ret = nvml->nvmlDeviceGetMigMode(dev, &cur, &pend);
                if (ret == NVML_ERROR_GPU_IS_LOST)
                        return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetMigMode");
                if (ret == NVML_SUCCESS && cur == NVML_DEVICE_MIG_ENABLE && nvml->nvmlDeviceGetMaxMigDeviceCount &&
                    nvml->nvmlDeviceGetMigDeviceHandleByIndex) {
                        unsigned max = 0, found = 0;
                        ret = nvml->nvmlDeviceGetMaxMigDeviceCount(dev, &max);
                        if (ret != NVML_SUCCESS)
                                return device_error(err, cfg, nvml, ret, i, bus_id, "nvmlDeviceGetMaxMigDeviceCount");
                        for (unsigned j = 0; j < max; j++) {
                                nvmlDevice_t mig = NULL;
                                if (nvml->nvmlDeviceGetMigDeviceHandleByIndex(dev, j, &mig) == NVML_SUCCESS)
                                        found++;
                        }
                        if (found == 0)
                                return gv_error_set(err, ENODEV, GV_REASON_MIG_NO_INSTANCES,
                                                    "GPU %u (%s, bus id %s): MIG is enabled but no MIG device "
                                                    "(GPU instance) exists",
                                                    i, name, *bus_id ? bus_id : "unknown");
                        gv_cfg_logf(cfg, GV_LOG_DEBUG, COMPONENT, GV_REASON_NONE, "GPU %u: MIG enabled, %u MIG devices",
                                    i, found);
                }
        }
        gv_cfg_logf(cfg, GV_LOG_DEBUG, COMPONENT, GV_REASON_NONE, "GPU %u: %s %s bus id %s", i, name, uuid,
                    *bus_id ? bus_id : "unknown");
        return 0;
}

static int nvml_query(const gv_config_t *cfg, gv_nvml_t *nvml, nvml_facts_t *f, gv_error_t **err)
{
        nvmlReturn_t ret = nvml->nvmlSystemGetDriverVersion(f->driver_version, sizeof(f->driver_version));
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, nvml, ret, "nvmlSystemGetDriverVersion");
        f->driver_version[sizeof(f->driver_version) - 1] = '\0';
        int cuda = 0;
        nvmlSystemGetCudaDriverVersion_fn get_cuda = nvml->nvmlSystemGetCudaDriverVersion_v2
                                                             ? nvml->nvmlSystemGetCudaDriverVersion_v2
                                                             : nvml->nvmlSystemGetCudaDriverVersion;
        if (get_cuda && get_cuda(&cuda) == NVML_SUCCESS && cuda > 0)
                snprintf(f->cuda_version, sizeof(f->cuda_version), "%d.%d", cuda / 1000, (cuda % 1000) / 10);
        unsigned count = 0;
        ret = nvml->nvmlDeviceGetCount_v2(&count);
        if (ret != NVML_SUCCESS)
                return gv_nvml_error(err, nvml, ret, "nvmlDeviceGetCount_v2");
        if (count == 0)
                return gv_error_set(err, ENODEV, GV_REASON_NO_GPU, "NVML (driver %s) sees no GPU",
                                    f->driver_version);
        if (count > 4096)
                return gv_error_set(err, ERANGE, GV_REASON_NVML, "NVML reports an implausible %u GPUs", count);
        f->count = count;
        f->minors = calloc(count, sizeof(*f->minors));
        f->gpus = calloc(count, sizeof(*f->gpus));
        char *ubuf = NULL;
        size_t ulen = 0;
        FILE *uf = f->minors && f->gpus ? open_memstream(&ubuf, &ulen) : NULL;
        if (!uf)
                return gv_error_oom(err);
        int r = 0;
        for (unsigned i = 0; i < count && r == 0; i++) {
                if (cfg->stop && *cfg->stop)
                        r = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted");
                else
                        r = check_device(cfg, nvml, i, f, uf, err);
        }
        /* GPU_UUIDS is published: a list cut short by a failed flush must not be. */
        int cr = gv_memstream_close(uf, &ubuf);
        if (r < 0) {
                free(ubuf);
                return r;
        }
        if (cr < 0)
                return gv_error_oom(err);
        f->uuids = ubuf;
        return 0;
}

/*
 * NVML must see as many GPUs as expected: cfg->driver.expected_gpus when set, else
 * the NVIDIA display/3D controllers (vendor 0x10de, class 0x030000/0x030200)
 * the PCI bus shows under the sysfs root, not counting SR-IOV VFs (physfn
 * link) nor functions bound to vfio-pci (handed to VMs).  A mock root has no
 * real PCI bus: it is counted only when a sysfs root other than /sys is
 * given.  Fails with GV_REASON_GPU_MISSING naming both counts and the bus ids
 * PCI shows that NVML does not.
 */
static int check_gpu_count(const gv_config_t *cfg, bool mock, const nvml_facts_t *f, gv_error_t **err)
{
        const char *sysfs = gv_sysfs_root(&cfg->sandbox);
        gv_pci_list_t pci = { 0 };
        bool use_pci = !mock || strcmp(sysfs, "/sys") != 0;
        if (use_pci) {
                int r = gv_pci_list_gpus(sysfs, &pci, err);
                if (r < 0)
                        return gv_error_prefix(err, "count the GPUs on the PCI bus");
        }
        char *missing = NULL;
        size_t mlen = 0;
        FILE *mf = open_memstream(&missing, &mlen);
        if (!mf) {
                gv_pci_list_clear(&pci);
                return gv_error_oom(err);
        }
        unsigned on_pci = 0;
        const char *sep = "";
        for (size_t k = 0; k < pci.n; k++) {
                const gv_pci_fn_t *p = &pci.items[k];
                if (p->physfn || (p->driver && strcmp(p->driver, "vfio-pci") == 0))
                        continue;
                on_pci++;
                bool seen = false;
                for (unsigned i = 0; i < f->count && !seen; i++)
                        seen = gv_nvml_same_bus_id(p->address, f->gpus[i].bus_id);
                if (!seen) {
                        fprintf(mf, "%s%s", sep, p->address);
                        sep = ", ";
                }
        }
        gv_pci_list_clear(&pci);
        if (gv_memstream_close(mf, &missing) < 0)
                return gv_error_oom(err);
        unsigned want = cfg->driver.expected_gpus ? cfg->driver.expected_gpus : on_pci;
        int r = 0;
        if (f->count < want) {
                _cleanup_free_ char *pci_text = NULL;
                if (!use_pci)
                        pci_text = strdup("not counted (mock root; give --sysfs-root to count)");
                else if (asprintf(&pci_text, "%u NVIDIA GPU(s) under %s/bus/pci/devices%s%s", on_pci, sysfs,
                                  missing && *missing ? ", not seen by NVML: " : "", missing ? missing : "") < 0)
                        pci_text = NULL;
                r = gv_error_set(err, ENODEV, GV_REASON_GPU_MISSING, "NVML sees %u GPU(s), %u expected (%s); PCI shows %s",
                                 f->count, want, cfg->driver.expected_gpus ? "--expected-gpus / EXPECTED_GPU_COUNT" : "PCI bus",
                                 pci_text ? pci_text : "(out of memory)");
        }
        free(missing);
        return r;
}

/* Load NVML from the driver root, init, query, shut down, close (always). */
static int nvml_check(const gv_config_t *cfg, const driver_loc_t *loc, nvml_facts_t *f, gv_error_t **err)
{
        const char *const candidates[] = { loc->lib, NULL };
        gv_nvml_t *nvml = NULL;
        int r = gv_nvml_open(candidates, &nvml, err);
        if (r < 0)
                return gv_error_prefix(err, "load NVML");
        nvmlReturn_t ret;
        const char *what;
        if (cfg->driver.skip_gpu_init && nvml->nvmlInitWithFlags) {
                /* DRIVER_VALIDATION_SKIP_GPU_INIT: talk to the driver without attaching to the GPUs */
                what = "nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH)";
                ret = nvml->nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH);
                f->init_no_attach = true;
        } else {
                what = "nvmlInit_v2";
                ret = nvml->nvmlInit_v2();
        }
        if (ret != NVML_SUCCESS) {
                r = gv_nvml_error(err, nvml, ret, what);
                if (ret == NVML_ERROR_NO_PERMISSION)
                        gv_error_prefix(err, "%s (permission denied: check device node modes, SELinux, cgroup "
                                             "device rules)",
                                        nvml->path);
                else
                        gv_error_prefix(err, "%s", nvml->path);
                gv_nvml_close(&nvml);
                return r;
        }
        r = nvml_query(cfg, nvml, f, err);
        if (r == 0)
                r = check_gpu_count(cfg, loc->mock, f, err);
        if (r == 0)
                r = gv_driver_fabric_check(nvml, f, err);
        nvml->nvmlShutdown();
        gv_nvml_close(&nvml);
        return r;
}

/* nvidiactl, nvidia<minor>..., nvidia-uvm, nvidia-uvm-tools (heap list). */
static char **node_names(const nvml_facts_t *f)
{
        size_t n = f->count + 3;
        char **v = calloc(n + 1, sizeof(*v));
        if (!v)
                return NULL;
        size_t k = 0;
        if (!(v[k++] = strdup("nvidiactl")))
                goto oom;
        for (unsigned i = 0; i < f->count; i++)
                if (asprintf(&v[k++], "nvidia%u", f->minors[i]) < 0) {
                        v[k - 1] = NULL;
                        goto oom;
                }
        if (!(v[k++] = strdup("nvidia-uvm")) || !(v[k++] = strdup("nvidia-uvm-tools")))
                goto oom;
        return v;
oom:
        gv_strv_freep(&v);
        return NULL;
}
/* The in-root path of a host path under @root ("/tmp/r/usr/bin/x" under "/tmp/r" -> "/usr/bin/x"). */
static const char *inside_root(const char *root, const char *path)
{
        size_t l = strlen(root);
        while (l > 1 && root[l - 1] == '/')
                l--;
        if (l == 1 && root[0] == '/')
                return path;
        if (strncmp(path, root, l) == 0 && (path[l] == '/' || path[l] == '\0'))
                return path[l] ? path + l : "/";
        return NULL;
}

static int run_smi(const gv_config_t *cfg, const driver_loc_t *loc, char **warning, gv_error_t **err)
{
        if (!loc->smi)
                return gv_error_set(err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND,
                                    "nvidia-smi not found under the driver root %s; tried:%s\n"
                                    "change the search list with --bin-search, or disable the nvidia-smi run",
                                    loc->root, loc->smi_tried ? loc->smi_tried : "");
        const char *chroot_dir = NULL;
        const char *smi = loc->smi, *lib_dir = loc->lib_dir;
        bool real_root = strcmp(loc->root, "/") == 0;
        if (loc->host && !real_root && geteuid() == 0 && root_is_dir(loc->root, "/bin")) {
                _cleanup_free_ char *sh = NULL;
                struct stat st;
                const char *in_smi = inside_root(loc->root, loc->smi);
                const char *in_lib = inside_root(loc->root, loc->lib_dir);
                if (gv_root_resolve(loc->root, "/bin/sh", &sh, NULL) == 0 && stat(sh, &st) == 0 && in_smi && in_lib) {
                        chroot_dir = loc->root;
                        smi = in_smi;
                        lib_dir = in_lib;
                }
        }
        int r = gv_nvidia_smi_check(cfg, smi, lib_dir, chroot_dir, warning, err);
        if (r < 0)
                return gv_error_prefix(err, "nvidia-smi");
        return 0;
}

static int set_fact(gv_kvlist_t *l, const char *k, const char *v, gv_error_t **err)
{
        return gv_kvlist_set(l, k, v, err);
}

/* Whether @loc's root is a mock root (its manifest, or cfg->driver.mock) and what the manifest allows. */
static int probe_mock(const gv_config_t *cfg, driver_loc_t *loc, gv_error_t **err)
{
        bool files_ok = false, links = false;
        int r = gv_mock_manifest_probe(loc->root, &files_ok, &links, err);
        if (r < 0)
                return r;
        loc->mock = cfg->driver.mock || r > 0;
        loc->files_ok = r > 0 && files_ok;
        loc->dev_char_links = r > 0 && links;
        return 0;
}

/*
 * The /dev/char/MAJ:MIN links, unless disabled -- and never for a mock root whose install did not
 * ask for them: on a host with real GPUs they would point the real nodes' MAJ:MIN at the mock's
 * (docs/mock-driver-root.md, "Device nodes").
 */
static void link_dev_char(const gv_config_t *cfg, const driver_loc_t *loc, const char *dev_root_here,
                          const char *dev_root_host, char **names)
{
        if (cfg->driver.disable_dev_char_symlinks)
                return;
        if (loc->mock && !loc->dev_char_links) {
                gv_cfg_logf(cfg, GV_LOG_DEBUG, COMPONENT, GV_REASON_NONE,
                            "mock root: no /dev/char links (mock install --dev-char-links asks for them)");
                return;
        }
        gv_devnodes_link_char(cfg, dev_root_here, dev_root_host, names, loc->files_ok);
}

static int driver_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        (void) store;
        _cleanup_(driver_loc_clear) driver_loc_t loc = { 0 };
        int r = locate_driver(cfg, &loc, err);
        if (r < 0)
                return r;
        gv_cfg_logf(cfg, GV_LOG_DEBUG, COMPONENT, GV_REASON_NONE, "%s driver: %s%s%s", loc.host ? "host" : "container",
                    loc.lib, loc.smi ? ", " : "", loc.smi ? loc.smi : "");

        if ((r = probe_mock(cfg, &loc, err)) < 0)
                return r;
        const char *host = gv_driver_host_root_here(&cfg->driver);

        if (!loc.host && !loc.mock) {
                _cleanup_free_ char *flag = gv_path_join(cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR,
                                                         GV_DRIVER_CTR_READY_FILE);
                if (!flag)
                        return gv_error_oom(err);
                if (access(flag, F_OK) < 0)
                        return gv_error_set(err, ENOENT, GV_REASON_DRIVER_NOT_LOADED,
                                            "waiting for the driver container (%s): found %s but the driver "
                                            "container has not signalled readiness",
                                            flag, loc.lib);
        }
        if (!loc.mock) {
                _cleanup_free_ char *mod = NULL;
                if (gv_root_resolve(host, "/sys/module/nvidia", &mod, NULL) < 0 || !is_dir(mod))
                        return gv_error_set(err, ENOENT, GV_REASON_DRIVER_NOT_LOADED,
                                            "the NVIDIA kernel module is not loaded: %s/sys/module/nvidia is absent "
                                            "(found %s)",
                                            strcmp(host, "/") == 0 ? "" : host, loc.lib);
        }

        _cleanup_(nvml_facts_clear) nvml_facts_t f = { 0 };
        r = nvml_check(cfg, &loc, &f, err);
        if (r < 0)
                return r;

        _cleanup_free_ char *warning = NULL;
        if (cfg->driver.run_nvidia_smi && !cfg->driver.skip_gpu_init) {
                r = run_smi(cfg, &loc, &warning, err);
                if (r < 0)
                        return r;
        }

        /* dev root: the driver root if it has a /dev folder, else the host root (upstream) */
        bool dev_in_driver_root = root_is_dir(loc.root, "/dev");
        const char *host_view = host_root_view(cfg);
        const char *driver_root_host = loc.host ? host_view : (cfg->driver.driver_install_dir && *cfg->driver.driver_install_dir
                                                                  ? cfg->driver.driver_install_dir
                                                                  : "/run/nvidia/driver");
        const char *driver_root_ctr = loc.host ? "/host" : "/driver-root";
        const char *dev_root_here = dev_in_driver_root ? loc.root : host;
        const char *dev_root_host = dev_in_driver_root ? driver_root_host : host_view;
        const char *dev_root_ctr = dev_in_driver_root ? driver_root_ctr : "/host";

        _cleanup_strv_free_ char **names = node_names(&f);
        if (!names)
                return gv_error_oom(err);
        r = gv_devnodes_wait(cfg, dev_root_here, names, loc.files_ok, err);
        if (r < 0)
                return r;
        link_dev_char(cfg, &loc, dev_root_here, dev_root_host, names);

        gv_result_t res = { 0 };
        char count[16];
        snprintf(count, sizeof(count), "%u", f.count);
        if ((r = set_fact(&res.facts, "IS_HOST_DRIVER", loc.host ? "true" : "false", err)) < 0 ||
            (r = set_fact(&res.facts, "NVIDIA_DRIVER_ROOT", driver_root_host, err)) < 0 ||
            (r = set_fact(&res.facts, "DRIVER_ROOT_CTR_PATH", driver_root_ctr, err)) < 0 ||
            (r = set_fact(&res.facts, "NVIDIA_DEV_ROOT", dev_root_host, err)) < 0 ||
            (r = set_fact(&res.facts, "DEV_ROOT_CTR_PATH", dev_root_ctr, err)) < 0 ||
            (r = set_fact(&res.facts, "DRIVER_VERSION", f.driver_version, err)) < 0 ||
            (*f.cuda_version && (r = set_fact(&res.facts, "CUDA_DRIVER_VERSION", f.cuda_version, err)) < 0) ||
            (r = set_fact(&res.facts, "GPU_COUNT", count, err)) < 0 ||
            (r = set_fact(&res.facts, "GPU_UUIDS", f.uuids ? f.uuids : "", err)) < 0) {
                gv_result_clear(&res);
                return r;
        }
        res.host_driver = loc.host;
        if (asprintf(&res.summary, "%s driver %s%s%s, %u GPU%s (%s)%s%s", loc.host ? "host" : "container",
                     f.driver_version, *f.cuda_version ? ", CUDA " : "", f.cuda_version, f.count,
                     f.count == 1 ? "" : "s", f.first_name, loc.mock ? ", mock root" : "",
                     f.init_no_attach ? ", GPU init skipped" : "") < 0) {
                res.summary = NULL;
                gv_result_clear(&res);
                return gv_error_oom(err);
        }
        res.warning = TAKE_PTR(warning);
        *result = res;
        return 0;
}

GV_COMPONENT(driver, "driver", GV_MARKER_DRIVER, driver_validate);
