/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime state of a mock node: what `gpu-validator mock set` changed
 * while clients keep the mock libnvidia-ml.so.1 loaded (temperature,
 * utilisation, memory used, power, clocks, processes, and the lasting part of
 * faults: ECC counters, pending retired pages / remapped rows, clock event
 * reasons, NVLink down, fallen off the bus).  It is an overlay on the loaded
 * profile, kept in a text file beside it (nvml-mock.state); the library
 * re-reads that file when it changes (libnvml-control.c), the CLI reads,
 * changes and atomically replaces it (mock-set.c).  Xid events are not kept
 * here: they go to the Xid control file (docs/mock-nvml.md, Faults).
 *
 * File format, one setting a line, '#' comments and blank lines ignored:
 *
 *     <gpu index> <key>=<value>
 *
 * Keys and values are those of `mock set` (gv_mock_state_set()).
 */
#ifndef GV_MOCK_NVML_MOCK_STATE_H
#define GV_MOCK_NVML_MOCK_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "mock/nvml/profile.h"

/* The most processes `mock set` can add to one GPU. */
#define GV_MOCK_STATE_MAX_PROCESSES 64u
/* The most bytes of a state file (64 GPUs x every key x 64 processes fit well below). */
#define GV_MOCK_STATE_MAX_BYTES ((size_t) 1 << 20)
/* The longest process name (bytes), as NVML's own process name buffers. */
#define GV_MOCK_STATE_MAX_NAME 63u

/* Which settings of a GPU are present (the rest keep the profile's values). */
typedef enum gv_mock_state_bit {
        GV_MOCK_SET_TEMPERATURE = 1u << 0,
        GV_MOCK_SET_UTIL_GPU = 1u << 1,
        GV_MOCK_SET_UTIL_MEMORY = 1u << 2,
        GV_MOCK_SET_MEMORY_USED = 1u << 3,
        GV_MOCK_SET_POWER_USAGE = 1u << 4,
        GV_MOCK_SET_CLOCK_GRAPHICS = 1u << 5,
        GV_MOCK_SET_CLOCK_SM = 1u << 6,
        GV_MOCK_SET_EVENT_REASONS = 1u << 7,
        GV_MOCK_SET_ECC_CORRECTED = 1u << 8,
        GV_MOCK_SET_ECC_UNCORRECTED = 1u << 9,
        GV_MOCK_SET_RETIRED_PAGES = 1u << 10,
        GV_MOCK_SET_REMAPPED_ROWS = 1u << 11,
        GV_MOCK_SET_NVLINK = 1u << 12,
        GV_MOCK_SET_LOST = 1u << 13,
        GV_MOCK_SET_PROCESSES_CLEAR = 1u << 14,
} gv_mock_state_bit_t;

/* A process `mock set` added (names are stored in place, no heap). */
typedef struct gv_mock_state_process {
        unsigned pid;
        unsigned long long used_memory_mib;   /* MiB */
        char name[GV_MOCK_STATE_MAX_NAME + 1]; /* "" when not given */
} gv_mock_state_process_t;

/* The runtime changes of one GPU.  Units: °C, percent, MiB, mW, MHz. */
typedef struct gv_mock_gpu_state {
        uint32_t set;                         /* gv_mock_state_bit_t */
        unsigned temperature_c;
        unsigned utilization_gpu, utilization_memory;
        unsigned long long memory_used_mib;
        unsigned power_usage_mw;
        unsigned clock_graphics_mhz, clock_sm_mhz;
        unsigned long long clock_event_reasons; /* nvmlClocksEventReason* bits added to the computed ones */
        unsigned long long ecc_corrected;       /* volatile = aggregate count since the first burst */
        unsigned long long ecc_uncorrected;
        unsigned retired_pages;                 /* pages retired (double bit), pending a reboot */
        unsigned remapped_rows;                 /* rows remapped (uncorrectable), pending a reset */
        bool nvlink_down;                       /* every link inactive */
        bool lost;                              /* fallen off the bus: GPU_IS_LOST */
        unsigned n_processes;                   /* processes added (after the profile's, unless PROCESSES_CLEAR) */
        gv_mock_state_process_t processes[GV_MOCK_STATE_MAX_PROCESSES];
} gv_mock_gpu_state_t;

/* The runtime state of a node: one entry per possible GPU index. */
typedef struct gv_mock_state {
        gv_mock_gpu_state_t gpus[GV_MOCK_MAX_GPUS];
} gv_mock_state_t;

/* gv_mock_gpu_state_empty - whether @g changes nothing. */
bool gv_mock_gpu_state_empty(const gv_mock_gpu_state_t *g);

/*
 * gv_mock_state_set - apply the setting @key=@value to GPU @gpu (< 64) of @s.
 *
 * Keys: temperature_c (0..200), utilization_gpu, utilization_memory (0..100),
 * memory_used_mib, power_usage_mw, power_usage_w (stored in mW),
 * clock_graphics_mhz, clock_sm_mhz (0..100000), clock_event_reasons (a mask
 * within nvmlClocksEventReason 0x1FF, decimal or 0x hex), ecc_corrected,
 * ecc_uncorrected (counts), retired_pages, remapped_rows (0..4096),
 * nvlink (up|down), lost (true|false), processes (clear: drop the profile's and
 * the added processes), process (PID:MIB[:NAME], adds one; PID 1..4194304).
 * Numbers are decimal without sign.  The GPU is left unchanged on error.
 * Errors: -EINVAL (GV_REASON_CONFIG) naming key and value:
 * "temperature_c=abc: expected a whole number 0..200"; -E2BIG past the process limit.
 */
int gv_mock_state_set(gv_mock_state_t *s, unsigned gpu, const char *key, const char *value, gv_error_t **err);

/*
 * gv_mock_state_parse - read the state file text @text (@len bytes, need not
 * be NUL-terminated) into a new state *out (caller frees with free()).
 * @source names the file in messages.  Errors: -EINVAL (GV_REASON_CONFIG)
 * "<source>:<line>: <problem>", -EFBIG over GV_MOCK_STATE_MAX_BYTES, -ENOMEM.
 */
int gv_mock_state_parse(const char *source, const char *text, size_t len, gv_mock_state_t **out, gv_error_t **err);

/*
 * gv_mock_state_write - @s as state file text (a heap string the caller
 * frees), which gv_mock_state_parse() reads back to the same state.
 * Errors: -ENOMEM.
 */
int gv_mock_state_write(const gv_mock_state_t *s, char **out, gv_error_t **err);

#endif
