/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal header of mock/root (not for the product: src/ includes only
 * mock/mock.h).  The install context, the manifest entry lists and the
 * helpers that install.c, layout.c, remove.c and manifest.c share.
 */
#ifndef GV_MOCK_ROOT_ROOT_H
#define GV_MOCK_ROOT_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "mock/mock.h"
#include "mock/nvml/profile.h"

/* Largest artifact we copy (the mock library and nvidia-smi are far smaller). */
#define MAX_ARTIFACT_BYTES ((size_t) 256 * 1024 * 1024)

/* The header line cdi_spec_text() writes; install and remove recognise our spec by it. */
#define CDI_SPEC_HEADER "# Written by `gpu-validator mock install` for a mock driver root"

/* ---- entry lists: what a manifest records ---- */

/* What an entry is on disk (the manifest's "type": dir, file, link, char). */
typedef enum etype { E_DIR, E_FILE, E_LINK, E_CHAR } etype_t;

typedef struct entry {
        char *path; /* relative to the root, or absolute when outside it */
        etype_t type;
} entry_t;

/* A list of entries, unique by path (heap; mr_elist_free()). */
typedef struct elist {
        entry_t *v;
        size_t n, cap;
} elist_t;

/* Free the paths and the array of @l and zero it. */
void mr_elist_free(elist_t *l);

/* The entry of @l with @path, or NULL; borrowed from @l. */
const entry_t *mr_elist_find(const elist_t *l, const char *path);

/* Add @path (copied) as @type, or retype the entry already there.  0 or -ENOMEM. */
int mr_elist_add(elist_t *l, const char *path, etype_t type);

/* ---- the manifest (manifest.c) ---- */

/* The manifest of a root (heap strings and entries; mr_manifest_free()). */
typedef struct manifest {
        char *profile, *profile_source, *node_name, *driver_version, *cdi_spec;
        char *previous_cdi_spec; /* while installing: the spec the old manifest recorded, when another */
        unsigned gpu_count;
        gv_mock_nodes_t device_nodes;
        bool root_created;
        bool dev_char_links;     /* "dev_char_links": the validator may link /dev/char/MAJ:MIN into this root */
        bool installing;         /* "state": "installing" -- an intent record, install not finished */
        char *workload;          /* "workload": what mr_workload_describe() says, or NULL (key absent) */
        elist_t entries;
} manifest_t;

/* Free the strings and entries of @m and zero it. */
void mr_manifest_free(manifest_t *m);

/* Read <root>/.gpu-validator-mock.json.  -ENOENT when absent; -EINVAL (CONFIG) when malformed. */
int mr_manifest_read(const char *root, manifest_t *out, gv_error_t **err);

/* Write @m as <root>/.gpu-validator-mock.json, atomically. */
int mr_manifest_write(const char *root, const manifest_t *m, gv_error_t **err);

/* ---- path helpers (common.c) ---- */

/* Whether @path (followed) is a regular file; false for NULL. */
bool mr_is_file(const char *path);

/* Absolute form of @p (which need not exist), without "." / ".." resolution beyond realpath of its parent. */
char *mr_absolute(const char *p); /* heap; NULL when out of memory */

/* @path as is when absolute, else under @root (heap; NULL when out of memory). */
char *mr_full_path(const char *root, const char *path);

/* Open the folder holding @full (O_DIRECTORY); *base points into @full at the last component. */
int mr_open_parent(const char *full, const char **base); /* the fd, or -errno */

/* A relative manifest path: no leading '/', no empty, "." or ".." component. */
bool mr_safe_relative(const char *p);

/* Whether a folder between @root and @root/@rel (exclusive of the last component) is a symlink. */
bool mr_parent_is_symlink(const char *root, const char *rel);

/* Set *err to "<what> <path>: <strerror(e)>" (GV_REASON_IO); @e positive or negative.  Returns the negative errno. */
int mr_io_error(gv_error_t **err, int e, const char *what, const char *path);

/* Whether anything (a dangling link too) is at @full (lstat()). */
bool mr_exists_l(const char *full);

/* ---- removal (remove.c) ---- */

/*
 * Remove files/links/nodes of @l, then its folders deepest first.  Outside
 * the root only @spec / @spec2 (the CDI specs the manifest records; NULL when
 * none) and their folders.  Counts into *removed / *kept.
 */
void mr_remove_entries(const char *root, elist_t *l, const char *spec, const char *spec2, unsigned *removed,
                       unsigned *kept);

/*
 * Whether @name is a temporary file that gv_atomic_write_at() (".<base>.tmp-"
 * and 16 hex digits) or mr_put_link() ("<base>.gv-tmp-<pid>") makes for @base.
 */
bool mr_is_temp_of(const char *name, const char *base);

/*
 * The temporary files of every file, link and node of @l and of the
 * manifest, under the same rules as mr_remove_entries() (outside the root only
 * beside the recorded CDI specs).
 */
unsigned mr_sweep_temps(const char *root, const elist_t *l, const char *spec, const char *spec2);

/* "<parent>/.<name>.gv-mock-install" for the root "<parent>/<name>" (heap; NULL when out of memory). */
char *mr_stage_path(const char *root);

/*
 * Removes the staging folder a killed install left (it holds at most the
 * manifest and its temporary files).  Returns 1 when one was removed, 0 when
 * there was none; -ENOTEMPTY (GV_REASON_CONFIG) when it holds anything else.
 */
int mr_stage_clean(const char *stage, gv_error_t **err);

/*
 * A root without a manifest: what a killed install can leave there is the
 * manifest's temporary files (it was writing its intent record into an
 * empty root) -- remove those.  Returns how many went.
 */
unsigned mr_remove_manifest_temps(const char *root);

/* ---- the install context (install.c) ---- */

/* One install: what it found, plans, creates and records (install.c). */
typedef struct ictx {
        char *root;          /* absolute */
        elist_t now;         /* what the new manifest lists */
        elist_t fresh;       /* what this call created (rolled back on failure) */
        elist_t old;         /* what the previous manifest listed */
        elist_t intent;      /* the intent record: the planned layout and the old entries */
        bool root_created;
        bool dry;            /* planning: record what would be made, change nothing */
        unsigned step;       /* changes made so far (for the test hook) */
        void (*hook)(void *data, unsigned step);
        void *hook_data;
        struct manifest *meta; /* what the manifest says besides entries (for rewriting the intent) */
} ictx_t;

/* Called before each change to the filesystem (the crash tests' hook). */
void mr_step(ictx_t *c);

/*
 * Make sure every folder of @path exists.  @path is relative to the root or
 * absolute; folders created now are recorded (now + fresh), folders an
 * earlier install created stay recorded.
 */
int mr_ensure_dirs(ictx_t *c, const char *path, gv_error_t **err);

/* Write a regular file atomically; @path relative to the root or absolute. */
int mr_put_file(ictx_t *c, const char *path, const void *data, size_t len, mode_t mode, gv_error_t **err);

/* Copy the file @src (at most MAX_ARTIFACT_BYTES) to @path as mr_put_file() writes. */
int mr_copy_file(ictx_t *c, const char *src, const char *path, mode_t mode, gv_error_t **err);

/* A symlink @path -> @target, replaced atomically when it points elsewhere. */
int mr_put_link(ictx_t *c, const char *path, const char *target, gv_error_t **err);

/*
 * A device node: a character device (mknod) when *kind is CHAR, else an
 * empty file.  EPERM/EACCES from mknod (user namespace, no CAP_MKNOD) switch
 * *kind to FILES and fill *why.
 */
int mr_put_node(ictx_t *c, const char *path, unsigned major_no, unsigned minor_no, gv_mock_nodes_t *kind,
                char **why, gv_error_t **err);

/* ---- the layout (layout.c) ---- */

/* Whether @s is valid UTF-8 (what a YAML stream must be; YAML 1.2 section 5.2). */
bool mr_valid_utf8(const char *s);

/*
 * Lay out everything a root holds for the finalized profile @p (or, with
 * c->dry, only record it): library and links, libcuda when built, the
 * profile (@profile_yaml), nvidia-smi, /proc, /dev nodes (*kind may fall
 * back to FILES, *why says why), MIG, PCI, ld.so.cache and the CDI spec in
 * @cdi_dir (*cdi_spec: its absolute path, heap).  Errors: those of the
 * mr_put_*() helpers, -ENOMEM.
 */
int mr_lay_out(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, const char *cdi_dir,
               const char *profile_yaml, gv_mock_nodes_t *kind, char **why, char **cdi_spec, gv_error_t **err);

/* ---- workloads (workload.c; docs/mock-driver-root.md "Workloads") ---- */

/*
 * The checks of the workload options of @o: GPUDirect flags only with the
 * container workload (or none), the sriov shape only with vm-vgpu, module
 * names a single safe path component.  -EINVAL (GV_REASON_CONFIG) naming the
 * option.
 */
int mr_workload_check(const gv_mock_install_opts_t *o, gv_error_t **err);

/*
 * What the workload options of @o lay out, for the manifest and the CLI:
 * "vm-vgpu/sriov", "container+gds+rdma", "cc"... (*out heap), or *out NULL
 * when @o asks for none.  0 or -ENOMEM.
 */
int mr_workload_describe(const gv_mock_install_opts_t *o, char **out);

/*
 * Lay out (or, with c->dry, record) what the workload options of @o add to
 * a root for the finalized profile @p: PCI driver bindings, SR-IOV VFs or
 * mdev types and devices, <root>/sys/module entries, a Mellanox NIC, and the
 * status folder's flags under run/.  Nothing when @o asks for none.  Errors:
 * those of the mr_put_*() helpers, -ENOMEM.
 */
int mr_lay_out_workload(ictx_t *c, const gv_mock_install_opts_t *o, const gv_mock_profile_t *p, gv_error_t **err);

#endif
