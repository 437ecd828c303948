/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX reader and interpreter of the mock libcuda: PTX text is parsed
 * once into a decoded form (every operand a register slot, every branch an
 * instruction index, every opcode an enumerator) and kernels run from that
 * form on the CPU, each thread block in lockstep (ptx-exec.c), blocks spread
 * over worker threads.  Facts: NVIDIA's PTX ISA reference
 * (docs.nvidia.com/cuda/parallel-thread-execution), chapters "Syntax",
 * "State Spaces, Types, and Variables", "Instruction Operands" and
 * "Instruction Set"; the ISA-to-CUDA release table of its "Release Notes".
 */
#ifndef GV_MOCK_CUDA_PTX_H
#define GV_MOCK_CUDA_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gv_ptx_module gv_ptx_module_t;
typedef struct gv_ptx_func gv_ptx_func_t;

/* Upper bound of the PTX text the reader takes (bytes). */
#define GV_PTX_MAX_TEXT (64u << 20)

/*
 * gv_ptx_parse - read the PTX module @text (@len bytes, NUL not required).
 * On success *out is a heap module (gv_ptx_free()).  On failure returns
 * -EINVAL with *msg a heap "line N: what" naming the first error (malformed
 * PTX: what a real JIT refuses with CUDA_ERROR_INVALID_PTX), or -ENOMEM.
 * An instruction the interpreter does not know is no parse error: it is
 * recorded, and running a kernel that contains it fails (gv_ptx_unsupported()).
 */
int gv_ptx_parse(const char *text, size_t len, gv_ptx_module_t **out, char **msg);

/* gv_ptx_free - free @m and its global variables' storage; accepts NULL. */
void gv_ptx_free(gv_ptx_module_t *m);

/* The module's `.version` as 10 * major + minor (9.5: 95), `.target` sm number (sm_90a: 90), and its suffix. */
unsigned gv_ptx_version(const gv_ptx_module_t *m);
unsigned gv_ptx_target(const gv_ptx_module_t *m);
/* 'a' (architecture-specific: runs only on that exact compute capability), 'f' (family), or 0. */
char gv_ptx_target_suffix(const gv_ptx_module_t *m);

/*
 * gv_ptx_isa_cuda - the first CUDA release (1000 * major + 10 * minor) whose
 * driver loads PTX ISA @isa (10 * major + minor), from the PTX ISA reference's
 * release table (1.0 = CUDA 1.0 ... 7.4 = CUDA 11.4 ... 8.5 = CUDA 12.5,
 * 8.6 = 12.7, 8.7 = 12.8, 8.8 = 12.9, 9.x = 13.x); 0 for a version the
 * table does not know (a driver treats it as newer than itself).
 */
int gv_ptx_isa_cuda(unsigned isa);

/* gv_ptx_entry - the `.entry` named @name, or NULL. */
const gv_ptx_func_t *gv_ptx_entry(const gv_ptx_module_t *m, const char *name);

/* gv_ptx_entry_count / gv_ptx_entry_at - the module's kernels in text order. */
size_t gv_ptx_entry_count(const gv_ptx_module_t *m);
const gv_ptx_func_t *gv_ptx_entry_at(const gv_ptx_module_t *m, size_t i);
const char *gv_ptx_func_name(const gv_ptx_func_t *f);

/*
 * gv_ptx_global - a module-scope `.global` or `.const` variable: its host
 * address and size in bytes; false when @name is none.
 */
bool gv_ptx_global(const gv_ptx_module_t *m, const char *name, void **addr, size_t *bytes);

/* gv_ptx_global_count / gv_ptx_global_at - every such variable (storage owned by the module). */
size_t gv_ptx_global_count(const gv_ptx_module_t *m);
void gv_ptx_global_at(const gv_ptx_module_t *m, size_t i, void **addr, size_t *bytes);

/* A kernel's parameters as the launch lays them out. */
typedef struct gv_ptx_params {
        size_t count;            /* parameters */
        const size_t *offset;    /* byte offset of each in the parameter buffer */
        const size_t *size;      /* byte size of each */
        size_t bytes;            /* size of the buffer */
} gv_ptx_params_t;

/* gv_ptx_func_params - the layout of @f's parameters (arrays owned by the module). */
gv_ptx_params_t gv_ptx_func_params(const gv_ptx_func_t *f);

/* Static shared memory, local memory per thread, and registers of @f (cuFuncGetAttribute). */
size_t gv_ptx_func_shared(const gv_ptx_func_t *f);
size_t gv_ptx_func_local(const gv_ptx_func_t *f);
unsigned gv_ptx_func_registers(const gv_ptx_func_t *f);

/*
 * gv_ptx_unsupported - when @f contains an instruction the interpreter does
 * not run, a heap "line N: ..." naming it (the caller frees); NULL when every
 * instruction is known.
 */
char *gv_ptx_unsupported(const gv_ptx_func_t *f);

/*
 * How the interpreter checks a global (generic) address: @range returns
 * true and the bounds [*lo, *hi) of the allocation holding @addr, false when
 * no allocation does.  Called only on a miss of the worker's last range.
 */
typedef bool (*gv_ptx_range_fn)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* One launch. */
typedef struct gv_ptx_launch {
        unsigned grid[3], block[3];
        size_t dynamic_shared;  /* bytes of `.extern .shared` memory */
        const void *params;     /* the parameter buffer, gv_ptx_func_params().bytes long */
        gv_ptx_range_fn range;
        void *range_ctx;
        unsigned workers;       /* OS threads to spread the blocks over; 0: one per online CPU */
        uint64_t *executed;     /* NULL, or receives the thread-instructions run (for figures) */
        bool plain;             /* for tests: every instruction on every thread's registers, without the
                                 * uniform and affine shortcuts (the reference the shortcuts must match) */
} gv_ptx_launch_t;

/* Why a launch stopped. */
typedef enum gv_ptx_fault {
        GV_PTX_OK = 0,
        GV_PTX_ILLEGAL_ADDRESS,   /* a load, store or atomic outside every allocation or window */
        GV_PTX_MISALIGNED,        /* an access not aligned to its size */
        GV_PTX_TRAP,              /* trap or brkpt */
        GV_PTX_UNSUPPORTED,       /* an instruction the interpreter does not run */
        GV_PTX_NO_MEMORY,         /* host memory for registers or shared memory */
} gv_ptx_fault_t;

/*
 * gv_ptx_run - run @f over the grid of @l and wait for it.  Returns
 * GV_PTX_OK or the first fault; *msg (may be NULL) gets a heap text naming
 * the instruction's line and the address when there is one.
 */
gv_ptx_fault_t gv_ptx_run(const gv_ptx_func_t *f, const gv_ptx_launch_t *l, char **msg);

#endif
