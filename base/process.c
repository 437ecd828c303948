/* SPDX-License-Identifier: Apache-2.0 */
#include "process.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

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
