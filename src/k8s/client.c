/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kubernetes client and its plain requests: one libcurl easy handle per
 * client for requests (watches, in watch.c, have their own); every handle
 * of a client shares one connection cache and TLS session cache (a
 * CURLSH), so a process talks to the API server over one HTTP/2 connection
 * where it can.  One transfer is xfer.c.  Retries follow docs/kubernetes.md.
 * The bearer token is wiped when replaced and never logged.
 */
#include "base/clock.h"
#include "client-internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"

#define MAX_TOKEN_BYTES (64u << 10)

/* ---------------- global ---------------- */

int gv_k8s_global_init(gv_error_t **err)
{
        CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
        if (cc != CURLE_OK)
                return gv_error_set(err, EIO, GV_REASON_INTERNAL, "curl_global_init: %s", curl_easy_strerror(cc));
        return 0;
}

void gv_k8s_global_cleanup(void)
{
        curl_global_cleanup();
}

/* ---------------- small helpers ---------------- */

bool gv_k8s_stopped(const gv_k8s_client_t *c)
{
        return c->opts.stop && *c->opts.stop;
}

uint32_t gv_k8s_rnd32(gv_k8s_client_t *c)
{
        uint32_t a = (uint32_t) rand_r(&c->rng), b = (uint32_t) rand_r(&c->rng);
        return (a << 16) ^ b;
}

static const char *http_text(long code)
{
        switch (code) {
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 409: return "Conflict";
        case 410: return "Gone";
        case 415: return "Unsupported Media Type";
        case 422: return "Unprocessable Entity";
        case 429: return "Too Many Requests";
        case 500: return "Internal Server Error";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        case 504: return "Gateway Timeout";
        default: return "";
        }
}

/* ---------------- client ---------------- */

/*
 * The share of one client's handles: the connection cache (CURL_LOCK_DATA_CONNECT,
 * libcurl >= 7.57) and the TLS session cache.  No lock callbacks: a client is
 * used by one thread at a time (k8s.h), and libcurl lets a multiplexed
 * connection take a new stream only from the transfer's own handle, so a
 * request made from inside a watch's callback opens its own connection.
 */
static CURLSH *share_new(void)
{
        CURLSH *sh = curl_share_init();
        if (!sh)
                return NULL;
        if (curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK ||
            curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK) {
                curl_share_cleanup(sh);
                return NULL;
        }
        return sh;
}

CURL *gv_k8s_easy_new(gv_k8s_client_t *c)
{
        CURL *e = curl_easy_init();
        if (e && curl_easy_setopt(e, CURLOPT_SHARE, c->share) != CURLE_OK) {
                curl_easy_cleanup(e);
                return NULL;
        }
        return e; /* curl_easy_reset() keeps the share */
}

int gv_k8s_client_new(gv_k8s_config_t *cfg, const gv_k8s_options_t *opts, gv_k8s_client_t **out, gv_error_t **err)
{
        gv_k8s_client_t *c = calloc(1, sizeof(*c));
        if (!c) {
                gv_k8s_config_free(cfg);
                return gv_error_oom(err);
        }
        c->cfg = cfg;
        if (opts)
                c->opts = *opts;
        if (!c->opts.timeout_s)
                c->opts.timeout_s = 30;
        if (!c->opts.connect_timeout_s)
                c->opts.connect_timeout_s = 10;
        if (!c->opts.max_attempts)
                c->opts.max_attempts = 5;
        if (!c->opts.max_retry_s)
                c->opts.max_retry_s = 60;
        if (!c->opts.backoff_initial_ms)
                c->opts.backoff_initial_ms = 250;
        if (!c->opts.backoff_max_ms)
                c->opts.backoff_max_ms = 30000;
        if (c->opts.backoff_max_ms < c->opts.backoff_initial_ms)
                c->opts.backoff_max_ms = c->opts.backoff_initial_ms;
        if (c->opts.user_agent)
                c->user_agent = strdup(c->opts.user_agent);
        else if (asprintf(&c->user_agent, "gpu-validator/%s", GV_VERSION) < 0)
                c->user_agent = NULL;
        c->opts.user_agent = c->user_agent;
        c->share = share_new();
        c->easy = c->share ? gv_k8s_easy_new(c) : NULL;
        c->rng = (unsigned) time(NULL) ^ (unsigned) getpid() ^ (unsigned) (uintptr_t) c;
        if (!c->user_agent || !c->share || !c->easy || !cfg) {
                gv_k8s_client_free(c);
                return gv_error_set(err, cfg ? ENOMEM : EINVAL, GV_REASON_INTERNAL,
                                    cfg ? "cannot make a curl handle" : "no configuration");
        }
        if (cfg->insecure_skip_tls_verify && (cfg->ca_file || cfg->ca_data)) {
                int r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "cluster %s: %s", cfg->server ? cfg->server : "",
                                     GV_K8S_ERR_INSECURE_WITH_CA);
                gv_k8s_client_free(c);
                return r;
        }
        *out = c;
        return 0;
}

void gv_k8s_client_free(gv_k8s_client_t *c)
{
        if (!c)
                return;
        if (c->easy)
                curl_easy_cleanup(c->easy);
        if (c->share)
                curl_share_cleanup(c->share); /* after every handle that used it; closes its connections */
        gv_k8s_wipe_free(c->token);
        free(c->user_agent);
        gv_k8s_config_free(c->cfg);
        free(c);
}

const gv_k8s_config_t *gv_k8s_client_config(const gv_k8s_client_t *c)
{
        return c->cfg;
}

/*
 * Make c->token current: the static token, or the token file re-read when
 * its inode, size or mtime changed (or when @force).  A token file that
 * cannot be read keeps the last token, if there is one.
 */
int gv_k8s_refresh_token(gv_k8s_client_t *c, bool force, gv_error_t **err)
{
        if (c->cfg->token) {
                if (!c->token) {
                        c->token = strdup(c->cfg->token);
                        if (!c->token)
                                return gv_error_oom(err);
                }
                return 0;
        }
        if (!c->cfg->token_file)
                return 0;
        struct stat st;
        if (stat(c->cfg->token_file, &st) < 0) {
                if (c->token)
                        return 0;
                return gv_error_set(err, errno, GV_REASON_KUBERNETES, "token file %s: %s", c->cfg->token_file,
                                    strerror(errno));
        }
        if (!force && c->token && st.st_ino == c->token_ino && st.st_size == c->token_size &&
            st.st_mtim.tv_sec == c->token_mtime.tv_sec && st.st_mtim.tv_nsec == c->token_mtime.tv_nsec)
                return 0;
        char *data = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_read_file_at(AT_FDCWD, c->cfg->token_file, false, MAX_TOKEN_BYTES, &data, &len, &e);
        if (r < 0) {
                if (c->token)
                        return 0;
                return gv_error_set(err, r, GV_REASON_KUBERNETES, "token file: %s", e ? e->msg : strerror(-r));
        }
        while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ' || data[len - 1] == '\t'))
                data[--len] = '\0';
        if (len == 0 || strlen(data) != len || strpbrk(data, "\r\n")) {
                gv_k8s_wipe_free(data);
                if (c->token)
                        return 0;
                return gv_error_set(err, EINVAL, GV_REASON_KUBERNETES, "token file %s: empty or not one line",
                                    c->cfg->token_file);
        }
        bool changed = c->token != NULL;
        gv_k8s_wipe_free(c->token);
        c->token = data;
        c->token_from_file = true;
        c->token_ino = st.st_ino;
        c->token_size = st.st_size;
        c->token_mtime = st.st_mtim;
        if (changed)
                gv_k8s_logf(c, GV_LOG_DEBUG, "re-read the token from %s", c->cfg->token_file);
        return 0;
}

/* Whether @cc is a failure to verify the server or to load the CA. */
static bool tls_trust_failure(CURLcode cc)
{
        return cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE;
}

/* Where the CA that failed came from, for the message of a TLS failure (static or cfg's). */
static const char *ca_source(const gv_k8s_config_t *cfg, const char **file)
{
        *file = "";
        if (cfg->ca_data)
                return "the kubeconfig's certificate-authority-data";
        if (cfg->ca_file) {
                *file = cfg->ca_file;
                return "CA file ";
        }
        return "the system's trust store";
}

/*
 * From an error body: the Status message and reason (heap copies, or NULL).
 * A body that is not a Status gives its first 200 printable bytes as message.
 */
static void status_fields(const char *body, size_t len, char **message, char **reason)
{
        *message = *reason = NULL;
        if (!body || !len)
                return;
        _cleanup_json_ json_object *j = json_tokener_parse(body);
        json_object *m = NULL, *r = NULL;
        bool is_object = j && json_object_is_type(j, json_type_object);
        if (is_object) {
                if (json_object_object_get_ex(j, "message", &m) && json_object_is_type(m, json_type_string))
                        *message = strdup(json_object_get_string(m));
                if (json_object_object_get_ex(j, "reason", &r) && json_object_is_type(r, json_type_string))
                        *reason = strdup(json_object_get_string(r));
        }
        if (!*message && !is_object) {
                size_t n = len > 200 ? 200 : len;
                char *s = strndup(body, n);
                if (s) {
                        for (char *p = s; *p; p++)
                                if ((unsigned char) *p < 0x20 || (unsigned char) *p == 0x7f)
                                        *p = ' ';
                        *message = s;
                }
        }
}

int gv_k8s_http_error(const char *method, const char *url, long code, const char *body, size_t len,
                      gv_error_t **err)
{
        _cleanup_free_ char *message = NULL, *reason = NULL;
        status_fields(body, len, &message, &reason);
        int errnum = gv_k8s_http_errno(code, reason);
        return gv_error_set(err, errnum, GV_REASON_KUBERNETES, "%s %s: %ld %s%s%s%s%s%s", method, url, code,
                            http_text(code), message ? ": " : "", message ? message : "", reason ? " (reason " : "",
                            reason ? reason : "", reason ? ")" : "");
}

int gv_k8s_error_move(gv_error_t **from, gv_error_t **err)
{
        int r = -(*from)->errnum;
        if (err) {
                gv_error_free(err);
                *err = TAKE_PTR(*from);
        }
        return r;
}

bool gv_k8s_http_retryable(long code, bool post)
{
        if (code == 429)
                return true;
        if (code >= 500 && code <= 599)
                return !post || code == 502 || code == 503 || code == 504;
        return false;
}

static int parse_response(const gv_k8s_xfer_t *x, const char *method, const char *url, json_object **out, gv_error_t **err)
{
        if (!out)
                return 0;
        char *ct = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
        bool json = !ct || strncasecmp(ct, "application/json", 16) == 0 || strstr(ct, "+json");
        if (!x->len) {
                *out = NULL;
                return 0;
        }
        if (!json) {
                json_object *s = json_object_new_string_len(x->body, (int) x->len);
                if (!s)
                        return gv_error_oom(err);
                *out = s;
                return 0;
        }
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return gv_error_oom(err);
        _cleanup_json_ json_object *j = json_tokener_parse_ex(tok, x->body, (int) x->len);
        enum json_tokener_error je = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!j || je != json_tokener_success)
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "%s %s: response is not valid JSON: %s", method,
                                    url, json_tokener_error_desc(je == json_tokener_success ? json_tokener_continue : je));
        *out = TAKE_PTR(j);
        return 0;
}

/* One gv_k8s_request() call: the request, and what its last attempt said. */
typedef struct req {
        gv_k8s_client_t *c;
        const char *method, *url, *content_type;
        const char *body;      /* serialized, borrowed from the caller's object */
        size_t body_len;
        bool post;
        json_object **out;
        long *http_status;
        gv_k8s_xfer_t x;
        uint64_t start;        /* gv_now_ms() of the first attempt */
        bool reread;           /* the token file was re-read after a 401 */
        gv_error_t *e;         /* the failure of the last attempt */
        bool retry;            /* whether it may be retried */
        unsigned long delay;   /* Retry-After, ms; 0: the backoff decides */
} req_t;

/* What one attempt came to. */
typedef enum attempt {
        ATTEMPT_DONE,   /* a result (0 or an error in err): return it */
        ATTEMPT_REPEAT, /* again at once, not counted (the token was re-read after a 401) */
        ATTEMPT_FAILED, /* q->e, q->retry, q->delay say what failed */
} attempt_t;

static int interrupted(const req_t *q, gv_error_t **err)
{
        return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s %s: interrupted", q->method, q->url);
}

/* A transport failure @cc of the attempt that started at @t0 ms. */
static attempt_t attempt_transport(req_t *q, CURLcode cc, uint64_t t0, int *ret, gv_error_t **err)
{
        gv_k8s_client_t *c = q->c;
        int en = gv_k8s_curl_errno(cc, &q->x);
        if (en == -EINTR) {
                *ret = interrupted(q, err);
                return ATTEMPT_DONE;
        }
        gv_k8s_logf(c, GV_LOG_DEBUG, "%s %s: %s (%llu ms)", q->method, q->url, gv_k8s_curl_text(cc, &q->x),
                    (unsigned long long) ((uint64_t) gv_now_ms() - t0));
        if (tls_trust_failure(cc)) {
                const char *file, *src = ca_source(c->cfg, &file);
                gv_error_set(&q->e, en, GV_REASON_KUBERNETES, "%s %s: %s (the server %s not verified with %s%s)",
                             q->method, q->url, gv_k8s_curl_text(cc, &q->x), c->cfg->server, src, file);
        } else {
                gv_error_set(&q->e, en, GV_REASON_KUBERNETES, "%s %s: %s", q->method, q->url,
                             gv_k8s_curl_text(cc, &q->x));
        }
        q->retry = gv_k8s_curl_retryable(cc, q->post);
        return ATTEMPT_FAILED;
}

/* An HTTP response to the attempt that started at @t0 ms. */
static attempt_t attempt_response(req_t *q, uint64_t t0, int *ret, gv_error_t **err)
{
        gv_k8s_client_t *c = q->c;
        const gv_k8s_xfer_t *x = &q->x;
        gv_k8s_logf(c, GV_LOG_DEBUG, "%s %s: %ld (%llu ms%s)", q->method, q->url, x->status,
                    (unsigned long long) ((uint64_t) gv_now_ms() - t0), x->new_connections ? ", new connection" : "");
        if (x->status >= 200 && x->status < 300) {
                *ret = parse_response(x, q->method, q->url, q->out, err);
                return ATTEMPT_DONE;
        }
        gv_k8s_http_error(q->method, q->url, x->status, x->body, x->len, &q->e);
        if (x->status == 401 && c->token_from_file && !q->reread) {
                /* The token may have rotated under the same mtime granularity. */
                q->reread = true;
                if (gv_k8s_refresh_token(c, true, NULL) == 0)
                        return ATTEMPT_REPEAT;
        }
        q->retry = gv_k8s_http_retryable(x->status, q->post);
        if (x->has_retry_after) {
                q->delay = x->retry_after_ms > c->opts.backoff_max_ms ? c->opts.backoff_max_ms : x->retry_after_ms;
                if (q->delay == 0)
                        q->delay = 1;
        }
        return ATTEMPT_FAILED;
}

/* One attempt: the token, the transfer, and what came of it (*ret when ATTEMPT_DONE). */
static attempt_t attempt_once(req_t *q, int *ret, gv_error_t **err)
{
        gv_error_free(&q->e);
        q->retry = false;
        q->delay = 0;
        if (gv_k8s_stopped(q->c)) {
                *ret = interrupted(q, err);
                return ATTEMPT_DONE;
        }
        *ret = gv_k8s_refresh_token(q->c, false, err);
        if (*ret < 0)
                return ATTEMPT_DONE;
        uint64_t t0 = (uint64_t) gv_now_ms();
        CURLcode cc = gv_k8s_xfer_perform(&q->x, q->method, q->url, q->content_type, q->body, q->body_len,
                                          (long) q->c->opts.timeout_s * 1000L);
        if (q->http_status)
                *q->http_status = cc == CURLE_OK ? q->x.status : 0;
        if (cc != CURLE_OK && q->x.too_big) {
                *ret = gv_error_set(err, EMSGSIZE, GV_REASON_KUBERNETES,
                                    "%s %s: the response body is larger than %u MiB (the limit); not read", q->method,
                                    q->url, GV_K8S_MAX_BODY_BYTES >> 20);
                return ATTEMPT_DONE;
        }
        if (cc != CURLE_OK)
                return attempt_transport(q, cc, t0, ret, err);
        return attempt_response(q, t0, ret, err);
}

/*
 * After failed attempt number @attempt: wait the backoff and return true
 * for the next attempt, or give up: false, with the error in @err and *ret.
 */
static bool retry_or_give_up(req_t *q, unsigned attempt, int *ret, gv_error_t **err)
{
        gv_k8s_client_t *c = q->c;
        if (!q->retry || attempt >= c->opts.max_attempts) {
                if (q->retry)
                        gv_error_prefix(&q->e, "gave up after %u attempts", attempt);
                *ret = gv_k8s_error_move(&q->e, err);
                return false;
        }
        unsigned long delay = q->delay;
        if (!delay)
                delay = gv_k8s_backoff_ms(attempt, c->opts.backoff_initial_ms, c->opts.backoff_max_ms,
                                          gv_k8s_rnd32(c));
        uint64_t elapsed = (uint64_t) gv_now_ms() - q->start;
        if (elapsed + delay > (uint64_t) c->opts.max_retry_s * 1000u) {
                gv_error_prefix(&q->e, "gave up after %u attempts in %.1f s", attempt, (double) elapsed / 1000.0);
                *ret = gv_k8s_error_move(&q->e, err);
                return false;
        }
        gv_k8s_logf(c, GV_LOG_WARN, "%s; retry %u/%u in %lu ms", q->e->msg, attempt + 1, c->opts.max_attempts, delay);
        if (gv_sleep_ms((int64_t) delay, c->opts.stop) < 0) {
                *ret = interrupted(q, err);
                return false;
        }
        return true;
}

int gv_k8s_request(gv_k8s_client_t *c, const char *method, const char *path, const char *content_type,
                   json_object *body, json_object **out, long *http_status, gv_error_t **err)
{
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s%s", c->cfg->server, path) < 0)
                return gv_error_oom(err);
        req_t q = { .c = c, .method = method, .url = url, .content_type = content_type, .out = out,
                    .http_status = http_status, .x = { .c = c, .easy = c->easy } };
        if (body) {
                q.body = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &q.body_len);
                if (!q.body)
                        return gv_error_oom(err);
        }
        q.post = strcmp(method, "POST") == 0;
        q.start = (uint64_t) gv_now_ms();
        if (http_status)
                *http_status = 0;
        int ret = 0;
        for (unsigned attempt = 1;; attempt++) {
                attempt_t a = attempt_once(&q, &ret, err);
                if (a == ATTEMPT_DONE)
                        break;
                if (a == ATTEMPT_REPEAT) {
                        attempt--;
                        continue;
                }
                if (!retry_or_give_up(&q, attempt, &ret, err))
                        break;
        }
        gv_error_free(&q.e);
        gv_k8s_xfer_reset(&q.x);
        return ret;
}

int gv_k8s_get(gv_k8s_client_t *c, const char *path, json_object **out, gv_error_t **err)
{
        return gv_k8s_request(c, "GET", path, NULL, NULL, out, NULL, err);
}

int gv_k8s_post(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err)
{
        return gv_k8s_request(c, "POST", path, NULL, body, out, NULL, err);
}

int gv_k8s_put(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err)
{
        return gv_k8s_request(c, "PUT", path, NULL, body, out, NULL, err);
}

int gv_k8s_patch(gv_k8s_client_t *c, const char *path, gv_k8s_patch_type_t type, json_object *patch,
                 json_object **out, gv_error_t **err)
{
        static const char *const types[] = {
                [GV_K8S_PATCH_MERGE] = "application/merge-patch+json",
                [GV_K8S_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
                [GV_K8S_PATCH_JSON] = "application/json-patch+json",
        };
        if ((unsigned) type >= GV_ARRAY_SIZE(types))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "unknown patch type %d", (int) type);
        return gv_k8s_request(c, "PATCH", path, types[type], patch, out, NULL, err);
}

int gv_k8s_delete(gv_k8s_client_t *c, const char *path, json_object *body, json_object **out, gv_error_t **err)
{
        return gv_k8s_request(c, "DELETE", path, NULL, body, out, NULL, err);
}
