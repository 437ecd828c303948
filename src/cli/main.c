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
#include "gv-commit.h"
#include "gv-version.h"
#include "k8s/k8s.h"
#include "options.h"

/*
 * The one piece of process-wide mutable state: the flag a signal handler
 * sets.  Everything else reads it through gv_cli_t.stop / gv_config_t.stop.
 */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
        stop_requested = sig;
}

static int cmd_help(gv_cli_t *cli, int argc, char **argv);

static const struct command {
        const char *name;
        int (*fn)(gv_cli_t *cli, int argc, char **argv);
        const char *summary;
        bool kubernetes; /* may talk to an API server */
        bool server;     /* runs until stopped: its log is its output, so info is shown by default */
} commands[] = {
        { "run", gv_cmd_run, "validate components in chain order and publish their readiness markers", true, false },
        { "watch", gv_cmd_watch, "validate, then re-validate in place whenever the driver or its device nodes change",
          true, true },
        { "wait", gv_cmd_wait, "block until a component's marker and its whole chain are ready", false, false },
        { "status", gv_cmd_status, "show every marker: ready, missing, stale, inconsistent or foreign", false, false },
        { "env", gv_cmd_env, "print driver-ready's variables for eval, if the chain up to the driver is valid", false,
          false },
        { "cleanup", gv_cmd_cleanup, "remove every marker, downstream first (for preStop)", false, false },
        { "mock", gv_cmd_mock, "install, change or remove a mock driver root (mock libnvidia-ml.so.1, nvidia-smi)",
          false, false },
        { "render", gv_cmd_render, "print the final cuda or plugin validation pod as YAML", false, false },
        { "metrics", gv_cmd_metrics, "serve Prometheus metrics about the markers (read-only)", true, true },
        { "cuda-check", gv_cmd_cuda_check, "run a vector-add kernel on every GPU (the cuda validation pod's program)",
          false, false },
        { "help", cmd_help, "show this help, or a command's: help COMMAND", false, false },
};

/*
 * Upstream's nvidia-validator flags (cmd/nvidia-validator/main.go of the GPU Operator, urfave/cli:
 * each flag also reads the environment variable named here).  In drop-in mode (no command) a flag
 * sets its variable, so it means exactly what the variable means; a flag wins over the
 * environment, as in urfave/cli.
 */
enum { UP_FIRST = 0x200 };
static const struct upstream_flag {
        const char *name;
        const char *alias; /* the short letter, or a second long name ("ns"); NULL: none */
        const char *var;
        enum { UP_STRING, UP_BOOL, UP_UINT } kind;
} upstream_flags[] = {
        { "component", "c", "COMPONENT", UP_STRING },
        { "output-dir", "o", "OUTPUT_DIR", UP_STRING },
        { "with-wait", "w", "WITH_WAIT", UP_BOOL },
        { "with-workload", "l", "WITH_WORKLOAD", UP_BOOL },
        { "node-name", "n", "NODE_NAME", UP_STRING },
        { "namespace", "ns", "OPERATOR_NAMESPACE", UP_STRING },
        { "cleanup-all", "r", "CLEANUP_ALL", UP_BOOL },
        { "sleep-interval-seconds", "s", "SLEEP_INTERVAL_SECONDS", UP_UINT },
        { "mig-strategy", "m", "MIG_STRATEGY", UP_STRING },
        { "metrics-port", "p", "METRICS_PORT", UP_UINT },
        { "default-gpu-workload-config", "g", "DEFAULT_GPU_WORKLOAD_CONFIG", UP_STRING },
        { "disable-dev-char-symlink-creation", NULL, "DISABLE_DEV_CHAR_SYMLINK_CREATION", UP_BOOL },
        { "host-root", NULL, "HOST_ROOT", UP_STRING },
        { "driver-install-dir", NULL, "DRIVER_INSTALL_DIR", UP_STRING },
        { "driver-install-dir-ctr-path", NULL, "DRIVER_INSTALL_DIR_CTR_PATH", UP_STRING },
        { "driver-validation-skip-gpu-init", NULL, "DRIVER_VALIDATION_SKIP_GPU_INIT", UP_BOOL },
        { "kubeconfig", NULL, "KUBECONFIG", UP_STRING },
};

static void usage(FILE *f, const char *prog)
{
        fprintf(f,
                "Usage: %s [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
                "       %s [UPSTREAM FLAGS]     with COMPONENT set (or -c NAME): validate that one\n"
                "                                 component, or serve metrics for COMPONENT=metrics, as\n"
                "                                 the GPU Operator's nvidia-validator does\n"
                "\n"
                "Validates a Kubernetes GPU node (driver -> container toolkit -> CUDA -> device plugin) and\n"
                "publishes race-free readiness markers under OUTPUT_DIR (/run/nvidia/validations).\n"
                "\nCommands:\n",
                prog, prog);
        for (size_t i = 0; i < GV_ARRAY_SIZE(commands); i++)
                fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
        gv_options_help_global(f);
        fprintf(f,
                "  -h, --help               show this help; `help COMMAND` or COMMAND --help: the command's\n"
                "  -V, --version            print the version and the commit it was built from\n"
                "\nUpstream flags (drop-in mode only; each sets the environment variable in brackets):\n");
        for (size_t i = 0; i < GV_ARRAY_SIZE(upstream_flags); i++) {
                const struct upstream_flag *u = &upstream_flags[i];
                _cleanup_free_ char *names = NULL;
                if (asprintf(&names, "%s%s%s--%s%s", u->alias ? (u->alias[1] ? "--" : "-") : "",
                             u->alias ? u->alias : "", u->alias ? ", " : "", u->name,
                             u->kind == UP_BOOL ? "[=BOOL]" : u->kind == UP_UINT ? " N" : " VALUE") < 0)
                        names = NULL;
                fprintf(f, "  %-44s (%s)\n", names ? names : u->name, u->var);
        }
        fprintf(f,
                "\nExamples:\n"
                "  %s run --mock                      validate a mock GPU node, no GPU needed\n"
                "  %s status                          the markers under /run/nvidia/validations\n"
                "  %s wait toolkit --timeout 600      block until the driver and toolkit are ready\n"
                "  COMPONENT=driver WITH_WAIT=true %s  upstream drop-in: validate the driver\n"
                "  %s -c toolkit -o /run/nvidia/validations   the same with upstream's flags\n"
                "\nExit codes:\n"
                "  0 success (or skipped on purpose)   1 validation failed\n"
                "  2 usage or configuration error      3 timed out\n"
                "  4 interrupted (SIGTERM/SIGINT)       5 cuda-check only: no GPU driver at all\n"
                "\nSee docs/ (markers.md, errors.md, components.md) for the marker protocol.\n",
                prog, prog, prog, prog, prog);
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

int main(int argc, char **argv)
{
        gv_cli_t cli = {
                .prog = "gpu-validator",
                .log_format = GV_LOG_FORMAT_TEXT,
                .min_level = GV_LOG_WARN,
                .stop = &stop_requested,
        };
        _cleanup_free_ char *exe_dir = find_exe_dir(argv[0]);
        cli.exe_dir = exe_dir;
        cli.invoked = argv[0] && strchr(argv[0], '/') ? argv[0] : cli.prog;

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
 * Run @cmd with libcurl's process-wide set-up done first (once, before any
 * thread such as the node signal's starts) when it may talk to Kubernetes;
 * commands that never talk to an API server skip it and stay small.  A
 * server command logs at info unless a level was chosen.
 */
static int call(gv_cli_t *cli, const struct command *cmd, int argc, char **argv)
{
        optind = 0; /* full getopt re-initialisation for the command */
        if (cmd->server && !cli->level_set)
                cli->min_level = GV_LOG_INFO;
        if (!cmd->kubernetes)
                return cmd->fn(cli, argc, argv);
        _cleanup_error_ gv_error_t *init_err = NULL;
        if (gv_k8s_global_init(&init_err) < 0)
                return gv_cli_fail(cli, NULL, &init_err);
        int code = cmd->fn(cli, argc, argv);
        gv_k8s_global_cleanup();
        return code;
}

static const struct command *find_command(const char *name)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        return NULL;
}

/* `help [COMMAND [SUBCOMMAND]]`: this help, or COMMAND's --help (exactly what `COMMAND --help` prints). */
static int cmd_help(gv_cli_t *cli, int argc, char **argv)
{
        if (argc < 2) {
                usage(stdout, cli->prog);
                return GV_EXIT_OK;
        }
        const struct command *cmd = find_command(argv[1]);
        if (!cmd || cmd->fn == cmd_help)
                return gv_cli_usage_error(cli, "help", "unknown command '%s'", argv[1]);
        /* COMMAND [SUBCOMMAND] --help */
        char *sub_argv[4] = { argv[1], NULL, NULL, NULL };
        int n = 1;
        if (argc > 2)
                sub_argv[n++] = argv[2];
        sub_argv[n++] = (char *) "--help";
        optind = 0;
        return cmd->fn(cli, n, sub_argv);
}

/* The getopt_long table of the options before the command: ours and upstream's flags. */
static struct option *pre_command_options(void)
{
        static const struct option ours[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
        };
        size_t n = GV_ARRAY_SIZE(ours) + 2 * GV_ARRAY_SIZE(upstream_flags);
        struct option *opts = calloc(n + 1, sizeof(*opts));
        if (!opts)
                return NULL;
        memcpy(opts, ours, sizeof(ours));
        size_t k = GV_ARRAY_SIZE(ours);
        for (size_t i = 0; i < GV_ARRAY_SIZE(upstream_flags); i++) {
                const struct upstream_flag *u = &upstream_flags[i];
                int has_arg = u->kind == UP_BOOL ? optional_argument : required_argument;
                opts[k++] = (struct option) { u->name, has_arg, NULL, UP_FIRST + (int) i };
                /* the alias as a long name too: "-ns", and "-l=false" (an exact name, never an
                 * abbreviation of --log-level); a one-letter alias is also a short option */
                if (u->alias)
                        opts[k++] = (struct option) { u->alias, has_arg, NULL, UP_FIRST + (int) i };
        }
        return opts;
}

/* One upstream flag @u with value @arg (NULL for a bare boolean) into its environment variable. */
static int apply_upstream_flag(gv_cli_t *cli, const struct upstream_flag *u, const char *arg)
{
        bool b;
        unsigned n;
        if (arg && arg[0] == '=') /* -l=false: Go's spelling of a short flag with a value */
                arg++;
        const char *v = arg;
        if (u->kind == UP_BOOL && !arg)
                v = "true";
        else if (u->kind == UP_BOOL && gv_parse_bool(arg, &b) < 0)
                return gv_cli_usage_error(cli, "", "--%s=%s: expected true or false", u->name, arg);
        else if (u->kind == UP_UINT && gv_parse_uint(arg, &n) < 0)
                return gv_cli_usage_error(cli, "", "--%s %s: expected a whole number", u->name, arg);
        if (!v)
                return gv_cli_usage_error(cli, "", "--%s needs a value", u->name);
        if (setenv(u->var, v, 1) < 0)
                return gv_cli_usage_error(cli, "", "--%s: %s", u->name, strerror(errno));
        return GV_EXIT_OK;
}

/* The upstream drop-in mode: COMPONENT (or -c) picks one component, or the metrics exporter. */
static int drop_in(gv_cli_t *cli)
{
        const char *component = gv_env("COMPONENT");
        if (!component)
                return gv_cli_usage_error(cli, "", "no command and no component: give a COMMAND (see --help), or "
                                                   "set COMPONENT or -c NAME as upstream's nvidia-validator takes it");
        char *sub_argv[] = { (char *) (strcmp(component, "metrics") == 0 ? "metrics" : "run"), NULL };
        return call(cli, find_command(sub_argv[0]), 1, sub_argv);
}

static int dispatch(gv_cli_t *cli_ptr, int argc, char **argv)
{
        gv_cli_t cli = *cli_ptr;
        const char *lf = gv_env("LOG_FORMAT");
        if (lf && gv_cli_set_log_format(&cli, lf) < 0)
                return gv_cli_usage_error(&cli, "", "LOG_FORMAT=%s: expected text or json", lf);
        const char *ll = gv_env("LOG_LEVEL");
        if (ll && gv_cli_set_log_level(&cli, ll) < 0)
                return gv_cli_usage_error(&cli, "", "LOG_LEVEL=%s: expected debug, info, warning or error", ll);

        /* Options before the command, upstream's one-dash long names (-ns, -node-name) included. */
        _cleanup_free_ struct option *opts = pre_command_options();
        if (!opts)
                return gv_cli_usage_error(&cli, "", "out of memory");
        const char *first_upstream = NULL;
        int c, code = GV_EXIT_OK;
        optind = 0;
        while ((c = gv_cli_getopt_long_only(&cli, "", argc, argv, "+hVc:o:w::l::n:r::s:m:p:g:", opts, &code)) != -1) {
                const char *letters = "cowlnrsmpg";
                const char *l = c > 0 && c < 0x100 ? strchr(letters, c) : NULL;
                if (l) /* the short letter of one of the first upstream flags */
                        for (size_t i = 0; i < GV_ARRAY_SIZE(upstream_flags); i++)
                                if (upstream_flags[i].alias && upstream_flags[i].alias[0] == c &&
                                    !upstream_flags[i].alias[1])
                                        c = UP_FIRST + (int) i;
                if (c == GV_GETOPT_STOP)
                        return code;
                if (c == 'h') {
                        usage(stdout, cli.prog);
                        return GV_EXIT_OK;
                }
                if (c == 'V') {
                        printf("gpu-validator %s (commit %s)\n", GV_VERSION, GV_COMMIT);
                        return GV_EXIT_OK;
                }
                if (c >= UP_FIRST && c < UP_FIRST + (int) GV_ARRAY_SIZE(upstream_flags)) {
                        const struct upstream_flag *u = &upstream_flags[c - UP_FIRST];
                        if ((code = apply_upstream_flag(&cli, u, optarg)) != GV_EXIT_OK)
                                return code;
                        if (!first_upstream)
                                first_upstream = u->name;
                        continue;
                }
                return gv_cli_usage_error(&cli, "", "unknown option");
        }

        if (optind >= argc)
                return drop_in(&cli);
        const char *name = argv[optind];
        const struct command *cmd = find_command(name);
        if (!cmd)
                return gv_cli_usage_error(&cli, "", "unknown command '%s'", name);
        if (first_upstream)
                return gv_cli_usage_error(&cli, "", "--%s is one of upstream's flags, for the drop-in mode without a "
                                                    "command; give `%s` its own options (see %s --help)",
                                          first_upstream, name, name);
        return call(&cli, cmd, argc - optind, argv + optind);
}
