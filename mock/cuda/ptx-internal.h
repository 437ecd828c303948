/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decoded form of a PTX module, shared by the reader (ptx-parse.c,
 * ptx-decode.c) and the interpreter (ptx-exec.c).  ptx.h is the interface.
 *
 * Every operand is a register slot: declared registers, special registers
 * (%tid.x ...), immediates and symbol addresses all get one, so an
 * instruction is a handful of integers and the interpreter never looks at
 * text.  Registers are 64-bit slots holding the value zero-extended from its
 * width (f32 in the low 32 bits).
 */
#ifndef GV_MOCK_CUDA_PTX_INTERNAL_H
#define GV_MOCK_CUDA_PTX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock/cuda/ptx.h"

/* Value kinds: b types read as the unsigned kind of their width. */
typedef enum ptx_kind {
        K_NONE,
        K_U8, K_U16, K_U32, K_U64,
        K_S8, K_S16, K_S32, K_S64,
        K_F32, K_F64,
        K_PRED,
        K_F16, /* known to the reader, not run */
        K_COUNT,
} ptx_kind_t;

/* Operations (ptx_ins_t.op). */
typedef enum ptx_op {
        OP_NOP,
        OP_UNSUPPORTED,
        /* arithmetic, two sources */
        OP_ADD, OP_SUB, OP_MUL_LO, OP_MUL_HI, OP_MUL_WIDE, OP_DIV, OP_REM, OP_MIN, OP_MAX,
        OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR, OP_COPYSIGN,
        /* three sources */
        OP_MAD_LO, OP_MAD_HI, OP_MAD_WIDE, OP_FMA, OP_SELP, OP_BFE, OP_BFI, OP_PRMT,
        /* one source */
        OP_MOV, OP_NEG, OP_ABS, OP_NOT, OP_CNOT, OP_POPC, OP_CLZ, OP_BREV,
        OP_SQRT, OP_RSQRT, OP_RCP, OP_SIN, OP_COS, OP_EX2, OP_LG2, OP_TANH,
        OP_CVT, OP_CVTA_TO, OP_CVTA_FROM, OP_PACK, OP_UNPACK,
        OP_SETP,
        /* memory */
        OP_LD, OP_ST, OP_ATOM, OP_RED,
        /* control */
        OP_BRA, OP_EXIT, OP_BAR, OP_TRAP,
} ptx_op_t;

/* State spaces of ld/st/atom/cvta. */
typedef enum ptx_space { SP_GENERIC, SP_GLOBAL, SP_CONST, SP_SHARED, SP_LOCAL, SP_PARAM } ptx_space_t;

/* setp comparisons (ptx_ins_t.aux for OP_SETP). */
typedef enum ptx_cmp {
        CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE,
        CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN,
} ptx_cmp_t;

/* setp's combining operation with the predicate in c (ptx_ins_t.aux2). */
enum { BOOL_NONE, BOOL_AND, BOOL_OR, BOOL_XOR };

/* Atomic operations (ptx_ins_t.aux for OP_ATOM / OP_RED). */
typedef enum ptx_atom {
        AT_ADD, AT_MIN, AT_MAX, AT_INC, AT_DEC, AT_AND, AT_OR, AT_XOR, AT_EXCH, AT_CAS,
} ptx_atom_t;

/* Rounding of cvt (ptx_ins_t.aux for OP_CVT): to nearest even, to zero, down, up. */
enum { RND_NONE, RND_N, RND_Z, RND_M, RND_P };

/* Slot filled per thread or per block (ptx_func.special). */
typedef enum ptx_sreg {
        SR_TID_X, SR_TID_Y, SR_TID_Z, SR_NTID_X, SR_NTID_Y, SR_NTID_Z,
        SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z, SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z,
        SR_LANEID, SR_WARPID, SR_NWARPID, SR_SMID, SR_NSMID, SR_GRIDID,
        SR_CLOCK, SR_CLOCK64, SR_GLOBALTIMER, SR_DYN_SMEM, SR_TOTAL_SMEM,
        SR_DYN_BASE, /* where `.extern .shared` memory starts: after the function's static shared memory */
        SR_LANEMASK_EQ, SR_LANEMASK_LT, SR_LANEMASK_LE, SR_LANEMASK_GT, SR_LANEMASK_GE,
        SR_COUNT,
} ptx_sreg_t;

/* One decoded instruction. */
typedef struct ptx_ins {
        uint8_t op;       /* ptx_op_t */
        uint8_t kind;     /* ptx_kind_t of the operation (cvt: the destination) */
        uint8_t kind2;    /* cvt: the source kind; mul.wide/mad.wide: the source kind */
        uint8_t space;    /* ptx_space_t */
        uint8_t aux;      /* cmp / atom op / rounding / shr signedness ... */
        uint8_t aux2;     /* setp bool op; ld/st/atom vector count; cvt .sat */
        uint8_t gneg;     /* guard negated (@!p) */
        uint8_t cneg;     /* setp: predicate c negated */
        int32_t guard;    /* guard predicate slot, -1 for none */
        int32_t d[4];     /* destinations (vector ld, setp p|q, unpack) */
        int32_t a, b, c;  /* sources; st/atom: a = address base, b.. values */
        int32_t s[4];     /* st vector / pack sources */
        int64_t off;      /* address offset */
        uint32_t target;  /* bra: instruction index */
        uint32_t line;    /* source line */
} ptx_ins_t;

/* A register slot filled at launch. */
typedef struct ptx_fill {
        int32_t slot;
        uint8_t what;     /* ptx_sreg_t */
} ptx_fill_t;

struct gv_ptx_func {
        char *name;
        bool entry;
        ptx_ins_t *code;
        size_t n_code;
        size_t n_slots;
        /* constant slots: slot number and value */
        int32_t *const_slot;
        uint64_t *const_val;
        size_t n_const;
        ptx_fill_t *fill;
        size_t n_fill;
        /* parameters */
        char **param_name;
        size_t *param_off, *param_size;
        size_t n_param, param_bytes;
        size_t shared_static;   /* bytes, aligned */
        size_t local_bytes;     /* per thread */
        char *unsupported;      /* "line N: ..." of the first instruction not run, or NULL */
        unsigned n_regs;        /* declared registers */
};

/* A module-scope variable: global/const storage, or a shared window variable. */
typedef struct ptx_var {
        char *name;
        uint8_t space;          /* SP_GLOBAL, SP_CONST, SP_SHARED */
        bool external;          /* `.extern .shared` array: the dynamic shared memory */
        size_t bytes, align;
        uint8_t *data;          /* global/const storage (heap, owned) */
} ptx_var_t;

struct gv_ptx_module {
        unsigned version;       /* 10 * major + minor */
        unsigned target;        /* sm number */
        char suffix;            /* 'a', 'f' or 0 */
        struct gv_ptx_func **funcs;
        size_t n_funcs;
        ptx_var_t *vars;
        size_t n_vars;
};

/* Generic-address windows of the shared and local state spaces (cvta). */
#define GV_PTX_GEN_SHARED 0x4000000000000000ull
#define GV_PTX_GEN_LOCAL 0x5000000000000000ull
#define GV_PTX_GEN_PARAM 0x6000000000000000ull
#define GV_PTX_WINDOW (1ull << 40)

/* Bytes of a kind. */
static inline unsigned ptx_kind_bytes(unsigned k)
{
        switch (k) {
        case K_U8: case K_S8: return 1;
        case K_U16: case K_S16: case K_F16: return 2;
        case K_U32: case K_S32: case K_F32: return 4;
        case K_U64: case K_S64: case K_F64: return 8;
        case K_PRED: return 1;
        default: return 0;
        }
}

#endif
