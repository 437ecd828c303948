/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The views of a GPU profile that `gpu-validator mock profiles` prints
 * (gv_mock_profile_view() in mock/mock.h): the finalized profile in its own
 * schema as JSON, and the flat report of what NVML will answer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yaml.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "mock/mock.h"
#include "mock/nvml/profile.h"

#define JSON_TEXT_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

static void jadd_str(json_object *o, const char *k, const char *v)
{
        json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void jadd_u(json_object *o, const char *k, unsigned long long v)
{
        json_object_object_add(o, k, json_object_new_int64((int64_t) v));
}

/* Names of the gv_mock_field_t bits, as the profile's `unsupported:` list spells them. */
static const struct {
        unsigned bit;
        const char *name;
} field_names[] = {
        { GV_MOCK_FIELD_TEMPERATURE, "temperature" },   { GV_MOCK_FIELD_POWER_USAGE, "power_usage" },
        { GV_MOCK_FIELD_POWER_LIMIT, "power_limit" },   { GV_MOCK_FIELD_CLOCKS, "clocks" },
        { GV_MOCK_FIELD_UTILIZATION, "utilization" },   { GV_MOCK_FIELD_FAN, "fan" },
        { GV_MOCK_FIELD_PERSISTENCE, "persistence" },   { GV_MOCK_FIELD_COMPUTE_MODE, "compute_mode" },
        { GV_MOCK_FIELD_ECC, "ecc" },                   { GV_MOCK_FIELD_PSTATE, "pstate" },
        { GV_MOCK_FIELD_SERIAL, "serial" },             { GV_MOCK_FIELD_VBIOS, "vbios" },
        { GV_MOCK_FIELD_BOARD_PART_NUMBER, "board_part_number" },
        { GV_MOCK_FIELD_DISPLAY, "display" },           { GV_MOCK_FIELD_PROCESSES, "processes" },
        { GV_MOCK_FIELD_FABRIC, "fabric" },             { GV_MOCK_FIELD_NVLINK, "nvlink" },
        { GV_MOCK_FIELD_MIG, "mig" },                   { GV_MOCK_FIELD_MINOR_NUMBER, "minor_number" },
};

/* One GPU of the report: what NVML will answer for @d. */
static json_object *device_json(const gv_mock_device_t *d)
{
        json_object *g = json_object_new_object();
        jadd_u(g, "index", d->index);
        jadd_str(g, "name", d->name);
        jadd_str(g, "uuid", d->uuid);
        jadd_str(g, "pci_bus_id", d->pci_bus_id);
        jadd_u(g, "pci_device_id", d->pci_device_id);
        jadd_u(g, "pci_subsystem_id", d->pci_subsystem_id);
        jadd_u(g, "minor_number", d->minor_number);
        jadd_str(g, "serial", d->serial);
        jadd_str(g, "vbios_version", d->vbios_version);
        jadd_str(g, "board_part_number", d->board_part_number);
        jadd_str(g, "architecture", d->architecture_name);
        jadd_u(g, "cuda_cc_major", (unsigned long long) d->cuda_cc_major);
        jadd_u(g, "cuda_cc_minor", (unsigned long long) d->cuda_cc_minor);
        jadd_u(g, "memory_total_mib", d->memory_total_mib);
        jadd_u(g, "memory_reserved_mib", d->memory_reserved_mib);
        jadd_u(g, "memory_used_mib", d->memory_used_mib);
        jadd_u(g, "temperature_c", d->temperature_c);
        jadd_u(g, "power_usage_mw", d->power_usage_mw);
        jadd_u(g, "power_limit_mw", d->power_limit_mw);
        jadd_u(g, "power_default_limit_mw", d->power_default_limit_mw);
        jadd_u(g, "power_min_limit_mw", d->power_min_limit_mw);
        jadd_u(g, "power_max_limit_mw", d->power_max_limit_mw);
        jadd_u(g, "clock_graphics_mhz", d->clock_graphics_mhz);
        jadd_u(g, "clock_sm_mhz", d->clock_sm_mhz);
        jadd_u(g, "clock_mem_mhz", d->clock_mem_mhz);
        jadd_u(g, "clock_video_mhz", d->clock_video_mhz);
        jadd_u(g, "max_clock_graphics_mhz", d->max_clock_graphics_mhz);
        jadd_u(g, "max_clock_sm_mhz", d->max_clock_sm_mhz);
        jadd_u(g, "max_clock_mem_mhz", d->max_clock_mem_mhz);
        jadd_u(g, "utilization_gpu", d->utilization_gpu);
        jadd_u(g, "utilization_memory", d->utilization_memory);
        jadd_u(g, "fan_speed", d->fan_speed);
        json_object_object_add(g, "persistence_mode", json_object_new_boolean(d->persistence_mode));
        jadd_u(g, "compute_mode", d->compute_mode);
        json_object_object_add(g, "ecc_current", json_object_new_boolean(d->ecc_current));
        jadd_u(g, "pstate", d->pstate);
        json_object_object_add(g, "mig_capable", json_object_new_boolean(d->mig_capable));
        jadd_u(g, "mig_mode_current", d->mig_mode_current);
        jadd_u(g, "mig_mode_pending", d->mig_mode_pending);
        json_object *uns = json_object_new_array();
        for (size_t k = 0; k < GV_ARRAY_SIZE(field_names); k++)
                if (d->unsupported & field_names[k].bit)
                        json_object_array_add(uns, json_object_new_string(field_names[k].name));
        json_object_object_add(g, "unsupported", uns);
        json_object *migs = json_object_new_array();
        for (size_t m = 0; m < d->n_mig_devices; m++) {
                const gv_mock_mig_device_t *md = &d->mig_devices[m];
                json_object *mj = json_object_new_object();
                jadd_str(mj, "profile", md->ci_profile ? md->ci_profile : md->profile);
                jadd_str(mj, "uuid", md->uuid);
                jadd_u(mj, "gi_id", md->gi_id);
                jadd_u(mj, "ci_id", md->ci_id);
                jadd_u(mj, "memory_mib", md->memory_mib);
                jadd_u(mj, "multiprocessor_count", md->multiprocessor_count);
                json_object_array_add(migs, mj);
        }
        json_object_object_add(g, "mig_devices", migs);
        return g;
}

/* What NVML will report, flat, for tests independent of nvidia-smi (`--report`); not a profile. */
static json_object *profile_json(const gv_mock_profile_t *p)
{
        json_object *o = json_object_new_object();
        jadd_str(o, "name", p->name);
        jadd_str(o, "source", p->source);
        jadd_str(o, "node_name", p->node_name);
        jadd_str(o, "driver_version", p->driver_version);
        jadd_str(o, "nvml_version", p->nvml_version);
        jadd_u(o, "cuda_driver_version", (unsigned long long) p->cuda_driver_version);
        jadd_u(o, "gpu_count", p->device_count);
        json_object *arr = json_object_new_array();
        for (unsigned i = 0; i < p->device_count; i++)
                json_object_array_add(arr, device_json(&p->devices[i]));
        json_object_object_add(o, "gpus", arr);
        return o;
}

/* The report of @p as JSON text with a final newline (heap, caller frees); -ENOMEM. */
static int profile_report_text(const gv_mock_profile_t *p, char **text, gv_error_t **err)
{
        _cleanup_json_ json_object *o = profile_json(p);
        if (!o || asprintf(text, "%s\n", json_object_to_json_string_ext(o, JSON_TEXT_FLAGS)) < 0) {
                *text = NULL;
                return gv_error_oom(err);
        }
        return 0;
}

/*
 * One node of the YAML that gv_mock_profile_to_yaml() writes, as JSON:
 * mappings become objects, sequences arrays, quoted scalars strings; a plain
 * scalar becomes a boolean, null or an integer when it reads as one
 * (0x-hex too: JSON has no hex), else a string.  The profile loader reads
 * JSON numbers and booleans as the plain scalars they came from, so the
 * result loads as the same profile.  NULL when out of memory.
 */
/* NOLINTNEXTLINE(misc-no-recursion): bounded: deeper than 64 levels is refused (NULL) */
static json_object *yaml_node_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
        if (!n || depth > 64)
                return NULL;
        if (n->type == YAML_MAPPING_NODE) {
                json_object *o = json_object_new_object();
                for (yaml_node_pair_t *p = n->data.mapping.pairs.start; o && p < n->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(doc, p->key);
                        json_object *v = yaml_node_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
                        if (!k || k->type != YAML_SCALAR_NODE || !v ||
                            json_object_object_add(o, (const char *) k->data.scalar.value, v) < 0) {
                                json_object_put(v);
                                json_object_put(o);
                                return NULL;
                        }
                }
                return o;
        }
        if (n->type == YAML_SEQUENCE_NODE) {
                json_object *a = json_object_new_array();
                for (yaml_node_item_t *it = n->data.sequence.items.start; a && it < n->data.sequence.items.top; it++) {
                        json_object *v = yaml_node_json(doc, yaml_document_get_node(doc, *it), depth + 1);
                        if (!v || json_object_array_add(a, v) < 0) {
                                json_object_put(v);
                                json_object_put(a);
                                return NULL;
                        }
                }
                return a;
        }
        if (n->type != YAML_SCALAR_NODE)
                return NULL;
        const char *s = (const char *) n->data.scalar.value;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
                if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
                        return json_object_new_boolean(s[0] == 't');
                if (*s >= '0' && *s <= '9') {
                        char *end = NULL;
                        errno = 0;
                        unsigned long long v = strtoull(s, &end, 0);
                        if (!errno && end && !*end && v <= (unsigned long long) INT64_MAX)
                                return json_object_new_int64((int64_t) v);
                }
        }
        return json_object_new_string(s);
}

/* The finalized profile @p in its own schema as JSON text with a final newline (heap, caller frees). */
static int profile_json_text(const gv_mock_profile_t *p, char **text, gv_error_t **err)
{
        _cleanup_free_ char *y = NULL;
        int r = gv_mock_profile_to_yaml(p, &y, err);
        if (r < 0)
                return r;
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser))
                return gv_error_oom(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *) y, strlen(y));
        int ok = yaml_parser_load(&parser, &doc);
        yaml_parser_delete(&parser);
        if (!ok)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "the written profile does not parse as YAML");
        _cleanup_json_ json_object *o = yaml_node_json(&doc, yaml_document_get_root_node(&doc), 0);
        yaml_document_delete(&doc);
        if (!o || asprintf(text, "%s\n", json_object_to_json_string_ext(o, JSON_TEXT_FLAGS)) < 0) {
                *text = NULL;
                return gv_error_oom(err);
        }
        return 0;
}

/* Load, adjust and finalize the profile @name for gv_mock_profile_view(). */
static int load_view_profile(const char *name, unsigned gpus, const char *node_name, gv_mock_profile_t **out,
                             gv_error_t **err)
{
        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        int r = gv_mock_profile_is_path(name) ? gv_mock_profile_load_file(name, &p, err)
                                              : gv_mock_profile_load_builtin(name, &p, err);
        if (r == 0 && gpus)
                r = gv_mock_profile_set_gpu_count(p, gpus, err);
        if (r == 0 && node_name)
                r = gv_mock_profile_set_node_name(p, node_name, err);
        if (r == 0)
                r = gv_mock_profile_finalize(p, err);
        if (r < 0) {
                if (err && *err && (*err)->reason == GV_REASON_IO)
                        gv_error_set_reason(err, GV_REASON_CONFIG); /* a profile file that cannot be read is a usage error */
                return r;
        }
        *out = TAKE_PTR(p);
        return 0;
}

int gv_mock_profile_view(const char *name, unsigned gpus, const char *node_name, gv_mock_profile_view_t view,
                         char **text, gv_error_t **err)
{
        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = NULL;
        int r = load_view_profile(name, gpus, node_name, &p, err);
        if (r < 0)
                return r;
        return view == GV_MOCK_PROFILE_VIEW_REPORT ? profile_report_text(p, text, err)
                                                   : profile_json_text(p, text, err);
}
