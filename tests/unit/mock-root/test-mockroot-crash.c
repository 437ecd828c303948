/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Crash tests of `mock install`: a process running
 * gv_mock_install() is killed with SIGKILL -- before each of its changes to
 * the filesystem in turn (the step hook of gv_mock_install_opts_t), and at
 * seeded random times -- and afterwards
 *   - install (same options) succeeds, and remove then leaves the folder
 *     exactly as it was before the first install; and
 *   - remove alone leaves the folder exactly as it was.
 * Scenarios: a root install creates, an empty root given, an update of an
 * existing mock root to another GPU count, a CDI folder outside the root, and
 * the workloads (`--workload`): an update of a vm-vgpu root from the SR-IOV
 * to the mdev shape (VFs, links and folders go, mdev ones come), and a
 * container root with every GPUDirect flag and cc (one GPU each; run as
 * `test-mockroot-crash workload`, the meson test mockroot-crash-workload,
 * so that each test stays well inside its time bound).
 *
 * GV_CRASH_RANDOM_TRIALS sets the number of random-time kills per scenario
 * (default 8); GV_CRASH_SEED the seed (default 1).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/mock.h"
#include "mock/nvml/profile.h"

#include "../scratch.h"

typedef struct fx {
        char *tmp;       /* scratch folder */
        char *lib, *smi; /* artifacts to copy */
        char *root;      /* <tmp>/root */
        char *cdi;       /* <tmp>/outside/cdi (for the outside scenario) */
        char *mig;       /* <tmp>/artifacts/mig.yaml: GPU 0 with two CIs in GI 2 (for the MIG scenario) */
} fx_t;

typedef enum scenario { S_CREATED, S_EMPTY_ROOT, S_UPDATE, S_OUTSIDE_CDI, S_MIG, S_VGPU_UPDATE, S_GPUDIRECT } scenario_t;

static const char *const scenario_names[] = { "created root", "empty root", "update 3 -> 1 GPUs",
                                               "CDI folder outside", "MIG layout", "update vm-vgpu sriov -> mdev",
                                               "container + GPUDirect + cc" };

static char *join(const char *a, const char *b)
{
        char *s = gv_path_join(a, b);
        assert_non_null(s);
        return s;
}

static void write_bytes(const char *path, size_t n)
{
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        /* a library-sized file, so that random kills land inside its copy too */
        for (size_t i = 0; i < n; i++)
                fputc((int) (i * 131u % 251u), f);
        assert_int_equal(fclose(f), 0);
}

/* A100 profile with MIG on GPU 0: GI 2 holding CIs 0 and 1 (capability files and nodes to make). */
static void write_mig_profile(const char *path)
{
        gv_mock_profile_t *p = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_profile_load_builtin("a100-sxm4-40gb", &p, &err), 0);
        gv_mock_device_t *d = &p->devices[0];
        d->mig_mode_current = d->mig_mode_pending = 1;
        d->mig_devices = calloc(2, sizeof(*d->mig_devices));
        assert_non_null(d->mig_devices);
        d->n_mig_devices = 2;
        for (unsigned i = 0; i < 2; i++) {
                d->mig_devices[i].profile = strdup("3g.20gb");
                d->mig_devices[i].ci_profile = strdup(i ? "2c.3g.20gb" : "1c.3g.20gb");
                d->mig_devices[i].gi_id = 2;
                d->mig_devices[i].ci_id = i;
                d->mig_devices[i].ci_slice_count = i + 1;
        }
        _cleanup_free_ char *yaml = NULL;
        if (gv_mock_profile_finalize(p, &err) < 0 || gv_mock_profile_to_yaml(p, &yaml, &err) < 0)
                fail_msg("profile to YAML: %s", err ? err->msg : "?");
        gv_mock_profile_free(&p);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(yaml, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
        fx_t *fx = calloc(1, sizeof(*fx));
        char tmpl[] = "/tmp/gv-mockcrash-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        fx->tmp = strdup(tmpl);
        _cleanup_free_ char *art = join(fx->tmp, "artifacts");
        assert_int_equal(mkdir(art, 0755), 0);
        fx->lib = join(art, "libnvidia-ml.so.1");
        fx->smi = join(art, "nvidia-smi");
        fx->root = join(fx->tmp, "root");
        fx->cdi = join(fx->tmp, "outside/cdi");
        write_bytes(fx->lib, 512 * 1024);
        write_bytes(fx->smi, 128 * 1024);
        fx->mig = join(art, "mig.yaml");
        write_mig_profile(fx->mig);
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        fx_t *fx = *state;
        scratch_rm_rf(fx->tmp);
        free(fx->tmp);
        free(fx->lib);
        free(fx->smi);
        free(fx->root);
        free(fx->cdi);
        free(fx->mig);
        free(fx);
        return 0;
}

/* ---- a picture of the scratch folder: path, type, mode, size, link target ---- */

static void walk(FILE *f, const char *top, const char *dir)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                _cleanup_free_ char *p = join(dir, de->d_name);
                struct stat st;
                assert_int_equal(lstat(p, &st), 0);
                char target[512] = "";
                if (S_ISLNK(st.st_mode)) {
                        ssize_t n = readlink(p, target, sizeof(target) - 1);
                        target[n > 0 ? n : 0] = '\0';
                }
                fprintf(f, "%s %o %lld %s\n", p + strlen(top), (unsigned) st.st_mode,
                        S_ISDIR(st.st_mode) ? 0LL : (long long) st.st_size, target);
                if (S_ISDIR(st.st_mode))
                        walk(f, top, p);
        }
        closedir(d);
}

static int line_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Sorted lines, one per path under fx->tmp. Caller frees. */
static char *snapshot(const fx_t *fx)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        assert_non_null(f);
        walk(f, fx->tmp, fx->tmp);
        assert_int_equal(fclose(f), 0);
        size_t n = 0;
        for (char *c = text; *c; c++)
                n += *c == '\n';
        char **lines = calloc(n + 1, sizeof(*lines));
        size_t k = 0;
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                lines[k++] = l;
        qsort(lines, k, sizeof(*lines), line_cmp);
        char *out = NULL;
        size_t olen = 0;
        FILE *o = open_memstream(&out, &olen);
        for (size_t i = 0; i < k; i++)
                fprintf(o, "%s\n", lines[i]);
        assert_int_equal(fclose(o), 0);
        free(lines);
        free(text);
        return out;
}

/* ---- installs ---- */

static gv_mock_install_opts_t opts(const fx_t *fx, scenario_t sc, bool second)
{
        return (gv_mock_install_opts_t){
                .root = fx->root,
                .profile = sc == S_MIG ? fx->mig : "a100-sxm4-40gb",
                .gpus = sc == S_UPDATE && !second ? 3 : (sc == S_UPDATE || sc >= S_VGPU_UPDATE ? 1 : 2),
                .node_name = "crash-node",
                .cdi_dir = sc == S_OUTSIDE_CDI ? fx->cdi : NULL,
                .device_nodes = GV_MOCK_NODES_FILES,
                .nvml_lib = fx->lib,
                .nvidia_smi = fx->smi,
                .workload = sc == S_VGPU_UPDATE ? GV_MOCK_WORKLOAD_VM_VGPU
                            : sc == S_GPUDIRECT ? GV_MOCK_WORKLOAD_CONTAINER
                                                : GV_MOCK_WORKLOAD_NONE,
                .vgpu_shape = sc == S_VGPU_UPDATE && !second ? GV_MOCK_VGPU_SRIOV : GV_MOCK_VGPU_MDEV,
                .gds = sc == S_GPUDIRECT,
                .gdrcopy = sc == S_GPUDIRECT,
                .rdma = sc == S_GPUDIRECT,
                .cc = sc == S_GPUDIRECT,
        };
}

static void install_ok(const gv_mock_install_opts_t *o)
{
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_mock_install(o, &res, &err) < 0)
                fail_msg("install failed: %s", err ? err->msg : "?");
        gv_mock_install_result_clear(&res);
}

static void kill_at_step(void *data, unsigned step)
{
        if (step == *(const unsigned *) data)
                raise(SIGKILL);
}

/*
 * Runs install in a child killed at @step (0: not by step) or after @delay_ns
 * (0: not by time).  Returns true when the child was killed, false when it
 * finished first.
 */
static bool crashed_install(const gv_mock_install_opts_t *o, unsigned step, long delay_ns)
{
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                gv_mock_install_opts_t co = *o;
                if (step) {
                        co.step_hook = kill_at_step;
                        co.step_data = &step;
                }
                gv_mock_install_result_t res = { 0 };
                gv_error_t *err = NULL;
                _exit(gv_mock_install(&co, &res, &err) < 0 ? 3 : 0);
        }
        if (delay_ns) {
                struct timespec ts = { .tv_sec = delay_ns / 1000000000L, .tv_nsec = delay_ns % 1000000000L };
                nanosleep(&ts, NULL);
                kill(pid, SIGKILL);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status)) {
                assert_int_equal(WTERMSIG(status), SIGKILL);
                return true;
        }
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        return false;
}

/* Brings the scratch folder to the scenario's starting point; returns its picture before any install. */
static char *prepare(const fx_t *fx, scenario_t sc)
{
        if (sc == S_EMPTY_ROOT)
                assert_int_equal(mkdir(fx->root, 0755), 0);
        if (sc == S_OUTSIDE_CDI) {
                _cleanup_free_ char *outside = join(fx->tmp, "outside");
                assert_int_equal(mkdir(outside, 0755), 0);
        }
        return snapshot(fx);
}

/* Back to the starting point of the next trial, checking that the folder is exactly as before. */
static void expect_as_before(const fx_t *fx, const char *before, const char *what, unsigned step, long delay)
{
        _cleanup_free_ char *after = snapshot(fx);
        if (strcmp(after, before) != 0)
                fail_msg("%s (step %u, delay %ld ns): the folder differs\nbefore:\n%s\nafter:\n%s", what, step, delay,
                         before, after);
}

/*
 * One trial: crash, then (recover_with_install) install + remove, or remove
 * alone; the folder must be as before.  Returns whether the child was killed.
 */
static bool trial(fx_t *fx, scenario_t sc, const char *before, unsigned step, long delay, bool recover_with_install,
                  long *took_ns)
{
        if (sc == S_UPDATE || sc == S_VGPU_UPDATE) {
                gv_mock_install_opts_t first = opts(fx, sc, false);
                install_ok(&first);
        }
        gv_mock_install_opts_t o = opts(fx, sc, true);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool killed = crashed_install(&o, step, delay);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (took_ns)
                *took_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
        if (recover_with_install)
                install_ok(&o);
        _cleanup_error_ gv_error_t *err = NULL;
        int r = gv_mock_remove(fx->root, NULL, NULL, &err);
        if (r < 0) {
                /* only when nothing of the install is there: killed before it wrote anything */
                _cleanup_free_ char *now = snapshot(fx);
                if (r != -ENOENT || strcmp(now, before) != 0)
                        fail_msg("%s, %s: remove after a kill (step %u, delay %ld ns) failed: %s", scenario_names[sc],
                                 recover_with_install ? "install+remove" : "remove", step, delay,
                                 err ? err->msg : "?");
        }
        expect_as_before(fx, before, scenario_names[sc], step, delay);
        return killed;
}

static void run_scenario(fx_t *fx, scenario_t sc)
{
        _cleanup_free_ char *before = prepare(fx, sc);
        /* every step, both ways of recovering */
        unsigned steps = 0;
        for (unsigned step = 1; step < 10000; step++) {
                bool a = trial(fx, sc, before, step, 0, true, NULL);
                bool b = trial(fx, sc, before, step, 0, false, NULL);
                assert_true(a == b);
                if (!a)
                        break;
                steps = step;
        }
        assert_true(steps >= 20); /* a layout has more changes than that */
        /* random times */
        const char *n_env = getenv("GV_CRASH_RANDOM_TRIALS");
        const char *seed_env = getenv("GV_CRASH_SEED");
        unsigned trials = n_env ? (unsigned) strtoul(n_env, NULL, 10) : 8;
        unsigned seed = seed_env ? (unsigned) strtoul(seed_env, NULL, 10) : 1;
        srand(seed + (unsigned) sc);
        /* how long one install (in a child) takes here, to spread the kills over it */
        long span = 0;
        trial(fx, sc, before, 0, 0, true, &span);
        unsigned killed = 0;
        for (unsigned i = 0; i < trials; i++) {
                long delay = 1 + (long) ((double) rand() / RAND_MAX * (double) span);
                killed += trial(fx, sc, before, 0, delay, i % 2 == 0, NULL);
        }
        printf("# %s: %u step kills x 2 recoveries, %u of %u random kills landed (seed %u)\n", scenario_names[sc],
               steps, killed, trials, seed);
}

static void test_crash_created_root(void **state)
{
        run_scenario(*state, S_CREATED);
}

static void test_crash_empty_root(void **state)
{
        run_scenario(*state, S_EMPTY_ROOT);
}

static void test_crash_update(void **state)
{
        run_scenario(*state, S_UPDATE);
}

static void test_crash_outside_cdi(void **state)
{
        run_scenario(*state, S_OUTSIDE_CDI);
}

static void test_crash_mig(void **state)
{
        fx_t *fx = *state;
        /* the layout does hold the MIG capabilities the kills land among */
        gv_mock_install_opts_t o = opts(fx, S_MIG, true);
        install_ok(&o);
        _cleanup_free_ char *cap = join(fx->root, "proc/driver/nvidia/capabilities/gpu0/mig/gi2/ci1/access");
        _cleanup_free_ char *node = join(fx->root, "dev/nvidia-caps/nvidia-cap23"); /* 3 + 2 * 9 + 1 + 1 */
        struct stat st;
        assert_int_equal(stat(cap, &st), 0);
        assert_int_equal(stat(node, &st), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        run_scenario(fx, S_MIG);
}

static void test_crash_vgpu_update(void **state)
{
        fx_t *fx = *state;
        /* the first install does lay out VFs, the second an mdev device instead */
        gv_mock_install_opts_t o = opts(fx, S_VGPU_UPDATE, false);
        install_ok(&o);
        _cleanup_free_ char *vf = join(fx->root, "sys/bus/pci/devices/0000:07:00.4/physfn");
        _cleanup_free_ char *mdev = join(fx->root, "sys/bus/mdev/devices");
        struct stat st;
        assert_int_equal(lstat(vf, &st), 0);
        o = opts(fx, S_VGPU_UPDATE, true);
        install_ok(&o);
        assert_int_equal(lstat(vf, &st), -1);
        assert_int_equal(stat(mdev, &st), 0);
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        run_scenario(fx, S_VGPU_UPDATE);
}

static void test_crash_gpudirect(void **state)
{
        run_scenario(*state, S_GPUDIRECT);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest workload_tests[] = {
                cmocka_unit_test_setup_teardown(test_crash_vgpu_update, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_gpudirect, setup, teardown),
        };
        if (argc > 1 && strcmp(argv[1], "workload") == 0)
                return cmocka_run_group_tests_name("mockroot-crash-workload", workload_tests, NULL, NULL);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_crash_created_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_empty_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_update, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_outside_cdi, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_mig, setup, teardown),
        };
        return cmocka_run_group_tests_name("mockroot-crash", tests, NULL, NULL);
}
