/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base/error.h: gv_error_set() and its errno normalisation, context
 * prefixes, gv_error_free(), the reason table (stable names, hints,
 * retryability) as docs/errors.md documents them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/error.h"

static void test_set_fills_message_errno_reason(void **state)
{
        (void) state;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_error_set(&err, ENOENT, GV_REASON_IO, "%s: %d", "file", 7), -ENOENT);
        assert_non_null(err);
        assert_int_equal(err->errnum, ENOENT);
        assert_int_equal(err->reason, GV_REASON_IO);
        assert_string_equal(err->msg, "file: 7");
}

static void test_oom_replaces_and_takes_context(void **state)
{
        (void) state;
        _cleanup_error_ gv_error_t *err = NULL;
        gv_error_set(&err, EACCES, GV_REASON_IO, "an earlier error");
        assert_int_equal(gv_error_oom(&err), -ENOMEM);
        assert_int_equal(err->errnum, ENOMEM);
        assert_int_equal(err->reason, GV_REASON_INTERNAL);
        assert_string_equal(err->msg, "out of memory");
        assert_int_equal(gv_error_prefix(&err, "read %s", "x"), -ENOMEM);
        assert_string_equal(err->msg, "read x: out of memory");
        /* no slot: only the return value */
        assert_int_equal(gv_error_oom(NULL), -ENOMEM);
}

static void test_set_normalises_errnum(void **state)
{
        (void) state;
        _cleanup_error_ gv_error_t *err = NULL;
        /* a negative errno is accepted as well: the return is always -abs() */
        assert_int_equal(gv_error_set(&err, -EACCES, GV_REASON_PERMISSION_DENIED, "x"), -EACCES);
        assert_int_equal(err->errnum, EACCES);
        /* 0 becomes EIO */
        assert_int_equal(gv_error_set(&err, 0, GV_REASON_INTERNAL, "x"), -EIO);
        assert_int_equal(err->errnum, EIO);
}

static void test_set_without_slot(void **state)
{
        (void) state;
        /* err may be NULL: only the return value tells */
        assert_int_equal(gv_error_set(NULL, ETIMEDOUT, GV_REASON_TIMEOUT, "t"), -ETIMEDOUT);
        assert_int_equal(gv_error_set(NULL, 0, GV_REASON_TIMEOUT, "t"), -EIO);
}

static void test_set_replaces_previous(void **state)
{
        (void) state;
        /* the first error is freed when replaced (ASan would report the leak) */
        _cleanup_error_ gv_error_t *err = NULL;
        gv_error_set(&err, EIO, GV_REASON_IO, "first");
        gv_error_set(&err, EINVAL, GV_REASON_CONFIG, "second %s", "one");
        assert_string_equal(err->msg, "second one");
        assert_int_equal(err->errnum, EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
}

static int vset(gv_error_t **err, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = gv_error_setv(err, ENOSPC, GV_REASON_IO, fmt, ap);
        va_end(ap);
        return r;
}

static void test_setv(void **state)
{
        (void) state;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(vset(&err, "%s/%u", "a", 3u), -ENOSPC);
        assert_string_equal(err->msg, "a/3");
}

static void test_prefix_chains_context(void **state)
{
        (void) state;
        _cleanup_error_ gv_error_t *err = NULL;
        gv_error_set(&err, ENOENT, GV_REASON_LIBRARY_NOT_FOUND, "%s: cannot open", "/lib/libnvidia-ml.so.1");
        /* each caller on the way up prefixes its context; the innermost text stays last */
        assert_int_equal(gv_error_prefix(&err, "load NVML"), -ENOENT);
        assert_int_equal(gv_error_prefix(&err, "%s", "driver"), -ENOENT);
        assert_string_equal(err->msg, "driver: load NVML: /lib/libnvidia-ml.so.1: cannot open");
        /* the prefix changes neither errno nor reason */
        assert_int_equal(err->errnum, ENOENT);
        assert_int_equal(err->reason, GV_REASON_LIBRARY_NOT_FOUND);
}

static void test_prefix_without_error(void **state)
{
        (void) state;
        gv_error_t *err = NULL;
        assert_int_equal(gv_error_prefix(&err, "ctx"), -EIO);
        assert_null(err);
        assert_int_equal(gv_error_prefix(NULL, "ctx"), -EIO);
}

static void test_free_accepts_null_and_clears(void **state)
{
        (void) state;
        gv_error_free(NULL);
        gv_error_t *err = NULL;
        gv_error_free(&err);
        assert_null(err);
        gv_error_set(&err, EIO, GV_REASON_IO, "x");
        assert_non_null(err);
        gv_error_free(&err);
        assert_null(err);
        gv_error_free(&err); /* twice is harmless */
}

/* The names are an interface (logs, status, metrics, events): docs/errors.md. */
static void test_reason_names_are_stable(void **state)
{
        (void) state;
        static const struct {
                gv_reason_t r;
                const char *name;
        } want[] = {
                { GV_REASON_NONE, "none" },
                { GV_REASON_INTERNAL, "internal" },
                { GV_REASON_IO, "io" },
                { GV_REASON_CONFIG, "config" },
                { GV_REASON_TIMEOUT, "timeout" },
                { GV_REASON_INTERRUPTED, "interrupted" },
                { GV_REASON_LIBRARY_NOT_FOUND, "library-not-found" },
                { GV_REASON_DRIVER_NOT_LOADED, "driver-not-loaded" },
                { GV_REASON_PERMISSION_DENIED, "permission-denied" },
                { GV_REASON_DRIVER_MISMATCH, "driver-library-mismatch" },
                { GV_REASON_GPU_LOST, "gpu-lost" },
                { GV_REASON_NO_GPU, "no-gpu" },
                { GV_REASON_DEVICE_NODE_MISSING, "device-node-missing" },
                { GV_REASON_MIG_NO_INSTANCES, "mig-no-instances" },
                { GV_REASON_NVML, "nvml-error" },
                { GV_REASON_NVIDIA_SMI, "nvidia-smi-failed" },
                { GV_REASON_DEPENDENCY, "dependency-not-ready" },
                { GV_REASON_TOOLKIT, "toolkit-not-configured" },
                { GV_REASON_KUBERNETES, "kubernetes-api" },
                { GV_REASON_WORKLOAD, "workload-failed" },
                { GV_REASON_NOT_IMPLEMENTED, "not-implemented" },
                { GV_REASON_PCI_NOT_READY, "pci-not-ready" },
                { GV_REASON_MODULE_NOT_LOADED, "module-not-loaded" },
                { GV_REASON_FABRIC_NOT_READY, "fabric-not-ready" },
                { GV_REASON_GPU_MISSING, "gpu-missing" },
                { GV_REASON_DRA_DRIVER_NOT_READY, "dra-driver-not-ready" },
                { GV_REASON_DRA_GPUS_MISSING, "dra-gpus-missing" },
                { GV_REASON_MOUNT_DELETED, "mount-source-deleted" },
        };
        assert_int_equal(GV_ARRAY_SIZE(want), GV_REASON__MAX);
        for (size_t i = 0; i < GV_ARRAY_SIZE(want); i++)
                assert_string_equal(gv_reason_name(want[i].r), want[i].name);
        /* every name is kebab-case and unique */
        for (int a = 0; a < GV_REASON__MAX; a++) {
                const char *n = gv_reason_name((gv_reason_t) a);
                assert_true(strlen(n) > 0);
                assert_int_equal(strspn(n, "abcdefghijklmnopqrstuvwxyz-"), strlen(n));
                for (int b = a + 1; b < GV_REASON__MAX; b++)
                        assert_string_not_equal(n, gv_reason_name((gv_reason_t) b));
        }
        /* out of range: a name, never a crash */
        assert_string_equal(gv_reason_name(GV_REASON__MAX), "unknown");
        assert_string_equal(gv_reason_name((gv_reason_t) -1), "unknown");
}

static void test_reason_hints(void **state)
{
        (void) state;
        /* the hints point at the next step a person takes */
        assert_non_null(strstr(gv_reason_hint(GV_REASON_LIBRARY_NOT_FOUND), "DRIVER_INSTALL_DIR"));
        assert_non_null(strstr(gv_reason_hint(GV_REASON_CONFIG), "--help"));
        assert_non_null(strstr(gv_reason_hint(GV_REASON_TIMEOUT), "--max-wait"));
        assert_non_null(strstr(gv_reason_hint(GV_REASON_TOOLKIT), "nvidia-ctk cdi generate"));
        assert_non_null(strstr(gv_reason_hint(GV_REASON_MIG_NO_INSTANCES), "nvidia-mig-parted"));
        assert_non_null(strstr(gv_reason_hint(GV_REASON_INTERNAL), "bug"));
        /* nothing general to say for these */
        assert_null(gv_reason_hint(GV_REASON_NONE));
        assert_null(gv_reason_hint(GV_REASON_INTERRUPTED));
        assert_null(gv_reason_hint(GV_REASON_NVML));
        assert_null(gv_reason_hint(GV_REASON__MAX));
        assert_null(gv_reason_hint((gv_reason_t) -1));
}

static void test_reason_retryable(void **state)
{
        (void) state;
        /* waiting helps: the runner retries these under --wait (FR17) */
        const gv_reason_t yes[] = { GV_REASON_IO, GV_REASON_TIMEOUT, GV_REASON_DRIVER_NOT_LOADED, GV_REASON_NO_GPU,
                                    GV_REASON_DEVICE_NODE_MISSING, GV_REASON_NVML, GV_REASON_DEPENDENCY,
                                    GV_REASON_TOOLKIT, GV_REASON_KUBERNETES, GV_REASON_FABRIC_NOT_READY };
        /* waiting cannot help: the run ends at once (FR06, FR13) */
        const gv_reason_t no[] = { GV_REASON_NONE, GV_REASON_INTERNAL, GV_REASON_CONFIG,
                                   GV_REASON_LIBRARY_NOT_FOUND, GV_REASON_PERMISSION_DENIED,
                                   GV_REASON_DRIVER_MISMATCH, GV_REASON_GPU_LOST, GV_REASON_MIG_NO_INSTANCES,
                                   GV_REASON_NOT_IMPLEMENTED, GV_REASON_GPU_MISSING };
        for (size_t i = 0; i < GV_ARRAY_SIZE(yes); i++)
                assert_true(gv_reason_retryable(yes[i]));
        for (size_t i = 0; i < GV_ARRAY_SIZE(no); i++)
                assert_false(gv_reason_retryable(no[i]));
        assert_false(gv_reason_retryable(GV_REASON__MAX));
        assert_false(gv_reason_retryable((gv_reason_t) -1));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_set_fills_message_errno_reason),
                cmocka_unit_test(test_set_normalises_errnum),
                cmocka_unit_test(test_set_without_slot),
                cmocka_unit_test(test_set_replaces_previous),
                cmocka_unit_test(test_setv),
                cmocka_unit_test(test_prefix_chains_context),
                cmocka_unit_test(test_prefix_without_error),
                cmocka_unit_test(test_oom_replaces_and_takes_context),
                cmocka_unit_test(test_free_accepts_null_and_clears),
                cmocka_unit_test(test_reason_names_are_stable),
                cmocka_unit_test(test_reason_hints),
                cmocka_unit_test(test_reason_retryable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
