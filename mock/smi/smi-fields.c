/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The table of fields of our nvidia-smi (smi.h): one row per field, in `-q`
 * document order, with its --query-gpu name(s), CSV unit and style, `-q -x`
 * path, `-q` label and getter.  CSV, `-q` and `-q -x` are written from it.
 *
 * Adding a field: an id in smi_field_id_t (its place there is its place in
 * `-h`), then one row below at its place in the `-q` document, with a getter
 * (most fields use a shared one with an argument: smi_get_uint + U_FAN_SPEED).
 *
 * Outside facts: canonical names, units and value shapes as in the header
 * and rows of csv__query-gpu_l40s_under-load_595.80.csv and
 * csv__query-gpu_h100-80gb-hbm3_mig-enabled_590.48.01.csv; aliases are the
 * short spellings nvidia-smi --help-query-gpu documents (clocks.gr,
 * gpu_name); XML paths and labels from xml__* and q__* in
 * shared/cases/nvidia-smi/.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "mock/smi/smi.h"
#include "mock/smi/smi-getters-internal.h"


/* ---- the table ---- */

/* Row shorthands: no alias, a CSV-only row (no -q path), a `-q`-only row (no --query-gpu name). */
#define NO_ALIAS { NULL }
#define ALIAS(a) { (a), NULL }
#define CSV_ONLY NULL, NULL
#define Q_ONLY NULL, NO_ALIAS, NULL
/* Gating (smi_field_def_t since .. gate): every version; from / up to a branch; renamed at a branch; a GPU gate.
 * GATING takes version keys: KEY(580, 173) is 580.173, BRANCH_END(579) the last 579 version. */
#define KEY(major, minor) ((major) * 1000U + (minor))
#define BRANCH_END(major) KEY((major), 999U)
#define GATING(since, until, renamed, old_xml, old_label, gate)                                             \
        (since), (until), (renamed), (old_xml), (old_label), (gate), false
/* Every branch; unavailable, the row's whole section reads N/A. */
#define NA_SECTION 0, 0, 0, NULL, NULL, SMI_GATE_NONE, true
#define EVERY GATING(0, 0, 0, NULL, NULL, SMI_GATE_NONE)
#define SINCE(b) GATING(KEY((b), 0U), 0, 0, NULL, NULL, SMI_GATE_NONE)
#define UNTIL(b) GATING(0, BRANCH_END(b), 0, NULL, NULL, SMI_GATE_NONE)
#define RENAMED(b, old_xml, old_label) GATING(0, 0, KEY((b), 0U), (old_xml), (old_label), SMI_GATE_NONE)
#define GATED(g) GATING(0, 0, 0, NULL, NULL, (g))

static const smi_field_def_t field_table[] = {
        /* id, --query-gpu name, aliases, CSV unit, style, -q -x path, -q label, getter, argument, block, gating */
        { SMI_F_TIMESTAMP, "timestamp", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ctx, CTX_TIMESTAMP, NULL, EVERY },
        { SMI_F_DRIVER_VERSION, "driver_version", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ctx,
          CTX_DRIVER_VERSION, NULL, EVERY },
        { SMI_F_COUNT, "count", NO_ALIAS, NULL, SMI_STYLE_UINT, CSV_ONLY, smi_get_ctx, CTX_COUNT, NULL, EVERY },
        { SMI_F_INDEX, "index", NO_ALIAS, NULL, SMI_STYLE_UINT, CSV_ONLY, smi_get_ctx, CTX_INDEX, NULL, EVERY },
        { SMI_F_NAME, "name", ALIAS("gpu_name"), NULL, SMI_STYLE_STR, "product_name", "Product Name", smi_get_text,
          TXT_NAME, NULL, EVERY },
        { SMI_F_PRODUCT_BRAND, Q_ONLY, SMI_STYLE_STR, "product_brand", "Product Brand", smi_get_brand, 0, NULL, EVERY },
        { SMI_F_PRODUCT_ARCHITECTURE, Q_ONLY, SMI_STYLE_STR, "product_architecture", "Product Architecture",
          smi_get_architecture, 0, NULL, EVERY },
        { SMI_F_DISPLAY_MODE, "display_mode", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "display_mode", "Display Mode",
          smi_get_enabled, E_DISPLAY_MODE, NULL, EVERY },
        { SMI_F_DISPLAY_ATTACHED, "display_attached", NO_ALIAS, NULL, SMI_STYLE_STR, "display_attached", "Display Attached", smi_get_display_attached, 0, NULL, SINCE(580) },
        { SMI_F_DISPLAY_ACTIVE, "display_active", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "display_active",
          "Display Active", smi_get_enabled, E_DISPLAY_ACTIVE, NULL, EVERY },
        { SMI_F_PERSISTENCE_MODE, "persistence_mode", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "persistence_mode",
          "Persistence Mode", smi_get_enabled, E_PERSISTENCE, NULL, EVERY },
        { SMI_F_ADDRESSING_MODE, "addressing_mode", NO_ALIAS, NULL, SMI_STYLE_STR, "addressing_mode", "Addressing Mode", smi_get_newer, X_ADDRESSING_MODE, NULL, SINCE(535) },
        { SMI_F_MIG_MODE_CURRENT, "mig.mode.current", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "mig_mode/current_mig",
          "MIG Mode/Current", smi_get_pair, PAIR(PAIR_MIG_MODE, 0), NULL, EVERY },
        { SMI_F_MIG_MODE_PENDING, "mig.mode.pending", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "mig_mode/pending_mig",
          "MIG Mode/Pending", smi_get_pair, PAIR(PAIR_MIG_MODE, 1), NULL, EVERY },
        { SMI_F_MIG_DEVICES, Q_ONLY, SMI_STYLE_STR, "mig_devices", "MIG Devices", NULL, 0, smi_emit_mig_devices, EVERY },
        { SMI_F_ACCOUNTING_MODE, "accounting.mode", NO_ALIAS, NULL, SMI_STYLE_STR, "accounting_mode", "Accounting Mode", smi_get_board, B_ACCOUNTING_MODE, NULL, EVERY },
        { SMI_F_ACCOUNTING_BUFFER, "accounting.buffer_size", NO_ALIAS, NULL, SMI_STYLE_STR, "accounting_mode_buffer_size", "Accounting Mode Buffer Size", smi_get_board, B_ACCOUNTING_BUFFER, NULL, EVERY },
        { SMI_F_DRIVER_MODEL_CURRENT, "driver_model.current", NO_ALIAS, NULL, SMI_STYLE_STR, "driver_model/current_dm", "Driver Model/Current", smi_get_na, 0, NULL, EVERY },
        { SMI_F_DRIVER_MODEL_PENDING, "driver_model.pending", NO_ALIAS, NULL, SMI_STYLE_STR, "driver_model/pending_dm", "Driver Model/Pending", smi_get_na, 0, NULL, EVERY },
        { SMI_F_SERIAL, "serial", ALIAS("gpu_serial"), NULL, SMI_STYLE_STR, "serial", "Serial Number", smi_get_text,
          TXT_SERIAL, NULL, EVERY },
        { SMI_F_UUID, "uuid", ALIAS("gpu_uuid"), NULL, SMI_STYLE_STR, "uuid", "GPU UUID", smi_get_text, TXT_UUID, NULL, EVERY },
        { SMI_F_PDI, Q_ONLY, SMI_STYLE_STR, "pdi", "GPU PDI", smi_get_newer, X_PDI, NULL, SINCE(580) },
        { SMI_F_MINOR_NUMBER, Q_ONLY, SMI_STYLE_UINT, "minor_number", "Minor Number", smi_get_uint, U_MINOR_NUMBER,
          NULL, EVERY },
        { SMI_F_VBIOS_VERSION, "vbios_version", NO_ALIAS, NULL, SMI_STYLE_STR, "vbios_version", "VBIOS Version",
          smi_get_text, TXT_VBIOS, NULL, EVERY },
        { SMI_F_MULTIGPU_BOARD, Q_ONLY, SMI_STYLE_STR, "multigpu_board", "MultiGPU Board", smi_get_board, B_MULTIGPU_BOARD, NULL, EVERY },
        { SMI_F_BOARD_ID, Q_ONLY, SMI_STYLE_STR, "board_id", "Board ID", smi_get_board, B_BOARD_ID, NULL, EVERY },
        { SMI_F_BOARD_PART_NUMBER, Q_ONLY, SMI_STYLE_STR, "board_part_number", "Board Part Number", smi_get_text,
          TXT_PART_NUMBER, NULL, RENAMED(535, "gpu_part_number", "GPU Part Number") },
        { SMI_F_GPU_PART_NUMBER, Q_ONLY, SMI_STYLE_STR, "gpu_part_number", "GPU Part Number", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_GPU_FRU_PART_NUMBER, Q_ONLY, SMI_STYLE_STR, "gpu_fru_part_number", "FRU Part Number", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_PLATFORM_CHASSIS_SERIAL, "platform.chassis_serial_number", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/chassis_serial_number", "Platform Info/Chassis Serial Number", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_PLATFORM_SLOT, "platform.slot_number", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/slot_number", "Platform Info/Slot Number", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_PLATFORM_TRAY, "platform.tray_index", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/tray_index", "Platform Info/Tray Index", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_PLATFORM_HOST_ID, "platform.host_id", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/host_id", "Platform Info/Host ID", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_PLATFORM_PEER_TYPE, "platform.peer_type", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/peer_type", "Platform Info/Peer Type", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_MODULE_ID, "platform.module_id", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/module_id", "Platform Info/Module Id", smi_get_newer, X_MODULE_ID, NULL, RENAMED(570, "gpu_module_id", "GPU Module ID") },
        { SMI_F_PLATFORM_FABRIC_GUID, "platform.gpu_fabric_guid", NO_ALIAS, NULL, SMI_STYLE_STR, "platformInfo/gpu_fabric_guid", "Platform Info/GPU Fabric GUID", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_INFOROM_IMAGE, "inforom.img", NO_ALIAS, NULL, SMI_STYLE_STR, "inforom_version/img_version", "Inforom Version/Image Version", smi_get_inforom, INFOROM_IMAGE, NULL, EVERY },
        { SMI_F_INFOROM_OEM, "inforom.oem", NO_ALIAS, NULL, SMI_STYLE_STR, "inforom_version/oem_object", "Inforom Version/OEM Object", smi_get_inforom, NVML_INFOROM_OEM, NULL, EVERY },
        { SMI_F_INFOROM_ECC, "inforom.ecc", NO_ALIAS, NULL, SMI_STYLE_STR, "inforom_version/ecc_object", "Inforom Version/ECC Object", smi_get_inforom, NVML_INFOROM_ECC, NULL, EVERY },
        { SMI_F_INFOROM_POWER, "inforom.pwr", NO_ALIAS, NULL, SMI_STYLE_STR, "inforom_version/pwr_object", "Inforom Version/Power Management Object", smi_get_inforom, NVML_INFOROM_POWER, NULL, EVERY },
        { SMI_F_INFOROM_BBX_TIMESTAMP, Q_ONLY, SMI_STYLE_STR, "inforom_bbx_flush/latest_timestamp", "Inforom BBX Object Flush/Latest Timestamp", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_INFOROM_BBX_DURATION, Q_ONLY, SMI_STYLE_STR, "inforom_bbx_flush/latest_duration", "Inforom BBX Object Flush/Latest Duration", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_GOM_CURRENT, "gom.current", NO_ALIAS, NULL, SMI_STYLE_STR, "gpu_operation_mode/current_gom", "GPU Operation Mode/Current", smi_get_na, 0, NULL, EVERY },
        { SMI_F_GOM_PENDING, "gom.pending", NO_ALIAS, NULL, SMI_STYLE_STR, "gpu_operation_mode/pending_gom", "GPU Operation Mode/Pending", smi_get_na, 0, NULL, EVERY },
        { SMI_F_C2C_MODE, "c2c.mode", NO_ALIAS, NULL, SMI_STYLE_STR, "c2c_mode", "GPU C2C Mode", smi_get_newer, X_C2C_MODE, NULL, SINCE(570) },
        { SMI_F_VIRTUALIZATION_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/virtualization_mode", "GPU Virtualization Mode/Virtualization Mode", smi_get_board, B_VIRTUALIZATION, NULL, EVERY },
        { SMI_F_HOST_VGPU_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/host_vgpu_mode", "GPU Virtualization Mode/Host VGPU Mode", smi_get_na, 0, NULL, EVERY },
        { SMI_F_VGPU_HETEROGENEOUS_MODE, Q_ONLY, SMI_STYLE_STR, "gpu_virtualization_mode/vgpu_heterogeneous_mode", "GPU Virtualization Mode/vGPU Heterogeneous Mode", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_GPU_RECOVERY_ACTION, "gpu_recovery_action", NO_ALIAS, NULL, SMI_STYLE_STR, "gpu_recovery_action", "GPU Recovery Action", smi_get_recovery_action, 0, NULL, SINCE(570) },
        { SMI_F_GSP_FIRMWARE_VERSION, Q_ONLY, SMI_STYLE_STR, "gsp_firmware_version", "GSP Firmware Version", smi_get_newer, X_GSP_FIRMWARE, NULL, EVERY },
        { SMI_F_RESET_REQUIRED, Q_ONLY, SMI_STYLE_STR, "gpu_reset_status/reset_required", "GPU Reset Status/Reset Required", smi_get_field_yes_no, NVML_FI_DEV_RESET_STATUS, NULL, GATING(KEY(535, 0), BRANCH_END(579), 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_DRAIN_AND_RESET, Q_ONLY, SMI_STYLE_STR, "gpu_reset_status/drain_and_reset_recommended", "GPU Reset Status/Drain and Reset Recommended", smi_get_field_yes_no, NVML_FI_DEV_DRAIN_AND_RESET_STATUS, NULL, GATING(KEY(535, 0), BRANCH_END(579), 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_RELAXED_ORDERING, Q_ONLY, SMI_STYLE_STR, "ibmnpu/relaxed_ordering_mode", "IBMNPU/Relaxed Ordering Mode", smi_get_na, 0, NULL, EVERY },
        { SMI_F_PCI_BUS, "pci.bus", NO_ALIAS, NULL, SMI_STYLE_HEX2, "pci/pci_bus", "PCI/Bus", smi_get_pci, PCI_BUS,
          NULL, EVERY },
        { SMI_F_PCI_DEVICE, "pci.device", NO_ALIAS, NULL, SMI_STYLE_HEX2, "pci/pci_device", "PCI/Device", smi_get_pci,
          PCI_DEVICE, NULL, EVERY },
        { SMI_F_PCI_DOMAIN, "pci.domain", NO_ALIAS, NULL, SMI_STYLE_HEX4, "pci/pci_domain", "PCI/Domain", smi_get_pci,
          PCI_DOMAIN, NULL, EVERY },
        { SMI_F_PCI_BASE_CLASS, "pci.baseClass", NO_ALIAS, NULL, SMI_STYLE_HEX1, "pci/pci_base_class", "PCI/Base Classcode", smi_get_newer, X_PCI_BASE_CLASS, NULL, SINCE(570) },
        { SMI_F_PCI_SUB_CLASS, "pci.subClass", NO_ALIAS, NULL, SMI_STYLE_HEX1, "pci/pci_sub_class", "PCI/Sub Classcode", smi_get_newer, X_PCI_SUB_CLASS, NULL, SINCE(570) },
        { SMI_F_PCI_DEVICE_ID, "pci.device_id", NO_ALIAS, NULL, SMI_STYLE_HEX8, "pci/pci_device_id",
          "PCI/Device Id", smi_get_pci, PCI_DEVICE_ID, NULL, EVERY },
        { SMI_F_PCI_BUS_ID, "pci.bus_id", ALIAS("gpu_bus_id"), NULL, SMI_STYLE_STR, "pci/pci_bus_id", "PCI/Bus Id",
          smi_get_pci, PCI_BUS_ID, NULL, EVERY },
        { SMI_F_PCI_SUB_DEVICE_ID, "pci.sub_device_id", NO_ALIAS, NULL, SMI_STYLE_HEX8, "pci/pci_sub_system_id",
          "PCI/Sub System Id", smi_get_pci, PCI_SUBSYSTEM_ID, NULL, EVERY },
        { SMI_F_PCIE_GEN_MAX, "pcie.link.gen.max", NO_ALIAS, NULL, SMI_STYLE_UINT, "pci/pci_gpu_link_info/pcie_gen/max_link_gen", "PCI/GPU Link Info/PCIe Generation/Max", smi_get_pcie, L_MAX_GEN, NULL, EVERY },
        { SMI_F_PCIE_GEN_CURRENT, "pcie.link.gen.current", NO_ALIAS, NULL, SMI_STYLE_UINT, "pci/pci_gpu_link_info/pcie_gen/current_link_gen", "PCI/GPU Link Info/PCIe Generation/Current", smi_get_pcie, L_CUR_GEN, NULL, EVERY },
        { SMI_F_PCIE_GEN_DEVICE_CURRENT, "pcie.link.gen.gpucurrent", NO_ALIAS, NULL, SMI_STYLE_STR, "pci/pci_gpu_link_info/pcie_gen/device_current_link_gen", "PCI/GPU Link Info/PCIe Generation/Device Current", smi_get_device_link_gen, LG_DEVICE_CURRENT, NULL, SINCE(535) },
        { SMI_F_PCIE_GEN_DEVICE_MAX, "pcie.link.gen.gpumax", NO_ALIAS, NULL, SMI_STYLE_STR, "pci/pci_gpu_link_info/pcie_gen/max_device_link_gen", "PCI/GPU Link Info/PCIe Generation/Device Max", smi_get_device_link_gen, LG_DEVICE_MAX, NULL, SINCE(535) },
        { SMI_F_PCIE_GEN_HOST_MAX, "pcie.link.gen.hostmax", NO_ALIAS, NULL, SMI_STYLE_STR, "pci/pci_gpu_link_info/pcie_gen/max_host_link_gen", "PCI/GPU Link Info/PCIe Generation/Host Max", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_PCIE_WIDTH_MAX, "pcie.link.width.max", NO_ALIAS, NULL, SMI_STYLE_WIDTH, "pci/pci_gpu_link_info/link_widths/max_link_width", "PCI/GPU Link Info/Link Width/Max", smi_get_pcie, L_MAX_WIDTH, NULL, EVERY },
        { SMI_F_PCIE_WIDTH_CURRENT, "pcie.link.width.current", NO_ALIAS, NULL, SMI_STYLE_WIDTH, "pci/pci_gpu_link_info/link_widths/current_link_width", "PCI/GPU Link Info/Link Width/Current", smi_get_pcie, L_CUR_WIDTH, NULL, EVERY },
        { SMI_F_BRIDGE_CHIP_TYPE, Q_ONLY, SMI_STYLE_STR, "pci/pci_bridge_chip/bridge_chip_type", "PCI/Bridge Chip/Type", smi_get_na, 0, NULL, EVERY },
        { SMI_F_BRIDGE_CHIP_FW, Q_ONLY, SMI_STYLE_STR, "pci/pci_bridge_chip/bridge_chip_fw", "PCI/Bridge Chip/Firmware", smi_get_na, 0, NULL, EVERY },
        { SMI_F_PCIE_REPLAY, Q_ONLY, SMI_STYLE_UINT, "pci/replay_counter", "PCI/Replays Since Reset", smi_get_pcie, L_REPLAY, NULL, EVERY },
        { SMI_F_PCIE_REPLAY_ROLLOVER, Q_ONLY, SMI_STYLE_STR, "pci/replay_rollover_counter", "PCI/Replay Number Rollovers", smi_get_zero, 0, NULL, EVERY },
        { SMI_F_PCIE_TX, Q_ONLY, SMI_STYLE_STR, "pci/tx_util", "PCI/Tx Throughput", smi_get_pcie, L_TX, NULL, EVERY },
        { SMI_F_PCIE_RX, Q_ONLY, SMI_STYLE_STR, "pci/rx_util", "PCI/Rx Throughput", smi_get_pcie, L_RX, NULL, EVERY },
        { SMI_F_ATOMIC_CAPS_OUTBOUND, Q_ONLY, SMI_STYLE_STR, "pci/atomic_caps_outbound", "PCI/Atomic Caps Outbound", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_ATOMIC_CAPS_INBOUND, Q_ONLY, SMI_STYLE_STR, "pci/atomic_caps_inbound", "PCI/Atomic Caps Inbound", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_FAN_SPEED, "fan.speed", NO_ALIAS, "%", SMI_STYLE_PERCENT, "fan_speed", "Fan Speed", smi_get_uint,
          U_FAN_SPEED, NULL, EVERY },
        { SMI_F_PSTATE, "pstate", NO_ALIAS, NULL, SMI_STYLE_PSTATE, "performance_state", "Performance State",
          smi_get_pstate, 0, NULL, EVERY },
        { SMI_F_CER_GPU_IDLE, "clocks_event_reasons.gpu_idle", ALIAS("clocks_throttle_reasons.gpu_idle"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_gpu_idle", "Clocks Event Reasons/Idle", smi_get_event_reason, 0x1, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_gpu_idle", "Clocks Throttle Reasons/Idle") },
        { SMI_F_CER_APPLICATIONS_CLOCKS_SETTING, "clocks_event_reasons.applications_clocks_setting", ALIAS("clocks_throttle_reasons.applications_clocks_setting"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_applications_clocks_setting", "Clocks Event Reasons/Applications Clocks Setting", smi_get_event_reason, 0x2, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_applications_clocks_setting", "Clocks Throttle Reasons/Applications Clocks Setting") },
        { SMI_F_CER_SW_POWER_CAP, "clocks_event_reasons.sw_power_cap", ALIAS("clocks_throttle_reasons.sw_power_cap"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sw_power_cap", "Clocks Event Reasons/SW Power Cap", smi_get_event_reason, 0x4, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_sw_power_cap", "Clocks Throttle Reasons/SW Power Cap") },
        { SMI_F_CER_HW_SLOWDOWN, "clocks_event_reasons.hw_slowdown", ALIAS("clocks_throttle_reasons.hw_slowdown"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_slowdown", "Clocks Event Reasons/HW Slowdown", smi_get_event_reason, 0x8, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_hw_slowdown", "Clocks Throttle Reasons/HW Slowdown") },
        { SMI_F_CER_HW_THERMAL_SLOWDOWN, "clocks_event_reasons.hw_thermal_slowdown", ALIAS("clocks_throttle_reasons.hw_thermal_slowdown"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_thermal_slowdown", "Clocks Event Reasons/HW Thermal Slowdown", smi_get_event_reason, 0x40, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_hw_thermal_slowdown", "Clocks Throttle Reasons/HW Thermal Slowdown") },
        { SMI_F_CER_HW_POWER_BRAKE_SLOWDOWN, "clocks_event_reasons.hw_power_brake_slowdown", ALIAS("clocks_throttle_reasons.hw_power_brake_slowdown"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_hw_power_brake_slowdown", "Clocks Event Reasons/HW Power Brake Slowdown", smi_get_event_reason, 0x80, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_hw_power_brake_slowdown", "Clocks Throttle Reasons/HW Power Brake Slowdown") },
        { SMI_F_CER_SYNC_BOOST, "clocks_event_reasons.sync_boost", ALIAS("clocks_throttle_reasons.sync_boost"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sync_boost", "Clocks Event Reasons/Sync Boost", smi_get_event_reason, 0x10, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_sync_boost", "Clocks Throttle Reasons/Sync Boost") },
        { SMI_F_CER_SW_THERMAL_SLOWDOWN, "clocks_event_reasons.sw_thermal_slowdown", ALIAS("clocks_throttle_reasons.sw_thermal_slowdown"), NULL, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_sw_thermal_slowdown", "Clocks Event Reasons/SW Thermal Slowdown", smi_get_event_reason, 0x20, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_sw_thermal_slowdown", "Clocks Throttle Reasons/SW Thermal Slowdown") },
        { SMI_F_CER_DISPLAY_CLOCKS_SETTING, Q_ONLY, SMI_STYLE_STR, "clocks_event_reasons/clocks_event_reason_display_clocks_setting", "Clocks Event Reasons/Display Clock Setting", smi_get_event_reason, 0x100, NULL, RENAMED(535, "clocks_throttle_reasons/clocks_throttle_reason_display_clocks_setting", "Clocks Throttle Reasons/Display Clock Setting") },
        { SMI_F_CER_COUNTER_SW_POWER_CAP, "clocks_event_reasons_counters.sw_power_cap", NO_ALIAS, "us", SMI_STYLE_US, "clocks_event_reasons_counters/clocks_event_reasons_counters_sw_power_cap", "Clocks Event Reasons Counters/SW Power Capping", smi_get_violation, 0, NULL, SINCE(580) },
        { SMI_F_CER_COUNTER_SYNC_BOOST, "clocks_event_reasons_counters.sync_boost", NO_ALIAS, "us", SMI_STYLE_US, "clocks_event_reasons_counters/clocks_event_reasons_counters_sync_boost", "Clocks Event Reasons Counters/Sync Boost", smi_get_violation, 2, NULL, SINCE(580) },
        { SMI_F_CER_COUNTER_SW_THERMAL, "clocks_event_reasons_counters.sw_thermal_slowdown", NO_ALIAS, "us", SMI_STYLE_US, "clocks_event_reasons_counters/clocks_event_reasons_counters_sw_therm_slowdown", "Clocks Event Reasons Counters/SW Thermal Slowdown", smi_get_violation, 1, NULL, SINCE(580) },
        { SMI_F_CER_COUNTER_HW_THERMAL, "clocks_event_reasons_counters.hw_thermal_slowdown", NO_ALIAS, "us", SMI_STYLE_STR, "clocks_event_reasons_counters/clocks_event_reasons_counters_hw_therm_slowdown", "Clocks Event Reasons Counters/HW Thermal Slowdown", smi_get_field_us, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, NULL, SINCE(580) },
        { SMI_F_CER_COUNTER_HW_POWER_BRAKE, "clocks_event_reasons_counters.hw_power_brake_slowdown", NO_ALIAS, "us", SMI_STYLE_STR, "clocks_event_reasons_counters/clocks_event_reasons_counters_hw_power_brake", "Clocks Event Reasons Counters/HW Power Braking", smi_get_field_us, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, NULL, SINCE(580) },
        { SMI_F_SPARSE_OPERATION_MODE, Q_ONLY, SMI_STYLE_STR, "sparse_operation_mode", "Sparse Operation Mode", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_MEMORY_TOTAL, "memory.total", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/total",
          "FB Memory Usage/Total", smi_get_memory, MEM_TOTAL, NULL, EVERY },
        { SMI_F_MEMORY_RESERVED, "memory.reserved", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/reserved",
          "FB Memory Usage/Reserved", smi_get_memory, MEM_RESERVED, NULL, EVERY },
        { SMI_F_MEMORY_USED, "memory.used", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/used",
          "FB Memory Usage/Used", smi_get_memory, MEM_USED, NULL, EVERY },
        { SMI_F_MEMORY_FREE, "memory.free", NO_ALIAS, "MiB", SMI_STYLE_MIB, "fb_memory_usage/free",
          "FB Memory Usage/Free", smi_get_memory, MEM_FREE, NULL, EVERY },
        { SMI_F_BAR1_TOTAL, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/total", "BAR1 Memory Usage/Total", smi_get_bar1, BAR1_TOTAL, NULL, EVERY },
        { SMI_F_BAR1_USED, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/used", "BAR1 Memory Usage/Used", smi_get_bar1, BAR1_USED, NULL, EVERY },
        { SMI_F_BAR1_FREE, Q_ONLY, SMI_STYLE_STR, "bar1_memory_usage/free", "BAR1 Memory Usage/Free", smi_get_bar1, BAR1_FREE, NULL, EVERY },
        { SMI_F_CC_MEMORY_TOTAL, "protected_memory.total", NO_ALIAS, "MiB", SMI_STYLE_MIB, "cc_protected_memory_usage/total", "Conf Compute Protected Memory Usage/Total", smi_get_cc_memory, 0, NULL, SINCE(535) },
        { SMI_F_CC_MEMORY_USED, "protected_memory.used", NO_ALIAS, "MiB", SMI_STYLE_MIB, "cc_protected_memory_usage/used", "Conf Compute Protected Memory Usage/Used", smi_get_cc_memory, 1, NULL, SINCE(535) },
        { SMI_F_CC_MEMORY_FREE, "protected_memory.free", NO_ALIAS, "MiB", SMI_STYLE_MIB, "cc_protected_memory_usage/free", "Conf Compute Protected Memory Usage/Free", smi_get_cc_memory, 2, NULL, SINCE(535) },
        { SMI_F_COMPUTE_MODE, "compute_mode", NO_ALIAS, NULL, SMI_STYLE_COMPUTE_MODE, "compute_mode", "Compute Mode",
          smi_get_compute_mode, 0, NULL, EVERY },
        { SMI_F_COMPUTE_CAP, "compute_cap", NO_ALIAS, NULL, SMI_STYLE_CC, CSV_ONLY, smi_get_compute_cap, 0, NULL, EVERY },
        { SMI_F_UTILIZATION_GPU, "utilization.gpu", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/gpu_util",
          "Utilization/GPU", smi_get_pair, PAIR(PAIR_UTILIZATION, 0), NULL, EVERY },
        { SMI_F_UTILIZATION_MEMORY, "utilization.memory", NO_ALIAS, "%", SMI_STYLE_PERCENT,
          "utilization/memory_util", "Utilization/Memory", smi_get_pair, PAIR(PAIR_UTILIZATION, 1), NULL, EVERY },
        { SMI_F_UTILIZATION_ENCODER, "utilization.encoder", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/encoder_util", "Utilization/Encoder", smi_get_engine_util, ENG_ENCODER, NULL, EVERY },
        { SMI_F_UTILIZATION_DECODER, "utilization.decoder", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/decoder_util", "Utilization/Decoder", smi_get_engine_util, ENG_DECODER, NULL, EVERY },
        { SMI_F_UTILIZATION_JPEG, "utilization.jpeg", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/jpeg_util", "Utilization/JPEG", smi_get_engine_util, ENG_JPEG, NULL, SINCE(535) },
        { SMI_F_UTILIZATION_OFA, "utilization.ofa", NO_ALIAS, "%", SMI_STYLE_PERCENT, "utilization/ofa_util", "Utilization/OFA", smi_get_engine_util, ENG_OFA, NULL, SINCE(535) },
        { SMI_F_ENCODER_SESSIONS, "encoder.stats.sessionCount", NO_ALIAS, NULL, SMI_STYLE_STR, "encoder_stats/session_count", "Encoder Stats/Active Sessions", smi_get_sessions, 0, NULL, EVERY },
        { SMI_F_ENCODER_FPS, "encoder.stats.averageFps", NO_ALIAS, NULL, SMI_STYLE_STR, "encoder_stats/average_fps", "Encoder Stats/Average FPS", smi_get_sessions, 1, NULL, EVERY },
        { SMI_F_ENCODER_LATENCY, "encoder.stats.averageLatency", NO_ALIAS, NULL, SMI_STYLE_STR, "encoder_stats/average_latency", "Encoder Stats/Average Latency", smi_get_sessions, 2, NULL, EVERY },
        { SMI_F_FBC_SESSIONS, Q_ONLY, SMI_STYLE_STR, "fbc_stats/session_count", "FBC Stats/Active Sessions", smi_get_sessions, 3, NULL, EVERY },
        { SMI_F_FBC_FPS, Q_ONLY, SMI_STYLE_STR, "fbc_stats/average_fps", "FBC Stats/Average FPS", smi_get_sessions, 4, NULL, EVERY },
        { SMI_F_FBC_LATENCY, Q_ONLY, SMI_STYLE_STR, "fbc_stats/average_latency", "FBC Stats/Average Latency", smi_get_sessions, 5, NULL, EVERY },
        { SMI_F_DRAM_ENCRYPTION_CURRENT, "dramEncryption.mode.current", NO_ALIAS, NULL, SMI_STYLE_STR, "dram_encryption_mode/current_dram_encryption", "DRAM Encryption Mode/Current", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_DRAM_ENCRYPTION_PENDING, "dramEncryption.mode.pending", NO_ALIAS, NULL, SMI_STYLE_STR, "dram_encryption_mode/pending_dram_encryption", "DRAM Encryption Mode/Pending", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_ECC_MODE_CURRENT, "ecc.mode.current", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "ecc_mode/current_ecc",
          "ECC Mode/Current", smi_get_pair, PAIR(PAIR_ECC_MODE, 0), NULL, EVERY },
        { SMI_F_ECC_MODE_PENDING, "ecc.mode.pending", NO_ALIAS, NULL, SMI_STYLE_ENABLED, "ecc_mode/pending_ecc",
          "ECC Mode/Pending", smi_get_pair, PAIR(PAIR_ECC_MODE, 1), NULL, EVERY },
        { SMI_F_ECC_VOLATILE_SRAM_CORRECTABLE, "ecc.errors.corrected.volatile.sram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/sram_correctable", "ECC Errors/Volatile/SRAM Correctable", smi_get_ecc_count, ECC(0, 0, 0), NULL, EVERY },
        { SMI_F_ECC_VOLATILE_SRAM_UNCORRECTABLE, "ecc.errors.uncorrected.volatile.sram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/sram_uncorrectable", "ECC Errors/Volatile/SRAM Uncorrectable", smi_get_ecc_count, ECC(0, 0, 1), NULL, GATED(SMI_GATE_NO_SRAM_SPLIT) },
        { SMI_F_ECC_VOLATILE_SRAM_PARITY, "ecc.errors.uncorrected.volatile.sram.parity", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/sram_uncorrectable_parity", "ECC Errors/Volatile/SRAM Uncorrectable Parity", smi_get_sram_ecc, SRAM_VOL_PARITY, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_VOLATILE_SRAM_SECDED, "ecc.errors.uncorrected.volatile.sram.secded", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/sram_uncorrectable_secded", "ECC Errors/Volatile/SRAM Uncorrectable SEC-DED", smi_get_sram_ecc, SRAM_VOL_SECDED, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_VOLATILE_DRAM_CORRECTABLE, "ecc.errors.corrected.volatile.dram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/dram_correctable", "ECC Errors/Volatile/DRAM Correctable", smi_get_ecc_count, ECC(0, 1, 0), NULL, EVERY },
        { SMI_F_ECC_VOLATILE_DRAM_UNCORRECTABLE, "ecc.errors.uncorrected.volatile.dram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/volatile/dram_uncorrectable", "ECC Errors/Volatile/DRAM Uncorrectable", smi_get_ecc_count, ECC(0, 1, 1), NULL, EVERY },
        { SMI_F_ECC_AGGREGATE_SRAM_CORRECTABLE, "ecc.errors.corrected.aggregate.sram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/sram_correctable", "ECC Errors/Aggregate/SRAM Correctable", smi_get_ecc_count, ECC(1, 0, 0), NULL, EVERY },
        { SMI_F_ECC_AGGREGATE_SRAM_UNCORRECTABLE, "ecc.errors.uncorrected.aggregate.sram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/sram_uncorrectable", "ECC Errors/Aggregate/SRAM Uncorrectable", smi_get_ecc_count, ECC(1, 0, 1), NULL, GATED(SMI_GATE_NO_SRAM_SPLIT) },
        { SMI_F_ECC_AGGREGATE_SRAM_PARITY, "ecc.errors.uncorrected.aggregate.sram.parity", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/sram_uncorrectable_parity", "ECC Errors/Aggregate/SRAM Uncorrectable Parity", smi_get_sram_ecc, SRAM_AGG_PARITY, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_AGGREGATE_SRAM_SECDED, "ecc.errors.uncorrected.aggregate.sram.secded", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/sram_uncorrectable_secded", "ECC Errors/Aggregate/SRAM Uncorrectable SEC-DED", smi_get_sram_ecc, SRAM_AGG_SECDED, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_AGGREGATE_DRAM_CORRECTABLE, "ecc.errors.corrected.aggregate.dram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/dram_correctable", "ECC Errors/Aggregate/DRAM Correctable", smi_get_ecc_count, ECC(1, 1, 0), NULL, EVERY },
        { SMI_F_ECC_AGGREGATE_DRAM_UNCORRECTABLE, "ecc.errors.uncorrected.aggregate.dram", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/dram_uncorrectable", "ECC Errors/Aggregate/DRAM Uncorrectable", smi_get_ecc_count, ECC(1, 1, 1), NULL, EVERY },
        { SMI_F_ECC_SRAM_THRESHOLD_EXCEEDED, "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate/sram_threshold_exceeded", "ECC Errors/Aggregate/SRAM Threshold Exceeded", smi_get_sram_ecc, SRAM_THRESHOLD, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_SRAM_SOURCE_L2, "ecc.errors.uncorrected.aggregate.sram.l2", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate_uncorrectable_sram_sources/sram_l2", "ECC Errors/Aggregate Uncorrectable SRAM Sources/SRAM L2", smi_get_sram_ecc, SRAM_L2, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_SRAM_SOURCE_SM, "ecc.errors.uncorrected.aggregate.sram.sm", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate_uncorrectable_sram_sources/sram_sm", "ECC Errors/Aggregate Uncorrectable SRAM Sources/SRAM SM", smi_get_sram_ecc, SRAM_SM, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_SRAM_SOURCE_MICROCONTROLLER, "ecc.errors.uncorrected.aggregate.sram.mcu", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate_uncorrectable_sram_sources/sram_microcontroller", "ECC Errors/Aggregate Uncorrectable SRAM Sources/SRAM Microcontroller", smi_get_sram_ecc, SRAM_MCU, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_SRAM_SOURCE_PCIE, "ecc.errors.uncorrected.aggregate.sram.pcie", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate_uncorrectable_sram_sources/sram_pcie", "ECC Errors/Aggregate Uncorrectable SRAM Sources/SRAM PCIE", smi_get_sram_ecc, SRAM_PCIE, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_SRAM_SOURCE_OTHER, "ecc.errors.uncorrected.aggregate.sram.other", NO_ALIAS, NULL, SMI_STYLE_STR, "ecc_errors/aggregate_uncorrectable_sram_sources/sram_other", "ECC Errors/Aggregate Uncorrectable SRAM Sources/SRAM Other", smi_get_sram_ecc, SRAM_OTHER, NULL, GATED(SMI_GATE_SRAM_SPLIT) },
        { SMI_F_ECC_CHANNEL_REPAIR_PENDING, Q_ONLY, SMI_STYLE_STR, "ecc_errors/channel_repair_pending", "ECC Errors/Channel Repair Pending", smi_get_repair, 0, NULL, GATING(KEY(580, 0), 0, 0, NULL, NULL, SMI_GATE_AMPERE) },
        { SMI_F_ECC_TPC_REPAIR_PENDING, Q_ONLY, SMI_STYLE_STR, "ecc_errors/tpc_repair_pending", "ECC Errors/TPC Repair Pending", smi_get_repair, 1, NULL, GATING(KEY(580, 0), 0, 0, NULL, NULL, SMI_GATE_AMPERE) },
        { SMI_F_ECC_UNREPAIRABLE_MEMORY, Q_ONLY, SMI_STYLE_STR, "ecc_errors/unrepairable_memory", "ECC Errors/Unrepairable Memory", smi_get_repair, 2, NULL, GATING(KEY(580, 173), 0, 0, NULL, NULL, SMI_GATE_AMPERE) },
        { SMI_F_RETIRED_SINGLE_BIT, "retired_pages.single_bit_ecc.count", NO_ALIAS, NULL, SMI_STYLE_STR, "retired_pages/multiple_single_bit_retirement/retired_count", "Retired Pages/Single Bit ECC/Count", smi_get_retired, RP_SINGLE_BIT, NULL, EVERY },
        { SMI_F_RETIRED_SINGLE_BIT_LIST, Q_ONLY, SMI_STYLE_STR, "retired_pages/multiple_single_bit_retirement/retired_pagelist", "Retired Pages/Single Bit ECC/Pages", NULL, 0, smi_block_retired_pagelist_single, EVERY },
        { SMI_F_RETIRED_DOUBLE_BIT, "retired_pages.double_bit.count", NO_ALIAS, NULL, SMI_STYLE_STR, "retired_pages/double_bit_retirement/retired_count", "Retired Pages/Double Bit ECC/Count", smi_get_retired, RP_DOUBLE_BIT, NULL, EVERY },
        { SMI_F_RETIRED_DOUBLE_BIT_LIST, Q_ONLY, SMI_STYLE_STR, "retired_pages/double_bit_retirement/retired_pagelist", "Retired Pages/Double Bit ECC/Pages", NULL, 0, smi_block_retired_pagelist_double, EVERY },
        { SMI_F_RETIRED_PENDING_BLACKLIST, Q_ONLY, SMI_STYLE_STR, "retired_pages/pending_blacklist", "Retired Pages/Pending Page Blacklist", smi_get_retired, RP_PENDING, NULL, EVERY },
        { SMI_F_RETIRED_PENDING, "retired_pages.pending", NO_ALIAS, NULL, SMI_STYLE_STR, "retired_pages/pending_retirement", "Retired Pages/Pending Page Retirement", smi_get_retired, RP_PENDING, NULL, EVERY },
        { SMI_F_REMAPPED_CORR, "remapped_rows.correctable", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_corr", "Remapped Rows/Correctable Error", smi_get_remapped, RR_CORR, NULL, NA_SECTION },
        { SMI_F_REMAPPED_CORR_INACTIVE, "remapped_rows.correctable_inactive", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_corr_inactive", "Remapped Rows/Correctable Error Inactive", smi_get_remapped_inactive, 0, NULL, GATING(KEY(580, 173), 0, 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_REMAPPED_UNC, "remapped_rows.uncorrectable", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_unc", "Remapped Rows/Uncorrectable Error", smi_get_remapped, RR_UNC, NULL, EVERY },
        { SMI_F_REMAPPED_UNC_INACTIVE, "remapped_rows.uncorrectable_inactive", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_unc_inactive", "Remapped Rows/Uncorrectable Error Inactive", smi_get_remapped_inactive, 1, NULL, GATING(KEY(580, 173), 0, 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_REMAPPED_PENDING, "remapped_rows.pending", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_pending", "Remapped Rows/Pending", smi_get_remapped, RR_PENDING, NULL, EVERY },
        { SMI_F_REMAPPED_FAILURE, "remapped_rows.failure", NO_ALIAS, NULL, SMI_STYLE_STR, "remapped_rows/remapped_row_failure", "Remapped Rows/Remapping Failure Occurred", smi_get_remapped, RR_FAILURE, NULL, EVERY },
        { SMI_F_REMAP_HISTOGRAM_MAX, "remapped_rows.histogram.max", NO_ALIAS, NULL, SMI_STYLE_BANKS, "remapped_rows/row_remapper_histogram/row_remapper_histogram_max", "Remapped Rows/Bank Remap Availability Histogram/Max", smi_get_remapped, RR_H_MAX, NULL, EVERY },
        { SMI_F_REMAP_HISTOGRAM_HIGH, "remapped_rows.histogram.high", NO_ALIAS, NULL, SMI_STYLE_BANKS, "remapped_rows/row_remapper_histogram/row_remapper_histogram_high", "Remapped Rows/Bank Remap Availability Histogram/High", smi_get_remapped, RR_H_HIGH, NULL, EVERY },
        { SMI_F_REMAP_HISTOGRAM_PARTIAL, "remapped_rows.histogram.partial", NO_ALIAS, NULL, SMI_STYLE_BANKS, "remapped_rows/row_remapper_histogram/row_remapper_histogram_partial", "Remapped Rows/Bank Remap Availability Histogram/Partial", smi_get_remapped, RR_H_PARTIAL, NULL, EVERY },
        { SMI_F_REMAP_HISTOGRAM_LOW, "remapped_rows.histogram.low", NO_ALIAS, NULL, SMI_STYLE_BANKS, "remapped_rows/row_remapper_histogram/row_remapper_histogram_low", "Remapped Rows/Bank Remap Availability Histogram/Low", smi_get_remapped, RR_H_LOW, NULL, EVERY },
        { SMI_F_REMAP_HISTOGRAM_NONE, "remapped_rows.histogram.none", NO_ALIAS, NULL, SMI_STYLE_BANKS, "remapped_rows/row_remapper_histogram/row_remapper_histogram_none", "Remapped Rows/Bank Remap Availability Histogram/None", smi_get_remapped, RR_H_NONE, NULL, EVERY },
        /* The real CSV header has no unit for temperature.gpu and the value is a bare number. */
        { SMI_F_TEMPERATURE_GPU, "temperature.gpu", NO_ALIAS, NULL, SMI_STYLE_CELSIUS, "temperature/gpu_temp",
          "Temperature/GPU Current Temp", smi_get_uint, U_TEMPERATURE, NULL, EVERY },
        { SMI_F_TEMP_TLIMIT, "temperature.gpu.tlimit", NO_ALIAS, NULL, SMI_STYLE_SCELSIUS, "temperature/gpu_temp_tlimit", "Temperature/GPU T.Limit Temp", smi_get_newer, X_MARGIN_TEMPERATURE, NULL, SINCE(535) },
        { SMI_F_TEMP_SHUTDOWN, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_threshold", "Temperature/GPU Shutdown Temp", smi_get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, NULL, GATED(SMI_GATE_NO_TLIMIT) },
        { SMI_F_TEMP_SHUTDOWN_TLIMIT, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_tlimit_threshold", "Temperature/GPU Shutdown T.Limit Temp", smi_get_tlimit_threshold, NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT, NULL, GATED(SMI_GATE_TLIMIT) },
        { SMI_F_TEMP_SLOWDOWN, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_slow_threshold", "Temperature/GPU Slowdown Temp", smi_get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, NULL, GATED(SMI_GATE_NO_TLIMIT) },
        { SMI_F_TEMP_SLOWDOWN_TLIMIT, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_slow_tlimit_threshold", "Temperature/GPU Slowdown T.Limit Temp", smi_get_tlimit_threshold, NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT, NULL, GATED(SMI_GATE_TLIMIT) },
        { SMI_F_TEMP_GPU_MAX, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_gpu_threshold", "Temperature/GPU Max Operating Temp", smi_get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, NULL, GATED(SMI_GATE_NO_TLIMIT) },
        { SMI_F_TEMP_GPU_MAX_TLIMIT, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_gpu_tlimit_threshold", "Temperature/GPU Max Operating T.Limit Temp", smi_get_tlimit_threshold, NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT, NULL, GATED(SMI_GATE_TLIMIT) },
        { SMI_F_TEMP_TARGET, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_target_temperature", "Temperature/GPU Target Temperature", smi_get_na, 0, NULL, EVERY },
        /* Memory temperature: the CSV temperature.memory writes the bare number, like temperature.gpu. */
        { SMI_F_TEMPERATURE_MEMORY, "temperature.memory", NO_ALIAS, NULL, SMI_STYLE_CELSIUS, "temperature/memory_temp",
          "Temperature/Memory Current Temp", smi_get_memory_temp, 0, NULL, EVERY },
        { SMI_F_TEMP_MEM_MAX, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_mem_threshold", "Temperature/Memory Max Operating Temp", smi_get_temp_threshold, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, NULL, GATED(SMI_GATE_NO_TLIMIT) },
        { SMI_F_TEMP_MEM_MAX_TLIMIT, Q_ONLY, SMI_STYLE_STR, "temperature/gpu_temp_max_mem_tlimit_threshold", "Temperature/Memory Max Operating T.Limit Temp", smi_get_tlimit_threshold, NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT, NULL, GATED(SMI_GATE_TLIMIT) },
        { SMI_F_TARGET_TEMP_MIN, Q_ONLY, SMI_STYLE_STR, "supported_gpu_target_temp/gpu_target_temp_min", "Supported GPU Target Temp/GPU Target Temp Min", smi_get_na, 0, NULL, EVERY },
        { SMI_F_TARGET_TEMP_MAX, Q_ONLY, SMI_STYLE_STR, "supported_gpu_target_temp/gpu_target_temp_max", "Supported GPU Target Temp/GPU Target Temp Max", smi_get_na, 0, NULL, EVERY },
        { SMI_F_POWER_STATE, Q_ONLY, SMI_STYLE_STR, "gpu_power_readings/power_state", "GPU Power Readings/Power State", smi_get_power_misc, PW_STATE, NULL, RENAMED(535, "power_readings/power_state", "Power Readings/Power State") },
        { SMI_F_POWER_MANAGEMENT, "power.management", NO_ALIAS, NULL, SMI_STYLE_STR, "gpu_power_readings/power_management", "GPU Power Readings/Power Management", smi_get_power_misc, PW_MANAGEMENT, NULL, GATING(0, BRANCH_END(534), KEY(535, 0), "power_readings/power_management", "Power Readings/Power Management", SMI_GATE_NONE) },
        { SMI_F_POWER_DRAW, "power.draw", NO_ALIAS, "W", SMI_STYLE_WATT, "gpu_power_readings/power_draw",
          "GPU Power Readings/Power Draw", smi_get_uint, U_POWER_USAGE, NULL,
          GATING(0, BRANCH_END(569), KEY(535, 0), "power_readings/power_draw", "Power Readings/Power Draw", SMI_GATE_NONE) },
        { SMI_F_POWER_DRAW_AVERAGE, "power.draw.average", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/average_power_draw", "GPU Power Readings/Average Power Draw", smi_get_uint, U_POWER_USAGE,
          NULL, SINCE(570) },
        { SMI_F_POWER_DRAW_INSTANT, "power.draw.instant", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/instant_power_draw", "GPU Power Readings/Instantaneous Power Draw", smi_get_uint,
          U_POWER_USAGE, NULL, SINCE(570) },
        { SMI_F_POWER_LIMIT, "power.limit", NO_ALIAS, "W", SMI_STYLE_WATT, "gpu_power_readings/current_power_limit",
          "GPU Power Readings/Current Power Limit", smi_get_uint, U_POWER_LIMIT, NULL, RENAMED(535, "power_readings/power_limit", "Power Readings/Power Limit") },
        { SMI_F_POWER_REQUESTED_LIMIT, Q_ONLY, SMI_STYLE_WATT, "gpu_power_readings/requested_power_limit", "GPU Power Readings/Requested Power Limit", smi_get_uint, U_POWER_LIMIT, NULL, SINCE(535) },
        { SMI_F_POWER_DEFAULT_LIMIT, "power.default_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/default_power_limit", "GPU Power Readings/Default Power Limit", smi_get_uint,
          U_DEFAULT_LIMIT, NULL, RENAMED(535, "power_readings/default_power_limit", "Power Readings/Default Power Limit") },
        { SMI_F_ENFORCED_POWER_LIMIT, "enforced.power.limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/enforced_power_limit", "GPU Power Readings/Enforced Power Limit", smi_get_uint,
          U_ENFORCED_LIMIT, NULL,
          GATING(0, BRANCH_END(534), KEY(535, 0), "power_readings/enforced_power_limit", "Power Readings/Enforced Power Limit",
                 SMI_GATE_NONE) },
        { SMI_F_POWER_MIN_LIMIT, "power.min_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/min_power_limit", "GPU Power Readings/Min Power Limit", smi_get_pair,
          PAIR(PAIR_POWER_CONSTRAINTS, 0), NULL, RENAMED(535, "power_readings/min_power_limit", "Power Readings/Min Power Limit") },
        { SMI_F_POWER_MAX_LIMIT, "power.max_limit", NO_ALIAS, "W", SMI_STYLE_WATT,
          "gpu_power_readings/max_power_limit", "GPU Power Readings/Max Power Limit", smi_get_pair,
          PAIR(PAIR_POWER_CONSTRAINTS, 1), NULL, RENAMED(535, "power_readings/max_power_limit", "Power Readings/Max Power Limit") },
        { SMI_F_MEMORY_POWER_AVERAGE, Q_ONLY, SMI_STYLE_WATT, "gpu_memory_power_readings/average_power_draw", "GPU Memory Power Readings /Average Power Draw", smi_get_power_field, SMI_NVML_POWER_SCOPE_MEMORY * 2, NULL, SINCE(570) },
        { SMI_F_MEMORY_POWER_INSTANT, Q_ONLY, SMI_STYLE_WATT, "gpu_memory_power_readings/instant_power_draw", "GPU Memory Power Readings /Instantaneous Power Draw", smi_get_power_field, SMI_NVML_POWER_SCOPE_MEMORY * 2 + 1, NULL, SINCE(570) },
        { SMI_F_MODULE_POWER_STATE, Q_ONLY, SMI_STYLE_STR, "module_power_readings/power_state", "Module Power Readings/Power State", smi_get_power_misc, PW_STATE, NULL, SINCE(535) },
        { SMI_F_MODULE_POWER_DRAW, Q_ONLY, SMI_STYLE_WATT, "module_power_readings/power_draw", "Module Power Readings/Power Draw", smi_get_power_field, SMI_NVML_POWER_SCOPE_MODULE * 2 + 1, NULL, GATING(KEY(535, 0), BRANCH_END(569), 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_MODULE_POWER_AVERAGE, "module.power.draw.average", NO_ALIAS, "W", SMI_STYLE_WATT, "module_power_readings/average_power_draw", "Module Power Readings/Average Power Draw", smi_get_power_field, SMI_NVML_POWER_SCOPE_MODULE * 2, NULL, SINCE(570) },
        { SMI_F_MODULE_POWER_INSTANT, "module.power.draw.instant", NO_ALIAS, "W", SMI_STYLE_WATT, "module_power_readings/instant_power_draw", "Module Power Readings/Instantaneous Power Draw", smi_get_power_field, SMI_NVML_POWER_SCOPE_MODULE * 2 + 1, NULL, SINCE(570) },
        { SMI_F_MODULE_POWER_CURRENT_LIMIT, "module.power.limit", NO_ALIAS, "W", SMI_STYLE_STR, "module_power_readings/current_power_limit", "Module Power Readings/Current Power Limit", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_MODULE_POWER_REQUESTED_LIMIT, Q_ONLY, SMI_STYLE_STR, "module_power_readings/requested_power_limit", "Module Power Readings/Requested Power Limit", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_MODULE_POWER_DEFAULT_LIMIT, "module.power.default_limit", NO_ALIAS, "W", SMI_STYLE_STR, "module_power_readings/default_power_limit", "Module Power Readings/Default Power Limit", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_MODULE_POWER_MIN_LIMIT, "module.power.min_limit", NO_ALIAS, "W", SMI_STYLE_STR, "module_power_readings/min_power_limit", "Module Power Readings/Min Power Limit", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_MODULE_POWER_MAX_LIMIT, "module.power.max_limit", NO_ALIAS, "W", SMI_STYLE_STR, "module_power_readings/max_power_limit", "Module Power Readings/Max Power Limit", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_POWER_SMOOTHING, Q_ONLY, SMI_STYLE_STR, "power_smoothing", "Power Smoothing", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_POWER_PROFILES_REQUESTED, Q_ONLY, SMI_STYLE_STR, "power_profiles/power_profile_requested_profiles", "Workload Power Profiles/Requested Profiles", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_POWER_PROFILES_ENFORCED, Q_ONLY, SMI_STYLE_STR, "power_profiles/power_profile_enforced_profiles", "Workload Power Profiles/Enforced Profiles", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_EDPP_MULTIPLIER, "edpp_multiplier", NO_ALIAS, "%", SMI_STYLE_STR, "edpp_multiplier", "EDPp Multiplier", smi_get_na, 0, NULL, SINCE(590) },
        { SMI_F_CLOCKS_GR, "clocks.current.graphics", ALIAS("clocks.gr"), "MHz", SMI_STYLE_MHZ,
          "clocks/graphics_clock", "Clocks/Graphics", smi_get_clock, NVML_CLOCK_GRAPHICS, NULL, EVERY },
        { SMI_F_CLOCKS_SM, "clocks.current.sm", ALIAS("clocks.sm"), "MHz", SMI_STYLE_MHZ, "clocks/sm_clock",
          "Clocks/SM", smi_get_clock, NVML_CLOCK_SM, NULL, EVERY },
        { SMI_F_CLOCKS_MEM, "clocks.current.memory", ALIAS("clocks.mem"), "MHz", SMI_STYLE_MHZ, "clocks/mem_clock",
          "Clocks/Memory", smi_get_clock, NVML_CLOCK_MEM, NULL, EVERY },
        { SMI_F_CLOCKS_VIDEO, "clocks.current.video", ALIAS("clocks.video"), "MHz", SMI_STYLE_MHZ,
          "clocks/video_clock", "Clocks/Video", smi_get_clock, NVML_CLOCK_VIDEO, NULL, EVERY },
        { SMI_F_APP_CLOCK_GR, "clocks.applications.graphics", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "applications_clocks/graphics_clock", "Applications Clocks/Graphics", smi_get_app_clock, APP_CLOCK | NVML_CLOCK_GRAPHICS, NULL, EVERY },
        { SMI_F_APP_CLOCK_MEM, "clocks.applications.memory", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "applications_clocks/mem_clock", "Applications Clocks/Memory", smi_get_app_clock, APP_CLOCK | NVML_CLOCK_MEM, NULL, EVERY },
        { SMI_F_DEFAULT_APP_CLOCK_GR, "clocks.default_applications.graphics", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "default_applications_clocks/graphics_clock", "Default Applications Clocks/Graphics", smi_get_app_clock, DEFAULT_CLOCK | NVML_CLOCK_GRAPHICS, NULL, EVERY },
        { SMI_F_DEFAULT_APP_CLOCK_MEM, "clocks.default_applications.memory", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "default_applications_clocks/mem_clock", "Default Applications Clocks/Memory", smi_get_app_clock, DEFAULT_CLOCK | NVML_CLOCK_MEM, NULL, EVERY },
        { SMI_F_DEFERRED_CLOCK_MEM, Q_ONLY, SMI_STYLE_STR, "deferred_clocks/mem_clock", "Deferred Clocks/Memory", smi_get_na, 0, NULL, SINCE(535) },
        { SMI_F_CLOCKS_MAX_GR, "clocks.max.graphics", ALIAS("clocks.max.gr"), "MHz", SMI_STYLE_MHZ,
          "max_clocks/graphics_clock", "Max Clocks/Graphics", smi_get_clock, CLOCK_MAX | NVML_CLOCK_GRAPHICS, NULL, EVERY },
        { SMI_F_CLOCKS_MAX_SM, "clocks.max.sm", NO_ALIAS, "MHz", SMI_STYLE_MHZ, "max_clocks/sm_clock",
          "Max Clocks/SM", smi_get_clock, CLOCK_MAX | NVML_CLOCK_SM, NULL, EVERY },
        { SMI_F_CLOCKS_MAX_MEM, "clocks.max.memory", ALIAS("clocks.max.mem"), "MHz", SMI_STYLE_MHZ,
          "max_clocks/mem_clock", "Max Clocks/Memory", smi_get_clock, CLOCK_MAX | NVML_CLOCK_MEM, NULL, EVERY },
        { SMI_F_CLOCKS_MAX_VIDEO, Q_ONLY, SMI_STYLE_MHZ, "max_clocks/video_clock", "Max Clocks/Video", smi_get_clock,
          CLOCK_MAX | NVML_CLOCK_VIDEO, NULL, EVERY },
        { SMI_F_BOOST_CLOCK_GR, Q_ONLY, SMI_STYLE_MHZ, "max_customer_boost_clocks/graphics_clock", "Max Customer Boost Clocks/Graphics", smi_get_app_clock, NVML_CLOCK_GRAPHICS, NULL, EVERY },
        { SMI_F_AUTO_BOOST, Q_ONLY, SMI_STYLE_STR, "clock_policy/auto_boost", "Clock Policy/Auto Boost", smi_get_na, 0, NULL, EVERY },
        { SMI_F_AUTO_BOOST_DEFAULT, Q_ONLY, SMI_STYLE_STR, "clock_policy/auto_boost_default", "Clock Policy/Auto Boost Default", smi_get_na, 0, NULL, EVERY },
        { SMI_F_VOLTAGE_GRAPHICS, Q_ONLY, SMI_STYLE_STR, "voltage/graphics_volt", "Voltage/Graphics", smi_get_na, 0, NULL, UNTIL(579) },
        { SMI_F_FABRIC_STATE, "fabric.state", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/state", "Fabric/State", smi_get_fabric, FAB_STATE, NULL, SINCE(535) },
        { SMI_F_FABRIC_STATUS, "fabric.status", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/status", "Fabric/Status", smi_get_fabric, FAB_STATUS,
          NULL, SINCE(535) },
        /* CliqueId / ClusterUUID: not in the 535 captures, in the 580+ ones; from 550, whose nvmlGpuFabricInfo_t
         * names the clique id (535's named it partitionId). */
        { SMI_F_FABRIC_CLIQUE_ID, "fabric.cliqueId", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/cliqueId", "Fabric/CliqueId", smi_get_fabric,
          FAB_CLIQUE_ID, NULL, SINCE(550) },
        { SMI_F_FABRIC_CLUSTER_UUID, "fabric.clusterUuid", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/clusterUuid", "Fabric/ClusterUUID", smi_get_fabric,
          FAB_CLUSTER_UUID, NULL, SINCE(550) },
        { SMI_F_FABRIC_HEALTH_SUMMARY, "fabric.health.summary", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/summary", "Fabric/Health/Summary", smi_get_na, 0, NULL, SINCE(580) },
        { SMI_F_FABRIC_HEALTH_BANDWIDTH, "fabric.health.bandwidth", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/bandwidth", "Fabric/Health/Bandwidth", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_FABRIC_HEALTH_ROUTE_RECOVERY_IN_PROGRESS, "fabric.health.route_recovery_in_progress", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/route_recovery_in_progress", "Fabric/Health/Route Recovery in progress", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_FABRIC_HEALTH_ROUTE_UNHEALTHY, "fabric.health.route_unhealthy", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/route_unhealthy", "Fabric/Health/Route Unhealthy", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_FABRIC_HEALTH_ACCESS_TIMEOUT_RECOVERY, "fabric.health.access_timeout_recovery", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/access_timeout_recovery", "Fabric/Health/Access Timeout Recovery", smi_get_na, 0, NULL, SINCE(570) },
        { SMI_F_FABRIC_HEALTH_INCORRECT_CONFIGURATION, "fabric.health.incorrect_configuration", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/incorrect_configuration", "Fabric/Health/Incorrect Configuration", smi_get_na, 0, NULL, SINCE(580) },
        { SMI_F_FABRIC_HEALTH_PARTITION_ASSIGNED, "fabric.health.partition_assigned", NO_ALIAS, NULL, SMI_STYLE_STR, "fabric/health/partition_assigned", "Fabric/Health/Partition Assigned", smi_get_na, 0, NULL, GATING(KEY(580, 173), 0, 0, NULL, NULL, SMI_GATE_NONE) },
        { SMI_F_SUPPORTED_CLOCKS, Q_ONLY, SMI_STYLE_STR, "supported_clocks", "Supported Clocks", NULL, 0,
          smi_block_supported_clocks, EVERY },
        { SMI_F_PROCESSES, Q_ONLY, SMI_STYLE_STR, "processes", "Processes", NULL, 0, smi_emit_processes, EVERY },
        { SMI_F_ACCOUNTED_PROCESSES, Q_ONLY, SMI_STYLE_STR, "accounted_processes", "Accounted Processes", NULL, 0,
          smi_block_accounted_processes, EVERY },
        { SMI_F_CAPABILITY_EGM, Q_ONLY, SMI_STYLE_STR, "capabilities/egm", "Capabilities/EGM", smi_get_capability, NVML_DEV_CAP_EGM, NULL, SINCE(570) },
        /* --query-gpu fields without a -q element (names and units: the headers of csv__query-gpu_*_590.48.01
         * and csv__query-gpu_*_595.80, the real tool queried for every field of its --help-query-gpu) */
        { SMI_F_Q_KMD_VERSION, "kmd_version", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ctx, CTX_DRIVER_VERSION, NULL, EVERY },
        { SMI_F_Q_VGPU_DRIVER_CAPABILITY_HETEROGENOUS_MULTIVGPU, "vgpu_driver_capability.heterogenous_multivGPU", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_FRACTIONAL_MULTIVGPU, "vgpu_device_capability.fractional_multiVgpu", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_HETEROGENEOUS_TIMESLICE_PROFILE, "vgpu_device_capability.heterogeneous_timeSlice_profile", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_HETEROGENEOUS_TIMESLICE_SIZES, "vgpu_device_capability.heterogeneous_timeSlice_sizes", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_HOMOGENEOUS_PLACEMENTS, "vgpu_device_capability.homogeneous_placements", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_MIG_TIMESLICING, "vgpu_device_capability.mig_timeSlicing", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_VGPU_DEVICE_CAPABILITY_MIG_TIMESLICING_MODE, "vgpu_device_capability.mig_timeSlicing_mode", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_INFOROM_CHECKSUM_VALIDATION, "inforom.checksum_validation", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_CLOCKS_EVENT_REASONS_SUPPORTED, "clocks_event_reasons.supported", ALIAS("clocks_throttle_reasons.supported"), NULL, SMI_STYLE_HEX16, CSV_ONLY, smi_get_event_mask, 0, NULL, EVERY },
        { SMI_F_Q_CLOCKS_EVENT_REASONS_ACTIVE, "clocks_event_reasons.active", ALIAS("clocks_throttle_reasons.active"), NULL, SMI_STYLE_HEX16, CSV_ONLY, smi_get_event_mask, 1, NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_DEVICE_MEMORY, "ecc.errors.corrected.volatile.device_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(2, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_REGISTER_FILE, "ecc.errors.corrected.volatile.register_file", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(3, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_L1_CACHE, "ecc.errors.corrected.volatile.l1_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(0, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_L2_CACHE, "ecc.errors.corrected.volatile.l2_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(1, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_TEXTURE_MEMORY, "ecc.errors.corrected.volatile.texture_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(4, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_CBU, "ecc.errors.corrected.volatile.cbu", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(6, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_VOLATILE_TOTAL, "ecc.errors.corrected.volatile.total", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(8, 0, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_DEVICE_MEMORY, "ecc.errors.corrected.aggregate.device_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(2, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_REGISTER_FILE, "ecc.errors.corrected.aggregate.register_file", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(3, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_L1_CACHE, "ecc.errors.corrected.aggregate.l1_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(0, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_L2_CACHE, "ecc.errors.corrected.aggregate.l2_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(1, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_TEXTURE_MEMORY, "ecc.errors.corrected.aggregate.texture_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(4, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_CBU, "ecc.errors.corrected.aggregate.cbu", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(6, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_CORRECTED_AGGREGATE_TOTAL, "ecc.errors.corrected.aggregate.total", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(8, 1, 0), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_DEVICE_MEMORY, "ecc.errors.uncorrected.volatile.device_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(2, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_REGISTER_FILE, "ecc.errors.uncorrected.volatile.register_file", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(3, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_L1_CACHE, "ecc.errors.uncorrected.volatile.l1_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(0, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_L2_CACHE, "ecc.errors.uncorrected.volatile.l2_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(1, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_TEXTURE_MEMORY, "ecc.errors.uncorrected.volatile.texture_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(4, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_CBU, "ecc.errors.uncorrected.volatile.cbu", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(6, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_VOLATILE_TOTAL, "ecc.errors.uncorrected.volatile.total", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(8, 0, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_DEVICE_MEMORY, "ecc.errors.uncorrected.aggregate.device_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(2, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_REGISTER_FILE, "ecc.errors.uncorrected.aggregate.register_file", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(3, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_L1_CACHE, "ecc.errors.uncorrected.aggregate.l1_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(0, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_L2_CACHE, "ecc.errors.uncorrected.aggregate.l2_cache", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(1, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_TEXTURE_MEMORY, "ecc.errors.uncorrected.aggregate.texture_memory", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(4, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_CBU, "ecc.errors.uncorrected.aggregate.cbu", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(6, 1, 1), NULL, EVERY },
        { SMI_F_Q_ECC_ERRORS_UNCORRECTED_AGGREGATE_TOTAL, "ecc.errors.uncorrected.aggregate.total", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_ecc_location, ECC_LOC(8, 1, 1), NULL, EVERY },
        { SMI_F_Q_MODULE_ENFORCED_POWER_LIMIT, "module.enforced.power.limit", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_DELAYED_POWER_SMOOTHING_SUPPORTED, "power_smoothing.delayed_power_smoothing_supported", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_PRIMARY_POWER_FLOOR, "power_smoothing.primary_power_floor", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_SECONDARY_POWER_FLOOR, "power_smoothing.secondary_power_floor", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_MIN_PRIMARY_FLOOR_ACTIVATION_OFFSET, "power_smoothing.min_primary_floor_activation_offset", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_MIN_PRIMARY_FLOOR_ACTIVATION_POINT, "power_smoothing.min_primary_floor_activation_point", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_WINDOW_MULTIPLIER, "power_smoothing.window_multiplier", NO_ALIAS, "ms", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_SECONDARY_POWER_FLOOR, "power_smoothing.curr_profile.secondary_power_floor", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_ACT_WINDOW_MULTIPLIER, "power_smoothing.curr_profile.primary_floor_act_window_multiplier", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_TAR_WINDOW_MULTIPLIER, "power_smoothing.curr_profile.primary_floor_tar_window_multiplier", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_CURR_PROFILE_PRIMARY_FLOOR_ACT_OFFSET, "power_smoothing.curr_profile.primary_floor_act_offset", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_SECONDARY_POWER_FLOOR, "power_smoothing.admin_override.secondary_power_floor", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_ACT_WINDOW_MULTIPLIER, "power_smoothing.admin_override.primary_floor_act_window_multiplier", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_TAR_WINDOW_MULTIPLIER, "power_smoothing.admin_override.primary_floor_tar_window_multiplier", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_POWER_SMOOTHING_ADMIN_OVERRIDE_PRIMARY_FLOOR_ACT_OFFSET, "power_smoothing.admin_override.primary_floor_act_offset", NO_ALIAS, "W", SMI_STYLE_STR, CSV_ONLY, smi_get_na, 0, NULL, EVERY },
        { SMI_F_Q_GSP_MODE_CURRENT, "gsp.mode.current", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_gsp_mode, 0, NULL, EVERY },
        { SMI_F_Q_GSP_MODE_DEFAULT, "gsp.mode.default", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_gsp_mode, 1, NULL, EVERY },
        { SMI_F_Q_HOSTNAME, "hostname", NO_ALIAS, NULL, SMI_STYLE_STR, CSV_ONLY, smi_get_hostname, 0, NULL, EVERY },
};

const smi_field_def_t *smi_fields(size_t *n)
{
        if (n)
                *n = GV_ARRAY_SIZE(field_table);
        return field_table;
}

const smi_field_def_t *smi_field_lookup(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < GV_ARRAY_SIZE(field_table); i++) {
                const smi_field_def_t *d = &field_table[i];
                if (!d->name)
                        continue;
                if (strcmp(d->name, name) == 0)
                        return d;
                for (size_t a = 0; a < GV_ARRAY_SIZE(d->aliases) && d->aliases[a]; a++)
                        if (strcmp(d->aliases[a], name) == 0)
                                return d;
        }
        return NULL;
}

unsigned smi_driver_branch(const char *version)
{
        unsigned b = 0;
        for (const char *c = version; c && *c >= '0' && *c <= '9' && b < 100000; c++)
                b = b * 10 + (unsigned) (*c - '0');
        return b;
}

unsigned smi_driver_key(const char *version)
{
        unsigned major = smi_driver_branch(version), minor = 0;
        const char *dot = version ? strchr(version, '.') : NULL;
        for (const char *c = dot ? dot + 1 : NULL; c && *c >= '0' && *c <= '9' && minor < 1000; c++)
                minor = minor * 10 + (unsigned) (*c - '0');
        if (major == 0 || major > 4000000)
                return 0;
        return major * 1000 + (minor > 999 ? 999 : minor);
}

unsigned smi_dtd_version(unsigned branch)
{
        if (branch == 0 || branch >= 580)
                return 13;
        return branch >= 535 ? 12 : 11;
}

/* Whether the GPU of @src is of architecture @arch or later (unknown: no). */
static bool gpu_arch_at_least(const smi_src_t *src, nvmlDeviceArchitecture_t arch)
{
        nvmlDeviceArchitecture_t a = NVML_DEVICE_ARCH_UNKNOWN;
        if (NV(src->nvml, nvmlDeviceGetArchitecture, src->dev, &a) != NVML_SUCCESS)
                return false;
        return a >= arch && a != NVML_DEVICE_ARCH_UNKNOWN;
}

bool smi_row_shown(const smi_field_def_t *def, const smi_src_t *src)
{
        if (!def || !def->xml)
                return false;
        unsigned key = smi_driver_key(src->driver_version);
        /* An unknown version reads as the newest: every row without an upper bound. */
        if (key == 0)
                key = UINT_MAX;
        if ((def->since && key < def->since) || (def->until && key > def->until))
                return false;
        switch (def->gate) {
        case SMI_GATE_TLIMIT:
                return key >= 535000 && gpu_arch_at_least(src, NVML_DEVICE_ARCH_ADA);
        case SMI_GATE_NO_TLIMIT:
                return key < 535000 || !gpu_arch_at_least(src, NVML_DEVICE_ARCH_ADA);
        case SMI_GATE_SRAM_SPLIT:
                return key >= 570000 && gpu_arch_at_least(src, NVML_DEVICE_ARCH_AMPERE);
        case SMI_GATE_NO_SRAM_SPLIT:
                return key < 570000 || !gpu_arch_at_least(src, NVML_DEVICE_ARCH_AMPERE);
        case SMI_GATE_AMPERE:
                return gpu_arch_at_least(src, NVML_DEVICE_ARCH_AMPERE);
        default:
                return true;
        }
}

const char *smi_row_xml(const smi_field_def_t *def, unsigned key)
{
        return def->renamed && key && key < def->renamed && def->old_xml ? def->old_xml : def->xml;
}

const char *smi_row_label(const smi_field_def_t *def, unsigned key)
{
        return def->renamed && key && key < def->renamed && def->old_label ? def->old_label : def->label;
}

const smi_field_def_t *smi_field_by_id(smi_field_id_t id)
{
        for (size_t i = 0; i < GV_ARRAY_SIZE(field_table); i++)
                if (field_table[i].id == id)
                        return &field_table[i];
        return NULL;
}

void smi_field_read(const smi_field_def_t *def, const smi_src_t *src, smi_value_t *v)
{
        memset(v, 0, sizeof(*v));
        if (!def || !def->get) {
                v->ret = NVML_ERROR_UNKNOWN;
                return;
        }
        def->get(src, def->arg, v);
}

void smi_field_get(smi_field_id_t id, const smi_src_t *src, smi_value_t *v)
{
        smi_field_read(smi_field_by_id(id), src, v);
}
