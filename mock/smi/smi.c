/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVML-independent parts of our nvidia-smi (see smi.h).  Facts about the real
 * output formats come from shared/cases/nvidia-smi/ (named per function).
 */
#include "mock/smi/smi.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

/*
 * Canonical names, units and value shapes as in the header and rows of
 * csv__query-gpu_l40s_under-load_595.80.csv and
 * csv__query-gpu_h100-80gb-hbm3_mig-enabled_590.48.01.csv.  Aliases are the
 * short spellings nvidia-smi --help-query-gpu documents (clocks.gr, gpu_name).
 */
static const smi_field_def_t field_table[] = {
        { SMI_F_TIMESTAMP, "timestamp", { NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_DRIVER_VERSION, "driver_version", { NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_COUNT, "count", { NULL }, NULL, SMI_STYLE_UINT },
        { SMI_F_INDEX, "index", { NULL }, NULL, SMI_STYLE_UINT },
        { SMI_F_NAME, "name", { "gpu_name", NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_SERIAL, "serial", { "gpu_serial", NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_UUID, "uuid", { "gpu_uuid", NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_PCI_BUS_ID, "pci.bus_id", { "gpu_bus_id", NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_PCI_DOMAIN, "pci.domain", { NULL }, NULL, SMI_STYLE_HEX4 },
        { SMI_F_PCI_BUS, "pci.bus", { NULL }, NULL, SMI_STYLE_HEX2 },
        { SMI_F_PCI_DEVICE, "pci.device", { NULL }, NULL, SMI_STYLE_HEX2 },
        { SMI_F_PCI_DEVICE_ID, "pci.device_id", { NULL }, NULL, SMI_STYLE_HEX8 },
        { SMI_F_PCI_SUB_DEVICE_ID, "pci.sub_device_id", { NULL }, NULL, SMI_STYLE_HEX8 },
        { SMI_F_DISPLAY_MODE, "display_mode", { NULL }, NULL, SMI_STYLE_ENABLED },
        { SMI_F_DISPLAY_ACTIVE, "display_active", { NULL }, NULL, SMI_STYLE_ENABLED },
        { SMI_F_PERSISTENCE_MODE, "persistence_mode", { NULL }, NULL, SMI_STYLE_ENABLED },
        { SMI_F_VBIOS_VERSION, "vbios_version", { NULL }, NULL, SMI_STYLE_STR },
        { SMI_F_FAN_SPEED, "fan.speed", { NULL }, "%", SMI_STYLE_PERCENT },
        { SMI_F_PSTATE, "pstate", { NULL }, NULL, SMI_STYLE_PSTATE },
        { SMI_F_MEMORY_TOTAL, "memory.total", { NULL }, "MiB", SMI_STYLE_MIB },
        { SMI_F_MEMORY_RESERVED, "memory.reserved", { NULL }, "MiB", SMI_STYLE_MIB },
        { SMI_F_MEMORY_USED, "memory.used", { NULL }, "MiB", SMI_STYLE_MIB },
        { SMI_F_MEMORY_FREE, "memory.free", { NULL }, "MiB", SMI_STYLE_MIB },
        { SMI_F_COMPUTE_MODE, "compute_mode", { NULL }, NULL, SMI_STYLE_COMPUTE_MODE },
        { SMI_F_COMPUTE_CAP, "compute_cap", { NULL }, NULL, SMI_STYLE_CC },
        { SMI_F_UTILIZATION_GPU, "utilization.gpu", { NULL }, "%", SMI_STYLE_PERCENT },
        { SMI_F_UTILIZATION_MEMORY, "utilization.memory", { NULL }, "%", SMI_STYLE_PERCENT },
        { SMI_F_ECC_MODE_CURRENT, "ecc.mode.current", { NULL }, NULL, SMI_STYLE_ENABLED },
        { SMI_F_ECC_MODE_PENDING, "ecc.mode.pending", { NULL }, NULL, SMI_STYLE_ENABLED },
        /* The real header has no unit for temperature.gpu and the value is a bare number. */
        { SMI_F_TEMPERATURE_GPU, "temperature.gpu", { NULL }, NULL, SMI_STYLE_UINT },
        { SMI_F_TEMPERATURE_MEMORY, "temperature.memory", { NULL }, NULL, SMI_STYLE_UINT },
        { SMI_F_POWER_DRAW, "power.draw", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_DRAW_AVERAGE, "power.draw.average", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_DRAW_INSTANT, "power.draw.instant", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_LIMIT, "power.limit", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_ENFORCED_POWER_LIMIT, "enforced.power.limit", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_DEFAULT_LIMIT, "power.default_limit", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_MIN_LIMIT, "power.min_limit", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_POWER_MAX_LIMIT, "power.max_limit", { NULL }, "W", SMI_STYLE_WATT },
        { SMI_F_CLOCKS_GR, "clocks.current.graphics", { "clocks.gr", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_SM, "clocks.current.sm", { "clocks.sm", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_MEM, "clocks.current.memory", { "clocks.mem", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_VIDEO, "clocks.current.video", { "clocks.video", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_MAX_GR, "clocks.max.graphics", { "clocks.max.gr", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_MAX_SM, "clocks.max.sm", { NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_CLOCKS_MAX_MEM, "clocks.max.memory", { "clocks.max.mem", NULL }, "MHz", SMI_STYLE_MHZ },
        { SMI_F_MIG_MODE_CURRENT, "mig.mode.current", { NULL }, NULL, SMI_STYLE_ENABLED },
        { SMI_F_MIG_MODE_PENDING, "mig.mode.pending", { NULL }, NULL, SMI_STYLE_ENABLED },
};

const smi_field_def_t *smi_fields(size_t *n)
{
        if (n)
                *n = GV_ARRAY_SIZE(field_table);
        return field_table;
}

const smi_field_def_t *smi_field_lookup(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(field_table); i++) {
                if (strcmp(field_table[i].name, name) == 0)
                        return &field_table[i];
                for (size_t a = 0; a < GV_ARRAY_SIZE(field_table[i].aliases) && field_table[i].aliases[a]; a++)
                        if (strcmp(field_table[i].aliases[a], name) == 0)
                                return &field_table[i];
        }
        return NULL;
}

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

smi_parse_error_t smi_query_parse(const char *fields, const char *format, smi_query_t *q, char **bad)
{
        if (!fields)
                return SMI_PARSE_EMPTY;
        bool header = true, units = true, csv = false;
        if (format) {
                const char *p = format;
                for (;;) {
                        const char *comma = strchr(p, ',');
                        size_t len = comma ? (size_t) (comma - p) : strlen(p);
                        _cleanup_free_ char *tok = trimmed_dup(p, len);
                        if (!tok)
                                return SMI_PARSE_NOMEM;
                        if (strcmp(tok, "csv") == 0)
                                csv = true;
                        else if (strcmp(tok, "noheader") == 0)
                                header = false;
                        else if (strcmp(tok, "nounits") == 0)
                                units = false;
                        else {
                                if (bad)
                                        *bad = TAKE_PTR(tok);
                                return SMI_PARSE_BAD_FORMAT;
                        }
                        if (!comma)
                                break;
                        p = comma + 1;
                }
        }
        if (!csv)
                return SMI_PARSE_NO_FORMAT;

        size_t cap = 8, n = 0;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers: the element is a pointer */
        _cleanup_free_ const smi_field_def_t **defs = calloc(cap, sizeof(*defs));
        if (!defs)
                return SMI_PARSE_NOMEM;
        const char *p = fields;
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t) (comma - p) : strlen(p);
                _cleanup_free_ char *tok = trimmed_dup(p, len);
                if (!tok)
                        return SMI_PARSE_NOMEM;
                /* A trailing comma ("name,") is tolerated like the real tool; an empty middle field is not. */
                if (!(*tok == '\0' && !comma && n > 0)) {
                        const smi_field_def_t *d = smi_field_lookup(tok);
                        if (!d) {
                                if (bad)
                                        *bad = TAKE_PTR(tok);
                                return SMI_PARSE_BAD_FIELD;
                        }
                        if (n == cap) {
                                /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers: the element is a pointer */
                                const smi_field_def_t **nd = realloc(defs, 2 * cap * sizeof(*defs));
                                if (!nd)
                                        return SMI_PARSE_NOMEM;
                                defs = nd;
                                cap *= 2;
                        }
                        defs[n++] = d;
                }
                if (!comma)
                        break;
                p = comma + 1;
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
        case SMI_STYLE_HEX2:
                r = asprintf(&s, "0x%02llX", v->num);
                break;
        case SMI_STYLE_HEX4:
                r = asprintf(&s, "0x%04llX", v->num);
                break;
        case SMI_STYLE_HEX8:
                r = asprintf(&s, "0x%08llX", v->num);
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

/* ---- default table; widths from table__nvidia-smi_l40s_with-process_580.126.09.txt ---- */

static const char table_rule[] =
        "+-----------------------------------------------------------------------------------------+\n";
static const char gpu_rule[] =
        "+-----------------------------------------+------------------------+----------------------+\n";
static const char mig_rule[] =
        "+------------------+----------------------------------+-----------+-----------------------+\n";

void smi_table_header(FILE *f, const char *timestamp, const char *driver_version, const char *cuda_version)
{
        /* The real first line pads the asctime-style date with 7 blanks. */
        fprintf(f, "%s       \n", timestamp);
        fputs(table_rule, f);
        fprintf(f, "| NVIDIA-SMI %-23sDriver Version: %-15sCUDA Version: %-9s|\n", driver_version, driver_version,
                cuda_version);
        fputs(gpu_rule, f);
        fputs("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
              "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
              "|                                         |                        |               MIG M. |\n"
              "|=========================================+========================+======================|\n",
              f);
}

/* @s shortened to @width characters with a trailing "..." when longer. */
static char *fit(const char *s, size_t width)
{
        if (!s)
                s = "";
        size_t len = strlen(s);
        if (len <= width)
                return strdup(s);
        char *r = malloc(width + 1);
        if (!r)
                return NULL;
        memcpy(r, s, width - 3);
        memcpy(r + width - 3, "...", 4);
        return r;
}

void smi_table_gpu(FILE *f, const smi_table_gpu_t *g)
{
        _cleanup_free_ char *name = fit(g->name, 29);
        fprintf(f, "|%4u  %-30s%3s  |%19s %3s |%21s |\n", g->index, name ? name : "", g->persistence, g->bus_id,
                g->disp_a, g->ecc);
        fprintf(f, "|%4s %5s %5s%16s / %5s |%11s / %9s |%8s%13s |\n", g->fan, g->temp, g->perf, g->pwr_usage,
                g->pwr_cap, g->mem_used, g->mem_total, g->gpu_util, g->compute_mode);
        fprintf(f, "|%41s|%24s|%21s |\n", "", "", g->mig_mode);
        fputs(gpu_rule, f);
}

/* Layout of the MIG table from table__nvidia-smi_h100-80gb-hbm3_mig-enabled_590.48.01.txt. */
void smi_table_mig(FILE *f, const smi_table_mig_t *m, size_t n)
{
        if (n == 0)
                return;
        fputs(table_rule, f);
        fputs("| MIG devices:                                                                            |\n", f);
        fputs(mig_rule, f);
        fputs("| GPU  GI  CI  MIG |              Shared Memory-Usage |        Vol|        Shared         |\n"
              "|      ID  ID  Dev |                Shared BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |\n"
              "|                  |                                  |        ECC|                       |\n"
              "|==================+==================================+===========+=======================|\n",
              f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "|%3u%5u%4u%4u  |%19s / %8s    |%3u%7s |%3u%4u%5u%5u%5u |\n", m[i].gpu, m[i].gi, m[i].ci,
                        m[i].dev, m[i].mem_used, m[i].mem_total, m[i].sm, m[i].ecc, m[i].ce, m[i].enc, m[i].dec,
                        m[i].ofa, m[i].jpg);
                fprintf(f, "|%18s|%19s / %8s    |%11s|%23s|\n", "", m[i].bar1_used, m[i].bar1_total, "", "");
                fputs(mig_rule, f);
        }
        fputs("\n", f);
}

void smi_table_processes(FILE *f, const smi_table_process_t *p, size_t n)
{
        fputs(table_rule, f);
        fputs("| Processes:                                                                              |\n"
              "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
              "|        ID   ID                                                               Usage      |\n"
              "|=========================================================================================|\n",
              f);
        if (n == 0)
                fputs("|  No running processes found                                                             |\n", f);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *name = fit(p[i].name, 36);
                fprintf(f, "|%5u%6s%5s%16u%7s   %-37s%9s |\n", p[i].gpu, p[i].gi, p[i].ci, p[i].pid, p[i].type,
                        name ? name : "", p[i].mem);
        }
        fputs(table_rule, f);
}

/* ---- -q / -q -x ---- */

char *smi_xml_escape(const char *s)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        for (const char *c = s ? s : ""; *c; c++) {
                switch (*c) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&apos;", f);
                        break;
                default:
                        fputc(*c, f);
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static void indent(smi_emit_t *e)
{
        for (int i = 0; i < e->depth; i++) {
                if (e->xml)
                        fputc('\t', e->f);
                else
                        fputs("    ", e->f);
        }
}

/* The label column of `-q` is 55 wide, then ": " (q__nvidia-smi-q_*.txt). */
#define SMI_Q_LABEL_WIDTH 55

void smi_emit_begin(smi_emit_t *e)
{
        e->depth = 0;
        if (e->xml) {
                /* Declaration and DOCTYPE exactly as xml__2x-rtx-a5000_590.44.01.xml. */
                fputs("<?xml version=\"1.0\" ?>\n"
                      "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v13.dtd\">\n"
                      "<nvidia_smi_log>\n",
                      e->f);
                e->depth = 1;
        } else {
                fputs("\n==============NVSMI LOG==============\n\n", e->f);
        }
}

void smi_emit_end(smi_emit_t *e)
{
        /* Each GPU block already ends with an empty line (smi_emit_blank()), as in the captures. */
        if (e->xml) {
                fputs("</nvidia_smi_log>\n", e->f);
                e->depth = 0;
        }
}

void smi_emit_open(smi_emit_t *e, const char *xml, const char *label, const char *attr_name, const char *attr_value)
{
        indent(e);
        if (e->xml) {
                if (attr_name && attr_value) {
                        _cleanup_free_ char *v = smi_xml_escape(attr_value);
                        fprintf(e->f, "<%s %s=\"%s\">\n", xml, attr_name, v ? v : "");
                } else {
                        fprintf(e->f, "<%s>\n", xml);
                }
        } else {
                if (attr_value)
                        fprintf(e->f, "%s %s\n", label, attr_value);
                else
                        fprintf(e->f, "%s\n", label);
        }
        e->depth++;
}

void smi_emit_close(smi_emit_t *e, const char *xml)
{
        e->depth--;
        if (e->xml) {
                indent(e);
                fprintf(e->f, "</%s>\n", xml);
        }
}

void smi_emit_leaf(smi_emit_t *e, const char *xml, const char *label, const char *fmt, ...)
{
        _cleanup_free_ char *value = NULL;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&value, fmt, ap) < 0)
                value = NULL;
        va_end(ap);
        indent(e);
        if (e->xml) {
                _cleanup_free_ char *v = smi_xml_escape(value ? value : "");
                fprintf(e->f, "<%s>%s</%s>\n", xml, v ? v : "", xml);
        } else {
                int used = e->depth * 4 + (int) strlen(label);
                fprintf(e->f, "%s%*s: %s\n", label, used < SMI_Q_LABEL_WIDTH ? SMI_Q_LABEL_WIDTH - used : 1, "",
                        value ? value : "");
        }
}

void smi_emit_text(smi_emit_t *e, const char *text, bool in_text)
{
        if (!e->xml && !in_text)
                return;
        indent(e);
        fprintf(e->f, "%s\n", text);
}

void smi_emit_blank(smi_emit_t *e)
{
        fputc('\n', e->f);
}

char *smi_mig_profile_name(const char *nvml_name, unsigned gi_slices, unsigned ci_slices,
                           unsigned long long memory_mib)
{
        const char *m = nvml_name ? strstr(nvml_name, " MIG ") : NULL;
        if (m && m[5])
                return strdup(m + 5);
        char *s = NULL;
        unsigned long long gb = (memory_mib + 1023) / 1024;
        int r;
        if (ci_slices && ci_slices < gi_slices)
                r = asprintf(&s, "%uc.%ug.%llugb", ci_slices, gi_slices, gb);
        else
                r = asprintf(&s, "%ug.%llugb", gi_slices, gb);
        return r < 0 ? NULL : s;
}
