"""The e2e TAP runner (taprunner.py) reports every outcome, and
tools/count-results.py and meson's own TAP parser count them as meant:
a failing subTest is a `not ok` line with its traceback, an unexpected
success a `not ok`, an expected failure `not ok # TODO`, a skip `ok # SKIP`."""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "taprunner.py")
COUNT = os.path.join(HERE, "..", "..", "tools", "count-results.py")

MIXED = textwrap.dedent("""\
    import unittest

    class Sample(unittest.TestCase):
        def test_a_pass(self):
            pass

        def test_b_subtests(self):
            for i in range(4):
                with self.subTest(i=i):
                    self.assertNotIn(i, (1, 3), "odd one out")

        def test_c_subtest_error(self):
            with self.subTest(step="boom"):
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


def run_runner(tmp, name, source):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(source)
    p = subprocess.run([sys.executable, RUNNER, path], capture_output=True, text=True, timeout=60)
    return p


def tap_lines(out):
    """The result lines without timings."""
    return [re.sub(r" \(\d+\.\d+s\)$", "", line) for line in out.splitlines() if re.match(r"(not )?ok \d+", line)]


def count(tmp, name, result, stdout):
    """tools/count-results.py over a build folder holding one test's log."""
    build = os.path.join(tmp, "build-" + name)
    os.makedirs(os.path.join(build, "meson-logs"))
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        f.write(json.dumps({"name": name, "result": result, "stdout": stdout}) + "\n")
    return subprocess.run([sys.executable, COUNT, build], capture_output=True, text=True, timeout=60)


def meson_results(stdout):
    """What meson's TAP parser makes of @stdout (names of TestResult), or None without meson."""
    code = ("import sys\n"
            "from mesonbuild.mtest import TAPParser\n"
            "for r in TAPParser().parse(iter(sys.stdin.read().splitlines())):\n"
            "    print(type(r).__name__, getattr(getattr(r, 'result', None), 'name', ''), "
            "getattr(r, 'message', ''))\n")
    for py in ("/usr/bin/python3", sys.executable):
        if not os.path.exists(py):
            continue
        p = subprocess.run([py, "-c", code], input=stdout, capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            return p.stdout.splitlines()
    return None


class TapRunner(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gv-taprunner-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_every_outcome_has_a_line(self):
        p = run_runner(self.tmp, "sample_mixed.py", MIXED)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(tap_lines(p.stdout), [
            "ok 1 - Sample.test_a_pass",
            "not ok 2 - Sample.test_b_subtests (i=1)",
            "not ok 3 - Sample.test_b_subtests (i=3)",
            "not ok 4 - Sample.test_c_subtest_error (step='boom')",
            "not ok 5 - Sample.test_d_expected_failure # TODO expected failure",
            "not ok 6 - Sample.test_e_unexpected_success (unexpected success)",
            "ok 7 - Sample.test_f_skip # SKIP not here",
            "not ok 8 - Sample.test_g_fail",
        ])
        # the plan comes last and matches the lines
        self.assertEqual(p.stdout.splitlines()[-1], "1..8")

    def test_failures_carry_their_traceback(self):
        p = run_runner(self.tmp, "sample_mixed.py", MIXED)
        blocks = re.split(r"^(?=(?:not )?ok \d+)", p.stdout, flags=re.M)
        by_num = {int(re.match(r"(?:not )?ok (\d+)", b).group(1)): b for b in blocks if re.match(r"(not )?ok", b)}
        self.assertIn("# Traceback (most recent call last):", by_num[2])
        self.assertIn("sample_mixed.py\", line 10, in test_b_subtests", by_num[2])
        self.assertIn("# AssertionError: 1 unexpectedly found in (1, 3) : odd one out", by_num[2])
        self.assertIn("# AssertionError: 3 unexpectedly found in (1, 3) : odd one out", by_num[3])
        self.assertIn("# KeyError: 'missing'", by_num[4])
        self.assertIn("# AssertionError: 1 != 2", by_num[5])
        self.assertIn("expectedFailure but passed", by_num[6])
        self.assertIn("# AssertionError: plain failure", by_num[8])
        # passing and skipped tests carry no comment
        self.assertEqual(by_num[1].strip().count("\n"), 0)
        self.assertEqual(by_num[7].strip().count("\n"), 0)
        # unittest's own frames are left out
        self.assertNotIn("unittest/case.py", p.stdout)

    def test_green_module_exits_zero(self):
        p = run_runner(self.tmp, "sample_green.py", GREEN)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(tap_lines(p.stdout), [
            "not ok 1 - Green.test_known_bug # TODO expected failure",
            "ok 2 - Green.test_skip_inside # SKIP no GPU",
            "ok 3 - Green.test_subtests_all_pass",
        ])
        self.assertEqual(p.stdout.splitlines()[-1], "1..3")

    def test_count_results_counts_each_outcome(self):
        p = run_runner(self.tmp, "sample_mixed.py", MIXED)
        c = count(self.tmp, "mixed", "FAIL", p.stdout)
        self.assertEqual(c.returncode, 1, c.stdout + c.stderr)
        # passed: the pass and the expected failure; failed: 3 subtests, the unexpected success,
        # the plain failure; skipped: one
        self.assertEqual(c.stdout.splitlines()[-1], "2 passed, 5 failed, 1 skipped")
        self.assertIn("FAILED: " + os.path.join(self.tmp, "build-mixed") + ": mixed: not ok 2 - "
                      "Sample.test_b_subtests (i=1)", c.stdout)
        g = run_runner(self.tmp, "sample_green.py", GREEN)
        c = count(self.tmp, "green", "OK", g.stdout)
        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
        self.assertEqual(c.stdout.splitlines()[-1], "2 passed, 0 failed, 1 skipped")
        # "ok # TODO" is an unexpected pass: a failure, as for meson
        c = count(self.tmp, "xpass", "FAIL", "ok 1 - t # TODO\n1..1\n")
        self.assertEqual(c.stdout.splitlines()[-1], "0 passed, 1 failed, 0 skipped")

    def test_count_results_reads_tap_files(self):
        """*.tap files (static analysis, image smoke) count case by case beside build folders; a
        missing file, a missing plan or a plan that disagrees with the lines is one more failure."""
        def tap(name, text):
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path
        good = tap("good.tap", "1..3\nok 1 - a\nnot ok 2 - b # SKIP no tool\nok 3 - c\n")
        bad = tap("bad.tap", "1..2\nok 1 - a\nnot ok 2 - b\n")
        short = tap("short.tap", "1..3\nok 1 - a\n")
        g = run_runner(self.tmp, "sample_green.py", GREEN)
        build = os.path.join(self.tmp, "build-green")
        count(self.tmp, "green", "OK", g.stdout)
        c = subprocess.run([sys.executable, COUNT, build, good], capture_output=True, text=True, timeout=60)
        self.assertEqual((c.returncode, c.stdout.splitlines()[-1]), (0, "4 passed, 0 failed, 2 skipped"),
                         c.stdout + c.stderr)
        for path, want in ((bad, "1 passed, 1 failed, 0 skipped"), (short, "1 passed, 1 failed, 0 skipped"),
                           (os.path.join(self.tmp, "none.tap"), "0 passed, 1 failed, 0 skipped")):
            c = subprocess.run([sys.executable, COUNT, path], capture_output=True, text=True, timeout=60)
            self.assertEqual((c.returncode, c.stdout.splitlines()[-1]), (1, want), c.stdout + c.stderr)

    def test_meson_reads_the_outcomes_alike(self):
        p = run_runner(self.tmp, "sample_mixed.py", MIXED)
        got = meson_results(p.stdout)
        if got is None:
            self.skipTest("meson's Python module is not importable")
        tests = [line.split()[1] for line in got if line.startswith("Test ")]
        self.assertEqual(tests, ["OK", "FAIL", "FAIL", "FAIL", "EXPECTEDFAIL", "FAIL", "SKIP", "FAIL"])
        self.assertEqual([line for line in got if line.startswith("Error")], [])
        g = meson_results(run_runner(self.tmp, "sample_green.py", GREEN).stdout)
        self.assertEqual([line.split()[1] for line in g if line.startswith("Test ")],
                         ["EXPECTEDFAIL", "SKIP", "OK"])
        self.assertEqual([line for line in g if line.startswith("Error")], [])


if __name__ == "__main__":
    unittest.main()
