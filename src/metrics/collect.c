/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the marker store into a snapshot.  Reads only: gv_store_inspect() and sysfs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/digits.h"
#include "metrics.h"
#include "pci/pci.h"

void gv_metrics_snapshot_init(gv_metrics_snapshot_t *s, const char *node, const char *version)
{
        *s = (gv_metrics_snapshot_t) { .node = node, .version = version };
        for (size_t i = 0; i < GV_MARKER__MAX; i++)
                s->markers[i].state = GV_MARKER_MISSING;
}

static bool expect(const char **p, char c)
{
        if (**p != c)
                return false;
        (*p)++;
        return true;
}

int gv_metrics_parse_rfc3339(const char *s, double *out)
{
        if (!s)
                return -EINVAL;
        const char *p = s;
        int year, mon, day, hour, min, sec;
        if (!gv_fixed_digits(&p, 4, &year) || !expect(&p, '-') || !gv_fixed_digits(&p, 2, &mon) || !expect(&p, '-') ||
            !gv_fixed_digits(&p, 2, &day))
                return -EINVAL;
        if (*p != 'T' && *p != 't' && *p != ' ')
                return -EINVAL;
        p++;
        if (!gv_fixed_digits(&p, 2, &hour) || !expect(&p, ':') || !gv_fixed_digits(&p, 2, &min) || !expect(&p, ':') ||
            !gv_fixed_digits(&p, 2, &sec))
                return -EINVAL;
        if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
                return -EINVAL;

        double frac = 0.0;
        if (*p == '.') {
                p++;
                double scale = 0.1;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        frac += (*p - '0') * scale;
                        scale /= 10;
                }
        }

        long offset = 0;
        if (*p == 'Z' || *p == 'z') {
                p++;
        } else if (*p == '+' || *p == '-') {
                int sign = *p == '-' ? -1 : 1;
                p++;
                int oh, om;
                if (!gv_fixed_digits(&p, 2, &oh) || !expect(&p, ':') || !gv_fixed_digits(&p, 2, &om) || oh > 23 || om > 59)
                        return -EINVAL;
                offset = sign * (oh * 3600L + om * 60L);
        } else {
                return -EINVAL;
        }
        if (*p)
                return -EINVAL;

        struct tm tm = {
                .tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day,
                .tm_hour = hour, .tm_min = min, .tm_sec = sec == 60 ? 59 : sec, /* leap second */
        };
        time_t t = timegm(&tm);
        if (t == (time_t) -1 && !(year == 1969 && mon == 12 && day == 31))
                return -EINVAL;
        /* timegm() normalises 2024-02-31 to March; refuse dates that do not exist. */
        if (tm.tm_mday != day || tm.tm_mon != mon - 1)
                return -EINVAL;
        *out = (double) t + (sec == 60 ? 1.0 : 0.0) - (double) offset + frac;
        return 0;
}

static bool parse_ulong(const char *s, unsigned long *out)
{
        if (!s || !*s || !isdigit((unsigned char) *s))
                return false;
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || *end)
                return false;
        *out = v;
        return true;
}

static bool parse_seconds(const char *s, double *out)
{
        if (!s || !*s || !(isdigit((unsigned char) *s) || *s == '.'))
                return false;
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || *end || !isfinite(v) || v < 0)
                return false;
        *out = v;
        return true;
}

/* Whether the content of a marker in @state is its own (parsed, written by a validator). */
static bool content_trusted(gv_marker_state_t state)
{
        return state == GV_MARKER_READY || state == GV_MARKER_STALE || state == GV_MARKER_INCONSISTENT;
}

int gv_metrics_collect(gv_store_t *store, const char *sysfs_root, gv_metrics_snapshot_t *s, gv_error_t **err)
{
        const char *node = s->node, *version = s->version;
        gv_metrics_snapshot_init(s, node, version);

        if (sysfs_root) {
                int n = gv_pci_count_gpus(sysfs_root, NULL);
                if (n >= 0) {
                        s->have_pci_gpus = true;
                        s->pci_gpus = (unsigned long) n;
                }
        }

        if (!store)
                return 0;

        /* Counters are a side fact: an unreadable file leaves the series out rather than failing the page. */
        if (gv_revalidations_read(gv_store_dir(store), &s->revalidations, NULL) < 0)
                s->revalidations = (gv_revalidations_t) { 0 };

        for (int i = 0; i < GV_MARKER__MAX; i++) {
                gv_marker_info_t info = { 0 };
                int r = gv_store_inspect(store, (gv_marker_id_t) i, &info, err);
                if (r < 0) {
                        gv_marker_info_clear(&info);
                        return gv_error_prefix(err, "%s", gv_marker_file((gv_marker_id_t) i));
                }
                gv_metrics_marker_t *m = &s->markers[i];
                m->state = info.state;
                if (content_trusted(info.state)) {
                        m->have_validated_at = gv_metrics_parse_rfc3339(
                                gv_kvlist_get(&info.content, GV_METRICS_KEY_VALIDATED_AT), &m->validated_at) == 0;
                        m->have_duration = parse_seconds(gv_kvlist_get(&info.content, GV_METRICS_KEY_DURATION),
                                                         &m->duration_s);
                }
                if (info.state == GV_MARKER_READY && i == GV_MARKER_DRIVER)
                        s->have_nvml_gpus = parse_ulong(gv_kvlist_get(&info.content, GV_METRICS_KEY_GPU_COUNT),
                                                        &s->nvml_gpus);
                if (info.state == GV_MARKER_READY && i == GV_MARKER_PLUGIN &&
                    !parse_ulong(gv_kvlist_get(&info.content, GV_METRICS_KEY_PLUGIN_DEVICES), &s->plugin_devices))
                        s->plugin_devices = 0;
                gv_marker_info_clear(&info);
        }
        return 0;
}
