/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVIDIA_VISIBLE_DEVICES, as the NVIDIA Container Toolkit documents it
 * ("Environment variables (OCI spec)"): unset/empty or "void" = not a GPU
 * container, "none" = no device but the driver, "all", or a comma list of
 * GPU indexes, GPU UUIDs, MIG device UUIDs or GPU:MIG index pairs.
 */
#include "cudacheck.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"

static bool all_digits(const char *s, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isdigit((unsigned char) s[i]))
                        return false;
        return true;
}

/* A UUID after its "GPU-"/"MIG-" prefix: hex digits and dashes, at least one hex digit. */
static bool uuid_body(const char *s)
{
        bool hex = false;
        for (; *s; s++) {
                if (isxdigit((unsigned char) *s))
                        hex = true;
                else if (*s != '-')
                        return false;
        }
        return hex;
}

static bool item_valid(const char *s)
{
        size_t len = strlen(s);
        if (all_digits(s, len))
                return true;
        const char *colon = strchr(s, ':');
        if (colon)
                return all_digits(s, (size_t) (colon - s)) && all_digits(colon + 1, strlen(colon + 1));
        if (strncasecmp(s, "GPU-", 4) == 0 || strncasecmp(s, "MIG-", 4) == 0)
                return uuid_body(s + 4);
        return false;
}

void gv_visible_devices_free(gv_visible_devices_t *v)
{
        if (!v)
                return;
        gv_strv_freep(&v->ids);
        v->ids = NULL;
        v->n = 0;
        v->kind = GV_VISIBLE_UNSET;
}

/* Copy of @s[0..len) without blanks at either end; heap. */
static char *trimmed(const char *s, size_t len)
{
        while (len > 0 && isspace((unsigned char) *s)) {
                s++;
                len--;
        }
        while (len > 0 && isspace((unsigned char) s[len - 1]))
                len--;
        return strndup(s, len);
}

int gv_visible_devices_parse(const char *value, gv_visible_devices_t *out, gv_error_t **err)
{
        _cleanup_free_ char *whole = trimmed(value ? value : "", value ? strlen(value) : 0);
        if (!whole)
                return gv_error_oom(err);
        gv_visible_kind_t kind = GV_VISIBLE_LIST;
        if (!*whole)
                kind = GV_VISIBLE_UNSET;
        else if (strcasecmp(whole, "void") == 0)
                kind = GV_VISIBLE_VOID;
        else if (strcasecmp(whole, "none") == 0)
                kind = GV_VISIBLE_NONE;
        else if (strcasecmp(whole, "all") == 0)
                kind = GV_VISIBLE_ALL;
        if (kind != GV_VISIBLE_LIST) {
                *out = (gv_visible_devices_t) { .kind = kind };
                return 0;
        }

        _cleanup_strv_free_ char **ids = calloc(1, sizeof(*ids));
        if (!ids)
                return gv_error_oom(err);
        size_t n = 0;
        for (const char *p = whole; *p;) {
                size_t len = strcspn(p, ",");
                _cleanup_free_ char *item = trimmed(p, len);
                if (!item)
                        return gv_error_oom(err);
                p += len;
                if (*p)
                        p++;
                if (!*item)
                        continue;
                if (!item_valid(item))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "NVIDIA_VISIBLE_DEVICES item '%s': expected all, none, void, or a "
                                            "comma list of GPU indexes, GPU-/MIG- UUIDs or GPU:MIG pairs",
                                            item);
                bool dup = false;
                for (size_t i = 0; i < n && !dup; i++)
                        dup = strcasecmp(ids[i], item) == 0;
                if (dup)
                        continue;
                char **nids = realloc(ids, (n + 2) * sizeof(*ids));
                if (!nids)
                        return gv_error_oom(err);
                ids = nids;
                ids[n++] = TAKE_PTR(item);
                ids[n] = NULL;
        }
        if (n == 0) {
                *out = (gv_visible_devices_t) { .kind = GV_VISIBLE_UNSET };
                return 0;
        }
        *out = (gv_visible_devices_t) { .kind = GV_VISIBLE_LIST, .ids = TAKE_PTR(ids), .n = n };
        return 0;
}

/*
 * The device an item names: its index in [0, n_devices), SIZE_MAX for an
 * unresolvable MIG UUID (counted without a check), or -ENODEV.
 */
static int resolve_item(const char *item, const char *const *uuids, size_t n_devices, size_t *dev)
{
        size_t len = strlen(item);
        const char *colon = strchr(item, ':');
        if (all_digits(item, len) || colon) {
                errno = 0;
                unsigned long idx = strtoul(item, NULL, 10);
                if (errno || idx >= n_devices)
                        return -ENODEV;
                /* A MIG pair G:M is its own device; keep it apart from plain G. */
                *dev = colon ? SIZE_MAX : (size_t) idx;
                return 0;
        }
        if (strncasecmp(item, "MIG-", 4) == 0) {
                *dev = SIZE_MAX;
                return 0;
        }
        for (size_t i = 0; i < n_devices; i++) {
                if (uuids && uuids[i] && strcasecmp(uuids[i], item) == 0) {
                        *dev = i;
                        return 0;
                }
        }
        return -ENODEV;
}

/*
 * The error for an item that names no device NVML reports: which device it
 * names, and what NVML has (the index range, or the UUIDs for a UUID item).
 */
static int no_such_device(const char *item, const char *const *uuids, size_t n_devices, gv_error_t **err)
{
        const char *what = strchr(item, ':') ? "MIG device" : "GPU";
        if (n_devices == 0)
                return gv_error_set(err, ENODEV, GV_REASON_NO_GPU,
                                    "NVIDIA_VISIBLE_DEVICES names %s %s, but NVML reports no GPU", what, item);
        if (strncasecmp(item, "GPU-", 4) != 0) {
                if (n_devices == 1)
                        return gv_error_set(err, ENODEV, GV_REASON_NO_GPU,
                                            "NVIDIA_VISIBLE_DEVICES names %s %s, but NVML reports 1 GPU, index 0",
                                            what, item);
                return gv_error_set(err, ENODEV, GV_REASON_NO_GPU,
                                    "NVIDIA_VISIBLE_DEVICES names %s %s, but NVML reports %zu GPUs, indexes 0 to %zu",
                                    what, item, n_devices, n_devices - 1);
        }
        _cleanup_free_ char *list = NULL;
        size_t list_len = 0;
        FILE *f = open_memstream(&list, &list_len);
        if (!f)
                return gv_error_oom(err);
        for (size_t i = 0; i < n_devices; i++)
                fprintf(f, "%s%zu: %s", i ? ", " : "", i, uuids && uuids[i] ? uuids[i] : "(UUID unknown)");
        if (fclose(f) != 0 || !list)
                return gv_error_oom(err);
        return gv_error_set(err, ENODEV, GV_REASON_NO_GPU,
                            "NVIDIA_VISIBLE_DEVICES names %s, but none of the %zu GPU(s) NVML reports has that "
                            "UUID (NVML has %s)", item, n_devices, list);
}

int gv_visible_devices_select(const gv_visible_devices_t *v, const char *const *uuids, size_t n_devices,
                              bool *selected, size_t *n_visible, gv_error_t **err)
{
        bool all = false;
        switch (v->kind) {
        case GV_VISIBLE_UNSET:
        case GV_VISIBLE_ALL:
                all = true;
                break;
        case GV_VISIBLE_NONE:
        case GV_VISIBLE_VOID:
                if (selected)
                        memset(selected, 0, n_devices * sizeof(*selected));
                *n_visible = 0;
                return 0;
        case GV_VISIBLE_LIST:
                break;
        }
        if (all) {
                for (size_t i = 0; selected && i < n_devices; i++)
                        selected[i] = true;
                *n_visible = n_devices;
                return 0;
        }
        _cleanup_free_ bool *seen = calloc(n_devices + 1, sizeof(*seen));
        _cleanup_free_ bool *holds = calloc(n_devices + 1, sizeof(*holds)); /* a MIG device G:M of GPU G */
        if (!seen || !holds)
                return gv_error_oom(err);
        size_t count = 0;
        for (size_t i = 0; i < v->n; i++) {
                size_t dev = 0;
                if (resolve_item(v->ids[i], uuids, n_devices, &dev) < 0)
                        return no_such_device(v->ids[i], uuids, n_devices, err);
                if (dev == SIZE_MAX) {
                        count++;
                        if (strchr(v->ids[i], ':'))
                                holds[strtoul(v->ids[i], NULL, 10)] = true;
                } else if (!seen[dev]) {
                        seen[dev] = true;
                        count++;
                }
        }
        for (size_t i = 0; selected && i < n_devices; i++)
                selected[i] = seen[i] || holds[i];
        *n_visible = count;
        return 0;
}

int gv_visible_devices_resolve(const gv_visible_devices_t *v, const char *const *uuids, size_t n_devices,
                               size_t *n_visible, gv_error_t **err)
{
        return gv_visible_devices_select(v, uuids, n_devices, NULL, n_visible, err);
}
