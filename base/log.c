/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>

void gv_vlogf(gv_log_fn fn, void *userdata, gv_log_level_t level, const char *component, const char *reason,
              const char *fmt, va_list ap)
{
        if (!fn)
                return;
        char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        fn(userdata, level, component, reason ? reason : "", msg ? msg : "(out of memory formatting a log message)");
        free(msg);
}

void gv_logf(gv_log_fn fn, void *userdata, gv_log_level_t level, const char *component, const char *reason,
             const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        gv_vlogf(fn, userdata, level, component, reason, fmt, ap);
        va_end(ap);
}
