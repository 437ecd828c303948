/* SPDX-License-Identifier: Apache-2.0 */
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

int gv_cli_parse_store_command(gv_cli_t *cli, const char *cmd, int argc, char **argv,
                               const struct option *extra, size_t n_extra, gv_extra_opt_fn on_extra,
                               void *userdata, void (*help)(FILE *), gv_options_t *o, int *exit_code)
{
        static const struct option base[] = { GV_STORE_LONG_OPTIONS, { "help", no_argument, NULL, 'h' } };
        size_t n = GV_ARRAY_SIZE(base) + n_extra;
        _cleanup_free_ struct option *opts = calloc(n + 1, sizeof(*opts));
        _cleanup_error_ gv_error_t *err = NULL;
        if (!opts) {
                *exit_code = GV_EXIT_FAILED;
                return -1;
        }
        memcpy(opts, base, sizeof(base));
        if (n_extra)
                memcpy(opts + GV_ARRAY_SIZE(base), extra, n_extra * sizeof(*extra));

        if (gv_options_init(o, cli, &err) < 0) {
                *exit_code = gv_cli_fail(cli, cmd, &err);
                return -1;
        }
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (c == 'h') {
                        help(stdout);
                        *exit_code = GV_EXIT_OK;
                        return -1;
                }
                if (c == '?' || c == ':') {
                        *exit_code = gv_cli_usage_error(cli, cmd, "bad option");
                        return -1;
                }
                int r = gv_options_handle(o, c, optarg, &err);
                if (r == 0 && on_extra)
                        r = on_extra(userdata, c, optarg, &err) < 0 ? -1 : 1;
                if (r < 0) {
                        *exit_code = gv_cli_fail(cli, cmd, &err);
                        return -1;
                }
                if (r == 0) {
                        *exit_code = gv_cli_usage_error(cli, cmd, "unknown option");
                        return -1;
                }
        }
        gv_options_finish(o);
        return 0;
}

/*
 * The keys `env` exports: driver-ready's documented ones (docs/markers.md).
 * Anything else in the file -- PATH, LD_PRELOAD, BASH_ENV written by hand --
 * is never exported.
 */
static const char *const env_keys[] = {
        "IS_HOST_DRIVER", "NVIDIA_DRIVER_ROOT", "DRIVER_ROOT_CTR_PATH", "NVIDIA_DEV_ROOT", "DEV_ROOT_CTR_PATH",
        "DRIVER_VERSION", "CUDA_DRIVER_VERSION", "GPU_COUNT", "GPU_UUIDS", "VALIDATOR_VERSION", "GENERATION",
        "BOOT_ID", "VALIDATED_AT", NULL,
};

/* The five upstream keys, without which driver-ready says nothing a consumer can use. */
static const char *const env_required[] = { "IS_HOST_DRIVER", "NVIDIA_DRIVER_ROOT", "DRIVER_ROOT_CTR_PATH",
                                            "NVIDIA_DEV_ROOT", "DEV_ROOT_CTR_PATH", NULL };

int gv_cli_print_env(const gv_marker_info_t *info, FILE *f, gv_error_t **err)
{
        for (const char *const *k = env_required; *k; k++)
                if (!gv_kvlist_get(&info->content, *k))
                        return gv_error_set(err, EINVAL, GV_REASON_DEPENDENCY,
                                            "driver-ready has no %s: not written by a driver validation", *k);
        gv_kvlist_t known = { 0 };
        for (const char *const *k = env_keys; *k; k++) {
                const char *v = gv_kvlist_get(&info->content, *k);
                if (v && gv_kvlist_set(&known, *k, v, err) < 0) {
                        gv_kvlist_clear(&known);
                        return -ENOMEM;
                }
        }
        _cleanup_free_ char *text = NULL;
        int r = gv_marker_encode(&known, &text, err);
        gv_kvlist_clear(&known);
        if (r < 0)
                return r;
        /* Each encoded entry starts a line with KEY=; quoted values may span lines. */
        bool at_line_start = true, in_quote = false;
        for (const char *p = text; *p; p++) {
                if (at_line_start && !in_quote)
                        fputs("export ", f);
                if (*p == '\'')
                        in_quote = !in_quote;
                fputc(*p, f);
                at_line_start = *p == '\n';
        }
        /* A consumer evals this output: a short write must not exit 0. */
        if (fflush(f) != 0 || ferror(f))
                return gv_error_set(err, errno ? errno : EIO, GV_REASON_IO, "cannot write the variables: %s",
                                    strerror(errno ? errno : EIO));
        return 0;
}
