/* SPDX-License-Identifier: Apache-2.0 */
/* Marker names, KEY=value lists, and the shell-sourceable encoding checked against a real /bin/sh. */
#include <sys/wait.h>

#include "markers-test.h"

static const char *const hostile[] = {
        "plain",
        "/run/nvidia/driver",
        "it's",
        "''",
        "say \"hi\"",
        "two\nlines\n",
        "\n",
        "$(rm -rf /)",
        "`id`",
        "back\\slash\\",
        "\\'",
        "spaces  and\ttabs ",
        "",
        "gr\xc3\xbc\xc3\x9f\x65 \xe2\x9c\x93",
        "\xff\xfe raw",
        "a=b;c|d&e>f<g*h?[i]~j!k#l%m^{n}",
        "'\\''",
        "${HOME}",
        "-n",
        "trailing newline\n\n",
};

static void build_hostile(gv_kvlist_t *l)
{
        gv_error_t *e = NULL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(hostile); i++) {
                _cleanup_free_ char *k = NULL;
                assert_true(asprintf(&k, "V%zu", i) > 0);
                assert_int_equal(gv_kvlist_set(l, k, hostile[i], &e), 0);
        }
}

static void test_names(void **state)
{
        (void) state;
        for (int i = 0; i < GV_MARKER__MAX; i++) {
                gv_marker_id_t id = (gv_marker_id_t) i;
                assert_int_equal(gv_marker_by_file(gv_marker_file(id)), id);
                assert_int_equal(gv_marker_by_component(gv_marker_component(id)), id);
                assert_non_null(gv_marker_generation_key(id));
        }
        assert_string_equal(gv_marker_file(GV_MARKER_DRIVER), "driver-ready");
        assert_string_equal(gv_marker_file(GV_MARKER_HOST_DRIVER), "host-driver-ready");
        assert_string_equal(gv_marker_file(GV_MARKER_NVIDIA_PEERMEM), "nvidia-peermem-ready");
        assert_string_equal(gv_marker_component(GV_MARKER_TOOLKIT), "toolkit");
        assert_int_equal(gv_marker_parent(GV_MARKER_DRIVER), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_parent(GV_MARKER_HOST_DRIVER), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_parent(GV_MARKER_TOOLKIT), GV_MARKER_DRIVER);
        assert_int_equal(gv_marker_parent(GV_MARKER_CUDA), GV_MARKER_TOOLKIT);
        assert_int_equal(gv_marker_parent(GV_MARKER_PLUGIN), GV_MARKER_CUDA);
        assert_int_equal(gv_marker_parent(GV_MARKER_NVIDIA_FS), GV_MARKER_DRIVER);
        assert_int_equal(gv_marker_parent(GV_MARKER_GDRCOPY), GV_MARKER_DRIVER);
        assert_int_equal(gv_marker_parent(GV_MARKER_NVIDIA_PEERMEM), GV_MARKER_DRIVER);
        assert_string_equal(gv_marker_generation_key(GV_MARKER_DRIVER), "DRIVER_GENERATION");
        assert_string_equal(gv_marker_generation_key(GV_MARKER_TOOLKIT), "TOOLKIT_GENERATION");
        assert_string_equal(gv_marker_generation_key(GV_MARKER_CUDA), "CUDA_GENERATION");
        assert_int_equal(gv_marker_by_file("mofed-ready"), GV_MARKER_MOFED);
        assert_int_equal(gv_marker_by_file("metrics-ready"), GV_MARKER_INVALID);
        /* the sandbox chain (upstream's names) */
        assert_string_equal(gv_marker_file(GV_MARKER_VFIO_PCI), "vfio-pci-ready");
        assert_string_equal(gv_marker_file(GV_MARKER_HOST_VGPU_MANAGER), "host-vgpu-manager-ready");
        assert_string_equal(gv_marker_file(GV_MARKER_CC_MANAGER), "cc-manager-ready");
        assert_int_equal(gv_marker_parent(GV_MARKER_VGPU_DEVICES), GV_MARKER_VGPU_MANAGER);
        assert_int_equal(gv_marker_parent(GV_MARKER_VGPU_MANAGER), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_parent(GV_MARKER_VFIO_PCI), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_parent(GV_MARKER_MOFED), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_companion_of(GV_MARKER_HOST_VGPU_MANAGER), GV_MARKER_VGPU_MANAGER);
        assert_int_equal(gv_marker_companion_of(GV_MARKER_HOST_DRIVER), GV_MARKER_DRIVER);
        assert_int_equal(gv_marker_companion_of(GV_MARKER_DRIVER), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_companion(GV_MARKER_VGPU_MANAGER), GV_MARKER_HOST_VGPU_MANAGER);
        assert_int_equal(gv_marker_companion(GV_MARKER_DRIVER), GV_MARKER_HOST_DRIVER);
        assert_int_equal(gv_marker_companion(GV_MARKER_TOOLKIT), GV_MARKER_INVALID);
        assert_int_equal(gv_marker_by_component(NULL), GV_MARKER_INVALID);
        assert_null(gv_marker_file(GV_MARKER_INVALID));
        assert_null(gv_marker_file(GV_MARKER__MAX));
        assert_string_equal(gv_marker_state_name(GV_MARKER_INCONSISTENT), "inconsistent");
        assert_string_equal(gv_marker_state_name(GV_MARKER_FOREIGN), "foreign");
}

static void test_kvlist(void **state)
{
        (void) state;
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_kvlist_set(&l, "A", "1", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "B_2", "2", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "A", "3", &e), 0);
        assert_int_equal(l.n, 2);
        assert_string_equal(l.items[0].key, "A");
        assert_string_equal(gv_kvlist_get(&l, "A"), "3");
        assert_null(gv_kvlist_get(&l, "C"));
        assert_int_equal(gv_kvlist_set(&l, "lower", "x", &e), -EINVAL);
        assert_int_equal(e->reason, GV_REASON_CONFIG);
        gv_error_free(&e);
        assert_int_equal(gv_kvlist_set(&l, "1A", "x", &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(gv_kvlist_set(&l, "", "x", &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(gv_kvlist_set(&l, "A-B", "x", &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(l.n, 2);
        assert_true(gv_marker_key_valid("_X9"));
        assert_false(gv_marker_key_valid("X Y"));
        gv_kvlist_clear(&l);
        assert_int_equal(l.n, 0);
        assert_null(l.items);
        gv_kvlist_clear(&l);
}

static void test_encode_forms(void **state)
{
        (void) state;
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_kvlist_set(&l, "BARE", "a-Z_0.9/x:y@z+w=v", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "EMPTY", "", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "SPACE", "a b", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "QUOTE", "it's", &e), 0);
        assert_int_equal(gv_kvlist_set(&l, "NL", "a\nb", &e), 0);
        _cleanup_free_ char *out = NULL;
        assert_int_equal(gv_marker_encode(&l, &out, &e), 0);
        assert_string_equal(out, "BARE=a-Z_0.9/x:y@z+w=v\n"
                                 "EMPTY=''\n"
                                 "SPACE='a b'\n"
                                 "QUOTE='it'\\''s'\n"
                                 "NL='a\nb'\n");
        gv_kvlist_clear(&l);

        /* An empty list encodes to an empty string. */
        _cleanup_free_ char *none = NULL;
        assert_int_equal(gv_marker_encode(&l, &none, &e), 0);
        assert_string_equal(none, "");
}

static void test_roundtrip_hostile(void **state)
{
        (void) state;
        gv_kvlist_t l = { 0 }, back = { 0 };
        gv_error_t *e = NULL;
        build_hostile(&l);
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_marker_encode(&l, &text, &e), 0);
        int r = gv_marker_parse(text, strlen(text), &back, &e);
        if (r < 0)
                fprintf(stderr, "# %s\n", e->msg);
        assert_int_equal(r, 0);
        assert_int_equal(back.n, l.n);
        for (size_t i = 0; i < l.n; i++) {
                assert_string_equal(back.items[i].key, l.items[i].key);
                assert_string_equal(back.items[i].value, l.items[i].value);
        }
        gv_kvlist_clear(&l);
        gv_kvlist_clear(&back);
}

/* Run `sh -c script sh file` and return its stdout (heap) and length. */
static char *run_sh(const char *shell, const char *script, const char *file, size_t *len)
{
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(p[1], 1);
                close(p[0]);
                close(p[1]);
                /* argv[0] "sh": busybox picks its applet by it (bash then runs in POSIX mode, as sh). */
                execl(shell, "sh", "-c", script, "sh", file, (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        size_t cap = 4096, n = 0;
        char *buf = malloc(cap);
        assert_non_null(buf);
        for (;;) {
                if (n == cap) {
                        buf = realloc(buf, cap *= 2);
                        assert_non_null(buf);
                }
                ssize_t k = read(p[0], buf + n, cap - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        close(p[0]);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        *len = n;
        return buf;
}

static void check_with_shell(const char *shell, bool allexport)
{
        if (access(shell, X_OK) != 0) {
                fprintf(stderr, "# %s not found; skipped\n", shell);
                return;
        }
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        build_hostile(&l);
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_marker_encode(&l, &text, &e), 0);

        char tmpl[] = "/tmp/gv-marker-sh-XXXXXX";
        int fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        assert_int_equal(gv_write_all(fd, text, strlen(text)), 0);
        close(fd);

        /* `. file` then print every variable NUL-terminated (printf keeps trailing newlines). */
        char *script = NULL;
        size_t ss = 0;
        FILE *f = open_memstream(&script, &ss);
        assert_non_null(f);
        fputs(allexport ? "set -o allexport; . \"$1\" || exit 3; printf '%s\\0'" : ". \"$1\" || exit 3; printf '%s\\0'",
              f);
        for (size_t i = 0; i < l.n; i++)
                fprintf(f, " \"$%s\"", l.items[i].key);
        /* allexport: the child environment sees the same bytes */
        if (allexport)
                fprintf(f, "; env | grep -c '^V0=plain$' >/dev/null || exit 4");
        fclose(f);

        size_t n = 0;
        _cleanup_free_ char *out = run_sh(shell, script, tmpl, &n);
        unlink(tmpl);
        free(script);

        size_t off = 0;
        for (size_t i = 0; i < l.n; i++) {
                size_t want = strlen(l.items[i].value);
                assert_true(off + want < n + 1);
                if (memcmp(out + off, l.items[i].value, want) != 0 || out[off + want] != '\0')
                        fail_msg("%s: V%zu differs after sourcing", shell, i);
                off += want + 1;
        }
        assert_int_equal(off, n);
        gv_kvlist_clear(&l);
}

static void test_shell_sources_exact_bytes(void **state)
{
        (void) state;
        check_with_shell("/bin/sh", false);
        check_with_shell("/bin/sh", true);
        check_with_shell("/bin/dash", false);
        check_with_shell("/bin/bash", true);
        check_with_shell("/bin/busybox", false);
}

static void expect_parse_error(const char *text, size_t len, const char *needle)
{
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        int r = gv_marker_parse(text, len, &l, &e);
        if (r != -EINVAL)
                fail_msg("parse of \"%s\" gave %d, want -EINVAL", text, r);
        assert_non_null(e);
        assert_int_equal(e->reason, GV_REASON_CONFIG);
        if (needle && !strstr(e->msg, needle))
                fail_msg("message \"%s\" lacks \"%s\"", e->msg, needle);
        assert_int_equal(l.n, 0);
        assert_null(l.items);
        gv_error_free(&e);
}

static void test_parse_rejects(void **state)
{
        (void) state;
        const char *bad[] = {
                "K=$(rm -rf /)\n", "K=`id`\n", "K=a b\n", "K='abc\n", "lower=1\n", "NOEQUALS\n", "K=\"x\"\n",
                "K=a\\b\n", "=x\n", " K=x\n", "K=x\r\n", "K=$HOME\n", "K=a;b\n", "K=a|b\n", "K=x'\n",
                "A=1\nB=${x}\n", "K=\\\n",
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(bad); i++)
                expect_parse_error(bad[i], strlen(bad[i]), "line ");
        expect_parse_error("A=1\n\nB=2\nC=$x\n", 14, "line 4");
        expect_parse_error("A='x\ny'\nB=`z`\n", 14, "line 3");
        /* NUL bytes never make it into a value. */
        expect_parse_error("K='a\0b'\n", 8, "NUL");
        expect_parse_error("K=a\0b\n", 6, NULL);
        expect_parse_error("K\0=a\n", 5, NULL);

        /* A non-empty output list is refused and left alone. */
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_kvlist_set(&l, "X", "1", &e), 0);
        assert_int_equal(gv_marker_parse("A=1\n", 4, &l, &e), -EINVAL);
        gv_error_free(&e);
        assert_int_equal(l.n, 1);
        gv_kvlist_clear(&l);
}

static void test_parse_accepts(void **state)
{
        (void) state;
        /* Upstream's driver-ready, comments, blank lines, no final newline, duplicate (last wins as in sh). */
        const char *text = "# written by hand\n"
                           "IS_HOST_DRIVER=true\n"
                           "NVIDIA_DRIVER_ROOT=/\n"
                           "   \n"
                           "\n"
                           "DRIVER_ROOT_CTR_PATH=/host\n"
                           "EMPTY=\n"
                           "Q=''\n"
                           "MIX=ab'c d'\\''e'f\n"
                           "IS_HOST_DRIVER=false";
        gv_kvlist_t l = { 0 };
        gv_error_t *e = NULL;
        assert_int_equal(gv_marker_parse(text, strlen(text), &l, &e), 0);
        assert_int_equal(l.n, 6);
        assert_string_equal(gv_kvlist_get(&l, "IS_HOST_DRIVER"), "false");
        assert_string_equal(gv_kvlist_get(&l, "NVIDIA_DRIVER_ROOT"), "/");
        assert_string_equal(gv_kvlist_get(&l, "EMPTY"), "");
        assert_string_equal(gv_kvlist_get(&l, "Q"), "");
        assert_string_equal(gv_kvlist_get(&l, "MIX"), "abc d'ef");
        gv_kvlist_clear(&l);

        assert_int_equal(gv_marker_parse("", 0, &l, &e), 0);
        assert_int_equal(l.n, 0);
        assert_int_equal(gv_marker_parse(NULL, 0, &l, &e), 0);
        assert_int_equal(gv_marker_parse("\n\n# x\n", 6, &l, &e), 0);
        assert_int_equal(l.n, 0);
}

static void test_encode_rejects_bad_key(void **state)
{
        (void) state;
        gv_kv_t item = { .key = (char *) "bad key", .value = (char *) "x" };
        gv_kvlist_t l = { .n = 1, .items = &item };
        gv_error_t *e = NULL;
        char *out = (char *) 0x1;
        assert_int_equal(gv_marker_encode(&l, &out, &e), -EINVAL);
        assert_ptr_equal(out, (char *) 0x1);
        gv_error_free(&e);
}

static void test_generation(void **state)
{
        (void) state;
        char a[GV_GENERATION_HEX_LEN + 1], b[GV_GENERATION_HEX_LEN + 1];
        assert_int_equal(gv_generation_new(a), 0);
        assert_int_equal(gv_generation_new(b), 0);
        assert_int_equal(strlen(a), GV_GENERATION_HEX_LEN);
        assert_int_equal(strspn(a, "0123456789abcdef"), GV_GENERATION_HEX_LEN);
        assert_string_not_equal(a, b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_kvlist),
                cmocka_unit_test(test_encode_forms),
                cmocka_unit_test(test_roundtrip_hostile),
                cmocka_unit_test(test_shell_sources_exact_bytes),
                cmocka_unit_test(test_parse_rejects),
                cmocka_unit_test(test_parse_accepts),
                cmocka_unit_test(test_encode_rejects_bad_key),
                cmocka_unit_test(test_generation),
        };
        return cmocka_run_group_tests_name("markers-content", tests, NULL, NULL);
}
