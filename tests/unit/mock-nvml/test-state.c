/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime state of `mock set` (mock/nvml/mock-state.h): settings, the
 * state file's parser and writer, and errors that name key, value and line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "mock/nvml/mock-state.h"

static gv_mock_state_t *parse_ok(const char *text)
{
        gv_mock_state_t *s = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_mock_state_parse("t.state", text, strlen(text), &s, &err) < 0)
                fail_msg("%s", err->msg);
        return s;
}

/* Parsing @text fails with a message that holds @needle. */
static void parse_fails(const char *text, size_t len, const char *needle)
{
        gv_mock_state_t *s = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_true(gv_mock_state_parse("t.state", text, len, &s, &err) < 0);
        assert_null(s);
        assert_non_null(err);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        if (!strstr(err->msg, needle))
                fail_msg("\"%s\" does not hold \"%s\"", err->msg, needle);
}

static void test_values_and_faults_parse(void **state)
{
        (void) state;
        _cleanup_free_ gv_mock_state_t *s = parse_ok("# comment\n"
                                                     "\n"
                                                     "1 temperature_c=85\n"
                                                     "  1\tutilization_gpu=70\n"
                                                     "1 power_usage_w=250\n"
                                                     "2 clock_event_reasons=0x68\n"
                                                     "2 ecc_corrected=10\n"
                                                     "2 remapped_rows=1\n"
                                                     "2 lost=true\n"
                                                     "3 nvlink=down\n"
                                                     "63 process=4242:1024:python train.py\n"
                                                     "63 process=7:0");
        const gv_mock_gpu_state_t *g1 = &s->gpus[1], *g2 = &s->gpus[2], *g3 = &s->gpus[3], *g63 = &s->gpus[63];
        assert_int_equal(g1->set, GV_MOCK_SET_TEMPERATURE | GV_MOCK_SET_UTIL_GPU | GV_MOCK_SET_POWER_USAGE);
        assert_int_equal(g1->temperature_c, 85);
        assert_int_equal(g1->utilization_gpu, 70);
        assert_int_equal(g1->power_usage_mw, 250000);
        assert_int_equal(g2->clock_event_reasons, 0x68);
        assert_int_equal(g2->ecc_corrected, 10);
        assert_int_equal(g2->remapped_rows, 1);
        assert_true(g2->lost);
        assert_true(g3->nvlink_down);
        assert_int_equal(g63->n_processes, 2);
        assert_int_equal(g63->processes[0].pid, 4242);
        assert_int_equal(g63->processes[0].used_memory_mib, 1024);
        assert_string_equal(g63->processes[0].name, "python train.py");
        assert_string_equal(g63->processes[1].name, "");
        assert_true(gv_mock_gpu_state_empty(&s->gpus[0]));
}

static void test_write_reads_back(void **state)
{
        (void) state;
        _cleanup_free_ gv_mock_state_t *s = parse_ok("1 power_usage_w=250\n2 processes=clear\n2 process=1:2:x\n"
                                                     "5 lost=false\n5 nvlink=up\n6 clock_event_reasons=12\n");
        _cleanup_free_ char *text = NULL, *again = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_state_write(s, &text, &err), 0);
        assert_non_null(strstr(text, "1 power_usage_mw=250000\n"));
        assert_non_null(strstr(text, "2 processes=clear\n2 process=1:2:x\n"));
        assert_non_null(strstr(text, "6 clock_event_reasons=0xc\n"));
        _cleanup_free_ gv_mock_state_t *q = parse_ok(text);
        assert_memory_equal(s, q, sizeof(*s));
        assert_int_equal(gv_mock_state_write(q, &again, &err), 0);
        assert_string_equal(text, again);
}

static void test_errors_name_line_key_and_value(void **state)
{
        (void) state;
        parse_fails("1 temperature_c=50\n1 temperature_c=abc\n", 38,
                    "t.state:2: temperature_c=abc: expected a whole number 0..200");
        parse_fails("1 temperature_c=201\n", 20, "temperature_c=201: expected a whole number 0..200");
        parse_fails("1 utilization_gpu=-1\n", 21, "utilization_gpu=-1");
        parse_fails("1 temperature_c=99999999999999999999999\n", 40, "temperature_c=99999999999999999999999");
        parse_fails("64 temperature_c=1\n", 19, "t.state:1: GPU 64: expected an index 0..63");
        parse_fails("1 colour=blue\n", 14, "colour=blue: unknown key");
        parse_fails("1\n", 2, "t.state:1: expected \"<gpu> <key>=<value>\"");
        parse_fails("1 =5\n", 5, "expected \"<gpu> <key>=<value>\"");
        parse_fails("1 nvlink=sideways\n", 18, "nvlink=sideways: expected up or down");
        parse_fails("1 lost=yes\n", 11, "lost=yes: expected true or false");
        parse_fails("1 processes=some\n", 17, "processes=some: expected clear");
        parse_fails("1 process=0:10\n", 15, "process=0:10: expected PID:MIB[:NAME]");
        parse_fails("1 process=5\n", 12, "process=5: expected PID:MIB[:NAME]");
        parse_fails("1 process=5:\n", 13, "process=5:");
        parse_fails("1 clock_event_reasons=0x200\n", 28, "clock_event_reasons=0x200: expected a mask");
        parse_fails("1 temperature_c=1\0002 lost=true\n", 30, "t.state:1: holds a NUL byte");
        parse_fails("1 temperature_c=1\r\n", 19, "control character 0x0d");
}

static void test_limits(void **state)
{
        (void) state;
        _cleanup_free_ gv_mock_state_t *s = calloc(1, sizeof(*s));
        _cleanup_error_ gv_error_t *err = NULL;
        for (unsigned i = 0; i < GV_MOCK_STATE_MAX_PROCESSES; i++)
                assert_int_equal(gv_mock_state_set(s, 0, "process", "100:1", &err), 0);
        assert_int_equal(gv_mock_state_set(s, 0, "process", "100:1", &err), -E2BIG);
        assert_int_equal(s->gpus[0].n_processes, GV_MOCK_STATE_MAX_PROCESSES);
        gv_error_free(&err);
        char name[GV_MOCK_STATE_MAX_NAME + 16];
        memset(name, 'n', sizeof(name));
        memcpy(name, "1:1:", 4);
        name[sizeof(name) - 1] = '\0';
        assert_int_equal(gv_mock_state_set(s, 1, "process", name, &err), -EINVAL);
        assert_non_null(strstr(err->msg, "longer than 63 bytes"));
        gv_error_free(&err);
        /* A refused value leaves the GPU as it was. */
        assert_int_equal(gv_mock_state_set(s, 1, "temperature_c", "60", &err), 0);
        assert_int_equal(gv_mock_state_set(s, 1, "temperature_c", "x", &err), -EINVAL);
        assert_int_equal(s->gpus[1].temperature_c, 60);
        gv_error_free(&err);
        /* processes=clear drops what was added. */
        assert_int_equal(gv_mock_state_set(s, 0, "processes", "clear", &err), 0);
        assert_int_equal(s->gpus[0].n_processes, 0);
        size_t big = GV_MOCK_STATE_MAX_BYTES + 1;
        _cleanup_free_ char *text = calloc(1, big);
        gv_mock_state_t *out = NULL;
        assert_int_equal(gv_mock_state_parse("t.state", text, big, &out, &err), -EFBIG);
        assert_null(out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_values_and_faults_parse),
                cmocka_unit_test(test_write_reads_back),
                cmocka_unit_test(test_errors_name_line_key_and_value),
                cmocka_unit_test(test_limits),
        };
        return cmocka_run_group_tests_name("mock-nvml-state", tests, NULL, NULL);
}
