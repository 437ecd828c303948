// Command nvml-walk walks NVIDIA's go-nvml getters over every GPU and MIG device of the NVML
// it loads (libnvidia-ml.so.1 on the library path) and prints one JSON document on stdout:
// what the GPUs are (count, names, UUIDs, memory, MIG devices) and, per getter, how many calls
// answered each nvml.Return. Two lists of getters:
//   - "named": the calls NVIDIA's k8s-device-plugin (through go-nvlib and go-gpuallocator) and
//     DCGM-exporter's NVML fields make, with their arguments;
//   - "sweep": every method of go-nvml's Device interface that takes no argument, called by
//     reflection (so a getter that go-nvml adds is swept without a change here).
//
// It is part of the real-client suite (tests/clients/run.py); exit 0 unless NVML init fails.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

type migInfo struct {
	UUID        string `json:"uuid"`
	GpuInstance int    `json:"gpu_instance"`
	Compute     int    `json:"compute_instance"`
	MemoryMiB   uint64 `json:"memory_mib"`
	Multiproc   uint32 `json:"multiprocessors"`
}

type gpuInfo struct {
	Index     int       `json:"index"`
	Return    string    `json:"return"`
	UUID      string    `json:"uuid"`
	Name      string    `json:"name"`
	MemoryMiB uint64    `json:"memory_mib"`
	MigMode   int       `json:"mig_mode"`
	Mig       []migInfo `json:"mig"`
}

type report struct {
	Driver string                    `json:"driver"`
	Cuda   int                       `json:"cuda"`
	Count  int                       `json:"count"`
	GPUs   []gpuInfo                 `json:"gpus"`
	Named  map[string]map[string]int `json:"named"`
	Sweep  map[string]map[string]int `json:"sweep"`
}

func (r *report) count(table map[string]map[string]int, name string, ret nvml.Return) {
	if table[name] == nil {
		table[name] = map[string]int{}
	}
	table[name][retName(ret)]++
}

func retName(ret nvml.Return) string {
	if ret == nvml.SUCCESS {
		return "SUCCESS"
	}
	return nvml.ErrorString(ret)
}

// namedCalls are the device plugin's and DCGM-exporter's getters on one device (other: a second GPU
// for topology, or nil).
func namedCalls(d, other nvml.Device) map[string]func() nvml.Return {
	c := map[string]func() nvml.Return{
		"GetUUID":                   func() nvml.Return { _, r := d.GetUUID(); return r },
		"GetName":                   func() nvml.Return { _, r := d.GetName(); return r },
		"GetIndex":                  func() nvml.Return { _, r := d.GetIndex(); return r },
		"GetMinorNumber":            func() nvml.Return { _, r := d.GetMinorNumber(); return r },
		"GetPciInfo":                func() nvml.Return { _, r := d.GetPciInfo(); return r },
		"GetMemoryInfo":             func() nvml.Return { _, r := d.GetMemoryInfo(); return r },
		"GetMemoryInfo_v2":          func() nvml.Return { _, r := d.GetMemoryInfo_v2(); return r },
		"GetCudaComputeCapability":  func() nvml.Return { _, _, r := d.GetCudaComputeCapability(); return r },
		"GetArchitecture":           func() nvml.Return { _, r := d.GetArchitecture(); return r },
		"GetBrand":                  func() nvml.Return { _, r := d.GetBrand(); return r },
		"GetMigMode":                func() nvml.Return { _, _, r := d.GetMigMode(); return r },
		"GetMaxMigDeviceCount":      func() nvml.Return { _, r := d.GetMaxMigDeviceCount(); return r },
		"GetSupportedEventTypes":    func() nvml.Return { _, r := d.GetSupportedEventTypes(); return r },
		"GetGpuFabricInfo":          func() nvml.Return { _, r := d.GetGpuFabricInfo(); return r },
		"GetCpuAffinity":            func() nvml.Return { _, r := d.GetCpuAffinity(4); return r },
		"GetNvLinkState(0)":         func() nvml.Return { _, r := d.GetNvLinkState(0); return r },
		"GetNvLinkRemotePciInfo(0)": func() nvml.Return { _, r := d.GetNvLinkRemotePciInfo(0); return r },
		// DCGM-exporter's default counters (DCGM reads them through NVML).
		"GetClockInfo(SM)":          func() nvml.Return { _, r := d.GetClockInfo(nvml.CLOCK_SM); return r },
		"GetClockInfo(MEM)":         func() nvml.Return { _, r := d.GetClockInfo(nvml.CLOCK_MEM); return r },
		"GetMaxClockInfo(SM)":       func() nvml.Return { _, r := d.GetMaxClockInfo(nvml.CLOCK_SM); return r },
		"GetTemperature(GPU)":       func() nvml.Return { _, r := d.GetTemperature(nvml.TEMPERATURE_GPU); return r },
		"GetPowerUsage":             func() nvml.Return { _, r := d.GetPowerUsage(); return r },
		"GetTotalEnergyConsumption": func() nvml.Return { _, r := d.GetTotalEnergyConsumption(); return r },
		"GetUtilizationRates":       func() nvml.Return { _, r := d.GetUtilizationRates(); return r },
		"GetEncoderUtilization":     func() nvml.Return { _, _, r := d.GetEncoderUtilization(); return r },
		"GetDecoderUtilization":     func() nvml.Return { _, _, r := d.GetDecoderUtilization(); return r },
		"GetPcieThroughput(TX)":     func() nvml.Return { _, r := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); return r },
		"GetPcieReplayCounter":      func() nvml.Return { _, r := d.GetPcieReplayCounter(); return r },
		"GetBAR1MemoryInfo":         func() nvml.Return { _, r := d.GetBAR1MemoryInfo(); return r },
		"GetTotalEccErrors(DBE)": func() nvml.Return {
			_, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
			return r
		},
		"GetRetiredPages(DBE)": func() nvml.Return {
			_, r := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
			return r
		},
		"GetRemappedRows":              func() nvml.Return { _, _, _, _, r := d.GetRemappedRows(); return r },
		"GetCurrentClocksEventReasons": func() nvml.Return { _, r := d.GetCurrentClocksEventReasons(); return r },
		"GetViolationStatus(POWER)":    func() nvml.Return { _, r := d.GetViolationStatus(nvml.PERF_POLICY_POWER); return r },
		"GetNvLinkErrorCounter(0)":     func() nvml.Return { _, r := d.GetNvLinkErrorCounter(0, nvml.NVLINK_ERROR_DL_CRC_FLIT); return r },
		"GetVbiosVersion":              func() nvml.Return { _, r := d.GetVbiosVersion(); return r },
		"GetSerial":                    func() nvml.Return { _, r := d.GetSerial(); return r },
		"GetEnforcedPowerLimit":        func() nvml.Return { _, r := d.GetEnforcedPowerLimit(); return r },
		"GetPerformanceState":          func() nvml.Return { _, r := d.GetPerformanceState(); return r },
		"GetComputeRunningProcesses":   func() nvml.Return { _, r := d.GetComputeRunningProcesses(); return r },
		"GetVirtualizationMode":        func() nvml.Return { _, r := d.GetVirtualizationMode(); return r },
		"GetFieldValues(MEMORY_TEMP)": func() nvml.Return {
			v := []nvml.FieldValue{{FieldId: nvml.FI_DEV_MEMORY_TEMP}}
			if r := d.GetFieldValues(v); r != nvml.SUCCESS {
				return r
			}
			return nvml.Return(v[0].NvmlReturn)
		},
	}
	if other != nil {
		c["GetTopologyCommonAncestor"] = func() nvml.Return { _, r := d.GetTopologyCommonAncestor(other); return r }
	}
	return c
}

// sweep calls every no-argument method of go-nvml's Device interface on @d.
func (r *report) sweep(d nvml.Device, label string) {
	v := reflect.ValueOf(d)
	t := reflect.TypeOf((*nvml.Device)(nil)).Elem()
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		if m.Type.NumIn() != 0 || m.Type.NumOut() == 0 || len(m.Name) < 3 || m.Name[:3] != "Get" {
			continue
		}
		out := v.MethodByName(m.Name).Call(nil)
		last := out[len(out)-1]
		if ret, ok := last.Interface().(nvml.Return); ok {
			r.count(r.Sweep, label+m.Name, ret)
		}
	}
}

func main() {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		fmt.Fprintf(os.Stderr, "nvml-walk: nvml.Init: %s\n", nvml.ErrorString(ret))
		os.Exit(1)
	}
	defer nvml.Shutdown()
	r := &report{Named: map[string]map[string]int{}, Sweep: map[string]map[string]int{}}
	r.Driver, _ = nvml.SystemGetDriverVersion()
	r.Cuda, _ = nvml.SystemGetCudaDriverVersion()
	r.Count, _ = nvml.DeviceGetCount()
	devices := make([]nvml.Device, r.Count)
	for i := range devices {
		devices[i], _ = nvml.DeviceGetHandleByIndex(i)
	}
	for i, d := range devices {
		g := gpuInfo{Index: i, Mig: []migInfo{}}
		if d == nil {
			g.Return = "no handle"
			r.GPUs = append(r.GPUs, g)
			continue
		}
		var ret nvml.Return
		g.UUID, ret = d.GetUUID()
		g.Return = retName(ret)
		g.Name, _ = d.GetName()
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryMiB = m.Total >> 20
		}
		g.MigMode, _, _ = d.GetMigMode()
		var other nvml.Device
		if r.Count > 1 {
			other = devices[(i+1)%r.Count]
		}
		calls := namedCalls(d, other)
		for name, f := range calls {
			r.count(r.Named, name, f())
		}
		if h, ret := nvml.DeviceGetHandleByUUID(g.UUID); ret == nvml.SUCCESS && h != nil {
			r.count(r.Named, "DeviceGetHandleByUUID", ret)
		}
		r.sweep(d, "")
		if g.MigMode == nvml.DEVICE_MIG_ENABLE {
			n, _ := d.GetMaxMigDeviceCount()
			for j := 0; j < n; j++ {
				m, ret := d.GetMigDeviceHandleByIndex(j)
				if ret != nvml.SUCCESS {
					continue
				}
				mi := migInfo{}
				mi.UUID, _ = m.GetUUID()
				mi.GpuInstance, _ = m.GetGpuInstanceId()
				mi.Compute, _ = m.GetComputeInstanceId()
				if mem, ret := m.GetMemoryInfo(); ret == nvml.SUCCESS {
					mi.MemoryMiB = mem.Total >> 20
				}
				a, ret := m.GetAttributes()
				r.count(r.Named, "MIG:GetAttributes", ret)
				mi.Multiproc = a.MultiprocessorCount
				_, ret = m.GetDeviceHandleFromMigDeviceHandle()
				r.count(r.Named, "MIG:GetDeviceHandleFromMigDeviceHandle", ret)
				gi, ret := d.GetGpuInstanceById(mi.GpuInstance)
				r.count(r.Named, "GetGpuInstanceById", ret)
				if ret == nvml.SUCCESS {
					_, ret = gi.GetInfo()
					r.count(r.Named, "GpuInstance.GetInfo", ret)
					ci, ret := gi.GetComputeInstanceById(mi.Compute)
					r.count(r.Named, "GpuInstance.GetComputeInstanceById", ret)
					if ret == nvml.SUCCESS {
						_, ret = ci.GetInfo()
						r.count(r.Named, "ComputeInstance.GetInfo", ret)
					}
				}
				r.sweep(m, "MIG:")
				g.Mig = append(g.Mig, mi)
			}
		}
		r.GPUs = append(r.GPUs, g)
	}
	set, ret := nvml.EventSetCreate()
	r.count(r.Named, "EventSetCreate", ret)
	if ret == nvml.SUCCESS {
		for _, d := range devices {
			if d != nil {
				r.count(r.Named, "RegisterEvents(Xid)", d.RegisterEvents(nvml.EventTypeXidCriticalError, set))
			}
		}
		_, ret = set.Wait(1)
		r.count(r.Named, "EventSet.Wait", ret)
		set.Free()
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		os.Exit(1)
	}
}
