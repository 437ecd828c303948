/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The re-validation counters file (docs/metrics.md, "Re-validations"):
 * written by `gpu-validator watch`, read by the exporter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "metrics.h"

/* Reason names (the metric's label values) and the keys of the file, in enum order. */
static const struct {
        const char *name;
        const char *key;
} reasons[GV_REVAL__MAX] = {
        [GV_REVAL_DRIVER_CTR_RESTART] = { "driver-container-restart", "DRIVER_CONTAINER_RESTART" },
        [GV_REVAL_DEVICE_NODE_REMOVED] = { "device-node-removed", "DEVICE_NODE_REMOVED" },
        [GV_REVAL_DRIVER_ROOT_CHANGED] = { "driver-root-changed", "DRIVER_ROOT_CHANGED" },
        [GV_REVAL_GENERATION_CHANGED] = { "generation-changed", "GENERATION_CHANGED" },
        [GV_REVAL_GPU_LOST] = { "gpu-lost", "GPU_LOST" },
        [GV_REVAL_XID] = { "xid", "XID" },
};

const char *gv_revalidation_reason_name(gv_revalidation_reason_t r)
{
        return r >= 0 && r < GV_REVAL__MAX ? reasons[r].name : "unknown";
}

/* Digits only, fits uint64_t. */
static int parse_u64(const char *s, uint64_t *out)
{
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end)
                return -EINVAL;
        *out = (uint64_t) v;
        return 0;
}

int gv_revalidations_parse(const char *text, size_t len, gv_revalidations_t *out, gv_error_t **err)
{
        __attribute__((cleanup(gv_kvlist_clear))) gv_kvlist_t kv = { 0 };
        int r = gv_marker_parse(text, len, &kv, err);
        if (r < 0)
                return gv_error_prefix(err, GV_REVALIDATIONS_FILE);
        gv_revalidations_t c = { .present = true };
        for (int i = 0; i < GV_REVAL__MAX; i++) {
                const char *v = gv_kvlist_get(&kv, reasons[i].key);
                if (v && parse_u64(v, &c.count[i]) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: %s=%s: expected a whole number",
                                            GV_REVALIDATIONS_FILE, reasons[i].key, v);
        }
        *out = c;
        return 0;
}

int gv_revalidations_read(const char *dir, gv_revalidations_t *out, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(dir ? dir : GV_DEFAULT_OUTPUT_DIR, GV_REVALIDATIONS_FILE);
        if (!path)
                return gv_error_oom(err);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_read_file_at(AT_FDCWD, path, true, 4096, &text, &len, &e);
        if (r == -ENOENT) {
                *out = (gv_revalidations_t) { 0 };
                return 0;
        }
        if (r < 0) {
                if (err)
                        *err = TAKE_PTR(e);
                return r;
        }
        return gv_revalidations_parse(text, len, out, err);
}

int gv_revalidations_write(const char *dir, const gv_revalidations_t *c, gv_error_t **err)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return gv_error_oom(err);
        for (int i = 0; i < GV_REVAL__MAX; i++)
                fprintf(f, "%s=%llu\n", reasons[i].key, (unsigned long long) c->count[i]);
        if (gv_memstream_close(f, &text) < 0)
                return gv_error_oom(err);
        _cleanup_free_ char *keep = text;
        len = strlen(text);
        _cleanup_close_ int dfd = open(dir ? dir : GV_DEFAULT_OUTPUT_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", dir ? dir : GV_DEFAULT_OUTPUT_DIR,
                                    strerror(errno));
        return gv_atomic_write_at(dfd, GV_REVALIDATIONS_FILE, keep, len, 0644, err);
}
