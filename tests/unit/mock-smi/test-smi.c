/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of mock/smi's library (smi.h): the table of fields and the
 * -q / -q -x GPU element written from it (over a fake NVML), the
 * --query-gpu parser, CSV formatting (FR16: bracketed unavailable values)
 * and the default table layout, which is compared character by character
 * with the real captures in shared/cases/nvidia-smi/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"

/* Line @n (1-based, without newline) of a capture in $GV_SHARED_DIR/cases/nvidia-smi. */
static char *capture_line(const char *file, int n)
{
        const char *shared = getenv("GV_SHARED_DIR");
        _cleanup_free_ char *path = NULL;
        assert_true(asprintf(&path, "%s/cases/nvidia-smi/%s", shared ? shared : "../shared", file) > 0);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                fail_msg("cannot open %s", path);
        char *line = NULL;
        size_t cap = 0;
        for (int i = 0; i < n; i++)
                assert_true(getline(&line, &cap, f) > 0);
        line[strcspn(line, "\n")] = '\0';
        return line;
}

/* Output of the statements (writing to `f`) as one heap string in @buf. */
#define CAPTURE(buf, ...)                                              \
        do {                                                            \
                size_t len_ = 0;                                        \
                FILE *f = open_memstream(&(buf), &len_);                \
                assert_non_null(f);                                     \
                __VA_ARGS__;                                            \
                fclose(f);                                              \
        } while (0)

/* Line @n (0-based) of @text, heap. */
static char *nth_line(const char *text, int n)
{
        const char *p = text;
        for (int i = 0; i < n && p; i++) {
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        assert_non_null(p);
        return strndup(p, strcspn(p, "\n"));
}

static void test_parse_fields_and_aliases(void **state)
{
        (void) state;
        smi_query_t q = { 0 };
        assert_int_equal(smi_query_parse("index, name,clocks.gr,gpu_uuid", "csv,noheader", &q, NULL), SMI_PARSE_OK);
        assert_int_equal(q.n, 4);
        assert_string_equal(q.fields[2]->name, "clocks.current.graphics");
        assert_string_equal(q.fields[3]->name, "uuid");
        assert_false(q.header);
        assert_true(q.units);
        smi_query_free(&q);
}

static void test_parse_errors(void **state)
{
        (void) state;
        smi_query_t q = { 0 };
        char *bad = NULL;
        assert_int_equal(smi_query_parse("name,bogus.field", "csv", &q, &bad), SMI_PARSE_BAD_FIELD);
        assert_string_equal(bad, "bogus.field");
        free(bad);
        bad = NULL;
        assert_int_equal(smi_query_parse("name", "csv,xml", &q, &bad), SMI_PARSE_BAD_FORMAT);
        assert_string_equal(bad, "xml");
        free(bad);
        assert_int_equal(smi_query_parse("name", NULL, &q, NULL), SMI_PARSE_NO_FORMAT);
        assert_int_equal(smi_query_parse("", "csv", &q, NULL), SMI_PARSE_BAD_FIELD);
        assert_int_equal(smi_query_parse("name,,uuid", "csv", &q, NULL), SMI_PARSE_BAD_FIELD);
        assert_null(q.fields);
}

static void test_header_units(void **state)
{
        (void) state;
        smi_query_t q = { 0 };
        assert_int_equal(smi_query_parse("memory.total,utilization.gpu,power.draw,temperature.gpu,clocks.mem",
                                         "csv", &q, NULL),
                         SMI_PARSE_OK);
        _cleanup_free_ char *h = smi_csv_header(&q);
        assert_string_equal(h, "memory.total [MiB], utilization.gpu [%], power.draw [W], temperature.gpu, "
                               "clocks.current.memory [MHz]");
        smi_query_free(&q);
        assert_int_equal(smi_query_parse("memory.total", "csv,nounits", &q, NULL), SMI_PARSE_OK);
        _cleanup_free_ char *h2 = smi_csv_header(&q);
        assert_string_equal(h2, "memory.total");
        smi_query_free(&q);
}

static void test_values_like_real_csv(void **state)
{
        (void) state;
        smi_query_t q = { 0 };
        assert_int_equal(smi_query_parse("memory.total,utilization.gpu,power.draw,pci.sub_device_id,pci.domain,"
                                         "compute_cap,mig.mode.current,pstate,compute_mode",
                                         "csv", &q, NULL),
                         SMI_PARSE_OK);
        smi_value_t v[9] = {
                { .num = 40960 }, { .num = 95 },          { .num = 72000 }, { .num = 0x185110DE }, { .num = 0 },
                { .num = 8, .num2 = 9 }, { .num = 0 }, { .num = 0 },     { .num = 0 },
        };
        _cleanup_free_ char *row = smi_csv_row(&q, v);
        assert_string_equal(row, "40960 MiB, 95 %, 72.00 W, 0x185110DE, 0x0000, 8.9, Disabled, P0, Default");
        q.units = false;
        _cleanup_free_ char *row2 = smi_csv_row(&q, v);
        assert_string_equal(row2, "40960, 95, 72.00, 0x185110DE, 0x0000, 8.9, Disabled, P0, Default");
        smi_query_free(&q);
}

/* FR16: only the failing fields are bracketed; the others keep their values. */
static void test_fr16_unavailable_only_where_not_supported(void **state)
{
        (void) state;
        smi_query_t q = { 0 };
        assert_int_equal(smi_query_parse("name,fan.speed,temperature.gpu,power.draw", "csv,noheader", &q, NULL),
                         SMI_PARSE_OK);
        smi_value_t v[4] = {
                { .str = "NVIDIA L40S" },
                { .ret = NVML_ERROR_NOT_SUPPORTED },
                { .num = 54 },
                { .ret = NVML_ERROR_UNKNOWN },
        };
        _cleanup_free_ char *row = smi_csv_row(&q, v);
        assert_string_equal(row, "NVIDIA L40S, [N/A], 54, [Unknown Error]");
        smi_query_free(&q);
        assert_string_equal(smi_unavailable_text(NVML_ERROR_DEPRECATED),
                            "[Requested functionality has been deprecated]");
        assert_true(smi_is_unavailable_cell(" [N/A] "));
        assert_true(smi_is_unavailable_cell("[Not Supported]"));
        assert_true(smi_is_unavailable_cell("[Unknown Error]"));
        assert_false(smi_is_unavailable_cell("54"));
        assert_false(smi_is_unavailable_cell("N/A [x"));
}

/* The GPU rows of table__nvidia-smi_l40s_with-process_580.126.09.txt, byte for byte. */
static void test_table_gpu_rows_match_l40s_capture(void **state)
{
        (void) state;
        smi_table_gpu_t g = {
                .index = 0, .name = "NVIDIA L40S", .persistence = "On", .bus_id = "00000000:8D:00.0",
                .disp_a = "Off", .ecc = "0", .fan = "N/A", .temp = "39C", .perf = "P0", .pwr_usage = "104W",
                .pwr_cap = "325W", .mem_used = "803MiB", .mem_total = "46068MiB", .gpu_util = "0%",
                .compute_mode = "Default", .mig_mode = "N/A",
        };
        _cleanup_free_ char *out = NULL;
        CAPTURE(out, smi_table_gpu(f, &g));
        for (int i = 0; i < 4; i++) {
                _cleanup_free_ char *want = capture_line("table__nvidia-smi_l40s_with-process_580.126.09.txt", 9 + i);
                _cleanup_free_ char *got = nth_line(out, i);
                assert_string_equal(got, want);
        }
        /* Header lines 2..8 (line 1 is the timestamp; the version box uses the capture's versions). */
        _cleanup_free_ char *hdr = NULL;
        CAPTURE(hdr, smi_table_header(f, "Sun May 24 14:08:41 2026", "580.126.09", "13.0"));
        for (int i = 0; i < 8; i++) {
                _cleanup_free_ char *want = capture_line("table__nvidia-smi_l40s_with-process_580.126.09.txt", 1 + i);
                _cleanup_free_ char *got = nth_line(hdr, i);
                assert_string_equal(got, want);
        }
}

static void test_table_processes_match_capture(void **state)
{
        (void) state;
        smi_table_process_t p = { .gpu = 0, .gi = "N/A", .ci = "N/A", .pid = 5997, .type = "C", .name = "python",
                                  .mem = "794MiB" };
        _cleanup_free_ char *out = NULL;
        CAPTURE(out, smi_table_processes(f, &p, 1));
        for (int i = 0; i < 7; i++) {
                _cleanup_free_ char *want = capture_line("table__nvidia-smi_l40s_with-process_580.126.09.txt", 14 + i);
                _cleanup_free_ char *got = nth_line(out, i);
                assert_string_equal(got, want);
        }
        _cleanup_free_ char *none = NULL;
        CAPTURE(none, smi_table_processes(f, NULL, 0));
        _cleanup_free_ char *want = capture_line("table__nvidia-smi_4x-gh200-120gb_590.48.01.txt", 31);
        _cleanup_free_ char *got = nth_line(none, 5);
        assert_string_equal(got, want);
}

/* The MIG table of table__nvidia-smi_h100-80gb-hbm3_mig-enabled_590.48.01.txt. */
static void test_table_mig_matches_h100_capture(void **state)
{
        (void) state;
        smi_table_mig_t m[2] = {
                { .gpu = 0, .gi = 2, .ci = 0, .dev = 0, .mem_used = "26MiB", .mem_total = "40448MiB",
                  .bar1_used = "0MiB", .bar1_total = "24739MiB", .sm = 60, .ecc = "0", .ce = 3, .enc = 0, .dec = 3,
                  .ofa = 0, .jpg = 3 },
                { .gpu = 0, .gi = 3, .ci = 0, .dev = 1, .mem_used = "17MiB", .mem_total = "20096MiB",
                  .bar1_used = "0MiB", .bar1_total = "12369MiB", .sm = 32, .ecc = "0", .ce = 2, .enc = 0, .dec = 2,
                  .ofa = 0, .jpg = 2 },
        };
        _cleanup_free_ char *out = NULL;
        CAPTURE(out, smi_table_mig(f, m, 2));
        for (int i = 0; i < 13; i++) {
                _cleanup_free_ char *want =
                        capture_line("table__nvidia-smi_h100-80gb-hbm3_mig-enabled_590.48.01.txt", 14 + i);
                _cleanup_free_ char *got = nth_line(out, i);
                assert_string_equal(got, want);
        }
}

static void test_long_name_is_truncated(void **state)
{
        (void) state;
        smi_table_gpu_t g = {
                .name = "NVIDIA A Very Long Product Name That Does Not Fit", .persistence = "Off",
                .bus_id = "00000000:07:00.0", .disp_a = "Off", .ecc = "0", .fan = "N/A", .temp = "30C",
                .perf = "P0", .pwr_usage = "1W", .pwr_cap = "2W", .mem_used = "0MiB", .mem_total = "1MiB",
                .gpu_util = "0%", .compute_mode = "Default", .mig_mode = "Disabled",
        };
        _cleanup_free_ char *out = NULL;
        CAPTURE(out, smi_table_gpu(f, &g));
        _cleanup_free_ char *l = nth_line(out, 0);
        assert_int_equal(strlen(l), 91);
        assert_non_null(strstr(l, "..."));
}

static void test_xml_escape_and_emit(void **state)
{
        (void) state;
        _cleanup_free_ char *e = smi_xml_escape("a<b>&\"'");
        assert_string_equal(e, "a&lt;b&gt;&amp;&quot;&apos;");
        _cleanup_free_ char *x = NULL;
        CAPTURE(x, {
                smi_emit_t em = { .f = f, .xml = true };
                smi_emit_begin(&em);
                smi_emit_open(&em, "gpu", "GPU", "id", "00000000:07:00.0");
                smi_emit_leaf(&em, "product_name", "Product Name", "%s", "X & Y");
                smi_emit_close(&em, "gpu");
                smi_emit_blank(&em);
                smi_emit_end(&em);
        });
        assert_string_equal(x, "<?xml version=\"1.0\" ?>\n"
                               "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v13.dtd\">\n"
                               "<nvidia_smi_log>\n"
                               "\t<gpu id=\"00000000:07:00.0\">\n"
                               "\t\t<product_name>X &amp; Y</product_name>\n"
                               "\t</gpu>\n\n"
                               "</nvidia_smi_log>\n");
        _cleanup_free_ char *t = NULL;
        CAPTURE(t, {
                smi_emit_t em = { .f = f, .xml = false, .depth = 1 };
                smi_emit_leaf(&em, "product_name", "Product Name", "%s", "NVIDIA H100 80GB HBM3");
        });
        _cleanup_free_ char *want = capture_line("q__nvidia-smi-q_h100-80gb-hbm3_mig-enabled_590.48.01.txt", 10);
        assert_string_equal(t, "    Product Name                                       : NVIDIA H100 80GB HBM3\n");
        assert_true(strncmp(t, want, strlen(want)) == 0);
}

static void test_mig_profile_name(void **state)
{
        (void) state;
        _cleanup_free_ char *a = smi_mig_profile_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb", 1, 1, 4864);
        assert_string_equal(a, "1g.5gb");
        _cleanup_free_ char *b = smi_mig_profile_name("NVIDIA H200", 3, 1, 71 * 1024 - 100);
        assert_string_equal(b, "1c.3g.71gb");
        _cleanup_free_ char *c = smi_mig_profile_name(NULL, 2, 2, 9856);
        assert_string_equal(c, "2g.10gb");
}

/* Segments of a path ("a/b" -> 2). */
static int path_depth(const char *p)
{
        int n = 1;
        for (; *p; p++)
                n += *p == '/';
        return n;
}

/*
 * The table of fields is the one source of CSV, -q and -q -x: every id has
 * one row, every name one row, each -q row a label of the XML path's shape,
 * each section one run of rows (else the document would hold the section
 * twice), and each row either a getter or a block.
 */
static void test_table_of_fields_is_consistent(void **state)
{
        (void) state;
        size_t n;
        const smi_field_def_t *rows = smi_fields(&n);
        assert_int_equal(n, SMI_F__MAX);
        for (int id = 0; id < SMI_F__MAX; id++) {
                const smi_field_def_t *d = smi_field_by_id((smi_field_id_t) id);
                assert_non_null(d);
                assert_int_equal(d->id, id);
        }
        for (size_t i = 0; i < n; i++) {
                const smi_field_def_t *d = &rows[i];
                assert_true((d->get != NULL) != (d->block != NULL));
                assert_true(d->name || d->xml); /* a row shows somewhere */
                if (d->name) {
                        assert_ptr_equal(smi_field_lookup(d->name), d);
                        for (size_t a = 0; a < GV_ARRAY_SIZE(d->aliases) && d->aliases[a]; a++)
                                assert_ptr_equal(smi_field_lookup(d->aliases[a]), d);
                }
                if (!d->xml) {
                        assert_null(d->label);
                        continue;
                }
                assert_non_null(d->label);
                assert_true(path_depth(d->xml) <= 4);
                assert_int_equal(path_depth(d->xml), path_depth(d->label));
                if (i == 0)
                        continue;
                /* Each section of row i (every prefix up to a slash): no earlier row outside the run just before it
                 * has it. */
                for (const char *slash = strchr(d->xml, '/'); slash; slash = strchr(slash + 1, '/')) {
                        size_t len = (size_t) (slash - d->xml) + 1;
                        bool in_run = true;
                        for (size_t j = i; j-- > 0;) {
                                if (!rows[j].xml)
                                        continue;
                                bool same = strncmp(rows[j].xml, d->xml, len) == 0;
                                if (!same)
                                        in_run = false;
                                else if (!in_run)
                                        fail_msg("section of %s appears in two runs", d->xml);
                        }
                }
        }
        assert_null(smi_field_lookup("product_brand")); /* -q only rows have no --query-gpu name */
}

/* -q value text: N/A when unavailable, XML hex without 0x, the temperature in C (q__*, xml__*). */
static void test_q_values(void **state)
{
        (void) state;
        const smi_field_def_t *bus = smi_field_by_id(SMI_F_PCI_BUS);
        const smi_field_def_t *temp = smi_field_by_id(SMI_F_TEMPERATURE_GPU);
        const smi_field_def_t *mem = smi_field_by_id(SMI_F_MEMORY_TOTAL);
        smi_value_t v = { .num = 0x8D };
        _cleanup_free_ char *x = smi_format_q(bus, &v, true);
        _cleanup_free_ char *t = smi_format_q(bus, &v, false);
        assert_string_equal(x, "8D");
        assert_string_equal(t, "0x8D");
        smi_value_t c = { .num = 39 };
        _cleanup_free_ char *ct = smi_format_q(temp, &c, false);
        _cleanup_free_ char *cv = smi_format_value(temp, &c, true);
        assert_string_equal(ct, "39 C");
        assert_string_equal(cv, "39"); /* the CSV has no unit for temperature.gpu */
        smi_value_t m = { .num = 40960 };
        _cleanup_free_ char *mt = smi_format_q(mem, &m, true);
        assert_string_equal(mt, "40960 MiB");
        smi_value_t na = { .ret = NVML_ERROR_NOT_SUPPORTED };
        _cleanup_free_ char *nt = smi_format_q(mem, &na, false);
        assert_string_equal(nt, "N/A");
}

/* ---- a fake NVML: a few entry points answer, the others are missing (FUNCTION_NOT_FOUND) ---- */

static nvmlReturn_t fake_name(nvmlDevice_t d, char *name, unsigned int length)
{
        (void) d;
        snprintf(name, length, "%s", "Fake <GPU>");
        return NVML_SUCCESS;
}

static nvmlReturn_t fake_pci(nvmlDevice_t d, nvmlPciInfo_t *p)
{
        (void) d;
        memset(p, 0, sizeof(*p));
        p->bus = 0x07;
        p->pciDeviceId = 0x20B010DE;
        snprintf(p->busId, sizeof(p->busId), "%s", "00000000:07:00.0");
        return NVML_SUCCESS;
}

static nvmlReturn_t fake_temp(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *t)
{
        (void) d;
        (void) s;
        *t = 39;
        return NVML_SUCCESS;
}

static nvmlReturn_t fake_memory(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
        (void) d;
        m->total = 40960ULL << 20;
        m->reserved = 512ULL << 20;
        m->used = 1ULL << 20;
        m->free = m->total - m->reserved - m->used;
        return NVML_SUCCESS;
}

static nvmlReturn_t fake_fan(nvmlDevice_t d, unsigned int *speed)
{
        (void) d;
        (void) speed;
        return NVML_ERROR_NOT_SUPPORTED;
}

/* The GPU element of one set of fake answers on driver @version, as -q -x (@xml) or -q; heap string. */
static char *emit_fake_gpu_on(bool xml, const char *version)
{
        gv_nvml_t n = { 0 };
        n.nvmlDeviceGetName = fake_name;
        n.nvmlDeviceGetPciInfo_v3 = fake_pci;
        n.nvmlDeviceGetTemperature = fake_temp;
        n.nvmlDeviceGetMemoryInfo_v2 = fake_memory;
        n.nvmlDeviceGetFanSpeed = fake_fan;
        static int gpu;
        smi_src_t src = { .nvml = &n, .dev = (nvmlDevice_t) &gpu, .driver_version = version, .timestamp = "" };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        smi_emit_t e = { .f = f, .xml = xml, .depth = 1 };
        smi_emit_gpu(&e, &src);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static char *emit_fake_gpu(bool xml)
{
        return emit_fake_gpu_on(xml, "580.1");
}

/* The driver branch picks the element names (names of the xml__* captures of each branch). */
static void test_rows_gated_by_driver_branch(void **state)
{
        (void) state;
        _cleanup_free_ char *old = emit_fake_gpu_on(true, "510.47.03");
        _cleanup_free_ char *mid = emit_fake_gpu_on(true, "535.54.03");
        _cleanup_free_ char *now = emit_fake_gpu_on(true, "580.105.08");
        /* Before 535: clocks_throttle_reasons and power_readings, no 535/580 rows. */
        assert_non_null(strstr(old, "\n\t\t<clocks_throttle_reasons>\n\t\t\t<clocks_throttle_reason_gpu_idle>"));
        assert_non_null(strstr(old, "\n\t\t<power_readings>\n\t\t\t<power_state>"));
        assert_non_null(strstr(old, "\t\t\t<power_management>N/A</power_management>\n"));
        assert_non_null(strstr(old, "\n\t\t<gpu_module_id>N/A</gpu_module_id>\n"));
        assert_non_null(strstr(old, "\n\t\t<voltage>\n"));
        assert_null(strstr(old, "clocks_event_reasons"));
        assert_null(strstr(old, "gpu_power_readings"));
        assert_null(strstr(old, "module_power_readings"));
        assert_null(strstr(old, "gpu_temp_tlimit"));
        assert_null(strstr(old, "addressing_mode"));
        /* 535: the renamed sections, module power with power_draw, reset status; none of the 580 rows. */
        assert_non_null(strstr(mid, "\n\t\t<clocks_event_reasons>\n"));
        assert_non_null(strstr(mid, "\n\t\t<gpu_power_readings>\n\t\t\t<power_state>"));
        assert_non_null(strstr(mid, "\t\t\t<power_draw>"));
        assert_non_null(strstr(mid, "\n\t\t<module_power_readings>\n"));
        assert_non_null(strstr(mid, "\n\t\t<gpu_reset_status>\n"));
        assert_non_null(strstr(mid, "\t\t\t<gpu_temp_tlimit>"));
        assert_null(strstr(mid, "clocks_throttle_reasons"));
        assert_null(strstr(mid, "<power_readings>"));
        assert_null(strstr(mid, "power_management"));
        static const char *const only580[] = { "dram_encryption_mode", "power_smoothing", "power_profiles",
                                               "<health>", "vgpu_heterogeneous_mode", "platformInfo",
                                               "average_power_draw", "capabilities", "c2c_mode" };
        for (size_t i = 0; i < sizeof(only580) / sizeof(only580[0]); i++) {
                assert_null(strstr(mid, only580[i]));
                assert_null(strstr(old, only580[i]));
                assert_non_null(strstr(now, only580[i]));
        }
        /* CliqueId from 550 (tests/e2e/test_fabric.py reads it on the 550 profiles) */
        _cleanup_free_ char *b550 = emit_fake_gpu_on(true, "550.163.01");
        assert_non_null(strstr(b550, "\t\t\t<cliqueId>"));
        assert_null(strstr(mid, "cliqueId"));
        assert_null(strstr(b550, "<health>"));
        /* 580: module id inside platformInfo, no voltage, no reset status, no plain power_draw. */
        assert_non_null(strstr(now, "\t\t\t<module_id>N/A</module_id>\n"));
        assert_null(strstr(now, "gpu_module_id"));
        assert_null(strstr(now, "<voltage>"));
        assert_null(strstr(now, "gpu_reset_status"));
        assert_null(strstr(now, "<power_draw>"));
}

/* The DTD version follows the branch: v11 in the 510/515 captures, v12 in the 535 ones, v13 from 580. */
static void test_dtd_version_by_branch(void **state)
{
        (void) state;
        assert_int_equal(smi_driver_branch("535.54.03"), 535);
        assert_int_equal(smi_driver_branch("N/A"), 0);
        assert_int_equal(smi_driver_branch(NULL), 0);
        assert_int_equal(smi_driver_key("580.173.02"), 580173);
        assert_int_equal(smi_driver_key("595.80"), 595080);
        assert_int_equal(smi_driver_key("570"), 570000);
        assert_int_equal(smi_driver_key("N/A"), 0);
        assert_int_equal(smi_driver_key("535.123456.1"), 535999);
        assert_int_equal(smi_dtd_version(510), 11);
        assert_int_equal(smi_dtd_version(515), 11);
        assert_int_equal(smi_dtd_version(535), 12);
        assert_int_equal(smi_dtd_version(550), 12);
        assert_int_equal(smi_dtd_version(580), 13);
        assert_int_equal(smi_dtd_version(595), 13);
        assert_int_equal(smi_dtd_version(0), 13);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        smi_emit_t e = { .f = f, .xml = true, .branch = 515 };
        smi_emit_begin(&e);
        assert_int_equal(fclose(f), 0);
        assert_non_null(strstr(buf, "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v11.dtd\">\n"));
        free(buf);
}

/* -q -x from the table: each row's path, value and N/A; sections opened and closed once. */
static void test_gpu_element_from_table_xml(void **state)
{
        (void) state;
        _cleanup_free_ char *x = emit_fake_gpu(true);
        assert_non_null(strstr(x, "\t<gpu id=\"00000000:07:00.0\">\n\t\t<product_name>Fake &lt;GPU&gt;</product_name>\n"
                                  "\t\t<product_brand>N/A</product_brand>\n"));
        assert_non_null(strstr(x, "\n\t\t<pci>\n\t\t\t<pci_bus>07</pci_bus>\n\t\t\t<pci_device>00</pci_device>\n"
                                  "\t\t\t<pci_domain>0000</pci_domain>\n\t\t\t<pci_base_class>N/A</pci_base_class>\n"
                                  "\t\t\t<pci_sub_class>N/A</pci_sub_class>\n\t\t\t<pci_device_id>20B010DE</pci_device_id>\n"
                                  "\t\t\t<pci_bus_id>00000000:07:00.0</pci_bus_id>\n"));
        assert_non_null(strstr(x, "\n\t\t<fan_speed>N/A</fan_speed>\n"));
        assert_non_null(strstr(x, "\n\t\t<fb_memory_usage>\n\t\t\t<total>40960 MiB</total>\n"
                                  "\t\t\t<reserved>512 MiB</reserved>\n\t\t\t<used>1 MiB</used>\n"
                                  "\t\t\t<free>40447 MiB</free>\n\t\t</fb_memory_usage>\n"));
        assert_non_null(strstr(x, "\n\t\t<temperature>\n\t\t\t<gpu_temp>39 C</gpu_temp>\n"
                                  "\t\t\t<gpu_temp_tlimit>N/A</gpu_temp_tlimit>\n"
                                  "\t\t\t<gpu_temp_max_threshold>N/A</gpu_temp_max_threshold>\n"));
        /* Nested sections open and close once around their run of rows. */
        assert_non_null(strstr(x, "\n\t\t\t<pci_gpu_link_info>\n\t\t\t\t<pcie_gen>\n"
                                  "\t\t\t\t\t<max_link_gen>N/A</max_link_gen>\n"
                                  "\t\t\t\t\t<current_link_gen>N/A</current_link_gen>\n"
                                  "\t\t\t\t\t<device_current_link_gen>N/A</device_current_link_gen>\n"
                                  "\t\t\t\t\t<max_device_link_gen>N/A</max_device_link_gen>\n"
                                  "\t\t\t\t\t<max_host_link_gen>N/A</max_host_link_gen>\n\t\t\t\t</pcie_gen>\n"
                                  "\t\t\t\t<link_widths>\n"));
        assert_non_null(strstr(x, "\t\t\t\t</link_widths>\n\t\t\t</pci_gpu_link_info>\n\t\t\t<pci_bridge_chip>\n"));
        assert_non_null(strstr(x, "\n\t\t<mig_devices>\n\t\t\tNone\n\t\t</mig_devices>\n"));
        assert_non_null(strstr(x, "\t\t\t<state>N/A</state>\n"));
        assert_non_null(strstr(x, "\n\t\t<supported_clocks>\n\t\t\tN/A\n\t\t</supported_clocks>\n\t\t<processes>\n"
                                  "\t\t</processes>\n\t\t<accounted_processes>\n\t\t</accounted_processes>\n"
                                  "\t\t<capabilities>\n\t\t\t<egm>N/A</egm>\n\t\t</capabilities>\n\t</gpu>\n\n"));
        assert_null(strstr(x, "<power_draw>")); /* CSV-only rows stay out */
        /* Without remapped rows the section is one N/A leaf, as in xml__tesla-t4_515.105.01 */
        assert_non_null(strstr(x, "\n\t\t<remapped_rows>N/A</remapped_rows>\n\t\t<temperature>\n"));
        assert_null(strstr(x, "remapped_row_"));
        const char *first = strstr(x, "<pci>");
        assert_null(strstr(first + 1, "<pci>"));
}

/* -q text from the same rows: labels padded to column 55, sections as label lines. */
static void test_gpu_element_from_table_text(void **state)
{
        (void) state;
        _cleanup_free_ char *t = emit_fake_gpu(false);
        assert_non_null(strstr(t, "    GPU 00000000:07:00.0\n"
                                  "        Product Name                                   : Fake <GPU>\n"));
        assert_non_null(strstr(t, "        PCI\n            Bus                                        : 0x07\n"));
        assert_non_null(strstr(t, "        PCI\n"));
        assert_non_null(strstr(t, "            GPU Link Info\n                PCIe Generation\n"
                                  "                    Max                                : N/A\n"));
        assert_non_null(strstr(t, "        Temperature\n"
                                  "            GPU Current Temp                           : 39 C\n"));
        /* 580+: the Capabilities section follows the processes (q__nvidia-smi-q_h100-80gb-hbm3_mig-enabled_590.48.01) */
        assert_non_null(strstr(t, "        Processes                                      : None\n"
                                  "        Capabilities\n            EGM                                        : N/A\n\n"));
        assert_null(strstr(t, "MIG Devices")); /* text mode writes the MIG devices at the GPU level */
        assert_non_null(strstr(t, "\n        Remapped Rows                                  : N/A\n        Temperature\n"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_fields_and_aliases),
                cmocka_unit_test(test_parse_errors),
                cmocka_unit_test(test_header_units),
                cmocka_unit_test(test_values_like_real_csv),
                cmocka_unit_test(test_fr16_unavailable_only_where_not_supported),
                cmocka_unit_test(test_table_gpu_rows_match_l40s_capture),
                cmocka_unit_test(test_table_processes_match_capture),
                cmocka_unit_test(test_table_mig_matches_h100_capture),
                cmocka_unit_test(test_long_name_is_truncated),
                cmocka_unit_test(test_xml_escape_and_emit),
                cmocka_unit_test(test_mig_profile_name),
                cmocka_unit_test(test_rows_gated_by_driver_branch),
                cmocka_unit_test(test_dtd_version_by_branch),
                cmocka_unit_test(test_table_of_fields_is_consistent),
                cmocka_unit_test(test_q_values),
                cmocka_unit_test(test_gpu_element_from_table_xml),
                cmocka_unit_test(test_gpu_element_from_table_text),
        };
        return cmocka_run_group_tests_name("smi", tests, NULL, NULL);
}
