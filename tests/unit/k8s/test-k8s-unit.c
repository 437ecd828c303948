/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the Kubernetes client: kubeconfig, in-cluster config, escaping, backoff, lines, events. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "k8s/k8s.h"

/* base64 of "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n" etc. are made at run time. */
static char *b64(const char *s)
{
        static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = strlen(s);
        char *out = malloc(n / 3 * 4 + 5), *p = out;
        assert_non_null(out);
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned char) s[i] << 16;
                if (i + 1 < n)
                        v |= (unsigned char) s[i + 1] << 8;
                if (i + 2 < n)
                        v |= (unsigned char) s[i + 2];
                *p++ = tab[(v >> 18) & 63];
                *p++ = tab[(v >> 12) & 63];
                *p++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
                *p++ = i + 2 < n ? tab[v & 63] : '=';
        }
        *p = '\0';
        return out;
}

static int parse(const char *yaml, const char *context, gv_k8s_config_t **cfg, gv_error_t **err)
{
        return gv_k8s_config_from_kubeconfig_data(yaml, strlen(yaml), "/etc/kc", "/etc", context, cfg, err);
}

static void test_kubeconfig_token(void **state)
{
        const char *y = "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
                        "clusters:\n- name: other\n  cluster:\n    server: https://other:6443\n"
                        "- name: c1\n  cluster:\n    server: https://10.0.0.1:6443/\n    certificate-authority: ca.pem\n"
                        "contexts:\n- name: prod\n  context:\n    cluster: c1\n    user: u1\n    namespace: gpu-operator\n"
                        "users:\n- name: u1\n  user:\n    token: abc.def\n";
        gv_k8s_config_t *cfg = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(parse(y, NULL, &cfg, &err), 0);
        assert_string_equal(cfg->server, "https://10.0.0.1:6443");
        assert_string_equal(cfg->ca_file, "/etc/ca.pem");
        assert_null(cfg->ca_data);
        assert_false(cfg->insecure_skip_tls_verify);
        assert_string_equal(cfg->token, "abc.def");
        assert_string_equal(cfg->namespace, "gpu-operator");
        assert_non_null(strstr(cfg->source, "context prod"));
        gv_k8s_config_free(cfg);
}

static void test_kubeconfig_data_and_certs(void **state)
{
        _cleanup_free_ char *ca = b64("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n");
        _cleanup_free_ char *crt = b64("CERT");
        _cleanup_free_ char *key = b64("KEY!");
        _cleanup_free_ char *y = NULL;
        assert_true(asprintf(&y,
                             "current-context: a\nclusters:\n- name: c\n  cluster:\n    server: https://k:443\n"
                             "    certificate-authority-data: %s\n"
                             "contexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                             "users:\n- name: u\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n"
                             "    tokenFile: /var/run/tok\n",
                             ca, crt, key) > 0);
        gv_k8s_config_t *cfg = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(parse(y, NULL, &cfg, &err), 0);
        assert_int_equal(cfg->ca_data_len, strlen("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"));
        assert_memory_equal(cfg->ca_data, "-----BEGIN", 10);
        assert_int_equal(cfg->client_cert_data_len, 4);
        assert_memory_equal(cfg->client_cert_data, "CERT", 4);
        assert_memory_equal(cfg->client_key_data, "KEY!", 4);
        assert_string_equal(cfg->token_file, "/var/run/tok");
        assert_null(cfg->token);
        assert_null(cfg->namespace);
        gv_k8s_config_free(cfg);
}

static void test_kubeconfig_insecure_and_context(void **state)
{
        const char *y = "current-context: a\n"
                        "clusters:\n- name: c\n  cluster:\n    server: https://k\n    insecure-skip-tls-verify: true\n"
                        "- name: d\n  cluster:\n    server: http://127.0.0.1:8080\n"
                        "contexts:\n- name: a\n  context: {cluster: c, user: u}\n- name: b\n  context: {cluster: d}\n"
                        "users:\n- name: u\n  user: {token: t}\n";
        gv_k8s_config_t *cfg = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(parse(y, NULL, &cfg, &err), 0);
        assert_true(cfg->insecure_skip_tls_verify);
        gv_k8s_config_free(cfg);
        cfg = NULL;
        assert_int_equal(parse(y, "b", &cfg, &err), 0);
        assert_false(cfg->insecure_skip_tls_verify);
        assert_string_equal(cfg->server, "http://127.0.0.1:8080");
        assert_null(cfg->token);
        gv_k8s_config_free(cfg);
}

/* Each broken document must fail with the file name and the named field in the message. */
static void test_kubeconfig_errors(void **state)
{
        static const struct {
                const char *yaml;
                int errnum;
                const char *needle;
        } cases[] = {
                { "current-context: [\n", -EINVAL, "line " },
                { "", -EINVAL, "empty" },
                { "- a\n- b\n", -EINVAL, "not a mapping" },
                { "clusters: []\n", -EINVAL, "current-context" },
                { "current-context: x\ncontexts: []\n", -EINVAL, "no entry named \"x\"" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n", -EINVAL, "\"cluster\" missing" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n", -EINVAL, "clusters" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {}\n",
                  -EINVAL, "clusters[name=c].cluster: \"server\" missing" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: ftp://a}\n",
                  -EINVAL, "not an http(s) URL" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster:\n"
                  "    server: https://a\n    certificate-authority-data: '!!!'\n",
                  -EINVAL, "\"certificate-authority-data\" is not valid base64" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster:\n"
                  "    server: https://a\n    insecure-skip-tls-verify: maybe\n",
                  -EINVAL, "not a boolean" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                  "  cluster: {server: https://a}\nusers:\n- name: u\n  user:\n    exec: {command: aws}\n",
                  -ENOTSUP, "users[name=u].user: exec" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                  "  cluster: {server: https://a}\nusers:\n- name: u\n  user:\n    client-certificate: a.crt\n",
                  -EINVAL, "client certificate without client key" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                  "  cluster: {server: https://a}\nusers:\n- name: u\n  user:\n    token: [1, 2]\n",
                  -EINVAL, "\"token\" is not a string" },
                { "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: v}\nclusters:\n- name: c\n"
                  "  cluster: {server: https://a}\nusers:\n- name: u\n  user: {}\n",
                  -EINVAL, "users: no entry named \"v\"" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                gv_k8s_config_t *cfg = NULL;
                _cleanup_error_ gv_error_t *err = NULL;
                int r = parse(cases[i].yaml, NULL, &cfg, &err);
                if (r != cases[i].errnum || !err || !strstr(err->msg, cases[i].needle) ||
                    !strstr(err->msg, "kubeconfig /etc/kc"))
                        fail_msg("case %zu: r=%d msg=%s", i, r, err ? err->msg : "(none)");
                assert_null(cfg);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
        }
}

static char *make_tmpdir(void)
{
        char *d = strdup("/tmp/gv-k8s-unit-XXXXXX");
        assert_non_null(d);
        assert_non_null(mkdtemp(d));
        return d;
}

static void write_file(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void rm_tree(const char *dir)
{
        const char *names[] = { "token", "ca.crt", "namespace", "config", ".kube/config", ".kube" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++) {
                _cleanup_free_ char *p = gv_path_join(dir, names[i]);
                if (unlink(p) < 0)
                        rmdir(p);
        }
        rmdir(dir);
}

static void test_in_cluster(void **state)
{
        _cleanup_free_ char *dir = make_tmpdir();
        gv_k8s_config_t *cfg = NULL;
        _cleanup_error_ gv_error_t *err = NULL;

        assert_int_equal(gv_k8s_config_in_cluster("10.0.0.1", "443", dir, &cfg, &err), -ENOENT); /* no token */
        assert_non_null(strstr(err->msg, "token"));
        write_file(dir, "token", "tok\n");
        write_file(dir, "ca.crt", "pem");
        write_file(dir, "namespace", "gpu-operator\n");
        assert_int_equal(gv_k8s_config_in_cluster("fd00::1", "6443", dir, &cfg, &err), 0);
        assert_string_equal(cfg->server, "https://[fd00::1]:6443");
        assert_string_equal(cfg->namespace, "gpu-operator");
        assert_non_null(strstr(cfg->token_file, "/token"));
        assert_null(cfg->token);
        gv_k8s_config_free(cfg);
        cfg = NULL;
        assert_int_equal(gv_k8s_config_in_cluster("", "443", dir, &cfg, &err), -ENOENT);
        assert_int_equal(gv_k8s_config_in_cluster("h", "44x", dir, &cfg, &err), -EINVAL);

        /* Precedence: kubeconfig, then in-cluster, then ~/.kube/config. */
        write_file(dir, "config", "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                                  "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n");
        _cleanup_free_ char *kc = gv_path_join(dir, "config");
        gv_k8s_env_t env = { .kubeconfig = kc, .service_host = "10.0.0.1", .service_port = "443", .sa_dir = dir };
        assert_int_equal(gv_k8s_config_load(&env, &cfg, &err), 0);
        assert_string_equal(cfg->server, "http://127.0.0.1:1");
        gv_k8s_config_free(cfg);
        cfg = NULL;
        env.kubeconfig = NULL;
        assert_int_equal(gv_k8s_config_load(&env, &cfg, &err), 0);
        assert_string_equal(cfg->server, "https://10.0.0.1:443");
        gv_k8s_config_free(cfg);
        cfg = NULL;
        env.service_host = NULL;
        env.home = dir;
        assert_int_equal(gv_k8s_config_load(&env, &cfg, &err), -ENOENT);
        assert_non_null(strstr(err->msg, "no Kubernetes configuration"));
        _cleanup_free_ char *kd = gv_path_join(dir, ".kube");
        assert_int_equal(mkdir(kd, 0700), 0);
        write_file(kd, "config", "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                                 "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:2'}\n");
        assert_int_equal(gv_k8s_config_load(&env, &cfg, &err), 0);
        assert_string_equal(cfg->server, "http://127.0.0.1:2");
        gv_k8s_config_free(cfg);
        cfg = NULL;
        /* A named kubeconfig that is missing is final, with its path in the message. */
        env.kubeconfig = "/nonexistent/kc:/other";
        assert_int_equal(gv_k8s_config_load(&env, &cfg, &err), -ENOENT);
        assert_non_null(strstr(err->msg, "/nonexistent/kc"));
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        rm_tree(dir);
}

static void test_escape_and_paths(void **state)
{
        _cleanup_free_ char *a = gv_k8s_escape("app=nvidia-cuda-validator,x!=y z/~");
        assert_string_equal(a, "app%3Dnvidia-cuda-validator%2Cx%21%3Dy%20z%2F~");
        _cleanup_free_ char *p = gv_k8s_build_path("/api/v1/pods", "labelSelector", "a=b", "fieldSelector", NULL,
                                                   "x", "", "fieldSelector", "spec.nodeName=n1", NULL);
        assert_string_equal(p, "/api/v1/pods?labelSelector=a%3Db&fieldSelector=spec.nodeName%3Dn1");
        _cleanup_free_ char *q = gv_k8s_build_path("/x?watch=1", "k", "v", NULL);
        assert_string_equal(q, "/x?watch=1&k=v");
        _cleanup_free_ char *r = gv_k8s_build_path("/x", "k", NULL, NULL);
        assert_string_equal(r, "/x");
}

static void test_backoff(void **state)
{
        assert_int_equal(gv_k8s_backoff_ms(1, 100, 1000, 0), 50);
        assert_int_equal(gv_k8s_backoff_ms(1, 100, 1000, UINT32_MAX), 100);
        assert_int_equal(gv_k8s_backoff_ms(2, 100, 1000, UINT32_MAX), 200);
        assert_int_equal(gv_k8s_backoff_ms(4, 100, 1000, UINT32_MAX), 800);
        assert_int_equal(gv_k8s_backoff_ms(5, 100, 1000, UINT32_MAX), 1000);
        assert_int_equal(gv_k8s_backoff_ms(500, 100, 1000, UINT32_MAX), 1000);
        for (unsigned a = 1; a < 40; a++) {
                unsigned d = gv_k8s_backoff_ms(a, 250, 30000, (uint32_t) (a * 2654435761u));
                assert_true(d <= 30000);
                assert_true(d >= 125);
        }
}

static void test_retry_after(void **state)
{
        unsigned long ms = 0;
        assert_int_equal(gv_k8s_parse_retry_after(" 3\r\n", 0, &ms), 0);
        assert_int_equal(ms, 3000);
        assert_int_equal(gv_k8s_parse_retry_after("0", 0, &ms), 0);
        assert_int_equal(ms, 0);
        /* Sun, 06 Nov 1994 08:49:37 GMT = 784111777 */
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770, &ms), 0);
        assert_int_equal(ms, 7000);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111800, &ms), 0);
        assert_int_equal(ms, 0);
        assert_int_equal(gv_k8s_parse_retry_after("-1", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("3s", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Foo 1994 08:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 1994 08:49:37 UTC", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("99999999999999999999999", 0, &ms), -EINVAL);
        /* IMF-fixdate is fixed-width digits (RFC 9110 5.6.7): no signs, no short fields, no
         * day that timegm() would roll into the next month. */
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 1994 -1:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 1994 08:-9:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, +6 Nov 1994 08:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 6 Nov 1994 8:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 31 Feb 1994 08:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 Nov 01994 08:49:37 GMT", 0, &ms), -EINVAL);
        assert_int_equal(gv_k8s_parse_retry_after("Sun, 06 nov 1994 08:49:37 GMT", 784111770, &ms), -EINVAL);
}

static void test_http_errno(void **state)
{
        assert_int_equal(gv_k8s_http_errno(200, NULL), 0);
        assert_int_equal(gv_k8s_http_errno(201, NULL), 0);
        assert_int_equal(gv_k8s_http_errno(404, NULL), -ENOENT);
        assert_int_equal(gv_k8s_http_errno(403, NULL), -EACCES);
        assert_int_equal(gv_k8s_http_errno(401, NULL), -EPERM);
        assert_int_equal(gv_k8s_http_errno(409, "AlreadyExists"), -EEXIST);
        assert_int_equal(gv_k8s_http_errno(409, "Conflict"), -EBUSY);
        assert_int_equal(gv_k8s_http_errno(410, "Expired"), -ESTALE);
        assert_int_equal(gv_k8s_http_errno(422, NULL), -EINVAL);
        assert_int_equal(gv_k8s_http_errno(429, NULL), -EAGAIN);
        assert_int_equal(gv_k8s_http_errno(503, NULL), -EIO);
}

typedef struct lines {
        char *got[16];
        size_t n;
        int stop_at;
} lines_t;

static int on_line(void *ud, char *line, size_t len)
{
        lines_t *l = ud;
        assert_int_equal(strlen(line), len);
        assert_true(l->n < 16);
        l->got[l->n++] = strdup(line);
        if (l->stop_at && (int) l->n == l->stop_at)
                return 1;
        return 0;
}

static void lines_free(lines_t *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->got[i]);
        l->n = 0;
}

static void test_linebuf(void **state)
{
        gv_k8s_linebuf_t lb = { 0 };
        lines_t l = { 0 };
        const char *stream = "{\"a\":1}\r\n\n{\"b\":\n2}\n{\"c\":3}\n{\"partial";
        /* Feed one byte at a time: lines split across every possible chunk boundary. */
        for (size_t i = 0; stream[i]; i++)
                assert_int_equal(gv_k8s_linebuf_feed(&lb, stream + i, 1, on_line, &l), 0);
        assert_int_equal(l.n, 4);
        assert_string_equal(l.got[0], "{\"a\":1}");
        assert_string_equal(l.got[1], "{\"b\":");
        assert_string_equal(l.got[2], "2}");
        assert_string_equal(l.got[3], "{\"c\":3}");
        assert_int_equal(gv_k8s_linebuf_feed(&lb, "\"}\n", 3, on_line, &l), 0);
        assert_string_equal(l.got[4], "{\"partial\"}");
        lines_free(&l);
        /* The callback can stop the feed. */
        l.stop_at = 1;
        assert_int_equal(gv_k8s_linebuf_feed(&lb, "x\ny\n", 4, on_line, &l), 1);
        assert_int_equal(l.n, 1);
        lines_free(&l);
        gv_k8s_linebuf_clear(&lb);

        /* A huge line is fine up to max_line, refused past it, and the buffer recovers. */
        lb.max_line = 1 << 20;
        size_t big = (1 << 20) - 1;
        char *data = malloc(big + 2);
        assert_non_null(data);
        memset(data, 'x', big);
        data[big] = '\n';
        l.stop_at = 0;
        for (size_t off = 0; off < big + 1; off += 4093) {
                size_t n = big + 1 - off < 4093 ? big + 1 - off : 4093;
                assert_int_equal(gv_k8s_linebuf_feed(&lb, data + off, n, on_line, &l), 0);
        }
        assert_int_equal(l.n, 1);
        assert_int_equal(strlen(l.got[0]), big);
        lines_free(&l);
        memset(data, 'x', big + 2); /* max_line + 1 bytes without a newline */
        assert_int_equal(gv_k8s_linebuf_feed(&lb, data, big + 2, on_line, &l), -EMSGSIZE);
        assert_int_equal(gv_k8s_linebuf_feed(&lb, "ok\n", 3, on_line, &l), 0);
        assert_int_equal(l.n, 1);
        assert_string_equal(l.got[0], "ok");
        lines_free(&l);
        free(data);
        gv_k8s_linebuf_clear(&lb);
}

static void test_event_parse(void **state)
{
        gv_k8s_event_type_t t;
        json_object *o = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        const char *ok = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"7\"}}}";
        assert_int_equal(gv_k8s_watch_event_parse(ok, strlen(ok), &t, &o, &err), 0);
        assert_int_equal(t, GV_K8S_EVENT_MODIFIED);
        assert_true(json_object_is_type(o, json_type_object));
        json_object_put(o);
        const char *bm = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}  ";
        assert_int_equal(gv_k8s_watch_event_parse(bm, strlen(bm), &t, &o, &err), 0);
        assert_int_equal(t, GV_K8S_EVENT_BOOKMARK);
        json_object_put(o);
        static const char *const bad[] = {
                "", "{", "[]", "{\"type\":\"ADDED\"}", "{\"type\":\"NOPE\",\"object\":{}}",
                "{\"type\":1,\"object\":{}}", "{\"type\":\"ADDED\",\"object\":{}} {}", "{\"type\":\"ADDED\",\"object\":[]}",
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++) {
                o = NULL;
                assert_int_equal(gv_k8s_watch_event_parse(bad[i], strlen(bad[i]), &t, &o, &err), -EBADMSG);
                assert_null(o);
                assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        }
        assert_string_equal(gv_k8s_event_type_name(GV_K8S_EVENT_DELETED), "DELETED");
        assert_string_equal(gv_k8s_event_type_name((gv_k8s_event_type_t) 99), "UNKNOWN");
}

static void test_base64(void **state)
{
        char *out = NULL;
        size_t n = 0;
        assert_int_equal(gv_k8s_base64_decode("aGVs\nbG8=", 9, &out, &n), 0);
        assert_int_equal(n, 5);
        assert_string_equal(out, "hello");
        free(out);
        assert_int_equal(gv_k8s_base64_decode("aGVsbG8", 7, &out, &n), 0); /* padding optional */
        assert_string_equal(out, "hello");
        free(out);
        assert_int_equal(gv_k8s_base64_decode("a", 1, &out, &n), -EINVAL);
        assert_int_equal(gv_k8s_base64_decode("aG=Vs", 5, &out, &n), -EINVAL);
        assert_int_equal(gv_k8s_base64_decode("a*b=", 4, &out, &n), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kubeconfig_token),   cmocka_unit_test(test_kubeconfig_data_and_certs),
                cmocka_unit_test(test_kubeconfig_insecure_and_context), cmocka_unit_test(test_kubeconfig_errors),
                cmocka_unit_test(test_in_cluster),         cmocka_unit_test(test_escape_and_paths),
                cmocka_unit_test(test_backoff),            cmocka_unit_test(test_retry_after),
                cmocka_unit_test(test_http_errno),         cmocka_unit_test(test_linebuf),
                cmocka_unit_test(test_event_parse),        cmocka_unit_test(test_base64),
        };
        return cmocka_run_group_tests_name("k8s-unit", tests, NULL, NULL);
}
