/* SPDX-License-Identifier: Apache-2.0 */
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

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

/* A value that needs no quotes: only A-Za-z0-9_./:@+=- and not empty (as markers write it bare). */
static bool shell_bare(const char *v)
{
        if (!*v)
                return false;
        for (; *v; v++)
                if (!((*v >= 'A' && *v <= 'Z') || (*v >= 'a' && *v <= 'z') || (*v >= '0' && *v <= '9') || *v == '_' ||
                      *v == '.' || *v == '/' || *v == ':' || *v == '@' || *v == '+' || *v == '=' || *v == '-'))
                        return false;
        return true;
}

/*
 * @v as one POSIX shell word: bare, or in single quotes, inside which every
 * byte but ' is literal (POSIX XCU 2.2.2), each ' written as '\'' (close,
 * an escaped quote, reopen).  Newlines and any other byte stay as they are.
 */
static void shell_quote(FILE *f, const char *v)
{
        if (shell_bare(v)) {
                fputs(v, f);
                return;
        }
        fputc('\'', f);
        for (; *v; v++) {
                if (*v == '\'')
                        fputs("'\\''", f);
                else
                        fputc(*v, f);
        }
        fputc('\'', f);
}

int gv_cli_print_env(const gv_marker_info_t *info, FILE *f, gv_error_t **err)
{
        for (const char *const *k = env_required; *k; k++)
                if (!gv_kvlist_get(&info->content, *k))
                        return gv_error_set(err, EINVAL, GV_REASON_DEPENDENCY,
                                            "driver-ready has no %s: not written by a driver validation", *k);
        /* One `export KEY=value` per key, each value quoted on its own (never by rewriting an encoding). */
        for (const char *const *k = env_keys; *k; k++) {
                const char *v = gv_kvlist_get(&info->content, *k);
                if (!v)
                        continue;
                fprintf(f, "export %s=", *k);
                shell_quote(f, v);
                fputc('\n', f);
        }
        if (fflush(f) != 0 || ferror(f))
                return gv_error_set(err, errno ? errno : EIO, GV_REASON_IO, "write the environment: %s",
                                    strerror(errno ? errno : EIO));
        return 0;
}
