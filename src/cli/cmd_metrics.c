/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator metrics: serve Prometheus metrics about the markers.
 * Read-only: never writes or removes a marker, never initialises a GPU.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "gv-version.h"
#include "metrics/metrics.h"

enum {
        OPT_LISTEN = 0x100,
        OPT_OUTPUT_DIR,
        OPT_NODE_NAME,
        OPT_BOOT_ID_FILE,
        OPT_SYSFS_ROOT,
        OPT_CACHE_TTL,
};

static void help(FILE *f, const char *prog)
{
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
                "SIGTERM or SIGINT stops the server; it then exits 0.  See docs/metrics.md.\n",
                prog, GV_METRICS_DEFAULT_PORT, GV_METRICS_DEFAULT_PORT, GV_METRICS_DEFAULT_CACHE_TTL_S);
}

int gv_cmd_metrics(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option opts[] = {
                { "listen", required_argument, NULL, OPT_LISTEN },
                { "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
                { "node-name", required_argument, NULL, OPT_NODE_NAME },
                { "boot-id-file", required_argument, NULL, OPT_BOOT_ID_FILE },
                { "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
                { "cache-ttl", required_argument, NULL, OPT_CACHE_TTL },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *listen = NULL, *output_dir = gv_env("OUTPUT_DIR"), *node = gv_env("NODE_NAME");
        const char *boot_id = NULL, *sysfs = NULL;
        unsigned ttl = 0;

        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_LISTEN:
                        listen = optarg;
                        break;
                case OPT_OUTPUT_DIR:
                        output_dir = optarg;
                        break;
                case OPT_NODE_NAME:
                        node = optarg;
                        break;
                case OPT_BOOT_ID_FILE:
                        boot_id = optarg;
                        break;
                case OPT_SYSFS_ROOT:
                        sysfs = optarg;
                        break;
                case OPT_CACHE_TTL:
                        if (gv_parse_uint(optarg, &ttl) < 0 || ttl == 0)
                                return gv_cli_usage_error(cli, "metrics", "--cache-ttl=%s: expected whole seconds > 0",
                                                          optarg);
                        break;
                case 'h':
                        help(stdout, cli->prog);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "metrics", "unknown option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, "metrics", "unexpected argument '%s'", argv[optind]);

        _cleanup_error_ gv_error_t *err = NULL;
        gv_listen_addr_t addr = { .host = NULL, .port = GV_METRICS_DEFAULT_PORT };
        if (listen) {
                if (gv_metrics_parse_listen(listen, &addr, &err) < 0)
                        return gv_cli_usage_error(cli, "metrics", "--listen: %s", err->msg);
        } else if (gv_env("METRICS_PORT")) {
                unsigned port = 0;
                if (gv_env_uint("METRICS_PORT", &port, &err) < 0 || port > 65535)
                        return gv_cli_usage_error(cli, "metrics", "METRICS_PORT=%s: expected a port from 0 to 65535",
                                                  gv_env("METRICS_PORT"));
                /* Upstream's default is 0; a random port cannot be scraped, so 0 means our default. */
                addr.port = port ? (uint16_t) port : GV_METRICS_DEFAULT_PORT;
        }
        if (!node) {
                gv_listen_addr_clear(&addr);
                return gv_cli_usage_error(cli, "metrics",
                                          "no node name: set NODE_NAME (as the upstream DaemonSet does) or --node-name");
        }

        gv_exporter_options_t o = {
                .listen = &addr,
                .output_dir = output_dir,
                .boot_id_path = boot_id,
                .sysfs_root = sysfs,
                .node_name = node,
                .version = GV_VERSION,
                .cache_ttl_s = ttl,
                .log = gv_cli_log,
                .log_userdata = cli,
        };
        gv_exporter_t *exp = NULL;
        int r = gv_exporter_new(&o, &exp, &err);
        gv_listen_addr_clear(&addr);
        if (r < 0)
                return gv_cli_fail(cli, "metrics", &err);

        gv_cli_logf(cli, GV_LOG_INFO, "metrics", "", "serving http://%s" GV_METRICS_PATH " for node %s (status folder %s)",
                    gv_exporter_address(exp), node, output_dir ? output_dir : GV_DEFAULT_OUTPUT_DIR);
        r = gv_exporter_run(exp, cli->stop, &err);
        uint64_t scrapes = gv_exporter_scrapes(exp), renders = gv_exporter_renders(exp);
        gv_exporter_free(&exp);
        if (r < 0)
                return gv_cli_fail(cli, "metrics", &err);
        gv_cli_logf(cli, GV_LOG_INFO, "metrics", "", "stopped after %llu scrapes (%llu renders)",
                    (unsigned long long) scrapes, (unsigned long long) renders);
        return GV_EXIT_OK;
}
