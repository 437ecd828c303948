"""Upstream consumers keep working unchanged against our markers, the older
driver-root logic never picks the wrong root while the driver re-validates,
and SIGKILL at random moments never breaks the chain invariant."""
import os
import random
import re
import signal
import subprocess
import threading
import time

import chain
import gvtest

UPSTREAM = os.path.join(gvtest.SHARED, "cases", "upstream-gpu-operator")


def entrypoint(configmap):
    """The entrypoint.sh text of an upstream ConfigMap (block scalar under data)."""
    with open(os.path.join(UPSTREAM, configmap)) as f:
        text = f.read()
    body = text.split("entrypoint.sh: |-\n", 1)[1]
    lines = []
    for line in body.splitlines():
        if line.strip() and not line.startswith("    "):
            break
        lines.append(line[4:])
    return "\n".join(lines) + "\n"


class TestUpstreamConsumers(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)
        self.bin = self.path("bin")
        os.makedirs(self.bin)
        # Stand-ins for the programs the entrypoints exec: they print what they were given.
        for prog in ("nvidia-toolkit", "nvidia-device-plugin"):
            with open(os.path.join(self.bin, prog), "w") as f:
                f.write('#!/bin/sh\nprintf "%s|%s\\n" "$NVIDIA_DRIVER_ROOT" "$IS_HOST_DRIVER"\n')
            os.chmod(os.path.join(self.bin, prog), 0o755)
        with open(os.path.join(self.bin, "sleep"), "w") as f:  # the entrypoints' 5 s pauses
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(self.bin, "sleep"), 0o755)

    def consume(self, configmap):
        script = entrypoint(configmap).replace("/run/nvidia/validations", self.node.status)
        path = self.path(configmap + ".sh")
        with open(path, "w") as f:
            f.write(script)
        env = {"PATH": self.bin + ":" + os.environ.get("PATH", "/usr/bin:/bin")}
        p = subprocess.run(["sh", path], capture_output=True, text=True, env=env, timeout=60, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().splitlines()[-1]

    def test_toolkit_and_device_plugin_entrypoints_container_driver(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        for cm in ("assets_state-container-toolkit_0400_configmap.yaml",
                   "assets_state-device-plugin_0400_configmap.yaml"):
            self.assertEqual(self.consume(cm), f"{self.node.driver}|false", cm)

    def test_toolkit_and_device_plugin_entrypoints_host_driver(self):
        self.node.install_mock("host", gpus=1)
        self.node.run("driver", check=0)
        for cm in ("assets_state-container-toolkit_0400_configmap.yaml",
                   "assets_state-device-plugin_0400_configmap.yaml"):
            self.assertEqual(self.consume(cm), f"{self.node.host}|true", cm)

    def test_toolkit_validation_init_container_waits_for_toolkit_ready(self):
        with open(os.path.join(UPSTREAM, "assets_state-device-plugin_0500_daemonset.yaml")) as f:
            m = re.search(r'args: \["(until \[ -f /run/nvidia/validations/toolkit-ready \].*?)"\]', f.read())
        script = m.group(1).replace("/run/nvidia/validations", self.node.status).replace("sleep 5", "sleep 0.05")
        self.node.install_mock("driver", gpus=1)
        waiter = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        self.assertIsNone(waiter.poll(), "returned before toolkit-ready existed")
        self.node.run("driver,toolkit", check=0)
        waiter.wait(timeout=10)
        self.assertEqual(waiter.returncode, 0)


class TestOlderConsumerRace(gvtest.TempDirTestCase):
    ROUNDS = 1000

    def test_older_consumer_picks_right_root_while_driver_revalidates(self):
        node = chain.Node(self.tmp)
        node.install_mock("host", gpus=1)
        node.run("driver,toolkit", check=0)
        stop = threading.Event()
        revalidations = [0]

        def revalidate():
            while not stop.is_set():
                node.run("driver,toolkit", check=0)
                revalidations[0] += 1

        t = threading.Thread(target=revalidate)
        t.start()
        # The older device plugin's logic (upstream issue 508), in a loop of rounds.
        script = f'''
        v="{node.status}"
        wrong=0
        i=0
        while [ $i -lt {self.ROUNDS} ]; do
          until [ -f "$v/toolkit-ready" ]; do :; done
          [ -f "$v/host-driver-ready" ] && driver_root=/ || driver_root=/run/nvidia/driver
          [ "$driver_root" = / ] || wrong=$((wrong+1))
          i=$((i+1))
          # Next round only after the next re-validation has begun.
          while [ -f "$v/toolkit-ready" ]; do :; done
        done
        echo "$wrong"
        '''
        try:
            p = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=600)
        finally:
            stop.set()
            t.join()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "0", "rounds that picked the container driver root")
        self.assertGreaterEqual(revalidations[0], self.ROUNDS - 1)
        print(f"# {self.ROUNDS} rounds, {revalidations[0]} concurrent re-validations")


class TestCrashConsistency(gvtest.TempDirTestCase):
    TRIALS = 500

    def test_sigkill_at_random_moments_keeps_the_invariant(self):
        seed = int(os.environ.get("GV_CRASH_SEED", str(random.randrange(1 << 30))))
        print(f"# crash-consistency seed {seed} (set GV_CRASH_SEED to replay)")
        rng = random.Random(seed)
        node = chain.Node(self.tmp)
        node.install_mock("driver", gpus=2)
        # Measure one run to spread the kill moments over its whole length.
        t0 = time.monotonic()
        node.run("driver,toolkit", check=0)
        span = max(time.monotonic() - t0, 0.01)
        cmd = [gvtest.GV, "run", "--components", "driver,toolkit", *node.args()]
        violations = []
        for trial in range(self.TRIALS):
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=gvtest.clean_env())
            time.sleep(rng.uniform(0, span * 1.2))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            problems = chain.invariant_violations(node.status, node.boot)
            if problems:
                violations.append((trial, problems))
        self.assertEqual(violations, [], f"seed {seed}")
        # The next run cleans up whatever a killed writer left, and publishes the chain.
        node.run("driver,toolkit", check=0)
        leftovers = [n for n in os.listdir(node.status) if ".tmp" in n]
        self.assertEqual(leftovers, [])
