"""End-to-end tests of `gpu-validator mock install --workload` and its GPUDirect
flags (docs/mock-driver-root.md "Workloads"): the sysfs and
driver-container files a container, vm-passthrough or vm-vgpu node (mdev and
SR-IOV shapes) has, in the shapes tests/e2e/test_sandbox.py builds by hand,
derived from the profile's GPUs; every sandbox, vGPU and GPUDirect component
passes on its matching layout and fails, naming what it found, on the others;
remove takes back exactly what install made."""
import hashlib
import json
import os
import shutil
import stat

import chain
import gvtest

PROFILE = "a100-sxm4-40gb"


def snapshot(top):
    """Every path under @top: type, mode, link target, file content digest."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            extra = None
            if stat.S_ISLNK(st.st_mode):
                extra = os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    extra = hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(p, top)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), extra)
    return out


def gpus_of(profile, count):
    """(sysfs address, device id) of each GPU the profile reports."""
    p = gvtest.run(["mock", "profiles", "--report", profile, "--gpus", str(count)], check=0)
    out = []
    for g in json.loads(p.stdout)["gpus"]:
        dom, rest = g["pci_bus_id"].split(":", 1)
        out.append((f"{int(dom, 16) & 0xffff:04x}:{rest.lower()}", g["pci_device_id"]))
    return out


def read(path):
    with open(path) as f:
        return f.read()


class WorkloadCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.path("node"))
        self.root = self.path("root")
        self.sys = os.path.join(self.root, "sys")
        self.pci = os.path.join(self.sys, "bus/pci/devices")
        self.flags_dir = os.path.join(self.root, "run/nvidia/validations")

    def install(self, *flags, gpus=2, profile=PROFILE, check=0):
        return gvtest.run(["mock", "install", "--root", self.root, "--profile", profile, "--gpus", str(gpus),
                           "--device-nodes", "files", "--node-name", "node-w", *flags], check=check)

    def remove(self):
        return gvtest.run(["mock", "remove", "--root", self.root], check=0)

    def args(self, status):
        return ["--output-dir", status, "--boot-id-file", self.node.boot_id, "--host-root", self.node.host,
                "--driver-install-dir", self.root, "--driver-install-dir-ctr-path", self.root,
                "--dev-char-dir", self.node.devchar, "--dev-node-wait", "1", "--sysfs-root", self.sys]

    def run_gv(self, components, *extra, status=None, env=None, check=None):
        """Validate @components against the mock root; markers go to @status (default: a folder outside the root)."""
        status = status or self.node.status
        return gvtest.run(["run", "--components", components, *self.args(status), *extra], env=env, check=check)

    def marker(self, name, status=None):
        return gvtest.read_marker(os.path.join(status or self.node.status, name))

    def exists(self, name, status=None):
        return os.path.exists(os.path.join(status or self.node.status, name))


class TestLayout(WorkloadCase):
    def test_plain_install_is_unchanged_and_an_update_back_restores_it(self):
        self.install()
        plain = snapshot(self.root)
        for p, (kind, _, _) in plain.items():
            self.assertFalse(p.startswith(("sys/module", "run", "sys/class", "sys/bus/pci/drivers")), p)
            self.assertFalse(p.startswith("sys/") and kind == stat.S_IFLNK, p)
        self.assertNotIn("workload", json.loads(read(os.path.join(self.root, ".gpu-validator-mock.json"))))
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "sriov", "--cc")
        self.assertNotEqual(snapshot(self.root), plain)
        p = self.install()
        self.assertNotIn("workload", p.stdout + p.stderr)
        self.assertEqual(snapshot(self.root), plain)

    def test_every_mode_round_trips_through_remove(self):
        before = snapshot(self.tmp)
        for flags in (["--workload", "container"], ["--workload", "vm-passthrough"], ["--workload", "vm-vgpu"],
                      ["--workload", "vm-vgpu", "--vgpu-shape", "sriov"], ["--gds", "--gdrcopy", "--rdma", "--cc"]):
            with self.subTest(flags=flags):
                p = self.install(*flags)
                self.assertIn("workload ", p.stdout)
                m = json.loads(read(os.path.join(self.root, ".gpu-validator-mock.json")))
                listed = {e["path"] for e in m["entries"]}
                on_disk = set(snapshot(self.root)) - {".gpu-validator-mock.json"}
                self.assertEqual(on_disk, listed)  # the manifest records everything made, nothing else
                self.remove()
                self.assertEqual(snapshot(self.tmp), before)

    def test_updates_between_modes_leave_only_the_new_layout(self):
        self.install("--workload", "vm-passthrough")
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "sriov")
        self.install("--workload", "vm-vgpu")
        self.install("--workload", "container", "--rdma")
        fresh = self.path("fresh")
        gvtest.run(["mock", "install", "--root", fresh, "--profile", PROFILE, "--gpus", "2", "--device-nodes",
                    "files", "--node-name", "node-w", "--workload", "container", "--rdma"], check=0)
        a, b = snapshot(self.root), snapshot(fresh)
        a.pop(".gpu-validator-mock.json")
        b.pop(".gpu-validator-mock.json")
        a.pop("etc/cdi/nvidia-mock.yaml")  # names its own root's paths
        b.pop("etc/cdi/nvidia-mock.yaml")
        self.assertEqual(a, b)

    def test_container_binds_gpus_to_nvidia_and_writes_the_driver_container_flags(self):
        self.install("--workload", "container", gpus=3)
        for addr, _ in gpus_of(PROFILE, 3):
            d = os.path.join(self.pci, addr)
            self.assertEqual(os.readlink(os.path.join(d, "driver")), "../../drivers/nvidia")
            self.assertEqual(os.path.realpath(os.path.join(d, "driver")),
                             os.path.realpath(os.path.join(self.sys, "bus/pci/drivers/nvidia")))
            self.assertEqual(os.path.realpath(os.path.join(self.sys, "bus/pci/drivers/nvidia", addr)),
                             os.path.realpath(d))
        for mod in ("nvidia", "nvidia_uvm", "nvidia_modeset"):
            self.assertEqual(read(os.path.join(self.sys, "module", mod, "initstate")), "live\n")
        self.assertEqual(read(os.path.join(self.flags_dir, ".driver-ctr-ready")),
                         "GDRCOPY_ENABLED: false\nGDS_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: false\n")
        self.assertFalse(os.path.exists(os.path.join(self.root, "run/mellanox")))

    def test_sriov_shape_follows_the_profile_gpus(self):
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "sriov", profile="t4")
        for addr, device in gpus_of("t4", 2):
            pf = os.path.join(self.pci, addr)
            self.assertEqual(read(os.path.join(pf, "sriov_totalvfs")), "4\n")
            self.assertEqual(read(os.path.join(pf, "sriov_numvfs")), "4\n")
            base = addr[:-1]
            for i in range(4):
                vf = base + str(4 + i)  # first VF offset 4, stride 1: functions 4..7
                self.assertEqual(os.readlink(os.path.join(pf, f"virtfn{i}")), "../" + vf)
                vd = os.path.join(self.pci, vf)
                self.assertEqual(os.path.realpath(os.path.join(vd, "physfn")), os.path.realpath(pf))
                self.assertEqual(read(os.path.join(vd, "device")), f"0x{device:04x}\n")
                self.assertEqual(read(os.path.join(vd, "class")), "0x030200\n")
                self.assertEqual(os.readlink(os.path.join(vd, "driver")), "../../drivers/nvidia")
                self.assertEqual(read(os.path.join(vd, "nvidia/current_vgpu_type")), "256\n" if i == 0 else "0\n")
        self.assertFalse(os.path.exists(os.path.join(self.sys, "class/mdev_bus")))
        self.assertFalse(os.path.exists(os.path.join(self.sys, "bus/mdev")))
        self.assertEqual(read(os.path.join(self.sys, "module/nvidia_vgpu_vfio/initstate")), "live\n")

    def test_mdev_shape_parents_types_and_devices(self):
        self.install("--workload", "vm-vgpu")
        gpus = gpus_of(PROFILE, 2)
        mdevs = os.listdir(os.path.join(self.sys, "bus/mdev/devices"))
        self.assertEqual(len(mdevs), 2)
        parents = set()
        for u in mdevs:
            real = os.path.realpath(os.path.join(self.sys, "bus/mdev/devices", u))
            parents.add(os.path.basename(os.path.dirname(real)))
            self.assertEqual(read(os.path.join(real, "mdev_type/name")), "NVIDIA mock vGPU 4C\n")
        self.assertEqual(parents, {a for a, _ in gpus})
        for addr, _ in gpus:
            self.assertEqual(os.path.realpath(os.path.join(self.sys, "class/mdev_bus", addr)),
                             os.path.realpath(os.path.join(self.pci, addr)))
            self.assertFalse(os.path.exists(os.path.join(self.pci, addr, "sriov_totalvfs")))

    def test_usage_errors(self):
        for flags, text in ((["--workload", "vm-passthrough", "--gds"], "need --workload container"),
                            (["--vgpu-shape", "sriov"], "vm-vgpu only"),
                            (["--workload", "vm-vgpu", "--vgpu-shape", "both"], "expected mdev or sriov"),
                            (["--workload", "bare-metal"], "expected container, vm-passthrough or vm-vgpu"),
                            (["--workload", "container", "--omit-module", "../x"], "kernel module name")):
            with self.subTest(flags=flags):
                p = self.install(*flags, check=2)
                self.assertIn(text, p.stderr)
                self.assertFalse(os.path.exists(self.root))

    def test_help_names_the_modes(self):
        p = gvtest.run(["mock", "install", "--help"], check=0)
        for word in ("--workload container|vm-passthrough|vm-vgpu", "--vgpu-shape mdev|sriov", "--gds",
                     "--gdrcopy", "--rdma", "--cc", "--omit-module"):
            self.assertIn(word, p.stdout)


class TestSandboxComponents(WorkloadCase):
    def test_vfio_pci_passes_on_passthrough_and_fails_on_the_others(self):
        self.install("--workload", "vm-passthrough")
        self.run_gv("vfio-pci", "--default-workload-config", "vm-passthrough", check=0)
        addrs = [a for a, _ in gpus_of(PROFILE, 2)]
        self.assertEqual(self.marker("vfio-pci-ready")["PCI_DRIVERS"], ",".join(f"{a}=vfio-pci" for a in addrs))
        self.assertEqual(read(os.path.join(self.node.status, "workload-type")), "vm-passthrough\n")
        for flags in (["--workload", "container"], ["--workload", "vm-vgpu"]):
            with self.subTest(flags=flags):
                self.install(*flags)
                p = self.run_gv("vfio-pci", "--default-workload-config", "vm-passthrough", check=1)
                self.assertIn("pci-not-ready", p.stdout)
                self.assertIn("2 of 2 GPUs not bound to vfio-pci", p.stdout)
                self.assertIn(f"{addrs[0]} (device 0x20b0) is bound to nvidia", p.stdout)
                self.assertFalse(self.exists("vfio-pci-ready"))

    def vgpu(self, check):
        return self.run_gv("vgpu-manager,vgpu-devices", "--default-workload-config", "vm-vgpu", check=check)

    def test_vgpu_mdev_shape_passes(self):
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "mdev")
        self.vgpu(0)
        m = self.marker("vgpu-manager-ready")
        self.assertEqual((m["VGPU_SHAPE"], m["GPU_COUNT"], m["IS_HOST_VGPU_MANAGER"]), ("mdev", "2", "false"))
        d = self.marker("vgpu-devices-ready")
        self.assertEqual(d["VGPU_DEVICE_COUNT"], "2")
        self.assertIn("(NVIDIA mock vGPU 4C)", d["VGPU_DEVICES"])

    def test_vgpu_sriov_shape_passes(self):
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "sriov")
        self.vgpu(0)
        self.assertEqual(self.marker("vgpu-manager-ready")["VGPU_SHAPE"], "sriov")
        addrs = [a for a, _ in gpus_of(PROFILE, 2)]
        self.assertEqual(self.marker("vgpu-devices-ready")["VGPU_DEVICES"],
                         ",".join(f"{a[:-1]}4(type 256)" for a in addrs))

    def test_vgpu_sriov_vfs_not_all_enabled_fails_naming_the_counts(self):
        self.install("--workload", "vm-vgpu", "--vgpu-shape", "sriov")
        addr = gpus_of(PROFILE, 2)[1][0]
        f = os.path.join(self.pci, addr, "sriov_numvfs")
        os.chmod(f, 0o644)
        with open(f, "w") as fh:
            fh.write("2\n")
        p = self.run_gv("vgpu-manager", "--default-workload-config", "vm-vgpu", check=1)
        self.assertIn(f"{addr} (device 0x20b0, driver nvidia): sriov_numvfs 2 of sriov_totalvfs 4", p.stdout)

    def test_vgpu_components_fail_on_the_other_layouts(self):
        for flags in (["--workload", "container"], ["--workload", "vm-passthrough"]):
            with self.subTest(flags=flags):
                self.install(*flags)
                p = self.run_gv("vgpu-manager", "--default-workload-config", "vm-vgpu", check=1)
                self.assertIn("2 of 2 GPUs not ready for vGPU", p.stdout)
                self.assertIn("no SR-IOV, not an mdev parent (0 mdev types", p.stdout)
                self.assertFalse(self.exists("vgpu-manager-ready"))
        # vgpu-devices needs vgpu-manager-ready: the node was a vGPU node, then lost its vGPUs
        self.install("--workload", "vm-vgpu")
        self.vgpu(0)
        self.install("--workload", "container")
        p = self.run_gv("vgpu-devices", "--default-workload-config", "vm-vgpu", check=1)
        self.assertIn("no vGPU device on the 2 NVIDIA GPUs: 0 mdev devices", p.stdout)
        self.assertFalse(self.exists("vgpu-devices-ready"))

    def test_cc_manager_flag(self):
        self.install("--workload", "vm-passthrough", "--cc")
        self.run_gv("cc-manager", status=self.flags_dir, check=0)
        self.assertEqual(self.marker("cc-manager-ready", self.flags_dir)["CC_CAPABLE"], "true")
        self.install("--workload", "vm-passthrough")
        p = self.run_gv("cc-manager", status=self.flags_dir, check=1)
        self.assertIn(".cc-manager-ctr-ready", p.stdout)


class TestGpuDirect(WorkloadCase):
    def test_driver_then_every_flagged_component_passes(self):
        self.install("--gds", "--gdrcopy", "--rdma")
        self.assertEqual(read(os.path.join(self.flags_dir, ".driver-ctr-ready")),
                         "GDRCOPY_ENABLED: true\nGDS_ENABLED: true\nGPU_DIRECT_RDMA_ENABLED: true\n")
        # the driver is followed by the components whose flag is true, as upstream's driver validation
        self.run_gv("driver", status=self.flags_dir, check=0)
        for name, module in (("nvidia-fs-ready", "nvidia_fs"), ("gdrcopy-ready", "gdrdrv"),
                             ("nvidia-peermem-ready", "nvidia_peermem")):
            self.assertEqual(self.marker(name, self.flags_dir)["KERNEL_MODULE"], module)
        # remove leaves what the run wrote (and the folder holding it), and nothing of its own
        p = self.remove()
        self.assertIn("left", p.stderr)
        left = set(snapshot(self.root))
        self.assertTrue(left)
        self.assertTrue(all(x.startswith("run") for x in left), left)
        self.assertFalse(os.path.exists(os.path.join(self.flags_dir, ".driver-ctr-ready")))

    def test_without_flags_the_components_are_skipped(self):
        self.install("--workload", "container")
        p = self.run_gv("driver,nvidia-fs,gdrcopy,nvidia-peermem", status=self.flags_dir, check=0)
        self.assertIn("GDS_ENABLED is not true", p.stdout)
        for name in ("nvidia-fs-ready", "gdrcopy-ready", "nvidia-peermem-ready"):
            self.assertFalse(self.exists(name, self.flags_dir))

    def test_flag_set_module_absent_fails(self):
        for flag, component, module in (("--gds", "nvidia-fs", "nvidia_fs"), ("--gdrcopy", "gdrcopy", "gdrdrv"),
                                        ("--rdma", "nvidia-peermem", "nvidia_peermem")):
            with self.subTest(component=component):
                self.install(flag, "--omit-module", module)
                self.assertFalse(os.path.exists(os.path.join(self.sys, "module", module)))
                p = self.run_gv(f"driver,{component}", status=self.flags_dir, check=1)
                self.assertIn("module-not-loaded", p.stdout)
                self.assertIn(f"kernel module {module} is not loaded", p.stdout)
                self.assertFalse(self.exists(f"{component}-ready", self.flags_dir))
                self.remove()  # leaves the run's markers: a fresh root for the next mode
                shutil.rmtree(self.root)

    def test_module_removed_after_install_fails_and_not_live_is_named(self):
        self.install("--rdma")
        shutil.rmtree(os.path.join(self.sys, "module/nvidia_peermem"))
        p = self.run_gv("driver,nvidia-peermem", status=self.flags_dir, check=1)
        self.assertIn("nvidia_peermem is absent", p.stdout)
        os.makedirs(os.path.join(self.sys, "module/nvidia_peermem"))
        with open(os.path.join(self.sys, "module/nvidia_peermem/initstate"), "w") as f:
            f.write("coming\n")
        p = self.run_gv("driver,nvidia-peermem", status=self.flags_dir, check=1)
        self.assertIn("is not live (initstate coming)", p.stdout)

    def mofed(self, *extra, env=None, check=0):
        env = gvtest.clean_env(GPU_DIRECT_RDMA_ENABLED="true", **(env or {}))
        return self.run_gv("mofed", "--mofed-ready-file",
                           os.path.join(self.root, "run/mellanox/drivers/.driver-ready"), *extra, env=env,
                           check=check)

    def test_mofed_container_and_host(self):
        self.install("--rdma")
        nic = [d for d in os.listdir(self.pci) if read(os.path.join(self.pci, d, "vendor")) == "0x15b3\n"]
        self.assertEqual(len(nic), 1)
        self.assertEqual(os.readlink(os.path.join(self.pci, nic[0], "driver")), "../../drivers/mlx5_core")
        self.mofed(check=0)
        self.assertEqual(self.marker("mofed-ready")["USE_HOST_MOFED"], "false")
        self.mofed(env={"USE_HOST_MOFED": "true"}, check=0)
        self.assertEqual(self.marker("mofed-ready")["USE_HOST_MOFED"], "true")

    def test_mofed_fails_without_its_module_and_skips_without_a_nic(self):
        self.install("--rdma", "--omit-module", "mlx5_core")
        p = self.mofed(env={"USE_HOST_MOFED": "true"}, check=1)
        self.assertIn("kernel module mlx5_core is not loaded", p.stdout)
        self.install("--workload", "container")
        p = self.mofed(check=0)
        self.assertIn("no Mellanox (0x15b3) PCI function", p.stdout)
        self.assertFalse(self.exists("mofed-ready"))


class TestRunMockWorkloads(gvtest.TempDirTestCase):
    """`run --mock` with the workload flags: install and validate in one command
    (the flows above take two)."""

    def run_mock(self, *flags, check=0):
        self.work = self.path("work")
        self.root = os.path.join(self.work, "driver-root")
        return gvtest.run(["run", "--mock", "--gpus", "2", "--mock-dir", self.work, *flags], check=check)

    def marker(self, name, status=None):
        return gvtest.read_marker(os.path.join(status or os.path.join(self.root, "run/nvidia/validations"), name))

    def test_vm_passthrough_in_one_command(self):
        p = self.run_mock("--mock-workload", "vm-passthrough", "--components", "vfio-pci")
        addrs = [a for a, _ in gpus_of(PROFILE, 2)]
        self.assertEqual(self.marker("vfio-pci-ready")["PCI_DRIVERS"], ",".join(f"{a}=vfio-pci" for a in addrs))
        self.assertIn(os.path.join(self.root, "run/nvidia/validations"), p.stdout)
        self.assertEqual(read(os.path.join(self.root, "run/nvidia/validations/workload-type")), "vm-passthrough\n")
        # without --components: the workload's own (not the driver, which a vfio-pci node has not)
        p = self.run_mock("--mock-workload", "vm-passthrough")
        self.assertRegex(p.stdout, r"(?m)^vfio-pci-ready +ready")
        self.assertRegex(p.stdout, r"(?m)^driver-ready +missing")
        # and the mode's check fails on another mode's layout, naming what it found
        p = self.run_mock("--mock-workload", "container", "--components", "vfio-pci",
                          "--default-workload-config", "vm-passthrough", check=1)
        self.assertIn(f"{addrs[0]} (device 0x20b0) is bound to nvidia", p.stdout)

    def test_vm_vgpu_both_shapes_by_default_components(self):
        for shape in ("mdev", "sriov"):
            with self.subTest(shape=shape):
                self.run_mock("--mock-workload", "vm-vgpu", "--mock-vgpu-shape", shape)
                m = self.marker("vgpu-manager-ready")
                self.assertEqual((m["VGPU_SHAPE"], m["GPU_COUNT"], m["IS_HOST_VGPU_MANAGER"]), (shape, "2", "false"))
                self.assertEqual(self.marker("vgpu-devices-ready")["VGPU_DEVICE_COUNT"], "2")

    def test_gpudirect_and_cc_flags(self):
        self.run_mock("--mock-gds", "--mock-gdrcopy", "--mock-rdma", "--mock-cc")
        for name, module in (("nvidia-fs-ready", "nvidia_fs"), ("gdrcopy-ready", "gdrdrv"),
                             ("nvidia-peermem-ready", "nvidia_peermem")):
            self.assertEqual(self.marker(name)["KERNEL_MODULE"], module)
        self.assertTrue(os.path.exists(os.path.join(self.root, "run/nvidia/validations/toolkit-ready")))
        self.assertEqual(self.marker("cc-manager-ready")["CC_CAPABLE"], "true")
        # an explicit --output-dir wins: the driver container's flags are not there, so the driver's
        # followers are skipped
        status = self.path("st")
        p = self.run_mock("--mock-gds", "--output-dir", status, "--components", "driver,nvidia-fs")
        self.assertIn("GDS_ENABLED is not true", p.stdout)
        self.assertFalse(os.path.exists(os.path.join(status, "nvidia-fs-ready")))

    def test_usage_errors(self):
        for flags, what in ((["--mock-workload", "vm"], "--mock-workload vm"),
                            (["--mock-workload", "container", "--mock-vgpu-shape", "sriov"], "--mock-vgpu-shape"),
                            (["--mock-vgpu-shape", "x"], "--mock-vgpu-shape x")):
            with self.subTest(flags=flags):
                p = self.run_mock(*flags, check=2)
                self.assertIn(what, p.stderr)
        p = gvtest.run(["run", "--mock-gds", "--components", "driver"], check=2)
        self.assertIn("only apply with --mock", p.stderr)
        p = gvtest.run(["run", "--help"], check=0)
        for flag in ("--mock-workload", "--mock-vgpu-shape", "--mock-gds", "--mock-gdrcopy", "--mock-rdma",
                     "--mock-cc"):
            self.assertIn(flag, p.stdout)
