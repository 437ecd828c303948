/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/fileio.h"

int gv_cli_exit_code(const gv_error_t *err)
{
        return err ? gv_cli_exit_code_for(err->reason) : GV_EXIT_FAILED;
}

int gv_cli_exit_code_for(gv_reason_t reason)
{
        switch (reason) {
        case GV_REASON_CONFIG:
                return GV_EXIT_USAGE;
        case GV_REASON_TIMEOUT:
                return GV_EXIT_TIMEOUT;
        case GV_REASON_INTERRUPTED:
                return GV_EXIT_INTERRUPTED;
        default:
                return GV_EXIT_FAILED;
        }
}

static const char *level_name(gv_log_level_t level)
{
        switch (level) {
        case GV_LOG_DEBUG:
                return "debug";
        case GV_LOG_INFO:
                return "info";
        case GV_LOG_WARN:
                return "warning";
        default:
                return "error";
        }
}

void gv_cli_log(void *userdata, gv_log_level_t level, const char *component, const char *reason, const char *msg)
{
        gv_cli_t *cli = userdata;
        if (cli && level < cli->min_level)
                return;

        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char when[64];
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);

        if (cli && cli->log_format == GV_LOG_FORMAT_JSON) {
                json_object *o = json_object_new_object();
                char *t = NULL;
                if (asprintf(&t, "%s.%03ldZ", when, ts.tv_nsec / 1000000) < 0)
                        t = NULL;
                json_object_object_add(o, "time", json_object_new_string(t ? t : when));
                free(t);
                json_object_object_add(o, "level", json_object_new_string(level_name(level)));
                if (component && *component)
                        json_object_object_add(o, "component", json_object_new_string(component));
                if (reason && *reason)
                        json_object_object_add(o, "reason", json_object_new_string(reason));
                json_object_object_add(o, "msg", json_object_new_string(msg ? msg : ""));
                fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else {
                fprintf(stderr, "%s.%03ldZ %-7s %s%s%s%s%s\n", when, ts.tv_nsec / 1000000, level_name(level),
                        component && *component ? component : "", component && *component ? ": " : "",
                        reason && *reason ? reason : "", reason && *reason ? ": " : "", msg ? msg : "");
        }
        (void) fflush(stderr); /* a log line that cannot be written is lost, nothing more */
}

void gv_cli_logf(gv_cli_t *cli, gv_log_level_t level, const char *component, const char *reason, const char *fmt,
                 ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *msg = gv_vasprintf(fmt, ap);
        va_end(ap);
        gv_cli_log(cli, level, component, reason, msg ? msg : fmt);
}

/*
 * The one error format of every command: "gpu-validator CMD: [REASON: ]MESSAGE" on stderr, or
 * with --log-format=json one JSON log record (level error, component CMD, reason).
 */
static void print_error(gv_cli_t *cli, const char *cmd, const char *reason, const char *msg)
{
        if (cli && cli->log_format == GV_LOG_FORMAT_JSON) {
                gv_cli_log(cli, GV_LOG_ERROR, cmd, reason, msg);
                return;
        }
        const char *prog = cli && cli->prog ? cli->prog : "gpu-validator";
        const char *sep = cmd && *cmd ? " " : "";
        fprintf(stderr, "%s%s%s: %s%s%s\n", prog, sep, cmd ? cmd : "", reason && *reason ? reason : "",
                reason && *reason ? ": " : "", msg);
        (void) fflush(stderr); /* an error line that cannot be written is lost, nothing more */
}

int gv_cli_fail(gv_cli_t *cli, const char *component, gv_error_t **err)
{
        if (!err || !*err) {
                print_error(cli, component, "internal", "failed without an error message");
                return GV_EXIT_FAILED;
        }
        int code = gv_cli_exit_code(*err);
        const char *reason = gv_reason_name((*err)->reason);
        print_error(cli, component, reason, (*err)->msg);
        const char *hint = gv_reason_hint((*err)->reason);
        if (hint) {
                _cleanup_free_ char *h = NULL;
                if (asprintf(&h, "hint: %s", hint) < 0)
                        h = NULL;
                print_error(cli, component, NULL, h ? h : hint);
        }
        gv_error_free(err);
        return code;
}

int gv_cli_usage_error(gv_cli_t *cli, const char *cmd, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *msg = gv_vasprintf(fmt, ap);
        va_end(ap);
        const char *prog = cli && cli->prog ? cli->prog : "gpu-validator";
        const char *sep = cmd && *cmd ? " " : "";
        if (!cmd)
                cmd = "";
        print_error(cli, cmd, NULL, msg ? msg : fmt);
        if (!cli || cli->log_format != GV_LOG_FORMAT_JSON)
                fprintf(stderr, "Try '%s%s%s --help'.\n", prog, sep, cmd);
        return GV_EXIT_USAGE;
}

int gv_cli_set_log_level(gv_cli_t *cli, const char *name)
{
        static const struct {
                const char *name;
                gv_log_level_t level;
        } levels[] = {
                { "debug", GV_LOG_DEBUG }, { "info", GV_LOG_INFO },   { "warning", GV_LOG_WARN },
                { "warn", GV_LOG_WARN },   { "error", GV_LOG_ERROR },
        };
        for (size_t i = 0; name && i < GV_ARRAY_SIZE(levels); i++)
                if (strcasecmp(name, levels[i].name) == 0) {
                        cli->min_level = levels[i].level;
                        cli->level_set = true;
                        return 0;
                }
        return -EINVAL;
}

int gv_cli_set_log_format(gv_cli_t *cli, const char *name)
{
        if (name && strcmp(name, "text") == 0)
                cli->log_format = GV_LOG_FORMAT_TEXT;
        else if (name && strcmp(name, "json") == 0)
                cli->log_format = GV_LOG_FORMAT_JSON;
        else
                return -EINVAL;
        return 0;
}

const char *gv_env(const char *name)
{
        const char *v = getenv(name);
        return v && *v ? v : NULL;
}

int gv_parse_bool(const char *s, bool *out)
{
        static const char *const yes[] = { "true", "1", "yes", "on", "y", "t" };
        static const char *const no[] = { "false", "0", "no", "off", "n", "f" };
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *out = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *out = false;
                        return 0;
                }
        }
        return -EINVAL;
}

int gv_parse_uint(const char *s, unsigned *out)
{
        /* digits only: strtoul() alone would also take white space and a sign */
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno == ERANGE || v > UINT_MAX)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *out = (unsigned) v;
        return 0;
}

/* The error for environment variable @name set to @v, which is not @expected. */
static int env_error(const char *name, const char *v, const char *expected, gv_error_t **err)
{
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s=%s: expected %s", name, v, expected);
}

int gv_env_bool(const char *name, bool *out, gv_error_t **err)
{
        const char *v = gv_env(name);
        return !v || gv_parse_bool(v, out) == 0 ? 0 : env_error(name, v, "true or false", err);
}

int gv_env_uint(const char *name, unsigned *out, gv_error_t **err)
{
        const char *v = gv_env(name);
        return !v || gv_parse_uint(v, out) == 0 ? 0 : env_error(name, v, "a whole number", err);
}
