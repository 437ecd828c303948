/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `-q` text and `-q -x` XML of our nvidia-smi from one set of calls
 * (smi.h): the emitter, and each GPU's element written from the table of
 * fields (smi-fields.c) with the two blocks that are not one value (MIG
 * devices, processes).  Layouts from q__* and xml__* in
 * shared/cases/nvidia-smi/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"

char *smi_xml_escape(const char *s)
{
        static const struct {
                char c;
                const char *entity;
        } entities[] = { { '&', "&amp;" }, { '<', "&lt;" }, { '>', "&gt;" }, { '"', "&quot;" }, { '\'', "&apos;" } };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        for (const char *c = s ? s : ""; *c; c++) {
                const char *entity = NULL;
                for (size_t k = 0; k < GV_ARRAY_SIZE(entities) && !entity; k++)
                        if (entities[k].c == *c)
                                entity = entities[k].entity;
                if (entity)
                        fputs(entity, f);
                else
                        fputc(*c, f);
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
                /* Declaration and DOCTYPE exactly as xml__2x-rtx-a5000_590.44.01.xml; the DTD version follows the
                 * driver branch (v11 in the 510/515 captures, v12 in the 535 ones, v13 from 580). */
                fprintf(e->f,
                        "<?xml version=\"1.0\" ?>\n"
                        "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v%u.dtd\">\n"
                        "<nvidia_smi_log>\n",
                        smi_dtd_version(e->branch));
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

/* ---- a GPU's element from the table of fields ---- */

/* Part @i of a slash-separated path ("pcie_gen" is part 1 of "pci_gpu_link_info/pcie_gen/max_link_gen") as a heap
 * string, or NULL when the path has fewer parts. */
static char *path_part(const char *path, size_t i)
{
        for (; i > 0 && path; i--) {
                path = strchr(path, '/');
                if (path)
                        path++;
        }
        if (!path)
                return NULL;
        const char *slash = strchr(path, '/');
        return slash ? strndup(path, (size_t) (slash - path)) : strdup(path);
}

/* The number of parts of a path. */
static size_t path_parts(const char *path)
{
        size_t n = 1;
        for (const char *c = path; *c; c++)
                n += *c == '/';
        return n;
}

/* The last part of a path ("total" of "fb_memory_usage/total"). */
static const char *path_leaf(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

/* One leaf from its row: the getter's value as -q / -q -x write it. */
static void emit_value(smi_emit_t *e, const smi_field_def_t *d, const smi_src_t *src, const char *xml,
                       const char *label)
{
        smi_value_t v;
        smi_field_read(d, src, &v);
        _cleanup_free_ char *text = smi_format_q(d, &v, e->xml);
        smi_emit_leaf(e, path_leaf(xml), path_leaf(label), "%s", text ? text : "N/A");
}

/* The sections open now, outermost first (at most SMI_PATH_MAX_DEPTH - 1). */
#define SMI_PATH_MAX_DEPTH 4
typedef struct {
        char *name[SMI_PATH_MAX_DEPTH];
        size_t n;
} open_sections_t;

/* Closes open sections down to @keep. */
static void close_sections(smi_emit_t *e, open_sections_t *o, size_t keep)
{
        while (o->n > keep) {
                o->n--;
                smi_emit_close(e, o->name[o->n]);
                free(TAKE_PTR(o->name[o->n]));
        }
}

/* Closes the sections a row's path @xml leaves and opens the ones it enters (labels from @label). */
static void enter_sections(smi_emit_t *e, open_sections_t *o, const char *xml, const char *label)
{
        size_t want = path_parts(xml) - 1;
        if (want >= SMI_PATH_MAX_DEPTH)
                want = SMI_PATH_MAX_DEPTH - 1;
        size_t same = 0;
        while (same < o->n && same < want) {
                _cleanup_free_ char *part = path_part(xml, same);
                if (!part || !o->name[same] || strcmp(part, o->name[same]) != 0)
                        break;
                same++;
        }
        close_sections(e, o, same);
        for (size_t k = same; k < want; k++) {
                char *section = path_part(xml, k);
                _cleanup_free_ char *text = path_part(label, k);
                smi_emit_open(e, section ? section : "", text ? text : (section ? section : ""), NULL, NULL);
                o->name[o->n++] = section;
        }
}

/*
 * A row whose section reads N/A as a whole (def->na_section) when its value is unavailable: writes the section as
 * one N/A leaf and returns the section's XML path (heap), under which the caller skips the other rows; else NULL.
 */
static char *emit_na_section(smi_emit_t *e, open_sections_t *o, const smi_field_def_t *d, const smi_src_t *src,
                             const char *xml, const char *label)
{
        if (!d->na_section || !strchr(xml, '/'))
                return NULL;
        smi_value_t v;
        smi_field_read(d, src, &v);
        if (v.ret == NVML_SUCCESS)
                return NULL;
        char *section = strndup(xml, (size_t) (strrchr(xml, '/') - xml));
        const char *slash = strrchr(label, '/');
        _cleanup_free_ char *section_label = slash ? strndup(label, (size_t) (slash - label)) : strdup(label);
        if (!section || !section_label) {
                free(section);
                return NULL;
        }
        enter_sections(e, o, section, section_label);
        smi_emit_leaf(e, path_leaf(section), path_leaf(section_label), "N/A");
        return section;
}

/* Whether @xml lies inside section path @section. */
static bool in_section(const char *xml, const char *section)
{
        size_t n = strlen(section);
        return strncmp(xml, section, n) == 0 && xml[n] == '/';
}

/* Whether -d lets row path @xml through (e->only: the top-level names asked for). */
static bool wanted(const smi_emit_t *e, const char *xml)
{
        if (!e->only)
                return true;
        size_t len = strcspn(xml, "/");
        for (const char *const *o = e->only; *o; o++)
                if (strlen(*o) == len && strncmp(*o, xml, len) == 0)
                        return true;
        return false;
}

void smi_emit_gpu(smi_emit_t *e, const smi_src_t *src)
{
        smi_value_t bus;
        smi_field_get(SMI_F_PCI_BUS_ID, src, &bus);
        smi_emit_open(e, "gpu", "GPU", "id", bus.text);
        size_t n;
        const smi_field_def_t *rows = smi_fields(&n);
        open_sections_t open = { 0 };
        unsigned key = smi_driver_key(src->driver_version);
        _cleanup_free_ char *na_section = NULL;
        for (size_t i = 0; i < n; i++) {
                const smi_field_def_t *d = &rows[i];
                if (!smi_row_shown(d, src))
                        continue;
                const char *xml = smi_row_xml(d, key), *label = smi_row_label(d, key);
                if (!wanted(e, xml))
                        continue;
                if (na_section && in_section(xml, na_section))
                        continue;
                free(na_section);
                na_section = emit_na_section(e, &open, d, src, xml, label);
                if (na_section)
                        continue;
                enter_sections(e, &open, xml, label);
                if (d->block)
                        d->block(e, src);
                else
                        emit_value(e, d, src, xml, label);
        }
        close_sections(e, &open, 0);
        smi_emit_close(e, "gpu");
        smi_emit_blank(e);
}

/* ---- the blocks ---- */

static unsigned long long mib(unsigned long long bytes)
{
        return bytes / (1024ULL * 1024ULL);
}

/* A number leaf, "N/A" when @r failed. */
static void leaf_uint(smi_emit_t *e, const char *xml, const char *label, nvmlReturn_t r, unsigned long long v)
{
        if (r != NVML_SUCCESS)
                smi_emit_leaf(e, xml, label, "N/A");
        else
                smi_emit_leaf(e, xml, label, "%llu", v);
}

/* One MIG device: ids, its shared engines and its memory. */
static void emit_mig_device(smi_emit_t *e, const smi_src_t *src, const smi_mig_t *m)
{
        smi_emit_open(e, "mig_device", "MIG Device", NULL, NULL);
        smi_emit_leaf(e, "index", "Index", "%u", m->dev);
        leaf_uint(e, "gpu_instance_id", "GPU Instance ID", m->gi_ret, m->gi);
        leaf_uint(e, "compute_instance_id", "Compute Instance ID", m->ci_ret, m->ci);
        smi_emit_open(e, "device_attributes", "Device Attributes", NULL, NULL);
        smi_emit_open(e, "shared", "Shared", NULL, NULL);
        const nvmlDeviceAttributes_t *a = &m->attr;
        nvmlReturn_t r = m->attr_ret;
        leaf_uint(e, "multiprocessor_count", "Multiprocessor count", r, a->multiprocessorCount);
        leaf_uint(e, "copy_engine_count", "Copy Engine count", r, a->sharedCopyEngineCount);
        leaf_uint(e, "encoder_count", "Encoder count", r, a->sharedEncoderCount);
        leaf_uint(e, "decoder_count", "Decoder count", r, a->sharedDecoderCount);
        leaf_uint(e, "ofa_count", "OFA count", r, a->sharedOfaCount);
        leaf_uint(e, "jpg_count", "JPG count", r, a->sharedJpegCount);
        smi_emit_close(e, "shared");
        smi_emit_close(e, "device_attributes");
        unsigned long long ecc = 0;
        smi_emit_open(e, "ecc_error_count", "ECC Errors", NULL, NULL);
        smi_emit_open(e, "volatile_count", "Volatile", NULL, NULL);
        leaf_uint(e, "sram_uncorrectable", "SRAM Uncorrectable",
                  NVX(src->nvml, nvmlDeviceGetMemoryErrorCounter, m->h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                      NVML_VOLATILE_ECC, SMI_NVML_MEMORY_LOCATION_SRAM, &ecc),
                  ecc);
        smi_emit_close(e, "volatile_count");
        smi_emit_close(e, "ecc_error_count");
        smi_emit_open(e, "fb_memory_usage", "Shared FB Memory Usage", NULL, NULL);
        static const char *const names[][2] = {
                { "total", "Total" }, { "reserved", "Reserved" }, { "used", "Used" }, { "free", "Free" }
        };
        const unsigned long long bytes[] = { m->mem.total, 0, m->mem.used, m->mem.free };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bytes); i++) {
                if (m->mem_ret != NVML_SUCCESS)
                        smi_emit_leaf(e, names[i][0], names[i][1], "N/A");
                else
                        smi_emit_leaf(e, names[i][0], names[i][1], "%llu MiB", mib(bytes[i]));
        }
        smi_emit_close(e, "fb_memory_usage");
        nvmlBAR1Memory_t bar1 = { 0 };
        nvmlReturn_t br = NVX(src->nvml, nvmlDeviceGetBAR1MemoryInfo, m->h, &bar1);
        smi_emit_open(e, "bar1_memory_usage", "Shared BAR1 Memory", NULL, NULL);
        const unsigned long long bar1_bytes[] = { bar1.bar1Total, bar1.bar1Used, bar1.bar1Free };
        static const char *const bar1_names[][2] = { { "total", "Total" }, { "used", "Used" }, { "free", "Free" } };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bar1_bytes); i++) {
                if (br != NVML_SUCCESS)
                        smi_emit_leaf(e, bar1_names[i][0], bar1_names[i][1], "N/A");
                else
                        smi_emit_leaf(e, bar1_names[i][0], bar1_names[i][1], "%llu MiB", mib(bar1_bytes[i]));
        }
        smi_emit_close(e, "bar1_memory_usage");
        smi_emit_close(e, "mig_device");
}

/* <mig_devices> (XML: "None" without any); in text the MIG Device sections sit at the GPU level. */
void smi_emit_mig_devices(smi_emit_t *e, const smi_src_t *src)
{
        if (e->xml)
                smi_emit_open(e, "mig_devices", "MIG Devices", NULL, NULL);
        if (src->n_migs == 0)
                smi_emit_text(e, "None", false);
        for (size_t i = 0; i < src->n_migs; i++)
                emit_mig_device(e, src, &src->migs[i]);
        if (e->xml)
                smi_emit_close(e, "mig_devices");
}

/* The processes; in text "Processes : None" when there are none (q__*). */
void smi_emit_processes(smi_emit_t *e, const smi_src_t *src)
{
        if (!e->xml && src->n_procs == 0) {
                smi_emit_leaf(e, "processes", "Processes", "None");
                return;
        }
        smi_emit_open(e, "processes", "Processes", NULL, NULL);
        for (unsigned i = 0; i < src->n_procs; i++) {
                const nvmlProcessInfo_t *pi = &src->procs[i];
                _cleanup_free_ char *pname = smi_process_name(src->nvml, pi->pid);
                smi_emit_open(e, "process_info", "Process ID", NULL, NULL);
                leaf_uint(e, "gpu_instance_id", "GPU instance ID",
                          pi->gpuInstanceId == 0xFFFFFFFFu ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS,
                          pi->gpuInstanceId);
                leaf_uint(e, "compute_instance_id", "Compute instance ID",
                          pi->computeInstanceId == 0xFFFFFFFFu ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS,
                          pi->computeInstanceId);
                smi_emit_leaf(e, "pid", "Process ID", "%u", pi->pid);
                smi_emit_leaf(e, "type", "Type", "C");
                smi_emit_leaf(e, "process_name", "Name", "%s", pname ? pname : "N/A");
                smi_emit_leaf(e, "used_memory", "Used GPU Memory", "%llu MiB", mib(pi->usedGpuMemory));
                smi_emit_close(e, "process_info");
        }
        smi_emit_close(e, "processes");
}

char *smi_process_name(const gv_nvml_t *nvml, unsigned pid)
{
        char name[256] = "";
        if (nvml && NVX(nvml, nvmlSystemGetProcessName, pid, name, sizeof(name)) == NVML_SUCCESS && name[0])
                return strdup(name);
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "/proc/%u/cmdline", pid) < 0)
                return NULL;
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return strdup("N/A");
        char *line = NULL;
        size_t cap = 0;
        ssize_t n = getdelim(&line, &cap, '\0', f);
        if (n <= 0 || !line[0]) {
                free(line);
                return strdup("N/A");
        }
        return line;
}
