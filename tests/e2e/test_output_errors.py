"""Output that cannot be written is an error, never a silent success: a
consumer that runs `eval "$(gpu-validator env)"` must not get exit 0 with
half of the variables (found by cert-err33-c in tools/static-analysis.sh)."""
import os
import subprocess

import chain
import gvtest


class TestOutputErrors(gvtest.TempDirTestCase):
    def test_env_to_a_full_device_fails(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        node = chain.Node(self.tmp)
        node.install_mock("driver", gpus=1)
        node.run("driver", check=0)
        gvtest.run(["env", *node.store_args()], check=0)  # it works on a pipe
        with open("/dev/full", "w") as full:
            p = subprocess.run([gvtest.GV, "env", *node.store_args()], stdout=full, stderr=subprocess.PIPE,
                               text=True, env=gvtest.clean_env(), timeout=60)
        self.assertNotEqual(p.returncode, 0, "env exited 0 though nothing could be written")
        self.assertIn("write", p.stderr)
