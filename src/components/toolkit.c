/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The toolkit component, without a container runtime (issue part 5): the
 * node can start GPU containers when
 *   1. a CDI spec of kind nvidia.com/gpu names every GPU of driver-ready (by
 *      index, by UUID, and "all") and the device nodes it names exist, or
 *   2. the NVIDIA container runtime is configured in containerd / CRI-O /
 *      Docker and its binary is installed, or
 *   3. (upstream's mode) we run inside a container that the runtime
 *      prepared: no CDI folder and no runtime configuration are visible, and
 *      nvidia-smi on PATH succeeds.
 * The GPUs come from driver-ready's GPU_COUNT and GPU_UUIDS facts (written by
 * the driver component), so NVML is not opened a second time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "cdi.h"
#include "components-internal.h"

#define COMPONENT "toolkit"
#define CDI_KIND "nvidia.com/gpu"
#define RUNTIME_CONFIG_MAX_BYTES ((size_t) 4 * 1024 * 1024)

static const char *const default_cdi_dirs[] = { "/etc/cdi", "/var/run/cdi", NULL };

static const char *const default_runtime_configs[] = {
        "/etc/containerd/config.toml",
        "/etc/containerd/conf.d/*",
        "/etc/crio/crio.conf",
        "/etc/crio/crio.conf.d/*",
        "/etc/docker/daemon.json",
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        NULL,
};

/* Where the toolkit's runtime binary may sit when a configuration names no path. */
static const char *const runtime_bin_dirs[] = {
        "/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/nvidia/toolkit", "/opt/bin", NULL,
};

const char *const *gv_toolkit_default_cdi_dirs(void)
{
        return default_cdi_dirs;
}

const char *const *gv_toolkit_default_runtime_configs(void)
{
        return default_runtime_configs;
}

static const char *host_root_of(const gv_config_t *cfg)
{
        if (cfg->driver.host_root_ctr_path && *cfg->driver.host_root_ctr_path)
                return cfg->driver.host_root_ctr_path;
        return cfg->driver.host_root && *cfg->driver.host_root ? cfg->driver.host_root : "/";
}

/* The GPUs that driver-ready describes. */
typedef struct gpu_set {
        unsigned count;
        char **uuids;     /* heap list, may be empty when the marker had none */
        char **required;  /* "all", "0".."N-1", each UUID */
        bool *found;      /* one per required name */
} gpu_set_t;

static void gpu_set_clear(gpu_set_t *g)
{
        gv_strv_freep(&g->uuids);
        gv_strv_freep(&g->required);
        free(g->found);
        *g = (gpu_set_t) { 0 };
}

static int gpu_set_from_marker(const gv_kvlist_t *content, gpu_set_t *out, gv_error_t **err)
{
        const char *count_s = gv_kvlist_get(content, "GPU_COUNT");
        const char *uuids_s = gv_kvlist_get(content, "GPU_UUIDS");
        char *end = NULL;
        unsigned long count = count_s ? strtoul(count_s, &end, 10) : 0;
        if (!count_s || !*count_s || *end || count == 0 || count > 4096)
                return gv_error_set(err, EINVAL, GV_REASON_DEPENDENCY,
                                    "driver-ready has no valid GPU_COUNT (re-run the driver component)");
        gpu_set_t g = { .count = (unsigned) count };
        size_t nu = 0;
        if (uuids_s && *uuids_s) {
                nu = 1;
                for (const char *p = uuids_s; *p; p++)
                        nu += *p == ',';
        }
        g.uuids = calloc(nu + 1, sizeof(char *));
        g.required = calloc(1 + count + nu + 1, sizeof(char *));
        g.found = calloc(1 + count + nu, sizeof(bool));
        if (!g.uuids || !g.required || !g.found)
                goto oom;
        if (nu) {
                _cleanup_free_ char *copy = strdup(uuids_s);
                if (!copy)
                        goto oom;
                char *save = NULL;
                size_t k = 0;
                for (char *t = strtok_r(copy, ",", &save); t && k < nu; t = strtok_r(NULL, ",", &save))
                        if (!(g.uuids[k++] = strdup(t)))
                                goto oom;
        }
        size_t k = 0;
        if (!(g.required[k++] = strdup("all")))
                goto oom;
        for (unsigned i = 0; i < count; i++)
                if (asprintf(&g.required[k++], "%u", i) < 0) {
                        g.required[k - 1] = NULL;
                        goto oom;
                }
        for (char **u = g.uuids; *u; u++)
                if (!(g.required[k++] = strdup(*u)))
                        goto oom;
        *out = g;
        return 0;
oom:
        gpu_set_clear(&g);
        return gv_error_oom(err);
}

static bool has_suffix(const char *s, const char *suf)
{
        size_t ls = strlen(s), lf = strlen(suf);
        return ls >= lf && strcmp(s + ls - lf, suf) == 0;
}

static int entry_filter_spec(const struct dirent *d)
{
        return d->d_name[0] != '.' &&
               (has_suffix(d->d_name, ".yaml") || has_suffix(d->d_name, ".yml") || has_suffix(d->d_name, ".json"));
}

static int entry_filter_plain(const struct dirent *d)
{
        return d->d_name[0] != '.';
}

/* Every listed node of the spec (top level and the devices we need) must exist under the host root. */
static void check_spec_nodes(const char *root, const gv_cdi_spec_t *spec, const gpu_set_t *g, FILE *missing,
                             size_t *n_missing)
{
        size_t cap = 1 + gv_strv_len((const char *const *) g->required);
        _cleanup_free_ const char *const **lists = calloc(cap, sizeof(*lists));
        if (!lists)
                return;
        size_t nl = 0;
        lists[nl++] = (const char *const *) spec->nodes;
        for (char **r = g->required; *r && nl < cap; r++) {
                const gv_cdi_device_t *d = gv_cdi_spec_device(spec, *r);
                if (d)
                        lists[nl++] = (const char *const *) d->nodes;
        }
        for (size_t i = 0; i < nl; i++)
                for (const char *const *n = lists[i]; n && *n; n++) {
                        _cleanup_free_ char *p = NULL;
                        struct stat st;
                        if (gv_root_resolve(root, *n, &p, NULL) == 0 && stat(p, &st) == 0)
                                continue;
                        /* report each path once */
                        bool dup = false;
                        for (size_t j = 0; j <= i && !dup; j++)
                                for (const char *const *m = lists[j]; m && *m && m != n; m++)
                                        if (strcmp(*m, *n) == 0) {
                                                dup = true;
                                                break;
                                        }
                        if (dup)
                                continue;
                        fprintf(missing, "%s%s", *n_missing ? ", " : "", *n);
                        (*n_missing)++;
                }
}

/* What check_cdi() has seen so far across the CDI folders. */
typedef struct cdi_scan {
        const char *root;  /* host root the folders and device nodes are under */
        gpu_set_t *g;      /* the required devices, with found[] */
        size_t n_req;
        FILE *tried;       /* what was seen, for the error message */
        FILE *missing;     /* device nodes named by a spec but absent */
        size_t n_specs, n_missing;
        char *first;       /* heap path of the first spec of our kind */
} cdi_scan_t;

/* Reads the spec at @path: notes the required devices it names and its absent device nodes. */
static void scan_spec(cdi_scan_t *sc, const char *path)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_read_file_at(AT_FDCWD, path, false, GV_CDI_SPEC_MAX_BYTES, &text, &len, &e) < 0) {
                fprintf(sc->tried, "\n  CDI spec %s: %s", path, e ? e->msg : "unreadable");
                return;
        }
        gv_cdi_spec_t spec = { 0 };
        if (gv_cdi_spec_parse(text, len, &spec, &e) < 0) {
                fprintf(sc->tried, "\n  CDI spec %s: invalid: %s", path, e ? e->msg : "");
                return;
        }
        if (strcmp(spec.kind, CDI_KIND) == 0) {
                sc->n_specs++;
                if (!sc->first)
                        sc->first = strdup(path);
                for (size_t k = 0; k < sc->n_req; k++)
                        if (gv_cdi_spec_device(&spec, sc->g->required[k]))
                                sc->g->found[k] = true;
                check_spec_nodes(sc->root, &spec, sc->g, sc->missing, &sc->n_missing);
        }
        gv_cdi_spec_clear(&spec);
}

/*
 * Print on @f the path actually looked at for @path inside @root: "<root>/<path> (<path> under the
 * host root)", or @path itself when the root is "/".
 */
static void print_under_root(FILE *f, const char *root, const char *path)
{
        if (!root || strcmp(root, "/") == 0)
                fputs(path, f);
        else
                fprintf(f, "%s%s%s (%s under the host root)", root, path[0] == '/' ? "" : "/", path, path);
}

/* Reads every spec in the CDI folder @d (inside the root); sets *any_dir when the folder exists. */
static void scan_dir(cdi_scan_t *sc, const char *d, bool *any_dir)
{
        _cleanup_free_ char *dir = NULL;
        if (gv_root_resolve(sc->root, d, &dir, NULL) < 0) {
                fputs("\n  CDI folder ", sc->tried);
                print_under_root(sc->tried, sc->root, d);
                fputs(": absent", sc->tried);
                return;
        }
        struct dirent **ents = NULL;
        int n = scandir(dir, &ents, entry_filter_spec, alphasort);
        if (n < 0) {
                fprintf(sc->tried, "\n  CDI folder %s: %s", dir, strerror(errno));
                return;
        }
        *any_dir = true;
        if (n == 0)
                fprintf(sc->tried, "\n  CDI folder %s: no *.yaml, *.yml or *.json spec", dir);
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = gv_path_join(dir, ents[i]->d_name);
                free(ents[i]);
                if (path)
                        scan_spec(sc, path);
        }
        free(ents);
}

/* Whether the scan found specs naming every required device with all nodes present; if not, why, on sc->tried. */
static bool scan_verdict(const cdi_scan_t *sc, bool any_dir, const char *missing)
{
        size_t n_absent = 0;
        for (size_t k = 0; k < sc->n_req; k++)
                n_absent += !sc->g->found[k];
        bool ok = sc->n_specs > 0 && n_absent == 0 && sc->n_missing == 0;
        if (!ok && sc->n_specs > 0) {
                fprintf(sc->tried, "\n  CDI specs of kind %s (%zu):", CDI_KIND, sc->n_specs);
                if (n_absent) {
                        fprintf(sc->tried, " devices not named:");
                        for (size_t k = 0; k < sc->n_req; k++)
                                if (!sc->g->found[k])
                                        fprintf(sc->tried, " %s", sc->g->required[k]);
                        fprintf(sc->tried, ";");
                }
                if (sc->n_missing)
                        fprintf(sc->tried, " device nodes missing under %s: %s", sc->root, missing ? missing : "");
        } else if (!ok && any_dir) {
                fprintf(sc->tried, "\n  no CDI spec of kind %s", CDI_KIND);
        }
        return ok;
}

/*
 * Look through the CDI folders.  Returns 1 with *source set (heap) when the
 * specs name every required device and their nodes exist; 0 otherwise, with
 * what was seen appended to @tried; negative errno only for out of memory.
 * *any_dir tells whether some CDI folder exists at all.
 */
static int check_cdi(const gv_config_t *cfg, gpu_set_t *g, FILE *tried, bool *any_dir, char **source)
{
        const char *const *dirs = cfg->toolkit.cdi_dirs ? cfg->toolkit.cdi_dirs : default_cdi_dirs;
        cdi_scan_t sc = { .root = host_root_of(cfg), .g = g, .tried = tried };
        sc.n_req = gv_strv_len((const char *const *) g->required);
        for (size_t i = 0; i < sc.n_req; i++)
                g->found[i] = false;
        _cleanup_free_ char *missing = NULL;
        size_t mlen = 0;
        sc.missing = open_memstream(&missing, &mlen);
        if (!sc.missing)
                return -ENOMEM;

        for (const char *const *d = dirs; d && *d; d++)
                scan_dir(&sc, *d, any_dir);
        if (gv_memstream_close(sc.missing, &missing) < 0) {
                free(sc.first);
                return -ENOMEM;
        }
        bool ok = scan_verdict(&sc, *any_dir, missing);
        if (ok)
                *source = sc.first;
        else
                free(sc.first);
        return ok;
}

/* Blank out lines whose first non-blank character is '#' (TOML / conf comments). */
static void strip_comment_lines(char *s)
{
        bool line_start = true, comment = false;
        for (char *p = s; *p; p++) {
                if (*p == '\n') {
                        line_start = true;
                        comment = false;
                        continue;
                }
                if (line_start && (*p == ' ' || *p == '\t'))
                        continue;
                if (line_start && *p == '#')
                        comment = true;
                line_start = false;
                if (comment)
                        *p = ' ';
        }
}

static bool mentions_nvidia_runtime(const char *text)
{
        return strstr(text, "nvidia-container-runtime") || strstr(text, "\"nvidia\"") ||
               strstr(text, "runtimes.nvidia") || strstr(text, "runtimes.\"nvidia\"");
}

/*
 * The runtime binary: every absolute path in @text that ends in
 * "nvidia-container-runtime" (optionally ".cdi" / ".legacy") must exist
 * under the root; when none is named, look in runtime_bin_dirs.
 */
static bool runtime_binary_installed(const char *root, const char *text, FILE *tried)
{
        static const char needle[] = "nvidia-container-runtime";
        bool named = false;
        for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
                const char *start = p;
                while (start > text && !strchr(" \t\r\n\"'=,[]{}", start[-1]))
                        start--;
                if (*start != '/')
                        continue;
                const char *end = p + strlen(needle);
                while (*end && !strchr(" \t\r\n\"'=,[]{}", *end))
                        end++;
                _cleanup_free_ char *path = strndup(start, (size_t) (end - start));
                if (!path)
                        return false;
                named = true;
                _cleanup_free_ char *host = NULL;
                struct stat st;
                if (gv_root_resolve(root, path, &host, NULL) == 0 && stat(host, &st) == 0 && S_ISREG(st.st_mode))
                        return true;
                fputs("\n  runtime binary ", tried);
                print_under_root(tried, root, path);
                fputs(": absent", tried);
        }
        if (named)
                return false;
        _cleanup_free_ char *found = NULL;
        if (gv_root_find(root, runtime_bin_dirs, needle, &found, NULL, tried) == 0)
                return true;
        return false;
}

static int check_one_config(const char *root, const char *path, FILE *tried, bool *any, char **source)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        if (gv_read_file_at(AT_FDCWD, path, false, RUNTIME_CONFIG_MAX_BYTES, &text, &len, &e) < 0) {
                if (e && e->errnum != ENOENT)
                        fprintf(tried, "\n  runtime config %s: %s", path, e->msg);
                return 0;
        }
        *any = true;
        strip_comment_lines(text);
        if (!mentions_nvidia_runtime(text)) {
                fprintf(tried, "\n  runtime config %s: no nvidia runtime configured", path);
                return 0;
        }
        if (!runtime_binary_installed(root, text, tried)) {
                fprintf(tried, "\n  runtime config %s: nvidia runtime configured but nvidia-container-runtime "
                               "is not installed", path);
                return 0;
        }
        *source = strdup(path);
        return *source ? 1 : -ENOMEM;
}

static int check_runtime(const gv_config_t *cfg, FILE *tried, bool *any, char **source)
{
        const char *root = host_root_of(cfg);
        const char *const *cfgs = cfg->toolkit.runtime_configs ? cfg->toolkit.runtime_configs : default_runtime_configs;
        for (const char *const *c = cfgs; c && *c; c++) {
                if (has_suffix(*c, "/*")) {
                        _cleanup_free_ char *inside = strndup(*c, strlen(*c) - 2);
                        _cleanup_free_ char *dir = NULL;
                        if (!inside)
                                return -ENOMEM;
                        if (gv_root_resolve(root, inside, &dir, NULL) < 0)
                                continue;
                        struct dirent **ents = NULL;
                        int n = scandir(dir, &ents, entry_filter_plain, alphasort);
                        int r = 0;
                        for (int i = 0; i < n; i++) {
                                _cleanup_free_ char *path = gv_path_join(dir, ents[i]->d_name);
                                free(ents[i]);
                                if (r == 0 && path)
                                        r = check_one_config(root, path, tried, any, source);
                        }
                        free(ents);
                        if (r != 0)
                                return r;
                        continue;
                }
                _cleanup_free_ char *path = NULL;
                if (gv_root_resolve(root, *c, &path, NULL) < 0)
                        continue;
                int r = check_one_config(root, path, tried, any, source);
                if (r != 0)
                        return r;
        }
        if (!*any)
                fprintf(tried, "\n  no container runtime configuration found under %s", root);
        return 0;
}

static int toolkit_validate(const gv_config_t *cfg, gv_store_t *store, gv_result_t *result, gv_error_t **err)
{
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(store, GV_MARKER_DRIVER, &info, err);
        if (r < 0)
                return gv_error_prefix(err, "read driver-ready");
        if (info.state != GV_MARKER_READY) {
                r = gv_error_set(err, ESTALE, GV_REASON_DEPENDENCY, "driver-ready is %s%s%s",
                                 gv_marker_state_name(info.state), info.detail ? ": " : "",
                                 info.detail ? info.detail : "");
                gv_marker_info_clear(&info);
                return r;
        }
        _cleanup_(gpu_set_clear) gpu_set_t g = { 0 };
        r = gpu_set_from_marker(&info.content, &g, err);
        gv_marker_info_clear(&info);
        if (r < 0)
                return r;

        char *tried = NULL;
        size_t tlen = 0;
        FILE *tf = open_memstream(&tried, &tlen);
        if (!tf)
                return gv_error_oom(err);
        _cleanup_free_ char *source = NULL;
        const char *mode = NULL;
        bool any_cdi = false, any_cfg = false;
        _cleanup_free_ char *warning = NULL;

        r = check_cdi(cfg, &g, tf, &any_cdi, &source);
        if (r > 0)
                mode = "cdi";
        if (r >= 0 && !mode) {
                r = check_runtime(cfg, tf, &any_cfg, &source);
                if (r > 0)
                        mode = "runtime";
        }
        if (r >= 0 && !mode && !any_cdi && !any_cfg) {
                /* upstream's mode: inside a container that the runtime prepared */
                _cleanup_error_ gv_error_t *e = NULL;
                if (gv_nvidia_smi_check(cfg, "nvidia-smi", NULL, NULL, &warning, &e) == 0) {
                        mode = "container";
                        source = strdup("nvidia-smi");
                } else {
                        if (e && e->reason == GV_REASON_INTERRUPTED) {
                                (void) fclose(tf); /* 'tried' is dropped */
                                free(tried);
                                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "%s", e->msg);
                        }
                        fprintf(tf, "\n  nvidia-smi in this container: %s", e ? e->msg : "failed");
                }
        }
        if (gv_memstream_close(tf, &tried) < 0)
                r = -ENOMEM;
        _cleanup_free_ char *tried_keep = tried;
        if (r < 0)
                return gv_error_oom(err);
        if (!mode)
                return gv_error_set(err, ENOENT, GV_REASON_TOOLKIT,
                                    "no CDI spec for %s naming all %u GPU(s) and no configured NVIDIA container "
                                    "runtime; tried:%s",
                                    CDI_KIND, g.count, tried_keep ? tried_keep : "");

        gv_result_t res = { 0 };
        if ((r = gv_kvlist_set(&res.facts, "TOOLKIT_MODE", mode, err)) < 0 ||
            (r = gv_kvlist_set(&res.facts, "TOOLKIT_SOURCE", source ? source : "", err)) < 0) {
                gv_result_clear(&res);
                return r;
        }
        if (asprintf(&res.summary, "%s (%s), %u GPU(s)",
                     strcmp(mode, "cdi") == 0       ? "CDI spec"
                     : strcmp(mode, "runtime") == 0 ? "NVIDIA container runtime configured"
                                                    : "nvidia-smi runs in this container",
                     source ? source : "", g.count) < 0) {
                res.summary = NULL;
                gv_result_clear(&res);
                return gv_error_oom(err);
        }
        res.warning = TAKE_PTR(warning);
        *result = res;
        return 0;
}

GV_COMPONENT(toolkit, "toolkit", GV_MARKER_TOOLKIT, toolkit_validate);
