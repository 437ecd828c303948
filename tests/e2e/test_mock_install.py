"""End-to-end tests of `gpu-validator mock install|remove|profiles` (docs/mock-driver-root.md)."""
import json
import os
import re
import stat
import subprocess
import unittest

import chain
import gvtest

NODE = "e2e-install-node"


def tree(top):
    """Every path under @top with its type, mode and link target (what remove must restore)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            target = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
            out[os.path.relpath(p, top)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), target)
    return out


class TestMockInstall(gvtest.TempDirTestCase):
    def install(self, root, *extra, check=0, profile="a100-sxm4-40gb", gpus=2):
        args = ["mock", "install", "--root", root, "--profile", profile, "--node-name", NODE]
        if gpus:
            args += ["--gpus", str(gpus)]
        return gvtest.run(args + list(extra), check=check)

    def test_round_trip_leaves_nothing_behind(self):
        before = tree(self.tmp)
        root = self.path("root")
        self.install(root, "--device-nodes=files")
        self.assertTrue(os.path.exists(os.path.join(root, ".gpu-validator-mock.json")))
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertEqual(tree(self.tmp), before)

    def test_round_trip_with_preexisting_empty_root(self):
        root = self.path("root")
        os.mkdir(root)
        before = tree(self.tmp)
        self.install(root)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertEqual(tree(self.tmp), before)

    def test_round_trip_with_cdi_dir_outside(self):
        os.mkdir(self.path("etc"))
        before = tree(self.tmp)
        root, cdi = self.path("root"), self.path("etc", "cdi")
        self.install(root, "--cdi-dir", cdi)
        self.assertTrue(os.path.isfile(os.path.join(cdi, "nvidia-mock.yaml")))
        self.assertFalse(os.path.exists(os.path.join(root, "etc", "cdi")))
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertEqual(tree(self.tmp), before)

    def test_round_trip_after_mock_set_removes_its_runtime_files(self):
        """`mock set` keeps nvml-mock.state and nvml-mock.xid beside the profile:
        they are the mock's own files, so remove takes them (and the folder) too,
        but never what a link there points at."""
        os.mkdir(self.path("elsewhere"))
        victim = self.path("elsewhere", "victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        before = tree(self.tmp)
        root = self.path("root")
        self.install(root, "--device-nodes=files")
        gvtest.run(["mock", "set", "--root", root, "--gpu", "0", "temperature_c=90", "fault=ecc-burst"], check=0)
        lib = os.path.join(root, "usr", "lib64")
        self.assertTrue(os.path.isfile(os.path.join(lib, "nvml-mock.state")))
        self.assertTrue(os.path.isfile(os.path.join(lib, "nvml-mock.xid")))
        p = gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertNotIn("in place", p.stdout + p.stderr)
        self.assertEqual(tree(self.tmp), before)
        # a link in place of the Xid file is not the mock's: it stays, and so does its target
        self.install(root, "--device-nodes=files")
        os.symlink(victim, os.path.join(lib, "nvml-mock.xid"))
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertTrue(os.path.islink(os.path.join(lib, "nvml-mock.xid")))
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me\n")

    def test_layout_and_manifest(self):
        root = self.path("root")
        self.install(root, "--device-nodes=files", gpus=3)
        prof = json.loads(gvtest.run(["mock", "profiles", "--report", "a100-sxm4-40gb", "--gpus", "3",
                                      "--node-name", NODE], check=0).stdout)
        ver = prof["driver_version"]
        lib = os.path.join(root, "usr", "lib64")
        self.assertTrue(os.path.isfile(os.path.join(lib, f"libnvidia-ml.so.{ver}")))
        self.assertEqual(os.readlink(os.path.join(lib, "libnvidia-ml.so.1")), f"libnvidia-ml.so.{ver}")
        self.assertEqual(os.readlink(os.path.join(lib, "libnvidia-ml.so")), "libnvidia-ml.so.1")
        self.assertTrue(os.path.isfile(os.path.join(lib, "nvml-mock.yaml")))
        self.assertTrue(os.access(os.path.join(root, "usr", "bin", "nvidia-smi"), os.X_OK))
        proc = open(os.path.join(root, "proc", "driver", "nvidia", "version")).read()
        self.assertRegex(proc, r"^NVRM version: NVIDIA UNIX \w+ Kernel Module  " + re.escape(ver) + "  .+\nGCC version:  gcc version ")
        for n in ["nvidiactl", "nvidia0", "nvidia1", "nvidia2", "nvidia-uvm", "nvidia-uvm-tools"]:
            self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(root, "dev", n)).st_mode), n)
        self.assertFalse(os.path.exists(os.path.join(root, "dev", "nvidia3")))
        m = json.load(open(os.path.join(root, ".gpu-validator-mock.json")))
        self.assertEqual(m["kind"], "gpu-validator-mock-root")
        self.assertEqual(m["device_nodes"], "files")
        self.assertEqual(m["gpu_count"], 3)
        self.assertEqual(m["profile"], "a100-sxm4-40gb")
        self.assertEqual(m["node_name"], NODE)
        self.assertEqual(m["driver_version"], ver)
        listed = {e["path"] for e in m["entries"]}
        on_disk = set(tree(root)) - {".gpu-validator-mock.json"}
        self.assertEqual(listed, on_disk)

    def test_char_nodes_as_root(self):
        if os.geteuid() != 0:
            self.skipTest("needs root for mknod")
        root = self.path("root")
        p = self.install(root, "--device-nodes=char")
        m = json.load(open(os.path.join(root, ".gpu-validator-mock.json")))
        st = os.lstat(os.path.join(root, "dev", "nvidiactl"))
        if m["device_nodes"] == "char":
            self.assertTrue(stat.S_ISCHR(st.st_mode))
            self.assertEqual((os.major(st.st_rdev), os.minor(st.st_rdev)), (195, 255))
            st0 = os.lstat(os.path.join(root, "dev", "nvidia1"))
            self.assertEqual((os.major(st0.st_rdev), os.minor(st0.st_rdev)), (195, 1))
        else:  # mknod refused (user namespace): fell back and said so
            self.assertTrue(stat.S_ISREG(st.st_mode))
            self.assertIn("plain files", p.stderr)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertFalse(os.path.exists(root))

    def test_idempotent_and_update(self):
        root = self.path("root")
        self.install(root, gpus=4)
        first = tree(root)
        self.install(root, gpus=4)
        self.assertEqual(set(tree(root)), set(first))
        self.install(root, gpus=2)
        self.assertFalse(os.path.exists(os.path.join(root, "dev", "nvidia2")))
        self.assertFalse(os.path.exists(os.path.join(root, "dev", "nvidia3")))
        m = json.load(open(os.path.join(root, ".gpu-validator-mock.json")))
        self.assertEqual(m["gpu_count"], 2)
        self.install(root, profile="l40s", gpus=1)
        cdi = open(os.path.join(root, "etc", "cdi", "nvidia-mock.yaml")).read()
        self.assertEqual(cdi.count("  name: GPU-"), 1)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertFalse(os.path.exists(root))

    def test_refuses_non_mock_non_empty_folder(self):
        root = self.path("root")
        os.mkdir(root)
        open(os.path.join(root, "data.txt"), "w").write("user data\n")
        before = tree(self.tmp)
        p = self.install(root, check=2)
        self.assertIn("not a mock driver root", p.stderr)
        self.assertEqual(tree(self.tmp), before)
        p = gvtest.run(["mock", "remove", "--root", root], check=2)
        self.assertIn("not a mock driver root", p.stderr)
        self.assertEqual(tree(self.tmp), before)

    def bad_profile(self, name, text):
        path = self.path(name)
        open(path, "w").write(text)
        return path

    def test_bad_profiles_name_file_line_field(self):
        good = open(os.path.join(gvtest.SOURCE, "mock", "profiles", "l40s.yaml")).read()
        cases = {
            "wrong-type.yaml": (good.replace("  memory_mib: 46068", "  memory_mib: [1, 2]"), "memory_mib"),
            "missing.yaml": (re.sub(r"(?m)^driver:\n(  .*\n)+", "", good), "driver"),
            "range.yaml": (re.sub(r"(?m)^gpu_count: \d+$", "gpu_count: 65", good), "gpu_count"),
            "broken.yaml": (good.replace("gpu:\n", "gpu: [\n", 1), "broken.yaml"),
        }
        for name, (text, field) in cases.items():
            with self.subTest(profile=name):
                path = self.bad_profile(name, text)
                root = self.path("root-" + name)
                p = self.install(root, check=2, profile=path, gpus=0)
                self.assertIn(name, p.stderr)
                self.assertRegex(p.stderr, name.replace(".", r"\.") + r":\d+")
                self.assertIn(field, p.stderr)
                self.assertFalse(os.path.exists(root))
        p = gvtest.run(["mock", "install", "--root", self.path("r"), "--gpus", "65"], check=2)
        self.assertIn("--gpus", p.stderr)
        p = gvtest.run(["mock", "install", "--root", self.path("r"), "--profile", "no-such"], check=2)
        self.assertFalse(os.path.exists(self.path("r")))

    def test_installed_nvidia_smi_needs_no_environment(self):
        root = self.path("root")
        self.install(root, gpus=3)
        p = subprocess.run(["env", "-i", os.path.join(root, "usr", "bin", "nvidia-smi"), "-L"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        prof = json.loads(gvtest.run(["mock", "profiles", "--report", "a100-sxm4-40gb", "--gpus", "3",
                                      "--node-name", NODE], check=0).stdout)
        want = [f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})" for g in prof["gpus"]]
        self.assertEqual(p.stdout.strip().split("\n"), want)

    def test_cdi_spec_names_every_gpu(self):
        root = self.path("root")
        self.install(root, gpus=4)
        prof = json.loads(gvtest.run(["mock", "profiles", "--report", "a100-sxm4-40gb", "--gpus", "4",
                                      "--node-name", NODE], check=0).stdout)
        text = open(os.path.join(root, "etc", "cdi", "nvidia-mock.yaml")).read()
        self.assertIn("cdiVersion: 0.5.0\n", text)
        self.assertIn("kind: nvidia.com/gpu\n", text)
        names = re.findall(r"(?m)^  name: (.+)$", text)
        want = []
        for g in prof["gpus"]:
            want += [f'"{g["index"]}"', g["uuid"]]
        self.assertEqual(names, want + ["all"])
        self.assertIn(f'hostPath: "{root}/dev/nvidia3"', text)
        self.assertIn("- path: /dev/nvidiactl\n", text)

    def test_cdi_spec_mounts_libraries_where_loaders_look(self):
        """Found on a real node: a pod whose image has no ld.so.cache entry for /usr/lib64 (Debian,
        Ubuntu) could not load libnvidia-ml.so.1, and the library found no profile beside itself.
        The spec mounts the libraries into /usr/lib64 and the multiarch folder, the mock's folder
        at /usr/local/nvidia/lib64, and points the library at the profile and state there."""
        root = self.path("root")
        self.install(root, gpus=2)
        text = open(os.path.join(root, "etc", "cdi", "nvidia-mock.yaml")).read()
        mounts = dict(re.findall(r'(?m)^  - containerPath: (\S+)\n    hostPath: "([^"]+)"', text))
        lib = f"{root}/usr/lib64"
        want = {"/usr/bin/nvidia-smi": f"{root}/usr/bin/nvidia-smi", "/usr/local/nvidia/lib64": lib}
        for d in ("/usr/lib64", f"/usr/lib/{os.uname().machine}-linux-gnu"):
            want[f"{d}/libnvidia-ml.so.1"] = f"{lib}/libnvidia-ml.so.1"
            if os.path.exists(f"{lib}/libcuda.so.1"):
                want[f"{d}/libcuda.so.1"] = f"{lib}/libcuda.so.1"
        self.assertEqual(mounts, want)
        for k, v in (("CONFIG", "yaml"), ("STATE_FILE", "state"), ("XID_FILE", "xid")):
            self.assertIn(f"  - MOCK_NVML_{k}=/usr/local/nvidia/lib64/nvml-mock.{v}\n", text)
        self.assertTrue(os.path.exists(f"{lib}/nvml-mock.yaml"))

    def test_help_and_profiles(self):
        for args in (["mock", "--help"], ["mock", "install", "--help"], ["mock", "remove", "--help"],
                     ["mock", "profiles", "--help"]):
            p = gvtest.run(args, check=0)
            self.assertIn("Usage: gpu-validator mock", p.stdout)
        names = gvtest.run(["mock", "profiles"], check=0).stdout.split()
        self.assertIn("a100-sxm4-40gb", names)
        self.assertIn("h100-sxm5-80gb", names)
        gvtest.run(["mock"], check=2)
        gvtest.run(["mock", "frobnicate"], check=2)
        gvtest.run(["mock", "install"], check=2)
        gvtest.run(["mock", "install", "--root", self.path("x"), "--device-nodes=pipes"], check=2)


if __name__ == "__main__":
    unittest.main()


def parse_ld_so_cache(data):
    """(soname, path, flags) of every entry of a glibc "glibc-ld.so.cache1.1" file (glibc's dl-cache.h)."""
    import struct
    assert data[:20] == b"glibc-ld.so.cache1.1", data[:20]
    nlibs, len_strings = struct.unpack_from("=II", data, 20)
    out = []
    for i in range(nlibs):
        flags, key, value, _osv, _hwcap = struct.unpack_from("=iIIIQ", data, 48 + 24 * i)
        s = lambda off: data[off:data.index(b"\0", off)].decode()
        out.append((s(key), s(value), flags))
    assert 48 + 24 * nlibs + len_strings == len(data)
    return out


def mig_profile(path, gpus=2):
    """A100 profile file with MIG on GPU 1: GI 2 holding CIs 0 and 1, and a 2g.10gb (GI 1)."""
    d = json.loads(gvtest.run(["mock", "profiles", "--json", "a100-sxm4-40gb", "--gpus", str(gpus),
                               "--node-name", NODE], check=0).stdout)
    for dev in d["devices"]:
        dev["mig"] = {"mode": "disabled"}
    d["devices"][1]["mig"] = {"mode": "enabled", "devices": [
        {"profile": "3g.20gb", "gi_id": 2, "ci_profile": "1c.3g.20gb", "ci_slices": 1},
        {"profile": "3g.20gb", "gi_id": 2, "ci_id": 1, "ci_profile": "2c.3g.20gb", "ci_slices": 2},
        "2g.10gb"]}
    with open(path, "w") as f:
        json.dump(d, f)
    return path


class TestDriverFacts(gvtest.TempDirTestCase):
    """What NVIDIA's container toolkit and device plugin read besides the libraries."""

    def install(self, root, profile, *extra):
        gvtest.run(["mock", "install", "--root", root, "--profile", profile, "--node-name", NODE,
                    "--device-nodes=files"] + list(extra), check=0)

    def test_pci_sysfs_modeset_proc_devices_and_ld_so_cache(self):
        before = tree(self.tmp)
        root = self.path("root")
        self.install(root, "a100-sxm4-40gb", "--gpus", "2")
        rep = json.loads(gvtest.run(["mock", "profiles", "--report", "a100-sxm4-40gb", "--gpus", "2",
                                     "--node-name", NODE], check=0).stdout)
        for g in rep["gpus"]:
            dom, bus, rest = g["pci_bus_id"].split(":")
            d = os.path.join(root, "sys", "bus", "pci", "devices", f"{int(dom, 16):04x}:{bus.lower()}:{rest.lower()}")
            rd = lambda n: open(os.path.join(d, n)).read()
            self.assertEqual(rd("vendor"), "0x10de\n")
            self.assertEqual(rd("device"), "0x%04x\n" % g["pci_device_id"])
            self.assertEqual(rd("subsystem_vendor"), "0x%04x\n" % (g["pci_subsystem_id"] & 0xFFFF))
            self.assertEqual(rd("subsystem_device"), "0x%04x\n" % (g["pci_subsystem_id"] >> 16))
            self.assertEqual(rd("class"), "0x030200\n")
            self.assertEqual(rd("numa_node"), "-1\n")
        self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(root, "dev", "nvidia-modeset")).st_mode))
        devices = open(os.path.join(root, "proc", "devices")).read()
        self.assertRegex(devices, r"(?m)^195 nvidia-frontend$")
        self.assertRegex(devices, r"(?m)^236 nvidia-caps$")
        self.assertEqual(open(os.path.join(root, "etc", "ld.so.conf")).read(), "/usr/lib64\n")
        cache = os.path.join(root, "etc", "ld.so.cache")
        entries = {k: v for k, v, _ in parse_ld_so_cache(open(cache, "rb").read())}
        self.assertEqual(entries["libnvidia-ml.so.1"], "/usr/lib64/libnvidia-ml.so.1")
        for soname, path in entries.items():  # every entry resolves inside the root
            self.assertTrue(os.path.exists(os.path.join(root, path.lstrip("/"))), path)
        if os.path.exists(os.path.join(root, "usr", "lib64", "libcuda.so.1")):
            self.assertEqual(entries["libcuda.so.1"], "/usr/lib64/libcuda.so.1")
            ver = rep["driver_version"]
            self.assertEqual(os.readlink(os.path.join(root, "usr", "lib64", "libcuda.so.1")), f"libcuda.so.{ver}")
        ldconfig = next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
        if ldconfig:  # glibc's own reader is the judge
            out = subprocess.run([ldconfig, "-p", "-C", cache], capture_output=True, text=True, check=True).stdout
            for soname, path in entries.items():
                self.assertRegex(out, re.escape(soname) + r" \(libc6[^)]*\) => " + re.escape(path))
            self.assertIn(f"{len(entries)} libs found", out)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertEqual(tree(self.tmp), before)

    def test_mig_capabilities_match_the_layout(self):
        prof = mig_profile(self.path("mig.json"))
        before = tree(self.tmp)
        root = self.path("root")
        self.install(root, prof)
        minors = open(os.path.join(root, "proc", "driver", "nvidia-caps", "mig-minors")).read().splitlines()
        self.assertEqual(minors[:2], ["config 1", "monitor 2"])
        table = dict(line.rsplit(" ", 1) for line in minors)
        self.assertEqual(len(table), 2 + 2 * 15 * 9)  # every GI (0-14) and CI (0-7) of both GPUs
        self.assertEqual(table["gpu0/gi1/access"], "12")  # the example of NVIDIA's MIG user guide
        self.assertEqual(table["gpu1/gi0/access"], "138")
        caps = os.path.join(root, "proc", "driver", "nvidia", "capabilities")
        want = {"mig/config", "mig/monitor", "gpu1/mig/gi2/access", "gpu1/mig/gi2/ci0/access",
                "gpu1/mig/gi2/ci1/access", "gpu1/mig/gi1/access", "gpu1/mig/gi1/ci0/access"}
        got = {os.path.relpath(os.path.join(dp, f), caps) for dp, _, fs in os.walk(caps) for f in fs}
        self.assertEqual(got, want)
        nodes = set()
        for rel in sorted(want):
            text = open(os.path.join(caps, rel)).read()
            key = rel.replace("/mig/", "/", 1) if rel.startswith("gpu") else rel.split("/")[1]
            minor = table[key]
            mode = 256 if rel == "mig/config" else 292
            self.assertEqual(text, f"DeviceFileMinor: {minor}\nDeviceFileMode: {mode}\nDeviceFileModify: 1\n")
            nodes.add(f"nvidia-cap{minor}")
        self.assertEqual(set(os.listdir(os.path.join(root, "dev", "nvidia-caps"))), nodes)
        m = json.load(open(os.path.join(root, ".gpu-validator-mock.json")))
        listed = {e["path"] for e in m["entries"]}
        self.assertIn("proc/driver/nvidia-caps/mig-minors", listed)
        self.assertTrue({f"dev/nvidia-caps/{n}" for n in nodes} <= listed)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        self.assertEqual(tree(self.tmp), before)

    def test_cdi_spec_lists_mig_devices_with_capability_nodes(self):
        """As `nvidia-ctk cdi generate` (docs/real-clients.md "nvidia-ctk" and docs/real-clients-history.md): each MIG device by
        "<gpu index>:<MIG device index>" and by its MIG UUID, with the parent's node and its GI and
        CI access capability nodes; "all" adds every capability node once."""
        prof = mig_profile(self.path("mig.json"))
        root = self.path("root")
        self.install(root, prof)
        report = json.loads(gvtest.run(["mock", "profiles", "--report", prof, "--node-name", NODE],
                                       check=0).stdout)
        text = open(os.path.join(root, "etc", "cdi", "nvidia-mock.yaml")).read()
        devices = {}
        for chunk in text.split("\ndevices:\n", 1)[1].split("- containerEdits:\n")[1:]:
            name = re.search(r"(?m)^  name: (.+)$", chunk).group(1)
            devices[name] = re.findall(r"(?m)^    - path: (\S+)$", chunk)
        minors = dict(line.rsplit(" ", 1) for line in
                      open(os.path.join(root, "proc", "driver", "nvidia-caps", "mig-minors")).read().splitlines())
        want_names, all_caps = [], []
        for g in report["gpus"]:
            want_names += [f'"{g["index"]}"', g["uuid"]]
        for g in report["gpus"]:
            for k, m in enumerate(g["mig_devices"]):
                gpu, gi_id, ci_id = g["minor_number"], m["gi_id"], m["ci_id"]
                gi = "/dev/nvidia-caps/nvidia-cap" + minors[f"gpu{gpu}/gi{gi_id}/access"]
                ci = "/dev/nvidia-caps/nvidia-cap" + minors[f"gpu{gpu}/gi{gi_id}/ci{ci_id}/access"]
                nodes = [f"/dev/nvidia{g['minor_number']}", gi, ci]
                for name in (f'"{g["index"]}:{k}"', m["uuid"]):
                    want_names.append(name)
                    self.assertEqual(devices.get(name), nodes, name)
                    for n in nodes[1:]:
                        self.assertTrue(os.path.exists(root + n), n)
                all_caps += [n for n in nodes[1:] if n not in all_caps]
        self.assertEqual(list(devices), want_names + ["all"])
        self.assertEqual(len(want_names), 2 * 2 + 2 * 3)
        self.assertEqual(devices["all"], ["/dev/nvidia0", "/dev/nvidia1"] + all_caps)
        self.assertEqual(len(all_caps), 5)  # GI 2 once for its two CIs, then GI 1

    def test_no_mig_no_capabilities(self):
        root = self.path("root")
        self.install(root, "a100-sxm4-40gb", "--gpus", "1")
        self.assertFalse(os.path.exists(os.path.join(root, "proc", "driver", "nvidia-caps")))
        self.assertFalse(os.path.exists(os.path.join(root, "dev", "nvidia-caps")))
        self.assertFalse(os.path.exists(os.path.join(root, "proc", "driver", "nvidia", "capabilities")))

    def test_update_to_no_mig_removes_the_capabilities(self):
        root = self.path("root")
        self.install(root, mig_profile(self.path("mig.json")))
        self.install(root, "a100-sxm4-40gb", "--gpus", "2")
        for p in ("proc/driver/nvidia-caps", "dev/nvidia-caps", "proc/driver/nvidia/capabilities"):
            self.assertFalse(os.path.exists(os.path.join(root, p)), p)


class TestKilledInstall(gvtest.TempDirTestCase):
    """`mock install` and `run --mock` killed (SIGKILL) at
    seeded random times; afterwards install, `run --mock` and remove succeed
    and remove leaves the folder as it was.  The exhaustive kill-at-every-step
    test is tests/unit/mock-root/test-mockroot_crash.c."""

    TRIALS = int(os.environ.get("GV_E2E_KILL_TRIALS", "12"))

    def killed_at(self, args, delay):
        p = subprocess.Popen([gvtest.GV] + args, env=gvtest.clean_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            p.send_signal(9)
            p.wait()
        return p.returncode

    def timed(self, args):
        import time
        t = time.monotonic()
        gvtest.run(args, check=0)
        return time.monotonic() - t

    def test_killed_mock_install_is_recovered(self):
        import random
        rnd = random.Random(int(os.environ.get("GV_CRASH_SEED", "1")))
        root = self.path("root")
        before = tree(self.tmp)
        args = ["mock", "install", "--root", root, "--gpus", "2", "--device-nodes=files"]
        span = self.timed(args)
        gvtest.run(["mock", "remove", "--root", root], check=0)
        for i in range(self.TRIALS):
            delay = rnd.uniform(0, span)
            with self.subTest(trial=i, delay=delay):
                self.killed_at(args, delay)
                if i % 2 == 0:
                    gvtest.run(args, check=0)
                    p = gvtest.run(["mock", "remove", "--root", root])
                else:
                    p = gvtest.run(["mock", "remove", "--root", root])
                # remove refuses only when the kill came before install wrote anything
                self.assertIn(p.returncode, (0, 2), p.stderr)
                self.assertEqual(tree(self.tmp), before)

    def test_killed_run_mock_is_recovered(self):
        import random
        rnd = random.Random(int(os.environ.get("GV_CRASH_SEED", "1")) + 1)
        work = self.path("work")
        args = ["run", "--mock", "--gpus", "2", "--mock-dir", work]
        span = self.timed(args)
        for i in range(self.TRIALS // 2):
            with self.subTest(trial=i):
                self.killed_at(args, rnd.uniform(0, span))
                gvtest.run(args, check=0)
        gvtest.run(["mock", "remove", "--root", os.path.join(work, "driver-root")], check=0)
        self.assertFalse(os.path.exists(os.path.join(work, "driver-root")))


class TestProfileJsonRoundTrip(gvtest.TempDirTestCase):
    """`mock profiles --json NAME > f` is a profile that
    `mock install --profile f` (and `mock profiles --json f`) read back."""

    def test_every_builtin_round_trips_through_json(self):
        names = [l for l in gvtest.run(["mock", "profiles"], check=0).stdout.split() if l]
        self.assertGreaterEqual(len(names), 7)
        for name in names:
            with self.subTest(profile=name):
                first = gvtest.run(["mock", "profiles", "--json", name, "--gpus", "3", "--node-name", NODE],
                                   check=0).stdout
                doc = json.loads(first)
                self.assertEqual(doc["schema"], "gpu-validator/mock-nvml/v1")
                f = self.path(name + ".json")
                with open(f, "w") as out:
                    out.write(first)
                # read back: the same profile, the same JSON
                again = gvtest.run(["mock", "profiles", "--json", f], check=0).stdout
                self.assertEqual(json.loads(again), doc)
                # and installable, without a slash in the name too
                root = self.path("root-" + name)
                gvtest.run(["mock", "install", "--root", root, "--profile", f, "--device-nodes=files"], check=0)
                with open(os.path.join(root, ".gpu-validator-mock.json")) as m:
                    self.assertEqual(json.load(m)["gpu_count"], 3)
                gvtest.run(["mock", "remove", "--root", root], check=0)
                self.assertFalse(os.path.exists(root))
        rel = gvtest.run(["mock", "profiles", "--json", "h200", "--gpus", "1"], check=0).stdout
        with open(self.path("h200.json"), "w") as out:
            out.write(rel)
        p = subprocess.run([gvtest.GV, "mock", "install", "--root", "r", "--profile", "h200.json",
                            "--device-nodes=files"], cwd=self.tmp, env=gvtest.clean_env(), capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        gvtest.run(["mock", "remove", "--root", self.path("r")], check=0)

    def test_duplicate_key_is_refused_with_file_and_line(self):
        f = self.path("dup.json")
        with open(f, "w") as out:
            out.write('{\n  "driver": {"version": "550.163.01", "cuda_version": 12040},\n'
                      '  "gpu": {"name": "x", "memory_mib": 10, "memory_mib": 20}\n}\n')
        p = gvtest.run(["mock", "install", "--root", self.path("r"), "--profile", f], check=2)
        self.assertIn(f + ":3: memory_mib: duplicate key (first on line 3)", p.stderr)
        self.assertFalse(os.path.exists(self.path("r")))


class TestHostileManifest(unittest.TestCase):
    """A manifest edited by hand (or by another user) must not make remove delete
    anything outside the root but our own CDI spec."""

    def test_remove_never_deletes_a_victim_named_in_the_manifest(self):
        import json
        import tempfile
        base = tempfile.mkdtemp(prefix="gv-hostile-")
        self.addCleanup(__import__("shutil").rmtree, base, True)
        root = os.path.join(base, "root")
        victim_dir = os.path.join(base, "victim")
        os.makedirs(victim_dir)
        victim = os.path.join(victim_dir, "important.txt")
        with open(victim, "w") as f:
            f.write("keep me\n")
        decoy = os.path.join(victim_dir, "nvidia-mock.yaml")  # our spec's name, not our content
        with open(decoy, "w") as f:
            f.write("precious: true\n")
        gvtest.run(["mock", "install", "--root", root, "--gpus", "1", "--device-nodes", "files"], check=0)
        manifest = os.path.join(root, ".gpu-validator-mock.json")
        with open(manifest) as f:
            m = json.load(f)
        m["cdi_spec"] = decoy
        m["entries"] += [{"path": victim, "type": "file"}, {"path": decoy, "type": "file"},
                         {"path": victim_dir, "type": "dir"}, {"path": "../victim/important.txt", "type": "file"}]
        with open(manifest, "w") as f:
            json.dump(m, f)
        gvtest.run(["mock", "remove", "--root", root])
        self.assertTrue(os.path.exists(victim))
        self.assertTrue(os.path.exists(decoy))


class TestDevCharLinks(gvtest.TempDirTestCase):
    """/dev/char links for a mock root: never unless `mock install --dev-char-links` asked for them
    (on a real GPU host they would repoint the real nodes' links at the mock); `mock remove`
    removes any that point into the root."""

    def setUp(self):
        super().setUp()
        if os.getuid() != 0:
            self.skipTest("needs root for character device nodes")
        self.node = chain.Node(self.tmp)

    def install(self, *extra):
        p = gvtest.run(["mock", "install", "--root", self.node.driver, "--gpus", "2", "--device-nodes", "char",
                        "--cdi-dir", self.node.cdi, *extra], check=0)
        if "plain files" in p.stdout + p.stderr:
            self.skipTest("mknod refused: no character device nodes")

    def links_into_root(self, folder):
        if not os.path.isdir(folder):
            return []
        return sorted(n for n in os.listdir(folder) if os.path.islink(os.path.join(folder, n)) and
                      os.readlink(os.path.join(folder, n)).startswith(self.node.driver + "/"))

    def test_no_links_for_a_mock_root_unless_asked(self):
        self.install()
        self.node.run("driver", check=0)  # --dev-char-dir given: still none for a mock root
        self.assertEqual(self.links_into_root(self.node.devchar), [])
        # nor in the host's own /dev/char (the default when no folder is given)
        args = [a for a in self.node.args() if a != self.node.devchar and a != "--dev-char-dir"]
        gvtest.run(["run", "--components", "driver", *args], check=0)
        self.assertEqual(self.links_into_root("/dev/char"), [])
        self.assertEqual(self.links_into_root("/host-dev-char"), [])

    def test_asked_links_are_made_and_mock_remove_removes_them(self):
        self.install("--dev-char-links")
        self.node.run("driver", check=0)
        links = self.links_into_root(self.node.devchar)
        self.assertGreaterEqual(len(links), 3, links)  # nvidiactl, nvidia0, nvidia1, ...
        other = os.path.join(self.node.devchar, "1:3")
        os.symlink("/dev/null", other)  # not ours: stays
        p = gvtest.run(["mock", "remove", "--root", self.node.driver, "--dev-char-dir", self.node.devchar], check=0)
        self.assertIn(f"{len(links)} /dev/char link", p.stdout)
        self.assertEqual(self.links_into_root(self.node.devchar), [])
        self.assertTrue(os.path.islink(other))
