// SPDX-License-Identifier: Apache-2.0
//! Calls every getter nvml-wrapper 0.9 offers on every device of the NVML
//! library given as argv[1] and prints one line per call:
//!     <device index>\t<getter>\t<ok|err>\t<value or error>
//! A symbol the library lacks shows as `err\tFailedToLoadSymbol`; a panic in
//! a call as `err\tpanic`.  tests/e2e/test_nvml_wrapper.py judges the lines.
#![allow(deprecated)]
use std::ffi::OsStr;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

use nvml_wrapper::enum_wrappers::device::*;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::Nvml;

fn report<T: Debug>(dev: &str, name: &str, f: impl FnOnce() -> Result<T, NvmlError>) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => println!("{}\t{}\tok\t{:?}", dev, name, v),
        Ok(Err(NvmlError::FailedToLoadSymbol(s))) => println!("{}\t{}\terr\tFailedToLoadSymbol {}", dev, name, s),
        Ok(Err(e)) => println!("{}\t{}\terr\t{:?}", dev, name, e),
        Err(_) => println!("{}\t{}\terr\tpanic", dev, name),
    }
}

macro_rules! g {
    ($dev:expr, $d:ident . $m:ident ( $($a:expr),* )) => {
        report($dev, concat!(stringify!($m), stringify!(($($a),*))), || $d.$m($($a),*))
    };
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: nvml-wrapper-sweep <libnvidia-ml.so.1>");
    let nvml = match Nvml::builder().lib_path(OsStr::new(&path)).init() {
        Ok(n) => n,
        Err(e) => {
            println!("-\tinit\terr\t{:?}", e);
            std::process::exit(1);
        }
    };
    let n = &nvml;
    g!("-", n.device_count());
    g!("-", n.sys_driver_version());
    g!("-", n.sys_nvml_version());
    g!("-", n.sys_cuda_driver_version());
    g!("-", n.unit_count());
    g!("-", n.hic_count());
    g!("-", n.excluded_device_count());
    report("-", "create_event_set()", || n.create_event_set().map(|_| ()));
    let count = nvml.device_count().unwrap_or(0);
    for i in 0..count {
        let d = match nvml.device_by_index(i) {
            Ok(d) => d,
            Err(e) => {
                println!("{}\tdevice_by_index\terr\t{:?}", i, e);
                continue;
            }
        };
        let s = i.to_string();
        let dv = s.as_str();
        g!(dv, d.name());
        g!(dv, d.uuid());
        g!(dv, d.index());
        g!(dv, d.minor_number());
        g!(dv, d.serial());
        g!(dv, d.board_part_number());
        g!(dv, d.vbios_version());
        g!(dv, d.brand());
        g!(dv, d.architecture());
        g!(dv, d.cuda_compute_capability());
        g!(dv, d.pci_info());
        g!(dv, d.memory_info());
        g!(dv, d.bar1_memory_info());
        g!(dv, d.temperature(TemperatureSensor::Gpu));
        for t in [TemperatureThreshold::Shutdown, TemperatureThreshold::Slowdown, TemperatureThreshold::MemoryMax,
                  TemperatureThreshold::GpuMax] {
            report(dv, &format!("temperature_threshold({:?})", t), || d.temperature_threshold(t.clone()));
        }
        g!(dv, d.power_usage());
        g!(dv, d.power_management_limit());
        g!(dv, d.power_management_limit_default());
        g!(dv, d.power_management_limit_constraints());
        g!(dv, d.enforced_power_limit());
        g!(dv, d.is_power_management_algo_active());
        g!(dv, d.power_state());
        g!(dv, d.power_source());
        g!(dv, d.total_energy_consumption());
        for c in [Clock::Graphics, Clock::SM, Clock::Memory, Clock::Video] {
            report(dv, &format!("clock_info({:?})", c), || d.clock_info(c.clone()));
            report(dv, &format!("max_clock_info({:?})", c), || d.max_clock_info(c.clone()));
            report(dv, &format!("applications_clock({:?})", c), || d.applications_clock(c.clone()));
            report(dv, &format!("default_applications_clock({:?})", c), || d.default_applications_clock(c.clone()));
            report(dv, &format!("max_customer_boost_clock({:?})", c), || d.max_customer_boost_clock(c.clone()));
            report(dv, &format!("clock({:?}, Current)", c), || d.clock(c.clone(), ClockId::Current));
        }
        g!(dv, d.supported_memory_clocks());
        g!(dv, d.supported_graphics_clocks(1215));
        g!(dv, d.auto_boosted_clocks_enabled());
        g!(dv, d.current_throttle_reasons());
        g!(dv, d.supported_throttle_reasons());
        g!(dv, d.utilization_rates());
        g!(dv, d.encoder_utilization());
        g!(dv, d.decoder_utilization());
        g!(dv, d.encoder_capacity(EncoderType::H264));
        g!(dv, d.encoder_stats());
        g!(dv, d.encoder_sessions());
        g!(dv, d.fbc_stats());
        g!(dv, d.fbc_sessions_info());
        g!(dv, d.fbc_session_count());
        g!(dv, d.num_fans());
        g!(dv, d.fan_speed(0));
        g!(dv, d.is_in_persistent_mode());
        g!(dv, d.compute_mode());
        g!(dv, d.is_ecc_enabled());
        for (e, c) in [(MemoryError::Corrected, EccCounter::Volatile), (MemoryError::Uncorrected, EccCounter::Aggregate)] {
            report(dv, &format!("total_ecc_errors({:?}, {:?})", e, c), || d.total_ecc_errors(e.clone(), c.clone()));
            report(dv, &format!("detailed_ecc_errors({:?}, {:?})", e, c),
                   || d.detailed_ecc_errors(e.clone(), c.clone()));
            report(dv, &format!("memory_error_counter({:?}, {:?}, DeviceMemory)", e, c),
                   || d.memory_error_counter(e.clone(), c.clone(), MemoryLocation::Device));
        }
        g!(dv, d.retired_pages(RetirementCause::DoubleBitEccError));
        g!(dv, d.are_pages_pending_retired());
        g!(dv, d.performance_state());
        g!(dv, d.is_display_active());
        g!(dv, d.is_display_connected());
        g!(dv, d.gpu_operation_mode());
        g!(dv, d.current_pcie_link_gen());
        g!(dv, d.current_pcie_link_width());
        g!(dv, d.max_pcie_link_gen());
        g!(dv, d.max_pcie_link_width());
        g!(dv, d.pcie_link_max_speed());
        g!(dv, d.pcie_replay_counter());
        g!(dv, d.pcie_throughput(PcieUtilCounter::Send));
        g!(dv, d.pcie_throughput(PcieUtilCounter::Receive));
        g!(dv, d.bus_type());
        g!(dv, d.memory_bus_width());
        g!(dv, d.num_cores());
        g!(dv, d.irq_num());
        g!(dv, d.board_id());
        g!(dv, d.is_multi_gpu_board());
        g!(dv, d.bridge_chip_info());
        g!(dv, d.cpu_affinity(8));
        g!(dv, d.config_checksum());
        g!(dv, d.info_rom_image_version());
        g!(dv, d.info_rom_version(InfoRom::OEM));
        g!(dv, d.validate_info_rom());
        g!(dv, d.is_api_restricted(Api::ApplicationClocks));
        g!(dv, d.is_accounting_enabled());
        g!(dv, d.accounting_buffer_size());
        g!(dv, d.accounting_pids());
        g!(dv, d.supported_event_types());
        g!(dv, d.violation_status(PerformancePolicy::Power));
        g!(dv, d.topology_nearest_gpus(TopologyLevel::System));
        g!(dv, d.samples(Sampling::Power, None));
        g!(dv, d.process_utilization_stats(None));
        report(dv, "running_compute_processes()", || {
            d.running_compute_processes().map(|v| {
                v.iter().map(|p| (p.pid, match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => b,
                    UsedGpuMemory::Unavailable => 0,
                })).collect::<Vec<_>>()
            })
        });
        g!(dv, d.running_compute_processes_count());
        report(dv, "running_compute_processes_v2()", || {
            d.running_compute_processes_v2().map(|v| v.iter().map(|p| p.pid).collect::<Vec<_>>())
        });
        g!(dv, d.running_graphics_processes_count());
        g!(dv, d.running_compute_processes_count_v2());
        g!(dv, d.running_graphics_processes_count_v2());
        report(dv, "running_graphics_processes()", || {
            d.running_graphics_processes().map(|v| v.iter().map(|p| p.pid).collect::<Vec<_>>())
        });
        report(dv, "running_graphics_processes_v2()", || {
            d.running_graphics_processes_v2().map(|v| v.iter().map(|p| p.pid).collect::<Vec<_>>())
        });
        report(dv, "field_values_for(ECC_CURRENT, POWER_INSTANT, MEMORY_TEMP)", || {
            d.field_values_for(&[FieldId(1), FieldId(186), FieldId(82)])
                .map(|v| v.into_iter().map(|r| r.map(|s| s.value)).collect::<Vec<_>>())
        });
        for l in 0..2 {
            let link = d.link_wrapper_for(l);
            report(dv, &format!("nvlink({}).is_active()", l), || link.is_active());
            report(dv, &format!("nvlink({}).version()", l), || link.version());
            report(dv, &format!("nvlink({}).remote_pci_info()", l), || link.remote_pci_info());
        }
        if let Ok(other) = nvml.device_by_index((i + 1) % count) {
            report(dv, "topology_common_ancestor(next)", || d.topology_common_ancestor(other));
        }
    }
}
