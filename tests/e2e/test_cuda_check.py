"""gpu-validator cuda-check: the CUDA path against a fake driver (tests/unit/cudacheck/fake-cuda.c,
built as libcuda.so.1), the "driver present but cuInit fails" path against NVIDIA's stub library
when this machine has one, and the mock backend (NVML only) against our mock libnvidia-ml.so.1."""
import os
import re
import unittest

from gvtest import BUILD, MOCK_NVML, TempDirTestCase, clean_env, run

FAKE_CUDA = os.environ.get("GV_FAKE_CUDA", os.path.join(BUILD, "tests", "unit", "cudacheck", "libcuda.so.1"))
CUDA_STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"
NO_CUDA = "/nonexistent/gv-test/libcuda.so.1"

OK_LINE = re.compile(r"^GPU (\d+): (.+): vector add of (\d+) elements \((\d+\.\d) MiB\) OK "
                     r"\((\d+\.\d) ms, kernel (\d+\.\d\d) ms\)$")


def env(**extra):
    e = clean_env(**extra)
    for k in ("NVIDIA_VISIBLE_DEVICES", "FAKE_CUDA_MODE", "FAKE_CUDA_DEVICES", "FAKE_CUDA_FAIL_DEVICE",
              "LD_LIBRARY_PATH"):
        if k not in extra:
            e.pop(k, None)
    return e


def cuda_check(*args, **extra):
    return run(["cuda-check", *args], env=env(**extra))


class Usage(unittest.TestCase):
    def test_help(self):
        p = cuda_check("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for opt in ("--elements", "--device", "--expect-devices", "--cuda-library", "--nvml-library",
                    "--require-cuda", "NVIDIA_VISIBLE_DEVICES", "5 no GPU driver"):
            self.assertIn(opt, p.stdout)
        self.assertIn("cuda-check", run(["--help"], env=env()).stdout)

    def test_bad_usage(self):
        # each usage error names what is wrong and points at --help; nothing is checked or printed on stdout
        for args, why in ((["--elements", "0"], "--elements 0: expected 1 to 268435456"),
                          (["--elements", "x"], "--elements x: expected 1 to 268435456"),
                          (["--elements", "268435457"], "--elements 268435457: expected 1 to 268435456"),
                          (["--device", "-1"], "--device -1: expected a device index"),
                          (["--expect-devices", "many"], "--expect-devices many: expected a count"),
                          (["--bogus"], "gpu-validator cuda-check: unknown option '--bogus'"),
                          (["extra"], "unexpected argument 'extra'"),
                          (["--cuda-library", ""], "--cuda-library: empty path")):
            with self.subTest(args=args):
                p = cuda_check(*args)
                self.assertEqual(p.returncode, 2, f"{args}: {p.stdout}{p.stderr}")
                self.assertIn(why, p.stderr)
                self.assertIn("Try 'gpu-validator cuda-check --help'.", p.stderr)
                self.assertEqual(p.stdout, "")
                self.assertNotIn("CUDA driver", p.stderr)

    def test_bad_visible_devices(self):
        p = cuda_check("--cuda-library", NO_CUDA, NVIDIA_VISIBLE_DEVICES="0,gpu0")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("NVIDIA_VISIBLE_DEVICES item 'gpu0'", p.stderr)


class FakeDriver(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(FAKE_CUDA):
            self.fail(f"{FAKE_CUDA} is not built (tests/unit/meson.build must list 'cudacheck')")

    def check(self, *args, **extra):
        return cuda_check("--cuda-library", FAKE_CUDA, *args, **extra)

    def test_every_device(self):
        p = self.check(FAKE_CUDA_DEVICES="3")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], f"CUDA driver {FAKE_CUDA}: CUDA 12.4, 3 device(s)")
        self.assertEqual(len(lines), 4, p.stdout)
        for i, line in enumerate(lines[1:]):
            m = OK_LINE.match(line)
            self.assertIsNotNone(m, line)
            self.assertEqual(int(m.group(1)), i)
            self.assertEqual(m.group(2), f"Fake GPU {i}")
            self.assertEqual(int(m.group(3)), 4194304)
            self.assertEqual(m.group(4), "48.0")

    def test_one_device_and_elements(self):
        p = self.check("--device", "1", "--elements", "1000")
        self.assertEqual(p.returncode, 0, p.stderr)
        gpu_lines = [l for l in p.stdout.splitlines() if l.startswith("GPU ")]
        self.assertEqual(len(gpu_lines), 1)
        self.assertTrue(gpu_lines[0].startswith("GPU 1: Fake GPU 1: vector add of 1000 elements (0.0 MiB) OK"))
        p = self.check("--device", "2")
        self.assertEqual(p.returncode, 1)
        self.assertIn("--device 2: the CUDA driver sees only 2 device(s)", p.stderr)

    def test_expected_count(self):
        self.assertEqual(self.check("--elements", "64", "--expect-devices", "2").returncode, 0)
        p = self.check("--elements", "64", "--expect-devices", "4")
        self.assertEqual(p.returncode, 1)
        self.assertIn("the container sees 2 GPU(s), 4 expected", p.stderr)
        # The length of a NVIDIA_VISIBLE_DEVICES list is the expectation when no flag says otherwise.
        p = self.check("--elements", "64", NVIDIA_VISIBLE_DEVICES="GPU-aa,GPU-bb,GPU-cc")
        self.assertEqual(p.returncode, 1)
        self.assertIn("3 expected", p.stderr)
        self.assertEqual(self.check("--elements", "64", NVIDIA_VISIBLE_DEVICES="0,1").returncode, 0)
        p = self.check(FAKE_CUDA_DEVICES="0")
        self.assertEqual(p.returncode, 1)
        self.assertIn("the CUDA driver sees no device", p.stderr)

    def test_wrong_result_on_one_device(self):
        p = self.check("--elements", "5000", FAKE_CUDA_MODE="wrong", FAKE_CUDA_FAIL_DEVICE="1")
        self.assertEqual(p.returncode, 1, p.stdout)
        lines = p.stdout.splitlines()
        self.assertRegex(lines[1], OK_LINE)
        self.assertEqual(lines[2], "GPU 1: Fake GPU 1: vector add of 5000 elements FAILED: 1 of 5000 results "
                                   "wrong, first at index 2500: got 7501.5, expected 7500.5")
        self.assertIn("workload-failed", p.stderr)

    def test_launch_and_ptx_failures(self):
        for mode, text in (("launch-fail", "launch kernel (cuLaunchKernel): fake: unspecified launch failure"),
                           ("bad-ptx", "load PTX module (cuModuleLoadData): fake: a PTX JIT compilation failed"),
                           ("oom", "allocate device memory (cuMemAlloc_v2): out of memory")):
            p = self.check("--elements", "100", FAKE_CUDA_MODE=mode)
            self.assertEqual(p.returncode, 1, mode)
            self.assertEqual(p.stdout.count("FAILED: "), 2, p.stdout)
            self.assertIn(text, p.stdout)

    def test_init_failure(self):
        p = self.check(FAKE_CUDA_MODE="stub")
        self.assertEqual(p.returncode, 1)
        self.assertIn("cuInit: fake: CUDA driver is a stub library (CUDA_ERROR_STUB_LIBRARY, 34)", p.stderr)
        self.assertIn("driver-not-loaded", p.stderr)
        p = self.check(FAKE_CUDA_MODE="no-device")
        self.assertEqual(p.returncode, 1)
        self.assertIn("(CUDA_ERROR_NO_DEVICE, 100)", p.stderr)

    def test_found_by_soname(self):
        # The default is the soname, found through the ordinary search (LD_LIBRARY_PATH here).
        p = cuda_check("--elements", "64", LD_LIBRARY_PATH=os.path.dirname(FAKE_CUDA))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("CUDA driver libcuda.so.1: CUDA 12.4, 2 device(s)", p.stdout)


class StubDriver(TempDirTestCase):
    """NVIDIA's link-time stub: present, loadable, and cuInit fails; its error must be in the message."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(CUDA_STUB):
            self.skipTest(f"{CUDA_STUB} is not on this machine")

    def test_stub(self):
        os.symlink(CUDA_STUB, self.path("libcuda.so.1"))
        for args, extra in ((["--cuda-library", CUDA_STUB], {}), ([], {"LD_LIBRARY_PATH": self.tmp})):
            p = cuda_check(*args, **extra)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("cuInit: CUDA driver is a stub library (CUDA_ERROR_STUB_LIBRARY, 34)", p.stderr)
            self.assertNotIn("mock GPU backend", p.stdout)


class MockBackend(unittest.TestCase):
    """No libcuda.so.1, our mock libnvidia-ml.so.1 found through LD_LIBRARY_PATH."""

    def setUp(self):
        if not os.path.exists(MOCK_NVML):
            self.fail(f"{MOCK_NVML} is not built")

    def check(self, *args, **extra):
        extra.setdefault("LD_LIBRARY_PATH", os.path.dirname(MOCK_NVML))
        return cuda_check("--cuda-library", NO_CUDA, *args, **extra)

    def uuids(self, p):
        return re.findall(r"^GPU \d+: .+ \((GPU-[0-9a-f-]+)\): reported by NVML$", p.stdout, re.M)

    def test_all(self):
        p = self.check(MOCK_NVML_NUM_DEVICES="4")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines()[0],
                         f"no CUDA driver ({NO_CUDA} not found): mock GPU backend, checking NVML only")
        self.assertEqual(len(self.uuids(p)), 4)
        self.assertIn("4 of 4 NVML devices visible (NVIDIA_VISIBLE_DEVICES=(unset)): OK", p.stdout)
        p = self.check("--expect-devices", "4", MOCK_NVML_NUM_DEVICES="4", NVIDIA_VISIBLE_DEVICES="all")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("4 of 4 NVML devices visible (NVIDIA_VISIBLE_DEVICES=all), 4 expected: OK", p.stdout)
        p = self.check("--expect-devices", "1", MOCK_NVML_NUM_DEVICES="4", NVIDIA_VISIBLE_DEVICES="all")
        self.assertEqual(p.returncode, 1)
        self.assertIn("1 expected: FAILED", p.stdout)
        self.assertIn("the container sees 4 GPU(s), 1 expected", p.stderr)

    def test_lists(self):
        uuids = self.uuids(self.check(MOCK_NVML_NUM_DEVICES="4"))
        self.assertEqual(len(uuids), 4)
        for value, expect, code in (("0,2", None, 0), (f"{uuids[3]},1", "2", 0), (f"1,{uuids[1].upper()}", "1", 0),
                                    ("0,2", "3", 1), ("0,7", None, 1), ("GPU-00000000-dead-beef", None, 1),
                                    ("none", None, 1), ("none", "0", 0), ("void", "0", 0)):
            args = ["--expect-devices", expect] if expect else []
            p = self.check(*args, MOCK_NVML_NUM_DEVICES="4", NVIDIA_VISIBLE_DEVICES=value)
            self.assertEqual(p.returncode, code, f"{value} {expect}: {p.stdout}{p.stderr}")
        p = self.check(MOCK_NVML_NUM_DEVICES="4", NVIDIA_VISIBLE_DEVICES="0,7")
        self.assertIn("NVIDIA_VISIBLE_DEVICES names GPU 7, but NVML reports 4 GPUs, indexes 0 to 3", p.stderr)

    def test_only_visible_devices_listed(self):
        uuids = self.uuids(self.check())
        self.assertEqual(len(uuids), 8)
        p = self.check(NVIDIA_VISIBLE_DEVICES="0,1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), uuids[:2], p.stdout)
        self.assertIn("2 of 8 NVML devices visible (NVIDIA_VISIBLE_DEVICES=0,1), 2 expected: OK", p.stdout)
        p = self.check(NVIDIA_VISIBLE_DEVICES=f"{uuids[6]},3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), [uuids[3], uuids[6]], p.stdout)  # in NVML order
        self.assertRegex(p.stdout, r"(?m)^GPU 3: .+: reported by NVML$")
        p = self.check("--expect-devices", "0", NVIDIA_VISIBLE_DEVICES="none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), [])
        p = self.check(NVIDIA_VISIBLE_DEVICES="2:0")  # a MIG device: its GPU is listed
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), [uuids[2]])

    def test_device(self):
        uuids = self.uuids(self.check())
        p = self.check("--device", "3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), [uuids[3]], p.stdout)
        self.assertIn("8 of 8 NVML devices visible", p.stdout)
        # Numbered as CUDA numbers them: the second device the container sees.
        p = self.check("--device", "1", NVIDIA_VISIBLE_DEVICES="2,5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.uuids(p), [uuids[5]], p.stdout)
        p = self.check("--device", "2", NVIDIA_VISIBLE_DEVICES="2,5")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(self.uuids(p), [])
        self.assertIn("--device 2: the container sees only 2 of the 8 GPU(s) NVML reports "
                      "(NVIDIA_VISIBLE_DEVICES=2,5)", p.stderr)
        p = self.check("--device", "8")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("--device 8: the container sees only 8 of the 8 GPU(s)", p.stderr)

    def test_visible_device_missing(self):
        uuids = self.uuids(self.check())
        p = self.check(NVIDIA_VISIBLE_DEVICES="9")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(self.uuids(p), [])
        self.assertIn("no-gpu: NVIDIA_VISIBLE_DEVICES names GPU 9, but NVML reports 8 GPUs, indexes 0 to 7",
                      p.stderr)
        self.assertIn("hint: the container was given a GPU that NVML does not report", p.stderr)
        self.assertNotIn("NVML sees no GPU", p.stderr)
        p = self.check(NVIDIA_VISIBLE_DEVICES="GPU-00000000-dead-beef")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("NVIDIA_VISIBLE_DEVICES names GPU-00000000-dead-beef, but none of the 8 GPU(s) NVML "
                      f"reports has that UUID (NVML has 0: {uuids[0]}, 1: {uuids[1]}", p.stderr)
        self.assertIn(f"7: {uuids[7]})", p.stderr)
        p = self.check(NVIDIA_VISIBLE_DEVICES="9:0")
        self.assertIn("names MIG device 9:0, but NVML reports 8 GPUs, indexes 0 to 7", p.stderr)

    def test_nvml_failure(self):
        p = self.check(MOCK_NVML_INIT_ERROR="driver-not-loaded")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("nvmlInit_v2", p.stderr)
        self.assertIn("driver-not-loaded", p.stderr)

    def test_require_cuda(self):
        p = self.check("--require-cuda")
        self.assertEqual(p.returncode, 5)
        self.assertIn(f"no CUDA driver ({NO_CUDA} not found) and --require-cuda", p.stderr)
        self.assertNotIn("mock GPU backend", p.stdout)

    def test_no_driver_at_all(self):
        p = cuda_check("--cuda-library", NO_CUDA, "--nvml-library", "/nonexistent/gv-test/libnvidia-ml.so.1")
        self.assertEqual(p.returncode, 5)
        self.assertIn("no GPU driver: neither a CUDA driver nor an NVML library could be loaded", p.stderr)
        # A library that exists but is no CUDA driver is a failure, not "no driver".
        p = cuda_check("--cuda-library", MOCK_NVML)
        self.assertEqual(p.returncode, 1)
        self.assertIn("required symbol cuInit is missing", p.stderr)


class MockLibcuda(TempDirTestCase):
    """A mock driver root from `gpu-validator mock install`: cuda-check loads its libcuda.so.1 by soname, as in a
    validation pod, and runs the kernel through the real CUDA code path on the mock's CPU backend."""

    def setUp(self):
        super().setUp()
        self.root = self.path("root")
        run(["mock", "install", "--root", self.root, "--profile", "h100-sxm5-80gb", "--gpus", "2",
             "--device-nodes=files"], check=0)
        self.lib64 = os.path.join(self.root, "usr", "lib64")
        self.assertTrue(os.path.islink(os.path.join(self.lib64, "libcuda.so.1")))
        self.assertTrue(os.path.isfile(os.path.join(self.lib64, "libcuda.so.550.163.01")))

    def check(self, *args, **extra):
        extra.setdefault("LD_LIBRARY_PATH", self.lib64)
        return cuda_check("--elements", "65536", *args, **extra)

    def test_passes_on_every_gpu(self):
        p = self.check("--require-cuda", "--expect-devices", "2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "CUDA driver libcuda.so.1: CUDA 12.4, 2 device(s)")
        for i, line in enumerate(lines[1:3]):
            m = OK_LINE.match(line)
            self.assertIsNotNone(m, line)
            self.assertEqual((int(m.group(1)), m.group(2), m.group(3)), (i, "NVIDIA H100 80GB HBM3", "65536"))
        self.assertNotIn("mock GPU backend", p.stdout)

    def test_visible_devices(self):
        p = self.check(NVIDIA_VISIBLE_DEVICES="1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("CUDA 12.4, 1 device(s)", p.stdout)
        p = self.check(NVIDIA_VISIBLE_DEVICES="none", CUDA_VISIBLE_DEVICES="0")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("CUDA 12.4, 0 device(s)", p.stdout)

    def test_faults(self):
        for extra, code, message in (
                ({"MOCK_NVML_LOST_GPUS": "1"}, 1, "cuInit: unknown error (CUDA_ERROR_UNKNOWN, 999)"),
                ({"MOCK_NVML_INIT_ERROR": "driver-not-loaded"}, 1,
                 "driver-not-loaded: CUDA driver libcuda.so.1: cuInit: no CUDA-capable device is detected "
                 "(CUDA_ERROR_NO_DEVICE, 100)"),
                ({"MOCK_NVML_INIT_ERROR": "lib-rm-version-mismatch"}, 1,
                 "cuInit: system has unsupported display driver / cuda driver combination "
                 "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)")):
            p = self.check(**extra)
            self.assertEqual(p.returncode, code, f"{extra}: {p.stdout}{p.stderr}")
            self.assertIn(message, p.stderr, extra)
        # The lost GPU outside the container does not matter.
        p = self.check(MOCK_NVML_LOST_GPUS="1", NVIDIA_VISIBLE_DEVICES="0")
        self.assertEqual(p.returncode, 0, p.stderr)
