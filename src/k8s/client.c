/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP side of the Kubernetes client: one libcurl easy handle per
 * client for requests (connections are reused), one per watch.  Retries
 * follow docs/kubernetes.md.  The Authorization header is built per
 * request, wiped after it, and never logged (CURLOPT_VERBOSE stays off).
 */
#include "base/clock.h"
#include "k8s.h"

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

#include "base/cleanup.h"
#include "base/fileio.h"
#include "gv-version.h"

#define MAX_ERROR_BODY_BYTES (64u << 10)
#define MAX_TOKEN_BYTES (64u << 10)

struct gv_k8s_client {
        gv_k8s_config_t *cfg;
        gv_k8s_options_t opts;
        char *user_agent;
        CURL *easy;
        char *token;           /* the token in use, or NULL */
        bool token_from_file;
        struct timespec token_mtime;
        ino_t token_ino;
        off_t token_size;
        unsigned rng;
};

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

static bool stopped(const gv_k8s_client_t *c)
{
        return c->opts.stop && *c->opts.stop;
}

/* Log through the caller's gv_log_fn (may be NULL) under opts.log_component, reason "". */
#define logf_(c, lvl, ...) \
        gv_logf((c)->opts.log, (c)->opts.log_userdata, (lvl), (c)->opts.log_component, "", __VA_ARGS__)

static uint32_t rnd32(gv_k8s_client_t *c)
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

static void wipe_free(char *s)
{
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}

static void wipe_slist(struct curl_slist *l)
{
        for (struct curl_slist *p = l; p; p = p->next)
                if (p->data)
                        explicit_bzero(p->data, strlen(p->data));
        curl_slist_free_all(l);
}

/* ---------------- client ---------------- */

int gv_k8s_client_new(gv_k8s_config_t *cfg, const gv_k8s_options_t *opts, gv_k8s_client_t **out, gv_error_t **err)
{
        gv_k8s_client_t *c = calloc(1, sizeof(*c));
        if (!c) {
                gv_k8s_config_free(cfg);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
        c->easy = curl_easy_init();
        c->rng = (unsigned) time(NULL) ^ (unsigned) getpid() ^ (unsigned) (uintptr_t) c;
        if (!c->user_agent || !c->easy || !cfg) {
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
        wipe_free(c->token);
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
static int refresh_token(gv_k8s_client_t *c, bool force, gv_error_t **err)
{
        if (c->cfg->token) {
                if (!c->token) {
                        c->token = strdup(c->cfg->token);
                        if (!c->token)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
                wipe_free(data);
                if (c->token)
                        return 0;
                return gv_error_set(err, EINVAL, GV_REASON_KUBERNETES, "token file %s: empty or not one line",
                                    c->cfg->token_file);
        }
        bool changed = c->token != NULL;
        wipe_free(c->token);
        c->token = data;
        c->token_from_file = true;
        c->token_ino = st.st_ino;
        c->token_size = st.st_size;
        c->token_mtime = st.st_mtim;
        if (changed)
                logf_(c, GV_LOG_DEBUG, "re-read the token from %s", c->cfg->token_file);
        return 0;
}

/* ---------------- one transfer ---------------- */

typedef struct xfer xfer_t;
typedef size_t (*body_fn)(xfer_t *x, const char *data, size_t len);

struct xfer {
        gv_k8s_client_t *c;
        CURL *easy;
        uint64_t deadline_ms; /* 0: none beyond curl's own */
        char *body;
        size_t len, cap, max;
        long status;          /* from the status line, per response */
        unsigned long retry_after_ms;
        bool has_retry_after;
        bool aborted_by_stop, aborted_by_deadline;
        bool too_big;         /* a success body passed GV_K8S_MAX_BODY_BYTES: the transfer was ended */
        body_fn stream;       /* watch: called for 200 bodies instead of buffering */
        void *stream_data;
        char errbuf[CURL_ERROR_SIZE];
};

static size_t header_cb(char *buf, size_t size, size_t n, void *ud)
{
        xfer_t *x = ud;
        size_t len = size * n;
        if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
                x->has_retry_after = false;
                const char *sp = memchr(buf, ' ', len);
                x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        } else if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
                _cleanup_free_ char *v = strndup(buf + 12, len - 12);
                unsigned long ms = 0;
                if (v && gv_k8s_parse_retry_after(v, time(NULL), &ms) == 0) {
                        x->retry_after_ms = ms;
                        x->has_retry_after = true;
                }
        }
        return len;
}

static size_t append_body(xfer_t *x, const char *data, size_t len)
{
        size_t max = x->max ? x->max : GV_K8S_MAX_BODY_BYTES;
        if (x->status < 200 || x->status > 299) { /* an error body: its start says enough */
                if (x->len >= MAX_ERROR_BODY_BYTES)
                        return len;
                if (x->len + len > MAX_ERROR_BODY_BYTES)
                        len = MAX_ERROR_BODY_BYTES - x->len;
        } else if (x->len + len > max) {
                x->too_big = true;
                return 0;
        }
        if (x->len + len + 1 > x->cap) {
                size_t ncap = x->cap ? x->cap : 8192;
                while (ncap < x->len + len + 1)
                        ncap *= 2;
                char *nb = realloc(x->body, ncap);
                if (!nb)
                        return 0;
                x->body = nb;
                x->cap = ncap;
        }
        memcpy(x->body + x->len, data, len);
        x->len += len;
        x->body[x->len] = '\0';
        return len;
}

static size_t write_cb(char *data, size_t size, size_t n, void *ud)
{
        xfer_t *x = ud;
        size_t len = size * n;
        if (x->stream && x->status == 200)
                return x->stream(x, data, len);
        size_t took = append_body(x, data, len);
        if (took == 0 && len > 0)
                return 0; /* too big, or out of memory: end the transfer */
        return len;       /* an error body past its bound is skipped */
}

/* NOLINTNEXTLINE(misc-unused-parameters): libcurl's CURLOPT_XFERINFOFUNCTION signature */
static int xferinfo_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
        xfer_t *x = ud;
        if (stopped(x->c)) {
                x->aborted_by_stop = true;
                return 1;
        }
        if (x->deadline_ms && (uint64_t) gv_now_ms() >= x->deadline_ms) {
                x->aborted_by_deadline = true;
                return 1;
        }
        return 0;
}

static void xfer_reset(xfer_t *x)
{
        free(x->body);
        x->body = NULL;
        x->len = x->cap = 0;
        x->status = 0;
        x->has_retry_after = false;
        x->retry_after_ms = 0;
        x->aborted_by_stop = x->aborted_by_deadline = false;
        x->too_big = false;
        x->errbuf[0] = '\0';
}

/*
 * Set up @x->easy for one request and run it.  @timeout_ms 0 = no total
 * limit (watches use the deadline).  Returns curl's code.
 */
/* NOLINTNEXTLINE(readability-function-size): one libcurl transfer with its retry and error mapping; to be split in the architecture refactor */
static CURLcode xfer_perform(xfer_t *x, const char *method, const char *url, const char *content_type,
                             const char *body, size_t body_len, long timeout_ms)
{
        gv_k8s_client_t *c = x->c;
        const gv_k8s_config_t *cfg = c->cfg;
        CURL *e = x->easy;
        xfer_reset(x);
        curl_easy_reset(e);
        struct curl_slist *hdrs = NULL, *h;
        char *auth = NULL;
        CURLcode cc = CURLE_OUT_OF_MEMORY;

#define H(s)                                   \
        do {                                   \
                h = curl_slist_append(hdrs, s); \
                if (!h)                        \
                        goto out;              \
                hdrs = h;                      \
        } while (0)

        H("Accept: application/json");
        if (body) {
                _cleanup_free_ char *ct = NULL;
                if (asprintf(&ct, "Content-Type: %s", content_type ? content_type : "application/json") < 0)
                        goto out;
                H(ct);
                H("Expect:");
        }
        if (c->token) {
                if (asprintf(&auth, "Authorization: Bearer %s", c->token) < 0) {
                        auth = NULL;
                        goto out;
                }
                H(auth);
        }
#undef H

        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long) c->opts.connect_timeout_s * 1000L);
        if (timeout_ms > 0)
                curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
        curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);

        if (cfg->insecure_skip_tls_verify) {
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        } else {
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
                curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
        }
        if (cfg->ca_data) {
                struct curl_blob b = { .data = cfg->ca_data, .len = cfg->ca_data_len, .flags = CURL_BLOB_COPY };
                curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
        } else if (cfg->ca_file) {
                curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
        }
        if (cfg->client_cert_data) {
                struct curl_blob b = { .data = cfg->client_cert_data, .len = cfg->client_cert_data_len,
                                       .flags = CURL_BLOB_COPY };
                curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
                curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        } else if (cfg->client_cert_file) {
                curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->client_cert_file);
        }
        if (cfg->client_key_data) {
                struct curl_blob b = { .data = cfg->client_key_data, .len = cfg->client_key_data_len,
                                       .flags = CURL_BLOB_COPY };
                curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
                curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
        } else if (cfg->client_key_file) {
                curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->client_key_file);
        }

        if (strcmp(method, "GET") == 0) {
                curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
        } else if (strcmp(method, "POST") == 0) {
                curl_easy_setopt(e, CURLOPT_POST, 1L);
        } else {
                curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
        }
        if (body) {
                curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len);
                curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        } else if (strcmp(method, "POST") == 0) {
                curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) 0);
                curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        }

        cc = curl_easy_perform(e);
        long code = 0;
        if (curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
                x->status = code;
out:
        /* The handle keeps no pointer to the wiped strings once perform returned;
         * drop the header list from it all the same. */
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
        wipe_slist(hdrs);
        wipe_free(auth);
        return cc;
}

/* The negative errno for a transport failure. */
static int curl_errno(CURLcode cc, const xfer_t *x)
{
        if (x->aborted_by_stop)
                return -EINTR;
        switch (cc) {
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_ABORTED_BY_CALLBACK:
                return x->aborted_by_deadline ? -ETIMEDOUT : -EINTR;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CONNECT_ERROR:
                return -EPROTO;
        default:
                return -EHOSTUNREACH;
        }
}

/* Whether a transport failure may be retried; for @post only when nothing was sent. */
static bool curl_retryable(CURLcode cc, bool post)
{
        switch (cc) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_CONNECT:
                return true;
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_GOT_NOTHING:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR:
                return !post;
        default:
                return false;
        }
}

static const char *curl_text(CURLcode cc, const xfer_t *x)
{
        return x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc);
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
        json_object *j = json_tokener_parse(body);
        json_object *m = NULL, *r = NULL;
        if (j && json_object_is_type(j, json_type_object)) {
                if (json_object_object_get_ex(j, "message", &m) && json_object_is_type(m, json_type_string))
                        *message = strdup(json_object_get_string(m));
                if (json_object_object_get_ex(j, "reason", &r) && json_object_is_type(r, json_type_string))
                        *reason = strdup(json_object_get_string(r));
        }
        if (j)
                json_object_put(j);
        if (!*message && (!j || !json_object_is_type(j, json_type_object))) {
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

static int http_error(gv_error_t **err, const char *method, const char *url, long code, const char *body, size_t len,
                      const char *suffix)
{
        _cleanup_free_ char *message = NULL, *reason = NULL;
        status_fields(body, len, &message, &reason);
        int errnum = gv_k8s_http_errno(code, reason);
        return gv_error_set(err, errnum, GV_REASON_KUBERNETES, "%s %s: %ld %s%s%s%s%s%s%s", method, url, code,
                            http_text(code), message ? ": " : "", message ? message : "", reason ? " (reason " : "",
                            reason ? reason : "", reason ? ")" : "", suffix ? suffix : "");
}

static bool http_retryable(long code, bool post)
{
        if (code == 429)
                return true;
        if (code >= 500 && code <= 599)
                return !post || code == 502 || code == 503 || code == 504;
        return false;
}

static int parse_response(const xfer_t *x, const char *method, const char *url, json_object **out, gv_error_t **err)
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
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                *out = s;
                return 0;
        }
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        json_object *j = json_tokener_parse_ex(tok, x->body, (int) x->len);
        enum json_tokener_error je = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!j || je != json_tokener_success) {
                if (j)
                        json_object_put(j);
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "%s %s: response is not valid JSON: %s", method,
                                    url, json_tokener_error_desc(je == json_tokener_success ? json_tokener_continue : je));
        }
        *out = j;
        return 0;
}

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): retries, status mapping, body bound and handling of one request; to be split in the architecture refactor */
int gv_k8s_request(gv_k8s_client_t *c, const char *method, const char *path, const char *content_type,
                   json_object *body, json_object **out, long *http_status, gv_error_t **err)
{
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s%s", c->cfg->server, path) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        const char *body_str = NULL;
        size_t body_len = 0;
        if (body) {
                body_str = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &body_len);
                if (!body_str)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        bool post = strcmp(method, "POST") == 0;
        xfer_t x = { .c = c, .easy = c->easy };
        uint64_t start = (uint64_t) gv_now_ms();
        bool reread = false;
        int ret = 0;
        if (http_status)
                *http_status = 0;

        for (unsigned attempt = 1;; attempt++) {
                if (stopped(c)) {
                        ret = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s %s: interrupted", method, url);
                        goto done;
                }
                ret = refresh_token(c, false, err);
                if (ret < 0)
                        goto done;
                uint64_t t0 = (uint64_t) gv_now_ms();
                CURLcode cc = xfer_perform(&x, method, url, content_type, body_str, body_len,
                                           (long) c->opts.timeout_s * 1000L);
                if (http_status)
                        *http_status = cc == CURLE_OK ? x.status : 0;
                bool retry;
                unsigned long delay = 0;
                _cleanup_error_ gv_error_t *e = NULL;
                if (cc != CURLE_OK && x.too_big) {
                        ret = gv_error_set(err, EMSGSIZE, GV_REASON_KUBERNETES,
                                           "%s %s: the response body is larger than %u MiB (the limit); not read",
                                           method, url, GV_K8S_MAX_BODY_BYTES >> 20);
                        goto done;
                }
                if (cc != CURLE_OK) {
                        int en = curl_errno(cc, &x);
                        if (en == -EINTR) {
                                ret = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s %s: interrupted", method, url);
                                goto done;
                        }
                        logf_(c, GV_LOG_DEBUG, "%s %s: %s (%llu ms)", method, url, curl_text(cc, &x),
                              (unsigned long long) ((uint64_t) gv_now_ms() - t0));
                        if (tls_trust_failure(cc)) {
                                const char *file, *src = ca_source(c->cfg, &file);
                                gv_error_set(&e, en, GV_REASON_KUBERNETES,
                                             "%s %s: %s (the server %s not verified with %s%s)", method, url,
                                             curl_text(cc, &x), c->cfg->server, src, file);
                        } else {
                                gv_error_set(&e, en, GV_REASON_KUBERNETES, "%s %s: %s", method, url, curl_text(cc, &x));
                        }
                        retry = curl_retryable(cc, post);
                } else {
                        logf_(c, GV_LOG_DEBUG, "%s %s: %ld (%llu ms)", method, url, x.status,
                              (unsigned long long) ((uint64_t) gv_now_ms() - t0));
                        if (x.status >= 200 && x.status < 300) {
                                ret = parse_response(&x, method, url, out, err);
                                goto done;
                        }
                        http_error(&e, method, url, x.status, x.body, x.len, NULL);
                        if (x.status == 401 && c->token_from_file && !reread) {
                                /* The token may have rotated under the same mtime granularity. */
                                reread = true;
                                if (refresh_token(c, true, NULL) == 0) {
                                        attempt--;
                                        continue;
                                }
                        }
                        retry = http_retryable(x.status, post);
                        if (x.has_retry_after) {
                                delay = x.retry_after_ms > c->opts.backoff_max_ms ? c->opts.backoff_max_ms
                                                                                  : x.retry_after_ms;
                                if (delay == 0)
                                        delay = 1;
                        }
                }
                if (!retry || attempt >= c->opts.max_attempts) {
                        if (retry)
                                gv_error_prefix(&e, "gave up after %u attempts", attempt);
                        goto fail;
                }
                if (!delay)
                        delay = gv_k8s_backoff_ms(attempt, c->opts.backoff_initial_ms, c->opts.backoff_max_ms, rnd32(c));
                uint64_t elapsed = (uint64_t) gv_now_ms() - start;
                if (elapsed + delay > (uint64_t) c->opts.max_retry_s * 1000u) {
                        gv_error_prefix(&e, "gave up after %u attempts in %.1f s", attempt, (double) elapsed / 1000.0);
                        goto fail;
                }
                logf_(c, GV_LOG_WARN, "%s; retry %u/%u in %lu ms", e->msg, attempt + 1, c->opts.max_attempts, delay);
                if (gv_sleep_ms((int64_t) delay, c->opts.stop) < 0) {
                        ret = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s %s: interrupted", method, url);
                        goto done;
                }
                continue;
        fail:
                ret = -e->errnum;
                if (err) {
                        gv_error_free(err);
                        *err = TAKE_PTR(e);
                }
                goto done;
        }
done:
        xfer_reset(&x);
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

/* ---------------- watch ---------------- */

typedef struct wstate {
        gv_k8s_client_t *c;
        gv_k8s_watch_fn cb;
        void *userdata;
        gv_k8s_linebuf_t lb;
        char *rv;             /* last resourceVersion seen (heap) */
        unsigned events;      /* events in this connection */
        bool cb_stop;         /* the callback said stop */
        bool gone;            /* ERROR event with code 410 */
        int line_error;       /* a malformed line ended the connection */
} wstate_t;

static const char *object_rv(json_object *o)
{
        json_object *md = NULL, *rv = NULL;
        if (o && json_object_object_get_ex(o, "metadata", &md) && json_object_object_get_ex(md, "resourceVersion", &rv) &&
            json_object_is_type(rv, json_type_string))
                return json_object_get_string(rv);
        return "";
}

static int set_rv(wstate_t *w, const char *rv)
{
        if (!rv || !*rv)
                return 0;
        char *n = strdup(rv);
        if (!n)
                return -ENOMEM;
        free(w->rv);
        w->rv = n;
        return 0;
}

static int watch_line(void *ud, char *line, size_t len)
{
        wstate_t *w = ud;
        gv_k8s_event_type_t type;
        json_object *obj = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_k8s_watch_event_parse(line, len, &type, &obj, &e) < 0) {
                logf_(w->c, GV_LOG_WARN, "%s", e->msg);
                w->line_error = -EBADMSG;
                return -EBADMSG;
        }
        w->events++;
        if (type == GV_K8S_EVENT_ERROR) {
                json_object *code = NULL;
                if (json_object_object_get_ex(obj, "code", &code) && json_object_get_int(code) == 410) {
                        w->gone = true;
                        json_object_put(obj);
                        return 1;
                }
        } else if (set_rv(w, object_rv(obj)) < 0) {
                json_object_put(obj);
                return -ENOMEM;
        }
        gv_k8s_watch_event_t ev = { .type = type, .object = obj, .resource_version = object_rv(obj) };
        bool go_on = w->cb(w->userdata, &ev);
        json_object_put(obj);
        if (!go_on) {
                w->cb_stop = true;
                return 1;
        }
        return 0;
}

static size_t watch_stream(xfer_t *x, const char *data, size_t len)
{
        wstate_t *w = x->stream_data;
        int r = gv_k8s_linebuf_feed(&w->lb, data, len, watch_line, w);
        if (r == -EMSGSIZE) {
                w->line_error = -EMSGSIZE;
        }
        return r == 0 ? len : 0;
}

/* LIST the collection, deliver items as ADDED + SYNCED, take the list's resourceVersion. */
static int relist(wstate_t *w, const gv_k8s_watch_spec_t *spec, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_k8s_build_path(spec->path, "labelSelector", spec->label_selector,
                                                      "fieldSelector", spec->field_selector, NULL);
        if (!path)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        json_object *list = NULL;
        int r = gv_k8s_get(w->c, path, &list, err);
        if (r < 0)
                return r;
        json_object *items = NULL, *md = NULL, *rv = NULL;
        if (!list || !json_object_object_get_ex(list, "items", &items) || !json_object_is_type(items, json_type_array) ||
            !json_object_object_get_ex(list, "metadata", &md) || !json_object_object_get_ex(md, "resourceVersion", &rv)) {
                json_object_put(list);
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "GET %s%s: not a list with a resourceVersion",
                                    w->c->cfg->server, path);
        }
        if (set_rv(w, json_object_get_string(rv)) < 0) {
                json_object_put(list);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        size_t n = json_object_array_length(items);
        for (size_t i = 0; i < n && !w->cb_stop; i++) {
                json_object *it = json_object_array_get_idx(items, i);
                gv_k8s_watch_event_t ev = { .type = GV_K8S_EVENT_ADDED, .object = it, .resource_version = object_rv(it),
                                            .from_list = true };
                if (!w->cb(w->userdata, &ev))
                        w->cb_stop = true;
        }
        if (!w->cb_stop) {
                gv_k8s_watch_event_t ev = { .type = GV_K8S_EVENT_SYNCED, .resource_version = w->rv, .from_list = true };
                if (!w->cb(w->userdata, &ev))
                        w->cb_stop = true;
        }
        json_object_put(list);
        return 0;
}

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): the watch loop: reconnect, bookmarks, 410 Gone, events; to be split in the architecture refactor */
int gv_k8s_watch(gv_k8s_client_t *c, const gv_k8s_watch_spec_t *spec, gv_k8s_watch_fn cb, void *userdata,
                 gv_error_t **err)
{
        unsigned timeout_s = spec->timeout_s ? spec->timeout_s : 300;
        unsigned max_failures = spec->max_failures ? spec->max_failures : 5;
        uint64_t deadline = (uint64_t) gv_now_ms() + (uint64_t) timeout_s * 1000u;
        wstate_t w = { .c = c, .cb = cb, .userdata = userdata };
        xfer_t x = { .c = c, .stream = watch_stream, .stream_data = &w, .deadline_ms = deadline };
        _cleanup_error_ gv_error_t *last = NULL;
        unsigned failures = 0;
        int ret = 0;
        bool need_list = !spec->resource_version || !*spec->resource_version;

        if (!need_list && set_rv(&w, spec->resource_version) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        x.easy = curl_easy_init();
        if (!x.easy)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "cannot make a curl handle");

        for (;;) {
                if (stopped(c)) {
                        ret = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "watch %s: interrupted", spec->path);
                        break;
                }
                uint64_t now = (uint64_t) gv_now_ms();
                if (now >= deadline) {
                        ret = gv_error_set(err, ETIMEDOUT, GV_REASON_TIMEOUT, "watch %s%s: no end after %u s%s%s",
                                           c->cfg->server, spec->path, timeout_s, last ? "; last error: " : "",
                                           last ? last->msg : "");
                        break;
                }
                if (failures >= max_failures) {
                        ret = -last->errnum;
                        gv_error_prefix(&last, "watch: gave up after %u failed attempts", failures);
                        if (err) {
                                gv_error_free(err);
                                *err = TAKE_PTR(last);
                        }
                        break;
                }
                if (failures > 0) {
                        unsigned d = gv_k8s_backoff_ms(failures, c->opts.backoff_initial_ms, c->opts.backoff_max_ms,
                                                       rnd32(c));
                        if (now + d > deadline)
                                d = (unsigned) (deadline - now);
                        logf_(c, GV_LOG_INFO, "watch %s: %s; resuming in %u ms", spec->path,
                              last ? last->msg : "stream ended", d);
                        if (gv_sleep_ms((int64_t) d, c->opts.stop) < 0)
                                continue;
                        if ((uint64_t) gv_now_ms() >= deadline)
                                continue;
                }
                if (need_list) {
                        _cleanup_error_ gv_error_t *e = NULL;
                        int r = relist(&w, spec, &e);
                        if (w.cb_stop) {
                                ret = 0;
                                break;
                        }
                        if (r < 0) {
                                if (r == -EINTR || !gv_reason_retryable(e->reason) || r == -ENOENT || r == -EACCES ||
                                    r == -EPERM || r == -EINVAL || r == -EMSGSIZE) {
                                        ret = r;
                                        if (err) {
                                                gv_error_free(err);
                                                *err = TAKE_PTR(e);
                                        }
                                        break;
                                }
                                gv_error_free(&last);
                                last = TAKE_PTR(e);
                                failures++;
                                continue;
                        }
                        need_list = false;
                }
                if ((ret = refresh_token(c, false, err)) < 0)
                        break;
                unsigned remaining_s = (unsigned) ((deadline - (uint64_t) gv_now_ms() + 999) / 1000);
                char tos[24];
                snprintf(tos, sizeof(tos), "%u", remaining_s ? remaining_s : 1);
                _cleanup_free_ char *path = gv_k8s_build_path(spec->path, "watch", "1", "resourceVersion", w.rv,
                                                              "allowWatchBookmarks", "true", "timeoutSeconds", tos,
                                                              "labelSelector", spec->label_selector, "fieldSelector",
                                                              spec->field_selector, NULL);
                _cleanup_free_ char *url = NULL;
                if (!path || asprintf(&url, "%s%s", c->cfg->server, path) < 0) {
                        url = NULL;
                        ret = gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        break;
                }
                w.events = 0;
                w.gone = false;
                w.line_error = 0;
                gv_k8s_linebuf_clear(&w.lb);
                w.lb.max_line = GV_K8S_MAX_WATCH_EVENT_BYTES;
                uint64_t t0 = (uint64_t) gv_now_ms();
                CURLcode cc = xfer_perform(&x, "GET", url, NULL, NULL, 0, 0);
                logf_(c, GV_LOG_DEBUG, "GET %s: %s %ld, %u events (%llu ms)", url,
                      cc == CURLE_OK ? "ended" : curl_text(cc, &x), x.status, w.events,
                      (unsigned long long) ((uint64_t) gv_now_ms() - t0));
                if (w.cb_stop) {
                        ret = 0;
                        break;
                }
                if (x.aborted_by_stop || stopped(c))
                        continue; /* reported at the top */
                if (x.aborted_by_deadline)
                        continue;
                if (w.gone || x.status == 410) {
                        logf_(c, GV_LOG_INFO, "watch %s: resourceVersion %s is too old (410 Gone); listing again",
                              spec->path, w.rv ? w.rv : "");
                        need_list = true;
                        failures = 0;
                        continue;
                }
                gv_error_free(&last);
                if (w.line_error == -EMSGSIZE) { /* it would come again on resume */
                        ret = gv_error_set(err, EMSGSIZE, GV_REASON_KUBERNETES,
                                           "GET %s: a watch event is larger than %u MiB (the limit); watch ended",
                                           url, GV_K8S_MAX_WATCH_EVENT_BYTES >> 20);
                        break;
                }
                if (cc == CURLE_OK && x.status == 200) {
                        /* The server ended the stream (timeoutSeconds): resume at once, unless it
                         * keeps closing immediately without an event. */
                        if (w.events == 0 && (uint64_t) gv_now_ms() - t0 < 1000) {
                                gv_error_set(&last, EPIPE, GV_REASON_KUBERNETES, "GET %s: stream ended at once", url);
                                failures++;
                        } else {
                                failures = 0;
                        }
                        continue;
                }
                if (cc == CURLE_OK || (x.status && x.status != 200)) {
                        http_error(&last, "GET", url, x.status, x.body, x.len, NULL);
                        if (!http_retryable(x.status, false)) {
                                ret = -last->errnum;
                                if (err) {
                                        gv_error_free(err);
                                        *err = TAKE_PTR(last);
                                }
                                break;
                        }
                } else if (w.line_error) {
                        gv_error_set(&last, -w.line_error, GV_REASON_KUBERNETES, "GET %s: malformed event stream", url);
                } else {
                        gv_error_set(&last, curl_errno(cc, &x), GV_REASON_KUBERNETES, "GET %s: %s", url, curl_text(cc, &x));
                }
                failures = w.events > 0 ? 1 : failures + 1;
        }
        xfer_reset(&x);
        curl_easy_cleanup(x.easy);
        gv_k8s_linebuf_clear(&w.lb);
        free(w.rv);
        return ret;
}
