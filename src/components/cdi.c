/* SPDX-License-Identifier: Apache-2.0 */
/* CDI spec reader on libyaml's document API (see cdi.h). */
#include "cdi.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/cleanup.h"

static void strv_free(char **v)
{
        gv_strv_freep(&v);
}

void gv_cdi_spec_clear(gv_cdi_spec_t *s)
{
        if (!s)
                return;
        free(s->cdi_version);
        free(s->kind);
        strv_free(s->nodes);
        for (size_t i = 0; i < s->n_devices; i++) {
                free(s->devices[i].name);
                strv_free(s->devices[i].nodes);
        }
        free(s->devices);
        *s = (gv_cdi_spec_t) { 0 };
}

const gv_cdi_device_t *gv_cdi_spec_device(const gv_cdi_spec_t *s, const char *name)
{
        for (size_t i = 0; s && i < s->n_devices; i++)
                if (s->devices[i].name && strcmp(s->devices[i].name, name) == 0)
                        return &s->devices[i];
        return NULL;
}

typedef struct parse_ctx {
        yaml_document_t *doc;
        gv_error_t **err;
} parse_ctx_t;

static bool scalar_is(yaml_node_t *n, const char *s)
{
        size_t l = strlen(s);
        return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == l &&
               memcmp(n->data.scalar.value, s, l) == 0;
}

/* The value node of @key in mapping @map, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                if (scalar_is(k, key))
                        return yaml_document_get_node(doc, p->value);
        }
        return NULL;
}

static unsigned long line_of(yaml_node_t *n)
{
        return n ? (unsigned long) n->start_mark.line + 1 : 0;
}

/* Copy a scalar node's text (heap); -EINVAL unless a scalar, optionally non-empty. */
static int scalar_dup(parse_ctx_t *c, yaml_node_t *n, const char *what, bool non_empty, char **out)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: %s must be a string", line_of(n),
                                    what);
        if (non_empty && n->data.scalar.length == 0)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: %s is empty", line_of(n), what);
        if (memchr(n->data.scalar.value, '\0', n->data.scalar.length))
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: %s contains a NUL byte",
                                    line_of(n), what);
        char *s = strndup((const char *) n->data.scalar.value, n->data.scalar.length);
        if (!s)
                return gv_error_oom(c->err);
        *out = s;
        return 0;
}

/* Read containerEdits.deviceNodes of mapping @owner into a NULL-terminated heap list. */
static int read_nodes(parse_ctx_t *c, yaml_node_t *owner, char ***out)
{
        yaml_node_t *edits = map_get(c->doc, owner, "containerEdits");
        yaml_node_t *seq = edits ? map_get(c->doc, edits, "deviceNodes") : NULL;
        if (edits && edits->type != YAML_MAPPING_NODE &&
            !(edits->type == YAML_SCALAR_NODE && edits->data.scalar.length == 0))
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: containerEdits must be a mapping",
                                    line_of(edits));
        size_t n = 0;
        if (seq && seq->type == YAML_SEQUENCE_NODE)
                n = (size_t) (seq->data.sequence.items.top - seq->data.sequence.items.start);
        else if (seq && !(seq->type == YAML_SCALAR_NODE && seq->data.scalar.length == 0))
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: deviceNodes must be a list",
                                    line_of(seq));
        _cleanup_strv_free_ char **nodes = calloc(n + 1, sizeof(*nodes));
        if (!nodes)
                return gv_error_oom(c->err);
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = yaml_document_get_node(c->doc, seq->data.sequence.items.start[i]);
                if (!item || item->type != YAML_MAPPING_NODE)
                        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG,
                                            "line %lu: a deviceNodes item must be a mapping", line_of(item));
                yaml_node_t *path = map_get(c->doc, item, "path");
                yaml_node_t *host = map_get(c->doc, item, "hostPath");
                _cleanup_free_ char *p = NULL, *h = NULL;
                int r = scalar_dup(c, path, "deviceNodes path", true, &p);
                if (r < 0)
                        return r;
                if (p[0] != '/')
                        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG,
                                            "line %lu: device node path \"%s\" is not absolute", line_of(path), p);
                if (host) {
                        r = scalar_dup(c, host, "deviceNodes hostPath", true, &h);
                        if (r < 0)
                                return r;
                        if (h[0] != '/')
                                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG,
                                                    "line %lu: device node hostPath \"%s\" is not absolute",
                                                    line_of(host), h);
                }
                nodes[i] = h ? TAKE_PTR(h) : TAKE_PTR(p);
        }
        *out = TAKE_PTR(nodes);
        return 0;
}

static int parse_doc(parse_ctx_t *c, gv_cdi_spec_t *spec)
{
        yaml_node_t *root = yaml_document_get_root_node(c->doc);
        if (!root)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "empty document");
        if (root->type != YAML_MAPPING_NODE)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: a CDI spec must be a mapping",
                                    line_of(root));
        int r;
        yaml_node_t *ver = map_get(c->doc, root, "cdiVersion");
        if (ver && (r = scalar_dup(c, ver, "cdiVersion", false, &spec->cdi_version)) < 0)
                return r;
        yaml_node_t *kind = map_get(c->doc, root, "kind");
        if (!kind)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "no \"kind\" key");
        if ((r = scalar_dup(c, kind, "kind", true, &spec->kind)) < 0)
                return r;
        if ((r = read_nodes(c, root, &spec->nodes)) < 0)
                return r;
        yaml_node_t *devs = map_get(c->doc, root, "devices");
        if (!devs)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "no \"devices\" key");
        if (devs->type != YAML_SEQUENCE_NODE)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: devices must be a list",
                                    line_of(devs));
        size_t n = (size_t) (devs->data.sequence.items.top - devs->data.sequence.items.start);
        spec->devices = calloc(n ? n : 1, sizeof(*spec->devices));
        if (!spec->devices)
                return gv_error_oom(c->err);
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = yaml_document_get_node(c->doc, devs->data.sequence.items.start[i]);
                if (!item || item->type != YAML_MAPPING_NODE)
                        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG,
                                            "line %lu: a devices item must be a mapping", line_of(item));
                gv_cdi_device_t *d = &spec->devices[spec->n_devices];
                yaml_node_t *name = map_get(c->doc, item, "name");
                if (!name)
                        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "line %lu: device without a name",
                                            line_of(item));
                if ((r = scalar_dup(c, name, "device name", true, &d->name)) < 0)
                        return r;
                spec->n_devices++;
                if ((r = read_nodes(c, item, &d->nodes)) < 0)
                        return r;
        }
        return 0;
}

int gv_cdi_spec_parse(const char *data, size_t len, gv_cdi_spec_t *out, gv_error_t **err)
{
        if (len > GV_CDI_SPEC_MAX_BYTES)
                return gv_error_set(err, EFBIG, GV_REASON_CONFIG, "CDI spec larger than %zu bytes",
                                    GV_CDI_SPEC_MAX_BYTES);
        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser))
                return gv_error_oom(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, len);
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
                int r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "YAML error at line %lu: %s%s%s",
                                     (unsigned long) parser.problem_mark.line + 1,
                                     parser.problem ? parser.problem : "unknown problem",
                                     parser.context ? " " : "", parser.context ? parser.context : "");
                yaml_parser_delete(&parser);
                return r;
        }
        gv_cdi_spec_t spec = { 0 };
        parse_ctx_t c = { .doc = &doc, .err = err };
        int r = parse_doc(&c, &spec);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        if (r < 0) {
                gv_cdi_spec_clear(&spec);
                return r;
        }
        *out = spec;
        return 0;
}
