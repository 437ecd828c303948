/* SPDX-License-Identifier: Apache-2.0 */
/* Fake roots and small helpers for the components tests. */
#ifndef GV_TESTS_COMPONENTS_HELPERS_H
#define GV_TESTS_COMPONENTS_HELPERS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "components/component.h"

/* A fresh temporary folder (heap path); aborts the test on failure. */
char *th_tmpdir(void);
/* "<root>/<rel>" (heap). */
char *th_path(const char *root, const char *rel);
/* mkdir -p <root>/<rel>. */
void th_mkdirs(const char *root, const char *rel);
/* Write <root>/<rel> (parents created) with @mode. */
void th_write(const char *root, const char *rel, const char *content, mode_t mode);
/* Copy the file @src to <root>/<rel> (parents created), mode 0755. */
void th_copy(const char *src, const char *root, const char *rel);
/* <root>/<rel> -> @target (parents created). */
void th_symlink(const char *target, const char *root, const char *rel);
/* mknod <root>/<rel> as a character device; false when not permitted (not root). */
bool th_mknod_char(const char *root, const char *rel, unsigned maj, unsigned min);
/* rm -rf. */
void th_rm_rf(const char *path);
/* Whether <root>/<rel> exists (lstat). */
bool th_exists(const char *root, const char *rel);

/* The stub nvidia-smi: prints a line, exits $FAKE_SMI_EXIT (0). */
extern const char th_smi_stub[];

/* Log sink collecting every message as "level|component|reason|msg\n". */
typedef struct th_log {
        char *buf;
        size_t len;
        void *f; /* FILE * */
} th_log_t;
void th_log_open(th_log_t *l);
void th_log_close(th_log_t *l);
void th_log_fn(void *userdata, gv_log_level_t level, const char *component, const char *reason, const char *msg);

/* A store in <dir>/out with a boot id file in <dir>; aborts on failure. */
gv_store_t *th_store_open(const char *dir);

#endif
