/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a mock driver root holds: the library, nvidia-smi, /proc and /dev
 * entries, MIG capabilities, PCI files, ld.so.cache and the CDI spec
 * (docs/mock-driver-root.md "Layout").
 */
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
#include "mock/nvml/model-facts.h"
#include "mock/root/ldcache.h"
#include "mock/root/root-internal.h"

/*
 * Decodes one UTF-8 sequence at @s into *cp; returns its length, or 0 for a
 * byte that does not start a valid sequence (overlong, surrogate, past
 * U+10FFFF, cut short).
 */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
        size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0)
                return 0;
        unsigned v = n == 1 ? s[0] : s[0] & (0x7F >> n);
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                v = (v << 6) | (s[i] & 0x3F);
        }
        static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
                return 0;
        *cp = v;
        return n;
}

/* Whether @s is valid UTF-8 (what a YAML stream must be; YAML 1.2 section 5.2). */
bool mr_valid_utf8(const char *s)
{
        unsigned cp;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_next(p, &cp);
                if (!n)
                        return false;
                p += n;
        }
        return true;
}

/*
 * @s (valid UTF-8) as a YAML double-quoted scalar: " and \ escaped, and every
 * character YAML does not allow raw (C0 and C1 controls, DEL, U+FEFF, U+FFFE,
 * U+FFFF; YAML 1.2 section 5.1 "c-printable") written as an escape, so that a
 * newline in a path reads back as a newline, not as the space a raw line
 * break in a quoted scalar folds into.
 */
static void yq(FILE *f, const char *s)
{
        fputc('"', f);
        unsigned cp = 0;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_next(p, &cp);
                if (!n) { /* callers check mr_valid_utf8() first; never emit a byte YAML cannot read */
                        fputs("\\uFFFD", f);
                        p++;
                        continue;
                }
                if (cp == '"' || cp == '\\')
                        fprintf(f, "\\%c", (char) cp);
                else if (cp == '\n')
                        fputs("\\n", f);
                else if (cp == '\t')
                        fputs("\\t", f);
                else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
                        fprintf(f, "\\x%02X", cp);
                else if (cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF)
                        fprintf(f, "\\u%04X", cp);
                else
                        (void) fwrite(p, 1, n, f); /* the stream is checked where it is closed */
                p += n;
        }
        fputc('"', f);
}

/* NVML_DEVICE_MIG_ENABLE */
#define MIG_ENABLED 1u
/*
 * MIG capability minors as the NVIDIA driver numbers them (nv-caps; MIG user
 * guide, "Device Nodes and Capabilities"): config 1, monitor 2, then per GPU
 * minor g, per GPU instance i (0..14) access = 3 + g * 135 + i * 9, and its
 * compute instance c (0..7) access = that + 1 + c.
 */
#define CAP_CONFIG_MINOR 1u
#define CAP_MONITOR_MINOR 2u
#define CAP_MAX_GI 15u
#define CAP_MAX_CI 8u
#define CAP_PER_GI (1u + CAP_MAX_CI)
#define CAP_PER_GPU (CAP_MAX_GI * CAP_PER_GI)

static unsigned cap_gi_minor(unsigned gpu, unsigned gi)
{
        return 3u + gpu * CAP_PER_GPU + gi * CAP_PER_GI;
}

static unsigned cap_ci_minor(unsigned gpu, unsigned gi, unsigned ci)
{
        return cap_gi_minor(gpu, gi) + 1u + ci;
}

static bool mig_on(const gv_mock_device_t *d)
{
        return d->mig_capable && d->mig_mode_current == MIG_ENABLED && d->n_mig_devices > 0;
}

static void cdi_node(FILE *f, const char *indent, const char *root, const char *name)
{
        _cleanup_free_ char *host = NULL;
        if (asprintf(&host, "%s/dev/%s", root, name) < 0)
                host = NULL;
        fprintf(f, "%s- path: /dev/%s\n%s  hostPath: ", indent, name, indent);
        yq(f, host ? host : "");
        fputc('\n', f);
}

/*
 * Whether an earlier MIG device of @d (before index @k) with capabilities
 * (a CI id within the driver's range) is in the same GPU instance.
 */
static bool gi_seen(const gv_mock_device_t *d, size_t k)
{
        for (size_t j = 0; j < k; j++)
                if (d->mig_devices[j].gi_id == d->mig_devices[k].gi_id && d->mig_devices[j].ci_id < CAP_MAX_CI)
                        return true;
        return false;
}

/* The whole-GPU devices: per GPU one named by its index, one by its UUID, each with its /dev/nvidia<minor>. */
static void cdi_gpu_devices(FILE *f, const char *root, const gv_mock_profile_t *p)
{
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                _cleanup_free_ char *node = NULL;
                if (asprintf(&node, "nvidia%u", d->minor_number) < 0)
                        node = NULL;
                for (int by_uuid = 0; by_uuid < 2; by_uuid++) {
                        fputs("- containerEdits:\n    deviceNodes:\n", f);
                        cdi_node(f, "    ", root, node ? node : "nvidia0");
                        if (by_uuid)
                                fprintf(f, "  name: %s\n", d->uuid);
                        else
                                fprintf(f, "  name: \"%u\"\n", d->index);
                }
        }
}

/* Whether MIG device @m has capability nodes (ids past the driver's range, which the profile allows, have none). */
static bool mig_has_caps(const gv_mock_mig_device_t *m)
{
        return m->gi_id < CAP_MAX_GI && m->ci_id < CAP_MAX_CI;
}

/*
 * The capability nodes of MIG device @m of the GPU with minor @g: its GI's access (unless
 * @ci_only: already written for a device of the same GI), then its CI's access.
 */
static void cdi_mig_caps(FILE *f, const char *root, unsigned g, const gv_mock_mig_device_t *m, bool ci_only)
{
        _cleanup_free_ char *gi = NULL, *ci = NULL;
        if (!ci_only && asprintf(&gi, "nvidia-caps/nvidia-cap%u", cap_gi_minor(g, m->gi_id)) < 0)
                gi = NULL;
        if (asprintf(&ci, "nvidia-caps/nvidia-cap%u", cap_ci_minor(g, m->gi_id, m->ci_id)) < 0)
                ci = NULL;
        if (gi)
                cdi_node(f, "    ", root, gi);
        if (ci)
                cdi_node(f, "    ", root, ci);
}

/*
 * The MIG devices, as `nvidia-ctk cdi generate` lists them (docs/real-clients.md
 * "nvidia-ctk"): per MIG device (GPU index order, then the GPU's MIG device
 * index) one named "<gpu index>:<MIG device index>" and one by its MIG UUID,
 * each with the parent's /dev/nvidia<minor> and the GI and CI access
 * capability nodes (/dev/nvidia-caps/nvidia-cap<minor>, the minors of
 * proc/driver/nvidia-caps/mig-minors).  A MIG device without capabilities is
 * left out: a container could not open it.
 */
static void cdi_mig_devices(FILE *f, const char *root, const gv_mock_profile_t *p)
{
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                if (!mig_on(d))
                        continue;
                _cleanup_free_ char *node = NULL;
                if (asprintf(&node, "nvidia%u", d->minor_number) < 0)
                        node = NULL;
                for (size_t k = 0; k < d->n_mig_devices; k++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[k];
                        if (!mig_has_caps(m))
                                continue;
                        for (int by_uuid = 0; by_uuid < 2; by_uuid++) {
                                fputs("- containerEdits:\n    deviceNodes:\n", f);
                                cdi_node(f, "    ", root, node ? node : "nvidia0");
                                cdi_mig_caps(f, root, d->minor_number, m, false);
                                if (by_uuid)
                                        fprintf(f, "  name: %s\n", m->uuid);
                                else
                                        fprintf(f, "  name: \"%u:%zu\"\n", d->index, k);
                        }
                }
        }
}

/* For the "all" device: the capability nodes of every MIG device, each once (CIs of one GI share its node). */
static void cdi_mig_all_caps(FILE *f, const char *root, const gv_mock_profile_t *p)
{
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                if (!mig_on(d))
                        continue;
                for (size_t k = 0; k < d->n_mig_devices; k++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[k];
                        if (!mig_has_caps(m))
                                continue;
                        cdi_mig_caps(f, root, d->minor_number, m, gi_seen(d, k));
                }
        }
}

#if defined(__aarch64__)
#define CDI_MULTIARCH_LIBDIR "/usr/lib/aarch64-linux-gnu"
#else
#define CDI_MULTIARCH_LIBDIR "/usr/lib/x86_64-linux-gnu"
#endif
/* Where the mock's folder usr/lib64 (libraries, finalized profile, `mock set` state) is mounted. */
#define CDI_MOCK_LIBDIR "/usr/local/nvidia/lib64"

static void cdi_mount(FILE *f, const char *container_path, const char *root, const char *rel)
{
        _cleanup_free_ char *host = gv_path_join(root, rel);
        fprintf(f, "  - containerPath: %s\n    hostPath: ", container_path);
        yq(f, host ? host : "");
        fputs("\n    options:\n    - ro\n    - nosuid\n    - nodev\n    - bind\n", f);
}

/*
 * The common edits: nvidia-smi, and libnvidia-ml.so.1 (libcuda.so.1 when the
 * root has it) where a container's dynamic loader looks without an ld.so.cache
 * entry: /usr/lib64 (RHEL, UBI; also where our nvidia-smi looks) and the
 * multiarch folder (Debian, Ubuntu).  nvidia-ctk mounts the libraries at the
 * driver's own paths and runs an update-ldcache hook instead; a mock node has no
 * hook binary.  The mock's folder goes to CDI_MOCK_LIBDIR (also on CUDA images'
 * LD_LIBRARY_PATH), and MOCK_NVML_CONFIG, _STATE_FILE and _XID_FILE point the
 * library there, so a container sees the node's profile and `mock set` changes
 * (a folder mount follows the state file's atomic replacement).
 */
static void cdi_common_env_mounts(FILE *f, const char *root)
{
        fputs("  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n"
              "  - MOCK_NVML_CONFIG=" CDI_MOCK_LIBDIR "/" GV_MOCK_ROOT_PROFILE_NAME "\n"
              "  - MOCK_NVML_STATE_FILE=" CDI_MOCK_LIBDIR "/" GV_MOCK_ROOT_STATE_NAME "\n"
              "  - MOCK_NVML_XID_FILE=" CDI_MOCK_LIBDIR "/" GV_MOCK_ROOT_XID_NAME "\n  mounts:\n",
              f);
        cdi_mount(f, "/usr/bin/nvidia-smi", root, "usr/bin/nvidia-smi");
        _cleanup_free_ char *cuda = gv_path_join(root, "usr/lib64/libcuda.so.1");
        bool has_cuda = cuda && access(cuda, F_OK) == 0;
        static const char *const dirs[] = { "/usr/lib64", CDI_MULTIARCH_LIBDIR };
        for (size_t i = 0; i < GV_ARRAY_SIZE(dirs); i++) {
                _cleanup_free_ char *nvml = NULL, *cu = NULL;
                if (asprintf(&nvml, "%s/libnvidia-ml.so.1", dirs[i]) >= 0)
                        cdi_mount(f, nvml, root, "usr/lib64/libnvidia-ml.so.1");
                if (has_cuda && asprintf(&cu, "%s/libcuda.so.1", dirs[i]) >= 0)
                        cdi_mount(f, cu, root, "usr/lib64/libcuda.so.1");
        }
        cdi_mount(f, CDI_MOCK_LIBDIR, root, "usr/lib64");
}

/* A minimal CDI spec in the shape of nvidia-ctk's (cdi__nvidia-ctk-cdi-generate_*.yaml). */
static char *cdi_spec_text(const char *root, const gv_mock_profile_t *p, const char *lib_name)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fputs("---\n" CDI_SPEC_HEADER "; see docs/mock-driver-root.md.\n"
              "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ncontainerEdits:\n  deviceNodes:\n",
              f);
        cdi_node(f, "  ", root, "nvidiactl");
        cdi_node(f, "  ", root, "nvidia-uvm");
        cdi_node(f, "  ", root, "nvidia-uvm-tools");
        cdi_common_env_mounts(f, root);
        (void) lib_name;
        fputs("devices:\n", f);
        cdi_gpu_devices(f, root, p);
        cdi_mig_devices(f, root, p);
        fputs("- containerEdits:\n    deviceNodes:\n", f);
        for (unsigned i = 0; i < p->device_count; i++) {
                _cleanup_free_ char *node = NULL;
                if (asprintf(&node, "nvidia%u", p->devices[i].minor_number) >= 0)
                        cdi_node(f, "    ", root, node);
        }
        cdi_mig_all_caps(f, root, p);
        fputs("  name: all\n", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* /proc/driver/nvidia/version in the proprietary module's format (proc__*_580.173.02.txt). */
static char *proc_version_text(const char *driver_version)
{
#if defined(__aarch64__)
        const char *arch = "aarch64";
#else
        const char *arch = "x86_64";
#endif
        char *s = NULL;
        /* A fixed build date keeps re-installs byte-identical. The real GCC line ends with a blank. */
        if (asprintf(&s,
                     "NVRM version: NVIDIA UNIX %s Kernel Module  %s  Thu Jan  1 00:00:00 UTC 2026\n"
                     "GCC version:  gcc version 12.2.0 (gpu-validator mock) \n",
                     arch, driver_version) < 0)
                return NULL;
        return s;
}

/*
 * The mock libcuda.so.1 (mock/cuda), when built: found beside the mock
 * libnvidia-ml (an installed or GPU_VALIDATOR_MOCK_DIR folder) or in the
 * build tree's mock/cuda, and laid out as usr/lib64/libcuda.so.<driver
 * version> with its .so.1 and .so links, as the driver installs it.  Without
 * one the root has no libcuda and cuda-check takes its NVML-only path.
 */
static int install_libcuda(ictx_t *c, const char *nvml_lib, const char *driver_version, gv_error_t **err)
{
        const char *slash = strrchr(nvml_lib, '/');
        int dir_len = slash ? (int) (slash - nvml_lib) : 1;
        const char *dir = slash ? nvml_lib : ".";
        static const char *const rel[] = { "libcuda.so.1", "../cuda/libcuda.so.1" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(rel); i++) {
                _cleanup_free_ char *src = NULL, *lib = NULL;
                if (asprintf(&src, "%.*s/%s", dir_len, dir, rel[i]) < 0 ||
                    asprintf(&lib, "usr/lib64/libcuda.so.%s", driver_version) < 0)
                        return gv_error_oom(err);
                if (!mr_is_file(src))
                        continue;
                int r;
                if ((r = mr_copy_file(c, src, lib, 0755, err)) < 0 ||
                    (r = mr_put_link(c, "usr/lib64/libcuda.so.1", lib + strlen("usr/lib64/"), err)) < 0 ||
                    (r = mr_put_link(c, "usr/lib64/libcuda.so", "libcuda.so.1", err)) < 0)
                        return r;
                return 0;
        }
        return 0;
}

/* /proc/driver/nvidia-caps/mig-minors: every possible capability of every GPU, as the driver lists them. */
static char *mig_minors_text(const gv_mock_profile_t *p)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fprintf(f, "config %u\nmonitor %u\n", CAP_CONFIG_MINOR, CAP_MONITOR_MINOR);
        for (unsigned i = 0; i < p->device_count; i++) {
                unsigned g = p->devices[i].minor_number;
                for (unsigned gi = 0; gi < CAP_MAX_GI; gi++) {
                        fprintf(f, "gpu%u/gi%u/access %u\n", g, gi, cap_gi_minor(g, gi));
                        for (unsigned ci = 0; ci < CAP_MAX_CI; ci++)
                                fprintf(f, "gpu%u/gi%u/ci%u/access %u\n", g, gi, ci, cap_ci_minor(g, gi, ci));
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/*
 * One capability: its /proc/driver/nvidia/capabilities/<rel> file
 * ("DeviceFileMinor: N", "DeviceFileMode: <decimal mode>", "DeviceFileModify: 1")
 * and its /dev/nvidia-caps/nvidia-cap<minor> node.
 */
static int put_cap(ictx_t *c, const char *rel, unsigned minor_no, unsigned mode, gv_mock_nodes_t *kind, char **why,
                   gv_error_t **err)
{
        _cleanup_free_ char *path = NULL, *text = NULL, *node = NULL;
        if (asprintf(&path, "proc/driver/nvidia/capabilities/%s", rel) < 0 ||
            asprintf(&text, "DeviceFileMinor: %u\nDeviceFileMode: %u\nDeviceFileModify: 1\n", minor_no, mode) < 0 ||
            asprintf(&node, "dev/nvidia-caps/nvidia-cap%u", minor_no) < 0)
                return gv_error_oom(err);
        _cleanup_free_ char *dir = strndup(path, (size_t) (strrchr(path, '/') - path)); /* path holds a '/' */
        if (!dir)
                return gv_error_oom(err);
        int r;
        if ((r = mr_ensure_dirs(c, dir, err)) < 0 || (r = mr_put_file(c, path, text, strlen(text), 0444, err)) < 0)
                return r;
        return mr_put_node(c, node, GV_MOCK_CAPS_MAJOR, minor_no, kind, why, err);
}

/* What the driver exposes for MIG (docs/mock-driver-root.md "MIG"); nothing when no GPU has MIG on. */
static int lay_out_mig(ictx_t *c, const gv_mock_profile_t *p, gv_mock_nodes_t *kind, char **why, gv_error_t **err)
{
        bool any = false;
        for (unsigned i = 0; i < p->device_count; i++)
                any = any || mig_on(&p->devices[i]);
        if (!any)
                return 0;
        _cleanup_free_ char *minors = mig_minors_text(p);
        if (!minors)
                return gv_error_oom(err);
        int r;
        if ((r = mr_ensure_dirs(c, "proc/driver/nvidia-caps", err)) < 0 || (r = mr_ensure_dirs(c, "dev/nvidia-caps", err)) < 0 ||
            (r = mr_put_file(c, "proc/driver/nvidia-caps/mig-minors", minors, strlen(minors), 0444, err)) < 0 ||
            (r = put_cap(c, "mig/config", CAP_CONFIG_MINOR, 0400, kind, why, err)) < 0 ||
            (r = put_cap(c, "mig/monitor", CAP_MONITOR_MINOR, 0444, kind, why, err)) < 0)
                return r;
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                if (!mig_on(d))
                        continue;
                unsigned g = d->minor_number;
                for (size_t k = 0; k < d->n_mig_devices; k++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[k];
                        /* ids past the driver's range (the mock profile allows up to 63) have no capability */
                        if (m->gi_id >= CAP_MAX_GI || m->ci_id >= CAP_MAX_CI)
                                continue;
                        _cleanup_free_ char *gi = NULL, *ci = NULL;
                        if (asprintf(&gi, "gpu%u/mig/gi%u/access", g, m->gi_id) < 0 ||
                            asprintf(&ci, "gpu%u/mig/gi%u/ci%u/access", g, m->gi_id, m->ci_id) < 0)
                                return gv_error_oom(err);
                        if (!gi_seen(d, k) && (r = put_cap(c, gi, cap_gi_minor(g, m->gi_id), 0444, kind, why, err)) < 0)
                                return r;
                        if ((r = put_cap(c, ci, cap_ci_minor(g, m->gi_id, m->ci_id), 0444, kind, why, err)) < 0)
                                return r;
                }
        }
        return 0;
}

/* /proc/devices: the character majors tools look up by name (nvidia-frontend, nvidia-uvm, nvidia-caps). */
static char *proc_devices_text(void)
{
        char *s = NULL;
        if (asprintf(&s, "Character devices:\n%3u nvidia-frontend\n%3u nvidia-uvm\n%3u nvidia-caps\n\nBlock devices:\n",
                     GV_MOCK_NVIDIA_MAJOR, GV_MOCK_UVM_MAJOR, GV_MOCK_CAPS_MAJOR) < 0)
                return NULL;
        return s;
}

/*
 * The GPU's sysfs `resource` file: 13 lines "start end flags" (the kernel's
 * PCI_NUM_RESOURCES of an endpoint), BAR0 16 MiB registers (flags 0x40200,
 * memory), BAR1 the model's aperture and BAR3 32 MiB (0x14220c: memory, 64-bit,
 * prefetchable; each 64-bit BAR's upper half is an empty line), the rest empty,
 * as `lspci -v` and go-nvlib's nvpci (gpu-feature-discovery) read it.  The
 * addresses are made up, one window per GPU.  Caller frees.
 */
static char *pci_resource_text(const gv_mock_device_t *d, unsigned index)
{
        unsigned long long bar1 = gv_mock_bar1_mib(d->pci_device_id, d->memory_total_mib) << 20;
        unsigned long long base = 0x20000000000ULL + (unsigned long long) index * 0x8000000000ULL;
        const struct {
                unsigned long long start, size, flags;
        } bars[13] = {
                [0] = { 0xa0000000ULL + (unsigned long long) index * 0x4000000ULL, 16ULL << 20, 0x40200 },
                [1] = { base, bar1, 0x14220c },
                [3] = { base + bar1, 32ULL << 20, 0x14220c },
        };
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return NULL;
        for (size_t k = 0; k < GV_ARRAY_SIZE(bars); k++)
                fprintf(f, "0x%016llx 0x%016llx 0x%016llx\n", bars[k].size ? bars[k].start : 0ULL,
                        bars[k].size ? bars[k].start + bars[k].size - 1 : 0ULL, bars[k].flags);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

/*
 * The GPU's 256-byte PCI configuration space (sysfs `config`, what a root
 * reader gets): vendor, device, command (memory, bus master), status with the
 * capability-list bit, class 0x030200, subsystem ids, and one capability, PCI
 * Express (id 0x10, endpoint) at 0x60: no vendor-specific capability, so vGPU
 * readers (go-nvlib's nvpci) see a bare-metal GPU.
 */
static void pci_config_space(const gv_mock_device_t *d, unsigned char cfg[256])
{
        memset(cfg, 0, 256);
        const unsigned vals[][3] = { /* offset, bytes, value (little endian) */
                { 0x00, 2, 0x10de }, { 0x02, 2, d->pci_device_id & 0xffffu }, { 0x04, 2, 0x0006 }, { 0x06, 2, 0x0010 },
                { 0x08, 1, 0xa1 }, { 0x0a, 2, 0x0302 }, { 0x2c, 2, d->pci_subsystem_id & 0xffffu },
                { 0x2e, 2, (d->pci_subsystem_id >> 16) & 0xffffu }, { 0x34, 1, 0x60 }, { 0x60, 2, 0x0010 }, { 0x62, 2, 0x0002 },
        };
        for (size_t k = 0; k < GV_ARRAY_SIZE(vals); k++)
                for (unsigned b = 0; b < vals[k][1]; b++)
                        cfg[vals[k][0] + b] = (unsigned char) (vals[k][2] >> (8 * b));
}

/*
 * sys/bus/pci/devices/<domain:bus:dev.fn>/ with the files tools read there:
 * vendor, device, subsystem_vendor, subsystem_device, class (3D controller
 * 0x030200), numa_node (-1: no NUMA affinity, as a single-node host says),
 * resource (the BARs, pci_resource_text()), config (pci_config_space()).
 */
static int lay_out_pci(ictx_t *c, const gv_mock_profile_t *p, gv_error_t **err)
{
        int r;
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
                _cleanup_free_ char *dir = NULL;
                if (asprintf(&dir, "sys/bus/pci/devices/%04x:%02x:%02x.0", d->pci_domain & 0xffffu, d->pci_bus & 0xffu,
                             d->pci_device & 0x1fu) < 0)
                        return gv_error_oom(err);
                if ((r = mr_ensure_dirs(c, dir, err)) < 0)
                        return r;
                const struct {
                        const char *name;
                        int digits; /* hex digits; 0: "-1" */
                        unsigned value;
                } files[] = {
                        { "vendor", 4, GV_PCI_VENDOR_NVIDIA },
                        { "device", 4, d->pci_device_id & 0xffffu },
                        { "subsystem_vendor", 4, d->pci_subsystem_id & 0xffffu },
                        { "subsystem_device", 4, (d->pci_subsystem_id >> 16) & 0xffffu },
                        { "class", 6, GV_PCI_CLASS_DISPLAY_3D << 8 },
                        { "numa_node", 0, 0 }, /* no NUMA affinity */
                };
                for (size_t k = 0; k < GV_ARRAY_SIZE(files); k++) {
                        _cleanup_free_ char *f = gv_path_join(dir, files[k].name);
                        _cleanup_free_ char *text = NULL;
                        int n = files[k].digits ? asprintf(&text, "0x%0*x\n", files[k].digits, files[k].value)
                                                : asprintf(&text, "-1\n");
                        if (!f || n < 0)
                                return gv_error_oom(err);
                        if ((r = mr_put_file(c, f, text, strlen(text), 0444, err)) < 0)
                                return r;
                }
                _cleanup_free_ char *f = gv_path_join(dir, "resource");
                _cleanup_free_ char *text = pci_resource_text(d, i);
                if (!f || !text)
                        return gv_error_oom(err);
                if ((r = mr_put_file(c, f, text, strlen(text), 0444, err)) < 0)
                        return r;
                unsigned char cfg[256];
                pci_config_space(d, cfg);
                _cleanup_free_ char *cf = gv_path_join(dir, "config");
                if (!cf)
                        return gv_error_oom(err);
                if ((r = mr_put_file(c, cf, (const char *) cfg, sizeof(cfg), 0644, err)) < 0)
                        return r;
        }
        return 0;
}

/*
 * etc/ld.so.conf (/usr/lib64) and etc/ld.so.cache listing the sonames the
 * root holds (libnvidia-ml.so.1, and libcuda.so.1 when installed) at their
 * paths inside the root, as `ldconfig -r <root>` would write it.
 */
static int lay_out_ldcache(ictx_t *c, gv_error_t **err)
{
        mr_ldcache_lib_t libs[2] = { { "libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1" } };
        size_t n = 1;
        if (mr_elist_find(&c->now, "usr/lib64/libcuda.so.1"))
                libs[n++] = (mr_ldcache_lib_t){ "libcuda.so.1", "/usr/lib64/libcuda.so.1" };
        _cleanup_free_ char *cache = NULL;
        size_t len = 0;
        int r = mr_ldcache_build(libs, n, &cache, &len);
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_INTERNAL, "build ld.so.cache: %s", strerror(-r));
        static const char conf[] = "/usr/lib64\n";
        if ((r = mr_ensure_dirs(c, "etc", err)) < 0 || (r = mr_put_file(c, "etc/ld.so.conf", conf, strlen(conf), 0644, err)) < 0)
                return r;
        return mr_put_file(c, "etc/ld.so.cache", cache, len, 0644, err);
}

/* What NVIDIA's container toolkit and device plugin read besides the libraries (items of docs/mock-driver-root.md). */
static int lay_out_extras(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, gv_mock_nodes_t *kind,
                          char **why, gv_error_t **err)
{
        int r;
        _cleanup_free_ char *devices = proc_devices_text();
        if (!devices)
                return gv_error_oom(err);
        if ((r = mr_put_node(c, "dev/nvidia-modeset", GV_MOCK_NVIDIA_MAJOR, GV_MOCK_MODESET_MINOR, kind, why, err)) < 0 ||
            (r = mr_put_file(c, "proc/devices", devices, strlen(devices), 0444, err)) < 0 ||
            (r = lay_out_mig(c, p, kind, why, err)) < 0 || (r = lay_out_pci(c, p, err)) < 0 ||
            (r = mr_lay_out_workload(c, o, p, err)) < 0)
                return r;
        return lay_out_ldcache(c, err);
}

int mr_lay_out(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, const char *cdi_dir,
               const char *profile_yaml, gv_mock_nodes_t *kind, char **why, char **cdi_spec, gv_error_t **err)
{
        int r;
        _cleanup_free_ char *lib = NULL, *proc = NULL;
        if (asprintf(&lib, "usr/lib64/libnvidia-ml.so.%s", p->driver_version) < 0)
                return gv_error_oom(err);
        if ((r = mr_ensure_dirs(c, "usr/lib64", err)) < 0 || (r = mr_ensure_dirs(c, "usr/bin", err)) < 0 ||
            (r = mr_ensure_dirs(c, "proc/driver/nvidia", err)) < 0 || (r = mr_ensure_dirs(c, "dev", err)) < 0)
                return r;
        if ((r = mr_copy_file(c, o->nvml_lib, lib, 0755, err)) < 0)
                return r;
        if ((r = mr_put_link(c, "usr/lib64/libnvidia-ml.so.1", lib + strlen("usr/lib64/"), err)) < 0 ||
            (r = mr_put_link(c, "usr/lib64/libnvidia-ml.so", "libnvidia-ml.so.1", err)) < 0 ||
            (r = install_libcuda(c, o->nvml_lib, p->driver_version, err)) < 0)
                return r;
        if ((r = mr_put_file(c, "usr/lib64/" GV_MOCK_ROOT_PROFILE_NAME, profile_yaml, strlen(profile_yaml), 0644,
                             err)) < 0)
                return r;
        if ((r = mr_copy_file(c, o->nvidia_smi, "usr/bin/nvidia-smi", 0755, err)) < 0)
                return r;
        proc = proc_version_text(p->driver_version);
        if (!proc)
                return gv_error_oom(err);
        if ((r = mr_put_file(c, "proc/driver/nvidia/version", proc, strlen(proc), 0444, err)) < 0)
                return r;

        if ((r = mr_put_node(c, "dev/nvidiactl", GV_MOCK_NVIDIA_MAJOR, GV_MOCK_NVIDIACTL_MINOR, kind, why, err)) < 0)
                return r;
        for (unsigned i = 0; i < p->device_count; i++) {
                _cleanup_free_ char *n = NULL;
                if (asprintf(&n, "dev/nvidia%u", p->devices[i].minor_number) < 0)
                        return gv_error_oom(err);
                if ((r = mr_put_node(c, n, GV_MOCK_NVIDIA_MAJOR, p->devices[i].minor_number, kind, why, err)) < 0)
                        return r;
        }
        if ((r = mr_put_node(c, "dev/nvidia-uvm", GV_MOCK_UVM_MAJOR, 0, kind, why, err)) < 0 ||
            (r = mr_put_node(c, "dev/nvidia-uvm-tools", GV_MOCK_UVM_MAJOR, 1, kind, why, err)) < 0 ||
            (r = lay_out_extras(c, o, p, kind, why, err)) < 0)
                return r;
        /* Nodes made before a mknod refusal stay character devices; redo them as files for one kind. */
        if (*kind == GV_MOCK_NODES_FILES) {
                for (size_t i = 0; i < c->now.n; i++) {
                        if (c->now.v[i].type != E_CHAR)
                                continue;
                        _cleanup_free_ char *path = strdup(c->now.v[i].path);
                        if (!path)
                                return gv_error_oom(err);
                        if ((r = mr_put_file(c, path, "", 0, 0666, err)) < 0)
                                return r;
                }
        }

        /* CDI spec: inside the root it is recorded relative, outside absolute. */
        _cleanup_free_ char *spec_abs = gv_path_join(cdi_dir, GV_MOCK_CDI_SPEC_NAME);
        if (!spec_abs)
                return gv_error_oom(err);
        size_t rl = strlen(c->root);
        bool inside = strncmp(cdi_dir, c->root, rl) == 0 && (cdi_dir[rl] == '/' || cdi_dir[rl] == '\0');
        const char *dir_rec = inside ? (cdi_dir[rl] == '/' ? cdi_dir + rl + 1 : "") : cdi_dir;
        const char *spec_rec = inside ? spec_abs + rl + 1 : spec_abs;
        if (*dir_rec && (r = mr_ensure_dirs(c, dir_rec, err)) < 0)
                return r;
        _cleanup_free_ char *spec = cdi_spec_text(c->root, p, lib);
        if (!spec)
                return gv_error_oom(err);
        if ((r = mr_put_file(c, spec_rec, spec, strlen(spec), 0644, err)) < 0)
                return r;
        *cdi_spec = TAKE_PTR(spec_abs);
        return 0;
}
