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

enum { OPT_QUERY_GPU = 256, OPT_FORMAT, OPT_VERSION, OPT_HELP_QUERY_GPU };

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


/* The command line. */
typedef struct args {
        bool list, query, xml, version;
        const char *ids, *query_gpu, *format;
} args_t;

/* Parses the options into *a; returns -1 to go on, else the exit code (after -h, or for a bad command line). */
static int parse_args(int argc, char **argv, args_t *a)
{
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "list-gpus", no_argument, NULL, 'L' },
                { "query", no_argument, NULL, 'q' },
                { "xml-format", no_argument, NULL, 'x' },
                { "id", required_argument, NULL, 'i' },
                { "query-gpu", required_argument, NULL, OPT_QUERY_GPU },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help-query-gpu", no_argument, NULL, OPT_HELP_QUERY_GPU },
                {},
        };
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "hLqxi:", opts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        return SMI_EXIT_OK;
                case 'L':
                        a->list = true;
                        break;
                case 'q':
                        a->query = true;
                        break;
                case 'x':
                        a->xml = true;
                        break;
                case 'i':
                        a->ids = optarg;
                        break;
                case OPT_QUERY_GPU:
                        a->query_gpu = optarg;
                        break;
                case OPT_FORMAT:
                        a->format = optarg;
                        break;
                case OPT_VERSION:
                        a->version = true;
                        break;
                case OPT_HELP_QUERY_GPU:
                        return print_help_query_gpu();
                default:
                        return invalid_args();
                }
        }
        if (optind < argc || (a->xml && !a->query) || (a->list + a->query + (a->query_gpu != NULL) > 1))
                return invalid_args();
        return -1;
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

/* With NVML initialised: --version, or select and gather the GPUs and write the view asked for. */
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
        int sr = nvsmi_select_gpus(s, a->ids);
        if (sr == -ENOMEM)
                return SMI_EXIT_OTHER;
        if (sr < 0) {
                printf("No devices were found\n");
                return SMI_EXIT_NOT_FOUND;
        }
        nvsmi_gather(s);
        if (a->list)
                return nvsmi_list_gpus(s);
        if (a->query_gpu)
                return nvsmi_view_csv(s, q);
        if (a->query)
                return nvsmi_view_query(s, a->xml);
        return nvsmi_view_table(s);
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
                nvsmi_free_gpus(&s);
                s.nvml->nvmlShutdown();
        }
        gv_nvml_close(&s.nvml);
        smi_query_free(&q);
        (void) fflush(stdout); /* exit() flushes again; the exit code is the real one's, whatever the output did */
        return rc;
}
