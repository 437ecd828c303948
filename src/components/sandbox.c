/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers of the sandbox, vGPU and GPUDirect components (see sandbox.h):
 * the sysfs root, loaded modules, node labels, workload config, .driver-ctr-ready.
 */
#include "sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "kube-internal.h"

const char *gv_sysfs_root(const gv_sandbox_config_t *sb)
{
        return sb && sb->sysfs_root && *sb->sysfs_root ? sb->sysfs_root : "/sys";
}

int gv_result_fact(gv_result_t *r, const char *key, const char *value, gv_error_t **err)
{
        return gv_kvlist_set(&r->facts, key, value ? value : "", err);
}

bool gv_module_loaded(const char *sysfs_root, const char *name, char **detail)
{
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/module/%s", sysfs_root, name) < 0)
                return false;
        struct stat st;
        bool present = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
        _cleanup_free_ char *state = present ? gv_sysfs_attr(dir, "initstate") : NULL;
        bool live = present && (!state || strcmp(state, "live") == 0);
        if (detail) {
                if (asprintf(detail, "%s %s", dir,
                             !present ? "is absent" : live ? "is live" : "is not live") < 0)
                        *detail = NULL;
                if (detail && *detail && present && !live) {
                        char *more = NULL;
                        if (asprintf(&more, "%s (initstate %s)", *detail, state) >= 0) {
                                free(*detail);
                                *detail = more;
                        }
                }
        }
        return live;
}

int gv_node_label(const gv_config_t *cfg, const char *component, const char *key, char **value, gv_error_t **err)
{
        *value = NULL;
        if (!cfg->kube.node_name || !*cfg->kube.node_name)
                return 0;
        gv_k8s_client_t *client = NULL;
        int r = gv_kube_client(cfg, component, &client, err);
        if (r < 0)
                return gv_error_prefix(err, "read label %s of node %s", key, cfg->kube.node_name);
        _cleanup_json_ json_object *node = NULL;
        r = gv_k8s_node_get(client, cfg->kube.node_name, &node, err);
        gv_k8s_client_free(client);
        if (r < 0)
                return gv_error_prefix(err, "read label %s of node %s", key, cfg->kube.node_name);
        json_object *meta = NULL, *labels = NULL, *v = NULL;
        if (json_object_object_get_ex(node, "metadata", &meta) && json_object_object_get_ex(meta, "labels", &labels) &&
            json_object_object_get_ex(labels, key, &v) && json_object_is_type(v, json_type_string)) {
                *value = strdup(json_object_get_string(v));
                if (!*value)
                        return gv_error_oom(err);
        }
        return 1;
}

static const char *workload_allowed(const char *v)
{
        static const char *const allowed[] = { "container", "vm-passthrough", "vm-vgpu" };
        for (size_t i = 0; v && i < GV_ARRAY_SIZE(allowed); i++)
                if (strcmp(v, allowed[i]) == 0)
                        return allowed[i];
        return NULL;
}

int gv_workload_config(const gv_config_t *cfg, const char *component, const char **config, const char **source,
                       gv_error_t **err)
{
        const char *src = "default";
        const char *def = "vm-passthrough"; /* upstream validator's own default */
        if (cfg->sandbox.default_workload_config && *cfg->sandbox.default_workload_config) {
                if (workload_allowed(cfg->sandbox.default_workload_config)) {
                        def = workload_allowed(cfg->sandbox.default_workload_config);
                        src = "DEFAULT_GPU_WORKLOAD_CONFIG";
                } else {
                        gv_cfg_logf(cfg, GV_LOG_WARN, component, GV_REASON_CONFIG,
                                    "DEFAULT_GPU_WORKLOAD_CONFIG=%s is not container, vm-passthrough or vm-vgpu; "
                                    "using vm-passthrough",
                                    cfg->sandbox.default_workload_config);
                }
        }
        _cleanup_free_ char *label = NULL;
        int r = gv_node_label(cfg, component, "nvidia.com/gpu.workload.config", &label, err);
        if (r < 0)
                return r;
        const char *v = workload_allowed(label);
        if (label && !v)
                gv_cfg_logf(cfg, GV_LOG_WARN, component, GV_REASON_CONFIG,
                            "node %s: label nvidia.com/gpu.workload.config=%s is not container, vm-passthrough or "
                            "vm-vgpu; using %s",
                            cfg->kube.node_name, label, def);
        *config = v ? v : def;
        if (source)
                *source = v ? "label" : src;
        return 0;
}

int gv_sandbox_begin(const gv_config_t *cfg, gv_store_t *store, const char *component, const char *want,
                     gv_result_t *result, const char **config, gv_error_t **err)
{
        const char *source = NULL;
        int r = gv_workload_config(cfg, component, config, &source, err);
        if (r < 0)
                return r;
        r = gv_store_write_workload_type(store, *config, err);
        if (r < 0)
                return r;
        if ((r = gv_result_fact(result, "WORKLOAD_CONFIG", *config, err)) < 0)
                return r;
        if (strcmp(*config, want) == 0)
                return 1;
        result->skipped = true;
        gv_result_summary(result, "workload config is %s (%s), not %s: nothing to validate", *config, source,
                     want);
        return 0;
}

/* ---- .driver-ctr-ready ---- */

static int ctr_flag_from_doc(yaml_document_t *doc, const char *key, const char *file, gv_error_t **err)
{
        yaml_node_t *root = yaml_document_get_root_node(doc);
        if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
                return 0; /* empty file */
        if (root->type != YAML_MAPPING_NODE)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: line %lu: expected KEY: true|false lines",
                                    file, (unsigned long) root->start_mark.line + 1);
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                yaml_node_t *v = yaml_document_get_node(doc, p->value);
                if (!k || k->type != YAML_SCALAR_NODE || strlen(key) != k->data.scalar.length ||
                    memcmp(k->data.scalar.value, key, k->data.scalar.length) != 0)
                        continue;
                if (!v || v->type != YAML_SCALAR_NODE)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: line %lu: %s is not true or false",
                                            file, (unsigned long) (k->start_mark.line + 1), key);
                const char *s = (const char *) v->data.scalar.value;
                if (strcasecmp(s, "true") == 0)
                        return 1;
                if (strcasecmp(s, "false") == 0)
                        return 0;
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: line %lu: %s: '%.40s' is not true or false",
                                    file, (unsigned long) (v->start_mark.line + 1), key, s);
        }
        return 0;
}

int gv_driver_ctr_flag(const gv_config_t *cfg, const char *key, bool *file_present, gv_error_t **err)
{
        if (file_present)
                *file_present = false;
        _cleanup_free_ char *file = gv_path_join(cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR,
                                                 GV_DRIVER_CTR_READY_FILE);
        if (!file)
                return gv_error_oom(err);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *rerr = NULL;
        int r = gv_read_file_at(AT_FDCWD, file, true, (size_t) 64 * 1024, &text, &len, &rerr);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                if (err)
                        *err = TAKE_PTR(rerr);
                return r;
        }
        if (file_present)
                *file_present = true;
        return gv_driver_ctr_flag_parse(text, len, key, file, err);
}

int gv_driver_ctr_flag_parse(const char *text, size_t len, const char *key, const char *file, gv_error_t **err)
{
        int r;
        if (memchr(text, '\0', len))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: holds a NUL byte", file);
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser))
                return gv_error_oom(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: line %lu: %s", file,
                                 (unsigned long) parser.problem_mark.line + 1,
                                 parser.problem ? parser.problem : "not YAML");
                yaml_parser_delete(&parser);
                return r;
        }
        r = ctr_flag_from_doc(&doc, key, file, err);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return r;
}

int gv_gpudirect_validate(const gv_config_t *cfg, const char *component, const char *flag, const char *module,
                          gv_result_t *result, gv_error_t **err)
{
        bool present = false;
        int r = gv_driver_ctr_flag(cfg, flag, &present, err);
        if (r < 0)
                return r;
        if (r == 0) {
                result->skipped = true;
                gv_result_summary(result, "%s is not true in %s/" GV_DRIVER_CTR_READY_FILE "%s", flag,
                             cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR,
                             present ? "" : " (no such file: no driver container)");
                return 0;
        }
        _cleanup_free_ char *detail = NULL;
        if (!gv_module_loaded(gv_sysfs_root(&cfg->sandbox), module, &detail))
                return gv_error_set(err, ENOENT, GV_REASON_MODULE_NOT_LOADED,
                                    "%s: true in " GV_DRIVER_CTR_READY_FILE " but kernel module %s is not loaded (%s)", flag,
                                    module, detail ? detail : "absent");
        if ((r = gv_result_fact(result, "KERNEL_MODULE", module, err)) < 0)
                return r;
        gv_result_summary(result, "kernel module %s loaded (%s)", module, flag);
        (void) component;
        return 0;
}
