/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Editing and finalizing a profile: GPU count, node name, the UUIDs and
 * serials derived from them, and the checks of MIG devices (profile.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "abi/nvml/nvml-abi.h"
#include "base/cleanup.h"
#include "mock/nvml/model-facts.h"
#include "mock/nvml/profile-internal.h"

/* ------------------------------------------------------------------ */
/* editing and finalizing                                              */

int gv_mock_profile_set_gpu_count(gv_mock_profile_t *p, unsigned n, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "set_gpu_count: NULL profile");
        if (n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS)
                return gv_error_set(err, ERANGE, GV_REASON_CONFIG, "gpu count %u is out of range (%u..%u)", n,
                                    GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
        if (n == p->device_count)
                return 0;
        if (n < p->device_count) {
                for (unsigned i = n; i < p->device_count; i++)
                        mp_device_clear(&p->devices[i]);
                p->device_count = n;
                p->finalized = false;
                return 0;
        }
        gv_mock_device_t *nd = realloc(p->devices, n * sizeof(*nd));
        if (!nd)
                return gv_error_oom(err);
        p->devices = nd;
        for (unsigned i = p->device_count; i < n; i++) {
                if (mp_device_copy(&nd[i], p->device_template) < 0)
                        return gv_error_oom(err);
                nd[i].index = i;
                p->device_count = i + 1;
                if (mp_derive_serial(&nd[i], p->device_template->serial, i) < 0)
                        return gv_error_oom(err);
        }
        p->finalized = false;
        return 0;
}

int gv_mock_profile_keep_gpus(gv_mock_profile_t *p, uint64_t keep, gv_error_t **err)
{
        if (!p || !(keep & (p->device_count >= 64 ? ~0ULL : (1ULL << p->device_count) - 1)))
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "keep_gpus: no profile or no GPU to keep");
        unsigned map[GV_MOCK_MAX_GPUS], n = 0;
        for (unsigned i = 0; i < GV_MOCK_MAX_GPUS; i++)
                map[i] = UINT_MAX; /* an Xid of a GPU past the profile's count maps to none */
        uint64_t lost = 0;
        for (unsigned i = 0; i < p->device_count; i++) {
                if (!(keep & (1ULL << i))) {
                        mp_device_clear(&p->devices[i]);
                        map[i] = UINT_MAX;
                        continue;
                }
                if (p->faults.lost_gpus & (1ULL << i))
                        lost |= 1ULL << n;
                if (n != i)
                        p->devices[n] = p->devices[i];
                p->devices[n].index = n;
                map[i] = n++;
        }
        p->device_count = n;
        p->faults.lost_gpus = lost;
        size_t k = 0;
        for (size_t j = 0; j < p->faults.n_xids; j++) {
                unsigned g = p->faults.xids[j].gpu;
                if (g >= GV_MOCK_MAX_GPUS || map[g] == UINT_MAX)
                        continue;
                p->faults.xids[k] = p->faults.xids[j];
                p->faults.xids[k++].gpu = map[g];
        }
        p->faults.n_xids = k;
        return 0;
}

int gv_mock_profile_keep_mig_devices(gv_mock_profile_t *p, unsigned gpu, uint64_t keep, gv_error_t **err)
{
        if (!p || gpu >= p->device_count)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "keep_mig_devices: no profile or GPU %u", gpu);
        gv_mock_device_t *d = &p->devices[gpu];
        size_t n = 0;
        for (size_t k = 0; k < d->n_mig_devices; k++) {
                if (k >= 64 || !(keep & (1ULL << k))) {
                        mp_mig_device_clear(&d->mig_devices[k]);
                        continue;
                }
                if (n != k)
                        d->mig_devices[n] = d->mig_devices[k];
                n++;
        }
        d->n_mig_devices = n;
        return 0;
}

int gv_mock_profile_set_node_name(gv_mock_profile_t *p, const char *node_name, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "set_node_name: NULL profile");
        for (const char *q = node_name; q && *q; q++)
                if ((unsigned char) *q < 0x20 || *q == 0x7f)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "node name: contains a control character (0x%02x at offset %zu)",
                                            (unsigned) (unsigned char) *q, (size_t) (q - node_name));
        char *s = NULL;
        if (node_name && *node_name && !(s = strdup(node_name)))
                return gv_error_oom(err);
        replace_str(&p->node_name, s);
        p->finalized = false;
        return 0;
}

/* FNV-1a, 64 bit, over a sequence of NUL-separated parts. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
        const unsigned char *b = data;
        for (size_t i = 0; i < len; i++) {
                /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): false positive: every caller hashes an initialised object of len bytes */
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

static uint64_t mix64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        x ^= x >> 33;
        return x;
}

static char *derive_uuid(const char *prefix, const char *seed_a, unsigned x, unsigned y)
{
        uint64_t h = fnv1a(0xcbf29ce484222325ULL, seed_a, strlen(seed_a) + 1);
        unsigned v[2] = { x, y };
        h = fnv1a(h, v, sizeof(v));
        uint64_t a = mix64(h), b = mix64(h ^ 0x9e3779b97f4a7c15ULL);
        char *s = NULL;
        if (asprintf(&s, "%s%08x-%04x-%04x-%04x-%012llx", prefix, (unsigned) (a >> 32), (unsigned) (a >> 16) & 0xffff,
                     (unsigned) a & 0xffff, (unsigned) (b >> 48), (unsigned long long) (b & 0xffffffffffffULL)) < 0)
                return NULL;
        return s;
}

/* DGX A100 / HGX bus numbers for GPUs 0..7; further groups of eight use the next PCI domain. */
static const unsigned default_bus[8] = { 0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD };

static const gv_mock_mig_profile_t *find_mig_profile(const gv_mock_device_t *d, const char *name)
{
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (strcmp(d->mig_profiles[i].name, name) == 0)
                        return &d->mig_profiles[i];
        return NULL;
}

static unsigned max_slices(const gv_mock_device_t *d)
{
        unsigned m = 0;
        for (size_t i = 0; i < d->n_mig_profiles; i++)
                if (d->mig_profiles[i].slice_count > m)
                        m = d->mig_profiles[i].slice_count;
        return m;
}

/* The GPU instances placed so far on one GPU (finalize_mig()). */
typedef struct mig_layout {
        const char *src;      /* the profile's source, for messages */
        unsigned total;       /* slices the GPU has */
        unsigned used_slices; /* slices the placed GPU instances take */
        uint64_t used_gi;     /* GPU instance ids in use (bit per id) */
} mig_layout_t;

/* The MIG device before index @i in the same GPU instance as mig_devices[@i], or NULL. */
static const gv_mock_mig_device_t *gi_owner(const gv_mock_device_t *d, size_t i)
{
        const gv_mock_mig_device_t *m = &d->mig_devices[i];
        for (size_t j = 0; j < i && m->gi_id != UNSET; j++)
                if (d->mig_devices[j].gi_id == m->gi_id)
                        return &d->mig_devices[j];
        return NULL;
}

/* A new GPU instance for mig_devices[@i]: its id when not given, its placement, its slices. */
static int place_gi(mig_layout_t *l, const gv_mock_device_t *d, gv_mock_mig_device_t *m,
                    const gv_mock_mig_profile_t *mp, gv_error_t **err)
{
        if (m->gi_id == UNSET) {
                unsigned g = 1;
                while (g < GV_MOCK_MAX_INSTANCE_ID && (l->used_gi & (1ULL << g)))
                        g++;
                m->gi_id = g;
                l->used_gi |= 1ULL << g;
        }
        if (m->placement_start == UNSET)
                m->placement_start = l->used_slices;
        l->used_slices += mp->slice_count;
        if (l->used_slices > l->total)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: devices[%u].mig.devices: the layout needs %u slices, the GPU has %u",
                                    l->src, d->index, l->used_slices, l->total);
        return 0;
}

/* The compute instance id of mig_devices[@i]: the next after its GI's highest; past the bound, the lowest free one. */
static unsigned next_ci(const gv_mock_device_t *d, size_t i)
{
        const gv_mock_mig_device_t *m = &d->mig_devices[i];
        unsigned ci = 0;
        uint64_t used_ci = 0;
        for (size_t j = 0; j < i; j++)
                if (d->mig_devices[j].gi_id == m->gi_id) {
                        used_ci |= 1ULL << d->mig_devices[j].ci_id;
                        if (d->mig_devices[j].ci_id >= ci)
                                ci = d->mig_devices[j].ci_id + 1;
                }
        for (ci = ci > GV_MOCK_MAX_INSTANCE_ID ? 0 : ci; used_ci & (1ULL << ci); ci++)
                ;
        return ci;
}

/* Finalize mig_devices[@i]: its GPU instance, compute instance, memory, SMs and UUID. */
static int finalize_mig_device(mig_layout_t *l, gv_mock_device_t *d, size_t i, gv_error_t **err)
{
        gv_mock_mig_device_t *m = &d->mig_devices[i];
        const gv_mock_mig_profile_t *mp = find_mig_profile(d, m->profile);
        if (!mp)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: devices[%u].mig.devices[%zu].profile: unknown GPU instance profile \"%s\"",
                                    l->src, d->index, i, m->profile);
        const gv_mock_mig_device_t *owner = gi_owner(d, i); /* does it join a GPU instance listed before? */
        if (owner && strcmp(owner->profile, m->profile) != 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: devices[%u].mig.devices[%zu].gi_id: GPU instance %u is a %s",
                                    l->src, d->index, i, m->gi_id, owner->profile);
        int r;
        if (owner)
                m->placement_start = owner->placement_start;
        else if ((r = place_gi(l, d, m, mp, err)) < 0)
                return r;
        if (m->ci_slice_count == 0)
                m->ci_slice_count = mp->slice_count;
        if (m->ci_slice_count > mp->slice_count)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: devices[%u].mig.devices[%zu].ci_slices: %u is more than the %u of %s",
                                    l->src, d->index, i, m->ci_slice_count, mp->slice_count, mp->name);
        if (m->ci_id == UNSET)
                m->ci_id = next_ci(d, i);
        for (size_t j = 0; j < i; j++)
                if (d->mig_devices[j].gi_id == m->gi_id && d->mig_devices[j].ci_id == m->ci_id)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].mig.devices[%zu]: GPU instance %u compute instance %u is listed twice",
                                            l->src, d->index, i, m->gi_id, m->ci_id);
        if (!m->memory_mib)
                m->memory_mib = mp->memory_mib;
        if (!m->multiprocessor_count)
                m->multiprocessor_count = mp->multiprocessor_count * m->ci_slice_count / mp->slice_count;
        if (!m->uuid && !(m->uuid = derive_uuid("MIG-", d->uuid, m->gi_id, m->ci_id)))
                return gv_error_oom(err);
        return 0;
}

/* Every MIG device of @d checked and completed, in order (ids, placement, memory, UUIDs). */
static int finalize_mig(gv_mock_profile_t *p, gv_mock_device_t *d, gv_error_t **err)
{
        mig_layout_t l = { .src = p->source ? p->source : "(profile)", .total = max_slices(d) };
        for (size_t i = 0; i < d->n_mig_devices; i++)
                if (d->mig_devices[i].gi_id != UNSET)
                        l.used_gi |= 1ULL << d->mig_devices[i].gi_id;
        for (size_t i = 0; i < d->n_mig_devices; i++) {
                int r = finalize_mig_device(&l, d, i, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int gv_mock_profile_finalize(gv_mock_profile_t *p, gv_error_t **err)
{
        if (!p)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "finalize: NULL profile");
        if (p->finalized)
                return 0;
        const char *src = p->source ? p->source : "(profile)";
        if (!p->node_name) {
                char host[256] = "";
                if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                        strcpy(host, "localhost");
                host[sizeof(host) - 1] = 0;
                if (!(p->node_name = strdup(host)))
                        return gv_error_oom(err);
        }
        if (!p->nvml_version && p->driver_version) {
                if (asprintf(&p->nvml_version, "%d.%s", p->cuda_driver_version / 1000, p->driver_version) < 0) {
                        p->nvml_version = NULL;
                        return gv_error_oom(err);
                }
        }
        for (unsigned i = 0; i < p->device_count; i++) {
                gv_mock_device_t *d = &p->devices[i];
                d->index = i;
                if (!d->uuid && !(d->uuid = derive_uuid("GPU-", p->node_name, i, 0)))
                        return gv_error_oom(err);
                if (!d->pci_bus_id) {
                        d->pci_domain = i / 8;
                        d->pci_bus = default_bus[i % 8];
                        d->pci_device = 0;
                        if (asprintf(&d->pci_bus_id, "%08X:%02X:%02X.0", d->pci_domain, d->pci_bus, d->pci_device) < 0) {
                                d->pci_bus_id = NULL;
                                return gv_error_oom(err);
                        }
                }
                if (d->minor_number == UNSET)
                        d->minor_number = i;
                if (d->memory_reserved_mib == UNSET_ULL)
                        d->memory_reserved_mib = gv_mock_reserved_mib(d->pci_device_id, p->driver_version);
                if (d->memory_reserved_mib + d->memory_used_mib > d->memory_total_mib)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].memory_used_mib: used + reserved exceed the total", src, i);
                if (d->mig_mode_current == NVML_DEVICE_MIG_ENABLE && (!d->mig_capable || !d->n_mig_profiles))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: devices[%u].mig.mode: MIG enabled on a GPU without MIG profiles", src, i);
                int r = finalize_mig(p, d, err);
                if (r < 0)
                        return r;
                for (unsigned j = 0; j < i; j++) {
                        if (strcasecmp(p->devices[j].uuid, d->uuid) == 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].uuid: %s is also GPU %u's", src, i, d->uuid, j);
                        if (strcasecmp(p->devices[j].pci_bus_id, d->pci_bus_id) == 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: devices[%u].pci_bus_id: %s is also GPU %u's", src, i,
                                                    d->pci_bus_id, j);
                }
        }
        p->finalized = true;
        return 0;
}

const gv_mock_device_t *gv_mock_profile_device(const gv_mock_profile_t *p, unsigned index)
{
        if (!p || index >= p->device_count)
                return NULL;
        return &p->devices[index];
}
