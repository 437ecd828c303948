/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PTX interpreter: runs a decoded kernel (ptx-internal.h) over a grid.
 *
 * A thread block runs in lockstep, as one wide SIMT group: each instruction
 * is applied to every thread at the lowest program counter among the live
 * threads before the next instruction runs ("min-PC" scheduling).  Threads
 * that diverge wait at their own PC and join again when the group reaches
 * it, so structured code reconverges where a GPU reconverges, and
 * `bar.sync` holds by construction: every live thread arrives at it
 * together.  Registers are stored slot-major (one row of N threads per
 * slot), so the loop of one instruction over the block is a tight, often
 * vectorised, loop.  Blocks are spread over worker threads; atomics on
 * global memory are host atomics.
 *
 * Every load, store and atomic is checked: global addresses against the
 * caller's allocations (gv_ptx_launch_t.range), shared, local and param
 * offsets against their windows, and alignment against the access size
 * (PTX ISA reference, "Addresses as Operands": accesses must be naturally
 * aligned).  A fault stops the grid and is reported, never a host crash.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mock/cuda/ptx-exec-internal.h"

/* ------------------------------------------------------------------ */
/* scheduling                                                          */

/* Picks the lowest PC among the live threads as the next group (the active threads' pc[] must be current). */
static void resched(worker_t *w)
{
        uint32_t lo = UINT32_MAX, next = UINT32_MAX;
        for (uint32_t t = 0; t < w->n; t++) {
                if (!w->alive[t])
                        continue;
                uint32_t p = w->pc[t];
                if (p < lo) {
                        next = lo;
                        lo = p;
                } else if (p > lo && p < next) {
                        next = p;
                }
        }
        uint32_t *list = w->list, k = 0;
        const uint8_t *alive = w->alive;
        const uint32_t *pc = w->pc;
        for (uint32_t t = 0; t < w->n; t++) {
                list[k] = t;
                k += alive[t] && pc[t] == lo;
        }
        w->act = list;
        w->nact = k;
        w->P = lo;
        w->next_wait = next;
        w->dense = w->nact == w->n;
}

/* Writes P into the pc of every active thread (before a resched). */
static void settle(worker_t *w, uint32_t pc)
{
        for (uint32_t i = 0; i < w->nact; i++)
                w->pc[w->act[i]] = pc;
}

/* How many of the active threads take branch @in (its guard is a row or uniform). */
static uint32_t taken_count(worker_t *w, const ptx_ins_t *in)
{
        const shape_t *g = &w->sh[in->guard];
        uint64_t neg = in->gneg;
        if (g->affine && g->stride == 0)
                return ((g->base & 1) ^ neg) ? w->nact : 0;
        if (g->lazy)
                ptx_shape_fill(w, in->guard);
        const uint64_t *G = ROW(in->guard);
        uint32_t n = 0;
        if (w->dense) {
                for (uint32_t t = 0; t < w->n; t++)
                        n += (uint32_t) ((G[t] & 1) ^ neg);
        } else {
                for (uint32_t i = 0; i < w->nact; i++)
                        n += (uint32_t) ((G[w->act[i]] & 1) ^ neg);
        }
        return n;
}

static void branch(worker_t *w, const ptx_ins_t *in)
{
        uint32_t target = in->target;
        if (in->guard >= 0) {
                uint32_t taken = taken_count(w, in);
                if (taken != 0 && taken != w->nact) { /* the threads part: each waits at its own PC */
                        const uint64_t *G = ROW(in->guard);
                        uint64_t neg = in->gneg;
                        for (uint32_t i = 0; i < w->nact; i++) {
                                uint32_t t = w->act[i];
                                w->pc[t] = ((G[t] & 1) ^ neg) ? target : w->P + 1;
                        }
                        resched(w);
                        return;
                }
                if (taken == 0)
                        target = w->P + 1;
        }
        if (target < w->next_wait) {
                w->P = target;
                return;
        }
        settle(w, target);
        resched(w);
}

/* ret / exit: the threads it applies to are done; false when the block is. */
static bool finish(worker_t *w, runset_t rs)
{
        uint8_t *alive = w->alive;
        if (!rs.list)
                memset(alive, 0, rs.cnt);
        else
                for (uint32_t i = 0; i < rs.cnt; i++)
                        alive[rs.list[i]] = 0;
        w->nalive -= rs.cnt;
        if (w->nalive == 0)
                return false;
        settle(w, w->P + 1); /* the dead ones are skipped by resched() */
        resched(w);
        return true;
}

/* An arithmetic, logic, comparison or data-movement instruction on rows; false on a fault. */
static bool alu_rows(worker_t *w, const ptx_ins_t *in, runset_t rs)
{
        ptx_shape_rows(w, in, rs);
        switch (in->op) {
        case OP_SETP:
                ptx_setp(w, in, rs);
                return true;
        case OP_PACK:
        case OP_UNPACK:
                ptx_pack(w, in, rs);
                return true;
        default:
                if (ptx_alu(w, in, rs))
                        return true;
                fault(w, GV_PTX_UNSUPPORTED, 0);
                return false;
        }
}

/* Runs the block whose registers and windows are set up; false on a fault. */
static bool run_block(worker_t *w)
{
        w->P = 0;
        w->nact = w->nalive = w->n;
        w->dense = true;
        w->next_wait = UINT32_MAX;
        w->act = w->iota;
        memset(w->alive, 1, w->n);
        uint64_t executed = 0;
        for (;;) {
                const ptx_ins_t *in = &w->code[w->P];
                if (in->op == OP_BRA) { /* reads its guard itself */
                        executed += w->nact;
                        branch(w, in);
                        continue;
                }
                runset_t rs = runset(w, in);
                executed += rs.cnt;
                bool ok = true;
                switch (in->op) {
                case OP_EXIT:
                        if (!finish(w, rs)) {
                                w->executed += executed;
                                return true;
                        }
                        continue;
                case OP_NOP:
                case OP_BAR:
                        break;
                case OP_TRAP:
                        if (rs.cnt)
                                fault(w, GV_PTX_TRAP, 0);
                        ok = !rs.cnt;
                        break;
                case OP_UNSUPPORTED:
                        fault(w, GV_PTX_UNSUPPORTED, 0);
                        ok = false;
                        break;
                case OP_LD:
                case OP_ST:
                case OP_ATOM:
                case OP_RED:
                        ok = ptx_memory(w, in, rs);
                        break;
                default:
                        ok = ptx_shape_alu(w, in, rs) || alu_rows(w, in, rs);
                        break;
                }
                if (!ok) {
                        w->executed += executed;
                        return false;
                }
                if (++w->P >= w->next_wait) {
                        settle(w, w->P);
                        resched(w);
                }
        }
}

/* ------------------------------------------------------------------ */
/* grid                                                                */

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Fills every thread's row of @slot with @v. */
static void fill_row(worker_t *w, int32_t slot, uint64_t v)
{
        uint64_t *r = ROW(slot);
        for (uint32_t t = 0; t < w->n; t++)
                r[t] = v;
}

/* The value of special register @r for thread @t of block @b (b: x, y, z). */
static uint64_t special(const worker_t *w, unsigned r, uint32_t t, const uint64_t b[3])
{
        const gv_ptx_launch_t *l = w->g->l;
        uint32_t bx = l->block[0], by = l->block[1], lane = t % 32;
        switch (r) {
        case SR_TID_X: return t % bx;
        case SR_TID_Y: return (t / bx) % by;
        case SR_TID_Z: return t / (bx * by);
        case SR_NTID_X: case SR_NTID_Y: case SR_NTID_Z: return l->block[r - SR_NTID_X];
        case SR_CTAID_X: case SR_CTAID_Y: case SR_CTAID_Z: return b[r - SR_CTAID_X];
        case SR_NCTAID_X: case SR_NCTAID_Y: case SR_NCTAID_Z: return l->grid[r - SR_NCTAID_X];
        case SR_LANEID: return lane;
        case SR_WARPID: return t / 32;
        case SR_NWARPID: return (w->n + 31) / 32;
        case SR_NSMID: return 1;
        case SR_CLOCK: return (uint32_t) now_ns();
        case SR_CLOCK64: case SR_GLOBALTIMER: return now_ns();
        case SR_DYN_SMEM: return l->dynamic_shared;
        case SR_TOTAL_SMEM: return w->shared_bytes;
        case SR_DYN_BASE: return w->f->shared_static;
        case SR_LANEMASK_EQ: return 1u << lane;
        case SR_LANEMASK_LT: return (1u << lane) - 1;
        case SR_LANEMASK_LE: return (uint32_t) ((2ull << lane) - 1);
        case SR_LANEMASK_GT: return (uint32_t) ~((2ull << lane) - 1);
        case SR_LANEMASK_GE: return (uint32_t) ~((1u << lane) - 1);
        default: return 0; /* %smid, %gridid */
        }
}

/* Whether special register @r changes from block to block. */
static bool per_block(unsigned r)
{
        return r == SR_CTAID_X || r == SR_CTAID_Y || r == SR_CTAID_Z || r == SR_CLOCK || r == SR_CLOCK64 ||
               r == SR_GLOBALTIMER;
}

static void fill_specials(worker_t *w, const uint64_t b[3], bool block_only)
{
        for (size_t i = 0; i < w->f->n_fill; i++) {
                const ptx_fill_t *fl = &w->f->fill[i];
                if (block_only != per_block(fl->what))
                        continue;
                if (block_only) { /* the same in every thread of the block */
                        if (w->plain)
                                fill_row(w, fl->slot, special(w, fl->what, 0, b));
                        else
                                ptx_shape_set(w, fl->slot, special(w, fl->what, 0, b), 0);
                        continue;
                }
                uint64_t *r = ROW(fl->slot);
                for (uint32_t t = 0; t < w->n; t++)
                        r[t] = special(w, fl->what, t, b);
                if (!w->plain) /* %tid.x of a one-dimensional block, %ntid.x ... */
                        ptx_shape_detect(w, fl->slot);
        }
}

static void worker_free(worker_t *w)
{
        free(w->R);
        free(w->pc);
        free(w->iota);
        free(w->list);
        free(w->tmp);
        free(w->alive);
        free(w->shared);
        free(w->local);
        free(w->rlo);
        free(w->rhi);
        free(w->sh);
}

/* Allocates a worker's block state; false on OOM. */
static bool worker_init(worker_t *w, grid_t *g)
{
        const gv_ptx_launch_t *l = g->l;
        *w = (worker_t) { .g = g, .f = g->f, .code = g->code, .lo = 1, .hi = 0 };
        w->n = l->block[0] * l->block[1] * l->block[2];
        w->sink = g->f->n_slots;
        w->shared_bytes = g->f->shared_static + l->dynamic_shared;
        w->local_bytes = (g->f->local_bytes + 15) / 16 * 16;
        w->probe = w->sink + 1;
        w->plain = l->plain;
        w->R = calloc((g->f->n_slots + 5) * (size_t) w->n, sizeof(uint64_t)); /* slots, sink, 4 scratch */
        w->pc = calloc(w->n, sizeof(uint32_t));
        w->iota = calloc(w->n, sizeof(uint32_t));
        w->list = calloc(w->n, sizeof(uint32_t));
        w->tmp = calloc(w->n, sizeof(uint32_t));
        w->alive = calloc(w->n, 1);
        w->shared = calloc(w->shared_bytes ? w->shared_bytes : 1, 1);
        w->local = calloc(w->local_bytes ? w->local_bytes * w->n : 1, 1);
        w->rlo = calloc(g->f->n_code, sizeof(uint64_t));
        w->rhi = calloc(g->f->n_code, sizeof(uint64_t));
        w->sh = calloc(g->f->n_slots + 5, sizeof(shape_t));
        if (!w->R || !w->pc || !w->iota || !w->list || !w->tmp || !w->alive || !w->shared || !w->local || !w->rlo || !w->rhi ||
            !w->sh) {
                worker_free(w);
                return false;
        }
        for (uint32_t t = 0; t < w->n; t++)
                w->iota[t] = t;
        for (size_t i = 0; i < g->f->n_const; i++) {
                fill_row(w, g->f->const_slot[i], g->f->const_val[i]);
                if (!w->plain)
                        w->sh[g->f->const_slot[i]] = (shape_t) { .base = g->f->const_val[i], .affine = true };
        }
        fill_specials(w, (const uint64_t[3]) { 0, 0, 0 }, false);
        return true;
}

static void report(grid_t *g, worker_t *w)
{
        pthread_mutex_lock(&g->lock);
        if (!g->fault) {
                g->fault = w->fault;
                g->fault_line = w->code[w->P].line;
                g->fault_addr = w->fault_addr;
        }
        pthread_mutex_unlock(&g->lock);
        atomic_store(&g->stop, true);
}

static void *work(void *arg)
{
        grid_t *g = arg;
        worker_t w;
        if (!worker_init(&w, g)) {
                pthread_mutex_lock(&g->lock);
                if (!g->fault)
                        g->fault = GV_PTX_NO_MEMORY;
                pthread_mutex_unlock(&g->lock);
                atomic_store(&g->stop, true);
                return NULL;
        }
        const gv_ptx_launch_t *l = g->l;
        for (uint64_t id = 0, end = 0;; id++) {
                if (id == end) { /* consecutive blocks: each worker streams through its own part of memory */
                        id = atomic_fetch_add(&g->next, g->chunk);
                        end = id + g->chunk;
                }
                if (id >= g->blocks || atomic_load(&g->stop))
                        break;
                uint64_t b[3] = { id % l->grid[0], (id / l->grid[0]) % l->grid[1],
                                  id / ((uint64_t) l->grid[0] * l->grid[1]) };
                fill_specials(&w, b, true);
                if (w.shared_bytes)
                        memset(w.shared, 0, w.shared_bytes);
                if (!run_block(&w)) {
                        report(g, &w);
                        break;
                }
        }
        atomic_fetch_add(&g->executed, w.executed);
        worker_free(&w);
        return NULL;
}

static const char *fault_text(gv_ptx_fault_t f)
{
        switch (f) {
        case GV_PTX_ILLEGAL_ADDRESS: return "illegal address";
        case GV_PTX_MISALIGNED: return "misaligned address";
        case GV_PTX_TRAP: return "trap";
        case GV_PTX_UNSUPPORTED: return "instruction not supported";
        case GV_PTX_NO_MEMORY: return "out of host memory";
        default: return "ok";
        }
}

gv_ptx_fault_t gv_ptx_run(const gv_ptx_func_t *f, const gv_ptx_launch_t *l, char **msg)
{
        if (msg)
                *msg = NULL;
        if (f->unsupported) {
                if (msg)
                        *msg = strdup(f->unsupported);
                return GV_PTX_UNSUPPORTED;
        }
        ptx_ins_t *folded = ptx_fold(f);
        grid_t g = { .f = f, .code = folded ? folded : f->code, .l = l, .lock = PTHREAD_MUTEX_INITIALIZER,
                     .blocks = (uint64_t) l->grid[0] * l->grid[1] * l->grid[2] };
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t n = l->workers ? l->workers : (cpus > 0 ? (uint64_t) cpus : 1);
        /* a worker more only for 128 Ki threads of work or more: below that, starting and joining it
         * (and, on a busy machine, waiting for it to be scheduled) costs more than it saves */
        uint64_t threads = g.blocks * l->block[0] * l->block[1] * l->block[2];
        if (!l->workers && n > threads / (128u << 10))
                n = threads / (128u << 10) ? threads / (128u << 10) : 1;
        if (n > g.blocks)
                n = g.blocks;
        if (n > 64)
                n = 64;
        /* chunks of blocks: 8 or more a worker keep the load balanced; 64 blocks at most */
        g.chunk = n ? g.blocks / (n * 8) : 1; /* n is 0 for an empty grid */
        g.chunk = g.chunk < 1 ? 1 : g.chunk > 64 ? 64 : g.chunk;
        pthread_t tid[64];
        uint64_t started = 0;
        for (uint64_t i = 1; i < n; i++) /* the caller's thread is worker 0 */
                if (pthread_create(&tid[started], NULL, work, &g) == 0)
                        started++;
        work(&g);
        for (uint64_t i = 0; i < started; i++)
                pthread_join(tid[i], NULL);
        pthread_mutex_destroy(&g.lock);
        free(folded);
        if (l->executed)
                *l->executed = atomic_load(&g.executed);
        if (g.fault && msg) {
                bool at = g.fault == GV_PTX_ILLEGAL_ADDRESS || g.fault == GV_PTX_MISALIGNED;
                int r = at ? asprintf(msg, "line %u: %s at 0x%llx", g.fault_line, fault_text(g.fault),
                                      (unsigned long long) g.fault_addr)
                           : asprintf(msg, "line %u: %s", g.fault_line, fault_text(g.fault));
                if (r < 0)
                        *msg = NULL;
        }
        return g.fault;
}
