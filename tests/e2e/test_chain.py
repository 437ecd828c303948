"""End-to-end tests of the validation chain: the real gpu-validator binary on
temporary folders with a mock driver root.  Field reports FR01-FR06, FR12,
FR13, FR17 (shared/cases/field-reports.md)."""
import os
import re
import shutil
import signal
import stat
import subprocess
import threading
import time

import chain
import gvtest

GENERATION_RE = re.compile(r"^[0-9a-f]{32}$")


class ChainTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)


class TestPublish(ChainTestCase):
    def test_container_driver_chain_publishes_upstream_keys(self):
        self.node.install_mock("driver", gpus=2)
        p = self.node.run("driver,toolkit", check=0)
        self.assertIn("driver", p.stdout)
        self.assertEqual(self.node.present(), ["driver-ready", "toolkit-ready"])
        d = self.node.read("driver-ready")
        self.assertEqual(d["IS_HOST_DRIVER"], "false")
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], self.node.driver)
        self.assertEqual(d["DRIVER_ROOT_CTR_PATH"], "/driver-root")
        self.assertEqual(d["NVIDIA_DEV_ROOT"], self.node.driver)  # the mock root has dev/
        self.assertEqual(d["DEV_ROOT_CTR_PATH"], "/driver-root")
        self.assertEqual(d["GPU_COUNT"], "2")
        self.assertEqual(d["BOOT_ID"], self.node.boot)
        self.assertRegex(d["GENERATION"], GENERATION_RE)
        self.assertRegex(d["VALIDATED_AT"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
        self.assertTrue(d["DRIVER_VERSION"])
        t = self.node.read("toolkit-ready")
        self.assertEqual(t["DRIVER_GENERATION"], d["GENERATION"])
        self.assertFalse(self.node.exists("host-driver-ready"))
        for name in ("driver-ready", "toolkit-ready"):
            st = os.lstat(self.node.marker(name))
            self.assertTrue(stat.S_ISREG(st.st_mode))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)

    def test_each_validation_gets_a_new_generation(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        g1 = self.node.read("driver-ready")["GENERATION"]
        self.node.run("driver", check=0)
        g2 = self.node.read("driver-ready")["GENERATION"]
        self.assertNotEqual(g1, g2)

    def test_status_json_and_env(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        p = gvtest.run(["status", "--json", *self.node.store_args()], check=0)
        import json
        doc = json.loads(p.stdout)
        states = {m["marker"]: m["state"] for m in doc["markers"]}
        self.assertEqual(states["driver-ready"], "ready")
        self.assertEqual(states["toolkit-ready"], "missing")
        p = gvtest.run(["env", *self.node.store_args()], check=0)
        out = chain.sh(p.stdout + '\nprintf "%s|%s" "$NVIDIA_DRIVER_ROOT" "$IS_HOST_DRIVER"')
        self.assertEqual(out.stdout, f"{self.node.driver}|false")

    def test_wait_print_env_prints_the_ready_chains_driver(self):
        """`wait toolkit --print-env`: nothing while toolkit-ready is missing (exit 3, no output);
        once the chain is ready, driver-ready's variables, sourceable by sh."""
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        p = gvtest.run(["wait", "toolkit", "--timeout", "0", "--print-env", *self.node.store_args()], check=3)
        self.assertEqual(p.stdout, "")
        self.node.run("driver,toolkit", check=0)
        p = gvtest.run(["wait", "toolkit", "--timeout", "5", "--print-env", *self.node.store_args()], check=0)
        out = chain.sh(p.stdout + '\nprintf "%s|%s" "$NVIDIA_DRIVER_ROOT" "$IS_HOST_DRIVER"')
        self.assertEqual(out.stdout, f"{self.node.driver}|false")

    def test_env_fails_without_valid_driver_marker(self):
        open(self.node.marker("driver-ready"), "w").close()
        p = gvtest.run(["env", *self.node.store_args()], check=1)
        self.assertEqual(p.stdout, "")
        self.assertIn("foreign", p.stderr)

    def test_env_exports_only_documented_keys(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        # Someone appends hostile keys to a valid driver-ready.
        with open(self.node.marker("driver-ready"), "a") as f:
            f.write("PATH=/evil\nLD_PRELOAD=/tmp/evil.so\n")
        p = gvtest.run(["env", *self.node.store_args()], check=0)
        self.assertIn("export NVIDIA_DRIVER_ROOT=", p.stdout)
        self.assertNotIn("export PATH=", p.stdout)
        self.assertNotIn("LD_PRELOAD", p.stdout)

    def test_env_refuses_driver_ready_without_upstream_keys(self):
        with open(self.node.marker("driver-ready"), "w") as f:
            f.write(f"GENERATION={'ab' * 16}\nBOOT_ID={self.node.boot}\nPATH=/evil\n")
        p = gvtest.run(["env", *self.node.store_args()], check=1)
        self.assertEqual(p.stdout, "")
        self.assertIn("not written by a driver validation", p.stderr)

    def test_status_json_is_valid_utf8_for_any_marker_bytes(self):
        import json
        with open(self.node.marker("driver-ready"), "wb") as f:
            f.write(f"GENERATION={'ab' * 16}\nBOOT_ID={self.node.boot}\nX='\xff\xfe'\n".encode("latin-1"))
        p = subprocess.run([gvtest.GV, "status", "--json", *self.node.store_args()], capture_output=True,
                           env=gvtest.clean_env(), timeout=30)
        doc = json.loads(p.stdout.decode("utf-8"))
        content = {m["marker"]: m.get("content", {}) for m in doc["markers"]}
        self.assertEqual(content["driver-ready"]["X"], "\ufffd\ufffd")

    def test_mock_only_options_without_mock_are_usage_errors(self):
        p = gvtest.run(["run", "--gpus", "2", "--output-dir", self.node.status], check=2)
        self.assertIn("--mock", p.stderr)
        gvtest.run(["run", "--components", "", "--output-dir", self.node.status], check=2)
        self.assertEqual(self.node.present(), [])

    def test_component_flag_is_upstreams_drop_in(self):
        self.node.install_mock("driver", gpus=1)
        env = gvtest.clean_env(OUTPUT_DIR=self.node.status, HOST_ROOT=self.node.host,
                               DRIVER_INSTALL_DIR=self.node.driver, DRIVER_INSTALL_DIR_CTR_PATH=self.node.driver,
                               DEV_CHAR_DIR=self.node.devchar, DEV_NODE_WAIT_SECONDS="1")
        p = subprocess.run([gvtest.GV, "-c", "driver"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(self.node.exists("driver-ready"))

    def test_cleanup_removes_markers_keeps_driver_ctr_ready(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver,toolkit", check=0)
        open(self.node.marker(".driver-ctr-ready"), "w").close()
        gvtest.run(["cleanup", *self.node.store_args()], check=0)
        self.assertEqual(self.node.present(), [])
        self.assertTrue(self.node.exists(".driver-ctr-ready"))

    def test_cleanup_of_missing_folder_succeeds(self):
        # nothing to remove is a success that says so, and creates nothing (not even the folder)
        before = sorted(os.listdir(self.tmp))
        nope = self.path("nope")
        p = gvtest.run(["cleanup", "--output-dir", nope], check=0)
        self.assertEqual(p.stderr, "")  # quiet by default: an info event
        p = gvtest.run(["cleanup", "--output-dir", nope, "-v"], check=0)
        self.assertIn(f"cleanup: {nope} does not exist; nothing to remove", p.stderr)
        self.assertNotIn("error", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertFalse(os.path.lexists(nope))
        self.assertEqual(sorted(os.listdir(self.tmp)), before)
        # a missing parent as well
        deeper = self.path("nope", "status")
        p = gvtest.run(["cleanup", "--output-dir", deeper, "-v"], check=0)
        self.assertIn(f"{deeper} does not exist; nothing to remove", p.stderr)
        self.assertFalse(os.path.lexists(nope))

    def test_status_and_wait_of_missing_folder(self):
        # status says the folder is not there (exit 2: nothing was validated with it); wait waits for it.
        bid = ["--boot-id-file", self.node.boot_id]
        p = gvtest.run(["status", "--output-dir", self.path("nope"), *bid], check=2)
        self.assertIn("does not exist: nothing has been validated with it", p.stderr)
        self.assertIn("does not exist or cannot be read", gvtest.run(["status", "--help"], check=0).stdout)
        gvtest.run(["wait", "driver", "--timeout", "0", "--output-dir", self.path("nope"), *bid], check=3)
        self.assertIn("does not exist yet is waited for", gvtest.run(["wait", "--help"], check=0).stdout)

    def test_boot_id_file_one_rule_for_every_command(self):
        for content in ("garbage\n", "", "6f1c7d52-0c7e-4e8e-9d4a-1b1d2f3a4b5\n"):
            bad = self.path("boot_id_bad")
            with open(bad, "w") as f:
                f.write(content)
            for args in (["status"], ["wait", "driver", "--timeout", "0"], ["env"], ["cleanup"]):
                p = gvtest.run([*args, "--output-dir", self.node.status, "--boot-id-file", bad], check=2)
                self.assertIn(f"{bad}: not a boot id (expected a UUID", p.stderr, f"{args} {content!r}")

    def test_unreadable_boot_id_file_is_exit_2_for_every_command(self):
        # docs/markers.md: a boot id file that cannot be read is a configuration error (exit 2)
        # for every command -- cleanup included, which must not take it for a missing folder.
        self.node.install_mock("driver", gpus=1)
        missing = self.path("no-boot-id")
        folder = self.path("boot-id-folder")
        os.mkdir(folder)
        commands = (["status"], ["wait", "driver", "--timeout", "0"], ["env"], ["cleanup"],
                    ["run", "--components", "driver"])
        for bad in (missing, folder):
            for args in commands:
                extra = self.node.args()[4:] if args[0] == "run" else []
                p = gvtest.run([*args, "--output-dir", self.node.status, "--boot-id-file", bad, *extra])
                self.assertEqual(p.returncode, 2, f"{args} {bad}\n{p.stdout}{p.stderr}")
                self.assertIn(bad, p.stderr, args)
                self.assertIn("boot id", p.stderr, args)

    def test_many_component_names_run_each_component_once(self):
        # The selection has a fixed size: naming components many times must neither overflow
        # it nor run a component twice.
        self.node.install_mock("driver", gpus=1)
        p = self.node.run(",".join(["toolkit", "driver"] * 200), check=0)
        lines = [l for l in p.stdout.splitlines() if re.match(r"^(driver|toolkit) +ok ", l)]
        self.assertEqual([l.split()[0] for l in lines], ["driver", "toolkit"], p.stdout)
        self.assertEqual(self.node.present(), ["driver-ready", "toolkit-ready"])

    def test_mock_gpus_range_is_the_mock_profiles(self):
        for bad in ("0", "65", "-1", "x"):
            p = gvtest.run(["run", "--mock", "--gpus", bad, "--mock-dir", self.path("m")], check=2)
            self.assertIn(f"--gpus {bad}: expected 1 to 64", p.stderr)
        self.assertIn("number of mock GPUs (1-64)", gvtest.run(["run", "--help"], check=0).stdout)

    def test_unknown_component_is_a_usage_error(self):
        p = self.node.run("driver,frobnicate", check=2)
        self.assertIn("frobnicate", p.stderr)

    def test_bad_environment_value_is_a_usage_error(self):
        env = gvtest.clean_env(WITH_WAIT="perhaps")
        p = self.node.run("driver", env=env, check=2)
        self.assertIn("WITH_WAIT", p.stderr)

    def test_upstream_drop_in_mode_with_COMPONENT(self):
        self.node.install_mock("driver", gpus=1)
        env = gvtest.clean_env(COMPONENT="driver", OUTPUT_DIR=self.node.status, HOST_ROOT=self.node.host,
                               DRIVER_INSTALL_DIR=self.node.driver, DRIVER_INSTALL_DIR_CTR_PATH=self.node.driver,
                               DEV_CHAR_DIR=self.node.devchar, DEV_NODE_WAIT_SECONDS="1")
        p = subprocess.run([gvtest.GV], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(self.node.exists("driver-ready"))
        self.assertFalse(self.node.exists("toolkit-ready"))

    def test_symlink_planted_at_marker_name_is_replaced_not_followed(self):
        self.node.install_mock("driver", gpus=1)
        victim = self.path("victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.symlink(victim, self.node.marker("driver-ready"))
        self.node.run("driver", check=0)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertFalse(os.path.islink(self.node.marker("driver-ready")))
        self.assertEqual(self.node.read("driver-ready")["IS_HOST_DRIVER"], "false")


class TestFieldReports(ChainTestCase):
    def test_status_folder_symlink_refused_however_spelled(self):
        # A symlink as the status folder is refused; "link/" or "link/." must not be written through.
        self.node.install_mock("driver", gpus=1)
        target = self.path("elsewhere")
        os.mkdir(target)
        link = self.path("status-link")
        os.symlink(target, link)
        for spelled in (link, link + "/", link + "//", link + "/."):
            env = gvtest.clean_env(OUTPUT_DIR=spelled)
            args = self.node.args()[2:]  # no --output-dir: OUTPUT_DIR decides
            p = gvtest.run(["run", "--components", "driver", *args], env=env)
            self.assertNotEqual(p.returncode, 0, spelled)
            self.assertIn("symbolic link; refused", p.stderr, spelled)
            self.assertEqual(os.listdir(target), [], spelled)
            p = gvtest.run(["cleanup", "--output-dir", spelled, "--boot-id-file", self.node.boot_id])
            self.assertNotEqual(p.returncode, 0, spelled)

    def test_status_folder_symlink_refused_when_spelled_with_dot_dot(self):
        # LINK/sub/.. names LINK's target by way of the symbolic link: refused like LINK itself,
        # for every spelling of it; a '..' after a symbolic link is refused too (it would name the
        # parent of the link's target); a '..' through real folders only is fine.
        self.node.install_mock("driver", gpus=1)
        target = self.path("elsewhere")
        os.makedirs(os.path.join(target, "sub", "x"))
        link = self.path("status-link")
        os.symlink(target, link)
        os.makedirs(self.path("real"))
        os.symlink(os.path.join(target, "sub"), self.path("real", "sublink"))
        spellings = [f"{link}/sub/..", f"{link}/sub/../", f"{link}/sub/../.", f"{link}/./sub/..",
                     f"{link}//sub//..", f"{link}/sub/./..", f"{link}/sub/x/../..", f"{link}/sub/../sub/..",
                     self.path("real", "sublink", ".."), self.path("real", "sublink", "x", "..", "..")]
        for spelled in spellings:
            with self.subTest(spelled=spelled):
                env = gvtest.clean_env(OUTPUT_DIR=spelled)
                args = self.node.args()[2:]  # no --output-dir: OUTPUT_DIR decides
                p = gvtest.run(["run", "--components", "driver", *args], env=env)
                self.assertNotEqual(p.returncode, 0, spelled)
                self.assertIn("symbolic link", p.stderr, spelled)
                self.assertEqual(sorted(os.listdir(target)), ["sub"], spelled)
                self.assertEqual(os.listdir(os.path.join(target, "sub")), ["x"], spelled)
                p = gvtest.run(["cleanup", "--output-dir", spelled, "--boot-id-file", self.node.boot_id])
                self.assertNotEqual(p.returncode, 0, spelled)
                p = gvtest.run(["status", "--output-dir", spelled, "--boot-id-file", self.node.boot_id])
                self.assertNotEqual(p.returncode, 0, spelled)
        # through real folders only, '..' is just a spelling
        os.makedirs(self.path("real", "a", "b"))
        spelled = self.path("real", "a", "b", "..", "..", "st")
        gvtest.run(["run", "--components", "driver", *self.node.args()[2:]], check=0,
                   env=gvtest.clean_env(OUTPUT_DIR=spelled))
        self.assertTrue(os.path.isfile(self.path("real", "st", "driver-ready")))

    def _plant_lock(self, kind):
        lock = self.node.marker(".gpu-validator.lock")
        if os.path.lexists(lock):
            os.unlink(lock)
        if kind == "fifo":
            os.mkfifo(lock)
        elif kind == "folder":
            os.mkdir(lock)
        else:  # a symlink to a file that must be neither created nor touched
            os.symlink(self.path("victim"), lock)
        return lock

    def test_non_regular_lock_still_removes_markers_downstream_of_a_failure(self):
        self.node.install_mock("driver", gpus=1)
        for kind in ("fifo", "folder", "symlink"):
            self.node.run("driver,toolkit", check=0)
            self.assertEqual(self.node.present(), ["driver-ready", "toolkit-ready"], kind)
            lock = self._plant_lock(kind)
            # a failing driver check: nothing downstream may keep reading as ready
            env = gvtest.clean_env(**{gvtest.MOCK_FAULT_INIT_VAR: "DRIVER_NOT_LOADED"})
            p = self.node.run("driver,toolkit", env=env, check=1)
            out = p.stdout + p.stderr
            self.assertEqual(self.node.present(), [], f"{kind}: {out}")
            self.assertIn(".gpu-validator.lock", out, kind)
            self.assertIn("not a regular file", out, kind)
            self.assertIn("remove it", out, kind)
            self.assertNotIn("may still read as ready", out, kind)
            gvtest.run(["wait", "toolkit", "--timeout", "0", *self.node.store_args()], check=3)
            self.assertFalse(os.path.lexists(self.path("victim")), kind)
            # nothing can be published while the lock is not a regular file ...
            p = self.node.run("driver", check=1)
            self.assertIn("not a regular file", p.stdout + p.stderr, kind)
            self.assertEqual(self.node.present(), [], kind)
            # ... and cleanup removes what is there, then says what to do
            with open(self.node.marker("driver-ready"), "w") as f:
                f.write(f"GENERATION={'ab' * 16}\nBOOT_ID={self.node.boot}\n")
            p = gvtest.run(["cleanup", *self.node.store_args()], check=1)
            self.assertIn("not a regular file", p.stderr, kind)
            self.assertEqual(self.node.present(), [], kind)
            self.assertFalse(os.path.lexists(self.path("victim")), kind)
            # removing the planted file is the way out
            if kind == "folder":
                os.rmdir(lock)
            else:
                os.unlink(lock)
            self.node.run("driver", check=0)

    def test_wait_follows_status_folder_removed_and_recreated(self):
        # docs/markers.md: wait follows a re-created folder.  The folder is emptied, removed and
        # re-created at once while wait holds it open (no IN_DELETE_SELF comes then), the chain is
        # published, and withdrawn 3 s later: a wait that missed the publication, only looking again
        # at its deadline, finds nothing and exits 3.
        self.node.install_mock("driver", gpus=1)
        args = self.node.args()
        gvtest.run(["cleanup", *self.node.store_args()], check=0)
        for _ in range(2):
            os.unlink(self.node.marker(".gpu-validator.lock"))
            waiter = subprocess.Popen([gvtest.GV, "wait", "toolkit", "--timeout", "10", *self.node.store_args()],
                                      env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
            time.sleep(0.5)
            # (an empty folder: no event at all reaches the folder's own watch)
            os.rmdir(self.node.status)
            os.mkdir(self.node.status)
            gvtest.run(["run", "--components", "driver,toolkit", *args], check=0)
            time.sleep(3)
            gvtest.run(["cleanup", *self.node.store_args()], check=0)
            out, errs = waiter.communicate(timeout=30)
            self.assertEqual(waiter.returncode, 0, out + errs)

    def _without_inotify(self, args):
        """@args run by `gpu-validator` in a user namespace whose inotify-instance limit is 0:
        inotify_init1() fails with EMFILE there, as when fs.inotify.max_user_instances is used up
        (a fleet of node signals took root's 128 once).  Skipped where no user namespace can be made."""
        unshare = shutil.which("unshare")
        probe = unshare and subprocess.run(
            [unshare, "--user", "--map-root-user", "sh", "-c", "echo 0 > /proc/sys/user/max_inotify_instances"],
            capture_output=True)
        if not probe or probe.returncode != 0:
            self.skipTest("no user namespace with its own inotify limit here (unshare --user)")
        return [unshare, "--user", "--map-root-user", "sh", "-c",
                'echo 0 > /proc/sys/user/max_inotify_instances && exec "$@"', "sh", gvtest.GV, *args]

    def test_wait_without_inotify_polls(self):
        # docs/markers.md: with no inotify instance to be had, wait looks at the folder every
        # second instead (a warning on stderr) rather than failing; a time-out still reports.
        self.node.install_mock("driver", gpus=1)
        args = self.node.args()
        waiter = subprocess.Popen(self._without_inotify(["wait", "toolkit", "--timeout", "20",
                                                         *self.node.store_args()]),
                                  env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        gvtest.run(["run", "--components", "driver,toolkit", *args], check=0)
        t0 = time.monotonic()
        out, errs = waiter.communicate(timeout=30)
        self.assertEqual(waiter.returncode, 0, out + errs)
        self.assertLess(time.monotonic() - t0, 3.0, "polls at least once a second")
        self.assertIn("no inotify", errs)
        self.assertIn("Too many open files", errs)
        self.assertIn("every 1 s", errs)
        self.assertEqual(out, "")
        gvtest.run(["cleanup", *self.node.store_args()], check=0)
        p = subprocess.run(self._without_inotify(["wait", "toolkit", "--timeout", "1", *self.node.store_args()]),
                           env=gvtest.clean_env(), capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("driver-ready: missing", p.stderr)
        # interrupted while polling: exit 4 within a poll interval
        waiter = subprocess.Popen(self._without_inotify(["wait", "toolkit", *self.node.store_args()]),
                                  env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.7)
        t0 = time.monotonic()
        waiter.terminate()
        out, errs = waiter.communicate(timeout=10)
        self.assertEqual(waiter.returncode, 4, out + errs)
        self.assertLess(time.monotonic() - t0, 1.5)

    def test_fr01_stale_toolkit_ready_without_driver_marker(self):
        self.node.install_mock("host", gpus=1)
        # A toolkit-ready left behind, no driver-ready / host-driver-ready.
        with open(self.node.marker("toolkit-ready"), "w") as f:
            f.write("DRIVER_GENERATION=0123456789abcdef0123456789abcdef\n")
        p = gvtest.run(["wait", "toolkit", "--timeout", "1", *self.node.store_args()], check=3)
        self.assertIn("toolkit-ready", p.stderr)
        # The driver component removes toolkit-ready before it touches its own marker,
        # then publishes driver-ready and host-driver-ready (host driver).  A monitor
        # reads driver-ready first, then toolkit-ready: once the new driver-ready
        # exists the old toolkit-ready can never come back (no toolkit run here), so
        # seeing both means toolkit-ready outlived the new driver-ready.
        done = threading.Event()
        both_seen = []
        looked = [0]

        def monitor():
            d_path, t_path = self.node.marker("driver-ready"), self.node.marker("toolkit-ready")
            while not done.is_set():
                d = os.path.exists(d_path)
                t = os.path.exists(t_path)
                looked[0] += 1
                if d and t:
                    both_seen.append(True)

        m = threading.Thread(target=monitor)
        m.start()
        try:
            self.node.run("driver", check=0)
        finally:
            done.set()
            m.join()
        self.assertGreater(looked[0], 0)
        self.assertEqual(both_seen, [], "toolkit-ready outlived the new driver-ready")
        self.assertEqual(self.node.present(), ["driver-ready", "host-driver-ready"])
        d = self.node.read("driver-ready")
        self.assertEqual(d["IS_HOST_DRIVER"], "true")
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], self.node.host)
        self.assertEqual(d["DRIVER_ROOT_CTR_PATH"], "/host")

    def test_fr02_markers_outlive_the_driver(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver,toolkit", check=0)
        # Driver reinstalled: the library is gone from the driver root.
        lib = os.path.join(self.node.driver, "usr", "lib64")
        for f in os.listdir(lib):
            if f.startswith("libnvidia-ml"):
                os.unlink(os.path.join(lib, f))
        p = self.node.run("driver", check=1)
        self.assertIn("library-not-found", p.stdout + p.stderr)
        self.assertEqual(self.node.present(), [])
        for comp in ("driver", "toolkit"):
            gvtest.run(["wait", comp, "--timeout", "1", *self.node.store_args()], check=3)

    def test_fr03_device_node_missing_is_named(self):
        self.node.install_mock("driver", gpus=2)
        os.unlink(os.path.join(self.node.driver, "dev", "nvidia-uvm-tools"))
        t0 = time.monotonic()
        p = self.node.run("driver", "--dev-node-wait", "2", check=1)
        self.assertGreaterEqual(time.monotonic() - t0, 1.5, "did not wait for the late node")
        out = p.stdout + p.stderr
        self.assertIn("device-node-missing", out)
        self.assertIn("nvidia-uvm-tools", out)
        self.assertFalse(self.node.exists("driver-ready"))

    def test_fr03_late_device_node_is_waited_for(self):
        self.node.install_mock("driver", gpus=2)
        uvm = os.path.join(self.node.driver, "dev", "nvidia-uvm")
        os.unlink(uvm)

        def create_late():
            time.sleep(1.0)
            open(uvm, "w").close()

        t = threading.Thread(target=create_late)
        t.start()
        self.node.run("driver", "--dev-node-wait", "10", check=0)
        t.join()
        self.assertTrue(self.node.exists("driver-ready"))

    def test_fr04_touched_marker_is_foreign(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        open(self.node.marker("toolkit-ready"), "w").close()
        p = gvtest.run(["status", *self.node.store_args()], check=1)
        row = [l for l in p.stdout.splitlines() if l.startswith("toolkit-ready")][0]
        self.assertIn("foreign", row)
        gvtest.run(["wait", "toolkit", "--timeout", "1", *self.node.store_args()], check=3)

    def test_fr05_empty_driver_dir_keeps_host_driver(self):
        self.node.install_mock("host", gpus=1)
        # self.node.driver is an empty leftover /run/nvidia/driver.
        self.node.run("driver", check=0)
        d = self.node.read("driver-ready")
        self.assertEqual(d["IS_HOST_DRIVER"], "true")
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], self.node.host)
        self.assertTrue(self.node.exists("host-driver-ready"))

    def test_fr06_driver_under_opt_nvidia_layout(self):
        self.node.install_mock("driver", gpus=1)
        # Move usr/lib64 -> lib64 and usr/bin -> bin, as under /opt/nvidia.
        root = self.node.driver
        shutil.move(os.path.join(root, "usr", "lib64"), os.path.join(root, "lib64"))
        shutil.move(os.path.join(root, "usr", "bin"), os.path.join(root, "bin"))
        p = self.node.run("driver", check=0)
        self.assertTrue(self.node.exists("driver-ready"), p.stdout + p.stderr)

    def test_fr06_not_found_lists_every_path_and_the_setting(self):
        # The driver container says it is up, yet nothing is found: wrong roots.
        open(self.node.marker(".driver-ctr-ready"), "w").close()
        t0 = time.monotonic()
        p = self.node.run("driver", "--wait", "--max-wait", "30", check=1)
        self.assertLess(time.monotonic() - t0, 10, "library-not-found must not be retried endlessly")
        out = p.stdout + p.stderr
        self.assertIn("library-not-found", out)
        for folder in ("usr/lib64", "lib64", "lib"):
            self.assertIn(os.path.join(self.node.driver, folder), out)
        self.assertIn("DRIVER_INSTALL_DIR", out)
        self.assertEqual(self.node.present(), [])

    def test_driver_container_not_ready_yet_is_waited_for_within_the_bound(self):
        # An empty driver root and no .driver-ctr-ready: the driver container is
        # still installing, so --wait retries (as upstream) until --max-wait.
        t0 = time.monotonic()
        p = self.node.run("driver", "--wait", "--max-wait", "3", "--sleep-interval", "1", check=3)
        self.assertGreater(time.monotonic() - t0, 2.5)
        out = p.stdout + p.stderr
        self.assertIn(".driver-ctr-ready", out)
        self.assertIn("driver-not-loaded", out)
        self.assertIn(os.path.join(self.node.driver, "usr/lib64"), out)
        self.assertEqual(self.node.present(), [])

    def test_fr12_permission_denied(self):
        self.node.install_mock("driver", gpus=1)
        env = gvtest.clean_env(**{gvtest.MOCK_FAULT_INIT_VAR: "NO_PERMISSION"})
        p = self.node.run("driver", env=env, check=1)
        out = p.stdout + p.stderr
        self.assertIn("permission-denied", out)
        self.assertIn("check device node modes, SELinux, cgroup device rules", out)
        self.assertNotIn("driver-not-loaded", out)
        self.assertNotIn("library-not-found", out)
        self.assertEqual(self.node.present(), [])

    def _smi_stub(self, code):
        smi = os.path.join(self.node.driver, "usr", "bin", "nvidia-smi")
        os.unlink(smi)
        with open(smi, "w") as f:
            f.write("#!/bin/sh\n"
                    "echo '+-----------------------------------------------------------------------------+'\n"
                    "echo '| NVIDIA-SMI 550.163.01   Driver Version: 550.163.01   CUDA Version: 12.4     |'\n"
                    f"exit {code}\n")
        os.chmod(smi, 0o755)

    def test_fr13_infoROM_warning_ready_by_default_failure_when_strict(self):
        self.node.install_mock("driver", gpus=1)
        self._smi_stub(14)
        p = self.node.run("driver", check=0)
        self.assertIn("warning", (p.stdout + p.stderr).lower())
        self.assertTrue(self.node.exists("driver-ready"))
        self.node.run("driver", "--strict", check=1)
        self.assertFalse(self.node.exists("driver-ready"))

    def test_fr13_exit_12_is_not_retried(self):
        self.node.install_mock("driver", gpus=1)
        self._smi_stub(12)
        t0 = time.monotonic()
        p = self.node.run("driver", "--wait", "--max-wait", "30", "--sleep-interval", "1", check=1)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn("library-not-found", p.stdout + p.stderr)

    def test_fr13_exit_18_is_a_mismatch(self):
        self.node.install_mock("driver", gpus=1)
        self._smi_stub(18)
        p = self.node.run("driver", check=1)
        self.assertIn("driver-library-mismatch", p.stdout + p.stderr)

    def test_fr13_exit_code_read_with_sigchld_ignored(self):
        # A container runtime or a shell can start us with SIGCHLD ignored; the kernel then reaps
        # nvidia-smi itself and its exit code was lost (read as 0: a pass).  main() restores it.
        self.node.install_mock("driver", gpus=1)
        for code, reason in ((12, "library-not-found"), (18, "driver-library-mismatch")):
            self._smi_stub(code)
            p = subprocess.run([gvtest.GV, "run", "--components", "driver", *self.node.args()],
                               env=gvtest.clean_env(), capture_output=True, text=True, timeout=120,
                               preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(reason, p.stdout + p.stderr)
            self.assertIn(f"exited {code}", p.stdout + p.stderr)
            self.assertEqual(self.node.present(), [])

    def test_nvidia_smi_grandchild_killed_with_it_on_sigterm(self):
        # nvidia-smi runs in its own process group; a stop kills the whole group.
        self.node.install_mock("driver", gpus=1)
        smi = os.path.join(self.node.driver, "usr", "bin", "nvidia-smi")
        os.unlink(smi)
        pidfile = self.path("grandchild.pid")
        with open(smi, "w") as f:
            f.write(f"#!/bin/sh\nsleep 300 &\necho $! > '{pidfile}'\nsleep 300\n")
        os.chmod(smi, 0o755)
        proc = subprocess.Popen([gvtest.GV, "run", "--components", "driver", *self.node.args()],
                                env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        grandchild = None
        for _ in range(500):
            try:
                with open(pidfile) as f:
                    grandchild = int(f.read().strip())
                break
            except (OSError, ValueError):
                time.sleep(0.01)
        self.assertIsNotNone(grandchild, "the stub nvidia-smi did not start")
        proc.terminate()
        out, errs = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 4, out + errs)

        def gone(pid):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
            except OSError:
                return True
        deadline = time.monotonic() + 5
        while not gone(grandchild) and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = not gone(grandchild)
        if alive:
            os.kill(grandchild, signal.SIGKILL)
        self.assertFalse(alive, "nvidia-smi's child outlived the validator's SIGTERM")
        self.assertEqual(self.node.present(), [])

    def test_fr13_exit_9_is_retried(self):
        self.node.install_mock("driver", gpus=1)
        self._smi_stub(9)
        p = self.node.run("driver", "--wait", "--max-wait", "3", "--sleep-interval", "1", check=3)
        out = p.stdout + p.stderr
        self.assertIn("driver-not-loaded", out)
        self.assertGreaterEqual(out.count("driver-not-loaded"), 2, "expected more than one attempt")

    def test_fr17_bounded_wait_with_backoff(self):
        self.node.install_mock("driver", gpus=1)
        env = gvtest.clean_env(SLEEP_INTERVAL_SECONDS="1", **{gvtest.MOCK_FAULT_INIT_VAR: "DRIVER_NOT_LOADED"})
        t0 = time.monotonic()
        p = self.node.run("driver", "--wait", "--max-wait", "6", "--max-backoff", "2", env=env, check=3)
        elapsed = time.monotonic() - t0
        self.assertGreater(elapsed, 5)
        self.assertLess(elapsed, 12)
        out = p.stdout + p.stderr
        self.assertIn("timeout", out)
        self.assertIn("driver-not-loaded", out)
        self.assertEqual(self.node.present(), [])


class TestInterrupt(ChainTestCase):
    def test_sigterm_while_waiting_leaves_marker_removed(self):
        self.node.install_mock("driver", gpus=1)
        self.node.run("driver", check=0)
        env = gvtest.clean_env(SLEEP_INTERVAL_SECONDS="1", **{gvtest.MOCK_FAULT_INIT_VAR: "DRIVER_NOT_LOADED"})
        proc = subprocess.Popen([gvtest.GV, "run", "--components", "driver", "--wait", *self.node.args()],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        proc.terminate()
        out, errs = proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 4, out + errs)
        self.assertEqual(self.node.present(), [])
