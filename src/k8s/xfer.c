/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One libcurl transfer of the Kubernetes client (client-internal.h): the
 * request's headers, TLS and method on an easy handle, the response's
 * status, Retry-After and body (bounded), the stop flag and deadline, and
 * the mapping of curl's failures.  The Authorization header is built per
 * request, wiped after it, and never logged (CURLOPT_VERBOSE stays off).
 */
#include "base/alloc.h"
#include "base/clock.h"
#include "client-internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/cleanup.h"

#define MAX_ERROR_BODY_BYTES (64u << 10)

void gv_k8s_wipe_free(char *s)
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

static size_t header_cb(char *buf, size_t size, size_t n, void *ud)
{
        gv_k8s_xfer_t *x = ud;
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

static size_t append_body(gv_k8s_xfer_t *x, const char *data, size_t len)
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
        if (!GV_GREEDY_REALLOC(x->body, x->cap, x->len + len + 1))
                return 0;
        memcpy(x->body + x->len, data, len);
        x->len += len;
        x->body[x->len] = '\0';
        return len;
}

static size_t write_cb(char *data, size_t size, size_t n, void *ud)
{
        gv_k8s_xfer_t *x = ud;
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
        gv_k8s_xfer_t *x = ud;
        if (gv_k8s_stopped(x->c)) {
                x->aborted_by_stop = true;
                return 1;
        }
        if (x->deadline_ms && (uint64_t) gv_now_ms() >= x->deadline_ms) {
                x->aborted_by_deadline = true;
                return 1;
        }
        return 0;
}

void gv_k8s_xfer_reset(gv_k8s_xfer_t *x)
{
        free(x->body);
        x->body = NULL;
        x->len = x->cap = 0;
        x->status = 0;
        x->has_retry_after = false;
        x->retry_after_ms = 0;
        x->aborted_by_stop = x->aborted_by_deadline = false;
        x->too_big = false;
        x->new_connections = 0;
        x->errbuf[0] = '\0';
}

/*
 * The request headers: Accept, Content-Type for a body, Authorization when
 * there is a token (*auth: the header, heap, wiped by the caller).  NULL
 * when out of memory (what was built is in *hdrs and *auth for the caller).
 */
static struct curl_slist *xfer_headers(const gv_k8s_client_t *c, const char *content_type, bool body,
                                       struct curl_slist **hdrs, char **auth)
{
        struct curl_slist *h = curl_slist_append(*hdrs, "Accept: application/json");
        if (!h)
                return NULL;
        *hdrs = h;
        if (body) {
                _cleanup_free_ char *ct = NULL;
                if (asprintf(&ct, "Content-Type: %s", content_type ? content_type : "application/json") < 0)
                        return NULL;
                if (!(h = curl_slist_append(*hdrs, ct)))
                        return NULL;
                *hdrs = h;
                if (!(h = curl_slist_append(*hdrs, "Expect:")))
                        return NULL;
                *hdrs = h;
        }
        if (c->token) {
                if (asprintf(auth, "Authorization: Bearer %s", c->token) < 0) {
                        *auth = NULL;
                        return NULL;
                }
                if (!(h = curl_slist_append(*hdrs, *auth)))
                        return NULL;
                *hdrs = h;
        }
        return *hdrs;
}

/* Server verification and client certificate of @cfg on @e. */
static void xfer_set_tls(CURL *e, const gv_k8s_config_t *cfg)
{
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
}

/* The method and the body of the request on @e. */
static void xfer_set_method(CURL *e, const char *method, const char *body, size_t body_len)
{
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
}

/* URL, protocols, limits and the callbacks of @x on its handle. */
static void xfer_set_common(gv_k8s_xfer_t *x, const char *url, struct curl_slist *hdrs, long timeout_ms)
{
        const gv_k8s_client_t *c = x->c;
        CURL *e = x->easy;
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
}

CURLcode gv_k8s_xfer_perform(gv_k8s_xfer_t *x, const char *method, const char *url, const char *content_type,
                             const char *body, size_t body_len, long timeout_ms)
{
        CURL *e = x->easy;
        gv_k8s_xfer_reset(x);
        curl_easy_reset(e);
        struct curl_slist *hdrs = NULL;
        char *auth = NULL;
        CURLcode cc = CURLE_OUT_OF_MEMORY;
        if (xfer_headers(x->c, content_type, body != NULL, &hdrs, &auth)) {
                xfer_set_common(x, url, hdrs, timeout_ms);
                xfer_set_tls(e, x->c->cfg);
                xfer_set_method(e, method, body, body_len);
                cc = curl_easy_perform(e);
                long code = 0;
                if (curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
                        x->status = code;
                if (curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &x->new_connections) != CURLE_OK)
                        x->new_connections = 0;
        }
        /* The handle keeps no pointer to the wiped strings once perform returned;
         * drop the header list from it all the same. */
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
        wipe_slist(hdrs);
        gv_k8s_wipe_free(auth);
        return cc;
}

/* The negative errno for a transport failure. */
int gv_k8s_curl_errno(CURLcode cc, const gv_k8s_xfer_t *x)
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
bool gv_k8s_curl_retryable(CURLcode cc, bool post)
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

const char *gv_k8s_curl_text(CURLcode cc, const gv_k8s_xfer_t *x)
{
        return x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc);
}

