/* SPDX-License-Identifier: Apache-2.0 */
/* gpu-validator status: one row per marker. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "cli.h"
#include "options.h"

/* Keys worth a glance, per marker; the rest is in --json. */
static const char *const driver_keys[] = { "IS_HOST_DRIVER", "NVIDIA_DRIVER_ROOT", "DRIVER_VERSION",
                                           "CUDA_DRIVER_VERSION", "GPU_COUNT", NULL };

static char *format_age(time_t mtime, time_t now)
{
        char *s = NULL;
        if (mtime == 0)
                return strdup("-");
        long d = (long) (now - mtime);
        if (d < 0)
                d = 0;
        int r;
        if (d < 120)
                r = asprintf(&s, "%lds", d);
        else if (d < 7200)
                r = asprintf(&s, "%ldm", d / 60);
        else if (d < 172800)
                r = asprintf(&s, "%ldh", d / 3600);
        else
                r = asprintf(&s, "%ldd", d / 86400);
        return r < 0 ? NULL : s;
}

static char *format_facts(const gv_marker_info_t *info)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        /* provided outside (ASSUMED) or skipped on purpose (SKIPPED): say so first */
        const char *assumed_by = gv_kvlist_get(&info->content, "ASSUMED_BY");
        const char *skip_reason = gv_kvlist_get(&info->content, "SKIP_REASON");
        if (gv_kvlist_get(&info->content, "ASSUMED"))
                fprintf(f, "ASSUMED by %s", assumed_by ? assumed_by : "?");
        else if (gv_kvlist_get(&info->content, "SKIPPED"))
                fprintf(f, "SKIPPED (%s)", skip_reason ? skip_reason : "on purpose");
        else if (info->id == GV_MARKER_PLUGIN && gv_kvlist_get(&info->content, "MODE") &&
                 strcmp(gv_kvlist_get(&info->content, "MODE"), "dra") == 0) {
                const char *gpus = gv_kvlist_get(&info->content, "DRA_GPUS");
                const char *slices = gv_kvlist_get(&info->content, "RESOURCE_SLICES");
                fprintf(f, "DRA (%s GPU(s) in ResourceSlices %s)", gpus ? gpus : "?", slices ? slices : "?");
        }
        if (info->id == GV_MARKER_DRIVER || info->id == GV_MARKER_HOST_DRIVER) {
                for (const char *const *k = driver_keys; *k; k++) {
                        const char *v = gv_kvlist_get(&info->content, *k);
                        if (v)
                                fprintf(f, "%s%s=%s", ftell(f) ? " " : "", *k, v);
                }
        }
        const char *gen = gv_kvlist_get(&info->content, "GENERATION");
        if (gen)
                fprintf(f, "%sgeneration=%.8s", ftell(f) ? " " : "", gen);
        if (info->detail && info->state != GV_MARKER_MISSING)
                fprintf(f, "%s(%s)", ftell(f) ? " " : "", info->detail);
        if (gv_memstream_close(f, &buf) < 0)
                return NULL;
        return buf;
}

/* Length of the valid UTF-8 sequence at @s (1-4), or 0 when it is not valid. */
static size_t utf8_seq(const unsigned char *s)
{
        if (s[0] < 0x80)
                return 1;
        size_t n = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0 || (n == 2 && s[0] < 0xC2) || (n == 4 && s[0] > 0xF4))
                return 0;
        for (size_t i = 1; i < n; i++)
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
        return n;
}

/*
 * A JSON string object for marker bytes: JSON is UTF-8, marker values are
 * bytes, so a byte that is not part of valid UTF-8 becomes U+FFFD.
 */
static json_object *json_string_utf8(const char *s)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return json_object_new_string("");
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_seq(p);
                if (n == 0) {
                        fputs("\xEF\xBF\xBD", f);
                        p++;
                } else {
                        (void) fwrite(p, 1, n, f); /* checked at fclose() */
                        p += n;
                }
        }
        (void) gv_memstream_close(f, &buf); /* NULL when cut short: "" below */
        json_object *o = json_object_new_string(buf ? buf : "");
        free(buf);
        return o;
}

typedef struct {
        gv_marker_info_t m[GV_MARKER__MAX];
} snapshot_t;

static void snapshot_clear(snapshot_t *s)
{
        for (int id = 0; id < GV_MARKER__MAX; id++)
                gv_marker_info_clear(&s->m[id]);
}

static int snapshot_take(gv_store_t *store, snapshot_t *s, gv_error_t **err)
{
        for (int id = 0; id < GV_MARKER__MAX; id++) {
                int r = gv_store_inspect(store, (gv_marker_id_t) id, &s->m[id], err);
                if (r < 0) {
                        snapshot_clear(s);
                        return r;
                }
        }
        return 0;
}

static bool same_text(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Same state, time and generation for every marker. */
static bool snapshot_equal(const snapshot_t *a, const snapshot_t *b)
{
        for (int id = 0; id < GV_MARKER__MAX; id++)
                if (a->m[id].state != b->m[id].state || a->m[id].mtime != b->m[id].mtime ||
                    !same_text(gv_kvlist_get(&a->m[id].content, "GENERATION"),
                               gv_kvlist_get(&b->m[id].content, "GENERATION")))
                        return false;
        return true;
}

/*
 * Every marker as one consistent picture.  gv_store_inspect() judges one
 * marker with its chain, but the rows are read one after the other without
 * the writers' lock (status must work on a read-only folder), so a table read
 * during a re-validation could mix before and after (driver-ready missing
 * beside toolkit-ready ready).  Like a sequence lock: the folder is read
 * until two reads in a row agree (at most 50 tries, 1 ms apart, then the
 * last read is shown, each row still true when it was read).
 */
static int snapshot_stable(gv_store_t *store, snapshot_t *out, gv_error_t **err)
{
        int r = snapshot_take(store, out, err);
        for (int tries = 0; r >= 0 && tries < 50; tries++) {
                snapshot_t again = { 0 };
                if ((r = snapshot_take(store, &again, err)) < 0)
                        break;
                bool same = snapshot_equal(out, &again);
                snapshot_clear(out);
                *out = again;
                if (same)
                        return 0;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 1000L * 1000 }, NULL);
        }
        return r < 0 ? r : 0;
}

int gv_cli_print_status(gv_store_t *store, FILE *out, bool json, gv_error_t **err)
{
        time_t now = time(NULL);
        int not_ready = 0;
        snapshot_t snap = { 0 };
        int r = snapshot_stable(store, &snap, err);
        if (r < 0)
                return r;
        json_object *arr = json ? json_object_new_array() : NULL;
        if (!json)
                fprintf(out, "%-24s %-13s %-6s %s\n", "MARKER", "STATE", "AGE", "FACTS");
        for (int id = 0; id < GV_MARKER__MAX; id++) {
                gv_marker_info_t info = snap.m[id];
                if (info.state != GV_MARKER_READY && info.state != GV_MARKER_MISSING)
                        not_ready = 1;
                if (json) {
                        json_object *o = json_object_new_object();
                        json_object_object_add(o, "marker", json_object_new_string(gv_marker_file(info.id)));
                        json_object_object_add(o, "component",
                                               json_object_new_string(gv_marker_component(info.id)));
                        json_object_object_add(o, "state", json_object_new_string(gv_marker_state_name(info.state)));
                        if (info.mtime) {
                                json_object_object_add(o, "age_seconds", json_object_new_int64(now - info.mtime));
                                json_object_object_add(o, "mtime", json_object_new_int64(info.mtime));
                        }
                        if (info.detail)
                                json_object_object_add(o, "detail", json_string_utf8(info.detail));
                        json_object *content = json_object_new_object();
                        for (size_t i = 0; i < info.content.n; i++)
                                json_object_object_add(content, info.content.items[i].key,
                                                       json_string_utf8(info.content.items[i].value));
                        json_object_object_add(o, "content", content);
                        json_object_array_add(arr, o);
                } else {
                        _cleanup_free_ char *age = format_age(info.mtime, now);
                        _cleanup_free_ char *facts = format_facts(&info);
                        if (facts && *facts)
                                fprintf(out, "%-24s %-13s %-6s %s\n", gv_marker_file(info.id),
                                        gv_marker_state_name(info.state), age ? age : "?", facts);
                        else /* no trailing blanks */
                                fprintf(out, "%-24s %-13s %s\n", gv_marker_file(info.id),
                                        gv_marker_state_name(info.state), age ? age : "?");
                }
        }
        snapshot_clear(&snap);
        if (json) {
                json_object *doc = json_object_new_object();
                json_object_object_add(doc, "output_dir", json_object_new_string(gv_store_dir(store)));
                json_object_object_add(doc, "boot_id", json_object_new_string(gv_store_boot_id(store)));
                json_object_object_add(doc, "markers", arr);
                fprintf(out, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(doc);
        }
        (void) fflush(out); /* the exit code says ready or not whatever the output did */
        return not_ready;
}

static void help(FILE *f)
{
        fprintf(f,
                "Usage: gpu-validator status [--json] [OPTIONS]\n"
                "\n"
                "One row per readiness marker in OUTPUT_DIR:\n"
                "  ready         valid content, this boot, its whole upstream chain consistent\n"
                "  missing       no file\n"
                "  stale         written during another boot\n"
                "  inconsistent  an upstream marker is missing, not ready, or has another generation\n"
                "  foreign       present without valid content (for example created by touch)\n"
                "\nOptions:\n"
                "  --json                   print a JSON document instead of the table\n");
        gv_options_help_store(f);
        fprintf(f, "\nExit codes: 0 every present marker is ready (also when none is), 1 some marker is\n"
                   "stale, inconsistent or foreign, 2 usage error, a boot id file that cannot be read or\n"
                   "holds no UUID, or an OUTPUT_DIR that does not exist or cannot be read as a folder\n"
                   "(nothing was ever validated with it: check --output-dir / OUTPUT_DIR).\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator status",
                "the markers in /run/nvidia/validations",
                "gpu-validator status --json --output-dir /tmp/gpu-validator-mock-0/validations",
                "those of a `run --mock` as JSON",
                NULL });
}

/* status's own option: --json. */
static int on_extra(void *userdata, int opt, const char *arg, gv_error_t **err)
{
        (void) arg;
        if (opt != GV_OPT_JSON)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        *(bool *) userdata = true;
        return 0;
}

int gv_cmd_status(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option extra[] = {
                { "json", no_argument, NULL, GV_OPT_JSON },
        };
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_options_ gv_options_t o = { 0 };
        bool json = false;
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, "status", argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, &json, help,
                                       &o, &code) < 0)
                return code;
        if (optind < argc)
                return gv_cli_usage_error(cli, "status", "unexpected argument '%s'", argv[optind]);
        struct stat st;
        if (stat(o.cfg.output_dir, &st) < 0 && errno == ENOENT) {
                gv_error_set(&err, ENOENT, GV_REASON_CONFIG,
                             "status folder %s does not exist: nothing has been validated with it (check "
                             "--output-dir / OUTPUT_DIR; `run` creates it)", o.cfg.output_dir);
                return gv_cli_fail(cli, "status", &err);
        }

        gv_store_t *store = NULL;
        if (gv_options_open_store(&o, GV_STORE_READER, &store, &err) < 0) {
                gv_error_prefix(&err, "status");
                code = gv_cli_fail(cli, "status", &err);
                return code == GV_EXIT_FAILED ? GV_EXIT_USAGE : code;
        }
        int r = gv_cli_print_status(store, stdout, json, &err);
        if (r < 0) {
                /* the folder itself could not be read: as when opening it (--help's exit code 2) */
                code = gv_cli_fail(cli, "status", &err);
                if (code == GV_EXIT_FAILED)
                        code = GV_EXIT_USAGE;
        } else
                code = r ? GV_EXIT_FAILED : GV_EXIT_OK;
        gv_store_close(&store);
        return code;
}
