#!/usr/bin/env python3
"""Run one unittest module and report each test case as a TAP line."""
import importlib.util
import os
import sys
import time
import traceback
import unittest


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _line(self, ok, test, note=""):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {test.id().split('.', 1)[-1]}{note}", flush=True)

    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.monotonic()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test, f" ({time.monotonic() - self._t0:.2f}s)")

    def _fail(self, test, err):
        self._line(False, test)
        for line in "".join(traceback.format_exception(*err)).splitlines():
            print("# " + line, flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._fail(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._fail(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, f" # SKIP {reason}")


def main():
    path = sys.argv[1]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    print(f"1..{suite.countTestCases()}", flush=True)
    result = TapResult()
    suite.run(result)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
