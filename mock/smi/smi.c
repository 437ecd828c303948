/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The --query-gpu CSV of our nvidia-smi (smi.h): the field list and
 * --format parser, and the cell, header and row formatting (the `-q` value
 * text too, smi_format_q()).  Facts about the real output formats come from
 * shared/cases/nvidia-smi/ (named per function).
 */
#include "mock/smi/smi.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

/* Copy [s, s+len) without blanks at either end into a heap string. */
static char *trimmed_dup(const char *s, size_t len)
{
        while (len > 0 && (*s == ' ' || *s == '\t')) {
                s++;
                len--;
        }
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
                len--;
        return strndup(s, len);
}

void smi_query_free(smi_query_t *q)
{
        if (!q)
                return;
        free(q->fields);
        q->fields = NULL;
        q->n = 0;
}

int smi_next_token(const char **p, char **tok)
{
        const char *comma = strchr(*p, ',');
        size_t len = comma ? (size_t) (comma - *p) : strlen(*p);
        *tok = trimmed_dup(*p, len);
        if (!*tok)
                return -ENOMEM;
        *p = comma ? comma + 1 : NULL;
        return 0;
}

smi_parse_error_t smi_format_parse(const char *format, bool *header, bool *units, char **bad)
{
        bool csv = false;
        for (const char *p = format; p;) {
                _cleanup_free_ char *tok = NULL;
                if (smi_next_token(&p, &tok) < 0)
                        return SMI_PARSE_NOMEM;
                if (strcmp(tok, "csv") == 0) {
                        csv = true;
                } else if (strcmp(tok, "noheader") == 0) {
                        *header = false;
                } else if (strcmp(tok, "nounits") == 0) {
                        *units = false;
                } else {
                        if (bad)
                                *bad = TAKE_PTR(tok);
                        return SMI_PARSE_BAD_FORMAT;
                }
        }
        return csv ? SMI_PARSE_OK : SMI_PARSE_NO_FORMAT;
}

smi_parse_error_t smi_query_parse(const char *fields, const char *format, smi_query_t *q, char **bad)
{
        if (!fields)
                return SMI_PARSE_EMPTY;
        bool header = true, units = true;
        smi_parse_error_t pe = smi_format_parse(format, &header, &units, bad);
        if (pe != SMI_PARSE_OK)
                return pe;

        size_t cap = 1, n = 0;
        for (const char *c = fields; (c = strchr(c, ',')); c++)
                cap++;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers: the element is a pointer */
        _cleanup_free_ const smi_field_def_t **defs = calloc(cap, sizeof(*defs));
        if (!defs)
                return SMI_PARSE_NOMEM;
        for (const char *p = fields; p;) {
                _cleanup_free_ char *tok = NULL;
                if (smi_next_token(&p, &tok) < 0)
                        return SMI_PARSE_NOMEM;
                /* A trailing comma ("name,") is tolerated like the real tool; an empty middle field is not. */
                if (*tok == '\0' && !p && n > 0)
                        continue;
                const smi_field_def_t *d = smi_field_lookup(tok);
                if (!d) {
                        if (bad)
                                *bad = TAKE_PTR(tok);
                        return SMI_PARSE_BAD_FIELD;
                }
                defs[n++] = d;
        }
        if (n == 0)
                return SMI_PARSE_EMPTY;
        q->n = n;
        q->fields = TAKE_PTR(defs);
        q->header = header;
        q->units = units;
        return SMI_PARSE_OK;
}

const char *smi_unavailable_text(nvmlReturn_t ret)
{
        switch (ret) {
        case NVML_ERROR_NOT_SUPPORTED:
                return "[N/A]";
        case NVML_ERROR_DEPRECATED:
                return "[Requested functionality has been deprecated]";
        case NVML_ERROR_NO_PERMISSION:
                return "[Insufficient Permissions]";
        case NVML_ERROR_GPU_IS_LOST:
                return "[GPU is lost]";
        default:
                return "[Unknown Error]";
        }
}

bool smi_is_unavailable_cell(const char *cell)
{
        if (!cell)
                return true;
        while (*cell == ' ')
                cell++;
        size_t len = strlen(cell);
        while (len > 0 && cell[len - 1] == ' ')
                len--;
        return len >= 2 && cell[0] == '[' && cell[len - 1] == ']';
}

const char *smi_compute_mode_name(unsigned long long m)
{
        switch (m) {
        case NVML_COMPUTEMODE_DEFAULT:
                return "Default";
        case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
                return "Exclusive_Thread";
        case NVML_COMPUTEMODE_PROHIBITED:
                return "Prohibited";
        case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
                return "Exclusive_Process";
        default:
                return "Unknown";
        }
}

/* Digits of a hex style: 2, 4 or 8. */
static int hex_digits(smi_style_t style)
{
        switch (style) {
        case SMI_STYLE_HEX1:
                return 1;
        case SMI_STYLE_HEX2:
                return 2;
        case SMI_STYLE_HEX4:
                return 4;
        case SMI_STYLE_HEX16:
                return 16;
        default:
                return 8;
        }
}

char *smi_format_value(const smi_field_def_t *def, const smi_value_t *v, bool units)
{
        char *s = NULL;
        int r;
        if (v->ret != NVML_SUCCESS)
                return strdup(smi_unavailable_text(v->ret));
        switch (def->style) {
        case SMI_STYLE_STR:
                return strdup(v->str ? v->str : "");
        case SMI_STYLE_UINT:
        case SMI_STYLE_CELSIUS:
                r = asprintf(&s, "%llu", v->num);
                break;
        case SMI_STYLE_MIB:
                r = asprintf(&s, units ? "%llu MiB" : "%llu", v->num);
                break;
        case SMI_STYLE_PERCENT:
                r = asprintf(&s, units ? "%llu %%" : "%llu", v->num);
                break;
        case SMI_STYLE_WATT:
                r = asprintf(&s, units ? "%.2f W" : "%.2f", (double) v->num / 1000.0);
                break;
        case SMI_STYLE_MHZ:
                r = asprintf(&s, units ? "%llu MHz" : "%llu", v->num);
                break;
        case SMI_STYLE_HEX1:
        case SMI_STYLE_HEX2:
        case SMI_STYLE_HEX4:
        case SMI_STYLE_HEX8:
        case SMI_STYLE_HEX16:
                r = asprintf(&s, "0x%0*llX", hex_digits(def->style), v->num);
                break;
        case SMI_STYLE_WIDTH:
        case SMI_STYLE_BANKS:
                r = asprintf(&s, "%llu", v->num);
                break;
        case SMI_STYLE_US:
                r = asprintf(&s, units ? "%llu us" : "%llu", v->num);
                break;
        case SMI_STYLE_SCELSIUS:
                r = asprintf(&s, "%lld", v->num2);
                break;
        case SMI_STYLE_ENABLED:
                return strdup(v->num ? "Enabled" : "Disabled");
        case SMI_STYLE_PSTATE:
                if (v->num >= NVML_PSTATE_UNKNOWN)
                        return strdup("Unknown");
                r = asprintf(&s, "P%llu", v->num);
                break;
        case SMI_STYLE_CC:
                r = asprintf(&s, "%lld.%lld", (long long) v->num, v->num2);
                break;
        case SMI_STYLE_COMPUTE_MODE:
                return strdup(smi_compute_mode_name(v->num));
        default:
                return strdup(smi_unavailable_text(NVML_ERROR_UNKNOWN));
        }
        return r < 0 ? NULL : s;
}

/* -q: "N/A" when unavailable (q__*); XML hex has no "0x" (xml__*); the temperature reads "39 C". */
char *smi_format_q(const smi_field_def_t *def, const smi_value_t *v, bool xml)
{
        char *s = NULL;
        int r;
        if (v->ret == NVML_ERROR_DEPRECATED) /* the CSV's text without brackets (the 590 -q, the 595 -q -x captures) */
                return strdup("Requested functionality has been deprecated");
        if (v->ret != NVML_SUCCESS)
                return strdup("N/A");
        switch (def->style) {
        case SMI_STYLE_CELSIUS:
                r = asprintf(&s, "%llu C", v->num);
                break;
        case SMI_STYLE_SCELSIUS:
                r = asprintf(&s, "%lld C", v->num2);
                break;
        case SMI_STYLE_WIDTH:
                r = asprintf(&s, "%llux", v->num);
                break;
        case SMI_STYLE_BANKS:
                r = asprintf(&s, "%llu bank(s)", v->num);
                break;
        case SMI_STYLE_HEX1:
        case SMI_STYLE_HEX2:
        case SMI_STYLE_HEX4:
        case SMI_STYLE_HEX8:
        case SMI_STYLE_HEX16:
                if (!xml)
                        return smi_format_value(def, v, true);
                r = asprintf(&s, "%0*llX", hex_digits(def->style), v->num);
                break;
        default:
                return smi_format_value(def, v, true);
        }
        return r < 0 ? NULL : s;
}

char *smi_csv_header(const smi_query_t *q)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < q->n; i++) {
                const smi_field_def_t *d = q->fields[i];
                fprintf(f, "%s%s", i ? ", " : "", d->name);
                if (d->unit && q->units)
                        fprintf(f, " [%s]", d->unit);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

char *smi_csv_row(const smi_query_t *q, const smi_value_t *values)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        bool ok = true;
        for (size_t i = 0; i < q->n; i++) {
                _cleanup_free_ char *cell = smi_format_value(q->fields[i], &values[i], q->units);
                if (!cell) {
                        ok = false;
                        break;
                }
                fprintf(f, "%s%s", i ? ", " : "", cell);
        }
        if (fclose(f) != 0 || !ok) {
                free(buf);
                return NULL;
        }
        return buf;
}

void *smi_nvml_sym(const gv_nvml_t *n, const char *name)
{
        return n && n->handle ? dlsym(n->handle, name) : NULL;
}
