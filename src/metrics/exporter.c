/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP side of the exporter: one thread, libmicrohttpd in external-epoll
 * mode, a watch on the status folder (gv_dirwatch) that marks the rendered
 * page dirty.  The page is re-rendered on the next scrape after a change (or
 * after cache_ttl_s without one, for the PCI count), never in between, and
 * rendering only reads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/log.h"
#include "gv-version.h"
#include "metrics.h"

#define LOG_COMPONENT "metrics"

struct gv_exporter {
        /* settings (heap copies) */
        char *output_dir;
        char *boot_id_path;
        char *sysfs_root;
        char *node;
        char *version;
        unsigned cache_ttl_s;
        gv_log_fn log;
        void *log_userdata;

        /* HTTP */
        struct MHD_Daemon *mhd;
        int epoll_fd;          /* libmicrohttpd's, not ours to close */
        char *address;         /* "127.0.0.1:8000" */
        uint16_t port;
        struct MHD_Response *r_health, *r_not_found, *r_not_allowed, *r_error;

        /* status folder */
        gv_store_t *store;     /* NULL until opened (or after the folder went away or was replaced) */
        gv_dirwatch_t *watch;  /* not WATCHING (no inotify, no folder): every scrape re-renders */
        char *problem;         /* last logged problem with the folder, to log each one once */

        /* cache */
        bool dirty;
        struct MHD_Response *page; /* the rendered page; our reference */
        int64_t rendered_at;       /* gv_now_ms() */
        bool have_states;
        gv_marker_state_t states[GV_MARKER__MAX];

        uint64_t scrapes, renders;
        double started_at;     /* Unix seconds: gpu_operator_node_metrics_ready_ts_seconds */
        double plugin_seen_at; /* Unix seconds: gpu_operator_node_device_plugin_validation_last_success_ts_seconds */
};

/* Whole Unix seconds now, as upstream's time.Now().Unix(). */
static double unix_now(void)
{
        return (double) time(NULL);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
        gv_exporter_t *exp = cls;
        if (!exp->log)
                return;
        _cleanup_free_ char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) < 0)
                return;
        size_t n = strlen(msg);
        while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
                msg[--n] = '\0';
        exp->log(exp->log_userdata, GV_LOG_DEBUG, LOG_COMPONENT, "", msg);
}

/* Record a problem with the status folder; logs each one once, and when it is solved (NULL). */
static void set_problem(gv_exporter_t *exp, gv_log_level_t level, const char *msg)
{
        if (!msg) {
                if (exp->problem)
                        gv_logf(exp->log, exp->log_userdata, GV_LOG_INFO, LOG_COMPONENT, NULL,
                                "status folder %s: problem solved (%s)", exp->output_dir, exp->problem);
                free(exp->problem);
                exp->problem = NULL;
                return;
        }
        if (exp->problem && strcmp(exp->problem, msg) == 0)
                return;
        free(exp->problem);
        exp->problem = strdup(msg);
        gv_logf(exp->log, exp->log_userdata, level, LOG_COMPONENT, NULL, "%s", msg);
}

/* ---- status folder ---- */

static void drop_store(gv_exporter_t *exp)
{
        gv_store_close(&exp->store);
        exp->dirty = true;
}

/*
 * Read what the folder watch has pending: a change makes the page dirty; a
 * re-armed watch (the folder appeared, went or was replaced) also drops the
 * store, opened again by its path at the next render.
 */
static void drain_watch(gv_exporter_t *exp)
{
        int r = gv_dirwatch_next(exp->watch, 0, NULL, NULL);
        if (r == GV_DIRWATCH_REARMED)
                drop_store(exp);
        else if (r > 0)
                exp->dirty = true;
}

/*
 * Open the store if not done yet (the watch is in place since
 * gv_exporter_new(), so no change after this reading is missed).  Returns a
 * heap message describing a problem, or NULL.  *level is the log level it
 * deserves.
 */
static char *ensure_store(gv_exporter_t *exp, gv_log_level_t *level)
{
        char *msg = NULL;
        *level = GV_LOG_WARN;
        gv_dirwatch_state_t ws = gv_dirwatch_state(exp->watch);
        if (ws == GV_DIRWATCH_MISSING) {
                *level = GV_LOG_INFO;
                if (asprintf(&msg, "status folder %s does not exist yet: every marker is missing", exp->output_dir) < 0)
                        msg = NULL;
        } else if (ws == GV_DIRWATCH_UNWATCHED) {
                if (asprintf(&msg, "status folder %s: cannot watch: %s (re-reading on every scrape)", exp->output_dir,
                             strerror(gv_dirwatch_error(exp->watch)->errnum)) < 0)
                        msg = NULL;
        }
        if (exp->store)
                return msg;
        gv_store_options_t o = {
                .dir = exp->output_dir,
                .boot_id_path = exp->boot_id_path,
                .create = false,
                .allow_missing = true,
                .read_only = true,
                .validator_version = exp->version,
        };
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_store_open(&o, &exp->store, &e) < 0) {
                exp->store = NULL;
                free(msg);
                *level = GV_LOG_WARN;
                if (asprintf(&msg, "%s (every marker reported as missing until this changes)",
                             e ? e->msg : "cannot open the status folder") < 0)
                        msg = NULL;
        }
        return msg;
}

static void log_transitions(gv_exporter_t *exp, const gv_metrics_snapshot_t *s)
{
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                gv_marker_state_t now = s->markers[i].state;
                if (exp->have_states && exp->states[i] != now)
                        gv_logf(exp->log, exp->log_userdata, GV_LOG_INFO, LOG_COMPONENT, NULL,
                                "%s: %s -> %s", gv_marker_file(i), gv_marker_state_name(exp->states[i]),
                                gv_marker_state_name(now));
                exp->states[i] = now;
        }
        exp->have_states = true;
}

/* Make exp->page current.  Returns the page to serve, or NULL when there is none at all. */
static struct MHD_Response *current_page(gv_exporter_t *exp)
{
        drain_watch(exp);
        bool cached = exp->store && gv_dirwatch_state(exp->watch) == GV_DIRWATCH_WATCHING;
        if (exp->page && cached && !exp->dirty && gv_now_ms() - exp->rendered_at < (int64_t) exp->cache_ttl_s * 1000)
                return exp->page;

        gv_log_level_t level;
        _cleanup_free_ char *problem = ensure_store(exp, &level);
        exp->dirty = false; /* events from here on mark the next render */

        gv_metrics_snapshot_t snap;
        gv_metrics_snapshot_init(&snap, exp->node, exp->version);
        _cleanup_error_ gv_error_t *e = NULL;
        if (exp->store && gv_metrics_collect(exp->store, exp->sysfs_root, &snap, &e) < 0) {
                free(problem);
                level = GV_LOG_WARN;
                problem = strdup(e ? e->msg : "cannot read the status folder");
                drop_store(exp);
        } else if (!exp->store) {
                gv_metrics_collect(NULL, exp->sysfs_root, &snap, NULL); /* the PCI count still counts */
        }
        set_problem(exp, level, problem);
        log_transitions(exp, &snap);
        /* upstream: the time of the last poll (every 30 s) that found GPUs on the node; here the last
         * render (at least every cache TTL while scraped) that found them advertised in plugin-ready */
        if (snap.markers[GV_MARKER_PLUGIN].state == GV_MARKER_READY && snap.plugin_devices >= 1)
                exp->plugin_seen_at = unix_now();
        snap.started_at = exp->started_at;
        snap.plugin_seen_at = exp->plugin_seen_at;

        char *body = NULL;
        size_t len = 0;
        gv_error_free(&e);
        if (gv_metrics_render(&snap, &body, &len, &e) < 0) {
                gv_logf(exp->log, exp->log_userdata, GV_LOG_ERROR, LOG_COMPONENT, gv_reason_name(e->reason),
                        "%s", e->msg);
                return exp->page; /* the previous page, if any */
        }
        struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        if (!r) {
                free(body);
                gv_logf(exp->log, exp->log_userdata, GV_LOG_ERROR, LOG_COMPONENT, "internal",
                        "cannot create an HTTP response");
                return exp->page;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, GV_METRICS_CONTENT_TYPE);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        if (exp->page)
                MHD_destroy_response(exp->page); /* connections still sending it hold their own reference */
        exp->page = r;
        exp->rendered_at = gv_now_ms();
        exp->renders++;
        return r;
}

/* ---- HTTP ---- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *http_version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
        gv_exporter_t *exp = cls;
        (void) http_version;
        (void) upload_data;
        if (!*req_cls) { /* headers only so far; answer once the request is complete */
                *req_cls = exp;
                return MHD_YES;
        }
        if (*upload_data_size) { /* a body we do not use */
                *upload_data_size = 0;
                return MHD_YES;
        }
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, exp->r_not_allowed);
        if (strcmp(url, GV_METRICS_PATH) == 0) {
                struct MHD_Response *page = current_page(exp);
                if (!page)
                        return MHD_queue_response(c, MHD_HTTP_INTERNAL_SERVER_ERROR, exp->r_error);
                exp->scrapes++;
                return MHD_queue_response(c, MHD_HTTP_OK, page);
        }
        if (strcmp(url, "/healthz") == 0)
                return MHD_queue_response(c, MHD_HTTP_OK, exp->r_health);
        return MHD_queue_response(c, MHD_HTTP_NOT_FOUND, exp->r_not_found);
}

static struct MHD_Response *static_text(const char *text)
{
        struct MHD_Response *r =
                MHD_create_response_from_buffer(strlen(text), (void *) text, MHD_RESPMEM_PERSISTENT);
        if (r)
                MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        return r;
}

/* ---- socket ---- */

static int try_listen(const struct sockaddr *sa, socklen_t salen, bool dual_stack, int *out)
{
        _cleanup_close_ int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        int one = 1, zero = 0;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
                return -errno;
        if (sa->sa_family == AF_INET6 &&
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int)) < 0)
                return -errno;
        if (bind(fd, sa, salen) < 0)
                return -errno;
        if (listen(fd, 64) < 0)
                return -errno;
        *out = TAKE_FD(fd);
        return 0;
}

static int open_listen_socket(const gv_listen_addr_t *a, int *out, gv_error_t **err)
{
        _cleanup_free_ char *port = NULL;
        if (asprintf(&port, "%u", (unsigned) a->port) < 0)
                return gv_error_oom(err);
        int r;
        if (!a->host) {
                struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(a->port),
                                             .sin6_addr = IN6ADDR_ANY_INIT };
                r = try_listen((struct sockaddr *) &any6, sizeof(any6), true, out);
                if (r == -EAFNOSUPPORT || r == -EADDRNOTAVAIL) {
                        struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_port = htons(a->port),
                                                    .sin_addr.s_addr = htonl(INADDR_ANY) };
                        r = try_listen((struct sockaddr *) &any4, sizeof(any4), false, out);
                }
                if (r < 0)
                        return gv_error_set(err, r, GV_REASON_CONFIG, "listen on :%s: %s", port, strerror(-r));
                return 0;
        }

        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
        struct addrinfo *res = NULL;
        int g = getaddrinfo(a->host, port, &hints, &res);
        if (g != 0)
                return gv_error_set(err, g == EAI_MEMORY ? ENOMEM : EINVAL, GV_REASON_CONFIG,
                                    "listen address %s: %s", a->host, g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        r = -EADDRNOTAVAIL;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                r = try_listen(ai->ai_addr, ai->ai_addrlen, false, out);
                if (r == 0)
                        break;
        }
        freeaddrinfo(res);
        if (r < 0)
                return gv_error_set(err, r, GV_REASON_CONFIG, "listen on %s%s%s:%s: %s",
                                    strchr(a->host, ':') ? "[" : "", a->host, strchr(a->host, ':') ? "]" : "", port,
                                    strerror(-r));
        return 0;
}

static int describe_socket(int fd, char **address, uint16_t *port)
{
        struct sockaddr_storage ss = { 0 };
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *) &ss, &len) < 0)
                return -errno;
        char host[INET6_ADDRSTRLEN] = "";
        int r;
        /* Copied out rather than read through a cast pointer (no type punning). */
        if (ss.ss_family == AF_INET6) {
                struct sockaddr_in6 s6;
                memcpy(&s6, &ss, sizeof(s6));
                inet_ntop(AF_INET6, &s6.sin6_addr, host, sizeof(host));
                *port = ntohs(s6.sin6_port);
                r = asprintf(address, "[%s]:%u", host, (unsigned) *port);
        } else {
                struct sockaddr_in s4;
                memcpy(&s4, &ss, sizeof(s4));
                inet_ntop(AF_INET, &s4.sin_addr, host, sizeof(host));
                *port = ntohs(s4.sin_port);
                r = asprintf(address, "%s:%u", host, (unsigned) *port);
        }
        return r < 0 ? -ENOMEM : 0;
}

/* ---- life cycle ---- */

void gv_exporter_free(gv_exporter_t **expp)
{
        gv_exporter_t *exp = expp ? *expp : NULL;
        if (!exp)
                return;
        if (exp->mhd)
                MHD_stop_daemon(exp->mhd); /* closes the listen socket */
        struct MHD_Response *rs[] = { exp->page, exp->r_health, exp->r_not_found, exp->r_not_allowed, exp->r_error };
        for (size_t i = 0; i < GV_ARRAY_SIZE(rs); i++)
                if (rs[i])
                        MHD_destroy_response(rs[i]);
        gv_store_close(&exp->store);
        gv_dirwatch_close(&exp->watch);
        free(exp->output_dir);
        free(exp->boot_id_path);
        free(exp->sysfs_root);
        free(exp->node);
        free(exp->version);
        free(exp->address);
        free(exp->problem);
        free(exp);
        *expp = NULL;
}

static void exporter_freep(gv_exporter_t **exp)
{
        gv_exporter_free(exp);
}

static char *dup_or(const char *s, const char *fallback)
{
        return strdup(s ? s : fallback);
}

int gv_exporter_new(const gv_exporter_options_t *opts, gv_exporter_t **out, gv_error_t **err)
{
        if (!opts->node_name || !*opts->node_name)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "no node name (set NODE_NAME or --node-name; it labels every metric)");

        __attribute__((cleanup(exporter_freep))) gv_exporter_t *exp = calloc(1, sizeof(*exp));
        if (!exp)
                return gv_error_oom(err);
        exp->epoll_fd = -1;
        exp->dirty = true;
        exp->started_at = unix_now();
        exp->log = opts->log;
        exp->log_userdata = opts->log_userdata;
        exp->cache_ttl_s = opts->cache_ttl_s ? opts->cache_ttl_s : GV_METRICS_DEFAULT_CACHE_TTL_S;
        exp->output_dir = dup_or(opts->output_dir, GV_DEFAULT_OUTPUT_DIR);
        exp->boot_id_path = dup_or(opts->boot_id_path, GV_DEFAULT_BOOT_ID_PATH);
        exp->sysfs_root = dup_or(opts->sysfs_root, GV_METRICS_DEFAULT_SYSFS_ROOT);
        exp->node = strdup(opts->node_name);
        exp->version = dup_or(opts->version, GV_VERSION);
        exp->r_health = static_text("ok\n");
        exp->r_not_found = static_text("not found: the metrics are at " GV_METRICS_PATH "\n");
        exp->r_not_allowed = static_text("method not allowed: use GET or HEAD\n");
        exp->r_error = static_text("internal error: cannot render the metrics\n");
        if (!exp->output_dir || !exp->boot_id_path || !exp->sysfs_root || !exp->node || !exp->version ||
            !exp->r_health || !exp->r_not_found || !exp->r_not_allowed || !exp->r_error)
                return gv_error_oom(err);
        MHD_add_response_header(exp->r_not_allowed, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");

        gv_dirwatch_options_t wo = { .markers_only = true };
        int r = gv_dirwatch_open(exp->output_dir, &wo, &exp->watch, err);
        if (r < 0)
                return r;
        if (gv_dirwatch_state(exp->watch) == GV_DIRWATCH_POLLING)
                gv_logf(exp->log, exp->log_userdata, GV_LOG_WARN, LOG_COMPONENT, "io",
                        "inotify unavailable (%s): every scrape re-reads the markers",
                        strerror(gv_dirwatch_error(exp->watch)->errnum));

        gv_listen_addr_t any = { .host = NULL, .port = GV_METRICS_DEFAULT_PORT };
        int fd = -1;
        r = open_listen_socket(opts->listen ? opts->listen : &any, &fd, err);
        if (r < 0)
                return r;
        r = describe_socket(fd, &exp->address, &exp->port);
        if (r < 0) {
                close(fd);
                return gv_error_set(err, r, GV_REASON_INTERNAL, "getsockname: %s", strerror(-r));
        }

        exp->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, exp,
                                    MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, exp,
                                    MHD_OPTION_LISTEN_SOCKET, fd,
                                    MHD_OPTION_CONNECTION_LIMIT, 64u,
                                    MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                                    MHD_OPTION_END);
        if (!exp->mhd) {
                close(fd);
                return gv_error_set(err, EIO, GV_REASON_INTERNAL, "cannot start the HTTP server (libmicrohttpd)");
        }
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(exp->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return gv_error_set(err, EIO, GV_REASON_INTERNAL, "libmicrohttpd gave no epoll descriptor");
        exp->epoll_fd = info->epoll_fd;

        *out = TAKE_PTR(exp);
        return 0;
}

const char *gv_exporter_address(const gv_exporter_t *exp)
{
        return exp->address;
}

uint16_t gv_exporter_port(const gv_exporter_t *exp)
{
        return exp->port;
}

uint64_t gv_exporter_scrapes(const gv_exporter_t *exp)
{
        return exp->scrapes;
}

uint64_t gv_exporter_renders(const gv_exporter_t *exp)
{
        return exp->renders;
}

int gv_exporter_run(gv_exporter_t *exp, const volatile sig_atomic_t *stop, gv_error_t **err)
{
        while (!stop || !*stop) {
                int timeout_ms = 1000; /* bounds the delay of a signal that lands just before poll() */
                MHD_UNSIGNED_LONG_LONG to;
                if (MHD_get_timeout(exp->mhd, &to) == MHD_YES && to < (MHD_UNSIGNED_LONG_LONG) timeout_ms)
                        timeout_ms = (int) to;
                struct pollfd pfd[2] = {
                        { .fd = exp->epoll_fd, .events = POLLIN },
                        { .fd = gv_dirwatch_fd(exp->watch), .events = POLLIN },
                };
                int n = poll(pfd, 2, timeout_ms);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return gv_error_set(err, errno, GV_REASON_INTERNAL, "poll: %s", strerror(errno));
                }
                if (pfd[1].revents)
                        drain_watch(exp);
                if (MHD_run(exp->mhd) != MHD_YES)
                        return gv_error_set(err, EIO, GV_REASON_INTERNAL, "libmicrohttpd failed to run");
        }
        return 0;
}
