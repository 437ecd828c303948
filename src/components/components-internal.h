/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the component files (not part of the public interface):
 * paths resolved inside a root, child processes with a timeout, interruptible
 * sleeps, and log formatting.  Nothing here prints or exits.
 */
#ifndef GV_COMPONENTS_INTERNAL_H
#define GV_COMPONENTS_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/clock.h"
#include "component.h"

/* The components in their files; gv_components_all() lists them. */
extern const gv_component_t gv_component_driver;
extern const gv_component_t gv_component_toolkit;
extern const gv_component_t gv_component_cuda;
extern const gv_component_t gv_component_plugin;
extern const gv_component_t gv_component_mofed;
extern const gv_component_t gv_component_nvidia_fs;
extern const gv_component_t gv_component_gdrcopy;
extern const gv_component_t gv_component_nvidia_peermem;
extern const gv_component_t gv_component_cc_manager;
extern const gv_component_t gv_component_vfio_pci;
extern const gv_component_t gv_component_vgpu_manager;
extern const gv_component_t gv_component_vgpu_devices;

/*
 * gv_cfg_logf - gv_logf() to cfg->log (if @cfg and cfg->log are set) with the
 * component name and gv_reason_name(@reason) ("" for GV_REASON_NONE).
 */
void gv_cfg_logf(const gv_config_t *cfg, gv_log_level_t level, const char *component, gv_reason_t reason,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * gv_root_resolve - resolve @path (absolute, as seen inside @root) inside
 * @root: every symlink on the way is followed with an absolute target
 * re-rooted under @root and ".." never climbing above it, so the real "/"
 * is never reached through a link planted in the root.  At most 40 links.
 * @out: heap string "<root>/<resolved path>" owned by the caller.
 * Errors: negative errno (-ENOENT when a component is missing, -ELOOP,
 * -ENOTDIR, -EACCES) with *err set (GV_REASON_IO); @err may be NULL.
 */
int gv_root_resolve(const char *root, const char *path, char **out, gv_error_t **err);

/*
 * gv_mountinfo_deleted - whether the mountinfo text @text (proc(5)) has a mount on @mount_point
 * (an absolute path without escapes; the last mount on it wins) whose root ends in "//deleted":
 * its source folder was removed.  1 with *root (may be NULL; heap, the caller frees) the root
 * as shown, 0 when not, -ENOMEM.  Pure: for tests and fuzzing.
 */
int gv_mountinfo_deleted(const char *text, const char *mount_point, char **root);

/*
 * gv_mount_source_deleted - gv_mountinfo_deleted() of /proc/self/mountinfo for @path (resolved
 * with realpath()).  0 when @path is absent or /proc cannot be read.
 */
int gv_mount_source_deleted(const char *path, char **root);

/*
 * gv_root_find - look for the regular file @name in each folder of @dirs
 * (paths inside @root), resolved with gv_root_resolve().  Every path tried is
 * appended to @tried (may be NULL) as "\n  <root><dir>/<name>: <why>".
 * @found: heap host path of the first hit (caller frees); @found_dir (may be
 * NULL): heap host path of the folder it sits in after resolution.
 * Returns 0 when found, -ENOENT when not (no error object: the caller
 * reports with the @tried list).
 */
int gv_root_find(const char *root, const char *const *dirs, const char *name, char **found, char **found_dir,
                 FILE *tried);

/* Outcome of gv_proc_run(). */
typedef struct gv_proc_result {
        int exit_code;   /* exit status, or -1 when killed by a signal */
        int term_signal; /* the signal that ended it, 0 when it exited */
        bool timed_out;  /* killed by us after the timeout */
        char *output;    /* heap: stdout and stderr interleaved, at most 64 KiB kept */
} gv_proc_result_t;

/* gv_proc_result_clear - free the captured output and zero @r. */
void gv_proc_result_clear(gv_proc_result_t *r);

/*
 * gv_proc_reaper - the child gv_proc_run() forks (proc-reaper.c): leads its own process group,
 * becomes a child subreaper, forks the program (exec_program(@arg) in the child, with
 * @program_mask as its signal mask; @close_fd closed in the reaper after the fork), waits for it
 * or for SIGTERM (the validator's time-out or stop, or the validator gone), then kills and reaps
 * every process left below it -- what called setsid(), orphaned daemons -- and exits as the
 * program did.  The caller blocks SIGCHLD and SIGTERM before fork(); @validator is its pid.
 * Async-signal-safe throughout; never returns.
 */
_Noreturn void gv_proc_reaper(pid_t validator, const sigset_t *program_mask, int close_fd,
                              void (*exec_program)(void *arg), void *arg);

/*
 * gv_proc_kill_children_by_scan - SIGKILL to every process whose parent is @self, found by
 * reading each /proc/PID/stat: the reaper's way where the kernel has no
 * /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN).  Async-signal-safe.
 */
void gv_proc_kill_children_by_scan(pid_t self);

/*
 * gv_proc_run - run @argv[0] (an absolute path, or a name looked up in PATH)
 * with @argv, capturing stdout and stderr together.  @ld_library_path (may
 * be NULL) is prepended to LD_LIBRARY_PATH in the child's environment.
 * @chroot_dir (may be NULL) makes the child chroot() there first (root only;
 * argv[0] is then a path inside it).  The program runs under a reaper
 * (gv_proc_reaper()): when it ends, after @timeout_ms or when *@stop becomes
 * non-zero, everything it started -- in its process group or not (setsid(),
 * a daemon) -- is killed and reaped before gv_proc_run() returns (SIGTERM to
 * the reaper, SIGKILL to its group after GV_PID_TERM_GRACE_MS).  Returns 0 when
 * the program ran (look at @out->exit_code), -EINTR when stopped, or a
 * negative errno with *err set when it could not be started or its exit
 * status could not be read (waitpid() failed, e.g. ECHILD with SIGCHLD
 * ignored: GV_REASON_NVIDIA_SMI, never "exited 0").  @out is filled on 0 and
 * caller-owned (gv_proc_result_clear()).
 */
int gv_proc_run(const char *const *argv, const char *ld_library_path, const char *chroot_dir, int64_t timeout_ms,
                const volatile sig_atomic_t *stop, gv_proc_result_t *out, gv_error_t **err);

/*
 * gv_nvidia_smi_check - run @smi (with @lib_dir prepended to
 * LD_LIBRARY_PATH, chrooted into @chroot_dir when not NULL) with no
 * arguments, 30 s timeout, and apply gv_nvidia_smi_exit_reason().  On
 * success returns 0 and, for exit 14 when not strict, sets *@warning (heap;
 * may stay NULL).  On failure returns a negative errno with *err naming the
 * exit code and the last lines of the output (never parsed as data).
 */
int gv_nvidia_smi_check(const gv_config_t *cfg, const char *smi, const char *lib_dir, const char *chroot_dir,
                        char **warning, gv_error_t **err);

/* Number of strings in a NULL-terminated list (NULL counts as empty). */
size_t gv_strv_len(const char *const *v);

/*
 * GV_COMPONENT - define the component object `gv_component_<sym>` (declared
 * above) named @cname, writing marker @cmarker, validated by @fn.
 */
#define GV_COMPONENT(sym, cname, cmarker, fn) \
        const gv_component_t gv_component_##sym = { .name = (cname), .marker = (cmarker), .validate = (fn) }

/* GV_SANDBOX_COMPONENT - a component that validates only on nodes of workload config @cworkload. */
#define GV_SANDBOX_COMPONENT(sym, cname, cmarker, cworkload, fn)                                          \
        const gv_component_t gv_component_##sym = { .name = (cname), .marker = (cmarker), .validate = (fn), \
                                                     .workload = (cworkload) }

/*
 * gv_result_summary - set @r's one-line summary (for the run report) from a
 * printf format, replacing any.  The summary is optional: when memory runs
 * out it is left NULL and nothing fails.
 */
void gv_result_summary(gv_result_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * gv_devnodes_wait - wait up to cfg->driver.dev_node_wait_s seconds for every node
 * of @names (NULL-terminated, "nvidiactl", "nvidia0", ...) to be there (the
 * driver creates nvidia-uvm and nvidia-uvm-tools 10-15 s after nvidia0)
 * under <@dev_root>/dev (character devices; regular files too when
 * @files_ok, as a mock root without root privileges has), woken by the
 * folder watcher and looking again at least every 100 ms (cfg->stop ends the
 * wait).  Returns 0, or a negative errno with *err naming every missing or
 * wrong node (GV_REASON_DEVICE_NODE_MISSING, GV_REASON_PERMISSION_DENIED when one
 * cannot be read, GV_REASON_INTERRUPTED).  (devnodes.c)
 */
int gv_devnodes_wait(const gv_config_t *cfg, const char *dev_root, char **names, bool files_ok, gv_error_t **err);

/*
 * gv_devnodes_link_char - create cfg->driver.dev_char_dir/MAJ:MIN -> <@dev_root_host>/dev/<name>
 * for each character device of @names found under @dev_root_here, as
 * upstream's validator does; a link that exists and points elsewhere is
 * replaced.  Failures are logged as warnings, never errors.  (devnodes.c)
 */
void gv_devnodes_link_char(const gv_config_t *cfg, const char *dev_root_here, const char *dev_root_host,
                           char **names, bool files_ok);

#endif
