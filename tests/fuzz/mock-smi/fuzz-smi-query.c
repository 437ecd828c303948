/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: our nvidia-smi's --query-gpu field list and --format parser
 * (smi_query_parse) and the CSV header/row builders fed from its result.
 * Input: "<fields>\n<format>" (no newline: the whole input is the field list
 * with format "csv").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz-input.h"
#include "mock/smi/smi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = fuzz_cstr(data, size);
        if (!text)
                return 0;
        char *nl = strchr(text, '\n');
        const char *format = "csv";
        if (nl) {
                *nl = '\0';
                format = nl + 1;
        }
        smi_query_t q = { 0 };
        char *bad = NULL;
        if (smi_query_parse(text, format, &q, &bad) == SMI_PARSE_OK) {
                char *h = smi_csv_header(&q);
                smi_value_t *v = calloc(q.n, sizeof(*v));
                for (size_t i = 0; v && i < q.n; i++) {
                        v[i].ret = (i % 3 == 1) ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
                        v[i].num = i * 1000u;
                        v[i].str = "x";
                }
                char *row = v ? smi_csv_row(&q, v) : NULL;
                free(row);
                free(v);
                free(h);
                smi_query_free(&q);
        }
        free(bad);
        free(text);
        return 0;
}
