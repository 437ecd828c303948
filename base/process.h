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

/* TAKE_PID(pid) - the child in @pid, leaving 0 behind (nothing for _cleanup_pid_ to do). */
#define TAKE_PID(pid)                            \
        __extension__({                          \
                pid_t _taken_pid_ = (pid);       \
                (pid) = 0;                       \
                _taken_pid_;                     \
        })

#endif
