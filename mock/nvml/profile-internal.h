/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal header of the profile model (mock/nvml/profile*.c): the parse
 * context and YAML getters, the device-field callbacks, and the helpers that
 * loading, finalizing and writing share.  Not for the product, nor for the
 * mock library (profile.h is the model's header).
 */
#ifndef GV_MOCK_NVML_PROFILE_INTERNAL_H
#define GV_MOCK_NVML_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <yaml.h>

#include "base/error.h"
#include "mock/nvml/profile.h"

/* "Not given" for unsigned fields that 0 is a valid value of. */
#define UNSET UINT_MAX
#define UNSET_ULL ULLONG_MAX
#define MAX_PROFILE_BYTES (4u << 20)

#define KEY_IS(k, lit) (strcmp((k), (lit)) == 0)
/* What a key reader returns for a key that is not one of its own (handled keys: 0 or -errno). */
#define NOT_MINE 1

/* Free *@dst and take @src (heap or NULL) in its place. */
static inline void replace_str(char **dst, char *src)
{
        free(*dst);
        *dst = src;
}

/* One load: where errors go and how strict the schema is. */
typedef struct pctx {
        const char *source;
        yaml_document_t *doc;
        gv_error_t **err;
        bool lenient; /* nvml-mock schema: unknown keys are ignored */
} pctx_t;

/* Called for one key/value pair of a mapping (mp_for_each_pair()); @data is the caller's. */
typedef int (*map_cb)(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data);

/* A name and its NVML value (brand names: parsed in profile-device.c, written in profile-write.c). */
typedef struct mp_name {
        const char *name;
        unsigned value;
} mp_name_t;

extern const mp_name_t mp_brand_names[];
extern const size_t mp_n_brand_names;
/* Compute mode names by NVML value (nvmlComputeMode_t 0..3). */
extern const char *const mp_compute_mode_names[];
extern const size_t mp_n_compute_mode_names;

/* ---- freeing and copying (profile.c) ---- */

void mp_mig_profile_clear(gv_mock_mig_profile_t *m);

void mp_mig_device_clear(gv_mock_mig_device_t *m);

void mp_device_clear(gv_mock_device_t *d);

int mp_device_copy(gv_mock_device_t *dst, const gv_mock_device_t *src);

/* ---- YAML walking (profile-yaml.c) ---- */

yaml_node_t *mp_ynode(pctx_t *c, int id);

unsigned long mp_yline(const yaml_node_t *n);

/* "<source>:<line>: <prefix>.<key>: <message>" */
__attribute__((format(printf, 5, 6))) int mp_perr(pctx_t *c, const yaml_node_t *n, const char *prefix,
                                                      const char *key, const char *fmt, ...);


const char *mp_scalar(const yaml_node_t *n);

bool mp_is_na(const yaml_node_t *n);

bool mp_is_null(const yaml_node_t *n);

yaml_node_t *mp_map_get(pctx_t *c, yaml_node_t *map, const char *key);

int mp_want_map(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key);

int mp_want_seq(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key);

int mp_get_ull(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned long long max,
                   unsigned long long *out);

int mp_get_uint(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, unsigned max, unsigned *out);

int mp_get_bool(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool *out);

/* A string value; numbers are accepted as their text. */
int mp_get_str(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, char **out);

/* Milliwatts from "<key>_w" (watts, may be fractional) or "<key>_mw". */
int mp_get_mw(pctx_t *c, yaml_node_t *n, const char *prefix, const char *key, bool watts, unsigned *out);

void mp_set_supported(gv_mock_device_t *d, uint32_t bit, bool supported);

/*
 * A field that may be "N/A": when @v is N/A, marks @bit unsupported and
 * returns true (nothing left to parse); otherwise returns false after marking
 * @bit supported when @mark_supported.
 */
bool mp_na_field(gv_mock_device_t *d, const yaml_node_t *v, uint32_t bit, bool mark_supported);

/* Parses "%08X:%02X:%02X.0" or "%04X:%02X:%02X.0" into a canonical 8-digit form. */
int mp_parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, char **canon);

bool mp_valid_uuid(const char *s, const char *prefix);

/* Calls @cb for each pair of @map; the prefix passed on is "<prefix>" (keys are separate). */
int mp_for_each_pair(pctx_t *c, yaml_node_t *map, const char *prefix, map_cb cb, void *data);

int mp_unknown_key(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key);

char *mp_join(const char *prefix, const char *key);

/*
 * Item @i of the sequence @v (may be NULL) and its path "<base>[i]" in *@ip
 * (heap, the caller frees); *@ip is NULL when out of memory.
 */
yaml_node_t *mp_seq_item(pctx_t *c, yaml_node_t *v, const char *base, size_t i, char **ip);

/* ---- device fields (profile-device.c) ---- */

/* The device keys of the profile schema (a map_cb over @data, a gv_mock_device_t): identity, state and feature keys in turn; any other key is refused with file:line. */
int mp_device_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data);

void mp_device_defaults(gv_mock_device_t *d);

/* The `mig` mapping of a GPU (profile-mig.c); a map_cb over @data, a gv_mock_device_t. */
int mp_mig_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data);

/* ---- loading (profile-parse.c) ---- */

int mp_load_text(const char *source, const char *text, size_t len, gv_mock_profile_t **out, gv_error_t **err);

/*
 * GPU @i's serial when the profile gives one serial for every GPU (@base, from
 * `gpu:`): a numeric base counts up (1650000000000, ...001, ...002), any other
 * base gets "-<i>" appended; GPU 0 keeps the base.  Deterministic and distinct
 * per index.  Replaces d->serial; leaves it alone when @base is NULL.
 * Returns 0 or -ENOMEM.
 */
int mp_derive_serial(gv_mock_device_t *d, const char *base, unsigned i);

#endif
