/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scope-bound cleanup helpers in the style of systemd's src/basic:
 * `_cleanup_free_ char *p = NULL;` frees p when it leaves scope, and
 * TAKE_PTR(p) / TAKE_FD(fd) hand ownership on and leave NULL / -1 behind.
 */
#ifndef GV_BASE_CLEANUP_H
#define GV_BASE_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"

#define _cleanup_(f) __attribute__((cleanup(f)))

/*
 * GV_DEFINE_CLEANUP(type, func) - define `static inline void func##p(type *p)`
 * that calls func(*p) when *p is not NULL (the result of func, if any, is
 * dropped), for use as `_cleanup_(func##p)`.  As systemd's
 * DEFINE_TRIVIAL_CLEANUP_FUNC; each module defines the ones for its own types.
 */
/* NOLINTBEGIN(bugprone-macro-parentheses): @type is a type, which cannot be parenthesised */
#define GV_DEFINE_CLEANUP(type, func)              \
        static inline void func##p(type *p)        \
        {                                          \
                if (*p)                            \
                        (void) func(*p);           \
        }
/* NOLINTEND(bugprone-macro-parentheses) */

static inline void gv_freep(void *p)
{
        free(*(void **) p);
}

static inline void gv_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/* For streams that were only read, or whose write errors were already
 * checked by an fclose() by hand (TAKE_PTR) on the success path. */
static inline void gv_fclosep(FILE **f)
{
        if (*f)
                (void) fclose(*f);
}

/* Frees a NULL-terminated array of heap strings and the array itself. */
static inline void gv_strv_freep(char ***v)
{
        if (!*v)
                return;
        for (char **s = *v; *s; s++)
                free(*s);
        free(*v);
}

GV_DEFINE_CLEANUP(DIR *, closedir)

#define _cleanup_free_ _cleanup_(gv_freep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_close_ _cleanup_(gv_closep)
#define _cleanup_fclose_ _cleanup_(gv_fclosep)
#define _cleanup_strv_free_ _cleanup_(gv_strv_freep)
#define _cleanup_error_ _cleanup_(gv_error_free)

#define TAKE_PTR(p)                              \
        __extension__({                          \
                __typeof__(p) _taken_ = (p);     \
                (p) = NULL;                      \
                _taken_;                         \
        })

#define TAKE_FD(fd)                              \
        __extension__({                          \
                int _taken_fd_ = (fd);           \
                (fd) = -1;                       \
                _taken_fd_;                      \
        })

#define GV_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
