"""Upstream's nvidia-validator flags in drop-in mode (no command): each flag of
cmd/nvidia-validator/main.go (GPU Operator a22dbf67, urfave/cli) with its upstream meaning, in
its long, short and one-dash spellings, and the variables CLEANUP_ALL and MIG_STRATEGY."""
import http.client
import os
import re
import socket
import subprocess
import time

import chain
import gvtest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DropInCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)
        with open("/proc/sys/kernel/random/boot_id") as f:  # drop-in mode reads the real one
            self.node.set_boot_id(f.read().strip())
        self.node.install_mock("driver", gpus=2)

    def gv(self, *flags, check=None, timeout=60, **env):
        """gpu-validator with upstream's flags only (no command), the node's boot id and a
        /dev/char folder of the test's own."""
        e = gvtest.clean_env(**{"DEV_CHAR_DIR": self.node.devchar, "DEV_NODE_WAIT_SECONDS": "1", **env})
        return gvtest.run(list(flags), env=e, check=check, timeout=timeout)

    def driver_flags(self, *extra):
        n = self.node
        return ["-c", "driver", "-o", n.status, "--host-root", n.host, "--driver-install-dir", n.driver,
                "--driver-install-dir-ctr-path", n.driver, *extra]


class TestDropInFlags(DropInCase):
    def test_component_and_output_dir_in_every_spelling(self):
        for flags in (["-c", "driver", "-o", self.path("a")],
                      ["--component", "driver", "--output-dir", self.path("b")],
                      ["--component=driver", "--output-dir=" + self.path("c")],
                      ["-component", "driver", "-output-dir", self.path("d")]):
            with self.subTest(flags=flags):
                out = flags[-1].split("=")[-1]
                self.gv(*flags, "--host-root", self.node.host, "--driver-install-dir", self.node.driver,
                        "--driver-install-dir-ctr-path", self.node.driver, check=0)
                self.assertTrue(os.path.isfile(os.path.join(out, "driver-ready")))

    def test_flag_wins_over_its_variable(self):
        p = self.gv(*self.driver_flags(), check=0, OUTPUT_DIR=self.path("env"), COMPONENT="toolkit")
        self.assertRegex(p.stdout, r"(?m)^driver\s+ok")
        self.assertTrue(os.path.isfile(self.node.marker("driver-ready")))
        self.assertFalse(os.path.exists(self.path("env")))

    def test_driver_install_dir_and_its_ctr_path(self):
        # the driver root as the host sees it goes into driver-ready; it is found at the ctr path
        p = self.gv("-c", "driver", "-o", self.node.status, "--host-root", self.node.host,
                    "--driver-install-dir", "/run/nvidia/driver-on-host",
                    "--driver-install-dir-ctr-path", self.node.driver, check=0)
        d = self.node.read("driver-ready")
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], "/run/nvidia/driver-on-host")
        self.assertEqual(d["IS_HOST_DRIVER"], "false")
        self.assertIn("container driver", p.stdout)

    def test_host_root(self):
        host = self.path("hostroot")
        self.node.install_mock(host, gpus=1)
        self.gv("-c", "driver", "-o", self.node.status, "--host-root", host, check=0)
        d = self.node.read("driver-ready")
        self.assertEqual((d["IS_HOST_DRIVER"], d["NVIDIA_DRIVER_ROOT"]), ("true", host))

    @staticmethod
    def first_delay(p):
        """The first retry delay in seconds (jittered by up to 20 %)."""
        m = re.search(r"retrying in (\d+\.\d) s", p.stderr)
        assert m, p.stderr[-2000:]
        return float(m.group(1))

    def test_with_wait_and_sleep_interval_seconds(self):
        empty = self.path("nothing")
        os.makedirs(empty)
        base = ["-c", "driver", "-o", self.node.status, "--host-root", empty, "--driver-install-dir", empty,
                "--driver-install-dir-ctr-path", empty]
        # one try: a failure at once
        p = self.gv(*base, check=1, MAX_WAIT_SECONDS="2")
        self.assertNotIn("retrying", p.stderr)
        for wait in (["-w"], ["--with-wait"], ["--with-wait=true"], ["-with-wait"]):
            with self.subTest(wait=wait):
                t0 = time.monotonic()
                p = self.gv(*base, *wait, "-s", "1", check=3, MAX_WAIT_SECONDS="2")
                self.assertAlmostEqual(self.first_delay(p), 1.0, delta=0.3)
                self.assertLess(time.monotonic() - t0, 30)
        p = self.gv(*base, "--with-wait=false", check=1, WITH_WAIT="true", MAX_WAIT_SECONDS="2")
        self.assertNotIn("retrying", p.stderr)
        p = self.gv(*base, "-w", "--sleep-interval-seconds", "2", check=3, MAX_WAIT_SECONDS="3")
        self.assertAlmostEqual(self.first_delay(p), 2.0, delta=0.5)
        p = self.gv(*base, "-s", "soon", check=2)
        self.assertIn("--sleep-interval-seconds soon: expected a whole number", p.stderr)

    def test_driver_validation_skip_gpu_init(self):
        p = self.gv(*self.driver_flags("--driver-validation-skip-gpu-init"), check=0)
        self.assertIn("GPU init skipped", p.stdout)
        p = self.gv(*self.driver_flags(), check=0)
        self.assertNotIn("GPU init skipped", p.stdout)

    def test_disable_dev_char_symlink_creation(self):
        if os.getuid() != 0:
            self.skipTest("needs root for character device nodes")
        root = self.path("charroot")
        gvtest.run(["mock", "install", "--root", root, "--gpus", "1", "--device-nodes", "char",
                    "--cdi-dir", self.node.cdi, "--dev-char-links"], check=0)
        if not os.path.exists(os.path.join(root, "dev", "nvidia0")) or os.path.isfile(os.path.join(root, "dev",
                                                                                                  "nvidia0")):
            self.skipTest("mknod refused: no character device nodes")
        base = ["-c", "driver", "-o", self.node.status, "--host-root", self.node.host, "--driver-install-dir",
                root, "--driver-install-dir-ctr-path", root]
        links = self.path("links")
        self.gv(*base, "--disable-dev-char-symlink-creation", check=0, DEV_CHAR_DIR=links)
        self.assertFalse(os.path.exists(links) and os.listdir(links))
        self.gv(*base, check=0, DEV_CHAR_DIR=links)
        self.assertTrue(os.path.isdir(links) and os.listdir(links), "no link without the flag")

    def test_cleanup_all(self):
        # a marker the driver's own invalidation never touches
        stray = self.node.marker("vfio-pci-ready")
        for flag in ("-r", "--cleanup-all", "--cleanup-all=true"):
            with self.subTest(flag=flag):
                open(stray, "w").close()
                self.gv(*self.driver_flags(flag), check=0)
                self.assertFalse(os.path.exists(stray))
                self.assertTrue(os.path.isfile(self.node.marker("driver-ready")))
        open(stray, "w").close()
        self.gv(*self.driver_flags(), check=0)
        self.assertTrue(os.path.exists(stray))
        self.gv(*self.driver_flags(), check=0, CLEANUP_ALL="true")
        self.assertFalse(os.path.exists(stray))
        # the driver container's flag is not a validation result: it stays
        with open(self.node.marker(".driver-ctr-ready"), "w") as f:
            f.write("GDS_ENABLED: false\n")
        self.gv(*self.driver_flags("-r"), check=0)
        self.assertTrue(os.path.exists(self.node.marker(".driver-ctr-ready")))
        p = self.gv(*self.driver_flags("--cleanup-all=maybe"), check=2)
        self.assertIn("--cleanup-all=maybe: expected true or false", p.stderr)

    def test_mig_strategy_is_accepted(self):
        for flags in (["-m", "mixed"], ["--mig-strategy", "single"], ["--mig-strategy=none"]):
            with self.subTest(flags=flags):
                self.gv(*self.driver_flags(*flags), check=0)
        self.gv(*self.driver_flags(), check=0, MIG_STRATEGY="mixed")

    def test_node_name_namespace_kubeconfig_with_workload(self):
        # the cuda component names what it lacks, flag by flag (the driver and the toolkit first)
        self.node.run("driver,toolkit", check=0)
        base = ["-c", "cuda", "-o", self.node.status]
        p = self.gv(*base, check=2)
        self.assertIn("NODE_NAME", p.stderr)
        p = self.gv(*base, "-n", "node-a", check=2)
        self.assertIn("OPERATOR_NAMESPACE is not set", p.stderr)
        for ns in (["--ns", "gpu"], ["-ns", "gpu"], ["--namespace", "gpu"], ["-namespace=gpu"]):
            with self.subTest(ns=ns):
                kc = self.path("no-such-kubeconfig")
                p = self.gv(*base, "--node-name", "node-a", *ns, "--kubeconfig", kc, check=2)
                self.assertNotIn("OPERATOR_NAMESPACE is not set", p.stderr)
                self.assertIn(kc, p.stderr)
        # --with-workload=false: cuda-ready without a pod
        for flags in (["--with-workload=false"], ["-l=false"], ["-with-workload=false"]):
            with self.subTest(flags=flags):
                p = self.gv(*base, *flags, check=0)
                self.assertIn("no CUDA workload check", p.stdout)
                self.assertTrue(os.path.isfile(self.node.marker("cuda-ready")))

    def test_default_gpu_workload_config(self):
        for flags in (["-g", "container"], ["--default-gpu-workload-config", "container"]):
            with self.subTest(flags=flags):
                p = self.gv("-c", "vfio-pci", "-o", self.node.status, *flags, check=0,
                            GV_SYSFS_ROOT=self.path("sys"))
                self.assertIn("workload config is container", p.stdout)
                with open(self.node.marker("workload-type")) as f:
                    self.assertEqual(f.read(), "container\n")

    def test_metrics_port_node_name_output_dir(self):
        port = free_port()
        self.gv(*self.driver_flags(), check=0)
        proc = subprocess.Popen([gvtest.GV, "-c", "metrics", "-p", str(port), "-n", "node-x", "-o", self.node.status],
                                env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            body = None
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and body is None:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    c.request("GET", "/metrics")
                    body = c.getresponse().read().decode()
                except OSError:
                    time.sleep(0.1)
            self.assertIsNotNone(body, "the exporter did not listen on -p's port")
            self.assertIn('gpu_operator_node_driver_ready{node="node-x"} 1', body)
        finally:
            proc.terminate()
            proc.wait(10)

    def test_flags_need_the_drop_in_mode_and_a_component(self):
        p = self.gv("--with-wait", "status", check=2)
        self.assertIn("--with-wait is one of upstream's flags", p.stderr)
        p = self.gv("--with-wait", check=2)
        self.assertIn("no command and no component", p.stderr)
        p = self.gv("-c", "nothing", check=2)
        self.assertIn("unknown component 'nothing'", p.stderr)
        help_text = gvtest.run(["--help"], check=0).stdout
        for name in ("component", "output-dir", "with-wait", "with-workload", "node-name", "namespace",
                     "cleanup-all", "sleep-interval-seconds", "mig-strategy", "metrics-port",
                     "default-gpu-workload-config", "disable-dev-char-symlink-creation", "host-root",
                     "driver-install-dir", "driver-install-dir-ctr-path", "driver-validation-skip-gpu-init",
                     "kubeconfig"):
            self.assertRegex(help_text, rf"--{name}\b")
        self.assertIsNotNone(re.search(r"--ns, --namespace", help_text))
