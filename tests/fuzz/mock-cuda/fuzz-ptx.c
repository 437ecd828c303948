/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the mock libcuda's readers (mock/cuda/ptx.h, fatbin.h).  An
 * input that starts with the fatbin magic goes through the fatbin reader
 * (for an sm_90 GPU) and the PTX it yields through the PTX reader; any
 * other input is PTX text.  Every input must give a module or an error with
 * a message, never a crash, a leak or an inconsistent module.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mock/cuda/fatbin.h"
#include "mock/cuda/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads @text as PTX and checks the module is consistent. */
static void read_ptx(const char *text, size_t len)
{
        gv_ptx_module_t *m = NULL;
        char *msg = NULL;
        int r = gv_ptx_parse(text, len, &m, &msg);
        if (r == -EINVAL && !msg)
                abort(); /* every refusal names its line */
        free(msg);
        if (r < 0)
                return;
        if (gv_ptx_version(m) > 999) /* 10 * major + minor, each of at most two digits */
                abort();
        for (size_t i = 0; i < gv_ptx_entry_count(m); i++) {
                const gv_ptx_func_t *f = gv_ptx_entry_at(m, i);
                gv_ptx_params_t p = gv_ptx_func_params(f);
                for (size_t k = 0; k < p.count; k++)
                        if (p.offset[k] + p.size[k] > p.bytes)
                                abort();
                if (gv_ptx_entry(m, gv_ptx_func_name(f)) == NULL)
                        abort();
                free(gv_ptx_unsupported(f));
        }
        for (size_t i = 0; i < gv_ptx_global_count(m); i++) {
                void *addr;
                size_t bytes;
                gv_ptx_global_at(m, i, &addr, &bytes);
                if (addr && bytes)
                        memset(addr, 0, bytes); /* the storage must be as large as declared (ASan checks) */
        }
        gv_ptx_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (gv_fatbin_is_container(data, size)) {
                char *ptx = NULL, *msg = NULL;
                size_t len = 0;
                int r = gv_fatbin_ptx(data, size, 90, &ptx, &len, &msg);
                if ((r == -EINVAL || r == -ENOENT) && !msg)
                        abort();
                if (r == 0 && (!ptx || strlen(ptx) != len))
                        abort();
                if (r == 0)
                        read_ptx(ptx, len);
                free(ptx);
                free(msg);
                return 0;
        }
        read_ptx((const char *) data, size);
        return 0;
}
