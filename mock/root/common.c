/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mock driver roots: the entry lists, path helpers and artifact lookup that
 * install, remove and the manifest share (mock/root/root-internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/root/root-internal.h"

void mr_elist_free(elist_t *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].path);
        free(l->v);
        *l = (elist_t){ 0 };
}

const entry_t *mr_elist_find(const elist_t *l, const char *path)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].path, path) == 0)
                        return &l->v[i];
        return NULL;
}

int mr_elist_add(elist_t *l, const char *path, etype_t type)
{
        for (size_t i = 0; i < l->n; i++) {
                if (strcmp(l->v[i].path, path) == 0) {
                        l->v[i].type = type;
                        return 0;
                }
        }
        if (!GV_GREEDY_REALLOC(l->v, l->cap, l->n + 1))
                return -ENOMEM;
        char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        l->v[l->n++] = (entry_t){ .path = p, .type = type };
        return 0;
}

const char *gv_mock_nodes_name(gv_mock_nodes_t kind)
{
        switch (kind) {
        case GV_MOCK_NODES_CHAR:
                return "char";
        case GV_MOCK_NODES_FILES:
                return "files";
        default:
                return "default";
        }
}

void gv_mock_artifacts_clear(gv_mock_artifacts_t *a)
{
        if (!a)
                return;
        free(a->nvml_lib);
        free(a->nvidia_smi);
        *a = (gv_mock_artifacts_t){ 0 };
}

bool mr_is_file(const char *path)
{
        struct stat st;
        return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int gv_mock_locate_artifacts(const char *exe_dir, const char *override_dir, gv_mock_artifacts_t *out,
                             gv_error_t **err)
{
        struct place {
                const char *lib_dir, *lib_rel, *smi_rel;
        } places[3];
        size_t n = 0;
        if (override_dir && *override_dir)
                places[n++] = (struct place){ override_dir, "libnvidia-ml.so.1", "nvidia-smi" };
        if (exe_dir && *exe_dir) {
                places[n++] = (struct place){ exe_dir, "../../mock/nvml/libnvidia-ml.so.1",
                                                   "../../mock/smi/nvidia-smi" };
                places[n++] = (struct place){ exe_dir, "../lib/gpu-validator/libnvidia-ml.so.1",
                                                   "../lib/gpu-validator/nvidia-smi" };
        }
        /* Declared first so that it is freed after the stream that writes it is closed. */
        _cleanup_free_ char *tried = NULL;
        size_t tried_len = 0;
        _cleanup_fclose_ FILE *tf = open_memstream(&tried, &tried_len);
        if (!tf)
                return gv_error_oom(err);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *lib = gv_path_join(places[i].lib_dir, places[i].lib_rel);
                _cleanup_free_ char *smi = gv_path_join(places[i].lib_dir, places[i].smi_rel);
                if (!lib || !smi)
                        break;
                if (mr_is_file(lib) && mr_is_file(smi)) {
                        _cleanup_free_ char *rl = realpath(lib, NULL);
                        _cleanup_free_ char *rs = realpath(smi, NULL);
                        if (!rl || !rs)
                                continue;
                        out->nvml_lib = TAKE_PTR(rl);
                        out->nvidia_smi = TAKE_PTR(rs);
                        return 0;
                }
                fprintf(tf, "\n  %s + %s%s", lib, smi, i == 0 && override_dir ? " (GPU_VALIDATOR_MOCK_DIR)" : "");
        }
        (void) gv_memstream_close(TAKE_PTR(tf), &tried); /* out of memory: name no half list */
        return gv_error_set(err, ENOENT, GV_REASON_CONFIG,
                            "mock libnvidia-ml.so.1 and nvidia-smi not found (build them, or set "
                            "GPU_VALIDATOR_MOCK_DIR to a folder holding both); tried:%s",
                            tried && *tried ? tried : " (nowhere)");
}

/* Absolute form of @p (which need not exist), without "." / ".." resolution beyond realpath of its parent. */
char *mr_absolute(const char *p)
{
        if (p[0] == '/')
                return strdup(p);
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        if (!cwd)
                return NULL;
        return gv_path_join(cwd, p);
}

char *mr_full_path(const char *root, const char *path)
{
        return path[0] == '/' ? strdup(path) : gv_path_join(root, path);
}

/* Open the folder holding @full (O_DIRECTORY); *base points into @full at the last component. */
int mr_open_parent(const char *full, const char **base)
{
        const char *slash = strrchr(full, '/');
        if (!slash)
                return -EINVAL;
        *base = slash + 1;
        _cleanup_free_ char *dir = slash == full ? strdup("/") : strndup(full, (size_t) (slash - full));
        if (!dir)
                return -ENOMEM;
        int fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* A relative manifest path: no leading '/', no empty, "." or ".." component. */
bool mr_safe_relative(const char *p)
{
        if (!p || !*p || p[0] == '/')
                return false;
        const char *c = p;
        while (*c) {
                const char *e = strchr(c, '/');
                size_t len = e ? (size_t) (e - c) : strlen(c);
                if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!e)
                        break;
                c = e + 1;
        }
        return true;
}

/* Whether a folder between @root and @root/@rel (exclusive of the last component) is a symlink. */
bool mr_parent_is_symlink(const char *root, const char *rel)
{
        _cleanup_free_ char *copy = strdup(rel);
        if (!copy)
                return true;
        for (char *s = strchr(copy, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                _cleanup_free_ char *full = gv_path_join(root, copy);
                *s = '/';
                struct stat st;
                if (!full || (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode)))
                        return true;
        }
        return false;
}

int mr_io_error(gv_error_t **err, int e, const char *what, const char *path)
{
        return gv_error_set(err, e, GV_REASON_IO, "%s %s: %s", what, path, strerror(e < 0 ? -e : e));
}

bool mr_exists_l(const char *full)
{
        struct stat st;
        return lstat(full, &st) == 0;
}
