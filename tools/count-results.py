#!/usr/bin/env python3
"""Count test cases over one or more meson build folders (or TAP files,
named *.tap) and print 'N passed, N failed, N skipped'.  TAP output (cmocka, the fuzz corpus
runners, the static checks) is counted case by case, and so is pytest's closing line
("3 failed, 40 passed, 2 skipped, 1 xfailed in 9.12s", the e2e tests); in TAP ("not ok # TODO", an expected
failure, counts as passed; "ok # TODO", an unexpected pass, as failed); a test without TAP lines
counts once.  A test that failed after printing only passing TAP lines
(a crash, a sanitizer report, a timeout) counts one more failure.  A *.tap
file (tools/static-analysis.sh and tools/image.sh smoke write one) that is
missing, or whose plan is missing or disagrees with its test lines, counts one
more failure."""
import json
import os
import re
import sys

ok_re = re.compile(r"^ok\s+\d+")
notok_re = re.compile(r"^not ok\s+\d+")
skip_re = re.compile(r"#\s*SKIP", re.IGNORECASE)
todo_re = re.compile(r"#\s*TODO\b", re.IGNORECASE)
# pytest's closing line, with or without its '=' frame: "2 failed, 9 passed, 1 skipped in 3.10s".
pytest_re = re.compile(r"^=*\s*((?:\d+ [a-z]+(?: [a-z]+)?, )*\d+ [a-z]+(?: [a-z]+)?) in [0-9.]+s\b.*?=*\s*$")
# What each word of it counts as: expected failures pass, unexpected passes fail (as TAP's TODO);
# deselected tests, warnings and pytest 9's per-subtest tallies (its failed ones are in "failed")
# are not tests of their own.
PYTEST_KINDS = {"passed": "pass", "xfailed": "pass", "failed": "fail", "error": "fail", "errors": "fail",
                "xpassed": "fail", "skipped": "skip"}


def count_pytest(stdout):
    """(passed, failed, skipped, failure lines) from the last pytest closing line of @stdout,
    or None when it has none.  The failure lines are pytest's "FAILED ..."/"ERROR ..." ones."""
    summary = None
    for line in stdout.splitlines():
        m = pytest_re.match(line.strip())
        if m:
            summary = m.group(1)
    if summary is None:
        return None
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for part in summary.split(", "):
        n, word = part.split(" ", 1)
        kind = PYTEST_KINDS.get(word)
        if kind:
            counts[kind] += int(n)
    fails = [l for l in stdout.splitlines() if l.startswith(("FAILED ", "ERROR ", "SUBFAILED"))]
    return counts["pass"], counts["fail"], counts["skip"], fails


def classify(line):
    """'pass', 'fail', 'skip' or None (not a test line) for one TAP line.  cmocka writes
    "not ok N # SKIP" for a skip; "not ok # TODO" is an expected failure (a pass, as meson counts
    it) and "ok # TODO" an unexpected pass (a failure)."""
    if not (ok_re.match(line) or notok_re.match(line)):
        return None
    if skip_re.search(line):
        return "skip"
    if todo_re.search(line):
        return "pass" if notok_re.match(line) else "fail"
    return "fail" if notok_re.match(line) else "pass"


def count_tap_file(path):
    """(passed, failed, skipped, failures) of a TAP file; a missing file, or one whose plan
    ("1..N") is missing or disagrees with its test lines, counts one more failure."""
    p = fl = s = 0
    failures = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        return 0, 1, 0, [f"{path}: {e.strerror}"]
    plan = None
    for line in lines:
        if line.startswith("1.."):
            plan = int(line[3:].split()[0] or 0)
        else:
            kind = classify(line)
            if kind == "skip":
                s += 1
            elif kind == "fail":
                fl += 1
                failures.append(f"{path}: {line}")
            elif kind == "pass":
                p += 1
    if plan is None or plan != p + fl + s:
        failures.append(f"{path}: plan {plan} for {p + fl + s} test lines (ended early?)")
        fl += 1
    return p, fl, s, failures


def main():
    passed = failed = skipped = 0
    failures = []
    for build in sys.argv[1:]:
        if build.endswith(".tap"):
            p, fl, s, fails = count_tap_file(build)
            passed, failed, skipped = passed + p, failed + fl, skipped + s
            failures += fails
            continue
        log = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(log):
            print(f"count-results: {log} missing", file=sys.stderr)
            failed += 1
            continue
        with open(log) as f:
            for line in f:
                t = json.loads(line)
                res = t.get("result", "")
                p = fl = s = 0
                py = count_pytest(t.get("stdout") or "")
                if py is not None:
                    p, fl, s, fails = py
                    failures += [f"{build}: {t['name']}: {f}" for f in fails]
                    if fl and not fails:
                        failures.append(f"{build}: {t['name']}: {fl} failed (pytest)")
                for out_line in ([] if py is not None else (t.get("stdout") or "").splitlines()):
                    kind = classify(out_line)
                    if kind == "skip":
                        s += 1
                    elif kind == "fail":
                        fl += 1
                        why = " (unexpected pass)" if todo_re.search(out_line) else ""
                        failures.append(f"{build}: {t['name']}: {out_line}{why}")
                    elif kind == "pass":
                        p += 1
                if p + fl + s == 0:
                    if res in ("OK", "EXPECTEDFAIL"):
                        p = 1
                    elif res == "SKIP":
                        s = 1
                    else:
                        fl = 1
                        failures.append(f"{build}: {t['name']}: {res}")
                elif res not in ("OK", "SKIP", "EXPECTEDFAIL") and fl == 0:
                    fl = 1
                    failures.append(f"{build}: {t['name']}: {res} after its TAP lines (crash or timeout)")
                passed += p
                failed += fl
                skipped += s
    for f in failures:
        print(f"FAILED: {f}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
