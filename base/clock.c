/* SPDX-License-Identifier: Apache-2.0 */
#include "base/clock.h"

#include <errno.h>
#include <time.h>

int64_t gv_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail with a valid clock id and pointer */
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t gv_now_ms(void)
{
        return gv_now_ns() / 1000000;
}

int gv_sleep_ms(int64_t ms, const volatile sig_atomic_t *stop)
{
        int64_t end = gv_now_ms() + (ms > 0 ? ms : 0);
        for (;;) {
                if (stop && *stop)
                        return -EINTR;
                int64_t left = end - gv_now_ms();
                if (left <= 0)
                        return 0;
                if (left > 50)
                        left = 50;
                struct timespec ts = { .tv_sec = 0, .tv_nsec = (long) left * 1000000L };
                nanosleep(&ts, NULL); /* EINTR: the loop re-checks stop and the clock */
        }
}
