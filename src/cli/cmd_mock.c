/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator mock install|remove|profiles`: lay out and remove mock
 * driver roots (src/mockroot/mockroot.h, docs/mock-driver-root.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yaml.h>

#include "base/cleanup.h"
#include "cli.h"
#include "mockroot/mockroot.h"
#include "nvml/profile.h"

static void usage_mock(FILE *f)
{
        fputs("Usage: gpu-validator mock COMMAND [OPTIONS]\n"
              "\n"
              "Mock driver roots: a folder laid out like an NVIDIA driver installation, with the mock\n"
              "libnvidia-ml.so.1, our nvidia-smi, /proc/driver/nvidia/version, /dev nodes and a CDI spec,\n"
              "so that the validator (and any NVML consumer) runs without a GPU.\n"
              "\nCommands:\n"
              "  install    lay out (or update) a mock driver root\n"
              "  remove     remove exactly what install created\n"
              "  profiles   list the built-in GPU profiles (--json NAME: the finalized profile as JSON,\n"
              "             readable by --profile; --report NAME: the values NVML will report)\n"
              "\nRun 'gpu-validator mock COMMAND --help' for the options of a command.\n"
              "See docs/mock-driver-root.md.\n",
              f);
}

static void usage_install(FILE *f)
{
        fputs("Usage: gpu-validator mock install --root DIR [OPTIONS]\n"
              "\n"
              "Lays out a mock driver root under DIR: usr/lib64/libnvidia-ml.so.<driver version> with the\n"
              "links libnvidia-ml.so.1 and libnvidia-ml.so, the finalized profile beside it (nvml-mock.yaml),\n"
              "the mock CUDA driver usr/lib64/libcuda.so.<driver version> with its links (when built),\n"
              "usr/bin/nvidia-smi, proc/driver/nvidia/version, dev/nvidiactl, dev/nvidia0..N-1,\n"
              "dev/nvidia-uvm, dev/nvidia-uvm-tools, a CDI spec, and the manifest .gpu-validator-mock.json.\n"
              "Re-running updates the root; a non-empty folder that is not a mock root is refused.\n"
              "The manifest is written first as an intent record: after an install that was killed,\n"
              "install finishes it and remove removes what it had made.\n"
              "\nOptions:\n"
              "  --root DIR               the driver root to lay out (required)\n"
              "  --profile NAME|FILE      built-in profile (see 'mock profiles') or a YAML file\n"
              "                           (default " GV_MOCK_DEFAULT_PROFILE ")\n"
              "  --gpus N                 number of GPUs, 1..64 (default: the profile's)\n"
              "  --node-name NAME         node name the GPU UUIDs derive from (default: the profile's, or\n"
              "                           the host name)\n"
              "  --cdi-dir DIR            where to write nvidia-mock.yaml (default DIR/etc/cdi)\n"
              "  --device-nodes=char|files  character devices (mknod, needs root; falls back to files when\n"
              "                           refused) or empty files (default: char as root, else files)\n"
              "  -h, --help               show this help\n"
              "\nEnvironment: GPU_VALIDATOR_MOCK_DIR names a folder holding libnvidia-ml.so.1 and\n"
              "nvidia-smi to copy instead of the built or installed ones.\n"
              "Exit codes: 0 success, 1 failure, 2 usage error or bad profile.\n",
              f);
}

static void usage_remove(FILE *f)
{
        fputs("Usage: gpu-validator mock remove --root DIR\n"
              "\n"
              "Removes what 'mock install' created under DIR (as listed in DIR/.gpu-validator-mock.json):\n"
              "files, links and device nodes that still have the type install gave them, then the folders\n"
              "install created once they are empty, the manifest, and DIR itself when install created it.\n"
              "Nothing else is touched.\n"
              "\nOptions:\n"
              "  --root DIR   the mock driver root\n"
              "  -h, --help   show this help\n"
              "Exit codes: 0 success, 1 failure, 2 usage error or not a mock root.\n",
              f);
}

static void usage_profiles(FILE *f)
{
        fputs("Usage: gpu-validator mock profiles [--json|--report NAME|FILE [--gpus N] [--node-name NAME]]\n"
              "\n"
              "Lists the built-in GPU profiles.  With --json, prints the finalized profile (after --gpus and\n"
              "--node-name) as JSON in the profile schema (docs/mock-nvml.md): save it to FILE.json and\n"
              "'mock install --profile FILE.json' (or MOCK_NVML_CONFIG) reads it back.  With --report,\n"
              "prints one flat JSON document of what NVML will report: driver facts and every GPU's values\n"
              "in NVML units (for tests and scripts; not a profile).\n",
              f);
}

static int cmd_install(gv_cli_t *cli, int argc, char **argv)
{
        enum { O_ROOT = 256, O_PROFILE, O_GPUS, O_NODE, O_CDI, O_NODES };
        static const struct option opts[] = {
                { "root", required_argument, NULL, O_ROOT },
                { "profile", required_argument, NULL, O_PROFILE },
                { "gpus", required_argument, NULL, O_GPUS },
                { "node-name", required_argument, NULL, O_NODE },
                { "cdi-dir", required_argument, NULL, O_CDI },
                { "device-nodes", required_argument, NULL, O_NODES },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        gv_mock_install_opts_t o = { 0 };
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case O_ROOT:
                        o.root = optarg;
                        break;
                case O_PROFILE:
                        o.profile = optarg;
                        break;
                case O_GPUS:
                        if (gv_parse_uint(optarg, &o.gpus) < 0 || o.gpus < GV_MOCK_MIN_GPUS ||
                            o.gpus > GV_MOCK_MAX_GPUS)
                                return gv_cli_usage_error(cli, "mock install", "--gpus %s: expected %u..%u", optarg,
                                                          GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
                        break;
                case O_NODE:
                        o.node_name = optarg;
                        break;
                case O_CDI:
                        o.cdi_dir = optarg;
                        break;
                case O_NODES:
                        if (strcmp(optarg, "char") == 0)
                                o.device_nodes = GV_MOCK_NODES_CHAR;
                        else if (strcmp(optarg, "files") == 0)
                                o.device_nodes = GV_MOCK_NODES_FILES;
                        else
                                return gv_cli_usage_error(cli, "mock install",
                                                          "--device-nodes=%s: expected char or files", optarg);
                        break;
                case 'h':
                        usage_install(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock install", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock install", "unexpected argument '%s'", argv[optind]);
        if (!o.root)
                return gv_cli_usage_error(cli, "mock install", "--root DIR is required");

        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_artifacts_t art = { 0 };
        if (gv_mock_locate_artifacts(cli->exe_dir, gv_env("GPU_VALIDATOR_MOCK_DIR"), &art, &err) < 0)
                return gv_cli_fail(cli, "mock", &err);
        o.nvml_lib = art.nvml_lib;
        o.nvidia_smi = art.nvidia_smi;
        gv_mock_install_result_t res = { 0 };
        int r = gv_mock_install(&o, &res, &err);
        gv_mock_artifacts_clear(&art);
        if (r < 0)
                return gv_cli_fail(cli, "mock", &err);
        if (res.device_nodes_fallback)
                gv_cli_logf(cli, GV_LOG_WARN, "mock", NULL,
                            "cannot create character devices (%s); made plain files under %s/dev instead",
                            res.fallback_reason ? res.fallback_reason : "refused", res.root);
        gv_cli_logf(cli, GV_LOG_INFO, "mock", NULL,
                    "%s mock driver root %s: profile %s, %u GPU(s), driver %s, node %s, device nodes %s, CDI spec %s",
                    res.recovered ? "finished the interrupted install of" : res.updated ? "updated" : "installed", res.root, res.profile_name, res.gpu_count,
                    res.driver_version, res.node_name, gv_mock_nodes_name(res.device_nodes), res.cdi_spec);
        gv_mock_install_result_clear(&res);
        return GV_EXIT_OK;
}

static int cmd_remove(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *root = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        root = optarg;
                        break;
                case 'h':
                        usage_remove(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock remove", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock remove", "unexpected argument '%s'", argv[optind]);
        if (!root)
                return gv_cli_usage_error(cli, "mock remove", "--root DIR is required");
        _cleanup_error_ gv_error_t *err = NULL;
        unsigned removed = 0, kept = 0;
        if (gv_mock_remove(root, &removed, &kept, &err) < 0)
                return gv_cli_fail(cli, "mock", &err);
        if (kept)
                gv_cli_logf(cli, GV_LOG_WARN, "mock", NULL,
                            "left %u entr%s in place (changed since install, or folders no longer empty)", kept,
                            kept == 1 ? "y" : "ies");
        gv_cli_logf(cli, GV_LOG_INFO, "mock", NULL, "removed mock driver root %s (%u entries)", root, removed);
        return GV_EXIT_OK;
}

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
        for (unsigned i = 0; i < p->device_count; i++) {
                const gv_mock_device_t *d = &p->devices[i];
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
                json_object_array_add(arr, g);
        }
        json_object_object_add(o, "gpus", arr);
        return o;
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

/* The finalized profile @p in its own schema as JSON text (heap, caller frees); NULL with *err set. */
static char *profile_json_text(const gv_mock_profile_t *p, gv_error_t **err)
{
        _cleanup_free_ char *y = NULL;
        if (gv_mock_profile_to_yaml(p, &y, err) < 0)
                return NULL;
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser)) {
                gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                return NULL;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *) y, strlen(y));
        int ok = yaml_parser_load(&parser, &doc);
        yaml_parser_delete(&parser);
        if (!ok) {
                gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "the written profile does not parse as YAML");
                return NULL;
        }
        json_object *o = yaml_node_json(&doc, yaml_document_get_root_node(&doc), 0);
        yaml_document_delete(&doc);
        if (!o) {
                gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                return NULL;
        }
        char *text = NULL;
        if (asprintf(&text, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                            JSON_C_TO_STRING_NOSLASHESCAPE)) < 0) {
                text = NULL;
                gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        json_object_put(o);
        return text;
}

static int cmd_profiles(gv_cli_t *cli, int argc, char **argv)
{
        enum { O_JSON = 256, O_REPORT, O_GPUS, O_NODE };
        static const struct option opts[] = {
                { "json", required_argument, NULL, O_JSON },
                { "report", required_argument, NULL, O_REPORT },
                { "gpus", required_argument, NULL, O_GPUS },
                { "node-name", required_argument, NULL, O_NODE },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *json = NULL, *node = NULL;
        bool report = false;
        unsigned gpus = 0;
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case O_JSON:
                case O_REPORT:
                        if (json)
                                return gv_cli_usage_error(cli, "mock profiles", "give one of --json and --report");
                        json = optarg;
                        report = c == O_REPORT;
                        break;
                case O_GPUS:
                        if (gv_parse_uint(optarg, &gpus) < 0)
                                return gv_cli_usage_error(cli, "mock profiles", "--gpus %s: expected a number",
                                                          optarg);
                        break;
                case O_NODE:
                        node = optarg;
                        break;
                case 'h':
                        usage_profiles(stdout);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "mock profiles", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "mock profiles", "unexpected argument '%s'", argv[optind]);
        if (!json) {
                for (const char *const *n = gv_mock_profile_builtin_names(); n && *n; n++)
                        printf("%s\n", *n);
                return GV_EXIT_OK;
        }
        _cleanup_error_ gv_error_t *err = NULL;
        gv_mock_profile_t *p = NULL;
        bool file = gv_mock_profile_is_path(json);
        int r = file ? gv_mock_profile_load_file(json, &p, &err) : gv_mock_profile_load_builtin(json, &p, &err);
        if (r == 0 && gpus)
                r = gv_mock_profile_set_gpu_count(p, gpus, &err);
        if (r == 0 && node)
                r = gv_mock_profile_set_node_name(p, node, &err);
        if (r == 0)
                r = gv_mock_profile_finalize(p, &err);
        if (r < 0) {
                gv_mock_profile_free(&p);
                if (err && err->reason == GV_REASON_IO)
                        gv_error_set_reason(&err, GV_REASON_CONFIG);
                return gv_cli_fail(cli, "mock", &err);
        }
        if (report) {
                json_object *o = profile_json(p);
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else {
                _cleanup_free_ char *text = profile_json_text(p, &err);
                if (!text) {
                        gv_mock_profile_free(&p);
                        return gv_cli_fail(cli, "mock", &err);
                }
                fputs(text, stdout);
        }
        gv_mock_profile_free(&p);
        return GV_EXIT_OK;
}

int gv_cmd_mock(gv_cli_t *cli, int argc, char **argv)
{
        if (argc < 2) {
                usage_mock(stderr);
                return GV_EXIT_USAGE;
        }
        const char *sub = argv[1];
        if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
                usage_mock(stdout);
                return GV_EXIT_OK;
        }
        /* The subcommand's own getopt starts after its name. */
        optind = 0;
        if (strcmp(sub, "install") == 0)
                return cmd_install(cli, argc - 1, argv + 1);
        if (strcmp(sub, "remove") == 0)
                return cmd_remove(cli, argc - 1, argv + 1);
        if (strcmp(sub, "profiles") == 0)
                return cmd_profiles(cli, argc - 1, argv + 1);
        return gv_cli_usage_error(cli, "mock", "unknown command '%s' (install, remove, profiles)", sub);
}
