/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Our nvidia-smi: a subset of NVIDIA's tool written over NVML through the
 * project's dlopen loader (abi/nvml/nvml-loader.h), so it runs on the mock
 * libnvidia-ml.so.1 and on a real driver alike.  Output formats follow the
 * real captures in shared/cases/nvidia-smi/; see docs/nvidia-smi.md.
 *
 * It needs no environment variable: the library is looked for beside the
 * executable (../lib64, ../lib, ../lib/x86_64-linux-gnu, and ../nvml in the
 * build tree) and then through the system search.
 *
 * Like the real tool it writes errors to stdout and exits with the NVML
 * return code of a fatal error (9 driver not loaded, 12 library not found,
 * 18 driver/library mismatch, 4 no permission, 15 GPU lost, 6 no device).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

static void usage(FILE *f)
{
        fputs("NVIDIA System Management Interface -- gpu-validator's nvidia-smi (a subset, over NVML)\n"
              "\n"
              "nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...\n"
              "\n"
              "    -h,   --help                Print usage information and exit.\n"
              "          --version             Print version information and exit.\n"
              "    -L,   --list-gpus           Display a list of GPUs connected to the system.\n"
              "    -q,   --query               Display GPU or Unit info.\n"
              "    -x,   --xml-format          Produce XML output (with -q).\n"
              "    -i,   --id=                 Target a specific GPU: index, UUID or PCI bus id;\n"
              "                                a comma separated list selects several.\n"
              "    --query-gpu=                Information about GPU, comma separated.\n"
              "    --format=                   csv, optionally with noheader and nounits.\n"
              "    --help-query-gpu            List the --query-gpu fields.\n"
              "\n"
              "Supported --query-gpu fields:\n",
              f);
        /* In the order of smi_field_id_t: the real --help-query-gpu order. */
        for (int id = 0; id < SMI_F__MAX; id++) {
                const smi_field_def_t *d = smi_field_by_id((smi_field_id_t) id);
                if (!d || !d->name)
                        continue;
                fprintf(f, "    %s", d->name);
                for (size_t a = 0; a < GV_ARRAY_SIZE(d->aliases) && d->aliases[a]; a++)
                        fprintf(f, " (or %s)", d->aliases[a]);
                fputc('\n', f);
        }
        fputs("\nReturn codes: 0 success, 2 invalid argument, 4 no permission, 6 no such GPU,\n"
              "9 driver not loaded, 12 NVML library not found, 15 GPU lost, 18 driver/library mismatch.\n",
              f);
}


/* ---- init ---- */

static int init_failed(const gv_nvml_t *n, nvmlReturn_t r)
{
        switch (r) {
        case NVML_ERROR_DRIVER_NOT_LOADED:
                printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
                       "that the latest NVIDIA driver is installed and running.\n\n");
                return SMI_EXIT_DRIVER_NOT_LOADED;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
                printf("Failed to initialize NVML: Driver/library version mismatch\n");
                return SMI_EXIT_MISMATCH;
        case NVML_ERROR_NO_PERMISSION:
                printf("Failed to initialize NVML: Insufficient Permissions\n");
                return SMI_EXIT_NO_PERMISSION;
        case NVML_ERROR_LIBRARY_NOT_FOUND:
                printf("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the "
                       "NVIDIA Display Driver is properly installed and present in your system.\n"
                       "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n");
                return SMI_EXIT_LIBRARY_NOT_FOUND;
        default:
                printf("Failed to initialize NVML: %s\n", gv_nvml_strerror(n, r));
                return (int) r > 0 && (int) r < 255 ? (int) r : SMI_EXIT_OTHER;
        }
}

static int print_version(smi_t *s)
{
        printf("NVIDIA-SMI version  : %s\n", s->driver_version);
        printf("NVML version        : %s\n", s->nvml_version[0] ? s->nvml_version : "N/A");
        printf("DRIVER version      : %s\n", s->driver_version);
        printf("CUDA Version        : %s\n", s->cuda_version);
        return SMI_EXIT_OK;
}

/*
 * --help-query-gpu: every --query-gpu name (with its aliases), in the real tool's order.  The real tool prints a
 * description under each name; ours lists the names only.  The names are those of the real 590/595 CSV headers
 * (shared/cases/nvidia-smi/csv__query-gpu_*), which query every field of their --help-query-gpu; the aliases
 * (clocks.gr, gpu_name, clocks_throttle_reasons.*) are the older spellings the real help lists as "or ...".
 */
static int print_help_query_gpu(void)
{
        printf("List of valid properties to query for the switch \"--query-gpu=\":\n\n");
        for (int id = 0; id < SMI_F__MAX; id++) {
                const smi_field_def_t *d = smi_field_by_id((smi_field_id_t) id);
                if (!d || !d->name)
                        continue;
                printf("\"%s\"", d->name);
                for (size_t a = 0; a < GV_ARRAY_SIZE(d->aliases) && d->aliases[a]; a++)
                        printf(" or \"%s\"", d->aliases[a]);
                printf("\n\n");
        }
        return SMI_EXIT_OK;
}

static int invalid_args(void)
{
        printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
        return SMI_EXIT_INVALID_ARG;
}


/*
 * The real tool's options and subcommands this one does not model: each says so plainly
 * (exit 2) instead of "Invalid combination of input arguments" (nvidia-smi -h of R535..R590).
 */
static const char *const unmodelled_options[] = {
        "e", "ecc-config", "p", "reset-ecc-errors", "c", "compute-mode", "lgc", "lock-gpu-clocks", "rgc",
        "reset-gpu-clocks", "lmc", "lock-memory-clocks", "rmc", "reset-memory-clocks", "ac", "applications-clocks",
        "rac", "reset-applications-clocks", "acp", "applications-clocks-permission", "pl", "power-limit", "cc",
        "cuda-clocks", "am", "accounting-mode", "caa", "clear-accounted-apps", "mig", "multi-instance-gpu", "gtt",
        "gpu-target-temp", "f", "filename", "u", "unit", "dtd", "debug", "B", "sc", "lmcd", "lsc",
        "query-accounted-apps", "query-retired-pages", "query-remapped-rows", "query-supported-clocks",
        "auto-boost-default", "auto-boost-permission", NULL,
};
static const char *const unmodelled_subcommands[] = {
        "drain", "clocks", "encodersessions", "fbcsessions", "vgpu", "boost-slider", "power-hint", "conf-compute",
        "power-smoothing", "power-profiles", "c2c", "daemon", "replay", "mps", "gpm", NULL,
};

/* Whether @arg ("-pl", "--power-limit=200") is one of @names. */
static bool names_one_of(const char *arg, const char *const *names)
{
        if (arg[0] != '-')
                return false;
        arg += arg[1] == '-' ? 2 : 1;
        size_t len = strcspn(arg, "=");
        for (const char *const *n = names; *n; n++)
                if (strlen(*n) == len && strncmp(arg, *n, len) == 0)
                        return true;
        return false;
}

static int not_modelled(const char *what)
{
        printf("%s: not modelled by gpu-validator's nvidia-smi (a subset over NVML; docs/nvidia-smi.md lists what "
               "is).\n\n",
               what);
        return SMI_EXIT_INVALID_ARG;
}

/* The subcommands (nvidia-smi SUB [options]). */
typedef enum sub { SUB_NONE, SUB_TOPO, SUB_MIG, SUB_DMON, SUB_PMON, SUB_NVLINK } sub_t;

/* The command line. */
typedef struct args {
        bool list, query, xml, version, reset;
        const char *ids, *query_gpu, *format, *display, *query_apps, *pm;
        unsigned loop_ms;       /* -l N (seconds) / -lms N: repeat the view; 0: once */
        sub_t sub;
        bool topo_matrix, nvlink_status;
        nvsmi_mig_list_t mig_list;
        const char *gi;         /* mig -gi LIST */
        unsigned count;         /* dmon/pmon -c N; 0: forever */
        unsigned delay_s;       /* dmon/pmon -d N */
} args_t;

enum {
        OPT_QUERY_GPU = 256, OPT_FORMAT, OPT_VERSION, OPT_HELP_QUERY_GPU, OPT_QUERY_APPS, OPT_LOOP, OPT_LOOP_MS,
        OPT_PM, OPT_RESET, OPT_DISPLAY, OPT_MATRIX, OPT_LGIP, OPT_LGI, OPT_LCI, OPT_LCIP, OPT_GI, OPT_COUNT,
        OPT_DELAY, OPT_STATUS,
};

/* A whole number option value into *out; -1 when it is not one. */
static int parse_count(const char *arg, unsigned *out)
{
        char *end = NULL;
        errno = 0;
        unsigned long v = arg ? strtoul(arg, &end, 10) : 0;
        if (!arg || !*arg || *end || errno || v > 1000000000UL)
                return -1;
        *out = (unsigned) v;
        return 0;
}

/* One option of the main command (no subcommand); -1 to go on, else the exit code. */
static int main_option(int c, const char *arg, args_t *a)
{
        switch (c) {
        case 'h':
                usage(stdout);
                return SMI_EXIT_OK;
        case 'L':
                a->list = true;
                return -1;
        case 'q':
                a->query = true;
                return -1;
        case 'x':
                a->xml = true;
                return -1;
        case 'i':
                a->ids = arg;
                return -1;
        case OPT_QUERY_GPU:
                a->query_gpu = arg;
                return -1;
        case OPT_QUERY_APPS:
                a->query_apps = arg;
                return -1;
        case OPT_FORMAT:
                a->format = arg;
                return -1;
        case OPT_DISPLAY:
                a->display = arg;
                return -1;
        case OPT_VERSION:
                a->version = true;
                return -1;
        case OPT_HELP_QUERY_GPU:
                return print_help_query_gpu();
        case OPT_LOOP:
        case OPT_LOOP_MS: {
                unsigned v = 0;
                if (parse_count(arg, &v) < 0 || v == 0)
                        return invalid_args();
                a->loop_ms = c == OPT_LOOP ? v * 1000 : v;
                return -1;
        }
        case OPT_PM:
                a->pm = arg;
                return -1;
        case OPT_RESET:
                a->reset = true;
                return -1;
        default:
                return invalid_args();
        }
}

/* One option of a subcommand; -1 to go on, else the exit code. */
static int sub_option(int c, const char *arg, args_t *a)
{
        switch (c) {
        case 'h':
                usage(stdout);
                return SMI_EXIT_OK;
        case 'i':
                a->ids = arg;
                return -1;
        case OPT_MATRIX:
                a->topo_matrix = true;
                return -1;
        case OPT_STATUS:
                a->nvlink_status = true;
                return -1;
        case OPT_LGIP:
        case OPT_LGI:
        case OPT_LCI:
        case OPT_LCIP:
                a->mig_list = c == OPT_LGIP ? NVSMI_MIG_LGIP : c == OPT_LGI ? NVSMI_MIG_LGI
                              : c == OPT_LCI ? NVSMI_MIG_LCI : NVSMI_MIG_LCIP;
                return -1;
        case OPT_GI:
                a->gi = arg;
                return -1;
        case OPT_COUNT:
                return parse_count(arg, &a->count) < 0 || a->count == 0 ? invalid_args() : -1;
        case OPT_DELAY:
                return parse_count(arg, &a->delay_s) < 0 || a->delay_s == 0 ? invalid_args() : -1;
        default:
                return invalid_args();
        }
}

/* The options of @sub (getopt_long_only: the real tool's one-dash long names, -lgip, -lms). */
static const struct option *sub_options(sub_t sub)
{
        static const struct option main_opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "list-gpus", no_argument, NULL, 'L' },
                { "query", no_argument, NULL, 'q' },
                { "xml-format", no_argument, NULL, 'x' },
                { "id", required_argument, NULL, 'i' },
                { "query-gpu", required_argument, NULL, OPT_QUERY_GPU },
                { "query-compute-apps", required_argument, NULL, OPT_QUERY_APPS },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "display", required_argument, NULL, OPT_DISPLAY },
                { "d", required_argument, NULL, OPT_DISPLAY },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help-query-gpu", no_argument, NULL, OPT_HELP_QUERY_GPU },
                { "loop", required_argument, NULL, OPT_LOOP },
                { "l", required_argument, NULL, OPT_LOOP },
                { "loop-ms", required_argument, NULL, OPT_LOOP_MS },
                { "lms", required_argument, NULL, OPT_LOOP_MS },
                { "persistence-mode", required_argument, NULL, OPT_PM },
                { "pm", required_argument, NULL, OPT_PM },
                { "gpu-reset", no_argument, NULL, OPT_RESET },
                { "r", no_argument, NULL, OPT_RESET },
                {},
        };
        static const struct option topo_opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "matrix", no_argument, NULL, OPT_MATRIX },
                { "m", no_argument, NULL, OPT_MATRIX },
                { "id", required_argument, NULL, 'i' },
                {},
        };
        static const struct option mig_opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "id", required_argument, NULL, 'i' },
                { "list-gpu-instance-profiles", no_argument, NULL, OPT_LGIP },
                { "lgip", no_argument, NULL, OPT_LGIP },
                { "list-gpu-instances", no_argument, NULL, OPT_LGI },
                { "lgi", no_argument, NULL, OPT_LGI },
                { "list-compute-instances", no_argument, NULL, OPT_LCI },
                { "lci", no_argument, NULL, OPT_LCI },
                { "list-compute-instance-profiles", no_argument, NULL, OPT_LCIP },
                { "lcip", no_argument, NULL, OPT_LCIP },
                { "gpu-instance-id", required_argument, NULL, OPT_GI },
                { "gi", required_argument, NULL, OPT_GI },
                {},
        };
        static const struct option mon_opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "id", required_argument, NULL, 'i' },
                { "count", required_argument, NULL, OPT_COUNT },
                { "c", required_argument, NULL, OPT_COUNT },
                { "delay", required_argument, NULL, OPT_DELAY },
                { "d", required_argument, NULL, OPT_DELAY },
                {},
        };
        static const struct option nvlink_opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "id", required_argument, NULL, 'i' },
                { "status", no_argument, NULL, OPT_STATUS },
                { "s", no_argument, NULL, OPT_STATUS },
                {},
        };
        switch (sub) {
        case SUB_TOPO:
                return topo_opts;
        case SUB_MIG:
                return mig_opts;
        case SUB_DMON:
        case SUB_PMON:
                return mon_opts;
        case SUB_NVLINK:
                return nvlink_opts;
        default:
                return main_opts;
        }
}

/* The checks no single option makes; -1 to go on, else the exit code. */
static int check_args(const args_t *a)
{
        if (a->sub == SUB_TOPO && !a->topo_matrix)
                return not_modelled("nvidia-smi topo (only -m, the matrix, is)");
        if (a->sub == SUB_MIG && a->mig_list == NVSMI_MIG_NONE)
                return not_modelled("nvidia-smi mig (only -lgip, -lgi, -lci and -lcip are)");
        if (a->sub == SUB_NVLINK && !a->nvlink_status)
                return not_modelled("nvidia-smi nvlink (only -s, the link status, is)");
        if (a->sub != SUB_NONE)
                return -1;
        int views = a->list + a->query + (a->query_gpu != NULL) + (a->query_apps != NULL) + (a->pm != NULL) + a->reset;
        if ((a->xml && !a->query) || (a->display && !a->query) || views > 1)
                return invalid_args();
        return -1;
}

/* Parses the options into *a; returns -1 to go on, else the exit code (after -h, or for a bad command line). */
static int parse_args(int argc, char **argv, args_t *a)
{
        static const struct {
                const char *name;
                sub_t sub;
        } subs[] = {
                { "topo", SUB_TOPO }, { "mig", SUB_MIG }, { "dmon", SUB_DMON }, { "pmon", SUB_PMON },
                { "nvlink", SUB_NVLINK },
        };
        int first = 1;
        for (size_t i = 0; argc > 1 && i < GV_ARRAY_SIZE(subs); i++)
                if (strcmp(argv[1], subs[i].name) == 0) {
                        a->sub = subs[i].sub;
                        first = 2;
                }
        if (argc > 1 && a->sub == SUB_NONE)
                for (const char *const *u = unmodelled_subcommands; *u; u++)
                        if (strcmp(argv[1], *u) == 0)
                                return not_modelled(argv[1]);
        for (int i = first; a->sub == SUB_NONE && i < argc; i++)
                if (names_one_of(argv[i], unmodelled_options))
                        return not_modelled(argv[i]);
        const struct option *opts = sub_options(a->sub);
        const char *shorts = a->sub == SUB_NONE ? "hLqxi:d:l:r" : a->sub == SUB_TOPO ? "hmi:"
                             : a->sub == SUB_NVLINK                 ? "hsi:"
                             : a->sub == SUB_MIG                    ? "hi:"
                                                                    : "hi:c:d:";
        int c;
        opterr = 0;
        optind = first;
        while ((c = getopt_long_only(argc, argv, shorts, opts, NULL)) != -1) {
                if (a->sub != SUB_NONE && c == 'm')
                        c = OPT_MATRIX;
                if (a->sub != SUB_NONE && c == 's')
                        c = OPT_STATUS;
                if (a->sub != SUB_NONE && c == 'c')
                        c = OPT_COUNT;
                if (c == 'd')
                        c = a->sub == SUB_NONE ? OPT_DISPLAY : OPT_DELAY;
                if (c == 'l')
                        c = OPT_LOOP;
                if (c == 'r')
                        c = OPT_RESET;
                if (c == '?' && a->sub != SUB_NONE) { /* a subcommand's option the subset leaves out */
                        char what[128];
                        snprintf(what, sizeof(what), "nvidia-smi %s %s", argv[1], argv[optind - 1]);
                        return not_modelled(what);
                }
                int rc = a->sub == SUB_NONE ? main_option(c, optarg, a) : sub_option(c, optarg, a);
                if (rc >= 0)
                        return rc;
        }
        if (optind < argc)
                return invalid_args();
        return check_args(a);
}

/* Parses --query-gpu / --format into *q; returns -1 to go on, else the exit code after the real tool's message. */
static int parse_query(const args_t *a, smi_query_t *q)
{
        _cleanup_free_ char *bad = NULL;
        switch (smi_query_parse(a->query_gpu, a->format, q, &bad)) {
        case SMI_PARSE_OK:
                return -1;
        case SMI_PARSE_BAD_FIELD:
                printf("Field \"%s\" is not a valid field to query.\n\n", bad ? bad : "");
                return SMI_EXIT_INVALID_ARG;
        case SMI_PARSE_BAD_FORMAT:
                printf("\"%s\" is not a valid format option.\n\n", bad ? bad : "");
                return SMI_EXIT_INVALID_ARG;
        case SMI_PARSE_NO_FORMAT:
                printf("Format must be specified when querying.  Please run 'nvidia-smi "
                       "--help-query-gpu' for help.\n\n");
                return SMI_EXIT_INVALID_ARG;
        case SMI_PARSE_EMPTY:
                printf("No fields given to --query-gpu.\n\n");
                return SMI_EXIT_INVALID_ARG;
        default:
                return SMI_EXIT_OTHER;
        }
}

/* Driver, NVML and CUDA versions ("N/A" where the library cannot say). */
static void read_versions(smi_t *s)
{
        if (s->nvml->nvmlSystemGetDriverVersion(s->driver_version, sizeof(s->driver_version)) != NVML_SUCCESS)
                snprintf(s->driver_version, sizeof(s->driver_version), "N/A");
        if (NV(s->nvml, nvmlSystemGetNVMLVersion, s->nvml_version, sizeof(s->nvml_version)) != NVML_SUCCESS)
                s->nvml_version[0] = '\0';
        int cuda = 0;
        if (NV(s->nvml, nvmlSystemGetCudaDriverVersion_v2, &cuda) == NVML_SUCCESS ||
            NV(s->nvml, nvmlSystemGetCudaDriverVersion, &cuda) == NVML_SUCCESS)
                snprintf(s->cuda_version, sizeof(s->cuda_version), "%d.%d", cuda / 1000, (cuda % 1000) / 10);
        else
                snprintf(s->cuda_version, sizeof(s->cuda_version), "N/A");
}

/* The view @a asks for, on the selected and gathered GPUs of @s. */
static int view(smi_t *s, const args_t *a, const smi_query_t *q, bool first)
{
        switch (a->sub) {
        case SUB_TOPO:
                return nvsmi_view_topo(s);
        case SUB_MIG:
                return nvsmi_view_mig(s, a->mig_list, a->gi);
        case SUB_NVLINK:
                return nvsmi_view_nvlink(s);
        case SUB_DMON:
        case SUB_PMON:
                return nvsmi_view_monitor(s, a->sub == SUB_PMON, a->count, a->delay_s ? a->delay_s : 1);
        default:
                break;
        }
        if (a->list)
                return nvsmi_list_gpus(s);
        if (a->query_gpu) {
                smi_query_t once = *q;
                once.header = q->header && first; /* a loop prints the header once */
                return nvsmi_view_csv(s, &once);
        }
        if (a->query_apps)
                return nvsmi_view_compute_apps(s, a->query_apps, a->format, first);
        if (a->pm)
                return nvsmi_set_persistence(s, a->pm);
        if (a->reset)
                return nvsmi_reset(s);
        if (a->query)
                return nvsmi_view_query(s, a->xml, a->display);
        return nvsmi_view_table(s);
}

/* Select, gather, write the view once; free what was gathered. */
static int run_once(smi_t *s, const args_t *a, const smi_query_t *q, bool first)
{
        int sr = nvsmi_select_gpus(s, a->ids);
        if (sr == -ENOMEM)
                return SMI_EXIT_OTHER;
        if (sr < 0) {
                printf("No devices were found\n");
                return SMI_EXIT_NOT_FOUND;
        }
        nvsmi_gather(s);
        int rc = view(s, a, q, first);
        nvsmi_free_gpus(s);
        s->exit_code = 0;
        return rc;
}

/* With NVML initialised: --version, or the view asked for, once or every loop period (-l / -lms). */
static int run(smi_t *s, const args_t *a, const smi_query_t *q)
{
        read_versions(s);
        if (a->version)
                return print_version(s);
        nvmlReturn_t r = s->nvml->nvmlDeviceGetCount_v2(&s->count);
        if (r != NVML_SUCCESS)
                return init_failed(s->nvml, r);
        if (s->count == 0) {
                printf("No devices were found\n");
                return SMI_EXIT_NOT_FOUND;
        }
        for (bool first = true;; first = false) {
                int rc = run_once(s, a, q, first);
                (void) fflush(stdout);
                if (!a->loop_ms || a->sub != SUB_NONE || rc != SMI_EXIT_OK)
                        return rc;
                /* until interrupted, as the real tool: SIGINT / SIGTERM end the process */
                struct timespec ts = { .tv_sec = a->loop_ms / 1000, .tv_nsec = (long) (a->loop_ms % 1000) * 1000000L };
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
                }
        }
}

int main(int argc, char **argv)
{
        args_t a = { 0 };
        int rc = parse_args(argc, argv, &a);
        if (rc >= 0)
                return rc;
        smi_query_t q = { 0 };
        if (a.query_gpu && (rc = parse_query(&a, &q)) >= 0)
                return rc;

        smi_t s = { 0 };
        if (nvsmi_open_library(&s.nvml) < 0) {
                smi_query_free(&q);
                return init_failed(NULL, NVML_ERROR_LIBRARY_NOT_FOUND);
        }
        nvmlReturn_t r = s.nvml->nvmlInit_v2();
        if (r != NVML_SUCCESS) {
                rc = init_failed(s.nvml, r);
        } else {
                rc = run(&s, &a, &q);
                s.nvml->nvmlShutdown();
        }
        gv_nvml_close(&s.nvml);
        smi_query_free(&q);
        (void) fflush(stdout); /* exit() flushes again; the exit code is the real one's, whatever the output did */
        return rc;
}
