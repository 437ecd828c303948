"""The first hour of a new user (README, --help, bad input) and the CLI's conventions:
`run --mock` safe when run twice at once, a foreign --mock-dir refused, quiet stdout with logs on
stderr, global options after the command, follow-up commands, `status` on a missing folder, one
error format, `help COMMAND`, --version naming the commit, and the README sample being the real
output of its command."""
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import gvtest

COMMANDS = ["run", "watch", "wait", "status", "env", "cleanup", "mock", "render", "metrics", "cuda-check"]
MOCK_COMMANDS = ["install", "remove", "profiles", "set"]


def run_mock(*args, env=None, timeout=120, check=None):
    return gvtest.run(["run", "--mock", *args], env=env, timeout=timeout, check=check)


class TestConcurrentRunMock(gvtest.TempDirTestCase):
    def env(self):
        # the default work folder ($TMPDIR/gpu-validator-mock-UID), in a temporary folder of the test's own
        return gvtest.clean_env(TMPDIR=self.tmp, XDG_RUNTIME_DIR="")

    def test_four_runs_at_once_on_the_default_folder_all_pass(self):
        procs = [subprocess.Popen([gvtest.GV, "run", "--mock"], env=self.env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        outs = [p.communicate(timeout=180) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, out + err)
            self.assertNotIn("No such file", out + err)
            self.assertRegex(out, r"(?m)^toolkit-ready\s+ready")

    def test_a_second_run_says_it_waits_then_runs(self):
        work = os.path.join(self.tmp, f"gpu-validator-mock-{os.getuid()}")
        run_mock(env=self.env(), check=0)
        lock = os.path.join(work, ".gpu-validator-mock-work.lock")
        self.assertTrue(os.path.isfile(lock))
        fd = os.open(lock, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a first run holds it
        p = subprocess.Popen([gvtest.GV, "run", "--mock"], env=self.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("waiting for it to finish" in ln for ln in lines):
            time.sleep(0.05)
        self.assertTrue(any("waiting for it to finish" in ln for ln in lines), lines)
        self.assertIsNone(p.poll(), "the second run did not wait")
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        out = p.stdout.read()
        self.assertEqual(p.wait(60), 0, out + "".join(lines))
        self.assertRegex(out, r"(?m)^toolkit-ready\s+ready")


class TestForeignMockDir(gvtest.TempDirTestCase):
    def test_a_folder_of_someone_else_is_refused_and_untouched(self):
        home = self.path("home")
        os.makedirs(os.path.join(home, ".ssh"))
        with open(os.path.join(home, "notes.txt"), "w") as f:
            f.write("mine\n")
        before = sorted(os.listdir(home))
        p = run_mock("--mock-dir", home, check=2)
        self.assertIn("is not empty and is not one of gpu-validator's", p.stderr)
        self.assertIn("--mock-dir", p.stderr)
        self.assertNotIn("rm -r", p.stdout + p.stderr)
        self.assertEqual(sorted(os.listdir(home)), before)

    def test_an_empty_folder_is_used_but_never_advised_for_rm(self):
        work = self.path("empty")
        os.makedirs(work)
        p = run_mock("--mock-dir", work, check=0)
        self.assertNotIn(f"rm -r {work}", p.stdout)
        # a folder the run created itself may be removed whole, and the advice says so
        p = run_mock("--mock-dir", self.path("new"), check=0)
        self.assertIn("rm -r " + self.path("new"), p.stdout)
        p = run_mock("--mock-dir", self.path("new"), check=0)  # again: still ours, still created by us
        self.assertIn("rm -r " + self.path("new"), p.stdout)

    def test_a_work_folder_from_before_the_stamp_is_still_ours(self):
        work = self.path("old")
        run_mock("--mock-dir", work, check=0)
        os.unlink(os.path.join(work, ".gpu-validator-mock-work"))
        run_mock("--mock-dir", work, check=0)


class TestQuietOutput(gvtest.TempDirTestCase):
    def test_run_mock_prints_results_only(self):
        p = run_mock("--mock-dir", self.path("m"), check=0)
        self.assertEqual(p.stderr, "")
        self.assertTrue(p.stdout.startswith("mock driver root  "), p.stdout[:200])
        # every result once, skipped components in the table
        self.assertEqual(len(re.findall(r"(?m)^driver\s+ok", p.stdout)), 1)
        for name in ("nvidia-fs", "gdrcopy", "nvidia-peermem"):
            self.assertRegex(p.stdout, rf"(?m)^{name}\s+skipped\s+\d+\.\d{{3}}s  \S")

    def test_global_options_after_the_command(self):
        for args in (["run", "--mock", "--mock-dir", self.path("m"), "-v"],
                     ["run", "-v", "--mock", "--mock-dir", self.path("m")],
                     ["-v", "run", "--mock", "--mock-dir", self.path("m")],
                     ["run", "--mock", "--mock-dir", self.path("m"), "--log-level", "info"],
                     ["run", "--mock", "--mock-dir", self.path("m"), "--log-level=INFO", "--log-format", "json"]):
            with self.subTest(args=args):
                p = gvtest.run(args, check=0)
                self.assertRegex(p.stderr, r'(\binfo\s+driver: ready|"level":"info","component":"driver","msg":"ready)')
                self.assertNotIn("debug", p.stderr)
        p = gvtest.run(["run", "--mock", "--mock-dir", self.path("m"), "-vv"], check=0)
        self.assertIn("debug", p.stderr)
        p = gvtest.run(["run", "--mock", "--mock-dir", self.path("m")], check=0,
                       env=gvtest.clean_env(LOG_LEVEL="info"))
        self.assertIn("driver: ready", p.stderr)
        p = gvtest.run(["run", "--mock", "--log-level", "chatty"], check=2)
        self.assertIn("--log-level chatty", p.stderr)
        # every command takes them after its name
        status = self.path("m", "validations")
        for args in (["status", "--output-dir", status, "-v"], ["env", "--output-dir", status, "--log-level", "error"],
                     ["mock", "profiles", "-v"], ["render", "cuda", "-v"], ["wait", "driver", "--output-dir", status,
                     "--timeout", "1", "-v"], ["cleanup", "--output-dir", self.path("none"), "-v"]):
            with self.subTest(args=args):
                gvtest.run(args, check=0)


class TestFollowUp(gvtest.TempDirTestCase):
    def test_run_mock_prints_the_next_commands_and_they_work(self):
        work = self.path("m")
        p = run_mock("--mock-dir", work, check=0)
        nxt = p.stdout[p.stdout.index("\nNext:\n"):]
        status = os.path.join(work, "validations")
        self.assertIn(f"{gvtest.GV} status --output-dir {status}\n", nxt)
        for line in nxt.splitlines()[2:]:
            cmd = line.split("  #")[0].split()
            if not cmd or cmd[0] == "rm" or cmd[1:2] == ["mock"] and cmd[2] == "remove":
                continue
            with self.subTest(cmd=cmd):
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=gvtest.clean_env())
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_status_of_a_folder_that_does_not_exist(self):
        missing = self.path("nowhere")
        p = gvtest.run(["status", "--output-dir", missing], check=2)
        self.assertIn(f"status folder {missing} does not exist", p.stderr)
        self.assertEqual(p.stdout, "")
        p = gvtest.run(["status", "--json"], check=2, env=gvtest.clean_env(OUTPUT_DIR=missing))
        self.assertIn("does not exist", p.stderr)


class TestErrorFormat(gvtest.TempDirTestCase):
    def test_unknown_option_in_every_command(self):
        for args in [[c] for c in COMMANDS if c != "mock"] + [["mock", m] for m in MOCK_COMMANDS]:
            with self.subTest(args=args):
                p = gvtest.run([*args, "--bogus"], check=2)
                name = " ".join(args)
                self.assertEqual(p.stderr, f"gpu-validator {name}: unknown option '--bogus'\n"
                                           f"Try 'gpu-validator {name} --help'.\n")
                self.assertEqual(p.stdout, "")

    def test_missing_value_and_bad_value_name_the_command(self):
        p = gvtest.run(["run", "--max-wait"], check=2)
        self.assertEqual(p.stderr.splitlines()[0], "gpu-validator run: option '--max-wait' needs a value")
        p = gvtest.run(["run", "--max-wait", "x"], check=2)
        self.assertEqual(p.stderr.splitlines()[0],
                         "gpu-validator run: config: --max-wait x: expected a whole number of seconds")
        p = gvtest.run(["metrics", "--cache-ttl", "0"], check=2)
        self.assertTrue(p.stderr.startswith("gpu-validator metrics: "), p.stderr)
        p = gvtest.run(["mock", "set", "--root", self.path("none"), "temperature_c=3"], check=2)
        self.assertTrue(p.stderr.startswith("gpu-validator mock"), p.stderr)
        p = gvtest.run(["frobnicate"], check=2)
        self.assertEqual(p.stderr.splitlines()[0], "gpu-validator: unknown command 'frobnicate'")


class TestHelp(gvtest.TempDirTestCase):
    def help_of(self, *args):
        return gvtest.run([*args, "--help"], check=0).stdout

    def test_help_command_equals_dash_dash_help(self):
        self.assertEqual(gvtest.run(["help"], check=0).stdout, gvtest.run(["--help"], check=0).stdout)
        for c in COMMANDS:
            with self.subTest(command=c):
                self.assertEqual(gvtest.run(["help", c], check=0).stdout, self.help_of(c))
        for m in MOCK_COMMANDS:
            with self.subTest(command=m):
                self.assertEqual(gvtest.run(["help", "mock", m], check=0).stdout, self.help_of("mock", m))
        p = gvtest.run(["help", "nothing"], check=2)
        self.assertIn("unknown command 'nothing'", p.stderr)

    def test_every_command_has_examples_that_use_its_own_options(self):
        pages = [((), gvtest.run(["--help"], check=0).stdout)]
        pages += [((c,), self.help_of(c)) for c in COMMANDS]
        pages += [(("mock", m), self.help_of("mock", m)) for m in MOCK_COMMANDS]
        for args, text in pages:
            with self.subTest(command=args):
                self.assertIn("\nExamples:\n", text)
                self.assertIn("--log-level", text)
                examples = text.split("\nExamples:\n", 1)[1].split("\n\n")[0]
                lines = [ln.strip() for ln in examples.splitlines() if ln.startswith("  ") and
                         ("gpu-validator" in ln)]
                self.assertTrue(lines, examples)
                for ln in lines:
                    words = ln.replace('"', " ").replace("$(", " ").split()
                    cmd = words[words.index("gpu-validator") + 1:]
                    # the example's own command, and each long option it uses is in that command's help
                    own = args if not args or not cmd or cmd[0] in COMMANDS else args
                    target = cmd[:2] if cmd[:1] == ["mock"] else cmd[:1]
                    if target and target[0] in COMMANDS:
                        page = self.help_of(*target)
                    else:
                        page = gvtest.run(["--help"], check=0).stdout
                    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", ln):
                        self.assertIn(opt, page, f"{ln}: {opt} is not in the help of {own or 'gpu-validator'}")

    def test_version_names_the_commit(self):
        """--version names the commit the binary was built from: the one the build recorded in
        gv-commit.h (meson's vcs_tag runs `git describe` at build time), not the checkout's HEAD
        now, which may have moved since the build; with git at hand, a commit of this repository."""
        p = gvtest.run(["--version"], check=0)
        m = re.fullmatch(r"gpu-validator (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        commit = m.group(2)
        for header in (os.path.join(os.path.dirname(gvtest.GV), "gv-commit.h"),
                       os.path.join(gvtest.BUILD, "src", "cli", "gv-commit.h")):
            if os.path.exists(header):
                with open(header) as f:
                    recorded = re.search(r'#define GV_COMMIT "([^"]*)"', f.read())
                self.assertIsNotNone(recorded, header)
                self.assertEqual(commit, recorded.group(1), header)
                break
        known = subprocess.run(["git", "-C", gvtest.SOURCE, "rev-parse", "--verify", "--quiet", "HEAD"],
                               capture_output=True, text=True)
        if known.returncode == 0:  # a checkout: the binary names one of its commits
            self.assertNotEqual(commit, "unknown", p.stdout)
            obj = commit.replace("-dirty", "") + "^{commit}"
            self.assertEqual(subprocess.run(["git", "-C", gvtest.SOURCE, "cat-file", "-e", obj]).returncode, 0,
                             p.stdout)


class TestReadmeSample(gvtest.TempDirTestCase):
    def test_readme_sample_is_the_real_output(self):
        with open(os.path.join(gvtest.SOURCE, "README.md")) as f:
            readme = f.read()
        m = re.search(r"```\n\$ (\./build/src/cli/gpu-validator run --mock)\n(.*?)```", readme, re.S)
        self.assertIsNotNone(m, "README has no `$ ./build/src/cli/gpu-validator run --mock` sample")
        sample = m.group(2)
        # the README's command from the source folder, its default work folder under a TMPDIR of ours
        env = gvtest.clean_env(TMPDIR=self.tmp, XDG_RUNTIME_DIR="")
        link = os.path.join(self.tmp, "checkout")
        os.makedirs(os.path.join(link, "build", "src", "cli"))
        os.symlink(gvtest.GV, os.path.join(link, "build", "src", "cli", "gpu-validator"))
        p = subprocess.run(m.group(1).split(), cwd=link, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stderr, "")
        real = p.stdout.replace(os.path.join(self.tmp, f"gpu-validator-mock-{os.getuid()}"),
                                "/tmp/gpu-validator-mock-0")

        def norm(text):
            text = re.sub(r"\d+\.\d{3}s", "0.000s", text)
            text = re.sub(r"generation=[0-9a-f]{8}", "generation=xxxxxxxx", text)
            return re.sub(r"(?m)^(\S+-ready\s+ready\s+)\d+s ", r"\g<1>0s ", text)
        self.assertEqual(norm(sample), norm(real))


class TestDriverRootConfig(gvtest.TempDirTestCase):
    def test_a_driver_root_that_is_not_a_folder_is_one_configuration_error(self):
        f = self.path("file")
        open(f, "w").close()
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        dangling = self.path("dangling")
        os.symlink(self.path("nowhere"), dangling)
        kinds = {f: "a regular file", fifo: "a FIFO", dangling: "a dangling symbolic link"}
        out = self.path("status")
        for path, kind in kinds.items():
            for var, flag in (("DRIVER_INSTALL_DIR", "--driver-install-dir"),
                              ("DRIVER_INSTALL_DIR_CTR_PATH", "--driver-install-dir-ctr-path")):
                for how in ("env", "flag", "drop-in"):
                    with self.subTest(path=kind, var=var, how=how):
                        if how == "env":
                            p = gvtest.run(["run", "--components", "driver", "--output-dir", out], check=2,
                                           env=gvtest.clean_env(**{var: path}))
                            named = f"{var}={path}"
                        elif how == "flag":
                            p = gvtest.run(["run", "--components", "driver", "--output-dir", out, flag, path], check=2)
                            named = f"{flag} {path}"
                        else:
                            p = gvtest.run(["-c", "driver", "-o", out, flag, path], check=2)
                            named = f"{var}={path}"
                        self.assertEqual(p.stdout, "")
                        lines = p.stderr.splitlines()
                        self.assertLessEqual(len(lines), 2, p.stderr)  # the error and its hint
                        self.assertIn(f"{named} is {kind}, not a folder", lines[0])
                        self.assertNotIn("tried", p.stderr)
        # absent is fine (the driver container has not made it yet): the ordinary search says what it tried
        p = gvtest.run(["run", "--components", "driver", "--output-dir", out, "--host-root", self.tmp,
                        "--driver-install-dir", self.path("absent"), "--driver-install-dir-ctr-path",
                        self.path("absent")], check=1)
        self.assertIn("tried", p.stdout)


class TestUpgradeFromUpstream(gvtest.TempDirTestCase):
    """docs/deploy.md "Upgrading from NVIDIA's validator", step by step, on a node whose status
    folder holds what NVIDIA's validator wrote."""

    UPSTREAM_DRIVER = ("IS_HOST_DRIVER=true\nNVIDIA_DRIVER_ROOT={host}\nDRIVER_ROOT_CTR_PATH=/host\n"
                       "NVIDIA_DEV_ROOT={host}\nDEV_ROOT_CTR_PATH=/host\n")

    def test_upstream_markers_are_named_then_replaced(self):
        import chain
        node = chain.Node(self.tmp)
        node.install_mock("host", gpus=1)
        with open(node.marker("driver-ready"), "w") as f:
            f.write(self.UPSTREAM_DRIVER.format(host=node.host))
        for m in ("host-driver-ready", "toolkit-ready", "cuda-ready", "plugin-ready"):
            open(node.marker(m), "w").close()
        # 1. status names them: not ours, NVIDIA's validator's (or by hand)
        p = gvtest.run(["status", *node.store_args()], check=1)
        self.assertRegex(p.stdout, r"(?m)^driver-ready\s+foreign .*not gpu-validator's: NVIDIA's validator writes "
                                   r"driver-ready so")
        self.assertRegex(p.stdout, r"(?m)^toolkit-ready\s+foreign .*NVIDIA's validator writes its markers empty")
        # 2. the driver validation replaces driver-ready and removes what was downstream of it first
        node.run("driver", check=0)
        d = node.read("driver-ready")
        for k in ("IS_HOST_DRIVER", "NVIDIA_DRIVER_ROOT", "DRIVER_ROOT_CTR_PATH", "NVIDIA_DEV_ROOT", "DEV_ROOT_CTR_PATH"):
            self.assertIn(k, d)  # the keys upstream's consumers read are still there
        self.assertEqual(d["IS_HOST_DRIVER"], "true")
        for m in ("toolkit-ready", "cuda-ready", "plugin-ready"):
            self.assertFalse(node.exists(m), m)
        # 3. then the toolkit: the chain is gpu-validator's from here on
        node.run("toolkit", check=0)
        p = gvtest.run(["status", *node.store_args()], check=0)
        self.assertRegex(p.stdout, r"(?m)^driver-ready\s+ready")
        self.assertRegex(p.stdout, r"(?m)^toolkit-ready\s+ready")
        self.assertNotIn("foreign", p.stdout)


class TestBoundedDriverWait(gvtest.TempDirTestCase):
    def empty_roots(self):
        empty = self.path("empty")
        os.makedirs(empty, exist_ok=True)
        return ["-o", self.path("status"), "--host-root", empty]

    def test_wait_is_bounded_by_default(self):
        # no MAX_WAIT_SECONDS: the retries say when they give up (a bound, not forever)
        drv = self.path("driver")
        os.makedirs(drv)
        p = subprocess.Popen([gvtest.GV, "-c", "driver", *self.empty_roots(), "--driver-install-dir", drv,
                              "--driver-install-dir-ctr-path", drv, "-w", "-s", "1"],
                             env=gvtest.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = ""
            while "retrying in" not in line:
                more = p.stderr.readline()
                if not more:
                    break
                line = more
        finally:
            p.terminate()
            p.communicate(timeout=30)
        self.assertIn("retrying in", line)
        self.assertIn("gives up after 900 s (MAX_WAIT_SECONDS)", line)
        p = gvtest.run(["run", "--help"], check=0)
        self.assertIn("(MAX_WAIT_SECONDS, default 900", p.stdout)
        # 0 still means upstream's forever, and says so
        p = gvtest.run(["-c", "driver", *self.empty_roots(), "--driver-install-dir", drv,
                        "--driver-install-dir-ctr-path", drv, "-w", "-s", "1"], check=3,
                       env=gvtest.clean_env(MAX_WAIT_SECONDS="2"))
        self.assertIn("gives up after 2 s", p.stderr)

    def test_mount_source_deleted_is_said_at_once(self):
        if os.getuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare for a mount namespace")
        src, tgt = self.path("src"), self.path("tgt")
        os.makedirs(src)
        os.makedirs(tgt)
        script = ('mount --bind "$1" "$2" && rmdir "$1" && shift 2 && exec "$@"')
        t0 = time.monotonic()
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", src, tgt,
                            gvtest.GV, "-c", "driver", *self.empty_roots(), "--driver-install-dir", tgt,
                            "--driver-install-dir-ctr-path", tgt, "-w", "-s", "1"],
                           env=gvtest.clean_env(), capture_output=True, text=True, timeout=60)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("mount-source-deleted", p.stdout)
        self.assertIn(f"DRIVER_INSTALL_DIR_CTR_PATH={tgt}: mount source deleted", p.stdout)
        self.assertNotIn("retrying", p.stderr)


class TestToolkitNamesWhatItRead(gvtest.TempDirTestCase):
    def test_cdi_folder_and_runtime_binary_under_the_host_root(self):
        import chain
        node = chain.Node(self.tmp)
        node.install_mock("driver", gpus=1)
        node.run("driver", check=0)
        # the runtime configured (node.run wrote it), its binary gone
        os.unlink(os.path.join(node.host, "usr", "bin", "nvidia-container-runtime"))
        p = gvtest.run(["run", "--components", "toolkit", *node.store_args(), "--host-root", node.host,
                        "--cdi-dir", "/etc/cdi", "--runtime-config", "/etc/containerd/config.toml"], check=1)
        # the folders and files actually read, under the host root -- not the ones given
        self.assertIn(f"CDI folder {node.host}/etc/cdi (/etc/cdi under the host root): absent", p.stdout)
        self.assertIn(f"runtime binary {node.host}/usr/bin/nvidia-container-runtime "
                      f"(/usr/bin/nvidia-container-runtime under the host root): absent", p.stdout)
        self.assertNotIn("CDI folder /etc/cdi:", p.stdout)
