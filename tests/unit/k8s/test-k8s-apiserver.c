/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integration test of the Kubernetes client against tests/apiserver/server.py
 * (started here on 127.0.0.1 and a free port).  Needs python3; skipped
 * when GV_SOURCE_DIR is unset.
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

#include "base/cleanup.h"
#include "base/fileio.h"
#include "k8s/k8s.h"

#define TOKEN "gv-S3CRET-token-0123456789"
#define NS "gpu-operator"

typedef struct logcap {
        char *lines[4096];
        size_t n;
} logcap_t;

typedef struct server {
        pid_t pid;
        char *dir;
        char *kubeconfig;
        int port;
} server_t;

typedef struct fixture {
        server_t srv;
        gv_k8s_client_t *c;   /* the client under test */
        gv_k8s_client_t *ctl; /* drives /_test/ */
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

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Start server.py; returns 0, or 77 when it cannot run here (no TLS support). */
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
                                       s->kubeconfig, "--token", TOKEN, "--namespace", NS, "--bookmark-ms", "200",
                                       "--parent-pid", ppid, "--max-lifetime", "300", extra, NULL };
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
                const char *names[] = { "port", "kubeconfig", "tokenfile" };
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

static int group_setup(void **state)
{
        if (!getenv("GV_SOURCE_DIR"))
                return -1;
        fixture_t *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        if (server_start(&f->srv, NULL) != 0)
                return -1;
        gv_k8s_options_t o = { .timeout_s = 10, .max_attempts = 4, .max_retry_s = 20, .backoff_initial_ms = 50,
                               .backoff_max_ms = 2000, .log = capture, .log_userdata = &f->log, .stop = &f->stop };
        f->c = client_for(f->srv.kubeconfig, &o);
        gv_k8s_options_t oc = { .timeout_s = 10, .max_attempts = 1 };
        f->ctl = client_for(f->srv.kubeconfig, &oc);
        *state = f;
        return 0;
}

static int group_teardown(void **state)
{
        fixture_t *f = *state;
        if (!f)
                return 0;
        gv_k8s_client_free(f->c);
        gv_k8s_client_free(f->ctl);
        server_stop(&f->srv);
        logcap_clear(&f->log);
        free(f);
        return 0;
}

/* A control call; @body is JSON text or NULL. Returns the response (owned). */
static json_object *ctl(fixture_t *f, const char *method, const char *path, const char *body)
{
        json_object *b = body ? json_tokener_parse(body) : NULL;
        if (body)
                assert_non_null(b);
        json_object *out = NULL;
        _cleanup_error_ gv_error_t *err = NULL;
        if (gv_k8s_request(f->ctl, method, path, NULL, b, &out, NULL, &err) < 0)
                fail_msg("control %s %s: %s", method, path, err->msg);
        json_object_put(b);
        return out;
}

static void ctl0(fixture_t *f, const char *method, const char *path, const char *body)
{
        json_object_put(ctl(f, method, path, body));
}

static int test_setup(void **state)
{
        fixture_t *f = *state;
        ctl0(f, "POST", "/_test/reset", NULL);
        logcap_clear(&f->log);
        f->stop = 0;
        return 0;
}

/* Number of logged API requests with @method whose path contains @path (NULL: any)
 * and whose watch flag is @watch (-1: any). */
static int count_requests(fixture_t *f, const char *method, const char *path, int watch)
{
        json_object *r = ctl(f, "GET", "/_test/requests", NULL), *arr = NULL;
        assert_true(json_object_object_get_ex(r, "requests", &arr));
        int n = 0;
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i), *m, *p, *w;
                json_object_object_get_ex(e, "method", &m);
                json_object_object_get_ex(e, "path", &p);
                json_object_object_get_ex(e, "watch", &w);
                if (method && strcmp(json_object_get_string(m), method) != 0)
                        continue;
                if (path && !strstr(json_object_get_string(p), path))
                        continue;
                if (watch >= 0 && json_object_get_boolean(w) != watch)
                        continue;
                n++;
        }
        json_object_put(r);
        return n;
}

static json_object *make_pod(const char *name, const char *node)
{
        _cleanup_free_ char *txt = NULL;
        assert_true(asprintf(&txt,
                             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"%s\":\"%s\",\"labels\":{\"app\":\"nvidia-cuda-validator\"}},"
                             "\"spec\":{\"nodeName\":\"%s\",\"restartPolicy\":\"OnFailure\","
                             "\"initContainers\":[{\"name\":\"cuda-validation\",\"image\":\"v\"}],"
                             "\"containers\":[{\"name\":\"nvidia-cuda-validator\",\"image\":\"v\"}]}}",
                             name[strlen(name) - 1] == '-' ? "generateName" : "name", name, node) > 0);
        json_object *p = json_tokener_parse(txt);
        assert_non_null(p);
        return p;
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

/* ---------------------------------------------------------------- */

static void test_pod_crud(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        json_object *pod = make_pod("nvidia-cuda-validator-", "node-a"), *created = NULL, *got = NULL, *list = NULL;
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, &created, &err), 0);
        json_object_put(pod);
        const char *name = jstr(created, "metadata", "name");
        assert_non_null(name);
        assert_int_equal(strncmp(name, "nvidia-cuda-validator-", 22), 0);
        assert_string_equal(jstr(created, "status", "phase"), "Pending");
        assert_non_null(jstr(created, "metadata", "uid"));

        pod = make_pod("other", "node-b");
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, NULL, &err), 0);
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, NULL, &err), -EEXIST);
        assert_non_null(strstr(err->msg, "409"));
        assert_non_null(strstr(err->msg, "already exists"));
        assert_non_null(strstr(err->msg, "reason AlreadyExists"));
        json_object_put(pod);

        assert_int_equal(gv_k8s_pod_get(f->c, NS, name, &got, &err), 0);
        assert_string_equal(jstr(got, "metadata", "uid"), jstr(created, "metadata", "uid"));
        json_object_put(got);

        assert_int_equal(gv_k8s_pod_list(f->c, NS, "app=nvidia-cuda-validator", NULL, &list, &err), 0);
        json_object *items = NULL;
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 2);
        json_object_put(list);
        assert_int_equal(gv_k8s_pod_list(f->c, NS, "app=nvidia-cuda-validator", "node-a", &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 1);
        json_object_put(list);
        assert_int_equal(gv_k8s_pod_list(f->c, "elsewhere", NULL, NULL, &list, &err), 0);
        assert_true(json_object_object_get_ex(list, "items", &items));
        assert_int_equal(json_object_array_length(items), 0);
        json_object_put(list);

        assert_int_equal(gv_k8s_pod_delete(f->c, NS, name, 0, &err), 0);
        assert_int_equal(gv_k8s_pod_get(f->c, NS, name, &got, &err), -ENOENT);
        assert_non_null(strstr(err->msg, "404 Not Found"));
        assert_non_null(strstr(err->msg, "not found"));
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_int_equal(gv_k8s_pod_delete(f->c, NS, name, -1, &err), -ENOENT);
        json_object_put(created);
        /* The label selector went out escaped and arrived intact. */
        assert_int_equal(count_requests(f, "GET", "/namespaces/" NS "/pods", 0), 4);
}

/* Watch: a scripted sequence of changes made from inside the callback. */
typedef struct wseq {
        fixture_t *f;
        char seen[64][48];
        size_t n;
        char name[128];
        int step;
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
        note(w, ev, phase ? phase : "");
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                json_object *pod = make_pod("lc-", "node-a"), *created = NULL;
                assert_int_equal(gv_k8s_pod_create(f->ctl, NS, pod, &created, &err), 0);
                snprintf(w->name, sizeof(w->name), "%s", jstr(created, "metadata", "name"));
                json_object_put(pod);
                json_object_put(created);
        } else if (ev->type == GV_K8S_EVENT_ADDED) {
                _cleanup_free_ char *p = NULL;
                assert_true(asprintf(&p, "/_test/pods/%s/%s/status", NS, w->name) > 0);
                ctl0(f, "POST", p, "{\"phase\":\"Running\"}");
        } else if (ev->type == GV_K8S_EVENT_MODIFIED) {
                assert_int_equal(gv_k8s_pod_delete(f->ctl, NS, w->name, -1, &err), 0);
        } else if (ev->type == GV_K8S_EVENT_DELETED) {
                return false;
        }
        return true;
}

static void test_watch_lifecycle(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        wseq_t w = { .f = f };
        int r = gv_k8s_pod_watch(f->c, NS, "app=nvidia-cuda-validator", "node-a", NULL, 20, on_lifecycle, &w, &err);
        if (r < 0)
                fail_msg("watch: %s", err->msg);
        /* A bound pod is deleted gracefully, as by kube-apiserver: first a MODIFIED with its
         * deletionTimestamp, then DELETED once the simulated kubelet stopped it. */
        assert_int_equal(w.n, 5);
        assert_string_equal(w.seen[0], "SYNCED ");
        assert_string_equal(w.seen[1], "ADDED Pending");
        assert_string_equal(w.seen[2], "MODIFIED Running");
        assert_string_equal(w.seen[3], "MODIFIED Running");
        assert_string_equal(w.seen[4], "DELETED Running");
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
        _cleanup_error_ gv_error_t *err = NULL;
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                r->synced++;
                if (r->synced == 1) {
                        json_object *pod = make_pod("p1", "node-a");
                        assert_int_equal(gv_k8s_pod_create(r->f->ctl, NS, pod, NULL, &err), 0);
                        json_object_put(pod);
                }
                return true;
        }
        if (ev->type != GV_K8S_EVENT_ADDED)
                return true;
        const char *name = jstr(ev->object, "metadata", "name");
        if (strcmp(name, "p1") == 0) {
                r->added[1]++;
                if (!r->dropped) {
                        r->dropped = true;
                        ctl0(r->f, "POST", "/_test/drop-watches", NULL);
                        usleep(200000); /* let the server drop the stream */
                        json_object *pod = make_pod("p2", "node-a");
                        assert_int_equal(gv_k8s_pod_create(r->f->ctl, NS, pod, NULL, &err), 0);
                        json_object_put(pod);
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
        _cleanup_error_ gv_error_t *err = NULL;
        resume_t r = { .f = f };
        int rc = gv_k8s_pod_watch(f->c, NS, NULL, NULL, NULL, 20, on_resume, &r, &err);
        if (rc < 0)
                fail_msg("watch: %s", err->msg);
        assert_int_equal(r.added[1], 1); /* p1 not delivered twice */
        assert_int_equal(r.added[2], 1);
        assert_int_equal(r.synced, 1);   /* resumed, not re-listed */
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

static void run_gone(fixture_t *f, const char *mode)
{
        _cleanup_error_ gv_error_t *err = NULL;
        json_object *pod = make_pod("old", "node-a");
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, NULL, &err), 0);
        json_object_put(pod);
        _cleanup_free_ char *s = NULL;
        assert_true(asprintf(&s, "{\"goneAs\":\"%s\"}", mode) > 0);
        ctl0(f, "POST", "/_test/settings", s);
        ctl0(f, "POST", "/_test/compact", NULL);
        gone_t g = { 0 };
        /* The pod was version 101; 100 is now compacted. */
        int rc = gv_k8s_pod_watch(f->c, NS, NULL, NULL, "100", 20, on_gone, &g, &err);
        if (rc < 0)
                fail_msg("watch (%s): %s", mode, err->msg);
        assert_int_equal(g.synced, 1);
        assert_int_equal(g.added, 1);
        assert_int_equal(count_requests(f, "GET", "/pods", 1), 1);
        assert_int_equal(count_requests(f, "GET", "/pods", 0), 1);
        bool logged = false;
        for (size_t i = 0; i < f->log.n; i++)
                logged |= strstr(f->log.lines[i], "410 Gone") != NULL;
        assert_true(logged);
}

static void test_watch_relist_on_410_event(void **state)
{
        run_gone(*state, "event");
}

static void test_watch_relist_on_410_http(void **state)
{
        run_gone(*state, "http");
}

static bool on_count_bookmarks(void *ud, const gv_k8s_watch_event_t *ev)
{
        if (ev->type == GV_K8S_EVENT_BOOKMARK)
                (*(int *) ud)++;
        return true;
}

static void test_watch_deadline_and_bookmarks(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        int bookmarks = 0;
        double t0 = now_s();
        int rc = gv_k8s_node_watch(f->c, "node-a", NULL, 2, on_count_bookmarks, &bookmarks, &err);
        double dt = now_s() - t0;
        assert_int_equal(rc, -ETIMEDOUT);
        assert_int_equal(err->reason, GV_REASON_TIMEOUT);
        assert_true(dt >= 1.9 && dt < 5.0);
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
        _cleanup_error_ gv_error_t *err = NULL;
        double t0 = now_s();
        assert_int_equal(gv_k8s_node_watch(f->c, "node-a", NULL, 30, on_set_stop, f, &err), -EINTR);
        assert_int_equal(err->reason, GV_REASON_INTERRUPTED);
        assert_true(now_s() - t0 < 3.0);
        json_object *o = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &o, &err), -EINTR);
        f->stop = 0;
}

static void test_retry_429_retry_after(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "PUT", "/_test/nodes/node-a", "{\"capacity\":{\"nvidia.com/gpu\":\"1\"}}");
        ctl0(f, "POST", "/_test/faults",
             "{\"type\":\"status\",\"code\":429,\"retryAfter\":1,\"count\":1,\"path\":\"/nodes/node-a\"}");
        json_object *node = NULL;
        double t0 = now_s();
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), 0);
        double dt = now_s() - t0;
        assert_true(dt >= 0.9); /* Retry-After: 1 honoured rather than the 50 ms backoff */
        assert_true(dt < 4.0);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", "/nodes/node-a", 0), 2);
        bool logged = false;
        for (size_t i = 0; i < f->log.n; i++)
                logged |= strstr(f->log.lines[i], "429 Too Many Requests") && strstr(f->log.lines[i], "retry 2/4 in 1000 ms");
        assert_true(logged);
}

static void test_retry_500_and_bound(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "PUT", "/_test/nodes/node-a", "{}");
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"status\",\"code\":500,\"count\":2,\"path\":\"/nodes/\"}");
        json_object *node = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), 0);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", "/nodes/node-a", 0), 3);

        /* A dropped connection is retried too. */
        ctl0(f, "DELETE", "/_test/requests", NULL);
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"drop\",\"count\":1,\"path\":\"/nodes/\"}");
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), 0);
        json_object_put(node);
        assert_int_equal(count_requests(f, "GET", "/nodes/node-a", 0), 2);

        /* Bounded: 4 attempts, then the last error. */
        ctl0(f, "DELETE", "/_test/requests", NULL);
        ctl0(f, "POST", "/_test/faults",
             "{\"type\":\"status\",\"code\":503,\"count\":100,\"path\":\"/nodes/\",\"message\":\"etcd is sad\"}");
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), -EIO);
        assert_non_null(strstr(err->msg, "503 Service Unavailable: etcd is sad"));
        assert_non_null(strstr(err->msg, "gave up after 4 attempts"));
        assert_int_equal(count_requests(f, "GET", "/nodes/node-a", 0), 4);

        /* POST is not retried on 500 (it may have been applied). */
        ctl0(f, "DELETE", "/_test/faults", NULL);
        ctl0(f, "DELETE", "/_test/requests", NULL);
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"status\",\"code\":500,\"count\":5,\"method\":\"POST\"}");
        json_object *pod = make_pod("np", "node-a");
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, NULL, &err), -EIO);
        json_object_put(pod);
        assert_int_equal(count_requests(f, "POST", "/pods", 0), 1);
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

static void test_nodes_logs_events(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "PUT", "/_test/nodes/node-a",
             "{\"labels\":{\"nvidia.com/gpu.present\":\"true\"},\"capacity\":{\"nvidia.com/gpu\":\"8\"},"
             "\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}");
        json_object *node = NULL, *st = NULL, *cap = NULL, *g = NULL;
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), 0);
        assert_true(json_object_object_get_ex(node, "status", &st));
        assert_true(json_object_object_get_ex(st, "capacity", &cap));
        assert_true(json_object_object_get_ex(cap, "nvidia.com/gpu", &g));
        assert_string_equal(json_object_get_string(g), "8");
        json_object_put(node);
        assert_int_equal(gv_k8s_node_get(f->c, "nope", &node, &err), -ENOENT);

        json_object *patch = json_tokener_parse("{\"metadata\":{\"labels\":{\"nvidia.com/gpu-validator.ready\":\"true\"}}}");
        assert_int_equal(gv_k8s_node_patch(f->c, "node-a", false, patch, &node, &err), 0);
        json_object *md = NULL, *labels = NULL, *v = NULL;
        assert_true(json_object_object_get_ex(node, "metadata", &md));
        assert_true(json_object_object_get_ex(md, "labels", &labels));
        assert_true(json_object_object_get_ex(labels, "nvidia.com/gpu-validator.ready", &v));
        assert_true(json_object_object_get_ex(labels, "nvidia.com/gpu.present", &v));
        json_object_put(node);
        json_object_put(patch);
        patch = json_tokener_parse("{\"status\":{\"conditions\":[{\"type\":\"GPUValidated\",\"status\":\"True\"}]}}");
        assert_int_equal(gv_k8s_node_patch(f->c, "node-a", true, patch, NULL, &err), 0);
        json_object_put(patch);
        assert_int_equal(count_requests(f, "PATCH", "/nodes/node-a/status", 0), 1);

        /* Pod log with container and tailLines. */
        json_object *pod = make_pod("logpod", "node-a");
        assert_int_equal(gv_k8s_pod_create(f->c, NS, pod, NULL, &err), 0);
        json_object_put(pod);
        ctl0(f, "POST", "/_test/logs/" NS "/logpod/cuda-validation", "{\"text\":\"one\\ntwo\\nthree\\n\"}");
        char *text = NULL;
        assert_int_equal(gv_k8s_pod_log(f->c, NS, "logpod", "cuda-validation", 2, &text, &err), 0);
        assert_string_equal(text, "two\nthree\n");
        free(text);
        assert_int_equal(gv_k8s_pod_log(f->c, NS, "nologpod", "x", 0, &text, &err), -ENOENT);

        /* Event about the pod. */
        assert_int_equal(gv_k8s_pod_get(f->c, NS, "logpod", &pod, &err), 0);
        gv_k8s_event_t pe = { .type = "Warning", .reason = "ValidationFailed", .message = "exit code 1",
                              .action = "Validate", .component = "gpu-validator" };
        assert_int_equal(gv_k8s_event_create(f->c, NULL, pod, &pe, &err), 0); /* in the pod's namespace */
        json_object_put(pod);
        json_object *events = NULL, *items = NULL;
        assert_int_equal(gv_k8s_get(f->c, "/api/v1/namespaces/" NS "/events", &events, &err), 0);
        assert_true(json_object_object_get_ex(events, "items", &items));
        assert_int_equal(json_object_array_length(items), 1);
        json_object *e0 = json_object_array_get_idx(items, 0);
        assert_string_equal(jstr(e0, "reason", NULL), "ValidationFailed");
        assert_string_equal(jstr(e0, "involvedObject", "name"), "logpod");
        assert_string_equal(jstr(e0, "involvedObject", "kind"), "Pod");
        json_object_put(events);
}

/* POST a ResourceSlice of @driver for @node as @version through the control client. */
static void post_slice(fixture_t *f, const char *version, const char *name, const char *node, const char *driver)
{
        _cleanup_free_ char *path = NULL, *body = NULL;
        assert_true(asprintf(&path, "/apis/resource.k8s.io/%s/resourceslices", version) > 0);
        assert_true(asprintf(&body,
                             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"%s\",\"nodeName\":\"%s\","
                             "\"pool\":{\"name\":\"%s\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[]}}",
                             name, driver, node, node) > 0);
        ctl0(f, "POST", path, body);
}

/* The names of a ResourceSliceList's items, comma-separated (heap). */
static char *item_names(json_object *list)
{
        json_object *items = NULL;
        assert_true(json_object_object_get_ex(list, "items", &items));
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        assert_non_null(m);
        for (size_t i = 0; i < json_object_array_length(items); i++)
                fprintf(m, "%s%s", i ? "," : "", jstr(json_object_array_get_idx(items, i), "metadata", "name"));
        assert_int_equal(fclose(m), 0);
        return buf;
}

static void test_resource_slice_list(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        post_slice(f, "v1", "a-gpu", "node-a", "gpu.nvidia.com");
        post_slice(f, "v1", "a-nic", "node-a", "dra.net.example.com");
        post_slice(f, "v1beta1", "b-gpu", "node-b", "gpu.nvidia.com");
        /* both field selectors; v1 first */
        const char *version = NULL;
        json_object *list = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-a", "gpu.nvidia.com", &version, &list, &err), 0);
        assert_string_equal(version, "v1");
        char *names = item_names(list);
        assert_string_equal(names, "a-gpu");
        free(names);
        assert_string_equal(jstr(list, "apiVersion", NULL), "resource.k8s.io/v1");
        json_object_put(list);
        /* one selector, or none */
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-a", NULL, NULL, &list, &err), 0);
        names = item_names(list);
        assert_string_equal(names, "a-gpu,a-nic");
        free(names);
        json_object_put(list);
        assert_int_equal(gv_k8s_resource_slice_list(f->c, NULL, "gpu.nvidia.com", NULL, &list, &err), 0);
        names = item_names(list);
        assert_string_equal(names, "a-gpu,b-gpu");
        free(names);
        json_object_put(list);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/v1/resourceslices", 0), 3);

        /* an older server: v1 and v1beta2 are 404, v1beta1 answers; the version found is used first next time */
        ctl0(f, "POST", "/_test/settings", "{\"resourceVersions\":[\"v1beta1\"]}");
        ctl0(f, "DELETE", "/_test/requests", NULL);
        version = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-b", "gpu.nvidia.com", &version, &list, &err), 0);
        assert_string_equal(version, "v1beta1");
        assert_string_equal(jstr(list, "apiVersion", NULL), "resource.k8s.io/v1beta1");
        json_object_put(list);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 3);
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-b", "gpu.nvidia.com", &version, &list, &err), 0);
        json_object_put(list);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 4);

        /* no version served: -ENOENT naming the paths */
        ctl0(f, "POST", "/_test/settings", "{\"resourceVersions\":[]}");
        version = NULL;
        list = NULL;
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-a", "gpu.nvidia.com", &version, &list, &err), -ENOENT);
        assert_null(list);
        assert_null(version);
        assert_int_equal(err->reason, GV_REASON_KUBERNETES);
        assert_non_null(strstr(err->msg, "/apis/resource.k8s.io/{v1,v1beta2,v1beta1}/resourceslices"));
        gv_error_free(&err);

        /* any other error is final (a 403 of RBAC): no other version is tried */
        ctl0(f, "POST", "/_test/settings", "{\"resourceVersions\":[\"v1\",\"v1beta2\",\"v1beta1\"]}");
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"status\",\"code\":403,\"count\":1,\"path\":\"/resourceslices\"}");
        ctl0(f, "DELETE", "/_test/requests", NULL);
        assert_int_equal(gv_k8s_resource_slice_list(f->c, "node-a", "gpu.nvidia.com", NULL, &list, &err), -EACCES);
        assert_int_equal(count_requests(f, "GET", "/apis/resource.k8s.io/", 0), 1);
}

typedef struct nodew {
        fixture_t *f;
        bool changed;
} nodew_t;

static bool on_node(void *ud, const gv_k8s_watch_event_t *ev)
{
        nodew_t *n = ud;
        if (ev->type == GV_K8S_EVENT_SYNCED) {
                ctl0(n->f, "PUT", "/_test/nodes/node-b", "{\"capacity\":{\"nvidia.com/gpu\":\"1\"}}"); /* other node */
                ctl0(n->f, "PUT", "/_test/nodes/node-a", "{\"capacity\":{\"nvidia.com/gpu\":\"2\"}}");
        }
        if (ev->type == GV_K8S_EVENT_MODIFIED) {
                assert_string_equal(jstr(ev->object, "metadata", "name"), "node-a");
                n->changed = true;
                return false;
        }
        return true;
}

static void test_node_watch(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "PUT", "/_test/nodes/node-a", "{}");
        nodew_t n = { .f = f };
        int rc = gv_k8s_node_watch(f->c, "node-a", NULL, 10, on_node, &n, &err);
        if (rc < 0)
                fail_msg("watch: %s", err->msg);
        assert_true(n.changed);
}

static void test_token_file_rotation_and_secrecy(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_free_ char *tf = gv_path_join(f->srv.dir, "tokenfile");
        _cleanup_close_ int dfd = open(f->srv.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", "first-token-AAAA\n", 17, 0600, &err), 0);
        gv_k8s_config_t *cfg = calloc(1, sizeof(*cfg));
        assert_non_null(cfg);
        assert_true(asprintf(&cfg->server, "http://127.0.0.1:%d", f->srv.port) > 0);
        cfg->token_file = strdup(tf);
        gv_k8s_options_t o = { .max_attempts = 2, .backoff_initial_ms = 20, .log = capture, .log_userdata = &f->log };
        gv_k8s_client_t *c = NULL;
        assert_int_equal(gv_k8s_client_new(cfg, &o, &c, &err), 0);
        ctl0(f, "PUT", "/_test/nodes/node-a", "{}");
        ctl0(f, "POST", "/_test/token", "{\"token\":\"first-token-AAAA\"}");
        json_object *node = NULL;
        assert_int_equal(gv_k8s_node_get(c, "node-a", &node, &err), 0);
        json_object_put(node);
        /* Rotate: new file content (a new inode by rename), server accepts only the new token. */
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", "second-token-BBBB\n", 18, 0600, &err), 0);
        ctl0(f, "POST", "/_test/token", "{\"token\":\"second-token-BBBB\"}");
        assert_int_equal(gv_k8s_node_get(c, "node-a", &node, &err), 0);
        json_object_put(node);
        /* A wrong token: 401, -EPERM, and neither token in the message. */
        ctl0(f, "POST", "/_test/token", "{\"token\":\"third\"}");
        assert_int_equal(gv_k8s_node_get(c, "node-a", &node, &err), -EPERM);
        assert_non_null(strstr(err->msg, "401 Unauthorized"));
        assert_null(strstr(err->msg, "second-token"));
        gv_k8s_client_free(c);
        unlink(tf);

        /* The main client, with debug logging, across errors and a watch: no token anywhere. */
        ctl0(f, "POST", "/_test/token", "{\"token\":\"" TOKEN "\"}");
        assert_int_equal(gv_k8s_pod_get(f->c, NS, "absent", &node, &err), -ENOENT);
        assert_null(strstr(err->msg, TOKEN));
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"status\",\"code\":429,\"retryAfter\":0,\"count\":1}");
        assert_int_equal(gv_k8s_node_get(f->c, "node-a", &node, &err), 0);
        json_object_put(node);
        assert_true(f->log.n > 0);
        for (size_t i = 0; i < f->log.n; i++) {
                assert_null(strstr(f->log.lines[i], TOKEN));
                assert_null(strstr(f->log.lines[i], "first-token"));
                assert_null(strstr(f->log.lines[i], "second-token"));
                assert_null(strstr(f->log.lines[i], "Bearer"));
        }
        /* The token was only ever sent in the header: never in a path or query. */
        json_object *r = ctl(f, "GET", "/_test/requests", NULL);
        assert_null(strstr(json_object_to_json_string(r), TOKEN));
        json_object_put(r);
}

static void test_tls(void **state)
{
        server_t s = { 0 };
        int r = server_start(&s, "--tls");
        if (r == 77) {
                server_stop(&s);
                skip();
        }
        _cleanup_error_ gv_error_t *err = NULL;
        gv_k8s_client_t *c = client_for(s.kubeconfig, &(gv_k8s_options_t){ .max_attempts = 1 });
        assert_non_null(gv_k8s_client_config(c)->ca_data);
        assert_int_equal(strncmp(gv_k8s_client_config(c)->server, "https://", 8), 0);
        json_object *list = NULL;
        if (gv_k8s_get(c, "/api/v1/nodes", &list, &err) < 0)
                fail_msg("TLS GET: %s", err->msg);
        json_object_put(list);
        gv_k8s_client_free(c);

        /* Without the CA, verification fails: TLS verification is on by default. */
        gv_k8s_config_t *cfg = NULL;
        assert_int_equal(gv_k8s_config_from_kubeconfig(s.kubeconfig, NULL, &cfg, &err), 0);
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
                assert_int_equal(gv_k8s_config_from_kubeconfig(s.kubeconfig, NULL, &cfg, &err), 0);
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
        _cleanup_free_ char *kc2 = gv_path_join(s.dir, "tokenfile"); /* a name server_stop() removes */
        _cleanup_free_ char *text = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, s.kubeconfig, false, 1 << 20, &text, NULL, NULL), 0);
        char *at = strstr(text, "    certificate-authority-data:");
        assert_non_null(at);
        _cleanup_free_ char *both = NULL;
        assert_true(asprintf(&both, "%.*s    insecure-skip-tls-verify: true\n%s", (int) (at - text), text, at) > 0);
        _cleanup_close_ int dfd = open(s.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(gv_atomic_write_at(dfd, "tokenfile", both, strlen(both), 0600, &err), 0);
        cfg = NULL;
        assert_int_equal(gv_k8s_config_from_kubeconfig(kc2, NULL, &cfg, &err), -EINVAL);
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
        server_stop(&s);
}

static bool on_any(void *ud, const gv_k8s_watch_event_t *ev)
{
        (void) ev;
        (*(int *) ud)++;
        return true;
}

/* A response body is bounded (16 MiB), a watch event too
 * (2 MiB); the error names the request and the limit, and nothing is retried. */
static void test_huge_bodies(void **state)
{
        fixture_t *f = *state;
        _cleanup_error_ gv_error_t *err = NULL;
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"huge\",\"bytes\":50000000,\"path\":\"/nodes\",\"count\":5}");
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
        ctl0(f, "DELETE", "/_test/faults", NULL);
        ctl0(f, "POST", "/_test/faults", "{\"type\":\"huge\",\"bytes\":16000000,\"path\":\"/nodes\"}");
        assert_int_equal(gv_k8s_get(f->c, "/api/v1/nodes", &list, &err), 0);
        assert_non_null(list);
        json_object_put(list);

        /* A watch event over 2 MiB ends the watch with a clear error. */
        ctl0(f, "DELETE", "/_test/faults", NULL);
        ctl0(f, "PUT", "/_test/nodes/node-a", "{}");
        ctl0(f, "POST", "/_test/faults",
             "{\"type\":\"huge\",\"bytes\":3000000,\"path\":\"/nodes\",\"watch\":true,\"count\":10}");
        int events = 0;
        r = gv_k8s_node_watch(f->c, "node-a", NULL, 20, on_any, &events, &err);
        assert_int_equal(r, -EMSGSIZE);
        assert_non_null(strstr(err->msg, "watch event"));
        assert_non_null(strstr(err->msg, "2 MiB"));
        assert_non_null(strstr(err->msg, "/api/v1/nodes"));
        assert_int_equal(count_requests(f, "GET", "/api/v1/nodes", 1), 1); /* not resumed again and again */
}

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
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_pod_crud, test_setup),
                cmocka_unit_test_setup(test_watch_lifecycle, test_setup),
                cmocka_unit_test_setup(test_watch_resume_after_drop, test_setup),
                cmocka_unit_test_setup(test_watch_relist_on_410_event, test_setup),
                cmocka_unit_test_setup(test_watch_relist_on_410_http, test_setup),
                cmocka_unit_test_setup(test_watch_deadline_and_bookmarks, test_setup),
                cmocka_unit_test_setup(test_stop_flag, test_setup),
                cmocka_unit_test_setup(test_retry_429_retry_after, test_setup),
                cmocka_unit_test_setup(test_retry_500_and_bound, test_setup),
                cmocka_unit_test_setup(test_unreachable, test_setup),
                cmocka_unit_test_setup(test_nodes_logs_events, test_setup),
                cmocka_unit_test_setup(test_node_watch, test_setup),
                cmocka_unit_test_setup(test_resource_slice_list, test_setup),
                cmocka_unit_test_setup(test_token_file_rotation_and_secrecy, test_setup),
                cmocka_unit_test_setup(test_tls, test_setup),
                cmocka_unit_test_setup(test_huge_bodies, test_setup),
        };
        int r = cmocka_run_group_tests_name("k8s-apiserver", tests, group_setup, group_teardown);
        gv_k8s_global_cleanup();
        return r;
}
