/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared helpers of the mock NVML tests: the library is dlopen()ed by path
 * (argv[1]) and every entry point resolved by name into an api_t, which the
 * tests get as their cmocka state.  argv[2] is the fixture folder.
 */
#ifndef GV_TEST_MOCK_NVML_H
#define GV_TEST_MOCK_NVML_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abi/nvml/nvml-abi.h"

typedef struct api {
        void *dl;
        const char *lib_path;
        const char *fixtures;
#define GV_T_FIELD(name, params) name##_fn name;
        GV_NVML_FUNCTIONS(GV_T_FIELD)
        GV_NVML_MOCK_FUNCTIONS(GV_T_FIELD)
#undef GV_T_FIELD
        nvmlErrorString_fn nvmlErrorString;
} api_t;

/* Opens the library and resolves every export; exits the test program on failure. */
static inline void api_open(api_t *a, const char *lib, const char *fixtures)
{
        memset(a, 0, sizeof(*a));
        a->lib_path = lib;
        a->fixtures = fixtures;
        a->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!a->dl) {
                printf("Bail out! dlopen %s: %s\n", lib, dlerror());
                exit(1);
        }
#define GV_T_SYM(name, params)                                                   \
        a->name = (name##_fn) dlsym(a->dl, #name);                               \
        if (!a->name) {                                                          \
                printf("Bail out! %s: no symbol %s\n", lib, #name);             \
                exit(1);                                                         \
        }
        GV_NVML_FUNCTIONS(GV_T_SYM)
        GV_NVML_MOCK_FUNCTIONS(GV_T_SYM)
#undef GV_T_SYM
        a->nvmlErrorString = (nvmlErrorString_fn) dlsym(a->dl, "nvmlErrorString");
        if (!a->nvmlErrorString) {
                printf("Bail out! %s: no symbol nvmlErrorString\n", lib);
                exit(1);
        }
}

static inline void clear_mock_env(void)
{
        static const char *const vars[] = { "MOCK_NVML_CONFIG", "MOCK_NVML_INIT_ERROR", "MOCK_NVML_LOST_GPUS",
                                            "MOCK_NVML_FABRIC_STATE", "MOCK_NVML_XIDS", "MOCK_NVML_XID_FILE",
                                            "MOCK_NVML_NUM_DEVICES", "NODE_NAME", "MOCK_NVML_STATE_FILE" };
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
                unsetenv(vars[i]);
}

/*
 * The start of a test program's main(): argv[1] the library, argv[2] the fixture folder.  Clears
 * the mock's environment and opens the library into @a; 0, or 2 after a usage line.
 */
static inline int api_start(api_t *a, int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: %s <libnvidia-ml.so.1> <fixture folder>\n", argv[0]);
                return 2;
        }
        clear_mock_env();
        api_open(a, argv[1], argv[2]);
        return 0;
}

/* Shuts the library down completely and clears the mock's environment. */
static inline int api_reset(void **state)
{
        api_t *a = *state;
        for (int i = 0; i < 16 && a->nvmlShutdown() == NVML_SUCCESS; i++)
                ;
        clear_mock_env();
        return 0;
}

/* Points MOCK_NVML_CONFIG at a fixture file. */
static inline void use_fixture(api_t *a, const char *name)
{
        char *p = NULL;
        assert_true(asprintf(&p, "%s/%s", a->fixtures, name) > 0);
        setenv("MOCK_NVML_CONFIG", p, 1);
        free(p);
}

static inline nvmlDevice_t gpu(api_t *a, unsigned i)
{
        nvmlDevice_t d = NULL;
        assert_int_equal(a->nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
        return d;
}

/* Whether @s is @prefix and 36 characters with dashes where a UUID has them (8-4-4-4-12): GPU-..., MIG-... */
static inline bool uuid_shape(const char *s, const char *prefix)
{
        size_t pl = strlen(prefix);
        if (strncmp(s, prefix, pl) != 0 || strlen(s) != pl + 36)
                return false;
        for (size_t i = pl; s[i]; i++) {
                size_t k = i - pl;
                bool dash = k == 8 || k == 13 || k == 18 || k == 23;
                if (dash != (s[i] == '-'))
                        return false;
        }
        return true;
}

#define API(state) ((api_t *) *(state))
#define T(f) cmocka_unit_test_prestate_setup_teardown(f, api_reset, api_reset, &api)

#endif
