/* SPDX-License-Identifier: Apache-2.0 */
/* The device fields of a profile: one callback per key of a GPU's mapping (docs/mock-nvml.md). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "abi/nvml/nvml-abi.h"
#include "base/cleanup.h"
#include "mock/nvml/profile-internal.h"

const mp_name_t mp_brand_names[] = {
        { "unknown", NVML_BRAND_UNKNOWN }, { "quadro", NVML_BRAND_QUADRO },   { "tesla", NVML_BRAND_TESLA },
        { "nvs", NVML_BRAND_NVS },         { "grid", NVML_BRAND_GRID },       { "geforce", NVML_BRAND_GEFORCE },
        { "titan", NVML_BRAND_TITAN },     { "nvidia", NVML_BRAND_NVIDIA },   { "quadro_rtx", NVML_BRAND_QUADRO_RTX },
        { "nvidia_rtx", NVML_BRAND_NVIDIA_RTX }, { "geforce_rtx", NVML_BRAND_GEFORCE_RTX },
        { "titan_rtx", NVML_BRAND_TITAN_RTX },
};
const size_t mp_n_brand_names = GV_ARRAY_SIZE(mp_brand_names);

const char *const mp_compute_mode_names[] = { "default", "exclusive_thread", "prohibited", "exclusive_process" };
const size_t mp_n_compute_mode_names = GV_ARRAY_SIZE(mp_compute_mode_names);

static const struct {
        const char *name;
        unsigned value;
} arch_names[] = {
        { "kepler", NVML_DEVICE_ARCH_KEPLER },   { "maxwell", NVML_DEVICE_ARCH_MAXWELL },
        { "pascal", NVML_DEVICE_ARCH_PASCAL },   { "volta", NVML_DEVICE_ARCH_VOLTA },
        { "turing", NVML_DEVICE_ARCH_TURING },   { "ampere", NVML_DEVICE_ARCH_AMPERE },
        { "ada", NVML_DEVICE_ARCH_ADA },         { "ada-lovelace", NVML_DEVICE_ARCH_ADA },
        { "hopper", NVML_DEVICE_ARCH_HOPPER },   { "blackwell", NVML_DEVICE_ARCH_BLACKWELL },
        { "rubin", NVML_DEVICE_ARCH_RUBIN },
};

static const struct {
        const char *name;
        uint32_t bit;
} field_names[] = {
        { "temperature", GV_MOCK_FIELD_TEMPERATURE }, { "power_usage", GV_MOCK_FIELD_POWER_USAGE },
        { "power_limit", GV_MOCK_FIELD_POWER_LIMIT }, { "clocks", GV_MOCK_FIELD_CLOCKS },
        { "utilization", GV_MOCK_FIELD_UTILIZATION }, { "fan", GV_MOCK_FIELD_FAN },
        { "persistence_mode", GV_MOCK_FIELD_PERSISTENCE }, { "compute_mode", GV_MOCK_FIELD_COMPUTE_MODE },
        { "ecc", GV_MOCK_FIELD_ECC }, { "pstate", GV_MOCK_FIELD_PSTATE }, { "serial", GV_MOCK_FIELD_SERIAL },
        { "vbios_version", GV_MOCK_FIELD_VBIOS }, { "board_part_number", GV_MOCK_FIELD_BOARD_PART_NUMBER },
        { "display", GV_MOCK_FIELD_DISPLAY }, { "processes", GV_MOCK_FIELD_PROCESSES },
        { "fabric", GV_MOCK_FIELD_FABRIC }, { "nvlink", GV_MOCK_FIELD_NVLINK }, { "mig", GV_MOCK_FIELD_MIG },
        { "minor_number", GV_MOCK_FIELD_MINOR_NUMBER },
};

static int power_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        size_t kl = strlen(key);
        bool watts = kl > 2 && strcmp(key + kl - 2, "_w") == 0;
        bool mw = kl > 3 && strcmp(key + kl - 3, "_mw") == 0;
        if (!watts && !mw)
                return mp_unknown_key(c, v, prefix, key);
        size_t base = kl - (watts ? 2 : 3);
        unsigned *dst = NULL;
        uint32_t bit = GV_MOCK_FIELD_POWER_LIMIT;
        if (strncmp(key, "usage", base) == 0 && base == 5)
                /* NOLINTNEXTLINE(bugprone-branch-clone): 'usage' and 'current_draw' are aliases of one field */
                dst = &d->power_usage_mw, bit = GV_MOCK_FIELD_POWER_USAGE;
        else if (strncmp(key, "current_draw", base) == 0 && base == 12)
                dst = &d->power_usage_mw, bit = GV_MOCK_FIELD_POWER_USAGE;
        else if ((base == 5 && strncmp(key, "limit", 5) == 0) ||
                 (base == 14 && strncmp(key, "enforced_limit", 14) == 0))
                dst = &d->power_limit_mw;
        else if (base == 13 && strncmp(key, "default_limit", 13) == 0)
                dst = &d->power_default_limit_mw;
        else if (base == 9 && strncmp(key, "min_limit", 9) == 0)
                dst = &d->power_min_limit_mw;
        else if (base == 9 && strncmp(key, "max_limit", 9) == 0)
                dst = &d->power_max_limit_mw;
        if (!dst)
                return mp_unknown_key(c, v, prefix, key);
        return mp_na_field(d, v, bit, true) ? 0 : mp_get_mw(c, v, prefix, key, watts, dst);
}

static int clocks_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        static const struct {
                const char *ours, *theirs;
                size_t off;
        } t[] = {
                { "graphics_mhz", "graphics_current", offsetof(gv_mock_device_t, clock_graphics_mhz) },
                { "sm_mhz", "sm_current", offsetof(gv_mock_device_t, clock_sm_mhz) },
                { "memory_mhz", "memory_current", offsetof(gv_mock_device_t, clock_mem_mhz) },
                { "video_mhz", "video_current", offsetof(gv_mock_device_t, clock_video_mhz) },
                { "max_graphics_mhz", "graphics_max", offsetof(gv_mock_device_t, max_clock_graphics_mhz) },
                { "max_sm_mhz", "sm_max", offsetof(gv_mock_device_t, max_clock_sm_mhz) },
                { "max_memory_mhz", "memory_max", offsetof(gv_mock_device_t, max_clock_mem_mhz) },
                { "max_video_mhz", "video_max", offsetof(gv_mock_device_t, max_clock_video_mhz) },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(t); i++)
                if (KEY_IS(key, t[i].ours) || KEY_IS(key, t[i].theirs)) {
                        if (mp_na_field(d, v, GV_MOCK_FIELD_CLOCKS, false))
                                return 0;
                        return mp_get_uint(c, v, prefix, key, 100000, (unsigned *) ((char *) d + t[i].off));
                }
        return mp_unknown_key(c, v, prefix, key);
}

static int util_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        unsigned *dst = KEY_IS(key, "gpu") ? &d->utilization_gpu : KEY_IS(key, "memory") ? &d->utilization_memory : NULL;
        if (!dst)
                return mp_unknown_key(c, v, prefix, key);
        return mp_na_field(d, v, GV_MOCK_FIELD_UTILIZATION, false) ? 0 : mp_get_uint(c, v, prefix, key, 100, dst);
}

static int memory_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        unsigned long long *dst = NULL, x = 0;
        bool bytes = false;
        if (KEY_IS(key, "total_mib") || (bytes = KEY_IS(key, "total_bytes")))
                dst = &d->memory_total_mib;
        else if (KEY_IS(key, "reserved_mib") || (bytes = KEY_IS(key, "reserved_bytes")))
                dst = &d->memory_reserved_mib;
        else if (KEY_IS(key, "used_mib") || (bytes = KEY_IS(key, "used_bytes")))
                dst = &d->memory_used_mib;
        else if (KEY_IS(key, "free_bytes") || KEY_IS(key, "free_mib"))
                return 0; /* derived: total - reserved - used */
        if (!dst)
                return mp_unknown_key(c, v, prefix, key);
        int r = mp_get_ull(c, v, prefix, key, bytes ? (1ULL << 50) : (1ULL << 30), &x);
        if (r < 0)
                return r;
        *dst = bytes ? x / (1024ULL * 1024ULL) : x;
        return 0;
}

static int pci_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "device_id") || KEY_IS(key, "pci_device_id")) {
                unsigned x;
                int r = mp_get_uint(c, v, prefix, key, UINT_MAX, &x);
                if (r < 0)
                        return r;
                d->pci_device_id = x > 0xffff ? x >> 16 : x;
                return 0;
        }
        if (KEY_IS(key, "subsystem_id") || KEY_IS(key, "pci_subsystem_id"))
                return mp_get_uint(c, v, prefix, key, UINT_MAX, &d->pci_subsystem_id);
        if (KEY_IS(key, "bus_id") || KEY_IS(key, "pci_bus_id")) {
                const char *s = mp_scalar(v);
                char *canon = NULL;
                if (!s || mp_parse_bus_id(s, &d->pci_domain, &d->pci_bus, &d->pci_device, &canon) < 0)
                        return mp_perr(c, v, prefix, key, "expected a PCI bus id like 00000000:07:00.0");
                replace_str(&d->pci_bus_id, canon);
                return 0;
        }
        return mp_unknown_key(c, v, prefix, key);
}

static int parse_cc(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        if (v->type == YAML_MAPPING_NODE) {
                yaml_node_t *ma = mp_map_get(c, v, "major"), *mi = mp_map_get(c, v, "minor");
                unsigned a = 0, b = 0;
                if (!ma)
                        return mp_perr(c, v, prefix, key, "missing major");
                int r = mp_get_uint(c, ma, prefix, "compute_capability.major", 99, &a);
                if (r >= 0 && mi)
                        r = mp_get_uint(c, mi, prefix, "compute_capability.minor", 99, &b);
                if (r < 0)
                        return r;
                d->cuda_cc_major = (int) a;
                d->cuda_cc_minor = (int) b;
                return 0;
        }
        const char *s = mp_scalar(v);
        unsigned a, b;
        int n = -1;
        if (!s || sscanf(s, "%u.%u%n", &a, &b, &n) != 2 || n < 0 || s[n] || a > 99 || b > 99)
                return mp_perr(c, v, prefix, key, "expected a compute capability like \"8.0\"");
        d->cuda_cc_major = (int) a;
        d->cuda_cc_minor = (int) b;
        return 0;
}

static int fabric_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "state")) {
                static const char *const names[] = { "not_supported", "not_started", "in_progress", "completed" };
                const char *s = mp_scalar(v);
                if (s && strcasecmp(s, "auto") == 0) {
                        d->fabric_state = NVML_GPU_FABRIC_STATE_COMPLETED;
                        return 0;
                }
                for (unsigned i = 0; s && i < GV_ARRAY_SIZE(names); i++) {
                        char norm[32];
                        size_t j = 0;
                        for (; s[j] && j + 1 < sizeof(norm); j++)
                                norm[j] = (char) (s[j] == '-' ? '_' : s[j]);
                        norm[j] = 0;
                        if (strcasecmp(norm, names[i]) == 0) {
                                d->fabric_state = i;
                                return 0;
                        }
                }
                return mp_perr(c, v, prefix, key, "expected not_supported, not_started, in_progress or completed");
        }
        if (KEY_IS(key, "status")) {
                const char *s = mp_scalar(v);
                if (!s || gv_mock_parse_return_name(s, &d->fabric_status) < 0)
                        return mp_perr(c, v, prefix, key, "expected an NVML return name or number");
                return 0;
        }
        if (KEY_IS(key, "clique_id"))
                return mp_get_uint(c, v, prefix, key, UINT_MAX, &d->fabric_clique_id);
        if (KEY_IS(key, "cluster_uuid")) {
                const char *s = mp_scalar(v);
                unsigned char u[16];
                size_t n = 0;
                for (; s && *s && n < 32; s++) {
                        if (*s == '-')
                                continue;
                        unsigned x;
                        if (sscanf((char[]) { *s, 0 }, "%1x", &x) != 1)
                                break;
                        if (n % 2 == 0)
                                u[n / 2] = (unsigned char) (x << 4);
                        else
                                u[n / 2] |= (unsigned char) x;
                        n++;
                }
                if (!s || *s || n != 32)
                        return mp_perr(c, v, prefix, key, "expected a UUID like 00000000-0000-0000-0000-000000000001");
                memcpy(d->fabric_cluster_uuid, u, 16);
                return 0;
        }
        return mp_unknown_key(c, v, prefix, key);
}

static int nvlink_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "links") || KEY_IS(key, "links_per_gpu"))
                return mp_get_uint(c, v, prefix, key, NVML_NVLINK_MAX_LINKS, &d->nvlink_count);
        if (KEY_IS(key, "active"))
                return mp_get_bool(c, v, prefix, key, &d->nvlink_active);
        return mp_unknown_key(c, v, prefix, key);
}

static int ecc_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "current") || KEY_IS(key, "mode_current"))
                return mp_get_bool(c, v, prefix, key, &d->ecc_current);
        if (KEY_IS(key, "pending") || KEY_IS(key, "mode_pending"))
                return mp_get_bool(c, v, prefix, key, &d->ecc_pending);
        return mp_unknown_key(c, v, prefix, key);
}

static int display_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "mode"))
                return mp_get_bool(c, v, prefix, key, &d->display_mode);
        if (KEY_IS(key, "active"))
                return mp_get_bool(c, v, prefix, key, &d->display_active);
        return mp_unknown_key(c, v, prefix, key);
}

static int thermal_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "temperature_gpu_c")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_TEMPERATURE, true))
                        return 0;
                return mp_get_uint(c, v, prefix, key, 200, &d->temperature_c);
        }
        return mp_unknown_key(c, v, prefix, key);
}

static int fan_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "speed_percent"))
                return mp_na_field(d, v, GV_MOCK_FIELD_FAN, true) ? 0 : mp_get_uint(c, v, prefix, key, 100, &d->fan_speed);
        return mp_unknown_key(c, v, prefix, key);
}

/* A nested mapping that may also be N/A as a whole. */
static int sub_map(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, gv_mock_device_t *d, uint32_t bit,
                   map_cb cb)
{
        if (bit && mp_is_na(v)) {
                mp_set_supported(d, bit, false);
                return 0;
        }
        int r = mp_want_map(c, v, prefix, key);
        if (r < 0)
                return r;
        if (bit)
                mp_set_supported(d, bit, true);
        _cleanup_free_ char *sub = mp_join(prefix, key);
        if (!sub)
                return gv_error_oom(c->err);
        return mp_for_each_pair(c, v, sub, cb, d);
}

static int parse_processes(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        if (mp_na_field(d, v, GV_MOCK_FIELD_PROCESSES, false))
                return 0;
        int r = mp_want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        mp_set_supported(d, GV_MOCK_FIELD_PROCESSES, true);
        size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
        if (n > 256)
                return mp_perr(c, v, prefix, key, "at most 256 processes");
        for (size_t i = 0; i < d->n_processes; i++)
                free(d->processes[i].name);
        free(d->processes);
        d->n_processes = 0;
        d->processes = n ? calloc(n, sizeof(*d->processes)) : NULL;
        if (n && !d->processes)
                return gv_error_oom(c->err);
        _cleanup_free_ char *base = mp_join(prefix, key);
        if (!base)
                return gv_error_oom(c->err);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *ip = NULL;
                yaml_node_t *item = mp_seq_item(c, v, base, i, &ip);
                if (!ip)
                        return gv_error_oom(c->err);
                gv_mock_process_t *pr = &d->processes[d->n_processes++];
                pr->gi_id = pr->ci_id = 0xFFFFFFFFu;
                r = mp_want_map(c, item, ip, "");
                if (r < 0)
                        return r;
                bool have_pid = false;
                for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
                        yaml_node_t *kn = mp_ynode(c, p->key), *x = mp_ynode(c, p->value);
                        const char *k = mp_scalar(kn);
                        unsigned long long b;
                        if (!k || !x)
                                return mp_perr(c, kn, ip, "", "bad key");
                        if (KEY_IS(k, "pid"))
                                r = mp_get_uint(c, x, ip, k, INT_MAX, &pr->pid), have_pid = true;
                        else if (KEY_IS(k, "name") || KEY_IS(k, "process_name"))
                                r = mp_get_str(c, x, ip, k, &pr->name);
                        else if (KEY_IS(k, "used_memory_mib"))
                                r = mp_get_ull(c, x, ip, k, 1ULL << 30, &pr->used_memory_mib);
                        else if (KEY_IS(k, "used_memory_bytes") || KEY_IS(k, "used_gpu_memory_bytes")) {
                                r = mp_get_ull(c, x, ip, k, 1ULL << 50, &b);
                                pr->used_memory_mib = b / (1024ULL * 1024);
                        } else if (KEY_IS(k, "gi_id"))
                                r = mp_get_uint(c, x, ip, k, GV_MOCK_MAX_INSTANCE_ID, &pr->gi_id);
                        else if (KEY_IS(k, "ci_id"))
                                r = mp_get_uint(c, x, ip, k, GV_MOCK_MAX_INSTANCE_ID, &pr->ci_id);
                        else
                                r = mp_unknown_key(c, x, ip, k);
                        if (r < 0)
                                return r;
                }
                if (!have_pid)
                        return mp_perr(c, item, ip, "pid", "required field missing");
        }
        return 0;
}

static int parse_unsupported(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        int r = mp_want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                yaml_node_t *x = mp_ynode(c, *it);
                const char *s = mp_scalar(x);
                bool found = false;
                for (size_t i = 0; s && i < GV_ARRAY_SIZE(field_names); i++)
                        if (strcmp(s, field_names[i].name) == 0) {
                                d->unsupported |= field_names[i].bit;
                                found = true;
                        }
                if (!found)
                        return mp_perr(c, x ? x : v, prefix, key, "unknown field name %s%s%s (see docs/mock-nvml.md)",
                                       s ? "\"" : "", s ? s : "", s ? "\"" : "");
        }
        return 0;
}

/* Identity, memory and PCI keys of a GPU mapping.  Returns NOT_MINE for any other key. */
static int identity_key(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, gv_mock_device_t *d)
{
        int r;
        /* strings that may be N/A */
        static const struct {
                const char *key;
                size_t off;
                uint32_t bit;
        } strs[] = {
                { "serial", offsetof(gv_mock_device_t, serial), GV_MOCK_FIELD_SERIAL },
                { "vbios_version", offsetof(gv_mock_device_t, vbios_version), GV_MOCK_FIELD_VBIOS },
                { "board_part_number", offsetof(gv_mock_device_t, board_part_number), GV_MOCK_FIELD_BOARD_PART_NUMBER },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(strs); i++)
                if (KEY_IS(key, strs[i].key)) {
                        if (mp_na_field(d, v, strs[i].bit, true))
                                return 0;
                        return mp_get_str(c, v, prefix, key, (char **) ((char *) d + strs[i].off));
                }
        if (KEY_IS(key, "name")) {
                r = mp_get_str(c, v, prefix, key, &d->name);
                if (r >= 0 && strlen(d->name) >= NVML_DEVICE_NAME_BUFFER_SIZE)
                        return mp_perr(c, v, prefix, key, "longer than %d characters", NVML_DEVICE_NAME_BUFFER_SIZE - 1);
                return r;
        }
        if (KEY_IS(key, "uuid")) {
                r = mp_get_str(c, v, prefix, key, &d->uuid);
                if (r >= 0 && !mp_valid_uuid(d->uuid, "GPU-"))
                        return mp_perr(c, v, prefix, key, "expected GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
                return r;
        }
        if (KEY_IS(key, "index"))
                return 0; /* handled by the caller */
        if (KEY_IS(key, "architecture")) {
                const char *s = mp_scalar(v);
                for (size_t i = 0; s && i < GV_ARRAY_SIZE(arch_names); i++)
                        if (strcasecmp(s, arch_names[i].name) == 0) {
                                d->architecture = arch_names[i].value;
                                return mp_get_str(c, v, prefix, key, &d->architecture_name);
                        }
                return mp_perr(c, v, prefix, key, "expected an architecture (ampere, hopper, ada, turing, blackwell, ...)");
        }
        if (KEY_IS(key, "brand")) {
                const char *s = mp_scalar(v);
                for (size_t i = 0; s && i < mp_n_brand_names; i++)
                        if (strcasecmp(s, mp_brand_names[i].name) == 0) {
                                d->brand = mp_brand_names[i].value;
                                return 0;
                        }
                return mp_perr(c, v, prefix, key, "expected a brand (nvidia, tesla, geforce, quadro, ...)");
        }
        if (KEY_IS(key, "compute_capability"))
                return parse_cc(c, v, prefix, key, d);
        if (KEY_IS(key, "multiprocessors"))
                return mp_get_uint(c, v, prefix, key, 10000, &d->multiprocessor_count);
        if (KEY_IS(key, "memory_mib"))
                return mp_get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_total_mib);
        if (KEY_IS(key, "memory_reserved_mib"))
                return mp_get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_reserved_mib);
        if (KEY_IS(key, "memory_used_mib"))
                return mp_get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_used_mib);
        if (KEY_IS(key, "memory"))
                return sub_map(c, prefix, key, v, d, 0, memory_cb);
        if (KEY_IS(key, "pci_device_id") || KEY_IS(key, "pci_subsystem_id") || KEY_IS(key, "pci_bus_id"))
                return pci_cb(c, prefix, key, v, d);
        if (KEY_IS(key, "pci"))
                return sub_map(c, prefix, key, v, d, 0, pci_cb);
        if (KEY_IS(key, "minor_number")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_MINOR_NUMBER, false))
                        return 0;
                return mp_get_uint(c, v, prefix, key, 255, &d->minor_number);
        }
        return NOT_MINE;
}

/* Thermal, power, clock, utilization, fan and mode keys of a GPU mapping.  Returns NOT_MINE for any other key. */
static int state_key(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, gv_mock_device_t *d)
{
        int r;
        if (KEY_IS(key, "temperature_c")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_TEMPERATURE, true))
                        return 0;
                return mp_get_uint(c, v, prefix, key, 200, &d->temperature_c);
        }
        if (KEY_IS(key, "thermal"))
                return sub_map(c, prefix, key, v, d, 0, thermal_cb);
        if (KEY_IS(key, "power"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_POWER_USAGE | GV_MOCK_FIELD_POWER_LIMIT, power_cb);
        if (KEY_IS(key, "clocks"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_CLOCKS, clocks_cb);
        if (KEY_IS(key, "utilization"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_UTILIZATION, util_cb);
        if (KEY_IS(key, "fan_percent"))
                return mp_na_field(d, v, GV_MOCK_FIELD_FAN, true) ? 0 : mp_get_uint(c, v, prefix, key, 100, &d->fan_speed);
        if (KEY_IS(key, "fan"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_FAN, fan_cb);
        if (KEY_IS(key, "persistence_mode")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_PERSISTENCE, true))
                        return 0;
                return mp_get_bool(c, v, prefix, key, &d->persistence_mode);
        }
        if (KEY_IS(key, "compute_mode")) {
                const char *s = mp_scalar(v);
                if (mp_na_field(d, v, GV_MOCK_FIELD_COMPUTE_MODE, false))
                        return 0;
                for (unsigned i = 0; s && i < mp_n_compute_mode_names; i++)
                        if (strcasecmp(s, mp_compute_mode_names[i]) == 0) {
                                d->compute_mode = i;
                                mp_set_supported(d, GV_MOCK_FIELD_COMPUTE_MODE, true);
                                return 0;
                        }
                return mp_perr(c, v, prefix, key, "expected default, exclusive_thread, prohibited or exclusive_process");
        }
        if (KEY_IS(key, "ecc")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_ECC, true))
                        return 0;
                if (v->type == YAML_SCALAR_NODE) {
                        r = mp_get_bool(c, v, prefix, key, &d->ecc_current);
                        d->ecc_pending = d->ecc_current;
                        return r;
                }
                return sub_map(c, prefix, key, v, d, 0, ecc_cb);
        }
        if (KEY_IS(key, "pstate") || KEY_IS(key, "performance_state")) {
                const char *s = mp_scalar(v);
                unsigned p;
                int n = -1;
                if (mp_na_field(d, v, GV_MOCK_FIELD_PSTATE, false))
                        return 0;
                if (!s || sscanf(s, "P%u%n", &p, &n) != 1 || n < 0 || s[n] || p > 15)
                        return mp_perr(c, v, prefix, key, "expected P0..P15");
                mp_set_supported(d, GV_MOCK_FIELD_PSTATE, true);
                d->pstate = p;
                return 0;
        }
        return NOT_MINE;
}

/* Display, NVLink, fabric, MIG, process and `unsupported` keys of a GPU mapping.  Returns NOT_MINE for any other key. */
static int feature_key(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, gv_mock_device_t *d)
{
        if (KEY_IS(key, "display_mode") || KEY_IS(key, "display_active")) {
                if (mp_na_field(d, v, GV_MOCK_FIELD_DISPLAY, false))
                        return 0;
                return mp_get_bool(c, v, prefix, key, KEY_IS(key, "display_mode") ? &d->display_mode : &d->display_active);
        }
        if (KEY_IS(key, "display"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_DISPLAY, display_cb);
        if (KEY_IS(key, "nvlink"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_NVLINK, nvlink_cb);
        if (KEY_IS(key, "fabric")) {
                if (mp_is_na(v)) {
                        d->fabric_state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
                        mp_set_supported(d, GV_MOCK_FIELD_FABRIC, false);
                        return 0;
                }
                if (d->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                        d->fabric_state = NVML_GPU_FABRIC_STATE_COMPLETED;
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_FABRIC, fabric_cb);
        }
        if (KEY_IS(key, "mig")) {
                if (mp_is_na(v)) {
                        d->mig_capable = false;
                        mp_set_supported(d, GV_MOCK_FIELD_MIG, false);
                        return 0;
                }
                d->mig_capable = true;
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_MIG, mp_mig_cb);
        }
        if (KEY_IS(key, "processes"))
                return parse_processes(c, v, prefix, key, d);
        if (KEY_IS(key, "unsupported"))
                return parse_unsupported(c, v, prefix, key, d);
        return NOT_MINE;
}

/* One key of a GPU mapping (`gpu`, `device_defaults`, `devices[i]`). */
int mp_device_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        int r = identity_key(c, prefix, key, v, d);
        if (r == NOT_MINE)
                r = state_key(c, prefix, key, v, d);
        if (r == NOT_MINE)
                r = feature_key(c, prefix, key, v, d);
        return r == NOT_MINE ? mp_unknown_key(c, v, prefix, key) : r;
}

void mp_device_defaults(gv_mock_device_t *d)
{
        memset(d, 0, sizeof(*d));
        d->minor_number = UNSET;
        d->memory_reserved_mib = UNSET_ULL; /* finalize: the board's reserve on the profile's driver */
        d->brand = NVML_BRAND_NVIDIA;
        d->architecture = NVML_DEVICE_ARCH_UNKNOWN;
        d->compute_mode = NVML_COMPUTEMODE_DEFAULT;
        d->persistence_mode = true;
        d->ecc_current = d->ecc_pending = true;
        d->fabric_status = NVML_SUCCESS;
        d->nvlink_active = true;
}
