/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-validator watch: validate the chain (or find it already valid), then
 * keep watching the node -- .driver-ctr-ready, the driver root's
 * libnvidia-ml.so.1, the /dev/nvidia* nodes and driver-ready's GENERATION --
 * with gv_dirwatch (inotify), and the GPUs themselves through NVML
 * (watch-gpus.c: critical Xids, GPU_IS_LOST).  When the node changes,
 * invalidate at once (downstream first, through the marker store) and
 * re-run the chain in place with capped exponential backoff, at most once
 * per minimum interval.  docs/markers.md, "Re-validation"; the pure parts
 * are in revalidate.c.
 */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/cleanup.h"
#include "watch-internal.h"

#define CMD GV_WATCH_CMD
#define N_WATCHES GV_WATCH_N_WATCHES

/* The watcher's own options, above the shared GV_OPT_* range. */
enum { OPT_BACKOFF = 0x400, OPT_MAX_BACKOFF, OPT_MIN_INTERVAL, OPT_GPU_HEALTH, OPT_IGNORE_XIDS };

static void help(FILE *f)
{
        fprintf(f,
                "Usage: gpu-validator watch [--components LIST] [--revalidate-backoff SECONDS]\n"
                "                           [--revalidate-max-backoff SECONDS] [--revalidate-min-interval SECONDS]\n"
                "                           [--gpu-health-interval SECONDS] [--gpu-health-ignore-xids LIST]\n"
                "                           [OPTIONS]\n"
                "\n"
                "Validates the chain as `run` does (unless its last marker is already ready), prints\n"
                "\"all validations are successful\", then keeps watching the node with inotify: the driver\n"
                "container's flag <OUTPUT_DIR>/.driver-ctr-ready, libnvidia-ml.so.1 under the driver root,\n"
                "the nvidia* device nodes under the dev root, and driver-ready's GENERATION. When the flag is\n"
                "removed or replaced (the driver container restarted), a device node goes away, the library\n"
                "goes or is replaced, or driver-ready goes or is republished, the chain's markers are\n"
                "removed at once (downstream first; of a driver-ready republished by another writer, only\n"
                "its dependants) and the chain is re-run in place, with capped\n"
                "exponential backoff while it fails. Once the driver is validated it also watches the GPUs\n"
                "through that driver's NVML: a GPU that reports a critical Xid (an NVML event; application\n"
                "errors 13, 31, 43, 45, 68, 109 are skipped, as NVIDIA's device plugin does) or answers\n"
                "GPU_IS_LOST (fell off the bus, Xid 79) invalidates the chain the same way (reasons xid,\n"
                "gpu-lost), the re-run's driver check names it, and a lost GPU that answers again brings the\n"
                "next attempt forward. Counts re-validations per reason, when each starts, in\n"
                "<OUTPUT_DIR>/.gpu-validator-revalidations (gpu_validator_revalidations_total in\n"
                "`gpu-validator metrics`). Runs until SIGTERM/SIGINT.\n"
                "\nOptions:\n"
                "  --components LIST        as for run (default driver,toolkit,cuda,plugin)\n"
                "  --revalidate-backoff SECONDS\n"
                "                           first delay after a change before re-running, doubling after\n"
                "                           each failed attempt (REVALIDATE_BACKOFF_SECONDS; 0-%u, default %u;\n"
                "                           0 means 0.1 s)\n"
                "  --revalidate-max-backoff SECONDS\n"
                "                           cap of that delay (REVALIDATE_MAX_BACKOFF_SECONDS; %u-%u, default %u)\n"
                "  --revalidate-min-interval SECONDS\n"
                "                           rate limit: two chain runs never start closer than this\n"
                "                           (REVALIDATE_MIN_INTERVAL_SECONDS; 0-%u, default %u)\n"
                "  --gpu-health-interval SECONDS\n"
                "                           how often the GPUs are probed: pending Xid events taken and each\n"
                "                           GPU asked for its handle and UUID, so a fault is seen within this\n"
                "                           time (GPU_HEALTH_INTERVAL_SECONDS; 0-%u, default %u; 0 turns GPU\n"
                "                           health off: NVML is then not kept loaded between validations)\n"
                "  --gpu-health-ignore-xids LIST\n"
                "                           more Xids that do not re-validate, comma-separated, or 'all' (only\n"
                "                           GPU_IS_LOST then) (GPU_HEALTH_IGNORE_XIDS)\n",
                GV_REVAL_BACKOFF_MAX_S, GV_REVAL_BACKOFF_DEFAULT_S, GV_REVAL_MAX_BACKOFF_MIN_S,
                GV_REVAL_MAX_BACKOFF_MAX_S, GV_REVAL_MAX_BACKOFF_DEFAULT_S, GV_REVAL_MIN_INTERVAL_MAX_S,
                GV_REVAL_MIN_INTERVAL_DEFAULT_S, GV_REVAL_GPU_HEALTH_MAX_S, GV_REVAL_GPU_HEALTH_DEFAULT_S);
        gv_options_help_validation(f);
        fprintf(f,
                "\nExit codes:\n"
                "  0 stopped by SIGTERM/SIGINT (the markers stay as they are: valid or removed)\n"
                "  1 the status folder or a watch failed (a failed validation is retried, not an exit)\n"
                "  2 usage or configuration error\n");
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator watch --components driver,toolkit",
                "validate, then re-validate whenever the driver container restarts or device nodes go",
                "gpu-validator watch --revalidate-backoff 5 --revalidate-max-backoff 120",
                "wait 5 s after a change before re-validating, at most 2 minutes between tries",
                "gpu-validator watch --gpu-health-interval 5 --gpu-health-ignore-xids 63,64",
                "probe the GPUs every 5 s; row-remapping Xids 63 and 64 do not re-validate",
                NULL });
}

static int bounded(const char *what, const char *arg, unsigned lo, unsigned hi, unsigned *out, gv_error_t **err)
{
        unsigned n;
        if (gv_parse_uint(arg, &n) < 0 || n < lo || n > hi)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s %s: expected %u to %u seconds", what, arg, lo,
                                    hi);
        *out = n;
        return 0;
}

static int on_extra(void *userdata, int opt, const char *arg, gv_error_t **err)
{
        watch_args_t *a = userdata;
        switch (opt) {
        case OPT_BACKOFF:
                return bounded("--revalidate-backoff", arg, 0, GV_REVAL_BACKOFF_MAX_S, &a->first_s, err);
        case OPT_MAX_BACKOFF:
                return bounded("--revalidate-max-backoff", arg, GV_REVAL_MAX_BACKOFF_MIN_S, GV_REVAL_MAX_BACKOFF_MAX_S,
                               &a->cap_s, err);
        case OPT_MIN_INTERVAL:
                return bounded("--revalidate-min-interval", arg, 0, GV_REVAL_MIN_INTERVAL_MAX_S, &a->min_interval_s,
                               err);
        case OPT_GPU_HEALTH:
                return bounded("--gpu-health-interval", arg, 0, GV_REVAL_GPU_HEALTH_MAX_S, &a->health_s, err);
        case OPT_IGNORE_XIDS:
                free(a->ignored_xids);
                a->ignored_xids = NULL;
                return gv_reval_parse_xids("--gpu-health-ignore-xids", arg, &a->ignore_all_xids, &a->ignored_xids,
                                           &a->n_ignored_xids, err);
        default:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown option");
        }
}

/* The settings from the environment (flags, parsed later, win). */
static int args_from_env(watch_args_t *a, gv_error_t **err)
{
        static const struct {
                const char *name;
                unsigned lo, hi;
                size_t off;
        } vars[] = {
                { "REVALIDATE_BACKOFF_SECONDS", 0, GV_REVAL_BACKOFF_MAX_S,
                  offsetof(watch_args_t, first_s) },
                { "REVALIDATE_MAX_BACKOFF_SECONDS", GV_REVAL_MAX_BACKOFF_MIN_S,
                  GV_REVAL_MAX_BACKOFF_MAX_S, offsetof(watch_args_t, cap_s) },
                { "REVALIDATE_MIN_INTERVAL_SECONDS", 0,
                  GV_REVAL_MIN_INTERVAL_MAX_S, offsetof(watch_args_t, min_interval_s) },
                { "GPU_HEALTH_INTERVAL_SECONDS", 0, GV_REVAL_GPU_HEALTH_MAX_S, offsetof(watch_args_t, health_s) },
        };
        for (size_t i = 0; i < GV_ARRAY_SIZE(vars); i++) {
                const char *v = gv_env(vars[i].name);
                if (v && bounded(vars[i].name, v, vars[i].lo, vars[i].hi, (unsigned *) ((char *) a + vars[i].off),
                                 err) < 0)
                        return -EINVAL;
        }
        const char *x = gv_env("GPU_HEALTH_IGNORE_XIDS");
        if (x)
                return gv_reval_parse_xids("GPU_HEALTH_IGNORE_XIDS", x, &a->ignore_all_xids, &a->ignored_xids,
                                           &a->n_ignored_xids, err);
        return 0;
}

/* The next jitter in [0, 1) (xorshift64*, seeded once from getrandom(); no global state). */
static double jitter(watcher_t *wt)
{
        uint64_t x = wt->seed;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        wt->seed = x;
        return (double) ((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static void watcher_clear(watcher_t *wt)
{
        for (size_t i = 0; i < N_WATCHES; i++)
                gv_dirwatch_close(&wt->w[i]);
        gv_reval_paths_clear(&wt->paths);
        gv_node_state_clear(&wt->base);
        gv_node_state_clear(&wt->seen);
        gv_watch_gpus_release(wt);
        gv_store_close(&wt->store);
}

/* (Re)open the watches on the current paths; a folder that is missing is watched for its appearance. */
static int arm(watcher_t *wt, gv_error_t **err)
{
        const char *dirs[N_WATCHES] = { gv_store_dir(wt->store), wt->paths.dev_dir, wt->paths.lib_dir };
        for (size_t i = 0; i < N_WATCHES; i++) {
                gv_dirwatch_close(&wt->w[i]);
                if (dirs[i] && gv_dirwatch_open(dirs[i], NULL, &wt->w[i], err) < 0)
                        return gv_error_prefix(err, "watch %s", dirs[i]);
                if (wt->w[i] && gv_dirwatch_state(wt->w[i]) == GV_DIRWATCH_POLLING)
                        gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, "io", "%s: no inotify (%s): polling every %d ms",
                                    dirs[i], gv_dirwatch_error(wt->w[i])->msg, GV_DIRWATCH_POLL_MS);
        }
        return 0;
}

/* The paths from driver-ready's facts (when it is ready) and the watches on them. */
static int locate(watcher_t *wt, gv_error_t **err)
{
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(wt->store, GV_MARKER_DRIVER, &info, err);
        if (r >= 0) {
                gv_reval_paths_clear(&wt->paths);
                r = gv_reval_paths_find(&wt->o->cfg, info.state == GV_MARKER_READY ? &info.content : NULL,
                                        &wt->paths, err);
        }
        gv_marker_info_clear(&info);
        return r < 0 ? r : arm(wt, err);
}

/*
 * Wait up to @timeout_ms (< 0: forever) for an event on any watch.  1 when
 * something arrived (or a watch without inotify is due), 0 on timeout,
 * -EINTR when stopped, another negative errno when a watch failed.  The stop
 * signals are blocked except inside ppoll(), so a SIGTERM between the check
 * of the flag and the wait is not lost.
 */
static int wait_events(watcher_t *wt, int64_t timeout_ms, gv_error_t **err)
{
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &old);
        struct pollfd fds[N_WATCHES];
        nfds_t n = 0;
        for (size_t i = 0; i < N_WATCHES; i++) {
                int fd = wt->w[i] ? gv_dirwatch_fd(wt->w[i]) : -1;
                if (fd >= 0)
                        fds[n++] = (struct pollfd) { .fd = fd, .events = POLLIN };
                else if (wt->w[i] && (timeout_ms < 0 || timeout_ms > GV_DIRWATCH_POLL_MS))
                        timeout_ms = GV_DIRWATCH_POLL_MS; /* its own fallback: poll interval */
        }
        int r = 0;
        if (!*wt->cli->stop) {
                struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000 };
                r = ppoll(fds, n, timeout_ms < 0 ? NULL : &ts, &old);
                if (r < 0)
                        r = -errno;
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (*wt->cli->stop || r == -EINTR)
                return *wt->cli->stop ? -EINTR : 0;
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_IO, "waiting for the watches: %s", strerror(-r));
        bool any = false;
        for (size_t i = 0; i < N_WATCHES; i++) {
                if (!wt->w[i])
                        continue;
                int e = gv_dirwatch_next(wt->w[i], 0, wt->cli->stop, err);
                if (e == -EINTR)
                        return e;
                if (e < 0)
                        return e;
                any |= e > GV_DIRWATCH_TIMEOUT;
        }
        return any;
}

static bool gpu_reason(gv_revalidation_reason_t reason)
{
        return reason == GV_REVAL_GPU_LOST || reason == GV_REVAL_XID;
}

void gv_watch_invalidate(watcher_t *wt, gv_revalidation_reason_t reason, const char *what)
{
        _cleanup_error_ gv_error_t *err = NULL;
        if (wt->pending == GV_REVAL__MAX)
                wt->pending = reason;
        if (reason == GV_REVAL_GENERATION_CHANGED) {
                /*
                 * driver-ready itself was republished (or removed) by another writer: keep what it
                 * wrote; its dependants are removed (the store's publish did so already, unless a
                 * hand removed driver-ready).
                 */
                for (int m = 0; m < GV_MARKER__MAX; m++)
                        if (gv_marker_parent(m) == GV_MARKER_DRIVER && gv_store_invalidate(wt->store, m, &err) < 0)
                                gv_cli_fail(wt->cli, CMD, &err);
        } else if (gv_store_fail(wt->store, wt->root, &err) < 0) {
                gv_cli_fail(wt->cli, CMD, &err);
        }
        gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, gv_revalidation_reason_name(reason),
                    "%s: %s invalidated; re-validating", what ? what : "node changed",
                    reason == GV_REVAL_GENERATION_CHANGED ? "everything downstream of driver-ready"
                                                          : "the chain from its root");
        int64_t now = gv_now_ms();
        wt->valid = false;
        wt->attempt = 0;
        wt->next_ms = now + gv_reval_delay_ms(1, wt->a->first_s, wt->a->cap_s, jitter(wt),
                                              wt->a->min_interval_s,
                                              wt->last_start_ms < 0 ? -1 : now - wt->last_start_ms);
        gv_node_state_clear(&wt->health_base);
        if (gpu_reason(reason) && wt->health) {
                /* the driver stays: keep probing, to see the GPU answer again, against these files */
                wt->health_base = wt->base;
                wt->base = (gv_node_state_t) { 0 };
        } else {
                gv_watch_gpus_release(wt);
        }
        gv_node_state_clear(&wt->base);
}

void gv_watch_retry_soon(watcher_t *wt)
{
        int64_t t = gv_now_ms();
        int64_t earliest = wt->last_start_ms < 0 ? t : wt->last_start_ms + (int64_t) wt->a->min_interval_s * 1000;
        if (earliest < wt->next_ms)
                wt->next_ms = earliest > t ? earliest : t;
}

static bool same_state(const gv_node_state_t *a, const gv_node_state_t *b)
{
        gv_revalidation_reason_t r;
        return !gv_reval_classify(a, b, &r, NULL) && !gv_reval_classify(b, a, &r, NULL);
}

/* Something happened: compare the node with what was validated (or, while not valid, last seen). */
static int on_events(watcher_t *wt, gv_error_t **err)
{
        gv_node_state_t now = { 0 };
        int r = gv_reval_read_state(wt->store, &wt->paths, &now, err);
        if (r < 0) {
                gv_node_state_clear(&now);
                return r;
        }
        gv_revalidation_reason_t reason;
        const char *what = NULL;
        if (wt->valid && gv_reval_classify(&wt->base, &now, &reason, &what)) {
                gv_watch_invalidate(wt, reason, what);
                gv_node_state_clear(&wt->seen);
                wt->seen = now;
                return 0;
        }
        if (!wt->valid)
                gv_watch_gpus_files_changed(wt, &now);
        if (!wt->valid && !same_state(&wt->seen, &now)) {
                /* the driver may be back: retry now, within the rate limit */
                gv_watch_retry_soon(wt);
                gv_node_state_clear(&wt->seen);
                wt->seen = now;
                return 0;
        }
        gv_node_state_clear(&now);
        return 0;
}

/* Whether the chain's last marker is READY now. */
static bool chain_ready(watcher_t *wt)
{
        gv_marker_info_t info = { 0 };
        bool ok = gv_store_inspect(wt->store, wt->last, &info, NULL) == 0 && info.state == GV_MARKER_READY;
        gv_marker_info_clear(&info);
        return ok;
}

/* The chain is valid now: remember the node as it is (@pre: as it was before the run, or NULL). */
static int settle(watcher_t *wt, gv_node_state_t *pre, gv_error_t **err)
{
        _cleanup_free_ char *old_dev = wt->paths.dev_dir ? strdup(wt->paths.dev_dir) : NULL;
        _cleanup_free_ char *old_lib = wt->paths.lib ? strdup(wt->paths.lib) : NULL;
        int r = locate(wt, err);
        if (r < 0)
                return r;
        gv_node_state_t post = { 0 };
        if ((r = gv_reval_read_state(wt->store, &wt->paths, &post, err)) < 0) {
                gv_node_state_clear(&post);
                return r;
        }
        bool same_paths = (!old_dev == !wt->paths.dev_dir) && (!old_dev || strcmp(old_dev, wt->paths.dev_dir) == 0) &&
                          (!old_lib == !wt->paths.lib) && (!old_lib || strcmp(old_lib, wt->paths.lib) == 0);
        gv_revalidation_reason_t reason;
        const char *what = NULL;
        if (pre && same_paths) {
                pre->generation[0] = '\0'; /* our own run republished driver-ready */
                if (gv_reval_classify(pre, &post, &reason, &what)) {
                        gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, gv_revalidation_reason_name(reason),
                                    "%s while validating", what);
                        gv_node_state_clear(&wt->base);
                        wt->base = post;
                        wt->valid = true;
                        gv_watch_invalidate(wt, reason, what);
                        return 0;
                }
        }
        gv_node_state_clear(&wt->base);
        wt->base = post;
        wt->valid = true;
        wt->attempt = 0;
        gv_node_state_clear(&wt->health_base);
        gv_watch_gpus_arm(wt);
        printf("all validations are successful\n");
        (void) fflush(stdout);
        return 0;
}

/* One chain run.  0 (valid or not, planned), -EINTR when stopped, another negative errno on a folder error. */
static int attempt(watcher_t *wt, gv_error_t **err)
{
        int64_t now = gv_now_ms();
        wt->last_start_ms = now;
        wt->attempt++;
        if (wt->pending != GV_REVAL__MAX) {
                /*
                 * Counted when the re-run starts (a preStop cleanup followed by SIGTERM within the first
                 * delay counts nothing), and before the run's marker events, which make the exporter
                 * re-render with the new count.
                 */
                _cleanup_error_ gv_error_t *werr = NULL;
                wt->counts.count[wt->pending]++;
                wt->counts.present = true;
                wt->pending = GV_REVAL__MAX;
                if (gv_revalidations_write(gv_store_dir(wt->store), &wt->counts, &werr) < 0)
                        gv_cli_fail(wt->cli, CMD, &werr);
        }
        gv_node_state_t pre = { 0 };
        int r = gv_reval_read_state(wt->store, &wt->paths, &pre, err);
        if (r >= 0) {
                /* what the GPU health monitor knows names a lost GPU in the driver check's failure */
                wt->o->cfg.driver.gpu_notes = gv_gpu_health_notes(wt->health, &wt->o->cfg.driver.n_gpu_notes);
                int code = gv_run_chain(wt->selected, wt->n_selected, &wt->o->cfg, wt->store, stdout);
                wt->o->cfg.driver.gpu_notes = NULL;
                wt->o->cfg.driver.n_gpu_notes = 0;
                if (*wt->cli->stop || code == GV_EXIT_INTERRUPTED) {
                        r = -EINTR;
                } else if (code == GV_EXIT_OK && chain_ready(wt)) {
                        r = settle(wt, &pre, err);
                } else {
                        int64_t t = gv_now_ms();
                        int64_t d = gv_reval_delay_ms(wt->attempt + 1, wt->a->first_s, wt->a->cap_s,
                                                      jitter(wt), wt->a->min_interval_s,
                                                      t - wt->last_start_ms);
                        gv_cli_logf(wt->cli, GV_LOG_WARN, CMD, NULL,
                                    "validation attempt %u failed (exit code %d); next attempt in %.1f s, or sooner "
                                    "when the node changes",
                                    wt->attempt, code, (double) d / 1000.0);
                        wt->next_ms = t + d;
                        gv_node_state_clear(&wt->seen);
                        r = gv_reval_read_state(wt->store, &wt->paths, &wt->seen, err);
                }
        }
        gv_node_state_clear(&pre);
        return r;
}

/* The loop: wait for events (or the next attempt), react, until stopped. */
static int loop(watcher_t *wt, gv_error_t **err)
{
        for (;;) {
                if (gv_watch_gpus_timeout(wt) == 0)
                        gv_watch_gpus_tick(wt);
                int64_t timeout = -1;
                if (!wt->valid) {
                        timeout = wt->next_ms - gv_now_ms();
                        if (timeout <= 0) {
                                int r = attempt(wt, err);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                }
                int64_t probe = gv_watch_gpus_timeout(wt);
                if (probe >= 0 && (timeout < 0 || probe < timeout))
                        timeout = probe;
                int r = wait_events(wt, timeout, err);
                if (r < 0)
                        return r;
                if (r > 0 && (r = on_events(wt, err)) < 0)
                        return r;
        }
}

static int watch(gv_cli_t *cli, gv_options_t *o, const watch_args_t *a)
{
        _cleanup_error_ gv_error_t *err = NULL;
        watcher_t wt = { .cli = cli, .o = o, .a = a, .last_start_ms = -1, .pending = GV_REVAL__MAX,
                         .wait_error = NVML_SUCCESS };
        int code = GV_EXIT_OK;
        if (gv_run_select(o->components, o->cfg.assume_ready, wt.selected, GV_ARRAY_SIZE(wt.selected),
                          &wt.n_selected, &err) < 0)
                return gv_cli_fail(cli, CMD, &err);
        wt.root = wt.selected[0]->marker;
        for (size_t i = 0; i < wt.n_selected; i++)
                if (wt.selected[i]->marker == GV_MARKER_DRIVER)
                        wt.root = GV_MARKER_DRIVER;
        wt.last = wt.selected[wt.n_selected - 1]->marker;
        if (getrandom(&wt.seed, sizeof(wt.seed), 0) != (ssize_t) sizeof(wt.seed) || !wt.seed)
                wt.seed = (uint64_t) gv_now_ns() | 1;

        int r = gv_options_open_store(o, GV_STORE_CREATOR, &wt.store, &err);
        if (r >= 0)
                r = gv_revalidations_read(gv_store_dir(wt.store), &wt.counts, &err);
        if (r >= 0)
                r = locate(&wt, &err);
        if (r >= 0 && chain_ready(&wt)) {
                gv_cli_logf(cli, GV_LOG_INFO, CMD, NULL, "%s is ready: watching the node",
                            gv_marker_file(wt.last));
                r = settle(&wt, NULL, &err);
        }
        /* else: not valid, next_ms 0: the loop validates first, as `run` */
        if (r >= 0)
                r = loop(&wt, &err);
        if (r == -EINTR) {
                gv_cli_logf(cli, GV_LOG_INFO, CMD, NULL, "stopped by a signal");
                code = GV_EXIT_OK;
        } else if (r < 0) {
                code = gv_cli_fail(cli, CMD, &err);
        }
        watcher_clear(&wt);
        return code;
}

static void watch_args_clear(watch_args_t *a)
{
        free(a->ignored_xids);
        a->ignored_xids = NULL;
        a->n_ignored_xids = 0;
}

int gv_cmd_watch(gv_cli_t *cli, int argc, char **argv)
{
        static const struct option extra[] = {
                GV_VALIDATION_LONG_OPTIONS,
                { "components", required_argument, NULL, GV_OPT_COMPONENTS },
                { "revalidate-backoff", required_argument, NULL, OPT_BACKOFF },
                { "revalidate-max-backoff", required_argument, NULL, OPT_MAX_BACKOFF },
                { "revalidate-min-interval", required_argument, NULL, OPT_MIN_INTERVAL },
                { "gpu-health-interval", required_argument, NULL, OPT_GPU_HEALTH },
                { "gpu-health-ignore-xids", required_argument, NULL, OPT_IGNORE_XIDS },
        };
        _cleanup_options_ gv_options_t o = { 0 };
        _cleanup_(watch_args_clear) watch_args_t a = {
                .o = &o, .first_s = GV_REVAL_BACKOFF_DEFAULT_S, .cap_s = GV_REVAL_MAX_BACKOFF_DEFAULT_S,
                .min_interval_s = GV_REVAL_MIN_INTERVAL_DEFAULT_S, .health_s = GV_REVAL_GPU_HEALTH_DEFAULT_S
        };
        _cleanup_error_ gv_error_t *err = NULL;
        if (args_from_env(&a, &err) < 0)
                return gv_cli_fail(cli, CMD, &err);
        int code = GV_EXIT_OK;
        if (gv_cli_parse_store_command(cli, CMD, argc, argv, extra, GV_ARRAY_SIZE(extra), on_extra, &a, help, &o,
                                       &code) < 0)
                return code;
        if (optind < argc)
                return gv_cli_usage_error(cli, CMD, "unexpected argument '%s'", argv[optind]);
        if (o.components && !o.components[0])
                return gv_cli_usage_error(cli, CMD, "--components names no component");
        if (a.cap_s < a.first_s)
                return gv_cli_usage_error(cli, CMD, "--revalidate-max-backoff %u is below --revalidate-backoff %u",
                                          a.cap_s, a.first_s);
        if (gv_options_check_driver_roots(&o, &err) < 0)
                return gv_cli_fail(cli, CMD, &err);
        return watch(cli, &o, &a);
}
