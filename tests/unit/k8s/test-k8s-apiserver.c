/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integration test of the Kubernetes client against the real kube-apiserver
 * (tests/k8s/cfixture.py: the control plane of $GV_K8S_STATE, or one started
 * for this test, a fresh namespace, the fault proxy in front of the server,
 * a passive test kubelet for the first Node).  The client under test talks
 * through the fault proxy (its request log, its faults); what others do in
 * the cluster (a pod's status, a second writer) goes straight to the server
 * as the admin.  Only frequent watch BOOKMARKs (kube-apiserver sends them
 * about once a minute, not on demand) come from the Python stand-in
 * (tests/apiserver/server.py).  Skipped with the fixture's reason when no
 * control plane can be had (no Go outside CI), and when GV_SOURCE_DIR is unset.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "k8s/k8s.h"

#define TOKEN "gv-S3CRET-token-0123456789"
#define FIXTURE_START_S 240 /* a control plane started by the fixture: 15-20 s, more on a busy machine */

typedef struct logcap {
        char *lines[4096];
        size_t n;
} logcap_t;

/* tests/apiserver/server.py, for what the real server does not do on demand. */
typedef struct server {
        pid_t pid;
        char *dir;
        char *kubeconfig;
        int port;
} server_t;

typedef struct fixture {
        pid_t pid;             /* tests/k8s/cfixture.py */
        int pipe_w;            /* its stdin: it ends when this closes */
        char *dir;             /* our temporary folder */
        char *skip;            /* why the real server cannot be had here, or NULL */
        char *ns, *node_a, *node_b, *proxy, *kubeconfig_direct;
        gv_k8s_client_t *c;   /* the client under test: through the fault proxy, the admin's token */
        gv_k8s_client_t *ctl; /* the fixture's control API */
        gv_k8s_client_t *adm; /* the admin, straight to the server: what others do */
        logcap_t log;
        volatile sig_atomic_t stop;
} fixture_t;

static void capture(void *ud, gv_log_level_t level, const char *component, const char *reason, const char *msg)
{
        logcap_t *l = ud;
        if (l->n < GV_ARRAY_SIZE(l->lines))
                l->lines[l->n++] = strdup(msg);
}

static void logcap_clear(logcap_t *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->lines[i]);
        l->n = 0;
}

static bool logged(fixture_t *f, const char *a, const char *b)
{
        for (size_t i = 0; i < f->log.n; i++)
                if (strstr(f->log.lines[i], a) && (!b || strstr(f->log.lines[i], b)))
                        return true;
        return false;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* printf into a new string (heap). */
static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = NULL;
        int r = vasprintf(&s, fmt, ap);
        va_end(ap);
        assert_true(r >= 0);
        return s;
}

static const char *jstr(json_object *o, const char *a, const char *b)
{
        json_object *x = NULL, *y = NULL;
        if (!json_object_object_get_ex(o, a, &x))
                return NULL;
        if (!b)
                return json_object_get_string(x);
        if (!json_object_object_get_ex(x, b, &y))
                return NULL;
        return json_object_get_string(y);
}

static gv_k8s_client_t *client_for(const char *kubeconfig, const gv_k8s_options_t *opts)
{
        gv_k8s_config_t *cfg = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_k8s_config_from_kubeconfig(kubeconfig, NULL, &cfg, &err) < 0)
                fail_msg("kubeconfig: %s", err->msg);
        gv_k8s_client_t *c = NULL;
        if (gv_k8s_client_new(cfg, opts, &c, &err) < 0)
                fail_msg("client: %s", err->msg);
        return c;
}

static gv_k8s_client_t *client_at(const char *server, const char *token, const gv_k8s_options_t *opts)
{
        gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        assert_non_null(cfg);
        cfg->server = strdup(server);
        cfg->token = token ? strdup(token) : NULL;
        gv_k8s_client_t *c = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_k8s_client_new(cfg, opts, &c, &err) < 0)
                fail_msg("client: %s", err->msg);
        return c;
}

/* ---- the stand-in (tests/apiserver/server.py) ------------------------------------------ */

/* Start server.py; returns 0, or 77 when it cannot run here. */
static int server_start(server_t *s, const char *extra)
{
        const char *src = getenv("GV_SOURCE_DIR");
        assert_non_null(src);
        s->dir = strdup("/tmp/gv-k8s-it-XXXXXX");
        assert_non_null(s->dir);
        assert_non_null(mkdtemp(s->dir));
        _cleanup_free_ char *script = gv_path_join(src, "tests/apiserver/server.py");
        _cleanup_free_ char *portf = gv_path_join(s->dir, "port");
        s->kubeconfig = gv_path_join(s->dir, "kubeconfig");
        char ppid[24];
        snprintf(ppid, sizeof(ppid), "%d", (int) getpid());
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                const char *argv[] = { "python3", script, "--port", "0", "--write-port-file", portf, "--write-kubeconfig",
                                       s->kubeconfig, "--token", TOKEN, "--namespace", "gpu-operator", "--bookmark-ms",
                                       "200", "--parent-pid", ppid, "--max-lifetime", "300", extra, NULL };
                execvp("python3", (char *const *) argv);
                _exit(127);
        }
        s->pid = pid;
        for (int i = 0; i < 400; i++) {
                _cleanup_free_ char *data = NULL;
                if (gv_read_file_at(AT_FDCWD, portf, false, 64, &data, NULL, NULL) == 0) {
                        s->port = atoi(data);
                        return 0;
                }
                int st;
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        s->pid = 0;
                        if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
                                return 77;
                        fail_msg("test apiserver exited early (status %d)", st);
                }
                usleep(25000);
        }
        fail_msg("test apiserver did not start in 10 s");
        return -1;
}

static void server_stop(server_t *s)
{
        if (s->pid > 0) {
                kill(s->pid, SIGTERM);
                waitpid(s->pid, NULL, 0);
        }
        if (s->dir) {
                const char *names[] = { "port", "kubeconfig" };
                for (size_t i = 0; i < GV_ARRAY_SIZE(names); i++) {
                        _cleanup_free_ char *p = gv_path_join(s->dir, names[i]);
                        unlink(p);
                }
                rmdir(s->dir);
        }
        free(s->dir);
        free(s->kubeconfig);
        memset(s, 0, sizeof(*s));
}

/* ---- the real server (tests/k8s/cfixture.py) -------------------------------------------- */

static char *info_str(json_object *info, const char *key)
{
        const char *v = jstr(info, key, NULL);
        if (!v)
                fail_msg("tests/k8s/cfixture.py: no \"%s\" in its info", key);
        return strdup(v);
}

/* Start cfixture.py and read its info file; the fixture ends when f->pipe_w closes. */
static void fixture_start(fixture_t *f)
{
        const char *src = getenv("GV_SOURCE_DIR");
        f->dir = strdup("/tmp/gv-k8s-it-XXXXXX");
        assert_non_null(f->dir);
        assert_non_null(mkdtemp(f->dir));
        _cleanup_free_ char *script = gv_path_join(src, "tests/k8s/cfixture.py");
        _cleanup_free_ char *infof = gv_path_join(f->dir, "info.json");
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(p[0], STDIN_FILENO);
                execlp("python3", "python3", script, infof, (char *) NULL);
                _exit(127);
        }
        close(p[0]);
        f->pid = pid;
        f->pipe_w = p[1];
        for (int i = 0; i < FIXTURE_START_S * 10; i++) {
                _cleanup_free_ char *data = NULL;
                if (gv_read_file_at(AT_FDCWD, infof, false, 1 << 16, &data, NULL, NULL) == 0) {
                        _cleanup_json_ json_object *info = json_tokener_parse(data);
                        assert_non_null(info);
                        if (jstr(info, "skip", NULL)) {
                                f->skip = info_str(info, "skip");
                                f->skip[strcspn(f->skip, "\n")] = '\0'; /* its first line: TAP comments are lines */
                                return;
                        }
                        f->ns = info_str(info, "namespace");
                        f->node_a = info_str(info, "node_a");
                        f->node_b = info_str(info, "node_b");
                        f->proxy = info_str(info, "proxy");
                        _cleanup_free_ char *kc = info_str(info, "kubeconfig");
                        f->kubeconfig_direct = info_str(info, "kubeconfig_direct");
                        _cleanup_free_ char *control = info_str(info, "control");
                        gv_k8s_options_t o = { .timeout_s = 10, .max_attempts = 4, .max_retry_s = 20,
                                               .backoff_initial_ms = 50, .backoff_max_ms = 2000, .log = capture,
                                               .log_userdata = &f->log, .stop = &f->stop };
                        f->c = client_for(kc, &o);
                        f->adm = client_for(f->kubeconfig_direct, &(gv_k8s_options_t){ .timeout_s = 30, .max_attempts = 3 });
                        f->ctl = client_at(control, NULL, &(gv_k8s_options_t){ .timeout_s = 60, .max_attempts = 1 });
                        return;
                }
                int st;
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        f->pid = 0;
                        fail_msg("tests/k8s/cfixture.py exited early (status %d; its stderr is above)", st);
                }
                usleep(100000);
        }
        fail_msg("tests/k8s/cfixture.py was not ready in %d s", FIXTURE_START_S);
}

/* The fixture, started; a failure to start it ends the program (cmocka's fail outside a test). */
static fixture_t *fixture_new(void)
{
        fixture_t *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        f->pipe_w = -1;
        fixture_start(f);
        return f;
}

static void fixture_free(fixture_t *f)
{
        gv_k8s_client_free(f->c);
        gv_k8s_client_free(f->ctl);
        gv_k8s_client_free(f->adm);
        if (f->pipe_w >= 0)
                close(f->pipe_w); /* the fixture cleans up and ends */
        if (f->pid > 0)
                waitpid(f->pid, NULL, 0);
        if (f->dir) {
                _cleanup_free_ char *p = gv_path_join(f->dir, "info.json");
                unlink(p);
                rmdir(f->dir);
        }
        logcap_clear(&f->log);
        free(f->dir);
        free(f->skip);
        free(f->ns);
        free(f->node_a);
        free(f->node_b);
        free(f->proxy);
        free(f->kubeconfig_direct);
        free(f);
}

/* A control call; @fmt (printf) makes the JSON body, or is NULL. Returns the answer (owned). */
static json_object *ctl(fixture_t *f, const char *method, const char *path, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static json_object *ctl(fixture_t *f, const char *method, const char *path, const char *fmt, ...)
{
        json_object *b = NULL;
        if (fmt) {
                va_list ap;
                va_start(ap, fmt);
                _cleanup_free_ char *txt = NULL;
                int r = vasprintf(&txt, fmt, ap);
                va_end(ap);
                assert_true(r >= 0);
                b = json_tokener_parse(txt);
                if (!b)
                        fail_msg("control body is not JSON: %s", txt);
        }
        json_object *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_k8s_request(f->ctl, method, path, NULL, b, &out, NULL, &err) < 0)
                fail_msg("control %s %s: %s", method, path, err->msg);
        json_object_put(b);
        return out;
}

#define ctl0(...) json_object_put(ctl(__VA_ARGS__))

static int test_setup(void **state)
{
        fixture_t *f = *state;
        if (f->skip)
                return 0;
        ctl0(f, "POST", "/reset", NULL);
        logcap_clear(&f->log);
        f->stop = 0;
        return 0;
}

/* Skip a test of the real server when none can be had here. */
#define NEED_REAL(f) assert_null((f)->skip) /* main() runs these tests only with a server */

/* The proxy's log of the client's requests (owned). */
static json_object *requests(fixture_t *f)
{
        json_object *r = ctl(f, "GET", "/requests", NULL), *arr = NULL;
        assert_true(json_object_object_get_ex(r, "requests", &arr));
        json_object_get(arr);
        json_object_put(r);
        return arr;
}

/* Number of logged API requests with @method whose path contains @path (NULL: any)
 * and whose watch flag is @watch (-1: any). */
static int count_requests(fixture_t *f, const char *method, const char *path, int watch)
{
        _cleanup_json_ json_object *arr = requests(f);
        int n = 0;
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i), *w = NULL;
                json_object_object_get_ex(e, "watch", &w);
                if (method && strcmp(jstr(e, "method", NULL), method) != 0)
                        continue;
                if (path && !strstr(jstr(e, "path", NULL), path))
                        continue;
                if (watch >= 0 && json_object_get_boolean(w) != watch)
                        continue;
                n++;
        }
        return n;
}

static json_object *make_pod(const char *name, const char *node)
{
        _cleanup_free_ char *txt = strf(
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"%s\":\"%s\",\"labels\":{\"app\":\"nvidia-cuda-validator\"}},"
                "\"spec\":{\"nodeName\":\"%s\",\"restartPolicy\":\"OnFailure\","
                "\"initContainers\":[{\"name\":\"cuda-validation\",\"image\":\"v\"}],"
                "\"containers\":[{\"name\":\"nvidia-cuda-validator\",\"image\":\"v\"}]}}",
                name[strlen(name) - 1] == '-' ? "generateName" : "name", name, node);
        json_object *p = json_tokener_parse(txt);
        assert_non_null(p);
        return p;
}

/* Create a pod as someone else (the admin, not through the proxy); -> its name (heap). */
static char *pod_by_admin(fixture_t *f, const char *name, const char *node)
{
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_json_ json_object *pod = make_pod(name, node);
        _cleanup_json_ json_object *made = NULL;
        if (gv_k8s_pod_create(f->adm, f->ns, pod, &made, &err) < 0)
                fail_msg("create pod %s: %s", name, err->msg);
        return strdup(jstr(made, "metadata", "name"));
}

/* ---------------------------------------------------------------- */

static void test_pod_crud(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        json_object *pod = make_pod("nvidia-cuda-validator-", f->node_a), *created = NULL, *got = NULL, *list = NULL;
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, &created, &err), 0);
        json_object_put(pod);
        const char *name = jstr(created, "metadata", "name");
        assert_non_null(name);
        assert_int_equal(strncmp(name, "nvidia-cuda-validator-", 22), 0);
        assert_true(strlen(name) > 22); /* the server made the name */
        assert_string_equal(jstr(created, "status", "phase"), "Pending");
        assert_non_null(jstr(created, "metadata", "uid"));

        pod = make_pod("other", f->node_b);
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, NULL, &err), 0);
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, NULL, &err), -EEXIST);
        assert_non_null(strstr(err->msg, "409"));
        assert_non_null(strstr(err->msg, "pods \"other\" already exists"));
        assert_non_null(strstr(err->msg, "reason AlreadyExists"));
        json_object_put(pod);

        assert_int_equal(gv_k8s_pod_get(f->c, f->ns, name, &got, &err), 0);
        assert_string_equal(jstr(got, "metadata", "uid"), jstr(created, "metadata", "uid"));
        json_object_put(got);

        /* The label selector and the field selector went out escaped and were applied. */
        json_object *items = NULL;
        assert_int_equal(gv_k8s_pod_list(f->c, f->ns, "app=nvidia-cuda-validator", NULL, &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 2);
        json_object_put(list);
        assert_int_equal(gv_k8s_pod_list(f->c, f->ns, "app=nvidia-cuda-validator", f->node_a, &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 1);
        assert_string_equal(jstr(json_object_array_get_idx(items, 0), "metadata", "name"), name);
        json_object_put(list);
        assert_int_equal(gv_k8s_pod_list(f->c, f->ns, "app=other", NULL, &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 0);
        json_object_put(list);
        _cleanup_free_ char *elsewhere = strf("%s-none", f->ns);
        assert_int_equal(gv_k8s_pod_list(f->c, elsewhere, NULL, NULL, &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 0);
        json_object_put(list);

        assert_int_equal(gv_k8s_pod_delete(f->c, f->ns, name, 0, &err), 0);
        assert_int_equal(gv_k8s_pod_get(f->c, f->ns, name, &got, &err), -ENOENT);
        assert_non_null(strstr(err->msg, "404 Not Found"));
        assert_non_null(strstr(err->msg, "not found"));
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_int_equal(gv_k8s_pod_delete(f->c, f->ns, name, -1, &err), -ENOENT);
        json_object_put(created);
        _cleanup_free_ char *pods = strf("/namespaces/%s/pods", f->ns);
        assert_int_equal(count_requests(f, "GET", pods, 0), 5);
}

/* Watch: a scripted sequence of changes made by someone else from inside the callback. */
typedef struct wseq {
        fixture_t *f;
        char seen[64][48];
        size_t n;
        char *name;
} wseq_t;

static void note(wseq_t *w, const gv_k8s_watch_event_t *ev, const char *what)
{
        if (w->n < 64)
                snprintf(w->seen[w->n++], sizeof(w->seen[0]), "%s %s", gv_k8s_event_type_name(ev->type), what);
}

static bool on_lifecycle(void *ud, const gv_k8s_watch_event_t *ev)
{
        wseq_t *w = ud;
        fixture_t *f = w->f;
        _cleanup_error_ gv_error_t *err = NULL;
        if (ev->type == GV_K8S_EVENT_BOOKMARK)
                return true;
        const char *phase = ev->object ? jstr(ev->object, "status", "phase") : "";
        const char *grace = ev->object ? jstr(ev->object, "metadata", "deletionGracePeriodSeconds") : NULL;
        _cleanup_free_ char *what = strf("%s%s%s", phase ? phase : "", grace ? " grace " : "", grace ? grace : "");
        note(w, ev, what);
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                w->name = pod_by_admin(f, "lc-", f->node_a);
        } else if (ev->type == GV_K8S_EVENT_ADDED) { /* the kubelet's status write */
                _cleanup_free_ char *p = strf("/api/v1/namespaces/%s/pods/%s/status", f->ns, w->name);
                _cleanup_json_ json_object *st = json_tokener_parse("{\"status\":{\"phase\":\"Running\"}}");
                if (gv_k8s_patch(f->adm, p, GV_K8S_PATCH_MERGE, st, NULL, &err) < 0)
                        fail_msg("status: %s", err->msg);
        } else if (ev->type == GV_K8S_EVENT_MODIFIED && !jstr(ev->object, "metadata", "deletionTimestamp")) {
                assert_int_equal(gv_k8s_pod_delete(f->adm, f->ns, w->name, -1, &err), 0); /* graceful */
        } else if (ev->type == GV_K8S_EVENT_DELETED) {
                return false;
        }
        return true;
}

static void test_watch_lifecycle(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        wseq_t w = { .f = f };
        int r = gv_k8s_pod_watch(f->c, f->ns, "app=nvidia-cuda-validator", f->node_a, NULL, 20, on_lifecycle, &w, &err);
        free(w.name);
        if (r < 0)
                fail_msg("watch: %s", err->msg);
        /* A bound pod is deleted gracefully by kube-apiserver: first a MODIFIED with its
         * deletionTimestamp (grace 30 s), then, when the (test) kubelet deletes it with grace 0,
         * a MODIFIED with grace 0 and the DELETED. */
        for (size_t i = 0; i < w.n && w.n != 6; i++)
                print_message("# event %zu: %s\n", i, w.seen[i]);
        assert_int_equal(w.n, 6);
        assert_string_equal(w.seen[0], "SYNCED ");
        assert_string_equal(w.seen[1], "ADDED Pending");
        assert_string_equal(w.seen[2], "MODIFIED Running");
        assert_string_equal(w.seen[3], "MODIFIED Running grace 30");
        assert_string_equal(w.seen[4], "MODIFIED Running grace 0");
        assert_string_equal(w.seen[5], "DELETED Running grace 0");
        assert_int_equal(count_requests(f, "GET", "/pods", 1), 1);
        assert_int_equal(count_requests(f, "GET", "/pods", 0), 1); /* one list, no polling */
}

typedef struct resume {
        fixture_t *f;
        int added[3];
        int synced;
        bool dropped;
} resume_t;

static bool on_resume(void *ud, const gv_k8s_watch_event_t *ev)
{
        resume_t *r = ud;
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                r->synced++;
                if (r->synced == 1)
                        free(pod_by_admin(r->f, "p1", r->f->node_a));
                return true;
        }
        if (ev->type != GV_K8S_EVENT_ADDED)
                return true;
        const char *name = jstr(ev->object, "metadata", "name");
        if (strcmp(name, "p1") == 0) {
                r->added[1]++;
                if (!r->dropped) {
                        r->dropped = true;
                        ctl0(r->f, "POST", "/drop-watches", NULL);
                        usleep(200000); /* let the proxy cut the stream */
                        free(pod_by_admin(r->f, "p2", r->f->node_a));
                }
        } else if (strcmp(name, "p2") == 0) {
                r->added[2]++;
                return false;
        }
        return true;
}

static void test_watch_resume_after_drop(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        resume_t r = { .f = f };
        int rc = gv_k8s_pod_watch(f->c, f->ns, NULL, NULL, NULL, 20, on_resume, &r, &err);
        if (rc < 0)
                fail_msg("watch: %s", err->msg);
        assert_true(r.dropped);
        assert_int_equal(r.added[1], 1); /* p1 not delivered twice */
        assert_int_equal(r.added[2], 1); /* p2, made while no stream was open, not missed */
        assert_int_equal(r.synced, 1);   /* resumed from the last version, not re-listed */
        assert_true(count_requests(f, "GET", "/pods", 1) >= 2);
        assert_int_equal(count_requests(f, "GET", "/pods", 0), 1);
}

typedef struct gone {
        int synced, added;
} gone_t;

static bool on_gone(void *ud, const gv_k8s_watch_event_t *ev)
{
        gone_t *g = ud;
        if (ev->type == GV_K8S_EVENT_ADDED && ev->from_list)
                g->added++;
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                g->synced++;
                return false;
        }
        return true;
}

/* A watch from a compacted version: the proxy answers 410 Expired (@as: "event" or "http"),
 * as kube-apiserver does once etcd compacted that version (on its own schedule). */
static void run_gone(fixture_t *f, const char *as)
{
        _cleanup_error_ gv_error_t *err = NULL;
        json_object *pod = make_pod("old", f->node_a), *made = NULL;
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, &made, &err), 0);
        json_object_put(pod);
        _cleanup_free_ char *rv = strdup(jstr(made, "metadata", "resourceVersion"));
        json_object_put(made);
        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"gone\",\"watch\":true,\"count\":1,\"as\":\"%s\"}", as);
        gone_t g = { 0 };
        int rc = gv_k8s_pod_watch(f->c, f->ns, NULL, NULL, rv, 20, on_gone, &g, &err);
        if (rc < 0)
                fail_msg("watch (%s): %s", as, err->msg);
        assert_int_equal(g.synced, 1);
        assert_int_equal(g.added, 1); /* re-listed: the pod as ADDED from the list */
        assert_int_equal(count_requests(f, "GET", "/pods", 1), 1);
        assert_int_equal(count_requests(f, "GET", "/pods", 0), 1);
        assert_true(logged(f, "410 Gone", NULL));
}

static void test_watch_relist_on_410_event(void **state)
{
        NEED_REAL((fixture_t *) *state);
        run_gone(*state, "event");
}

static void test_watch_relist_on_410_http(void **state)
{
        NEED_REAL((fixture_t *) *state);
        run_gone(*state, "http");
}

static bool on_count_bookmarks(void *ud, const gv_k8s_watch_event_t *ev)
{
        if (ev->type == GV_K8S_EVENT_BOOKMARK)
                (*(int *) ud)++;
        return true;
}

static void test_watch_deadline(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        int bookmarks = 0;
        double t0 = now_s();
        int rc = gv_k8s_node_watch(f->c, f->node_a, NULL, 2, on_count_bookmarks, &bookmarks, &err);
        double dt = now_s() - t0;
        assert_int_equal(rc, -ETIMEDOUT);
        assert_int_equal(err->reason, GV_REASON_TIMEOUT);
        assert_true(dt >= 1.9 && dt < 5.0);
        assert_int_equal(count_requests(f, "GET", "/nodes", 1), 1); /* one stream, held to the deadline */
}

/* BOOKMARKs keep the watch's version fresh; kube-apiserver sends them about once a minute,
 * so the stand-in, which sends them every 200 ms, shows it. */
static void test_watch_bookmarks_standin(void **state)
{
        (void) state;
        server_t s = { 0 };
        if (server_start(&s, NULL) == 77) {
                server_stop(&s);
                skip();
        }
        gv_k8s_client_t *c = client_for(s.kubeconfig, &(gv_k8s_options_t){ .max_attempts = 2 });
        _cleanup_error_ gv_error_t *err = NULL;
        int bookmarks = 0;
        int rc = gv_k8s_node_watch(c, "node-a", NULL, 2, on_count_bookmarks, &bookmarks, &err);
        gv_k8s_client_free(c);
        server_stop(&s);
        assert_int_equal(rc, -ETIMEDOUT);
        assert_true(bookmarks >= 3);
}

static bool on_set_stop(void *ud, const gv_k8s_watch_event_t *ev)
{
        fixture_t *f = ud;
        if (ev->type == GV_K8S_EVENT_SYNCED)
                f->stop = 1;
        return true;
}

static void test_stop_flag(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        double t0 = now_s();
        assert_int_equal(gv_k8s_node_watch(f->c, f->node_a, NULL, 30, on_set_stop, f, &err), -EINTR);
        assert_int_equal(err->reason, GV_REASON_INTERRUPTED);
        assert_true(now_s() - t0 < 3.0);
        json_object *o = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &o, &err), -EINTR);
        f->stop = 0;
}

static void test_retry_429_retry_after(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *path = strf("/nodes/%s", f->node_a);
        ctl0(f, "POST", "/faults", "{\"type\":\"status\",\"code\":429,\"retryAfter\":1,\"count\":1,\"path\":\"%s\"}",
             path);
        json_object *node = NULL;
        double t0 = now_s();
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        double dt = now_s() - t0;
        assert_true(dt >= 0.9); /* Retry-After: 1 honoured rather than the 50 ms backoff */
        assert_true(dt < 4.0);
        assert_string_equal(jstr(node, "metadata", "name"), f->node_a);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", path, 0), 2);
        assert_true(logged(f, "429 Too Many Requests", "retry 2/4 in 1000 ms"));
}

static void test_retry_500_and_bound(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *path = strf("/nodes/%s", f->node_a);
        ctl0(f, "POST", "/faults", "{\"type\":\"status\",\"code\":500,\"count\":2,\"path\":\"%s\"}", path);
        json_object *node = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", path, 0), 3);

        /* A dropped connection is retried too. */
        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"drop\",\"count\":1,\"path\":\"%s\"}", path);
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", path, 0), 2);

        /* Bounded: 4 attempts, then the last error. */
        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults",
             "{\"type\":\"status\",\"code\":503,\"count\":100,\"path\":\"%s\",\"message\":\"etcd is sad\"}", path);
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), -EIO);
        assert_non_null(strstr(err->msg, "503 Service Unavailable: etcd is sad"));
        assert_non_null(strstr(err->msg, "gave up after 4 attempts"));
        assert_int_equal(count_requests(f, "GET", path, 0), 4);

        /* POST is not retried on 500 (it may have been applied). */
        ctl0(f, "DELETE", "/faults", NULL);
        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"status\",\"code\":500,\"count\":5,\"method\":\"POST\"}");
        json_object *pod = make_pod("np", f->node_a);
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, NULL, &err), -EIO);
        json_object_put(pod);
        assert_int_equal(count_requests(f, "POST", "/pods", 0), 1);
}

/* Answers no healthy API server gives, from the proxy: a body cut by a TCP reset (retried), a
 * 200 that is not JSON (not retried: it was answered), a load balancer's HTML error page. */
static void test_odd_answers(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *path = strf("/nodes/%s", f->node_a);
        json_object *node = NULL;
        ctl0(f, "POST", "/faults", "{\"type\":\"reset\",\"count\":1,\"path\":\"%s\"}", path);
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        assert_string_equal(jstr(node, "metadata", "name"), f->node_a);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", path, 0), 2);

        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"invalid-json\",\"count\":1,\"path\":\"%s\"}", path);
        node = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), -EBADMSG);
        assert_null(node);
        assert_non_null(strstr(err->msg, "response is not valid JSON"));
        assert_non_null(strstr(err->msg, path));
        assert_int_equal(count_requests(f, "GET", path, 0), 1);
        gv_error_free(&err);

        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"non-status\",\"code\":502,\"count\":10,\"path\":\"%s\"}", path);
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), -EIO);
        assert_non_null(strstr(err->msg, "502 Bad Gateway"));
        assert_non_null(strstr(err->msg, "gave up after 4 attempts"));
        assert_null(strstr(err->msg, "\n")); /* the page's text on one line */
        assert_int_equal(count_requests(f, "GET", path, 0), 4);
}

static int closed_port(void)
{
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof(a)), 0);
        socklen_t l = sizeof(a);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &a, &l), 0);
        close(fd);
        return ntohs(a.sin_port);
}

static void test_unreachable(void **state)
{
        fixture_t *f = *state;
        gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        assert_non_null(cfg);
        assert_true(asprintf(&cfg->server, "http://127.0.0.1:%d", closed_port()) > 0);
        cfg->token = strdup(TOKEN);
        gv_k8s_options_t o = { .max_attempts = 3, .backoff_initial_ms = 50, .backoff_max_ms = 200, .connect_timeout_s = 2,
                               .log = capture, .log_userdata = &f->log };
        gv_k8s_client_t *c = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        assert_int_equal(gv_k8s_client_new(cfg, &o, &c, &err), 0);
        json_object *node = NULL;
        double t0 = now_s();
        int r = gv_k8s_node_get(c, "n", &node, &err);
        assert_true(now_s() - t0 < 3.0);
        assert_int_equal(r, -ECONNREFUSED);
        assert_non_null(strstr(err->msg, gv_k8s_client_config(c)->server));
        assert_non_null(strstr(err->msg, "gave up after 3 attempts"));
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_null(strstr(err->msg, TOKEN));
        /* A watch on an unreachable server gives up after max_failures too. */
        gv_k8s_watch_spec_t spec = { .path = "/api/v1/nodes", .timeout_s = 20, .max_failures = 2 };
        t0 = now_s();
        r = gv_k8s_watch(c, &spec, on_count_bookmarks, &(int){ 0 }, &err);
        assert_true(r < 0);
        assert_true(now_s() - t0 < 5.0);
        assert_non_null(strstr(err->msg, "127.0.0.1"));
        gv_k8s_client_free(c);
}

/* The types of a Node's status.conditions, comma-separated (heap). */
static char *condition_types(json_object *node)
{
        json_object *st = NULL, *conds = NULL;
        assert_true(json_object_object_get_ex(node, "status", &st));
        assert_true(json_object_object_get_ex(st, "conditions", &conds));
        char *types = NULL;
        size_t tl = 0;
        FILE *m = open_memstream(&types, &tl);
        assert_non_null(m);
        for (size_t i = 0; i < json_object_array_length(conds); i++)
                fprintf(m, "%s%s", i ? "," : "", jstr(json_object_array_get_idx(conds, i), "type", NULL));
        assert_int_equal(fclose(m), 0);
        return types;
}

static void test_nodes_logs_events(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "POST", "/node",
             "{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.present\":\"true\"},\"capacity\":{\"nvidia.com/gpu\":\"8\"},"
             "\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}",
             f->node_a);
        json_object *node = NULL, *st = NULL, *cap = NULL, *g = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        assert_true(json_object_object_get_ex(node, "status", &st));
        assert_true(json_object_object_get_ex(st, "capacity", &cap));
        assert_true(json_object_object_get_ex(cap, "nvidia.com/gpu", &g));
        assert_string_equal(json_object_get_string(g), "8");
        json_object_put(node);
        _cleanup_free_ char *nope = strf("%s-nope", f->ns);
        assert_int_equal(gv_k8s_node_get(f->c, nope, &node, &err), -ENOENT);

        /* A merge patch of one label keeps the others. */
        json_object *patch = json_tokener_parse("{\"metadata\":{\"labels\":{\"nvidia.com/gpu-validator.ready\":\"true\"}}}");
        assert_int_equal(gv_k8s_node_patch(f->c, f->node_a, false, patch, &node, &err), 0);
        json_object *md = NULL, *labels = NULL, *v = NULL;
        assert_true(json_object_object_get_ex(node, "metadata", &md));
        assert_true(json_object_object_get_ex(md, "labels", &labels));
        assert_true(json_object_object_get_ex(labels, "nvidia.com/gpu-validator.ready", &v));
        assert_true(json_object_object_get_ex(labels, "nvidia.com/gpu.present", &v));
        json_object_put(node);
        json_object_put(patch);
        /* Conditions through the status subresource: a merge patch replaces the whole list
         * (RFC 7386, as k8s.h says), a strategic merge patch merges by "type". */
        patch = json_tokener_parse("{\"status\":{\"conditions\":[{\"type\":\"GPUValidated\",\"status\":\"True\"}]}}");
        assert_int_equal(gv_k8s_node_patch(f->c, f->node_a, true, patch, &node, &err), 0);
        json_object_put(patch);
        _cleanup_free_ char *types = condition_types(node);
        assert_string_equal(types, "GPUValidated");
        json_object_put(node);
        _cleanup_free_ char *status_path = strf("/nodes/%s/status", f->node_a), *full = strf("/api/v1%s", status_path);
        patch = json_tokener_parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
        assert_int_equal(gv_k8s_patch(f->c, full, GV_K8S_PATCH_STRATEGIC, patch, &node, &err), 0);
        json_object_put(patch);
        free(types);
        types = condition_types(node);
        assert_string_equal(types, "Ready,GPUValidated"); /* the patch's items first */
        json_object_put(node);
        assert_int_equal(count_requests(f, "PATCH", status_path, 0), 2);

        /* Pod log with container and tailLines, through kube-apiserver's kubelet proxy. */
        json_object *pod = make_pod("logpod", f->node_a);
        assert_int_equal(gv_k8s_pod_create(f->c, f->ns, pod, NULL, &err), 0);
        json_object_put(pod);
        ctl0(f, "POST", "/logs", "{\"pod\":\"logpod\",\"container\":\"cuda-validation\",\"text\":\"one\\ntwo\\nthree\\n\"}");
        char *text = NULL;
        assert_int_equal(gv_k8s_pod_log(f->c, f->ns, "logpod", "cuda-validation", 2, &text, &err), 0);
        assert_string_equal(text, "two\nthree\n");
        free(text);
        assert_int_equal(gv_k8s_pod_log(f->c, f->ns, "nologpod", "x", 0, &text, &err), -ENOENT);

        /* Event about the pod, in its namespace, through the real Events validation. */
        assert_int_equal(gv_k8s_pod_get(f->c, f->ns, "logpod", &pod, &err), 0);
        gv_k8s_event_t pe = { .type = "Warning", .reason = "ValidationFailed", .message = "exit code 1",
                              .action = "Validate", .component = "gpu-validator" };
        if (gv_k8s_event_create(f->c, NULL, pod, &pe, &err) < 0)
                fail_msg("event: %s", err->msg);
        json_object_put(pod);
        json_object *events = NULL, *items = NULL;
        _cleanup_free_ char *evpath = strf("/api/v1/namespaces/%s/events", f->ns);
        assert_int_equal(gv_k8s_get(f->adm, evpath, &events, &err), 0);
        assert_true(json_object_object_get_ex(events, "items", &items));
        int ours = 0;
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *e = json_object_array_get_idx(items, i);
                if (strcmp(jstr(e, "involvedObject", "name"), "logpod") != 0)
                        continue;
                ours++;
                assert_string_equal(jstr(e, "reason", NULL), "ValidationFailed");
                assert_string_equal(jstr(e, "type", NULL), "Warning");
                assert_string_equal(jstr(e, "message", NULL), "exit code 1");
                assert_string_equal(jstr(e, "involvedObject", "kind"), "Pod");
                assert_string_equal(jstr(e, "involvedObject", "namespace"), f->ns);
        }
        assert_int_equal(ours, 1);
        json_object_put(events);
}

/* POST a ResourceSlice of @driver for @node as @version (the admin), labelled for the fixture's clean-up. */
static void post_slice(fixture_t *f, const char *version, const char *name, const char *node, const char *driver)
{
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *path = strf("/apis/resource.k8s.io/%s/resourceslices", version);
        _cleanup_free_ char *body = strf(
                "{\"metadata\":{\"name\":\"%s-%s\",\"labels\":{\"gpu-validator.test/c-fixture\":\"\"}},"
                "\"spec\":{\"driver\":\"%s\",\"nodeName\":\"%s\","
                "\"pool\":{\"name\":\"%s\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[]}}",
                f->ns, name, driver, node, node);
        _cleanup_json_ json_object *b = json_tokener_parse(body);
        if (gv_k8s_post(f->adm, path, b, NULL, &err) < 0)
                fail_msg("%s: %s", path, err->msg);
}

/* The names of a ResourceSliceList's items less the "NS-" prefix, comma-separated (heap). */
static char *item_names(fixture_t *f, json_object *list)
{
        json_object *items = NULL;
        assert_true(json_object_object_get_ex(list, "items", &items));
        char *buf = NULL;
        size_t len = 0, pl = strlen(f->ns);
        FILE *m = open_memstream(&buf, &len);
        assert_non_null(m);
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                const char *n = jstr(json_object_array_get_idx(items, i), "metadata", "name");
                assert_int_equal(strncmp(n, f->ns, pl), 0);
                fprintf(m, "%s%s", i ? "," : "", n + pl + 1);
        }
        assert_int_equal(fclose(m), 0);
        return buf;
}

static void expect_slices(fixture_t *f, const char *node, const char *driver, const char *names)
{
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_json_ json_object *list = NULL;
        if (gv_k8s_resource_slice_list(f->c, node, driver, NULL, &list, &err) < 0)
                fail_msg("resource slices: %s", err->msg);
        _cleanup_free_ char *got = item_names(f, list);
        assert_string_equal(got, names);
}

static void test_resource_slice_list(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        /* Drivers unique to this fixture: a list by driver alone spans the cluster. */
        _cleanup_free_ char *gpu = strf("gpu.%s.example.com", f->ns), *nic = strf("nic.%s.example.com", f->ns);
        post_slice(f, "v1", "a-gpu", f->node_a, gpu);
        post_slice(f, "v1", "a-nic", f->node_a, nic);
        post_slice(f, "v1beta1", "b-gpu", f->node_b, gpu); /* served in every version */
        /* both field selectors; v1 first */
        const char *version = NULL;
        json_object *list = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, f->node_a, gpu, &version, &list, &err), 0);
        assert_string_equal(version, "v1");
        char *names = item_names(f, list);
        assert_string_equal(names, "a-gpu");
        free(names);
        assert_string_equal(jstr(list, "apiVersion", NULL), "resource.k8s.io/v1");
        json_object_put(list);
        /* one selector */
        expect_slices(f, f->node_a, NULL, "a-gpu,a-nic");
        expect_slices(f, NULL, gpu, "a-gpu,b-gpu");
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/v1/resourceslices", 0), 3);

        /* an older server: v1 and v1beta2 are 404 (proxy), v1beta1 answers; the version found
         * is used first next time */
        ctl0(f, "POST", "/resource-versions", "{\"versions\":[\"v1beta1\"]}");
        ctl0(f, "DELETE", "/requests", NULL);
        version = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, f->node_b, gpu, &version, &list, &err), 0);
        assert_string_equal(version, "v1beta1");
        assert_string_equal(jstr(list, "apiVersion", NULL), "resource.k8s.io/v1beta1");
        names = item_names(f, list);
        assert_string_equal(names, "b-gpu");
        free(names);
        json_object_put(list);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 3);
        assert_int_equal(gv_k8s_resource_slice_list(f->c, f->node_b, gpu, &version, &list, &err), 0);
        json_object_put(list);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 4);

        /* no version served: -ENOENT naming the paths */
        ctl0(f, "POST", "/resource-versions", "{\"versions\":[]}");
        version = NULL;
        list = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, f->node_a, gpu, &version, &list, &err), -ENOENT);
        assert_null(list);
        assert_null(version);
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_non_null(strstr(err->msg, "/apis/resource.k8s.io/{v1,v1beta2,v1beta1}/resourceslices"));
        gv_error_free(&err);

        /* any other error is final (a 403 of RBAC): no other version is tried */
        ctl0(f, "POST", "/resource-versions", "{\"versions\":[\"v1\",\"v1beta2\",\"v1beta1\"]}");
        ctl0(f, "POST", "/faults", "{\"type\":\"status\",\"code\":403,\"count\":1,\"path\":\"/resourceslices\"}");
        ctl0(f, "DELETE", "/requests", NULL);
        assert_int_equal(gv_k8s_resource_slice_list(f->c, f->node_a, gpu, NULL, &list, &err), -EACCES);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 1);
}

typedef struct nodew {
        fixture_t *f;
        bool changed;
} nodew_t;

static bool on_node(void *ud, const gv_k8s_watch_event_t *ev)
{
        nodew_t *n = ud;
        fixture_t *f = n->f;
        if (ev->object && jstr(ev->object, "metadata", "name"))
                assert_string_equal(jstr(ev->object, "metadata", "name"), f->node_a); /* never the other node */
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                ctl0(f, "POST", "/node", "{\"name\":\"%s\",\"capacity\":{\"nvidia.com/gpu\":\"1\"}}", f->node_b);
                ctl0(f, "POST", "/node", "{\"name\":\"%s\",\"capacity\":{\"nvidia.com/gpu\":\"2\"}}", f->node_a);
        }
        if (ev->type == GV_K8S_EVENT_MODIFIED) {
                json_object *st = NULL, *cap = NULL, *g = NULL;
                if (json_object_object_get_ex(ev->object, "status", &st) &&
                    json_object_object_get_ex(st, "capacity", &cap) && json_object_object_get_ex(cap, "nvidia.com/gpu", &g) &&
                    strcmp(json_object_get_string(g), "2") == 0) {
                        n->changed = true;
                        return false;
                }
        }
        return true;
}

static void test_node_watch(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        nodew_t n = { .f = f };
        int rc = gv_k8s_node_watch(f->c, f->node_a, NULL, 10, on_node, &n, &err);
        if (rc < 0)
                fail_msg("watch: %s", err->msg);
        assert_true(n.changed);
}

/* The proxy log's tokenSha of the last request (heap). */
static char *last_token_sha(fixture_t *f)
{
        _cleanup_json_ json_object *arr = requests(f);
        size_t n = json_object_array_length(arr);
        assert_true(n > 0);
        const char *sha = jstr(json_object_array_get_idx(arr, n - 1), "tokenSha", NULL);
        assert_non_null(sha);
        return strdup(sha);
}

/* A TokenRequest token of the fixture's `reader` ServiceAccount; @sha receives its tokenSha. */
static char *new_token(fixture_t *f, char **sha)
{
        _cleanup_json_ json_object *t = ctl(f, "POST", "/token", NULL);
        *sha = strdup(jstr(t, "sha", NULL));
        return strdup(jstr(t, "token", NULL));
}

static void test_token_file_rotation_and_secrecy(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *sha1 = NULL, *sha2 = NULL, *got = NULL;
        _cleanup_free_ char *tok1 = new_token(f, &sha1), *tok2 = new_token(f, &sha2);
        _cleanup_free_ char *tf = gv_path_join(f->dir, "tokenfile");
        _cleanup_close_ int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        _cleanup_free_ char *line1 = strf("%s\n", tok1), *line2 = strf("%s\n", tok2);
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", line1, strlen(line1), 0600, &err), 0);
        gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        assert_non_null(cfg);
        cfg->server = strdup(f->proxy);
        cfg->token_file = strdup(tf);
        gv_k8s_options_t o = { .max_attempts = 2, .backoff_initial_ms = 20, .log = capture, .log_userdata = &f->log };
        gv_k8s_client_t *c = NULL;
        assert_int_equal(gv_k8s_client_new(cfg, &o, &c, &err), 0);
        json_object *node = NULL;
        assert_int_equal(gv_k8s_node_get(c, f->node_a, &node, &err), 0); /* the ServiceAccount may get Nodes */
        json_object_put(node);
        got = last_token_sha(f);
        assert_string_equal(got, sha1);
        free(got);
        /* Rotate (a new inode by rename), as the kubelet rotates a projected token: the next
         * request carries the new one. */
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", line2, strlen(line2), 0600, &err), 0);
        assert_int_equal(gv_k8s_node_get(c, f->node_a, &node, &err), 0);
        json_object_put(node);
        got = last_token_sha(f);
        assert_string_equal(got, sha2);
        /* RBAC still applies: the ServiceAccount may not list pods (403, -EACCES). */
        _cleanup_free_ char *pods = strf("/api/v1/namespaces/%s/pods", f->ns);
        assert_int_equal(gv_k8s_get(c, pods, &node, &err), -EACCES);
        assert_non_null(strstr(err->msg, "403 Forbidden"));
        /* A token the server does not know: 401, -EPERM, and no token in the message. */
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", "third\n", 6, 0600, &err), 0);
        assert_int_equal(gv_k8s_node_get(c, f->node_a, &node, &err), -EPERM);
        assert_non_null(strstr(err->msg, "401 Unauthorized"));
        assert_null(strstr(err->msg, tok1));
        assert_null(strstr(err->msg, tok2));
        assert_null(strstr(err->msg, "third"));
        gv_k8s_client_free(c);
        unlink(tf);

        /* The main client, with debug logging, across errors and retries: no token anywhere. */
        const char *admin = gv_k8s_client_config(f->c)->token;
        assert_non_null(admin);
        assert_int_equal(gv_k8s_pod_get(f->c, f->ns, "absent", &node, &err), -ENOENT);
        assert_null(strstr(err->msg, admin));
        ctl0(f, "POST", "/faults", "{\"type\":\"status\",\"code\":429,\"retryAfter\":0,\"count\":1}");
        assert_int_equal(gv_k8s_node_get(f->c, f->node_a, &node, &err), 0);
        json_object_put(node);
        assert_true(f->log.n > 0);
        for (size_t i = 0; i < f->log.n; i++) {
                assert_null(strstr(f->log.lines[i], admin));
                assert_null(strstr(f->log.lines[i], tok1));
                assert_null(strstr(f->log.lines[i], tok2));
                assert_null(strstr(f->log.lines[i], "Bearer"));
        }
        /* The tokens were only ever sent in the header: never in a path or query. */
        _cleanup_json_ json_object *r = requests(f);
        const char *all = json_object_to_json_string(r);
        assert_null(strstr(all, admin));
        assert_null(strstr(all, tok1));
        assert_null(strstr(all, tok2));
}

/* The real server's TLS: verified against the kubeconfig's CA; a missing CA file or one that
 * did not sign the server's certificate fails, naming both. */
static void test_tls(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        const char *kc = f->kubeconfig_direct;
        gv_k8s_client_t *c = client_for(kc, &(gv_k8s_options_t){ .max_attempts = 1 });
        assert_non_null(gv_k8s_client_config(c)->ca_data);
        assert_int_equal(strncmp(gv_k8s_client_config(c)->server, "https://", 8), 0);
        json_object *list = NULL;
        if (gv_k8s_get(c, "/api/v1/nodes", &list, &err) < 0)
                fail_msg("TLS GET: %s", err->msg);
        json_object_put(list);
        gv_k8s_client_free(c);

        /* Without the CA, verification fails: TLS verification is on by default. */
        gv_k8s_config_t *cfg = NULL;
        assert_int_equal(gv_k8s_config_from_kubeconfig(kc, NULL, &cfg, &err), 0);
        free(cfg->ca_data);
        cfg->ca_data = NULL;
        cfg->ca_data_len = 0;
        cfg->ca_file = strdup("/nonexistent-ca.pem");
        assert_int_equal(gv_k8s_client_new(cfg, &(gv_k8s_options_t){ .max_attempts = 1 }, &c, &err), 0);
        assert_true(gv_k8s_get(c, "/api/v1/nodes", &list, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_non_null(strstr(err->msg, "https://127.0.0.1:")); /* the server ... */
        assert_non_null(strstr(err->msg, "/nonexistent-ca.pem")); /* ... and the CA file */
        gv_k8s_client_free(c);
        gv_error_free(&err);

        /* A readable CA that did not sign the server's certificate: both named too. */
        if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) {
                assert_int_equal(gv_k8s_config_from_kubeconfig(kc, NULL, &cfg, &err), 0);
                free(cfg->ca_data);
                cfg->ca_data = NULL;
                cfg->ca_data_len = 0;
                cfg->ca_file = strdup("/etc/ssl/certs/ca-certificates.crt");
                assert_int_equal(gv_k8s_client_new(cfg, &(gv_k8s_options_t){ .max_attempts = 1 }, &c, &err), 0);
                assert_int_equal(gv_k8s_get(c, "/api/v1/nodes", &list, &err), -EPROTO);
                assert_non_null(strstr(err->msg, "https://127.0.0.1:"));
                assert_non_null(strstr(err->msg, "CA file /etc/ssl/certs/ca-certificates.crt"));
                gv_k8s_client_free(c);
                gv_error_free(&err);
        }

        /* insecure-skip-tls-verify together with a CA is refused, as kubectl does
         * (client-go transport: "specifying a root certificates file with the
         * insecure flag is not allowed"). */
        _cleanup_free_ char *kc2 = gv_path_join(f->dir, "kubeconfig-both");
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, kc, false, 1 << 20, &text, NULL, NULL), 0);
        char *at = strstr(text, "    certificate-authority-data:");
        assert_non_null(at);
        _cleanup_free_ char *both = strf("%.*s    insecure-skip-tls-verify: true\n%s", (int) (at - text), text, at);
        _cleanup_close_ int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(gv_atomic_write_at(dfd, "kubeconfig-both", both, strlen(both), 0600, &err), 0);
        cfg = NULL;
        assert_int_equal(gv_k8s_config_from_kubeconfig(kc2, NULL, &cfg, &err), -EINVAL);
        unlink(kc2);
        assert_null(cfg);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "specifying a root certificates file with the insecure flag is not allowed"));
        assert_non_null(strstr(err->msg, "insecure-skip-tls-verify"));
        gv_error_free(&err);
        /* Built by hand (not from a kubeconfig), the client refuses the same. */
        cfg = calloc(1, sizeof(*cfg));
        assert_non_null(cfg);
        cfg->server = strdup("https://127.0.0.1:1");
        cfg->ca_file = strdup("/etc/ssl/certs/ca-certificates.crt");
        cfg->insecure_skip_tls_verify = true;
        c = NULL;
        assert_int_equal(gv_k8s_client_new(cfg, &(gv_k8s_options_t){ .max_attempts = 1 }, &c, &err), -EINVAL);
        assert_null(c);
        assert_non_null(strstr(err->msg, "specifying a root certificates file with the insecure flag is not allowed"));
}

static bool on_any(void *ud, const gv_k8s_watch_event_t *ev)
{
        (void) ev;
        (*(int *) ud)++;
        return true;
}

/* A response body is bounded (16 MiB), a watch event too (2 MiB); the error names the
 * request and the limit, and nothing is retried.  The bodies come from the proxy. */
static void test_huge_bodies(void **state)
{
        fixture_t *f = *state;
        NEED_REAL(f);
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "POST", "/faults", "{\"type\":\"huge\",\"bytes\":50000000,\"path\":\"/nodes\",\"count\":5}");
        json_object *list = NULL;
        int r = gv_k8s_get(f->c, "/api/v1/nodes", &list, &err);
        assert_int_equal(r, -EMSGSIZE);
        assert_null(list);
        assert_non_null(strstr(err->msg, "GET http://127.0.0.1:"));
        assert_non_null(strstr(err->msg, "/api/v1/nodes"));
        assert_non_null(strstr(err->msg, "16 MiB"));
        assert_int_equal(count_requests(f, "GET", "/api/v1/nodes", 0), 1); /* not retried */
        gv_error_free(&err);

        /* Just under the limit is read. */
        ctl0(f, "DELETE", "/faults", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"huge\",\"bytes\":16000000,\"path\":\"/nodes\"}");
        assert_int_equal(gv_k8s_get(f->c, "/api/v1/nodes", &list, &err), 0);
        assert_non_null(list);
        assert_string_equal(jstr(list, "kind", NULL), "List");
        json_object_put(list);

        /* A watch event over 2 MiB ends the watch with a clear error. */
        ctl0(f, "DELETE", "/faults", NULL);
        ctl0(f, "DELETE", "/requests", NULL);
        ctl0(f, "POST", "/faults", "{\"type\":\"huge\",\"bytes\":3000000,\"path\":\"/nodes\",\"watch\":true,\"count\":10}");
        int events = 0;
        r = gv_k8s_node_watch(f->c, f->node_a, NULL, 20, on_any, &events, &err);
        assert_int_equal(r, -EMSGSIZE);
        assert_non_null(strstr(err->msg, "watch event"));
        assert_non_null(strstr(err->msg, "2 MiB"));
        assert_non_null(strstr(err->msg, "/api/v1/nodes"));
        assert_int_equal(count_requests(f, "GET", "/api/v1/nodes", 1), 1); /* not resumed again and again */
}

#define REAL(t) cmocka_unit_test_prestate_setup_teardown(t, test_setup, NULL, f)
#define ANY(t) cmocka_unit_test_prestate(t, f)

int main(void)
{
        if (!getenv("GV_SOURCE_DIR")) {
                printf("1..0 # SKIP GV_SOURCE_DIR is not set\n");
                return 0;
        }
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_k8s_global_init(&err) < 0)
                return 1;
        signal(SIGPIPE, SIG_IGN);
        fixture_t *f = fixture_new();
        const struct CMUnitTest real[] = {
                REAL(test_pod_crud),
                REAL(test_watch_lifecycle),
                REAL(test_watch_resume_after_drop),
                REAL(test_watch_relist_on_410_event),
                REAL(test_watch_relist_on_410_http),
                REAL(test_watch_deadline),
                REAL(test_stop_flag),
                REAL(test_retry_429_retry_after),
                REAL(test_retry_500_and_bound),
                REAL(test_odd_answers),
                REAL(test_nodes_logs_events),
                REAL(test_node_watch),
                REAL(test_resource_slice_list),
                REAL(test_token_file_rotation_and_secrecy),
                REAL(test_tls),
                REAL(test_huge_bodies),
                ANY(test_watch_bookmarks_standin),
                ANY(test_unreachable),
        };
        /* Without a control plane (no Go outside CI) only the last two run: meson's TAP reading
         * counts cmocka's "not ok # SKIP" as a failure, so the skip is said once, here. */
        size_t n = GV_ARRAY_SIZE(real), first = 0;
        if (f->skip) {
                printf("# SKIP the tests of the real kube-apiserver: %s\n", f->skip);
                first = n - 2;
        }
        int r = _cmocka_run_group_tests("k8s-apiserver", real + first, n - first, NULL, NULL);
        fixture_free(f);
        gv_k8s_global_cleanup();
        return r;
}
