/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Child processes released by scope, as crun's cleanup_pid: a `_cleanup_pid_ pid_t pid` that
 * still holds a child when it leaves scope -- an early return on an error, a time-out, a stop
 * request -- has the child's process group killed and the child reaped, so that no path leaves
 * a zombie or a runaway helper behind.  TAKE_PID(pid) hands the child on (or marks it reaped).
 */
#ifndef GV_BASE_PROCESS_H
#define GV_BASE_PROCESS_H

#include <sys/types.h>

/*
 * gv_pid_kill_and_reap - when *@pid is a child (> 0): send SIGKILL to its process group (the
 * child leads one, so that nothing it started outlives it) and to the child itself, wait for
 * it (retrying on EINTR; a failing waitpid(), ECHILD when SIGCHLD is ignored, ends the wait)
 * and set *@pid to 0.  errno is kept.  For `_cleanup_pid_` and for a kill before the scope ends.
 */
void gv_pid_kill_and_reap(pid_t *pid);

#define _cleanup_pid_ __attribute__((cleanup(gv_pid_kill_and_reap)))

/* How long gv_pid_term_and_reapp() lets a child end itself after SIGTERM. */
#define GV_PID_TERM_GRACE_MS 5000

/*
 * gv_pid_term_and_reap - when *@pid is a child (> 0): send SIGTERM to the child alone, so that
 * it can end what it started (gv_proc_run()'s reaper sweeps its descendants), wait up to
 * @grace_ms for it to exit, then gv_pid_kill_and_reap() what is left; *@pid is 0 afterwards.
 * errno is kept.
 */
void gv_pid_term_and_reap(pid_t *pid, int grace_ms);

/* gv_pid_term_and_reapp - gv_pid_term_and_reap() with GV_PID_TERM_GRACE_MS, for _cleanup_pid_term_. */
void gv_pid_term_and_reapp(pid_t *pid);

#define _cleanup_pid_term_ __attribute__((cleanup(gv_pid_term_and_reapp)))

/* TAKE_PID(pid) - the child in @pid, leaving 0 behind (nothing for _cleanup_pid_ to do). */
#define TAKE_PID(pid)                            \
        __extension__({                          \
                pid_t _taken_pid_ = (pid);       \
                (pid) = 0;                       \
                _taken_pid_;                     \
        })

#endif
