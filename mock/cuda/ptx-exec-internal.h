/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX interpreter's own parts (ptx-exec.c describes how it runs a grid):
 * the launch and worker state, register access, and the loop over the
 * threads an instruction applies to, shared by the scheduler (ptx-exec.c),
 * the arithmetic (ptx-alu.c) and the memory instructions (ptx-memory.c).
 */
#ifndef GV_MOCK_CUDA_PTX_EXEC_INTERNAL_H
#define GV_MOCK_CUDA_PTX_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mock/cuda/ptx-internal.h"

/* State of one launch, shared by its workers. */
typedef struct grid {
        const struct gv_ptx_func *f;
        const ptx_ins_t *code;     /* the code to run: f's own, or its folded copy */
        const gv_ptx_launch_t *l;
        uint64_t blocks;
        _Atomic uint64_t next;     /* the next block to run */
        uint64_t chunk;            /* consecutive blocks a worker takes at once */
        atomic_bool stop;          /* a worker faulted */
        pthread_mutex_t lock;      /* guards the fault fields */
        gv_ptx_fault_t fault;
        uint32_t fault_line;
        uint64_t fault_addr;
        _Atomic uint64_t executed; /* thread-instructions */
} grid_t;

/*
 * What the interpreter knows of the values of a slot across the block
 * (ptx-shape.c): when @affine, thread t holds base + stride * t (mod 2^64);
 * stride 0 is a uniform value.  When @lazy (only with @affine) the row is
 * not written but for its two ends, threads 0 and n - 1, which every slot's
 * row always holds; otherwise the row holds every thread's value.
 */
typedef struct shape {
        uint64_t base, stride;
        bool affine, lazy;
} shape_t;

/* One worker: a block's registers and windows, reused for each block it runs. */
typedef struct worker {
        grid_t *g;
        const struct gv_ptx_func *f;
        const ptx_ins_t *code;
        uint32_t n;                /* threads per block */
        size_t sink;               /* the slot `_` writes to */
        uint64_t *R;               /* (n_slots + 1) rows of n */
        uint32_t *pc, *tmp;
        const uint32_t *act;       /* the active threads, in order: iota, or list */
        uint32_t *iota, *list;     /* 0, 1, ... n - 1; resched()'s list */
        uint8_t *alive;
        uint32_t nact, nalive, P, next_wait;
        bool dense;
        uint8_t *shared;
        size_t shared_bytes;
        uint8_t *local;
        size_t local_bytes;
        uint64_t lo, hi;           /* the last global range that checked out */
        uint64_t *rlo, *rhi;       /* the same, per instruction (by PC) */
        shape_t *sh;               /* by slot (ptx-shape.c) */
        size_t probe;              /* the first of 4 scratch rows after the sink (ptx-shape.c) */
        bool plain;                /* gv_ptx_launch_t.plain: no shapes, every instruction on rows */
        gv_ptx_fault_t fault;
        uint64_t fault_addr;
        uint64_t executed;
} worker_t;

/* A register's bits as a float (the low 32) or a double, and back: type punning through a union, as C allows. */
typedef union {
        uint32_t u;
        float f;
} bits32_t;
typedef union {
        uint64_t u;
        double d;
} bits64_t;

static inline float f32(uint64_t v)
{
        return ((bits32_t) { .u = (uint32_t) v }).f;
}

static inline uint64_t of32(float f)
{
        return ((bits32_t) { .f = f }).u;
}

static inline double f64(uint64_t v)
{
        return ((bits64_t) { .u = v }).d;
}

static inline uint64_t of64(double d)
{
        return ((bits64_t) { .d = d }).u;
}

/* The value of @v as kind @k, widened to 64 bits (sign for signed kinds). */
static inline int64_t sval(uint64_t v, unsigned k)
{
        switch (k) {
        case K_S8: return (int8_t) v;
        case K_S16: return (int16_t) v;
        case K_S32: return (int32_t) v;
        case K_U8: return (uint8_t) v;
        case K_U16: return (uint16_t) v;
        case K_U32: return (uint32_t) v;
        default: return (int64_t) v;
        }
}

/* @v truncated to the width of @k (the register invariant: zero-extended). */
static inline uint64_t trunc_kind(uint64_t v, unsigned k)
{
        switch (ptx_kind_bytes(k)) {
        case 1: return (uint8_t) v;
        case 2: return (uint16_t) v;
        case 4: return (uint32_t) v;
        default: return v;
        }
}

static inline bool is_signed(unsigned k)
{
        return k == K_S8 || k == K_S16 || k == K_S32 || k == K_S64;
}

static inline void fault(worker_t *w, gv_ptx_fault_t why, uint64_t addr)
{
        if (!w->fault) {
                w->fault = why;
                w->fault_addr = addr;
        }
}


/* ------------------------------------------------------------------ */
/* the threads an instruction applies to                               */

typedef struct runset {
        const uint32_t *list; /* NULL: threads 0 .. cnt-1 */
        uint32_t cnt;
} runset_t;

/* ptx_shape_fill - writes the whole row of lazy slot @s from its shape (it stays affine; ptx-shape.c). */
void ptx_shape_fill(worker_t *w, int32_t s);

static inline runset_t runset(worker_t *w, const ptx_ins_t *in)
{
        runset_t all = w->dense ? (runset_t) { NULL, w->n } : (runset_t) { w->act, w->nact };
        if (in->guard < 0)
                return all;
        const shape_t *g = &w->sh[in->guard];
        if (g->affine && g->stride == 0) /* a uniform predicate: all or none */
                return ((g->base & 1) ^ in->gneg) ? all : (runset_t) { w->tmp, 0 };
        if (g->lazy)
                ptx_shape_fill(w, in->guard);
        const uint64_t *G = w->R + (size_t) in->guard * w->n;
        uint32_t k = 0;
        uint64_t neg = in->gneg;
        for (uint32_t i = 0; i < w->nact; i++) {
                uint32_t t = w->act[i];
                w->tmp[k] = t;
                k += (uint32_t) ((G[t] & 1) ^ neg);
        }
        return (runset_t) { w->tmp, k };
}

#define FOR(...)                                                                               \
        do {                                                                                   \
                if (!rs.list) {                                                                \
                        for (uint32_t t = 0; t < rs.cnt; t++) {                                \
                                __VA_ARGS__;                                                   \
                        }                                                                      \
                } else {                                                                       \
                        for (uint32_t k_ = 0; k_ < rs.cnt; k_++) {                             \
                                uint32_t t = rs.list[k_];                                      \
                                __VA_ARGS__;                                                          \
                        }                                                                      \
                }                                                                              \
        } while (0)

#define ROW(s) (w->R + (size_t) ((s) < 0 ? w->sink : (size_t) (s)) * w->n)
#define KEY(op, k) ((unsigned) (op) << 4 | (unsigned) (k))

/* The slots @in writes: up to 4 into @out (the sink `_` left out); how many. */
static inline int ptx_dests(const ptx_ins_t *in, int32_t out[4])
{
        int n = 0;
        switch (in->op) {
        case OP_ST:
        case OP_RED:
        case OP_BRA:
        case OP_EXIT:
        case OP_BAR:
        case OP_TRAP:
        case OP_NOP:
        case OP_UNSUPPORTED:
                return 0;
        default:
                for (int i = 0; i < 4; i++)
                        if (in->d[i] >= 0)
                                out[n++] = in->d[i];
                return n;
        }
}

/* The slots @in reads, its guard left out: up to 7 into @out; how many. */
static inline int ptx_sources(const ptx_ins_t *in, int32_t out[7])
{
        int n = 0;
        const int32_t all[7] = { in->a, in->b, in->c, in->s[0], in->s[1], in->s[2], in->s[3] };
        for (int i = 0; i < 7; i++)
                if (all[i] >= 0)
                        out[n++] = all[i];
        return n;
}

/* ------------------------------------------------------------------ */
/* shapes: uniform and affine values (ptx-shape.c)                     */

/* ptx_shape_set - @s (>= 0) now holds base + stride * t in every thread: its ends written, the rest lazy. */
void ptx_shape_set(worker_t *w, int32_t s, uint64_t base, uint64_t stride);

/* ptx_shape_written - @d (may be the sink, -1) is about to be written on rows over @rs. */
void ptx_shape_written(worker_t *w, int32_t d, runset_t rs);

/*
 * ptx_shape_rows - before @in runs on rows over @rs: its sources' rows
 * written, and its destinations plain rows from now on (a lazy one written
 * first when @rs leaves out a live thread, which keeps its value).
 */
void ptx_shape_rows(worker_t *w, const ptx_ins_t *in, runset_t rs);

/*
 * ptx_shape_alu - runs arithmetic, logic, setp, selp, cvt, mov and the like
 * without rows when @rs is every live thread and the sources are uniform
 * (any such instruction: run once) or affine (add, sub, mul, mad, shl,
 * mul.wide, mad.wide, integer cvt, mov, cvta, when the result is affine
 * too).  False when it did not run @in: run it on rows.
 */
bool ptx_shape_alu(worker_t *w, const ptx_ins_t *in, runset_t rs);

/* ptx_shape_detect - marks @s affine when its (written) row is. */
void ptx_shape_detect(worker_t *w, int32_t s);

/*
 * ptx_fold - a copy of @f's code with the copies folded away when @f has no
 * loop (ptx-fold.c); NULL when it has one (or on OOM): run @f's own code.
 * The caller frees the copy.
 */
ptx_ins_t *ptx_fold(const struct gv_ptx_func *f);

/* ptx_alu - the arithmetic, logic, move and conversion instructions; false for any other (ptx-alu.c). */
bool ptx_alu(worker_t *w, const ptx_ins_t *in, runset_t rs);

/* ptx_setp - setp: compare, combine with c, write p (and !p to q) (ptx-alu.c). */
void ptx_setp(worker_t *w, const ptx_ins_t *in, runset_t rs);

/* ptx_pack - mov.b64 d, {a, b} and mov.b64 {a, b}, d, and the 4-part forms (ptx-alu.c). */
void ptx_pack(worker_t *w, const ptx_ins_t *in, runset_t rs);

/* ptx_memory - ld / st / atom / red; false on a fault, recorded in @w (ptx-memory.c). */
bool ptx_memory(worker_t *w, const ptx_ins_t *in, runset_t rs);

#endif
