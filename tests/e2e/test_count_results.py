"""The e2e tests run under pytest, and tools/count-results.py counts pytest's closing line as
meant: passes and expected failures pass, failures, errors, failing subtests and unexpected
successes fail, skips skip; a test that ended badly with no failure counted (a crash, a
time-out) counts one more; TAP output and *.tap files are still counted line by line."""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
COUNT = os.path.join(HERE, "..", "..", "tools", "count-results.py")

MIXED = textwrap.dedent("""\
    import unittest

    class Sample(unittest.TestCase):
        def test_a_pass(self):
            pass

        def test_b_subtests(self):
            for i in range(3):
                with self.subTest(i=i):
                    self.assertNotEqual(i, 1, "odd one out")

        def test_c_error(self):
            raise KeyError("missing")

        @unittest.expectedFailure
        def test_d_expected_failure(self):
            self.assertEqual(1, 2)

        @unittest.expectedFailure
        def test_e_unexpected_success(self):
            pass

        @unittest.skip("not here")
        def test_f_skip(self):
            pass

        def test_g_fail(self):
            self.fail("plain failure")
    """)

GREEN = textwrap.dedent("""\
    import unittest

    class Green(unittest.TestCase):
        def test_subtests_all_pass(self):
            for i in range(3):
                with self.subTest(i=i):
                    self.assertLess(i, 3)

        @unittest.expectedFailure
        def test_known_bug(self):
            self.assertTrue(False)

        def test_skip_inside(self):
            self.skipTest("no GPU")
    """)


def run_pytest(tmp, name, source):
    """pytest on one module, as tests/e2e/meson.build runs it."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(source)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "--color=no",
                           path], capture_output=True, text=True, timeout=120, cwd=tmp, env=env)


def count(tmp, name, result, stdout):
    """tools/count-results.py over a build folder holding one test's log."""
    build = os.path.join(tmp, "build-" + name)
    os.makedirs(os.path.join(build, "meson-logs"), exist_ok=True)
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        f.write(json.dumps({"name": name, "result": result, "stdout": stdout}) + "\n")
    return subprocess.run([sys.executable, COUNT, build], capture_output=True, text=True, timeout=60)


def totals(c):
    m = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", c.stdout.splitlines()[-1])
    return tuple(int(x) for x in m.groups())


class CountResults(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gv-count-results-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_pytest_mixed_module(self):
        p = run_pytest(self.tmp, "test_sample_mixed.py", MIXED)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        c = count(self.tmp, "mixed", "FAIL", p.stdout)
        self.assertEqual(c.returncode, 1, c.stdout + c.stderr)
        passed, failed, skipped = totals(c)
        # the pass and the expected failure pass (pytest 9 also counts test_b itself once its
        # failing subtest is reported apart); the failing subtest, the error, the unexpected
        # success and the plain failure fail; one skip
        self.assertIn(passed, (2, 3), c.stdout)
        self.assertEqual((failed, skipped), (4, 1), c.stdout)
        for name in ("test_b_subtests", "test_c_error", "test_e_unexpected_success", "test_g_fail"):
            self.assertRegex(c.stdout, r"FAILED: .*build-mixed: mixed: (SUB)?FAILED.*" + name)

    def test_pytest_green_module(self):
        p = run_pytest(self.tmp, "test_sample_green.py", GREEN)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        c = count(self.tmp, "green", "OK", p.stdout)
        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
        self.assertEqual(totals(c), (2, 0, 1))

    def test_closing_lines(self):
        cases = [
            ("===== 2 failed, 9 passed, 1 skipped, 1 xfailed, 1 xpassed, 3 warnings, 4 subtests passed in 3.10s =====",
             "FAIL", (10, 3, 1)),
            ("12 passed in 0.51s", "OK", (12, 0, 0)),
            ("1 passed, 1 error in 0.52s", "FAIL", (1, 1, 0)),
            ("== 5 passed, 2 deselected in 1.00s (0:00:01) ==", "OK", (5, 0, 0)),
            # ended badly with nothing failed: a crash or a time-out after its tests
            ("3 passed in 2.00s", "TIMEOUT", (3, 1, 0)),
            # no closing line (killed early): counted once by its result
            ("test_x.py ..", "TIMEOUT", (0, 1, 0)),
        ]
        for i, (line, result, want) in enumerate(cases):
            with self.subTest(line=line):
                c = count(self.tmp, "case%d" % i, result, "some output\n" + line + "\n")
                self.assertEqual(totals(c), want, c.stdout)
                self.assertEqual(c.returncode, 1 if want[1] else 0)

    def test_tap_lines_and_files(self):
        """cmocka's TAP and *.tap files (static analysis, image smoke) count case by case; a
        missing file, a missing plan or a plan that disagrees with the lines is one more failure;
        "ok # TODO" is an unexpected pass (a failure, as for meson)."""
        c = count(self.tmp, "cmocka", "FAIL", "1..3\nok 1 - a\nnot ok 2 - b\nnot ok 3 - c # SKIP no\n")
        self.assertEqual(totals(c), (1, 1, 1))
        c = count(self.tmp, "xpass", "FAIL", "ok 1 - t # TODO\n1..1\n")
        self.assertEqual(totals(c), (0, 1, 0))

        def tap(name, text):
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path
        good = tap("good.tap", "1..3\nok 1 - a\nnot ok 2 - b # SKIP no tool\nok 3 - c\n")
        bad = tap("bad.tap", "1..2\nok 1 - a\nnot ok 2 - b\n")
        short = tap("short.tap", "1..3\nok 1 - a\n")
        build = os.path.join(self.tmp, "build-green")
        count(self.tmp, "green", "OK", "4 passed in 0.10s\n")
        c = subprocess.run([sys.executable, COUNT, build, good], capture_output=True, text=True, timeout=60)
        self.assertEqual((c.returncode, totals(c)), (0, (6, 0, 1)), c.stdout + c.stderr)
        for path, want in ((bad, (1, 1, 0)), (short, (1, 1, 0)), (os.path.join(self.tmp, "none.tap"), (0, 1, 0))):
            c = subprocess.run([sys.executable, COUNT, path], capture_output=True, text=True, timeout=60)
            self.assertEqual((c.returncode, totals(c)), (1, want), c.stdout + c.stderr)
