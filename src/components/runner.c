/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The marker protocol around one component (gv_component_run()), the
 * component table and the retry backoff.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "components-internal.h"
#include "sandbox.h"

/* Chain order: what `run` validates first comes first (mofed before the driver, as the driver container waits for it). */
static const gv_component_t *const all_components[] = {
        &gv_component_mofed,
        &gv_component_driver,
        &gv_component_nvidia_fs,
        &gv_component_gdrcopy,
        &gv_component_nvidia_peermem,
        &gv_component_toolkit,
        &gv_component_cuda,
        &gv_component_plugin,
        /* sandbox (nvidia-sandbox-validator's order) */
        &gv_component_cc_manager,
        &gv_component_vfio_pci,
        &gv_component_vgpu_manager,
        &gv_component_vgpu_devices,
        NULL,
};

const gv_component_t *const *gv_components_all(void)
{
        return all_components;
}

const gv_component_t *const *gv_component_followers(const gv_component_t *c)
{
        static const gv_component_t *const driver_followers[] = {
                &gv_component_nvidia_fs,
                &gv_component_gdrcopy,
                &gv_component_nvidia_peermem,
                NULL,
        };
        static const gv_component_t *const none[] = { NULL };
        return c == &gv_component_driver ? driver_followers : none;
}

const gv_component_t *gv_component_find(const char *name)
{
        if (!name)
                return NULL;
        for (const gv_component_t *const *c = all_components; *c; c++)
                if (strcmp((*c)->name, name) == 0)
                        return *c;
        return NULL;
}

void gv_result_clear(gv_result_t *r)
{
        if (!r)
                return;
        gv_kvlist_clear(&r->facts);
        free(r->summary);
        free(r->warning);
        *r = (gv_result_t) { 0 };
}

void gv_run_report_clear(gv_run_report_t *r)
{
        if (!r)
                return;
        free(r->message);
        free(r->warning);
        *r = (gv_run_report_t) { 0 };
}

double gv_backoff_delay_s(unsigned attempt, unsigned first_s, unsigned cap_s, double jitter)
{
        double first = first_s > 0 ? (double) first_s : 0.1;
        double cap = (double) cap_s > first ? (double) cap_s : first;
        if (attempt < 1)
                attempt = 1;
        double base = first;
        for (unsigned i = 1; i < attempt && base < cap; i++)
                base *= 2;
        if (base > cap)
                base = cap;
        if (!(jitter >= 0)) /* also catches NaN */
                jitter = 0;
        if (jitter >= 1)
                jitter = 0.999999;
        return base * (1.0 - 0.2 * jitter);
}

/* xorshift64*: the run's own jitter source, seeded from getrandom() (no global state). */
static double next_jitter(uint64_t *s)
{
        uint64_t x = *s;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        return (double) ((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0; /* [0,1) */
}

static uint64_t jitter_seed(void)
{
        uint64_t s = 0;
        if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t) sizeof(s)) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                s = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 32) ^ (uint64_t) getpid();
        }
        return s ? s : 0x9E3779B97F4A7C15ULL;
}

/*
 * The parent's generation, read before validating, so that publish can
 * refuse when the parent changed meanwhile.  0 with *gen NULL when @id has no
 * parent; -ESTALE (GV_REASON_DEPENDENCY) when the parent is not READY.
 */
static int read_parent_generation(gv_store_t *store, gv_marker_id_t id, char **gen, gv_error_t **err)
{
        gv_marker_id_t parent = gv_marker_parent(id);
        *gen = NULL;
        if (parent == GV_MARKER_INVALID)
                return 0;
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(store, parent, &info, err);
        if (r < 0)
                return r;
        if (info.state != GV_MARKER_READY) {
                r = gv_error_set(err, ESTALE, GV_REASON_DEPENDENCY, "%s is %s%s%s", gv_marker_file(parent),
                                 gv_marker_state_name(info.state), info.detail ? ": " : "",
                                 info.detail ? info.detail : "");
                gv_marker_info_clear(&info);
                return r;
        }
        const char *g = gv_kvlist_get(&info.content, "GENERATION");
        if (g && !(*gen = strdup(g))) {
                gv_marker_info_clear(&info);
                return gv_error_oom(err);
        }
        gv_marker_info_clear(&info);
        return 0;
}

bool gv_component_assumed(const gv_config_t *cfg, const char *name)
{
        for (const char *const *a = cfg ? cfg->assume_ready : NULL; a && *a && name; a++)
                if (strcmp(*a, name) == 0)
                        return true;
        return false;
}

/* In place of validate() for a component provided outside: ASSUMED=true and who said so. */
static int assume(const gv_component_t *c, const gv_config_t *cfg, gv_result_t *res, gv_error_t **err)
{
        const char *by = cfg->assume_ready_by && *cfg->assume_ready_by ? cfg->assume_ready_by : "--assume-ready";
        int r;
        if ((r = gv_kvlist_set(&res->facts, "ASSUMED", "true", err)) < 0 ||
            (r = gv_kvlist_set(&res->facts, "ASSUMED_BY", by, err)) < 0)
                return r;
        if (cfg->workload.validator_pod_name && *cfg->workload.validator_pod_name &&
            (r = gv_kvlist_set(&res->facts, "ASSUMED_BY_POD", cfg->workload.validator_pod_name, err)) < 0)
                return r;
        if (asprintf(&res->summary, "assumed ready (provided outside, %s): %s not validated", by,
                     gv_marker_file(c->marker)) < 0)
                res->summary = NULL;
        return 0;
}

/* One attempt: invalidate, read the parent, validate, publish.  Fills @res on success. */
static int attempt_once(const gv_component_t *c, const gv_config_t *cfg, gv_store_t *store, gv_result_t *res,
                        char generation[GV_GENERATION_HEX_LEN + 1], gv_error_t **err)
{
        int r = gv_store_invalidate(store, c->marker, err);
        if (r < 0)
                return gv_error_prefix(err, "invalidate %s", gv_marker_file(c->marker));
        if (c->workload && !gv_component_assumed(cfg, c->name)) {
                /* the sandbox rule first: not this node's workload config, nothing to validate */
                const char *config = NULL;
                r = gv_sandbox_begin(cfg, store, c->name, c->workload, res, &config, err);
                if (r <= 0)
                        return r;
        }
        _cleanup_free_ char *parent_gen = NULL;
        r = read_parent_generation(store, c->marker, &parent_gen, err);
        if (r < 0)
                return r;
        int64_t t0 = gv_now_ms();
        if (gv_component_assumed(cfg, c->name))
                r = assume(c, cfg, res, err);
        else
                r = c->validate(cfg, store, res, err);
        if (r < 0)
                return r;
        if (cfg->stop && *cfg->stop)
                return gv_error_set(err, EINTR, GV_REASON_INTERRUPTED, "interrupted");
        if (res->skipped && !res->record_skip)
                return 0;
        if (res->skipped && ((r = gv_kvlist_set(&res->facts, "SKIPPED", "true", err)) < 0 ||
                             (!gv_kvlist_get(&res->facts, "SKIP_REASON") &&
                              (r = gv_kvlist_set(&res->facts, "SKIP_REASON", res->summary ? res->summary : "", err)) < 0)))
                return r;
        /* How long this validation took, seconds (read by the metrics exporter). */
        char duration[32];
        snprintf(duration, sizeof(duration), "%.3f", (double) (gv_now_ms() - t0) / 1000.0);
        r = gv_kvlist_set(&res->facts, "VALIDATION_DURATION_SECONDS", duration, err);
        if (r < 0)
                return r;
        r = gv_store_publish(store, c->marker, &res->facts, res->host_driver, parent_gen, generation, err);
        if (r < 0)
                return gv_error_prefix(err, "publish %s", gv_marker_file(c->marker));
        return 0;
}

static char *dup_or_null(const char *s)
{
        return s ? strdup(s) : NULL;
}

/* Fill @report from the successful attempt number @attempt and log its warning and verdict. */
static void report_success(const gv_component_t *c, const gv_config_t *cfg, const gv_result_t *res, unsigned attempt,
                           gv_run_report_t *report)
{
        report->skipped = res->skipped;
        report->assumed = gv_component_assumed(cfg, c->name);
        report->message = dup_or_null(res->summary);
        report->warning = dup_or_null(res->warning);
        if (res->warning)
                gv_cfg_logf(cfg, GV_LOG_WARN, c->name, GV_REASON_NONE, "%s", res->warning);
        gv_cfg_logf(cfg, GV_LOG_INFO, c->name, GV_REASON_NONE, "%s%s (attempt %u)",
                    res->skipped ? "skipped: " : "ready: ", res->summary ? res->summary : c->name, attempt);
}

/* After a failed attempt the marker (and everything downstream) stays removed; a failure to remove is logged. */
static void fail_marker(const gv_component_t *c, const gv_config_t *cfg, gv_store_t *store)
{
        _cleanup_error_ gv_error_t *ferr = NULL;
        if (gv_store_fail(store, c->marker, &ferr) < 0)
                gv_cfg_logf(cfg, GV_LOG_WARN, c->name, ferr->reason,
                            "could not remove %s and the markers downstream of it, which may still read as ready: %s",
                            gv_marker_file(c->marker), ferr->msg);
}

int gv_component_run(const gv_component_t *c, const gv_config_t *cfg, gv_store_t *store, gv_run_report_t *report)
{
        *report = (gv_run_report_t) { .component = c };
        int64_t start = gv_now_ms();
        int64_t deadline = cfg->with_wait && cfg->max_wait_s > 0 ? start + (int64_t) cfg->max_wait_s * 1000 : -1;
        uint64_t seed = jitter_seed();
        gv_config_t local = *cfg; /* dev_node_wait_s is clamped to what the deadline leaves */
        int status = 0;
        _cleanup_error_ gv_error_t *err = NULL;

        for (unsigned attempt = 1;; attempt++) {
                if (cfg->stop && *cfg->stop) {
                        status = gv_error_set(&err, EINTR, GV_REASON_INTERRUPTED, "interrupted before attempt %u",
                                              attempt);
                        break;
                }
                if (deadline >= 0) {
                        int64_t left_s = (deadline - gv_now_ms() + 999) / 1000;
                        local.driver.dev_node_wait_s = left_s < (int64_t) cfg->driver.dev_node_wait_s
                                                        ? (unsigned) (left_s > 0 ? left_s : 0)
                                                        : cfg->driver.dev_node_wait_s;
                }
                report->attempts = attempt;
                gv_result_t res = { 0 };
                gv_error_free(&err);
                status = attempt_once(c, &local, store, &res, report->generation, &err);
                if (status == 0) {
                        report_success(c, cfg, &res, attempt, report);
                        gv_result_clear(&res);
                        break;
                }
                gv_result_clear(&res);
                if (!err)
                        gv_error_set(&err, status, GV_REASON_INTERNAL, "failed without an error message");
                fail_marker(c, cfg, store);

                gv_reason_t reason = err->reason;
                report->last_reason = reason;
                bool stopping = reason == GV_REASON_INTERRUPTED || (cfg->stop && *cfg->stop);
                bool retry = cfg->with_wait && !stopping && gv_reason_retryable(reason);
                if (!retry) {
                        gv_cfg_logf(cfg, GV_LOG_ERROR, c->name, reason, "attempt %u: %s", attempt, err->msg);
                        break;
                }
                double delay_s = gv_backoff_delay_s(attempt, cfg->sleep_interval_s, cfg->max_backoff_s,
                                                    next_jitter(&seed));
                int64_t delay_ms = (int64_t) llround(delay_s * 1000.0);
                int64_t now = gv_now_ms();
                if (deadline >= 0 && now >= deadline) {
                        gv_cfg_logf(cfg, GV_LOG_ERROR, c->name, reason, "attempt %u: %s", attempt, err->msg);
                        char *last = err->msg ? strdup(err->msg) : NULL;
                        status = gv_error_set(&err, ETIMEDOUT, GV_REASON_TIMEOUT,
                                              "not ready after %u s (%u attempts); last failure (%s): %s",
                                              cfg->max_wait_s, attempt, gv_reason_name(reason),
                                              last ? last : "(out of memory)");
                        free(last);
                        break;
                }
                if (deadline >= 0 && now + delay_ms > deadline)
                        delay_ms = deadline - now; /* one last attempt right at the deadline */
                if (deadline >= 0)
                        gv_cfg_logf(cfg, GV_LOG_WARN, c->name, reason,
                                    "attempt %u: %s; retrying in %.1f s (gives up after %u s (MAX_WAIT_SECONDS))",
                                    attempt, err->msg, (double) delay_ms / 1000.0, cfg->max_wait_s);
                else
                        gv_cfg_logf(cfg, GV_LOG_WARN, c->name, reason,
                                    "attempt %u: %s; retrying in %.1f s (no time limit: MAX_WAIT_SECONDS=0)", attempt,
                                    err->msg, (double) delay_ms / 1000.0);
                if (gv_sleep_ms(delay_ms, cfg->stop) < 0) {
                        status = gv_error_set(&err, EINTR, GV_REASON_INTERRUPTED,
                                              "interrupted while waiting to retry after attempt %u", attempt);
                        break;
                }
        }

        report->status = status;
        if (status < 0 && err) {
                report->reason = err->reason;
                if (err->reason == GV_REASON_INTERRUPTED) {
                        report->last_reason = GV_REASON_INTERRUPTED;
                        _cleanup_error_ gv_error_t *ferr = NULL;
                        (void) gv_store_fail(store, c->marker, &ferr);
                        gv_cfg_logf(cfg, GV_LOG_WARN, c->name, GV_REASON_INTERRUPTED, "%s; %s stays removed",
                                    err->msg, gv_marker_file(c->marker));
                }
                if (report->last_reason == GV_REASON_NONE)
                        report->last_reason = err->reason;
                report->message = dup_or_null(err->msg);
        }
        report->duration_s = (double) (gv_now_ms() - start) / 1000.0;
        return status;
}
