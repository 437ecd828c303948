// SPDX-License-Identifier: Apache-2.0
/*
 * Every export of the mock libnvidia-ml.so.1, called through the argument
 * kinds of mock/nvml/nvml-api.txt: before init (UNINITIALIZED), with a bad
 * handle (INVALID_ARGUMENT), with NULL pointers (an error, never a crash),
 * and with good arguments on a full-GPU and a MIG profile (never
 * FUNCTION_NOT_FOUND; ASan watches every buffer).  Then the v1/v2/v3
 * process entries against their sizes: the plain names write 16-byte
 * entries, _v2/_v3 24-byte ones (nvml.h).
 */
#include <unistd.h>

#include "mock-nvml-test.h"

#define API(state) ((api_t *) *(state))
#define MAX_FN 1024
#define MAX_ARGS 6
#define BUF_BYTES 65536

static api_t api;

typedef struct fn {
        char name[96];
        char kinds[MAX_ARGS + 1];
        void *sym;
} fn_t;

static fn_t fns[MAX_FN];
static size_t n_fns;

/* Reads nvml-api.txt from GV_SOURCE_DIR and resolves each name. */
static void load_table(api_t *a)
{
        const char *src = getenv("GV_SOURCE_DIR");
        char *path = NULL;
        if (!src || asprintf(&path, "%s/mock/nvml/nvml-api.txt", src) < 0) {
                printf("Bail out! GV_SOURCE_DIR unset\n");
                exit(1);
        }
        FILE *t = fopen(path, "r");
        free(path);
        if (!t) {
                printf("Bail out! cannot open nvml-api.txt\n");
                exit(1);
        }
        char line[512];
        while (fgets(line, sizeof(line), t) && n_fns < MAX_FN) {
                fn_t *f = &fns[n_fns];
                if (line[0] == '#' || sscanf(line, "%95s %6s", f->name, f->kinds) != 2)
                        continue;
                if (strcmp(f->kinds, "-") == 0)
                        f->kinds[0] = '\0';
                f->sym = dlsym(a->dl, f->name);
                n_fns++;
        }
        fclose(t);
}

typedef nvmlReturn_t (*fn0)(void);
typedef nvmlReturn_t (*fn1)(uintptr_t);
typedef nvmlReturn_t (*fn2)(uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn3)(uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn4)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn5)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef nvmlReturn_t (*fn6)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

/*
 * Calls @f with @v.  Every argument kind of nvml-api.txt is an integer or a
 * pointer passed in a general register on x86-64 and aarch64, so one
 * uintptr_t per argument reaches the callee as its declared type.
 */
static nvmlReturn_t call(const fn_t *f, const uintptr_t *v)
{
        void *s = f->sym;
        switch (strlen(f->kinds)) {
        case 0: return ((fn0) s)();
        case 1: return ((fn1) s)(v[0]);
        case 2: return ((fn2) s)(v[0], v[1]);
        case 3: return ((fn3) s)(v[0], v[1], v[2]);
        case 4: return ((fn4) s)(v[0], v[1], v[2], v[3]);
        case 5: return ((fn5) s)(v[0], v[1], v[2], v[3], v[4]);
        default: return ((fn6) s)(v[0], v[1], v[2], v[3], v[4], v[5]);
        }
}

static bool is_init(const fn_t *f)
{
        return strncmp(f->name, "nvmlInit", 8) == 0;
}

/* The handles good calls use. */
typedef struct handles {
        nvmlDevice_t dev;
        nvmlGpuInstance_t gi;
        nvmlComputeInstance_t ci;
        nvmlEventSet_t set;
} handles_t;

/*
 * Good arguments for @f: handles from @h, a zeroed 64 KiB heap buffer per
 * pointer (@bufs), 0 for values except a length after a buffer (256), "" for
 * strings.  Returns false when a needed handle is missing.
 */
static bool good_args(const fn_t *f, const handles_t *h, uintptr_t *v, void **bufs)
{
        for (size_t i = 0; f->kinds[i]; i++) {
                bufs[i] = NULL;
                switch (f->kinds[i]) {
                case 'd': v[i] = (uintptr_t) h->dev; break;
                case 'g': if (!h->gi) return false; v[i] = (uintptr_t) h->gi; break;
                case 'c': if (!h->ci) return false; v[i] = (uintptr_t) h->ci; break;
                case 'e': v[i] = (uintptr_t) h->set; break;
                case 'h': v[i] = 0; break;
                case 'i': v[i] = i > 0 && (f->kinds[i - 1] == 'p') ? 256 : 0; break;
                case 'l': v[i] = 0; break;
                case 's': v[i] = (uintptr_t) ""; break;
                default:
                        bufs[i] = calloc(1, BUF_BYTES);
                        assert_non_null(bufs[i]);
                        v[i] = (uintptr_t) bufs[i];
                        break;
                }
        }
        return true;
}

static void free_bufs(const fn_t *f, void **bufs)
{
        for (size_t i = 0; f->kinds[i]; i++)
                free(bufs[i]);
}

static void test_every_declared_function_is_exported(void **state)
{
        (void) state;
        assert_true(n_fns > 400);
        for (size_t i = 0; i < n_fns; i++)
                if (!fns[i].sym)
                        fail_msg("%s: not exported", fns[i].name);
}

static void test_every_export_uninitialized_before_init(void **state)
{
        (void) state;
        for (size_t i = 0; i < n_fns; i++) {
                if (is_init(&fns[i]) || strcmp(fns[i].name, "nvmlShutdown") == 0)
                        continue;
                uintptr_t v[MAX_ARGS] = { 0 };
                nvmlReturn_t r = call(&fns[i], v);
                if (r != NVML_ERROR_UNINITIALIZED)
                        fail_msg("%s before init: %d, expected UNINITIALIZED", fns[i].name, r);
        }
}

/* Finds the handles of the loaded profile: GPU 0; with MIG GPU 2 (mig-fr14.yaml) and its first GPU and compute instance. */
static handles_t find_handles(api_t *a, bool mig)
{
        handles_t h = { 0 };
        h.dev = gpu(a, mig ? 2 : 0);
        assert_int_equal(a->nvmlEventSetCreate(&h.set), NVML_SUCCESS);
        if (mig) {
                nvmlDevice_t md;
                assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(h.dev, 0, &md), NVML_SUCCESS);
                unsigned gi, ci;
                assert_int_equal(a->nvmlDeviceGetGpuInstanceId(md, &gi), NVML_SUCCESS);
                assert_int_equal(a->nvmlDeviceGetComputeInstanceId(md, &ci), NVML_SUCCESS);
                assert_int_equal(a->nvmlDeviceGetGpuInstanceById(h.dev, gi, &h.gi), NVML_SUCCESS);
                assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceById(h.gi, ci, &h.ci), NVML_SUCCESS);
        }
        return h;
}

static void test_every_export_bad_handle_and_null(void **state)
{
        api_t *a = API(state);
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        handles_t h = find_handles(a, true);
        static uint64_t bogus[4];
        for (size_t i = 0; i < n_fns; i++) {
                const fn_t *f = &fns[i];
                if (is_init(f) || strcmp(f->name, "nvmlShutdown") == 0 || strcmp(f->name, "nvmlEventSetFree") == 0)
                        continue;
                for (size_t k = 0; f->kinds[k]; k++) {
                        char c = f->kinds[k];
                        if (!strchr("dgceps", c))
                                continue;
                        uintptr_t v[MAX_ARGS];
                        void *bufs[MAX_ARGS];
                        if (!good_args(f, &h, v, bufs))
                                continue;
                        v[k] = strchr("dgce", c) ? (uintptr_t) &bogus[1] : 0;
                        nvmlReturn_t r = call(f, v);
                        free_bufs(f, bufs);
                        /* a versioned ("...V") query may check its zeroed version word first, as real NVML does */
                        bool versioned = f->name[strlen(f->name) - 1] == 'V' && r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
                        if (strchr("dgce", c) && r != NVML_ERROR_INVALID_ARGUMENT && !versioned)
                                fail_msg("%s: bad handle in argument %zu: %d, expected INVALID_ARGUMENT", f->name, k, r);
                        if (!strchr("dgce", c) && (r == NVML_SUCCESS || r == NVML_ERROR_FUNCTION_NOT_FOUND))
                                fail_msg("%s: NULL argument %zu: %d, expected an error", f->name, k, r);
                }
        }
        assert_int_equal(a->nvmlEventSetFree(h.set), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

/* Calls every export with good arguments on @fixture; prints how many answer and how many are NOT_SUPPORTED. */
static void sweep_good(api_t *a, const char *fixture, bool mig, bool mig_handle, unsigned min_ok)
{
        if (fixture)
                use_fixture(a, fixture);
        else
                unsetenv("MOCK_NVML_CONFIG");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        handles_t h = find_handles(a, mig);
        nvmlDevice_t parent = h.dev;
        if (mig_handle) /* every device query with a MIG device handle instead of the GPU's */
                assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(parent, 0, &h.dev), NVML_SUCCESS);
        unsigned ok = 0, unsupported = 0, other = 0;
        for (size_t i = 0; i < n_fns; i++) {
                const fn_t *f = &fns[i];
                if (is_init(f) || strcmp(f->name, "nvmlShutdown") == 0 || strcmp(f->name, "nvmlEventSetFree") == 0 ||
                    strcmp(f->name, "nvmlEventSetWait") == 0 || strcmp(f->name, "nvmlEventSetWait_v2") == 0)
                        continue;
                uintptr_t v[MAX_ARGS];
                void *bufs[MAX_ARGS];
                if (!good_args(f, &h, v, bufs))
                        continue;
                nvmlReturn_t r = call(f, v);
                free_bufs(f, bufs);
                if (r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_UNINITIALIZED)
                        fail_msg("%s: %d with good arguments", f->name, r);
                if (r == NVML_SUCCESS)
                        ok++;
                else if (r == NVML_ERROR_NOT_SUPPORTED)
                        unsupported++;
                else
                        other++;
        }
        printf("# %s%s: %zu exports, %u SUCCESS, %u NOT_SUPPORTED, %u other errors (zero arguments)\n",
               fixture ? fixture : "built-in a100-sxm4-40gb", mig_handle ? " (MIG device handle)" : "", n_fns, ok,
               unsupported, other);
        assert_true(ok >= min_ok);
        assert_int_equal(a->nvmlEventSetFree(h.set), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

static void test_every_export_good_arguments_full_gpu(void **state)
{
        sweep_good(API(state), NULL, false, false, 70);
        sweep_good(API(state), "unsupported.yaml", false, false, 25);
}

static void test_every_export_good_arguments_mig(void **state)
{
        sweep_good(API(state), "mig-fr14.yaml", true, false, 60);
        sweep_good(API(state), "mig-fr14.yaml", true, true, 30);
}

typedef nvmlReturn_t (*proc_v1_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v1_t *);
typedef nvmlReturn_t (*proc_v3_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

/* The plain names write 16-byte entries into an exactly sized heap array (ASan catches 24-byte writes). */
static void test_process_entries_v1_are_16_bytes(void **state)
{
        api_t *a = API(state);
        assert_int_equal(sizeof(nvmlProcessInfo_v1_t), 16);
        assert_int_equal(sizeof(nvmlProcessInfo_v2_t), 24);
        assert_int_equal(sizeof(nvmlProcessInfo_t), 24);
        use_fixture(a, "unsupported.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0);
        proc_v1_fn v1 = (proc_v1_fn) dlsym(a->dl, "nvmlDeviceGetComputeRunningProcesses");
        assert_non_null(v1);
        unsigned n = 0;
        assert_int_equal(v1(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 2);
        nvmlProcessInfo_v1_t *p1 = malloc(n * sizeof(*p1));
        assert_non_null(p1);
        assert_int_equal(v1(d, &n, p1), NVML_SUCCESS);
        assert_int_equal(p1[0].pid, 1234);
        assert_int_equal(p1[0].usedGpuMemory, 1024ULL << 20);
        assert_int_equal(p1[1].pid, 5678);
        assert_int_equal(p1[1].usedGpuMemory, 512ULL << 20);
        free(p1);
        static const char *const v3_names[] = { "nvmlDeviceGetComputeRunningProcesses_v2",
                                                "nvmlDeviceGetComputeRunningProcesses_v3" };
        for (size_t i = 0; i < 2; i++) {
                proc_v3_fn v3 = (proc_v3_fn) dlsym(a->dl, v3_names[i]);
                assert_non_null(v3);
                n = 2;
                nvmlProcessInfo_t *p3 = malloc(n * sizeof(*p3));
                assert_non_null(p3);
                assert_int_equal(v3(d, &n, p3), NVML_SUCCESS);
                assert_int_equal(p3[1].pid, 5678);
                assert_int_equal(p3[1].usedGpuMemory, 512ULL << 20);
                assert_int_equal(p3[1].gpuInstanceId, 0xFFFFFFFFu);
                free(p3);
        }
        /* graphics and MPS lists: every name answers, a compute node has none */
        static const char *const others[] = { "nvmlDeviceGetGraphicsRunningProcesses",
                                              "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                              "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                              "nvmlDeviceGetMPSComputeRunningProcesses",
                                              "nvmlDeviceGetMPSComputeRunningProcesses_v2",
                                              "nvmlDeviceGetMPSComputeRunningProcesses_v3" };
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
                proc_v3_fn f = (proc_v3_fn) dlsym(a->dl, others[i]);
                assert_non_null(f);
                n = 0;
                assert_int_equal(f(d, &n, NULL), NVML_SUCCESS);
                assert_int_equal(n, 0);
        }
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

/* Model facts the device plugin and feature discovery read (model-facts.c sources), on the built-in A100. */
static void test_bar1_pcie_clocks_and_affinity(void **state)
{
        api_t *a = API(state);
        unsetenv("MOCK_NVML_CONFIG"); /* the built-in default, a100-sxm4-40gb */
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0);
        nvmlBAR1Memory_t b;
        assert_int_equal(a->nvmlDeviceGetBAR1MemoryInfo(d, &b), NVML_SUCCESS);
        assert_int_equal(b.bar1Total, 65536ULL << 20);
        assert_int_equal(b.bar1Used + b.bar1Free, b.bar1Total);
        unsigned u;
        assert_int_equal(a->nvmlDeviceGetMaxPcieLinkGeneration(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 4);
        assert_int_equal(a->nvmlDeviceGetMaxPcieLinkWidth(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 16);
        assert_int_equal(a->nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u),
                         NVML_SUCCESS);
        assert_int_equal(u, 89);
        /* supported clocks: the A100 capture lists 81 graphics clocks, 1410 down to 210 MHz in 15 MHz steps */
        unsigned clocks[128], nclk = 0;
        assert_int_equal(a->nvmlDeviceGetSupportedGraphicsClocks(d, 1215, &nclk, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(nclk, 81);
        assert_int_equal(a->nvmlDeviceGetSupportedGraphicsClocks(d, 1215, &nclk, clocks), NVML_SUCCESS);
        assert_int_equal(clocks[0], 1410);
        assert_int_equal(clocks[1], 1395);
        assert_int_equal(clocks[80], 210);
        assert_int_equal(a->nvmlDeviceGetSupportedGraphicsClocks(d, 999, &nclk, clocks), NVML_ERROR_NOT_FOUND);
        /* Ampere remaps rows and retires no pages */
        unsigned c1 = 9, c2 = 9, c3 = 9, c4 = 9;
        assert_int_equal(a->nvmlDeviceGetRemappedRows(d, &c1, &c2, &c3, &c4), NVML_SUCCESS);
        assert_int_equal(c1 + c2 + c3 + c4, 0);
        assert_int_equal(a->nvmlDeviceGetRetiredPages(d, 0, &c1, NULL), NVML_ERROR_NOT_SUPPORTED);
        /* field values: answered ones carry a type and value, others their own NOT_SUPPORTED */
        nvmlFieldValue_t fv[3] = { { .fieldId = NVML_FI_DEV_POWER_INSTANT }, { .fieldId = NVML_FI_DEV_ECC_CURRENT },
                                   { .fieldId = 9999 } };
        assert_int_equal(a->nvmlDeviceGetFieldValues(d, 3, fv), NVML_SUCCESS);
        assert_int_equal(fv[0].nvmlReturn, NVML_SUCCESS);
        assert_int_equal(fv[0].value.uiVal, 72000); /* mW, the profile's 72 W */
        assert_int_equal(fv[1].value.uiVal, 1);
        assert_int_equal(fv[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
        nvmlDevice_t near[8];
        unsigned nn = 8;
        assert_int_equal(a->nvmlDeviceGetTopologyNearestGpus(d, NVML_TOPOLOGY_NODE, &nn, near), NVML_SUCCESS);
        assert_int_equal(nn, 3); /* GPUs 1, 2, 3 share GPU 0's socket */
        unsigned long cpus[4] = { 0 }, cpus4[4] = { 0 }, nodes[1] = { 0 };
        assert_int_equal(a->nvmlDeviceGetCpuAffinity(d, 4, cpus), NVML_SUCCESS);
        assert_true(cpus[0] & 1UL); /* GPU 0: the first socket starts at CPU 0 */
        assert_int_equal(a->nvmlDeviceGetCpuAffinity(gpu(a, 4), 4, cpus4), NVML_SUCCESS);
        for (int i = 0; i < 4 && sysconf(_SC_NPROCESSORS_CONF) >= 2; i++)
                assert_int_equal(cpus[i] & cpus4[i], 0); /* the two sockets share no CPU */
        assert_int_equal(a->nvmlDeviceGetMemoryAffinity(gpu(a, 5), 1, nodes, NVML_AFFINITY_SCOPE_NODE), NVML_SUCCESS);
        assert_int_equal(nodes[0], 2UL); /* NUMA node 1 */
        assert_int_equal(a->nvmlDeviceGetCpuAffinity(d, 0, cpus), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

/* Turing retires pages (the T4 capture: 0 pages, none pending), remaps no rows and has a 256 MiB BAR1. */
static void test_t4_retires_pages_and_remaps_no_rows(void **state)
{
        api_t *a = API(state);
        nvmlBAR1Memory_t b;
        unsigned c1, c2, c3, c4;
        char *t4 = NULL;
        assert_true(asprintf(&t4, "%s/mock/profiles/t4.yaml", getenv("GV_SOURCE_DIR")) > 0);
        setenv("MOCK_NVML_CONFIG", t4, 1);
        free(t4);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t d = gpu(a, 0);
        c1 = 9;
        assert_int_equal(a->nvmlDeviceGetRetiredPages(d, 0, &c1, NULL), NVML_SUCCESS);
        assert_int_equal(c1, 0);
        assert_int_equal(a->nvmlDeviceGetRemappedRows(d, &c1, &c2, &c3, &c4), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlDeviceGetBAR1MemoryInfo(d, &b), NVML_SUCCESS);
        assert_int_equal(b.bar1Total, 256ULL << 20);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

/* Compute instance profiles of a GPU instance, the instance listings, and BAR1 of a MIG device. */
static void test_compute_instance_profiles_and_listings(void **state)
{
        api_t *a = API(state);
        nvmlBAR1Memory_t b;
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        handles_t h = find_handles(a, true);
        nvmlComputeInstanceProfileInfo_t ci;
        nvmlGpuInstanceInfo_t gi;
        assert_int_equal(a->nvmlGpuInstanceGetInfo(h.gi, &gi), NVML_SUCCESS);
        nvmlGpuInstanceProfileInfo_t gp;
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfo(h.dev, gi.profileId, &gp), NVML_SUCCESS);
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceProfileInfo(h.gi, NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE,
                                                                        NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ci),
                         NVML_SUCCESS);
        assert_int_equal(ci.sliceCount, 1);
        assert_int_equal(ci.instanceCount, gp.sliceCount);
        assert_int_equal(ci.multiprocessorCount, gp.multiprocessorCount / gp.sliceCount);
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceProfileInfo(h.gi, NVML_COMPUTE_INSTANCE_PROFILE_COUNT,
                                                                        NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ci),
                         NVML_ERROR_INVALID_ARGUMENT);
        nvmlComputeInstanceProfileInfo_v2_t civ = { .version = nvmlComputeInstanceProfileInfo_v2 };
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceProfileInfoV(
                                 h.gi, NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &civ),
                         NVML_SUCCESS);
        assert_int_equal(civ.version, nvmlComputeInstanceProfileInfo_v2);
        assert_int_equal(strncmp(civ.name, "MIG 1", 5), 0);
        civ.version = 1;
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstanceProfileInfoV(
                                 h.gi, NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &civ),
                         NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        nvmlGpuInstanceProfileInfo_v2_t gpv = { .version = nvmlGpuInstanceProfileInfo_v2 };
        assert_int_equal(a->nvmlDeviceGetGpuInstanceProfileInfoV(h.dev, gi.profileId, &gpv), NVML_SUCCESS);
        assert_int_equal(gpv.memorySizeMB, gp.memorySizeMB);
        /* instance listings: GPU 2 holds three 2g.10gb GPU instances, each with one full compute instance */
        nvmlGpuInstance_t gis[8];
        unsigned ngi = 0;
        assert_int_equal(a->nvmlDeviceGetGpuInstances(h.dev, NVML_GPU_INSTANCE_PROFILE_2_SLICE, gis, &ngi), NVML_SUCCESS);
        assert_int_equal(ngi, 3);
        assert_ptr_equal(gis[0], h.gi);
        assert_int_equal(a->nvmlDeviceGetGpuInstances(h.dev, NVML_GPU_INSTANCE_PROFILE_1_SLICE, gis, &ngi), NVML_SUCCESS);
        assert_int_equal(ngi, 0);
        nvmlComputeInstance_t cis[8];
        unsigned nci = 0;
        assert_int_equal(a->nvmlGpuInstanceGetComputeInstances(h.gi, NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE, cis, &nci),
                         NVML_SUCCESS);
        assert_int_equal(nci, 1);
        assert_ptr_equal(cis[0], h.ci);
        /* a MIG device answers BAR1 (nvitop reads it) */
        nvmlDevice_t md;
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(h.dev, 0, &md), NVML_SUCCESS);
        assert_int_equal(a->nvmlDeviceGetBAR1MemoryInfo(md, &b), NVML_SUCCESS);
        assert_true(b.bar1Total > 0);
        assert_int_equal(a->nvmlEventSetFree(h.set), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

typedef nvmlReturn_t (*temp_v_fn)(nvmlDevice_t, nvmlTemperature_t *);
typedef nvmlReturn_t (*uint_fn)(nvmlDevice_t, unsigned *);
typedef nvmlReturn_t (*ull_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*engine_fn)(nvmlDevice_t, unsigned *, unsigned *);
typedef nvmlReturn_t (*proc_util_fn)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *, unsigned long long);

/* Resolves @name in the mock (every name of nvml-api.txt is exported). */
static void *sym(api_t *a, const char *name)
{
        void *f = dlsym(a->dl, name);
        assert_non_null(f);
        return f;
}

/* Loads built-in profile @name (mock/profiles/<name>.yaml) and initialises. */
static void init_profile(api_t *a, const char *name)
{
        char *p = NULL;
        assert_true(asprintf(&p, "%s/mock/profiles/%s.yaml", getenv("GV_SOURCE_DIR"), name) > 0);
        setenv("MOCK_NVML_CONFIG", p, 1);
        free(p);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
}

/* Field 82 (NVML_FI_DEV_MEMORY_TEMP) of @d: its own nvmlReturn, the value in *temp. */
static nvmlReturn_t memory_temp(api_t *a, nvmlDevice_t d, unsigned *temp)
{
        nvmlFieldValue_t fv = { .fieldId = NVML_FI_DEV_MEMORY_TEMP };
        assert_int_equal(a->nvmlDeviceGetFieldValues(d, 1, &fv), NVML_SUCCESS);
        if (fv.nvmlReturn == NVML_SUCCESS) {
                assert_int_equal(fv.valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
                *temp = fv.value.uiVal;
        }
        return fv.nvmlReturn;
}

/* JPEG (@ofa false) or OFA utilisation of @d: the return code, the value in *util. */
static nvmlReturn_t engine_util(api_t *a, nvmlDevice_t d, bool ofa, unsigned *util)
{
        engine_fn f = (engine_fn) sym(a, ofa ? "nvmlDeviceGetOfaUtilization" : "nvmlDeviceGetJpgUtilization");
        unsigned period = 0;
        *util = 99;
        nvmlReturn_t r = f(d, util, &period);
        if (r == NVML_SUCCESS)
                assert_true(period > 0);
        return r;
}

/*
 * What the real clients read (docs/real-clients.md):
 * nvmlDeviceGetTemperatureV (nvitop), nvmlDeviceGetAccountingBufferSize
 * (4000 in every capture), SupportedClocksEventReasons = its old name,
 * JPEG/OFA utilisation (0 % in the non-MIG captures, N/A with MIG on) and
 * the memory temperature field (HBM parts; N/A on GDDR ones).
 */
static void test_getters_the_real_clients_read(void **state)
{
        api_t *a = API(state);
        init_profile(a, "a100-sxm4-40gb");
        nvmlDevice_t d = gpu(a, 0);
        temp_v_fn temp_v = (temp_v_fn) sym(a, "nvmlDeviceGetTemperatureV");
        nvmlTemperature_t t = { .version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU, .temperature = -1 };
        unsigned plain = 0;
        assert_int_equal(a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &plain), NVML_SUCCESS);
        assert_int_equal(temp_v(d, &t), NVML_SUCCESS);
        assert_int_equal(t.temperature, 33); /* the profile's temperature_c */
        assert_int_equal(t.temperature, (int) plain);
        assert_int_equal(t.version, nvmlTemperature_v1);
        t.version = GV_NVML_STRUCT_VERSION(nvmlTemperature_v1_t, 2);
        assert_int_equal(temp_v(d, &t), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        t.version = 0;
        assert_int_equal(temp_v(d, &t), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        t = (nvmlTemperature_t) { .version = nvmlTemperature_v1, .sensorType = (nvmlTemperatureSensors_t) 7 };
        assert_int_equal(temp_v(d, &t), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(temp_v(d, NULL), NVML_ERROR_INVALID_ARGUMENT);

        unsigned u = 0;
        assert_int_equal(((uint_fn) sym(a, "nvmlDeviceGetAccountingBufferSize"))(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 4000);
        unsigned long long now_name = 0, old_name = 0;
        assert_int_equal(((ull_fn) sym(a, "nvmlDeviceGetSupportedClocksEventReasons"))(d, &now_name), NVML_SUCCESS);
        assert_int_equal(((ull_fn) sym(a, "nvmlDeviceGetSupportedClocksThrottleReasons"))(d, &old_name), NVML_SUCCESS);
        assert_int_equal(now_name, old_name);
        assert_int_equal(now_name, 0x1FF);
        assert_int_equal(engine_util(a, d, false, &u), NVML_SUCCESS); /* qx-a100: jpeg_util 0 % */
        assert_int_equal(u, 0);
        assert_int_equal(engine_util(a, d, true, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        assert_int_equal(memory_temp(a, d, &u), NVML_SUCCESS);
        assert_int_equal(u, 34); /* qx-a100: memory_temp 34 C beside gpu_temp 33 C */
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        init_profile(a, "h100-sxm5-80gb");
        d = gpu(a, 0);
        assert_int_equal(engine_util(a, d, false, &u), NVML_SUCCESS); /* qx-h100: jpeg_util, ofa_util 0 % */
        assert_int_equal(u, 0);
        assert_int_equal(engine_util(a, d, true, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        assert_int_equal(memory_temp(a, d, &u), NVML_SUCCESS);
        assert_int_equal(u, 37); /* qx-h100 */
        assert_int_equal(((uint_fn) sym(a, "nvmlDeviceGetAccountingBufferSize"))(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 4000);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        /* H200: the non-MIG 580.173.02 -q capture (nvidia_gpu_exporter): memory 38 C, JPEG/OFA 0 %, buffer 4000 */
        init_profile(a, "h200");
        d = gpu(a, 0);
        assert_int_equal(memory_temp(a, d, &u), NVML_SUCCESS);
        assert_int_equal(u, 38);
        assert_int_equal(engine_util(a, d, true, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        assert_int_equal(((uint_fn) sym(a, "nvmlDeviceGetAccountingBufferSize"))(d, &u), NVML_SUCCESS);
        assert_int_equal(u, 4000);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        /* GDDR6 boards print memory_temp N/A (qx-l40s, qx-t4, the T4 515 capture) */
        static const char *const gddr[] = { "l40s", "t4" };
        for (size_t i = 0; i < 2; i++) {
                init_profile(a, gddr[i]);
                assert_int_equal(memory_temp(a, gpu(a, 0), &u), NVML_ERROR_NOT_SUPPORTED);
                assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
        }

        /* MIG enabled (mig-fr14.yaml GPU 2): JPEG/OFA N/A on the parent, as the MIG captures */
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(engine_util(a, gpu(a, 2), false, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(engine_util(a, gpu(a, 2), true, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

typedef nvmlReturn_t (*pstates_fn)(nvmlDevice_t, nvmlPstates_t *, unsigned);

/*
 * The Linux getters a real A100 answers that NVIDIA's Python bindings sweep
 * (docs/real-clients.md): the IRQ of /proc/driver/nvidia/gpus/.../information
 * (one per GPU), the supported P-states (P0 only on the HBM parts, one memory
 * clock; not claimed on the GDDR T4) and the infoROM configuration checksum
 * (same configuration, same checksum; another infoROM, another one).
 */
static void test_linux_getters_of_a_real_a100(void **state)
{
        api_t *a = API(state);
        init_profile(a, "a100-sxm4-40gb");
        uint_fn irq = (uint_fn) sym(a, "nvmlDeviceGetIrqNum");
        uint_fn sum = (uint_fn) sym(a, "nvmlDeviceGetInforomConfigurationChecksum");
        pstates_fn ps = (pstates_fn) sym(a, "nvmlDeviceGetSupportedPerformanceStates");
        unsigned q0 = 0, q1 = 0;
        assert_int_equal(irq(gpu(a, 0), &q0), NVML_SUCCESS);
        assert_int_equal(irq(gpu(a, 1), &q1), NVML_SUCCESS);
        assert_int_equal(q0, 144); /* the DGX Station information files: 144, 145, ... in GPU order */
        assert_int_equal(q1, 145);
        assert_int_equal(irq(gpu(a, 0), NULL), NVML_ERROR_INVALID_ARGUMENT);

        nvmlPstates_t list[16];
        memset(list, 0x55, sizeof(list));
        assert_int_equal(ps(gpu(a, 0), list, sizeof(list)), NVML_SUCCESS);
        assert_int_equal(list[0], NVML_PSTATE_0);
        for (size_t i = 1; i < 16; i++)
                assert_int_equal(list[i], NVML_PSTATE_UNKNOWN);
        assert_int_equal(ps(gpu(a, 0), list, 0), NVML_ERROR_INSUFFICIENT_SIZE);
        nvmlPstates_t *one = malloc(sizeof(*one)); /* exactly one entry: ASan sees an overrun */
        assert_non_null(one);
        assert_int_equal(ps(gpu(a, 0), one, sizeof(*one)), NVML_SUCCESS);
        assert_int_equal(*one, NVML_PSTATE_0);
        free(one);

        assert_int_equal(sum(gpu(a, 0), &q0), NVML_SUCCESS);
        assert_int_equal(sum(gpu(a, 7), &q1), NVML_SUCCESS);
        assert_int_equal(q0, q1); /* eight GPUs configured alike */
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        init_profile(a, "t4");
        assert_int_equal(ps(gpu(a, 0), list, sizeof(list)), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(sum(gpu(a, 0), &q1), NVML_SUCCESS);
        assert_true(q1 != q0); /* another infoROM */
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        /* MIG enabled (mig-fr14.yaml GPU 2): a MIG device handle is not a GPU */
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        nvmlDevice_t md;
        assert_int_equal(a->nvmlDeviceGetMigDeviceHandleByIndex(gpu(a, 2), 0, &md), NVML_SUCCESS);
        assert_int_equal(irq(md, &q0), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(irq(gpu(a, 2), &q0), NVML_SUCCESS);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

/*
 * nvmlDeviceGetProcessUtilization (nvtop's per-process GPU usage): a NULL
 * buffer gives INSUFFICIENT_SIZE with the count, then one sample per
 * process newer than lastSeenTimeStamp; none newer: NOT_FOUND (nvml.h).
 */
static void test_process_utilization(void **state)
{
        api_t *a = API(state);
        const char *path = "process-utilization.yaml";
        use_fixture(a, path);
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        proc_util_fn f = (proc_util_fn) sym(a, "nvmlDeviceGetProcessUtilization");
        nvmlDevice_t d = gpu(a, 0);
        unsigned n = 0;
        assert_int_equal(f(d, NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 2);
        nvmlProcessUtilizationSample_t *s = calloc(n, sizeof(*s)); /* exactly sized: ASan sees an overrun */
        assert_non_null(s);
        unsigned small = 1;
        assert_int_equal(f(d, s, &small, 0), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(small, 2);
        assert_int_equal(f(d, s, &n, 0), NVML_SUCCESS);
        assert_int_equal(n, 2);
        assert_int_equal(s[0].pid, 1234);
        assert_int_equal(s[1].pid, 5678);
        /* the GPU's 60 % SM and 30 % memory utilisation shared by its two processes */
        assert_int_equal(s[0].smUtil + s[1].smUtil, 60);
        assert_int_equal(s[0].memUtil + s[1].memUtil, 30);
        assert_int_equal(s[0].encUtil + s[0].decUtil + s[1].encUtil + s[1].decUtil, 0);
        assert_true(s[0].timeStamp > 0);
        unsigned long long seen = s[0].timeStamp;
        assert_int_equal(f(d, s, &n, ~0ULL), NVML_ERROR_NOT_FOUND); /* nothing newer than the end of time */
        assert_int_equal(f(d, NULL, &n, ~0ULL), NVML_ERROR_NOT_FOUND);
        n = 2;
        assert_int_equal(f(d, s, &n, seen - 1), NVML_SUCCESS);
        assert_true(s[0].timeStamp > seen - 1);
        free(s);
        assert_int_equal(f(d, NULL, NULL, 0), NVML_ERROR_INVALID_ARGUMENT);
        n = 0;
        assert_int_equal(f(gpu(a, 1), NULL, &n, 0), NVML_ERROR_NOT_FOUND); /* GPU 1 runs nothing */
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);

        /* MIG enabled: "not currently supported" (nvml.h) */
        use_fixture(a, "mig-fr14.yaml");
        assert_int_equal(a->nvmlInit_v2(), NVML_SUCCESS);
        n = 0;
        assert_int_equal(f(gpu(a, 2), NULL, &n, 0), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(a->nvmlShutdown(), NVML_SUCCESS);
}

int main(int argc, char **argv)
{
        if (api_start(&api, argc, argv) != 0)
                return 2;
        load_table(&api);
        const struct CMUnitTest tests[] = {
                T(test_every_declared_function_is_exported),
                T(test_every_export_uninitialized_before_init),
                T(test_every_export_bad_handle_and_null),
                T(test_every_export_good_arguments_full_gpu),
                T(test_every_export_good_arguments_mig),
                T(test_process_entries_v1_are_16_bytes),
                T(test_bar1_pcie_clocks_and_affinity),
                T(test_t4_retires_pages_and_remaps_no_rows),
                T(test_compute_instance_profiles_and_listings),
                T(test_getters_the_real_clients_read),
                T(test_linux_getters_of_a_real_a100),
                T(test_process_utilization),
        };
        int rc = cmocka_run_group_tests(tests, NULL, NULL);
        dlclose(api.dl);
        return rc;
}
