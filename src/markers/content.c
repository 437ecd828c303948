/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Marker names and the chain table, KEY=value lists, and the
 * shell-sourceable encoding of marker content (docs/markers.md).
 */
#include "markers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/cleanup.h"
#include "markers-internal.h"

typedef struct marker_desc {
        const char *file;
        const char *component;
        gv_marker_id_t parent;
        const char *generation_key;
} marker_desc_t;

static const marker_desc_t markers[GV_MARKER__MAX] = {
        [GV_MARKER_DRIVER] = { "driver-ready", "driver", GV_MARKER_INVALID, "DRIVER_GENERATION" },
        [GV_MARKER_HOST_DRIVER] = { "host-driver-ready", "host-driver", GV_MARKER_INVALID,
                                    "HOST_DRIVER_GENERATION" },
        [GV_MARKER_NVIDIA_FS] = { "nvidia-fs-ready", "nvidia-fs", GV_MARKER_DRIVER, "NVIDIA_FS_GENERATION" },
        [GV_MARKER_GDRCOPY] = { "gdrcopy-ready", "gdrcopy", GV_MARKER_DRIVER, "GDRCOPY_GENERATION" },
        [GV_MARKER_NVIDIA_PEERMEM] = { "nvidia-peermem-ready", "nvidia-peermem", GV_MARKER_DRIVER,
                                       "NVIDIA_PEERMEM_GENERATION" },
        [GV_MARKER_TOOLKIT] = { "toolkit-ready", "toolkit", GV_MARKER_DRIVER, "TOOLKIT_GENERATION" },
        [GV_MARKER_CUDA] = { "cuda-ready", "cuda", GV_MARKER_TOOLKIT, "CUDA_GENERATION" },
        [GV_MARKER_PLUGIN] = { "plugin-ready", "plugin", GV_MARKER_CUDA, "PLUGIN_GENERATION" },
        /* GPUDirect RDMA and the sandbox chain (shared/reference/upstream-components.md) */
        [GV_MARKER_MOFED] = { "mofed-ready", "mofed", GV_MARKER_INVALID, "MOFED_GENERATION" },
        [GV_MARKER_CC_MANAGER] = { "cc-manager-ready", "cc-manager", GV_MARKER_INVALID, "CC_MANAGER_GENERATION" },
        [GV_MARKER_VFIO_PCI] = { "vfio-pci-ready", "vfio-pci", GV_MARKER_INVALID, "VFIO_PCI_GENERATION" },
        [GV_MARKER_VGPU_MANAGER] = { "vgpu-manager-ready", "vgpu-manager", GV_MARKER_INVALID,
                                     "VGPU_MANAGER_GENERATION" },
        [GV_MARKER_HOST_VGPU_MANAGER] = { "host-vgpu-manager-ready", "host-vgpu-manager", GV_MARKER_INVALID,
                                          "HOST_VGPU_MANAGER_GENERATION" },
        [GV_MARKER_VGPU_DEVICES] = { "vgpu-devices-ready", "vgpu-devices", GV_MARKER_VGPU_MANAGER,
                                     "VGPU_DEVICES_GENERATION" },
};

static const char *const state_names[] = {
        [GV_MARKER_READY] = "ready",           [GV_MARKER_MISSING] = "missing",
        [GV_MARKER_STALE] = "stale",           [GV_MARKER_INCONSISTENT] = "inconsistent",
        [GV_MARKER_FOREIGN] = "foreign",
};

bool gv_marker_id_valid(gv_marker_id_t id)
{
        return (int) id >= 0 && id < GV_MARKER__MAX;
}

const char *gv_marker_file(gv_marker_id_t id)
{
        return gv_marker_id_valid(id) ? markers[id].file : NULL;
}

const char *gv_marker_component(gv_marker_id_t id)
{
        return gv_marker_id_valid(id) ? markers[id].component : NULL;
}

const char *gv_marker_state_name(gv_marker_state_t state)
{
        if ((unsigned) state >= GV_ARRAY_SIZE(state_names))
                return "unknown";
        return state_names[state];
}

gv_marker_id_t gv_marker_by_component(const char *component)
{
        if (!component)
                return GV_MARKER_INVALID;
        for (int i = 0; i < GV_MARKER__MAX; i++)
                if (strcmp(markers[i].component, component) == 0)
                        return (gv_marker_id_t) i;
        return GV_MARKER_INVALID;
}

gv_marker_id_t gv_marker_by_file(const char *file)
{
        if (!file)
                return GV_MARKER_INVALID;
        for (int i = 0; i < GV_MARKER__MAX; i++)
                if (strcmp(markers[i].file, file) == 0)
                        return (gv_marker_id_t) i;
        return GV_MARKER_INVALID;
}

gv_marker_id_t gv_marker_parent(gv_marker_id_t id)
{
        return gv_marker_id_valid(id) ? markers[id].parent : GV_MARKER_INVALID;
}

const char *gv_marker_generation_key(gv_marker_id_t id)
{
        return gv_marker_id_valid(id) ? markers[id].generation_key : NULL;
}

gv_marker_id_t gv_marker_companion_of(gv_marker_id_t id)
{
        switch (id) {
        case GV_MARKER_HOST_DRIVER:
                return GV_MARKER_DRIVER;
        case GV_MARKER_HOST_VGPU_MANAGER:
                return GV_MARKER_VGPU_MANAGER;
        default:
                return GV_MARKER_INVALID;
        }
}

gv_marker_id_t gv_marker_companion(gv_marker_id_t id)
{
        for (int i = 0; gv_marker_id_valid(id) && i < GV_MARKER__MAX; i++)
                if (gv_marker_companion_of((gv_marker_id_t) i) == id)
                        return (gv_marker_id_t) i;
        return GV_MARKER_INVALID;
}

bool gv_marker_is_downstream(gv_marker_id_t id, gv_marker_id_t ancestor)
{
        if (!gv_marker_id_valid(id) || !gv_marker_id_valid(ancestor))
                return false;
        for (gv_marker_id_t p = markers[id].parent; p != GV_MARKER_INVALID; p = markers[p].parent)
                if (p == ancestor)
                        return true;
        return false;
}

/* ---- KEY=value lists ---- */

static bool key_valid(const char *k)
{
        if (!k || !((*k >= 'A' && *k <= 'Z') || *k == '_'))
                return false;
        for (k++; *k; k++)
                if (!((*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || *k == '_'))
                        return false;
        return true;
}

bool gv_marker_key_valid(const char *key)
{
        return key_valid(key);
}

void gv_kvlist_clear(gv_kvlist_t *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].key);
                free(l->items[i].value);
        }
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

const char *gv_kvlist_get(const gv_kvlist_t *l, const char *key)
{
        if (!l || !key)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i].key, key) == 0)
                        return l->items[i].value;
        return NULL;
}

/* As gv_kvlist_set() but takes a value of @vlen bytes (no NUL inside). */
static int kvlist_setn(gv_kvlist_t *l, const char *key, const char *value, size_t vlen, gv_error_t **err)
{
        if (!key_valid(key))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "bad key \"%s\": expected [A-Z_][A-Z0-9_]*",
                                    key ? key : "(null)");
        _cleanup_free_ char *v = strndup(value, vlen);
        if (!v)
                return gv_error_oom(err);
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i].key, key) == 0) {
                        free(l->items[i].value);
                        l->items[i].value = TAKE_PTR(v);
                        return 0;
                }
        _cleanup_free_ char *k = strdup(key);
        if (!k)
                return gv_error_oom(err);
        gv_kv_t *items = realloc(l->items, (l->n + 1) * sizeof(*items));
        if (!items)
                return gv_error_oom(err);
        l->items = items;
        l->items[l->n].key = TAKE_PTR(k);
        l->items[l->n].value = TAKE_PTR(v);
        l->n++;
        return 0;
}

int gv_kvlist_set(gv_kvlist_t *l, const char *key, const char *value, gv_error_t **err)
{
        if (!l || !value)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_kvlist_set: NULL argument");
        return kvlist_setn(l, key, value, strlen(value), err);
}

/* ---- encoding ---- */

static bool bare_char(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '.' || c == '/' || c == ':' || c == '@' || c == '+' || c == '=' || c == '-';
}

static bool value_bare(const char *v)
{
        if (!*v)
                return false;
        for (; *v; v++)
                if (!bare_char((unsigned char) *v))
                        return false;
        return true;
}

int gv_marker_encode(const gv_kvlist_t *l, char **out, gv_error_t **err)
{
        if (!l || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_marker_encode: NULL argument");
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return gv_error_oom(err);
        for (size_t i = 0; i < l->n; i++) {
                const char *k = l->items[i].key, *v = l->items[i].value;
                if (!key_valid(k)) {
                        (void) fclose(f); /* the text is dropped */
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "bad key \"%s\": expected [A-Z_][A-Z0-9_]*", k ? k : "(null)");
                }
                if (!v)
                        v = "";
                fputs(k, f);
                fputc('=', f);
                if (value_bare(v)) {
                        fputs(v, f);
                } else {
                        /* 'abc'\''def': close the quote, an escaped quote, reopen. */
                        fputc('\'', f);
                        for (const char *p = v; *p; p++) {
                                if (*p == '\'')
                                        fputs("'\\''", f);
                                else
                                        fputc(*p, f);
                        }
                        fputc('\'', f);
                }
                fputc('\n', f);
        }
        if (ferror(f)) {
                (void) fclose(f); /* the text is dropped */
                return gv_error_oom(err);
        }
        if (fclose(f) != 0 || !buf)
                return gv_error_oom(err);
        *out = TAKE_PTR(buf);
        return 0;
}

/* ---- parsing ---- */

typedef struct growbuf {
        char *p;
        size_t n, cap;
} growbuf_t;

static int growbuf_put(growbuf_t *b, const char *s, size_t n)
{
        if (!GV_GREEDY_REALLOC(b->p, b->cap, b->n + n + 1))
                return -ENOMEM;
        memcpy(b->p + b->n, s, n);
        b->n += n;
        b->p[b->n] = '\0';
        return 0;
}

#define BAD_KEY "bad key (expected [A-Z_][A-Z0-9_]*)"

/* The key of the entry at text[*pos], up to its '='; *pos past the '='.  0, -EINVAL with *why, or -ENOMEM. */
static int parse_key(const char *text, size_t len, size_t *pos, char **key, const char **why)
{
        size_t i = *pos, ks = i;
        while (i < len && text[i] != '=' && text[i] != '\n')
                i++;
        if (i >= len || text[i] != '=') {
                *why = "expected KEY=value";
                return -EINVAL;
        }
        size_t klen = i - ks;
        if (klen == 0 || memchr(text + ks, '\0', klen)) {
                *why = BAD_KEY;
                return -EINVAL;
        }
        _cleanup_free_ char *k = strndup(text + ks, klen);
        if (!k)
                return -ENOMEM;
        if (!key_valid(k)) {
                *why = BAD_KEY;
                return -EINVAL;
        }
        *pos = i + 1;
        *key = TAKE_PTR(k);
        return 0;
}

/* A '...' run at text[*pos] (the opening quote) appended to @val; *pos past the closing quote. */
static int parse_quoted(const char *text, size_t len, size_t *pos, unsigned *line, growbuf_t *val, const char **why)
{
        size_t i = *pos + 1, s = i;
        while (i < len && text[i] != '\'')
                i++;
        if (i >= len) {
                *why = "unterminated single quote";
                return -EINVAL;
        }
        if (memchr(text + s, '\0', i - s)) {
                *why = "NUL byte in value";
                return -EINVAL;
        }
        for (size_t q = s; q < i; q++)
                if (text[q] == '\n')
                        (*line)++;
        if (growbuf_put(val, text + s, i - s) < 0)
                return -ENOMEM;
        *pos = i + 1; /* closing quote */
        return 0;
}

/* Why @c cannot stand outside single quotes. */
static const char *unquoted_why(unsigned char c)
{
        return c == '$' || c == '`'    ? "shell expansion is not allowed"
               : c == '"'              ? "double quotes are not allowed"
               : c == ' ' || c == '\t' ? "unquoted blank in value"
               : c == '\0'             ? "NUL byte in value"
                                       : "character not allowed outside single quotes";
}

/* The value at text[*pos]: bare runs, '...' runs and \' , up to an unquoted newline; into @val. */
static int parse_value(const char *text, size_t len, size_t *pos, unsigned *line, growbuf_t *val, const char **why)
{
        size_t i = *pos;
        val->n = 0;
        if (growbuf_put(val, "", 0) < 0)
                return -ENOMEM;
        while (i < len && text[i] != '\n') {
                unsigned char c = (unsigned char) text[i];
                int r = 0;
                if (bare_char(c)) {
                        size_t s = i;
                        while (i < len && bare_char((unsigned char) text[i]))
                                i++;
                        r = growbuf_put(val, text + s, i - s);
                } else if (c == '\'') {
                        r = parse_quoted(text, len, &i, line, val, why);
                } else if (c == '\\' && i + 1 < len && text[i + 1] == '\'') {
                        r = growbuf_put(val, "'", 1);
                        i += 2;
                } else {
                        *why = unquoted_why(c);
                        return -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        *pos = i;
        return 0;
}

/*
 * Parse one KEY=value entry starting at text[*pos] (not blank, not a
 * comment).  On success *key is a heap string, the value is in @val, and
 * *pos / *line are past the entry.  Returns 0, -EINVAL with *why set, or -ENOMEM.
 */
static int parse_entry(const char *text, size_t len, size_t *pos, unsigned *line, growbuf_t *val, char **key,
                       const char **why)
{
        size_t i = *pos;
        _cleanup_free_ char *k = NULL;
        int r = parse_key(text, len, &i, &k, why);
        if (r < 0)
                return r;
        r = parse_value(text, len, &i, line, val, why);
        if (r < 0)
                return r;
        *pos = i < len ? i + 1 : i; /* past the newline */
        (*line)++;
        *key = TAKE_PTR(k);
        return 0;
}

int gv_marker_parse(const char *text, size_t len, gv_kvlist_t *out, gv_error_t **err)
{
        if (!out || (!text && len > 0))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_marker_parse: NULL argument");
        if (out->n != 0)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_marker_parse: output list not empty");

        gv_kvlist_t l = { 0 };
        growbuf_t val = { 0 };
        size_t i = 0;
        unsigned line = 1;
        int r = 0;

        while (i < len) {
                /* Blank line (only spaces/tabs) or comment. */
                size_t j = i;
                while (j < len && (text[j] == ' ' || text[j] == '\t'))
                        j++;
                if (j >= len || text[j] == '\n' || text[i] == '#') {
                        while (j < len && text[j] != '\n')
                                j++;
                        i = j + 1;
                        line++;
                        continue;
                }
                char *key = NULL;
                const char *why = NULL;
                unsigned entry_line = line;
                r = parse_entry(text, len, &i, &line, &val, &key, &why);
                if (r == -EINVAL) {
                        r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "line %u: %s", entry_line, why);
                        break;
                }
                if (r < 0) {
                        r = gv_error_oom(err);
                        break;
                }
                r = kvlist_setn(&l, key, val.p, val.n, err);
                free(key);
                if (r < 0)
                        break;
        }
        free(val.p);
        if (r < 0) {
                gv_kvlist_clear(&l);
                return r;
        }
        *out = l;
        return 0;
}

int gv_generation_new(char out[GV_GENERATION_HEX_LEN + 1])
{
        unsigned char raw[GV_GENERATION_HEX_LEN / 2];
        size_t got = 0;
        while (got < sizeof(raw)) {
                ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                got += (size_t) n;
        }
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < sizeof(raw); i++) {
                out[2 * i] = hex[raw[i] >> 4];
                out[2 * i + 1] = hex[raw[i] & 0xf];
        }
        out[GV_GENERATION_HEX_LEN] = '\0';
        return 0;
}
