/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client configuration: kubeconfig (clientcmd v1 "Config", see the
 * Kubernetes docs "Organizing Cluster Access Using kubeconfig Files") and
 * the in-cluster service account ("Accessing the Kubernetes API from a Pod").
 */
#include "k8s.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "base/cleanup.h"
#include "base/fileio.h"

#define KUBECONFIG_MAX_BYTES (4u << 20)

void gv_k8s_config_free(gv_k8s_config_t *cfg)
{
        if (!cfg)
                return;
        free(cfg->server);
        free(cfg->ca_file);
        free(cfg->ca_data);
        if (cfg->token) {
                explicit_bzero(cfg->token, strlen(cfg->token));
                free(cfg->token);
        }
        free(cfg->token_file);
        free(cfg->client_cert_file);
        free(cfg->client_cert_data);
        free(cfg->client_key_file);
        if (cfg->client_key_data) {
                explicit_bzero(cfg->client_key_data, cfg->client_key_data_len);
                free(cfg->client_key_data);
        }
        free(cfg->namespace);
        free(cfg->source);
        free(cfg);
}

static void config_freep(gv_k8s_config_t **p)
{
        gv_k8s_config_free(*p);
}
#define _cleanup_config_ _cleanup_(config_freep)

/* ---------------- YAML tree helpers ---------------- */

typedef struct kctx {
        yaml_document_t *doc;
        const char *name;     /* file name for messages */
        const char *base_dir; /* for relative paths */
        gv_error_t **err;
} kctx_t;

static int kerr(kctx_t *k, int errnum, const char *field, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int kerr(kctx_t *k, int errnum, const char *field, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *msg = NULL;
        int n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0)
                return gv_error_oom(k->err);
        int r = gv_error_set(k->err, errnum, GV_REASON_CONFIG, "kubeconfig %s: %s: %s", k->name, field, msg);
        free(msg);
        return r;
}

static yaml_node_t *map_get(kctx_t *k, yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = yaml_document_get_node(k->doc, p->key);
                if (kn && kn->type == YAML_SCALAR_NODE && kn->data.scalar.length == strlen(key) &&
                    memcmp(kn->data.scalar.value, key, kn->data.scalar.length) == 0)
                        return yaml_document_get_node(k->doc, p->value);
        }
        return NULL;
}

static bool is_null_scalar(yaml_node_t *n)
{
        if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        const char *v = (const char *) n->data.scalar.value;
        return n->data.scalar.length == 0 || strcmp(v, "null") == 0 || strcmp(v, "~") == 0;
}

/*
 * A string field: *out = heap copy or NULL when absent/null.  A non-scalar
 * or a scalar with an embedded NUL is an error.
 */
static int get_str(kctx_t *k, yaml_node_t *map, const char *key, const char *where, char **out)
{
        yaml_node_t *n = map_get(k, map, key);
        *out = NULL;
        if (!n || is_null_scalar(n))
                return 0;
        if (n->type != YAML_SCALAR_NODE)
                return kerr(k, EINVAL, where, "\"%s\" is not a string", key);
        if (strlen((const char *) n->data.scalar.value) != n->data.scalar.length)
                return kerr(k, EINVAL, where, "\"%s\" contains a NUL byte", key);
        *out = strndup((const char *) n->data.scalar.value, n->data.scalar.length);
        if (!*out)
                return gv_error_oom(k->err);
        return 0;
}

static int get_bool(kctx_t *k, yaml_node_t *map, const char *key, const char *where, bool *out)
{
        _cleanup_free_ char *s = NULL;
        int r = get_str(k, map, key, where, &s);
        if (r < 0)
                return r;
        *out = false;
        if (!s)
                return 0;
        if (strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0)
                *out = true;
        else if (strcasecmp(s, "false") == 0 || strcasecmp(s, "no") == 0 || strcasecmp(s, "off") == 0)
                *out = false;
        else
                return kerr(k, EINVAL, where, "\"%s\" is not a boolean: \"%.40s\"", key, s);
        return 0;
}

/* Find the entry of list @list (clusters, contexts, users) whose name is
 * @name and return its @inner map (cluster, context, user). */
static int find_named(kctx_t *k, yaml_node_t *root, const char *list, const char *inner, const char *name,
                      yaml_node_t **out)
{
        yaml_node_t *seq = map_get(k, root, list);
        if (!seq || is_null_scalar(seq))
                return kerr(k, EINVAL, list, "missing; \"%s\" is not defined", name);
        if (seq->type != YAML_SEQUENCE_NODE)
                return kerr(k, EINVAL, list, "not a list");
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
                yaml_node_t *e = yaml_document_get_node(k->doc, *it);
                if (!e || e->type != YAML_MAPPING_NODE)
                        return kerr(k, EINVAL, list, "an entry is not a mapping");
                yaml_node_t *nn = map_get(k, e, "name");
                if (!nn || nn->type != YAML_SCALAR_NODE)
                        continue;
                if (nn->data.scalar.length == strlen(name) && memcmp(nn->data.scalar.value, name, strlen(name)) == 0) {
                        yaml_node_t *in = map_get(k, e, inner);
                        if (!in || in->type != YAML_MAPPING_NODE) {
                                _cleanup_free_ char *f = NULL;
                                if (asprintf(&f, "%s[name=%s].%s", list, name, inner) < 0)
                                        return gv_error_oom(k->err);
                                return kerr(k, EINVAL, f, "missing or not a mapping");
                        }
                        *out = in;
                        return 0;
                }
        }
        return kerr(k, EINVAL, list, "no entry named \"%s\"", name);
}

static int resolve_path(kctx_t *k, char **p)
{
        if (!*p || !k->base_dir || (*p)[0] == '/' || !(*p)[0])
                return 0;
        char *j = gv_path_join(k->base_dir, *p);
        if (!j)
                return gv_error_oom(k->err);
        free(*p);
        *p = j;
        return 0;
}

static int get_b64(kctx_t *k, yaml_node_t *map, const char *key, const char *where, char **out, size_t *out_len)
{
        _cleanup_free_ char *s = NULL;
        int r = get_str(k, map, key, where, &s);
        if (r < 0 || !s)
                return r;
        r = gv_k8s_base64_decode(s, strlen(s), out, out_len);
        if (r == -ENOMEM)
                return gv_error_oom(k->err);
        if (r < 0)
                return kerr(k, EINVAL, where, "\"%s\" is not valid base64", key);
        if (*out_len == 0) {
                free(*out);
                *out = NULL;
                return kerr(k, EINVAL, where, "\"%s\" is empty", key);
        }
        return 0;
}

/* The context to use: @context when given, else current-context (heap, *name). */
static int pick_context(kctx_t *k, yaml_node_t *root, const char *context, char **name)
{
        if (context && *context) {
                *name = strdup(context);
                if (!*name)
                        return gv_error_oom(k->err);
                return 0;
        }
        int r = get_str(k, root, "current-context", "current-context", name);
        if (r < 0)
                return r;
        if (!*name || !**name)
                return kerr(k, EINVAL, "current-context", "not set and no context was given");
        return 0;
}

/* A clusters[].cluster entry at @where_cl: server, CA, insecure-skip-tls-verify into @cfg. */
static int parse_cluster(kctx_t *k, yaml_node_t *cluster, const char *where_cl, gv_k8s_config_t *cfg)
{
        int r = get_str(k, cluster, "server", where_cl, &cfg->server);
        if (r < 0)
                return r;
        if (!cfg->server || !*cfg->server)
                return kerr(k, EINVAL, where_cl, "\"server\" missing");
        if (strncmp(cfg->server, "https://", 8) != 0 && strncmp(cfg->server, "http://", 7) != 0)
                return kerr(k, EINVAL, where_cl, "\"server\" is not an http(s) URL: \"%.100s\"", cfg->server);
        size_t sl = strlen(cfg->server);
        while (sl > 0 && cfg->server[sl - 1] == '/')
                cfg->server[--sl] = '\0';
        if ((r = get_str(k, cluster, "certificate-authority", where_cl, &cfg->ca_file)) < 0 ||
            (r = resolve_path(k, &cfg->ca_file)) < 0 ||
            (r = get_b64(k, cluster, "certificate-authority-data", where_cl, &cfg->ca_data, &cfg->ca_data_len)) < 0 ||
            (r = get_bool(k, cluster, "insecure-skip-tls-verify", where_cl, &cfg->insecure_skip_tls_verify)) < 0)
                return r;
        if (cfg->insecure_skip_tls_verify && (cfg->ca_file || cfg->ca_data))
                return kerr(k, EINVAL, where_cl, "%s (insecure-skip-tls-verify: true together with %s)",
                            GV_K8S_ERR_INSECURE_WITH_CA,
                            cfg->ca_file ? "certificate-authority" : "certificate-authority-data");
        return 0;
}

/* The credentials of user @u at @where: token, token file, client certificate and key into @cfg. */
static int parse_credentials(kctx_t *k, yaml_node_t *u, const char *where, gv_k8s_config_t *cfg)
{
        int r;
        if ((r = get_str(k, u, "token", where, &cfg->token)) < 0 ||
            (r = get_str(k, u, "tokenFile", where, &cfg->token_file)) < 0 ||
            (r = resolve_path(k, &cfg->token_file)) < 0 ||
            (r = get_str(k, u, "client-certificate", where, &cfg->client_cert_file)) < 0 ||
            (r = resolve_path(k, &cfg->client_cert_file)) < 0 ||
            (r = get_b64(k, u, "client-certificate-data", where, &cfg->client_cert_data,
                         &cfg->client_cert_data_len)) < 0 ||
            (r = get_str(k, u, "client-key", where, &cfg->client_key_file)) < 0 ||
            (r = resolve_path(k, &cfg->client_key_file)) < 0 ||
            (r = get_b64(k, u, "client-key-data", where, &cfg->client_key_data, &cfg->client_key_data_len)) < 0)
                return r;
        bool has_cert = cfg->client_cert_file || cfg->client_cert_data;
        bool has_key = cfg->client_key_file || cfg->client_key_data;
        if (has_cert != has_key)
                return kerr(k, EINVAL, where, "%s without %s", has_cert ? "client certificate" : "client key",
                            has_cert ? "client key" : "client certificate");
        if (cfg->token && !*cfg->token)
                return kerr(k, EINVAL, where, "\"token\" is empty");
        return 0;
}

/* A users[].user entry at @where_u into @cfg; refuses exec, auth-provider and basic authentication. */
static int parse_user(kctx_t *k, yaml_node_t *user, const char *where_u, gv_k8s_config_t *cfg)
{
        if (map_get(k, user, "exec"))
                return kerr(k, ENOTSUP, where_u, "exec credential plugins are not supported; use a token or client certificate");
        if (map_get(k, user, "auth-provider"))
                return kerr(k, ENOTSUP, where_u, "auth-provider is not supported; use a token or client certificate");
        if (map_get(k, user, "username") || map_get(k, user, "password"))
                return kerr(k, ENOTSUP, where_u, "basic authentication is not supported");
        return parse_credentials(k, user, where_u, cfg);
}

typedef int (*entry_fn)(kctx_t *k, yaml_node_t *entry, const char *where, gv_k8s_config_t *cfg);

/* find_named() the entry @name of @list, then @fn on it with its place "<list>[name=<name>].<item>" for messages. */
static int parse_entry(kctx_t *k, yaml_node_t *root, const char *list, const char *item, const char *name,
                       entry_fn fn, gv_k8s_config_t *cfg)
{
        yaml_node_t *node = NULL;
        int r = find_named(k, root, list, item, name, &node);
        if (r < 0)
                return r;
        _cleanup_free_ char *where = NULL;
        if (asprintf(&where, "%s[name=%s].%s", list, name, item) < 0)
                return gv_error_oom(k->err);
        return fn(k, node, where, cfg);
}

static int parse_doc(kctx_t *k, const char *context, gv_k8s_config_t **out)
{
        gv_error_t **err = k->err;
        yaml_node_t *root = yaml_document_get_root_node(k->doc);
        if (!root || is_null_scalar(root))
                return kerr(k, EINVAL, "(document)", "empty");
        if (root->type != YAML_MAPPING_NODE)
                return kerr(k, EINVAL, "(document)", "not a mapping");

        _cleanup_free_ char *ctx_name = NULL;
        int r = pick_context(k, root, context, &ctx_name);
        if (r < 0)
                return r;
        yaml_node_t *ctx = NULL;
        r = find_named(k, root, "contexts", "context", ctx_name, &ctx);
        if (r < 0)
                return r;

        _cleanup_free_ char *where_ctx = NULL, *cluster_name = NULL, *user_name = NULL;
        if (asprintf(&where_ctx, "contexts[name=%s].context", ctx_name) < 0)
                return gv_error_oom(err);
        r = get_str(k, ctx, "cluster", where_ctx, &cluster_name);
        if (r < 0)
                return r;
        if (!cluster_name || !*cluster_name)
                return kerr(k, EINVAL, where_ctx, "\"cluster\" missing");
        r = get_str(k, ctx, "user", where_ctx, &user_name);
        if (r < 0)
                return r;

        _cleanup_config_ gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        if (!cfg)
                return gv_error_oom(err);
        if ((r = get_str(k, ctx, "namespace", where_ctx, &cfg->namespace)) < 0 ||
            (r = parse_entry(k, root, "clusters", "cluster", cluster_name, parse_cluster, cfg)) < 0)
                return r;
        if (user_name && *user_name && (r = parse_entry(k, root, "users", "user", user_name, parse_user, cfg)) < 0)
                return r;

        if (asprintf(&cfg->source, "kubeconfig %s (context %s)", k->name, ctx_name) < 0) {
                cfg->source = NULL;
                return gv_error_oom(err);
        }
        *out = TAKE_PTR(cfg);
        return 0;
}

int gv_k8s_config_from_kubeconfig_data(const char *data, size_t len, const char *name, const char *base_dir,
                                       const char *context, gv_k8s_config_t **out, gv_error_t **err)
{
        if (!name)
                name = "(data)";
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser))
                return gv_error_oom(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, len);
        if (!yaml_parser_load(&parser, &doc)) {
                int r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "kubeconfig %s: line %zu column %zu: %s%s%s", name,
                                     parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                                     parser.problem ? parser.problem : "invalid YAML",
                                     parser.context ? " " : "", parser.context ? parser.context : "");
                yaml_parser_delete(&parser);
                return r;
        }
        kctx_t k = { .doc = &doc, .name = name, .base_dir = base_dir, .err = err };
        int r = parse_doc(&k, context, out);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return r;
}

int gv_k8s_config_from_kubeconfig(const char *path, const char *context, gv_k8s_config_t **out, gv_error_t **err)
{
        _cleanup_free_ char *data = NULL, *dir = NULL;
        size_t len = 0;
        int r = gv_read_file_at(AT_FDCWD, path, false, KUBECONFIG_MAX_BYTES, &data, &len, err);
        if (r < 0) {
                gv_error_set_reason(err, GV_REASON_CONFIG);
                return gv_error_prefix(err, "kubeconfig");
        }
        const char *slash = strrchr(path, '/');
        if (slash) {
                dir = strndup(path, slash == path ? 1 : (size_t) (slash - path));
                if (!dir)
                        return gv_error_oom(err);
        }
        return gv_k8s_config_from_kubeconfig_data(data, len, path, dir, context, out, err);
}

int gv_k8s_config_in_cluster(const char *host, const char *port, const char *sa_dir, gv_k8s_config_t **out,
                             gv_error_t **err)
{
        if (!host || !*host || !port || !*port)
                return gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                                    "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
        for (const char *p = port; *p; p++)
                if (*p < '0' || *p > '9')
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "in-cluster configuration: KUBERNETES_SERVICE_PORT is not a number: \"%.20s\"", port);
        if (!sa_dir || !*sa_dir)
                sa_dir = GV_K8S_SA_DIR;
        _cleanup_config_ gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        if (!cfg)
                return gv_error_oom(err);
        bool v6 = strchr(host, ':') != NULL && host[0] != '[';
        if (asprintf(&cfg->server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0) {
                cfg->server = NULL;
                return gv_error_oom(err);
        }
        cfg->token_file = gv_path_join(sa_dir, "token");
        cfg->ca_file = gv_path_join(sa_dir, "ca.crt");
        cfg->source = strdup("in-cluster service account");
        _cleanup_free_ char *ns_path = gv_path_join(sa_dir, "namespace");
        if (!cfg->token_file || !cfg->ca_file || !cfg->source || !ns_path)
                return gv_error_oom(err);
        if (access(cfg->token_file, R_OK) < 0)
                return gv_error_set(err, errno, GV_REASON_CONFIG, "in-cluster configuration: %s: %s", cfg->token_file,
                                    strerror(errno));
        if (access(cfg->ca_file, R_OK) < 0)
                return gv_error_set(err, errno, GV_REASON_CONFIG, "in-cluster configuration: %s: %s", cfg->ca_file,
                                    strerror(errno));
        _cleanup_free_ char *ns = NULL;
        if (gv_read_file_at(AT_FDCWD, ns_path, false, 4096, &ns, NULL, NULL) == 0) {
                size_t l = strlen(ns);
                while (l > 0 && (ns[l - 1] == '\n' || ns[l - 1] == '\r' || ns[l - 1] == ' '))
                        ns[--l] = '\0';
                if (l > 0)
                        cfg->namespace = TAKE_PTR(ns);
        }
        *out = TAKE_PTR(cfg);
        return 0;
}

int gv_k8s_config_load(const gv_k8s_env_t *env, gv_k8s_config_t **out, gv_error_t **err)
{
        static const gv_k8s_env_t empty = { 0 };
        if (!env)
                env = &empty;
        if (env->kubeconfig && *env->kubeconfig) {
                const char *colon = strchr(env->kubeconfig, ':');
                _cleanup_free_ char *first = strndup(env->kubeconfig,
                                                     colon ? (size_t) (colon - env->kubeconfig) : strlen(env->kubeconfig));
                if (!first)
                        return gv_error_oom(err);
                return gv_k8s_config_from_kubeconfig(first, env->context, out, err);
        }
        if (env->service_host && *env->service_host && env->service_port && *env->service_port)
                return gv_k8s_config_in_cluster(env->service_host, env->service_port, env->sa_dir, out, err);
        if (env->home && *env->home) {
                _cleanup_free_ char *p = gv_path_join(env->home, ".kube/config");
                if (!p)
                        return gv_error_oom(err);
                if (access(p, F_OK) == 0)
                        return gv_k8s_config_from_kubeconfig(p, env->context, out, err);
        }
        return gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                            "no Kubernetes configuration: no --kubeconfig/KUBECONFIG, not in a cluster "
                            "(KUBERNETES_SERVICE_HOST unset) and no ~/.kube/config");
}
