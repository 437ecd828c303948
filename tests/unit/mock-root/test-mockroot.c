/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of mock/root: install layout, manifest, idempotent update,
 * refusal of foreign folders, and remove deleting exactly what install made.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <yaml.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/mock.h"
#include "mock/root/ldcache.h"

#include "../scratch.h"

typedef struct fx {
        char *tmp;      /* scratch folder */
        char *lib, *smi; /* fake artifacts */
        char *root;     /* <tmp>/root (absent at start) */
} fx_t;

static char *join(const char *a, const char *b)
{
        char *s = gv_path_join(a, b);
        assert_non_null(s);
        return s;
}

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int setup(void **state)
{
        fx_t *fx = calloc(1, sizeof(*fx));
        char tmpl[] = "/tmp/gv-mockroot-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        fx->tmp = strdup(tmpl);
        fx->lib = join(fx->tmp, "libnvidia-ml.so.1");
        fx->smi = join(fx->tmp, "nvidia-smi");
        fx->root = join(fx->tmp, "root");
        write_text(fx->lib, "fake library\n");
        write_text(fx->smi, "#!/bin/sh\necho fake\n");
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
        free(fx);
        return 0;
}

static gv_mock_install_opts_t opts(const fx_t *fx, unsigned gpus)
{
        return (gv_mock_install_opts_t){
                .root = fx->root,
                .profile = "a100-sxm4-40gb",
                .gpus = gpus,
                .node_name = "unit-node",
                .device_nodes = GV_MOCK_NODES_FILES,
                .nvml_lib = fx->lib,
                .nvidia_smi = fx->smi,
        };
}

static bool exists_under(const char *root, const char *rel)
{
        _cleanup_free_ char *p = join(root, rel);
        struct stat st;
        return lstat(p, &st) == 0;
}

static void test_install_layout_and_remove(void **state)
{
        fx_t *fx = *state;
        gv_mock_install_opts_t o = opts(fx, 2);
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        assert_int_equal(res.gpu_count, 2);
        assert_int_equal(res.device_nodes, GV_MOCK_NODES_FILES);
        assert_false(res.updated);
        assert_string_equal(res.profile_name, "a100-sxm4-40gb");
        assert_string_equal(res.node_name, "unit-node");

        _cleanup_free_ char *lib = NULL;
        assert_true(asprintf(&lib, "usr/lib64/libnvidia-ml.so.%s", res.driver_version) > 0);
        const char *want[] = { lib, "usr/lib64/libnvidia-ml.so.1", "usr/lib64/libnvidia-ml.so",
                               "usr/lib64/" GV_MOCK_ROOT_PROFILE_NAME, "usr/bin/nvidia-smi",
                               "proc/driver/nvidia/version", "dev/nvidiactl", "dev/nvidia0", "dev/nvidia1",
                               "dev/nvidia-uvm", "dev/nvidia-uvm-tools", "etc/cdi/" GV_MOCK_CDI_SPEC_NAME,
                               GV_MOCK_MANIFEST_NAME };
        for (size_t i = 0; i < GV_ARRAY_SIZE(want); i++)
                if (!exists_under(fx->root, want[i]))
                        fail_msg("missing %s", want[i]);
        assert_false(exists_under(fx->root, "dev/nvidia2"));

        char target[256];
        _cleanup_free_ char *l1 = join(fx->root, "usr/lib64/libnvidia-ml.so.1");
        ssize_t n = readlink(l1, target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_string_equal(target, lib + strlen("usr/lib64/"));

        gv_mock_root_info_t info;
        assert_true(gv_mock_root_detect(fx->root, &info));
        assert_int_equal(info.device_nodes, GV_MOCK_NODES_FILES);
        assert_int_equal(info.gpu_count, 2);
        assert_string_equal(info.profile, "a100-sxm4-40gb");

        unsigned removed = 0, kept = 0;
        assert_int_equal(gv_mock_remove(fx->root, &removed, &kept, &err), 0);
        assert_int_equal(kept, 0);
        assert_true(removed > 10);
        struct stat st;
        assert_int_equal(lstat(fx->root, &st), -1); /* install created the root, remove took it away */
        gv_mock_install_result_clear(&res);
}

static void test_reinstall_updates_and_drops_stale(void **state)
{
        fx_t *fx = *state;
        gv_mock_install_opts_t o = opts(fx, 4);
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        gv_mock_install_result_clear(&res);
        assert_true(exists_under(fx->root, "dev/nvidia3"));
        /* Same options again: succeeds, marked as an update. */
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        assert_true(res.updated);
        gv_mock_install_result_clear(&res);
        /* Fewer GPUs: the surplus nodes go. */
        o.gpus = 1;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        assert_int_equal(res.gpu_count, 1);
        gv_mock_install_result_clear(&res);
        assert_true(exists_under(fx->root, "dev/nvidia0"));
        assert_false(exists_under(fx->root, "dev/nvidia1"));
        assert_false(exists_under(fx->root, "dev/nvidia3"));
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        assert_false(exists_under(fx->tmp, "root"));
}

static void test_refuses_foreign_folder(void **state)
{
        fx_t *fx = *state;
        assert_int_equal(mkdir(fx->root, 0755), 0);
        _cleanup_free_ char *mine = join(fx->root, "precious.txt");
        write_text(mine, "keep me\n");
        gv_mock_install_opts_t o = opts(fx, 1);
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), -ENOTEMPTY);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "not a mock driver root"));
        assert_true(exists_under(fx->root, "precious.txt"));
        assert_false(exists_under(fx->root, "usr"));
        gv_error_free(&err);
        /* remove refuses too: no manifest. */
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), -ENOENT);
        assert_true(exists_under(fx->root, "precious.txt"));
}

static void test_preexisting_empty_root_is_kept(void **state)
{
        fx_t *fx = *state;
        assert_int_equal(mkdir(fx->root, 0755), 0);
        gv_mock_install_opts_t o = opts(fx, 1);
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        gv_mock_install_result_clear(&res);
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        struct stat st;
        assert_int_equal(lstat(fx->root, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(rmdir(fx->root), 0); /* and it is empty */
}

static void test_remove_leaves_changed_and_foreign_entries(void **state)
{
        fx_t *fx = *state;
        gv_mock_install_opts_t o = opts(fx, 1);
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        gv_mock_install_result_clear(&res);
        /* A user replaced the .so link by a real file and added a file of their own. */
        _cleanup_free_ char *link = join(fx->root, "usr/lib64/libnvidia-ml.so");
        assert_int_equal(unlink(link), 0);
        write_text(link, "user file\n");
        _cleanup_free_ char *extra = join(fx->root, "usr/bin/mine");
        write_text(extra, "mine\n");
        unsigned removed = 0, kept = 0;
        assert_int_equal(gv_mock_remove(fx->root, &removed, &kept, &err), 0);
        assert_true(kept >= 1);
        assert_true(exists_under(fx->root, "usr/lib64/libnvidia-ml.so"));
        assert_true(exists_under(fx->root, "usr/bin/mine"));
        assert_false(exists_under(fx->root, "usr/bin/nvidia-smi"));
        assert_false(exists_under(fx->root, GV_MOCK_MANIFEST_NAME));
}

static void test_tampered_manifest_cannot_escape(void **state)
{
        fx_t *fx = *state;
        assert_int_equal(mkdir(fx->root, 0755), 0);
        _cleanup_free_ char *outside = join(fx->tmp, "outside.txt");
        write_text(outside, "outside\n");
        _cleanup_free_ char *manifest = join(fx->root, GV_MOCK_MANIFEST_NAME);
        write_text(manifest, "{\"kind\": \"gpu-validator-mock-root\", \"version\": 1, \"cdi_spec\": \"/nowhere/x.yaml\","
                             " \"entries\": [{\"path\": \"../outside.txt\", \"type\": \"file\"},"
                             " {\"path\": \"/etc/hostname\", \"type\": \"file\"}]}");
        unsigned removed = 0, kept = 0;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_remove(fx->root, &removed, &kept, &err), 0);
        assert_int_equal(kept, 2);
        assert_int_equal(removed, 0);
        struct stat st;
        assert_int_equal(stat(outside, &st), 0);
}

static void test_bad_profile_names_file_line_field(void **state)
{
        fx_t *fx = *state;
        _cleanup_free_ char *bad = join(fx->tmp, "bad.yaml");
        write_text(bad, "schema: gpu-validator/mock-nvml/v1\nname: bad\ndriver:\n  version: \"550.163.01\"\n"
                        "  cuda_version: \"12.4\"\ngpu_count: 1\ngpu:\n  name: \"X\"\n  memory_mib: lots\n");
        gv_mock_install_opts_t o = opts(fx, 0);
        o.profile = bad;
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_true(gv_mock_install(&o, &res, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "bad.yaml:9"));
        assert_non_null(strstr(err->msg, "memory_mib"));
        assert_false(exists_under(fx->tmp, "root"));
        gv_error_free(&err);
        o.profile = "no-such-profile";
        assert_true(gv_mock_install(&o, &res, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
}

static void test_char_nodes_or_fallback(void **state)
{
        fx_t *fx = *state;
        gv_mock_install_opts_t o = opts(fx, 1);
        o.device_nodes = GV_MOCK_NODES_CHAR;
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        _cleanup_free_ char *ctl = join(fx->root, "dev/nvidiactl");
        struct stat st;
        assert_int_equal(lstat(ctl, &st), 0);
        if (res.device_nodes == GV_MOCK_NODES_CHAR) {
                assert_true(S_ISCHR(st.st_mode));
                assert_int_equal(major(st.st_rdev), GV_MOCK_NVIDIA_MAJOR);
                assert_int_equal(minor(st.st_rdev), GV_MOCK_NVIDIACTL_MINOR);
        } else {
                assert_true(res.device_nodes_fallback);
                assert_true(S_ISREG(st.st_mode));
        }
        gv_mock_root_info_t info;
        assert_true(gv_mock_root_detect(fx->root, &info));
        assert_int_equal(info.device_nodes, res.device_nodes);
        gv_mock_install_result_clear(&res);
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        assert_false(exists_under(fx->tmp, "root"));
}

/* Every hostPath value of the CDI spec at @spec, read with libyaml (a NULL-terminated heap list). */
static char **cdi_host_paths(const char *spec)
{
        FILE *f = fopen(spec, "re");
        assert_non_null(f);
        yaml_parser_t parser;
        yaml_document_t doc;
        assert_true(yaml_parser_initialize(&parser));
        yaml_parser_set_input_file(&parser, f);
        if (!yaml_parser_load(&parser, &doc))
                fail_msg("%s does not parse: %s (line %lu)", spec, parser.problem ? parser.problem : "?",
                         (unsigned long) parser.problem_mark.line + 1);
        yaml_parser_delete(&parser);
        fclose(f);
        size_t n = 0;
        char **out = calloc(256, sizeof(*out));
        for (yaml_node_t *m = doc.nodes.start; m < doc.nodes.top; m++) {
                if (m->type != YAML_MAPPING_NODE)
                        continue;
                for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(&doc, p->key), *v = yaml_document_get_node(&doc, p->value);
                        if (k && v && v->type == YAML_SCALAR_NODE &&
                            strcmp((const char *) k->data.scalar.value, "hostPath") == 0 && n < 255)
                                out[n++] = strdup((const char *) v->data.scalar.value);
                }
        }
        yaml_document_delete(&doc);
        return out;
}

/*
 * A root path with a newline (and quotes, a backslash, a
 * tab, non-ASCII letters) must come back from the CDI spec byte for byte; a
 * path YAML cannot hold (not UTF-8) is refused before anything is written.
 */
static void test_cdi_host_paths_survive_any_root_name(void **state)
{
        fx_t *fx = *state;
        _cleanup_free_ char *odd = join(fx->tmp, "a\nb \"c\" \\d\te' \xc3\xa9\x7f");
        gv_mock_install_opts_t o = opts(fx, 2);
        o.root = odd;
        gv_mock_install_result_t res = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_install(&o, &res, &err), 0);
        char **paths = cdi_host_paths(res.cdi_spec);
        size_t n = 0;
        for (; paths[n]; n++) {
                if (strncmp(paths[n], odd, strlen(odd)) != 0 || paths[n][strlen(odd)] != '/')
                        fail_msg("hostPath \"%s\" does not start with the root \"%s\"", paths[n], odd);
                free(paths[n]);
        }
        free(paths);
        assert_true(n >= 5);
        gv_mock_install_result_clear(&res);
        assert_int_equal(gv_mock_remove(odd, NULL, NULL, &err), 0);
        assert_false(exists_under(fx->tmp, "a\nb \"c\" \\d\te' \xc3\xa9\x7f"));

        _cleanup_free_ char *bad = join(fx->tmp, "not-utf8-\xff");
        o.root = bad;
        assert_int_equal(gv_mock_install(&o, &res, &err), -EINVAL);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "UTF-8"));
        assert_false(exists_under(fx->tmp, "not-utf8-\xff"));
}

/* glibc's _dl_cache_libcmp order and the cache layout ld.so and ldconfig -p read (ldcache.h). */
static void test_ldcache_format(void **state)
{
        (void) state;
        assert_true(mr_ldcache_libcmp("libcuda.so.10", "libcuda.so.9") > 0); /* numbers, not characters */
        assert_true(mr_ldcache_libcmp("libcuda.so.1", "libcuda.so.1") == 0);
        assert_true(mr_ldcache_libcmp("libcuda.so", "libcuda.so.1") < 0);
        assert_true(mr_ldcache_libcmp("libnvidia-ml.so.1", "libcuda.so.1") > 0);
        const mr_ldcache_lib_t libs[] = { { "libcuda.so.1", "/usr/lib64/libcuda.so.1" },
                                          { "libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1" } };
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        assert_int_equal(mr_ldcache_build(libs, 2, &buf, &len), 0);
        assert_memory_equal(buf, "glibc-ld.so.cache1.1", 20);
        uint32_t nlibs, strings, key0, val0, key1;
        memcpy(&nlibs, buf + 20, 4);
        memcpy(&strings, buf + 24, 4);
        assert_int_equal(nlibs, 2);
        assert_int_equal(len, 48 + 2 * 24 + strings);
        memcpy(&key0, buf + 48 + 4, 4);
        memcpy(&val0, buf + 48 + 8, 4);
        memcpy(&key1, buf + 48 + 24 + 4, 4);
        /* descending order: libnvidia-ml first; offsets from the start of the file */
        assert_string_equal(buf + key0, "libnvidia-ml.so.1");
        assert_string_equal(buf + val0, "/usr/lib64/libnvidia-ml.so.1");
        assert_string_equal(buf + key1, "libcuda.so.1");
        const mr_ldcache_lib_t bad[] = { { "", "/x" } };
        _cleanup_free_ char *none = NULL;
        assert_int_equal(mr_ldcache_build(bad, 1, &none, &len), -EINVAL);
}

static void test_locate_artifacts(void **state)
{
        fx_t *fx = *state;
        gv_mock_artifacts_t a = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_locate_artifacts("/nonexistent/bin", fx->tmp, &a, &err), 0);
        assert_non_null(strstr(a.nvml_lib, "libnvidia-ml.so.1"));
        gv_mock_artifacts_clear(&a);
        assert_int_equal(gv_mock_locate_artifacts("/nonexistent/bin", NULL, &a, &err), -ENOENT);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "/nonexistent/bin/../lib/gpu-validator/libnvidia-ml.so.1"));
}

static void test_workload_names(void **state)
{
        (void) state;
        static const char *const names[] = { "container", "vm-passthrough", "vm-vgpu" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++) {
                gv_mock_workload_t w = GV_MOCK_WORKLOAD_NONE;
                assert_int_equal(gv_mock_workload_parse(names[i], &w), 0);
                assert_string_equal(gv_mock_workload_name(w), names[i]);
        }
        gv_mock_workload_t w = GV_MOCK_WORKLOAD_NONE;
        assert_int_equal(gv_mock_workload_parse("none", &w), -EINVAL); /* "none" is no workload to ask for */
        assert_int_equal(gv_mock_workload_parse("VM-VGPU", &w), -EINVAL);
        assert_int_equal(gv_mock_workload_parse("", &w), -EINVAL);
        assert_int_equal(gv_mock_workload_parse(NULL, &w), -EINVAL);
        assert_int_equal(w, GV_MOCK_WORKLOAD_NONE);
}

/* Workload options the library refuses before it touches anything (the CLI is not the only caller). */
static void test_workload_bad_options_touch_nothing(void **state)
{
        fx_t *fx = *state;
        static const char *const bad_module[] = { "nvidia_fs", "../../etc", NULL };
        gv_mock_install_opts_t cases[4];
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++)
                cases[i] = opts(fx, 1);
        cases[0].workload = GV_MOCK_WORKLOAD_VM_PASSTHROUGH; /* GPUDirect needs the driver container */
        cases[0].rdma = true;
        cases[1].vgpu_shape = GV_MOCK_VGPU_SRIOV;            /* a shape without vm-vgpu */
        cases[2].workload = GV_MOCK_WORKLOAD_CONTAINER;      /* a module name that is a path */
        cases[2].omit_modules = bad_module;
        cases[3].workload = (gv_mock_workload_t) 7;          /* not a workload */
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                gv_mock_install_result_t res = { 0 };
                _cleanup_error_ gv_error_t *err = NULL;
                assert_int_equal(gv_mock_install(&cases[i], &res, &err), -EINVAL);
                assert_non_null(err);
                assert_int_equal(err->reason, GV_REASON_CONFIG);
                assert_false(exists_under(fx->tmp, "root"));
        }
}

/* What the result and the manifest say was laid out; none of it without the options. */
static void test_workload_described_in_result_and_manifest(void **state)
{
        fx_t *fx = *state;
        static const char *const omit[] = { "gdrdrv", NULL };
        const struct {
                gv_mock_workload_t w;
                gv_mock_vgpu_shape_t shape;
                bool gds, gdrcopy, rdma, cc;
                const char *const *omit;
                const char *want; /* NULL: no workload */
        } cases[] = {
                { GV_MOCK_WORKLOAD_NONE, GV_MOCK_VGPU_MDEV, false, false, false, false, NULL, NULL },
                { GV_MOCK_WORKLOAD_VM_VGPU, GV_MOCK_VGPU_SRIOV, false, false, false, false, NULL, "vm-vgpu/sriov" },
                { GV_MOCK_WORKLOAD_VM_VGPU, GV_MOCK_VGPU_MDEV, false, false, false, true, NULL, "vm-vgpu/mdev+cc" },
                { GV_MOCK_WORKLOAD_NONE, GV_MOCK_VGPU_MDEV, true, true, false, false, omit, "container+gds+gdrcopy" },
                { GV_MOCK_WORKLOAD_NONE, GV_MOCK_VGPU_MDEV, false, false, false, true, NULL, "cc" },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(cases); i++) {
                gv_mock_install_opts_t o = opts(fx, 1);
                o.workload = cases[i].w;
                o.vgpu_shape = cases[i].shape;
                o.gds = cases[i].gds;
                o.gdrcopy = cases[i].gdrcopy;
                o.rdma = cases[i].rdma;
                o.cc = cases[i].cc;
                o.omit_modules = cases[i].omit;
                gv_mock_install_result_t res = { 0 };
                _cleanup_error_ gv_error_t *err = NULL;
                assert_int_equal(gv_mock_install(&o, &res, &err), 0);
                _cleanup_free_ char *manifest = NULL;
                assert_int_equal(gv_read_file_at(AT_FDCWD, res.manifest, false, 1 << 20, &manifest, NULL, &err), 0);
                _cleanup_free_ char *key = NULL;
                assert_true(asprintf(&key, "\"workload\": \"%s\"", cases[i].want ? cases[i].want : "") > 0);
                if (cases[i].want) {
                        assert_non_null(res.workload);
                        assert_string_equal(res.workload, cases[i].want);
                        assert_non_null(strstr(manifest, key));
                } else {
                        assert_null(res.workload);
                        assert_null(strstr(manifest, "\"workload\""));
                }
                /* the module left out is absent, the one beside it is there */
                assert_int_equal(exists_under(fx->root, "sys/module/gdrdrv"), cases[i].gdrcopy && !cases[i].omit);
                assert_int_equal(exists_under(fx->root, "sys/module/nvidia_fs"), cases[i].gds);
                gv_mock_install_result_clear(&res);
        }
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_mock_remove(fx->root, NULL, NULL, &err), 0);
        assert_false(exists_under(fx->tmp, "root"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_install_layout_and_remove, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reinstall_updates_and_drops_stale, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refuses_foreign_folder, setup, teardown),
                cmocka_unit_test_setup_teardown(test_preexisting_empty_root_is_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_remove_leaves_changed_and_foreign_entries, setup, teardown),
                cmocka_unit_test_setup_teardown(test_tampered_manifest_cannot_escape, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_profile_names_file_line_field, setup, teardown),
                cmocka_unit_test_setup_teardown(test_char_nodes_or_fallback, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cdi_host_paths_survive_any_root_name, setup, teardown),
                cmocka_unit_test_setup_teardown(test_locate_artifacts, setup, teardown),
                cmocka_unit_test(test_ldcache_format),
                cmocka_unit_test(test_workload_names),
                cmocka_unit_test_setup_teardown(test_workload_bad_options_touch_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workload_described_in_result_and_manifest, setup, teardown),
        };
        return cmocka_run_group_tests_name("mockroot", tests, NULL, NULL);
}
