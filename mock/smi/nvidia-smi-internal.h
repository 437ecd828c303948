/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nvidia-smi program's own parts (not the library smi.h): the GPUs it
 * selected and gathered, and one file per output:
 *
 *   nvidia-smi.c        command line, NVML init, dispatch, --version, -h
 *   nvidia-smi-gpus.c   library lookup, -i selection, gathering (MIG devices, processes), lost GPUs, -L
 *   nvidia-smi-csv.c    --query-gpu (CSV rows from the table of fields)
 *   nvidia-smi-query.c  -q and -q -x (the GPU elements from the table of fields)
 *   nvidia-smi-table.c  the default table view
 *
 * Every value shown comes from a row of the table of fields (smi-fields.c).
 */
#ifndef GV_MOCK_SMI_NVIDIA_SMI_H
#define GV_MOCK_SMI_NVIDIA_SMI_H

#include <stdbool.h>
#include <stddef.h>

#include "abi/nvml/nvml-loader.h"
#include "mock/smi/smi.h"

/* nvidia-smi's documented return codes (nvidia-smi(1) "RETURN VALUE"). */
enum {
        SMI_EXIT_OK = 0,
        SMI_EXIT_INVALID_ARG = 2,
        SMI_EXIT_NO_PERMISSION = 4,
        SMI_EXIT_NOT_FOUND = 6,
        SMI_EXIT_DRIVER_NOT_LOADED = 9,
        SMI_EXIT_LIBRARY_NOT_FOUND = 12,
        SMI_EXIT_GPU_LOST = 15,
        SMI_EXIT_MISMATCH = 18,
        SMI_EXIT_OTHER = 255,
};

/* One selected GPU: its handle and what the views need beyond single values. */
typedef struct gpu_info {
        nvmlDevice_t dev;         /* NULL when NVML gave no handle */
        unsigned index;
        bool lost;                /* GPU_IS_LOST: reported, never shown */
        nvmlReturn_t pci_ret;     /* the PCI info names a lost GPU */
        nvmlPciInfo_t pci;
        bool mig;                 /* MIG mode enabled */
        size_t n_mig;
        smi_mig_t *migs;
        unsigned n_procs;
        nvmlProcessInfo_t *procs;
} gpu_info_t;

typedef struct smi {
        gv_nvml_t *nvml;
        char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        char nvml_version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
        char cuda_version[32];
        unsigned count;          /* devices NVML reports */
        size_t n;                /* selected GPUs */
        gpu_info_t *gpus;
        int exit_code;           /* 15 once a lost GPU was reported */
} smi_t;

/*
 * nvsmi_open_library - dlopen libnvidia-ml.so.1: beside the executable
 * (../lib64, ../lib, ../lib/x86_64-linux-gnu, ../nvml in the build tree),
 * then through the system search.  0, or negative errno (then exit 12).
 */
int nvsmi_open_library(gv_nvml_t **out);

/*
 * nvsmi_select_gpus - fill s->gpus from -i @ids (indexes, GPU UUIDs, PCI
 * bus ids, comma separated; NULL: every GPU).  -ENOMEM, -ENOENT / -EINVAL
 * when an id names no GPU (then "No devices were found").
 */
int nvsmi_select_gpus(smi_t *s, const char *ids);

/*
 * nvsmi_gather - for each selected GPU: find out whether it is lost, else gather its MIG devices
 * and processes (what an earlier call gathered is freed first).
 */
void nvsmi_gather(smi_t *s);

/* nvsmi_free_gpus - free what selection and gathering allocated. */
void nvsmi_free_gpus(smi_t *s);

/* nvsmi_report_lost - the real tool's line for a lost GPU (on stdout); sets the exit code to 15. */
void nvsmi_report_lost(smi_t *s, const gpu_info_t *g);

/* nvsmi_src - what the getters read for GPU @g; @timestamp is borrowed (CSV timestamp, "" elsewhere). */
smi_src_t nvsmi_src(const smi_t *s, const gpu_info_t *g, const char *timestamp);

/*
 * nvsmi_now_text - the local time as the real tool prints it: CSV
 * "2026/07/03 08:33:53.415", else asctime-like "Tue Dec 30 09:46:54 2025".
 * Heap string or NULL.
 */
char *nvsmi_now_text(bool csv);

/*
 * nvsmi_gpu_line - GPU @g's -L line, "GPU i: NAME (UUID: ...)"; for a lost GPU the real tool's
 * message instead (nvsmi_report_lost()) and false.
 */
bool nvsmi_gpu_line(smi_t *s, const gpu_info_t *g);

/* nvsmi_list_gpus - -L: "GPU i: NAME (UUID: ...)" with MIG children.  Returns the exit code. */
int nvsmi_list_gpus(smi_t *s);

/* nvsmi_view_csv - --query-gpu: header (unless noheader) and a row per GPU.  Returns the exit code. */
int nvsmi_view_csv(smi_t *s, const smi_query_t *q);

/*
 * nvsmi_view_query - -q (text) or -q -x (@xml): the whole report, or with @display (-d, a comma
 * list such as "MEMORY,UTILIZATION") only those sections of each GPU.  Returns the exit code (2
 * with the real tool's message for an unknown display name).
 */
int nvsmi_view_query(smi_t *s, bool xml, const char *display);

/* Which `nvidia-smi mig` listing. */
typedef enum nvsmi_mig_list {
        NVSMI_MIG_NONE,
        NVSMI_MIG_LGIP, /* -lgip: GPU instance profiles */
        NVSMI_MIG_LGI,  /* -lgi: GPU instances */
        NVSMI_MIG_LCI,  /* -lci: compute instances */
        NVSMI_MIG_LCIP, /* -lcip: compute instance profiles */
} nvsmi_mig_list_t;

/*
 * nvsmi_view_mig - `nvidia-smi mig -lgip|-lgi|-lci|-lcip [-gi LIST]` (nvidia-smi-mig.c): the real
 * tool's boxed tables, over NVML's MIG calls.  "No MIG-enabled devices found." (exit 6) when no
 * selected GPU has MIG on.  Returns the exit code.
 */
int nvsmi_view_mig(smi_t *s, nvsmi_mig_list_t list, const char *gi);

/* nvsmi_view_topo - `nvidia-smi topo -m` (nvidia-smi-topo.c): the connection matrix and its legend. */
int nvsmi_view_topo(smi_t *s);

/* nvsmi_view_nvlink - `nvidia-smi nvlink -s` (nvidia-smi-topo.c): each GPU's links and their speed. */
int nvsmi_view_nvlink(smi_t *s);

/*
 * nvsmi_view_monitor - `nvidia-smi dmon` (@pmon false) or `pmon`: the two header lines, then a
 * sample per GPU (dmon) or per process (pmon) every @delay_s seconds, @count times (0: until
 * interrupted) (nvidia-smi-mon.c).  Returns the exit code.
 */
int nvsmi_view_monitor(smi_t *s, bool pmon, unsigned count, unsigned delay_s);

/*
 * nvsmi_view_compute_apps - `--query-compute-apps=FIELDS --format=csv[,noheader][,nounits]`
 * (nvidia-smi-apps.c): a row per compute process of the selected GPUs; the header when @header_ok
 * and the format asks for it.  Returns the exit code (2 for a bad field or format).
 */
int nvsmi_view_compute_apps(smi_t *s, const char *fields, const char *format, bool header_ok);

/*
 * nvsmi_set_persistence - `-pm 0|1` (nvidia-smi-apps.c): "already ..." when nothing changes; as
 * a user who is not root, the real tool's refusal (exit 4); as root, that the mock does not
 * model the change (exit 2).
 */
int nvsmi_set_persistence(smi_t *s, const char *mode);

/* nvsmi_reset - `-r` (nvidia-smi-apps.c): refused as the real tool refuses a non-root user (exit 4); as root, not modelled. */
int nvsmi_reset(smi_t *s);

/* nvsmi_view_table - the default table view.  Returns the exit code. */
int nvsmi_view_table(smi_t *s);

#endif
