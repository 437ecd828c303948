/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The log event sink.  Nothing below the CLI prints (docs/errors.md): a
 * module that has something to say hands it, one event per call, to a
 * gv_log_fn that the CLI supplies, and only the CLI decides how it is shown
 * (text or JSON).
 */
#ifndef GV_BASE_LOG_H
#define GV_BASE_LOG_H

#include <stdarg.h>

/* Log levels for the event callback. */
typedef enum gv_log_level { GV_LOG_DEBUG, GV_LOG_INFO, GV_LOG_WARN, GV_LOG_ERROR } gv_log_level_t;

/*
 * Event sink supplied by the CLI: one call per event, with the component
 * name ("driver"), the reason name (gv_reason_name(), or "" for progress)
 * and a message.  Only the CLI decides how it is printed (text or JSON).
 */
typedef void (*gv_log_fn)(void *userdata, gv_log_level_t level, const char *component, const char *reason,
                          const char *msg);

/*
 * gv_logf - format a message and hand it to @fn, if @fn is not NULL, with
 * @userdata, @level, @component and @reason (NULL is passed on as "").
 * When memory runs out while formatting, the message is
 * "(out of memory formatting a log message)".  Never fails.
 */
void gv_logf(gv_log_fn fn, void *userdata, gv_log_level_t level, const char *component, const char *reason,
             const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* As gv_logf() with a va_list; @ap is consumed as by vprintf(). */
void gv_vlogf(gv_log_fn fn, void *userdata, gv_log_level_t level, const char *component, const char *reason,
              const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

#endif
