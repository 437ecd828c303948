/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator mock set` (mock/mock.h gv_mock_set): change the runtime
 * state of a mock root's GPUs while clients keep its library loaded.  The
 * state model and its file: mock-state.h; how the library applies it:
 * libnvml-control.c; the Xid control file: libnvml-events.c.
 *
 * Faults and what they change (docs/mock-nvml.md, Faults: runtime changes).
 * Xid meanings from NVIDIA's "XID Errors" catalogue: 48 double bit ECC
 * error, 63 ECC page retirement or row remapping recorded, 64 the same
 * recording failed, 79 GPU has fallen off the bus.  Clock event reason bits
 * from nvml.h (nvmlClocksEventReason*).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "abi/nvml/nvml-abi.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/mock.h"
#include "mock/nvml/mock-state.h"
#include "mock/nvml/profile.h"

#define LIB_DIR "usr/lib64"
#define REASON_SW_POWER_CAP 0x4ULL
#define REASON_HW_SLOWDOWN 0x8ULL
#define REASON_SW_THERMAL 0x20ULL
#define REASON_HW_THERMAL 0x40ULL
#define REASON_HW_POWER_BRAKE 0x80ULL

static void profile_freep(gv_mock_profile_t **p)
{
        gv_mock_profile_free(p);
}

void gv_mock_set_result_clear(gv_mock_set_result_t *r)
{
        free(r->state_file);
        *r = (gv_mock_set_result_t){ 0 };
}

/* The faults' amounts: fixed, or drawn from the seed (splitmix64, so a seed always gives the same draws). */
struct draws {
        bool seeded;
        uint64_t x;
};

/* @fixed without a seed, else a number in @lo..@hi. */
static unsigned long long draw(struct draws *r, unsigned long long fixed, unsigned long long lo, unsigned long long hi)
{
        if (!r->seeded)
                return fixed;
        uint64_t z = (r->x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        return lo + z % (hi - lo + 1);
}

/* Xid events to append: "<gpu> <xid>\n" lines. */
struct xids {
        FILE *f;
        unsigned n;
};

static void add_xid(struct xids *x, unsigned gpu, unsigned xid)
{
        fprintf(x->f, "%u %u\n", gpu, xid);
        x->n++;
}

static unsigned long long add_capped(unsigned long long a, unsigned long long b, unsigned long long cap)
{
        return a > cap - b ? cap : a + b;
}

/* Clocks drop to a share of the maximum (50 %, or 30..70 % with a seed). */
static void drop_clocks(gv_mock_gpu_state_t *g, const gv_mock_device_t *d, struct draws *r)
{
        if (d->unsupported & GV_MOCK_FIELD_CLOCKS)
                return;
        unsigned pct = (unsigned) draw(r, 50, 30, 70);
        g->clock_graphics_mhz = d->max_clock_graphics_mhz * pct / 100;
        g->clock_sm_mhz = d->max_clock_sm_mhz * pct / 100;
        g->set |= GV_MOCK_SET_CLOCK_GRAPHICS | GV_MOCK_SET_CLOCK_SM;
}

static int ecc_burst(gv_mock_gpu_state_t *g, const gv_mock_device_t *d, struct draws *r, struct xids *x,
                     gv_error_t **err)
{
        if ((d->unsupported & GV_MOCK_FIELD_ECC) || !d->ecc_current)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "fault=ecc-burst: GPU %u has ECC off", d->index);
        unsigned long long corrected = draw(r, 10, 1, 1000), uncorrected = draw(r, 1, 1, 4);
        g->ecc_corrected = add_capped(g->ecc_corrected, corrected, 1000000000000ULL);
        g->ecc_uncorrected = add_capped(g->ecc_uncorrected, uncorrected, 1000000000000ULL);
        g->set |= GV_MOCK_SET_ECC_CORRECTED | GV_MOCK_SET_ECC_UNCORRECTED;
        /* Before Ampere the driver retires the page; from Ampere on it remaps the row. */
        if (d->architecture < NVML_DEVICE_ARCH_AMPERE) {
                g->retired_pages = (unsigned) add_capped(g->retired_pages, uncorrected, 4096);
                g->set |= GV_MOCK_SET_RETIRED_PAGES;
        } else {
                g->remapped_rows = (unsigned) add_capped(g->remapped_rows, uncorrected, 4096);
                g->set |= GV_MOCK_SET_REMAPPED_ROWS;
        }
        add_xid(x, d->index, 48);
        add_xid(x, d->index, draw(r, 0, 0, 3) == 3 ? 64 : 63);
        return 0;
}

/* fault=NAME on GPU @d. */
static int apply_fault(gv_mock_gpu_state_t *g, const gv_mock_device_t *d, const char *name, struct draws *r,
                       struct xids *x, gv_error_t **err)
{
        if (strcmp(name, "ecc-burst") == 0)
                return ecc_burst(g, d, r, x, err);
        if (strcmp(name, "fell-off-the-bus") == 0) {
                add_xid(x, d->index, 79);
                g->lost = true;
                g->set |= GV_MOCK_SET_LOST;
                return 0;
        }
        if (strcmp(name, "thermal-slowdown") == 0) {
                g->clock_event_reasons |= REASON_SW_THERMAL | REASON_HW_THERMAL | REASON_HW_SLOWDOWN;
                g->set |= GV_MOCK_SET_EVENT_REASONS;
                drop_clocks(g, d, r);
                return 0;
        }
        if (strcmp(name, "power-slowdown") == 0) {
                g->clock_event_reasons |= REASON_SW_POWER_CAP | REASON_HW_POWER_BRAKE | REASON_HW_SLOWDOWN;
                g->set |= GV_MOCK_SET_EVENT_REASONS;
                if (!(d->unsupported & GV_MOCK_FIELD_POWER_USAGE) && d->power_limit_mw) {
                        g->power_usage_mw = d->power_limit_mw; /* drawing at its cap */
                        g->set |= GV_MOCK_SET_POWER_USAGE;
                }
                drop_clocks(g, d, r);
                return 0;
        }
        if (strcmp(name, "nvlink-down") == 0) {
                if ((d->unsupported & GV_MOCK_FIELD_NVLINK) || !d->nvlink_count)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "fault=nvlink-down: GPU %u has no NVLink",
                                            d->index);
                g->nvlink_down = true;
                g->set |= GV_MOCK_SET_NVLINK;
                return 0;
        }
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                            "fault=%s: unknown fault (ecc-burst, fell-off-the-bus, thermal-slowdown, power-slowdown, "
                            "nvlink-down)",
                            name);
}

/* "all"/NULL, an index or a UUID to a mask of GPUs of @p. */
static int select_gpus(const gv_mock_profile_t *p, const char *sel, uint64_t *mask, gv_error_t **err)
{
        if (!sel || strcmp(sel, "all") == 0) {
                *mask = p->device_count >= 64 ? ~0ULL : (1ULL << p->device_count) - 1;
                return 0;
        }
        for (unsigned i = 0; i < p->device_count; i++)
                if (p->devices[i].uuid && strcasecmp(p->devices[i].uuid, sel) == 0) {
                        *mask = 1ULL << i;
                        return 0;
                }
        char *end;
        errno = 0;
        unsigned long v = sel[0] >= '0' && sel[0] <= '9' ? strtoul(sel, &end, 10) : 0;
        if (sel[0] >= '0' && sel[0] <= '9' && !*end && !errno && v < p->device_count) {
                *mask = 1ULL << v;
                return 0;
        }
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                            "--gpu %s: expected all, a GPU index 0..%u or the UUID of one of the root's GPUs", sel,
                            p->device_count - 1);
}

/* One KEY=VALUE on every GPU of @mask. */
static int apply_setting(gv_mock_state_t *s, const gv_mock_profile_t *p, uint64_t mask, const char *setting,
                         struct draws *r, struct xids *x, gv_error_t **err)
{
        const char *eq = strchr(setting, '=');
        if (!eq || eq == setting)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: expected KEY=VALUE", setting);
        _cleanup_free_ char *key = strndup(setting, (size_t) (eq - setting));
        if (!key)
                return gv_error_oom(err);
        const char *value = eq + 1;
        for (unsigned i = 0; i < p->device_count; i++) {
                if (!(mask & (1ULL << i)))
                        continue;
                const gv_mock_device_t *d = &p->devices[i];
                int rc = strcmp(key, "fault") == 0 ? apply_fault(&s->gpus[i], d, value, r, x, err)
                                                   : gv_mock_state_set(s, i, key, value, err);
                if (rc < 0)
                        return rc;
                unsigned long long room = d->memory_total_mib - d->memory_reserved_mib;
                if (strcmp(key, "memory_used_mib") == 0 && s->gpus[i].memory_used_mib > room)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "memory_used_mib=%s: GPU %u has %llu MiB (%llu reserved)", value, i,
                                            d->memory_total_mib, d->memory_reserved_mib);
        }
        return 0;
}

/* The root's finalized profile, or a CONFIG error for a folder that is no mock root. */
static int load_root_profile(const char *root, int libfd, gv_mock_profile_t **out, gv_error_t **err)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/" LIB_DIR "/" GV_MOCK_ROOT_PROFILE_NAME, root) < 0)
                return gv_error_oom(err);
        if (faccessat(libfd, GV_MOCK_ROOT_PROFILE_NAME, F_OK, 0) < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: not a mock driver root (no " LIB_DIR "/" GV_MOCK_ROOT_PROFILE_NAME
                                    "); run 'gpu-validator mock install --root %s' first",
                                    root, root);
        int r = gv_mock_profile_load_file(path, out, err);
        if (r >= 0)
                r = gv_mock_profile_finalize(*out, err);
        return r;
}

/* The root's state (an empty one when there is no file yet). */
static int load_state(int libfd, const char *path, gv_mock_state_t **out, gv_error_t **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *rerr = NULL;
        int r = gv_read_file_at(libfd, GV_MOCK_ROOT_STATE_NAME, true, GV_MOCK_STATE_MAX_BYTES, &text, &len, &rerr);
        if (r == -ENOENT) {
                *out = calloc(1, sizeof(**out));
                return *out ? 0 : gv_error_oom(err);
        }
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_IO, "%s", rerr && rerr->msg ? rerr->msg : path);
        r = gv_mock_state_parse(path, text, len, out, err);
        if (r < 0)
                gv_error_prefix(err, "the state file is not valid (run 'gpu-validator mock set --clear')");
        return r;
}

/* Appends the Xid lines in one write (O_APPEND: readers see whole lines). */
static int append_xids(int libfd, const char *text, size_t len, gv_error_t **err)
{
        if (!len)
                return 0;
        _cleanup_close_ int fd = openat(libfd, GV_MOCK_ROOT_XID_NAME, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                                        0644);
        int r = fd < 0 ? -errno : gv_write_all(fd, text, len);
        if (r < 0)
                return gv_error_set(err, -r, GV_REASON_IO, "cannot append to " GV_MOCK_ROOT_XID_NAME ": %s", strerror(-r));
        return 0;
}

static int store_state(int libfd, const gv_mock_state_t *s, gv_mock_set_result_t *res, gv_error_t **err)
{
        bool empty = true;
        for (unsigned i = 0; i < GV_MOCK_MAX_GPUS; i++)
                empty = empty && gv_mock_gpu_state_empty(&s->gpus[i]);
        if (empty) {
                res->removed = true;
                if (unlinkat(libfd, GV_MOCK_ROOT_STATE_NAME, 0) < 0 && errno != ENOENT)
                        return gv_error_set(err, errno, GV_REASON_IO, "%s: cannot remove: %s", res->state_file,
                                            strerror(errno));
                return gv_fsync_dir(libfd) < 0 ? gv_error_set(err, EIO, GV_REASON_IO, "cannot sync " LIB_DIR) : 0;
        }
        _cleanup_free_ char *text = NULL;
        int r = gv_mock_state_write(s, &text, err);
        if (r >= 0)
                r = gv_atomic_write_at(libfd, GV_MOCK_ROOT_STATE_NAME, text, strlen(text), 0644, err);
        return r;
}

int gv_mock_set(const gv_mock_set_opts_t *o, gv_mock_set_result_t *out, gv_error_t **err)
{
        *out = (gv_mock_set_result_t){ 0 };
        if (!o->root || !*o->root)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "no mock root given");
        _cleanup_free_ char *abs = realpath(o->root, NULL);
        if (!abs)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: %s", o->root, strerror(errno));
        if (asprintf(&out->state_file, "%s/" LIB_DIR "/" GV_MOCK_ROOT_STATE_NAME, abs) < 0) {
                out->state_file = NULL;
                return gv_error_oom(err);
        }
        _cleanup_close_ int rootfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int libfd = rootfd < 0 ? -1 : openat(rootfd, LIB_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (libfd < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: not a mock driver root (no " LIB_DIR "); run 'gpu-validator mock install --root %s' first",
                                    o->root, o->root);
        if (flock(libfd, LOCK_EX) < 0)
                return gv_error_set(err, errno, GV_REASON_IO, "%s/" LIB_DIR ": cannot lock: %s", abs, strerror(errno));
        _cleanup_(profile_freep) gv_mock_profile_t *p = NULL;
        _cleanup_free_ gv_mock_state_t *s = NULL;
        uint64_t mask = 0;
        int r;
        if ((r = load_root_profile(abs, libfd, &p, err)) < 0 || (r = select_gpus(p, o->gpu, &mask, err)) < 0 ||
            (r = load_state(libfd, out->state_file, &s, err)) < 0)
                return r;
        for (unsigned i = 0; i < GV_MOCK_MAX_GPUS; i++)
                if (o->clear && (i >= p->device_count || (mask & (1ULL << i))))
                        s->gpus[i] = (gv_mock_gpu_state_t){ 0 };
        out->gpus = (unsigned) __builtin_popcountll(mask);
        struct draws draws = { .seeded = o->seeded, .x = o->seed };
        _cleanup_free_ char *xid_text = NULL;
        size_t xid_len = 0;
        struct xids x = { .f = open_memstream(&xid_text, &xid_len) };
        if (!x.f)
                return gv_error_oom(err);
        for (size_t i = 0; i < o->n_settings && r >= 0; i++)
                r = apply_setting(s, p, mask, o->settings[i], &draws, &x, err);
        if (gv_memstream_close(x.f, &xid_text) < 0 && r >= 0)
                r = gv_error_oom(err);
        if (r < 0)
                return r;
        /* Xid first, then the lasting state: a health check sees Xid 79 before GPU_IS_LOST. */
        if ((r = append_xids(libfd, xid_text, xid_text ? strlen(xid_text) : 0, err)) < 0)
                return r;
        out->xids = x.n;
        return store_state(libfd, s, out, err);
}
