/* SPDX-License-Identifier: Apache-2.0 */
/* What `watch` compares, the verdict and the delay (revalidate.h). */
#include "revalidate.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "abi/host/nvidia-host.h"
#include "base/alloc.h"
#include "base/cleanup.h"
#include "base/fileio.h"


void gv_node_state_clear(gv_node_state_t *s)
{
        if (!s)
                return;
        gv_strv_freep(&s->dev_nodes);
        *s = (gv_node_state_t) { 0 };
}

static bool same_file(const gv_file_id_t *a, const gv_file_id_t *b)
{
        return a->present == b->present && a->dev == b->dev && a->ino == b->ino && a->mtime_ns == b->mtime_ns;
}

static bool listed(char *const *list, const char *name)
{
        for (; list && *list; list++)
                if (strcmp(*list, name) == 0)
                        return true;
        return false;
}

bool gv_reval_classify(const gv_node_state_t *base, const gv_node_state_t *now, gv_revalidation_reason_t *reason,
                       const char **what)
{
        gv_revalidation_reason_t r = GV_REVAL__MAX;
        const char *w = NULL;
        if (base->ctr_flag.present && !same_file(&base->ctr_flag, &now->ctr_flag)) {
                r = GV_REVAL_DRIVER_CTR_RESTART;
                w = now->ctr_flag.present ? GV_DRIVER_CTR_READY_FILE " replaced" : GV_DRIVER_CTR_READY_FILE " removed";
        }
        for (char *const *n = base->dev_nodes; r == GV_REVAL__MAX && n && *n; n++) {
                if (!listed(now->dev_nodes, *n)) {
                        r = GV_REVAL_DEVICE_NODE_REMOVED;
                        w = *n;
                }
        }
        if (r == GV_REVAL__MAX && base->driver_lib.present && !same_file(&base->driver_lib, &now->driver_lib)) {
                r = GV_REVAL_DRIVER_ROOT_CHANGED;
                w = now->driver_lib.present ? "libnvidia-ml.so.1 replaced" : "libnvidia-ml.so.1 removed";
        }
        if (r == GV_REVAL__MAX && base->generation[0] && strcmp(base->generation, now->generation) != 0) {
                r = GV_REVAL_GENERATION_CHANGED;
                w = now->generation[0] ? "driver-ready republished" : "driver-ready no longer ready";
        }
        if (r == GV_REVAL__MAX)
                return false;
        *reason = r;
        if (what)
                *what = w;
        return true;
}

int64_t gv_reval_delay_ms(unsigned attempt, unsigned first_s, unsigned cap_s, double jitter, unsigned min_interval_s,
                          int64_t since_last_ms)
{
        int64_t d = (int64_t) (gv_backoff_delay_s(attempt ? attempt : 1, first_s, cap_s, jitter) * 1000.0);
        if (since_last_ms >= 0) {
                int64_t rate = (int64_t) min_interval_s * 1000 - since_last_ms;
                if (rate > d)
                        d = rate;
        }
        return d < 0 ? 0 : d;
}

void gv_reval_paths_clear(gv_reval_paths_t *p)
{
        if (!p)
                return;
        free(p->flag);
        free(p->dev_dir);
        free(p->lib);
        free(p->lib_dir);
        *p = (gv_reval_paths_t) { 0 };
}

/* The first <root>/<dir>/libnvidia-ml.so.1 that exists, and its folder; 0 (nothing found is fine) or -ENOMEM. */
static int find_lib(const gv_config_t *cfg, const char *root, gv_reval_paths_t *p)
{
        const char *const *dirs = cfg->driver.lib_search ? cfg->driver.lib_search : gv_driver_default_lib_search();
        for (; *dirs; dirs++) {
                _cleanup_free_ char *dir = gv_path_join(root, *dirs);
                _cleanup_free_ char *lib = dir ? gv_path_join(dir, "libnvidia-ml.so.1") : NULL;
                if (!lib)
                        return -ENOMEM;
                struct stat st;
                if (stat(lib, &st) == 0 && S_ISREG(st.st_mode)) {
                        p->lib = TAKE_PTR(lib);
                        p->lib_dir = TAKE_PTR(dir);
                        return 0;
                }
        }
        return 0;
}

int gv_reval_paths_find(const gv_config_t *cfg, const gv_kvlist_t *driver_ready, gv_reval_paths_t *out,
                        gv_error_t **err)
{
        const char *drv_ctr = driver_ready ? gv_kvlist_get(driver_ready, "DRIVER_ROOT_CTR_PATH") : NULL;
        const char *dev_ctr = driver_ready ? gv_kvlist_get(driver_ready, "DEV_ROOT_CTR_PATH") : NULL;
        const char *host = gv_driver_host_root_here(&cfg->driver);
        const char *driver_root = drv_ctr && strcmp(drv_ctr, "/host") == 0 ? host : gv_driver_ctr_root_here(&cfg->driver);
        const char *dev_root = dev_ctr && strcmp(dev_ctr, "/host") == 0 ? host : driver_root;

        _cleanup_(gv_reval_paths_clear) gv_reval_paths_t p = { 0 };
        p.flag = gv_path_join(cfg->output_dir ? cfg->output_dir : GV_DEFAULT_OUTPUT_DIR, GV_DRIVER_CTR_READY_FILE);
        p.dev_dir = gv_path_join(dev_root, "dev");
        if (!p.flag || !p.dev_dir || find_lib(cfg, driver_root, &p) < 0)
                return gv_error_oom(err);
        *out = p;
        p = (gv_reval_paths_t) { 0 };
        return 0;
}

static void file_id(const char *path, gv_file_id_t *id)
{
        struct stat st;
        *id = (gv_file_id_t) { 0 };
        if (!path || stat(path, &st) < 0)
                return;
        *id = (gv_file_id_t) { .present = true, .dev = st.st_dev, .ino = st.st_ino,
                               .mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec };
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The nvidia* entries of @dir, sorted, into *out (NULL when the folder is absent).  0 or -ENOMEM. */
static int list_nodes(const char *dir, char ***out)
{
        *out = NULL;
        _cleanup_closedir_ DIR *d = dir ? opendir(dir) : NULL;
        if (!d)
                return 0;
        size_t n = 0, cap = 9;
        _cleanup_strv_free_ char **v = calloc(cap, sizeof(*v));
        if (!v)
                return -ENOMEM;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (strncmp(e->d_name, "nvidia", 6) != 0)
                        continue;
                if (!GV_GREEDY_REALLOC(v, cap, n + 2))
                        return -ENOMEM;
                if (!(v[n] = strdup(e->d_name)))
                        return -ENOMEM;
                v[++n] = NULL;
        }
        qsort(v, n, sizeof(*v), cmp_str);
        *out = TAKE_PTR(v);
        return 0;
}

int gv_reval_read_state(gv_store_t *store, const gv_reval_paths_t *p, gv_node_state_t *out, gv_error_t **err)
{
        gv_node_state_clear(out);
        file_id(p->flag, &out->ctr_flag);
        file_id(p->lib, &out->driver_lib);
        if (list_nodes(p->dev_dir, &out->dev_nodes) < 0)
                return gv_error_oom(err);
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(store, GV_MARKER_DRIVER, &info, err);
        if (r < 0) {
                gv_marker_info_clear(&info);
                return r;
        }
        const char *g = info.state == GV_MARKER_READY ? gv_kvlist_get(&info.content, "GENERATION") : NULL;
        if (g && strlen(g) == GV_GENERATION_HEX_LEN)
                memcpy(out->generation, g, GV_GENERATION_HEX_LEN + 1);
        gv_marker_info_clear(&info);
        return 0;
}

/* The next item of @s at *@pos (separators: comma, space, tab), as [*start, *start + *len); false at the end. */
static bool next_item(const char *s, size_t *pos, size_t *start, size_t *len)
{
        static const char seps[] = ", \t";
        *pos += strspn(s + *pos, seps);
        if (!s[*pos])
                return false;
        *start = *pos;
        *len = strcspn(s + *pos, seps);
        *pos += *len;
        return true;
}

/* A whole number 1..UINT_MAX of exactly @len digits at @p. */
static bool parse_xid(const char *p, size_t len, unsigned *out)
{
        unsigned long long v = 0;
        if (len == 0 || len > 10)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return false;
                v = v * 10 + (unsigned) (p[i] - '0');
        }
        if (v == 0 || v > UINT_MAX)
                return false;
        *out = (unsigned) v;
        return true;
}

int gv_reval_parse_xids(const char *what, const char *s, bool *all, unsigned **out, size_t *n, gv_error_t **err)
{
        *all = false;
        *out = NULL;
        *n = 0;
        s = s ? s : "";
        size_t pos = 0, start, len, count = 0;
        while (next_item(s, &pos, &start, &len))
                count++;
        pos = 0;
        if (count == 1 && next_item(s, &pos, &start, &len) && len == 3 && strncmp(s + start, "all", 3) == 0) {
                *all = true;
                return 0;
        }
        if (!count)
                return 0;
        _cleanup_free_ unsigned *v = calloc(count, sizeof(*v));
        if (!v)
                return gv_error_oom(err);
        pos = 0;
        for (size_t i = 0; i < count && next_item(s, &pos, &start, &len); i++)
                if (!parse_xid(s + start, len, &v[i]))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s %s: '%.*s' is not an Xid (expected 'all' or whole numbers 1 to %u "
                                            "such as 63,64)",
                                            what, s, (int) (len > 64 ? 64 : len), s + start, UINT_MAX);
        *out = TAKE_PTR(v);
        *n = count;
        return 0;
}
