/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mock libnvidia-ml.so.1's runtime control (libnvml-control.c): the
 * state file that `gpu-validator mock set` writes beside the profile
 * (mock-state.h), re-read when it changes and applied as an overlay on the
 * loaded profile.  Part of the library's one state (struct mock_state).
 */
#ifndef GV_MOCK_NVML_LIBNVML_CONTROL_H
#define GV_MOCK_NVML_LIBNVML_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "mock/nvml/mock-state.h"
#include "mock/nvml/profile.h"

/* File names beside the loaded profile: GV_MOCK_ROOT_STATE_NAME, GV_MOCK_ROOT_XID_NAME (mock/mock.h). */

/* The profile values of one GPU that the overlay may change, as loaded. */
/*
 * How often (at most) the library looks at the state file: every 1 ms.  A
 * stat() costs 1.5-3.5 us on the CI machines, 25-50 times a getter; a clock read 50 ns.
 * Any call that starts 1 ms after `mock set` returned sees the change.
 */
#define GV_MOCK_CONTROL_CHECK_NS 1000000L

struct mock_control_base {
        unsigned temperature_c, power_usage_mw, utilization_gpu, utilization_memory;
        unsigned clock_graphics_mhz, clock_sm_mhz;
        unsigned long long memory_used_mib;
        bool nvlink_active;
        size_t n_processes;
        gv_mock_process_t *processes;   /* the profile's own array */
};

struct mock_control {
        char *path;                     /* the state file, or NULL: no runtime control */
        bool checked;                   /* looked at the file at least once (at @checked_at, CLOCK_MONOTONIC) */
        struct timespec checked_at;
        bool seen;                      /* the file existed at the last look */
        dev_t dev;                      /* its identity at the last look */
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
        uint64_t base_lost;             /* lost GPUs of the profile and the environment */
        gv_mock_state_t *state;         /* the overlay applied now, or NULL */
        struct mock_control_base base[GV_MOCK_MAX_GPUS];
        gv_mock_process_t *processes[GV_MOCK_MAX_GPUS]; /* overlay process lists installed, or NULL */
};

/*
 * mn_control_beside - "<folder of @profile_source>/<name>" as a heap string, or
 * NULL for a built-in profile ("builtin:...") or out of memory.
 */
char *mn_control_beside(const char *profile_source, const char *name);

/*
 * mn_control_open - start runtime control for the profile just loaded: the
 * state file is MOCK_NVML_STATE_FILE, else nvml-mock.state beside the
 * profile file (none for a built-in profile).  Remembers the values the
 * overlay may change and applies the file once.  S.lock held.
 */
void mn_control_open(void);

/*
 * mn_control_refresh - re-read and re-apply the state file when it changed:
 * one stat() when the last look is GV_MOCK_CONTROL_CHECK_NS or more ago, else
 * nothing (a clock read).  S.lock held, initialised.
 */
void mn_control_refresh(void);

/* mn_control_close - put the profile's values back and forget the state file.  S.lock held. */
void mn_control_close(void);

/* mn_control_gpu - the runtime state of GPU @g (all zero when nothing is set).  S.lock held. */
const gv_mock_gpu_state_t *mn_control_gpu(unsigned g);

#endif
