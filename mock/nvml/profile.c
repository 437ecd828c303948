/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU profile model of the mock NVML library (profile.h): freeing and
 * copying profiles, the NVML return-code names of `faults`, and the built-in
 * profiles.  Loading is in profile-parse.c (top level), profile-yaml.c (YAML
 * walking) and profile-device.c (device fields); profile-finalize.c edits and
 * finalizes, profile-write.c writes a profile back as YAML.  docs/mock-nvml.md
 * describes the schemas.
 */
#include "mock/nvml/profile.h"

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
#include "builtin-profiles.h"
#include "mock/nvml/profile-internal.h"

static char *xstrdup(const char *s)
{
        return s ? strdup(s) : NULL;
}

void mp_mig_profile_clear(gv_mock_mig_profile_t *m)
{
        free(m->name);
}

void mp_mig_device_clear(gv_mock_mig_device_t *m)
{
        free(m->profile);
        free(m->ci_profile);
        free(m->uuid);
}

void mp_device_clear(gv_mock_device_t *d)
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
                mp_mig_profile_clear(&d->mig_profiles[i]);
        free(d->mig_profiles);
        for (size_t i = 0; i < d->n_mig_devices; i++)
                mp_mig_device_clear(&d->mig_devices[i]);
        free(d->mig_devices);
        for (size_t i = 0; i < d->n_processes; i++)
                free(d->processes[i].name);
        free(d->processes);
        memset(d, 0, sizeof(*d));
}

/* A heap copy of the @n elements of @size bytes at @src; NULL when @n is 0 or out of memory. */
static void *array_dup(const void *src, size_t n, size_t size)
{
        if (n == 0)
                return NULL;
        void *a = calloc(n, size);
        if (a)
                memcpy(a, src, n * size);
        return a;
}

int mp_device_copy(gv_mock_device_t *dst, const gv_mock_device_t *src)
{
        *dst = *src;
        dst->name = xstrdup(src->name);
        dst->uuid = xstrdup(src->uuid);
        dst->pci_bus_id = xstrdup(src->pci_bus_id);
        dst->serial = xstrdup(src->serial);
        dst->vbios_version = xstrdup(src->vbios_version);
        dst->board_part_number = xstrdup(src->board_part_number);
        dst->architecture_name = xstrdup(src->architecture_name);
        /* the arrays are copied whole, then their strings (still shared with @src) are duplicated */
        dst->mig_profiles = array_dup(src->mig_profiles, src->n_mig_profiles, sizeof(*src->mig_profiles));
        dst->mig_devices = array_dup(src->mig_devices, src->n_mig_devices, sizeof(*src->mig_devices));
        dst->processes = array_dup(src->processes, src->n_processes, sizeof(*src->processes));
        for (size_t i = 0; dst->mig_profiles && i < src->n_mig_profiles; i++)
                dst->mig_profiles[i].name = xstrdup(src->mig_profiles[i].name);
        for (size_t i = 0; dst->mig_devices && i < src->n_mig_devices; i++) {
                gv_mock_mig_device_t *m = &dst->mig_devices[i];
                m->profile = xstrdup(m->profile);
                m->ci_profile = xstrdup(m->ci_profile);
                m->uuid = xstrdup(m->uuid);
        }
        for (size_t i = 0; dst->processes && i < src->n_processes; i++)
                dst->processes[i].name = xstrdup(src->processes[i].name);
        bool out_of_memory = (src->n_mig_profiles && !dst->mig_profiles) ||
                             (src->n_mig_devices && !dst->mig_devices) || (src->n_processes && !dst->processes);
        if (!out_of_memory)
                return 0;
        dst->n_mig_profiles = dst->mig_profiles ? dst->n_mig_profiles : 0;
        dst->n_mig_devices = dst->mig_devices ? dst->n_mig_devices : 0;
        dst->n_processes = dst->processes ? dst->n_processes : 0;
        mp_device_clear(dst);
        return -ENOMEM;
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
                mp_device_clear(&p->devices[i]);
        free(p->devices);
        mp_device_clear(p->device_template);
        free(p->device_template);
        free(p->faults.xids);
        free(p->faults.xid_control_file);
        free(p);
        *pp = NULL;
}

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
                        return gv_error_oom(err);
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
                return gv_error_oom(err);
        return mp_load_text(source, text, strlen(text), out, err);
}
