/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to mock/smi: the getters the table of fields (smi-fields.c) names, defined in
 * smi-getters.c and smi-getters-newer.c, and the argument codes the rows pass them.
 */
#ifndef GV_MOCK_SMI_SMI_GETTERS_INTERNAL_H
#define GV_MOCK_SMI_SMI_GETTERS_INTERNAL_H

#include "mock/smi/smi.h"

/* Argument codes of the getters (smi_field_def_t.arg). */
enum { CTX_TIMESTAMP, CTX_DRIVER_VERSION, CTX_COUNT, CTX_INDEX };
enum { TXT_NAME, TXT_SERIAL, TXT_UUID, TXT_VBIOS, TXT_PART_NUMBER };
enum { PCI_BUS_ID, PCI_DOMAIN, PCI_BUS, PCI_DEVICE, PCI_DEVICE_ID, PCI_SUBSYSTEM_ID };
enum { U_FAN_SPEED, U_MINOR_NUMBER, U_TEMPERATURE, U_POWER_USAGE, U_POWER_LIMIT, U_ENFORCED_LIMIT, U_DEFAULT_LIMIT };
enum { E_PERSISTENCE, E_DISPLAY_MODE, E_DISPLAY_ACTIVE };
enum { MEM_TOTAL, MEM_RESERVED, MEM_USED, MEM_FREE };
enum { PAIR_UTILIZATION, PAIR_ECC_MODE, PAIR_MIG_MODE, PAIR_POWER_CONSTRAINTS };
enum { FAB_STATE, FAB_STATUS, FAB_CLIQUE_ID, FAB_CLUSTER_UUID };
enum { B_ACCOUNTING_MODE, B_ACCOUNTING_BUFFER, B_MULTIGPU_BOARD, B_BOARD_ID, B_VIRTUALIZATION };
enum { INFOROM_IMAGE = -1 }; /* else an nvmlInforomObject_t */
enum { L_MAX_GEN, L_CUR_GEN, L_MAX_WIDTH, L_CUR_WIDTH, L_REPLAY, L_TX, L_RX };
enum { BAR1_TOTAL, BAR1_USED, BAR1_FREE };
enum { ENG_ENCODER, ENG_DECODER, ENG_JPEG, ENG_OFA };
enum { RP_SINGLE_BIT, RP_DOUBLE_BIT, RP_PENDING };
enum { RR_CORR, RR_UNC, RR_PENDING, RR_FAILURE, RR_H_MAX, RR_H_HIGH, RR_H_PARTIAL, RR_H_LOW, RR_H_NONE };
enum { X_GSP_FIRMWARE, X_MODULE_ID, X_C2C_MODE, X_ADDRESSING_MODE, X_PDI, X_MARGIN_TEMPERATURE, X_PCI_BASE_CLASS,
       X_PCI_SUB_CLASS };
enum { SRAM_VOL_PARITY, SRAM_VOL_SECDED, SRAM_AGG_PARITY, SRAM_AGG_SECDED, SRAM_THRESHOLD, SRAM_L2, SRAM_SM, SRAM_MCU,
       SRAM_PCIE, SRAM_OTHER };
enum { PW_STATE, PW_MANAGEMENT };
enum { LG_DEVICE_CURRENT, LG_DEVICE_MAX };
#define PAIR(what, second) ((what) * 2 + (second))
#define CLOCK_MAX 0x100 /* or'ed with an nvmlClockType_t: the max clock */
#define ECC(counter, dram, uncorrected) ((counter) * 4 + (dram) * 2 + (uncorrected))
#define APP_CLOCK 0x100     /* or'ed with an nvmlClockType_t: the applications clock */
#define DEFAULT_CLOCK 0x200 /* the default applications clock */
#define SMI_NVML_POWER_SCOPE_MODULE 1U
#define SMI_NVML_POWER_SCOPE_MEMORY 2U
#define SMI_ECC_LOC_TOTAL 8
#define ECC_LOC(location, aggregate, uncorrected) ((location) * 4 + (aggregate) * 2 + (uncorrected))

/* A getter's text: the value as printf formats it; v->str points at it. */
__attribute__((format(printf, 2, 3))) void smi_set_text(smi_value_t *v, const char *fmt, ...);

/* The getters and block emitters the rows name (smi_field_def_t.get, .block). */
void smi_get_ctx(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_text(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_pci(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_uint(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_enabled(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_pstate(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_compute_mode(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_brand(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_architecture(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_memory(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_compute_cap(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_pair(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_clock(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_fabric(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_na(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_board(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_inforom(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_pcie(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_zero(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_event_reason(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_bar1(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_engine_util(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_sessions(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_ecc_count(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_retired(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_remapped(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_temp_threshold(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_app_clock(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_violation(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_newer(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_cc_memory(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_memory_temp(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_sram_ecc(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_repair(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_capability(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_recovery_action(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_field_yes_no(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_field_us(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_tlimit_threshold(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_remapped_inactive(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_power_field(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_power_misc(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_display_attached(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_device_link_gen(const smi_src_t *s, int arg, smi_value_t *v);
void smi_block_retired_pagelist_single(smi_emit_t *e, const smi_src_t *src);
void smi_block_retired_pagelist_double(smi_emit_t *e, const smi_src_t *src);
void smi_block_supported_clocks(smi_emit_t *e, const smi_src_t *src);
void smi_block_accounted_processes(smi_emit_t *e, const smi_src_t *src);
void smi_get_event_mask(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_gsp_mode(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_hostname(const smi_src_t *s, int arg, smi_value_t *v);
void smi_get_ecc_location(const smi_src_t *s, int arg, smi_value_t *v);

#endif
