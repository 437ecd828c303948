/* SPDX-License-Identifier: Apache-2.0 */
#include "process.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

void gv_pid_kill_and_reap(pid_t *pid)
{
        if (!pid || *pid <= 0)
                return;
        int saved = errno;
        (void) kill(-*pid, SIGKILL);
        (void) kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *pid = 0;
        errno = saved;
}

void gv_pid_term_and_reap(pid_t *pid, int grace_ms)
{
        if (!pid || *pid <= 0)
                return;
        int saved = errno;
        if (kill(*pid, SIGTERM) == 0) {
                for (int waited = 0; waited < grace_ms; waited += 10) {
                        pid_t w = waitpid(*pid, NULL, WNOHANG);
                        if (w == *pid || (w < 0 && errno != EINTR)) { /* ended (or not ours to wait for) */
                                *pid = 0;
                                errno = saved;
                                return;
                        }
                        struct timespec ts = { 0, 10L * 1000 * 1000 };
                        (void) nanosleep(&ts, NULL);
                }
        }
        gv_pid_kill_and_reap(pid);
        errno = saved;
}

void gv_pid_term_and_reapp(pid_t *pid)
{
        gv_pid_term_and_reap(pid, GV_PID_TERM_GRACE_MS);
}
