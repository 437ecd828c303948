/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Wait latency of the marker store: the time from the start of
 * gv_store_publish() to the return of gv_store_wait() in another thread,
 * over N publications (default 1000; invalidate + publish each time).
 * Next to it, what upstream's 5 s polling loop (`until [ -f ... ]; do
 * sleep 5; done`) would give for the same publication times: the time
 * until its next tick, with a random phase per publication.
 *
 * Usage: bench-markers-wait [N] [folder]
 * Without a folder, a scratch folder is made in /dev/shm (a tmpfs, like
 * /run where the markers live), else in $TMPDIR or /tmp.  On a disk-backed
 * folder the figures are dominated by publish's two fsync() calls.
 * Prints figures only; asserts nothing about time.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "markers/markers.h"

#define POLL_INTERVAL_US (5 * 1000 * 1000)

typedef struct shared {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int round;      /* the publisher bumps it: the waiter starts a wait */
        int done;       /* the waiter bumps it when its wait returned */
        int failed;
        int64_t returned_us;
        const char *dir;
} shared_t;

static int64_t now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t rnd64(void)
{
        uint64_t v = 0;
        while (getrandom(&v, sizeof(v), 0) != sizeof(v))
                ;
        return v;
}

static void *waiter_main(void *arg)
{
        shared_t *sh = arg;
        gv_store_options_t o = { .dir = sh->dir };
        gv_store_t *s = NULL;
        gv_error_t *e = NULL;
        int seen = 0;
        if (gv_store_open(&o, &s, &e) < 0) {
                fprintf(stderr, "waiter: %s\n", e->msg);
                gv_error_free(&e);
                pthread_mutex_lock(&sh->mu);
                sh->failed = 1;
                pthread_cond_broadcast(&sh->cv);
                pthread_mutex_unlock(&sh->mu);
                return NULL;
        }
        for (;;) {
                pthread_mutex_lock(&sh->mu);
                while (sh->round == seen)
                        pthread_cond_wait(&sh->cv, &sh->mu);
                seen = sh->round;
                pthread_mutex_unlock(&sh->mu);
                if (seen < 0)
                        break;
                int r = gv_store_wait(s, GV_MARKER_DRIVER, 10000, NULL, &e);
                int64_t t = now_us();
                pthread_mutex_lock(&sh->mu);
                if (r < 0) {
                        fprintf(stderr, "waiter: %s\n", e->msg);
                        gv_error_free(&e);
                        sh->failed = 1;
                }
                sh->returned_us = t;
                sh->done = seen;
                pthread_cond_broadcast(&sh->cv);
                pthread_mutex_unlock(&sh->mu);
        }
        gv_store_close(&s);
        return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return (x > y) - (x < y);
}

static double pct(const int64_t *sorted, int n, double p)
{
        int i = (int) (p * (n - 1) + 0.5);
        return (double) sorted[i];
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        return flag == FTW_DP ? rmdir(p) : unlink(p);
}

/*
 * Print the figures of @n publications: the wait latencies @lat and publish durations @pubdur
 * measured, and those of a simulated 5 s polling loop for the publication times @pub (filled
 * into @poll_lat).  Sorts the arrays.
 */
static void report(int n, const char *dir, int64_t *lat, int64_t *poll_lat, const int64_t *pub, int64_t *pubdur)
{
        /* The polling loop: ticks at phase + k*5s, a random phase per publication. */
        for (int i = 0; i < n; i++) {
                int64_t phase = (int64_t) (rnd64() % POLL_INTERVAL_US);
                int64_t since = (pub[i] - phase) % POLL_INTERVAL_US;
                if (since < 0)
                        since += POLL_INTERVAL_US;
                poll_lat[i] = since == 0 ? 0 : POLL_INTERVAL_US - since;
        }
        double sum = 0, psum = 0, dsum = 0;
        for (int i = 0; i < n; i++) {
                sum += (double) lat[i];
                psum += (double) poll_lat[i];
                dsum += (double) pubdur[i];
        }
        qsort(pubdur, (size_t) n, sizeof(*pubdur), cmp_i64);
        qsort(lat, (size_t) n, sizeof(*lat), cmp_i64);
        qsort(poll_lat, (size_t) n, sizeof(*poll_lat), cmp_i64);

        printf("marker wait latency, publish start -> wait return, %d publications (invalidate + publish each), in %s\n",
               n, dir);
        printf("%-28s %12s %12s %12s %12s\n", "", "p50", "p99", "mean", "max");
        printf("%-28s %10.1f us %10.1f us %10.1f us %10.1f us\n", "gv_store_wait (inotify)", pct(lat, n, 0.50),
               pct(lat, n, 0.99), sum / n, (double) lat[n - 1]);
        printf("%-28s %10.1f us %10.1f us %10.1f us %10.1f us\n", "(publish call itself)", pct(pubdur, n, 0.50),
               pct(pubdur, n, 0.99), dsum / n, (double) pubdur[n - 1]);
        printf("%-28s %10.1f ms %10.1f ms %10.1f ms %10.1f ms\n", "5 s polling loop (simulated)",
               pct(poll_lat, n, 0.50) / 1000.0, pct(poll_lat, n, 0.99) / 1000.0, psum / n / 1000.0,
               (double) poll_lat[n - 1] / 1000.0);
}

int main(int argc, char **argv)
{
        int n = argc > 1 ? atoi(argv[1]) : 1000;
        if (n < 1)
                n = 1000;
        _cleanup_free_ char *scratch = NULL;
        const char *dir = argc > 2 ? argv[2] : NULL;
        if (!dir) {
                const char *tmp = getenv("TMPDIR");
                if (access("/dev/shm", W_OK) == 0)
                        tmp = "/dev/shm";
                scratch = gv_path_join(tmp && *tmp ? tmp : "/tmp", "gv-bench-markers-XXXXXX");
                if (!scratch || !mkdtemp(scratch)) {
                        perror("mkdtemp");
                        return 1;
                }
                dir = scratch;
        }

        gv_store_options_t o = { .dir = dir, .create = true };
        gv_store_t *s = NULL;
        gv_error_t *e = NULL;
        if (gv_store_open(&o, &s, &e) < 0) {
                fprintf(stderr, "%s\n", e->msg);
                return 1;
        }
        shared_t sh = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .dir = dir };
        pthread_t th;
        if (pthread_create(&th, NULL, waiter_main, &sh) != 0)
                return 1;

        int64_t *lat = calloc((size_t) n, sizeof(*lat));
        int64_t *poll_lat = calloc((size_t) n, sizeof(*poll_lat));
        int64_t *pub = calloc((size_t) n, sizeof(*pub));
        int64_t *pubdur = calloc((size_t) n, sizeof(*pubdur));
        if (!lat || !poll_lat || !pub || !pubdur)
                return 1;
        int64_t start = now_us();
        int failed = 0;
        for (int i = 0; i < n && !failed; i++) {
                if (gv_store_invalidate(s, GV_MARKER_DRIVER, &e) < 0) {
                        fprintf(stderr, "%s\n", e->msg);
                        return 1;
                }
                pthread_mutex_lock(&sh.mu);
                sh.round = i + 1;
                pthread_cond_broadcast(&sh.cv);
                pthread_mutex_unlock(&sh.mu);
                /* Let the waiter block first most of the time (0-500 us). */
                struct timespec pause = { 0, (long) (rnd64() % 500) * 1000L };
                nanosleep(&pause, NULL);

                int64_t t0 = now_us();
                if (gv_store_publish(s, GV_MARKER_DRIVER, NULL, false, NULL, NULL, &e) < 0) {
                        fprintf(stderr, "%s\n", e->msg);
                        return 1;
                }
                pubdur[i] = now_us() - t0;
                pthread_mutex_lock(&sh.mu);
                while (sh.done != i + 1 && !sh.failed)
                        pthread_cond_wait(&sh.cv, &sh.mu);
                failed = sh.failed;
                lat[i] = sh.returned_us - t0;
                pthread_mutex_unlock(&sh.mu);
                pub[i] = t0 - start;
        }
        pthread_mutex_lock(&sh.mu);
        sh.round = -1;
        pthread_cond_broadcast(&sh.cv);
        pthread_mutex_unlock(&sh.mu);
        pthread_join(th, NULL);
        if (failed)
                return 1;

        report(n, dir, lat, poll_lat, pub, pubdur);

        free(lat);
        free(poll_lat);
        free(pub);
        free(pubdur);
        gv_store_close(&s);
        if (scratch)
                nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
