/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator: entry point and subcommand dispatch.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "cli.h"
#include "gv-version.h"
#include "k8s/k8s.h"

/*
 * The one piece of process-wide mutable state: the flag a signal handler
 * sets.  Everything else reads it through gv_cli_t.stop / gv_config_t.stop.
 */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
        stop_requested = sig;
}

static const struct {
        const char *name;
        int (*fn)(gv_cli_t *cli, int argc, char **argv);
        const char *summary;
        bool kubernetes; /* may talk to an API server */
} commands[] = {
        { "run", gv_cmd_run, "validate components in chain order and publish their readiness markers", true },
        { "watch", gv_cmd_watch, "validate, then re-validate in place whenever the driver or its device nodes change", true },
        { "wait", gv_cmd_wait, "block until a component's marker and its whole chain are ready", false },
        { "status", gv_cmd_status, "show every marker: ready, missing, stale, inconsistent or foreign", false },
        { "env", gv_cmd_env, "print driver-ready's variables for eval, if the chain up to the driver is valid", false },
        { "cleanup", gv_cmd_cleanup, "remove every marker, downstream first (for preStop)", false },
        { "mock", gv_cmd_mock, "install or remove a mock driver root (mock libnvidia-ml.so.1, nvidia-smi)", false },
        { "render", gv_cmd_render, "print the final cuda or plugin validation pod as YAML", false },
        { "metrics", gv_cmd_metrics, "serve Prometheus metrics about the markers (read-only)", true },
        { "cuda-check", gv_cmd_cuda_check, "run a vector-add kernel on every GPU (the cuda validation pod's program)", false },
};

static void usage(FILE *f, const char *prog)
{
        fprintf(f,
                "Usage: %s [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
                "       %s                 (with COMPONENT set: validate that one component, or serve\n"
                "                                 metrics for COMPONENT=metrics, as the upstream\n"
                "                                 nvidia-operator-validator does)\n"
                "\n"
                "Validates a Kubernetes GPU node (driver -> container toolkit -> CUDA -> device plugin) and\n"
                "publishes race-free readiness markers under OUTPUT_DIR (/run/nvidia/validations).\n"
                "\nCommands:\n",
                prog, prog);
        for (size_t i = 0; i < GV_ARRAY_SIZE(commands); i++)
                fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
        fprintf(f,
                "\nGlobal options:\n"
                "  -c, --component NAME     as COMPONENT: validate that one component (upstream's flag)\n"
                "  --log-format=text|json   log line format on stderr (LOG_FORMAT)\n"
                "  -v, --verbose            also log debug events\n"
                "  -h, --help               show this help; COMMAND --help shows the command's\n"
                "  -V, --version            print the version\n"
                "\nExit codes:\n"
                "  0 success (or skipped on purpose)   1 validation failed\n"
                "  2 usage or configuration error      3 timed out\n"
                "  4 interrupted (SIGTERM/SIGINT)       5 cuda-check only: no GPU driver at all\n"
                "Global options come before COMMAND.\n"
                "\nSee docs/ (markers.md, errors.md, components.md) for the marker protocol.\n");
}

static int set_log_format(gv_cli_t *cli, const char *v)
{
        if (strcmp(v, "text") == 0)
                cli->log_format = GV_LOG_FORMAT_TEXT;
        else if (strcmp(v, "json") == 0)
                cli->log_format = GV_LOG_FORMAT_JSON;
        else
                return -EINVAL;
        return 0;
}

static char *find_exe_dir(const char *argv0)
{
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        if (!self)
                self = realpath(argv0, NULL);
        if (!self)
                return strdup(".");
        return strdup(dirname(self));
}

static int dispatch(gv_cli_t *cli, int argc, char **argv);
static int call(gv_cli_t *cli, int (*fn)(gv_cli_t *, int, char **), bool kubernetes, int argc, char **argv);

int main(int argc, char **argv)
{
        gv_cli_t cli = {
                .prog = "gpu-validator",
                .log_format = GV_LOG_FORMAT_TEXT,
                .min_level = GV_LOG_INFO,
                .stop = &stop_requested,
        };
        _cleanup_free_ char *exe_dir = find_exe_dir(argv[0]);
        cli.exe_dir = exe_dir;

        struct sigaction sa = { .sa_handler = on_stop_signal };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        /*
         * SIGCHLD may arrive ignored (a container runtime, a parent shell):
         * the kernel would then reap nvidia-smi itself and its exit code would
         * be lost.  Restore the default before any child is started.
         */
        signal(SIGCHLD, SIG_DFL);

        return dispatch(&cli, argc, argv);
}

/*
 * Run @fn with libcurl's process-wide set-up done first (once, before any
 * thread such as the node signal's starts) when @kubernetes; commands that
 * never talk to an API server skip it and stay small.
 */
static int call(gv_cli_t *cli, int (*fn)(gv_cli_t *, int, char **), bool kubernetes, int argc, char **argv)
{
        if (!kubernetes)
                return fn(cli, argc, argv);
        _cleanup_error_ gv_error_t *init_err = NULL;
        if (gv_k8s_global_init(&init_err) < 0)
                return gv_cli_fail(cli, NULL, &init_err);
        int code = fn(cli, argc, argv);
        gv_k8s_global_cleanup();
        return code;
}

static int dispatch(gv_cli_t *cli_ptr, int argc, char **argv)
{
        gv_cli_t cli = *cli_ptr;
        const char *lf = gv_env("LOG_FORMAT");
        if (lf && set_log_format(&cli, lf) < 0)
                return gv_cli_usage_error(&cli, "", "LOG_FORMAT=%s: expected text or json", lf);

        /* Global options stop at the first non-option (the command). */
        static const struct option opts[] = {
                { "log-format", required_argument, NULL, 'L' },
                { "component", required_argument, NULL, 'c' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *component_flag = NULL; /* -c/--component, upstream's flag for COMPONENT */
        int c;
        while ((c = getopt_long(argc, argv, "+vhVc:", opts, NULL)) != -1) {
                switch (c) {
                case 'L':
                        if (set_log_format(&cli, optarg) < 0)
                                return gv_cli_usage_error(&cli, "", "--log-format=%s: expected text or json",
                                                          optarg);
                        break;
                case 'v':
                        cli.min_level = GV_LOG_DEBUG;
                        break;
                case 'c':
                        component_flag = optarg;
                        break;
                case 'h':
                        usage(stdout, cli.prog);
                        return GV_EXIT_OK;
                case 'V':
                        printf("gpu-validator %s\n", GV_VERSION);
                        return GV_EXIT_OK;
                default:
                        usage(stderr, cli.prog);
                        return GV_EXIT_USAGE;
                }
        }

        if (optind >= argc) {
                /* Drop-in mode for the upstream image: COMPONENT selects one component. */
                const char *component = component_flag ? component_flag : gv_env("COMPONENT");
                if (component_flag && setenv("COMPONENT", component_flag, 1) < 0)
                        return gv_cli_usage_error(&cli, "", "--component: %s", strerror(errno));
                if (component && strcmp(component, "metrics") == 0) {
                        /* The operator runs the validator image with COMPONENT=metrics too. */
                        char *metrics_argv[] = { (char *) "metrics", NULL };
                        optind = 0;
                        return call(&cli, gv_cmd_metrics, true, 1, metrics_argv);
                }
                if (component) {
                        char *run_argv[] = { (char *) "run", NULL };
                        optind = 0;
                        return call(&cli, gv_cmd_run, true, 1, run_argv);
                }
                usage(stderr, cli.prog);
                return GV_EXIT_USAGE;
        }

        const char *name = argv[optind];
        for (size_t i = 0; i < GV_ARRAY_SIZE(commands); i++) {
                if (strcmp(commands[i].name, name) == 0) {
                        int sub_argc = argc - optind;
                        char **sub_argv = argv + optind;
                        optind = 0; /* full getopt re-initialisation for the subcommand */
                        return call(&cli, commands[i].fn, commands[i].kubernetes, sub_argc, sub_argv);
                }
        }
        fprintf(stderr, "%s: unknown command '%s'\n", cli.prog, name);
        usage(stderr, cli.prog);
        return GV_EXIT_USAGE;
}
