/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one monotonic clock and the one interruptible sleep of the project.
 * Every deadline, retry delay and duration is measured with these, so a
 * change of the wall clock (NTP, a VM resumed) never shortens or stretches
 * a wait.
 */
#ifndef GV_BASE_CLOCK_H
#define GV_BASE_CLOCK_H

#include <signal.h>
#include <stdint.h>

/* gv_now_ms - CLOCK_MONOTONIC in milliseconds (an arbitrary origin). Never fails. */
int64_t gv_now_ms(void);

/* gv_now_ns - CLOCK_MONOTONIC in nanoseconds, for durations finer than a millisecond. Never fails. */
int64_t gv_now_ns(void);

/*
 * gv_sleep_ms - sleep @ms milliseconds (a value <= 0 returns at once) in
 * slices of at most 50 ms, giving up as soon as *@stop (may be NULL) becomes
 * non-zero; a signal that interrupts a slice only ends that slice.
 * Returns 0, or -EINTR when stopped.
 */
int gv_sleep_ms(int64_t ms, const volatile sig_atomic_t *stop);

#endif
