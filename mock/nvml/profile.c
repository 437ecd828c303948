/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profile loading for the mock NVML library: YAML (libyaml document API, so
 * every node carries its line) into gv_mock_profile_t.  See profile.h and
 * docs/mock-nvml.md for the two accepted schemas.
 */
#include "mock/nvml/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h> /* isfinite (a macro; no libm needed) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "abi/nvml/nvml-abi.h"
#include "builtin-profiles.h"

#define UNSET UINT_MAX
#define MAX_PROFILE_BYTES (4u << 20)

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static char *xstrdup(const char *s)
{
        return s ? strdup(s) : NULL;
}

static void replace_str(char **dst, char *src)
{
        free(*dst);
        *dst = src;
}

/* ------------------------------------------------------------------ */
/* freeing and copying                                                 */

static void mig_profile_clear(gv_mock_mig_profile_t *m)
{
        free(m->name);
}

static void mig_device_clear(gv_mock_mig_device_t *m)
{
        free(m->profile);
        free(m->ci_profile);
        free(m->uuid);
}

static void device_clear(gv_mock_device_t *d)
{
        if (!d)
                return;
        free(d->name);
        free(d->uuid);
        free(d->pci_bus_id);
        free(d->serial);
        free(d->vbios_version);
        free(d->board_part_number);
        free(d->architecture_name);
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                mig_profile_clear(&d->mig_profiles[i]);
        free(d->mig_profiles);
        for (size_t i = 0; i < d->n_mig_devices; i++)
                mig_device_clear(&d->mig_devices[i]);
        free(d->mig_devices);
        for (size_t i = 0; i < d->n_processes; i++)
                free(d->processes[i].name);
        free(d->processes);
        memset(d, 0, sizeof(*d));
}

static int mig_profiles_copy(gv_mock_mig_profile_t **dst, const gv_mock_mig_profile_t *src, size_t n)
{
        *dst = NULL;
        if (n == 0)
                return 0;
        gv_mock_mig_profile_t *a = calloc(n, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                a[i] = src[i];
                a[i].name = xstrdup(src[i].name);
        }
        *dst = a;
        return 0;
}

static int mig_devices_copy(gv_mock_mig_device_t **dst, const gv_mock_mig_device_t *src, size_t n)
{
        *dst = NULL;
        if (n == 0)
                return 0;
        gv_mock_mig_device_t *a = calloc(n, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                a[i] = src[i];
                a[i].profile = xstrdup(src[i].profile);
                a[i].ci_profile = xstrdup(src[i].ci_profile);
                a[i].uuid = xstrdup(src[i].uuid);
        }
        *dst = a;
        return 0;
}

static int device_copy(gv_mock_device_t *dst, const gv_mock_device_t *src)
{
        *dst = *src;
        dst->name = xstrdup(src->name);
        dst->uuid = xstrdup(src->uuid);
        dst->pci_bus_id = xstrdup(src->pci_bus_id);
        dst->serial = xstrdup(src->serial);
        dst->vbios_version = xstrdup(src->vbios_version);
        dst->board_part_number = xstrdup(src->board_part_number);
        dst->architecture_name = xstrdup(src->architecture_name);
        dst->mig_profiles = NULL;
        dst->mig_devices = NULL;
        dst->processes = NULL;
        int r = mig_profiles_copy(&dst->mig_profiles, src->mig_profiles, src->n_mig_profiles);
        if (r >= 0)
                r = mig_devices_copy(&dst->mig_devices, src->mig_devices, src->n_mig_devices);
        if (r >= 0 && src->n_processes) {
                dst->processes = calloc(src->n_processes, sizeof(*dst->processes));
                if (!dst->processes)
                        r = -ENOMEM;
                for (size_t i = 0; r >= 0 && i < src->n_processes; i++) {
                        dst->processes[i] = src->processes[i];
                        dst->processes[i].name = xstrdup(src->processes[i].name);
                }
        }
        if (r < 0) {
                dst->n_mig_profiles = dst->mig_profiles ? dst->n_mig_profiles : 0;
                dst->n_mig_devices = dst->mig_devices ? dst->n_mig_devices : 0;
                dst->n_processes = dst->processes ? dst->n_processes : 0;
                device_clear(dst);
        }
        return r;
}

void gv_mock_profile_free(gv_mock_profile_t **pp)
{
        if (!pp || !*pp)
                return;
        gv_mock_profile_t *p = *pp;
        free(p->source);
        free(p->name);
        free(p->node_name);
        free(p->driver_version);
        free(p->nvml_version);
        for (unsigned i = 0; i < p->device_count; i++)
                device_clear(&p->devices[i]);
        free(p->devices);
        device_clear(p->device_template);
        free(p->device_template);
        free(p->faults.xids);
        free(p->faults.xid_control_file);
        free(p);
        *pp = NULL;
}

static void profile_freep(gv_mock_profile_t **p)
{
        gv_mock_profile_free(p);
}
#define _cleanup_profile_ _cleanup_(profile_freep)

/* ------------------------------------------------------------------ */
/* name tables                                                         */

static const struct {
        const char *name;
        unsigned value;
} return_names[] = {
        { "none", NVML_SUCCESS },
        { "success", NVML_SUCCESS },
        { "uninitialized", NVML_ERROR_UNINITIALIZED },
        { "not-supported", NVML_ERROR_NOT_SUPPORTED },
        { "no-permission", NVML_ERROR_NO_PERMISSION },
        { "driver-not-loaded", NVML_ERROR_DRIVER_NOT_LOADED },
        { "library-not-found", NVML_ERROR_LIBRARY_NOT_FOUND },
        { "corrupted-inforom", NVML_ERROR_CORRUPTED_INFOROM },
        { "gpu-is-lost", NVML_ERROR_GPU_IS_LOST },
        { "reset-required", NVML_ERROR_RESET_REQUIRED },
        { "operating-system", NVML_ERROR_OPERATING_SYSTEM },
        { "lib-rm-version-mismatch", NVML_ERROR_LIB_RM_VERSION_MISMATCH },
        { "insufficient-resources", NVML_ERROR_INSUFFICIENT_RESOURCES },
        { "unknown", NVML_ERROR_UNKNOWN },
};

int gv_mock_parse_return_name(const char *s, unsigned *out)
{
        if (!s || !*s)
                return -EINVAL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(return_names); i++) {
                /* accept "driver-not-loaded", "driver_not_loaded", "DRIVER_NOT_LOADED" */
                const char *a = return_names[i].name, *b = s;
                if (strncasecmp(b, "NVML_ERROR_", 11) == 0)
                        b += 11;
                for (; *a && *b; a++, b++) {
                        char cb = (char) (*b == '_' ? '-' : *b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b);
                        if (*a != cb)
                                break;
                }
                if (!*a && !*b) {
                        *out = return_names[i].value;
                        return 0;
                }
        }
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || !end || *end || (v > 30 && v != 999))
                return -EINVAL;
        *out = (unsigned) v;
        return 0;
}

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
        unsigned value;
} brand_names[] = {
        { "unknown", NVML_BRAND_UNKNOWN }, { "quadro", NVML_BRAND_QUADRO },   { "tesla", NVML_BRAND_TESLA },
        { "nvs", NVML_BRAND_NVS },         { "grid", NVML_BRAND_GRID },       { "geforce", NVML_BRAND_GEFORCE },
        { "titan", NVML_BRAND_TITAN },     { "nvidia", NVML_BRAND_NVIDIA },   { "quadro_rtx", NVML_BRAND_QUADRO_RTX },
        { "nvidia_rtx", NVML_BRAND_NVIDIA_RTX }, { "geforce_rtx", NVML_BRAND_GEFORCE_RTX },
        { "titan_rtx", NVML_BRAND_TITAN_RTX },
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

static const char *const compute_mode_names[] = { "default", "exclusive_thread", "prohibited", "exclusive_process" };

static const struct {
        const char *name;
        unsigned id;
        unsigned slices;
} gi_profile_ids[] = {
        { "1_SLICE", NVML_GPU_INSTANCE_PROFILE_1_SLICE, 1 },
        { "2_SLICE", NVML_GPU_INSTANCE_PROFILE_2_SLICE, 2 },
        { "3_SLICE", NVML_GPU_INSTANCE_PROFILE_3_SLICE, 3 },
        { "4_SLICE", NVML_GPU_INSTANCE_PROFILE_4_SLICE, 4 },
        { "7_SLICE", NVML_GPU_INSTANCE_PROFILE_7_SLICE, 7 },
        { "8_SLICE", NVML_GPU_INSTANCE_PROFILE_8_SLICE, 8 },
        { "6_SLICE", NVML_GPU_INSTANCE_PROFILE_6_SLICE, 6 },
        { "1_SLICE_REV1", NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1, 1 },
        { "2_SLICE_REV1", NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1, 2 },
        { "1_SLICE_REV2", NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2, 1 },
};

/* ------------------------------------------------------------------ */
/* YAML walking                                                        */

typedef struct pctx {
        const char *source;
        yaml_document_t *doc;
        gv_error_t **err;
        bool lenient; /* nvml-mock schema: unknown keys are ignored */
} pctx_t;

static yaml_node_t *ynode(pctx_t *c, int id)
{
        return yaml_document_get_node(c->doc, id);
}

static unsigned long yline(const yaml_node_t *n)
{
        return n ? (unsigned long) n->start_mark.line + 1 : 0;
}

/* "<source>:<line>: <prefix>.<key>: <message>" */
__attribute__((format(printf, 5, 6))) static int perr(pctx_t *c, const yaml_node_t *n, const char *prefix,
                                                      const char *key, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        const char *sep = (prefix && *prefix && key && *key) ? "." : "";
        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s:%lu: %s%s%s: %s", c->source, yline(n),
                            prefix ? prefix : "", sep, key ? key : "", msg);
}

static int oom(pctx_t *c)
{
        return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
}

static const char *scalar(const yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        return (const char *) n->data.scalar.value;
}

static bool is_na(const yaml_node_t *n)
{
        const char *s = scalar(n);
        if (!s)
                return false;
        return strcasecmp(s, "N/A") == 0 || strcasecmp(s, "[N/A]") == 0 || strcasecmp(s, "not-supported") == 0 ||
               strcasecmp(s, "not_supported") == 0 || strcasecmp(s, "unsupported") == 0;
}

static bool is_null(const yaml_node_t *n)
{
        const char *s = scalar(n);
        if (!s)
                return false;
        if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        return *s == 0 || strcmp(s, "~") == 0 || strcasecmp(s, "null") == 0;
}

static yaml_node_t *map_get(pctx_t *c, yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const char *k = scalar(ynode(c, p->key));
                if (k && strcmp(k, key) == 0)
                        return ynode(c, p->value);
        }
        return NULL;
}

static int want_map(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key)
{
        if (!n || n->type != YAML_MAPPING_NODE)
                return perr(c, n, prefix, key, "expected a mapping");
        return 0;
}

static int want_seq(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key)
{
        if (!n || n->type != YAML_SEQUENCE_NODE)
                return perr(c, n, prefix, key, "expected a list");
        return 0;
}

static int get_ull(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned long long max,
                   unsigned long long *out)
{
        const char *s = scalar(n);
        if (!s || !*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                goto bad;
        if (*s == '-' || *s == '+' || *s == ' ')
                goto bad;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno == ERANGE || v > max)
                return perr(c, n, prefix, key, "%s is out of range (at most %llu)", s, max);
        if (errno || !end || *end)
                goto bad;
        *out = v;
        return 0;
bad:
        return perr(c, n, prefix, key, "expected an integer");
}

static int get_uint(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned max, unsigned *out)
{
        unsigned long long v = 0;
        int r = get_ull(c, n, prefix, key, max, &v);
        if (r < 0)
                return r;
        *out = (unsigned) v;
        return 0;
}

static int get_double(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, double max, double *out)
{
        const char *s = scalar(n);
        if (!s || !*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return perr(c, n, prefix, key, "expected a number");
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || !end || *end || !isfinite(v))
                return perr(c, n, prefix, key, "expected a number");
        if (v < 0 || v > max)
                return perr(c, n, prefix, key, "%s is out of range (0..%g)", s, max);
        *out = v;
        return 0;
}

static int get_bool(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool *out)
{
        const char *s = scalar(n);
        static const char *const yes[] = { "true", "yes", "on", "enabled", "enable", "1" };
        static const char *const no[] = { "false", "no", "off", "disabled", "disable", "0" };
        if (s) {
                for (size_t i = 0; i < GV_ARRAY_SIZE(yes); i++)
                        if (strcasecmp(s, yes[i]) == 0) {
                                *out = true;
                                return 0;
                        }
                for (size_t i = 0; i < GV_ARRAY_SIZE(no); i++)
                        if (strcasecmp(s, no[i]) == 0) {
                                *out = false;
                                return 0;
                        }
        }
        return perr(c, n, prefix, key, "expected a boolean (true/false, enabled/disabled)");
}

/* A string value; numbers are accepted as their text. */
static int get_str(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, char **out)
{
        const char *s = scalar(n);
        if (!s)
                return perr(c, n, prefix, key, "expected a string");
        if (strlen(s) > 255)
                return perr(c, n, prefix, key, "longer than 255 characters");
        /* Names, UUIDs, serials and versions end up in log lines and `nvidia-smi -L` lines. */
        for (const char *q = s; *q; q++)
                if ((unsigned char) *q < 0x20 || *q == 0x7f)
                        return perr(c, n, prefix, key, "contains a control character (0x%02x at offset %zu)",
                                    (unsigned) (unsigned char) *q, (size_t) (q - s));
        char *d = strdup(s);
        if (!d)
                return oom(c);
        free(*out);
        *out = d;
        return 0;
}

/* Milliwatts from "<key>_w" (watts, may be fractional) or "<key>_mw". */
static int get_mw(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool watts, unsigned *out)
{
        if (watts) {
                double w = 0;
                int r = get_double(c, n, prefix, key, 100000.0, &w);
                if (r < 0)
                        return r;
                *out = (unsigned) (w * 1000.0 + 0.5);
                return 0;
        }
        return get_uint(c, n, prefix, key, 100000000u, out);
}

static void set_supported(gv_mock_device_t *d, uint32_t bit, bool supported)
{
        if (supported)
                d->unsupported &= ~bit;
        else
                d->unsupported |= bit;
}

/*
 * A field that may be "N/A": when @v is N/A, marks @bit unsupported and
 * returns true (nothing left to parse); otherwise returns false after marking
 * @bit supported when @mark_supported.
 */
static bool na_field(gv_mock_device_t *d, const yaml_node_t *v, uint32_t bit, bool mark_supported)
{
        if (is_na(v)) {
                set_supported(d, bit, false);
                return true;
        }
        if (mark_supported)
                set_supported(d, bit, true);
        return false;
}

/* Parses "%08X:%02X:%02X.0" or "%04X:%02X:%02X.0" into a canonical 8-digit form. */
static int parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, char **canon)
{
        unsigned a, b, d, f;
        int n = -1;
        if (sscanf(s, "%x:%x:%x.%x%n", &a, &b, &d, &f, &n) != 4 || n < 0 || s[n] != 0)
                return -EINVAL;
        if (b > 0xff || d > 0x1f || f > 7)
                return -EINVAL;
        if (canon && asprintf(canon, "%08X:%02X:%02X.0", a, b, d) < 0)
                return -ENOMEM;
        *dom = a;
        *bus = b;
        *dev = d;
        return 0;
}

static bool valid_uuid(const char *s, const char *prefix)
{
        size_t pl = strlen(prefix);
        if (strncmp(s, prefix, pl) != 0)
                return false;
        s += pl;
        static const unsigned groups[] = { 8, 4, 4, 4, 12 };
        for (size_t g = 0; g < 5; g++) {
                for (unsigned i = 0; i < groups[g]; i++, s++)
                        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
                                return false;
                if (g < 4 && *s++ != '-')
                        return false;
        }
        return *s == 0;
}

/* ------------------------------------------------------------------ */
/* device fields                                                       */

#define KEY_IS(k, lit) (strcmp((k), (lit)) == 0)

typedef int (*map_cb)(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data);

/* Calls @cb for each pair of @map; the prefix passed on is "<prefix>" (keys are separate). */
static int for_each_pair(pctx_t *c, yaml_node_t *map, const char *prefix, map_cb cb, void *data)
{
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = ynode(c, p->key), *v = ynode(c, p->value);
                const char *ks = scalar(k);
                if (!ks)
                        return perr(c, k, prefix, "", "keys must be strings");
                if (!v)
                        return perr(c, k, prefix, ks, "missing value");
                int r = cb(c, prefix, ks, v, data);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int unknown_key(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key)
{
        if (c->lenient)
                return 0;
        return perr(c, v, prefix, key, "unknown field");
}

static char *join(const char *prefix, const char *key)
{
        char *s = NULL;
        if (asprintf(&s, "%s%s%s", prefix, *prefix ? "." : "", key) < 0)
                return NULL;
        return s;
}

static int power_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        size_t kl = strlen(key);
        bool watts = kl > 2 && strcmp(key + kl - 2, "_w") == 0;
        bool mw = kl > 3 && strcmp(key + kl - 3, "_mw") == 0;
        if (!watts && !mw)
                return unknown_key(c, v, prefix, key);
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
                return unknown_key(c, v, prefix, key);
        return na_field(d, v, bit, true) ? 0 : get_mw(c, v, prefix, key, watts, dst);
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
                        if (na_field(d, v, GV_MOCK_FIELD_CLOCKS, false))
                                return 0;
                        return get_uint(c, v, prefix, key, 100000, (unsigned *) ((char *) d + t[i].off));
                }
        return unknown_key(c, v, prefix, key);
}

static int util_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        unsigned *dst = KEY_IS(key, "gpu") ? &d->utilization_gpu : KEY_IS(key, "memory") ? &d->utilization_memory : NULL;
        if (!dst)
                return unknown_key(c, v, prefix, key);
        return na_field(d, v, GV_MOCK_FIELD_UTILIZATION, false) ? 0 : get_uint(c, v, prefix, key, 100, dst);
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
                return unknown_key(c, v, prefix, key);
        int r = get_ull(c, v, prefix, key, bytes ? (1ULL << 50) : (1ULL << 30), &x);
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
                int r = get_uint(c, v, prefix, key, UINT_MAX, &x);
                if (r < 0)
                        return r;
                d->pci_device_id = x > 0xffff ? x >> 16 : x;
                return 0;
        }
        if (KEY_IS(key, "subsystem_id") || KEY_IS(key, "pci_subsystem_id"))
                return get_uint(c, v, prefix, key, UINT_MAX, &d->pci_subsystem_id);
        if (KEY_IS(key, "bus_id") || KEY_IS(key, "pci_bus_id")) {
                const char *s = scalar(v);
                char *canon = NULL;
                if (!s || parse_bus_id(s, &d->pci_domain, &d->pci_bus, &d->pci_device, &canon) < 0)
                        return perr(c, v, prefix, key, "expected a PCI bus id like 00000000:07:00.0");
                replace_str(&d->pci_bus_id, canon);
                return 0;
        }
        return unknown_key(c, v, prefix, key);
}

static int parse_cc(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        if (v->type == YAML_MAPPING_NODE) {
                yaml_node_t *ma = map_get(c, v, "major"), *mi = map_get(c, v, "minor");
                unsigned a = 0, b = 0;
                if (!ma)
                        return perr(c, v, prefix, key, "missing major");
                int r = get_uint(c, ma, prefix, "compute_capability.major", 99, &a);
                if (r >= 0 && mi)
                        r = get_uint(c, mi, prefix, "compute_capability.minor", 99, &b);
                if (r < 0)
                        return r;
                d->cuda_cc_major = (int) a;
                d->cuda_cc_minor = (int) b;
                return 0;
        }
        const char *s = scalar(v);
        unsigned a, b;
        int n = -1;
        if (!s || sscanf(s, "%u.%u%n", &a, &b, &n) != 2 || n < 0 || s[n] || a > 99 || b > 99)
                return perr(c, v, prefix, key, "expected a compute capability like \"8.0\"");
        d->cuda_cc_major = (int) a;
        d->cuda_cc_minor = (int) b;
        return 0;
}

static int parse_mig_profile(pctx_t *c, yaml_node_t *v, const char *prefix, gv_mock_mig_profile_t *m)
{
        int r = want_map(c, v, prefix, "");
        if (r < 0)
                return r;
        bool have_id = false;
        m->id = UNSET;
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = ynode(c, p->key), *x = ynode(c, p->value);
                const char *k = scalar(kn);
                if (!k || !x)
                        return perr(c, kn, prefix, "", "bad key");
                if (KEY_IS(k, "name"))
                        r = get_str(c, x, prefix, k, &m->name);
                else if (KEY_IS(k, "id"))
                        r = get_uint(c, x, prefix, k, NVML_GPU_INSTANCE_PROFILE_COUNT - 1, &m->id), have_id = true;
                else if (KEY_IS(k, "nvml_profile")) {
                        const char *s = scalar(x);
                        r = perr(c, x, prefix, k, "expected one of 1_SLICE, 2_SLICE, ..., 1_SLICE_REV2");
                        for (size_t i = 0; s && i < GV_ARRAY_SIZE(gi_profile_ids); i++)
                                if (strcasecmp(s, gi_profile_ids[i].name) == 0) {
                                        gv_error_free(c->err);
                                        m->id = gi_profile_ids[i].id;
                                        if (!m->slice_count)
                                                m->slice_count = gi_profile_ids[i].slices;
                                        have_id = true;
                                        r = 0;
                                }
                } else if (KEY_IS(k, "slices"))
                        r = get_uint(c, x, prefix, k, 8, &m->slice_count);
                else if (KEY_IS(k, "instances"))
                        r = get_uint(c, x, prefix, k, 8, &m->instance_count);
                else if (KEY_IS(k, "memory_mib") || KEY_IS(k, "memory_mb"))
                        r = get_ull(c, x, prefix, k, 1ULL << 30, &m->memory_mib);
                else if (KEY_IS(k, "multiprocessors"))
                        r = get_uint(c, x, prefix, k, 10000, &m->multiprocessor_count);
                else if (KEY_IS(k, "copy_engines"))
                        r = get_uint(c, x, prefix, k, 64, &m->copy_engine_count);
                else if (KEY_IS(k, "decoders"))
                        r = get_uint(c, x, prefix, k, 64, &m->decoder_count);
                else if (KEY_IS(k, "encoders"))
                        r = get_uint(c, x, prefix, k, 64, &m->encoder_count);
                else if (KEY_IS(k, "jpeg"))
                        r = get_uint(c, x, prefix, k, 64, &m->jpeg_count);
                else if (KEY_IS(k, "ofa"))
                        r = get_uint(c, x, prefix, k, 64, &m->ofa_count);
                else
                        r = unknown_key(c, x, prefix, k);
                if (r < 0)
                        return r;
        }
        if (!m->name)
                return perr(c, v, prefix, "name", "required field missing");
        if (!m->slice_count) {
                unsigned g;
                if (sscanf(m->name, "%ug.", &g) == 1 && g >= 1 && g <= 8)
                        m->slice_count = g;
                else
                        return perr(c, v, prefix, "slices", "required field missing");
        }
        if (!have_id) {
                for (size_t i = 0; i < GV_ARRAY_SIZE(gi_profile_ids); i++)
                        if (gi_profile_ids[i].slices == m->slice_count) {
                                m->id = gi_profile_ids[i].id;
                                break;
                        }
                if (m->id == UNSET)
                        return perr(c, v, prefix, "id", "required field missing");
        }
        if (!m->instance_count)
                m->instance_count = 1;
        return 0;
}

static int parse_mig_device(pctx_t *c, yaml_node_t *v, const char *prefix, gv_mock_mig_device_t *m)
{
        m->gi_id = m->ci_id = UNSET;
        m->placement_start = UNSET;
        if (v->type == YAML_SCALAR_NODE)
                return get_str(c, v, prefix, "", &m->profile);
        int r = want_map(c, v, prefix, "");
        if (r < 0)
                return r;
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = ynode(c, p->key), *x = ynode(c, p->value);
                const char *k = scalar(kn);
                if (!k || !x)
                        return perr(c, kn, prefix, "", "bad key");
                if (KEY_IS(k, "profile") || KEY_IS(k, "name"))
                        r = get_str(c, x, prefix, k, &m->profile);
                else if (KEY_IS(k, "ci_profile"))
                        r = get_str(c, x, prefix, k, &m->ci_profile);
                else if (KEY_IS(k, "uuid")) {
                        r = get_str(c, x, prefix, k, &m->uuid);
                        if (r >= 0 && !valid_uuid(m->uuid, "MIG-"))
                                r = perr(c, x, prefix, k, "expected MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
                } else if (KEY_IS(k, "gi_id") || KEY_IS(k, "gpu_instance_id"))
                        r = get_uint(c, x, prefix, k, GV_MOCK_MAX_INSTANCE_ID, &m->gi_id);
                else if (KEY_IS(k, "ci_id") || KEY_IS(k, "compute_instance_id"))
                        r = get_uint(c, x, prefix, k, GV_MOCK_MAX_INSTANCE_ID, &m->ci_id);
                else if (KEY_IS(k, "ci_slices"))
                        r = get_uint(c, x, prefix, k, 8, &m->ci_slice_count);
                else if (KEY_IS(k, "placement_start"))
                        r = get_uint(c, x, prefix, k, 7, &m->placement_start);
                else if (KEY_IS(k, "memory_mib"))
                        r = get_ull(c, x, prefix, k, 1ULL << 30, &m->memory_mib);
                else if (KEY_IS(k, "multiprocessors"))
                        r = get_uint(c, x, prefix, k, 10000, &m->multiprocessor_count);
                else
                        r = unknown_key(c, x, prefix, k);
                if (r < 0)
                        return r;
        }
        if (!m->profile)
                return perr(c, v, prefix, "profile", "required field missing");
        return 0;
}

static int parse_mig_list(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d,
                          bool profiles)
{
        int r = want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
        if (!profiles && n > GV_MOCK_MAX_MIG_DEVICES)
                return perr(c, v, prefix, key, "at most %u MIG devices per GPU", GV_MOCK_MAX_MIG_DEVICES);
        if (profiles && n > 32)
                return perr(c, v, prefix, key, "at most 32 GPU instance profiles");
        _cleanup_free_ char *base = join(prefix, key);
        if (!base)
                return oom(c);
        if (profiles) {
                for (size_t i = 0; i < d->n_mig_profiles; i++)
                        mig_profile_clear(&d->mig_profiles[i]);
                free(d->mig_profiles);
                d->mig_profiles = n ? calloc(n, sizeof(*d->mig_profiles)) : NULL;
                d->n_mig_profiles = 0;
                if (n && !d->mig_profiles)
                        return oom(c);
        } else {
                for (size_t i = 0; i < d->n_mig_devices; i++)
                        mig_device_clear(&d->mig_devices[i]);
                free(d->mig_devices);
                d->mig_devices = n ? calloc(n, sizeof(*d->mig_devices)) : NULL;
                d->n_mig_devices = 0;
                if (n && !d->mig_devices)
                        return oom(c);
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "%s[%zu]", base, i) < 0)
                        return oom(c);
                yaml_node_t *item = ynode(c, v->data.sequence.items.start[i]);
                if (!item)
                        return perr(c, v, ip, "", "missing item");
                if (profiles) {
                        d->n_mig_profiles++;
                        r = parse_mig_profile(c, item, ip, &d->mig_profiles[i]);
                } else {
                        d->n_mig_devices++;
                        r = parse_mig_device(c, item, ip, &d->mig_devices[i]);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_mig_mode(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, unsigned *out)
{
        bool b;
        int r = get_bool(c, v, prefix, key, &b);
        if (r < 0)
                return r;
        *out = b ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
        return 0;
}

static int mig_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        int r;
        if (KEY_IS(key, "mode") || KEY_IS(key, "mode_current")) {
                r = parse_mig_mode(c, v, prefix, key, &d->mig_mode_current);
                if (r >= 0 && KEY_IS(key, "mode"))
                        d->mig_mode_pending = d->mig_mode_current;
                return r;
        }
        if (KEY_IS(key, "pending_mode") || KEY_IS(key, "mode_pending"))
                return parse_mig_mode(c, v, prefix, key, &d->mig_mode_pending);
        if (KEY_IS(key, "profiles") || KEY_IS(key, "supported_profiles"))
                return parse_mig_list(c, v, prefix, key, d, true);
        if (KEY_IS(key, "devices") || KEY_IS(key, "instances")) {
                if (is_null(v)) {
                        for (size_t i = 0; i < d->n_mig_devices; i++)
                                mig_device_clear(&d->mig_devices[i]);
                        free(d->mig_devices);
                        d->mig_devices = NULL;
                        d->n_mig_devices = 0;
                        return 0;
                }
                return parse_mig_list(c, v, prefix, key, d, false);
        }
        return unknown_key(c, v, prefix, key);
}

static int fabric_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "state")) {
                static const char *const names[] = { "not_supported", "not_started", "in_progress", "completed" };
                const char *s = scalar(v);
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
                return perr(c, v, prefix, key, "expected not_supported, not_started, in_progress or completed");
        }
        if (KEY_IS(key, "status")) {
                const char *s = scalar(v);
                if (!s || gv_mock_parse_return_name(s, &d->fabric_status) < 0)
                        return perr(c, v, prefix, key, "expected an NVML return name or number");
                return 0;
        }
        if (KEY_IS(key, "clique_id"))
                return get_uint(c, v, prefix, key, UINT_MAX, &d->fabric_clique_id);
        if (KEY_IS(key, "cluster_uuid")) {
                const char *s = scalar(v);
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
                        return perr(c, v, prefix, key, "expected a UUID like 00000000-0000-0000-0000-000000000001");
                memcpy(d->fabric_cluster_uuid, u, 16);
                return 0;
        }
        return unknown_key(c, v, prefix, key);
}

static int nvlink_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "links") || KEY_IS(key, "links_per_gpu"))
                return get_uint(c, v, prefix, key, NVML_NVLINK_MAX_LINKS, &d->nvlink_count);
        if (KEY_IS(key, "active"))
                return get_bool(c, v, prefix, key, &d->nvlink_active);
        return unknown_key(c, v, prefix, key);
}

static int ecc_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "current") || KEY_IS(key, "mode_current"))
                return get_bool(c, v, prefix, key, &d->ecc_current);
        if (KEY_IS(key, "pending") || KEY_IS(key, "mode_pending"))
                return get_bool(c, v, prefix, key, &d->ecc_pending);
        return unknown_key(c, v, prefix, key);
}

static int display_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "mode"))
                return get_bool(c, v, prefix, key, &d->display_mode);
        if (KEY_IS(key, "active"))
                return get_bool(c, v, prefix, key, &d->display_active);
        return unknown_key(c, v, prefix, key);
}

static int thermal_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "temperature_gpu_c")) {
                if (na_field(d, v, GV_MOCK_FIELD_TEMPERATURE, true))
                        return 0;
                return get_uint(c, v, prefix, key, 200, &d->temperature_c);
        }
        return unknown_key(c, v, prefix, key);
}

static int fan_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
        if (KEY_IS(key, "speed_percent"))
                return na_field(d, v, GV_MOCK_FIELD_FAN, true) ? 0 : get_uint(c, v, prefix, key, 100, &d->fan_speed);
        return unknown_key(c, v, prefix, key);
}

/* A nested mapping that may also be N/A as a whole. */
static int sub_map(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, gv_mock_device_t *d, uint32_t bit,
                   map_cb cb)
{
        if (bit && is_na(v)) {
                set_supported(d, bit, false);
                return 0;
        }
        int r = want_map(c, v, prefix, key);
        if (r < 0)
                return r;
        if (bit)
                set_supported(d, bit, true);
        _cleanup_free_ char *sub = join(prefix, key);
        if (!sub)
                return oom(c);
        return for_each_pair(c, v, sub, cb, d);
}

static int parse_processes(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        if (na_field(d, v, GV_MOCK_FIELD_PROCESSES, false))
                return 0;
        int r = want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        set_supported(d, GV_MOCK_FIELD_PROCESSES, true);
        size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
        if (n > 256)
                return perr(c, v, prefix, key, "at most 256 processes");
        for (size_t i = 0; i < d->n_processes; i++)
                free(d->processes[i].name);
        free(d->processes);
        d->n_processes = 0;
        d->processes = n ? calloc(n, sizeof(*d->processes)) : NULL;
        if (n && !d->processes)
                return oom(c);
        _cleanup_free_ char *base = join(prefix, key);
        if (!base)
                return oom(c);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "%s[%zu]", base, i) < 0)
                        return oom(c);
                yaml_node_t *item = ynode(c, v->data.sequence.items.start[i]);
                gv_mock_process_t *pr = &d->processes[d->n_processes++];
                pr->gi_id = pr->ci_id = 0xFFFFFFFFu;
                r = want_map(c, item, ip, "");
                if (r < 0)
                        return r;
                bool have_pid = false;
                for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
                        yaml_node_t *kn = ynode(c, p->key), *x = ynode(c, p->value);
                        const char *k = scalar(kn);
                        unsigned long long b;
                        if (!k || !x)
                                return perr(c, kn, ip, "", "bad key");
                        if (KEY_IS(k, "pid"))
                                r = get_uint(c, x, ip, k, INT_MAX, &pr->pid), have_pid = true;
                        else if (KEY_IS(k, "name") || KEY_IS(k, "process_name"))
                                r = get_str(c, x, ip, k, &pr->name);
                        else if (KEY_IS(k, "used_memory_mib"))
                                r = get_ull(c, x, ip, k, 1ULL << 30, &pr->used_memory_mib);
                        else if (KEY_IS(k, "used_memory_bytes") || KEY_IS(k, "used_gpu_memory_bytes")) {
                                r = get_ull(c, x, ip, k, 1ULL << 50, &b);
                                pr->used_memory_mib = b / (1024ULL * 1024);
                        } else if (KEY_IS(k, "gi_id"))
                                r = get_uint(c, x, ip, k, GV_MOCK_MAX_INSTANCE_ID, &pr->gi_id);
                        else if (KEY_IS(k, "ci_id"))
                                r = get_uint(c, x, ip, k, GV_MOCK_MAX_INSTANCE_ID, &pr->ci_id);
                        else
                                r = unknown_key(c, x, ip, k);
                        if (r < 0)
                                return r;
                }
                if (!have_pid)
                        return perr(c, item, ip, "pid", "required field missing");
        }
        return 0;
}

static int parse_unsupported(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d)
{
        int r = want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                yaml_node_t *x = ynode(c, *it);
                const char *s = scalar(x);
                bool found = false;
                for (size_t i = 0; s && i < GV_ARRAY_SIZE(field_names); i++)
                        if (strcmp(s, field_names[i].name) == 0) {
                                d->unsupported |= field_names[i].bit;
                                found = true;
                        }
                if (!found)
                        return perr(c, x ? x : v, prefix, key, "unknown field name %s%s%s (see docs/mock-nvml.md)",
                                    s ? "\"" : "", s ? s : "", s ? "\"" : "");
        }
        return 0;
}

/* One key of a GPU mapping (`gpu`, `device_defaults`, `devices[i]`). */
/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): one branch per device key of the profile schema; to be split in the architecture refactor */
static int device_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_device_t *d = data;
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
                        if (na_field(d, v, strs[i].bit, true))
                                return 0;
                        return get_str(c, v, prefix, key, (char **) ((char *) d + strs[i].off));
                }
        if (KEY_IS(key, "name")) {
                r = get_str(c, v, prefix, key, &d->name);
                if (r >= 0 && strlen(d->name) >= NVML_DEVICE_NAME_BUFFER_SIZE)
                        return perr(c, v, prefix, key, "longer than %d characters", NVML_DEVICE_NAME_BUFFER_SIZE - 1);
                return r;
        }
        if (KEY_IS(key, "uuid")) {
                r = get_str(c, v, prefix, key, &d->uuid);
                if (r >= 0 && !valid_uuid(d->uuid, "GPU-"))
                        return perr(c, v, prefix, key, "expected GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
                return r;
        }
        if (KEY_IS(key, "index"))
                return 0; /* handled by the caller */
        if (KEY_IS(key, "architecture")) {
                const char *s = scalar(v);
                for (size_t i = 0; s && i < GV_ARRAY_SIZE(arch_names); i++)
                        if (strcasecmp(s, arch_names[i].name) == 0) {
                                d->architecture = arch_names[i].value;
                                return get_str(c, v, prefix, key, &d->architecture_name);
                        }
                return perr(c, v, prefix, key, "expected an architecture (ampere, hopper, ada, turing, blackwell, ...)");
        }
        if (KEY_IS(key, "brand")) {
                const char *s = scalar(v);
                for (size_t i = 0; s && i < GV_ARRAY_SIZE(brand_names); i++)
                        if (strcasecmp(s, brand_names[i].name) == 0) {
                                d->brand = brand_names[i].value;
                                return 0;
                        }
                return perr(c, v, prefix, key, "expected a brand (nvidia, tesla, geforce, quadro, ...)");
        }
        if (KEY_IS(key, "compute_capability"))
                return parse_cc(c, v, prefix, key, d);
        if (KEY_IS(key, "multiprocessors"))
                return get_uint(c, v, prefix, key, 10000, &d->multiprocessor_count);
        if (KEY_IS(key, "memory_mib"))
                return get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_total_mib);
        if (KEY_IS(key, "memory_reserved_mib"))
                return get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_reserved_mib);
        if (KEY_IS(key, "memory_used_mib"))
                return get_ull(c, v, prefix, key, 1ULL << 30, &d->memory_used_mib);
        if (KEY_IS(key, "memory"))
                return sub_map(c, prefix, key, v, d, 0, memory_cb);
        if (KEY_IS(key, "pci_device_id") || KEY_IS(key, "pci_subsystem_id") || KEY_IS(key, "pci_bus_id"))
                return pci_cb(c, prefix, key, v, d);
        if (KEY_IS(key, "pci"))
                return sub_map(c, prefix, key, v, d, 0, pci_cb);
        if (KEY_IS(key, "minor_number")) {
                if (na_field(d, v, GV_MOCK_FIELD_MINOR_NUMBER, false))
                        return 0;
                return get_uint(c, v, prefix, key, 255, &d->minor_number);
        }
        if (KEY_IS(key, "temperature_c")) {
                if (na_field(d, v, GV_MOCK_FIELD_TEMPERATURE, true))
                        return 0;
                return get_uint(c, v, prefix, key, 200, &d->temperature_c);
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
                return na_field(d, v, GV_MOCK_FIELD_FAN, true) ? 0 : get_uint(c, v, prefix, key, 100, &d->fan_speed);
        if (KEY_IS(key, "fan"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_FAN, fan_cb);
        if (KEY_IS(key, "persistence_mode")) {
                if (na_field(d, v, GV_MOCK_FIELD_PERSISTENCE, true))
                        return 0;
                return get_bool(c, v, prefix, key, &d->persistence_mode);
        }
        if (KEY_IS(key, "compute_mode")) {
                const char *s = scalar(v);
                if (na_field(d, v, GV_MOCK_FIELD_COMPUTE_MODE, false))
                        return 0;
                for (unsigned i = 0; s && i < GV_ARRAY_SIZE(compute_mode_names); i++)
                        if (strcasecmp(s, compute_mode_names[i]) == 0) {
                                d->compute_mode = i;
                                set_supported(d, GV_MOCK_FIELD_COMPUTE_MODE, true);
                                return 0;
                        }
                return perr(c, v, prefix, key, "expected default, exclusive_thread, prohibited or exclusive_process");
        }
        if (KEY_IS(key, "ecc")) {
                if (na_field(d, v, GV_MOCK_FIELD_ECC, true))
                        return 0;
                if (v->type == YAML_SCALAR_NODE) {
                        r = get_bool(c, v, prefix, key, &d->ecc_current);
                        d->ecc_pending = d->ecc_current;
                        return r;
                }
                return sub_map(c, prefix, key, v, d, 0, ecc_cb);
        }
        if (KEY_IS(key, "pstate") || KEY_IS(key, "performance_state")) {
                const char *s = scalar(v);
                unsigned p;
                int n = -1;
                if (na_field(d, v, GV_MOCK_FIELD_PSTATE, false))
                        return 0;
                if (!s || sscanf(s, "P%u%n", &p, &n) != 1 || n < 0 || s[n] || p > 15)
                        return perr(c, v, prefix, key, "expected P0..P15");
                set_supported(d, GV_MOCK_FIELD_PSTATE, true);
                d->pstate = p;
                return 0;
        }
        if (KEY_IS(key, "display_mode") || KEY_IS(key, "display_active")) {
                if (na_field(d, v, GV_MOCK_FIELD_DISPLAY, false))
                        return 0;
                return get_bool(c, v, prefix, key, KEY_IS(key, "display_mode") ? &d->display_mode : &d->display_active);
        }
        if (KEY_IS(key, "display"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_DISPLAY, display_cb);
        if (KEY_IS(key, "nvlink"))
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_NVLINK, nvlink_cb);
        if (KEY_IS(key, "fabric")) {
                if (is_na(v)) {
                        d->fabric_state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
                        set_supported(d, GV_MOCK_FIELD_FABRIC, false);
                        return 0;
                }
                if (d->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                        d->fabric_state = NVML_GPU_FABRIC_STATE_COMPLETED;
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_FABRIC, fabric_cb);
        }
        if (KEY_IS(key, "mig")) {
                if (is_na(v)) {
                        d->mig_capable = false;
                        set_supported(d, GV_MOCK_FIELD_MIG, false);
                        return 0;
                }
                d->mig_capable = true;
                return sub_map(c, prefix, key, v, d, GV_MOCK_FIELD_MIG, mig_cb);
        }
        if (KEY_IS(key, "processes"))
                return parse_processes(c, v, prefix, key, d);
        if (KEY_IS(key, "unsupported"))
                return parse_unsupported(c, v, prefix, key, d);
        return unknown_key(c, v, prefix, key);
}

static void device_defaults(gv_mock_device_t *d)
{
        memset(d, 0, sizeof(*d));
        d->minor_number = UNSET;
        d->brand = NVML_BRAND_NVIDIA;
        d->architecture = NVML_DEVICE_ARCH_UNKNOWN;
        d->compute_mode = NVML_COMPUTEMODE_DEFAULT;
        d->persistence_mode = true;
        d->ecc_current = d->ecc_pending = true;
        d->fabric_status = NVML_SUCCESS;
        d->nvlink_active = true;
}

/* ------------------------------------------------------------------ */
/* top level                                                           */

static int parse_cuda_version(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, int *out)
{
        const char *s = scalar(v);
        unsigned a, b = 0;
        int n = -1;
        if (s && sscanf(s, "%u.%u%n", &a, &b, &n) == 2 && n > 0 && !s[n] && a < 100 && b < 100) {
                *out = (int) (a * 1000 + b * 10);
                return 0;
        }
        unsigned x;
        int r = get_uint(c, v, prefix, key, 99990, &x);
        if (r < 0) {
                gv_error_free(c->err);
                return perr(c, v, prefix, key, "expected a CUDA version like \"12.4\" or 12040");
        }
        *out = x < 100 ? (int) (x * 1000) : (int) x;
        return 0;
}

typedef struct top {
        gv_mock_profile_t *p;
        yaml_node_t *gpu;      /* `gpu` or `device_defaults` */
        yaml_node_t *devices;  /* `devices` */
        yaml_node_t *root;
        yaml_node_t *driver;   /* `driver` or `system` */
        yaml_node_t *nvlink;   /* nvml-mock top-level nvlink */
        unsigned gpu_count;    /* 0 = not given */
        yaml_node_t *gpu_count_node;
} top_t;

static int driver_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_profile_t *p = data;
        if (KEY_IS(key, "version") || KEY_IS(key, "driver_version")) {
                int r = get_str(c, v, prefix, key, &p->driver_version);
                if (r >= 0 && strlen(p->driver_version) >= 32)
                        return perr(c, v, prefix, key, "longer than 31 characters");
                return r;
        }
        if (KEY_IS(key, "nvml_version"))
                return get_str(c, v, prefix, key, &p->nvml_version);
        if (KEY_IS(key, "cuda_version"))
                return parse_cuda_version(c, v, prefix, key, &p->cuda_driver_version);
        if (KEY_IS(key, "cuda_version_major") || KEY_IS(key, "cuda_version_minor"))
                return 0; /* redundant with cuda_version */
        return unknown_key(c, v, prefix, key);
}

static int faults_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_faults_t *f = data;
        int r;
        if (KEY_IS(key, "init_error")) {
                const char *s = scalar(v);
                if (!s || gv_mock_parse_return_name(s, &f->init_error) < 0)
                        return perr(c, v, prefix, key,
                                    "expected none, driver-not-loaded, no-permission, lib-rm-version-mismatch or an NVML return number");
                return 0;
        }
        if (KEY_IS(key, "lost_gpus")) {
                if ((r = want_seq(c, v, prefix, key)) < 0)
                        return r;
                for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                        unsigned g;
                        if ((r = get_uint(c, ynode(c, *it), prefix, key, GV_MOCK_MAX_GPUS - 1, &g)) < 0)
                                return r;
                        f->lost_gpus |= 1ULL << g;
                }
                return 0;
        }
        if (KEY_IS(key, "fabric_in_progress"))
                return get_bool(c, v, prefix, key, &f->fabric_in_progress);
        if (KEY_IS(key, "xid_control_file"))
                return get_str(c, v, prefix, key, &f->xid_control_file);
        if (KEY_IS(key, "xids")) {
                if ((r = want_seq(c, v, prefix, key)) < 0)
                        return r;
                size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
                if (n > 1024)
                        return perr(c, v, prefix, key, "at most 1024 scheduled Xids");
                free(f->xids);
                f->n_xids = 0;
                f->xids = n ? calloc(n, sizeof(*f->xids)) : NULL;
                if (n && !f->xids)
                        return oom(c);
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *ip = NULL;
                        if (asprintf(&ip, "%s%s%s[%zu]", prefix, *prefix ? "." : "", key, i) < 0)
                                return oom(c);
                        yaml_node_t *item = ynode(c, v->data.sequence.items.start[i]);
                        if ((r = want_map(c, item, ip, "")) < 0)
                                return r;
                        gv_mock_xid_t *x = &f->xids[f->n_xids++];
                        yaml_node_t *g = map_get(c, item, "gpu"), *xid = map_get(c, item, "xid"),
                                    *after = map_get(c, item, "after_ms");
                        if (!g)
                                return perr(c, item, ip, "gpu", "required field missing");
                        if (!xid)
                                return perr(c, item, ip, "xid", "required field missing");
                        if ((r = get_uint(c, g, ip, "gpu", GV_MOCK_MAX_GPUS - 1, &x->gpu)) < 0 ||
                            (r = get_ull(c, xid, ip, "xid", UINT_MAX, &x->xid)) < 0 ||
                            (after && (r = get_uint(c, after, ip, "after_ms", 86400000u, &x->after_ms)) < 0))
                                return r;
                        for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
                                const char *k = scalar(ynode(c, p->key));
                                if (!k || !(KEY_IS(k, "gpu") || KEY_IS(k, "xid") || KEY_IS(k, "after_ms")))
                                        return perr(c, ynode(c, p->key), ip, k ? k : "", "unknown field");
                        }
                }
                return 0;
        }
        return unknown_key(c, v, prefix, key);
}

static int top_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        top_t *t = data;
        gv_mock_profile_t *p = t->p;
        if (KEY_IS(key, "schema") || KEY_IS(key, "version") || KEY_IS(key, "description"))
                return 0;
        if (KEY_IS(key, "name"))
                return get_str(c, v, prefix, key, &p->name);
        if (KEY_IS(key, "node_name"))
                return get_str(c, v, prefix, key, &p->node_name);
        if (KEY_IS(key, "driver") || KEY_IS(key, "system")) {
                t->driver = v;
                int r = want_map(c, v, prefix, key);
                return r < 0 ? r : for_each_pair(c, v, key, driver_cb, p);
        }
        if (KEY_IS(key, "gpu_count")) {
                t->gpu_count_node = v;
                /* Decimal digits only, so that -1 and 99999999999999999999 get the same plain answer. */
                const char *s = scalar(v);
                size_t len = s ? strlen(s) : 0;
                unsigned long n = 0;
                bool ok = len > 0 && len <= 3 && strspn(s, "0123456789") == len &&
                          v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (ok)
                        n = strtoul(s, NULL, 10);
                if (!ok || n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS) {
                        if (s && len <= 32)
                                return perr(c, v, prefix, key, "%s: expected %u to %u", s, GV_MOCK_MIN_GPUS,
                                            GV_MOCK_MAX_GPUS);
                        return perr(c, v, prefix, key, "expected %u to %u", GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
                }
                t->gpu_count = (unsigned) n;
                return 0;
        }
        if (KEY_IS(key, "gpu") || KEY_IS(key, "device_defaults")) {
                t->gpu = v;
                return want_map(c, v, prefix, key);
        }
        if (KEY_IS(key, "devices")) {
                t->devices = v;
                return want_seq(c, v, prefix, key);
        }
        if (KEY_IS(key, "faults")) {
                int r = want_map(c, v, prefix, key);
                return r < 0 ? r : for_each_pair(c, v, key, faults_cb, &p->faults);
        }
        if (KEY_IS(key, "nvlink") && c->lenient) {
                t->nvlink = v;
                return 0;
        }
        return unknown_key(c, v, prefix, key);
}

static int check_required(pctx_t *c, top_t *t)
{
        gv_mock_profile_t *p = t->p;
        const char *drv = c->lenient ? "system" : "driver";
        if (!t->driver)
                return perr(c, t->root, drv, "", "required field missing");
        if (!p->driver_version)
                return perr(c, t->driver, drv, c->lenient ? "driver_version" : "version", "required field missing");
        if (!p->cuda_driver_version) {
                if (c->lenient) {
                        yaml_node_t *ma = map_get(c, t->driver, "cuda_version_major");
                        yaml_node_t *mi = map_get(c, t->driver, "cuda_version_minor");
                        unsigned a = 0, b = 0;
                        if (ma && mi && get_uint(c, ma, drv, "cuda_version_major", 99, &a) >= 0 &&
                            get_uint(c, mi, drv, "cuda_version_minor", 99, &b) >= 0) {
                                p->cuda_driver_version = (int) (a * 1000 + b * 10);
                                return 0;
                        }
                        gv_error_free(c->err);
                }
                return perr(c, t->driver, drv, "cuda_version", "required field missing");
        }
        return 0;
}

/*
 * GPU @i's serial when the profile gives one serial for every GPU (@base, from
 * `gpu:`): a numeric base counts up (1650000000000, ...001, ...002), any other
 * base gets "-<i>" appended; GPU 0 keeps the base.  Deterministic and distinct
 * per index.  Replaces d->serial; leaves it alone when @base is NULL.
 * Returns 0 or -ENOMEM.
 */
static int derive_serial(gv_mock_device_t *d, const char *base, unsigned i)
{
        if (!base || i == 0)
                return 0;
        size_t len = strlen(base);
        char *s = NULL;
        int r;
        errno = 0;
        unsigned long long v = len > 0 && len <= 19 && strspn(base, "0123456789") == len ? strtoull(base, NULL, 10)
                                                                                           : ULLONG_MAX;
        if (v <= ULLONG_MAX - GV_MOCK_MAX_GPUS)
                r = asprintf(&s, "%0*llu", (int) len, v + i);
        else
                r = asprintf(&s, "%s-%u", base, i);
        if (r < 0)
                return -ENOMEM;
        replace_str(&d->serial, s);
        return 0;
}

static int parse_root(pctx_t *c, gv_mock_profile_t *p)
{
        yaml_node_t *root = yaml_document_get_root_node(c->doc);
        if (!root)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s:1: (root): empty document", c->source);
        if (root->type != YAML_MAPPING_NODE)
                return perr(c, root, "(root)", "", "expected a mapping");
        c->lenient = map_get(c, root, "system") || map_get(c, root, "device_defaults");
        top_t t = { .p = p, .root = root };
        int r = for_each_pair(c, root, "", top_cb, &t);
        if (r < 0)
                return r;
        r = check_required(c, &t);
        if (r < 0)
                return r;
        const char *gname = c->lenient ? "device_defaults" : "gpu";
        if (!t.gpu)
                return perr(c, root, gname, "", "required field missing");

        gv_mock_device_t *tmpl = calloc(1, sizeof(*tmpl));
        if (!tmpl)
                return oom(c);
        p->device_template = tmpl;
        device_defaults(tmpl);
        if (t.nvlink) {
                yaml_node_t *l = map_get(c, t.nvlink, "links_per_gpu");
                if (l && (r = get_uint(c, l, "nvlink", "links_per_gpu", NVML_NVLINK_MAX_LINKS, &tmpl->nvlink_count)) < 0)
                        return r;
        }
        r = for_each_pair(c, t.gpu, gname, device_cb, tmpl);
        if (r < 0)
                return r;
        if (!tmpl->name)
                return perr(c, t.gpu, gname, "name", "required field missing");
        if (!tmpl->memory_total_mib)
                return perr(c, t.gpu, gname, c->lenient ? "memory.total_bytes" : "memory_mib", "required field missing");
        if (tmpl->uuid || tmpl->pci_bus_id)
                return perr(c, t.gpu, gname, tmpl->uuid ? "uuid" : "pci_bus_id",
                            "set per GPU under devices, not for every GPU");
        if (!map_get(c, t.gpu, "mig") && !tmpl->n_mig_profiles) {
                tmpl->mig_capable = false;
                tmpl->unsupported |= GV_MOCK_FIELD_MIG;
        }
        if (!map_get(c, t.gpu, "fabric") && tmpl->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                tmpl->unsupported |= GV_MOCK_FIELD_FABRIC;
        if (!map_get(c, t.gpu, "nvlink") && !tmpl->nvlink_count)
                tmpl->unsupported |= GV_MOCK_FIELD_NVLINK;

        /* device count and per-device overrides */
        size_t n_over = t.devices ? (size_t) (t.devices->data.sequence.items.top - t.devices->data.sequence.items.start)
                                  : 0;
        unsigned idx[GV_MOCK_MAX_GPUS];
        unsigned max_index = 0;
        if (n_over > GV_MOCK_MAX_GPUS)
                return perr(c, t.devices, "devices", "", "more than %u entries", GV_MOCK_MAX_GPUS);
        uint64_t seen = 0;
        for (size_t i = 0; i < n_over; i++) {
                yaml_node_t *item = ynode(c, t.devices->data.sequence.items.start[i]);
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "devices[%zu]", i) < 0)
                        return oom(c);
                if ((r = want_map(c, item, ip, "")) < 0)
                        return r;
                yaml_node_t *in = map_get(c, item, "index");
                idx[i] = (unsigned) i;
                if (in && (r = get_uint(c, in, ip, "index", GV_MOCK_MAX_GPUS - 1, &idx[i])) < 0)
                        return r;
                if (seen & (1ULL << idx[i]))
                        return perr(c, in ? in : item, ip, "index", "GPU %u is listed twice", idx[i]);
                seen |= 1ULL << idx[i];
                if (idx[i] + 1 > max_index)
                        max_index = idx[i] + 1;
        }
        unsigned count = t.gpu_count ? t.gpu_count : (n_over ? max_index : 8);
        if (t.gpu_count && max_index > t.gpu_count)
                return perr(c, t.gpu_count_node, "gpu_count", "", "%u, but devices lists GPU %u", t.gpu_count,
                            max_index - 1);
        p->devices = calloc(count, sizeof(*p->devices));
        if (!p->devices)
                return oom(c);
        for (unsigned i = 0; i < count; i++) {
                if (device_copy(&p->devices[i], tmpl) < 0)
                        return oom(c);
                p->device_count = i + 1;
                p->devices[i].index = i;
                if (derive_serial(&p->devices[i], tmpl->serial, i) < 0) /* devices[] may set its own */
                        return oom(c);
        }
        for (size_t i = 0; i < n_over; i++) {
                yaml_node_t *item = ynode(c, t.devices->data.sequence.items.start[i]);
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "devices[%zu]", i) < 0)
                        return oom(c);
                if ((r = for_each_pair(c, item, ip, device_cb, &p->devices[idx[i]])) < 0)
                        return r;
        }
        return 0;
}

/* A key of a mapping, for sorting: its text and the node that holds it. */
typedef struct keyref {
        const char *text;
        const yaml_node_t *node;
} keyref_t;

static int keyref_cmp(const void *a, const void *b)
{
        const keyref_t *x = a, *y = b;
        int c = strcmp(x->text, y->text);
        if (c)
                return c;
        size_t i = x->node->start_mark.index, j = y->node->start_mark.index;
        return i < j ? -1 : i > j ? 1 : 0;
}

/*
 * Refuses a mapping that names a key twice (YAML and JSON alike: libyaml
 * keeps both pairs, and the parsers would take the last one silently).
 * Every mapping of the document is checked once, sorted, so a large mapping
 * costs n log n.  Error: "<source>:<line>: <key>: duplicate key (first on
 * line N)" naming the second occurrence; -EINVAL, GV_REASON_CONFIG.
 */
static int check_duplicate_keys(const char *source, yaml_document_t *doc, gv_error_t **err)
{
        for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++) {
                if (n->type != YAML_MAPPING_NODE)
                        continue;
                size_t count = (size_t) (n->data.mapping.pairs.top - n->data.mapping.pairs.start);
                if (count < 2)
                        continue;
                _cleanup_free_ keyref_t *keys = calloc(count, sizeof(*keys));
                if (!keys)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                size_t k = 0;
                for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
                        const yaml_node_t *kn = yaml_document_get_node(doc, p->key);
                        if (kn && kn->type == YAML_SCALAR_NODE)
                                keys[k++] = (keyref_t){ (const char *) kn->data.scalar.value, kn };
                }
                if (k > 1)
                        qsort(keys, k, sizeof(*keys), keyref_cmp);
                for (size_t i = 1; i < k; i++)
                        if (strcmp(keys[i - 1].text, keys[i].text) == 0) {
                                _cleanup_free_ char *shown = NULL;
                                size_t len = strlen(keys[i].text);
                                /* keys are shown as given; control characters as '?' */
                                shown = strndup(keys[i].text, len > 64 ? 64 : len);
                                if (!shown)
                                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                                for (char *q = shown; *q; q++)
                                        if ((unsigned char) *q < 0x20 || *q == 0x7f)
                                                *q = '?';
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s:%lu: %s%s: duplicate key (first on line %lu); give each key once",
                                                    source, yline(keys[i].node), shown, len > 64 ? "..." : "",
                                                    yline(keys[i - 1].node));
                        }
        }
        return 0;
}

static int load_text(const char *source, const char *text, size_t len, gv_mock_profile_t **out, gv_error_t **err)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser))
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                int r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s:%lu: (yaml): %s%s%s", source,
                                     (unsigned long) (parser.problem_mark.line + 1),
                                     parser.problem ? parser.problem : "syntax error",
                                     parser.context ? " " : "", parser.context ? parser.context : "");
                yaml_parser_delete(&parser);
                return r;
        }
        yaml_parser_delete(&parser);
        int dr = check_duplicate_keys(source, &doc, err);
        if (dr < 0) {
                yaml_document_delete(&doc);
                return dr;
        }

        _cleanup_profile_ gv_mock_profile_t *p = calloc(1, sizeof(*p));
        if (!p) {
                yaml_document_delete(&doc);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        p->source = strdup(source);
        pctx_t c = { .source = source, .doc = &doc, .err = err };
        int r = p->source ? parse_root(&c, p) : oom(&c);
        yaml_document_delete(&doc);
        if (r < 0)
                return r;
        *out = TAKE_PTR(p);
        return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);
        return a > b && strcmp(s + a - b, suffix) == 0;
}

bool gv_mock_profile_is_path(const char *name)
{
        return name && (strchr(name, '/') || ends_with(name, ".yaml") || ends_with(name, ".yml") ||
                        ends_with(name, ".json"));
}

int gv_mock_profile_load_memory(const char *source, const char *text, size_t len, gv_mock_profile_t **out,
                                gv_error_t **err)
{
        if (!text || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_mock_profile_load_memory: NULL argument");
        return load_text(source ? source : "(memory)", text, len, out, err);
}

int gv_mock_profile_load_file(const char *path, gv_mock_profile_t **out, gv_error_t **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (!path || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_mock_profile_load_file: NULL argument");
        int r = gv_read_file_at(AT_FDCWD, path, false, MAX_PROFILE_BYTES, &text, &len, err);
        if (r < 0)
                return gv_error_prefix(err, "mock NVML profile");
        return load_text(path, text, len, out, err);
}

/* ------------------------------------------------------------------ */
/* built-ins                                                           */

static const char *resolve_alias(const char *name)
{
        if (strcmp(name, "a100") == 0)
                return "a100-sxm4-40gb";
        if (strcmp(name, "h100") == 0)
                return "h100-sxm5-80gb";
        return name;
}

const char *const *gv_mock_profile_builtin_names(void)
{
        return gv_mock_builtin_profile_names;
}

const char *gv_mock_profile_builtin_yaml(const char *name)
{
        if (!name)
                return NULL;
        name = resolve_alias(name);
        for (size_t i = 0; gv_mock_builtin_profile_names[i]; i++)
                if (strcmp(gv_mock_builtin_profile_names[i], name) == 0)
                        return gv_mock_builtin_profile_texts[i];
        return NULL;
}

int gv_mock_profile_load_builtin(const char *name, gv_mock_profile_t **out, gv_error_t **err)
{
        const char *text = gv_mock_profile_builtin_yaml(name);
        if (!text) {
                _cleanup_free_ char *known = NULL;
                size_t sz = 0;
                FILE *f = open_memstream(&known, &sz);
                if (!f)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                for (size_t i = 0; gv_mock_builtin_profile_names[i]; i++)
                        fprintf(f, "%s%s", i ? ", " : "", gv_mock_builtin_profile_names[i]);
                if (fclose(f) != 0) { /* out of memory: name no half list */
                        free(known);
                        known = NULL;
                }
                return gv_error_set(err, ENOENT, GV_REASON_CONFIG, "unknown GPU profile \"%s\" (known: %s, a100, h100)",
                                    name ? name : "(null)", known ? known : "");
        }
        _cleanup_free_ char *source = NULL;
        if (asprintf(&source, "builtin:%s", resolve_alias(name)) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        return load_text(source, text, strlen(text), out, err);
}

/* ------------------------------------------------------------------ */
/* editing and finalizing                                              */

int gv_mock_profile_set_gpu_count(gv_mock_profile_t *p, unsigned n, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "set_gpu_count: NULL profile");
        if (n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS)
                return gv_error_set(err, ERANGE, GV_REASON_CONFIG, "gpu count %u is out of range (%u..%u)", n,
                                    GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
        if (n == p->device_count)
                return 0;
        if (n < p->device_count) {
                for (unsigned i = n; i < p->device_count; i++)
                        device_clear(&p->devices[i]);
                p->device_count = n;
                p->finalized = false;
                return 0;
        }
        gv_mock_device_t *nd = realloc(p->devices, n * sizeof(*nd));
        if (!nd)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        p->devices = nd;
        for (unsigned i = p->device_count; i < n; i++) {
                if (device_copy(&nd[i], p->device_template) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                nd[i].index = i;
                p->device_count = i + 1;
                if (derive_serial(&nd[i], p->device_template->serial, i) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        p->finalized = false;
        return 0;
}

int gv_mock_profile_set_node_name(gv_mock_profile_t *p, const char *node_name, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "set_node_name: NULL profile");
        for (const char *q = node_name; q && *q; q++)
                if ((unsigned char) *q < 0x20 || *q == 0x7f)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "node name: contains a control character (0x%02x at offset %zu)",
                                            (unsigned) (unsigned char) *q, (size_t) (q - node_name));
        char *s = NULL;
        if (node_name && *node_name && !(s = strdup(node_name)))
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        replace_str(&p->node_name, s);
        p->finalized = false;
        return 0;
}

/* FNV-1a, 64 bit, over a sequence of NUL-separated parts. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
        const unsigned char *b = data;
        for (size_t i = 0; i < len; i++) {
                /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): false positive: every caller hashes an initialised object of len bytes */
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

static uint64_t mix64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        x ^= x >> 33;
        return x;
}

static char *derive_uuid(const char *prefix, const char *seed_a, unsigned x, unsigned y)
{
        uint64_t h = fnv1a(0xcbf29ce484222325ULL, seed_a, strlen(seed_a) + 1);
        unsigned v[2] = { x, y };
        h = fnv1a(h, v, sizeof(v));
        uint64_t a = mix64(h), b = mix64(h ^ 0x9e3779b97f4a7c15ULL);
        char *s = NULL;
        if (asprintf(&s, "%s%08x-%04x-%04x-%04x-%012llx", prefix, (unsigned) (a >> 32), (unsigned) (a >> 16) & 0xffff,
                     (unsigned) a & 0xffff, (unsigned) (b >> 48), (unsigned long long) (b & 0xffffffffffffULL)) < 0)
                return NULL;
        return s;
}

/* DGX A100 / HGX bus numbers for GPUs 0..7; further groups of eight use the next PCI domain. */
static const unsigned default_bus[8] = { 0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD };

static const gv_mock_mig_profile_t *find_mig_profile(const gv_mock_device_t *d, const char *name)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (strcmp(d->mig_profiles[i].name, name) == 0)
                        return &d->mig_profiles[i];
        return NULL;
}

static unsigned max_slices(const gv_mock_device_t *d)
{
        unsigned m = 0;
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].slice_count > m)
                        m = d->mig_profiles[i].slice_count;
        return m;
}

/* NOLINTNEXTLINE(readability-function-cognitive-complexity): every MIG device's ids, profile and memory checked in one pass; to be split in the architecture refactor */
static int finalize_mig(gv_mock_profile_t *p, gv_mock_device_t *d, gv_error_t **err)
{
        const char *src = p->source ? p->source : "(profile)";
        unsigned total = max_slices(d);
        unsigned used_slices = 0;
        uint64_t used_gi = 0;
        for (size_t i = 0; i < d->n_mig_devices; i++)
                if (d->mig_devices[i].gi_id != UNSET)
                        used_gi |= 1ULL << d->mig_devices[i].gi_id;
        for (size_t i = 0; i < d->n_mig_devices; i++) {
                gv_mock_mig_device_t *m = &d->mig_devices[i];
                const gv_mock_mig_profile_t *mp = find_mig_profile(d, m->profile);
                if (!mp)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].mig.devices[%zu].profile: unknown GPU instance profile \"%s\"",
                                            src, d->index, i, m->profile);
                /* does it join a GPU instance listed before? */
                const gv_mock_mig_device_t *owner = NULL;
                for (size_t j = 0; j < i && m->gi_id != UNSET; j++)
                        if (d->mig_devices[j].gi_id == m->gi_id) {
                                owner = &d->mig_devices[j];
                                break;
                        }
                if (owner) {
                        if (strcmp(owner->profile, m->profile) != 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].mig.devices[%zu].gi_id: GPU instance %u is a %s",
                                                    src, d->index, i, m->gi_id, owner->profile);
                        m->placement_start = owner->placement_start;
                } else {
                        if (m->gi_id == UNSET) {
                                unsigned g = 1;
                                while (g < GV_MOCK_MAX_INSTANCE_ID && (used_gi & (1ULL << g)))
                                        g++;
                                m->gi_id = g;
                                used_gi |= 1ULL << g;
                        }
                        if (m->placement_start == UNSET)
                                m->placement_start = used_slices;
                        used_slices += mp->slice_count;
                        if (used_slices > total)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].mig.devices: the layout needs %u slices, the GPU has %u",
                                                    src, d->index, used_slices, total);
                }
                if (m->ci_slice_count == 0)
                        m->ci_slice_count = mp->slice_count;
                if (m->ci_slice_count > mp->slice_count)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].mig.devices[%zu].ci_slices: %u is more than the %u of %s",
                                            src, d->index, i, m->ci_slice_count, mp->slice_count, mp->name);
                if (m->ci_id == UNSET) {
                        /* the next id after the GI's highest; past the bound, the lowest free one */
                        unsigned ci = 0;
                        uint64_t used_ci = 0;
                        for (size_t j = 0; j < i; j++)
                                if (d->mig_devices[j].gi_id == m->gi_id) {
                                        used_ci |= 1ULL << d->mig_devices[j].ci_id;
                                        if (d->mig_devices[j].ci_id >= ci)
                                                ci = d->mig_devices[j].ci_id + 1;
                                }
                        for (ci = ci > GV_MOCK_MAX_INSTANCE_ID ? 0 : ci; used_ci & (1ULL << ci); ci++)
                                ;
                        m->ci_id = ci;
                }
                for (size_t j = 0; j < i; j++)
                        if (d->mig_devices[j].gi_id == m->gi_id && d->mig_devices[j].ci_id == m->ci_id)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].mig.devices[%zu]: GPU instance %u compute instance %u is listed twice",
                                                    src, d->index, i, m->gi_id, m->ci_id);
                if (!m->memory_mib)
                        m->memory_mib = mp->memory_mib;
                if (!m->multiprocessor_count)
                        m->multiprocessor_count = mp->multiprocessor_count * m->ci_slice_count / mp->slice_count;
                if (!m->uuid && !(m->uuid = derive_uuid("MIG-", d->uuid, m->gi_id, m->ci_id)))
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        return 0;
}

int gv_mock_profile_finalize(gv_mock_profile_t *p, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "finalize: NULL profile");
        if (p->finalized)
                return 0;
        const char *src = p->source ? p->source : "(profile)";
        if (!p->node_name) {
                char host[256] = "";
                if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                        strcpy(host, "localhost");
                host[sizeof(host) - 1] = 0;
                if (!(p->node_name = strdup(host)))
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        if (!p->nvml_version && p->driver_version) {
                if (asprintf(&p->nvml_version, "%d.%s", p->cuda_driver_version / 1000, p->driver_version) < 0) {
                        p->nvml_version = NULL;
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                }
        }
        for (unsigned i = 0; i < p->device_count; i++) {
                gv_mock_device_t *d = &p->devices[i];
                d->index = i;
                if (!d->uuid && !(d->uuid = derive_uuid("GPU-", p->node_name, i, 0)))
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (!d->pci_bus_id) {
                        d->pci_domain = i / 8;
                        d->pci_bus = default_bus[i % 8];
                        d->pci_device = 0;
                        if (asprintf(&d->pci_bus_id, "%08X:%02X:%02X.0", d->pci_domain, d->pci_bus, d->pci_device) < 0) {
                                d->pci_bus_id = NULL;
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        }
                }
                if (d->minor_number == UNSET)
                        d->minor_number = i;
                if (d->memory_reserved_mib + d->memory_used_mib > d->memory_total_mib)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].memory_used_mib: used + reserved exceed the total", src, i);
                if (d->mig_mode_current == NVML_DEVICE_MIG_ENABLE && (!d->mig_capable || !d->n_mig_profiles))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].mig.mode: MIG enabled on a GPU without MIG profiles", src, i);
                int r = finalize_mig(p, d, err);
                if (r < 0)
                        return r;
                for (unsigned j = 0; j < i; j++) {
                        if (strcasecmp(p->devices[j].uuid, d->uuid) == 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].uuid: %s is also GPU %u's", src, i, d->uuid, j);
                        if (strcasecmp(p->devices[j].pci_bus_id, d->pci_bus_id) == 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].pci_bus_id: %s is also GPU %u's", src, i,
                                                    d->pci_bus_id, j);
                }
        }
        p->finalized = true;
        return 0;
}

const gv_mock_device_t *gv_mock_profile_device(const gv_mock_profile_t *p, unsigned index)
{
        if (!p || index >= p->device_count)
                return NULL;
        return &p->devices[index];
}

/* ------------------------------------------------------------------ */
/* writing                                                             */

/* @s as a double-quoted YAML scalar with escapes (safe inside flow mappings too). */
static void put_quoted(FILE *f, const char *s)
{
        fputc('"', f);
        for (; s && *s; s++) {
                unsigned char ch = (unsigned char) *s;
                if (ch == '"' || ch == '\\')
                        fprintf(f, "\\%c", ch);
                else if (ch < 0x20)
                        fprintf(f, "\\x%02x", ch);
                else
                        fputc(ch, f);
        }
        fputc('"', f);
}

static void put_str(FILE *f, const char *indent, const char *key, const char *s)
{
        fprintf(f, "%s%s: ", indent, key);
        put_quoted(f, s);
        fputc('\n', f);
}

static bool unsup(const gv_mock_device_t *d, uint32_t bit)
{
        return (d->unsupported & bit) != 0;
}

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): writes every device field of the profile schema in order; to be split in the architecture refactor */
static void write_device(FILE *f, const gv_mock_device_t *d, const char *in)
{
        put_str(f, in, "name", d->name);
        if (d->uuid)
                put_str(f, in, "uuid", d->uuid);
        if (d->pci_bus_id)
                put_str(f, in, "pci_bus_id", d->pci_bus_id);
        fprintf(f, "%spci_device_id: 0x%04X\n%spci_subsystem_id: 0x%08X\n", in, d->pci_device_id, in, d->pci_subsystem_id);
        if (unsup(d, GV_MOCK_FIELD_MINOR_NUMBER))
                fprintf(f, "%sminor_number: N/A\n", in);
        else if (d->minor_number != UNSET)
                fprintf(f, "%sminor_number: %u\n", in, d->minor_number);
        const char *brand = "nvidia";
        for (size_t i = 0; i < GV_ARRAY_SIZE(brand_names); i++)
                if (brand_names[i].value == d->brand)
                        brand = brand_names[i].name;
        fprintf(f, "%sbrand: %s\n", in, brand);
        if (d->architecture_name)
                fprintf(f, "%sarchitecture: %s\n", in, d->architecture_name);
        fprintf(f, "%scompute_capability: \"%d.%d\"\n", in, d->cuda_cc_major, d->cuda_cc_minor);
        fprintf(f, "%smultiprocessors: %u\n", in, d->multiprocessor_count);
        fprintf(f, "%smemory_mib: %llu\n%smemory_reserved_mib: %llu\n%smemory_used_mib: %llu\n", in,
                d->memory_total_mib, in, d->memory_reserved_mib, in, d->memory_used_mib);
        if (unsup(d, GV_MOCK_FIELD_SERIAL))
                fprintf(f, "%sserial: N/A\n", in);
        else if (d->serial)
                put_str(f, in, "serial", d->serial);
        if (unsup(d, GV_MOCK_FIELD_VBIOS))
                fprintf(f, "%svbios_version: N/A\n", in);
        else if (d->vbios_version)
                put_str(f, in, "vbios_version", d->vbios_version);
        if (unsup(d, GV_MOCK_FIELD_BOARD_PART_NUMBER))
                fprintf(f, "%sboard_part_number: N/A\n", in);
        else if (d->board_part_number)
                put_str(f, in, "board_part_number", d->board_part_number);
        if (unsup(d, GV_MOCK_FIELD_TEMPERATURE))
                fprintf(f, "%stemperature_c: N/A\n", in);
        else
                fprintf(f, "%stemperature_c: %u\n", in, d->temperature_c);
        fprintf(f, "%spower:\n", in);
        if (unsup(d, GV_MOCK_FIELD_POWER_USAGE))
                fprintf(f, "%s  usage_mw: N/A\n", in);
        else
                fprintf(f, "%s  usage_mw: %u\n", in, d->power_usage_mw);
        if (unsup(d, GV_MOCK_FIELD_POWER_LIMIT))
                fprintf(f, "%s  limit_mw: N/A\n", in);
        else
                fprintf(f, "%s  limit_mw: %u\n%s  default_limit_mw: %u\n%s  min_limit_mw: %u\n%s  max_limit_mw: %u\n", in,
                        d->power_limit_mw, in, d->power_default_limit_mw, in, d->power_min_limit_mw, in,
                        d->power_max_limit_mw);
        if (unsup(d, GV_MOCK_FIELD_CLOCKS))
                fprintf(f, "%sclocks: N/A\n", in);
        else
                fprintf(f,
                        "%sclocks:\n%s  graphics_mhz: %u\n%s  sm_mhz: %u\n%s  memory_mhz: %u\n%s  video_mhz: %u\n"
                        "%s  max_graphics_mhz: %u\n%s  max_sm_mhz: %u\n%s  max_memory_mhz: %u\n%s  max_video_mhz: %u\n",
                        in, in, d->clock_graphics_mhz, in, d->clock_sm_mhz, in, d->clock_mem_mhz, in,
                        d->clock_video_mhz, in, d->max_clock_graphics_mhz, in, d->max_clock_sm_mhz, in,
                        d->max_clock_mem_mhz, in, d->max_clock_video_mhz);
        if (unsup(d, GV_MOCK_FIELD_UTILIZATION))
                fprintf(f, "%sutilization: N/A\n", in);
        else
                fprintf(f, "%sutilization:\n%s  gpu: %u\n%s  memory: %u\n", in, in, d->utilization_gpu, in,
                        d->utilization_memory);
        if (unsup(d, GV_MOCK_FIELD_FAN))
                fprintf(f, "%sfan_percent: N/A\n", in);
        else
                fprintf(f, "%sfan_percent: %u\n", in, d->fan_speed);
        if (unsup(d, GV_MOCK_FIELD_PERSISTENCE))
                fprintf(f, "%spersistence_mode: N/A\n", in);
        else
                fprintf(f, "%spersistence_mode: %s\n", in, d->persistence_mode ? "true" : "false");
        if (unsup(d, GV_MOCK_FIELD_COMPUTE_MODE) || d->compute_mode >= GV_ARRAY_SIZE(compute_mode_names))
                fprintf(f, "%scompute_mode: N/A\n", in);
        else
                fprintf(f, "%scompute_mode: %s\n", in, compute_mode_names[d->compute_mode]);
        if (unsup(d, GV_MOCK_FIELD_ECC))
                fprintf(f, "%secc: N/A\n", in);
        else
                fprintf(f, "%secc:\n%s  current: %s\n%s  pending: %s\n", in, in, d->ecc_current ? "true" : "false", in,
                        d->ecc_pending ? "true" : "false");
        if (unsup(d, GV_MOCK_FIELD_PSTATE))
                fprintf(f, "%spstate: N/A\n", in);
        else
                fprintf(f, "%spstate: P%u\n", in, d->pstate);
        if (unsup(d, GV_MOCK_FIELD_DISPLAY))
                fprintf(f, "%sdisplay: N/A\n", in);
        else
                fprintf(f, "%sdisplay:\n%s  mode: %s\n%s  active: %s\n", in, in, d->display_mode ? "true" : "false", in,
                        d->display_active ? "true" : "false");
        if (unsup(d, GV_MOCK_FIELD_NVLINK))
                fprintf(f, "%snvlink: N/A\n", in);
        else
                fprintf(f, "%snvlink:\n%s  links: %u\n%s  active: %s\n", in, in, d->nvlink_count, in,
                        d->nvlink_active ? "true" : "false");
        if (unsup(d, GV_MOCK_FIELD_FABRIC) || d->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) {
                fprintf(f, "%sfabric: N/A\n", in);
        } else {
                static const char *const st[] = { "not_supported", "not_started", "in_progress", "completed" };
                const unsigned char *u = d->fabric_cluster_uuid;
                fprintf(f, "%sfabric:\n%s  state: %s\n%s  status: %u\n%s  clique_id: %u\n", in, in,
                        st[d->fabric_state & 3], in, d->fabric_status, in, d->fabric_clique_id);
                fprintf(f, "%s  cluster_uuid: \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"\n", in,
                        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                        u[15]);
        }
        if (!d->mig_capable) {
                fprintf(f, "%smig: N/A\n", in);
        } else {
                /* "profiles:" with nothing under it would read back as null, not as an empty list */
                fprintf(f, "%smig:\n%s  mode: %s\n%s  pending_mode: %s\n%s  profiles:%s\n", in, in,
                        d->mig_mode_current ? "enabled" : "disabled", in, d->mig_mode_pending ? "enabled" : "disabled",
                        in, d->n_mig_profiles ? "" : " []");
                for (size_t i = 0; i < d->n_mig_profiles; i++) {
                        const gv_mock_mig_profile_t *m = &d->mig_profiles[i];
                        fprintf(f, "%s    - {name: ", in);
                        put_quoted(f, m->name);
                        fprintf(f,
                                ", id: %u, slices: %u, instances: %u, memory_mib: %llu, "
                                "multiprocessors: %u, copy_engines: %u, decoders: %u, encoders: %u, jpeg: %u, ofa: %u}\n",
                                m->id, m->slice_count, m->instance_count, m->memory_mib,
                                m->multiprocessor_count, m->copy_engine_count, m->decoder_count, m->encoder_count,
                                m->jpeg_count, m->ofa_count);
                }
                fprintf(f, "%s  devices:%s\n", in, d->n_mig_devices ? "" : " []");
                for (size_t i = 0; i < d->n_mig_devices; i++) {
                        const gv_mock_mig_device_t *m = &d->mig_devices[i];
                        fprintf(f, "%s    - {profile: ", in);
                        put_quoted(f, m->profile);
                        if (m->gi_id != UNSET)
                                fprintf(f, ", gi_id: %u", m->gi_id);
                        if (m->ci_id != UNSET)
                                fprintf(f, ", ci_id: %u", m->ci_id);
                        if (m->placement_start != UNSET)
                                fprintf(f, ", placement_start: %u", m->placement_start);
                        if (m->ci_slice_count)
                                fprintf(f, ", ci_slices: %u", m->ci_slice_count);
                        if (m->memory_mib)
                                fprintf(f, ", memory_mib: %llu", m->memory_mib);
                        if (m->multiprocessor_count)
                                fprintf(f, ", multiprocessors: %u", m->multiprocessor_count);
                        if (m->ci_profile) {
                                fputs(", ci_profile: ", f);
                                put_quoted(f, m->ci_profile);
                        }
                        if (m->uuid) {
                                fputs(", uuid: ", f);
                                put_quoted(f, m->uuid);
                        }
                        fputs("}\n", f);
                }
        }
        if (unsup(d, GV_MOCK_FIELD_PROCESSES)) {
                fprintf(f, "%sprocesses: N/A\n", in);
        } else {
                fprintf(f, "%sprocesses:%s\n", in, d->n_processes ? "" : " []");
                for (size_t i = 0; i < d->n_processes; i++) {
                        const gv_mock_process_t *pr = &d->processes[i];
                        fprintf(f, "%s  - pid: %u\n%s    used_memory_mib: %llu\n", in, pr->pid, in, pr->used_memory_mib);
                        if (pr->name)
                                put_str(f, in, "    name", pr->name);
                        if (pr->gi_id != 0xFFFFFFFFu)
                                fprintf(f, "%s    gi_id: %u\n%s    ci_id: %u\n", in, pr->gi_id, in, pr->ci_id);
                }
        }
}

int gv_mock_profile_to_yaml(const gv_mock_profile_t *p, char **out, gv_error_t **err)
{
        if (!p || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "to_yaml: NULL argument");
        if (!p->finalized)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: profile is not finalized",
                                    p->source ? p->source : "(profile)");
        _cleanup_free_ char *buf = NULL;
        size_t sz = 0;
        FILE *f = open_memstream(&buf, &sz);
        if (!f)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        fprintf(f, "# gpu-validator mock NVML profile (docs/mock-nvml.md), written from %s\n",
                p->source ? p->source : "(profile)");
        fprintf(f, "schema: gpu-validator/mock-nvml/v1\n");
        if (p->name)
                put_str(f, "", "name", p->name);
        put_str(f, "", "node_name", p->node_name);
        fprintf(f, "driver:\n");
        put_str(f, "  ", "version", p->driver_version);
        if (p->nvml_version)
                put_str(f, "  ", "nvml_version", p->nvml_version);
        fprintf(f, "  cuda_version: %d\n", p->cuda_driver_version);
        fprintf(f, "gpu_count: %u\n", p->device_count);
        fprintf(f, "gpu:\n");
        /* The template describes GPUs added later; identity lives under devices. */
        write_device(f, p->device_template, "  ");
        fprintf(f, "devices:\n");
        for (unsigned i = 0; i < p->device_count; i++) {
                fprintf(f, "  - index: %u\n", i);
                write_device(f, &p->devices[i], "    ");
        }
        const gv_mock_faults_t *fl = &p->faults;
        if (fl->init_error || fl->lost_gpus || fl->fabric_in_progress || fl->n_xids || fl->xid_control_file) {
                fprintf(f, "faults:\n");
                if (fl->init_error)
                        fprintf(f, "  init_error: %u\n", fl->init_error);
                if (fl->lost_gpus) {
                        fprintf(f, "  lost_gpus: [");
                        bool first = true;
                        for (unsigned i = 0; i < 64; i++)
                                if (fl->lost_gpus & (1ULL << i)) {
                                        fprintf(f, "%s%u", first ? "" : ", ", i);
                                        first = false;
                                }
                        fprintf(f, "]\n");
                }
                if (fl->fabric_in_progress)
                        fprintf(f, "  fabric_in_progress: true\n");
                if (fl->n_xids) {
                        fprintf(f, "  xids:\n");
                        for (size_t i = 0; i < fl->n_xids; i++)
                                fprintf(f, "    - {gpu: %u, xid: %llu, after_ms: %u}\n", fl->xids[i].gpu, fl->xids[i].xid,
                                        fl->xids[i].after_ms);
                }
                if (fl->xid_control_file)
                        put_str(f, "  ", "xid_control_file", fl->xid_control_file);
        }
        if (fclose(f) != 0 || !buf)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        *out = TAKE_PTR(buf);
        return 0;
}
