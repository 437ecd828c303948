/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a finalized profile back as YAML in its own schema (gv_mock_profile_to_yaml()). */
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

/* name .. memory: what identifies the GPU. */
static void write_identity(FILE *f, const gv_mock_device_t *d, const char *in)
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
        for (size_t i = 0; i < mp_n_brand_names; i++)
                if (mp_brand_names[i].value == d->brand)
                        brand = mp_brand_names[i].name;
        fprintf(f, "%sbrand: %s\n", in, brand);
        if (d->architecture_name)
                fprintf(f, "%sarchitecture: %s\n", in, d->architecture_name);
        fprintf(f, "%scompute_capability: \"%d.%d\"\n", in, d->cuda_cc_major, d->cuda_cc_minor);
        fprintf(f, "%smultiprocessors: %u\n", in, d->multiprocessor_count);
        fprintf(f, "%smemory_mib: %llu\n", in, d->memory_total_mib);
        if (d->memory_reserved_mib != UNSET_ULL) /* the template's, unset: each GPU's is written */
                fprintf(f, "%smemory_reserved_mib: %llu\n", in, d->memory_reserved_mib);
        fprintf(f, "%smemory_used_mib: %llu\n", in, d->memory_used_mib);
}

/* serial, vbios_version, board_part_number: N/A when unsupported, absent when not set. */
static void write_optional_strings(FILE *f, const gv_mock_device_t *d, const char *in)
{
        const struct {
                const char *key;
                uint32_t bit;
                const char *value;
        } strs[] = {
                { "serial", GV_MOCK_FIELD_SERIAL, d->serial },
                { "vbios_version", GV_MOCK_FIELD_VBIOS, d->vbios_version },
                { "board_part_number", GV_MOCK_FIELD_BOARD_PART_NUMBER, d->board_part_number },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(strs); i++) {
                if (unsup(d, strs[i].bit))
                        fprintf(f, "%s%s: N/A\n", in, strs[i].key);
                else if (strs[i].value)
                        put_str(f, in, strs[i].key, strs[i].value);
        }
}

/* temperature .. pstate: the readings and modes. */
static void write_state(FILE *f, const gv_mock_device_t *d, const char *in)
{
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
        if (unsup(d, GV_MOCK_FIELD_COMPUTE_MODE) || d->compute_mode >= mp_n_compute_mode_names)
                fprintf(f, "%scompute_mode: N/A\n", in);
        else
                fprintf(f, "%scompute_mode: %s\n", in, mp_compute_mode_names[d->compute_mode]);
        if (unsup(d, GV_MOCK_FIELD_ECC))
                fprintf(f, "%secc: N/A\n", in);
        else
                fprintf(f, "%secc:\n%s  current: %s\n%s  pending: %s\n", in, in, d->ecc_current ? "true" : "false", in,
                        d->ecc_pending ? "true" : "false");
        if (unsup(d, GV_MOCK_FIELD_PSTATE))
                fprintf(f, "%spstate: N/A\n", in);
        else
                fprintf(f, "%spstate: P%u\n", in, d->pstate);
}

/* display, nvlink, fabric. */
static void write_features(FILE *f, const gv_mock_device_t *d, const char *in)
{
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
}

static void write_mig_profiles(FILE *f, const gv_mock_device_t *d, const char *in)
{
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
}

static void write_mig_devices(FILE *f, const gv_mock_device_t *d, const char *in)
{
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

static void write_mig(FILE *f, const gv_mock_device_t *d, const char *in)
{
        if (!d->mig_capable) {
                fprintf(f, "%smig: N/A\n", in);
        } else {
                /* "profiles:" with nothing under it would read back as null, not as an empty list */
                fprintf(f, "%smig:\n%s  mode: %s\n%s  pending_mode: %s\n%s  profiles:%s\n", in, in,
                        d->mig_mode_current ? "enabled" : "disabled", in, d->mig_mode_pending ? "enabled" : "disabled",
                        in, d->n_mig_profiles ? "" : " []");
                write_mig_profiles(f, d, in);
                fprintf(f, "%s  devices:%s\n", in, d->n_mig_devices ? "" : " []");
                write_mig_devices(f, d, in);
        }
}

static void write_processes(FILE *f, const gv_mock_device_t *d, const char *in)
{
        if (unsup(d, GV_MOCK_FIELD_PROCESSES)) {
                fprintf(f, "%sprocesses: N/A\n", in);
        } else {
                fprintf(f, "%sprocesses:%s\n", in, d->n_processes ? "" : " []");
                for (size_t i = 0; i < d->n_processes; i++) {
                        const gv_mock_process_t *pr = &d->processes[i];
                        fprintf(f, "%s  - pid: %u\n%s    used_memory_mib: %llu\n", in, pr->pid, in, pr->used_memory_mib);
                        if (pr->name)
                                put_str(f, in, "    name", pr->name);
                        /* each id only when given: 0xFFFFFFFF (none) is not a value the parser takes back */
                        if (pr->gi_id != 0xFFFFFFFFu)
                                fprintf(f, "%s    gi_id: %u\n", in, pr->gi_id);
                        if (pr->ci_id != 0xFFFFFFFFu)
                                fprintf(f, "%s    ci_id: %u\n", in, pr->ci_id);
                }
        }
}

/* Every device field of the profile schema, in order, each line prefixed by @in. */
static void write_device(FILE *f, const gv_mock_device_t *d, const char *in)
{
        write_identity(f, d, in);
        write_optional_strings(f, d, in);
        write_state(f, d, in);
        write_features(f, d, in);
        write_mig(f, d, in);
        write_processes(f, d, in);
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
                return gv_error_oom(err);
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
                return gv_error_oom(err);
        *out = TAKE_PTR(buf);
        return 0;
}
