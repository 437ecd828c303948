/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator metrics: serve Prometheus metrics about the markers and,
 * opt-in, mirror them onto the Node (condition, label, start-up taint,
 * events; src/nodesignal) from a second thread, so that scrapes are served
 * whatever the API server does.  Read-only towards the markers: never writes
 * or removes one, never initialises a GPU.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "options.h"
#include "gv-version.h"
#include "metrics/metrics.h"
#include "nodesignal/nodesignal.h"

/* metrics' own options (the shared ones are options.h's: --output-dir, --node-name, ...). */
enum {
        OPT_LISTEN = 0x800,
        OPT_CACHE_TTL,
        OPT_NODE_CONDITION,
        OPT_NODE_LABEL,
        OPT_STARTUP_TAINT,
        OPT_LAST_COMPONENT,
        OPT_EVENT_NAMESPACE, /* --namespace: the Events' namespace here, not OPERATOR_NAMESPACE */
        OPT_POD_NAME,
};

static void help(FILE *f)
{
        const char *prog = "gpu-validator";
        fprintf(f,
                "Usage: %s metrics [OPTIONS]\n"
                "\n"
                "Serve Prometheus metrics (text format 0.0.4) about the readiness markers on\n"
                "http://ADDR" GV_METRICS_PATH " (and /healthz).  Read-only: it never writes or removes a\n"
                "marker and never initialises a GPU; GPU counts come from driver-ready and sysfs.\n"
                "Changes in the status folder are picked up through inotify by the next scrape.\n"
                "\n"
                "Options:\n"
                "  --listen ADDR            :PORT (every address), HOST:PORT or [IPV6]:PORT\n"
                "                           (default :%d; METRICS_PORT=N means :N, 0 or unset\n"
                "                           means %d)\n"
                "  --output-dir DIR         marker folder (OUTPUT_DIR, default " GV_DEFAULT_OUTPUT_DIR ")\n"
                "  --node-name NAME         value of the node label (NODE_NAME; required)\n"
                "  --boot-id-file FILE      where the boot id is read (default " GV_DEFAULT_BOOT_ID_PATH ")\n"
                "  --sysfs-root DIR         sysfs mount for the PCI count (default " GV_METRICS_DEFAULT_SYSFS_ROOT ")\n"
                "  --cache-ttl SECONDS      serve a page rendered at most this long ago when nothing\n"
                "                           changed (default %u; bounds the PCI hot-plug lag)\n"
                "  -h, --help               show this help\n"
                "\n"
                "Node-level signal (opt-in; any of the first three turns it on):\n"
                "  --node-condition[=TYPE]  keep the Node condition TYPE (default " GV_NODESIGNAL_DEFAULT_CONDITION ") True\n"
                "                           while the last component is validated, else False with\n"
                "                           the failing component and why (NODE_CONDITION=TYPE, or\n"
                "                           true for the default type)\n"
                "  --node-label KEY=VALUE   a Node label present exactly while validated (NODE_LABEL)\n"
                "  --startup-taint KEY[=VALUE]:EFFECT\n"
                "                           a Node taint absent exactly while validated, e.g.\n"
                "                           nvidia.com/gpu.not-validated:NoSchedule (STARTUP_TAINT)\n"
                "  --last-component NAME    the component whose marker means validated (LAST_COMPONENT,\n"
                "                           default plugin; driver, toolkit, cuda, plugin, nvidia-fs, ...)\n"
                "  --kubeconfig FILE        Kubernetes client configuration (KUBECONFIG; default:\n"
                "                           in-cluster from KUBERNETES_SERVICE_HOST/PORT, else\n"
                "                           ~/.kube/config)\n"
                "  --namespace NS           namespace of the Events about the Node: default (the\n"
                "                           default) or kube-system, the only two kube-apiserver takes\n"
                "                           (not OPERATOR_NAMESPACE, which is no place for them)\n"
                "  --pod-name NAME          the validator's own pod (POD_NAME; in OPERATOR_NAMESPACE,\n"
                "                           else the client configuration's): while not validated,\n"
                "                           its init containers say which component is in progress\n"
                "                           or failed (condition reason Validating or\n"
                "                           <Component>ValidationFailed); read every 5 s until validated\n"
                "Events on the Node: " GV_NODESIGNAL_EVENT_FAILED " (Warning), " GV_NODESIGNAL_EVENT_RECOVERED ",\n"
                GV_NODESIGNAL_EVENT_SUCCEEDED ".  Nothing is written when the Node already agrees; failed\n"
                "API calls are retried with a capped backoff while metrics keep being served.\n"
                "\n"
                "SIGTERM or SIGINT stops the server; it then exits 0.  See docs/metrics.md.\n",
                prog, GV_METRICS_DEFAULT_PORT, GV_METRICS_DEFAULT_PORT, GV_METRICS_DEFAULT_CACHE_TTL_S);
        gv_cli_help_tail(f, (const char *const[]) {
                "NODE_NAME=$(hostname) gpu-validator metrics",
                "serve /metrics on :8000 for this node",
                "gpu-validator metrics --node-name n1 --listen 127.0.0.1:9400 --node-condition --startup-taint nvidia.com/gpu.not-validated:NoSchedule",
                "also keep a Node condition and a start-up taint in step with the markers",
                NULL });
}

/* What the node-level signal flags and variables asked for (strings borrowed from argv/environ). */
typedef struct signal_args {
        const char *condition; /* type, or NULL: off */
        const char *label;     /* KEY=VALUE, or NULL */
        const char *taint;     /* KEY[=VALUE]:EFFECT, or NULL */
        const char *last;      /* component name, or NULL: plugin */
        const char *kubeconfig;
        const char *namespace;
        const char *pod;           /* the validator's own pod (POD_NAME), or NULL */
        const char *pod_namespace; /* its namespace (OPERATOR_NAMESPACE), or NULL: the client configuration's */
} signal_args_t;

/* Everything the command line and the environment asked for (strings borrowed from argv/environ). */
typedef struct metrics_args {
        const char *listen;     /* --listen, or NULL */
        const char *output_dir; /* NULL: the default */
        const char *node;       /* required */
        const char *boot_id;    /* NULL: the default */
        const char *sysfs;      /* NULL: the default */
        unsigned ttl;           /* 0: the default */
        signal_args_t sa;
} metrics_args_t;

/* NODE_CONDITION: unset, empty or false-like is off; true-like the default type; else the type. */
static const char *condition_from_env(void)
{
        const char *v = gv_env("NODE_CONDITION");
        bool b;
        if (!v)
                return NULL;
        if (gv_parse_bool(v, &b) == 0)
                return b ? GV_NODESIGNAL_DEFAULT_CONDITION : NULL;
        return v;
}

/* The node signal's thread: gv_nodesignal_run() until its stop flag. */
typedef struct signal_thread {
        gv_nodesignal_t *ns;
        gv_error_t *err;
        int r;
} signal_thread_t;

static void *signal_main(void *arg)
{
        signal_thread_t *t = arg;
        t->r = gv_nodesignal_run(t->ns, &t->err);
        return NULL;
}

/* Free the signal and, when there was one, release libcurl (gv_k8s_global_init() in make_signal()). */
static void free_signal(gv_nodesignal_t **ns)
{
        if (!*ns)
                return;
        gv_nodesignal_free(ns);
        gv_k8s_global_cleanup();
}

/*
 * Parse the signal's values and make it (client configuration loaded, nothing
 * sent yet).  *out stays NULL when no signal was asked for.  Returns an exit code.
 */
static int make_signal(gv_cli_t *cli, const metrics_args_t *m, const volatile sig_atomic_t *stop,
                       gv_nodesignal_t **out)
{
        const signal_args_t *a = &m->sa;
        const char *node = m->node;
        *out = NULL;
        if (!a->condition && !a->label && !a->taint)
                return GV_EXIT_OK;
        _cleanup_error_ gv_error_t *err = NULL;
        if (a->condition && !gv_nodesignal_condition_type_valid(a->condition))
                return gv_cli_usage_error(cli, "metrics",
                                          "--node-condition=%s: not a condition type (a qualified name such as "
                                          GV_NODESIGNAL_DEFAULT_CONDITION ")", a->condition);
        _cleanup_free_ char *lkey = NULL, *lval = NULL;
        if (a->label && gv_nodesignal_parse_label(a->label, &lkey, &lval, &err) < 0)
                return gv_cli_usage_error(cli, "metrics", "--node-label: %s", err->msg);
        __attribute__((cleanup(gv_nodesignal_taint_clear))) gv_nodesignal_taint_t taint = { 0 };
        if (a->taint && gv_nodesignal_parse_taint(a->taint, &taint, &err) < 0)
                return gv_cli_usage_error(cli, "metrics", "--startup-taint: %s", err->msg);
        gv_marker_id_t last = GV_MARKER_PLUGIN;
        if (a->last) {
                last = gv_marker_by_component(a->last);
                if (last == GV_MARKER_INVALID || last == GV_MARKER_HOST_DRIVER)
                        return gv_cli_usage_error(cli, "metrics",
                                                  "--last-component=%s: not a component (driver, toolkit, cuda, plugin, "
                                                  "nvidia-fs, gdrcopy, nvidia-peermem)", a->last);
        }
        if (!node)
                return gv_cli_usage_error(cli, "metrics", "the node signal needs the node name: set NODE_NAME or --node-name");

        gv_k8s_env_t env = {
                .kubeconfig = a->kubeconfig,
                .service_host = gv_env("KUBERNETES_SERVICE_HOST"),
                .service_port = gv_env("KUBERNETES_SERVICE_PORT"),
                .home = gv_env("HOME"),
        };
        if (gv_k8s_global_init(&err) < 0) /* here, before any other thread starts */
                return gv_cli_fail(cli, "metrics", &err);
        gv_k8s_config_t *kc = NULL;
        if (gv_k8s_config_load(&env, &kc, &err) < 0) {
                gv_k8s_global_cleanup();
                gv_error_prefix(&err, "node signal: Kubernetes configuration");
                return gv_cli_fail(cli, "metrics", &err);
        }
        _cleanup_free_ char *source = strdup(kc->source ? kc->source : "?");
        gv_nodesignal_options_t o = {
                .spec = {
                        .condition_type = a->condition,
                        .label_key = lkey,
                        .label_value = lval,
                        .taint = a->taint ? &taint : NULL,
                },
                .node_name = node,
                .event_namespace = a->namespace,
                .pod_name = a->pod,
                .pod_namespace = a->pod_namespace,
                .last = last,
                .output_dir = m->output_dir,
                .boot_id_path = m->boot_id,
                .stop = stop,
                .log = gv_cli_log, .log_userdata = cli,
        };
        if (gv_nodesignal_new(&o, kc, out, &err) < 0) {
                gv_k8s_global_cleanup();
                return gv_cli_fail(cli, "metrics", &err);
        }
        gv_cli_logf(cli, GV_LOG_INFO, "node-signal", "",
                    "node %s follows %s: condition %s, label %s, start-up taint %s (%s)", node,
                    gv_marker_file(last), a->condition ? a->condition : "off", a->label ? a->label : "off",
                    a->taint ? a->taint : "off", source ? source : "?");
        return GV_EXIT_OK;
}

/* Where metrics' options that take a plain string keep it, or NULL for the others. */
static const char **string_slot(metrics_args_t *m, int opt)
{
        switch (opt) {
        case OPT_LISTEN:          return &m->listen;
        case OPT_NODE_LABEL:      return &m->sa.label;
        case OPT_STARTUP_TAINT:   return &m->sa.taint;
        case OPT_LAST_COMPONENT:  return &m->sa.last;
        case OPT_EVENT_NAMESPACE: return &m->sa.namespace;
        case OPT_POD_NAME:        return &m->sa.pod;
        default:                  return NULL;
        }
}

/* metrics' own options into the metrics_args_t @userdata (strings borrowed from argv). */
static int on_extra(void *userdata, int opt, const char *arg, gv_error_t **err)
{
        metrics_args_t *m = userdata;
        const char **slot = string_slot(m, opt);
        if (slot) {
                *slot = arg;
                return 0;
        }
        if (opt == OPT_CACHE_TTL) {
                if (gv_parse_uint(arg, &m->ttl) < 0 || m->ttl == 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "--cache-ttl=%s: expected whole seconds > 0",
                                            arg);
                return 0;
        }
        if (opt == OPT_NODE_CONDITION) {
                m->sa.condition = arg && *arg ? arg : GV_NODESIGNAL_DEFAULT_CONDITION;
                return 0;
        }
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
}

/*
 * Parse the environment and the options (options.c's parser, with metrics' own) into @o and
 * @m.  -1 to go on, else the exit code.
 */
static int parse_options(gv_cli_t *cli, int argc, char **argv, gv_options_t *o, metrics_args_t *m)
{
        static const struct option extra[] = {
                { "listen", required_argument, NULL, OPT_LISTEN },
                { "node-name", required_argument, NULL, GV_OPT_NODE_NAME },
                { "sysfs-root", required_argument, NULL, GV_OPT_SYSFS_ROOT },
                { "cache-ttl", required_argument, NULL, OPT_CACHE_TTL },
                { "node-condition", optional_argument, NULL, OPT_NODE_CONDITION },
                { "node-label", required_argument, NULL, OPT_NODE_LABEL },
                { "startup-taint", required_argument, NULL, OPT_STARTUP_TAINT },
                { "last-component", required_argument, NULL, OPT_LAST_COMPONENT },
                { "kubeconfig", required_argument, NULL, GV_OPT_KUBECONFIG },
                { "namespace", required_argument, NULL, OPT_EVENT_NAMESPACE },
                { "pod-name", required_argument, NULL, OPT_POD_NAME },
        };
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, "metrics", argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, m, help, o,
                                       &code) < 0)
                return code;
        if (optind < argc)
                return gv_cli_usage_error(cli, "metrics", "unexpected argument '%s'", argv[optind]);
        const gv_config_t *c = &o->cfg;
        m->output_dir = c->output_dir;
        m->node = c->kube.node_name;
        m->boot_id = c->boot_id_path;
        m->sysfs = c->sandbox.sysfs_root;
        m->sa.kubeconfig = c->kube.kubeconfig;
        m->sa.pod_namespace = c->kube.namespace;
        return -1;
}

/* The listen address from --listen or METRICS_PORT into @addr.  -1 to go on, else the exit code. */
static int listen_address(gv_cli_t *cli, const char *listen, gv_listen_addr_t *addr)
{
        _cleanup_error_ gv_error_t *err = NULL;
        *addr = (gv_listen_addr_t) { .host = NULL, .port = GV_METRICS_DEFAULT_PORT };
        if (listen) {
                if (gv_metrics_parse_listen(listen, addr, &err) < 0)
                        return gv_cli_usage_error(cli, "metrics", "--listen: %s", err->msg);
        } else if (gv_env("METRICS_PORT")) {
                unsigned port = 0;
                if (gv_env_uint("METRICS_PORT", &port, &err) < 0 || port > 65535)
                        return gv_cli_usage_error(cli, "metrics", "METRICS_PORT=%s: expected a port from 0 to 65535",
                                                  gv_env("METRICS_PORT"));
                /* Upstream's default is 0; a random port cannot be scraped, so 0 means our default. */
                addr->port = port ? (uint16_t) port : GV_METRICS_DEFAULT_PORT;
        }
        return -1;
}

/*
 * Start the signal's thread.  The signal runs on its own thread (own store,
 * folder watch and client) so that a slow or absent API server never delays
 * a scrape.  SIGTERM/SIGINT stay with this thread, whose poll() they
 * interrupt; the signal thread stops through its stop flag once the server
 * has returned.  0, or negative errno.
 */
static int start_signal_thread(signal_thread_t *st, pthread_t *tid, gv_error_t **err)
{
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        int pr = pthread_create(tid, NULL, signal_main, st);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pr != 0)
                return gv_error_set(err, pr, GV_REASON_INTERNAL, "node signal: cannot start its thread: %s",
                                    strerror(pr));
        return 0;
}

/* Serve until stopped, with the signal (may be NULL, then freed here) on its own thread.  Returns the exit code. */
static int serve(gv_cli_t *cli, const metrics_args_t *m, gv_exporter_t **expp, gv_nodesignal_t **nsp,
                 volatile sig_atomic_t *signal_stop)
{
        _cleanup_error_ gv_error_t *err = NULL;
        signal_thread_t st = { .ns = *nsp };
        pthread_t tid;
        bool started = false;
        if (*nsp) {
                if (start_signal_thread(&st, &tid, &err) < 0) {
                        gv_exporter_free(expp);
                        free_signal(nsp);
                        return gv_cli_fail(cli, "metrics", &err);
                }
                started = true;
        }
        gv_cli_logf(cli, GV_LOG_INFO, "metrics", "", "serving http://%s" GV_METRICS_PATH " for node %s (status folder %s)",
                    gv_exporter_address(*expp), m->node, m->output_dir ? m->output_dir : GV_DEFAULT_OUTPUT_DIR);
        int r = gv_exporter_run(*expp, cli->stop, &err);
        *signal_stop = 1;
        if (started)
                pthread_join(tid, NULL);
        uint64_t scrapes = gv_exporter_scrapes(*expp), renders = gv_exporter_renders(*expp);
        gv_exporter_free(expp);
        if (*nsp) {
                gv_cli_logf(cli, GV_LOG_INFO, "node-signal", "", "stopped after %llu Node updates (%llu failed tries)",
                            (unsigned long long) gv_nodesignal_writes(*nsp),
                            (unsigned long long) gv_nodesignal_failures(*nsp));
                free_signal(nsp);
        }
        if (st.r < 0 && r >= 0) {
                r = st.r;
                gv_error_free(&err);
                err = TAKE_PTR(st.err);
        }
        gv_error_free(&st.err);
        if (r < 0)
                return gv_cli_fail(cli, "metrics", &err);
        gv_cli_logf(cli, GV_LOG_INFO, "metrics", "", "stopped after %llu scrapes (%llu renders)",
                    (unsigned long long) scrapes, (unsigned long long) renders);
        return GV_EXIT_OK;
}

int gv_cmd_metrics(gv_cli_t *cli, int argc, char **argv)
{
        metrics_args_t m = {
                .sa = {
                        .condition = condition_from_env(),
                        .label = gv_env("NODE_LABEL"),
                        .taint = gv_env("STARTUP_TAINT"),
                        .last = gv_env("LAST_COMPONENT"),
                        .namespace = NULL, /* not OPERATOR_NAMESPACE: Node Events belong in default */
                        .pod = gv_env("POD_NAME"),
                },
        };
        _cleanup_options_ gv_options_t opts = { 0 };
        int code = parse_options(cli, argc, argv, &opts, &m);
        if (code >= 0)
                return code;
        gv_listen_addr_t addr;
        code = listen_address(cli, m.listen, &addr);
        if (code >= 0) {
                gv_listen_addr_clear(&addr);
                return code;
        }
        if (!m.node) {
                gv_listen_addr_clear(&addr);
                return gv_cli_usage_error(cli, "metrics",
                                          "no node name: set NODE_NAME (as the upstream DaemonSet does) or --node-name");
        }

        /* The signal's stop flag: set when the server stops, for whatever reason. */
        volatile sig_atomic_t signal_stop = 0;
        gv_nodesignal_t *ns = NULL;
        code = make_signal(cli, &m, &signal_stop, &ns);
        if (code != GV_EXIT_OK) {
                gv_listen_addr_clear(&addr);
                return code;
        }

        gv_exporter_options_t o = {
                .listen = &addr,
                .output_dir = m.output_dir,
                .boot_id_path = m.boot_id,
                .sysfs_root = m.sysfs,
                .node_name = m.node,
                .version = GV_VERSION,
                .cache_ttl_s = m.ttl,
                .log = gv_cli_log, .log_userdata = cli,
        };
        _cleanup_error_ gv_error_t *err = NULL;
        gv_exporter_t *exp = NULL;
        int r = gv_exporter_new(&o, &exp, &err);
        gv_listen_addr_clear(&addr);
        if (r < 0) {
                free_signal(&ns);
                return gv_cli_fail(cli, "metrics", &err);
        }
        return serve(cli, &m, &exp, &ns, &signal_stop);
}
