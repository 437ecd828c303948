/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator cuda-check: the program of the cuda validation pod.  Runs
 * the embedded vector-add kernel on every CUDA device (src/cudacheck) and
 * prints one line per device; on the mock backend (no libcuda.so.1, an
 * NVML library present) it checks the devices NVML reports against
 * NVIDIA_VISIBLE_DEVICES and --expect-devices.  See docs/cuda-check.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "options.h"
#include "cudacheck/cudacheck.h"
#include "nvml/nvml.h"

/* Exit code of cuda-check only: neither a CUDA driver nor (unless --require-cuda) NVML could be loaded. */
#define GV_EXIT_NO_DRIVER 5

#define CMD "cuda-check"
#define DEFAULT_NVML_LIBRARY "libnvidia-ml.so.1"

static void help(FILE *f)
{
        fprintf(f,
                "Usage: gpu-validator cuda-check [--elements N] [--device I] [--expect-devices N]\n"
                "                                [--cuda-library PATH] [--nvml-library PATH] [--require-cuda]\n"
                "\n"
                "Loads the CUDA driver (libcuda.so.1), and on each device creates a context, JIT-loads a\n"
                "vector-add kernel from PTX embedded in this binary, adds N floats, verifies every result\n"
                "and prints one line per device. The cuda validation pod runs this.\n"
                "\n"
                "Without a CUDA driver but with an NVML library (the mock GPU backend) it says so and checks\n"
                "what NVML can tell: the devices it reports against NVIDIA_VISIBLE_DEVICES and\n"
                "--expect-devices, and prints one line per device the container sees.\n"
                "\nOptions:\n"
                "  --elements N          floats per buffer, 1 to %u (default %u: %u MiB in all)\n"
                "  --device I            check only device I as CUDA numbers them: the I-th device the\n"
                "                        container sees, from 0 (default: every device)\n"
                "  --expect-devices N    the number of devices the container must see (the pod's GPU\n"
                "                        request); default: the length of a NVIDIA_VISIBLE_DEVICES list,\n"
                "                        else at least one\n"
                "  --cuda-library PATH   CUDA driver library to load (default " GV_CUDA_LIBRARY ", system search)\n"
                "  --nvml-library PATH   NVML library for the mock backend (default " DEFAULT_NVML_LIBRARY ")\n"
                "  --require-cuda        fail (exit 5) when there is no CUDA driver instead of checking NVML\n"
                "  -h, --help            show this help\n"
                "\nEnvironment:\n"
                "  NVIDIA_VISIBLE_DEVICES  all, none, void, or a comma list of indexes, GPU-/MIG- UUIDs\n"
                "                          or GPU:MIG pairs (as the NVIDIA Container Toolkit reads it)\n"
                "\nExit codes:\n"
                "  0 every device passed (mock backend: the expected devices are visible)\n"
                "  1 a device failed, the driver failed to initialise, or the device count is wrong\n"
                "  2 usage error (bad option, bad NVIDIA_VISIBLE_DEVICES)\n"
                "  5 no GPU driver: libcuda.so.1 not found and no NVML library either (or --require-cuda)\n",
                GV_CUDACHECK_MAX_ELEMENTS, GV_CUDACHECK_DEFAULT_ELEMENTS,
                (unsigned) (gv_cudacheck_bytes(GV_CUDACHECK_DEFAULT_ELEMENTS) >> 20));
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator cuda-check",
                "a vector add on every visible GPU",
                "NVIDIA_VISIBLE_DEVICES=0 gpu-validator cuda-check --elements 1048576",
                "one GPU, a smaller vector",
                NULL });
}

typedef struct args {
        unsigned elements;
        int device;          /* -1: all */
        int expect;          /* -1: not given */
        const char *cuda_library;
        const char *nvml_library;
        bool require_cuda;
} args_t;

enum {
        OPT_ELEMENTS = 0x100,
        OPT_DEVICE,
        OPT_EXPECT,
        OPT_CUDA_LIBRARY,
        OPT_NVML_LIBRARY,
        OPT_REQUIRE_CUDA,
};

/* Returns -1 to go on, or the exit code. */
static int parse(gv_cli_t *cli, int argc, char **argv, args_t *a)
{
        static const struct option opts[] = {
                { "elements", required_argument, NULL, OPT_ELEMENTS },
                { "device", required_argument, NULL, OPT_DEVICE },
                { "expect-devices", required_argument, NULL, OPT_EXPECT },
                { "cuda-library", required_argument, NULL, OPT_CUDA_LIBRARY },
                { "nvml-library", required_argument, NULL, OPT_NVML_LIBRARY },
                { "require-cuda", no_argument, NULL, OPT_REQUIRE_CUDA },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;
        unsigned u;
        int code = GV_EXIT_OK;
        while ((c = gv_cli_getopt(cli, CMD, argc, argv, "h", opts, &code)) != -1) {
                switch (c) {
                case GV_GETOPT_STOP:
                        return code;
                case 'h':
                        help(stdout);
                        return GV_EXIT_OK;
                case OPT_ELEMENTS:
                        if (gv_parse_uint(optarg, &u) < 0 || u < 1 || u > GV_CUDACHECK_MAX_ELEMENTS)
                                return gv_cli_usage_error(cli, CMD, "--elements %s: expected 1 to %u", optarg,
                                                          GV_CUDACHECK_MAX_ELEMENTS);
                        a->elements = u;
                        break;
                case OPT_DEVICE:
                        if (gv_parse_uint(optarg, &u) < 0 || u > 1024)
                                return gv_cli_usage_error(cli, CMD, "--device %s: expected a device index", optarg);
                        a->device = (int) u;
                        break;
                case OPT_EXPECT:
                        if (gv_parse_uint(optarg, &u) < 0 || u > 1024)
                                return gv_cli_usage_error(cli, CMD, "--expect-devices %s: expected a count",
                                                          optarg);
                        a->expect = (int) u;
                        break;
                case OPT_CUDA_LIBRARY:
                        if (!*optarg)
                                return gv_cli_usage_error(cli, CMD, "--cuda-library: empty path");
                        a->cuda_library = optarg;
                        break;
                case OPT_NVML_LIBRARY:
                        if (!*optarg)
                                return gv_cli_usage_error(cli, CMD, "--nvml-library: empty path");
                        a->nvml_library = optarg;
                        break;
                case OPT_REQUIRE_CUDA:
                        a->require_cuda = true;
                        break;
                default:
                        return gv_cli_usage_error(cli, CMD, "bad option");
                }
        }
        if (optind < argc)
                return gv_cli_usage_error(cli, CMD, "unexpected argument '%s'", argv[optind]);
        return -1;
}

static const char *visible_text(void)
{
        const char *v = getenv("NVIDIA_VISIBLE_DEVICES");
        return v ? v : "(unset)";
}

/* The mock backend: no CUDA driver, check the devices NVML reports. */
static int nvml_only(gv_cli_t *cli, const args_t *a, const gv_visible_devices_t *vis, int expect)
{
        _cleanup_error_ gv_error_t *err = NULL;
        const char *const candidates[] = { a->nvml_library, NULL };
        gv_nvml_t *nvml = NULL;
        if (gv_nvml_open(candidates, &nvml, &err) < 0) {
                gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_LIBRARY_NOT_FOUND),
                            "no GPU driver: neither a CUDA driver nor an NVML library could be loaded: %s",
                            err ? err->msg : "unknown error");
                return GV_EXIT_NO_DRIVER;
        }
        gv_nvml_gpu_t *gpus = NULL;
        size_t n = 0;
        int r = gv_cudacheck_nvml_gpus(nvml, &gpus, &n, &err);
        gv_nvml_close(&nvml);
        if (r < 0) {
                gv_error_prefix(&err, "NVML");
                return gv_cli_fail(cli, CMD, &err);
        }
        _cleanup_free_ const char **uuids = calloc(n + 1, sizeof(*uuids));
        _cleanup_free_ bool *selected = calloc(n + 1, sizeof(*selected));
        if (!uuids || !selected) {
                gv_nvml_gpus_free(gpus, n);
                return GV_EXIT_FAILED;
        }
        for (size_t i = 0; i < n; i++)
                uuids[i] = gpus[i].uuid;
        size_t visible = 0;
        r = gv_visible_devices_select(vis, uuids, n, selected, &visible, &err);
        if (r < 0) {
                gv_nvml_gpus_free(gpus, n);
                /* Not gv_cli_fail(): the no-gpu hint ("NVML sees no GPU") would be wrong, NVML may see many. */
                gv_cli_log(cli, GV_LOG_ERROR, CMD, gv_reason_name(err->reason), err->msg);
                if (err->errnum == ENODEV)
                        gv_cli_log(cli, GV_LOG_ERROR, CMD, gv_reason_name(err->reason),
                                   "hint: the container was given a GPU that NVML does not report; compare "
                                   "NVIDIA_VISIBLE_DEVICES with `nvidia-smi -L` on the node");
                return gv_cli_exit_code(err);
        }
        /* The devices the container sees, numbered as CUDA would (0 .. shown-1), in NVML order. */
        size_t shown = 0;
        int ordinal = 0;
        for (size_t i = 0; i < n; i++) {
                if (!selected[i])
                        continue;
                if (a->device < 0 || ordinal == a->device) {
                        printf("GPU %u: %s (%s): reported by NVML\n", gpus[i].index, gpus[i].name, gpus[i].uuid);
                        shown++;
                }
                ordinal++;
        }
        gv_nvml_gpus_free(gpus, n);
        if (a->device >= 0 && shown == 0) {
                (void) fflush(stdout); /* progress lines */
                gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU),
                            "--device %d: the container sees only %d of the %zu GPU(s) NVML reports "
                            "(NVIDIA_VISIBLE_DEVICES=%s)", a->device, ordinal, n, visible_text());
                return GV_EXIT_FAILED;
        }

        bool ok = expect >= 0 ? visible == (size_t) expect : visible > 0;
        if (expect >= 0)
                printf("%zu of %zu NVML devices visible (NVIDIA_VISIBLE_DEVICES=%s), %d expected: %s\n", visible, n,
                       visible_text(), expect, ok ? "OK" : "FAILED");
        else
                printf("%zu of %zu NVML devices visible (NVIDIA_VISIBLE_DEVICES=%s): %s\n", visible, n,
                       visible_text(), ok ? "OK" : "FAILED");
        (void) fflush(stdout); /* progress lines */
        if (!ok) {
                if (expect >= 0)
                        gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU),
                                    "the container sees %zu GPU(s), %d expected", visible, expect);
                else
                        gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU),
                                    "the container sees no GPU");
                return GV_EXIT_FAILED;
        }
        return GV_EXIT_OK;
}

static int cuda_devices(gv_cli_t *cli, gv_cuda_t *cuda, const args_t *a, int expect)
{
        _cleanup_error_ gv_error_t *err = NULL;
        int count = 0, version = 0;
        if (gv_cuda_init(cuda, &count, &version, &err) < 0) {
                gv_error_prefix(&err, "CUDA driver %s", cuda->path);
                return gv_cli_fail(cli, CMD, &err);
        }
        if (version > 0)
                printf("CUDA driver %s: CUDA %d.%d, %d device(s)\n", cuda->path, version / 1000, (version % 1000) / 10,
                       count);
        else
                printf("CUDA driver %s: %d device(s)\n", cuda->path, count);
        (void) fflush(stdout); /* progress lines */

        if (count == 0) {
                gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU), "the CUDA driver sees no device");
                return GV_EXIT_FAILED;
        }
        if (a->device >= count) {
                gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU),
                            "--device %d: the CUDA driver sees only %d device(s)", a->device, count);
                return GV_EXIT_FAILED;
        }
        int failed = 0;
        for (int i = 0; i < count; i++) {
                if (a->device >= 0 && i != a->device)
                        continue;
                _cleanup_free_ char *name = NULL;
                gv_cudacheck_result_t res;
                if (gv_cuda_device_name(cuda, i, &name, &err) < 0 ||
                    gv_cudacheck_vector_add(cuda, i, a->elements, &res, &err) < 0) {
                        printf("GPU %d: %s: vector add of %u elements FAILED: %s\n", i, name ? name : "?",
                               a->elements, err ? err->msg : "unknown error");
                        (void) fflush(stdout); /* progress lines */
                        gv_cli_logf(cli, GV_LOG_ERROR, CMD, err ? gv_reason_name(err->reason) : NULL,
                                    "GPU %d: %s", i, err ? err->msg : "unknown error");
                        gv_error_free(&err);
                        failed++;
                        continue;
                }
                printf("GPU %d: %s: vector add of %zu elements (%.1f MiB) OK (%.1f ms, kernel %.2f ms)\n", i, name,
                       res.elements, (double) res.bytes / (1024.0 * 1024.0), res.total_ms, res.kernel_ms);
                (void) fflush(stdout); /* progress lines */
        }
        if (expect >= 0 && count != expect) {
                gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_NO_GPU),
                            "the container sees %d GPU(s), %d expected", count, expect);
                return GV_EXIT_FAILED;
        }
        return failed ? GV_EXIT_FAILED : GV_EXIT_OK;
}

int gv_cmd_cuda_check(gv_cli_t *cli, int argc, char **argv)
{
        args_t a = {
                .elements = GV_CUDACHECK_DEFAULT_ELEMENTS,
                .device = -1,
                .expect = -1,
                .cuda_library = GV_CUDA_LIBRARY,
                .nvml_library = DEFAULT_NVML_LIBRARY,
        };
        int code = parse(cli, argc, argv, &a);
        if (code >= 0)
                return code;

        _cleanup_error_ gv_error_t *err = NULL;
        gv_visible_devices_t vis = { 0 };
        if (gv_visible_devices_parse(getenv("NVIDIA_VISIBLE_DEVICES"), &vis, &err) < 0)
                return gv_cli_fail(cli, CMD, &err);
        int expect = a.expect;
        if (expect < 0 && vis.kind == GV_VISIBLE_LIST)
                expect = (int) vis.n;

        gv_cuda_t *cuda = NULL;
        if (gv_cudacheck_open(a.cuda_library, &cuda, &err) < 0) {
                if (err && err->errnum != ENOENT) {
                        /* The library is there but is not a usable CUDA driver. */
                        gv_visible_devices_free(&vis);
                        return gv_cli_fail(cli, CMD, &err);
                }
                if (a.require_cuda) {
                        gv_cli_logf(cli, GV_LOG_ERROR, CMD, gv_reason_name(GV_REASON_LIBRARY_NOT_FOUND),
                                    "no CUDA driver (%s not found) and --require-cuda: %s", a.cuda_library,
                                    err ? err->msg : "");
                        gv_visible_devices_free(&vis);
                        return GV_EXIT_NO_DRIVER;
                }
                gv_cli_logf(cli, GV_LOG_DEBUG, CMD, NULL, "dlopen: %s", err ? err->msg : "");
                printf("no CUDA driver (%s not found): mock GPU backend, checking NVML only\n", a.cuda_library);
                (void) fflush(stdout); /* progress lines */
                code = nvml_only(cli, &a, &vis, expect);
                gv_visible_devices_free(&vis);
                return code;
        }
        code = cuda_devices(cli, cuda, &a, expect);
        gv_cuda_close(&cuda);
        gv_visible_devices_free(&vis);
        return code;
}
