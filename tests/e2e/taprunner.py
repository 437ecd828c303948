#!/usr/bin/env python3
"""Run one unittest module and report every outcome as a TAP line.

One line per test case, and one more per failing subTest:
  ok N - Class.test (1.23s)                      passed (all its subtests too)
  not ok N - Class.test (k=v)                    a failing or erroring subTest
  not ok N - Class.test                          a failure or an error
  ok N - Class.test # SKIP reason                skipped (a skipped subTest too)
  not ok N - Class.test # TODO expected failure  an expectedFailure that failed
  not ok N - Class.test (unexpected success)     an expectedFailure that passed
Each `not ok` line is followed by its traceback as `# ` comment lines.  The
plan (1..N) comes last, since subtests are only known once they ran.  Exit
status 1 when anything failed (unittest's wasSuccessful()), else 0."""
import importlib.util
import os
import sys
import time
import unittest


class TapResult(unittest.TestResult):
    def __init__(self, module_name=""):
        super().__init__()
        self.n = 0
        self._prefix = module_name + "." if module_name else ""
        self._t0 = time.monotonic()

    def _name(self, test):
        name = test.id()
        if name.startswith(self._prefix):
            name = name[len(self._prefix):]
        # TAP reads '#' as the start of a directive
        return name.replace("#", "_")

    def _line(self, ok, test, note=""):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {self._name(test)}{note}", flush=True)

    def _comment(self, test, err):
        # unittest's own formatting, which leaves out its internal frames
        for line in self._exc_info_to_string(err, test).splitlines():
            print("# " + line, flush=True)

    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.monotonic()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test, f" ({time.monotonic() - self._t0:.2f}s)")

    def _fail(self, test, err):
        self._line(False, test)
        self._comment(test, err)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._fail(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._fail(test, err)

    def addSubTest(self, test, subtest, err):
        # err is None for a passing subTest: the test's own line covers it
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._fail(subtest, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, f" # SKIP {reason}")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(False, test, " # TODO expected failure")
        self._comment(test, err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(False, test, " (unexpected success)")
        print("# the test is marked expectedFailure but passed", flush=True)


def main():
    path = sys.argv[1]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    name = os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    result = TapResult(name)
    suite.run(result)
    print(f"1..{result.n}", flush=True)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
