"""End-to-end tests of the sandbox, vGPU and GPUDirect components (docs/components.md):
the real binary on sysfs fixture trees built here, laid out
as the kernel does (devices under devices/pci0000:00, bus/pci/devices links,
driver and physfn links, mdev types, parents and devices, module folders)."""
import os
import re
import time

import chain
import gvtest

NVIDIA, MELLANOX = 0x10DE, 0x15B3


class Sysfs:
    """A sysfs tree under @root, written the way the kernel shows it."""

    def __init__(self, root):
        self.root = root
        for d in ("devices/pci0000:00", "bus/pci/devices", "bus/pci/drivers", "module"):
            os.makedirs(os.path.join(root, d), exist_ok=True)

    def dev(self, addr):
        return os.path.join(self.root, "devices/pci0000:00", addr)

    def _write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def add_function(self, addr, vendor=NVIDIA, cls=0x030200, device=0x20B0, driver=None, physfn=None):
        d = self.dev(addr)
        os.makedirs(d)
        self._write(os.path.join(d, "vendor"), f"0x{vendor:04x}\n")
        self._write(os.path.join(d, "class"), f"0x{cls:06x}\n")
        self._write(os.path.join(d, "device"), f"0x{device:04x}\n")
        os.symlink(f"../../../devices/pci0000:00/{addr}", os.path.join(self.root, "bus/pci/devices", addr))
        if driver:
            self.bind(addr, driver)
        if physfn:
            os.symlink(f"../{physfn}", os.path.join(d, "physfn"))
        return d

    def bind(self, addr, driver):
        link = os.path.join(self.dev(addr), "driver")
        if os.path.lexists(link):
            os.unlink(link)
        os.makedirs(os.path.join(self.root, "bus/pci/drivers", driver), exist_ok=True)
        os.symlink(f"../../../bus/pci/drivers/{driver}", link)

    def add_gpu(self, addr, driver="nvidia", totalvfs=None, numvfs=0, mdev_types=(), mdev_bus=False, **kw):
        d = self.add_function(addr, driver=driver, **kw)
        if totalvfs is not None:
            self.set_vfs(addr, numvfs, totalvfs)
        for t in mdev_types:
            self._write(os.path.join(d, "mdev_supported_types", t, "name"), f"GRID {t}\n")
        if mdev_bus:
            self.mdev_parent(addr)
        return d

    def set_vfs(self, addr, numvfs, totalvfs):
        self._write(os.path.join(self.dev(addr), "sriov_numvfs"), f"{numvfs}\n")
        self._write(os.path.join(self.dev(addr), "sriov_totalvfs"), f"{totalvfs}\n")

    def mdev_parent(self, addr):
        os.makedirs(os.path.join(self.root, "class/mdev_bus"), exist_ok=True)
        os.symlink(f"../../devices/pci0000:00/{addr}", os.path.join(self.root, "class/mdev_bus", addr))

    def add_vf(self, pf, addr, vgpu_type=None, mdev_bus=False):
        d = self.add_function(addr, driver="nvidia", physfn=pf)
        if vgpu_type is not None:
            self._write(os.path.join(d, "nvidia", "current_vgpu_type"), f"{vgpu_type}\n")
        if mdev_bus:
            self.mdev_parent(addr)

    def add_mdev(self, uuid, parent, type_name="nvidia-256"):
        d = os.path.join(self.dev(parent), uuid)
        types = os.path.join(self.dev(parent), "mdev_supported_types", type_name)
        self._write(os.path.join(types, "name"), "GRID A100-4C\n")
        os.makedirs(d)
        os.symlink(f"../mdev_supported_types/{type_name}", os.path.join(d, "mdev_type"))
        os.makedirs(os.path.join(self.root, "bus/mdev/devices"), exist_ok=True)
        os.symlink(f"../../../devices/pci0000:00/{parent}/{uuid}", os.path.join(self.root, "bus/mdev/devices", uuid))

    def load_module(self, name, initstate="live"):
        self._write(os.path.join(self.root, "module", name, "initstate"), initstate + "\n")


class SandboxTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)
        self.sys = Sysfs(self.path("sys"))
        os.makedirs(self.node.status, exist_ok=True)

    def run_gv(self, components, *extra, env=None, check=None, timeout=60):
        return self.node.run(components, "--sysfs-root", self.sys.root, *extra, env=env, check=check,
                             timeout=timeout)

    def workload_type(self):
        with open(self.node.marker("workload-type")) as f:
            return f.read()

    def fake_smi(self, root):
        path = os.path.join(root, "usr/bin/nvidia-smi")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#!/bin/sh\necho vGPU manager\nexit 0\n")
        os.chmod(path, 0o755)

    def assert_invariant(self):
        self.assertEqual(chain.invariant_violations(self.node.status, self.node.boot), [])


class TestVfioPci(SandboxTestCase):
    def test_all_gpus_bound_to_vfio_is_ready_and_writes_workload_type(self):
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        self.sys.add_gpu("0000:86:00.0", driver="nvgrace_gpu_vfio_pci")
        self.sys.add_function("0000:01:00.0", vendor=0x8086, cls=0x020000, driver="ixgbe")  # not a GPU
        self.run_gv("vfio-pci", check=0)
        self.assertEqual(self.workload_type(), "vm-passthrough\n")  # upstream's default
        m = self.node.read("vfio-pci-ready")
        self.assertEqual(m["GPU_COUNT"], "2")
        self.assertEqual(m["WORKLOAD_CONFIG"], "vm-passthrough")
        self.assertEqual(m["PCI_DRIVERS"], "0000:3b:00.0=vfio-pci,0000:86:00.0=nvgrace_gpu_vfio_pci")

    def test_gpu_bound_to_nvidia_fails_naming_it(self):
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        self.sys.add_gpu("0000:86:00.0", driver="nvidia", device=0x2330)
        self.sys.add_gpu("0000:af:00.0", driver=None)
        p = self.run_gv("vfio-pci", check=1)
        self.assertIn("pci-not-ready", p.stdout)
        self.assertIn("2 of 3 GPUs", p.stdout)
        self.assertIn("0000:86:00.0 (device 0x2330) is bound to nvidia", p.stdout)
        self.assertIn("0000:af:00.0 (device 0x20b0) is bound to no driver", p.stdout)
        self.assertFalse(self.node.exists("vfio-pci-ready"))

    def test_bounded_wait_ends_with_timeout_and_then_binding_passes(self):
        self.sys.add_gpu("0000:3b:00.0", driver="nvidia")
        t0 = time.monotonic()
        p = self.run_gv("vfio-pci", "--wait", "--max-wait", "2", "--sleep-interval", "1", check=3)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertIn("not ready after 2 s", p.stdout)
        self.assertIn("0000:3b:00.0", p.stdout)
        self.sys.bind("0000:3b:00.0", "vfio-pci")
        self.run_gv("vfio-pci", check=0)
        self.assertTrue(self.node.exists("vfio-pci-ready"))

    def test_other_workload_config_skips_and_removes_stale_marker(self):
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        self.run_gv("vfio-pci", check=0)
        p = self.run_gv("vfio-pci", "--default-workload-config", "container", check=0)
        self.assertIn("skipped", p.stdout)
        self.assertEqual(self.workload_type(), "container\n")
        self.assertFalse(self.node.exists("vfio-pci-ready"))

    def test_invalid_default_workload_config_falls_back_as_upstream(self):
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        env = gvtest.clean_env(DEFAULT_GPU_WORKLOAD_CONFIG="vm-whatever")
        p = self.run_gv("vfio-pci", env=env, check=0)
        self.assertIn("DEFAULT_GPU_WORKLOAD_CONFIG=vm-whatever", p.stderr)
        self.assertEqual(self.workload_type(), "vm-passthrough\n")

    def test_upstream_drop_in_with_COMPONENT_and_GV_SYSFS_ROOT(self):
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        env = gvtest.clean_env(COMPONENT="vfio-pci", OUTPUT_DIR=self.node.status, GV_SYSFS_ROOT=self.sys.root,
                               DEFAULT_GPU_WORKLOAD_CONFIG="vm-passthrough")
        p = gvtest.run([], env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(self.node.exists("vfio-pci-ready"))


class TestVgpuManager(SandboxTestCase):
    def setUp(self):
        super().setUp()
        self.fake_smi(self.node.driver)  # the vGPU manager container's root

    def vgpu(self, *extra, check=None):
        return self.run_gv("vgpu-manager", "--default-workload-config", "vm-vgpu", *extra, check=check)

    def test_mdev_gpu_advertising_vfs_is_ready_without_waiting_for_vfs(self):
        # gpu-operator #2365: a T4 advertises sriov_totalvfs=16 but carries mdev types.
        self.sys.add_gpu("0000:3b:00.0", device=0x1EB8, totalvfs=16, numvfs=0, mdev_types=("nvidia-222",),
                         mdev_bus=True)
        self.vgpu(check=0)
        m = self.node.read("vgpu-manager-ready")
        self.assertEqual(m["VGPU_SHAPE"], "mdev")
        self.assertEqual(m["IS_HOST_VGPU_MANAGER"], "false")
        self.assertFalse(self.node.exists("host-vgpu-manager-ready"))
        self.assertEqual(self.workload_type(), "vm-vgpu\n")

    def test_sriov_all_vfs_enabled_is_ready(self):
        self.sys.add_gpu("0000:3b:00.0", totalvfs=16, numvfs=16)
        self.sys.add_gpu("0000:86:00.0", totalvfs=16, numvfs=16)
        self.vgpu(check=0)
        self.assertEqual(self.node.read("vgpu-manager-ready")["VGPU_SHAPE"], "sriov")
        self.assertEqual(self.node.read("vgpu-manager-ready")["GPU_COUNT"], "2")

    def test_sriov_vfs_as_mdev_parents_is_mdev(self):
        self.sys.add_gpu("0000:3b:00.0", totalvfs=2, numvfs=2)
        self.sys.add_vf("0000:3b:00.0", "0000:3b:00.4", mdev_bus=True)
        self.sys.add_vf("0000:3b:00.0", "0000:3b:00.5", mdev_bus=True)
        self.vgpu(check=0)
        self.assertEqual(self.node.read("vgpu-manager-ready")["VGPU_SHAPE"], "mdev")

    def test_vf_count_that_never_completes_times_out_naming_counts(self):
        self.sys.add_gpu("0000:3b:00.0", totalvfs=16, numvfs=16)
        self.sys.add_gpu("0000:86:00.0", totalvfs=16, numvfs=4)
        t0 = time.monotonic()
        p = self.vgpu("--wait", "--max-wait", "2", "--sleep-interval", "1", check=3)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertIn("1 of 2 GPUs not ready for vGPU", p.stdout)
        self.assertIn("0000:86:00.0 (device 0x20b0, driver nvidia): sriov_numvfs 4 of sriov_totalvfs 16", p.stdout)
        self.assertNotIn("0000:3b:00.0 (", p.stdout)
        self.assertFalse(self.node.exists("vgpu-manager-ready"))

    def test_no_gpu_fails(self):
        p = self.vgpu(check=1)
        self.assertIn("no NVIDIA GPU", p.stdout)

    def test_host_manager_writes_both_markers_and_container_removes_companion(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-222",))
        self.fake_smi(self.node.host)
        self.vgpu(check=0)
        h = self.node.read("host-vgpu-manager-ready")
        m = self.node.read("vgpu-manager-ready")
        self.assertEqual(m["IS_HOST_VGPU_MANAGER"], "true")
        self.assertEqual(h["GENERATION"], m["GENERATION"])
        os.unlink(os.path.join(self.node.host, "usr/bin/nvidia-smi"))
        self.vgpu(check=0)
        self.assertFalse(self.node.exists("host-vgpu-manager-ready"))
        self.assertEqual(self.node.read("vgpu-manager-ready")["IS_HOST_VGPU_MANAGER"], "false")

    def test_no_manager_fails_listing_where_it_looked(self):
        os.unlink(os.path.join(self.node.driver, "usr/bin/nvidia-smi"))
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-222",))
        p = self.vgpu(check=1)
        self.assertIn("vGPU manager not found", p.stdout)
        self.assertIn(os.path.join(self.node.host, "usr/bin/nvidia-smi"), p.stdout + p.stderr)

    def test_failing_manager_nvidia_smi_fails(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-222",))
        with open(os.path.join(self.node.driver, "usr/bin/nvidia-smi"), "w") as f:
            f.write("#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n")
        p = self.vgpu(check=1)
        self.assertIn("vGPU manager", p.stdout)
        self.assertFalse(self.node.exists("vgpu-manager-ready"))


class TestVgpuDevices(SandboxTestCase):
    def setUp(self):
        super().setUp()
        self.fake_smi(self.node.driver)

    def vgpu(self, components, *extra, check=None):
        return self.run_gv(components, "--default-workload-config", "vm-vgpu", *extra, check=check)

    def test_mdev_device_on_nvidia_gpu_is_ready_and_chained(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-256",), mdev_bus=True)
        self.sys.add_mdev("aa6b4e2c-0000-4000-8000-000000000001", "0000:3b:00.0")
        self.vgpu("vgpu-manager,vgpu-devices", check=0)
        m = self.node.read("vgpu-manager-ready")
        d = self.node.read("vgpu-devices-ready")
        self.assertEqual(d["VGPU_MANAGER_GENERATION"], m["GENERATION"])
        self.assertEqual(d["VGPU_DEVICE_COUNT"], "1")
        self.assertEqual(d["VGPU_DEVICES"], "aa6b4e2c-0000-4000-8000-000000000001@0000:3b:00.0(GRID A100-4C)")
        self.assert_invariant()

    def test_sriov_vf_with_vgpu_type_is_ready_without_mdev_bus(self):
        # gpu-operator #2594: vendor-specific VFIO, no /sys/bus/mdev at all.
        self.sys.add_gpu("0000:3b:00.0", totalvfs=2, numvfs=2)
        self.sys.add_vf("0000:3b:00.0", "0000:3b:00.4", vgpu_type="558")
        self.sys.add_vf("0000:3b:00.0", "0000:3b:00.5", vgpu_type="0")
        self.vgpu("vgpu-manager,vgpu-devices", check=0)
        d = self.node.read("vgpu-devices-ready")
        self.assertEqual(d["VGPU_DEVICES"], "0000:3b:00.4(type 558)")

    def test_no_device_fails_saying_what_it_found(self):
        self.sys.add_gpu("0000:3b:00.0", totalvfs=2, numvfs=2)
        self.sys.add_vf("0000:3b:00.0", "0000:3b:00.4", vgpu_type="0")
        self.sys.add_function("0000:05:00.0", vendor=0x1AF4, cls=0x010000)
        self.sys.add_mdev("aa6b4e2c-0000-4000-8000-000000000009", "0000:05:00.0")  # not an NVIDIA parent
        p = self.vgpu("vgpu-manager,vgpu-devices", check=1)
        self.assertIn("no vGPU device on the 1 NVIDIA GPU", p.stdout)
        self.assertIn("1 mdev device under", p.stdout)
        self.assertIn("1 VF, none with nvidia/current_vgpu_type set", p.stdout)
        self.assertTrue(self.node.exists("vgpu-manager-ready"))
        self.assertFalse(self.node.exists("vgpu-devices-ready"))

    def test_needs_vgpu_manager_ready(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-256",), mdev_bus=True)
        self.sys.add_mdev("aa6b4e2c-0000-4000-8000-000000000001", "0000:3b:00.0")
        p = self.vgpu("vgpu-devices", check=1)
        self.assertIn("dependency-not-ready", p.stdout)
        self.assertFalse(self.node.exists("vgpu-devices-ready"))

    def test_revalidating_the_manager_removes_devices_first(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-256",), mdev_bus=True)
        self.sys.add_mdev("aa6b4e2c-0000-4000-8000-000000000001", "0000:3b:00.0")
        self.vgpu("vgpu-manager,vgpu-devices", check=0)
        os.unlink(os.path.join(self.sys.root, "class/mdev_bus/0000:3b:00.0"))
        os.rename(os.path.join(self.sys.dev("0000:3b:00.0"), "mdev_supported_types"),
                  os.path.join(self.sys.dev("0000:3b:00.0"), "gone"))
        self.vgpu("vgpu-manager", check=1)
        self.assertFalse(self.node.exists("vgpu-devices-ready"))
        self.assertFalse(self.node.exists("vgpu-manager-ready"))
        self.assert_invariant()

    def test_status_lists_the_sandbox_markers(self):
        self.sys.add_gpu("0000:3b:00.0", mdev_types=("nvidia-256",), mdev_bus=True)
        self.sys.add_mdev("aa6b4e2c-0000-4000-8000-000000000001", "0000:3b:00.0")
        self.vgpu("vgpu-manager,vgpu-devices", check=0)
        p = gvtest.run(["status", *self.node.store_args()])
        self.assertRegex(p.stdout, r"vgpu-devices-ready\s+ready")
        self.assertRegex(p.stdout, r"vgpu-manager-ready\s+ready")


class TestSandboxSkipRule(SandboxTestCase):
    """One rule for every sandbox component, as upstream: each skips unless the node's workload
    config is its own (vfio-pci: vm-passthrough; vgpu-manager, vgpu-devices: vm-vgpu), before it
    looks at anything else, its parent marker included."""

    def test_each_skips_unless_its_workload_config(self):
        self.fake_smi(self.node.driver)
        self.sys.add_gpu("0000:3b:00.0", driver="vfio-pci")
        for config, runs in (("container", ()), ("vm-passthrough", ("vfio-pci",)),
                             ("vm-vgpu", ("vgpu-manager", "vgpu-devices"))):
            with self.subTest(config=config):
                p = self.run_gv("vfio-pci,vgpu-manager,vgpu-devices", "--default-workload-config", config)
                for c in ("vfio-pci", "vgpu-manager", "vgpu-devices"):
                    row = re.search(rf"(?m)^{c}\s+(\S+)", p.stdout)
                    if c in runs[1:] and row is None:
                        continue  # the chain stopped at the one before (no vGPU on this fake node)
                    self.assertIsNotNone(row, p.stdout)
                    if c in runs:
                        self.assertNotEqual(row.group(1), "skipped", p.stdout)
                    else:
                        self.assertEqual(row.group(1), "skipped", p.stdout)
                        self.assertIn(f"workload config is {config}", p.stdout)
                self.assertNotIn("dependency-not-ready", p.stdout)
                self.assertEqual(self.workload_type(), config + "\n")

    def test_vgpu_devices_alone_skips_on_a_passthrough_node(self):
        # upstream's sandbox DaemonSet runs vgpu-devices on every sandbox node; on a vm-passthrough
        # one vgpu-manager skipped, so there is no vgpu-manager-ready: that must not fail it
        p = self.run_gv("vgpu-devices", check=0)
        self.assertRegex(p.stdout, r"(?m)^vgpu-devices\s+skipped")
        self.assertEqual(self.workload_type(), "vm-passthrough\n")


class TestCcManager(SandboxTestCase):
    def test_without_flag_fails_and_with_flag_is_ready(self):
        p = self.run_gv("cc-manager", check=1)
        self.assertIn(".cc-manager-ctr-ready", p.stdout)
        self.assertIn("nvidia.com/cc.capable was not read", p.stdout)
        open(self.node.marker(".cc-manager-ctr-ready"), "w").close()
        self.run_gv("cc-manager", check=0)
        self.assertEqual(self.node.read("cc-manager-ready")["CC_CAPABLE"], "true")


class TestMofed(SandboxTestCase):
    def test_skipped_unless_rdma_enabled(self):
        p = self.run_gv("mofed", check=0)
        self.assertIn("GPU_DIRECT_RDMA_ENABLED is not true", p.stdout)
        self.assertFalse(self.node.exists("mofed-ready"))

    def test_skipped_without_mellanox_nic(self):
        env = gvtest.clean_env(GPU_DIRECT_RDMA_ENABLED="true")
        p = self.run_gv("mofed", env=env, check=0)
        self.assertIn("no Mellanox (0x15b3)", p.stdout)

    def test_driver_container_flag(self):
        self.sys.add_function("0000:5e:00.0", vendor=MELLANOX, cls=0x020000, driver="mlx5_core")
        flag = self.path("mellanox", ".driver-ready")
        env = gvtest.clean_env(GPU_DIRECT_RDMA_ENABLED="true")
        p = self.run_gv("mofed", "--mofed-ready-file", flag, env=env, check=1)
        self.assertIn(flag, p.stdout)
        self.assertIn("MOFED driver container is not ready", p.stdout)
        os.makedirs(os.path.dirname(flag))
        open(flag, "w").close()
        self.run_gv("mofed", "--mofed-ready-file", flag, env=env, check=0)
        self.assertEqual(self.node.read("mofed-ready")["USE_HOST_MOFED"], "false")

    def test_host_mofed_needs_mlx5_core(self):
        self.sys.add_function("0000:5e:00.0", vendor=MELLANOX, cls=0x020000, driver="mlx5_core")
        env = gvtest.clean_env(GPU_DIRECT_RDMA_ENABLED="true", USE_HOST_MOFED="true")
        p = self.run_gv("mofed", env=env, check=1)
        self.assertIn("module-not-loaded", p.stdout)
        self.assertIn("mlx5_core", p.stdout)
        self.sys.load_module("mlx5_core")
        self.run_gv("mofed", env=env, check=0)
        self.assertEqual(self.node.read("mofed-ready")["USE_HOST_MOFED"], "true")


class TestGpuDirect(SandboxTestCase):
    def setUp(self):
        super().setUp()
        self.node.install_mock("driver", gpus=1)
        self.run_gv("driver", check=0)

    def flags(self, text):
        with open(self.node.marker(".driver-ctr-ready"), "w") as f:
            f.write(text)

    def test_flag_false_or_absent_skips(self):
        p = self.run_gv("nvidia-fs,gdrcopy,nvidia-peermem", check=0)
        self.assertEqual(p.stdout.count("skipped"), 3, p.stdout)
        self.assertIn("no such file", p.stdout)
        self.flags("GDS_ENABLED: false\nGDRCOPY_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: false\n")
        p = self.run_gv("nvidia-fs,gdrcopy,nvidia-peermem", check=0)
        self.assertEqual(p.stdout.count("skipped"), 3, p.stdout)
        self.assertEqual(self.node.present(), ["driver-ready"])

    def test_flag_set_with_module_absent_fails_then_loaded_passes(self):
        self.flags("GDS_ENABLED: true\nGDRCOPY_ENABLED: true\nGPU_DIRECT_RDMA_ENABLED: true\n")
        p = self.run_gv("nvidia-fs", check=1)
        self.assertIn("module-not-loaded", p.stdout)
        self.assertIn("GDS_ENABLED: true in .driver-ctr-ready but kernel module nvidia_fs is not loaded", p.stdout)
        self.sys.load_module("nvidia_fs")
        self.sys.load_module("gdrdrv")
        self.sys.load_module("nvidia_peermem", initstate="coming")
        p = self.run_gv("nvidia-fs,gdrcopy,nvidia-peermem", check=1)
        self.assertIn("initstate coming", p.stdout)
        self.sys.load_module("nvidia_peermem")
        self.run_gv("nvidia-fs,gdrcopy,nvidia-peermem", check=0)
        d = self.node.read("driver-ready")
        for name, module in (("nvidia-fs", "nvidia_fs"), ("gdrcopy", "gdrdrv"), ("nvidia-peermem", "nvidia_peermem")):
            m = self.node.read(name + "-ready")
            self.assertEqual(m["DRIVER_GENERATION"], d["GENERATION"])
            self.assertEqual(m["KERNEL_MODULE"], module)
        self.assert_invariant()
        # re-validating the driver removes them first (downstream-first invalidation), then
        # validates them again against the new driver-ready, as upstream's driver validation does
        self.run_gv("driver", check=0)
        d2 = self.node.read("driver-ready")
        self.assertNotEqual(d2["GENERATION"], d["GENERATION"])
        for name in ("nvidia-fs", "gdrcopy", "nvidia-peermem"):
            self.assertEqual(self.node.read(name + "-ready")["DRIVER_GENERATION"], d2["GENERATION"])
        self.assert_invariant()
        os.unlink(self.node.marker(".driver-ctr-ready"))
        self.run_gv("driver", check=0)
        self.assertEqual(self.node.present(), ["driver-ready"])

    def test_driver_validates_its_gpudirect_components_as_upstream(self):
        # upstream's driver validation checks them implicitly; the operator's DaemonSet has no init
        # container of their own any more
        self.flags("GDS_ENABLED: true\nGDRCOPY_ENABLED: false\n")
        p = self.run_gv("driver", check=1)
        self.assertIn("nvidia-fs", p.stdout)
        self.assertIn("kernel module nvidia_fs is not loaded", p.stdout)
        self.assertNotIn("gdrcopy", p.stdout.split("MARKER")[0])  # flag off: quiet, as upstream
        self.assertTrue(self.node.exists("driver-ready"))
        self.sys.load_module("nvidia_fs")
        env = gvtest.clean_env(COMPONENT="driver")
        p = self.run_gv("driver", env=env, check=0)
        self.assertEqual(self.node.present(), ["driver-ready", "nvidia-fs-ready"])
        self.assertEqual(self.node.read("nvidia-fs-ready")["DRIVER_GENERATION"],
                         self.node.read("driver-ready")["GENERATION"])

    def test_unparsable_flags_file_is_a_config_error(self):
        self.flags("GDS_ENABLED: [true\n")
        p = self.run_gv("nvidia-fs", check=2)
        self.assertIn(".driver-ctr-ready: line", p.stdout)
        self.flags("GDS_ENABLED: maybe\n")
        p = self.run_gv("nvidia-fs", check=2)
        self.assertIn("'maybe' is not true or false", p.stdout)


class TestAssumeReady(SandboxTestCase):
    """A component provided outside the validator (GKE COS toolkit, gpu-operator #1460)."""

    def setUp(self):
        super().setUp()
        self.node.install_mock("driver", gpus=1)

    def test_assumed_toolkit_keeps_the_chain_working(self):
        p = self.run_gv("driver,toolkit,cuda", "--assume-ready", "toolkit", "--with-workload", "false", check=0)
        self.assertRegex(p.stdout, r"toolkit\s+assumed")
        t = self.node.read("toolkit-ready")
        self.assertEqual(t["ASSUMED"], "true")
        self.assertEqual(t["ASSUMED_BY"], "--assume-ready")
        self.assertEqual(t["DRIVER_GENERATION"], self.node.read("driver-ready")["GENERATION"])
        self.assertEqual(self.node.read("cuda-ready")["TOOLKIT_GENERATION"], t["GENERATION"])
        self.assertNotIn("ASSUMED", self.node.read("driver-ready"))
        self.assert_invariant()
        st = gvtest.run(["status", *self.node.store_args()])
        self.assertRegex(st.stdout, r"toolkit-ready\s+ready\s+\S+\s+ASSUMED by --assume-ready")
        js = gvtest.run(["status", "--json", *self.node.store_args()])
        self.assertIn('"ASSUMED":"true"', js.stdout.replace(" ", ""))

    def test_assumed_by_environment_and_parent_still_required(self):
        env = gvtest.clean_env(ASSUME_READY="toolkit")
        p = self.run_gv("toolkit", env=env, check=1)
        self.assertIn("dependency-not-ready", p.stdout)
        self.assertFalse(self.node.exists("toolkit-ready"))
        self.run_gv("driver", check=0)
        self.run_gv("toolkit", env=env, check=0)
        self.assertEqual(self.node.read("toolkit-ready")["ASSUMED_BY"], "ASSUME_READY")

    def test_unknown_assumed_component_is_a_usage_error(self):
        p = self.run_gv("driver", "--assume-ready", "toolkit,frobnicate", check=2)
        self.assertIn("frobnicate", p.stderr)


class TestComponentNames(SandboxTestCase):
    def test_unknown_component_lists_every_component(self):
        p = self.run_gv("frobnicate", check=2)
        for name in ("mofed", "nvidia-fs", "gdrcopy", "nvidia-peermem", "cc-manager", "vfio-pci", "vgpu-manager",
                     "vgpu-devices"):
            self.assertIn(name, p.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main()
