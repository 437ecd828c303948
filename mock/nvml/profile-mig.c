/* SPDX-License-Identifier: Apache-2.0 */
/* The `mig` mapping of a GPU in a profile: mode, GPU instance profiles and MIG devices (docs/mock-nvml.md "MIG"). */
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

/* An unsigned field of a MIG profile or device: its key, another spelling (or NULL), its bound, where it is. */
typedef struct uint_key {
        const char *key, *alias;
        unsigned max;
        size_t off;
} uint_key_t;

/* Read @x into the unsigned field of @obj that @k names in @keys[@n]; NOT_MINE when it names none. */
static int get_uint_key(pctx_t *c, yaml_node_t *x, const char *prefix, const char *k, const uint_key_t *keys, size_t n,
                        void *obj)
{
        for (size_t i = 0; i < n; i++)
                if (KEY_IS(k, keys[i].key) || (keys[i].alias && KEY_IS(k, keys[i].alias)))
                        return mp_get_uint(c, x, prefix, k, keys[i].max, (unsigned *) ((char *) obj + keys[i].off));
        return NOT_MINE;
}

static const uint_key_t mig_profile_uints[] = {
        { "slices", NULL, 8, offsetof(gv_mock_mig_profile_t, slice_count) },
        { "instances", NULL, 8, offsetof(gv_mock_mig_profile_t, instance_count) },
        { "multiprocessors", NULL, 10000, offsetof(gv_mock_mig_profile_t, multiprocessor_count) },
        { "copy_engines", NULL, 64, offsetof(gv_mock_mig_profile_t, copy_engine_count) },
        { "decoders", NULL, 64, offsetof(gv_mock_mig_profile_t, decoder_count) },
        { "encoders", NULL, 64, offsetof(gv_mock_mig_profile_t, encoder_count) },
        { "jpeg", NULL, 64, offsetof(gv_mock_mig_profile_t, jpeg_count) },
        { "ofa", NULL, 64, offsetof(gv_mock_mig_profile_t, ofa_count) },
};

static const uint_key_t mig_device_uints[] = {
        { "gi_id", "gpu_instance_id", GV_MOCK_MAX_INSTANCE_ID, offsetof(gv_mock_mig_device_t, gi_id) },
        { "ci_id", "compute_instance_id", GV_MOCK_MAX_INSTANCE_ID, offsetof(gv_mock_mig_device_t, ci_id) },
        { "ci_slices", NULL, 8, offsetof(gv_mock_mig_device_t, ci_slice_count) },
        { "placement_start", NULL, 7, offsetof(gv_mock_mig_device_t, placement_start) },
        { "multiprocessors", NULL, 10000, offsetof(gv_mock_mig_device_t, multiprocessor_count) },
};

static int parse_mig_profile(pctx_t *c, yaml_node_t *v, const char *prefix, gv_mock_mig_profile_t *m)
{
        int r = mp_want_map(c, v, prefix, "");
        if (r < 0)
                return r;
        bool have_id = false;
        m->id = UNSET;
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = mp_ynode(c, p->key), *x = mp_ynode(c, p->value);
                const char *k = mp_scalar(kn);
                if (!k || !x)
                        return mp_perr(c, kn, prefix, "", "bad key");
                if (KEY_IS(k, "name"))
                        r = mp_get_str(c, x, prefix, k, &m->name);
                else if (KEY_IS(k, "id"))
                        r = mp_get_uint(c, x, prefix, k, NVML_GPU_INSTANCE_PROFILE_COUNT - 1, &m->id), have_id = true;
                else if (KEY_IS(k, "nvml_profile")) {
                        const char *s = mp_scalar(x);
                        r = mp_perr(c, x, prefix, k, "expected one of 1_SLICE, 2_SLICE, ..., 1_SLICE_REV2");
                        for (size_t i = 0; s && i < GV_ARRAY_SIZE(gi_profile_ids); i++)
                                if (strcasecmp(s, gi_profile_ids[i].name) == 0) {
                                        gv_error_free(c->err);
                                        m->id = gi_profile_ids[i].id;
                                        if (!m->slice_count)
                                                m->slice_count = gi_profile_ids[i].slices;
                                        have_id = true;
                                        r = 0;
                                }
                } else if (KEY_IS(k, "memory_mib") || KEY_IS(k, "memory_mb"))
                        r = mp_get_ull(c, x, prefix, k, 1ULL << 30, &m->memory_mib);
                else if ((r = get_uint_key(c, x, prefix, k, mig_profile_uints, GV_ARRAY_SIZE(mig_profile_uints), m)) ==
                         NOT_MINE)
                        r = mp_unknown_key(c, x, prefix, k);
                if (r < 0)
                        return r;
        }
        if (!m->name)
                return mp_perr(c, v, prefix, "name", "required field missing");
        if (!m->slice_count) {
                unsigned g;
                if (sscanf(m->name, "%ug.", &g) == 1 && g >= 1 && g <= 8)
                        m->slice_count = g;
                else
                        return mp_perr(c, v, prefix, "slices", "required field missing");
        }
        if (!have_id) {
                for (size_t i = 0; i < GV_ARRAY_SIZE(gi_profile_ids); i++)
                        if (gi_profile_ids[i].slices == m->slice_count) {
                                m->id = gi_profile_ids[i].id;
                                break;
                        }
                if (m->id == UNSET)
                        return mp_perr(c, v, prefix, "id", "required field missing");
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
                return mp_get_str(c, v, prefix, "", &m->profile);
        int r = mp_want_map(c, v, prefix, "");
        if (r < 0)
                return r;
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = mp_ynode(c, p->key), *x = mp_ynode(c, p->value);
                const char *k = mp_scalar(kn);
                if (!k || !x)
                        return mp_perr(c, kn, prefix, "", "bad key");
                if (KEY_IS(k, "profile") || KEY_IS(k, "name"))
                        r = mp_get_str(c, x, prefix, k, &m->profile);
                else if (KEY_IS(k, "ci_profile"))
                        r = mp_get_str(c, x, prefix, k, &m->ci_profile);
                else if (KEY_IS(k, "uuid")) {
                        r = mp_get_str(c, x, prefix, k, &m->uuid);
                        if (r >= 0 && !mp_valid_uuid(m->uuid, "MIG-"))
                                r = mp_perr(c, x, prefix, k, "expected MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
                } else if (KEY_IS(k, "memory_mib"))
                        r = mp_get_ull(c, x, prefix, k, 1ULL << 30, &m->memory_mib);
                else if ((r = get_uint_key(c, x, prefix, k, mig_device_uints, GV_ARRAY_SIZE(mig_device_uints), m)) ==
                         NOT_MINE)
                        r = mp_unknown_key(c, x, prefix, k);
                if (r < 0)
                        return r;
        }
        if (!m->profile)
                return mp_perr(c, v, prefix, "profile", "required field missing");
        return 0;
}

static int parse_mig_list(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, gv_mock_device_t *d,
                          bool profiles)
{
        int r = mp_want_seq(c, v, prefix, key);
        if (r < 0)
                return r;
        size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
        if (!profiles && n > GV_MOCK_MAX_MIG_DEVICES)
                return mp_perr(c, v, prefix, key, "at most %u MIG devices per GPU", GV_MOCK_MAX_MIG_DEVICES);
        if (profiles && n > 32)
                return mp_perr(c, v, prefix, key, "at most 32 GPU instance profiles");
        _cleanup_free_ char *base = mp_join(prefix, key);
        if (!base)
                return gv_error_oom(c->err);
        if (profiles) {
                for (size_t i = 0; i < d->n_mig_profiles; i++)
                        mp_mig_profile_clear(&d->mig_profiles[i]);
                free(d->mig_profiles);
                d->mig_profiles = n ? calloc(n, sizeof(*d->mig_profiles)) : NULL;
                d->n_mig_profiles = 0;
                if (n && !d->mig_profiles)
                        return gv_error_oom(c->err);
        } else {
                for (size_t i = 0; i < d->n_mig_devices; i++)
                        mp_mig_device_clear(&d->mig_devices[i]);
                free(d->mig_devices);
                d->mig_devices = n ? calloc(n, sizeof(*d->mig_devices)) : NULL;
                d->n_mig_devices = 0;
                if (n && !d->mig_devices)
                        return gv_error_oom(c->err);
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *ip = NULL;
                yaml_node_t *item = mp_seq_item(c, v, base, i, &ip);
                if (!ip)
                        return gv_error_oom(c->err);
                if (!item)
                        return mp_perr(c, v, ip, "", "missing item");
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
        int r = mp_get_bool(c, v, prefix, key, &b);
        if (r < 0)
                return r;
        *out = b ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
        return 0;
}

int mp_mig_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
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
                if (mp_is_null(v)) {
                        for (size_t i = 0; i < d->n_mig_devices; i++)
                                mp_mig_device_clear(&d->mig_devices[i]);
                        free(d->mig_devices);
                        d->mig_devices = NULL;
                        d->n_mig_devices = 0;
                        return 0;
                }
                return parse_mig_list(c, v, prefix, key, d, false);
        }
        return mp_unknown_key(c, v, prefix, key);
}
