/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the plain requests (client.c) and the watches (watch.c) share: the
 * client's fields, one libcurl transfer, and the mapping of transport and
 * HTTP failures to errors.  Private to src/k8s.
 */
#ifndef GV_K8S_CLIENT_INTERNAL_H
#define GV_K8S_CLIENT_INTERNAL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "k8s.h"

struct gv_k8s_client {
        gv_k8s_config_t *cfg;
        gv_k8s_options_t opts;
        char *user_agent;
        CURL *easy;            /* plain requests */
        CURLSH *share;         /* connections and TLS sessions, shared by @easy and every watch's handle */
        char *token;           /* the token in use, or NULL */
        bool token_from_file;
        struct timespec token_mtime;
        ino_t token_ino;
        off_t token_size;
        unsigned rng;
};

/* Log through the caller's gv_log_fn (may be NULL) under opts.log_component, reason "". */
#define gv_k8s_logf(c, lvl, ...) \
        gv_logf((c)->opts.log, (c)->opts.log_userdata, (lvl), (c)->opts.log_component, "", __VA_ARGS__)

typedef struct gv_k8s_xfer gv_k8s_xfer_t;

/* A streaming body consumer: returns @len to go on, anything else ends the transfer. */
typedef size_t (*gv_k8s_body_fn)(gv_k8s_xfer_t *x, const char *data, size_t len);

/* One transfer on one easy handle: its response status, body and why it ended. */
struct gv_k8s_xfer {
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
        long new_connections; /* connections this transfer opened (0: it reused one) */
        gv_k8s_body_fn stream; /* watch: called for 200 bodies instead of buffering */
        void *stream_data;
        char errbuf[CURL_ERROR_SIZE];
};

/* Whether the client's stop flag is set. */
bool gv_k8s_stopped(const gv_k8s_client_t *c);

/* A pseudo-random number for backoff jitter (the client's own state). */
uint32_t gv_k8s_rnd32(gv_k8s_client_t *c);

/*
 * gv_k8s_refresh_token - make c->token current: the static token, or the
 * token file re-read when its inode, size or mtime changed (or when
 * @force).  A token file that cannot be read keeps the last token, if there
 * is one.  Errors: -ENOMEM; the token file's errno (GV_REASON_KUBERNETES).
 */
int gv_k8s_refresh_token(gv_k8s_client_t *c, bool force, gv_error_t **err);

/*
 * gv_k8s_xfer_perform - set up @x->easy for one request and run it.
 * @timeout_ms 0 = no total limit (watches use x->deadline_ms).  The
 * Authorization header is wiped after it.  Returns curl's code.
 */
CURLcode gv_k8s_xfer_perform(gv_k8s_xfer_t *x, const char *method, const char *url, const char *content_type,
                             const char *body, size_t body_len, long timeout_ms);

/*
 * gv_k8s_easy_new - a libcurl handle of client @c: its connections and TLS
 * sessions come from the client's share, so a watch after a request (or a
 * request after a watch) goes over the same HTTP/2 connection, not a new
 * TLS handshake.  NULL when out of memory.
 */
CURL *gv_k8s_easy_new(gv_k8s_client_t *c);

/* gv_k8s_xfer_reset - free the body and forget the last response. */
void gv_k8s_xfer_reset(gv_k8s_xfer_t *x);

/* gv_k8s_curl_errno - the negative errno for a transport failure @cc of @x. */
int gv_k8s_curl_errno(CURLcode cc, const gv_k8s_xfer_t *x);

/* gv_k8s_curl_retryable - whether transport failure @cc may be retried; for @post only when nothing was sent. */
bool gv_k8s_curl_retryable(CURLcode cc, bool post);

/* gv_k8s_wipe_free - zero the string @s (a credential) and free it; accepts NULL. */
void gv_k8s_wipe_free(char *s);

/* gv_k8s_curl_text - curl's error text for @cc (x's error buffer, else curl's); borrowed. */
const char *gv_k8s_curl_text(CURLcode cc, const gv_k8s_xfer_t *x);

/*
 * gv_k8s_http_error - set *err for an HTTP error response: "<method> <url>:
 * <code> <text>: <Status message> (reason <Status reason>)"; the errno from
 * gv_k8s_http_errno().  Returns the negative errno.
 */
int gv_k8s_http_error(const char *method, const char *url, long code, const char *body, size_t len,
                      gv_error_t **err);

/* gv_k8s_http_retryable - whether HTTP @code may be retried (for @post only 429, 502, 503, 504). */
bool gv_k8s_http_retryable(long code, bool post);

/*
 * gv_k8s_error_move - move *@from (set) into @err (freeing what @err held;
 * dropped when @err is NULL).  Returns the negative errno of *@from.
 */
int gv_k8s_error_move(gv_error_t **from, gv_error_t **err);

#endif
